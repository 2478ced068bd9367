//! Throughput and tail latency of `creditdata-mock` next to Prism 5.14.2 (`@stoplight/prism-cli`)
//! serving the same effective API description, under the same client load, in one run.
//!
//! `cargo bench -p creditdata-mock --bench vs_prism`
//!
//! Both servers run as separate processes on loopback. The load generator is this process:
//! `BENCH_CONCURRENCY` connections (default 32) each sending requests back to back for
//! `BENCH_SECONDS` (default 10) after a 2-second warm-up, cycling through the same six GET
//! endpoints with the same bearer token. Prism is found through `PRISM` (path to its `prism`
//! executable), else `node_modules/.bin/prism` in the workspace, else `npx --yes
//! @stoplight/prism-cli@5.14.2`; set `BENCH_SKIP_PRISM=1` to measure the mock alone.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use std::io::{BufRead, BufReader};

const PRISM_VERSION: &str = "5.14.2";

struct Server {
    name: &'static str,
    base: String,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap_or(4010)
}

fn start_mock() -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--provider-delay",
            "0s",
            "--provider-error-one-in",
            "0",
        ])
        .args(["--token-lifetime", "1h"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start creditdata-mock");
    let stdout = child.stdout.take().expect("stdout");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sender = Some(sender);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(url) = line.split("listening on ").nth(1)
                && let Some(sender) = sender.take()
            {
                let _ = sender.send(url.trim().to_owned());
            }
        }
    });
    let base = receiver
        .recv_timeout(Duration::from_secs(30))
        .expect("the mock announces its address");
    Server {
        name: "creditdata-mock",
        base,
        child,
    }
}

fn prism_command(root: &Path) -> Option<Command> {
    if let Some(path) = std::env::var_os("PRISM") {
        return Some(Command::new(path));
    }
    let local = root.join("node_modules/.bin/prism");
    if local.is_file() {
        return Some(Command::new(local));
    }
    let mut npx = Command::new("npx");
    npx.args(["--yes", &format!("@stoplight/prism-cli@{PRISM_VERSION}")]);
    Some(npx)
}

async fn start_prism(root: &Path, http: &reqwest::Client, token: &str) -> Option<Server> {
    let port = free_port();
    let mut command = prism_command(root)?;
    let child = command
        .args(["mock", "-h", "127.0.0.1", "-p", &port.to_string()])
        .arg(root.join("spec/openapi.effective.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server {
        name: "Prism 5.14.2",
        base: format!("http://127.0.0.1:{port}"),
        child,
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let ready = http
            .get(format!("{}/v1/consumer/packages", server.base))
            .bearer_auth(token)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            return Some(server);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    eprintln!("Prism did not start within 120 s");
    None
}

struct Outcome {
    requests: u64,
    failures: u64,
    seconds: f64,
    latencies: Vec<u32>,
}

async fn load(
    base: &str,
    token: &str,
    paths: &[String],
    concurrency: u64,
    seconds: u64,
) -> Outcome {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(concurrency as usize)
        .build()
        .expect("client");
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..concurrency {
        let client = client.clone();
        let stop = Arc::clone(&stop);
        let urls: Vec<String> = paths.iter().map(|p| format!("{base}{p}")).collect();
        let token = token.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut failures = 0u64;
            let mut n = worker as usize;
            while !stop.load(Ordering::Relaxed) {
                let url = &urls[n % urls.len()];
                n += 1;
                let sent = Instant::now();
                let ok = match client.get(url).bearer_auth(&token).send().await {
                    Ok(response) => {
                        let success = response.status().is_success();
                        success && response.bytes().await.is_ok()
                    }
                    Err(_) => false,
                };
                latencies.push(sent.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                if !ok {
                    failures += 1;
                }
            }
            (latencies, failures)
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    let mut failures = 0;
    for task in tasks {
        if let Ok((mut l, f)) = task.await {
            latencies.append(&mut l);
            failures += f;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    Outcome {
        requests: latencies.len() as u64,
        failures,
        seconds,
        latencies,
    }
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[index]) / 1000.0
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; a filter argument that does not match skips the run.
    if let Some(filter) = std::env::args().skip(1).find(|a| !a.starts_with('-'))
        && !"vs_prism".contains(filter.as_str())
    {
        return;
    }
    let concurrency = env_number("BENCH_CONCURRENCY", 32);
    let seconds = env_number("BENCH_SECONDS", 10);
    let root = workspace_root();
    let http = reqwest::Client::new();

    let mock = start_mock();
    let token_response: Value = http
        .post(format!(
            "{}/realms/consumer/protocol/openid-connect/token",
            mock.base
        ))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", "creditdata-mock-client"),
            ("client_secret", "creditdata-mock-secret"),
        ])
        .send()
        .await
        .expect("token")
        .json()
        .await
        .expect("token json");
    let token = token_response["access_token"]
        .as_str()
        .expect("access_token")
        .to_owned();
    let created: Value = http
        .post(format!("{}/v1/sessions", mock.base))
        .bearer_auth(&token)
        .json(&serde_json::json!({
            "subjectEmail": "bench@example.com",
            "queryParameters": [{ "countryCode": "FIN", "dataPackages": ["CREDIT_HISTORY", "SCORE", "BANK_ACCOUNT_CATEGORIZATION", "IDENTIFICATION"] }],
        }))
        .send()
        .await
        .expect("create")
        .json()
        .await
        .expect("session");
    let id = created["id"].as_str().expect("id").to_owned();
    http.post(format!("{}/_mock/sessions/{id}/complete", mock.base))
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("complete");
    let paths: Vec<String> = [
        format!("/v1/sessions/{id}"),
        "/v1/sessions?Take=20".to_owned(),
        format!("/v1/sessions/{id}/person-details"),
        format!("/v1/sessions/{id}/scores"),
        format!("/v1/sessions/{id}/negative-tradelines"),
        "/v1/consumer/packages".to_owned(),
    ]
    .to_vec();

    let prism = if std::env::var_os("BENCH_SKIP_PRISM").is_some() {
        None
    } else {
        start_prism(&root, &http, &token).await
    };

    println!(
        "\nvs_prism: {concurrency} connections, {seconds} s per server after 2 s warm-up, endpoints:"
    );
    for path in &paths {
        println!("  GET {}", path.replace(&id, "{sessionId}"));
    }
    println!("\n| server | requests | non-2xx | req/s | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut servers: Vec<&Server> = vec![&mock];
    if let Some(prism) = &prism {
        servers.push(prism);
    }
    for server in servers {
        load(&server.base, &token, &paths, concurrency, 2).await;
        let outcome = load(&server.base, &token, &paths, concurrency, seconds).await;
        println!(
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} |",
            server.name,
            outcome.requests,
            outcome.failures,
            outcome.requests as f64 / outcome.seconds,
            percentile(&outcome.latencies, 0.5),
            percentile(&outcome.latencies, 0.99),
        );
    }
    if prism.is_none() {
        println!(
            "(Prism not measured: set PRISM to its executable, or install @stoplight/prism-cli@{PRISM_VERSION})"
        );
    }
    drop(prism);
    drop(mock);
}
