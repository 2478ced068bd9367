//! A loopback OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` with a protobuf
//! `ExportTraceServiceRequest`, keeps every span, answers 200 with an empty response.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use prost::Message as _;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A span as received, with its process's `service.name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedSpan {
    /// `service.name` of the resource that sent it.
    pub service: String,
    pub name: String,
    /// Hex, as in a `traceparent`.
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// OTLP's `SpanKind` number (1 internal, 2 server, 3 client).
    pub kind: i32,
    /// Every attribute, its value as text.
    pub attributes: Vec<(String, String)>,
}

impl ReceivedSpan {
    /// The value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    }
}

/// OTLP's `SpanKind` numbers.
pub const KIND_INTERNAL: i32 = 1;
pub const KIND_SERVER: i32 = 2;
pub const KIND_CLIENT: i32 = 3;

#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    /// Requests that were not a protobuf export to `/v1/traces` (method, path or type).
    refused: usize,
    exports: usize,
}

/// A running receiver; stops when dropped.
pub struct Receiver {
    endpoint: String,
    received: Arc<Mutex<Received>>,
    task: JoinHandle<()>,
}

impl Receiver {
    /// Listens on `127.0.0.1:0` in the current tokio runtime.
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the receiver binds a loopback port");
        let address = listener.local_addr().expect("a bound address");
        let received = Arc::new(Mutex::new(Received::default()));
        let app = Router::new()
            .route("/v1/traces", post(export))
            .fallback(refuse)
            .with_state(Arc::clone(&received));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            endpoint: format!("http://{address}"),
            received,
            task,
        }
    }

    /// The value for `OTEL_EXPORTER_OTLP_ENDPOINT` (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.lock().spans.clone()
    }

    /// How many export requests arrived, well-formed or not.
    pub fn requests(&self) -> usize {
        let received = self.lock();
        received.exports + received.refused
    }

    /// Requests that were not a protobuf `POST /v1/traces`.
    pub fn refused(&self) -> usize {
        self.lock().refused
    }

    /// Waits until `done` holds for the spans received, polling, for at most `limit`; the
    /// spans then (the caller asserts on them, so a late export fails with what arrived).
    pub async fn wait_for(
        &self,
        limit: Duration,
        done: impl Fn(&[ReceivedSpan]) -> bool,
    ) -> Vec<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let spans = self.spans();
            if done(&spans) || tokio::time::Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn refuse(State(received): State<Arc<Mutex<Received>>>) -> StatusCode {
    received
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .refused += 1;
    StatusCode::NOT_FOUND
}

async fn export(
    State(received): State<Arc<Mutex<Received>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let protobuf = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes() == b"application/x-protobuf");
    let decoded = ExportTraceServiceRequest::decode(body);
    let mut received = received.lock().unwrap_or_else(PoisonError::into_inner);
    let request = match decoded {
        Ok(request) if protobuf => request,
        _ => {
            received.refused += 1;
            return StatusCode::BAD_REQUEST.into_response();
        }
    };
    received.exports += 1;
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|resource| &resource.attributes)
            .find(|kv| kv.key == "service.name")
            .map(|kv| text(kv.value.as_ref()))
            .unwrap_or_default();
        for span in resource_spans
            .scope_spans
            .into_iter()
            .flat_map(|scope| scope.spans)
        {
            received.spans.push(ReceivedSpan {
                service: service.clone(),
                name: span.name,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                kind: span.kind,
                attributes: span.attributes.iter().map(attribute).collect(),
            });
        }
    }
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

fn attribute(kv: &KeyValue) -> (String, String) {
    (kv.key.clone(), text(kv.value.as_ref()))
}

fn text(value: Option<&AnyValue>) -> String {
    match value.and_then(|value| value.value.as_ref()) {
        Some(Value::StringValue(text)) => text.clone(),
        Some(Value::BoolValue(value)) => value.to_string(),
        Some(Value::IntValue(value)) => value.to_string(),
        Some(Value::DoubleValue(value)) => value.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
