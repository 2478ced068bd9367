//! `creditdata` with the standard OpenTelemetry variables: one trace per command, exported
//! over OTLP/HTTP before it exits, joined to the mock's server spans through `traceparent`;
//! without them (or turned off) nothing is sent; a dead collector changes nothing.
//!
//! The mock runs in this process with its server spans on, exporting through a pipeline
//! installed here from the same code its binary uses (`creditdata_otlp::install_with_env`):
//! the mock's binary is not built for this crate's tests. Its own test
//! (`mock-server/tests/it/telemetry.rs`) runs the binary.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use creditdata_client::session_datasets::Dataset;
use creditdata_mock::{MockConfig, MockServer};
use creditdata_otlp::receiver::{KIND_CLIENT, KIND_SERVER, ReceivedSpan, Receiver};
use creditdata_otlp::{Options, Pipeline, RetryPolicy};

use crate::common::{control, create_session};
use crate::export::{creditdata, vars};

const EMAIL: &str = "jane.doe@example.com";

/// A mock whose requests are SERVER spans sent to `receiver`, through this process's global
/// tracer provider (one test installs it: a second would replace the first's).
async fn traced_mock(receiver: &Receiver) -> (MockServer, Pipeline) {
    let endpoint = receiver.endpoint().to_owned();
    let pipeline = creditdata_otlp::install_with_env(
        Options {
            service_name: "creditdata-mock",
            retry: RetryPolicy::default(),
            warn: |_| {},
        },
        &move |name| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| endpoint.clone()),
    )
    .expect("an endpoint: a pipeline");
    let mock = crate::common::mock_with(MockConfig {
        server_spans: true,
        ..MockConfig::default()
    })
    .await;
    (mock, pipeline)
}

/// A session whose customer has consented (the mock's providers then answer at once).
async fn completed_session(mock: &MockServer, dir: &Path) -> String {
    let created = creditdata(
        dir,
        &vars(mock, mock.base_url()),
        &create_session(
            EMAIL,
            "GBR:credit-history,score,bank-account-categorization",
        ),
    )
    .await;
    assert!(created.status.success(), "{created:?}");
    let id = serde_json::from_slice::<serde_json::Value>(&created.stdout).unwrap()["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    control(mock, &id, "complete").await;
    id
}

/// `creditdata datasets all ID` (every dataset, the deprecated ones too) with the mock's
/// variables and `otel`.
async fn datasets_all(
    mock: &MockServer,
    dir: &Path,
    id: &str,
    otel: &[(&'static str, &str)],
) -> Output {
    let mut vars = vars(mock, mock.base_url());
    vars.extend(otel.iter().map(|(name, value)| (*name, value.to_string())));
    let args = [
        "datasets",
        "all",
        id,
        "--include-deprecated",
        "--output",
        "json",
    ];
    creditdata(dir, &vars, &args).await
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that no attribute of `spans` quotes the session's id or the customer's e-mail.
fn assert_nothing_personal(spans: &[ReceivedSpan], id: &str) {
    for span in spans {
        for (key, value) in &span.attributes {
            assert!(
                !value.contains(id) && !value.contains("jane.doe"),
                "{}: {key}={value} quotes the request",
                span.name
            );
        }
    }
}

// Two worker threads: `force_flush` blocks its thread until the receiver, served by this
// runtime, has taken the mock's spans (on one thread it would wait for itself).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datasets_all_is_one_trace_with_a_span_per_dataset_joined_to_the_mocks_server_spans() {
    let receiver = Receiver::start().await;
    let (mock, pipeline) = traced_mock(&receiver).await;
    let work = tempfile::tempdir().unwrap();
    let id = completed_session(&mock, work.path()).await;

    let plain = datasets_all(&mock, work.path(), &id, &[]).await;
    let traced = datasets_all(
        &mock,
        work.path(),
        &id,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ],
    )
    .await;
    crate::common::every_provider_answered(traced.status.code(), &stderr(&traced))
        .unwrap_or_else(|said| panic!("{said}"));
    assert_eq!(
        traced.status.code(),
        plain.status.code(),
        "the same exit status"
    );
    assert_eq!(traced.stdout, plain.stdout, "the same output");
    assert_eq!(stderr(&traced), stderr(&plain), "the same messages");

    // The command has exited: its trace was sent before, or it is lost.
    let commands: Vec<ReceivedSpan> = receiver
        .spans()
        .into_iter()
        .filter(|span| span.service == "creditdata")
        .collect();
    let roots: Vec<&ReceivedSpan> = commands
        .iter()
        .filter(|span| span.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "one root span: {commands:#?}");
    let root = roots[0];
    assert_eq!(root.name, "creditdata datasets all");
    assert_eq!(
        root.attribute("process.exit.code"),
        Some(traced.status.code().unwrap().to_string().as_str())
    );
    assert!(
        commands.iter().all(|span| span.trace_id == root.trace_id),
        "the command is one trace: {commands:#?}"
    );

    // One child of the root per dataset, named after its operation (the client's call span).
    let children: Vec<&str> = commands
        .iter()
        .filter(|span| span.parent_span_id == root.span_id)
        .map(|span| span.name.as_str())
        .collect();
    for dataset in Dataset::ALL {
        let calls = children
            .iter()
            .filter(|name| **name == dataset.operation_id())
            .count();
        assert_eq!(
            calls,
            1,
            "{}: one call span below the root; children: {children:?}",
            dataset.operation_id()
        );
    }

    // The mock's spans join the trace below the client's attempt spans.
    pipeline.force_flush();
    let spans = receiver.spans();
    let attempts: BTreeSet<&str> = commands
        .iter()
        .filter(|span| span.kind == KIND_CLIENT)
        .map(|span| span.span_id.as_str())
        .collect();
    let served: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|span| span.service == "creditdata-mock" && span.trace_id == root.trace_id)
        .collect();
    let dataset_requests = served
        .iter()
        .filter(|span| {
            span.attribute("http.route")
                .is_some_and(|route| route.starts_with("/v1/sessions/{"))
        })
        .count();
    assert!(
        dataset_requests >= Dataset::ALL.len(),
        "a server span per dataset in the command's trace: {served:#?}"
    );
    let command_spans: BTreeSet<&str> = commands.iter().map(|s| s.span_id.as_str()).collect();
    for span in &served {
        assert_eq!(span.kind, KIND_SERVER, "{span:#?}");
        // The API's requests are the client's attempts; the token request (if the client
        // traces it) may have a parent of another kind, but always one of the command's.
        let parents = if span
            .attribute("http.route")
            .is_some_and(|r| r.starts_with("/v1/"))
        {
            &attempts
        } else {
            &command_spans
        };
        assert!(
            parents.contains(span.parent_span_id.as_str()),
            "{}: its parent is an attempt span of the client",
            span.name
        );
    }
    assert_nothing_personal(&spans, &id);
    assert_eq!(
        receiver.refused(),
        0,
        "every export is protobuf to /v1/traces"
    );
}

#[tokio::test]
async fn turned_off_nothing_is_sent_and_a_dead_collector_changes_nothing() {
    let receiver = Receiver::start().await;
    let mock = crate::common::mock().await;
    let work = tempfile::tempdir().unwrap();
    let id = completed_session(&mock, work.path()).await;
    let plain = datasets_all(&mock, work.path(), &id, &[]).await;

    for off in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        let run = datasets_all(
            &mock,
            work.path(),
            &id,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()), off],
        )
        .await;
        assert_eq!(run.status.code(), plain.status.code(), "{off:?}");
        assert_eq!(run.stdout, plain.stdout, "{off:?}");
        assert_eq!(stderr(&run), stderr(&plain), "{off:?}");
        // The command has exited: anything it meant to send was sent.
        assert_eq!(receiver.requests(), 0, "{off:?}");
    }

    // A port nothing listens on any more.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let dead = datasets_all(
        &mock,
        work.path(),
        &id,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &closed)],
    )
    .await;
    assert_eq!(dead.status.code(), plain.status.code());
    assert_eq!(dead.stdout, plain.stdout);
    let said = stderr(&dead);
    let extra = said
        .strip_prefix(stderr(&plain).as_str())
        .unwrap_or_else(|| panic!("the command's own messages first: {said}"));
    assert_eq!(
        extra,
        format!("{}\n", creditdata_otlp::EXPORT_WARNING),
        "one warning, after the command's own messages"
    );
    assert!(!said.contains(&closed), "{said}");
}

#[tokio::test]
async fn a_partial_read_exit_8_still_sends_its_trace() {
    let receiver = Receiver::start().await;
    // Providers that take a day: `datasets all` prints what there is and exits 8.
    let mock = MockServer::start(MockConfig {
        provider_delay: std::time::Duration::from_secs(24 * 3600),
        provider_error_one_in: 0,
        ..MockConfig::default()
    })
    .await
    .expect("the mock starts");
    let work = tempfile::tempdir().unwrap();
    let id = completed_session(&mock, work.path()).await;
    let run = datasets_all(
        &mock,
        work.path(),
        &id,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())],
    )
    .await;
    assert_eq!(run.status.code(), Some(8), "{}", stderr(&run));
    let roots: Vec<ReceivedSpan> = receiver
        .spans()
        .into_iter()
        .filter(|span| span.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "{roots:#?}");
    assert_eq!(roots[0].name, "creditdata datasets all");
    assert_eq!(roots[0].attribute("process.exit.code"), Some("8"));
}

#[tokio::test]
async fn an_export_is_one_trace_with_a_span_per_session() {
    let receiver = Receiver::start().await;
    let mock = crate::common::mock().await;
    let work = tempfile::tempdir().unwrap();
    let sessions = [
        completed_session(&mock, work.path()).await,
        completed_session(&mock, work.path()).await,
    ];
    let mut vars = vars(&mock, mock.base_url());
    vars.push((
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        receiver.endpoint().to_owned(),
    ));
    let exported = creditdata(
        work.path(),
        &vars,
        &["export", "--out", "tree", "--output", "json"],
    )
    .await;
    assert!(exported.status.success(), "{}", stderr(&exported));

    let spans = receiver.spans();
    let roots: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|span| span.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "one root span: {spans:#?}");
    let root = roots[0];
    assert_eq!(root.name, "creditdata export");
    assert!(
        spans.iter().all(|span| span.trace_id == root.trace_id),
        "the whole export is one trace"
    );
    let below_root = spans
        .iter()
        .filter(|span| span.name == "export session" && span.parent_span_id == root.span_id)
        .count();
    assert_eq!(
        below_root,
        sessions.len(),
        "a span per session, below the root"
    );
    for id in &sessions {
        assert_nothing_personal(&spans, id);
    }
}
