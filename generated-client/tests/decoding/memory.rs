//! Decoding an answer with members the description does not know takes at most a small multiple
//! of the answer's size, whatever their shape: counted by this binary's allocator (per thread,
//! so tests running beside it do not count), never timed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use creditdata_client::types::{self, AccountStatementsResponse};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Counts the heap bytes each thread holds, and their peak.
struct Counting;

thread_local! {
    // Const-initialized and without destructor: usable from the allocator at any time.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grew(bytes: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes as isize;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(bytes: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get() - bytes as isize));
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(pointer, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's pointer, layout and size.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most heap this thread held above its level before `f`, while `f` ran (what `f` returns
/// included, as it is still held then).
fn peak_while<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(before));
    let value = f();
    let peak = PEAK.with(Cell::get) - before;
    (value, usize::try_from(peak).unwrap_or(0))
}

const MIB: usize = 1024 * 1024;

/// A dataset answer of about `size` bytes whose bulk is members the description does not know,
/// in one of three shapes.
pub fn hostile_answer(shape: &str, size: usize) -> Vec<u8> {
    let mut body = String::with_capacity(size + 64);
    body.push_str(r#"{"sources":[{"sourceId":"S1","status":"SUCCESS","countryCode":"GBR"}],"accountStatements":[{"id":"a","sourceId":"S1"}]"#);
    match shape {
        // One large member: an array of small numbers, 16x their size as `Value`s.
        "one large unknown member" => {
            body.push_str(r#","pad":[0"#);
            while body.len() < size {
                body.push_str(",0");
            }
            body.push(']');
        }
        // As many unknown members as fit, each small.
        "many small unknown members" => {
            let mut n = 0u64;
            while body.len() < size {
                body.push_str(&format!(r#","m{n}":0"#));
                n += 1;
            }
        }
        // Arrays nested 100 deep, again and again, inside one unknown member.
        "deep nesting" => {
            body.push_str(r#","pad":["#);
            let nested = format!("{}0{}", "[".repeat(100), "]".repeat(100));
            body.push_str(&nested);
            while body.len() < size {
                body.push(',');
                body.push_str(&nested);
            }
            body.push(']');
        }
        other => panic!("no shape {other}"),
    }
    body.push('}');
    body.into_bytes()
}

pub const SHAPES: [&str; 3] = [
    "one large unknown member",
    "many small unknown members",
    "deep nesting",
];

/// At most this many times the answer's size, above what the answer itself holds (the bytes
/// read from the network): the members' text (1x) and the transient copy of the largest one
/// while it is appended (up to 1x), plus the small fixed cost of the known members.
const BOUND: usize = 2;
const BASE: usize = 64 * 1024;

#[test]
fn decoding_unknown_members_takes_at_most_twice_the_answer_whatever_their_shape() {
    for shape in SHAPES {
        let body = hostile_answer(shape, 8 * MIB);
        let (decoded, peak) = peak_while(|| {
            serde_json::from_slice::<AccountStatementsResponse>(&body).expect("decodes")
        });
        assert_eq!(decoded.account_statements.as_ref().map(Vec::len), Some(1));
        assert!(
            !decoded.extra.is_empty(),
            "{shape}: the unknown members are kept"
        );
        assert!(
            peak <= BOUND * body.len() + BASE,
            "{shape}: decoding {} bytes took {peak} bytes of heap ({:.2}x); the bound is {BOUND}x \
             and {BASE} bytes",
            body.len(),
            peak as f64 / body.len() as f64
        );
        // What was kept is what was sent, byte for byte.
        let written = serde_json::to_vec(&decoded).unwrap();
        assert_eq!(written.len(), body.len(), "{shape}");
    }
}

/// `AccountStatementsResponse` as typify generated it before unknown members became text (same
/// members, same serde attributes): the baseline of the measurements below.
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

fn decode_before(body: &[u8]) -> usize {
    let value: BeforeResponse = serde_json::from_slice(body).expect("decodes");
    value.extra.len() + value.account_statements.map_or(0, |s| s.len())
}

fn decode_after(body: &[u8]) -> usize {
    let value: AccountStatementsResponse = serde_json::from_slice(body).expect("decodes");
    value.extra.len() + value.account_statements.map_or(0, |s| s.len())
}

/// A dataset answer of about `size` bytes of many small statements, each with one member the
/// description does not know.
fn many_small_entries(size: usize) -> Vec<u8> {
    let mut body = String::with_capacity(size + 64);
    body.push_str(r#"{"sources":[],"accountStatements":["#);
    let mut n = 0u64;
    while body.len() < size {
        if n > 0 {
            body.push(',');
        }
        body.push_str(&format!(r#"{{"id":"s{n}","sourceId":"S1","kind":1}}"#));
        n += 1;
    }
    body.push_str("]}");
    body.into_bytes()
}

fn median(mut values: Vec<usize>) -> usize {
    values.sort_unstable();
    values[values.len() / 2]
}

/// The table of BENCHMARKS.md ("Decoding memory"): peak heap of decoding answers of 8, 32 and
/// 128 MiB (or `DECODE_MIB`) in four shapes, before and after, alternately, median of three.
/// The before side is skipped where it would need more than `DECODE_BEFORE_GIB` (default 4)
/// GiB at 100 times the answer. Allocation counts do not depend on the build's optimization.
///
/// ```text
/// cargo test --workspace --test decoding -- --ignored --nocapture decode_memory_table
/// ```
#[test]
#[ignore = "a measurement: run it by name"]
fn decode_memory_table() {
    let sizes: Vec<usize> = match std::env::var("DECODE_MIB") {
        Ok(mib) => vec![mib.parse().expect("DECODE_MIB is a number of MiB")],
        Err(_) => vec![8, 32, 128],
    };
    let budget: usize = std::env::var("DECODE_BEFORE_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4)
        * 1024
        * MIB;
    println!("| shape | answer | before: peak heap | after: peak heap | after / before |");
    println!("|---|---:|---:|---:|---:|");
    let shapes = SHAPES.iter().copied().chain(["many small entries"]);
    for shape in shapes {
        for &mib in &sizes {
            let body = if shape == "many small entries" {
                many_small_entries(mib * MIB)
            } else {
                hostile_answer(shape, mib * MIB)
            };
            let run_before = body.len() * 100 <= budget;
            let (mut before, mut after) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                if run_before {
                    before.push(peak_while(|| decode_before(&body)).1);
                }
                after.push(peak_while(|| decode_after(&body)).1);
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
                    String::new(),
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

/// Decodes a typical dataset answer (`tests/data/get_account_statements.json`) `DECODE_ROUNDS`
/// times with the type `DECODE_INSTRUCTIONS` names (`before`, `after`, or `control`:
/// `types::ScoresResponse`, which the change did not touch), for callgrind (BENCHMARKS.md).
#[test]
#[ignore = "a measurement: run it by name under callgrind"]
fn decode_instructions() {
    let mode = std::env::var("DECODE_INSTRUCTIONS").unwrap_or_else(|_| "after".into());
    let rounds: usize = std::env::var("DECODE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let statements: &[u8] = include_bytes!("../data/get_account_statements.json");
    let scores: &[u8] = include_bytes!("../data/get_scores.json");
    let mut kept = 0;
    for _ in 0..rounds {
        kept += match mode.as_str() {
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
