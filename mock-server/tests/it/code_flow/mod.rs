//! The identity provider's Authorization Code flow (issue 9, item 3), driven over HTTP as a
//! browser and a native application would: the sign-in page with a cookie-aware client that
//! does not follow redirects (the redirect to the application is read from `Location`), then
//! the token, refresh, revocation and logout endpoints as the application calls them.

//!
//! One module per part of the flow: [`sign_in`] (the pages, the people, the consent),
//! [`requests`] (what an authorization request must be: PKCE, the client, the redirect, the
//! escaping, discovery) and [`tokens`] (codes, refresh, revocation, logout, restarts); the helpers
//! that drive the flow are here.

mod requests;
mod sign_in;
mod tokens;

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

/// Opens the sign-in page at `url` and posts `username`/`password` with its CSRF token; the
/// pending request's id and the response (the consent page, or the sign-in page again).
async fn post_credentials(
    browser: &reqwest::Client,
    mock: &MockServer,
    url: &str,
    username: &str,
    password: &str,
) -> (String, reqwest::Response) {
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
    (request, response)
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
    let (request, consent) = post_credentials(browser, mock, url, username, password).await;
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

/// Opens the sign-in page and posts `username`/`password`; the HTML answered.
async fn sign_in_or_page(
    browser: &reqwest::Client,
    mock: &MockServer,
    url: &str,
    username: &str,
    password: &str,
) -> String {
    let (_, response) = post_credentials(browser, mock, url, username, password).await;
    response.text().await.expect("html")
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
