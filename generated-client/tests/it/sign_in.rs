//! People sign in (issue 9, item 1): the Authorization Code flow with PKCE against the
//! in-process mock's identity provider, its pages driven over HTTP as a browser would (a
//! cookie jar, redirects read from `Location`); API calls as the signed-in person; refresh,
//! rotation, revocation and sign-out; hostile requests on the loopback port. ID tokens a hostile identity provider gets wrong are
//! `sign_in_hostile_provider.rs`.

#![cfg(feature = "sign-in")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use creditdata_client::auth::AuthErrorKind;
use creditdata_client::sign_in::{
    AuthorizationErrorKind, IdentityProvider, MemoryTokenStore, PendingSignIn, SignIn, SignInError,
    SignInOptions, StoredSignIn, TokenStore, TokenStoreError, sign_out,
};
use creditdata_client::{Client, Error};
use creditdata_mock::{MockConfig, MockServer};
use reqwest::StatusCode;
use secrecy::{ExposeSecret, SecretString};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{create_request, session_id};

const USER_NAME: &str = "Lena Loan Officer";

pub(crate) async fn start_mock() -> MockServer {
    MockServer::start(MockConfig::immediate())
        .await
        .expect("mock starts")
}

pub(crate) fn provider_of(mock: &MockServer) -> IdentityProvider {
    IdentityProvider::new(mock.issuer(), mock.public_client_id()).expect("provider")
}

/// A browser: keeps cookies, follows no redirect (each is read from `Location`).
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("browser")
}

/// The value of the hidden input `name` in `html`.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).expect("hidden field") + marker.len();
    let end = html[start..].find('"').expect("end of value");
    html[start..start + end].to_string()
}

/// Signs `lena` in on the mock's pages and answers the consent question with `decision`;
/// where the identity provider sends the browser (the loopback redirect URI).
async fn sign_in_at_the_pages(
    browser: &reqwest::Client,
    mock: &MockServer,
    url: &str,
    decision: &str,
) -> String {
    let page = browser.get(url).send().await.expect("authorization page");
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    let request = hidden(&html, "request");
    let csrf = hidden(&html, "csrf_token");
    let consent = browser
        .post(format!("{}/login-actions/authenticate", mock.issuer()))
        .form(&[
            ("request", request.as_str()),
            ("csrf_token", &csrf),
            ("username", "lena"),
            ("password", "lena-password"),
        ])
        .send()
        .await
        .expect("sign-in form");
    assert_eq!(consent.status(), StatusCode::OK);
    let html = consent.text().await.expect("consent page");
    let csrf = hidden(&html, "csrf_token");
    let answer = browser
        .post(format!("{}/login-actions/consent", mock.issuer()))
        .form(&[
            ("request", request.as_str()),
            ("csrf_token", &csrf),
            ("decision", decision),
        ])
        .send()
        .await
        .expect("consent form");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    answer
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .expect("ascii")
        .to_string()
}

/// The browser's whole part: the pages, then the redirect to the application; the page the
/// application answered with (status and HTML).
pub(crate) async fn browse(mock: &MockServer, url: String, decision: &str) -> (StatusCode, String) {
    let browser = browser();
    let location = sign_in_at_the_pages(&browser, mock, &url, decision).await;
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    let page = browser
        .get(&location)
        .send()
        .await
        .expect("loopback redirect");
    let status = page.status();
    (status, page.text().await.expect("page"))
}

/// The value of the query parameter `name` of `url`, decoded.
pub(crate) fn query_parameter(url: &reqwest::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A sign-in with the default options, started.
pub(crate) async fn started(provider: &IdentityProvider) -> PendingSignIn {
    SignIn::start(provider, SignInOptions::default())
        .await
        .expect("sign-in starts")
}

/// Lena, signed in through the whole flow.
pub(crate) async fn signed_in(mock: &MockServer, provider: &IdentityProvider) -> StoredSignIn {
    let pending = started(provider).await;
    let url = pending.authorization_url().to_string();
    let (signed_in, (status, _)) = tokio::join!(pending.finish(), browse(mock, url, "approve"));
    assert_eq!(status, StatusCode::OK);
    signed_in.expect("signed in")
}

/// A store that counts its saves.
#[derive(Default)]
struct CountingStore {
    inner: MemoryTokenStore,
    saves: AtomicUsize,
}

impl CountingStore {
    /// A store holding `signed_in`, its saves counted from zero.
    fn holding(signed_in: &StoredSignIn) -> Arc<CountingStore> {
        let store = Arc::new(CountingStore::default());
        store.inner.save(signed_in).unwrap();
        store
    }
}

impl TokenStore for CountingStore {
    fn load(&self) -> Result<Option<StoredSignIn>, TokenStoreError> {
        self.inner.load()
    }
    fn save(&self, signed_in: &StoredSignIn) -> Result<(), TokenStoreError> {
        self.saves.fetch_add(1, Ordering::SeqCst);
        self.inner.save(signed_in)
    }
    fn clear(&self) -> Result<(), TokenStoreError> {
        self.inner.clear()
    }
}

fn secret(value: &Option<SecretString>) -> String {
    value.as_ref().expect("present").expose_secret().to_string()
}

fn signed_in_client(
    mock: &MockServer,
    store: Arc<dyn TokenStore>,
    provider: IdentityProvider,
) -> Client {
    Client::builder()
        .base_url(mock.base_url())
        .signed_in(store, provider)
        .build()
        .expect("client")
}

pub(crate) fn auth_kind(error: &Error) -> Option<AuthErrorKind> {
    match error {
        Error::Auth { source, .. } => Some(source.kind.clone()),
        _ => None,
    }
}

#[tokio::test]
async fn a_person_signs_in_and_the_sessions_she_creates_name_her() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let pending = started(&provider).await;
    let url = pending.authorization_url().clone();
    let parameter = |name: &str| query_parameter(&url, name);
    assert_eq!(
        parameter("redirect_uri").as_deref(),
        Some(pending.redirect_uri())
    );
    assert!(pending.redirect_uri().starts_with("http://127.0.0.1:"));
    assert!(pending.redirect_uri().ends_with("/callback"));
    assert_eq!(parameter("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(parameter("response_type").as_deref(), Some("code"));
    assert!(
        parameter("nonce").is_some_and(|n| n.len() >= 43),
        "a 256-bit nonce"
    );
    assert!(
        parameter("state").is_some_and(|s| s.len() >= 22),
        "a 128-bit state"
    );
    assert!(!format!("{pending:?}").contains(&parameter("state").unwrap()));

    let (signed_in, (status, page)) =
        tokio::join!(pending.finish(), browse(&mock, url.to_string(), "approve"));
    let signed_in = signed_in.expect("signed in");
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("You are signed in"), "{page}");
    assert_eq!(signed_in.user().display_name(), USER_NAME);
    assert_eq!(signed_in.user().username.as_deref(), Some("lena"));
    assert_eq!(signed_in.issuer, mock.issuer());
    assert!(signed_in.scopes.iter().any(|s| s == "openid"));
    assert!(signed_in.access_token_valid_for().is_some());
    for token in [
        &signed_in.access_token,
        &signed_in.refresh_token,
        &signed_in.id_token,
    ] {
        let token = secret(token);
        assert!(!page.contains(&token), "the page shows no token");
        assert!(
            !format!("{signed_in:?}").contains(&token),
            "Debug shows no token"
        );
    }
    assert!(
        !format!("{signed_in:?}").contains(USER_NAME),
        "Debug shows no name"
    );

    let store = Arc::new(MemoryTokenStore::with(signed_in));
    let client = signed_in_client(&mock, store, provider);
    creates_as_lena(&client, "a session created as Lena").await;
    mock.shutdown().await;
}

/// A hostile local process (or a web page making the browser send requests) on the port.
async fn raw_request(port: u16, bytes: &[u8]) -> String {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    socket.write_all(bytes).await.expect("write");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(15), socket.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn hostile_requests_on_the_loopback_port_neither_end_nor_spoil_the_sign_in() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let pending = started(&provider).await;
    let url = pending.authorization_url().to_string();
    let port: u16 = pending
        .redirect_uri()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .expect("port");
    let finish = tokio::spawn(pending.finish());

    // A connection that sends nothing, held open for the whole test (slowloris).
    let _silent = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let oversized = format!(
        "GET /callback?state={} HTTP/1.1\r\n\r\n",
        "x".repeat(10_000)
    );
    let attacks: Vec<(&str, Vec<u8>)> = vec![
        (
            "a forged state with the attacker's code",
            b"GET /callback?code=attacker-code&state=guessed HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                .to_vec(),
        ),
        (
            "no state",
            b"GET /callback?code=attacker-code HTTP/1.1\r\n\r\n".to_vec(),
        ),
        (
            "an error without state",
            b"GET /callback?error=access_denied HTTP/1.1\r\n\r\n".to_vec(),
        ),
        (
            "another path",
            b"GET /favicon.ico HTTP/1.1\r\n\r\n".to_vec(),
        ),
        (
            "a POST",
            b"POST /callback?code=c&state=s HTTP/1.1\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ),
        (
            "garbage",
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec(),
        ),
        ("an oversized head", oversized.into_bytes()),
    ];
    for (what, bytes) in &attacks {
        let answer = raw_request(port, bytes).await;
        assert!(answer.starts_with("HTTP/1.1 400 "), "{what}: {answer}");
        assert!(!answer.contains("<script"), "{what}");
        assert!(!finish.is_finished(), "{what} ended the sign-in");
    }
    // A flood of connections at once does not stop the real redirect either.
    let flood: Vec<_> = (0..40)
        .map(|_| {
            tokio::spawn(raw_request(
                port,
                b"GET /callback?state=nope HTTP/1.1\r\n\r\n",
            ))
        })
        .collect();
    for attack in flood {
        let _ = attack.await;
    }

    let (status, page) = browse(&mock, url, "approve").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let signed_in = finish
        .await
        .expect("task")
        .expect("the real sign-in completes");
    assert_eq!(signed_in.user().display_name(), USER_NAME);
    mock.shutdown().await;
}

#[tokio::test]
async fn a_denied_consent_is_a_typed_error_shown_to_the_browser() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let pending = started(&provider).await;
    let url = pending.authorization_url().to_string();
    let (outcome, (status, page)) = tokio::join!(pending.finish(), browse(&mock, url, "deny"));
    match outcome {
        Err(SignInError::Authorization { kind, .. }) => {
            assert_eq!(kind, AuthorizationErrorKind::AccessDenied)
        }
        other => panic!("expected access_denied, got {other:?}"),
    }
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(page.contains("access_denied"), "{page}");
    mock.shutdown().await;
}

#[tokio::test]
async fn prompt_none_without_a_browser_session_is_login_required() {
    let mock = start_mock().await;
    let options = SignInOptions {
        prompt: Some("none".into()),
        ..SignInOptions::default()
    };
    let pending = SignIn::start(&provider_of(&mock), options)
        .await
        .expect("starts");
    let url = pending.authorization_url().to_string();
    let browse = async {
        let browser = browser();
        let answer = browser.get(&url).send().await.expect("authorize");
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        let location = answer.headers()["location"].to_str().unwrap().to_string();
        browser
            .get(&location)
            .send()
            .await
            .expect("redirect")
            .status()
    };
    let (outcome, status) = tokio::join!(pending.finish(), browse);
    match outcome {
        Err(SignInError::Authorization { kind, .. }) => {
            assert_eq!(kind, AuthorizationErrorKind::LoginRequired)
        }
        other => panic!("expected login_required, got {other:?}"),
    }
    assert_eq!(status, StatusCode::BAD_REQUEST);
    mock.shutdown().await;
}

/// Signing in, a refresh and signing out log nothing a reader of the logs must not see: no
/// token, code, state or nonce, and not the person's name.
#[tokio::test(flavor = "current_thread")]
async fn signing_in_refreshing_and_signing_out_log_no_token_and_no_name() {
    let captured = crate::support::Captured::default();
    let _guard = tracing::subscriber::set_default(crate::support::capturing_subscriber(
        &captured,
        "creditdata_client=trace",
    ));
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let pending = started(&provider).await;
    let url = pending.authorization_url().clone();
    let port = pending
        .redirect_uri()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .to_string();
    let hostile = raw_request(
        port.parse().unwrap(),
        b"GET /callback?state=wrong&code=c HTTP/1.1\r\n\r\n",
    );
    let (signed_in, (status, _), _) = tokio::join!(
        pending.finish(),
        browse(&mock, url.to_string(), "approve"),
        hostile
    );
    assert_eq!(status, StatusCode::OK);
    let signed_in = signed_in.expect("signed in");
    let store = Arc::new(MemoryTokenStore::with(expired(signed_in.clone())));
    let client = signed_in_client(&mock, store.clone(), provider.clone());
    client
        .create_session()
        .body(create_request())
        .call()
        .await
        .expect("created");
    let refreshed = store.load().unwrap().unwrap();
    sign_out(&provider, &refreshed).await.expect("signed out");
    let error = client
        .get_sessions()
        .call()
        .await
        .expect_err("the access token is revoked");
    assert_eq!(
        auth_kind(&error),
        Some(AuthErrorKind::SignInRequired),
        "{error:?}"
    );

    let logs = captured.text();
    assert!(
        logs.contains("creditdata.call"),
        "the calls were logged: {logs}"
    );
    let parameter = |name: &str| query_parameter(&url, name).unwrap();
    let mut never = vec![
        USER_NAME.to_string(),
        "lena@lender.example".to_string(),
        parameter("state"),
        parameter("nonce"),
        parameter("code_challenge"),
    ];
    for stored in [&signed_in, &refreshed] {
        for token in [
            &stored.access_token,
            &stored.refresh_token,
            &stored.id_token,
        ] {
            never.push(secret(token));
        }
    }
    for hidden in never {
        assert!(
            !logs.contains(&hidden),
            "the logs show a secret or personal data"
        );
    }
    mock.shutdown().await;
}

#[tokio::test]
async fn a_sign_in_nobody_finishes_times_out() {
    let mock = start_mock().await;
    let options = SignInOptions {
        timeout: Duration::from_millis(200),
        ..SignInOptions::default()
    };
    let pending = SignIn::start(&provider_of(&mock), options)
        .await
        .expect("starts");
    match pending.finish().await {
        Err(error @ SignInError::TimedOut(_)) => {
            assert!(error.to_string().contains("no sign-in arrived"), "{error}")
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    mock.shutdown().await;
}

/// `signed_in` with its access token expired: the next call must refresh.
fn expired(mut signed_in: StoredSignIn) -> StoredSignIn {
    signed_in.access_token_expires_at = Some(SystemTime::now() - Duration::from_secs(1));
    signed_in
}

/// Asserts that `client` creates a session in Lena's name; `what` says why it should.
async fn creates_as_lena(client: &Client, what: &str) {
    let session = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .expect(what);
    assert_eq!(session.created_by_name.as_deref(), Some(USER_NAME));
}

/// A mock, its identity provider, and Lena signed in there.
async fn lena_signed_in() -> (MockServer, IdentityProvider, StoredSignIn) {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let signed_in = signed_in(&mock, &provider).await;
    (mock, provider, signed_in)
}

/// Lena signed in, and her sign-in kept with its access token expired.
async fn signed_in_and_expired() -> (
    MockServer,
    IdentityProvider,
    StoredSignIn,
    Arc<CountingStore>,
) {
    let (mock, provider, original) = lena_signed_in().await;
    let store = CountingStore::holding(&expired(original.clone()));
    (mock, provider, original, store)
}

/// The sign-in kept after exactly one save (`why` says why one), with `original`'s refresh
/// token rotated.
fn refreshed_once_and_rotated(
    store: &CountingStore,
    original: &StoredSignIn,
    why: &str,
) -> StoredSignIn {
    assert_eq!(store.saves.load(Ordering::SeqCst), 1, "{why}");
    let kept = store.load().unwrap().expect("kept");
    assert_ne!(
        secret(&kept.refresh_token),
        secret(&original.refresh_token),
        "the rotated refresh token was saved"
    );
    kept
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_once_for_many_calls_and_the_rotation_saved() {
    let (mock, provider, original, store) = signed_in_and_expired().await;
    let client = signed_in_client(&mock, store.clone(), provider.clone());
    let created = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .expect("created");
    store.saves.store(0, Ordering::SeqCst);
    store
        .inner
        .save(&expired(store.inner.load().unwrap().unwrap()))
        .unwrap();
    let client = signed_in_client(&mock, store.clone(), provider);

    let calls: Vec<_> = (0..25)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.get_session().session_id(created.id).call().await })
        })
        .collect();
    for call in calls {
        let session = call.await.expect("task").expect("every call succeeds");
        assert_eq!(session.created_by_name.as_deref(), Some(USER_NAME));
    }
    let kept = refreshed_once_and_rotated(&store, &original, "one refresh for 25 waiting calls");
    assert!(
        kept.access_token_valid_for()
            .is_some_and(|left| left > Duration::from_secs(60))
    );
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_token_refreshes_an_expired_token_once_for_many_callers_without_calling_the_service()
{
    let (mock, provider, original, store) = signed_in_and_expired().await;
    // The service is elsewhere, and counts what reaches it: nothing should.
    let api = crate::support::MockServer::start().await;
    let client = Client::builder()
        .base_url(api.uri())
        .signed_in(store.clone(), provider)
        .build()
        .expect("client");

    let callers: Vec<_> = (0..25)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.access_token().await })
        })
        .collect();
    let mut tokens = Vec::new();
    for caller in callers {
        let token = caller.await.expect("task").expect("a token");
        tokens.push(token.expose_secret().to_string());
    }
    assert!(
        tokens.iter().all(|t| *t == tokens[0]),
        "every caller has the one refreshed token"
    );
    assert_ne!(tokens[0], secret(&original.access_token), "refreshed");
    let kept = refreshed_once_and_rotated(&store, &original, "one refresh for 25 callers");
    assert_eq!(
        secret(&kept.access_token),
        tokens[0],
        "the new token is kept"
    );
    // Fresh now: asking again refreshes nothing.
    let again = client.access_token().await.expect("a token");
    assert_eq!(again.expose_secret(), tokens[0]);
    assert_eq!(store.saves.load(Ordering::SeqCst), 1);
    assert!(
        api.received_requests().await.unwrap_or_default().is_empty(),
        "no request reached the service"
    );

    // The token is Lena's: the service accepts it on its own.
    let with_the_token = Client::builder()
        .base_url(mock.base_url())
        .bearer_token(tokens[0].clone())
        .build()
        .expect("client");
    creates_as_lena(&with_the_token, "created with the token").await;
    mock.shutdown().await;
}

#[tokio::test]
async fn a_401_from_the_service_triggers_one_refresh_not_a_loop() {
    let (mock, provider, signed_in) = lena_signed_in().await;
    // The access token is revoked behind the client's back; the refresh token still works.
    let revoked = reqwest::Client::new()
        .post(format!("{}/protocol/openid-connect/revoke", mock.issuer()))
        .form(&[
            ("token", secret(&signed_in.access_token).as_str()),
            ("token_type_hint", "access_token"),
            ("client_id", mock.public_client_id()),
        ])
        .send()
        .await
        .expect("revoke");
    assert_eq!(revoked.status(), StatusCode::OK);
    let store = CountingStore::holding(&signed_in);
    let client = signed_in_client(&mock, store.clone(), provider);
    creates_as_lena(&client, "refreshed once after the 401, then created").await;
    assert_eq!(store.saves.load(Ordering::SeqCst), 1);
    mock.shutdown().await;
}

#[tokio::test]
async fn signing_out_revokes_the_refresh_token_and_calls_then_need_a_new_sign_in() {
    let (mock, provider, signed_in) = lena_signed_in().await;
    sign_out(&provider, &signed_in).await.expect("signed out");

    // The identity provider refuses the refresh token from now on.
    let refreshed = reqwest::Client::new()
        .post(mock.token_url())
        .form(&[
            ("grant_type", "refresh_token"),
            ("client_id", mock.public_client_id()),
            ("refresh_token", secret(&signed_in.refresh_token).as_str()),
        ])
        .send()
        .await
        .expect("refresh");
    assert_eq!(refreshed.status(), StatusCode::BAD_REQUEST);
    let body: Value = refreshed.json().await.expect("json");
    assert_eq!(body["error"], "invalid_grant");

    let store = CountingStore::holding(&expired(signed_in));
    let client = signed_in_client(&mock, store.clone(), provider);
    for _ in 0..3 {
        let error = client
            .get_session()
            .session_id(session_id())
            .call()
            .await
            .expect_err("signed out");
        assert_eq!(
            auth_kind(&error),
            Some(AuthErrorKind::SignInRequired),
            "{error:?}"
        );
        assert!(format!("{:#}", anyhow::Error::new(error)).contains("creditdata login"));
    }
    assert_eq!(store.saves.load(Ordering::SeqCst), 0);
    mock.shutdown().await;
}

#[tokio::test]
async fn no_sign_in_in_the_store_is_sign_in_required() {
    let mock = start_mock().await;
    let client = signed_in_client(
        &mock,
        Arc::new(MemoryTokenStore::default()),
        provider_of(&mock),
    );
    let error = client
        .get_sessions()
        .call()
        .await
        .expect_err("nobody signed in");
    assert_eq!(auth_kind(&error), Some(AuthErrorKind::SignInRequired));
    mock.shutdown().await;
}
