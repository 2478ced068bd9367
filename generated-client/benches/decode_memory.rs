//! Peak heap of decoding one dataset answer, before and after unknown members became text
//! (`crate::json::UnknownMembers`, issue 27 item 1), side by side in one run: the answer type
//! as typify generated it before (`#[serde(flatten)] extra: serde_json::Map<String, Value>`,
//! copied here as `Before*`) against the generated `types::AccountStatementsResponse` of today.
//!
//! ```text
//! cargo bench -p creditdata-client --bench decode_memory                  # 8, 32, 128 MiB
//! DECODE_MIB=8 cargo bench -p creditdata-client --bench decode_memory     # one size
//! DECODE_INSTRUCTIONS=before|after|control N ...                          # see below
//! ```
//!
//! Peak heap is counted by this binary's global allocator: the most live heap bytes above the
//! level before the decode, while it runs (the decoded value included), divided by the
//! answer's size. The answer's own bytes are allocated before and are not counted. Each size
//! and shape decodes before and after alternately, three rounds, and reports the median. The
//! "before" decode of an answer is skipped when it would need more than `DECODE_BEFORE_GIB`
//! (default 4) GiB at 100 times the answer's size.
//!
//! Instructions per decode: with `DECODE_INSTRUCTIONS` set, the binary only decodes a typical
//! dataset answer (`tests/data/get_account_statements.json`) that many thousand times with the
//! chosen type, for `valgrind --tool=callgrind` (BENCHMARKS.md has the command); `control`
//! decodes `types::ScoresResponse`, which the change did not touch.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use creditdata_client::types;
use serde::Deserialize;
use serde_json::{Map, Value};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// Peak memory can only be observed from inside the allocator (see the `[lints.rust]` of this
// crate's Cargo.toml).
// SAFETY: every call is forwarded to the system allocator unchanged; the counters only observe.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's pointer, layout and size.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// `AccountStatementsResponse` as typify generated it before (same members, same serde
/// attributes).
#[derive(Deserialize)]
#[allow(dead_code)]
struct BeforeResponse {
    #[serde(rename = "accountStatements")]
    account_statements: Option<Vec<BeforeStatement>>,
    sources: Option<Vec<types::Source>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

/// `AccountStatement` as typify generated it before.
#[derive(Deserialize)]
#[allow(dead_code)]
struct BeforeStatement {
    id: Option<String>,
    #[serde(rename = "sourceId")]
    source_id: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

const MIB: usize = 1024 * 1024;

/// A dataset answer of about `size` bytes in `shape`.
fn answer(shape: &str, size: usize) -> Vec<u8> {
    let mut body = String::with_capacity(size + 64);
    body.push_str(r#"{"sources":[{"sourceId":"S1","status":"SUCCESS","countryCode":"GBR"}],"accountStatements":["#);
    match shape {
        "many small entries" => {
            // Small statements with one member the description does not know each.
            let mut n = 0u64;
            while body.len() < size {
                if n > 0 {
                    body.push(',');
                }
                body.push_str(&format!(r#"{{"id":"s{n}","sourceId":"S1","kind":1}}"#));
                n += 1;
            }
            body.push_str("]}");
        }
        "one large unknown member" => {
            body.push_str(r#"{"id":"a","sourceId":"S1"}],"pad":[0"#);
            while body.len() < size {
                body.push_str(",0");
            }
            body.push_str("]}");
        }
        "deep nesting" => {
            // Arrays 100 deep (serde_json's recursion limit is 128), again and again.
            body.push_str(r#"{"id":"a","sourceId":"S1"}],"pad":["#);
            let nested = format!("{}0{}", "[".repeat(100), "]".repeat(100));
            body.push_str(&nested);
            while body.len() < size {
                body.push(',');
                body.push_str(&nested);
            }
            body.push_str("]}");
        }
        other => unreachable!("{other}"),
    }
    body.into_bytes()
}

/// Peak heap above the level before, while `decode` runs on `body`.
fn peak_of(body: &[u8], decode: fn(&[u8]) -> usize) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let kept = decode(body);
    std::hint::black_box(kept);
    PEAK.load(Ordering::Relaxed) - before
}

fn decode_before(body: &[u8]) -> usize {
    let value: BeforeResponse = serde_json::from_slice(body).expect("decodes");
    let n = value.extra.len() + value.account_statements.map_or(0, |s| s.len());
    n
}

fn decode_after(body: &[u8]) -> usize {
    let value: types::AccountStatementsResponse = serde_json::from_slice(body).expect("decodes");
    value.extra.len() + value.account_statements.map_or(0, |s| s.len())
}

fn median(mut values: Vec<usize>) -> usize {
    values.sort_unstable();
    values[values.len() / 2]
}

fn main() {
    if let Ok(mode) = std::env::var("DECODE_INSTRUCTIONS") {
        instructions(&mode);
        return;
    }
    let sizes: Vec<usize> = match std::env::var("DECODE_MIB") {
        Ok(mib) => vec![mib.parse().expect("DECODE_MIB is a number of MiB")],
        Err(_) => vec![8, 32, 128],
    };
    let budget_gib: usize = std::env::var("DECODE_BEFORE_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    println!("| shape | answer | before: peak heap | after: peak heap | after / before |");
    println!("|---|---|---|---|---|");
    for shape in [
        "one large unknown member",
        "many small entries",
        "deep nesting",
    ] {
        for &mib in &sizes {
            let body = answer(shape, mib * MIB);
            let run_before = body.len() * 100 <= budget_gib * 1024 * MIB;
            let (mut before, mut after) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                if run_before {
                    before.push(peak_of(&body, decode_before));
                }
                after.push(peak_of(&body, decode_after));
            }
            let ratio = |peak: usize| peak as f64 / body.len() as f64;
            let after = median(after);
            let (before_text, change) = if run_before {
                let before = median(before);
                (
                    format!("{} MiB ({:.1}x)", before / MIB, ratio(before)),
                    format!("{:.3}", after as f64 / before as f64),
                )
            } else {
                (
                    "not run (over DECODE_BEFORE_GIB)".to_string(),
                    "".to_string(),
                )
            };
            println!(
                "| {shape} | {mib} MiB | {before_text} | {} MiB ({:.2}x) | {change} |",
                after / MIB,
                ratio(after)
            );
        }
    }
}

/// Decodes a typical answer `DECODE_ROUNDS` (default 10,000) times with the type `mode` names.
fn instructions(mode: &str) {
    let rounds: usize = std::env::var("DECODE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let statements: &[u8] = include_bytes!("../tests/data/get_account_statements.json");
    let scores: &[u8] = include_bytes!("../tests/data/get_scores.json");
    let mut kept = 0;
    for _ in 0..rounds {
        kept += match mode {
            "before" => decode_before(std::hint::black_box(statements)),
            "after" => decode_after(std::hint::black_box(statements)),
            "control" => {
                let value: types::ScoresResponse =
                    serde_json::from_slice(std::hint::black_box(scores)).expect("decodes");
                value.scores.map_or(0, |s| s.len())
            }
            other => panic!("DECODE_INSTRUCTIONS is before, after or control, not {other}"),
        };
    }
    println!("{mode}: {rounds} decodes ({kept})");
}
