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
//! operation's span, the retry loop, the token header, reading the body inside the hook and the
//! error capture. The server is a minimal HTTP/1.1 responder on its own thread, so that the
//! client's cost dominates. Each iteration runs `N` calls concurrently and waits for all of
//! them; criterion reports time per iteration and, through `Throughput::Elements(N)`, calls per
//! second.

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::Duration;

use creditdata_client::{Client, types};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
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

/// The hand-written call: what a careful user writes without the generated client.
async fn hand_written(http: &reqwest::Client, url: &str) -> reqwest::Result<types::Session> {
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

fn overhead(c: &mut Criterion) {
    let address = start_server();
    let base = format!("http://{address}");
    let url = format!("{base}/v1/sessions/{}", session_id());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
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
    let http = http_client();

    // Both work before measuring (and warm the connection pools).
    runtime.block_on(async {
        let a = generated.get_session().session_id(session_id()).send().await.unwrap();
        let b = hand_written(&http, &url).await.unwrap();
        assert_eq!(a.into_inner(), b);
    });

    for concurrency in [1usize, 16, 64] {
        let mut group = c.benchmark_group(format!("get_session/concurrency_{concurrency}"));
        group.throughput(Throughput::Elements(concurrency as u64));
        group.bench_function(BenchmarkId::from_parameter("handwritten"), |b| {
            b.to_async(&runtime).iter(|| async {
                let calls = (0..concurrency).map(|_| hand_written(&http, &url));
                for session in join_all(calls).await {
                    black_box(session.unwrap());
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("generated"), |b| {
            b.to_async(&runtime).iter(|| async {
                let calls = (0..concurrency)
                    .map(|_| generated.get_session().session_id(session_id()).send());
                for session in join_all(calls).await {
                    black_box(session.unwrap().into_inner());
                }
            })
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6))
        .sample_size(60);
    targets = overhead
}
criterion_main!(benches);
