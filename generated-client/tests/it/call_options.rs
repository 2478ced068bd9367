//! Per-call options (deadline, retry policy, extra headers) and raw responses, against loopback
//! `wiremock` servers: each option's effect, the refusals, a call without options unchanged,
//! `call_with_response()` after a retry, `Debug` redaction, and the options reaching every
//! operation of the generated metadata.

use std::time::Duration;

use creditdata_client::builder::GetPdfReport;
use creditdata_client::call_options::CallOptions;
use creditdata_client::download::DownloadExt;
use creditdata_client::operation::Operation;
use creditdata_client::operations::ALL;
use creditdata_client::paging::SessionFilter;
use creditdata_client::retry::RetryPolicy;
use creditdata_client::{Client, Error};
use futures::TryStreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{any, method, path};
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::*;

/// A client of `server` with a static token, the default (long) per-request timeout and
/// `attempts` attempts per call by default.
fn client_retrying(server: &MockServer, attempts: u32) -> Client {
    builder(server)
        .bearer_token("t")
        .retry_policy(fast_retries(attempts))
        .build()
        .unwrap()
}

/// Answers every GET of the test session with 503.
async fn unavailable_session(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(503))
        .mount(server)
        .await;
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn header<'r>(request: &'r Request, name: &str) -> Option<&'r str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn a_call_without_options_is_unchanged() {
    let server = MockServer::start().await;
    unavailable_session(&server).await;
    let client = client_retrying(&server, 3);

    let plain = session_error(&client).await;
    let plain_requests = requests(&server).await;
    assert_eq!(
        plain_requests.len(),
        3,
        "the client's policy: three attempts"
    );
    assert_eq!(plain.status().map(|s| s.as_u16()), Some(503));

    server.reset().await;
    unavailable_session(&server).await;
    let with_empty = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new())
        .call()
        .await
        .unwrap_err();
    let empty_requests = requests(&server).await;
    assert_eq!(
        empty_requests.len(),
        3,
        "empty options keep the client's policy"
    );
    assert_eq!(with_empty.status(), plain.status());
    let names = |request: &Request| {
        let mut names: Vec<String> = request.headers.keys().map(|k| k.to_string()).collect();
        names.sort();
        names
    };
    assert_eq!(
        names(&empty_requests[0]),
        names(&plain_requests[0]),
        "empty options add no header"
    );
}

#[tokio::test]
async fn the_timeout_is_a_deadline_for_the_call_when_the_client_would_wait_long() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(session_json(session_id()))
                .set_delay(Duration::from_secs(20)),
        )
        .mount(&server)
        .await;
    // The client's own per-request timeout is the default 30 s.
    let client = client_retrying(&server, 3);
    let error = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::from_millis(200)))
        .call()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::DeadlineExceeded {
                operation: Some("GetSession"),
                timeout,
                ..
            } if timeout == Duration::from_millis(200)
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("deadline"), "{error}");
    assert!(error.is_transient());
}

#[tokio::test]
async fn a_deadline_too_far_to_represent_is_no_deadline() {
    let server = MockServer::start().await;
    mount_session(&server, session_id()).await;
    let client = client_retrying(&server, 1);
    let session = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::MAX))
        .call()
        .await
        .unwrap();
    assert_eq!(session.id, session_id());
}

#[tokio::test]
async fn the_deadline_covers_the_wait_for_a_token() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("slow-token", 300).set_delay(Duration::from_secs(20)))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::from_millis(200)))
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::DeadlineExceeded { .. }), "{error:?}");
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 0);
}

#[tokio::test]
async fn later_options_refine_earlier_ones_setting_by_setting() {
    let server = MockServer::start().await;
    unavailable_session(&server).await;
    let client = client_retrying(&server, 1);
    let earlier = CallOptions::new()
        .retry(fast_retries(3))
        .header("X-Tenant", "retail")
        .unwrap()
        .header("X-Correlation-Id", "earlier")
        .unwrap();
    let later = CallOptions::new()
        .header("X-Correlation-Id", "later")
        .unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .options(earlier)
        .options(later)
        .call_with_response()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    let seen = requests(&server).await;
    assert_eq!(seen.len(), 3, "the earlier options' retry policy");
    for request in &seen {
        assert_eq!(header(request, "x-tenant"), Some("retail"));
        assert_eq!(header(request, "x-correlation-id"), Some("later"));
    }
}

#[tokio::test]
async fn the_deadline_ends_retrying() {
    let server = MockServer::start().await;
    unavailable_session(&server).await;
    // The client would try a thousand times within a minute.
    let client = builder(&server)
        .bearer_token("t")
        .retry_policy(RetryPolicy {
            max_attempts: 1000,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_millis(50),
            max_elapsed: Duration::from_secs(60),
        })
        .build()
        .unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::from_millis(300)))
        .call()
        .await
        .unwrap_err();
    // Either the last 503 (no retry could start before the deadline) or the deadline itself.
    assert!(
        error.status().map(|s| s.as_u16()) == Some(503)
            || matches!(error, Error::DeadlineExceeded { .. }),
        "{error:?}"
    );
    assert!(requests(&server).await.len() < 1000);
}

#[tokio::test]
async fn the_deadline_bounds_reading_a_download_body() {
    // Headers and 10 of 1000 bytes at once, then nothing (the connection stays open): only the
    // call's deadline ends the read, long before the client's idle-read timeout.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buf[..n]);
        }
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 1000\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(&[b'%'; 10]).await.unwrap();
        socket.flush().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let client = Client::builder()
        .base_url(format!("http://{address}"))
        .bearer_token("t")
        .no_retries()
        .build()
        .unwrap();
    let download = client
        .get_pdf_report()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::from_millis(300)))
        .download()
        .await
        .expect("the headers arrive within the deadline");
    let mut sink = Vec::new();
    let error = download.write_to(&mut sink).await.unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert_eq!(sink.len(), 10, "what arrived before the deadline");
}

#[tokio::test]
async fn the_deadline_bounds_waiting_for_a_download() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(vec![b'%'; 64], "application/pdf")
                .set_delay(Duration::from_secs(20)),
        )
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let error = client
        .get_pdf_report()
        .session_id(session_id())
        .options(CallOptions::new().timeout(Duration::from_millis(200)))
        .download()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::DeadlineExceeded {
                operation: Some("GetPdfReport"),
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn retry_disabled_makes_one_attempt_where_the_client_retries() {
    let server = MockServer::start().await;
    unavailable_session(&server).await;
    let client = client_retrying(&server, 3);
    let error = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().retry(RetryPolicy::disabled()))
        .call()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert_eq!(requests(&server).await.len(), 1);

    // The client's policy is untouched for the next call.
    server.reset().await;
    unavailable_session(&server).await;
    session_error(&client).await;
    assert_eq!(requests(&server).await.len(), 3);
}

#[tokio::test]
async fn a_policy_with_more_attempts_retries_more() {
    let server = MockServer::start().await;
    unavailable_session(&server).await;
    let client = client_retrying(&server, 2);
    client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().retry(fast_retries(5)))
        .call()
        .await
        .unwrap_err();
    assert_eq!(requests(&server).await.len(), 5);
}

#[tokio::test]
async fn extra_headers_arrive_on_json_body_and_download_calls() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(filled(GetPdfReport::META.path)))
        .respond_with(ResponseTemplate::new(200).set_body_raw(b"%PDF".to_vec(), "application/pdf"))
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let options = CallOptions::new()
        .header("X-Correlation-Id", "abc-123")
        .unwrap()
        .header("x-tenant", "retail")
        .unwrap();

    client
        .get_session()
        .session_id(session_id())
        .options(options.clone())
        .call()
        .await
        .unwrap();
    client
        .create_session()
        .body(create_request())
        .options(options.clone())
        .call()
        .await
        .unwrap();
    let download = client
        .get_pdf_report()
        .session_id(session_id())
        .options(options)
        .download()
        .await;
    assert!(download.is_ok(), "{download:?}");

    let seen = requests(&server).await;
    assert_eq!(seen.len(), 3);
    for request in &seen {
        let what = format!("{} {}", request.method, request.url.path());
        assert_eq!(
            header(request, "x-correlation-id"),
            Some("abc-123"),
            "{what}"
        );
        assert_eq!(header(request, "x-tenant"), Some("retail"), "{what}");
        assert_eq!(header(request, "authorization"), Some("Bearer t"), "{what}");
    }
}

#[tokio::test]
async fn headers_the_client_owns_are_refused_when_the_options_are_built() {
    for name in [
        "Authorization",
        "proxy-authorization",
        "Cookie",
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "traceparent",
        "TraceState",
        "User-Agent",
    ] {
        let error = CallOptions::new().header(name, "secret-value").unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error, Error::InvalidRequest { .. }),
            "{name}: {error:?}"
        );
        assert!(message.contains(name), "{name}: {message}");
        assert!(!message.contains("secret-value"), "{name}: {message}");
    }
    let error = CallOptions::new().header("Bad Name", "x").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("\"Bad Name\" is not a header name"),
        "{error}"
    );
    let error = CallOptions::new()
        .header("X-Note", "line\r\nX-Injected: secret-value")
        .unwrap_err();
    assert!(error.to_string().contains("`X-Note`"), "{error}");
    assert!(!error.to_string().contains("secret-value"), "{error}");
}

#[tokio::test]
async fn headers_the_request_carries_are_refused_before_anything_is_sent() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    let client = client_retrying(&server, 3);
    for name in ["Accept", "api-version"] {
        let error = client
            .get_session()
            .session_id(session_id())
            .options(CallOptions::new().header(name, "x").unwrap())
            .call()
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::InvalidRequest {
                    operation: Some("GetSession"),
                    ..
                }
            ),
            "{name}: {error:?}"
        );
        assert!(
            error
                .to_string()
                .contains(&format!("`{}`", name.to_lowercase())),
            "{name}: {error}"
        );
    }
    let error = client
        .create_session()
        .body(create_request())
        .options(
            CallOptions::new()
                .header("Content-Type", "text/plain")
                .unwrap(),
        )
        .call()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("`content-type`"), "{error}");
    assert!(requests(&server).await.is_empty(), "nothing may be sent");
}

#[tokio::test]
async fn call_with_response_reports_the_final_attempt_after_a_retry() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(503).insert_header("x-request-id", "first"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-request-id", "second")
                .set_body_json(session_json(session_id())),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    let client = client_retrying(&server, 3);
    let answer = client
        .get_session()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap();
    assert_eq!(answer.status.as_u16(), 200);
    assert_eq!(answer.attempts, 2);
    assert_eq!(answer.headers.get("x-request-id").unwrap(), "second");
    assert_eq!(answer.body.id, session_id());

    // With options too, and a single attempt when nothing fails.
    let answer = client
        .get_session()
        .session_id(session_id())
        .options(CallOptions::new().retry(RetryPolicy::disabled()))
        .call_with_response()
        .await
        .unwrap();
    assert_eq!(answer.attempts, 1);
    assert_eq!(answer.into_body().id, session_id());
}

/// Each attempt after the first sends a request built again from the call's values (nothing
/// is copied before the first attempt): it must be the first one, byte for byte, with the
/// call's own headers.
#[tokio::test]
async fn a_retry_sends_the_same_request_with_the_calls_headers() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .with_priority(2)
        .mount(&server)
        .await;
    let client = client_retrying(&server, 3);
    let options = CallOptions::new()
        .header("X-Correlation-Id", "abc-123")
        .unwrap();
    let answer = client
        .get_session()
        .session_id(session_id())
        .options(options)
        .call_with_response()
        .await
        .unwrap();
    assert_eq!(answer.attempts, 3);

    let seen = requests(&server).await;
    assert_eq!(seen.len(), 3);
    let shown = |request: &Request| {
        let mut headers: Vec<(String, String)> = request
            .headers
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_string()))
            .collect();
        headers.sort();
        (
            request.method.to_string(),
            request.url.to_string(),
            headers,
            request.body.clone(),
        )
    };
    let first = shown(&seen[0]);
    for again in &seen[1..] {
        assert_eq!(shown(again), first);
    }
    assert_eq!(header(&seen[2], "x-correlation-id"), Some("abc-123"));
    assert_eq!(header(&seen[2], "authorization"), Some("Bearer t"));
    assert_eq!(
        header(&seen[2], "api-version"),
        header(&seen[0], "api-version")
    );
}

#[tokio::test]
async fn call_with_response_works_for_streams_and_bodiless_answers() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("x-request-id", "pdf")
                .set_body_raw(b"%PDF-1.7".to_vec(), "application/pdf"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(204).insert_header("x-request-id", "resent"))
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let answer = client
        .get_pdf_report()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap();
    assert_eq!(answer.status.as_u16(), 200);
    assert_eq!(answer.attempts, 1);
    assert_eq!(answer.headers.get("x-request-id").unwrap(), "pdf");
    let chunks: Vec<bytes::Bytes> = answer.body.into_inner().try_collect().await.unwrap();
    assert_eq!(chunks.concat(), b"%PDF-1.7");

    let answer = client
        .resend_customer_notification()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap();
    assert_eq!(answer.status.as_u16(), 204);
    assert_eq!(answer.headers.get("x-request-id").unwrap(), "resent");
    assert_eq!(answer.body, serde_json::Value::Null);
}

#[tokio::test]
async fn debug_shows_header_names_not_values() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("set-cookie", "session=cookie-secret")
                .insert_header("authorization", "Bearer echoed-token")
                .insert_header("x-api-token", "token-secret")
                .set_body_json(session_json(session_id())),
        )
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let answer = client
        .get_session()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap();
    let shown = format!("{answer:?}");
    for secret in ["cookie-secret", "echoed-token", "token-secret"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(
        shown.contains("set-cookie") && shown.contains("x-api-token"),
        "{shown}"
    );
    // Nor the body: it is a person's data.
    let email = session_json(session_id())["subjectEmail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!shown.contains(&email), "{shown}");

    let options = CallOptions::new()
        .header("X-Api-Key", "key-secret")
        .unwrap();
    let shown = format!("{options:?}");
    assert!(
        !shown.contains("key-secret") && shown.contains("x-api-key"),
        "{shown}"
    );
}

/// The paths `session_datasets` reads by default: every dataset the description declares that
/// it does not deprecate.
#[cfg(feature = "session-datasets")]
fn dataset_paths() -> std::collections::BTreeSet<String> {
    use creditdata_client::session_datasets::Dataset;
    Dataset::ALL
        .into_iter()
        .filter(|dataset| !dataset.deprecated())
        .map(|dataset| filled(dataset.operation().path))
        .collect()
}

#[cfg(feature = "session-datasets")]
#[tokio::test]
async fn session_datasets_take_options_for_every_read() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({})))
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let _ = client
        .session_datasets(session_id())
        .options(
            CallOptions::new()
                .header("X-Correlation-Id", "all")
                .unwrap(),
        )
        .await;
    let seen = requests(&server).await;
    let paths = seen
        .iter()
        .map(|request| request.url.path().to_string())
        .collect::<std::collections::BTreeSet<_>>();
    assert_eq!(paths, dataset_paths(), "every dataset read once");
    assert_eq!(seen.len(), paths.len());
    for request in &seen {
        assert_eq!(
            header(request, "x-correlation-id"),
            Some("all"),
            "{}",
            request.url.path()
        );
    }
}

/// When every dataset answers 404 the session itself is read once: with the same options.
#[cfg(feature = "session-datasets")]
#[tokio::test]
async fn the_session_read_after_404s_takes_the_options_too() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let error = client
        .session_datasets(session_id())
        .options(
            CallOptions::new()
                .header("X-Correlation-Id", "all")
                .unwrap(),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("GetSession"), "{error}");
    let seen = requests(&server).await;
    let session = session_path(session_id());
    assert_eq!(
        seen.iter()
            .filter(|request| request.url.path() == session)
            .count(),
        1
    );
    assert_eq!(seen.len(), dataset_paths().len() + 1);
    for request in &seen {
        assert_eq!(
            header(request, "x-correlation-id"),
            Some("all"),
            "{}",
            request.url.path()
        );
    }
}

#[tokio::test]
async fn every_page_of_a_session_search_takes_the_options() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/sessions"))
        .respond_with(|request: &Request| {
            let skip = request
                .url
                .query_pairs()
                .find(|(k, _)| k == "Skip")
                .map_or(0, |(_, v)| v.parse::<u32>().unwrap());
            let page: Vec<_> = (skip..2.min(skip + 1))
                .map(|n| session_json(uuid::Uuid::from_u128(u128::from(n) + 1)))
                .collect();
            ResponseTemplate::new(200).set_body_json(
                json!({ "sessions": page, "paging": { "totalCount": 2, "skip": skip, "take": 1 } }),
            )
        })
        .mount(&server)
        .await;
    let client = client_retrying(&server, 1);
    let filter = SessionFilter::new().page_size(1).options(
        CallOptions::new()
            .header("X-Correlation-Id", "pages")
            .unwrap(),
    );
    let sessions: Vec<_> = client.sessions(filter).try_collect().await.unwrap();
    assert_eq!(sessions.len(), 2);
    let seen = requests(&server).await;
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(header(request, "x-correlation-id"), Some("pages"));
    }
}

/// The path of an operation with every parameter filled in.
fn filled(template: &str) -> String {
    let mut path = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        path.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("a closed parameter");
        path.push_str(&session_id().to_string());
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    path
}

/// Every operation of the generated metadata, through the runtime every builder's `send_with()`
/// ends in (`runtime::send`): the extra header arrives, the retry policy replaces the client's and the deadline
/// ends the call, for JSON, byte-stream and bodiless operations alike. (Every builder has
/// `options()` by construction: it is a provided method of `Operation`, and the generator fails
/// when a builder did not get the inherent one.)
#[tokio::test]
async fn options_reach_every_operation_of_the_metadata() {
    let server = MockServer::start().await;
    let client = client_retrying(&server, 3);
    for meta in ALL.iter() {
        let op = meta.id;
        let send = |options: CallOptions| {
            let url = format!("{}{}", server.uri(), filled(meta.path));
            let request = reqwest::Request::new(meta.method.parse().unwrap(), url.parse().unwrap());
            let client = client.clone();
            async move { through_the_door(&client, meta, request, Some(options)).await }
        };

        server.reset().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(503))
            .mount(&server)
            .await;
        let options = CallOptions::new()
            .header("X-Probe", op)
            .unwrap()
            .retry(RetryPolicy::disabled());
        let error = send(options).await.unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(503), "{op}");
        let seen = requests(&server).await;
        assert_eq!(
            seen.len(),
            1,
            "{op}: one attempt under RetryPolicy::disabled()"
        );
        assert_eq!(
            header(&seen[0], "x-probe"),
            Some(op),
            "{op}: the extra header"
        );
        if meta.idempotent {
            server.reset().await;
            Mock::given(any())
                .respond_with(ResponseTemplate::new(503))
                .mount(&server)
                .await;
            send(CallOptions::new().retry(fast_retries(4)))
                .await
                .unwrap_err();
            assert_eq!(requests(&server).await.len(), 4, "{op}: the call's policy");
        }

        server.reset().await;
        Mock::given(any())
            .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(20)))
            .mount(&server)
            .await;
        let error = send(CallOptions::new().timeout(Duration::from_millis(100)))
            .await
            .unwrap_err();
        // The server's answer would have been a 200, twenty seconds later.
        assert!(
            matches!(error, Error::DeadlineExceeded { operation: Some(o), .. } if o == op),
            "{op}: the deadline ended the call: {error:?}"
        );
    }
}
