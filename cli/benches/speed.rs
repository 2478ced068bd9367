//! Where users wait, measured side by side in one run against the in-process mock (see
//! BENCHMARKS.md, "Fast where users feel it"):
//!
//! ```text
//! cargo bench -p creditdata-cli --bench speed                          # everything
//! SPEED_PARTS=datasets cargo bench -p creditdata-cli --bench speed     # one part
//! SPEED_SESSIONS=100,1000 SPEED_ROUNDS=10 cargo bench -p creditdata-cli --bench speed
//! ```
//!
//! - `datasets`: one session's JSON datasets with 50 ms of injected latency per request:
//!   `Client::session_datasets` (default concurrency) against the same method at concurrency 1
//!   (a sequential loop through the same code), alternating, medians of the rounds.
//! - `export`: `creditdata export` (the built binary, as a user runs it) of N completed sessions
//!   from a mock limiting the client to 50 req/s, with `--rate-limit 50/s`: the request rate the
//!   mock admitted during the export against the limit, the 429s it sent, whether any reached
//!   the user (exit status, failed files), and the command's peak RSS (`/usr/bin/time`).
//! - `throughput`: without limit or latency, the export's request rate against what the mock
//!   serves to the generated client at 32 concurrent calls in the same run.
//!
//! No assertion: this prints numbers. Nothing leaves loopback.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use creditdata_client::Client;
use creditdata_mock::realism::{Latency, RateLimit as ServiceLimit, Realism};
use creditdata_mock::{MockConfig, MockServer};
use futures::future::join_all;
use serde_json::Value;

const LATENCY: Duration = Duration::from_millis(50);
const SERVICE_LIMIT: u32 = 50;

fn main() {
    // `cargo bench` passes `--bench`; there is nothing to filter.
    let parts =
        std::env::var("SPEED_PARTS").unwrap_or_else(|_| "datasets,export,throughput".into());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        for part in parts.split(',').map(str::trim) {
            match part {
                "datasets" => datasets().await,
                "export" => export().await,
                "throughput" => throughput().await,
                other => eprintln!("unknown part {other:?}: datasets, export or throughput"),
            }
        }
    });
}

async fn mock(realism: Realism) -> MockServer {
    MockServer::start(MockConfig {
        realism,
        ..MockConfig::immediate()
    })
    .await
    .expect("the mock starts")
}

fn client(
    mock: &MockServer,
    configure: impl FnOnce(creditdata_client::ClientBuilder) -> creditdata_client::ClientBuilder,
) -> Client {
    configure(
        Client::builder()
            .base_url(mock.base_url())
            .client_credentials(mock.token_url(), mock.client_id(), mock.client_secret()),
    )
    .build()
    .expect("a client")
}

/// `count` subjects' addresses.
fn subjects(count: usize) -> impl Iterator<Item = String> {
    (0..count).map(|n| format!("subject{n}@example.com"))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}

async fn datasets() {
    let rounds: usize = std::env::var("SPEED_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10);
    let mock = mock(Realism::new().latency(Latency::fixed(LATENCY))).await;
    let client = client(&mock, |b| b);
    let id = common::completed_sessions(&mock, &client, subjects(1)).await[0];
    // Warm: the token, the connections.
    assert!(client.session_datasets(id).await.unwrap().reads_succeeded());
    let (mut sequential, mut concurrent) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so that neither always meets a warmer pool.
        for first in [round % 2 == 0, round % 2 != 0] {
            let started = Instant::now();
            let read = if first {
                client.session_datasets(id).concurrency(1).await
            } else {
                client.session_datasets(id).await
            }
            .expect("the session exists");
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            assert!(read.reads_succeeded(), "{:?}", read.failures());
            if first {
                sequential.push(elapsed);
            } else {
                concurrent.push(elapsed);
            }
        }
    }
    let (sequential, concurrent) = (median(&mut sequential), median(&mut concurrent));
    let latency = LATENCY.as_secs_f64() * 1000.0;
    println!(
        "datasets of one session, {latency} ms injected latency, {rounds} alternating rounds (medians):"
    );
    println!(
        "  sequential loop (concurrency 1): {sequential:8.1} ms = {:.1} round trips",
        sequential / latency
    );
    println!(
        "  session_datasets (default):      {concurrent:8.1} ms = {:.1} round trips",
        concurrent / latency
    );
    println!("  speed-up: {:.1}x", sequential / concurrent);
}

async fn realism_counts(mock: &MockServer) -> Value {
    reqwest::Client::new()
        .get(format!("{}/_mock/realism", mock.base_url()))
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("JSON")
}

/// What one run of `creditdata export` did.
struct ExportRun {
    seconds: f64,
    requests: u64,
    refused: u64,
    exit: Option<i32>,
    files_failed: Value,
    peak_rss_kib: u64,
}

async fn run_export(mock: &MockServer, work: &Path, extra: &[&str]) -> ExportRun {
    let before = realism_counts(mock).await;
    let rss_file = work.join("rss.txt");
    let mut command = Command::new("/usr/bin/time");
    command
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss_file)
        .arg(env!("CARGO_BIN_EXE_creditdata"))
        .args(["export", "--out", "tree", "--output", "json"])
        .args(extra)
        .current_dir(work)
        .env("CREDITDATA_BASE_URL", mock.base_url())
        .env("CREDITDATA_TOKEN_URL", mock.token_url())
        .env("CREDITDATA_CLIENT_ID", mock.client_id())
        .env("CREDITDATA_CLIENT_SECRET", mock.client_secret())
        .env_remove("RUST_LOG")
        .env_remove("CREDITDATA_TOKEN");
    let started = Instant::now();
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("joined")
        .expect("creditdata export runs");
    let seconds = started.elapsed().as_secs_f64();
    let after = realism_counts(mock).await;
    let count = |v: &Value, what: &str| v["rateLimit"][what].as_u64().unwrap_or(0);
    // The summary is stdout's one JSON document.
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    ExportRun {
        seconds,
        requests: count(&after, "admitted") + count(&after, "refused")
            - count(&before, "admitted")
            - count(&before, "refused"),
        refused: count(&after, "refused") - count(&before, "refused"),
        exit: output.status.code(),
        files_failed: summary["totals"]["filesFailed"].clone(),
        peak_rss_kib: std::fs::read_to_string(&rss_file)
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
            .unwrap_or(0),
    }
}

async fn export() {
    let sizes: Vec<usize> = std::env::var("SPEED_SESSIONS")
        .unwrap_or_else(|_| "100,1000".into())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    println!(
        "export at a service limit of {SERVICE_LIMIT} req/s, client --rate-limit {SERVICE_LIMIT}/s:"
    );
    println!(
        "  sessions | seconds | /v1 requests | req/s | / limit | 429s sent by the mock | exit | files failed | peak RSS"
    );
    for sessions in sizes {
        let mock = mock(Realism::new().rate_limit(ServiceLimit::per_second(SERVICE_LIMIT))).await;
        // Seeding at the service's pace, so that it does not count as the export's.
        let seeding = client(&mock, |b| {
            b.rate_limit(creditdata_client::rate_limit::RateLimit::per_second(
                SERVICE_LIMIT,
            ))
        });
        common::completed_sessions(&mock, &seeding, subjects(sessions)).await;
        // The mock's bucket refills while the export starts: wait a window so it starts full.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let work = tempfile::tempdir().expect("a directory");
        let limit = format!("{SERVICE_LIMIT}/s");
        let run = run_export(&mock, work.path(), &["--rate-limit", &limit]).await;
        let rate = run.requests as f64 / run.seconds;
        println!(
            "  {sessions:8} | {:7.1} | {:12} | {rate:5.1} | {:7.3} | {:21} | {:4} | {:12} | {} MiB",
            run.seconds,
            run.requests,
            rate / f64::from(SERVICE_LIMIT),
            run.refused,
            run.exit.map_or("signal".to_string(), |c| c.to_string()),
            run.files_failed,
            run.peak_rss_kib / 1024
        );
        mock.shutdown().await;
    }
}

async fn throughput() {
    let sessions = 200;
    // A limit nobody reaches, only so that the mock counts the requests.
    let mock = mock(Realism::new().rate_limit(ServiceLimit::per_second(1_000_000))).await;
    let client = client(&mock, |b| b);
    let ids = common::completed_sessions(&mock, &client, subjects(sessions)).await;
    let work = tempfile::tempdir().expect("a directory");
    let run = run_export(&mock, work.path(), &[]).await;

    let before = realism_counts(&mock).await;
    let started = Instant::now();
    let until = started + Duration::from_secs(5);
    let workers = (0..32).map(|n| {
        let client = client.clone();
        let id = ids[n % ids.len()];
        async move {
            while Instant::now() < until {
                client
                    .get_person_details()
                    .session_id(id)
                    .call()
                    .await
                    .expect("person details");
            }
        }
    });
    join_all(workers).await;
    let seconds = started.elapsed().as_secs_f64();
    let after = realism_counts(&mock).await;
    let served = after["rateLimit"]["admitted"].as_u64().unwrap_or(0)
        - before["rateLimit"]["admitted"].as_u64().unwrap_or(0);
    let export_rate = run.requests as f64 / run.seconds;
    let mock_rate = served as f64 / seconds;
    println!("without limit or latency ({sessions} sessions, default export concurrency):");
    println!(
        "  export: {} requests in {:.2} s = {export_rate:.0} req/s (exit {:?}, files failed {})",
        run.requests, run.seconds, run.exit, run.files_failed
    );
    println!(
        "  the mock to the generated client, 32 concurrent GETs for 5 s: {mock_rate:.0} req/s"
    );
    println!("  export / mock: {:.3}", export_rate / mock_rate);
}
