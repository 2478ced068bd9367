//! One error type to match on.
//!
//! Every failure of a call, whatever stage it comes from, is an [`Error`]:
//!
//! | variant | when |
//! |---|---|
//! | [`Error::Api`] | the service answered with a 4xx/5xx status (problem details decoded when present) |
//! | [`Error::Auth`] | no access token could be obtained (token endpoint refused, unreachable, ...) |
//! | [`Error::Timeout`] | a connect, request or idle-read timeout passed |
//! | [`Error::DeadlineExceeded`] | a call's own deadline ([`CallOptions::timeout`](crate::call_options::CallOptions::timeout)) passed |
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
//! Every builder's `call()` returns [`Error`] with the operation filled in everywhere (the
//! runtime's one door, `runtime::send`, returns it as it is). Messages are written for a
//! person and never contain credentials or tokens.
//!
//! # Printing an error
//!
//! Each error's `Display` says what failed in one short sentence; the cause (the identity
//! provider's answer, the connection's failure, the operating system's error) is its
//! [`source()`](std::error::Error::source), never repeated in the message. That is what chain
//! printers expect: anyhow's `{:#}` and eyre print each cause once,
//! `GetSession: the connection to the service failed after 4 attempts: error sending request for
//! url (http://127.0.0.1:9/v1/sessions/…): client error (Connect): tcp connect error: Connection
//! refused (os error 111)`. Without such a printer, [`DisplayChain`] prints the same line, and
//! `tracing` records the chain when given the error as `error = &error as &dyn
//! std::error::Error`.
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
//!
//! What the service writes in an error answer may echo the request, personal data included
//! (`Unknown subject jane.doe@example.com`, `The value 'Jane Doe' is not valid`). An
//! [`ApiError`]'s `Display` therefore shows the status, the problem's `title` (a fixed phrase
//! such as `One or more validation errors occurred.`) and the *names* of the fields a
//! validation failure lists, never the problem's `detail`, the validation messages or the body
//! of an answer that is not a problem. They stay reachable for whoever asks explicitly:
//! [`ApiError::detail`], [`ApiError::validation_errors`], [`ApiError::body_excerpt`] and
//! [`ApiError::with_service_text`], which prints them all.

use std::fmt;
use std::sync::Arc;

use reqwest::StatusCode;

use crate::auth::error::AuthError;
use crate::body_limits::body_limit_exceeded;
use crate::types::ProblemDetails;
use crate::urls::redact_reqwest;

mod api;
mod decode;
mod operation_name;

pub(crate) use api::HeaderNames;
pub use api::{ApiError, MAX_ERROR_BODY, WithServiceText};
pub use decode::DecodeError;
use operation_name::op_name;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any failure of a call. See the [module documentation](self).
///
/// Its `Debug` output holds no personal data either: the session of
/// [`WaitTimedOut`](Error::WaitTimedOut) shows as its id and status.
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service answered with an error status.
    #[error(transparent)]
    Api(Box<ApiError>),
    /// No access token could be obtained (the call was not sent).
    #[error("{operation}: could not obtain an access token", operation = op_name(operation))]
    Auth {
        /// The operation that needed the token, when known.
        operation: Option<&'static str>,
        /// What the identity provider (or the way to it) said.
        source: AuthError,
    },
    /// A timeout passed: connecting, waiting for a JSON answer (the per-request timeout), or
    /// waiting for more of a body (the idle-read timeout).
    #[error("{operation}: the service did not answer in time{}", attempts_suffix(*attempts), operation = op_name(operation))]
    Timeout {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// How many attempts were made.
        attempts: u32,
        /// The underlying error.
        source: Arc<reqwest::Error>,
    },
    /// The call's own deadline ([`CallOptions::timeout`](crate::call_options::CallOptions::timeout))
    /// passed before its answer arrived: attempts, waits for the rate limiter, for a token and
    /// between retries included.
    #[error("{operation}: the call's deadline of {timeout:?} passed before the service answered{}", attempts_suffix(*attempts), operation = op_name(operation))]
    DeadlineExceeded {
        /// The operation, when known.
        operation: Option<&'static str>,
        /// How many attempts were started.
        attempts: u32,
        /// The deadline the call was given.
        timeout: std::time::Duration,
    },
    /// The connection could not be made or broke.
    #[error("{operation}: the connection to the service failed{}", attempts_suffix(*attempts), operation = op_name(operation))]
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
        /// The connection's failure, when the connection broke.
        source: Option<Arc<reqwest::Error>>,
    },
    /// A downloaded body could not be written to a local file or stream.
    #[error("cannot write {path}")]
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

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api(e) => f.debug_tuple("Api").field(e).finish(),
            Error::Auth { operation, source } => f
                .debug_struct("Auth")
                .field("operation", operation)
                .field("source", source)
                .finish(),
            Error::Timeout {
                operation,
                attempts,
                source,
            } => f
                .debug_struct("Timeout")
                .field("operation", operation)
                .field("attempts", attempts)
                .field("source", source)
                .finish(),
            Error::DeadlineExceeded {
                operation,
                attempts,
                timeout,
            } => f
                .debug_struct("DeadlineExceeded")
                .field("operation", operation)
                .field("attempts", attempts)
                .field("timeout", timeout)
                .finish(),
            Error::Transport {
                operation,
                attempts,
                source,
            } => f
                .debug_struct("Transport")
                .field("operation", operation)
                .field("attempts", attempts)
                .field("source", source)
                .finish(),
            Error::Decode(e) => f.debug_tuple("Decode").field(e).finish(),
            Error::ResponseTooLarge { operation, limit } => f
                .debug_struct("ResponseTooLarge")
                .field("operation", operation)
                .field("limit", limit)
                .finish(),
            Error::Redirect {
                operation,
                status,
                location,
            } => f
                .debug_struct("Redirect")
                .field("operation", operation)
                .field("status", status)
                .field("location", location)
                .finish(),
            Error::InvalidResponse { operation, message } => f
                .debug_struct("InvalidResponse")
                .field("operation", operation)
                .field("message", message)
                .finish(),
            Error::InvalidRequest { operation, message } => f
                .debug_struct("InvalidRequest")
                .field("operation", operation)
                .field("message", message)
                .finish(),
            Error::Download {
                operation,
                message,
                source,
            } => f
                .debug_struct("Download")
                .field("operation", operation)
                .field("message", message)
                .field("source", source)
                .finish(),
            Error::Io { path, source } => f
                .debug_struct("Io")
                .field("path", path)
                .field("source", source)
                .finish(),
            Error::Config(message) => f.debug_tuple("Config").field(message).finish(),
            // The session holds the data subject's e-mail and name.
            Error::WaitTimedOut { session, waited } => f
                .debug_struct("WaitTimedOut")
                .field("session_id", &session.id)
                .field("status", &session.customer_progress_status)
                .field("waited", waited)
                .finish(),
        }
    }
}

fn attempts_suffix(attempts: u32) -> String {
    if attempts > 1 {
        format!(" after {attempts} attempts")
    } else {
        String::new()
    }
}

/// Prints an error and its causes on one line, `error: cause: cause`, as anyhow's `{:#}` does:
/// for programs that print errors without such a printer. A cause whose text the line already
/// holds is not repeated.
///
/// ```
/// use creditdata_client::error::DisplayChain;
///
/// let error = std::io::Error::other("disk full");
/// assert_eq!(DisplayChain(&error).to_string(), "disk full");
/// ```
#[derive(Clone, Copy)]
pub struct DisplayChain<'a>(pub &'a (dyn std::error::Error + 'a));

impl fmt::Display for DisplayChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.0.to_string();
        let mut source = self.0.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !shown.contains(&text) {
                shown.push_str(": ");
                shown.push_str(&text);
            }
            source = cause.source();
        }
        f.write_str(&shown)
    }
}

impl fmt::Debug for DisplayChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
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
            Error::Timeout { attempts, .. }
            | Error::Transport { attempts, .. }
            | Error::DeadlineExceeded { attempts, .. } => Some(*attempts),
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
            | Error::DeadlineExceeded { operation, .. }
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
            Error::Api(e) => crate::retry::is_retryable_status(e.status),
            Error::Timeout { .. } | Error::Transport { .. } | Error::DeadlineExceeded { .. } => {
                true
            }
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
            | Error::DeadlineExceeded { operation, .. }
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
