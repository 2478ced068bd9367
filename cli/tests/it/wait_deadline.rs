//! `sessions wait --timeout` is a deadline: a service that never answers a dataset read does not
//! hold the command past its timeout (it did: `--timeout 3s` returned after 60 s).

use std::time::{Duration, Instant};

use crate::common::{command, control, create_session};
use crate::export::{assert_status, creditdata, forward, relayed, serve, vars};

/// The mock behind a proxy that passes on everything but the datasets of a session, which it
/// holds open without an answer.
async fn datasets_never_answer(upstream: String) -> String {
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let (http, upstream) = (http.clone(), upstream.clone());
        async move {
            // `/v1/sessions/{id}/{dataset}`: a segment below the session.
            let below_session = request
                .uri()
                .path()
                .strip_prefix("/v1/sessions/")
                .is_some_and(|rest| rest.contains('/'));
            if below_session {
                std::future::pending::<()>().await;
            }
            relayed(forward(&http, &upstream, request).await).await
        }
    });
    serve(app).await
}

#[tokio::test]
async fn sessions_wait_returns_at_its_timeout_while_a_dataset_read_never_answers() {
    let mock = crate::common::mock().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let direct = vars(&mock, mock.base_url());
    let created = creditdata(
        dir,
        &direct,
        &create_session("wait@example.com", "GBR:score"),
    )
    .await;
    assert_status(&created, 0);
    let created: serde_json::Value = serde_json::from_slice(&created.stdout).unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    control(&mock, &id, "complete").await;
    let proxy = datasets_never_answer(mock.base_url().trim_end_matches('/').to_string()).await;

    // Each attempt may take ten minutes (`--request-timeout 600`), with the default retries:
    // only the wait's deadline ends it. The test's own bound is generous next to 3 s.
    let started = Instant::now();
    let waited = tokio::time::timeout(
        Duration::from_secs(90),
        command(
            dir,
            &vars(&mock, &proxy),
            &[
                "sessions",
                "wait",
                &id,
                "--timeout",
                "3s",
                "--request-timeout",
                "600",
            ],
        )
        .output(),
    )
    .await
    .expect("`sessions wait --timeout 3s` returns by its deadline")
    .unwrap();
    assert_status(&waited, 6);
    let stderr = String::from_utf8_lossy(&waited.stderr);
    assert!(stderr.contains("timed out after"), "{stderr}");
    assert!(
        stderr.contains("deadline"),
        "the unanswered reads are named with their deadline: {stderr}"
    );
    // Reported, not asserted on: the bound above is the test's only limit.
    eprintln!(
        "`sessions wait --timeout 3s` returned after {:?}",
        started.elapsed()
    );
}
