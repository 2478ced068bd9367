//! The wire format of the OAuth 2.0 endpoints (token, revocation, sign-in forms): form bodies
//! with single-valued parameters, and RFC 6749 error responses.

use std::collections::HashMap;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An RFC 6749 §5.2 error response.
pub(crate) fn oauth_error(
    status: StatusCode,
    error: &str,
    description: &str,
    basic_challenge: bool,
) -> Response {
    let mut response = (
        status,
        axum::Json(json!({ "error": error, "error_description": description })),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    if basic_challenge {
        headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"consumer\""),
        );
    }
    response
}

/// Form parameters, each at most once (RFC 6749 §3.1, §3.2): one pass with a map, so the work
/// grows with the body whatever an anonymous caller sends. The error names the repeated one.
pub(crate) fn single_valued(form: &[u8]) -> Result<HashMap<String, String>, String> {
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in form_urlencoded::parse(form) {
        match params.entry(name.into_owned()) {
            std::collections::hash_map::Entry::Occupied(repeated) => {
                return Err(format!(
                    "The parameter `{}` is given more than once.",
                    repeated.key()
                ));
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(value.into_owned());
            }
        }
    }
    Ok(params)
}

/// Whether the request's body is declared form-encoded.
pub(crate) fn is_form_encoded(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| {
            media
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}
