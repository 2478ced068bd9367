//! The generated client against a hand-written `reqwest` + `serde` call of the same operation
//! (`GET /v1/sessions/{sessionId}`), in one run, against the same loopback server, at 1, 16 and
//! 64 concurrent calls.
//!
//! ```text
//! cargo bench -p creditdata-client --bench client_overhead
//! ```
//!
//! Both sides use the same `reqwest` settings (user agent, connect and idle-read timeouts, a
//! 30 s per-request timeout, a bearer token) and decode into the same generated
//! `types::Session`. The generated side adds what the runtime does on every call: the
//! operation's span, the retry loop, the token header, reading the body inside the attempt (the
//! runtime's one door, `runtime::send`) and the error capture. The server is a minimal HTTP/1.1 responder on its own thread, so that the
//! client's cost dominates; the clients share one current-thread runtime. Each iteration runs
//! `N` calls concurrently and waits for all of them; criterion reports time per iteration and,
//! through `Throughput::Elements(N)`, calls per second. After criterion, a paired measure
//! alternates the two sides in short rounds and prints the median ratio (robust against load
//! from other processes, which criterion's one-after-the-other measurement is not).

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use creditdata_client::{Client, types};
use criterion::{BenchmarkId, Criterion, Throughput};
use futures::future::join_all;
use reqwest::header::ACCEPT;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

const TOKEN: &str = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl";
const USER_AGENT: &str = "creditdata-bench/1";
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn session_id() -> Uuid {
    Uuid::parse_str("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e").unwrap()
}

/// A Session as the service returns it (about 700 bytes).
fn session_body() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "id": session_id(),
        "createdAtUtc": "2026-03-04T09:15:27.123+00:00",
        "createdByName": "Integration User",
        "organizationalUnitName": "Retail Lending",
        "subjectEmail": "jane.doe@example.com",
        "subjectFullName": "Jane Doe",
        "customerInputDeadlineUtc": "2026-03-11T09:15:27.123+00:00",
        "customerProgressStatus": "COMPLETED_BY_CUSTOMER",
        "queryParameters": [
            { "countryCode": "GBR", "dataPackages": ["CREDIT_HISTORY", "SCORE", "BANK_ACCOUNT_CATEGORIZATION", "IDENTIFICATION"] },
            { "countryCode": "DEU", "dataPackages": ["CREDIT_HISTORY", "SCORE"] }
        ],
        "customerInputDeadlineExtendableUntilUtc": "2026-03-25T09:15:27.123+00:00",
        "dataPackageUpgradableUntilUtc": null
    }))
    .unwrap()
}

/// Starts a keep-alive HTTP/1.1 server on its own thread that answers every request with the
/// session. Returns its address.
fn start_server() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    let body = session_body();
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(&body);
    let response: &'static [u8] = response.leak();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let _ = socket.set_nodelay(true);
                tokio::spawn(serve(socket, response));
            }
        });
    });
    address
}

/// Answers each request on the connection (requests without bodies; pipelining tolerated).
async fn serve(mut socket: tokio::net::TcpStream, response: &'static [u8]) {
    let mut buffer = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        while let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            buffer.drain(..end + 4);
            if socket.write_all(response).await.is_err() {
                return;
            }
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// The hand-written call: what a careful user writes without the generated client, given what
/// the generated call is given (the service's base URL and the session's id).
async fn hand_written(
    http: &reqwest::Client,
    base: &str,
    session_id: Uuid,
) -> reqwest::Result<types::Session> {
    hand_written_to(http, format!("{base}/v1/sessions/{session_id}")).await
}

/// The same call to a URL built beforehand: reqwest and serde alone, no URL to build (the
/// baseline of the earlier measurements, kept for comparison).
async fn hand_written_to(
    http: &reqwest::Client,
    url: impl reqwest::IntoUrl,
) -> reqwest::Result<types::Session> {
    http.get(url)
        .header(ACCEPT, "application/json")
        .header("api-version", "1.0")
        .bearer_auth(TOKEN)
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await?
        .error_for_status()?
        .json::<types::Session>()
        .await
}

/// The server, the two clients and the runtime they run on, shared by both measurements.
struct Setup {
    runtime: tokio::runtime::Runtime,
    generated: Client,
    http: reqwest::Client,
    base: String,
    /// Parsed once: both sides are given a `Uuid`, as a caller holding a session has one.
    session_id: Uuid,
}

impl Setup {
    fn new() -> Setup {
        let address = start_server();
        let base = format!("http://{address}");
        // One thread for the client (the server has its own): fewer cross-thread wake-ups, so
        // less noise, and the same for both sides.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // `OVERHEAD_TELEMETRY=sdk`: the OpenTelemetry SDK's providers are set before the client
        // is built, as an application sets them (BENCHMARKS.md, "Telemetry").
        if std::env::var("OVERHEAD_TELEMETRY").as_deref() == Ok("sdk") {
            install_sdk_providers();
        }
        // The same reqwest settings on both sides (the builder's defaults made explicit).
        let generated = Client::builder()
            .base_url(&base)
            .bearer_token(TOKEN)
            .user_agent(USER_AGENT)
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(Duration::from_secs(60))
            .request_timeout(Some(REQUEST_TIMEOUT))
            .build()
            .unwrap();
        let setup = Setup {
            runtime,
            generated,
            http: http_client(),
            base,
            session_id: session_id(),
        };
        // Both work and agree before anything is measured.
        setup.runtime.block_on(async {
            let a = setup.generated_calls(1).await;
            let b = setup.hand_written_calls(1).await;
            assert_eq!(a, b);
        });
        setup
    }

    async fn hand_written_calls(&self, n: usize) -> Vec<types::Session> {
        let calls = (0..n).map(|_| hand_written(&self.http, &self.base, self.session_id));
        join_all(calls)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect()
    }

    async fn generated_calls(&self, n: usize) -> Vec<types::Session> {
        let calls = (0..n).map(|_| {
            self.generated
                .get_session()
                .session_id(self.session_id)
                .call()
        });
        join_all(calls)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect()
    }
}

const CONCURRENCY: [usize; 3] = [1, 16, 64];

fn overhead(c: &mut Criterion, setup: &Setup) {
    for concurrency in CONCURRENCY {
        let mut group = c.benchmark_group(format!("get_session/concurrency_{concurrency}"));
        group.throughput(Throughput::Elements(concurrency as u64));
        group.bench_function(BenchmarkId::from_parameter("handwritten"), |b| {
            b.to_async(&setup.runtime)
                .iter(|| async { black_box(setup.hand_written_calls(concurrency).await) })
        });
        group.bench_function(BenchmarkId::from_parameter("generated"), |b| {
            b.to_async(&setup.runtime)
                .iter(|| async { black_box(setup.generated_calls(concurrency).await) })
        });
        group.finish();
    }
}

/// Criterion measures the two sides one after the other, so load from other processes can
/// favour either. This second measure alternates them in short rounds (about 4000 calls each)
/// and reports the median of the per-round ratios, which such load barely moves.
fn paired_ratios(setup: &Setup) {
    const ROUNDS: usize = 60;
    println!("\npaired rounds (generated / hand-written, median of {ROUNDS} alternating rounds):");
    println!(
        "{:>11} {:>16} {:>16} {:>8} {:>15}",
        "concurrency", "hand-written", "generated", "ratio", "(q1 .. q3)"
    );
    for concurrency in CONCURRENCY {
        let batches = (4000 / concurrency).max(1);
        let mut hand = Vec::with_capacity(ROUNDS);
        let mut generated = Vec::with_capacity(ROUNDS);
        setup.runtime.block_on(async {
            for _ in 0..ROUNDS {
                let started = Instant::now();
                for _ in 0..batches {
                    black_box(setup.hand_written_calls(concurrency).await);
                }
                hand.push(started.elapsed().as_secs_f64());
                let started = Instant::now();
                for _ in 0..batches {
                    black_box(setup.generated_calls(concurrency).await);
                }
                generated.push(started.elapsed().as_secs_f64());
            }
        });
        let calls = (batches * concurrency) as f64;
        let mut ratios: Vec<f64> = generated.iter().zip(&hand).map(|(g, h)| g / h).collect();
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let hand_us = median(&mut hand) / calls * 1e6;
        let generated_us = median(&mut generated) / calls * 1e6;
        let ratio = median(&mut ratios);
        println!(
            "{concurrency:>11} {hand_us:>10.2} µs/call {generated_us:>10.2} µs/call {ratio:>8.3} ({:.3} .. {:.3})",
            ratios[ROUNDS / 4],
            ratios[3 * ROUNDS / 4]
        );
    }
}

/// Instruction counts: `OVERHEAD_INSTRUCTIONS=generated|handwritten|handwritten-prebuilt-url
/// OVERHEAD_CALLS=N` makes `N` sequential calls of one side and exits, for `valgrind --tool=callgrind
/// --separate-threads=yes` (the calls run on the main thread, the server on its own). Two runs
/// with different `N` give the instructions per call without the setup (BENCHMARKS.md).
fn instructions_only(side: &str, setup: &Setup) {
    let calls: usize = std::env::var("OVERHEAD_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1000);
    let url = format!("{}/v1/sessions/{}", setup.base, setup.session_id);
    setup.runtime.block_on(async {
        // Each call awaited as it is, without `join_all`: one call's cost, not that of moving
        // its future into a `MaybeDone` (which grows with the future's size).
        for _ in 0..calls {
            match side {
                "generated" => {
                    black_box(
                        setup
                            .generated
                            .get_session()
                            .session_id(setup.session_id)
                            .call()
                            .await
                            .unwrap(),
                    );
                }
                "handwritten" => {
                    black_box(
                        hand_written(&setup.http, &setup.base, setup.session_id)
                            .await
                            .unwrap(),
                    );
                }
                "handwritten-prebuilt-url" => {
                    black_box(hand_written_to(&setup.http, url.as_str()).await.unwrap());
                }
                other => panic!(
                    "OVERHEAD_INSTRUCTIONS={other:?}: generated, handwritten or \
                     handwritten-prebuilt-url"
                ),
            }
        }
    });
}

/// The SDK's tracer provider (every span sampled, exported to memory as it ends: the whole cost
/// on the calling thread), meter provider (a periodic reader whose export runs on its own
/// thread) and the W3C propagator, as global providers.
fn install_sdk_providers() {
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(InMemorySpanExporter::default())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    opentelemetry::global::set_tracer_provider(tracer_provider);
    opentelemetry::global::set_meter_provider(meter_provider);
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
}

fn main() {
    let setup = Setup::new();
    if let Ok(side) = std::env::var("OVERHEAD_INSTRUCTIONS") {
        instructions_only(&side, &setup);
        return;
    }
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5))
        .sample_size(50)
        .configure_from_args();
    overhead(&mut criterion, &setup);
    criterion.final_summary();
    // Only under `cargo bench` (which passes `--bench`), not in `cargo test --benches`.
    if std::env::args().any(|a| a == "--bench") {
        paired_ratios(&setup);
    }
}
