//! The authorization endpoint (RFC 6749 §4.1, OpenID Connect Core §3.1.2): checks the request,
//! asks the person to sign in, then whether to let the client act for them, and sends them
//! back to the client with a code (or `access_denied`).
//!
//! A request whose client or redirect URI cannot be trusted is answered with an error page and
//! never redirected (RFC 6749 §4.1.2.1); every later error goes back to the client.
//!
//! The forms are bound to the pending request by a browser cookie and a CSRF token
//! ([`crate::idp::pending`] keeps and checks both).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Duration;

use super::clients;
use super::oauth::{is_form_encoded, single_valued};
use super::pages::{self, ConsentForm, SignInForm};
use crate::config::TestUser;
use crate::idp::codes::CodeGrant;
use crate::idp::grants::random_token;
use crate::idp::pending::{AuthorizationRequest, FormRefusal, SignInOutcome};
use crate::idp::{REALM, constant_time_eq};
use crate::state::AppState;

/// Longest `state` and `nonce` kept (they are stored and echoed).
const LONGEST_ECHOED: usize = 2048;
/// The cookie that names the browser an authorization request was started in.
const BROWSER_COOKIE: &str = "creditdata_mock_browser";

fn sign_in_action() -> String {
    format!("/realms/{REALM}/login-actions/authenticate")
}

fn consent_action() -> String {
    format!("/realms/{REALM}/login-actions/consent")
}

/// A redirect (303: after a POST the browser follows with a GET and drops the form, RFC 9700
/// §4.12) to the client's redirect URI with `params` added to its query.
fn redirect_back(redirect_uri: &str, params: &[(&str, &str)]) -> Response {
    let Ok(mut target) = url::Url::parse(redirect_uri) else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            "Cannot return to the application",
            "The application's redirect URI is not a URL.",
        );
    };
    target.query_pairs_mut().extend_pairs(params);
    let Ok(location) = HeaderValue::from_str(target.as_str()) else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            "Cannot return to the application",
            "The application's redirect URI cannot be sent in a header.",
        );
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// An error sent back to the client (RFC 6749 §4.1.2.1), with `state` and `iss` (RFC 9207).
fn error_back(
    issuer: &str,
    redirect_uri: &str,
    state: Option<&str>,
    error: &str,
    description: &str,
) -> Response {
    let mut params = vec![("error", error), ("error_description", description)];
    if let Some(state) = state {
        params.push(("state", state));
    }
    params.push(("iss", issuer));
    redirect_back(redirect_uri, &params)
}

/// The browser cookie's value, when the request carries a well-formed one.
fn browser_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == BROWSER_COOKIE)
        .map(|(_, value)| value.to_owned())
        .filter(|value| {
            value.len() == 43
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Whether `challenge` is what S256 yields: 32 bytes in unpadded base64url, 43 characters.
fn is_s256_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && URL_SAFE_NO_PAD
            .decode(challenge)
            .is_ok_and(|bytes| bytes.len() == 32)
}

/// `GET {issuer}/protocol/openid-connect/auth`: checks the authorization request and shows the
/// sign-in form.
pub async fn authorize(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let cannot_start =
        |text: &str| pages::message(StatusCode::BAD_REQUEST, "Sign-in cannot start", text);
    let params = match single_valued(uri.query().unwrap_or_default().as_bytes()) {
        Ok(params) => params,
        Err(repeated) => {
            return cannot_start(&format!(
                "{repeated} The application sent a malformed sign-in request."
            ));
        }
    };
    let param = |name: &str| {
        params
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let config = &state.config;
    let Some(client_id) = param("client_id") else {
        return cannot_start(
            "The sign-in request names no client_id. The application must say who it is.",
        );
    };
    let Some(kind) = clients::client_kind(config, client_id) else {
        return cannot_start(&format!(
            "The application `{client_id}` is not known to this identity provider. Its clients are \
             `{}` (public) and `{}` (confidential).",
            config.public_client_id, config.client_id
        ));
    };
    let Some(redirect_uri) = param("redirect_uri") else {
        return cannot_start(
            "The sign-in request has no redirect_uri, so there is nowhere to send the answer.",
        );
    };
    if let Some(problem) = clients::redirect_uri_problem(config, redirect_uri) {
        return cannot_start(&problem);
    }
    // From here on the client and its redirect URI are trusted: errors go back to it.
    let issuer = state.idp.issuer();
    let client_state = param("state");
    let back = |error: &str, description: &str| {
        let echoed = client_state.filter(|value| value.len() <= LONGEST_ECHOED);
        error_back(issuer, redirect_uri, echoed, error, description)
    };
    if client_state.is_some_and(|value| value.len() > LONGEST_ECHOED) {
        return back("invalid_request", "state is longer than 2048 characters.");
    }
    match param("response_type") {
        Some("code") => {}
        None => {
            return back(
                "invalid_request",
                "response_type is missing; use response_type=code.",
            );
        }
        Some(_) => {
            return back(
                "unsupported_response_type",
                "Only response_type=code (the Authorization Code flow) is supported.",
            );
        }
    }
    if param("response_mode").is_some_and(|mode| mode != "query") {
        return back("invalid_request", "Only response_mode=query is supported.");
    }
    if param("request").is_some() {
        return back(
            "request_not_supported",
            "Request objects are not supported.",
        );
    }
    if param("request_uri").is_some() {
        return back("request_uri_not_supported", "request_uri is not supported.");
    }
    match param("code_challenge_method") {
        Some("S256") => {}
        Some("plain") => {
            return back(
                "invalid_request",
                "code_challenge_method=plain is refused; use S256 (RFC 7636 §4.2, RFC 9700 §2.1.1).",
            );
        }
        Some(_) => return back("invalid_request", "code_challenge_method must be S256."),
        None => {
            return back(
                "invalid_request",
                "PKCE is required: send code_challenge and code_challenge_method=S256.",
            );
        }
    }
    let Some(code_challenge) = param("code_challenge") else {
        return back(
            "invalid_request",
            "PKCE is required: code_challenge is missing.",
        );
    };
    if !is_s256_challenge(code_challenge) {
        return back(
            "invalid_request",
            "code_challenge is not a S256 challenge (43 characters of unpadded base64url).",
        );
    }
    let scopes = match clients::parse_scope(param("scope")) {
        Ok(scopes) => scopes,
        Err(description) => return back("invalid_scope", &description),
    };
    let nonce = param("nonce");
    if nonce.is_some_and(|nonce| nonce.len() > LONGEST_ECHOED) {
        return back("invalid_request", "nonce is longer than 2048 characters.");
    }
    if param("prompt").is_some_and(|prompt| prompt.split_ascii_whitespace().any(|p| p == "none")) {
        return back(
            "login_required",
            "This identity provider keeps no browser sign-in: the user must sign in.",
        );
    }

    let (browser, set_cookie) = match browser_cookie(&headers) {
        Some(browser) => (browser, None),
        None => {
            let browser = random_token();
            let cookie = format!(
                "{BROWSER_COOKIE}={browser}; Path=/realms/{REALM}/; HttpOnly; SameSite=Strict"
            );
            (browser, HeaderValue::from_str(&cookie).ok())
        }
    };
    let (request_id, csrf) = state.idp.pending().start(
        AuthorizationRequest {
            client_id: client_id.to_owned(),
            kind,
            redirect_uri: redirect_uri.to_owned(),
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            state: client_state.map(str::to_owned),
            nonce: nonce.map(str::to_owned),
            code_challenge: code_challenge.to_owned(),
        },
        &browser,
    );
    let action = sign_in_action();
    pages::sign_in(
        StatusCode::OK,
        &SignInForm {
            request_id: &request_id,
            csrf: &csrf,
            client_id,
            error: None,
            username: None,
            action: &action,
        },
        set_cookie,
    )
}

/// The pending request a form was posted for, once the form, the browser cookie and the CSRF
/// token check out; otherwise the page to show.
fn posted_form(
    state: &AppState,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(String, HashMap<String, String>), Box<Response>> {
    check_posted_form(state, headers, body).map_err(Box::new)
}

#[expect(
    clippy::result_large_err,
    reason = "boxed once by posted_form; the error is the page itself"
)]
fn check_posted_form(
    state: &AppState,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(String, HashMap<String, String>), Response> {
    if !is_form_encoded(headers) {
        return Err(pages::message(
            StatusCode::BAD_REQUEST,
            "Not a sign-in form",
            "The form must be posted as application/x-www-form-urlencoded.",
        ));
    }
    let params = single_valued(body).map_err(|repeated| {
        pages::message(StatusCode::BAD_REQUEST, "Not a sign-in form", &repeated)
    })?;
    let Some(request_id) = params.get("request").cloned() else {
        return Err(pages::message(
            StatusCode::BAD_REQUEST,
            "Not a sign-in form",
            "The form does not say which sign-in it belongs to. Go back to the application and \
             start again.",
        ));
    };
    let refusal = state.idp.pending().check_form(
        &request_id,
        browser_cookie(headers).as_deref(),
        params.get("csrf_token").map(String::as_str),
    );
    match refusal {
        Ok(()) => Ok((request_id, params)),
        Err(FormRefusal::Ended) => Err(pages::message(
            StatusCode::BAD_REQUEST,
            "This sign-in has ended",
            "This sign-in has expired or was already finished. Go back to the application and \
             start again.",
        )),
        Err(FormRefusal::OtherBrowser) => Err(pages::message(
            StatusCode::FORBIDDEN,
            "This sign-in belongs to another browser",
            "This sign-in was started in another browser, or the browser refused its cookie. \
             Start again from the application in this browser, with cookies allowed for this \
             site.",
        )),
        Err(FormRefusal::NoCsrf) => Err(pages::message(
            StatusCode::FORBIDDEN,
            "The form was refused",
            "The form has no security token (csrf_token), so it may not come from this page. \
             Go back to the application and start again.",
        )),
        Err(FormRefusal::WrongCsrf) => Err(pages::message(
            StatusCode::FORBIDDEN,
            "The form was refused",
            "The form's security token (csrf_token) does not belong to this sign-in. Go back \
             to the application and start again.",
        )),
    }
}

/// The user with this name and password. Every user's password is compared, each in constant
/// time, so the time taken does not tell which user names exist.
fn find_user<'a>(users: &'a [TestUser], username: &str, password: &str) -> Option<&'a TestUser> {
    let mut found = None;
    for user in users {
        let name_ok = constant_time_eq(user.username.as_bytes(), username.as_bytes());
        let password_ok = constant_time_eq(user.password.as_bytes(), password.as_bytes());
        if name_ok & password_ok {
            found = Some(user);
        }
    }
    found
}

/// `POST {realm}/login-actions/authenticate`: checks the user name and password, then asks
/// for consent.
pub async fn sign_in(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (request_id, params) = match posted_form(&state, &headers, &body) {
        Ok(posted) => posted,
        Err(page) => return *page,
    };
    let username = params.get("username").map(|v| v.trim()).unwrap_or_default();
    let password = params
        .get("password")
        .map(String::as_str)
        .unwrap_or_default();
    let user = find_user(&state.config.users, username, password);
    let (csrf, request, user) = match state.idp.pending().sign_in(&request_id, user) {
        SignInOutcome::Ended => {
            return pages::message(
                StatusCode::BAD_REQUEST,
                "This sign-in has ended",
                "This sign-in has expired or was already finished. Go back to the application and start again.",
            );
        }
        SignInOutcome::AlreadySignedIn => {
            return pages::message(
                StatusCode::BAD_REQUEST,
                "Already signed in",
                "You have already signed in for this request; answer the question on the previous page.",
            );
        }
        SignInOutcome::Abandoned(request) => {
            tracing::info!(client_id = %request.client_id, "a sign-in was abandoned after repeated wrong passwords");
            return error_back(
                state.idp.issuer(),
                &request.redirect_uri,
                request.state.as_deref(),
                "access_denied",
                "Too many wrong passwords: the sign-in was abandoned.",
            );
        }
        SignInOutcome::Retry { csrf, client_id } => {
            let action = sign_in_action();
            return pages::sign_in(
                StatusCode::OK,
                &SignInForm {
                    request_id: &request_id,
                    csrf: &csrf,
                    client_id: &client_id,
                    error: Some("Invalid user name or password."),
                    username: Some(username).filter(|name| !name.is_empty()),
                    action: &action,
                },
                None,
            );
        }
        SignInOutcome::SignedIn {
            csrf,
            request,
            user,
        } => (csrf, request, user),
    };
    let action = consent_action();
    pages::consent(&ConsentForm {
        request_id: &request_id,
        csrf: &csrf,
        client_id: &request.client_id,
        kind: request.kind,
        name: &user.name,
        username: &user.username,
        scopes: &request.scopes,
        redirect_uri: &request.redirect_uri,
        redirect_origin: clients::redirect_origin(&request.redirect_uri),
        action: &action,
    })
}

/// `POST {realm}/login-actions/consent`: Approve sends the client a code, Deny `access_denied`.
pub async fn consent(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (request_id, params) = match posted_form(&state, &headers, &body) {
        Ok(posted) => posted,
        Err(page) => return *page,
    };
    let approve = match params.get("decision").map(String::as_str) {
        Some("approve") => true,
        Some("deny") => false,
        _ => {
            return pages::message(
                StatusCode::BAD_REQUEST,
                "No answer",
                "Choose Approve or Deny.",
            );
        }
    };
    let Some((request, username, auth_time)) = state.idp.pending().take_consented(&request_id)
    else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            "Not signed in",
            "Sign in before answering; go back to the application and start again.",
        );
    };
    let issuer = state.idp.issuer();
    if !approve {
        return error_back(
            issuer,
            &request.redirect_uri,
            request.state.as_deref(),
            "access_denied",
            "The user denied access.",
        );
    }
    let lifetime = Duration::from_std(state.config.code_lifetime).unwrap_or(Duration::zero());
    let code = state.idp.codes().issue(
        CodeGrant {
            client_id: request.client_id.clone(),
            redirect_uri: request.redirect_uri.clone(),
            code_challenge: request.code_challenge.clone(),
            scope: request.scopes.join(" "),
            nonce: request.nonce.clone(),
            username,
            auth_time,
        },
        lifetime,
    );
    let mut answer = vec![("code", code.as_str())];
    if let Some(client_state) = request.state.as_deref() {
        answer.push(("state", client_state));
    }
    answer.push(("iss", issuer));
    redirect_back(&request.redirect_uri, &answer)
}
