//! `creditdata export` with a rate-limit store: workers started with the same filters share the
//! sessions through a real `redis-server` of the test's own (loopback, temporary directory,
//! stopped at the end), a worker killed with `kill -9` loses its lease to another, and the
//! store's password is never printed. Skipped, saying so, where `redis-server` is absent, unless
//! `CREDITDATA_REQUIRE_REDIS` is set (CI). Every command is bounded in time.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use creditdata_mock::MockServer;
use creditdata_mock::local_redis::{LocalRedis, Resp};
use creditdata_mock::realism::Realism;
use serde_json::Value;

use crate::common::command;
use crate::export::{
    assert_status, completed_sessions, mock_with, summary, vars, verified_manifests,
};

/// The longest one export of a handful of sessions may take here.
const BOUND: Duration = Duration::from_secs(180);

fn export_args<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "export",
        "--out",
        out,
        "--status",
        "completed-by-customer",
        "--output",
        "json",
    ];
    args.extend_from_slice(extra);
    args
}

async fn bounded(mut command: tokio::process::Command) -> Output {
    tokio::time::timeout(BOUND, command.output())
        .await
        .expect("the export ends in time")
        .expect("the binary runs")
}

/// The sessions of `tree` whose manifest says complete.
fn complete_in(tree: &Path) -> BTreeSet<String> {
    if !tree.join("sessions").exists() {
        return BTreeSet::new();
    }
    verified_manifests(tree)
        .into_iter()
        .filter(|(_, manifest)| manifest["complete"] == Value::Bool(true))
        .map(|(id, _)| id)
        .collect()
}

fn with_store(mock: &MockServer, store: &str) -> Vec<(&'static str, String)> {
    let mut vars = vars(mock, mock.base_url());
    vars.push(("CREDITDATA_RATE_LIMIT_STORE", store.to_string()));
    vars
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_with_the_same_filters_export_each_session_once_and_a_rerun_resumes() {
    let Some(redis) = LocalRedis::start_or_skip("workers_with_the_same_filters") else {
        return;
    };
    let mock = mock_with(Realism::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let ids: BTreeSet<String> = completed_sessions(&mock, dir.path(), 6)
        .await
        .into_iter()
        .collect();
    let vars = with_store(&mock, &redis.url());
    let worker = |out: &'static str| {
        command(
            dir.path(),
            &vars,
            &export_args(out, &["--rate-limit", "200/s", "--concurrency", "2"]),
        )
    };
    let (a, b) = tokio::join!(bounded(worker("a")), bounded(worker("b")));
    assert_status(&a, 0);
    assert_status(&b, 0);
    let (in_a, in_b) = (
        complete_in(&dir.path().join("a")),
        complete_in(&dir.path().join("b")),
    );
    assert!(
        in_a.is_disjoint(&in_b),
        "a session exported twice: {:?}",
        in_a.intersection(&in_b).collect::<Vec<_>>()
    );
    assert_eq!(&in_a | &in_b, ids, "every session exported");
    let claimed: u64 = [&a, &b]
        .iter()
        .map(|output| summary(output)["sharedWork"]["claimed"].as_u64().unwrap())
        .sum();
    assert_eq!(claimed, 6);
    // The index of each tree lists what that tree holds.
    for (out, held) in [("a", &in_a), ("b", &in_b)] {
        assert_eq!(
            summary(if out == "a" { &a } else { &b })["totals"]["sessions"],
            held.len()
        );
    }

    // A rerun (a new run: the first has ended) by worker a alone resumes its own sessions from
    // its tree and takes b's, whose tree is not in the run.
    let again = bounded(worker("a")).await;
    assert_status(&again, 0);
    let rerun = summary(&again);
    assert_eq!(complete_in(&dir.path().join("a")), ids);
    assert!(
        rerun["totals"]["filesKept"].as_u64().unwrap() > 0,
        "a's own sessions kept: {rerun}"
    );
    assert_eq!(rerun["sharedWork"]["claimed"], 6, "{rerun}");

    // What the store holds: hashes and random ids, nothing of the sessions, the filters or the
    // credentials.
    let everything = redis.dump_everything().unwrap();
    assert!(everything.len() >= 3, "{} keys", everything.len());
    let mut forbidden: Vec<String> = ids.iter().cloned().collect();
    forbidden.extend([
        mock.client_id().to_string(),
        mock.client_secret().to_string(),
        mock.base_url().to_string(),
        "subject0@example.com".to_string(),
        "completed-by-customer".to_string(),
        "COMPLETED_BY_CUSTOMER".to_string(),
    ]);
    for (key, value) in &everything {
        for text in &forbidden {
            for bytes in [key, value] {
                assert!(
                    !bytes.windows(text.len()).any(|w| w == text.as_bytes()),
                    "{text:?} in the store under {}",
                    String::from_utf8_lossy(key)
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_held_by_a_worker_killed_with_kill_9_is_taken_over() {
    let Some(redis) = LocalRedis::start_or_skip("a_lease_held_by_a_killed_worker") else {
        return;
    };
    let mock = mock_with(Realism::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let ids: BTreeSet<String> = completed_sessions(&mock, dir.path(), 3)
        .await
        .into_iter()
        .collect();
    let vars = with_store(&mock, &redis.url());
    // A slow worker: two requests a second, one at a time, leases of 2 s.
    let mut slow = command(
        dir.path(),
        &vars,
        &export_args(
            "slow",
            &[
                "--rate-limit",
                "2/s",
                "--concurrency",
                "1",
                "--lease-ttl",
                "2s",
            ],
        ),
    )
    .spawn()
    .expect("the slow worker starts");
    // Until it holds a lease (bounded).
    let mut polls = 0;
    while !holds_a_lease(&redis) {
        polls += 1;
        assert!(polls < 600, "the slow worker never claimed a session");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    slow.start_kill().expect("kill -9");
    let killed = tokio::time::timeout(BOUND, slow.wait())
        .await
        .expect("the killed worker is gone")
        .unwrap();
    assert!(!killed.success());

    let fast = bounded(command(
        dir.path(),
        &vars,
        &export_args("fast", &["--rate-limit", "200/s", "--lease-ttl", "2s"]),
    ))
    .await;
    assert_status(&fast, 0);
    let shared = &summary(&fast)["sharedWork"];
    assert!(
        shared["takenOver"].as_u64().unwrap() >= 1,
        "the killed worker's session was taken over: {shared}"
    );
    let in_slow = complete_in(&dir.path().join("slow"));
    let in_fast = complete_in(&dir.path().join("fast"));
    assert!(in_slow.is_disjoint(&in_fast));
    assert_eq!(&in_slow | &in_fast, ids, "every session exported");
}

/// Whether the store holds a session's lease.
fn holds_a_lease(redis: &LocalRedis) -> bool {
    matches!(redis.command(&["KEYS", "*:lease:*"]), Ok(Resp::Array(keys)) if !keys.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_password_is_never_printed_and_never_taken_from_the_command_line() {
    let password = "export-redis-pa55-3e1";
    let Some(redis) =
        LocalRedis::start_with_password_or_skip("the_stores_password", Some(password))
    else {
        return;
    };
    let mock = mock_with(Realism::new()).await;
    let dir = tempfile::tempdir().unwrap();
    completed_sessions(&mock, dir.path(), 1).await;
    let plain = vars(&mock, mock.base_url());

    // On the command line: refused, without repeating it.
    let refused = bounded(command(
        dir.path(),
        &plain,
        &export_args(
            "t1",
            &["--rate-limit", "50/s", "--rate-limit-store", &redis.url()],
        ),
    ))
    .await;
    assert_status(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("CREDITDATA_RATE_LIMIT_STORE"), "{stderr}");

    // In the variable: used, and in no output, logs included.
    let used = bounded(command(
        dir.path(),
        &with_store(&mock, &redis.url()),
        &export_args("t2", &["--rate-limit", "50/s", "-vv"]),
    ))
    .await;
    assert_status(&used, 0);
    assert_eq!(summary(&used)["sharedWork"]["claimed"], 1);

    // A wrong one: the work cannot be shared; said without either password.
    let wrong = redis.url().replace(password, "wrong-pa55-77");
    let unusable = bounded(command(
        dir.path(),
        &with_store(&mock, &wrong),
        &export_args("t3", &["--rate-limit", "50/s", "-vv"]),
    ))
    .await;
    assert_status(&unusable, 1);
    let unusable_stderr = String::from_utf8_lossy(&unusable.stderr);
    assert!(
        unusable_stderr.contains("--no-share-work"),
        "{unusable_stderr}"
    );

    for output in [&refused, &used, &unusable] {
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(!text.contains(password), "{text}");
            assert!(!text.contains("wrong-pa55-77"), "{text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_store_to_share_the_work_with_no_share_work_exports_alone() {
    // A port nothing listens on: the store is down from the start.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let store = format!("redis://127.0.0.1:{port}/0");
    let mock = mock_with(Realism::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let ids: BTreeSet<String> = completed_sessions(&mock, dir.path(), 2)
        .await
        .into_iter()
        .collect();
    let vars = with_store(&mock, &store);
    let stopped = bounded(command(
        dir.path(),
        &vars,
        &export_args("t", &["--rate-limit", "100/s"]),
    ))
    .await;
    assert_status(&stopped, 1);
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert!(
        stderr.contains(&store) && stderr.contains("--no-share-work"),
        "{stderr}"
    );

    // The rate limit alone does not need the store: it paces locally, and says so once.
    let alone = bounded(command(
        dir.path(),
        &vars,
        &export_args("t", &["--rate-limit", "100/s", "--no-share-work"]),
    ))
    .await;
    assert_status(&alone, 0);
    assert_eq!(complete_in(&dir.path().join("t")), ids);
    let limiter = &summary(&alone)["rateLimiter"]["store"];
    assert_eq!(limiter["shared"], false, "{limiter}");
    assert_eq!(limiter["outages"], 1, "{limiter}");
    let stderr = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(stderr.matches("does not answer").count(), 1, "{stderr}");
}
