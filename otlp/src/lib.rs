//! The OTLP/HTTP trace pipeline that the `creditdata` command and `creditdata-mock` install
//! from the standard `OTEL_*` environment variables (the client library exports nothing: the
//! application owns the pipeline).
//!
//! [`install`] reads the environment ([`settings::plan`]); without an endpoint it does
//! nothing at all (no thread, no provider: the global tracer stays the API's no-op one).
//! With one, it sets the global tracer provider (a batch processor exporting from its own
//! thread over the workspace's reqwest, `blocking` flavour) and the W3C trace-context
//! propagator, and hands back a [`Pipeline`] to shut down before the process exits. Export
//! failures never reach the program: one warning through the caller's function, at most, and
//! never the endpoint or the error's text (either can quote a URL with credentials).

pub mod settings;

#[cfg(feature = "receiver")]
pub mod receiver;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::global;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::resource::{Resource, TelemetryResourceDetector};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};

pub use opentelemetry_otlp::RetryPolicy;
pub use settings::Plan;

/// The longest a [`Pipeline::shutdown`] waits for the last spans to leave: an unreachable
/// collector delays the exit by at most this much.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// What the program says once if its traces cannot be sent.
pub const EXPORT_WARNING: &str = "warning: traces could not be sent to the OTLP endpoint; they are dropped, nothing else is affected";

/// How a program installs the pipeline.
#[derive(Clone)]
pub struct Options {
    /// `service.name` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names one.
    pub service_name: &'static str,
    /// Retries of a failed export. A command that exits in a second wants few; a server can
    /// afford the OTLP recommendation.
    pub retry: RetryPolicy,
    /// Writes one line on stderr (the program's own gate for it).
    pub warn: fn(&str),
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("service_name", &self.service_name)
            .finish_non_exhaustive()
    }
}

/// The installed pipeline: the global tracer provider exports until [`Pipeline::shutdown`].
#[derive(Debug, Clone)]
pub struct Pipeline {
    provider: SdkTracerProvider,
}

/// Installs the pipeline the process environment asks for; `None` (and nothing installed)
/// when it asks for none or for one this pipeline cannot honour (then one warning says why).
pub fn install(options: Options) -> Option<Pipeline> {
    install_with_env(options, &|name| std::env::var(name).ok())
}

/// [`install`] with the variables read through `env` (tests install an in-process pipeline
/// without touching the process's environment). The exporter still reads its timeout, headers
/// and compression from the process environment itself.
pub fn install_with_env(
    options: Options,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Pipeline> {
    let endpoint = match settings::plan(env) {
        Plan::Off => return None,
        Plan::Refused(message) => {
            (options.warn)(&format!("warning: {message}"));
            return None;
        }
        Plan::Export { endpoint } => endpoint,
    };
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint.as_str())
        .with_retry_policy(options.retry)
        .build()
    {
        Ok(exporter) => exporter,
        Err(error) => {
            let text = error.to_string().replace(&endpoint, "<endpoint>");
            (options.warn)(&format!(
                "warning: traces are not exported: {text} (check the OTEL_EXPORTER_OTLP_* variables)"
            ));
            return None;
        }
    };
    let resource = Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(settings::resource_attributes(env, options.service_name))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(WarnOnce {
            inner: exporter,
            warned: AtomicBool::new(false),
            warn: options.warn,
        })
        .with_resource(resource)
        .build();
    global::set_text_map_propagator(TraceContextPropagator::new());
    global::set_tracer_provider(provider.clone());
    Some(Pipeline { provider })
}

impl Pipeline {
    /// Sends what is queued now and waits for it (tests read what arrived afterwards).
    pub fn force_flush(&self) {
        let _ = self.provider.force_flush();
    }

    /// Sends the spans that have ended and stops the export thread, waiting at most
    /// [`SHUTDOWN_TIMEOUT`]. Spans still open are lost: end them first.
    pub fn shutdown(&self) {
        // A failure was already reported by the exporter (once); a timeout drops the rest.
        let _ = self.provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT);
    }
}

/// The OTLP exporter, saying once that exports fail (the SDK itself is silent without its
/// `internal-logs` feature, and its messages quote the endpoint).
#[derive(Debug)]
struct WarnOnce {
    inner: opentelemetry_otlp::SpanExporter,
    warned: AtomicBool,
    warn: fn(&str),
}

impl SpanExporter for WarnOnce {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let outcome = self.inner.export(batch).await;
        if outcome.is_err() && !self.warned.swap(true, Ordering::Relaxed) {
            (self.warn)(EXPORT_WARNING);
        }
        outcome
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use opentelemetry::trace::{Span as _, Tracer as _};

    use super::*;

    static WARNINGS: AtomicUsize = AtomicUsize::new(0);

    fn count(_: &str) {
        WARNINGS.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn exports_to_a_dead_collector_warn_once() {
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", listener.local_addr().unwrap())
        };
        let pipeline = install_with_env(
            Options {
                service_name: "test",
                retry: RetryPolicy::disabled(),
                warn: count,
            },
            &|name| (name == settings::ENDPOINT).then(|| closed.clone()),
        )
        .expect("an endpoint: a pipeline");
        let tracer = global::tracer("test");
        for _ in 0..3 {
            tracer.start("batch").end();
            pipeline.force_flush();
        }
        pipeline.shutdown();
        assert_eq!(WARNINGS.load(Ordering::Relaxed), 1);
    }
}
