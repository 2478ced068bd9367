//! Waiting for the customer (`client.wait_for_customer`) against a loopback server.

use std::time::Duration;

use creditdata_client::types::CustomerProgressStatus;
use creditdata_client::wait::WaitOptions;
use creditdata_client::{Client, Error};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SESSION: Uuid = Uuid::from_u128(0x3a17);

fn client(server: &MockServer) -> Client {
    crate::support::plain_client(&server.uri())
}

fn session(status: &str) -> Value {
    creditdata_mock::as_described(
        "Session",
        json!({
            "id": SESSION,
            "createdAtUtc": "2026-01-02T03:04:05Z",
            "subjectEmail": "subject@example.test",
            "customerProgressStatus": status,
            "queryParameters": null,
            "customerInputDeadlineExtendableUntilUtc": null,
            "dataPackageUpgradableUntilUtc": null,
        }),
    )
}

fn quick() -> WaitOptions {
    WaitOptions::default()
        .timeout(Duration::from_secs(30))
        .initial_interval(Duration::from_millis(5))
        .max_interval(Duration::from_millis(20))
}

async fn mount(server: &MockServer, response: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{SESSION}")))
        .respond_with(response);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn polls(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn returns_the_session_once_the_customer_has_completed() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(session("WAITING_FOR_CUSTOMER")),
        Some(3),
    )
    .await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(session("COMPLETED_BY_CUSTOMER")),
        None,
    )
    .await;
    let finished = client(&server)
        .wait_for_customer(SESSION, quick())
        .await
        .unwrap();
    assert_eq!(
        finished.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
    assert_eq!(finished.id, SESSION);
    assert_eq!(polls(&server).await, 4);
}

#[tokio::test]
async fn any_other_state_ends_the_wait_too() {
    for status in ["EXPIRED", "DELIVERY_FAILED", "SOME_FUTURE_STATE"] {
        let server = MockServer::start().await;
        mount(
            &server,
            ResponseTemplate::new(200).set_body_json(session(status)),
            None,
        )
        .await;
        let finished = client(&server)
            .wait_for_customer(SESSION, quick())
            .await
            .unwrap();
        assert_eq!(finished.customer_progress_status.to_string(), status);
        assert_eq!(polls(&server).await, 1);
    }
}

#[tokio::test]
async fn the_deadline_ends_the_wait_with_the_last_status() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(session("WAITING_FOR_CUSTOMER")),
        None,
    )
    .await;
    let options = quick().timeout(Duration::from_millis(60));
    let error = client(&server)
        .wait_for_customer(SESSION, options)
        .await
        .unwrap_err();
    match &error {
        Error::WaitTimedOut { session, waited } => {
            assert_eq!(
                session.customer_progress_status,
                CustomerProgressStatus::WaitingForCustomer
            );
            assert!(*waited >= Duration::from_millis(60));
        }
        other => panic!("expected WaitTimedOut, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("WAITING_FOR_CUSTOMER") && message.contains(&SESSION.to_string()),
        "{message}"
    );
    // The session as last seen stays in the error, but its subject does not reach `Debug`.
    let debug = format!("{error:?}");
    assert!(
        debug.contains(&SESSION.to_string()) && !debug.contains("@example"),
        "{debug}"
    );
    assert!(
        polls(&server).await >= 2,
        "polled more than once before giving up"
    );
}

#[tokio::test]
async fn a_transient_failure_does_not_end_the_wait() {
    let server = MockServer::start().await;
    mount(&server, ResponseTemplate::new(503), Some(2)).await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(session("COMPLETED_BY_CUSTOMER")),
        None,
    )
    .await;
    let finished = client(&server)
        .wait_for_customer(SESSION, quick())
        .await
        .unwrap();
    assert_eq!(
        finished.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
    assert_eq!(polls(&server).await, 3);
}

#[tokio::test]
async fn a_permanent_failure_ends_the_wait_at_once() {
    let server = MockServer::start().await;
    mount(&server, ResponseTemplate::new(404), None).await;
    let error = client(&server)
        .wait_for_customer(SESSION, quick())
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    assert_eq!(error.operation(), Some("GetSession"));
    assert_eq!(polls(&server).await, 1);
}
