//! The `creditdata-mock` binary with `OTEL_EXPORTER_OTLP_ENDPOINT` set: a SERVER span per
//! request, joined to the caller's `traceparent`, named by route, without ids or addresses,
//! sent by the time it has stopped on SIGTERM; `OTEL_SDK_DISABLED` and
//! `OTEL_TRACES_EXPORTER=none` send nothing. (Unix: the tests stop the mock with SIGTERM.)

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use creditdata_otlp::receiver::{KIND_SERVER, ReceivedSpan, Receiver};

/// The mock binary on a free port with `vars` (and no `OTEL_*` of the developer's own), and its
/// base URL; killed when the guard drops.
fn start_mock(vars: &[(&str, &str)]) -> (KillOnDrop, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"));
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") {
            command.env_remove(name);
        }
    }
    let mut child = command
        .args(["--listen", "127.0.0.1:0"])
        .envs(vars.iter().copied())
        .env("RUST_LOG", "warn")
        // Batches every 10 minutes: what arrives was sent by the shutdown.
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the mock binary runs");
    // Read to its end by a thread: a closed stdout would make the mock's next line fail.
    let stdout = child.stdout.take().expect("stdout");
    let (first_line, first) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = first_line.send(lines.next().and_then(Result::ok).unwrap_or_default());
        lines.for_each(drop);
    });
    let first = first.recv().unwrap_or_default();
    let base_url = first
        .strip_prefix("creditdata-mock listening on ")
        .unwrap_or_else(|| panic!("the mock says where it listens: {first:?}"))
        .to_owned();
    (KillOnDrop(child), base_url)
}

/// Stops the mock as a service manager would (SIGTERM) and waits for it to exit.
async fn stop(mut mock: KillOnDrop) {
    let pid = rustix::process::Pid::from_child(&mock.0);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let status = tokio::task::spawn_blocking(move || mock.0.wait())
        .await
        .unwrap()
        .expect("the mock exits");
    assert!(status.success(), "{status:?}");
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_a_server_span_in_the_callers_trace_named_by_its_route() {
    let receiver = Receiver::start().await;
    let (mock, base_url) = start_mock(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ]);
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let session_id = "5d1f6a52-8f1e-4c55-9d3b-0c8f4e2a7b19";
    let http = reqwest::Client::new();
    let answer = http
        .get(format!(
            "{base_url}/v1/sessions/{session_id}/person-details"
        ))
        .header("traceparent", format!("00-{trace_id}-{parent_id}-01"))
        .send()
        .await
        .expect("the mock answers");
    assert_eq!(answer.status(), 401, "no token: refused, and still traced");
    // Without a traceparent: a trace of its own. The e-mail must not reach any attribute.
    let _ = http
        .get(format!(
            "{base_url}/v1/sessions?email=jane.doe%40example.com"
        ))
        .send()
        .await
        .expect("the mock answers");

    stop(mock).await;
    let spans = receiver.spans();
    assert_eq!(spans.len(), 2, "one span per request: {spans:#?}");
    assert!(spans.iter().all(|s| s.kind == KIND_SERVER), "{spans:#?}");
    let joined: Vec<&ReceivedSpan> = spans.iter().filter(|s| s.trace_id == trace_id).collect();
    assert_eq!(
        joined.len(),
        1,
        "one span in the caller's trace: {spans:#?}"
    );
    let span = joined[0];
    assert_eq!(span.parent_span_id, parent_id, "{span:#?}");
    assert_eq!(span.kind, KIND_SERVER);
    assert_eq!(span.service, "creditdata-mock");
    let route = span.attribute("http.route").expect("a route");
    assert!(
        route.starts_with("/v1/sessions/{") && route.ends_with("}/person-details"),
        "{route}"
    );
    assert_eq!(span.name, format!("GET {route}"));
    assert_eq!(span.attribute("http.request.method"), Some("GET"));
    assert_eq!(span.attribute("http.response.status_code"), Some("401"));
    assert_eq!(span.attribute("url.scheme"), Some("http"));
    assert_eq!(span.attribute("server.address"), Some("127.0.0.1"));
    let port = base_url.rsplit(':').next().unwrap();
    assert_eq!(span.attribute("server.port"), Some(port));

    let other = spans
        .iter()
        .find(|s| s.trace_id != trace_id)
        .expect("the second request's span");
    assert!(other.parent_span_id.is_empty(), "a root: {other:#?}");
    for span in &spans {
        for (key, value) in &span.attributes {
            assert!(
                !value.contains(session_id) && !value.contains("jane.doe"),
                "{key}={value} quotes the request"
            );
        }
    }
    assert_eq!(
        receiver.refused(),
        0,
        "every export is protobuf to /v1/traces"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_sdk_or_the_none_exporter_sends_nothing_even_with_an_endpoint() {
    for off in [
        ("OTEL_SDK_DISABLED", "true"),
        ("OTEL_TRACES_EXPORTER", "none"),
    ] {
        let receiver = Receiver::start().await;
        let (mock, base_url) = start_mock(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            off,
        ]);
        let answer = reqwest::get(format!("{base_url}/openapi/v1.json"))
            .await
            .expect("the mock answers");
        assert_eq!(answer.status(), 200);
        stop(mock).await;
        assert_eq!(receiver.requests(), 0, "{off:?}");
    }
}
