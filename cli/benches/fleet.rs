//! Many machines, one limit (issue 26, item 5), measured: N `creditdata export` processes
//! against the in-process mock limiting the API client to 50 req/s, each told the whole
//! `--rate-limit 50/s` and exporting its own completed sessions, without and with the shared
//! store (a `redis-server` of the bench's own on loopback). Also the store killed during a run
//! (what the fallback admits), and the per-call cost of the shared step against the local
//! limiter, side by side in the same run.
//!
//! ```text
//! cargo bench --workspace --bench fleet                                   # everything (~25 min)
//! FLEET_SIZES=2,16 FLEET_MODES=alone,shared cargo bench --workspace --bench fleet
//! FLEET_PARTS=step cargo bench --workspace --bench fleet                  # the per-call cost only
//! ```
//!
//! No assertion: this prints numbers. Nothing leaves loopback.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use creditdata_client::Client;
use creditdata_client::rate_limit::{RateLimit, RateLimitStore, RateLimiter};
use creditdata_mock::local_redis::LocalRedis;
use creditdata_mock::realism::{RateLimit as ServiceLimit, Realism};
use creditdata_mock::{MockConfig, MockServer};
use serde_json::Value;

const SERVICE_LIMIT: u32 = 50;

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn main() {
    let parts = env_list("FLEET_PARTS", "step,fleet,outage");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let Some(mut redis) = LocalRedis::start_or_skip("the fleet bench") else {
        return;
    };
    runtime.block_on(async {
        for part in &parts {
            match part.as_str() {
                "step" => step_cost(&redis).await,
                "fleet" => fleet(&redis).await,
                "outage" => outage(&mut redis).await,
                other => eprintln!("unknown part {other:?}: step, fleet or outage"),
            }
        }
    });
}

async fn mock() -> MockServer {
    MockServer::start(MockConfig {
        realism: Realism::new().rate_limit(ServiceLimit::per_second(SERVICE_LIMIT)),
        ..MockConfig::immediate()
    })
    .await
    .expect("the mock starts")
}

fn seeding_client(mock: &MockServer) -> Client {
    Client::builder()
        .base_url(mock.base_url())
        .client_credentials(mock.token_url(), mock.client_id(), mock.client_secret())
        .rate_limit(RateLimit::per_second(SERVICE_LIMIT))
        .build()
        .expect("a client")
}

/// Creates `count` completed sessions (every package) for worker `worker`: its filter is
/// `--email @workerN.example`.
async fn seed(mock: &MockServer, client: &Client, worker: usize, count: usize) {
    let subjects = (0..count).map(|n| format!("s{n}@worker{worker}.example"));
    common::completed_sessions(mock, client, subjects).await;
}

async fn counts(mock: &MockServer) -> (u64, u64) {
    let realism: Value = reqwest::Client::new()
        .get(format!("{}/_mock/realism", mock.base_url()))
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("JSON");
    let count = |what: &str| realism["rateLimit"][what].as_u64().unwrap_or(0);
    (count("admitted"), count("refused"))
}

/// One fleet run: `workers` exports at once, each of its own sessions.
struct FleetRun {
    seconds: f64,
    admitted: u64,
    refused: u64,
    failed_exports: usize,
    files_failed: u64,
    outages: u64,
}

fn spawn_export(
    mock: &MockServer,
    work: &Path,
    worker: usize,
    store: Option<&str>,
) -> std::process::Child {
    let out = work.join(format!("w{worker}"));
    let mut command = Command::new(
        std::env::var("FLEET_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_creditdata").into()),
    );
    command
        .args(["export", "--out"])
        .arg(&out)
        .args(["--status", "completed-by-customer", "--output", "json"])
        .args(["--email", &format!("@worker{worker}.example")])
        .args(["--rate-limit", &format!("{SERVICE_LIMIT}/s")])
        .env("CREDITDATA_BASE_URL", mock.base_url())
        .env("CREDITDATA_TOKEN_URL", mock.token_url())
        .env("CREDITDATA_CLIENT_ID", mock.client_id())
        .env("CREDITDATA_CLIENT_SECRET", mock.client_secret())
        .env("CREDITDATA_CONFIG", work.join("config"))
        .env_remove("RUST_LOG")
        .env_remove("CREDITDATA_TOKEN")
        .env_remove("CREDITDATA_RATE_LIMIT_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(store) = store {
        // The limit is what is measured: each worker has sessions of its own (its own filter),
        // so there is no work to share, and claims would only stall with the store killed.
        command
            .env("CREDITDATA_RATE_LIMIT_STORE", store)
            .arg("--no-share-work");
    }
    command.spawn().expect("creditdata export starts")
}

/// Waits for every child; `(failed exports, files failed, store outages)` from their summaries.
fn collect(children: Vec<std::process::Child>) -> (usize, u64, u64) {
    let mut failed = 0;
    let mut files_failed = 0;
    let mut outages = 0;
    for child in children {
        let output = child.wait_with_output().expect("the export ends");
        if !output.status.success() {
            failed += 1;
        }
        let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        files_failed += summary["totals"]["filesFailed"].as_u64().unwrap_or(0);
        outages += summary["rateLimiter"]["store"]["outages"]
            .as_u64()
            .unwrap_or(0);
    }
    (failed, files_failed, outages)
}

async fn run_fleet(mock: &MockServer, workers: usize, store: Option<&str>) -> FleetRun {
    // The mock's bucket refills while nothing runs: every run starts with it full.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let work = tempfile::tempdir().expect("a directory");
    let before = counts(mock).await;
    let started = Instant::now();
    let children: Vec<_> = (0..workers)
        .map(|w| spawn_export(mock, work.path(), w, store))
        .collect();
    let (failed_exports, files_failed, outages) =
        tokio::task::spawn_blocking(move || collect(children))
            .await
            .expect("joined");
    let seconds = started.elapsed().as_secs_f64();
    let after = counts(mock).await;
    FleetRun {
        seconds,
        admitted: after.0 - before.0,
        refused: after.1 - before.1,
        failed_exports,
        files_failed,
        outages,
    }
}

async fn fleet(redis: &LocalRedis) {
    let sizes: Vec<usize> = env_list("FLEET_SIZES", "2,4,8,16")
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    let modes = env_list("FLEET_MODES", "alone,shared");
    let per_worker: usize = std::env::var("FLEET_SESSIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(30);
    println!(
        "fleet: N exports of {per_worker} completed sessions each, each --rate-limit {SERVICE_LIMIT}/s, \
         against a mock limiting the client to {SERVICE_LIMIT} req/s (burst {SERVICE_LIMIT})"
    );
    println!(
        "  N | store | seconds | admitted | admitted/s / limit | 429s | 429 share | exports failed | files failed | store outages"
    );
    for &workers in &sizes {
        let mock = mock().await;
        let seeding = seeding_client(&mock);
        for worker in 0..workers {
            seed(&mock, &seeding, worker, per_worker).await;
        }
        for mode in &modes {
            let store = match mode.as_str() {
                "shared" => Some(redis.url()),
                _ => None,
            };
            let run = run_fleet(&mock, workers, store.as_deref()).await;
            let requests = run.admitted + run.refused;
            println!(
                "  {workers:2} | {:6} | {:7.1} | {:8} | {:18.3} | {:4} | {:8.2} % | {:>14} | {:12} | {}",
                mode,
                run.seconds,
                run.admitted,
                run.admitted as f64 / run.seconds / f64::from(SERVICE_LIMIT),
                run.refused,
                100.0 * run.refused as f64 / requests.max(1) as f64,
                format!("{} of {workers}", run.failed_exports),
                run.files_failed,
                run.outages,
            );
        }
        mock.shutdown().await;
    }
}

/// The store killed a third into a shared run of N exports and started again (empty) at two
/// thirds: what the mock admitted and refused while it was down.
async fn outage(redis: &mut LocalRedis) {
    let workers: usize = std::env::var("FLEET_OUTAGE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8);
    let per_worker = 30;
    let mock = mock().await;
    let seeding = seeding_client(&mock);
    for worker in 0..workers {
        seed(&mock, &seeding, worker, per_worker).await;
    }
    // A shared run lasts about workers × sessions × 28 requests / 50 per second.
    let expected = (workers * per_worker * 28) as f64 / f64::from(SERVICE_LIMIT);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let work = tempfile::tempdir().expect("a directory");
    let url = redis.url();
    let start = counts(&mock).await;
    let started = Instant::now();
    let children: Vec<_> = (0..workers)
        .map(|w| spawn_export(&mock, work.path(), w, Some(&url)))
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(expected / 3.0)).await;
    let before = counts(&mock).await;
    let down_at = Instant::now();
    redis.stop();
    tokio::time::sleep(Duration::from_secs_f64(expected / 3.0)).await;
    let during = counts(&mock).await;
    let down_for = down_at.elapsed().as_secs_f64();
    redis.restart().expect("redis starts again");
    let (failed_exports, files_failed, outages) =
        tokio::task::spawn_blocking(move || collect(children))
            .await
            .expect("joined");
    let seconds = started.elapsed().as_secs_f64();
    let end = counts(&mock).await;
    let admitted_down = during.0 - before.0;
    let refused_down = during.1 - before.1;
    println!(
        "outage: {workers} shared exports of {per_worker} sessions, the store killed after {:.0} s for {down_for:.1} s",
        expected / 3.0
    );
    println!(
        "  while down: admitted {admitted_down} ({:.3} of the limit), 429s {refused_down} ({:.2} % of requests)",
        admitted_down as f64 / down_for / f64::from(SERVICE_LIMIT),
        100.0 * refused_down as f64 / (admitted_down + refused_down).max(1) as f64,
    );
    let admitted = end.0 - start.0;
    let refused = end.1 - start.1;
    println!(
        "  whole run: {seconds:.1} s, admitted {admitted} ({:.3} of the limit), 429s {refused} ({:.2} %), exports failed {failed_exports} of {workers}, files failed {files_failed}, outages seen {outages}",
        admitted as f64 / seconds / f64::from(SERVICE_LIMIT),
        100.0 * refused as f64 / (admitted + refused).max(1) as f64,
    );
    mock.shutdown().await;
}

/// The per-call cost of the shared step (one EVALSHA round trip to a loopback Redis) against
/// the local limiter's, neither of which ever waits (a limit far above the calls): medians of
/// alternating rounds; and an API call against the mock for scale.
async fn step_cost(redis: &LocalRedis) {
    let rounds = 9;
    let calls = 2_000;
    let limit = RateLimit::per_second(1_000_000).burst(1_000_000);
    let local = RateLimiter::new(limit);
    let store = RateLimitStore::redis(&redis.url())
        .expect("the store")
        .prefix("bench");
    let shared = RateLimiter::shared(limit, store, &["bench", "step"]);
    shared.acquire().await; // connects and loads the script
    let mock = MockServer::start(MockConfig::immediate())
        .await
        .expect("the mock starts");
    let client = Client::builder()
        .base_url(mock.base_url())
        .bearer_token(mock.mint_token(&Default::default()).expect("a token"))
        .build()
        .expect("a client");
    let _ = client.get_consumer_packages().call().await;
    let mut local_us = Vec::new();
    let mut shared_us = Vec::new();
    let mut call_us = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        for _ in 0..calls {
            local.acquire().await;
        }
        local_us.push(started.elapsed().as_secs_f64() * 1e6 / calls as f64);
        let started = Instant::now();
        for _ in 0..calls {
            shared.acquire().await;
        }
        shared_us.push(started.elapsed().as_secs_f64() * 1e6 / calls as f64);
        let started = Instant::now();
        for _ in 0..calls / 10 {
            let _ = client.get_consumer_packages().call().await;
        }
        call_us.push(started.elapsed().as_secs_f64() * 1e6 / (calls / 10) as f64);
    }
    let (local, shared, call) = (
        median(&mut local_us),
        median(&mut shared_us),
        median(&mut call_us),
    );
    println!(
        "step: per admission, medians of {rounds} alternating rounds of {calls}: local limiter {local:.2} µs, \
         shared step {shared:.1} µs (x{:.0}), an API call to the in-process mock {call:.1} µs; \
         the shared step is {:.1} % of such a call and {:.2} % of the 20 ms between two requests at 50/s",
        shared / local,
        100.0 * shared / call,
        100.0 * shared / 20_000.0
    );
    mock.shutdown().await;
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
