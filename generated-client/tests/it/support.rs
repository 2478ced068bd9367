//! Shared pieces of the runtime tests (auth, retries, errors, config, redaction): loopback
//! servers, realistic bodies, request counting and tracing capture.

#![allow(dead_code)]

use std::future::Future;
use std::io;
use std::ops::Deref;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use creditdata_client::retry::RetryPolicy;
use creditdata_client::{Client, ClientBuilder, Error};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// wiremock's loopback server, ended so that it cannot hang: every test starts its server
/// through this, never through `wiremock::MockServer` itself (`clippy.toml` refuses that).
///
/// wiremock verifies a server's expectations in `Drop`, blocking on tokio's `RwLock` with
/// `futures::executor::block_on`. Dropped by a task that has spent tokio's cooperative budget
/// (1,000 ready `JoinHandle`s awaited in a row do), that lock answers `Pending` and wakes the
/// waiter at once, for ever: the budget is refilled only when the task yields to its runtime,
/// which a blocking wait never does (issue 28: a test spun at 100 % CPU for 15 minutes after its
/// assertions passed). This drops the server with the budget lifted
/// (`tokio::task::coop::unconstrained`), so the verification runs to its end as it would
/// outside a runtime, and unmet expectations still fail the test with wiremock's message.
pub struct MockServer(Option<wiremock::MockServer>);

impl MockServer {
    /// A server on `127.0.0.1`, on a port of its own (wiremock's pool).
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place a server starts: its Drop is this type's"
    )]
    pub async fn start() -> MockServer {
        MockServer(Some(wiremock::MockServer::start().await))
    }

    /// A server built as `builder` says (a given listener, say).
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place a built server starts: its Drop is this type's"
    )]
    pub async fn start_from(builder: wiremock::MockServerBuilder) -> MockServer {
        MockServer(Some(builder.start().await))
    }
}

impl Deref for MockServer {
    type Target = wiremock::MockServer;

    fn deref(&self) -> &wiremock::MockServer {
        self.0.as_ref().expect("the server is taken only by Drop")
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let Some(server) = self.0.take() else { return };
        // The async block has no await: its first poll drops the server (and runs wiremock's
        // verification) under an unconstrained budget, and completes. No waker is needed.
        let mut ending = pin!(tokio::task::coop::unconstrained(
            async move { drop(server) }
        ));
        let ended = ending
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()));
        debug_assert!(
            ended.is_ready(),
            "an async block without await completes at once"
        );
    }
}

/// The token endpoint path of a Keycloak-style issuer.
pub const TOKEN_PATH: &str = "/realms/consumer/protocol/openid-connect/token";

/// A session id used throughout.
pub fn session_id() -> Uuid {
    Uuid::parse_str("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e").unwrap()
}

/// A Session as the service returns it (with whatever else the description requires of one:
/// [`creditdata_mock::as_described`]).
pub fn session_json(id: Uuid) -> Value {
    creditdata_mock::as_described(
        "Session",
        json!({
            "id": id,
            "createdAtUtc": "2026-03-04T09:15:27.123+00:00",
            "createdByName": "Integration User",
            "organizationalUnitName": null,
            "subjectEmail": "jane.doe@example.com",
            "subjectFullName": "",
            "customerInputDeadlineUtc": "2026-03-11T09:15:27.123+00:00",
            "customerProgressStatus": "WAITING_FOR_CUSTOMER",
            "queryParameters": [
                { "countryCode": "GBR", "dataPackages": ["CREDIT_HISTORY", "SCORE", "BANK_ACCOUNT_CATEGORIZATION", "IDENTIFICATION"] }
            ],
            "customerInputDeadlineExtendableUntilUtc": null,
            "dataPackageUpgradableUntilUtc": null
        }),
    )
}

/// A create-session body.
pub fn create_request() -> creditdata_client::types::CreateSessionRequest {
    serde_json::from_value(json!({
        "subjectEmail": "jane.doe@example.com",
        "queryParameters": [{ "countryCode": "GBR", "dataPackages": ["SCORE"] }]
    }))
    .unwrap()
}

/// A successful token response.
pub fn token_response(token: &str, expires_in: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "access_token": token,
        "expires_in": expires_in,
        "token_type": "Bearer",
        "scope": "openid"
    }))
}

/// An OAuth2 error response.
pub fn token_error(status: u16, code: &str, description: &str) -> ResponseTemplate {
    ResponseTemplate::new(status)
        .set_body_json(json!({ "error": code, "error_description": description }))
}

/// The path of the session resource.
pub fn session_path(id: Uuid) -> String {
    format!("/v1/sessions/{id}")
}

/// Answers `GET /v1/sessions/{id}` with the session, whatever the token.
pub async fn mount_session(server: &MockServer, id: Uuid) {
    Mock::given(method("GET"))
        .and(path(session_path(id)))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(id)))
        .mount(server)
        .await;
}

/// An error and its causes as anyhow's `{:#}` prints them (`error: cause: cause`): everything a
/// user of the error can see. Checks that something is never shown look here, not at `Display`
/// alone.
pub fn rendered<E>(error: &E) -> String
where
    E: std::error::Error + Clone + Send + Sync + 'static,
{
    format!("{:#}", anyhow::Error::new(error.clone()))
}

/// Asserts that anyhow's `{:#}` shows every error of `error`'s chain exactly once: no message
/// repeats its cause.
pub fn assert_each_cause_once(error: &creditdata_client::Error) {
    let shown = rendered(error);
    let mut cause: Option<&dyn std::error::Error> = Some(error);
    let mut depth = 0;
    while let Some(current) = cause {
        let text = current.to_string();
        assert_eq!(
            shown.matches(text.as_str()).count(),
            1,
            "cause {depth} ({text:?}) is not shown exactly once in {shown:?}"
        );
        cause = current.source();
        depth += 1;
    }
}

/// A retry policy that keeps tests fast: tiny backoffs, a few attempts.
pub fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff: Duration::from_millis(2),
        max_backoff: Duration::from_secs(5),
        max_elapsed: Duration::from_secs(30),
    }
}

/// A builder for `server` with fast retries and no credentials.
pub fn builder(server: &MockServer) -> ClientBuilder {
    Client::builder()
        .base_url(server.uri())
        .retry_policy(fast_retries(3))
}

/// A builder for `server` whose tokens come from `server`'s token endpoint.
pub fn oauth_builder(server: &MockServer) -> ClientBuilder {
    builder(server).client_credentials(
        format!("{}{TOKEN_PATH}", server.uri()),
        "creditdata-client-test",
        "client-secret-value",
    )
}

/// Reads the test session (`session_id()`), which must succeed; the session.
pub async fn session(client: &Client) -> creditdata_client::types::Session {
    client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap()
}

/// Reads the test session (`session_id()`), which must fail; the error.
pub async fn session_error(client: &Client) -> Error {
    client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err()
}

/// How many requests `server` received with this method and path.
pub async fn count(server: &MockServer, http_method: &str, request_path: &str) -> usize {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == http_method && r.url.path() == request_path)
        .count()
}

/// A writer that keeps everything written to it, for capturing `tracing` output.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A subscriber writing every event of this crate (and spans' fields) at `DEBUG` and above
/// into `captured`.
pub fn capturing_subscriber(
    captured: &Captured,
    filter: &str,
) -> impl tracing::Subscriber + Send + Sync {
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .finish()
}

/// The token endpoint answers `first` once, then `then` to every later request.
pub async fn mount_token_endpoint_answering(
    server: &MockServer,
    first: ResponseTemplate,
    then: ResponseTemplate,
) {
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(then)
        .with_priority(2)
        .mount(server)
        .await;
}

/// A client of the service at `base_url` with a static token and no retries: one request per
/// call, so a test sees exactly what the server answered.
pub fn plain_client(base_url: &str) -> Client {
    Client::builder()
        .base_url(base_url)
        .bearer_token("t")
        .no_retries()
        .build()
        .unwrap()
}

/// Sends `request` as `meta`'s call through the client's one door (`runtime::send`, where every
/// generated `send_with()` ends), its success body left unread: what tests of every operation
/// of the metadata use.
pub async fn through_the_door(
    client: &Client,
    meta: &'static creditdata_client::operation::OperationMeta,
    request: reqwest::Request,
    options: Option<creditdata_client::call_options::CallOptions>,
) -> Result<
    creditdata_client::call_options::CallResponse<creditdata_client::ByteStream>,
    creditdata_client::Error,
> {
    use progenitor_client::ClientInfo;
    // No build step: the door copies the request for another attempt, as it does for a
    // request it cannot build again.
    type NoBuild = fn() -> Result<reqwest::Request, creditdata_client::Error>;
    creditdata_client::runtime::send::<creditdata_client::runtime::Streamed, NoBuild>(
        client.client(),
        client.inner(),
        meta,
        &[200..=299],
        Ok((request, None)),
        options.map(Box::new),
    )
    .await
}
