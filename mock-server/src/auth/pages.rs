//! The HTML the identity provider shows people: the sign-in form, the consent question, and
//! error and signed-out messages.
//!
//! Templates are maud's, which escapes every interpolated value: nothing a request carries can
//! become markup. Each page loads nothing from elsewhere (one inline stylesheet, allowed by its
//! hash), refuses to be framed (clickjacking), is never cached and sends no referrer.

use std::sync::LazyLock;

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest as _, Sha256};

use super::clients::{ClientKind, SCOPES};

const STYLE: &str = "body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;color:#1d2430}\
main{max-width:26rem;margin:4rem auto;background:#fff;padding:2rem;border-radius:8px;\
box-shadow:0 1px 4px rgba(0,0,0,.15)}h1{font-size:1.3rem;margin-top:0}\
label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;\
padding:.5rem;box-sizing:border-box;font-size:1rem}button{margin-top:1.2rem;padding:.55rem 1.2rem;\
font-size:1rem;margin-right:.5rem}.error{color:#a40000;background:#fdeaea;padding:.6rem;\
border-radius:4px}.note{color:#5c6370;font-size:.85rem}code{word-break:break-all}";

/// `style-src` allows exactly [`STYLE`], by its SHA-256.
static STYLE_SOURCE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "'sha256-{}'",
        STANDARD.encode(Sha256::digest(STYLE.as_bytes()))
    )
});

/// A page with the identity provider's security headers. `form_targets` are origins besides
/// the provider's own that a form on the page may end up at (the consent form's answer is a
/// redirect to the client, and browsers check redirects of a form submission against
/// `form-action`).
pub fn page(
    status: StatusCode,
    title: &str,
    content: Markup,
    form_targets: &[String],
    set_cookie: Option<HeaderValue>,
) -> Response {
    let document = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · Consumer API sign-in (mock)" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main {
                    (content)
                    p class="note" {
                        "creditdata-mock: a local stand-in identity provider with test users only."
                    }
                }
            }
        }
    };
    let mut form_action = String::from("'self'");
    for target in form_targets {
        form_action.push(' ');
        form_action.push_str(target);
    }
    let policy = format!(
        "default-src 'none'; style-src {}; form-action {form_action}; frame-ancestors 'none'; \
         base-uri 'none'",
        *STYLE_SOURCE
    );
    let mut response = (status, document.into_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    if let Some(cookie) = set_cookie {
        headers.append(header::SET_COOKIE, cookie);
    }
    response
}

/// A page that says what went wrong and what to do; nothing on it leads anywhere.
pub fn message(status: StatusCode, title: &str, text: &str) -> Response {
    let content = html! {
        h1 { (title) }
        p class=[status.is_client_error().then_some("error")] { (text) }
    };
    page(status, title, content, &[], None)
}

/// What the sign-in form shows.
pub struct SignInForm<'a> {
    /// The pending authorization request.
    pub request_id: &'a str,
    /// Its CSRF token.
    pub csrf: &'a str,
    /// The client asking.
    pub client_id: &'a str,
    /// Why the last attempt failed.
    pub error: Option<&'a str>,
    /// The user name typed last time.
    pub username: Option<&'a str>,
    /// Where to post the form.
    pub action: &'a str,
}

/// The sign-in form.
pub fn sign_in(
    status: StatusCode,
    form: &SignInForm<'_>,
    set_cookie: Option<HeaderValue>,
) -> Response {
    let content = html! {
        h1 { "Sign in" }
        p { "to continue to " strong { (form.client_id) } "." }
        @if let Some(error) = form.error {
            p class="error" role="alert" { (error) }
        }
        form method="post" action=(form.action) {
            input type="hidden" name="request" value=(form.request_id);
            input type="hidden" name="csrf_token" value=(form.csrf);
            label for="username" { "User name" }
            input type="text" id="username" name="username" autocomplete="username"
                autocapitalize="none" spellcheck="false" required autofocus[form.username.is_none()]
                value=[form.username];
            label for="password" { "Password" }
            input type="password" id="password" name="password" autocomplete="current-password"
                required autofocus[form.username.is_some()];
            button type="submit" id="sign-in" { "Sign in" }
        }
    };
    page(status, "Sign in", content, &[], set_cookie)
}

/// What the consent question shows.
pub struct ConsentForm<'a> {
    /// The pending authorization request.
    pub request_id: &'a str,
    /// Its CSRF token.
    pub csrf: &'a str,
    /// The client asking.
    pub client_id: &'a str,
    /// What kind of client it is.
    pub kind: ClientKind,
    /// The signed-in user's display name.
    pub name: &'a str,
    /// Their user name.
    pub username: &'a str,
    /// The scopes asked for.
    pub scopes: &'a [String],
    /// Where the answer goes.
    pub redirect_uri: &'a str,
    /// The origin of `redirect_uri`, allowed as a form target.
    pub redirect_origin: Option<String>,
    /// Where to post the form.
    pub action: &'a str,
}

/// The consent question: who asks, for what, where the answer goes; Approve or Deny.
pub fn consent(form: &ConsentForm<'_>) -> Response {
    let kind = match form.kind {
        ClientKind::Public => "an application on your computer (public client, no secret)",
        ClientKind::Confidential => "a server application (confidential client)",
    };
    let content = html! {
        h1 { "Allow access?" }
        p { "Signed in as " strong { (form.name) } " (" code { (form.username) } ")." }
        p { strong { (form.client_id) } ", " (kind) ", asks to:" }
        ul {
            @for scope in form.scopes {
                @if let Some((_, description)) = SCOPES.iter().find(|(name, _)| name == scope) {
                    li { (description) " (" code { (scope) } ")" }
                }
            }
            li { "Use the Consumer API in your name: sessions it creates are recorded as created by you" }
        }
        p class="note" { "Your answer is sent to " code { (form.redirect_uri) } "." }
        form method="post" action=(form.action) {
            input type="hidden" name="request" value=(form.request_id);
            input type="hidden" name="csrf_token" value=(form.csrf);
            button type="submit" id="approve" name="decision" value="approve" { "Approve" }
            button type="submit" id="deny" name="decision" value="deny" { "Deny" }
        }
    };
    let targets: Vec<String> = form.redirect_origin.iter().cloned().collect();
    page(StatusCode::OK, "Allow access?", content, &targets, None)
}
