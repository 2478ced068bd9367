//! Waiting for the customer (`client.wait_for_customer`) against a loopback server.

use std::time::Duration;

use creditdata_client::types::CustomerProgressStatus;
use creditdata_client::wait::WaitOptions;
use creditdata_client::{Client, Error};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

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
    // The status came from the service. How many polls fit in 60 ms depends on the machine's
    // load (one loaded CI run fitted only one): that polling goes on until an answer or the
    // deadline is `returns_the_session_once_the_customer_has_completed`'s to show.
    assert!(polls(&server).await >= 1);
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

/// A loopback server that answers `GET /v1/sessions/{SESSION}` with `session` (when given)
/// and holds every other request open without an answer, as a service that never answers a
/// dataset read. Its base URL; it stops with the test's runtime.
async fn never_answering(session: Option<Value>) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let session_line = format!("GET /v1/sessions/{SESSION} ");
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let session = session.clone();
            let session_line = session_line.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                loop {
                    // The connection stays open (keep-alive): one request after another.
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&request).into_owned();
                    request.clear();
                    match &session {
                        Some(session) if head.starts_with(&session_line) => {
                            let body = session.to_string();
                            let answer = format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                 content-length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if stream.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                        // Never answered; the connection is held until the client gives up.
                        _ => std::future::pending::<()>().await,
                    }
                }
            });
        }
    });
    format!("http://{address}")
}

/// A client whose attempts may each take ten minutes, with the default retries: nothing but
/// the wait's own deadline ends a call to a server that never answers.
fn patient_client(base_url: &str) -> Client {
    Client::builder()
        .base_url(base_url)
        .bearer_token("t")
        .request_timeout(Some(Duration::from_secs(600)))
        .build()
        .unwrap()
}

/// The test's own bound: generous next to the timeout given to the wait, far below what a
/// wait that is not a deadline takes (every attempt's ten minutes).
const GENEROUS: Duration = Duration::from_secs(60);

/// `--timeout 3s` returned after 60 s against a service that never answered a dataset read:
/// the timeout was checked only between polls. A wait with timeout T returns by T plus a small
/// allowance, whatever its calls are doing.
#[cfg(feature = "session-datasets")]
#[tokio::test]
async fn the_data_wait_ends_at_its_deadline_while_a_read_never_answers() {
    use creditdata_client::wait::DataWait;
    let base = never_answering(Some(session("COMPLETED_BY_CUSTOMER"))).await;
    let client = patient_client(&base);
    let waited = tokio::time::timeout(
        GENEROUS,
        client.wait_for_data(SESSION, quick().timeout(Duration::from_secs(1))),
    )
    .await
    .expect("the wait returns by its deadline, not after the reads' own timeouts")
    .unwrap();
    let DataWait::TimedOut {
        datasets: Some(datasets),
        ..
    } = &waited
    else {
        panic!("expected TimedOut with the datasets read, got {waited:?}");
    };
    let readiness = datasets.readiness();
    assert!(!readiness.unreadable.is_empty(), "{readiness}");
    for (dataset, error) in &readiness.unreadable {
        assert!(
            matches!(error, Error::DeadlineExceeded { .. }),
            "{dataset:?}: {error:?}"
        );
    }
}

/// The same for the customer: a session read that never answers ends at the deadline with the
/// deadline's error, naming the operation.
#[tokio::test]
async fn the_customer_wait_ends_at_its_deadline_while_a_poll_never_answers() {
    let base = never_answering(None).await;
    let client = patient_client(&base);
    let error = tokio::time::timeout(
        GENEROUS,
        client.wait_for_customer(SESSION, quick().timeout(Duration::from_secs(1))),
    )
    .await
    .expect("the wait returns by its deadline")
    .unwrap_err();
    assert!(matches!(error, Error::DeadlineExceeded { .. }), "{error:?}");
    assert!(error.to_string().contains("GetSession"), "{error}");
}
