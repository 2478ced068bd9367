//! [`ApiError`]: the service answered with an error status; what its messages show of the
//! service's answer (see the [`error`](super) module's "Personal data").

use std::fmt;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::operation_name::op_name;
use crate::types::ProblemDetails;

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

    /// The body as text (lossy). It may echo the request, personal data included: see the
    /// [module documentation](crate::error#personal-data).
    pub fn body_text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// The problem's `detail`, when the service sent one. Not part of `Display`: it may echo
    /// personal data (see the [module documentation](crate::error#personal-data)).
    pub fn detail(&self) -> Option<&str> {
        self.problem
            .as_ref()?
            .detail
            .as_deref()
            .filter(|d| !d.trim().is_empty())
    }

    /// The first 200 characters of a body that is not a problem (an HTML page from a proxy, a
    /// plain-text message), trimmed; `None` for a problem or an empty body. Not part of
    /// `Display`: it may echo personal data (see the [module documentation](crate::error#personal-data)).
    pub fn body_excerpt(&self) -> Option<String> {
        if self.problem.is_some() {
            return None;
        }
        let text = self.body_text();
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let mut excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
        if text.chars().nth(EXCERPT_CHARS).is_some() {
            excerpt.push('…');
        }
        Some(excerpt)
    }

    /// The message with what the service wrote: the problem's `detail`, every validation
    /// message, or an excerpt of a body that is not a problem. For the person who made the
    /// request (a command's user, a developer); not for logs where personal data may not go.
    pub fn with_service_text(&self) -> WithServiceText<'_> {
        WithServiceText(self)
    }
}

/// How many characters of a body [`ApiError::body_excerpt`] keeps.
const EXCERPT_CHARS: usize = 200;

/// An [`ApiError`] printed with what the service wrote ([`ApiError::with_service_text`]).
pub struct WithServiceText<'a>(&'a ApiError);

impl fmt::Display for WithServiceText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.render(f, true)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f, false)
    }
}

impl ApiError {
    fn title(&self) -> Option<&str> {
        self.problem
            .as_ref()?
            .title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
    }

    /// The message; `with_service_text` adds what the service wrote (see
    /// [`ApiError::with_service_text`]).
    fn render(&self, f: &mut fmt::Formatter<'_>, with_service_text: bool) -> fmt::Result {
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
        let excerpt = self.body_excerpt().filter(|_| with_service_text);
        match self.title() {
            Some(title) => write!(f, ": {title}")?,
            None if excerpt.is_some() => {}
            // Without a problem, the status is all there is: say what it means here. The
            // service documents 401, 403, 404 and 500 without a body.
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
        if with_service_text && let Some(detail) = self.detail() {
            write!(f, ": {detail}")?;
        }
        if let Some(errors) = self.validation_errors().filter(|e| !e.is_empty()) {
            if with_service_text {
                for (field, messages) in errors {
                    write!(f, "; {field}: {}", messages.join(" "))?;
                }
            } else {
                let fields: Vec<&str> = errors.keys().map(String::as_str).collect();
                write!(f, " (invalid: {})", fields.join(", "))?;
            }
        }
        if let Some(excerpt) = excerpt {
            write!(f, ": {excerpt}")?;
        }
        match self.retry_after() {
            Some(wait) if !wait.is_zero() => write!(f, " (retry after {} s)", wait.as_secs()),
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Headers may carry cookies or tokens a proxy echoed back: only their names are shown.
        // The problem as `Display` shows it (see the module documentation's "Personal data").
        f.debug_struct("ApiError")
            .field("operation", &self.operation)
            .field("status", &self.status)
            .field("header_names", &HeaderNames(&self.headers))
            .field("problem", &self.problem.as_ref().map(ProblemOutline))
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A header map's `Debug` as its names only: values may be cookies or tokens (`Set-Cookie`, a
/// proxy's echo of `Authorization`), and which ones are secret cannot be told from the name.
pub(crate) struct HeaderNames<'a>(pub(crate) &'a HeaderMap);

impl fmt::Debug for HeaderNames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.keys().map(|k| k.as_str()))
            .finish()
    }
}

/// A problem's `Debug` without what may echo the request: its type, title and status, the
/// names of invalid fields and of extension members, and the length of its `detail`.
struct ProblemOutline<'a>(&'a ProblemDetails);

impl fmt::Debug for ProblemOutline<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problem = self.0;
        f.debug_struct("ProblemDetails")
            .field("type_", &problem.type_)
            .field("title", &problem.title)
            .field("status", &problem.status)
            .field(
                "detail_len",
                &problem.detail.as_ref().map(|d| d.chars().count()),
            )
            .field(
                "error_fields",
                &problem
                    .errors
                    .as_ref()
                    .map(|e| e.keys().collect::<Vec<_>>()),
            )
            .field(
                "extension_names",
                &problem.extra.names().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl std::error::Error for ApiError {}
