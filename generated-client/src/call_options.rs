//! Per-call options (a deadline, a retry policy, extra headers) and raw responses (the decoded
//! body with the final attempt's status and headers and the number of attempts).
//!
//! # Options
//!
//! Every operation's builder has `.options(CallOptions)`, placed last, just before `.call()`
//! (or `.call_with_response()`, `.download()`):
//!
//! ```no_run
//! use std::time::Duration;
//! use creditdata_client::prelude::*; // CallOptions, RetryPolicy
//!
//! async fn show(client: &Client, id: uuid::Uuid) -> Result<()> {
//!     let options = CallOptions::new()
//!         .timeout(Duration::from_secs(5))
//!         .retry(RetryPolicy::disabled())
//!         .header("X-Correlation-Id", "7f3c2a")?;
//!     let session = client.get_session().session_id(id).options(options).call().await?;
//!     println!("{}", session.customer_progress_status);
//!     Ok(())
//! }
//! ```
//!
//! What is not set keeps the client's setting; a call without options is exactly the call it
//! was before. The calls a client makes on its own (the polls and reads of a wait, the reads by
//! metadata) take them through `client.with_options(options)` ([`crate::with_options`]).
//!
//! - **[`timeout`](CallOptions::timeout) is a deadline for the whole call**: the waits for the
//!   rate limiter and for a token, every attempt and the pauses between retries, and reading the
//!   body, of a download too (a large file needs a deadline to match, or none: downloads
//!   without one are bounded only by the client's idle-read timeout). No retry starts that
//!   would have to wait past it. When it passes before the answer is read (its headers, or the
//!   whole body of a JSON answer) the error is [`Error::DeadlineExceeded`]; when it passes while
//!   a download's body streams it is [`Error::Timeout`]. The client's per-attempt timeout of JSON calls
//!   ([`ClientBuilder::request_timeout`](crate::ClientBuilder::request_timeout)) still bounds
//!   each attempt within the deadline.
//! - **[`retry`](CallOptions::retry)** replaces the client's [`RetryPolicy`] for this call
//!   ([`RetryPolicy::disabled`] for a single attempt). Which failures may be retried does not
//!   change: a `POST` is still repeated only when it provably never reached the service.
//! - **[`header`](CallOptions::header)** adds a header to every attempt. The headers the client
//!   owns are refused when the options are built: credentials (`Authorization`,
//!   `Proxy-Authorization`, `Cookie`), the message's framing (`Host`, `Content-Length`,
//!   `Transfer-Encoding` and the connection's own headers), the trace context the telemetry
//!   sends (`traceparent`, `tracestate`) and `User-Agent`
//!   ([`ClientBuilder::user_agent`](crate::ClientBuilder::user_agent)). A header the operation's
//!   request already carries (`Accept`, `Content-Type` of a body, `api-version`, any header
//!   parameter of the description) is refused when the call is made, before anything is sent.
//!   Either refusal is [`Error::InvalidRequest`] naming the header; a value is never echoed.
//!
//! Helpers that make several calls take options too, passed to each call they make, each call
//! with its own deadline: `.options(..)` on `client.session_datasets(id)` and on a
//! [`SessionFilter`](crate::paging::SessionFilter) (every page of `client.sessions(filter)`).
//! A download takes them on its builder (`client.get_pdf_report().session_id(id)
//! .options(..).download()`, what `download_pdf_report` does without them); the waits bound
//! each of their calls by their own deadline ([`WaitOptions`](crate::wait::WaitOptions)).
//! Options are always an argument: nothing carries them beside the call (there is no
//! task-local scope).
//!
//! # Raw responses
//!
//! `call_with_response()` on every builder returns a [`CallResponse`]: the body `call()` would
//! return, with the status and headers of the final attempt and how many attempts were made.
//! Its `Debug` shows header names only (values can be cookies or tokens).

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::{Error, HeaderNames};
use crate::retry::RetryPolicy;

/// Options for one call: a deadline, a retry policy, extra headers. See the
/// [module documentation](self).
#[derive(Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct CallOptions {
    /// The deadline of the call.
    pub(crate) timeout: Option<Duration>,
    /// The retry policy replacing the client's.
    pub(crate) retry: Option<RetryPolicy>,
    /// Extra headers, already checked against the headers no call may set.
    pub(crate) headers: HeaderMap,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("header_names", &HeaderNames(&self.headers))
            .finish()
    }
}

/// Headers no call may set, and why (the start of the refusal's message).
const REFUSED: &[(&str, &str)] = &[
    (
        "authorization",
        "the client sends the access token itself (give the client its credentials when building it)",
    ),
    (
        "proxy-authorization",
        "proxy credentials belong to the HTTP client (ClientBuilder::http_client)",
    ),
    (
        "cookie",
        "the service does not use cookies, and a cookie is a credential the client would have to guard",
    ),
    ("host", "the client sends the service's host"),
    ("content-length", "the client frames the request body"),
    ("transfer-encoding", "the client frames the request body"),
    (
        "connection",
        "the connection's headers belong to the HTTP client",
    ),
    (
        "keep-alive",
        "the connection's headers belong to the HTTP client",
    ),
    (
        "proxy-connection",
        "the connection's headers belong to the HTTP client",
    ),
    ("te", "the connection's headers belong to the HTTP client"),
    (
        "trailer",
        "the connection's headers belong to the HTTP client",
    ),
    (
        "upgrade",
        "the connection's headers belong to the HTTP client",
    ),
    (
        "expect",
        "the connection's headers belong to the HTTP client",
    ),
    (
        "traceparent",
        "the client sends the trace context of the active span",
    ),
    (
        "tracestate",
        "the client sends the trace context of the active span",
    ),
    (
        "user-agent",
        "the client's user agent is set once (ClientBuilder::user_agent)",
    ),
];

impl CallOptions {
    /// No options: every setting is the client's.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// A deadline for the whole call, retries included (see the [module documentation](self)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The retry policy of this call instead of the client's ([`RetryPolicy::disabled`]: one
    /// attempt; a `max_attempts` of 0 counts as 1).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Adds `name: value` to every attempt of the call, replacing an earlier value given here
    /// for the same name.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRequest`] naming the header when `name` is not a header name, `value`
    /// is not a header value (visible ASCII, spaces and tabs), or the client owns the header
    /// (see the [module documentation](self)).
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, Error> {
        let refuse = |message: String| Error::InvalidRequest {
            operation: None,
            message,
        };
        let Ok(parsed) = HeaderName::from_bytes(name.as_bytes()) else {
            return Err(refuse(format!(
                "{name:?} is not a header name: use letters, digits and !#$%&'*+-.^_`|~ only"
            )));
        };
        if let Some((_, why)) = REFUSED
            .iter()
            .find(|(refused, _)| *refused == parsed.as_str())
        {
            return Err(refuse(format!(
                "the header `{name}` cannot be set per call: {why}"
            )));
        }
        // The value is not shown: it may be a secret.
        let Ok(value) = HeaderValue::from_str(value) else {
            return Err(refuse(format!(
                "the value given for the header `{name}` is not a header value: use visible \
                 ASCII, spaces and tabs, without line breaks"
            )));
        };
        self.headers.insert(parsed, value);
        Ok(self)
    }

    /// These options, with what `later` sets replacing what they set (headers name by name).
    pub fn then(mut self, later: CallOptions) -> CallOptions {
        if later.timeout.is_some() {
            self.timeout = later.timeout;
        }
        if later.retry.is_some() {
            self.retry = later.retry;
        }
        for (name, value) in later.headers {
            if let Some(name) = name {
                self.headers.insert(name, value);
            }
        }
        self
    }
}

/// An operation with options, from the builder's `.options(..)`: send it with `call()`,
/// `call_with_response()` or (byte streams) `download()` (those are in `crate::operation`,
/// with the `Operation` impl that merges the options into the call).
#[derive(Debug, Clone)]
#[must_use = "nothing is sent until `call()` (or `call_with_response()`, `download()`) is awaited"]
pub struct WithOptions<O> {
    pub(crate) operation: O,
    pub(crate) options: CallOptions,
}

impl<O> WithOptions<O> {
    pub(crate) fn new(operation: O, options: CallOptions) -> Self {
        WithOptions { operation, options }
    }

    /// More options: what `options` sets replaces what was set before.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = self.options.then(options);
        self
    }
}

/// A call's decoded body with the status and headers of its final attempt and the number of
/// attempts made (`call_with_response()`).
///
/// Its `Debug` shows the body's type, the status, the attempts and the header names: header
/// values can be cookies or tokens, and the body personal data.
#[non_exhaustive]
pub struct CallResponse<T> {
    /// The decoded body, as `call()` returns it.
    pub body: T,
    /// The status of the final attempt.
    pub status: StatusCode,
    /// The headers of the final attempt (request ids for a support ticket, rate-limit state).
    pub headers: HeaderMap,
    /// Attempts made, the first included (the one after a refused token too).
    pub attempts: u32,
}

impl<T> CallResponse<T> {
    pub(crate) fn new(body: T, status: StatusCode, headers: HeaderMap, attempts: u32) -> Self {
        CallResponse {
            body,
            status,
            headers,
            attempts,
        }
    }

    /// The body alone.
    pub fn into_body(self) -> T {
        self.body
    }
}

impl<T> fmt::Debug for CallResponse<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallResponse")
            .field("body", &std::any::type_name::<T>())
            .field("status", &self.status)
            .field("header_names", &HeaderNames(&self.headers))
            .field("attempts", &self.attempts)
            .finish()
    }
}

impl CallOptions {
    /// Adds the extra headers to `request`, or refuses the call when its request already
    /// carries one of them (the client set it: `Accept`, `Content-Type`, a header parameter).
    pub(crate) fn add_headers(
        &self,
        request: &mut reqwest::Request,
        operation: &'static str,
    ) -> Result<(), Error> {
        if let Some(name) = self
            .headers
            .keys()
            .find(|name| request.headers().contains_key(*name))
        {
            return Err(Error::InvalidRequest {
                operation: Some(operation),
                message: format!(
                    "the header `{name}` cannot be set per call: the client sets it on this \
                     operation's request"
                ),
            });
        }
        for (name, value) in &self.headers {
            request.headers_mut().insert(name.clone(), value.clone());
        }
        Ok(())
    }
}
