//! A SERVER span per request by the OpenTelemetry HTTP server conventions, joined to the
//! caller's trace through its `traceparent` (only when [`MockConfig::server_spans`] is set).
//!
//! Named `{METHOD} {http.route}` with the route template axum matched (`GET /v1/sessions/{id}`),
//! never the path: paths carry session ids and queries can carry e-mail addresses, so neither
//! `url.path` nor `url.query` is recorded, nor the client's address.
//!
//! [`MockConfig::server_spans`]: crate::MockConfig::server_spans

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, Method};
use axum::middleware::{self, Next};
use axum::response::Response;
use opentelemetry::KeyValue;
use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{FutureExt as _, SpanKind, Status, TraceContextExt as _, Tracer as _};

/// What every span of this server shares.
struct Spans {
    tracer: BoxedTracer,
    address: String,
    port: i64,
}

/// `app` with a SERVER span around each request, through the global tracer provider as it is
/// now. `Router::layer` wraps every route (and the fallback) after routing, which is where
/// axum's `MatchedPath` is known.
pub fn server_spans(app: Router, address: SocketAddr) -> Router {
    let spans = Arc::new(Spans {
        tracer: global::tracer("creditdata-mock"),
        address: address.ip().to_string(),
        port: i64::from(address.port()),
    });
    app.layer(middleware::from_fn_with_state(spans, server_span))
}

async fn server_span(State(spans): State<Arc<Spans>>, request: Request, next: Next) -> Response {
    let parent = global::get_text_map_propagator(|propagator| {
        propagator.extract(&Headers(request.headers()))
    });
    let method = known_method(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned());
    // The conventions' name: `{method} {route}`, `HTTP` standing for an unknown method.
    let name_method = if method == "_OTHER" { "HTTP" } else { method };
    let name = match &route {
        Some(route) => format!("{name_method} {route}"),
        None => name_method.to_owned(),
    };
    let mut attributes = vec![
        KeyValue::new("http.request.method", method),
        KeyValue::new("url.scheme", "http"),
        KeyValue::new("server.address", spans.address.clone()),
        KeyValue::new("server.port", spans.port),
    ];
    if let Some(route) = route {
        attributes.push(KeyValue::new("http.route", route));
    }
    let span = spans
        .tracer
        .span_builder(name)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes)
        .start_with_context(&spans.tracer, &parent);
    let context = parent.with_span(span);
    let response = next.run(request).with_context(context.clone()).await;
    let span = context.span();
    let status = response.status();
    span.set_attribute(KeyValue::new(
        "http.response.status_code",
        i64::from(status.as_u16()),
    ));
    // A server's span is an error for 5xx only: a 4xx is the caller's mistake.
    if status.is_server_error() {
        span.set_attribute(KeyValue::new("error.type", status.as_u16().to_string()));
        span.set_status(Status::error(""));
    }
    span.end();
    response
}

/// The method as the conventions spell it: one of the known ones, else `_OTHER` (a method
/// is free text a caller chooses).
fn known_method(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "_OTHER",
    }
}

/// The request's headers, as the propagator reads them.
struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_methods_of_the_conventions_are_named() {
        assert_eq!(known_method(&Method::GET), "GET");
        assert_eq!(known_method(&Method::PATCH), "PATCH");
        let custom = Method::from_bytes(b"JANE.DOE").unwrap();
        assert_eq!(known_method(&custom), "_OTHER");
    }
}
