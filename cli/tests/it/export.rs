//! `creditdata export` against the in-process mock (loopback only): the tree and its manifests,
//! resuming, Ctrl-C, bounded concurrency, the service's rate limit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use creditdata_client::session_datasets::Dataset;
use creditdata_mock::realism::{Latency, RateLimit, Realism};
use creditdata_mock::{MockConfig, MockServer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::{command, control};

/// `creditdata export` of every session the customer completed into `tree`, its summary as JSON.
pub(crate) const EXPORT_TREE: [&str; 7] = [
    "export",
    "--out",
    "tree",
    "--status",
    "completed-by-customer",
    "--output",
    "json",
];

pub(crate) async fn mock_with(realism: Realism) -> MockServer {
    crate::common::mock_with(MockConfig {
        realism,
        ..MockConfig::default()
    })
    .await
}

pub(crate) fn vars(mock: &MockServer, base_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CREDITDATA_BASE_URL", base_url.to_string()),
        ("CREDITDATA_TOKEN_URL", mock.token_url()),
        ("CREDITDATA_CLIENT_ID", mock.client_id().to_string()),
        ("CREDITDATA_CLIENT_SECRET", mock.client_secret().to_string()),
    ]
}

pub(crate) async fn creditdata(
    dir: &Path,
    vars: &[(&'static str, String)],
    args: &[&str],
) -> Output {
    command(dir, vars, args)
        .output()
        .await
        .expect("the binary runs")
}

pub(crate) fn summary(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not the summary ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub(crate) fn assert_status(output: &Output, expected: i32) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Creates `count` sessions whose customer has completed them (so every dataset and file
/// exists), plus one still waiting for the customer. Returns the completed sessions' ids.
pub(crate) async fn completed_sessions(mock: &MockServer, dir: &Path, count: usize) -> Vec<String> {
    let vars = vars(mock, mock.base_url());
    let mut ids = Vec::new();
    for n in 0..count {
        let created = creditdata(
            dir,
            &vars,
            &[
                "sessions",
                "create",
                "--email",
                &format!("subject{n}@example.com"),
                "--query",
                "GBR:credit-history,score,bank-account-categorization,identification",
            ],
        )
        .await;
        assert_status(&created, 0);
        let created: Value = serde_json::from_slice(&created.stdout).unwrap();
        let id = created["id"].as_str().unwrap().to_string();
        control(mock, &id, "complete").await;
        ids.push(id);
    }
    let waiting = creditdata(
        dir,
        &vars,
        &[
            "sessions",
            "create",
            "--email",
            "late@example.com",
            "-q",
            "DEU:SCORE",
        ],
    )
    .await;
    assert_status(&waiting, 0);
    ids
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file of the tree, relative to `root`.
pub(crate) fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// No temporary (`.creditdata-*.part`) file anywhere in the tree (the lock file, which names
/// the last export's process, stays by design).
pub(crate) fn assert_no_partial_file(root: &Path) {
    let partial: Vec<_> = files_under(root)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            (name.starts_with(".creditdata-") || name.ends_with(".part"))
                && p.as_os_str() != ".creditdata-export.lock"
        })
        .collect();
    assert!(partial.is_empty(), "partial files left: {partial:?}");
}

/// Every session manifest's files exist with the recorded size and SHA-256; returns
/// (session id → its manifest).
pub(crate) fn verified_manifests(root: &Path) -> BTreeMap<String, Value> {
    let mut manifests = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("sessions")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest_path = dir.join("manifest.json");
        if !manifest_path.exists() {
            continue;
        }
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        for file in manifest["files"].as_array().unwrap() {
            let path = dir.join(file["path"].as_str().unwrap());
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(file["bytes"], bytes.len() as u64, "{}", path.display());
            assert_eq!(file["sha256"], sha256_hex(&bytes), "{}", path.display());
        }
        manifests.insert(
            dir.file_name().unwrap().to_string_lossy().into_owned(),
            manifest,
        );
    }
    manifests
}

pub(crate) fn file_of(manifest: &Value, key: &str) -> String {
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == key)
        .unwrap_or_else(|| panic!("no {key} in {manifest}"))["path"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn export_writes_every_file_and_a_rerun_keeps_verified_files_and_repairs_torn_ones() {
    let mock = mock_with(Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let ids = completed_sessions(&mock, work.path(), 2).await;
    let vars = vars(&mock, mock.base_url());
    let args = EXPORT_TREE;
    let root = work.path().join("tree");

    let first_output = creditdata(work.path(), &vars, &args).await;
    assert_status(&first_output, 0);
    let first = summary(&first_output);
    assert_eq!(first["totals"]["sessions"], 2, "{first}");
    assert_eq!(first["totals"]["sessionsComplete"], 2, "{first}");
    assert_eq!(first["totals"]["filesFailed"], 0, "{first}");
    let fetched = first["totals"]["filesFetched"].as_u64().unwrap();
    assert_no_partial_file(&root);
    let manifests = verified_manifests(&root);
    assert_eq!(
        manifests.keys().cloned().collect::<Vec<_>>(),
        {
            let mut ids = ids.clone();
            ids.sort();
            ids
        },
        "one directory per matching session, none for the waiting one"
    );
    let listed: u64 = manifests
        .values()
        .map(|m| m["files"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(listed, fetched, "every fetched file is in a manifest");
    let manifest = &manifests[&ids[0]];
    assert_eq!(manifest["complete"], true);
    let report = root
        .join("sessions")
        .join(&ids[0])
        .join(file_of(manifest, "report"));
    assert!(std::fs::read(&report).unwrap().starts_with(b"%PDF-"));
    let keys: Vec<&str> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    for expected in ["session", "report", "transactions-excel"] {
        assert!(keys.contains(&expected), "{expected} missing from {keys:?}");
    }
    // Every dataset of the client's list (generated from the description), each in its file;
    // the deprecated ones listed as skipped, with the reason, rather than silently absent.
    for dataset in Dataset::ALL {
        let key = format!("dataset:{}", dataset.name());
        if dataset.deprecated() {
            assert!(!keys.contains(&key.as_str()), "{key} exported unasked");
            let skipped = manifest["skipped"]
                .as_array()
                .expect("skipped datasets listed");
            assert!(
                skipped.iter().any(|s| s["key"] == key.as_str()
                    && s["reason"]
                        .as_str()
                        .is_some_and(|r| r.contains("--include-deprecated"))),
                "{key} not listed as skipped: {manifest}"
            );
        } else {
            assert!(keys.contains(&key.as_str()), "{key} missing from {keys:?}");
            let path = root
                .join("sessions")
                .join(&ids[0])
                .join(format!("datasets/{}.json", dataset.name()));
            let value: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            assert!(!value.is_null(), "{}", path.display());
        }
    }
    for prefix in ["statement-excel:", "statement-tsv:", "source-file:"] {
        assert!(
            keys.iter().any(|k| k.starts_with(prefix)),
            "no {prefix} in {keys:?}"
        );
    }
    assert!(
        !keys.contains(&"dataset:categorizations"),
        "the deprecated dataset only when asked"
    );
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(index["sessions"].as_array().unwrap().len(), 2, "{index}");
    assert_eq!(index["interrupted"], false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&root), 0o700);
        assert_eq!(mode(&root.join("sessions").join(&ids[0])), 0o700);
        for file in files_under(&root) {
            assert_eq!(mode(&root.join(&file)), 0o600, "{}", file.display());
        }
    }

    // Without a terminal, progress is JSON lines on stderr, ending with the totals.
    let stderr = String::from_utf8_lossy(&first_output.stderr).into_owned();
    let last: Value = serde_json::from_str(stderr.lines().last().expect("progress lines"))
        .unwrap_or_else(|e| panic!("not a JSON progress line ({e}): {stderr}"));
    assert_eq!(last["event"], "export-finished", "{stderr}");
    assert_eq!(last["sessionsDone"], 2, "{stderr}");
    assert_eq!(last["filesFetched"], fetched, "{stderr}");
    assert!(
        !stderr.contains("@example.com"),
        "no personal data in progress: {stderr}"
    );

    // A rerun fetches nothing: every file verifies against its manifest. A temporary file left
    // by a killed export is removed.
    let leftover = root
        .join("sessions")
        .join(&ids[0])
        .join("datasets/.creditdata-killed.part");
    std::fs::write(&leftover, b"half").unwrap();
    let second = creditdata(work.path(), &vars, &args).await;
    assert_status(&second, 0);
    assert!(!leftover.exists(), "the leftover temporary file is removed");
    let second = summary(&second);
    assert_eq!(second["totals"]["filesFetched"], 0, "{second}");
    assert_eq!(second["totals"]["filesKept"], fetched, "{second}");

    // Torn (truncated), corrupted (same size, other bytes) and missing files are fetched again;
    // the rest is kept.
    let session_a = root.join("sessions").join(&ids[0]);
    let session_b = root.join("sessions").join(&ids[1]);
    let truncated = session_a.join(file_of(&manifests[&ids[0]], "report"));
    let length = std::fs::metadata(&truncated).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&truncated)
        .unwrap()
        .set_len(length / 2)
        .unwrap();
    let corrupted = session_b.join(file_of(&manifests[&ids[1]], "dataset:scores"));
    let mut bytes = std::fs::read(&corrupted).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x20;
    std::fs::write(&corrupted, &bytes).unwrap();
    let removed = session_b.join(file_of(&manifests[&ids[1]], "transactions-excel"));
    std::fs::remove_file(&removed).unwrap();

    let third = creditdata(work.path(), &vars, &args).await;
    assert_status(&third, 0);
    let third = summary(&third);
    assert_eq!(third["totals"]["filesFetched"], 3, "{third}");
    assert_eq!(third["totals"]["filesRepaired"], 3, "{third}");
    assert_eq!(third["totals"]["filesKept"], fetched - 3, "{third}");
    verified_manifests(&root);
    assert!(std::fs::read(&truncated).unwrap().starts_with(b"%PDF-"));
    assert_eq!(std::fs::metadata(&truncated).unwrap().len(), length);
    assert!(removed.is_file());
    assert_no_partial_file(&root);
}

// SIGINT is sent with `kill`, as a shell's Ctrl-C sends it.
#[cfg(unix)]
#[tokio::test]
async fn ctrl_c_leaves_no_partial_file_and_a_rerun_completes() {
    // Slow enough that the export is still running when it is interrupted.
    let mock = mock_with(Realism::new().latency(Latency::fixed(Duration::from_millis(150)))).await;
    let work = tempfile::tempdir().unwrap();
    completed_sessions(&mock, work.path(), 4).await;
    let vars = vars(&mock, mock.base_url());
    let args = [
        "export",
        "--out",
        "tree",
        "--status",
        "completed-by-customer",
        "--concurrency",
        "2",
        "--output",
        "json",
    ];
    let root = work.path().join("tree");

    let child = command(work.path(), &vars, &args).spawn().unwrap();
    let pid = child.id().expect("the export runs");
    // Interrupt once the first files are in place.
    let sessions = root.join("sessions");
    for _ in 0..600 {
        let started = sessions.is_dir()
            && std::fs::read_dir(&sessions)
                .unwrap()
                .filter_map(Result::ok)
                .any(|dir| dir.path().join("datasets").is_dir());
        if started {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let signalled = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let interrupted = child.wait_with_output().await.unwrap();
    assert_status(&interrupted, 130);
    let stderr = String::from_utf8_lossy(&interrupted.stderr).into_owned();
    let interrupted = summary(&interrupted);
    assert_eq!(interrupted["interrupted"], true, "{interrupted}");
    // The last progress line says what the summary says: interrupted, with how many sessions
    // complete, and no time left to wait for.
    let finished: Value = stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .rfind(|line| line["event"] == "export-finished")
        .unwrap_or_else(|| panic!("no export-finished line: {stderr}"));
    assert_eq!(finished["interrupted"], true, "{finished}");
    assert_eq!(finished["etaSeconds"], Value::Null, "{finished}");
    assert_eq!(finished["sessionsDone"], interrupted["totals"]["sessions"]);
    for (key, total) in interrupted["totals"].as_object().unwrap() {
        assert_eq!(
            &finished[key], total,
            "{key}: the last progress line {finished} against the summary {interrupted}"
        );
    }
    assert!(
        stderr.find("interrupted: recording") < stderr.find("\"export-finished\""),
        "{stderr}"
    );
    assert_no_partial_file(&root);
    let manifests = verified_manifests(&root);
    assert!(
        manifests.values().any(|m| m["complete"] == false),
        "the export was interrupted before its end: {manifests:?}"
    );
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(index["interrupted"], true);

    let rerun = creditdata(work.path(), &vars, &args).await;
    assert_status(&rerun, 0);
    let rerun = summary(&rerun);
    assert_eq!(rerun["totals"]["sessionsComplete"], 4, "{rerun}");
    assert!(
        rerun["totals"]["filesKept"].as_u64().unwrap() > 0,
        "what was complete before Ctrl-C is kept: {rerun}"
    );
    let manifests = verified_manifests(&root);
    assert_eq!(manifests.len(), 4);
    assert!(manifests.values().all(|m| m["complete"] == true));
    assert_no_partial_file(&root);
}

/// Sends `request` on to `upstream` (the mock) as it came, but for its `Host`.
pub(crate) async fn forward(
    http: &reqwest::Client,
    upstream: &str,
    request: axum::extract::Request,
) -> reqwest::Response {
    let mut forwarded = http.request(
        request.method().clone(),
        format!("{upstream}{}", request.uri()),
    );
    for (name, value) in request.headers() {
        if name != axum::http::header::HOST {
            forwarded = forwarded.header(name, value);
        }
    }
    forwarded.send().await.unwrap()
}

/// The mock's `answer`, passed on as it came.
pub(crate) async fn relayed(answer: reqwest::Response) -> axum::response::Response {
    let mut response = axum::response::Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    response
        .body(axum::body::Body::from(answer.bytes().await.unwrap()))
        .unwrap()
}

/// Serves `app` on 127.0.0.1 for the rest of the test; its base URL.
pub(crate) async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

/// A proxy on 127.0.0.1 in front of the mock that counts the requests in flight at once.
async fn counting_proxy(upstream: String) -> (String, Arc<AtomicUsize>) {
    let peak = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let http = reqwest::Client::new();
    let app = {
        let peak = peak.clone();
        axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (peak, in_flight, http, upstream) = (
                peak.clone(),
                in_flight.clone(),
                http.clone(),
                upstream.clone(),
            );
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                let answer = forward(&http, &upstream, request).await;
                let response = relayed(answer).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                response
            }
        })
    };
    let address = serve(app).await;
    (address, peak)
}

#[tokio::test]
async fn requests_in_flight_never_exceed_the_concurrency() {
    let mock = mock_with(Realism::new().latency(Latency::fixed(Duration::from_millis(30)))).await;
    let work = tempfile::tempdir().unwrap();
    completed_sessions(&mock, work.path(), 3).await;
    let (proxy, peak) = counting_proxy(mock.base_url().trim_end_matches('/').to_string()).await;
    let vars = vars(&mock, &proxy);
    let exported = creditdata(
        work.path(),
        &vars,
        &[
            "export",
            "--out",
            "tree",
            "--status",
            "completed-by-customer",
            "--concurrency",
            "3",
            "--output",
            "json",
        ],
    )
    .await;
    assert_status(&exported, 0);
    let peak = peak.load(Ordering::SeqCst);
    assert!(peak <= 3, "{peak} requests in flight at once, limit 3");
    assert!(
        peak >= 2,
        "the export does not run requests side by side (peak {peak})"
    );
    verified_manifests(&work.path().join("tree"));
}

#[tokio::test]
async fn the_services_429s_do_not_fail_the_export() {
    let mock = mock_with(Realism::new().rate_limit(RateLimit::per_second(15))).await;
    let work = tempfile::tempdir().unwrap();
    completed_sessions(&mock, work.path(), 2).await;
    let vars = vars(&mock, mock.base_url());
    // Faster than the service allows: it refuses some requests, the client waits and retries.
    let exported = creditdata(
        work.path(),
        &vars,
        &[
            "export",
            "--out",
            "fast",
            "--status",
            "completed-by-customer",
            "--concurrency",
            "8",
            "--output",
            "json",
        ],
    )
    .await;
    assert_status(&exported, 0);
    let exported = summary(&exported);
    assert_eq!(exported["totals"]["filesFailed"], 0, "{exported}");
    let realism: Value = reqwest::Client::new()
        .get(format!("{}/_mock/realism", mock.base_url()))
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let refused = realism["rateLimit"]["refused"].as_u64().unwrap();
    assert!(refused > 0, "the service's limit was reached: {realism}");
    verified_manifests(&work.path().join("fast"));

    // With the client's own limit at the service's, the export also completes.
    let paced = creditdata(
        work.path(),
        &vars,
        &[
            "export",
            "--out",
            "paced",
            "--status",
            "completed-by-customer",
            "--rate-limit",
            "15/s",
            "--output",
            "json",
        ],
    )
    .await;
    assert_status(&paced, 0);
    let paced = summary(&paced);
    assert_eq!(paced["totals"]["filesFailed"], 0, "{paced}");
    assert!(
        paced["rateLimiter"]["admitted"].as_u64().unwrap() > 0,
        "{paced}"
    );
}

#[tokio::test]
async fn an_out_path_that_is_a_file_is_a_usage_error() {
    let mock = mock_with(Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("taken"), b"x").unwrap();
    let vars = vars(&mock, mock.base_url());
    let output = creditdata(work.path(), &vars, &["export", "--out", "taken"]).await;
    assert_status(&output, 2);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not a directory"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bad_rate = creditdata(
        work.path(),
        &vars,
        &["export", "--out", "x", "--rate-limit", "fast"],
    )
    .await;
    assert_status(&bad_rate, 2);
}

#[tokio::test]
async fn failed_authentication_stops_the_export_with_status_3() {
    let mock = mock_with(Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let mut vars = vars(&mock, mock.base_url());
    vars.retain(|(name, _)| *name != "CREDITDATA_CLIENT_SECRET");
    vars.push((
        "CREDITDATA_CLIENT_SECRET",
        "not-the-secret-5f2a".to_string(),
    ));
    let output = creditdata(
        work.path(),
        &vars,
        &["export", "--out", "tree", "--output", "json"],
    )
    .await;
    assert_status(&output, 3);
    let everything = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!everything.contains("not-the-secret-5f2a"), "{everything}");
}

#[tokio::test]
async fn a_session_that_changed_since_the_last_run_is_exported_afresh() {
    let mock = mock_with(Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let ids = completed_sessions(&mock, work.path(), 1).await;
    let vars = vars(&mock, mock.base_url());
    let args = [
        "export",
        "--out",
        "tree",
        "--email",
        "subject0@example.com",
        "--output",
        "json",
    ];
    let first = creditdata(work.path(), &vars, &args).await;
    assert_status(&first, 0);
    let fetched = summary(&first)["totals"]["filesFetched"].as_u64().unwrap();

    // Another country's data is asked for (the customer is asked again): the session's record
    // changes and its datasets may hold more.
    let updated = creditdata(
        work.path(),
        &vars,
        &["sessions", "update", &ids[0], "--query", "DEU:SCORE"],
    )
    .await;
    assert_status(&updated, 0);
    // The customer is asked again: the new country's provider waits for the customer, so the
    // session is partial (exit 8) until it has answered.
    let second = creditdata(work.path(), &vars, &args).await;
    assert_status(&second, 8);
    let second = summary(&second);
    assert_eq!(second["totals"]["sessionsPartial"], 1, "{second}");
    assert_eq!(second["totals"]["filesKept"], 0, "{second}");
    assert!(
        second["totals"]["filesFetched"].as_u64().unwrap() >= fetched,
        "{second}"
    );
    let manifests = verified_manifests(&work.path().join("tree"));
    let record = std::fs::read(
        work.path()
            .join("tree/sessions")
            .join(&ids[0])
            .join(file_of(&manifests[&ids[0]], "session")),
    )
    .unwrap();
    assert!(
        String::from_utf8_lossy(&record).contains("DEU"),
        "the new record is exported"
    );
}
