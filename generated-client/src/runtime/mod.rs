//! The state every generated `Client` carries and the one door every call goes through:
//! authentication, retries, timeouts, errors and tracing for every call.
//!
//! Each generated builder's `send_with()` builds its request (URL, headers, body, with the
//! request limits checked on its typed values first: `crate::limits`) and ends in one call,
//! [`send`], with its operation's metadata (`Self::META`), the client's state and the call's
//! options. `send` owns the request: it adds the bearer token, sends, retries what the
//! [`RetryPolicy`](crate::retry::RetryPolicy) allows, refreshes the token once after a 401,
//! reads the success body and decodes it as the operation's [`Answer`] says, and returns the
//! typed value with the final status, headers and attempts, or every failure (an error
//! status, a transport failure, no token, a body that does not decode) as a typed
//! [`Error`](crate::Error) naming the operation. Body-less 401/403/404/500s and HTML pages from
//! proxies keep their status and body. Nothing here calls back into the generated code.
//!
//! A call made with options ([`crate::call_options`]) gets them as an argument: its headers are
//! added (or the call refused), its retry policy replaces the client's, and its deadline bounds
//! the whole loop and, through each attempt's request timeout, the body read.
//!
//! # Success bodies
//!
//! A JSON success body is read inside its attempt, under the per-attempt timeout
//! ([`ClientBuilder::request_timeout`](crate::ClientBuilder::request_timeout)): a body that
//! breaks off half-way (a connection closed before its `Content-Length`, a chunked body that
//! ends early) is a failed attempt, retried for an idempotent operation like any transient
//! failure and counted in the attempts. A byte stream is handed over unread
//! ([`Answer`] `Streamed`): its reader bounds it.
//!
//! # Limits and redirects
//!
//! JSON success bodies are read with a size limit
//! ([`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body), default
//! [`DEFAULT_MAX_RESPONSE_BODY`](crate::config::DEFAULT_MAX_RESPONSE_BODY)): a body that declares
//! a larger `Content-Length` is refused unread, one without a length is cut off at the limit,
//! both with [`Error::ResponseTooLarge`](crate::Error::ResponseTooLarge). Error bodies keep at most
//! [`MAX_ERROR_BODY`](crate::error::MAX_ERROR_BODY) bytes.
//!
//! The HTTP client the builder makes follows a redirect only within the service's origin
//! ([`same_origin_redirects`]); a redirect elsewhere ends the call with [`Error::Redirect`](crate::Error::Redirect), so
//! the access token and a request body (a consumer's e-mail) never leave that origin. An answer
//! that nevertheless comes from another origin (an HTTP client given with
//! [`ClientBuilder::http_client`](crate::ClientBuilder::http_client) that follows redirects
//! freely) is refused with [`Error::InvalidResponse`](crate::Error::InvalidResponse).
//!
//! # Path parameters
//!
//! The generated code turns every path parameter into one path segment with `path_segment`
//! (the generator puts it where progenitor wrote `encode_path`): a value that is empty, `.` or
//! `..`, contains `/`, `\`, `%` or a control character, or equals a literal segment another
//! operation has at the same place (`account_statement_id("transactions")`), is refused with
//! [`Error::InvalidRequest`](crate::Error::InvalidRequest) naming the parameter, before anything is sent. The generator refuses
//! to write a URL any of whose values does not go through it (`codegen/src/lean_requests.rs`),
//! so the path of every request has its operation's shape by construction: URL resolution has
//! no `.`, `..`, empty segment or separator to act on, and no request is checked again here.
//!
//! # Tracing
//!
//! Each call runs in an `INFO` span named `creditdata.call` with the fields `operation` (the
//! operationId) and `method`, and, recorded when the call ends, `attempt` (attempts made, the
//! retry after a 401 included), `status` (the last HTTP status, absent when none arrived) and
//! `duration_ms` (until the response headers arrive). Retries, token refreshes and token failures are `DEBUG` events inside it. No field or
//! event carries a token, a secret, a body or a query value (errors show URLs with the names of
//! their query parameters only).
//!
//! With the feature `opentelemetry`, the same places also report to OpenTelemetry (a call span,
//! a `CLIENT` span per attempt with its `traceparent` sent, the metrics): `crate::telemetry`,
//! called from `call.rs` at a call's start and end and around each attempt.

mod call;
mod client;
mod path;
mod redirect;
mod requests;
mod state;

pub(crate) use call::access_token;
#[doc(hidden)]
pub use call::{Answer, Body, Json, NoBody, Read, Streamed, invalid_request, send, unbuilt};
#[doc(hidden)]
pub use path::path_segment;
pub use redirect::same_origin_redirects;
#[doc(hidden)]
pub use state::ClientState;
