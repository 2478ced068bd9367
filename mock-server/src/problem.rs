//! RFC 9457 problem details, the body of every error response of the service.
//!
//! The effective API description declares `application/json` with the `ProblemDetails` schema for
//! 400, 401, 403, 404 and 500, so that is what every refusal carries: `status` and `title` always
//! set, `detail` saying why, and `errors` (field → messages) on validation failures, in the shape
//! ASP.NET services send.

use crate::built::Built;
use std::collections::BTreeMap;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use creditdata_client::types::ProblemDetails;

/// The `type` ASP.NET sets on a 400.
const TYPE_BAD_REQUEST: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.1";
const TYPE_UNAUTHORIZED: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.2";
const TYPE_FORBIDDEN: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.4";
const TYPE_NOT_FOUND: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.5";
const TYPE_METHOD_NOT_ALLOWED: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.6";
const TYPE_CONFLICT: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.10";
const TYPE_PAYLOAD_TOO_LARGE: &str = "https://tools.ietf.org/html/rfc9110#section-15.5.14";
const TYPE_INTERNAL: &str = "https://tools.ietf.org/html/rfc9110#section-15.6.1";
const TYPE_NOT_IMPLEMENTED: &str = "https://tools.ietf.org/html/rfc9110#section-15.6.2";
const TYPE_TOO_MANY_REQUESTS: &str = "https://tools.ietf.org/html/rfc6585#section-4";
const TYPE_BAD_GATEWAY: &str = "https://tools.ietf.org/html/rfc9110#section-15.6.3";
const TYPE_SERVICE_UNAVAILABLE: &str = "https://tools.ietf.org/html/rfc9110#section-15.6.4";
const TYPE_GATEWAY_TIMEOUT: &str = "https://tools.ietf.org/html/rfc9110#section-15.6.5";

/// An error response: a status and the problem details that explain it.
#[derive(Clone)]
pub struct Problem {
    status: StatusCode,
    body: Box<ProblemDetails>,
    www_authenticate: Option<String>,
    allow: Option<String>,
}

impl std::fmt::Debug for Problem {
    // The detail and the field messages may quote what the caller sent (an e-mail address) or
    // the session's subject: only the status, the title and the names of invalid fields show.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let invalid_fields: Option<Vec<&String>> = self
            .body
            .errors
            .as_ref()
            .map(|errors| errors.keys().collect());
        f.debug_struct("Problem")
            .field("status", &self.status)
            .field("title", &self.body.title)
            .field("invalid_fields", &invalid_fields)
            .finish_non_exhaustive()
    }
}

impl Problem {
    fn new(status: StatusCode, type_: &str, title: &str, detail: impl Into<String>) -> Self {
        Problem {
            status,
            body: Box::new(
                ProblemDetails::builder()
                    .type_(Some(type_.to_owned()))
                    .title(Some(title.to_owned()))
                    .status(Some(i32::from(status.as_u16())))
                    .detail(Some(detail.into()))
                    .build()
                    .built(),
            ),
            www_authenticate: None,
            allow: None,
        }
    }

    /// 400: the request is understood but refused; `detail` says why.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            TYPE_BAD_REQUEST,
            "Bad Request",
            detail,
        )
    }

    /// 400 with field errors (ASP.NET's ValidationProblemDetails).
    pub fn validation(errors: BTreeMap<String, Vec<String>>) -> Self {
        let detail = match errors.len() {
            1 => "The request has 1 invalid field; see errors.".to_owned(),
            n => format!("The request has {n} invalid fields; see errors."),
        };
        let mut problem = Self::new(
            StatusCode::BAD_REQUEST,
            TYPE_BAD_REQUEST,
            "One or more validation errors occurred.",
            detail,
        );
        problem.body.errors = Some(errors);
        problem
    }

    /// 400 with a single field error.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let mut errors = BTreeMap::new();
        errors.insert(field.into(), vec![message.into()]);
        Self::validation(errors)
    }

    /// 401 with a `WWW-Authenticate: Bearer ...` challenge (RFC 6750).
    pub fn unauthorized(detail: impl Into<String>, challenge: String) -> Self {
        let mut problem = Self::new(
            StatusCode::UNAUTHORIZED,
            TYPE_UNAUTHORIZED,
            "Unauthorized",
            detail,
        );
        problem.www_authenticate = Some(challenge);
        problem
    }

    /// 403: authenticated, but not allowed.
    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, TYPE_FORBIDDEN, "Forbidden", detail)
    }

    /// 404: no such resource.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, TYPE_NOT_FOUND, "Not Found", detail)
    }

    /// 405 with the `Allow` header.
    pub fn method_not_allowed(detail: impl Into<String>, allow: Option<String>) -> Self {
        let mut problem = Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            TYPE_METHOD_NOT_ALLOWED,
            "Method Not Allowed",
            detail,
        );
        problem.allow = allow;
        problem
    }

    /// 409: a control endpoint asked for a transition the session's state does not allow.
    pub fn conflict(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, TYPE_CONFLICT, "Conflict", detail)
    }

    /// 413: the request body is larger than the server accepts.
    pub fn payload_too_large(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            TYPE_PAYLOAD_TOO_LARGE,
            "Payload Too Large",
            detail,
        )
    }

    /// 500: a fault of the mock itself (never caused by what a client sends).
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            TYPE_INTERNAL,
            "Internal Server Error",
            detail,
        )
    }

    /// 501: the mock cannot answer this request as the description says it should (an answer
    /// it cannot make up); `detail` names what.
    pub fn not_implemented(detail: impl Into<String>) -> Self {
        Self::new(
            StatusCode::NOT_IMPLEMENTED,
            TYPE_NOT_IMPLEMENTED,
            "Not Implemented",
            detail,
        )
    }

    /// 429: the caller's rate limit is used up (the caller adds `Retry-After`).
    pub fn too_many_requests(detail: impl Into<String>) -> Self {
        Self::injected(StatusCode::TOO_MANY_REQUESTS, detail)
    }

    /// A failure the mock was told to simulate: 429 or a 5xx, with its RFC's type and reason.
    pub fn injected(status: StatusCode, detail: impl Into<String>) -> Self {
        let type_ = match status {
            StatusCode::TOO_MANY_REQUESTS => TYPE_TOO_MANY_REQUESTS,
            StatusCode::BAD_GATEWAY => TYPE_BAD_GATEWAY,
            StatusCode::SERVICE_UNAVAILABLE => TYPE_SERVICE_UNAVAILABLE,
            StatusCode::GATEWAY_TIMEOUT => TYPE_GATEWAY_TIMEOUT,
            _ => TYPE_INTERNAL,
        };
        Self::new(
            status,
            type_,
            status.canonical_reason().unwrap_or("Error"),
            detail,
        )
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The problem details body.
    pub fn body(&self) -> &ProblemDetails {
        &self.body
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&*self.body).unwrap_or_else(|_| b"{}".to_vec());
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(challenge) = self.www_authenticate
            && let Ok(value) = HeaderValue::from_str(&challenge)
        {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        if let Some(allow) = self.allow
            && let Ok(value) = HeaderValue::from_str(&allow)
        {
            headers.insert(header::ALLOW, value);
        }
        response
    }
}

/// Collects field errors; empty means valid.
#[derive(Debug, Default)]
pub struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    /// Records one message for `field` (a camelCase JSON path such as `queryParameters[0].countryCode`).
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.entry(field.into()).or_default().push(message.into());
    }

    /// `Ok(())` when empty, else the 400 validation problem.
    pub fn into_result(self) -> Result<(), Problem> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(Problem::validation(self.0))
        }
    }
}
