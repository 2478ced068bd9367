//! The client against a hostile network: a service, an identity provider or a proxy that
//! redirects, lies, floods or echoes personal data. One group of tests per item of the
//! "Trust" issue (items 1–10), each named after its item. Every server is a wiremock or raw TCP
//! fake on 127.0.0.1:0; nothing leaves loopback (where a test needs a host name that is not
//! loopback, the HTTP client resolves it to a loopback listener).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::support::*;
use creditdata_client::auth::{AuthError, AuthErrorKind, Credentials, TokenEndpoint};
use creditdata_client::download::DownloadExt;
use creditdata_client::paging::SessionFilter;
use creditdata_client::types::CustomerProgressStatus;
use creditdata_client::wait::WaitOptions;
use creditdata_client::{Client, ClientBuilder, Error};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uuid::Uuid;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

const CLIENT_SECRET: &str = "client-secret-value";

/// The error of an operation that needed a token and could not get one.
fn auth_error(error: Error) -> AuthError {
    match error {
        Error::Auth { source, .. } => source,
        other => panic!("expected an authentication error, got {other:?}"),
    }
}

/// Every request `server` received, as `METHOD path`.
async fn received(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}

/// A client of `server` whose client credentials go to `token_url`, without retries.
fn oauth_client(server: &MockServer, token_url: String) -> Client {
    Client::builder()
        .base_url(server.uri())
        .no_retries()
        .client_credentials(token_url, "client-id", CLIENT_SECRET)
        .build()
        .unwrap()
}

/// A client of `server` that finds its token endpoint through discovery at `issuer`, without
/// retries.
fn issuer_builder(server: &MockServer, issuer: String) -> ClientBuilder {
    Client::builder()
        .base_url(server.uri())
        .no_retries()
        .credentials(Credentials::client_credentials(
            TokenEndpoint::Issuer(issuer),
            "client-id",
            CLIENT_SECRET,
        ))
}

/// Reads the test session, which must succeed.
async fn fetch_session(client: &Client) {
    let session = crate::support::session(client).await;
    assert_eq!(session.id, session_id());
}

// ---------------------------------------------------------------------------------------------
// Item 1: no redirect ever carries a credential.
// ---------------------------------------------------------------------------------------------

/// A second listener that would happily take the secret and answer with a token.
async fn credential_sink() -> MockServer {
    let sink = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(token_response("token-from-elsewhere", 300))
        .mount(&sink)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": sink.uri(),
            "token_endpoint": format!("{}/token", sink.uri()),
        })))
        .mount(&sink)
        .await;
    sink
}

#[tokio::test]
async fn item_01_token_request_never_follows_a_redirect() {
    let sink = credential_sink().await;
    let server = MockServer::start().await;
    for status in [307, 308] {
        let from = format!("/token-{status}");
        Mock::given(method("POST"))
            .and(path(from.as_str()))
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("location", format!("{}/token?via={status}", sink.uri())),
            )
            .mount(&server)
            .await;
    }
    mount_session(&server, session_id()).await;

    for status in [307, 308] {
        let client = oauth_client(&server, format!("{}/token-{status}", server.uri()));
        let error = session_error(&client).await;
        let message = rendered(&error);
        let auth = auth_error(error);
        assert_eq!(auth.kind, AuthErrorKind::Redirect, "{auth}");
        // The Location is named (without its query), so the operator can see where it pointed.
        assert!(
            message.contains(&format!("{}/token", sink.uri())) && !message.contains("via="),
            "{message}"
        );
        assert!(!message.contains(CLIENT_SECRET), "{message}");
    }
    assert_eq!(
        received(&sink).await,
        Vec::<String>::new(),
        "the secret left"
    );
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 0);
}

#[tokio::test]
async fn item_01_discovery_never_follows_a_redirect() {
    let sink = credential_sink().await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/issuer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("{}/.well-known/openid-configuration", sink.uri()),
        ))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = issuer_builder(&server, format!("{}/issuer", server.uri()))
        .build()
        .unwrap();
    let error = session_error(&client).await;
    let auth = auth_error(error);
    assert_eq!(auth.kind, AuthErrorKind::Redirect, "{auth}");
    assert!(rendered(&auth).contains(&sink.uri()), "{auth}");
    assert_eq!(received(&sink).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_01_discovery_refuses_a_document_of_another_issuer() {
    let server = MockServer::start().await;
    let issuer = format!("{}/realms/consumer", server.uri());
    Mock::given(method("GET"))
        .and(path("/realms/consumer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": "https://login.attacker.example/realms/consumer",
            "token_endpoint": format!("{}{TOKEN_PATH}", server.uri()),
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("should-not-be-asked", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = issuer_builder(&server, issuer.clone()).build().unwrap();
    let auth = auth_error(session_error(&client).await);
    assert_eq!(auth.kind, AuthErrorKind::Discovery, "{auth}");
    let message = rendered(&auth);
    assert!(
        message.contains("issuer") && message.contains("login.attacker.example"),
        "{message}"
    );
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 0);
}

#[tokio::test]
async fn item_01_discovery_refuses_a_token_endpoint_over_plain_http() {
    // The issuer's discovery document points to a plain-http token endpoint on a host that is
    // not loopback. The host name resolves to a loopback listener in this test, so nothing
    // could leave the machine even if the client sent the request.
    let sink = credential_sink().await;
    let sink_addr: SocketAddr = sink.address().to_owned();
    let server = MockServer::start().await;
    let issuer = format!("{}/realms/consumer", server.uri());
    Mock::given(method("GET"))
        .and(path("/realms/consumer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "token_endpoint": format!("http://idp.example.test:{}/token", sink_addr.port()),
        })))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let resolve = move |b: reqwest::ClientBuilder| b.resolve("idp.example.test", sink_addr);
    let client = issuer_builder(&server, issuer)
        .http_client(
            reqwest::Client::builder()
                .resolve("idp.example.test", sink_addr)
                .build()
                .unwrap(),
        )
        .identity_provider_http(resolve)
        .build()
        .unwrap();
    let auth = auth_error(session_error(&client).await);
    assert_eq!(auth.kind, AuthErrorKind::Discovery, "{auth}");
    assert!(rendered(&auth).contains("https"), "{auth}");
    assert_eq!(
        received(&sink).await,
        Vec::<String>::new(),
        "the secret left"
    );
}

#[tokio::test]
async fn item_01_api_calls_follow_only_same_origin_redirects() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    // Same origin: followed, with the token.
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", "/moved/session?SubjectEmail=x"),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/moved/session"))
        .and(header("authorization", "Bearer api-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    // Another origin: not followed.
    let other = Uuid::from_u128(7);
    Mock::given(method("GET"))
        .and(path(session_path(other)))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!(
                "{}/v1/sessions/{other}?SubjectEmail=jane.doe@example.com",
                elsewhere.uri()
            ),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/v1/sessions", elsewhere.uri())),
        )
        .mount(&server)
        .await;
    let client = builder(&server)
        .bearer_token("api-token")
        .no_retries()
        .build()
        .unwrap();

    fetch_session(&client).await;

    let error = client
        .get_session()
        .session_id(other)
        .call()
        .await
        .unwrap_err();
    let Error::Redirect {
        status, location, ..
    } = &error
    else {
        panic!("expected a refused redirect, got {error:?}")
    };
    assert_eq!(status.as_u16(), 302);
    assert_eq!(
        location,
        &format!("{}/v1/sessions/{other}", elsewhere.uri())
    );
    assert!(!rendered(&error).contains("jane.doe"), "{error}");

    // A create-session body (a consumer's e-mail) is not re-sent elsewhere either.
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Redirect { .. }), "{error:?}");
    assert_eq!(received(&elsewhere).await, Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 2: no value from the identity provider can panic the client.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_02_a_huge_expires_in_cannot_panic_the_client() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"access_token":"forever","token_type":"Bearer","expires_in":18446744073709551615}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    for _ in 0..2 {
        fetch_session(&client).await;
    }
    // Clamped to a sane ceiling, but still a long-lived token: reused.
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);
}

#[tokio::test]
async fn item_02_a_zero_or_missing_expires_in_means_use_once() {
    for body in [
        json!({"access_token": "once", "token_type": "Bearer"}),
        json!({"access_token": "once", "token_type": "Bearer", "expires_in": 0}),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(TOKEN_PATH))
            .respond_with(ResponseTemplate::new(200).set_body_json(body.clone()))
            .mount(&server)
            .await;
        mount_session(&server, session_id()).await;
        let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
        for _ in 0..3 {
            fetch_session(&client).await;
        }
        assert_eq!(count(&server, "POST", TOKEN_PATH).await, 3, "{body}");
    }
}

// ---------------------------------------------------------------------------------------------
// Item 3: short-lived tokens do not stampede.
// ---------------------------------------------------------------------------------------------

async fn concurrent_calls_with_token(expires_in: u64, token_delay: Duration) -> usize {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("short-lived", expires_in).set_delay(token_delay))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    let calls = (0..20).map(|_| {
        let client = client.clone();
        async move { client.get_session().session_id(session_id()).call().await }
    });
    for outcome in futures::future::join_all(calls).await {
        outcome.unwrap();
    }
    count(&server, "POST", TOKEN_PATH).await
}

#[tokio::test]
async fn item_03_a_zero_lifetime_token_is_shared_by_every_waiting_call() {
    assert_eq!(
        concurrent_calls_with_token(0, Duration::from_millis(50)).await,
        1
    );
}

#[tokio::test]
async fn item_03_a_token_outlived_by_its_own_request_is_shared_by_every_waiting_call() {
    // One second of life, but the identity provider takes longer than that to answer: the
    // token is already past its refresh deadline when it arrives.
    assert_eq!(
        concurrent_calls_with_token(1, Duration::from_millis(1100)).await,
        1
    );
}

// ---------------------------------------------------------------------------------------------
// Item 4: a transient identity-provider failure is transient, whatever the body.
// ---------------------------------------------------------------------------------------------

async fn token_failure_then_success(failure: ResponseTemplate) -> (Result<(), Error>, usize) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(failure)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("after-the-outage", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();
    let outcome = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .map(|_| ());
    (outcome, count(&server, "POST", TOKEN_PATH).await)
}

#[tokio::test]
async fn item_04_a_503_with_a_json_body_that_is_no_oauth2_error_is_retried() {
    let (outcome, token_requests) = token_failure_then_success(
        ResponseTemplate::new(503).set_body_json(json!({"message": "down"})),
    )
    .await;
    outcome.unwrap();
    assert_eq!(token_requests, 2);
}

#[tokio::test]
async fn item_04_a_429_or_500_with_an_empty_json_body_is_retried() {
    for status in [429, 500, 502] {
        let (outcome, token_requests) = token_failure_then_success(
            ResponseTemplate::new(status).set_body_raw("", "application/json"),
        )
        .await;
        outcome.unwrap_or_else(|e| panic!("{status}: {e}"));
        assert_eq!(token_requests, 2, "{status}");
    }
}

#[tokio::test]
async fn item_04_the_transient_failure_is_reported_as_such_when_retries_run_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({"message": "down"})))
        .mount(&server)
        .await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    let error = session_error(&client).await;
    assert!(error.is_transient(), "{error}");
    assert_eq!(auth_error(error).kind, AuthErrorKind::Unavailable);
}

// ---------------------------------------------------------------------------------------------
// Item 5: an id cannot leave its path segment.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_05_a_backslash_id_cannot_reach_another_session() {
    let server = MockServer::start().await;
    let other_session = Uuid::from_u128(2);
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{other_session}/attachments/A2/content"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_raw("someone else's file", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let error = client
        .get_attachment_content()
        .session_id(session_id())
        .attachment_id(format!("..\\..\\{other_session}\\attachments\\A2"))
        .download()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
    let message = rendered(&error);
    assert!(message.contains("attachment_id"), "{message}");
    assert_eq!(received(&server).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_05_hostile_ids_are_refused_before_sending() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("data", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    for hostile in [
        "", ".", "..", "a/b", "a\\b", "%2e%2e", "a%2Fb", "a\u{0}b", "a\nb", "a\u{7f}b",
    ] {
        let error = client
            .get_attachment_content()
            .session_id(session_id())
            .attachment_id(hostile)
            .download()
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::InvalidRequest { .. }),
            "{hostile:?}: {error:?}"
        );
        assert!(
            rendered(&error).contains("attachment_id"),
            "{hostile:?}: {error}"
        );
    }
    assert_eq!(received(&server).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_05_an_id_cannot_reach_a_sibling_operation() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{}/account-statements/transactions/excel",
            session_id()
        )))
        .respond_with(ResponseTemplate::new(200).set_body_raw("every transaction", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    for id in ["transactions", "Transactions"] {
        let error = client
            .get_account_statement_excel()
            .session_id(session_id())
            .account_statement_id(id)
            .download()
            .await
            .unwrap_err();
        assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
        assert!(rendered(&error).contains("account_statement_id"), "{error}");
    }
    assert_eq!(received(&server).await, Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 6: paging cannot loop or lie.
// ---------------------------------------------------------------------------------------------

/// A loopback server whose `GET /v1/sessions` answers with `responder`, and a client of it
/// with a bearer token and no retries.
async fn session_listing(responder: impl Respond + 'static) -> (MockServer, Client) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/sessions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    let client = builder(&server)
        .bearer_token("t")
        .no_retries()
        .build()
        .unwrap();
    (server, client)
}

fn listed_session(n: u128) -> Value {
    let mut session = session_json(Uuid::from_u128(n));
    session["subjectEmail"] = json!(format!("subject{n}@example.test"));
    session
}

fn skip_of(request: &Request) -> u64 {
    request
        .url
        .query_pairs()
        .find(|(k, _)| k == "Skip")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// The first `limit` items of the session stream.
async fn first_items(
    client: &Client,
    filter: SessionFilter,
    limit: usize,
) -> Vec<Result<Uuid, Error>> {
    client
        .sessions(filter)
        .take(limit)
        .map(|item| item.map(|session| session.id))
        .collect()
        .await
}

fn assert_ends_in_one_error_without_duplicates(items: &[Result<Uuid, Error>]) {
    let (ok, errors): (Vec<_>, Vec<_>) = items.iter().partition(|item| item.is_ok());
    let ids: Vec<Uuid> = ok.iter().map(|item| *item.as_ref().unwrap()).collect();
    let unique: HashSet<&Uuid> = ids.iter().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "a session was yielded twice: {ids:?}"
    );
    assert_eq!(errors.len(), 1, "{items:?}");
    assert!(
        items.last().unwrap().is_err(),
        "the error ends the stream: {items:?}"
    );
    let error = items.last().unwrap().as_ref().unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetSessions"));
}

#[tokio::test]
async fn item_06_a_server_that_ignores_skip_cannot_loop() {
    // Same page every time; once with `paging.skip` echoing 0, once without `skip`.
    for echo_skip in [true, false] {
        let (_server, client) = session_listing(move |_: &Request| {
            let mut paging = json!({"totalCount": 1_000_000, "take": 2});
            if echo_skip {
                paging["skip"] = json!(0);
            }
            ResponseTemplate::new(200).set_body_json(json!({
                "sessions": [listed_session(1), listed_session(2)],
                "paging": paging,
            }))
        })
        .await;
        let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
        assert_ends_in_one_error_without_duplicates(&items);
        assert_eq!(items.len(), 3, "echo_skip={echo_skip}: {items:?}");
    }
}

#[tokio::test]
async fn item_06_a_page_without_paging_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request) as u128;
        let page: Vec<Value> = (skip..4).take(2).map(listed_session).collect();
        ResponseTemplate::new(200).set_body_json(json!({ "sessions": page }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
    assert_ends_in_one_error_without_duplicates(&items);
    let message = rendered(items.last().unwrap().as_ref().unwrap_err());
    assert!(message.contains("paging"), "{message}");
}

#[tokio::test]
async fn item_06_a_total_count_the_pages_do_not_reach_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        let page: Vec<Value> = (skip as u128..3).take(2).map(listed_session).collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": 1_000_000, "skip": skip, "take": 2},
        }))
    })
    .await;
    let error = client
        .all_sessions(SessionFilter::new().page_size(2))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    let message = rendered(&error);
    assert!(
        message.contains("1000000") && message.contains("3"),
        "{message}"
    );
}

#[tokio::test]
async fn item_06_a_page_for_another_skip_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        // Fresh ids every time, but the page claims to start elsewhere.
        let page: Vec<Value> = (0..2)
            .map(|i| listed_session(skip as u128 * 10 + i + 1))
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": 10, "skip": skip + 5, "take": 2},
        }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_ends_in_one_error_without_duplicates(&items);
}

#[tokio::test]
async fn item_06_an_endless_listing_stops_at_the_page_cap() {
    let (server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        let page: Vec<Value> = (0..2)
            .map(|i| listed_session(u128::from(skip) + i + 1))
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": i32::MAX, "skip": skip, "take": 2},
        }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2).max_pages(3), 100).await;
    assert_eq!(
        items.len(),
        7,
        "three pages of two, then the error: {items:?}"
    );
    assert_ends_in_one_error_without_duplicates(&items);
    assert!(
        rendered(items[6].as_ref().unwrap_err()).contains("3 pages"),
        "{items:?}"
    );
    assert_eq!(count(&server, "GET", "/v1/sessions").await, 3);
}

// ---------------------------------------------------------------------------------------------
// Item 7: bounded memory against any body.
// ---------------------------------------------------------------------------------------------

/// What an endless-body server stops at if nobody stops reading (a real hostile server would
/// go on): far more than any limit under test, small enough for a shared test machine.
const FLOOD_CAP: u64 = 48 * 1024 * 1024;

/// Bytes a reader that stopped at its limit can have let through: the limit, the HTTP
/// client's buffers and the loopback socket's buffers. Well under [`FLOOD_CAP`].
const STOPPED_READER_BOUND: u64 = 24 * 1024 * 1024;

/// A raw HTTP/1.1 server answering every request with `head` and then `prefix` followed by
/// `filler` repeated, chunked (or after a `Content-Length` the head declares), until
/// [`FLOOD_CAP`] bytes or until the client stops reading. Returns its address and the count of
/// body bytes it managed to write.
async fn flooding_server(
    head: &'static str,
    chunked: bool,
    prefix: &'static [u8],
    filler: &'static [u8],
) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let written = Arc::new(AtomicU64::new(0));
    let counter = written.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                if read_request_head(&mut socket).await.is_none() {
                    return;
                }
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let block: Vec<u8> = filler.repeat((64 * 1024 / filler.len()).max(1));
                let mut first = true;
                while counter.load(Ordering::Relaxed) < FLOOD_CAP {
                    let data: &[u8] = if first { prefix } else { &block };
                    first = false;
                    let mut frame = Vec::with_capacity(data.len() + 16);
                    if chunked {
                        frame.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                    }
                    frame.extend_from_slice(data);
                    if chunked {
                        frame.extend_from_slice(b"\r\n");
                    }
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    counter.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    (addr, written)
}

/// Reads up to the end of a request's head (bodies of the requests under test are small and
/// ignored).
async fn read_request_head(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buffer[..n]);
    }
    Some(seen)
}

const CHUNKED_JSON: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";

#[tokio::test]
async fn item_07_an_endless_json_body_ends_in_a_typed_error() {
    let (addr, written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"sessions\":[",
        b"{\"id\":\"00000000-0000-0000-0000-000000000000\"},",
    )
    .await;
    let limit = 1024 * 1024;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .max_response_body(limit)
        .build()
        .unwrap();
    let error = client.get_sessions().call().await.unwrap_err();
    let Error::ResponseTooLarge {
        operation,
        limit: reported,
        ..
    } = &error
    else {
        panic!("expected ResponseTooLarge, got {error:?}")
    };
    assert_eq!(*operation, Some("GetSessions"));
    assert_eq!(*reported, limit);
    assert!(rendered(&error).contains("1048576"), "{error}");
    let sent = written.load(Ordering::Relaxed);
    assert!(sent < STOPPED_READER_BOUND, "the client read {sent} bytes");
}

#[tokio::test]
async fn item_07_a_declared_length_over_the_limit_is_refused_unread() {
    let (addr, written) = flooding_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10737418240\r\n\r\n",
        false,
        b"{\"sessions\":[",
        b"{\"id\":\"00000000-0000-0000-0000-000000000000\"},",
    )
    .await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .max_response_body(1024 * 1024)
        .build()
        .unwrap();
    let error = client.get_sessions().call().await.unwrap_err();
    assert!(matches!(error, Error::ResponseTooLarge { .. }), "{error:?}");
    assert!(written.load(Ordering::Relaxed) < STOPPED_READER_BOUND);
}

#[tokio::test]
async fn item_07_token_and_discovery_bodies_are_bounded() {
    let (token_addr, token_written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"token_type\":\"Bearer\",\"access_token\":\"",
        b"aaaaaaaaaaaaaaaa",
    )
    .await;
    let (issuer_addr, discovery_written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"grant_types_supported\":[",
        b"\"x\",",
    )
    .await;
    for (endpoint, written) in [
        (
            TokenEndpoint::Url(format!("http://{token_addr}/token")),
            token_written,
        ),
        (
            TokenEndpoint::Issuer(format!("http://{issuer_addr}")),
            discovery_written,
        ),
    ] {
        let client = Client::builder()
            .base_url("http://127.0.0.1:9")
            .no_retries()
            .credentials(Credentials::client_credentials(
                endpoint.clone(),
                "client-id",
                CLIENT_SECRET,
            ))
            .build()
            .unwrap();
        let auth = auth_error(client.get_consumer_packages().call().await.unwrap_err());
        assert!(
            matches!(
                auth.kind,
                AuthErrorKind::InvalidResponse | AuthErrorKind::Discovery
            ),
            "{endpoint:?}: {auth}"
        );
        assert!(
            rendered(&auth).contains("larger than"),
            "{endpoint:?}: {auth}"
        );
        let sent = written.load(Ordering::Relaxed);
        assert!(
            sent < STOPPED_READER_BOUND,
            "{endpoint:?}: read {sent} bytes"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Item 8: personal data stays out of errors and logs by default.
// ---------------------------------------------------------------------------------------------

/// A server that reads each request and closes the connection without answering.
async fn hanging_up_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = read_request_head(&mut socket).await;
                drop(socket);
            });
        }
    });
    addr
}

/// A server that reads each request and never answers.
async fn silent_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = read_request_head(&mut socket).await;
            open.push(socket);
        }
    });
    addr
}

const EMAIL: &str = "jane.doe@example.com";
const FULL_NAME: &str = "Janet Quintessa Doe";

fn assert_no_personal_data(what: &str, text: &str) {
    for value in [EMAIL, "jane.doe", "Janet", "Quintessa"] {
        assert!(!text.contains(value), "{what} shows {value:?}: {text}");
    }
}

async fn search_by_person(client: &Client) -> Error {
    client
        .get_sessions()
        .subject_email(EMAIL)
        .subject_full_name(FULL_NAME)
        .take(10)
        .call()
        .await
        .unwrap_err()
}

#[tokio::test]
async fn item_08_query_values_never_appear_in_transport_errors_or_retry_logs() {
    let captured = Captured::default();
    let _subscriber = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=trace",
    ));
    let addr = hanging_up_server().await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .retry_policy(fast_retries(3))
        .build()
        .unwrap();
    let error = search_by_person(&client).await;
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    let message = rendered(&error);
    assert_no_personal_data("the message", &message);
    assert_no_personal_data("Debug", &format!("{error:?}"));
    if let Error::Transport { source, .. } = &error {
        assert_no_personal_data("the reqwest error", &source.to_string());
    }
    // What is shown instead: the path and the names of the query parameters.
    assert!(
        message.contains("/v1/sessions") && message.contains("SubjectEmail"),
        "{message}"
    );
    let logs = captured.text();
    assert!(logs.contains("retrying"), "{logs}");
    assert_no_personal_data("the logs", &logs);
}

#[tokio::test]
async fn item_08_query_values_never_appear_in_timeouts() {
    let addr = silent_server().await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .request_timeout(Some(Duration::from_millis(300)))
        .build()
        .unwrap();
    let error = search_by_person(&client).await;
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert_no_personal_data("the message", &rendered(&error));
    assert_no_personal_data("Debug", &format!("{error:?}"));
}

#[tokio::test]
async fn item_08_decode_errors_keep_the_path_but_not_the_body() {
    let server = MockServer::start().await;
    let mut session = session_json(session_id());
    session["subjectEmail"] = json!(EMAIL);
    session["subjectFullName"] = json!(FULL_NAME);
    // A personal identity code where a name belongs: the value must not be quoted.
    session["createdByName"] = json!(38001085718u64);
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session))
        .mount(&server)
        .await;
    let client = builder(&server).build().unwrap();
    let error = session_error(&client).await;
    let Error::Decode(decode) = &error else {
        panic!("expected a decode error, got {error:?}")
    };
    assert_eq!(decode.path.as_deref(), Some("createdByName"));
    for shown in [rendered(&error), format!("{error:?}")] {
        assert_no_personal_data("the decode error", &shown);
        assert!(!shown.contains("38001085718"), "{shown}");
    }
    assert!(rendered(&error).contains("createdByName"), "{error}");
    // For debugging, on purpose: the body around the failure.
    assert!(decode.body_snippet().contains("38001085718"), "{decode:?}");
}

#[test]
fn item_08_the_token_url_is_validated_like_the_base_url() {
    for (url, hidden) in [
        ("http://operator:hunter2@127.0.0.1:1/token", "hunter2"),
        ("http://127.0.0.1:1/token?client_secret=s3cr3t", "s3cr3t"),
        ("http://127.0.0.1:1/token#access_token=t0k3n", "t0k3n"),
        ("ftp://127.0.0.1:1/token", "\u{0}"),
        ("http://login.example.test/token", "\u{0}"),
    ] {
        let error = Client::builder()
            .base_url("http://127.0.0.1:1")
            .client_credentials(url, "client-id", CLIENT_SECRET)
            .build()
            .err()
            .unwrap_or_else(|| panic!("{url} was accepted"));
        assert!(matches!(error, Error::Config(_)), "{url}: {error:?}");
        let message = rendered(&error);
        assert!(!message.contains(hidden), "{url}: {message}");
        assert!(message.contains("token"), "{url}: {message}");
    }
    for issuer in [
        "http://operator:hunter2@127.0.0.1:1/realms/x",
        "http://127.0.0.1:1/realms/x?k=v",
    ] {
        let error = Client::builder()
            .base_url("http://127.0.0.1:1")
            .credentials(Credentials::client_credentials(
                TokenEndpoint::Issuer(issuer.into()),
                "client-id",
                CLIENT_SECRET,
            ))
            .build()
            .err()
            .unwrap_or_else(|| panic!("{issuer} was accepted"));
        assert!(matches!(error, Error::Config(_)), "{issuer}: {error:?}");
        assert!(!rendered(&error).contains("hunter2"), "{error}");
    }
}

// ---------------------------------------------------------------------------------------------
// Item 9: overflow-free waiting.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_09_waiting_without_end_cannot_overflow() {
    let server = MockServer::start().await;
    let mut session = session_json(session_id());
    session["customerProgressStatus"] = json!("COMPLETED_BY_CUSTOMER");
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(ResponseTemplate::new(200).set_body_json(session))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let session = client
        .wait_for_customer(
            session_id(),
            WaitOptions::default()
                .timeout(Duration::MAX)
                .initial_interval(Duration::MAX),
        )
        .await
        .unwrap();
    assert_eq!(
        session.customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
}

// ---------------------------------------------------------------------------------------------
// Item 10: saved file names cannot deceive.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_10_saved_file_names_cannot_deceive() {
    let server = MockServer::start().await;
    // "invoice" RIGHT-TO-LEFT OVERRIDE "fdp.exe" displays as "invoiceexe.pdf"; the isolates,
    // the zero-width characters and the soft hyphen are invisible.
    let disposition = "attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe%E2%81%A6%E2%81%A9\
                       %E2%80%8B%E2%80%8C%E2%80%8D%EF%BB%BF%C2%AD%E2%81%A0";
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-disposition", disposition)
                .set_body_raw("MZ", "application/octet-stream"),
        )
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let download = client
        .get_attachment_content()
        .session_id(session_id())
        .attachment_id("A1")
        .download()
        .await
        .unwrap();
    assert_eq!(download.file_name(), Some("invoicefdp.exe"));

    let dir = tempfile::tempdir().unwrap();
    let saved = download.save_in(dir.path(), "fallback").await.unwrap();
    assert_eq!(saved.path, dir.path().join("invoicefdp.exe"));

    for (hostile, expected) in [
        ("report\u{202E}fdp.exe", Some("reportfdp.exe")),
        ("a\u{2066}b\u{2067}c\u{2068}d\u{2069}.pdf", Some("abcd.pdf")),
        ("\u{202A}\u{202B}\u{202C}\u{202D}", None),
        ("x\u{200E}\u{200F}\u{061C}.txt", Some("x.txt")),
        ("name\u{2028}line.txt", Some("name_line.txt")),
        ("\u{200B}.hidden", Some("hidden")),
        ("tag\u{E0041}.txt", Some("tag.txt")),
    ] {
        assert_eq!(
            creditdata_client::download::sanitize_file_name(hostile).as_deref(),
            expected,
            "{hostile:?}"
        );
    }
}
