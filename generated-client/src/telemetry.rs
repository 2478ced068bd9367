//! OpenTelemetry traces and metrics of every call (feature `opentelemetry`), by the stable HTTP
//! client semantic conventions, with nothing personal or secret in any name or attribute.
//!
//! The client takes the global tracer and meter providers when it is built
//! ([`Telemetry::from_globals`]) and caches its instruments: with no provider set, a call pays
//! for a no-op span, two clock reads and no-op instrument calls. The parent of a call's span is
//! [`Context::current`]; each attempt's request carries the attempt span's context through the
//! global text-map propagator.
//!
//! **What an attribute may hold** is decided here, once: the operation id, the method, the
//! path *template*, the service's host and port, status codes and a low-cardinality error kind.
//! `url.full` is the request's URL with every path parameter replaced by `REDACTED` and the
//! query reduced to its parameter names (the ids in a path are personal data as much as the
//! e-mail in a query). No value of a request or a response, no header, no token is ever read.

use std::borrow::Cow;
use std::future::Future;
#[cfg(feature = "rate-limit")]
use std::time::{Duration, SystemTime};

use futures_util::future::Either;
use opentelemetry::context::{FutureExt as _, WithContext};
use opentelemetry::metrics::{Counter, Histogram, Meter};
use opentelemetry::propagation::Injector;
use opentelemetry::trace::{
    SpanKind, Status, TraceContextExt as _, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue, StringValue, global};
use tokio::time::Instant;

use crate::error::Error;
use crate::operation::OperationMeta;

/// The scope every span and instrument of the client is reported under.
const SCOPE: &str = "creditdata-client";
/// The semantic conventions the names follow.
const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.29.0";
/// `http.client.request.duration`'s explicit bucket boundaries, as the convention advises.
const DURATION_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];
/// Rate-limiter waits shorter than this are not worth a span of their own (they still count in
/// `creditdata.client.rate_limit.wait`).
#[cfg(feature = "rate-limit")]
const WAIT_SPAN_THRESHOLD: Duration = Duration::from_millis(1);

/// What a path parameter's value becomes in `url.full` (the convention's word for scrubbed
/// values).
pub const REDACTED: &str = "REDACTED";

/// Attribute names used beyond the convention's.
const OPERATION: &str = "creditdata.operation";
#[cfg(feature = "oauth2")]
const TOKEN_REASON: &str = "creditdata.token.reason";

/// The instruments and tracer of one client, taken from the global providers when it was built.
pub(crate) struct Telemetry {
    tracer: global::BoxedTracer,
    duration: Histogram<f64>,
    retries: Counter<u64>,
    throttled: Counter<u64>,
    #[cfg(feature = "rate-limit")]
    rate_limit_wait: Histogram<f64>,
    bytes_received: Counter<u64>,
    server_address: StringValue,
    server_port: i64,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope::builder(SCOPE)
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url(SCHEMA_URL)
        .build()
}

fn meter() -> Meter {
    global::meter_provider().meter_with_scope(scope())
}

impl Telemetry {
    /// The tracer and instruments of the global providers as they are now, for a client of the
    /// service at `base_url`.
    pub(crate) fn from_globals(base_url: &reqwest::Url) -> Self {
        let meter = meter();
        Telemetry {
            tracer: global::tracer_provider().tracer_with_scope(scope()),
            duration: meter
                .f64_histogram("http.client.request.duration")
                .with_unit("s")
                .with_description("Duration of HTTP client requests.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            retries: meter
                .u64_counter("creditdata.client.retries")
                .with_unit("{retry}")
                .with_description("Attempts that repeat a request (after a failure or a 401).")
                .build(),
            throttled: meter
                .u64_counter("creditdata.client.throttled")
                .with_unit("{response}")
                .with_description("Answers 429 Too Many Requests.")
                .build(),
            #[cfg(feature = "rate-limit")]
            rate_limit_wait: meter
                .f64_histogram("creditdata.client.rate_limit.wait")
                .with_unit("s")
                .with_description("Time an attempt waited for the client's rate limiter.")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            bytes_received: meter
                .u64_counter("creditdata.client.download.bytes")
                .with_unit("By")
                .with_description("Bytes of streamed bodies (downloads) read by the application.")
                .build(),
            server_address: base_url.host_str().unwrap_or_default().to_string().into(),
            server_port: base_url.port_or_known_default().map_or(0, i64::from),
        }
    }

    /// Starts the telemetry of one call: its span, child of the current context.
    pub(crate) fn call(
        &self,
        meta: &'static OperationMeta,
        operation: &'static str,
    ) -> CallTelemetry<'_> {
        let parent = Context::current();
        let span = self
            .tracer
            .span_builder(operation)
            .with_kind(SpanKind::Internal)
            .start_with_context(&self.tracer, &parent);
        let recording = opentelemetry::trace::Span::is_recording(&span);
        // A span that records nothing and has no valid context (no provider, no incoming
        // trace) has nothing to give: it is dropped at once, and the call carries no context.
        let context = (recording || opentelemetry::trace::Span::span_context(&span).is_valid())
            .then(|| parent.with_span(span));
        if let Some(context) = context.as_ref().filter(|_| recording) {
            context.span().set_attributes([
                KeyValue::new(OPERATION, operation),
                KeyValue::new("url.template", meta.path),
            ]);
        }
        CallTelemetry {
            telemetry: self,
            meta,
            operation,
            context,
            recording,
        }
    }
}

/// The telemetry of one call in progress.
pub(crate) struct CallTelemetry<'a> {
    telemetry: &'a Telemetry,
    meta: &'static OperationMeta,
    operation: &'static str,
    /// The call span's context, when it records or carries a context to propagate.
    context: Option<Context>,
    recording: bool,
}

/// One attempt in progress: when it started and its span.
pub(crate) struct AttemptTelemetry {
    started: Instant,
    method: &'static str,
    context: Option<Context>,
}

/// How an attempt ended, as telemetry sees it.
pub(crate) enum AttemptEnd<'e> {
    /// An answer arrived (a success, or an error status the client turned into `error`).
    Status(u16, Option<&'e Error>),
    /// No answer: a transport failure, a timeout, a refused answer.
    Failed(&'e Error),
}

impl CallTelemetry<'_> {
    /// `future` run with the call's context as the current one (a token request then appears
    /// inside the call), or as it is when the call is not traced.
    pub(crate) fn in_call<F: Future>(&self, future: F) -> Either<WithContext<F>, F> {
        match self.context.as_ref().filter(|_| self.recording) {
            Some(context) => Either::Left(future.with_context(context.clone())),
            None => Either::Right(future),
        }
    }

    #[cfg(feature = "shared-rate-limit")]
    /// The shared rate limit's store stopped answering while this call waited for its turn
    /// (once per outage): `creditdata.client.rate_limit.store_unavailable` and an event on the
    /// call's span. Nothing of the store's address.
    pub(crate) fn rate_limit_store_unavailable(&self) {
        meter()
            .u64_counter("creditdata.client.rate_limit.store_unavailable")
            .with_unit("{outage}")
            .with_description(
                "Times the shared rate limit's store stopped answering; the client then paces \
                 locally at its last known share of the limit.",
            )
            .build()
            .add(1, &self.own_attributes());
        if let Some(context) = self.context.as_ref().filter(|_| self.recording) {
            context
                .span()
                .add_event("creditdata.rate_limit.store_unavailable", Vec::new());
        }
    }

    #[cfg(feature = "rate-limit")]
    /// The client's rate limiter admitted an attempt that started waiting at `since`.
    pub(crate) fn rate_limit_waited(&self, since: Instant) {
        let waited = since.elapsed();
        self.telemetry
            .rate_limit_wait
            .record(waited.as_secs_f64(), &self.own_attributes());
        if let Some(context) = self.context.as_ref().filter(|_| self.recording)
            && waited >= WAIT_SPAN_THRESHOLD
        {
            let now = SystemTime::now();
            let span = self
                .telemetry
                .tracer
                .span_builder("creditdata.rate_limit.wait")
                .with_kind(SpanKind::Internal)
                .with_start_time(now.checked_sub(waited).unwrap_or(now))
                .start_with_context(&self.telemetry.tracer, context);
            let mut span = span;
            opentelemetry::trace::Span::end_with_timestamp(&mut span, now);
        }
    }

    /// Starts attempt `attempt` (1 for the first) of `request`: its span, the trace context in
    /// its headers, the retry counted.
    pub(crate) fn attempt_started(
        &self,
        request: &mut reqwest::Request,
        attempt: u32,
    ) -> AttemptTelemetry {
        let resend_count = i64::from(attempt.saturating_sub(1));
        if resend_count > 0 {
            self.telemetry.retries.add(1, &self.own_attributes());
        }
        let method = method_name(request.method());
        let context = match &self.context {
            Some(call) if self.recording => {
                let mut attributes = vec![
                    KeyValue::new("http.request.method", method),
                    KeyValue::new("server.address", self.telemetry.server_address.clone()),
                    KeyValue::new("server.port", self.telemetry.server_port),
                    KeyValue::new("url.full", full_url(request.url(), self.meta.path)),
                ];
                if !self.meta.path.is_empty() {
                    attributes.push(self.template());
                }
                if resend_count > 0 {
                    attributes.push(KeyValue::new("http.request.resend_count", resend_count));
                }
                let name = if self.meta.path.is_empty() {
                    Cow::Borrowed(method)
                } else {
                    Cow::Owned(format!("{method} {}", self.meta.path))
                };
                let span = self
                    .telemetry
                    .tracer
                    .span_builder(name)
                    .with_kind(SpanKind::Client)
                    .with_attributes(attributes)
                    .start_with_context(&self.telemetry.tracer, call);
                Some(call.with_span(span))
            }
            // Not traced here, but part of a trace: the service still joins it.
            Some(call) => Some(call.clone()),
            None => None,
        };
        if let Some(context) = &context {
            global::get_text_map_propagator(|propagator| {
                propagator.inject_context(context, &mut HeaderInjector(request.headers_mut()));
            });
        }
        AttemptTelemetry {
            started: Instant::now(),
            method,
            context,
        }
    }

    /// Ends an attempt: its span, the duration histogram, a 429 counted.
    pub(crate) fn attempt_ended(&self, attempt: AttemptTelemetry, end: AttemptEnd<'_>) {
        let elapsed = attempt.started.elapsed().as_secs_f64();
        let (status, error_type) = match end {
            AttemptEnd::Status(status, error) => {
                (Some(status), error.map(|_| Cow::Owned(status.to_string())))
            }
            AttemptEnd::Failed(error) => (
                error.status().map(|s| s.as_u16()),
                Some(Cow::Borrowed(error_type(error))),
            ),
        };
        if status == Some(429) {
            self.telemetry.throttled.add(1, &self.own_attributes());
        }
        // On the stack: this runs on every attempt, provider or not.
        let unused = || KeyValue::new("", 0);
        let mut attributes = [
            KeyValue::new("http.request.method", attempt.method),
            KeyValue::new("server.address", self.telemetry.server_address.clone()),
            KeyValue::new("server.port", self.telemetry.server_port),
            unused(),
            unused(),
            unused(),
        ];
        let mut used = 3;
        let optional = [
            (!self.meta.path.is_empty()).then(|| self.template()),
            status.map(|status| KeyValue::new("http.response.status_code", i64::from(status))),
            error_type
                .as_ref()
                .map(|kind| KeyValue::new("error.type", kind.clone())),
        ];
        for attribute in optional.into_iter().flatten() {
            attributes[used] = attribute;
            used += 1;
        }
        self.telemetry.duration.record(elapsed, &attributes[..used]);
        if let Some(context) = attempt.context.filter(|_| self.recording) {
            let span = context.span();
            if let Some(status) = status {
                span.set_attribute(KeyValue::new(
                    "http.response.status_code",
                    i64::from(status),
                ));
            }
            if let Some(kind) = error_type {
                span.set_attribute(KeyValue::new("error.type", kind.clone()));
                span.set_status(Status::error(kind));
            }
            span.end();
        }
    }

    /// Ends the call's span with the call's outcome.
    pub(crate) fn ended(self, outcome: Result<(), &Error>) {
        let Some(context) = self.context.filter(|_| self.recording) else {
            return;
        };
        let span = context.span();
        if let Err(error) = outcome {
            let kind: Cow<'static, str> = match error {
                Error::Api(api) => Cow::Owned(api.status.as_u16().to_string()),
                other => Cow::Borrowed(error_type(other)),
            };
            span.set_attribute(KeyValue::new("error.type", kind.clone()));
            span.set_status(Status::error(kind));
        }
        span.end();
    }

    /// A streamed success body that counts its bytes as the application reads them.
    pub(crate) fn count_body(&self, response: reqwest::Response) -> reqwest::Response {
        let counter = self.telemetry.bytes_received.clone();
        counted_body(response, counter, self.own_attributes())
    }

    /// The attributes of the client's own metrics: the operation, where it goes, nothing of
    /// what it carries.
    fn own_attributes(&self) -> [KeyValue; 4] {
        [
            KeyValue::new(OPERATION, self.operation),
            self.template(),
            KeyValue::new("server.address", self.telemetry.server_address.clone()),
            KeyValue::new("server.port", self.telemetry.server_port),
        ]
    }

    fn template(&self) -> KeyValue {
        KeyValue::new("url.template", self.meta.path)
    }
}

/// The convention's name of a method: the standard ones as they are, any other `_OTHER`.
fn method_name(method: &reqwest::Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "TRACE" => "TRACE",
        "CONNECT" => "CONNECT",
        _ => "_OTHER",
    }
}

/// A low-cardinality kind of a failure with no HTTP error status (`error.type`).
pub(crate) fn error_type(error: &Error) -> &'static str {
    match error {
        Error::Api(_) => "api",
        Error::Auth { .. } => "auth",
        Error::Timeout { .. } => "timeout",
        Error::Transport { source, .. } if source.is_connect() => "connect",
        Error::Transport { .. } => "transport",
        Error::Decode(_) => "decode",
        Error::ResponseTooLarge { .. } => "response_too_large",
        Error::Redirect { .. } => "redirect",
        Error::InvalidResponse { .. } => "invalid_response",
        Error::InvalidRequest { .. } => "invalid_request",
        Error::Download { .. } => "download",
        Error::Io { .. } => "io",
        Error::Config(_) => "config",
        Error::WaitTimedOut { .. } => "wait_timed_out",
        #[allow(unreachable_patterns)]
        _ => "_OTHER",
    }
}

/// `url` as `url.full` shows it: no user-info or fragment, query parameter names only, and
/// each path segment that the operation's `template` names a parameter replaced by
/// [`REDACTED`]. A path that does not end in the template's shape (an unknown operation) shows
/// no segment at all.
pub(crate) fn full_url(url: &reqwest::Url, template: &str) -> String {
    let shown = crate::urls::redact_url(url);
    let wanted: Vec<&str> = template.split('/').skip(1).collect();
    let segments: Vec<&str> = shown.path().split('/').skip(1).collect();
    let path = if template.is_empty() || segments.len() < wanted.len() {
        format!("/{REDACTED}")
    } else {
        let prefix = segments.len() - wanted.len();
        let mut path = String::new();
        for (index, segment) in segments.iter().enumerate() {
            path.push('/');
            let is_parameter = index >= prefix && wanted[index - prefix].starts_with('{');
            path.push_str(if is_parameter { REDACTED } else { segment });
        }
        path
    };
    let mut full = format!(
        "{}://{}",
        shown.scheme(),
        shown.host_str().unwrap_or_default()
    );
    if let Some(port) = shown.port() {
        full.push_str(&format!(":{port}"));
    }
    full.push_str(&path);
    if let Some(query) = shown.query() {
        full.push('?');
        full.push_str(query);
    }
    full
}

/// Writes a propagator's fields into a request's headers.
struct HeaderInjector<'h>(&'h mut reqwest::header::HeaderMap);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        // A field a propagator cannot spell as a header is left out, never sent half-formed.
        if let (Ok(name), Ok(value)) = (
            reqwest::header::HeaderName::from_bytes(key.as_bytes()),
            reqwest::header::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

#[cfg(feature = "oauth2")]
/// Why the token cache asks the identity provider for a token.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TokenReason {
    /// No token yet, or the last one expired unused.
    Fetch,
    /// The cached token is about to expire.
    Refresh,
    /// The service refused the token (401).
    Rejected,
}

#[cfg(feature = "oauth2")]
impl TokenReason {
    fn as_str(self) -> &'static str {
        match self {
            TokenReason::Fetch => "fetch",
            TokenReason::Refresh => "refresh",
            TokenReason::Rejected => "rejected",
        }
    }
}

/// A token request to the identity provider, in a span `creditdata.token` (child of the current
/// context: the call that needed the token) and counted in `creditdata.client.token.requests`
/// (and `creditdata.client.token.refreshes` when it replaces a token). The tracer and meter are
/// taken at each request: these happen every few minutes, not every call.
#[cfg(feature = "oauth2")]
pub(crate) async fn token_request<T, E, F>(reason: TokenReason, request: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    let tracer = global::tracer_provider().tracer_with_scope(scope());
    let parent = Context::current();
    let span = tracer
        .span_builder("creditdata.token")
        .with_kind(SpanKind::Internal)
        .with_attributes([KeyValue::new(TOKEN_REASON, reason.as_str())])
        .start_with_context(&tracer, &parent);
    let context = parent.with_span(span);
    let outcome = request.with_context(context.clone()).await;
    let meter = meter();
    let mut attributes = vec![KeyValue::new(TOKEN_REASON, reason.as_str())];
    if outcome.is_err() {
        attributes.push(KeyValue::new("error.type", "token_request"));
        context.span().set_status(Status::error("token_request"));
    }
    meter
        .u64_counter("creditdata.client.token.requests")
        .with_unit("{request}")
        .with_description("Token requests to the identity provider.")
        .build()
        .add(1, &attributes);
    if !matches!(reason, TokenReason::Fetch) {
        meter
            .u64_counter("creditdata.client.token.refreshes")
            .with_unit("{request}")
            .with_description("Token requests that replace a token (about to expire, or refused).")
            .build()
            .add(1, &attributes);
    }
    context.span().end();
    outcome
}

/// `response` whose body adds the size of each chunk to `counter` as it is read.
fn counted_body(
    response: reqwest::Response,
    counter: Counter<u64>,
    attributes: [KeyValue; 4],
) -> reqwest::Response {
    use reqwest::ResponseBuilderExt as _;
    let url = response.url().clone();
    let (parts, body) = http::Response::<reqwest::Body>::from(response).into_parts();
    let body = reqwest::Body::wrap(CountingBody {
        inner: body,
        counter,
        attributes,
    });
    let mut rebuilt = http::Response::builder()
        .url(url)
        .body(body)
        .unwrap_or_else(|_| http::Response::new(reqwest::Body::from(Vec::new())));
    *rebuilt.status_mut() = parts.status;
    *rebuilt.version_mut() = parts.version;
    *rebuilt.headers_mut() = parts.headers;
    rebuilt.extensions_mut().extend(parts.extensions);
    reqwest::Response::from(rebuilt)
}

/// A body that counts the bytes read through it.
struct CountingBody {
    inner: reqwest::Body,
    counter: Counter<u64>,
    attributes: [KeyValue; 4],
}

impl http_body::Body for CountingBody {
    type Data = bytes::Bytes;
    type Error = reqwest::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
            && !data.is_empty()
        {
            self.counter.add(data.len() as u64, &self.attributes);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_full_shows_no_path_parameter_and_no_query_value() {
        let url = reqwest::Url::parse(
            "https://user:pw@api.example.com:8443/base/v1/sessions/jane%40example.com/scores?SubjectEmail=jane%40example.com&Take=5#frag",
        )
        .unwrap();
        assert_eq!(
            full_url(&url, "/v1/sessions/{sessionId}/scores"),
            "https://api.example.com:8443/base/v1/sessions/REDACTED/scores?SubjectEmail&Take"
        );
    }

    #[test]
    fn url_full_of_an_unknown_operation_shows_no_path() {
        let url = reqwest::Url::parse("http://127.0.0.1:1/v1/secret-id").unwrap();
        assert_eq!(full_url(&url, ""), "http://127.0.0.1:1/REDACTED");
        assert_eq!(full_url(&url, "/v1/a/b/{c}"), "http://127.0.0.1:1/REDACTED");
    }
}
