//! The authorization endpoint (RFC 6749 §4.1, OpenID Connect Core §3.1.2): checks the request,
//! asks the person to sign in, then whether to let the client act for them, and sends them
//! back to the client with a code (or `access_denied`).
//!
//! A request whose client or redirect URI cannot be trusted is answered with an error page and
//! never redirected (RFC 6749 §4.1.2.1); every later error goes back to the client.
//!
//! The forms are bound to the pending request twice: by a cookie that names the browser that
//! started it (another browser cannot finish it) and by a CSRF token in the form (another site
//! cannot post it); both are compared in constant time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Duration, Utc};

use super::clients::{self, ClientKind};
use super::codes::CodeGrant;
use super::grants::{digest, random_token};
use super::oauth::{is_form_encoded, single_valued};
use super::pages::{self, ConsentForm, SignInForm};
use super::{REALM, constant_time_eq};
use crate::config::TestUser;
use crate::state::AppState;

/// How long a person has to sign in and answer the consent question.
const PENDING_LIFETIME: Duration = Duration::minutes(10);
/// Most authorization requests pending at once (anyone can start one).
const MOST_PENDING: usize = 1000;
/// Wrong passwords accepted for one request before it is abandoned.
const MOST_FAILED_SIGN_INS: u8 = 5;
/// Longest `state` and `nonce` kept (they are stored and echoed).
const LONGEST_ECHOED: usize = 2048;
/// The cookie that names the browser an authorization request was started in.
const BROWSER_COOKIE: &str = "creditdata_mock_browser";

/// What the client asked for, once checked.
#[derive(Clone)]
struct AuthorizationRequest {
    client_id: String,
    kind: ClientKind,
    redirect_uri: String,
    scopes: Vec<String>,
    state: Option<String>,
    nonce: Option<String>,
    code_challenge: String,
}

#[derive(Clone)]
enum Stage {
    SignIn {
        failures: u8,
    },
    Consent {
        username: String,
        auth_time: DateTime<Utc>,
    },
}

struct Pending {
    request: AuthorizationRequest,
    browser_digest: String,
    csrf: String,
    started_at: DateTime<Utc>,
    stage: Stage,
}

/// The authorization requests waiting for the person.
#[derive(Default)]
pub struct PendingRequests {
    requests: Mutex<HashMap<String, Pending>>,
}

impl PendingRequests {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn insert(&self, pending: Pending) -> String {
        let id = random_token();
        let now = Utc::now();
        let mut requests = self.lock();
        requests.retain(|_, pending| pending.started_at + PENDING_LIFETIME > now);
        if requests.len() >= MOST_PENDING
            && let Some(oldest) = requests
                .iter()
                .min_by_key(|(_, pending)| pending.started_at)
                .map(|(id, _)| id.clone())
        {
            requests.remove(&oldest);
        }
        requests.insert(id.clone(), pending);
        id
    }
}

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
    let csrf = random_token();
    let request_id = state.idp.pending.insert(Pending {
        request: AuthorizationRequest {
            client_id: client_id.to_owned(),
            kind,
            redirect_uri: redirect_uri.to_owned(),
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            state: client_state.map(str::to_owned),
            nonce: nonce.map(str::to_owned),
            code_challenge: code_challenge.to_owned(),
        },
        browser_digest: digest(&browser),
        csrf: csrf.clone(),
        started_at: Utc::now(),
        stage: Stage::SignIn { failures: 0 },
    });
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
    let requests = state.idp.pending.lock();
    let now = Utc::now();
    let live = requests
        .get(&request_id)
        .filter(|pending| pending.started_at + PENDING_LIFETIME > now);
    let Some(pending) = live else {
        return Err(pages::message(
            StatusCode::BAD_REQUEST,
            "This sign-in has ended",
            "This sign-in has expired or was already finished. Go back to the application and \
             start again.",
        ));
    };
    let same_browser = browser_cookie(headers).is_some_and(|browser| {
        constant_time_eq(
            digest(&browser).as_bytes(),
            pending.browser_digest.as_bytes(),
        )
    });
    if !same_browser {
        return Err(pages::message(
            StatusCode::FORBIDDEN,
            "This sign-in belongs to another browser",
            "This sign-in was started in another browser, or the browser refused its cookie. \
             Start again from the application in this browser, with cookies allowed for this \
             site.",
        ));
    }
    match params.get("csrf_token") {
        None => Err(pages::message(
            StatusCode::FORBIDDEN,
            "The form was refused",
            "The form has no security token (csrf_token), so it may not come from this page. \
             Go back to the application and start again.",
        )),
        Some(token) if !constant_time_eq(token.as_bytes(), pending.csrf.as_bytes()) => {
            Err(pages::message(
                StatusCode::FORBIDDEN,
                "The form was refused",
                "The form's security token (csrf_token) does not belong to this sign-in. Go back \
                 to the application and start again.",
            ))
        }
        Some(_) => {
            drop(requests);
            Ok((request_id, params))
        }
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
    let user = find_user(&state.config.users, username, password).cloned();
    let now = Utc::now();
    let mut requests = state.idp.pending.lock();
    let Some(pending) = requests.get_mut(&request_id) else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            "This sign-in has ended",
            "This sign-in has expired or was already finished. Go back to the application and start again.",
        );
    };
    let Stage::SignIn { failures } = pending.stage else {
        return pages::message(
            StatusCode::BAD_REQUEST,
            "Already signed in",
            "You have already signed in for this request; answer the question on the previous page.",
        );
    };
    let Some(user) = user else {
        let failures = failures.saturating_add(1);
        if failures >= MOST_FAILED_SIGN_INS {
            let request = pending.request.clone();
            requests.remove(&request_id);
            drop(requests);
            tracing::info!(client_id = %request.client_id, "a sign-in was abandoned after repeated wrong passwords");
            return error_back(
                state.idp.issuer(),
                &request.redirect_uri,
                request.state.as_deref(),
                "access_denied",
                "Too many wrong passwords: the sign-in was abandoned.",
            );
        }
        pending.stage = Stage::SignIn { failures };
        let csrf = pending.csrf.clone();
        let client_id = pending.request.client_id.clone();
        drop(requests);
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
    };
    // A new token for the next form: one seen before signing in is worth nothing after.
    pending.csrf = random_token();
    pending.stage = Stage::Consent {
        username: user.username.clone(),
        auth_time: now,
    };
    let csrf = pending.csrf.clone();
    let request = pending.request.clone();
    drop(requests);
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
    let pending = {
        let mut requests = state.idp.pending.lock();
        match requests
            .get(&request_id)
            .map(|pending| pending.stage.clone())
        {
            Some(Stage::Consent {
                username,
                auth_time,
            }) => requests
                .remove(&request_id)
                .map(|pending| (pending.request, username, auth_time)),
            _ => None,
        }
    };
    let Some((request, username, auth_time)) = pending else {
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
    let code = state.idp.codes.issue(
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

#[cfg(test)]
mod tests {
    use std::time::Duration as StdDuration;

    use super::*;
    use crate::auth::{IdentityProvider, SigningKey};
    use crate::config::MockConfig;
    use crate::store::Store;

    fn state() -> Arc<AppState> {
        let config = MockConfig::default();
        let idp = Arc::new(IdentityProvider::new(
            "http://127.0.0.1:1/realms/consumer".into(),
            config.audience.clone(),
            StdDuration::from_secs(300),
            config.client_id.clone(),
            config.client_secret.clone(),
            SigningKey::generate().expect("key"),
        ));
        let description =
            crate::described::Description::load(None).expect("the embedded description");
        Arc::new(AppState::new(
            config,
            idp,
            Store::default(),
            false,
            description,
        ))
    }

    #[test]
    fn a_pending_request_past_its_lifetime_cannot_be_finished() {
        let state = state();
        let browser = random_token();
        let csrf = random_token();
        let pending = |started_at| Pending {
            request: AuthorizationRequest {
                client_id: "creditdata-cli".into(),
                kind: ClientKind::Public,
                redirect_uri: "http://127.0.0.1:1/cb".into(),
                scopes: vec!["openid".into()],
                state: None,
                nonce: None,
                code_challenge: "c".repeat(43),
            },
            browser_digest: digest(&browser),
            csrf: csrf.clone(),
            started_at,
            stage: Stage::SignIn { failures: 0 },
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("{BROWSER_COOKIE}={browser}")).expect("cookie"),
        );
        let form = |id: &str| Bytes::from(format!("request={id}&csrf_token={csrf}"));

        let fresh = state.idp.pending.insert(pending(Utc::now()));
        assert!(posted_form(&state, &headers, &form(&fresh)).is_ok());
        // Inserted last, so nothing pruned it: only the lookup can tell it is too old.
        let stale = state.idp.pending.insert(pending(
            Utc::now() - PENDING_LIFETIME - Duration::seconds(1),
        ));
        let refused = posted_form(&state, &headers, &form(&stale)).expect_err("expired");
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }
}
