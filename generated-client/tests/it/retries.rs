//! Retries that are safe: idempotent operations retry on 408/429/502/503/504, timeouts and
//! connection failures, honouring `Retry-After`; POST and PATCH only when the request never
//! reached the server.

use std::time::Duration;

use crate::support::*;
use creditdata_client::retry::RetryPolicy;
use creditdata_client::{Client, Error};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// Answers `status` (with `retry_after`, if any) to the first `times` GETs of the session,
/// then the session.
async fn flaky_session(server: &MockServer, status: u16, retry_after: Option<&str>, times: u64) {
    let mut failure = ResponseTemplate::new(status);
    if let Some(value) = retry_after {
        failure = failure.insert_header("retry-after", value);
    }
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(failure)
        .up_to_n_times(times)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .with_priority(2)
        .mount(server)
        .await;
}

/// A server that answers `http_method` on `request_path` with `status` and the session only after
/// three seconds, and a client of it that gives each attempt 200 ms and makes at most
/// `max_attempts`.
async fn slow_server_and_impatient_client(
    http_method: &str,
    request_path: &str,
    status: u16,
    max_attempts: u32,
) -> (MockServer, Client) {
    let server = MockServer::start().await;
    Mock::given(method(http_method))
        .and(path(request_path))
        .respond_with(
            ResponseTemplate::new(status)
                .set_body_json(session_json(session_id()))
                .set_delay(Duration::from_secs(3)),
        )
        .mount(&server)
        .await;
    let client = builder(&server)
        .retry_policy(fast_retries(max_attempts))
        .request_timeout(Some(Duration::from_millis(200)))
        .build()
        .unwrap();
    (server, client)
}

#[tokio::test]
async fn a_get_answered_503_then_200_is_retried() {
    let server = MockServer::start().await;
    flaky_session(&server, 503, None, 1).await;
    let client = builder(&server).build().unwrap();
    let session = crate::support::session(&client).await;
    assert_eq!(session.id, session_id());
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 2);
}

#[tokio::test]
async fn every_transient_status_is_retried_for_a_get() {
    for status in [408, 429, 502, 503, 504] {
        let server = MockServer::start().await;
        flaky_session(&server, status, None, 2).await;
        let client = builder(&server).build().unwrap();
        crate::support::session(&client).await;
        assert_eq!(
            count(&server, "GET", &session_path(session_id())).await,
            3,
            "{status}"
        );
    }
}

#[tokio::test]
async fn other_error_statuses_are_not_retried() {
    for status in [400, 403, 404, 409, 500] {
        let server = MockServer::start().await;
        flaky_session(&server, status, None, 5).await;
        let client = builder(&server).build().unwrap();
        let error = session_error(&client).await;
        assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
        assert_eq!(
            count(&server, "GET", &session_path(session_id())).await,
            1,
            "{status}"
        );
    }
}

#[tokio::test]
async fn attempts_are_bounded_by_the_policy() {
    let server = MockServer::start().await;
    flaky_session(&server, 503, None, 100).await;
    let client = builder(&server)
        .retry_policy(fast_retries(4))
        .build()
        .unwrap();
    let error = session_error(&client).await;
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert!(error.is_transient());
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 4);
}

#[tokio::test]
async fn retries_can_be_switched_off() {
    let server = MockServer::start().await;
    flaky_session(&server, 503, None, 1).await;
    let client = builder(&server).no_retries().build().unwrap();
    let error = session_error(&client).await;
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 1);
}

#[tokio::test]
async fn create_session_answered_503_is_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .with_priority(2)
        .mount(&server)
        .await;
    let client = builder(&server)
        .retry_policy(fast_retries(5))
        .build()
        .unwrap();
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(error.operation(), Some("CreateSession"));
    // The service saw the request (it may have e-mailed the consumer): never sent twice.
    assert_eq!(count(&server, "POST", "/v1/sessions").await, 1);
}

#[tokio::test]
async fn the_other_post_and_patch_actions_are_not_retried_after_a_response() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(502))
        .mount(&server)
        .await;
    let client = builder(&server)
        .retry_policy(fast_retries(5))
        .build()
        .unwrap();
    let id = session_id();
    let update: creditdata_client::types::UpdateSessionRequest = serde_json::from_value(
        serde_json::json!({"queryParameters": [{"countryCode": "DEU", "dataPackages": ["SCORE"]}]}),
    )
    .unwrap();
    let results = [
        client
            .update_session()
            .session_id(id)
            .body(update)
            .call()
            .await
            .map(drop),
        client
            .extend_customer_input_deadline()
            .session_id(id)
            .call()
            .await
            .map(drop),
        client
            .resend_customer_notification()
            .session_id(id)
            .call()
            .await
            .map(drop),
    ];
    for result in results {
        assert_eq!(result.unwrap_err().status().map(|s| s.as_u16()), Some(502));
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_post_that_timed_out_after_reaching_the_server_is_not_repeated() {
    let (server, client) = slow_server_and_impatient_client("POST", "/v1/sessions", 201, 5).await;
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::Timeout { attempts: 1, .. }),
        "{error:?}"
    );
    assert_eq!(count(&server, "POST", "/v1/sessions").await, 1);
}

#[tokio::test]
async fn a_get_that_timed_out_is_retried() {
    let (_server, client) =
        slow_server_and_impatient_client("GET", &session_path(session_id()), 200, 3).await;
    let error = session_error(&client).await;
    assert!(
        matches!(error, Error::Timeout { attempts: 3, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("after 3 attempts"), "{error}");
}

#[tokio::test]
async fn a_post_whose_connection_failed_is_retried_per_policy() {
    // A port where nothing listens: the connection is refused, the request never left.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = Client::builder()
        .base_url(format!("http://127.0.0.1:{port}"))
        .retry_policy(fast_retries(3))
        .build()
        .unwrap();
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::Transport { attempts: 3, .. }),
        "{error:?}"
    );
    assert_eq!(error.attempts(), Some(3));
    let message = error.to_string();
    assert!(
        message.starts_with("CreateSession: the connection to the service failed after 3 attempts"),
        "{message}"
    );
}

#[tokio::test]
async fn a_post_reaches_a_server_that_starts_listening_after_the_first_attempt() {
    // Reserve a port, free it, and start listening on it only after the first attempt failed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::builder()
        .base_url(format!("http://{address}"))
        .retry_policy(RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(300),
            max_backoff: Duration::from_millis(300),
            max_elapsed: Duration::from_secs(30),
        })
        .build()
        .unwrap();
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=debug",
    ));
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.create_session().body(create_request()).call().await }
    });
    // Wait (without a deadline) until the first attempt has failed, then start the server.
    while !captured.text().contains("retrying") {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let server = MockServer::start_from(
        wiremock::MockServer::builder().listener(std::net::TcpListener::bind(address).unwrap()),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    let session = call.await.unwrap().unwrap();
    assert_eq!(session.id, session_id());
    assert_eq!(count(&server, "POST", "/v1/sessions").await, 1);
}

/// The delays (ms) the client decided on before its retries, from its `DEBUG` events.
fn retry_delays(captured: &Captured) -> Vec<u64> {
    captured
        .text()
        .lines()
        .filter(|line| line.contains("retrying"))
        .filter_map(|line| {
            let after = line.split("delay_ms=").nth(1)?;
            after
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .collect()
}

#[tokio::test]
async fn retry_after_in_seconds_is_honoured() {
    let server = MockServer::start().await;
    flaky_session(&server, 503, Some("1"), 1).await;
    let client = builder(&server).build().unwrap();
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=debug",
    ));
    crate::support::session(&client).await;
    // The backoff alone would be at most 2 ms (`fast_retries`); the server asked for 1 s.
    assert_eq!(retry_delays(&captured), [1000]);
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 2);
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_honoured() {
    let server = MockServer::start().await;
    let when = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    flaky_session(&server, 429, Some(&when), 1).await;
    let client = builder(&server).build().unwrap();
    let captured = Captured::default();
    let _guard = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=debug",
    ));
    crate::support::session(&client).await;
    let delays = retry_delays(&captured);
    // HTTP dates have whole seconds: "in 2 s" reads as a wait of at most 2 s, less the time the
    // 429 took to arrive (which a loaded machine can stretch). The backoff it replaces would be
    // at most 2 ms, so anything from a tenth of a second up shows the date was honoured.
    assert!(
        delays.len() == 1 && (100..=2000).contains(&delays[0]),
        "{delays:?}"
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_longest_wait_ends_retrying_at_once() {
    let server = MockServer::start().await;
    flaky_session(&server, 503, Some("120"), 1).await;
    let client = builder(&server).build().unwrap();
    let error = session_error(&client).await;
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 1);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(120)));
    assert!(error.is_transient());
    assert!(error.to_string().contains("retry after 120 s"), "{error}");
}
