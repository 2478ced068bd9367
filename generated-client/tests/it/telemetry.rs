//! OpenTelemetry (feature `opentelemetry`): the spans of a call and its attempts by the HTTP
//! client conventions, the trace context the service receives, the metrics, and that no span,
//! event or metric of any operation carries a personal value or a secret.
//!
//! The SDK providers are process-wide: they are installed once (`pipeline`), before the clients
//! of these tests are built, and each test looks only at its own trace (a root span of its own)
//! or at the data points of its own server's port. Clients of other tests built later report
//! there too, which changes nothing for these filters.

use std::sync::LazyLock;

use creditdata_client::Client;
use creditdata_client::operation::ResponseKind;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{
    SpanId, SpanKind, Status, TraceContextExt as _, TraceId, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value, global};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::{
    MockServer, TOKEN_PATH, fast_retries, mount_session, session_id, session_path, token_response,
};

struct Pipeline {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

static PIPELINE: LazyLock<Pipeline> = LazyLock::new(|| {
    let spans = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    global::set_tracer_provider(tracer_provider);
    global::set_meter_provider(meter_provider.clone());
    global::set_text_map_propagator(TraceContextPropagator::new());
    Pipeline {
        spans,
        metrics,
        meter_provider,
    }
});

/// The process-wide SDK pipeline, installed before the first client of these tests is built.
fn pipeline() -> &'static Pipeline {
    &PIPELINE
}

/// Runs `call` under a root span of its own; its trace id.
async fn traced<F: Future>(call: F) -> (TraceId, F::Output) {
    let tracer = global::tracer_provider().tracer("telemetry-test");
    let root = tracer.start("test root");
    let context = Context::current_with_span(root);
    let output = call.with_context(context.clone()).await;
    context.span().end();
    (context.span().span_context().trace_id(), output)
}

/// The spans of `trace`, in the order they ended, the root left out.
fn spans_of(trace: TraceId) -> Vec<SpanData> {
    pipeline()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| span.span_context.trace_id() == trace && span.name != "test root")
        .collect()
}

fn attribute<'s>(span: &'s SpanData, key: &str) -> Option<&'s Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn string(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|value| value.as_str().into_owned())
}

fn int(span: &SpanData, key: &str) -> Option<i64> {
    match attribute(span, key) {
        Some(Value::I64(n)) => Some(*n),
        _ => None,
    }
}

fn named<'s>(spans: &'s [SpanData], name: &str) -> Vec<&'s SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// The only `GetSession` call span of `spans` and its attempt spans, in order.
fn call_and_attempts(spans: &[SpanData]) -> (&SpanData, Vec<&SpanData>) {
    let calls = named(spans, "GetSession");
    assert_eq!(calls.len(), 1, "one call span: {spans:#?}");
    let call = calls[0];
    let attempts: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.span_kind == SpanKind::Client)
        .collect();
    for attempt in &attempts {
        assert_eq!(attempt.name, "GET /v1/sessions/{sessionId}");
        assert_eq!(
            attempt.parent_span_id,
            call.span_context.span_id(),
            "each attempt is a child of the call"
        );
    }
    (call, attempts)
}

fn client_of(server: &MockServer) -> Client {
    pipeline();
    Client::builder()
        .base_url(server.uri())
        .bearer_token("static-secret-token")
        .retry_policy(fast_retries(3))
        .build()
        .unwrap()
}

fn port_of(server: &MockServer) -> i64 {
    i64::from(server.address().port())
}

/// The `traceparent` header of each request `server` received, in order.
async fn traceparents(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|request| request.url.path() != TOKEN_PATH)
        .map(|request| {
            request
                .headers
                .get("traceparent")
                .expect("every attempt carries a traceparent")
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn traceparent_of(span: &SpanData) -> String {
    format!(
        "00-{}-{}-01",
        span.span_context.trace_id(),
        span.span_context.span_id()
    )
}

#[tokio::test]
async fn a_successful_call_is_one_internal_span_and_one_client_span_by_the_conventions() {
    let server = MockServer::start().await;
    mount_session(&server, session_id()).await;
    let client = client_of(&server);
    let (trace, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    assert_eq!(call.span_kind, SpanKind::Internal);
    assert_eq!(call.status, Status::Unset);
    assert_eq!(string(call, "creditdata.operation").unwrap(), "GetSession");
    assert_eq!(attempts.len(), 1);
    let attempt = attempts[0];
    assert_eq!(string(attempt, "http.request.method").unwrap(), "GET");
    assert_eq!(string(attempt, "server.address").unwrap(), "127.0.0.1");
    assert_eq!(int(attempt, "server.port").unwrap(), port_of(&server));
    assert_eq!(
        string(attempt, "url.template").unwrap(),
        "/v1/sessions/{sessionId}"
    );
    // The session's id is personal data: the path shows where it was, not what it is.
    assert_eq!(
        string(attempt, "url.full").unwrap(),
        format!("{}/v1/sessions/REDACTED", server.uri())
    );
    assert_eq!(int(attempt, "http.response.status_code").unwrap(), 200);
    assert_eq!(attribute(attempt, "error.type"), None);
    assert_eq!(attribute(attempt, "http.request.resend_count"), None);
    assert_eq!(attempt.status, Status::Unset);
    // What the service received is the attempt span's own context.
    assert_eq!(traceparents(&server).await, [traceparent_of(attempt)]);
}

#[tokio::test]
async fn an_api_error_is_its_status_code_as_error_type_on_the_attempt_and_the_call() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let client = client_of(&server);
    let (trace, result) = traced(client.get_session().session_id(session_id()).call()).await;
    assert_eq!(result.unwrap_err().status().map(|s| s.as_u16()), Some(404));
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    assert_eq!(attempts.len(), 1, "a 404 is not retried");
    let attempt = attempts[0];
    assert_eq!(int(attempt, "http.response.status_code").unwrap(), 404);
    assert_eq!(string(attempt, "error.type").unwrap(), "404");
    assert!(matches!(attempt.status, Status::Error { .. }));
    assert_eq!(string(call, "error.type").unwrap(), "404");
    assert!(matches!(call.status, Status::Error { .. }));
    assert_eq!(traceparents(&server).await, [traceparent_of(attempt)]);
}

#[tokio::test]
async fn a_transport_error_is_a_low_cardinality_kind_and_each_resend_is_counted() {
    pipeline();
    // A port nobody listens on: every attempt fails to connect, and is retried.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let client = Client::builder()
        .base_url(format!("http://127.0.0.1:{port}"))
        .bearer_token("static-secret-token")
        .retry_policy(fast_retries(2))
        .build()
        .unwrap();
    let (trace, result) = traced(client.get_session().session_id(session_id()).call()).await;
    assert!(result.is_err());
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    assert_eq!(attempts.len(), 2);
    for (index, attempt) in attempts.iter().enumerate() {
        assert_eq!(string(attempt, "error.type").unwrap(), "connect");
        assert_eq!(attribute(attempt, "http.response.status_code"), None);
        assert_eq!(
            int(attempt, "http.request.resend_count"),
            (index > 0).then_some(index as i64)
        );
    }
    assert_eq!(string(call, "error.type").unwrap(), "connect");
}

#[tokio::test]
async fn a_retried_call_has_an_attempt_span_per_request_with_its_resend_count() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = client_of(&server);
    let (trace, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    assert_eq!(attempts.len(), 2);
    assert_eq!(int(attempts[0], "http.response.status_code").unwrap(), 503);
    assert_eq!(string(attempts[0], "error.type").unwrap(), "503");
    assert_eq!(attribute(attempts[0], "http.request.resend_count"), None);
    assert_eq!(int(attempts[1], "http.response.status_code").unwrap(), 200);
    assert_eq!(int(attempts[1], "http.request.resend_count").unwrap(), 1);
    assert_eq!(attribute(attempts[1], "error.type"), None);
    // The call succeeded in the end.
    assert_eq!(call.status, Status::Unset);
    assert_eq!(attribute(call, "error.type"), None);
    // Each request carried its own attempt's context.
    assert_eq!(
        traceparents(&server).await,
        [traceparent_of(attempts[0]), traceparent_of(attempts[1])]
    );
}

#[tokio::test]
async fn a_token_refreshed_after_a_401_shows_as_token_spans_and_a_resend() {
    let server = MockServer::start().await;
    crate::support::mount_token_endpoint_answering(
        &server,
        token_response("first-secret-token", 300),
        token_response("second-secret-token", 300),
    )
    .await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .and(header("authorization", "Bearer first-secret-token"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(1)
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    pipeline();
    let client = crate::support::oauth_builder(&server).build().unwrap();
    let (trace, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    let tokens = named(&spans, "creditdata.token");
    assert_eq!(tokens.len(), 2, "{spans:#?}");
    let reasons: Vec<String> = tokens
        .iter()
        .map(|span| string(span, "creditdata.token.reason").unwrap())
        .collect();
    assert_eq!(reasons, ["fetch", "rejected"]);
    for token in &tokens {
        assert_eq!(token.parent_span_id, call.span_context.span_id());
    }
    assert_eq!(attempts.len(), 2);
    assert_eq!(string(attempts[0], "error.type").unwrap(), "401");
    assert_eq!(int(attempts[1], "http.request.resend_count").unwrap(), 1);
    assert_eq!(int(attempts[1], "http.response.status_code").unwrap(), 200);
    assert_eq!(
        traceparents(&server).await,
        [traceparent_of(attempts[0]), traceparent_of(attempts[1])]
    );
}

#[tokio::test]
async fn a_call_without_a_span_around_it_starts_its_own_trace() {
    let server = MockServer::start().await;
    mount_session(&server, session_id()).await;
    let client = client_of(&server);
    client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap();
    let sent = traceparents(&server).await;
    assert_eq!(sent.len(), 1);
    let trace = TraceId::from_hex(sent[0].split('-').nth(1).unwrap()).unwrap();
    let spans = spans_of(trace);
    let (call, attempts) = call_and_attempts(&spans);
    assert_eq!(call.parent_span_id, SpanId::INVALID, "a root span");
    assert_eq!(sent, [traceparent_of(attempts[0])]);
}

#[tokio::test]
async fn a_wait_for_the_rate_limiter_is_a_span_of_its_own_in_the_call() {
    let server = MockServer::start().await;
    mount_session(&server, session_id()).await;
    pipeline();
    // One request per second, no burst: the second call waits for the first one's slot.
    let client = Client::builder()
        .base_url(server.uri())
        .bearer_token("static-secret-token")
        .rate_limit(
            creditdata_client::rate_limit::RateLimit::new(1, std::time::Duration::from_secs(1))
                .burst(1),
        )
        .build()
        .unwrap();
    let (first, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let (second, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    assert!(
        named(&spans_of(first), "creditdata.rate_limit.wait").is_empty(),
        "the first call was admitted at once"
    );
    let spans = spans_of(second);
    let (call, _) = call_and_attempts(&spans);
    let waits = named(&spans, "creditdata.rate_limit.wait");
    assert_eq!(waits.len(), 1, "{spans:#?}");
    assert_eq!(waits[0].parent_span_id, call.span_context.span_id());
    assert!(waits[0].end_time > waits[0].start_time);
}

#[tokio::test]
async fn a_shared_rate_limit_store_that_stops_answering_is_a_metric_and_a_span_event_once() {
    let server = MockServer::start().await;
    mount_session(&server, session_id()).await;
    pipeline();
    // A store nothing listens on: the first call opens the outage, the next ones pace locally.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let store_port = dead.local_addr().unwrap().port();
    drop(dead);
    let store = creditdata_client::rate_limit::RateLimitStore::redis(&format!(
        "redis://:store-pa55@127.0.0.1:{store_port}/0"
    ))
    .unwrap();
    let client = Client::builder()
        .base_url(server.uri())
        .bearer_token("static-secret-token")
        .rate_limit(creditdata_client::rate_limit::RateLimit::per_second(1000).burst(100))
        .rate_limit_store(store)
        .rate_limit_name("telemetry-test")
        .build()
        .unwrap();
    let port = port_of(&server);
    let name = "creditdata.client.rate_limit.store_unavailable";
    let (_, before) = points_at(name, port);
    let (first, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let (second, result) = traced(client.get_session().session_id(session_id()).call()).await;
    result.unwrap();
    let spans = spans_of(first);
    let (call, _) = call_and_attempts(&spans);
    let events: Vec<_> = call
        .events
        .iter()
        .filter(|event| event.name == name.replace("client.", "").as_str())
        .collect();
    assert_eq!(events.len(), 1, "{call:#?}");
    let spans = spans_of(second);
    let (call, _) = call_and_attempts(&spans);
    assert!(
        call.events.is_empty(),
        "one event for the outage, not one per call: {call:#?}"
    );
    let (unit, after) = points_at(name, port);
    let grew = grown(&before, after);
    assert_eq!(unit, "{outage}");
    assert_eq!(grew.len(), 1, "{grew:?}");
    assert_eq!(grew[0].1, 1.0, "counted once: {grew:?}");
    let shown = format!("{spans:?} {grew:?}");
    assert!(!shown.contains("store-pa55"), "{shown}");
}

/// The data points of metric `name` in the last export, with the metric's unit.
fn metric_points(exported: &[ResourceMetrics], name: &str) -> (String, Vec<Point>) {
    let last = exported.last().expect("an export");
    let metric = last
        .scope_metrics()
        .filter(|scope| scope.scope().name() == "creditdata-client")
        .flat_map(|scope| scope.metrics())
        .find(|metric| metric.name() == name)
        .unwrap_or_else(|| panic!("no metric {name}"));
    let points = match metric.data() {
        AggregatedMetrics::F64(MetricData::Histogram(histogram)) => histogram
            .data_points()
            .map(|p| {
                (
                    p.attributes().cloned().collect(),
                    p.count() as f64,
                    p.bounds().collect(),
                )
            })
            .collect(),
        AggregatedMetrics::U64(MetricData::Sum(sum)) => sum
            .data_points()
            .map(|p| {
                (
                    p.attributes().cloned().collect(),
                    p.value() as f64,
                    Vec::new(),
                )
            })
            .collect(),
        other => panic!("{name} is {other:?}"),
    };
    (metric.unit().to_string(), points)
}

type Point = (Vec<KeyValue>, f64, Vec<f64>);

/// The unit and data points of metric `name` for the server on `port`, exported now (no
/// points while nothing was recorded).
fn points_at(name: &str, port: i64) -> (String, Vec<Point>) {
    let pipeline = pipeline();
    pipeline.meter_provider.force_flush().unwrap();
    let exported = pipeline.metrics.get_finished_metrics().unwrap();
    let present = exported.last().is_some_and(|last| {
        last.scope_metrics()
            .flat_map(|scope| scope.metrics())
            .any(|metric| metric.name() == name)
    });
    if !present {
        return (String::new(), Vec::new());
    }
    let (unit, points) = metric_points(&exported, name);
    let ours = points
        .into_iter()
        .filter(|point| has(&point.0, "server.port", Value::I64(port)))
        .collect();
    (unit, ours)
}

/// What grew between two exports of the same metric: the series whose value changed, with
/// the difference. The metrics are cumulative and a port is used again by later servers of
/// the process; while a server lives, no other can have its port.
fn grown(before: &[Point], after: Vec<Point>) -> Vec<Point> {
    after
        .into_iter()
        .filter_map(|(attributes, value, bounds)| {
            let old = before
                .iter()
                .find(|point| point.0 == attributes)
                .map_or(0.0, |point| point.1);
            (value > old).then_some((attributes, value - old, bounds))
        })
        .collect()
}

fn has(attributes: &[KeyValue], key: &str, value: Value) -> bool {
    attributes
        .iter()
        .any(|kv| kv.key.as_str() == key && kv.value == value)
}

#[tokio::test]
async fn metrics_have_the_conventions_names_units_buckets_and_attributes() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = client_of(&server);
    let port = port_of(&server);
    let names = [
        "http.client.request.duration",
        "creditdata.client.retries",
        "creditdata.client.throttled",
    ];
    let before: Vec<Vec<Point>> = names.iter().map(|name| points_at(name, port).1).collect();
    client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap();
    let after: Vec<(String, Vec<Point>)> = names.iter().map(|name| points_at(name, port)).collect();
    let mut grew = before
        .iter()
        .zip(after)
        .map(|(before, (unit, after))| (unit, grown(before, after)));

    let (unit, points) = grew.next().unwrap();
    assert_eq!(unit, "s");
    assert_eq!(points.len(), 2, "one series per status: {points:?}");
    for (attributes, count, bounds) in &points {
        assert_eq!(*count, 1.0);
        assert_eq!(
            bounds,
            &[
                0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0
            ]
        );
        assert!(has(attributes, "http.request.method", "GET".into()));
        assert!(has(attributes, "server.address", "127.0.0.1".into()));
        assert!(has(
            attributes,
            "url.template",
            "/v1/sessions/{sessionId}".into()
        ));
    }
    let throttled = points
        .iter()
        .find(|p| has(&p.0, "http.response.status_code", Value::I64(429)))
        .expect("the 429 attempt");
    assert!(has(&throttled.0, "error.type", "429".into()));
    let ok = points
        .iter()
        .find(|p| has(&p.0, "http.response.status_code", Value::I64(200)))
        .expect("the 200 attempt");
    assert!(!ok.0.iter().any(|kv| kv.key.as_str() == "error.type"));
    // Exactly the convention's attributes: nothing that varies with the request.
    assert_eq!(ok.0.len(), 5, "{:?}", ok.0);

    for (name, unit) in [
        ("creditdata.client.retries", "{retry}"),
        ("creditdata.client.throttled", "{response}"),
    ] {
        let (shown_unit, points) = grew.next().unwrap();
        assert_eq!(shown_unit, unit, "{name}");
        assert_eq!(points.len(), 1, "{name}: {points:?}");
        assert_eq!(points[0].1, 1.0, "{name}");
        assert!(has(
            &points[0].0,
            "creditdata.operation",
            "GetSession".into()
        ));
        assert_eq!(points[0].0.len(), 4, "{name}: {:?}", points[0].0);
    }
}

#[tokio::test]
async fn token_requests_refreshes_waits_and_downloaded_bytes_are_counted() {
    let server = MockServer::start().await;
    crate::support::mount_token_endpoint_answering(
        &server,
        token_response("first-secret-token", 300),
        token_response("second-secret-token", 300),
    )
    .await;
    Mock::given(method("GET"))
        .and(header("authorization", "Bearer first-secret-token"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(1)
        .mount(&server)
        .await;
    let pdf = vec![b'%'; 70_000];
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(pdf.clone()))
        .mount(&server)
        .await;
    pipeline();
    let port = port_of(&server);
    let bytes_before = points_at("creditdata.client.download.bytes", port).1;
    let waits_before = points_at("creditdata.client.rate_limit.wait", port).1;
    let before = token_counts();
    let client = crate::support::oauth_builder(&server)
        .rate_limit(creditdata_client::rate_limit::RateLimit::per_second(1000))
        .build()
        .unwrap();
    let stream = client
        .get_pdf_report()
        .session_id(session_id())
        .call()
        .await
        .unwrap();
    let mut read = 0;
    let mut stream = stream.into_inner();
    use futures::StreamExt as _;
    while let Some(chunk) = stream.next().await {
        read += chunk.unwrap().len();
    }
    assert_eq!(read, pdf.len());
    let after = token_counts();
    assert!(
        after.0 >= before.0 + 2.0,
        "two token requests: {before:?} {after:?}"
    );
    assert!(
        after.1 > before.1,
        "one of them a refresh: {before:?} {after:?}"
    );

    let (unit, points) = points_at("creditdata.client.download.bytes", port);
    assert_eq!(unit, "By");
    let ours = grown(&bytes_before, points);
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].1, pdf.len() as f64);
    assert!(has(
        &ours[0].0,
        "creditdata.operation",
        "GetPdfReport".into()
    ));
    let (unit, points) = points_at("creditdata.client.rate_limit.wait", port);
    assert_eq!(unit, "s");
    let waits = grown(&waits_before, points);
    assert_eq!(waits.len(), 1);
    assert_eq!(waits[0].1, 2.0, "one wait per attempt");
}

/// The token requests and refreshes counted so far, all clients together.
fn token_counts() -> (f64, f64) {
    let pipeline = pipeline();
    pipeline.meter_provider.force_flush().unwrap();
    let exported = pipeline.metrics.get_finished_metrics().unwrap();
    if exported.is_empty() {
        return (0.0, 0.0);
    }
    let total = |name: &str| {
        let found = exported
            .last()
            .unwrap()
            .scope_metrics()
            .flat_map(|scope| scope.metrics())
            .any(|metric| metric.name() == name);
        if !found {
            return 0.0;
        }
        metric_points(&exported, name)
            .1
            .iter()
            .map(|point| point.1)
            .sum()
    };
    (
        total("creditdata.client.token.requests"),
        total("creditdata.client.token.refreshes"),
    )
}

/// Item 3 of issue 20: every operation of the client (the generated table, so a vendor's new
/// operation is included the day it is generated), each with an e-mail, a full name and ids in
/// its path, query and body, through a success, an API error, a transport error, a retry and a
/// token refresh after a 401; then everything the exporters hold, spans with their events and
/// attributes and every metric with its data points, is printed and searched for those values
/// and for every token and secret. The requests go through the client's hooks, where every
/// span and metric is made; the generated `send()` only builds such a request.
#[tokio::test]
async fn no_span_event_attribute_or_metric_of_any_operation_carries_personal_data_or_secrets() {
    const EMAIL: &str = "wilhelmina.quartzfeld@example.org";
    const NAME: &str = "Wilhelmina Quartzfeld";
    const IDS: [&str; 3] = [
        "9f1e8c44-6b1a-4d5e-9c2b-3a7d5e6f8a01",
        "acct-77231904",
        "img-55810442",
    ];
    const STATIC_TOKEN: &str = "static-bearer-s3cret";
    let body = serde_json::json!({ "subjectEmail": EMAIL, "subjectFullName": NAME, "id": IDS[1] });
    pipeline();
    let mut calls = 0;
    for meta in creditdata_client::operations::ALL.iter() {
        let request = |base: &str| {
            let mut path = String::new();
            let mut parameter = 0;
            for segment in meta.path.split('/').skip(1) {
                path.push('/');
                if segment.starts_with('{') {
                    path.push_str(IDS[parameter % IDS.len()]);
                    parameter += 1;
                } else {
                    path.push_str(segment);
                }
            }
            let mut url = reqwest::Url::parse(&format!("{base}{path}")).unwrap();
            url.query_pairs_mut()
                .append_pair("SubjectEmail", EMAIL)
                .append_pair("SubjectFullName", NAME)
                .append_pair("Id", IDS[0]);
            let method = reqwest::Method::from_bytes(meta.method.as_bytes()).unwrap();
            let mut request = reqwest::Request::new(method, url);
            if !matches!(meta.method, "GET" | "HEAD" | "DELETE") {
                *request.body_mut() = Some(body.to_string().into());
                request.headers_mut().insert(
                    reqwest::header::CONTENT_TYPE,
                    reqwest::header::HeaderValue::from_static("application/json"),
                );
            }
            request
        };
        let answer = || {
            let template = ResponseTemplate::new(200);
            match meta.response {
                ResponseKind::Stream => template.set_body_bytes(body.to_string()),
                _ => template.set_body_json(body.clone()),
            }
        };
        for scenario in [
            "success",
            "api error",
            "transport error",
            "retry",
            "refresh",
        ] {
            let server = MockServer::start().await;
            let mut base = server.uri();
            let client = match scenario {
                "success" => {
                    Mock::given(wiremock::matchers::any())
                        .respond_with(answer())
                        .mount(&server)
                        .await;
                    plain_traced(&base, STATIC_TOKEN)
                }
                "api error" => {
                    Mock::given(wiremock::matchers::any())
                        .respond_with(ResponseTemplate::new(404).set_body_json(body.clone()))
                        .mount(&server)
                        .await;
                    plain_traced(&base, STATIC_TOKEN)
                }
                "transport error" => {
                    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                    base = format!("http://{}", closed.local_addr().unwrap());
                    drop(closed);
                    plain_traced(&base, STATIC_TOKEN)
                }
                "retry" => {
                    Mock::given(wiremock::matchers::any())
                        .respond_with(ResponseTemplate::new(503).set_body_json(body.clone()))
                        .up_to_n_times(1)
                        .with_priority(1)
                        .mount(&server)
                        .await;
                    Mock::given(wiremock::matchers::any())
                        .respond_with(answer())
                        .mount(&server)
                        .await;
                    plain_traced(&base, STATIC_TOKEN)
                }
                _ => {
                    crate::support::mount_token_endpoint_answering(
                        &server,
                        token_response("first-secret-token", 300),
                        token_response("second-secret-token", 300),
                    )
                    .await;
                    Mock::given(header("authorization", "Bearer first-secret-token"))
                        .respond_with(ResponseTemplate::new(401).set_body_json(body.clone()))
                        .with_priority(1)
                        .mount(&server)
                        .await;
                    Mock::given(wiremock::matchers::any())
                        .respond_with(answer())
                        .with_priority(3)
                        .mount(&server)
                        .await;
                    crate::support::oauth_builder(&server).build().unwrap()
                }
            };
            let sent = crate::support::through_the_door(&client, meta, request(&base), None);
            let (_, outcome) = traced(sent).await;
            // Read a streamed body to the end: downloaded bytes are counted as they are read.
            if let Ok(answer) = outcome {
                let mut body = answer.body.into_inner();
                while let Some(Ok(_)) = futures::StreamExt::next(&mut body).await {}
            }
            calls += 1;
        }
    }
    let pipeline = pipeline();
    pipeline.meter_provider.force_flush().unwrap();
    let spans = pipeline.spans.get_finished_spans().unwrap();
    let metrics = pipeline.metrics.get_finished_metrics().unwrap();
    for meta in creditdata_client::operations::ALL.iter() {
        let seen = spans.iter().filter(|span| span.name == meta.id).count();
        assert!(
            seen >= 5,
            "{}: {seen} call spans, not one per scenario",
            meta.id
        );
    }
    assert_eq!(calls, creditdata_client::operations::ALL.len() * 5);
    // The paths were taken: a refresh after a 401 for every operation, resends, transport
    // failures (so the search below looks at what each path emits).
    let rejected = spans
        .iter()
        .filter(|span| string(span, "creditdata.token.reason").as_deref() == Some("rejected"))
        .count();
    assert!(rejected >= creditdata_client::operations::ALL.len());
    assert!(
        spans
            .iter()
            .any(|span| int(span, "http.request.resend_count") == Some(1))
    );
    assert!(
        spans
            .iter()
            .any(|span| string(span, "error.type").as_deref() == Some("connect"))
    );
    let everything = format!("{spans:#?}\n{metrics:#?}").to_lowercase();
    assert!(everything.contains("redacted"), "url.full was exported");
    let encoded_email = EMAIL.replace('@', "%40");
    let encoded_name = NAME.replace(' ', "+");
    let mut forbidden = vec![
        EMAIL,
        encoded_email.as_str(),
        NAME,
        encoded_name.as_str(),
        "wilhelmina",
        "quartzfeld",
        STATIC_TOKEN,
        "first-secret-token",
        "second-secret-token",
        "client-secret-value",
        "creditdata-client-test",
    ];
    forbidden.extend(IDS);
    for value in forbidden {
        assert!(
            !everything.contains(&value.to_lowercase()),
            "{value:?} appears in what the exporters hold"
        );
    }
}

fn plain_traced(base: &str, token: &str) -> Client {
    Client::builder()
        .base_url(base)
        .bearer_token(token)
        .retry_policy(fast_retries(3))
        .build()
        .unwrap()
}
