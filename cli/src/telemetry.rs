//! The command's traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` (and the other standard variables,
//! see `cli/README.md`, "Telemetry") each run is one trace, exported over OTLP/HTTP.
//!
//! One root span per command, named after it (`creditdata datasets all`), with the exit status
//! (`process.exit.code`); the client's spans (one per call, one per attempt) below it, and in
//! `export` one `export session` span per session between them. Without the variables nothing
//! is installed: no provider, no thread, and the command's futures run unwrapped.
//!
//! The pipeline must be shut down before every exit ([`finish`]), or the last batch (often the
//! whole trace) is lost: `main` does it once the command has returned, and the export's second
//! Ctrl-C, which exits at once, does it first.

use std::future::Future;
use std::sync::{Mutex, OnceLock, PoisonError};

use clap::ArgMatches;
use creditdata_otlp::{Options, Pipeline, RetryPolicy};
use opentelemetry::trace::{FutureExt as _, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue, global};

/// The installed pipeline; unset when the environment asks for none.
static PIPELINE: OnceLock<Pipeline> = OnceLock::new();
/// The command's root span, until [`finish`] ends it.
static ROOT: Mutex<Option<Context>> = Mutex::new(None);

const TRACER: &str = "creditdata";

/// Installs the pipeline the environment asks for and starts the command's root span. Call
/// it before any client is built: the client takes the global propagator and tracer it finds.
pub fn start(matches: &ArgMatches) {
    let options = Options {
        service_name: "creditdata",
        // A command exits within seconds: one quick retry, not the OTLP recommendation's three.
        retry: RetryPolicy::recommended().with_max_retries(1),
        warn: crate::terminal::note,
    };
    let Some(pipeline) = creditdata_otlp::install(options) else {
        return;
    };
    let _ = PIPELINE.set(pipeline);
    let tracer = global::tracer(TRACER);
    // An explicit empty parent: a command is a trace of its own, whatever is current.
    let root = tracer.start_with_context(command_name(matches), &Context::new());
    *ROOT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Context::new().with_span(root));
}

/// `creditdata` and the names of the subcommands given (`creditdata datasets all`): never an
/// argument's value.
fn command_name(matches: &ArgMatches) -> String {
    let mut name = String::from("creditdata");
    let mut current = matches;
    while let Some((subcommand, below)) = current.subcommand() {
        name.push(' ');
        name.push_str(subcommand);
        current = below;
    }
    name
}

/// Runs `work` with the root span as its current context (so the client's spans are its
/// children); `work` itself when nothing is exported.
pub async fn in_root<F: Future>(work: F) -> F::Output {
    let root = ROOT.lock().unwrap_or_else(PoisonError::into_inner).clone();
    match root {
        Some(root) => work.with_context(root).await,
        None => work.await,
    }
}

/// Runs `work` in a span named `name`, child of the current one; `work` itself when nothing
/// is exported.
pub async fn in_span<F: Future>(name: &'static str, work: F) -> F::Output {
    if PIPELINE.get().is_none() {
        return work.await;
    }
    let parent = Context::current();
    let span = global::tracer(TRACER).start_with_context(name, &parent);
    let context = parent.with_span(span);
    let output = work.with_context(context.clone()).await;
    context.span().end();
    output
}

/// Ends the root span with the exit status and sends what is left, waiting at most
/// [`creditdata_otlp::SHUTDOWN_TIMEOUT`]. Called once, right before the process exits.
pub fn finish(status: u8) {
    let root = ROOT.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(root) = root {
        let span = root.span();
        span.set_attribute(KeyValue::new("process.exit.code", i64::from(status)));
        if status != crate::failure::EXIT_OK {
            span.set_status(Status::error(format!("exit status {status}")));
        }
        span.end();
    }
    if let Some(pipeline) = PIPELINE.get() {
        pipeline.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn a_command_is_named_by_its_subcommands_never_by_its_values() {
        let name = |args: &[&str]| {
            let matches = crate::cli::Cli::command()
                .try_get_matches_from(args)
                .expect("the arguments parse");
            command_name(&matches)
        };
        let id = "5d1f6a52-8f1e-4c55-9d3b-0c8f4e2a7b19";
        assert_eq!(
            name(&["creditdata", "datasets", "all", id]),
            "creditdata datasets all"
        );
        assert_eq!(name(&["creditdata", "operations"]), "creditdata operations");
        assert_eq!(
            name(&["creditdata", "export", "--out", "jane.doe@example.com"]),
            "creditdata export"
        );
    }
}
