//! Peak RSS of `creditdata datasets get`, `datasets all`, `export` and `Client::wait_for_data`
//! against large answers, a baseline build and this one side by side in one run (BENCHMARKS.md,
//! "Memory follows the data"). Run it through `cli/examples/peak_rss.sh`, which builds both.
//!
//! ```text
//! peak_rss --before DIR --after DIR [--sizes 8,32,128] [--rounds 1] [--before-max-mib 32]
//!          [--cap-mib 6144] [--commands get,all,export,wait,export-listing]
//!          [--shapes entries,unknown,deep]
//! ```
//!
//! Each DIR holds `creditdata` and `examples/wait_for_data` (a target profile directory). The
//! service is the in-process mock (providers answering at once) behind a loopback proxy that
//! serves one answer of the given size and shape in place of the mock's `--dataset` (default
//! `court-and-insolvencies`, whose generated type keeps unknown members; or, for
//! `export-listing`, its attachments listing), streamed as it is made: many small entries
//! (`"pad":[{"id":..},..]`, or the attachments themselves), one large member the description does
//! not know (`"pad":[0,0,...]`), or deep nesting (`"pad":[[{"a":[{"a":...}]}],...]`, 80 levels).
//! Each command runs as a child under `/usr/bin/time -f %M` (its peak resident set, KiB), its
//! output discarded; the sides alternate within each round and the median of the rounds is
//! reported. Each command's base (size 0: the mock's own answers) is measured once per round,
//! with the first shape. The baseline is not run above `--before-max-mib` (its decode took ~70x
//! an answer: 128 MiB would be ~9 GiB), and every child runs under an address-space cap of
//! `--cap-mib` (`prlimit --as`; 0: none), so that a run that would take the shared machine's
//! memory fails instead: such a run is shown as at least its peak (`>=`), with the cap. Prints a
//! Markdown table on stdout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use creditdata_mock::{MockConfig, MockServer};

const MIB: usize = 1024 * 1024;

/// What the proxy serves in place of one answer.
#[derive(Clone, Copy, Debug)]
struct Case {
    /// The last path segment of the answer replaced (`scores`, `attachments`).
    target: &'static str,
    shape: &'static str,
    bytes: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    // Absolute: the commands run in a work directory.
    let absolute = |dir: PathBuf| std::path::absolute(&dir).unwrap_or(dir);
    let before = absolute(PathBuf::from(option("--before").expect("--before DIR")));
    let after = absolute(PathBuf::from(option("--after").expect("--after DIR")));
    let list = |name: &str, default: &str| -> Vec<String> {
        option(name)
            .unwrap_or_else(|| default.to_string())
            .split(',')
            .map(str::to_string)
            .collect()
    };
    // 0: the mock's own answer, each command's base.
    let sizes: Vec<usize> = std::iter::once("0".to_string())
        .chain(list("--sizes", "8,32,128"))
        .map(|s| s.parse().expect("sizes in MiB"))
        .collect();
    let shapes = list("--shapes", "entries,unknown,deep");
    let commands = list("--commands", "get,all,export,wait,export-listing");
    // The dataset whose answer is replaced: one whose generated type keeps unknown members
    // (`#[serde(flatten)] extra`), the costly case of the decode being measured.
    let dataset: &'static str = Box::leak(
        option("--dataset")
            .unwrap_or_else(|| "court-and-insolvencies".into())
            .into_boxed_str(),
    );
    let rounds: usize = option("--rounds").map_or(1, |r| r.parse().expect("--rounds N"));
    let before_max: usize = option("--before-max-mib").map_or(32, |m| m.parse().expect("MiB"));
    let cap_mib: u64 = option("--cap-mib").map_or(6144, |m| m.parse().expect("MiB"));
    let cap = (cap_mib > 0).then_some(cap_mib);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let case = Arc::new(Mutex::new(Case {
        target: "scores",
        shape: "unknown",
        bytes: 0,
    }));
    let (mock, proxy) = runtime.block_on(async {
        let mock = MockServer::start(MockConfig {
            provider_delay: Duration::ZERO,
            provider_error_one_in: 0,
            ..MockConfig::default()
        })
        .await
        .expect("the mock starts");
        let proxy = proxy(
            mock.base_url().trim_end_matches('/').to_string(),
            case.clone(),
        )
        .await;
        (mock, proxy)
    });
    let work = tempfile::tempdir().expect("a work directory");
    let vars = vec![
        ("CREDITDATA_BASE_URL", proxy.clone()),
        ("CREDITDATA_TOKEN_URL", mock.token_url()),
        ("CREDITDATA_CLIENT_ID", mock.client_id().to_string()),
        ("CREDITDATA_CLIENT_SECRET", mock.client_secret().to_string()),
        (
            "CREDITDATA_CONFIG",
            work.path().join("config").display().to_string(),
        ),
    ];
    let id = session(&runtime, &mock, &after, work.path(), &vars);

    let mut rows: BTreeMap<(usize, String, String, usize), [Vec<Run>; 2]> = BTreeMap::new();
    for round in 0..rounds {
        for command in &commands {
            let command_shapes: Vec<&str> = if command == "export-listing" {
                vec!["entries"]
            } else {
                shapes.iter().map(String::as_str).collect()
            };
            for (nth_shape, shape) in command_shapes.into_iter().enumerate() {
                for &size in &sizes {
                    // The base does not depend on the shape: measured with the first.
                    if size == 0 && nth_shape > 0 {
                        continue;
                    }
                    let target = if command == "export-listing" {
                        "attachments"
                    } else {
                        dataset
                    };
                    let shape: &'static str = match shape {
                        "entries" => "entries",
                        "unknown" => "unknown",
                        "deep" => "deep",
                        other => panic!("unknown shape {other}"),
                    };
                    *case.lock().unwrap() = Case {
                        target,
                        shape,
                        bytes: (size * MIB).saturating_sub(4096),
                    };
                    // Alternate which side goes first, round by round.
                    let mut sides = vec![(1, &after)];
                    if size <= before_max {
                        sides.push((0, &before));
                    }
                    if round % 2 == 1 {
                        sides.reverse();
                    }
                    let order = commands.iter().position(|c| c == command).unwrap_or(0);
                    let shown_shape = if size == 0 { "base" } else { shape };
                    let key = (order, command.clone(), shown_shape.to_string(), size);
                    for (side, dir) in sides {
                        let run = measure(command, target, dir, work.path(), &vars, &id, cap);
                        eprintln!(
                            "round {round} {command} {shape} {size} MiB {}: {} KiB, exit {:?}{}",
                            ["before", "after"][side],
                            run.kib,
                            run.exit,
                            if run.ok { "" } else { " (aborted)" }
                        );
                        rows.entry(key.clone()).or_default()[side].push(run);
                    }
                }
            }
        }
    }
    print_table(&rows, cap);
    drop(runtime);
}

/// One run of a command: its peak resident set (KiB), whether it got through (a run that did
/// not, ended by a signal or a failed allocation at the cap, shows a lower bound of what it
/// would have needed) and its exit status.
#[derive(Clone, Copy, Debug)]
struct Run {
    kib: u64,
    ok: bool,
    exit: Option<i32>,
}

/// The Markdown table: per command, shape and size, each side's median peak (a side whose runs
/// failed shows `>=` its largest peak) and the growth over the command's base per MiB of answer.
fn print_table(rows: &BTreeMap<(usize, String, String, usize), [Vec<Run>; 2]>, cap: Option<u64>) {
    println!(
        "| command | shape | answer | before (peak RSS) | after (peak RSS) | after / before | \
         before: growth / answer | after: growth / answer | exit (before, after) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let bases: BTreeMap<&str, &[Vec<Run>; 2]> = rows
        .iter()
        .filter(|((_, _, _, size), _)| *size == 0)
        .map(|((_, command, _, _), values)| (command.as_str(), values))
        .collect();
    let mib = |kib: u64| kib as f64 / 1024.0;
    // The median of the runs that succeeded; `None` with the largest peak when any failed.
    let median = |runs: &[Run]| -> Result<Option<u64>, u64> {
        if let Some(failed) = runs.iter().filter(|r| !r.ok).map(|r| r.kib).max() {
            return Err(failed);
        }
        let mut values: Vec<u64> = runs.iter().map(|r| r.kib).collect();
        values.sort_unstable();
        Ok(values.get(values.len() / 2).copied())
    };
    let cap = cap.map_or(String::new(), |cap| format!(", the {cap} MiB cap"));
    for ((_, command, shape, size), [before, after]) in rows {
        let (b, a) = (median(before), median(after));
        let shown = |v: Result<Option<u64>, u64>| match v {
            Ok(Some(v)) => format!("{:.1} MiB", mib(v)),
            Ok(None) => "not run".to_string(),
            Err(v) => format!(">= {:.0} MiB (aborted{cap})", mib(v)),
        };
        let ratio = match (a, b) {
            (Ok(Some(a)), Ok(Some(b))) => format!("{:.3}", a as f64 / b as f64),
            (Ok(Some(a)), Err(b)) => format!("<= {:.3}", a as f64 / b as f64),
            _ => String::new(),
        };
        let base = bases.get(command.as_str());
        let growth = |side: usize, value: Result<Option<u64>, u64>| {
            let base = base.and_then(|b| median(&b[side]).ok().flatten());
            match (value, base) {
                (Ok(Some(v)), Some(base)) if *size > 0 => {
                    format!("{:.2}", (mib(v) - mib(base)) / *size as f64)
                }
                (Err(v), Some(base)) if *size > 0 => {
                    format!(">= {:.2}", (mib(v) - mib(base)) / *size as f64)
                }
                _ => String::new(),
            }
        };
        let answer = if *size == 0 {
            "the mock's".to_string()
        } else {
            format!("{size} MiB")
        };
        let exits = |runs: &[Run]| {
            let mut codes: Vec<String> = runs
                .iter()
                .map(|r| r.exit.map_or("signal".into(), |c| c.to_string()))
                .collect();
            codes.dedup();
            codes.join("/")
        };
        println!(
            "| {command} | {shape} | {answer} | {} | {} | {ratio} | {} | {} | {}, {} |",
            shown(b),
            shown(a),
            growth(0, b),
            growth(1, a),
            exits(before),
            exits(after)
        );
    }
}

/// Creates a session the customer completed and waits until its providers answered.
fn session(
    runtime: &tokio::runtime::Runtime,
    mock: &MockServer,
    dir: &Path,
    work: &Path,
    vars: &[(&str, String)],
) -> String {
    // Straight to the mock (the proxy passes reads on, not bodies).
    let mut direct: Vec<(&str, String)> = vars.to_vec();
    direct.retain(|(name, _)| *name != "CREDITDATA_BASE_URL");
    direct.push(("CREDITDATA_BASE_URL", mock.base_url().to_string()));
    let created = creditdata(dir, work, &direct)
        .args([
            "sessions",
            "create",
            "--email",
            "subject@example.com",
            "--query",
        ])
        .arg("GBR:credit-history,score,bank-account-categorization,identification")
        .output()
        .expect("creditdata runs");
    assert!(created.status.success(), "{created:?}");
    let created: serde_json::Value = serde_json::from_slice(&created.stdout).expect("JSON");
    let id = created["id"].as_str().expect("an id").to_string();
    runtime.block_on(async {
        let url = format!("{}/_mock/sessions/{id}/complete", mock.base_url());
        let answer = reqwest::Client::new()
            .post(&url)
            .header(creditdata_mock::CONTROL_HEADER, "1")
            .send()
            .await
            .expect("the mock answers");
        assert!(answer.status().is_success(), "{url}: {}", answer.status());
    });
    id
}

/// `DIR/creditdata` with exactly these variables.
fn creditdata(dir: &Path, work: &Path, vars: &[(&str, String)]) -> Command {
    let mut command = Command::new(dir.join("creditdata"));
    environment(&mut command, work, vars);
    command
}

fn environment(command: &mut Command, work: &Path, vars: &[(&str, String)]) {
    for (name, _) in std::env::vars() {
        if name.starts_with("CREDITDATA_") || name.starts_with("OTEL_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("XDG_RUNTIME_DIR")
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .current_dir(work);
}

/// Runs `command` of side `dir` under `/usr/bin/time -f %M` (and an address-space cap of `cap`
/// MiB): its peak resident set in KiB, and whether it succeeded.
fn measure(
    command: &str,
    target: &str,
    dir: &Path,
    work: &Path,
    vars: &[(&str, String)],
    id: &str,
    cap: Option<u64>,
) -> Run {
    let out = tempfile::tempdir_in(work).expect("an export directory");
    let mut run = Command::new("/usr/bin/time");
    environment(&mut run, work, vars);
    run.args(["-f", "%M", "-o"]).arg(work.join("peak.txt"));
    if let Some(cap) = cap {
        run.arg("prlimit")
            .arg(format!("--as={}", cap * MIB as u64))
            .arg("--");
    }
    match command {
        "get" => run
            .arg(dir.join("creditdata"))
            .args(["datasets", "get", id, target, "--output", "json"]),
        "all" => run
            .arg(dir.join("creditdata"))
            .args(["datasets", "all", id, "--output", "json"]),
        "export" | "export-listing" => run
            .arg(dir.join("creditdata"))
            .args(["export", "--out"])
            .arg(out.path().join("tree"))
            .args(["--max-listed-files", "10", "--output", "json"]),
        "wait" => run.arg(dir.join("examples/wait_for_data")).arg(id),
        other => panic!("unknown command {other}"),
    };
    // What the command prints is not kept (a 128 MiB answer would be held here).
    let output = run
        .stdout(std::process::Stdio::null())
        .output()
        .expect("/usr/bin/time runs");
    let text = std::fs::read_to_string(work.join("peak.txt")).unwrap_or_default();
    let peak: u64 = text
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .unwrap_or_else(|| panic!("{command}: no peak ({output:?})"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        eprintln!("  ({command} exited {:?}: {tail:?})", output.status.code());
    }
    // Ended by a signal (GNU time says so in its output) or by an allocation that failed (the
    // cap): the run did not get through the answer. Any exit status is the command's own
    // outcome (7: a provider of the mock failed; 1: ids beyond --max-listed-files).
    let aborted = text.contains("terminated by signal") || stderr.contains("memory allocation of");
    Run {
        kib: peak,
        ok: !aborted,
        exit: output.status.code(),
    }
}

/// A proxy on 127.0.0.1 in front of the mock that serves `case` in place of one answer.
async fn proxy(upstream: String, case: Arc<Mutex<Case>>) -> String {
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |request: Request| {
        let (http, upstream, case) = (http.clone(), upstream.clone(), case.clone());
        async move {
            let case = *case.lock().unwrap();
            let path = request.uri().path().to_string();
            let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            if let ["v1", "sessions", _, "attachments", _, "content"] = parts.as_slice() {
                return Response::builder()
                    .header("content-type", "application/pdf")
                    .body(Body::from("%PDF-1.4 a small file"))
                    .unwrap();
            }
            let replaced =
                matches!(parts.as_slice(), ["v1", "sessions", _, last] if *last == case.target);
            let mut forwarded = http.request(
                request.method().clone(),
                format!("{upstream}{}", request.uri()),
            );
            for (name, value) in request.headers() {
                if name != axum::http::header::HOST {
                    forwarded = forwarded.header(name, value);
                }
            }
            let answer = forwarded.send().await.expect("the mock answers");
            let status = answer.status();
            let mut response = Response::builder().status(status);
            for (name, value) in answer.headers() {
                if name != axum::http::header::CONTENT_LENGTH {
                    response = response.header(name, value);
                }
            }
            let body = answer.bytes().await.expect("the mock's body");
            if !replaced || !status.is_success() || case.bytes == 0 {
                return response.body(Body::from(body)).unwrap();
            }
            response.body(generated(&body, case)).unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the proxy serves") });
    format!("http://{address}")
}

/// The mock's answer with `case`'s content added, about `case.bytes` in all, made as it is sent.
fn generated(upstream: &[u8], case: Case) -> Body {
    let text = String::from_utf8_lossy(upstream);
    let head = if case.target == "attachments" {
        // The listing itself: its entries, many and small.
        "{\"attachments\":[".to_string()
    } else {
        let open = text.trim_end().trim_end_matches('}').to_string();
        let separator = if open.trim_end().ends_with('{') {
            ""
        } else {
            ","
        };
        format!("{open}{separator}\"pad\":[")
    };
    let item = move |n: usize| -> String {
        match case.shape {
            "entries" if case.target == "attachments" => format!(
                "{{\"id\":\"att-{n}\",\"mimeType\":\"application/pdf\",\"fileName\":\"f.pdf\"}}"
            ),
            "entries" => format!("{{\"id\":\"e-{n}\",\"type\":\"X\",\"value\":{n}}}"),
            "unknown" => "0".to_string(),
            _ => format!("{}0{}", "[{\"a\":".repeat(40), "}]".repeat(40)),
        }
    };
    let total = case.bytes;
    let state = (0usize, head.len(), Some(head));
    let chunks = futures::stream::unfold(state, move |(n, sent, head)| async move {
        if let Some(head) = head {
            return Some((Ok::<_, std::io::Error>(Bytes::from(head)), (n, sent, None)));
        }
        if n == usize::MAX {
            return None;
        }
        let mut chunk = String::with_capacity(64 * 1024);
        let mut n = n;
        let mut sent = sent;
        while chunk.len() < 60 * 1024 {
            let next = item(n);
            if sent + chunk.len() + next.len() + 3 > total {
                chunk.push_str("]}");
                return Some((Ok(Bytes::from(chunk)), (usize::MAX, sent, None)));
            }
            if n > 0 {
                chunk.push(',');
            }
            chunk.push_str(&next);
            n += 1;
        }
        sent += chunk.len();
        Some((Ok(Bytes::from(chunk)), (n, sent, None)))
    });
    Body::from_stream(chunks)
}
