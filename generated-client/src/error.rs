//! One error type to match on.
//!
//! Every failure of a call, whatever stage it comes from, is an [`Error`]:
//!
//! | variant | when |
//! |---|---|
//! | [`Error::Api`] | the service answered with a 4xx/5xx status (problem details decoded when present) |
//! | [`Error::Auth`] | no access token could be obtained (token endpoint refused, unreachable, ...) |
//! | [`Error::Timeout`] | a connect, request or idle-read timeout passed |
//! | [`Error::Transport`] | the connection failed or broke |
//! | [`Error::Decode`] | a success body did not match its type |
//! | [`Error::ResponseTooLarge`] | a success body was larger than [`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body) |
//! | [`Error::Redirect`] | the service redirected a call to another origin, which is not followed |
//! | [`Error::InvalidResponse`] | the service's answers contradict each other (paging that loops or lies, ...) |
//! | [`Error::InvalidRequest`] | the call was not sent: a required parameter is missing or invalid |
//! | [`Error::Io`], [`Error::Download`] | a download could not be written or was cut short |
//! | [`Error::Config`] | the client could not be built from its configuration |
//! | [`Error::WaitTimedOut`] | a wait for the customer reached its deadline |
//!
//! Generated `send()` calls return progenitor's error type; `?` converts it into [`Error`]
//! (`From` impl), and [`OperationExt::call`](crate::operation::OperationExt::call) returns
//! [`Error`] directly with the operation filled in everywhere. Messages are written for a person
//! and never contain credentials or tokens.
//!
//! # Personal data
//!
//! Calls carry personal data in their query (`SubjectEmail`, `SubjectFullName`, ...) and in
//! their bodies. Neither reaches an error's `Display` or `Debug` output, nor the logs: a URL is
//! shown with its path and the *names* of its query parameters only (also inside the
//! `reqwest::Error` a [`Error::Transport`] or [`Error::Timeout`] carries), and a
//! [`DecodeError`] names the path in the body and the kind of mismatch, never the value found
//! there. [`DecodeError::body_snippet`] returns the body around the failure for whoever
//! explicitly asks for it while debugging.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use crate::auth::AuthError;
use crate::types::ProblemDetails;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any failure of a call. See the [module documentation](self).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with an error status.
    #[error(transparent)]
    Api(Box<ApiError>),
    /// No access token could be obtained (the call was not sent).
    #[error("{operation}: could not obtain an access token: {source}", operation = op_name(operation))]
    Auth {
        /// The operation that needed the token, when known.
        operation: Option<&'static str>,
        /// What the identity provider (or the way to it) said.
        source: AuthError,
    },
    /// A timeout passed: connecting, waiting for a JSON answer (the per-request timeout), or
    /// waiting for more of a body (the idle-read timeout).
    #[error("{operation}: the service did not answer in time{}: {}", attempts_suffix(*attempts), error_chain(source.as_ref()), operation = op_name(operation))]
    Timeout {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// How many attempts were made.
        attempts: u32,
        /// The underlying error.
        source: Arc<reqwest::Error>,
    },
    /// The connection could not be made or broke.
    #[error("{operation}: the connection to the service failed{}: {}", attempts_suffix(*attempts), error_chain(source.as_ref()), operation = op_name(operation))]
    Transport {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// How many attempts were made.
        attempts: u32,
        /// The underlying error.
        source: Arc<reqwest::Error>,
    },
    /// A success body did not match the type the API description gives it.
    #[error(transparent)]
    Decode(Box<DecodeError>),
    /// A success body was larger than the limit
    /// ([`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body)); it was
    /// not read further.
    #[error("{operation}: the service's answer is larger than the limit of {limit} bytes, so it was not read (ClientBuilder::max_response_body sets the limit)", operation = op_name(operation))]
    ResponseTooLarge {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// The limit in bytes.
        limit: u64,
    },
    /// The service answered with a redirect to another origin (scheme, host or port). It is not
    /// followed: the access token and the request body stay with the service's origin.
    #[error("{operation}: the service redirected the call ({status}) to {location}, another origin; not followed, so neither the access token nor the request left the service's origin", operation = op_name(operation))]
    Redirect {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// The redirect status (301, 302, 303, 307, 308).
        status: StatusCode,
        /// Where the redirect pointed: scheme, host, port and path (never the query, which may
        /// carry personal data).
        location: String,
    },
    /// The service's answer contradicts the request or an earlier answer (a page for another
    /// offset, a repeated page, a total the pages never reach, ...): the client stopped rather
    /// than loop, repeat or silently drop data.
    #[error("{operation}: the service's answer cannot be trusted: {message}", operation = op_name(operation))]
    InvalidResponse {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// What is inconsistent.
        message: String,
    },
    /// The call was not sent: a parameter is missing or cannot be converted.
    #[error("{operation}: invalid request: {message}", operation = op_name(operation))]
    InvalidRequest {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// What is wrong.
        message: String,
    },
    /// A download could not be completed (cut short, or its length did not match).
    #[error("{operation}: download failed: {message}", operation = op_name(operation))]
    Download {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// What went wrong.
        message: String,
    },
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's error.
        source: Arc<std::io::Error>,
    },
    /// The client could not be built.
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// [`Client::wait_for_customer`](crate::Client::wait_for_customer) reached its deadline
    /// while the session was still waiting for the customer.
    #[error("session {}: still {} when the wait ended after {} s", session.id, session.customer_progress_status, waited.as_secs())]
    WaitTimedOut {
        /// The session as last seen.
        session: Box<crate::types::Session>,
        /// How long the wait lasted.
        waited: std::time::Duration,
    },
}

fn op_name(operation: &Option<&'static str>) -> &'static str {
    operation.unwrap_or("request")
}

fn attempts_suffix(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}

/// `error: cause: cause`, as people read it (reqwest's own message alone says "error sending
/// request" and hides the reason).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl Error {
    /// The HTTP status, for errors the service answered.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Api(e) => Some(e.status),
            _ => None,
        }
    }

    /// How long the service asked to wait before trying again (`Retry-After`), for errors the
    /// service answered with one. The client retries by itself only within its
    /// [`RetryPolicy`](crate::retry::RetryPolicy); see [`crate::retry`].
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::Api(e) => e.retry_after(),
            _ => None,
        }
    }

    /// How many attempts were made, for transport failures and timeouts.
    pub fn attempts(&self) -> Option<u32> {
        match self {
            Error::Timeout { attempts, .. } | Error::Transport { attempts, .. } => Some(*attempts),
            _ => None,
        }
    }

    /// The problem details the service sent, if it sent any.
    pub fn problem(&self) -> Option<&ProblemDetails> {
        match self {
            Error::Api(e) => e.problem.as_ref(),
            _ => None,
        }
    }

    /// The operation (operationId of the API description) the error belongs to, when known.
    pub fn operation(&self) -> Option<&'static str> {
        match self {
            Error::Api(e) => e.operation,
            Error::Decode(e) => e.operation,
            Error::Auth { operation, .. }
            | Error::Timeout { operation, .. }
            | Error::Transport { operation, .. }
            | Error::InvalidRequest { operation, .. }
            | Error::Download { operation, .. }
            | Error::ResponseTooLarge { operation, .. }
            | Error::Redirect { operation, .. }
            | Error::InvalidResponse { operation, .. } => *operation,
            Error::Io { .. } | Error::Config(_) | Error::WaitTimedOut { .. } => None,
        }
    }

    /// Whether the same call could succeed if made again later (the client has already retried
    /// what its retry policy allows).
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Api(e) => matches!(e.status.as_u16(), 408 | 429 | 502 | 503 | 504),
            Error::Timeout { .. } | Error::Transport { .. } => true,
            Error::Auth { source, .. } => source.is_transient(),
            _ => false,
        }
    }

    /// Fills in the operation where the error does not know it yet.
    pub(crate) fn with_operation(mut self, id: &'static str) -> Self {
        match &mut self {
            Error::Api(e) => {
                e.operation.get_or_insert(id);
            }
            Error::Decode(e) => {
                e.operation.get_or_insert(id);
            }
            Error::Auth { operation, .. }
            | Error::Timeout { operation, .. }
            | Error::Transport { operation, .. }
            | Error::InvalidRequest { operation, .. }
            | Error::Download { operation, .. }
            | Error::ResponseTooLarge { operation, .. }
            | Error::Redirect { operation, .. }
            | Error::InvalidResponse { operation, .. } => {
                operation.get_or_insert(id);
            }
            Error::Io { .. } | Error::Config(_) | Error::WaitTimedOut { .. } => {}
        }
        self
    }

    /// A transport-level failure, classified as timeout or transport (or as a body over its
    /// limit), with the URL's query values removed.
    pub(crate) fn from_reqwest(
        operation: Option<&'static str>,
        attempts: u32,
        error: reqwest::Error,
    ) -> Self {
        if let Some(limit) = body_limit_exceeded(&error) {
            return Error::ResponseTooLarge { operation, limit };
        }
        let source = Arc::new(redact_reqwest(error));
        if source.is_timeout() {
            Error::Timeout {
                operation,
                attempts,
                source,
            }
        } else {
            Error::Transport {
                operation,
                attempts,
                source,
            }
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source: Arc::new(source),
        }
    }
}

/// The service answered a call with an error status.
#[derive(Clone)]
pub struct ApiError {
    /// The operation (operationId), when known.
    pub operation: Option<&'static str>,
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers (`Retry-After`, correlation ids, ...).
    pub headers: HeaderMap,
    /// The problem details, when the body was one (validation failures carry `errors`).
    pub problem: Option<ProblemDetails>,
    /// The body as received (capped at [`MAX_ERROR_BODY`] bytes); empty for body-less errors.
    pub body: Bytes,
}

/// The most bytes of an error body the client keeps.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

impl ApiError {
    /// Builds the error from a status, headers and body, decoding problem details when the body
    /// is a JSON object that reads as one.
    pub fn new(
        operation: Option<&'static str>,
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
    ) -> Self {
        let problem = if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            serde_json::from_slice::<ProblemDetails>(&body).ok()
        } else {
            None
        };
        ApiError {
            operation,
            status,
            headers,
            problem,
            body,
        }
    }

    /// How long the service asked to wait before trying again (`Retry-After`, seconds or an
    /// HTTP date, measured from now).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        crate::retry::retry_after(&self.headers, std::time::SystemTime::now())
    }

    /// The validation failures (field name → messages) of a 400, if the service listed any.
    pub fn validation_errors(&self) -> Option<&std::collections::BTreeMap<String, Vec<String>>> {
        self.problem.as_ref()?.errors.as_ref()
    }

    /// The body as text (lossy), for display.
    pub fn body_text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let operation = op_name(&self.operation);
        if self.status.is_success() {
            // A success status the API description does not list for this operation.
            return write!(
                f,
                "{operation}: the service answered {}, which the API description does not list for this operation",
                self.status
            );
        }
        write!(f, "{operation}: the service answered {}", self.status)?;
        match &self.problem {
            Some(p) => {
                let title = p.title.as_deref().filter(|t| !t.is_empty());
                let detail = p.detail.as_deref().filter(|d| !d.is_empty());
                match (title, detail) {
                    (Some(t), Some(d)) => write!(f, ": {t}: {d}")?,
                    (Some(t), None) => write!(f, ": {t}")?,
                    (None, Some(d)) => write!(f, ": {d}")?,
                    (None, None) => {}
                }
                if let Some(errors) = &p.errors {
                    for (field, messages) in errors {
                        write!(f, "; {field}: {}", messages.join(" "))?;
                    }
                }
            }
            None if !self.body.is_empty() => {
                let text = self.body_text();
                let text = text.trim();
                let snippet: String = text.chars().take(200).collect();
                let ellipsis = if text.chars().count() > 200 {
                    "…"
                } else {
                    ""
                };
                write!(f, ": {snippet}{ellipsis}")?;
            }
            // The service documents 401, 403, 404 and 500 without a body: say what they mean.
            None => match self.status.as_u16() {
                401 => f.write_str(" (the access token was missing, expired or not accepted)")?,
                403 => f.write_str(" (these credentials may not do this)")?,
                404 => {
                    f.write_str(" (no such resource, or it is not visible to these credentials)")?
                }
                429 => f.write_str(" (too many requests; slow down)")?,
                s if s >= 500 => f.write_str(" (a failure on the service's side)")?,
                _ => {}
            },
        }
        if let Some(wait) = self.retry_after()
            && !wait.is_zero()
        {
            write!(f, " (retry after {} s)", wait.as_secs())?;
        }
        Ok(())
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Headers may carry cookies or tokens a proxy echoed back: only their names are shown.
        f.debug_struct("ApiError")
            .field("operation", &self.operation)
            .field("status", &self.status)
            .field(
                "header_names",
                &self.headers.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
            )
            .field("problem", &self.problem)
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl std::error::Error for ApiError {}

/// A success body that did not match its type.
///
/// Its `Display` and `Debug` name the operation, the path in the body and the kind of mismatch
/// (`invalid type: integer, expected a string`), never a value of the body: bodies carry
/// personal data. [`body_snippet`](Self::body_snippet) gives the body around the failure to
/// whoever asks for it explicitly.
#[derive(Clone)]
pub struct DecodeError {
    /// The operation, when known.
    pub operation: Option<&'static str>,
    /// Where in the body decoding failed, as a path (`sessions[3].createdAtUtc`), when known.
    pub path: Option<String>,
    /// What the decoder said, with the values it quoted from the body removed.
    pub message: String,
    /// A bounded excerpt of the body around the failure (see `body_snippet`).
    pub(crate) snippet: String,
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("operation", &self.operation)
            .field("path", &self.path)
            .field("message", &self.message)
            .field("snippet_len", &self.snippet.chars().count())
            .finish()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the response body does not match its type",
            op_name(&self.operation)
        )?;
        if let Some(path) = &self.path {
            write!(f, " at `{path}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// A decode error that quotes nothing of the body.
    pub(crate) fn new(
        operation: Option<&'static str>,
        path: Option<String>,
        message: String,
    ) -> Self {
        DecodeError {
            operation,
            path,
            message,
            snippet: String::new(),
        }
    }

    /// At most about 120 characters of the body around the failure, for debugging. This is
    /// the service's data as received, personal data included: it is never part of the
    /// error's `Display` or `Debug` output, and should not be logged where personal data may
    /// not go. Empty when the failure has no position in a body.
    pub fn body_snippet(&self) -> &str {
        &self.snippet
    }

    /// Describes why `body` failed to decode, with an excerpt around the failure.
    pub(crate) fn from_serde(
        operation: Option<&'static str>,
        path: Option<String>,
        error: &serde_json::Error,
        body: &[u8],
    ) -> Self {
        DecodeError {
            operation,
            path,
            message: without_quoted_values(&error.to_string()),
            snippet: snippet_around(body, error.line(), error.column()),
        }
    }
}

/// serde's message without the values it quotes from the input: `invalid type: integer
/// `38001085718`, expected a string` becomes `invalid type: integer, expected a string`. serde
/// puts what it found in backticks (numbers, characters, variant and field names) or in double
/// quotes (strings, escaped), before `, expected ...`, which describes the type and is kept.
fn without_quoted_values(message: &str) -> String {
    let (found, expected) = match message.find(", expected") {
        Some(at) => message.split_at(at),
        None => (message, ""),
    };
    let mut out = String::with_capacity(message.len());
    let mut chars = found.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                for c in chars.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
                trim_trailing_space(&mut out);
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                trim_trailing_space(&mut out);
            }
            c => out.push(c),
        }
    }
    out.push_str(expected);
    out
}

fn trim_trailing_space(text: &mut String) {
    while text.ends_with(' ') {
        text.pop();
    }
}

/// At most 120 characters of `body` around one-based `line`/`column`.
fn snippet_around(body: &[u8], line: usize, column: usize) -> String {
    const RADIUS: usize = 60;
    let text = String::from_utf8_lossy(body);
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = line_text.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let start = at.saturating_sub(RADIUS);
    let end = (at + RADIUS).min(chars.len());
    let mut s: String = chars[start..end].iter().collect();
    if start > 0 {
        s.insert(0, '…');
    }
    if end < chars.len() {
        s.push('…');
    }
    s
}

/// A failure the runtime hooks decided on, carried through progenitor's generated code in the
/// extensions of a synthesized response (the hooks can only return responses or reqwest errors).
#[derive(Clone)]
pub(crate) struct CarriedError(pub(crate) Arc<Error>);

impl<E> From<progenitor_client::Error<E>> for Error
where
    E: serde::Serialize,
{
    fn from(error: progenitor_client::Error<E>) -> Self {
        use progenitor_client::Error as P;
        match error {
            P::UnexpectedResponse(response) => match response.extensions().get::<CarriedError>() {
                Some(CarriedError(carried)) => Arc::unwrap_or_clone(carried.clone()),
                // A status the generated code does not expect (only a 1xx/2xx/3xx gets this far:
                // the runtime carries every error status). Its body is not read.
                None => Error::Api(Box::new(ApiError::new(
                    None,
                    response.status(),
                    response.headers().clone(),
                    Bytes::new(),
                ))),
            },
            P::ErrorResponse(value) => {
                let status = value.status();
                let headers = value.headers().clone();
                let body = serde_json::to_vec(&value.into_inner())
                    .map(Bytes::from)
                    .unwrap_or_default();
                Error::Api(Box::new(ApiError::new(None, status, headers, body)))
            }
            P::CommunicationError(e) if e.is_builder() => Error::InvalidRequest {
                operation: None,
                message: error_chain(&redact_reqwest(e)),
            },
            P::CommunicationError(e) | P::ResponseBodyError(e) | P::InvalidUpgrade(e) => {
                Error::from_reqwest(None, 1, e)
            }
            P::InvalidResponsePayload(body, e) => {
                Error::Decode(Box::new(DecodeError::from_serde(None, None, &e, &body)))
            }
            P::InvalidRequest(message) | P::Custom(message) => Error::InvalidRequest {
                operation: None,
                message,
            },
        }
    }
}

impl From<Box<ApiError>> for Error {
    fn from(e: Box<ApiError>) -> Self {
        Error::Api(e)
    }
}

/// A value a validating request type refused (`"gbr".parse::<QueryParameterInputCountryCode>()`,
/// an over-long e-mail address): the request was never built, let alone sent.
impl From<crate::types::error::ConversionError> for Error {
    fn from(e: crate::types::error::ConversionError) -> Self {
        Error::InvalidRequest {
            operation: None,
            message: e.to_string(),
        }
    }
}

/// Whether `error` (a body read) stopped at a body-size limit, and which.
pub(crate) fn body_limit_exceeded(error: &(dyn std::error::Error + 'static)) -> Option<u64> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(exceeded) = cause.downcast_ref::<BodyLimitExceeded>() {
            return Some(exceeded.limit);
        }
        source = cause.source();
    }
    None
}

/// A body was longer than the limit it was read with.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the body is larger than the limit of {limit} bytes")]
pub(crate) struct BodyLimitExceeded {
    pub(crate) limit: u64,
}

/// `error` with the query values of its URL removed (see [`redact_url`]).
pub(crate) fn redact_reqwest(mut error: reqwest::Error) -> reqwest::Error {
    if let Some(url) = error.url_mut() {
        *url = redact_url(url);
    }
    error
}

/// `url` as errors and logs may show it: scheme, host, port, path and the names of the query
/// parameters (`/v1/sessions?SubjectEmail&Take`), never their values, no user-info, no
/// fragment.
pub(crate) fn redact_url(url: &reqwest::Url) -> reqwest::Url {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_fragment(None);
    if url.query().is_some() {
        let names: Vec<String> = url
            .query_pairs()
            .map(|(name, _)| {
                percent_encoding::utf8_percent_encode(&name, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            })
            .collect();
        shown.set_query((!names.is_empty()).then(|| names.join("&")).as_deref());
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_lose_the_values_they_quote() {
        for (message, expected) in [
            (
                "invalid type: integer `38001085718`, expected a string at line 1 column 9",
                "invalid type: integer, expected a string at line 1 column 9",
            ),
            (
                r#"invalid type: string "jane \"j\" doe", expected u32"#,
                "invalid type: string, expected u32",
            ),
            (
                "unknown variant `PAUSED`, expected one of `A`, `B`",
                "unknown variant, expected one of `A`, `B`",
            ),
            ("missing field `id`", "missing field"),
            (
                "trailing characters at line 1 column 3",
                "trailing characters at line 1 column 3",
            ),
        ] {
            assert_eq!(without_quoted_values(message), expected, "{message}");
        }
    }

    #[test]
    fn urls_keep_path_and_parameter_names_only() {
        let url = reqwest::Url::parse(
            "http://u:p@127.0.0.1:8/v1/sessions?SubjectEmail=jane%40example.com&Take=10#f",
        )
        .unwrap();
        assert_eq!(
            redact_url(&url).as_str(),
            "http://127.0.0.1:8/v1/sessions?SubjectEmail&Take"
        );
        let plain = reqwest::Url::parse("https://h/v1/sessions/1").unwrap();
        assert_eq!(redact_url(&plain), plain);
    }
}
