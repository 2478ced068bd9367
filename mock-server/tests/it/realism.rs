//! Issue 10, item 1: a realistic mock. Latency, the service's rate limit and faults, all off
//! by default; behaviour only, never how long anything took.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Harness, quick_config};
use creditdata_mock::auth::{Claims, SigningKey};
use creditdata_mock::realism::{Fault, Faults, Latency, RateLimit, Realism, SlowBodyPace};
use creditdata_mock::{MockConfig, MockServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const PACKAGES: &str = "/v1/consumer/packages";
const FAULT_HEADER: &str = "x-creditdata-mock-fault";

fn with_realism(realism: Realism) -> MockConfig {
    MockConfig {
        realism,
        ..quick_config()
    }
}

async fn realism_report(harness: &Harness) -> Value {
    let response = harness
        .anonymous
        .get(harness.url("/_mock/realism"))
        .send()
        .await
        .expect("report");
    assert_eq!(response.status(), 200);
    response.json().await.expect("json")
}

/// What a client saw of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// No response at all (the connection failed first).
    NoResponse,
    /// A status, the injected fault it names (if any), and whether the whole body arrived.
    Answered {
        status: u16,
        fault: Option<String>,
        body: Result<Vec<u8>, ()>,
    },
}

async fn outcome(request: reqwest::RequestBuilder) -> Outcome {
    let Ok(response) = request.send().await else {
        return Outcome::NoResponse;
    };
    let status = response.status().as_u16();
    let fault = response
        .headers()
        .get(FAULT_HEADER)
        .map(|value| value.to_str().expect("text").to_owned());
    let body = response.bytes().await.map(|b| b.to_vec()).map_err(|_| ());
    Outcome::Answered {
        status,
        fault,
        body,
    }
}

#[tokio::test]
async fn realism_is_off_by_default() {
    assert_eq!(MockConfig::default().realism, Realism::default());
    assert!(!MockConfig::default().realism.is_enabled());
    let harness = Harness::start().await;
    // Far beyond any limit, and enough draws that a 1 % fault would show.
    for _ in 0..300 {
        let response = harness.get(PACKAGES).await;
        assert_eq!(response.status(), 200);
        assert!(response.headers().get(FAULT_HEADER).is_none());
        response.bytes().await.expect("whole body");
    }
    for _ in 0..50 {
        let response = harness
            .anonymous
            .get(harness.url(PACKAGES))
            .send()
            .await
            .expect("answer");
        assert_eq!(
            response.status(),
            401,
            "refused for its token, never limited"
        );
    }
    let report = realism_report(&harness).await;
    assert_eq!(report["enabled"], false);
    assert_eq!(report["summary"], "off");
    for part in ["latency", "rateLimit", "faults"] {
        assert!(report[part].is_null(), "{part}: {report}");
    }
}

#[tokio::test]
async fn the_rate_limit_answers_429_with_retry_after_and_admits_again() {
    let harness = Harness::with(with_realism(
        Realism::new().rate_limit(RateLimit::per_second(2)),
    ))
    .await;
    for _ in 0..2 {
        assert_eq!(harness.get(PACKAGES).await.status(), 200);
    }
    let refused = harness.get(PACKAGES).await;
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("whole seconds");
    // The bucket refills one request every 500 ms: the next is at most a second away.
    assert_eq!(retry_after, 1);
    assert_eq!(refused.headers()["content-type"], "application/json");
    assert!(
        refused.headers().get(FAULT_HEADER).is_none(),
        "a real refusal"
    );
    let problem: Value = refused.json().await.expect("problem details");
    assert_eq!(problem["status"], 429);
    assert_eq!(problem["title"], "Too Many Requests");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("retry after 1 s") && d.contains("2/s")),
        "{problem}"
    );
    // Waiting what Retry-After says is enough.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    assert_eq!(harness.get(PACKAGES).await.status(), 200);
    let report = realism_report(&harness).await;
    assert_eq!(report["rateLimit"]["limit"], "2/s (burst 2)");
    assert_eq!(report["rateLimit"]["admitted"], 3);
    assert_eq!(report["rateLimit"]["refused"], 1);
    // Neither the identity provider nor the control endpoints are limited.
    for _ in 0..5 {
        common::fetch_token(&harness.anonymous, &harness.mock).await;
        realism_report(&harness).await;
    }
}

#[tokio::test]
async fn per_minute_limits_say_how_long_to_wait() {
    let harness = Harness::with(with_realism(
        Realism::new().rate_limit("3/min".parse().expect("rate")),
    ))
    .await;
    for _ in 0..3 {
        assert_eq!(harness.get(PACKAGES).await.status(), 200);
    }
    let refused = harness.get(PACKAGES).await;
    assert_eq!(refused.status(), 429);
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .expect("text")
        .parse()
        .expect("whole seconds");
    // One request every 20 s; the first of the three was sent moments ago.
    assert!((1..=20).contains(&retry_after), "{retry_after}");
}

/// A token for another API client, signed with the mock's key (what its token endpoint would
/// issue to a second registered client).
fn token_for(client_id: &str, key_pem: &str, kid: &str, mock: &MockServer) -> String {
    let now = chrono::Utc::now().timestamp();
    let claims = Claims {
        exp: now + 300,
        iat: now,
        jti: uuid::Uuid::new_v4().to_string(),
        iss: mock.issuer().to_owned(),
        aud: mock.config().audience.clone(),
        sub: uuid::Uuid::new_v4().to_string(),
        typ: "Bearer".into(),
        azp: client_id.to_owned(),
        scope: "openid".into(),
        preferred_username: format!("service-account-{client_id}"),
        client_id: Some(client_id.to_owned()),
        name: None,
        sid: None,
        auth_time: None,
    };
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    let key = jsonwebtoken::EncodingKey::from_ec_pem(key_pem.as_bytes()).expect("key");
    jsonwebtoken::encode(&header, &claims, &key).expect("signed")
}

#[tokio::test]
async fn the_rate_limit_is_per_client_and_per_address_without_a_valid_token() {
    let key = SigningKey::generate().expect("key");
    let harness = Harness::with(MockConfig {
        signing_key_pem: Some(key.pkcs8_pem().to_owned()),
        ..with_realism(Realism::new().rate_limit(RateLimit::per_minute(2)))
    })
    .await;
    let jwks: Value = harness
        .anonymous
        .get(format!(
            "{}/protocol/openid-connect/certs",
            harness.mock.issuer()
        ))
        .send()
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    let kid = jwks["keys"][0]["kid"].as_str().expect("kid");
    let partner = token_for("partner-client", key.pkcs8_pem(), kid, &harness.mock);
    let forger = SigningKey::generate().expect("another key");
    let forged = token_for("partner-client", forger.pkcs8_pem(), kid, &harness.mock);
    let as_partner = |token: &str| {
        harness
            .anonymous
            .get(harness.url(PACKAGES))
            .bearer_auth(token)
    };
    let status = |request: reqwest::RequestBuilder| async move {
        request.send().await.expect("answer").status().as_u16()
    };

    // The mock's own client uses up its two.
    assert_eq!(harness.get(PACKAGES).await.status(), 200);
    assert_eq!(harness.get(PACKAGES).await.status(), 200);
    assert_eq!(harness.get(PACKAGES).await.status(), 429);
    // Another client still has its own.
    assert_eq!(status(as_partner(&partner)).await, 200);
    // Requests without a token count against their address, apart from both clients.
    let anonymous = || harness.anonymous.get(harness.url(PACKAGES));
    assert_eq!(status(anonymous()).await, 401);
    assert_eq!(status(anonymous()).await, 401);
    assert_eq!(status(anonymous()).await, 429);
    // A token that does not verify cannot draw on the client it names: it counts against its
    // address (empty now), so it is refused for the limit, not let through to the token check.
    assert_eq!(status(as_partner(&forged)).await, 429);
    // The partner's second request is still there, and then its bucket is empty too.
    assert_eq!(status(as_partner(&partner)).await, 200);
    assert_eq!(status(as_partner(&partner)).await, 429);
}

/// Every kind of fault, at rates that make each occur in a few hundred requests.
fn every_fault() -> Faults {
    Faults::new()
        .with(Fault::TooManyRequests, 8.0)
        .with(Fault::InternalServerError, 8.0)
        .with(Fault::BadGateway, 8.0)
        .with(Fault::ServiceUnavailable, 8.0)
        .with(Fault::GatewayTimeout, 8.0)
        .with(Fault::Reset, 8.0)
        .with(Fault::SlowBody, 8.0)
        .with(Fault::Truncated, 8.0)
}

fn fast_trickle() -> SlowBodyPace {
    SlowBodyPace {
        chunk_bytes: 4096,
        every: Duration::from_millis(1),
    }
}

/// The outcomes of `count` requests to the packages route; with `interleave`, a search request
/// (another route) between each.
async fn run_sequence(seed: u64, count: usize, interleave: bool) -> Vec<Outcome> {
    let harness = Harness::with(with_realism(
        Realism::new()
            .faults(every_fault())
            .slow_body(fast_trickle())
            .seed(seed),
    ))
    .await;
    let mut outcomes = Vec::with_capacity(count);
    for _ in 0..count {
        outcomes.push(outcome(harness.http.get(harness.url(PACKAGES))).await);
        if interleave {
            outcome(harness.http.get(harness.url("/v1/sessions?Take=1"))).await;
        }
    }
    harness.mock.shutdown().await;
    outcomes
}

#[tokio::test]
async fn faults_repeat_for_a_seed_and_every_configured_kind_occurs() {
    let reference = {
        let harness = Harness::start().await;
        harness
            .get(PACKAGES)
            .await
            .bytes()
            .await
            .expect("body")
            .to_vec()
    };
    let first = run_sequence(11, 250, false).await;
    // The same seed and the same requests to this route give the same outcomes, whatever
    // other routes receive in between.
    assert_eq!(first, run_sequence(11, 250, true).await);
    assert_ne!(first, run_sequence(12, 250, false).await);

    let mut seen = std::collections::BTreeSet::new();
    for outcome in &first {
        match outcome {
            Outcome::NoResponse => {
                seen.insert("reset".to_owned());
            }
            Outcome::Answered {
                status,
                fault: None,
                body,
            } => {
                assert_eq!(*status, 200);
                assert_eq!(body.as_deref(), Ok(reference.as_slice()));
            }
            Outcome::Answered {
                status,
                fault: Some(fault),
                body,
            } => {
                seen.insert(fault.clone());
                match fault.as_str() {
                    "slow-body" => {
                        assert_eq!(*status, 200);
                        assert_eq!(
                            body.as_deref(),
                            Ok(reference.as_slice()),
                            "whole, only late"
                        );
                    }
                    "truncated" => {
                        assert_eq!(*status, 200);
                        assert!(body.is_err(), "the body breaks off");
                    }
                    code => {
                        assert_eq!(status.to_string(), code);
                        let problem: Value =
                            serde_json::from_slice(body.as_deref().expect("whole body"))
                                .expect("problem details");
                        assert_eq!(problem["status"], *status);
                        assert!(
                            problem["detail"]
                                .as_str()
                                .is_some_and(|d| d.contains("--faults")),
                            "{problem}"
                        );
                    }
                }
            }
        }
    }
    let kinds: Vec<String> = every_fault()
        .rates()
        .iter()
        .map(|(fault, _)| fault.name().to_owned())
        .collect();
    assert_eq!(seen, kinds.iter().cloned().collect(), "every kind occurred");
    assert!(
        first
            .iter()
            .any(|o| matches!(o, Outcome::Answered { fault: None, .. })),
        "most requests pass"
    );
}

#[tokio::test]
async fn fault_draws_follow_the_route_template_not_the_ids_in_the_path() {
    let statuses = || async {
        let harness = Harness::with(with_realism(
            Realism::new()
                .faults("503:50%".parse().expect("faults"))
                .seed(5),
        ))
        .await;
        let mut statuses = Vec::new();
        for _ in 0..40 {
            // A new (unknown) session each time: 404 unless a 503 is injected.
            let path = format!("/v1/sessions/{}/scores", uuid::Uuid::new_v4());
            statuses.push(harness.get(&path).await.status().as_u16());
        }
        statuses
    };
    let first = statuses().await;
    assert!(first.contains(&503) && first.contains(&404), "{first:?}");
    assert_eq!(first, statuses().await, "other ids, same route, same draws");
}

#[tokio::test]
async fn injected_429s_say_when_to_retry_and_the_report_counts_every_fault() {
    let harness = Harness::with(with_realism(
        Realism::new().faults(Faults::new().with(Fault::TooManyRequests, 100.0)),
    ))
    .await;
    for _ in 0..3 {
        let response = harness.get(PACKAGES).await;
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()["retry-after"], "1");
        assert_eq!(response.headers()[FAULT_HEADER], "429");
    }
    // Faults are for the API: the identity provider and control endpoints answer.
    common::fetch_token(&harness.anonymous, &harness.mock).await;
    let report = realism_report(&harness).await;
    assert_eq!(report["faults"]["rates"], "429:100%");
    assert_eq!(report["faults"]["requests"], 3);
    assert_eq!(report["faults"]["injected"]["429"], 3);
}

#[tokio::test]
async fn a_reset_closes_the_connection_without_any_response() {
    let harness = Harness::with(with_realism(
        Realism::new().faults("reset:100%".parse().expect("faults")),
    ))
    .await;
    let mut stream = tokio::net::TcpStream::connect(harness.mock.local_addr())
        .await
        .expect("connect");
    let request = format!(
        "GET {PACKAGES} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n",
        harness.mock.local_addr(),
        harness.token
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let error = stream
        .read_to_end(&mut answer)
        .await
        .expect_err("the connection is reset, not closed in order");
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
    assert!(answer.is_empty(), "{:?}", String::from_utf8_lossy(&answer));

    let error = harness
        .http
        .get(harness.url(PACKAGES))
        .send()
        .await
        .expect_err("no response");
    assert!(error.status().is_none());
    // The mock itself goes on serving.
    let report = realism_report(&harness).await;
    assert_eq!(report["faults"]["injected"]["reset"], 2);
}

#[tokio::test]
async fn a_truncated_body_stops_halfway_through_its_announced_length() {
    let harness = Harness::with(with_realism(
        Realism::new().faults("truncated:100%".parse().expect("faults")),
    ))
    .await;
    let mut response = harness.get(PACKAGES).await;
    assert_eq!(response.status(), 200);
    let announced: usize = response.headers()["content-length"]
        .to_str()
        .expect("text")
        .parse()
        .expect("length");
    let mut received = 0;
    let error = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => received += chunk.len(),
            Ok(None) => panic!("the body ended cleanly after {received} bytes"),
            Err(error) => break error,
        }
    };
    assert_eq!(received, announced / 2, "{error}");
}

#[tokio::test]
async fn latency_rules_choose_by_route_and_the_default_covers_only_the_api() {
    let harness = Harness::with(with_realism(
        Realism::new()
            .latency(Latency::fixed(Duration::from_millis(1)))
            .route_latency(
                "GET /v1/sessions/*/pdf-report".parse().expect("pattern"),
                "uniform:1ms..3ms".parse().expect("distribution"),
            )
            .route_latency(
                "POST /realms/*/protocol/openid-connect/token"
                    .parse()
                    .expect("pattern"),
                Latency::fixed(Duration::from_millis(1)),
            ),
    ))
    .await;
    // The harness took one token already.
    for _ in 0..3 {
        assert_eq!(harness.get(PACKAGES).await.status(), 200);
    }
    let unknown = uuid::Uuid::new_v4();
    let pdf = harness
        .get(&format!("/v1/sessions/{unknown}/pdf-report"))
        .await;
    assert_eq!(pdf.status(), 404, "answered as without latency");
    common::fetch_token(&harness.anonymous, &harness.mock).await;
    harness
        .anonymous
        .get(harness.url("/openapi/v1.json"))
        .send()
        .await
        .expect("document");
    let report = realism_report(&harness).await;
    let latency = &report["latency"];
    assert_eq!(latency["default"], "1ms");
    assert_eq!(latency["delayedByDefault"], 3, "{report}");
    assert_eq!(
        latency["routes"][0]["rule"],
        "GET /v1/sessions/*/pdf-report=uniform:1ms..3ms"
    );
    assert_eq!(latency["routes"][0]["delayed"], 1, "{report}");
    assert_eq!(latency["routes"][1]["delayed"], 2, "two tokens: {report}");
    assert!(report["rateLimit"].is_null() && report["faults"].is_null());
}

#[tokio::test]
async fn invalid_settings_are_refused_at_start() {
    for realism in [
        Realism::new().latency(Latency::uniform(
            Duration::from_secs(2),
            Duration::from_secs(1),
        )),
        Realism::new().latency(Latency::fixed(Duration::from_secs(3600))),
        Realism::new().rate_limit(RateLimit::per_second(0)),
        Realism::new().rate_limit(RateLimit::per_second(5).with_burst(0)),
        Realism::new().faults(
            Faults::new()
                .with(Fault::ServiceUnavailable, 70.0)
                .with(Fault::Reset, 40.0),
        ),
        Realism::new().faults(Faults::new().with(Fault::Reset, -1.0)),
        Realism::new().slow_body(SlowBodyPace {
            chunk_bytes: 0,
            every: Duration::from_millis(1),
        }),
    ] {
        let error = MockServer::start(with_realism(realism.clone()))
            .await
            .expect_err("refused");
        assert!(
            error.to_string().starts_with("realism."),
            "{realism:?}: {error}"
        );
    }
}

/// Runs the mock binary with `args` on a free port: `Ok` with its exit status and stderr when
/// it exits by itself, `Err` with its first line when it starts serving (it is then stopped).
fn run_mock_binary(args: &[&str]) -> Result<(Option<i32>, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mock binary runs");
    let stdout = child.stdout.take().expect("stdout");
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap_or_default();
        if line.contains("listening on") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(line);
        }
    }
    let output = child.wait_with_output().expect("wait");
    Ok((
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn the_command_line_refuses_bad_specs_with_usage_errors() {
    let cases: [(&[&str], &str); 10] = [
        (&["--latency", "50"], "50ms"),
        (&["--latency", "uniform:2s..1s"], "above the upper bound"),
        (&["--latency", "50ms", "--latency", "20ms"], "more than one"),
        (&["--latency", "GET v1=5ms"], "must start with `/`"),
        (&["--rate-limit", "20/day"], "N/s, N/min or N/h"),
        (&["--rate-limit-burst", "5"], "--rate-limit"),
        (
            &["--rate-limit", "2/s", "--rate-limit-burst", "0"],
            "--rate-limit-burst",
        ),
        (&["--faults", "503:1%,418:2%"], "the kinds are"),
        (&["--faults", "503:80%,reset:30%"], "more than 100%"),
        (&["--slow-body", "0/1ms"], "at least one byte"),
    ];
    for (args, says) in cases {
        match run_mock_binary(args) {
            Err(line) => panic!("{args:?}: the mock started anyway ({line})"),
            Ok((status, stderr)) => {
                assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
                assert_eq!(status, Some(2), "{args:?}: {stderr}");
                assert!(stderr.contains(says), "{args:?}: {stderr}");
            }
        }
    }
    // Good specs start.
    let started = run_mock_binary(&[
        "--latency",
        "lognormal:p50=80ms,p99=400ms",
        "--latency",
        "GET /v1/sessions/*/pdf-report=uniform:200ms..1s",
        "--rate-limit",
        "20/s",
        "--rate-limit-burst",
        "40",
        "--faults",
        "503:1%,reset:0.5%,slow-body:1%",
        "--seed",
        "42",
    ]);
    assert!(started.is_err(), "{started:?}");
}

#[test]
fn help_explains_the_syntax() {
    let output = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"))
        .arg("--help")
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "uniform:20ms..200ms",
        "lognormal:p50=80ms,p99=400ms",
        "GET /v1/sessions/*/pdf-report=uniform:200ms..1s",
        "20/s",
        "Retry-After",
        "503:1%,reset:0.5%,slow-body:1%",
        "slow-body",
        "truncated",
        "--seed",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}");
    }
}
