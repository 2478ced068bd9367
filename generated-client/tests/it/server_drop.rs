//! A loopback server that ends inside a runtime ends: wiremock verifies in `Drop` with a
//! blocking wait, which spins for ever on a task that has spent tokio's cooperative budget
//! (issue 28; `support::MockServer`, docs/traps.md).

use std::time::Duration;

use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

/// How long the runtime's thread may take before the test calls it hung: a bound, not a
/// timing (the drop takes microseconds).
const HANG: Duration = Duration::from_secs(30);

/// Spends the current task's cooperative budget to the last unit without yielding, as the
/// 1,000 finished `JoinHandle`s that `auth::a_cold_client_with_1000_concurrent_calls_...`
/// awaits in a row can.
async fn spend_the_budget() {
    while tokio::task::coop::has_budget_remaining() {
        tokio::task::coop::consume_budget().await;
    }
}

/// A server that answered once, as its expectation says, dropped by a task whose budget is spent.
async fn answered_once_then_dropped_with_the_budget_spent(server: MockServer) {
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200))
        .expect(1)
        .mount(&server)
        .await;
    let status = reqwest::get(server.uri())
        .await
        .expect("the server answers")
        .status();
    assert_eq!(status, 200);
    spend_the_budget().await;
    drop(server);
}

#[test]
fn a_server_dropped_by_a_task_that_spent_its_budget_is_verified_and_ends() {
    let (ended, ended_rx) = std::sync::mpsc::channel();
    // On a thread of its own: a spin shows as a timeout here, not as a hung test.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            answered_once_then_dropped_with_the_budget_spent(MockServer::start().await).await;
        });
        let _ = ended.send(());
    });
    ended_rx.recv_timeout(HANG).expect(
        "the server's drop did not return: its verification spins on a task whose cooperative \
         budget is spent",
    );
}

#[test]
fn a_server_whose_expectation_failed_still_fails_the_test_when_dropped_with_the_budget_spent() {
    let outcome = std::thread::spawn(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .respond_with(ResponseTemplate::new(201))
                .expect(1)
                .named("the one POST")
                .mount(&server)
                .await;
            spend_the_budget().await;
            drop(server);
        });
    })
    .join();
    let panic = outcome.expect_err("an unmet expectation fails the test");
    let message = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(
        message.contains("Verifications failed") && message.contains("the one POST"),
        "wiremock's own message, naming the mock: {message:?}"
    );
}

/// What issue 28 saw, kept to show CI's per-test time limit at work: wiremock's own server
/// dropped with the budget spent spins for ever. `cargo nextest run --profile ci --run-ignored
/// only -E 'test(=server_drop::hang_demonstration_wiremock_alone_spins_in_drop)'` ends it at
/// the profile's limit and names it (BENCHMARKS.md, "A test run that cannot hang").
#[tokio::test]
#[ignore = "hangs by design: run only to see the per-test time limit end it"]
#[allow(
    clippy::disallowed_methods,
    reason = "the unguarded server whose drop hangs is what this shows"
)]
async fn hang_demonstration_wiremock_alone_spins_in_drop() {
    let server = wiremock::MockServer::start().await;
    spend_the_budget().await;
    drop(server);
}
