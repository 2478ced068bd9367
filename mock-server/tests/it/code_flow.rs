//! The identity provider's Authorization Code flow (issue 9, item 3), driven over HTTP as a
//! browser and a native application would: the sign-in page with a cookie-aware client that
//! does not follow redirects (the redirect to the application is read from `Location`), then
//! the token, refresh, revocation and logout endpoints as the application calls them.

use crate::common;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use creditdata_mock::config::TestUser;
use creditdata_mock::{MockConfig, MockServer};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// Where the tests' native application listens (nothing needs to: redirects are not followed).
const REDIRECT_URI: &str = "http://127.0.0.1:49152/callback";

fn config() -> MockConfig {
    common::quick_config()
}

async fn start(config: MockConfig) -> MockServer {
    MockServer::start(config).await.expect("mock starts")
}

/// A browser: keeps cookies, does not follow redirects.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = URL_SAFE_NO_PAD.encode(rand_bytes());
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

fn rand_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for (i, byte) in uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .chain(uuid::Uuid::new_v4().as_bytes())
        .enumerate()
    {
        bytes[i] = *byte;
    }
    bytes
}

/// The authorization URL for `params` (a `None` value leaves the parameter out).
fn authorization_url(mock: &MockServer, params: &[(&str, Option<&str>)]) -> String {
    let mut url =
        url::Url::parse(&format!("{}/protocol/openid-connect/auth", mock.issuer())).expect("url");
    for (name, value) in params {
        if let Some(value) = value {
            url.query_pairs_mut().append_pair(name, value);
        }
    }
    url.into()
}

/// The usual parameters of the public client's request.
fn request_params<'a>(mock: &'a MockServer, challenge: &'a str) -> Vec<(&'a str, Option<&'a str>)> {
    vec![
        ("response_type", Some("code")),
        ("client_id", Some(mock.public_client_id())),
        ("redirect_uri", Some(REDIRECT_URI)),
        ("scope", Some("openid profile email")),
        ("state", Some("state-123")),
        ("nonce", Some("nonce-456")),
        ("code_challenge", Some(challenge)),
        ("code_challenge_method", Some("S256")),
    ]
}

/// The value of the hidden input `name` in `html`.
fn hidden(html: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker)? + marker.len();
    let end = html[start..].find('"')?;
    Some(html[start..start + end].to_owned())
}

/// The query parameters of a redirect's `Location`, which must go to [`REDIRECT_URI`].
fn redirect_params(response: &reqwest::Response) -> Vec<(String, String)> {
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "a redirect");
    let location = response
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .expect("ascii");
    assert!(
        location.starts_with(&format!("{REDIRECT_URI}?")),
        "back to the application: {location}"
    );
    url::Url::parse(location)
        .expect("url")
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn get<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// Opens the authorization URL; the sign-in page's HTML and its form's hidden fields.
async fn open_sign_in(browser: &reqwest::Client, url: &str) -> (String, String, String) {
    let response = browser.get(url).send().await.expect("authorize");
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.expect("html");
    let request = hidden(&html, "request").expect("request field");
    let csrf = hidden(&html, "csrf_token").expect("csrf field");
    (html, request, csrf)
}

async fn post_form(
    browser: &reqwest::Client,
    mock: &MockServer,
    action: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    browser
        .post(format!("{}/login-actions/{action}", mock.issuer()))
        .form(form)
        .send()
        .await
        .expect("form post")
}

/// Signs `username` in on the page at `url` and answers the consent question; the response
/// (a redirect to the application).
async fn sign_in_and_answer(
    browser: &reqwest::Client,
    mock: &MockServer,
    url: &str,
    username: &str,
    password: &str,
    decision: &str,
) -> reqwest::Response {
    let (_, request, csrf) = open_sign_in(browser, url).await;
    let consent = post_form(
        browser,
        mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", username),
            ("password", password),
        ],
    )
    .await;
    assert_eq!(consent.status(), StatusCode::OK);
    let html = consent.text().await.expect("consent html");
    assert!(html.contains("Allow access?"), "the consent page: {html}");
    let csrf = hidden(&html, "csrf_token").expect("consent csrf");
    post_form(
        browser,
        mock,
        "consent",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("decision", decision),
        ],
    )
    .await
}

/// The default user's code for the public client, with its PKCE verifier.
async fn code_for_default_user(mock: &MockServer) -> (String, String) {
    let (verifier, challenge) = pkce();
    let url = authorization_url(mock, &request_params(mock, &challenge));
    let response =
        sign_in_and_answer(&browser(), mock, &url, "lena", "lena-password", "approve").await;
    let params = redirect_params(&response);
    (get(&params, "code").expect("code").to_owned(), verifier)
}

async fn token_request(mock: &MockServer, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .post(mock.token_url())
        .form(form)
        .send()
        .await
        .expect("token request");
    let status = response.status();
    assert_eq!(
        response
            .headers()
            .get("cache-control")
            .map(|v| v.to_str().unwrap_or_default()),
        Some("no-store"),
        "token responses are never cached"
    );
    (status, response.json().await.expect("json"))
}

async fn exchange(mock: &MockServer, code: &str, verifier: &str) -> (StatusCode, Value) {
    token_request(
        mock,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", mock.public_client_id()),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", verifier),
        ],
    )
    .await
}

async fn refresh(mock: &MockServer, refresh_token: &str) -> (StatusCode, Value) {
    token_request(
        mock,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", mock.public_client_id()),
            ("refresh_token", refresh_token),
        ],
    )
    .await
}

/// Signs the default user in through the whole flow; the token response.
async fn signed_in(mock: &MockServer) -> Value {
    let (code, verifier) = code_for_default_user(mock).await;
    let (status, tokens) = exchange(mock, &code, &verifier).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

/// The string member `name`; a failure names the members present, never their values (they
/// may be tokens).
fn string<'a>(value: &'a Value, name: &str) -> &'a str {
    value[name].as_str().unwrap_or_else(|| {
        let members: Vec<&String> = value
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        panic!("no string {name}; the members are {members:?}")
    })
}

fn jwt_claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("payload");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).expect("base64url")).expect("json")
}

/// `GET /v1/consumer/packages` with `token`: the status.
async fn api_status(mock: &MockServer, token: &str) -> StatusCode {
    reqwest::Client::new()
        .get(format!("{}/v1/consumer/packages", mock.base_url()))
        .bearer_auth(token)
        .send()
        .await
        .expect("api")
        .status()
}

async fn create_session(mock: &MockServer, token: &str) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/v1/sessions", mock.base_url()))
        .bearer_auth(token)
        .json(&json!({
            "subjectEmail": "jane.doe@example.com",
            "queryParameters": [{ "countryCode": "GBR", "dataPackages": ["SCORE"] }],
        }))
        .send()
        .await
        .expect("create");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

#[tokio::test]
async fn the_whole_flow_signs_a_person_in_and_names_them_as_the_sessions_creator() {
    let mock = start(config()).await;
    let browser = browser();
    let (verifier, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));

    // The sign-in page: real HTML, not framable, nothing loaded from elsewhere, a cookie.
    let response = browser.get(&url).send().await.expect("authorize");
    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().expect("ascii").to_owned())
            .unwrap_or_default()
    };
    assert!(header("content-type").starts_with("text/html"));
    let policy = header("content-security-policy");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert_eq!(header("x-frame-options"), "DENY");
    assert_eq!(header("cache-control"), "no-store");
    let cookie = header("set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let html = response.text().await.expect("html");
    assert!(html.contains("<form method=\"post\""), "{html}");
    assert!(html.contains("type=\"password\""));
    assert!(html.contains(mock.public_client_id()));
    for external in ["src=", "href=\"http", "url(", "@import"] {
        assert!(
            !html.contains(external),
            "no external resource ({external}): {html}"
        );
    }

    // Sign in, see the consent question, approve.
    let request = hidden(&html, "request").expect("request");
    let csrf = hidden(&html, "csrf_token").expect("csrf");
    let consent = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "lena"),
            ("password", "lena-password"),
        ],
    )
    .await;
    assert_eq!(consent.status(), StatusCode::OK);
    let policy = consent
        .headers()
        .get("content-security-policy")
        .expect("csp")
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:49152"),
        "the answer's redirect is an allowed form target: {policy}"
    );
    let html = consent.text().await.expect("html");
    assert!(html.contains("Lena Loan Officer"), "who is signed in");
    assert!(html.contains(mock.public_client_id()), "which client asks");
    for scope in ["openid", "profile", "email"] {
        assert!(
            html.contains(&format!("<code>{scope}</code>")),
            "scope {scope}"
        );
    }
    assert!(html.contains(REDIRECT_URI), "where the answer goes");
    let consent_csrf = hidden(&html, "csrf_token").expect("csrf");
    assert_ne!(consent_csrf, csrf, "the CSRF token changes once signed in");
    let answer = post_form(
        &browser,
        &mock,
        "consent",
        &[
            ("request", &request),
            ("csrf_token", &consent_csrf),
            ("decision", "approve"),
        ],
    )
    .await;
    let params = redirect_params(&answer);
    assert_eq!(get(&params, "state"), Some("state-123"));
    assert_eq!(get(&params, "iss"), Some(mock.issuer()), "RFC 9207");
    let code = get(&params, "code").expect("code");

    // The application exchanges the code with its verifier.
    let (status, tokens) = exchange(&mock, code, &verifier).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 300);
    assert_eq!(tokens["scope"], "openid profile email");
    assert!(
        tokens["refresh_expires_in"]
            .as_i64()
            .expect("refresh_expires_in")
            > 0
    );
    let access = string(&tokens, "access_token");
    let claims = jwt_claims(access);
    assert_eq!(claims["name"], "Lena Loan Officer");
    assert_eq!(claims["preferred_username"], "lena");
    assert_eq!(claims["azp"], mock.public_client_id());
    assert_eq!(claims["scope"], "openid profile email");
    assert!(claims["sub"].is_string());

    // The ID token verifies against the published key and carries the nonce.
    let id_token = string(&tokens, "id_token");
    let jwks: Value = reqwest::get(format!("{}/protocol/openid-connect/certs", mock.issuer()))
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    let key = &jwks["keys"][0];
    let decoding = jsonwebtoken::DecodingKey::from_ec_components(
        key["x"].as_str().expect("x"),
        key["y"].as_str().expect("y"),
    )
    .expect("key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[mock.public_client_id()]);
    validation.set_issuer(&[mock.issuer()]);
    let id = jsonwebtoken::decode::<Value>(id_token, &decoding, &validation)
        .expect("the ID token verifies")
        .claims;
    assert_eq!(id["nonce"], "nonce-456");
    assert_eq!(id["name"], "Lena Loan Officer");
    assert_eq!(id["email"], "lena@lender.example");
    assert_eq!(id["sub"], claims["sub"]);
    assert!(id["auth_time"].as_i64().expect("auth_time") <= id["iat"].as_i64().expect("iat"));
    assert!(id["exp"].as_i64() > id["iat"].as_i64());

    // The API takes the access token, and the session names the user.
    let (status, session) = create_session(&mock, access).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    assert_eq!(session["createdByName"], "Lena Loan Officer");
    // Not the ID token, though: it is for the application, not the API.
    assert_eq!(api_status(&mock, id_token).await, StatusCode::UNAUTHORIZED);

    // UserInfo says who it is.
    let info: Value = reqwest::Client::new()
        .get(format!(
            "{}/protocol/openid-connect/userinfo",
            mock.issuer()
        ))
        .bearer_auth(access)
        .send()
        .await
        .expect("userinfo")
        .json()
        .await
        .expect("json");
    assert_eq!(info["name"], "Lena Loan Officer");
    assert_eq!(info["email"], "lena@lender.example");

    // Client-credentials sessions keep the service account's name.
    let service = mock
        .mint_token(&Default::default())
        .expect("client-credentials token");
    let (_, session) = create_session(&mock, &service).await;
    assert_eq!(
        session["createdByName"],
        format!("service-account-{}", mock.client_id())
    );
}

#[tokio::test]
async fn a_configured_user_signs_in_with_their_own_name() {
    let mock = start(MockConfig {
        users: vec![
            "omar:s3cret:Omar Underwriter".parse().expect("user"),
            "jane:secret:Jane Loan Officer:jane@bank.example"
                .parse()
                .expect("user"),
        ],
        ..config()
    })
    .await;
    let (verifier, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let refused = sign_in_or_page(&browser(), &mock, &url, "lena", "lena-password").await;
    assert!(
        refused.contains("Invalid user name or password"),
        "the default user is replaced"
    );
    let response = sign_in_and_answer(&browser(), &mock, &url, "jane", "secret", "approve").await;
    let params = redirect_params(&response);
    let (_, tokens) = exchange(&mock, get(&params, "code").expect("code"), &verifier).await;
    let (_, session) = create_session(&mock, string(&tokens, "access_token")).await;
    assert_eq!(session["createdByName"], "Jane Loan Officer");
}

/// Opens the sign-in page and posts `username`/`password`; the HTML answered.
async fn sign_in_or_page(
    browser: &reqwest::Client,
    mock: &MockServer,
    url: &str,
    username: &str,
    password: &str,
) -> String {
    let (_, request, csrf) = open_sign_in(browser, url).await;
    let response = post_form(
        browser,
        mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", username),
            ("password", password),
        ],
    )
    .await;
    response.text().await.expect("html")
}

#[tokio::test]
async fn pkce_is_required_s256_only_and_must_match() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();

    // Without a challenge, or with `plain`, the request goes back as invalid_request.
    for (method, challenge) in [
        (None, None),
        (Some("S256"), None),
        (Some("plain"), Some(challenge.as_str())),
        (Some("S256"), Some("too-short")),
    ] {
        let mut params = request_params(&mock, "");
        params.retain(|(name, _)| !name.starts_with("code_challenge"));
        params.push(("code_challenge", challenge));
        params.push(("code_challenge_method", method));
        let response = browser()
            .get(authorization_url(&mock, &params))
            .send()
            .await
            .expect("authorize");
        let params = redirect_params(&response);
        assert_eq!(
            get(&params, "error"),
            Some("invalid_request"),
            "{method:?} {challenge:?}"
        );
        assert_eq!(get(&params, "state"), Some("state-123"));
        assert!(get(&params, "code").is_none());
    }

    // A verifier that is not the challenge's is refused, and spends the code.
    let (code, verifier) = code_for_default_user(&mock).await;
    let (other_verifier, _) = pkce();
    let (status, body) = exchange(&mock, &code, &other_verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "a code is spent by any attempt"
    );

    // No verifier at all is a malformed request.
    let (code, _) = code_for_default_user(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", mock.public_client_id()),
            ("code", &code),
            ("redirect_uri", REDIRECT_URI),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
}

#[tokio::test]
async fn an_untrusted_client_or_redirect_uri_gets_an_error_page_never_a_redirect() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let cases = [
        ("creditdata-cli", "https://evil.example/callback"),
        ("creditdata-cli", "http://localhost:49152/callback"),
        ("creditdata-cli", "http://127.0.0.1.evil.example/callback"),
        ("creditdata-cli", "http://127.0.0.1:49152@evil.example/"),
        ("creditdata-cli", "http://127.0.0.1:49152/callback#fragment"),
        ("no-such-client", REDIRECT_URI),
    ];
    for (client_id, redirect_uri) in cases {
        let mut params = request_params(&mock, &challenge);
        params.retain(|(name, _)| *name != "client_id" && *name != "redirect_uri");
        params.push(("client_id", Some(client_id)));
        params.push(("redirect_uri", Some(redirect_uri)));
        let response = browser()
            .get(authorization_url(&mock, &params))
            .send()
            .await
            .expect("authorize");
        assert_eq!(
            response.status(),
            StatusCode::BAD_REQUEST,
            "{client_id} {redirect_uri}"
        );
        assert!(
            response.headers().get("location").is_none(),
            "never redirected"
        );
        assert!(
            response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap_or_default().starts_with("text/html")),
            "an error page for a person"
        );
    }

    // A configured URI is accepted exactly.
    let configured = start(MockConfig {
        redirect_uris: vec!["https://app.lender.example/callback".into()],
        ..config()
    })
    .await;
    let mut params = request_params(&configured, &challenge);
    params.retain(|(name, _)| *name != "redirect_uri");
    params.push(("redirect_uri", Some("https://app.lender.example/callback")));
    let response = browser()
        .get(authorization_url(&configured, &params))
        .send()
        .await
        .expect("authorize");
    assert_eq!(response.status(), StatusCode::OK);

    // The token request must repeat the redirect URI of the authorization request.
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", mock.public_client_id()),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:49153/callback"),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
}

#[tokio::test]
async fn reflected_values_are_escaped() {
    let mock = start(MockConfig {
        users: vec!["eve:pw:<script>alert(1)</script>".parse().expect("user")],
        ..config()
    })
    .await;
    let (_, challenge) = pkce();
    let mut params = request_params(&mock, &challenge);
    params.retain(|(name, _)| *name != "client_id");
    params.push(("client_id", Some("<img src=x onerror=alert(1)>")));
    let page = browser()
        .get(authorization_url(&mock, &params))
        .send()
        .await
        .expect("authorize")
        .text()
        .await
        .expect("html");
    assert!(!page.contains("<img"), "{page}");
    assert!(
        page.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{page}"
    );

    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let consent = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "eve"),
            ("password", "pw"),
        ],
    )
    .await
    .text()
    .await
    .expect("html");
    assert!(!consent.contains("<script>"), "{consent}");
    assert!(consent.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    // A wrong user name is shown again, escaped.
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let again = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "\"><script>x</script>"),
            ("password", "nope"),
        ],
    )
    .await
    .text()
    .await
    .expect("html");
    assert!(!again.contains("<script>x"), "{again}");
}

#[tokio::test]
async fn a_code_is_single_use_and_a_replay_revokes_what_it_issued() {
    let mock = start(config()).await;
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, tokens) = exchange(&mock, &code, &verifier).await;
    assert_eq!(status, StatusCode::OK);
    let access = string(&tokens, "access_token");
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);

    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert!(string(&body, "error_description").contains("already used"));
    assert_eq!(
        api_status(&mock, access).await,
        StatusCode::UNAUTHORIZED,
        "the access token issued from the code is revoked"
    );
    let (status, body) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "and so is the refresh token"
    );
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let mock = start(MockConfig {
        code_lifetime: Duration::ZERO,
        ..config()
    })
    .await;
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert!(string(&body, "error_description").contains("expired"));
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_replayed_one_ends_the_sign_in() {
    let mock = start(config()).await;
    let tokens = signed_in(&mock).await;
    let first = string(&tokens, "refresh_token");

    let (status, rotated) = refresh(&mock, first).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let second = string(&rotated, "refresh_token");
    assert_ne!(second, first, "a new refresh token on every use");
    let access = string(&rotated, "access_token");
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);
    let id = jwt_claims(string(&rotated, "id_token"));
    assert_eq!(id["nonce"], "nonce-456", "OpenID Connect Core §12.2");
    let (_, session) = create_session(&mock, access).await;
    assert_eq!(session["createdByName"], "Lena Loan Officer");

    // Narrowing the scope is allowed, widening is not.
    let (status, narrowed) = token_request(
        &mock,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", mock.public_client_id()),
            ("refresh_token", second),
            ("scope", "openid"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    assert_eq!(narrowed["scope"], "openid");
    let third = string(&narrowed, "refresh_token").to_owned();

    // The first token again: a replay. The whole family ends, the current token included.
    let (status, body) = refresh(&mock, first).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    let (status, body) = refresh(&mock, &third).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "the current token of a replayed family is revoked too"
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);

    // Another client cannot use a user's refresh token.
    let tokens = signed_in(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", mock.client_id()),
            ("client_secret", mock.client_secret()),
            ("refresh_token", string(&tokens, "refresh_token")),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
}

async fn revoke(mock: &MockServer, form: &[(&str, &str)]) -> StatusCode {
    reqwest::Client::new()
        .post(format!("{}/protocol/openid-connect/revoke", mock.issuer()))
        .form(form)
        .send()
        .await
        .expect("revoke")
        .status()
}

#[tokio::test]
async fn revocation_ends_a_sign_in_or_one_access_token() {
    let mock = start(config()).await;
    let public = mock.public_client_id().to_owned();
    let tokens = signed_in(&mock).await;
    let access = string(&tokens, "access_token");
    let refresh_token = string(&tokens, "refresh_token");

    // Another client may not revoke it.
    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", refresh_token),
                ("client_id", mock.client_id()),
                ("client_secret", mock.client_secret()),
            ],
        )
        .await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);

    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", refresh_token),
                ("token_type_hint", "refresh_token"),
                ("client_id", &public),
            ],
        )
        .await,
        StatusCode::OK
    );
    let (status, body) = refresh(&mock, refresh_token).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);

    // An access token alone (here a client-credentials one) can be revoked too.
    let (_, issued) = token_request(
        &mock,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", mock.client_id()),
            ("client_secret", mock.client_secret()),
        ],
    )
    .await;
    let service = string(&issued, "access_token");
    assert_eq!(api_status(&mock, service).await, StatusCode::OK);
    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", service),
                ("client_id", mock.client_id()),
                ("client_secret", mock.client_secret()),
            ],
        )
        .await,
        StatusCode::OK
    );
    assert_eq!(api_status(&mock, service).await, StatusCode::UNAUTHORIZED);

    // Unknown tokens are answered 200 (RFC 7009 §2.2); unknown clients are not.
    assert_eq!(
        revoke(&mock, &[("token", "nonsense"), ("client_id", &public)]).await,
        StatusCode::OK
    );
    assert_eq!(
        revoke(&mock, &[("token", "nonsense"), ("client_id", "stranger")]).await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn end_session_signs_out_and_returns_to_the_application() {
    let mock = start(config()).await;
    let tokens = signed_in(&mock).await;
    let id_token = string(&tokens, "id_token");
    let logout = format!("{}/protocol/openid-connect/logout", mock.issuer());

    // A post-logout redirect elsewhere is refused with a page, and nothing ends.
    let response = browser()
        .get(&logout)
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", "https://evil.example/"),
        ])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("location").is_none());
    assert_eq!(
        api_status(&mock, string(&tokens, "access_token")).await,
        StatusCode::OK
    );
    // Without id_token_hint there is no telling whose redirect it is.
    let response = browser()
        .get(&logout)
        .query(&[("post_logout_redirect_uri", REDIRECT_URI)])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    let response = browser()
        .get(&logout)
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", REDIRECT_URI),
            ("state", "bye"),
        ])
        .send()
        .await
        .expect("logout");
    let params = redirect_params(&response);
    assert_eq!(get(&params, "state"), Some("bye"));
    let (status, body) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert_eq!(
        api_status(&mock, string(&tokens, "access_token")).await,
        StatusCode::UNAUTHORIZED
    );

    // POST works as well; without a redirect the browser is told it is signed out.
    let tokens = signed_in(&mock).await;
    let response = browser()
        .post(&logout)
        .form(&[("id_token_hint", string(&tokens, "id_token"))])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.expect("html").contains("signed out"));
    let (status, _) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn discovery_lists_the_code_flow() {
    let mock = start(config()).await;
    let issuer = mock.issuer();
    let discovery: Value = reqwest::get(format!("{issuer}/.well-known/openid-configuration"))
        .await
        .expect("discovery")
        .json()
        .await
        .expect("json");
    let endpoint = |name: &str| format!("{issuer}/protocol/openid-connect/{name}");
    assert_eq!(discovery["authorization_endpoint"], endpoint("auth"));
    assert_eq!(discovery["end_session_endpoint"], endpoint("logout"));
    assert_eq!(discovery["revocation_endpoint"], endpoint("revoke"));
    assert_eq!(discovery["userinfo_endpoint"], endpoint("userinfo"));
    assert_eq!(
        discovery["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(discovery["response_types_supported"], json!(["code"]));
    assert_eq!(
        discovery["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );
    for grant in ["authorization_code", "refresh_token", "client_credentials"] {
        assert!(
            discovery["grant_types_supported"]
                .as_array()
                .expect("array")
                .contains(&json!(grant)),
            "{grant}"
        );
    }
    assert!(
        discovery["token_endpoint_auth_methods_supported"]
            .as_array()
            .expect("array")
            .contains(&json!("none")),
        "public clients"
    );
    assert_eq!(
        discovery["scopes_supported"],
        json!(["openid", "profile", "email"])
    );
    // Every endpoint it lists answers (a GET of a POST-only endpoint is 405, not 404).
    for name in ["auth", "logout", "userinfo", "certs"] {
        let status = reqwest::get(endpoint(name)).await.expect("get").status();
        assert_ne!(status, StatusCode::NOT_FOUND, "{name}");
    }
}

#[tokio::test]
async fn sign_ins_survive_a_restart_with_state() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("state.json");
    let with_state = || MockConfig {
        state_file: Some(path.clone()),
        ..config()
    };
    let mock = start(with_state()).await;
    let tokens = signed_in(&mock).await;
    let refresh_token = string(&tokens, "refresh_token").to_owned();
    mock.shutdown().await;

    let saved = std::fs::read_to_string(&path).expect("state file");
    assert!(
        !saved.contains(&refresh_token),
        "refresh tokens are stored hashed"
    );
    assert!(saved.contains("refreshTokenDigest"));

    let mock = start(with_state()).await;
    let (status, rotated) = refresh(&mock, &refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let access = string(&rotated, "access_token");
    let (_, session) = create_session(&mock, access).await;
    assert_eq!(session["createdByName"], "Lena Loan Officer");
    // A replay is recognised across the restart as well.
    let (status, _) = refresh(&mock, &refresh_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);
    mock.shutdown().await;
}

#[tokio::test]
async fn deny_sends_access_denied() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let response =
        sign_in_and_answer(&browser(), &mock, &url, "lena", "lena-password", "deny").await;
    let params = redirect_params(&response);
    assert_eq!(get(&params, "error"), Some("access_denied"));
    assert_eq!(get(&params, "state"), Some("state-123"));
    assert!(get(&params, "code").is_none());
}

#[tokio::test]
async fn a_wrong_password_issues_nothing() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    for attempt in 1..=5 {
        let response = post_form(
            &browser,
            &mock,
            "authenticate",
            &[
                ("request", &request),
                ("csrf_token", &csrf),
                ("username", "lena"),
                ("password", "wrong"),
            ],
        )
        .await;
        if attempt < 5 {
            assert_eq!(response.status(), StatusCode::OK);
            let html = response.text().await.expect("html");
            assert!(html.contains("Invalid user name or password."), "{html}");
            assert!(!html.contains("Allow access?"));
        } else {
            // The fifth wrong password abandons the request and tells the application.
            let params = redirect_params(&response);
            assert_eq!(get(&params, "error"), Some("access_denied"));
            assert!(get(&params, "code").is_none());
        }
    }
    // An unknown user is answered exactly like a wrong password.
    let html = sign_in_or_page(&browser, &mock, &url, "nobody", "lena-password").await;
    assert!(html.contains("Invalid user name or password."));
}

#[tokio::test]
async fn a_form_without_its_csrf_token_or_cookie_is_refused() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let credentials = [("username", "lena"), ("password", "lena-password")];

    let mut form = vec![("request", request.as_str())];
    form.extend(credentials);
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "no CSRF token");
    assert!(response.text().await.expect("html").contains("csrf_token"));

    let mut form = vec![("request", request.as_str()), ("csrf_token", "forged")];
    form.extend(credentials);
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "a wrong CSRF token"
    );

    // The right token from another browser (no cookie) is refused as well.
    let mut form = vec![("request", request.as_str()), ("csrf_token", csrf.as_str())];
    form.extend(credentials);
    let stranger = self::browser();
    let response = post_form(&stranger, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "another browser");

    // None of that spent the request: the real form still works.
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.expect("html");
    assert!(html.contains("Allow access?"));
    // The consent form checks its token too.
    let response = post_form(
        &browser,
        &mock,
        "consent",
        &[("request", &request), ("decision", "approve")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get("location").is_none());
}

#[tokio::test]
async fn the_confidential_client_uses_the_code_flow_with_its_secret() {
    let mock = start(config()).await;
    let (verifier, challenge) = pkce();
    let mut params = request_params(&mock, &challenge);
    params.retain(|(name, _)| *name != "client_id");
    params.push(("client_id", Some(mock.client_id())));
    let url = authorization_url(&mock, &params);
    let response =
        sign_in_and_answer(&browser(), &mock, &url, "lena", "lena-password", "approve").await;
    let answer = redirect_params(&response);
    let code = get(&answer, "code").expect("code");
    let base = [
        ("grant_type", "authorization_code"),
        ("client_id", mock.client_id()),
        ("code", code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", verifier.as_str()),
    ];
    let (status, body) = token_request(&mock, &base).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::UNAUTHORIZED, "invalid_client"),
        "a confidential client must authenticate"
    );
    let mut with_secret = base.to_vec();
    with_secret.push(("client_secret", mock.client_secret()));
    let (status, body) = token_request(&mock, &with_secret).await;
    // The unauthenticated attempt was refused before the code was looked at.
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        jwt_claims(string(&body, "access_token"))["azp"],
        mock.client_id()
    );

    // The public client has no client-credentials grant.
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", mock.public_client_id()),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "unauthorized_client")
    );
}

#[test]
fn user_options_are_checked_without_echoing_the_password() {
    let user: TestUser = "jane:secret:Jane Loan Officer:jane@bank.example"
        .parse()
        .expect("user");
    assert_eq!(user.name, "Jane Loan Officer");
    assert_eq!(user.email.as_deref(), Some("jane@bank.example"));
    assert!(!format!("{user:?}").contains("secret"));
    let plain: TestUser = "omar:pw".parse().expect("user");
    assert_eq!(
        plain.name, "omar",
        "the display name defaults to the user name"
    );
    for bad in [
        "nopassword",
        "bad name:pw",
        "jane:pw:Jane:not-an-email",
        ":pw",
    ] {
        let error = bad.parse::<TestUser>().expect_err(bad).to_string();
        assert!(!error.contains("pw:"), "{error}");
    }
    let error = "jane:hunter2:Jane:bad@"
        .parse::<TestUser>()
        .expect_err("bad e-mail")
        .to_string();
    assert!(!error.contains("hunter2"), "{error}");
    let clash = MockConfig {
        public_client_id: MockConfig::default().client_id,
        ..MockConfig::default()
    };
    assert!(clash.validate().is_err());
}

#[test]
fn configured_redirect_uris_must_be_safe_to_send_a_code_to() {
    use creditdata_mock::config::check_configured_redirect_uri;
    for good in [
        "https://app.lender.example/callback",
        "http://localhost:8400/callback",
        "http://127.0.0.1:8400/callback",
        "com.lender.app:/oauth2redirect",
    ] {
        assert!(check_configured_redirect_uri(good).is_ok(), "{good}");
    }
    for bad in [
        "http://app.lender.example/callback",
        "https://app.lender.example/callback#x",
        "https://user:pw@app.lender.example/callback",
        "javascript:alert(1)",
        "not a url",
    ] {
        assert!(check_configured_redirect_uri(bad).is_err(), "{bad}");
    }
    let config = MockConfig {
        redirect_uris: vec!["http://intranet.lender.example/cb".into()],
        ..MockConfig::default()
    };
    assert!(
        config.validate().is_err(),
        "MockServer::start refuses it too"
    );
}
