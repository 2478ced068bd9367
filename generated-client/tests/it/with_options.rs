//! `client.with_options(options)`: the calls a client makes on its own (every poll of a wait,
//! every read of the data wait, the reads by metadata) carry the per-call options, against
//! loopback `wiremock` servers.

use std::time::Duration;

use creditdata_client::call_options::CallOptions;
use creditdata_client::retry::RetryPolicy;
use creditdata_client::types::CustomerProgressStatus;
use creditdata_client::wait::WaitOptions;
use creditdata_client::{Client, Error};
use serde_json::json;
use wiremock::matchers::{any, method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

fn client(server: &MockServer) -> Client {
    builder(server)
        .bearer_token("t")
        .retry_policy(fast_retries(3))
        .build()
        .unwrap()
}

fn traced() -> CallOptions {
    CallOptions::new()
        .header("X-Correlation-Id", "loan-4711")
        .unwrap()
}

fn quick() -> WaitOptions {
    WaitOptions::default()
        .timeout(Duration::from_secs(30))
        .initial_interval(Duration::from_millis(5))
        .max_interval(Duration::from_millis(20))
}

fn session_in(status: &str) -> serde_json::Value {
    let mut session = session_json(session_id());
    session["customerProgressStatus"] = json!(status);
    session
}

async fn mount_session(server: &MockServer, status: &str, times: Option<u64>) {
    let mock = Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_in(status)));
    match times {
        Some(n) => mock.up_to_n_times(n).with_priority(1).mount(server).await,
        None => mock.with_priority(2).mount(server).await,
    }
}

/// Every request `server` received, each with what it said of the correlation header.
async fn correlation(server: &MockServer) -> Vec<(String, Option<String>)> {
    let seen: Vec<Request> = server.received_requests().await.unwrap_or_default();
    seen.iter()
        .map(|request| {
            let value = request
                .headers
                .get("x-correlation-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            (request.url.path().to_string(), value)
        })
        .collect()
}

fn all_carry_it(seen: &[(String, Option<String>)]) {
    assert!(!seen.is_empty());
    for (path, value) in seen {
        assert_eq!(value.as_deref(), Some("loan-4711"), "{path}");
    }
}

#[test]
fn debug_shows_the_header_names_not_their_values() {
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .bearer_token("token-secret")
        .build()
        .unwrap();
    let options = CallOptions::new()
        .header("X-Api-Key", "key-secret")
        .unwrap();
    let shown = format!("{:?}", client.with_options(options));
    assert!(shown.contains("x-api-key"), "{shown}");
    for secret in ["key-secret", "token-secret"] {
        assert!(!shown.contains(secret), "{shown}");
    }
}

#[tokio::test]
async fn every_poll_of_the_customer_wait_carries_the_options() {
    let server = MockServer::start().await;
    mount_session(&server, "WAITING_FOR_CUSTOMER", Some(2)).await;
    mount_session(&server, "COMPLETED_BY_CUSTOMER", None).await;
    let client = client(&server);

    let session = client
        .with_options(traced())
        .wait_for_customer(session_id(), quick())
        .await
        .unwrap();
    assert_eq!(
        session.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
    let seen = correlation(&server).await;
    assert_eq!(seen.len(), 3, "{seen:?}");
    all_carry_it(&seen);

    // The client's own wait is unchanged: no header.
    server.reset().await;
    mount_session(&server, "COMPLETED_BY_CUSTOMER", None).await;
    client
        .wait_for_customer(session_id(), quick())
        .await
        .unwrap();
    let seen = correlation(&server).await;
    assert_eq!(seen, [(session_path(session_id()), None)]);
}

/// The options' retry policy replaces the client's for each poll: against a session that
/// answers 503, a wait of two polls (one at its start, one at its deadline) sends one request
/// per poll with retries disabled, where the client's own policy (three attempts) sends three.
#[tokio::test]
async fn the_options_retry_policy_applies_to_each_poll() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let client = client(&server);
    let two_polls = WaitOptions::default()
        .timeout(Duration::from_millis(300))
        .initial_interval(Duration::from_secs(10));

    let error = client
        .with_options(traced().retry(RetryPolicy::disabled()))
        .wait_for_customer(session_id(), two_polls)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Api(api) if api.status == 503),
        "{error:?}"
    );
    // One request a poll (a loaded machine may make the first poll the last: one request).
    let seen = correlation(&server).await;
    assert!(matches!(seen.len(), 1 | 2), "one request a poll: {seen:?}");
    all_carry_it(&seen);

    server.reset().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    client
        .wait_for_customer(session_id(), two_polls)
        .await
        .unwrap_err();
    let requests = correlation(&server).await.len();
    assert!(
        requests >= 3 && requests % 3 == 0,
        "the client's three attempts a poll: {requests}"
    );
}

/// A call's timeout from the options still ends a poll that never answers, well before the
/// wait's own deadline; the wait's deadline then ends the wait.
#[tokio::test]
async fn the_shorter_of_the_options_timeout_and_the_wait_bounds_each_poll() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(session_in("WAITING_FOR_CUSTOMER"))
                .set_delay(Duration::from_secs(600)),
        )
        .mount(&server)
        .await;
    let client = client(&server);
    let error = tokio::time::timeout(
        Duration::from_secs(60),
        client
            .with_options(traced().timeout(Duration::from_millis(200)))
            .wait_for_customer(session_id(), quick().timeout(Duration::from_secs(2))),
    )
    .await
    .expect("the wait ends by its deadline")
    .unwrap_err();
    assert!(matches!(error, Error::DeadlineExceeded { .. }), "{error:?}");
    // Each poll ended after its own 200 ms, so the wait polled more than once in 2 s.
    let seen = correlation(&server).await;
    assert!(seen.len() > 1, "{seen:?}");
    all_carry_it(&seen);
}

#[cfg(feature = "session-datasets")]
#[tokio::test]
async fn every_poll_and_read_of_the_data_wait_carries_the_options() {
    use creditdata_client::session_datasets::Dataset;
    let server = MockServer::start().await;
    mount_session(&server, "COMPLETED_BY_CUSTOMER", None).await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .with_priority(3)
        .mount(&server)
        .await;
    let client = client(&server);
    let _ = client
        .with_options(traced())
        .wait_for_data(session_id(), quick())
        .await;
    let seen = correlation(&server).await;
    all_carry_it(&seen);
    let read: std::collections::BTreeSet<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
    assert!(read.contains(session_path(session_id()).as_str()));
    for dataset in Dataset::ALL.into_iter().filter(|d| !d.deprecated()) {
        let path = dataset
            .operation()
            .path
            .replace("{sessionId}", &session_id().to_string());
        assert!(read.contains(path.as_str()), "{path} was read: {read:?}");
    }
}

#[cfg(feature = "session-datasets")]
#[tokio::test]
async fn the_reads_by_metadata_carry_the_options() {
    use creditdata_client::operation::Operation;
    use creditdata_client::session_datasets::Dataset;
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    let client = client(&server);
    let id = session_id().to_string();
    let with = client.with_options(traced());
    with.session_dataset_stream(session_id(), Dataset::Scores)
        .await
        .unwrap();
    let scores = Dataset::Scores.operation();
    with.json_answer_stream(scores, &[&id]).await.unwrap();
    let session = creditdata_client::builder::GetSession::META;
    with.operation_stream(session, &[&id]).await.unwrap();
    let seen = correlation(&server).await;
    assert_eq!(seen.len(), 3, "{seen:?}");
    all_carry_it(&seen);

    // Without: none.
    server.reset().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    client
        .session_dataset_stream(session_id(), Dataset::Scores)
        .await
        .unwrap();
    let seen = correlation(&server).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, None);
}
