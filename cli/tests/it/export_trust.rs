//! Export against local attackers and hostile listings (issue 21): memory bounded whatever a
//! listing says, one name per file, one export per directory, nothing written outside the tree
//! (the last two through Unix's locks, links and FIFOs).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use creditdata_mock::MockServer;
use creditdata_mock::realism::Realism;
use serde_json::{Value, json};

use crate::export::{
    EXPORT_TREE, assert_no_partial_file, assert_status, completed_sessions, creditdata, forward,
    mock_with, relayed, serve, summary, vars, verified_manifests,
};

/// The mock with one session the customer completed, a work directory, and that session's id
/// (in a list, as `completed_sessions` gives it).
async fn one_completed_session() -> (MockServer, tempfile::TempDir, Vec<String>) {
    let mock = mock_with(Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let ids = completed_sessions(&mock, work.path(), 1).await;
    (mock, work, ids)
}

/// What the hostile service lists as a session's attachments: (id, fileName, mimeType).
type Listing = Arc<dyn Fn() -> Vec<(String, Option<String>, Option<String>)> + Send + Sync>;
/// What it serves as an attachment's content: (body, file name, content type).
type Content = Arc<dyn Fn(&str) -> (Vec<u8>, Option<String>, String) + Send + Sync>;

/// A service on 127.0.0.1 that is the mock but for its attachments: it lists `listing` (each
/// entry shaped as the mock's own first attachment) and serves `content` for any of them.
async fn hostile_attachments(mock: &MockServer, listing: Listing, content: Content) -> String {
    hostile_attachments_padded(mock, listing, content, 0).await
}

/// [`hostile_attachments`], each listed entry carrying `padding` bytes more in a member the
/// description does not know. The listing is sent as it is made, entry by entry (chunked), so
/// that this test's own memory does not grow with it either.
async fn hostile_attachments_padded(
    mock: &MockServer,
    listing: Listing,
    content: Content,
    padding: usize,
) -> String {
    let upstream = mock.base_url().trim_end_matches('/').to_string();
    let http = reqwest::Client::new();
    let app =
        axum::Router::new().fallback(move |request: Request| {
            let (http, upstream, listing, content) = (
                http.clone(),
                upstream.clone(),
                listing.clone(),
                content.clone(),
            );
            async move {
                let path = request.uri().path().to_string();
                let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
                if let ["v1", "sessions", _, "attachments", id, "content"] = parts.as_slice() {
                    let (body, file_name, content_type) = content(id);
                    let mut response = Response::builder().header("content-type", content_type);
                    if let Some(name) = file_name {
                        response = response.header(
                            "content-disposition",
                            format!("attachment; filename=\"{name}\""),
                        );
                    }
                    return response.body(Body::from(body)).unwrap();
                }
                let answer = forward(&http, &upstream, request).await;
                let status = answer.status();
                let mut response = Response::builder().status(status);
                for (name, value) in answer.headers() {
                    if name != axum::http::header::CONTENT_LENGTH {
                        response = response.header(name, value);
                    }
                }
                let body = answer.bytes().await.unwrap().to_vec();
                if !(matches!(parts.as_slice(), ["v1", "sessions", _, "attachments"])
                    && status.is_success())
                {
                    return response.body(Body::from(body)).unwrap();
                }
                let mut document: Value = serde_json::from_slice(&body).unwrap();
                let mut template = document["attachments"][0].clone();
                assert!(
                    template.is_object(),
                    "the mock lists an attachment: {document}"
                );
                if padding > 0 {
                    template["padding"] = json!("x".repeat(padding));
                }
                let marker = "\u{1}listing\u{1}";
                document["attachments"] = json!(marker);
                let text = serde_json::to_string(&document).unwrap();
                let quoted = serde_json::to_string(marker).unwrap();
                let (before, after) = text.split_once(&quoted).unwrap();
                let (before, after) = (format!("{before}["), format!("]{after}"));
                let entries = listing().into_iter().enumerate().map(
                    move |(n, (id, file_name, mime_type))| {
                        let mut item = template.clone();
                        item["id"] = json!(id);
                        item["fileName"] = json!(file_name);
                        item["mimeType"] = json!(mime_type);
                        let separator = if n == 0 { "" } else { "," };
                        format!("{separator}{item}")
                    },
                );
                let chunks = std::iter::once(before)
                    .chain(entries)
                    .chain(std::iter::once(after))
                    .map(|chunk| Ok::<_, std::io::Error>(axum::body::Bytes::from(chunk)));
                response
                    .body(Body::from_stream(futures::stream::iter(chunks)))
                    .unwrap()
            }
        });
    serve(app).await
}

/// The attachments a session's manifest lists: (path, SHA-256 as recorded).
fn attachments_of(manifest: &Value) -> Vec<String> {
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["key"].as_str().unwrap().starts_with("attachment:"))
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Item 3: 400,000 ids in one listing take `--max-listed-files` of them, at most
/// `--concurrency` files are obtained at once, and the rest is the session's failure.
#[tokio::test]
async fn item_3_export_memory_is_bounded_whatever_a_listing_says() {
    let (mock, work, ids) = one_completed_session().await;
    let listing: Listing = Arc::new(|| {
        (0..400_000)
            .map(|n| (format!("att-{n}"), None, Some("application/pdf".into())))
            .collect()
    });
    let content: Content = Arc::new(|id| {
        (
            format!("%PDF- {id}").into_bytes(),
            None,
            "application/pdf".into(),
        )
    });
    let service = hostile_attachments(&mock, listing, content).await;
    let exported = creditdata(
        work.path(),
        &vars(&mock, &service),
        &[
            "export",
            "--out",
            "tree",
            "--status",
            "completed-by-customer",
            "--concurrency",
            "4",
            "--max-listed-files",
            "100",
            "--output",
            "json",
            "-v",
        ],
    )
    .await;
    // Files left out: the session is not complete, and the message says what to do.
    assert_status(&exported, 1);
    let stderr = String::from_utf8_lossy(&exported.stderr);
    assert!(
        stderr.contains("larger --max-listed-files"),
        "the message says what to do: {stderr}"
    );
    let totals = &summary(&exported)["totals"];
    assert_eq!(totals["filesBeyondLimit"], 399_900, "{totals}");
    assert_eq!(totals["sessionsComplete"], 0, "{totals}");
    let manifests = verified_manifests(&work.path().join("tree"));
    let manifest = &manifests[&ids[0]];
    assert_eq!(manifest["complete"], false);
    assert_eq!(attachments_of(manifest).len(), 100, "{manifest}");
    let failed = manifest["failed"].as_array().unwrap();
    assert!(
        failed
            .iter()
            .any(|f| f["key"] == "dataset:attachments:beyond-limit"
                && f["reason"].as_str().unwrap().contains("399900")),
        "{failed:?}"
    );
    // The run's own count of files being obtained at once (deterministic, unlike memory).
    let at_once: usize = stderr
        .split("files_obtained_at_once=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of files at once: {stderr}"));
    assert!(
        (1..=4).contains(&at_once),
        "{at_once} files obtained at once, --concurrency 4"
    );
}

/// Item 3, the listing itself: an attachments listing larger than the client's limit on an
/// answer it holds whole (128 MiB) is exported all the same, the cap applied, because the
/// listing is streamed to its file and read back one entry at a time (read whole, it was
/// refused as too large). Its file is what the service sent, byte for byte. Two worker
/// threads: the export reads every dataset at once, and the stub that makes the 140 MB listing
/// must not starve the mock's other answers (on one loaded thread they timed out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item_3_a_listing_larger_than_the_body_limit_is_streamed_not_held() {
    let (mock, work, ids) = one_completed_session().await;
    let listed = 2_000;
    let padding = 70_000;
    let listing: Listing = Arc::new(move || {
        (0..listed)
            .map(|n| (format!("att-{n}"), None, Some("application/pdf".into())))
            .collect()
    });
    let content: Content = Arc::new(|id| {
        (
            format!("%PDF- {id}").into_bytes(),
            None,
            "application/pdf".into(),
        )
    });
    let service = hostile_attachments_padded(&mock, listing, content, padding).await;
    let exported = creditdata(
        work.path(),
        &vars(&mock, &service),
        &[
            "export",
            "--out",
            "tree",
            "--status",
            "completed-by-customer",
            "--max-listed-files",
            "50",
            "--output",
            "json",
        ],
    )
    .await;
    assert_status(&exported, 1);
    let totals = &summary(&exported)["totals"];
    assert_eq!(totals["filesBeyondLimit"], listed - 50, "{totals}");
    let manifests = verified_manifests(&work.path().join("tree"));
    let manifest = &manifests[&ids[0]];
    assert_eq!(attachments_of(manifest).len(), 50, "{manifest}");
    let listing_file = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "dataset:attachments")
        .unwrap_or_else(|| panic!("the listing is exported: {manifest}"));
    let bytes = listing_file["bytes"].as_u64().unwrap();
    assert!(
        bytes > creditdata_client::config::DEFAULT_MAX_RESPONSE_BODY,
        "{bytes} bytes: larger than the body limit"
    );
    let failed = manifest["failed"].as_array().unwrap();
    assert!(
        failed
            .iter()
            .all(|f| f["key"] == "dataset:attachments:beyond-limit"),
        "only the ids beyond the limit failed: {failed:?}"
    );
    // What the service sent, unchanged: the padding it carries is in the file.
    let path = work
        .path()
        .join("tree/sessions")
        .join(&ids[0])
        .join(listing_file["path"].as_str().unwrap());
    let mut file = std::fs::File::open(path).unwrap();
    let mut start = vec![0u8; 1024 * 1024];
    std::io::Read::read_exact(&mut file, &mut start).unwrap();
    assert!(
        start.windows(1000).any(|w| w.iter().all(|b| *b == b'x')),
        "the listing's unknown member is kept"
    );
}

/// Item 3, the disk: a listing larger than `--max-listing-bytes` is not taken (nor left behind
/// half-written); it is that dataset's failure, saying what to do, and the rest is exported.
#[tokio::test]
async fn item_3_a_listing_larger_than_max_listing_bytes_is_the_sessions_failure() {
    let (mock, work, ids) = one_completed_session().await;
    let listing: Listing = Arc::new(|| {
        (0..100)
            .map(|n| (format!("att-{n}"), None, Some("application/pdf".into())))
            .collect()
    });
    let content: Content = Arc::new(|id| {
        (
            format!("%PDF- {id}").into_bytes(),
            None,
            "application/pdf".into(),
        )
    });
    // About 200 KB of attachments listing; the mock's other listings are far smaller.
    let service = hostile_attachments_padded(&mock, listing, content, 2_000).await;
    let mut args = EXPORT_TREE.to_vec();
    args.extend(["--max-listing-bytes", "100000"]);
    let exported = creditdata(work.path(), &vars(&mock, &service), &args).await;
    assert_status(&exported, 1);
    let stderr = String::from_utf8_lossy(&exported.stderr);
    assert!(stderr.contains("larger --max-listing-bytes"), "{stderr}");
    let root = work.path().join("tree");
    assert_no_partial_file(&root);
    let manifests = verified_manifests(&root);
    let manifest = &manifests[&ids[0]];
    assert_eq!(manifest["complete"], false);
    let failed = manifest["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["key"], "dataset:attachments", "{failed:?}");
    assert!(attachments_of(manifest).is_empty(), "{manifest}");
    let session = root.join("sessions").join(&ids[0]);
    assert!(!session.join("datasets/attachments.json").exists());
    // The other listings are taken as usual.
    assert!(session.join("datasets/account-statements.json").is_file());
}

/// Item 8: attachment `scan` served as `x.pdf`, `scan.pdf` and `SCAN.PDF` are three files,
/// each with the SHA-256 its manifest records.
#[tokio::test]
async fn item_8_two_files_never_share_a_name() {
    let (mock, work, ids) = one_completed_session().await;
    let listing: Listing = Arc::new(|| {
        vec![
            (
                "scan".into(),
                Some("x.pdf".into()),
                Some("application/pdf".into()),
            ),
            ("scan.pdf".into(), None, None),
            ("SCAN.PDF".into(), None, None),
        ]
    });
    let content: Content = Arc::new(|id| match id {
        "scan" => (
            b"first".to_vec(),
            Some("x.pdf".into()),
            "application/pdf".into(),
        ),
        other => (
            format!("not the first: {other}").into_bytes(),
            None,
            "application/octet-stream".into(),
        ),
    });
    let service = hostile_attachments(&mock, listing, content).await;
    let exported = creditdata(work.path(), &vars(&mock, &service), &EXPORT_TREE).await;
    assert_status(&exported, 0);
    let root = work.path().join("tree");
    let manifests = verified_manifests(&root);
    let paths = attachments_of(&manifests[&ids[0]]);
    assert_eq!(paths.len(), 3, "{paths:?}");
    let folded: std::collections::HashSet<String> =
        paths.iter().map(|p| p.to_lowercase()).collect();
    assert_eq!(folded.len(), 3, "names differ only by case: {paths:?}");
    let on_disk = std::fs::read_dir(root.join("sessions").join(&ids[0]).join("attachments"))
        .unwrap()
        .count();
    assert_eq!(on_disk, 3, "one file per attachment");
    assert!(
        paths.iter().any(|p| p == "attachments/scan.pdf"),
        "the first keeps its plain name: {paths:?}"
    );
}

/// A service on 127.0.0.1 that is the mock, but holds every request until `release` turns
/// `true`; `arrived` turns `true` at the first one.
#[cfg(unix)]
async fn gate(
    mock: &MockServer,
) -> (
    String,
    tokio::sync::watch::Receiver<bool>,
    tokio::sync::watch::Sender<bool>,
) {
    use tokio::sync::watch;

    let upstream = mock.base_url().trim_end_matches('/').to_string();
    let (arrived, arrived_rx) = watch::channel(false);
    let (release, release_rx) = watch::channel(false);
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |request: Request| {
        let (http, upstream, arrived, mut release) = (
            http.clone(),
            upstream.clone(),
            arrived.clone(),
            release_rx.clone(),
        );
        async move {
            arrived.send_replace(true);
            let _ = release.wait_for(|go| *go).await;
            relayed(forward(&http, &upstream, request).await).await
        }
    });
    (serve(app).await, arrived_rx, release)
}

/// Item 7: while one export runs, a second into the same directory is refused with a clear
/// message; a lock file left behind (empty, or naming a process long gone) blocks nothing.
#[cfg(unix)]
#[tokio::test]
async fn item_7_one_export_per_directory_really() {
    let (mock, work, _) = one_completed_session().await;
    let args = EXPORT_TREE;
    let root = work.path().join("tree");
    let lock = root.join(".creditdata-export.lock");

    // The first export has taken the directory once its first request reaches the service,
    // which holds it there.
    let (held, mut arrived, release) = gate(&mock).await;
    let first = crate::common::command(work.path(), &vars(&mock, &held), &args)
        .spawn()
        .unwrap();
    arrived.wait_for(|arrived| *arrived).await.unwrap();
    let second = creditdata(work.path(), &vars(&mock, mock.base_url()), &args).await;
    assert_status(&second, 2);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("another export") && stderr.contains("wait for it to end"),
        "{stderr}"
    );
    // Nor when its lock file is gone meanwhile (a cleanup, or an export that no longer held it
    // removing it): the lock is not the file.
    std::fs::remove_file(&lock).unwrap();
    let third = creditdata(work.path(), &vars(&mock, mock.base_url()), &args).await;
    assert_status(&third, 2);
    release.send_replace(true);
    let first = first.wait_with_output().await.unwrap();
    assert_status(&first, 0);
    verified_manifests(&root);

    // What an ended export leaves, an empty file or one naming a process that is gone, is not
    // a lock.
    for left in ["", "4294967295\n"] {
        std::fs::write(&lock, left).unwrap();
        let again = creditdata(work.path(), &vars(&mock, mock.base_url()), &args).await;
        assert_status(&again, 0);
    }

    // A lock held by another process (here this test, through the operating system) refuses.
    let holder = std::fs::File::open(&root).unwrap();
    rustix::fs::flock(
        &holder,
        rustix::fs::FlockOperation::NonBlockingLockExclusive,
    )
    .unwrap();
    let refused = creditdata(work.path(), &vars(&mock, mock.base_url()), &args).await;
    assert_status(&refused, 2);
    drop(holder);
    let taken = creditdata(work.path(), &vars(&mock, mock.base_url()), &args).await;
    assert_status(&taken, 0);
    verified_manifests(&root);
}

/// Every file below `dir`, following nothing.
#[cfg(unix)]
fn anything_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect()
}

/// Item 6: a link at `OUT/sessions/ID`, or one level below, is refused and nothing is written
/// where it points; a directory others can write is refused.
#[cfg(unix)]
#[tokio::test]
async fn item_6_export_writes_only_inside_its_tree() {
    use std::os::unix::fs::{PermissionsExt, symlink};

    let (mock, work, ids) = one_completed_session().await;
    let vars = vars(&mock, mock.base_url());
    let args = EXPORT_TREE;
    let root = work.path().join("tree");
    let sessions = root.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let elsewhere = work.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();

    // The session's directory is a link to elsewhere.
    symlink(&elsewhere, sessions.join(&ids[0])).unwrap();
    let linked = creditdata(work.path(), &vars, &args).await;
    assert_status(&linked, 1);
    let stderr = String::from_utf8_lossy(&linked.stderr);
    assert!(stderr.contains("never through links"), "{stderr}");
    assert!(
        anything_in(&elsewhere).is_empty(),
        "written through the link"
    );

    // One level below: the session's attachments.
    std::fs::remove_file(sessions.join(&ids[0])).unwrap();
    std::fs::create_dir(sessions.join(&ids[0])).unwrap();
    symlink(&elsewhere, sessions.join(&ids[0]).join("attachments")).unwrap();
    let below = creditdata(work.path(), &vars, &args).await;
    assert_status(&below, 1);
    let stderr = String::from_utf8_lossy(&below.stderr);
    assert!(stderr.contains("never through links"), "{stderr}");
    assert!(
        anything_in(&elsewhere).is_empty(),
        "written through the link"
    );

    // A tree others can write into.
    std::fs::remove_file(sessions.join(&ids[0]).join("attachments")).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let shared = creditdata(work.path(), &vars, &args).await;
    assert_status(&shared, 2);
    let stderr = String::from_utf8_lossy(&shared.stderr);
    assert!(stderr.contains("others can write"), "{stderr}");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();

    let clean = creditdata(work.path(), &vars, &args).await;
    assert_status(&clean, 0);
    verified_manifests(&root);
    assert!(anything_in(&elsewhere).is_empty());
}

/// Item 6: a FIFO where a verified file was makes the rerun say so and fetch the file again,
/// never wait on the FIFO (a watchdog fails the test instead of hanging).
#[cfg(unix)]
#[tokio::test]
async fn item_6_verify_reports_a_fifo_and_does_not_block() {
    let (mock, work, ids) = one_completed_session().await;
    let vars = vars(&mock, mock.base_url());
    let args = EXPORT_TREE;
    let root = work.path().join("tree");
    assert_status(&creditdata(work.path(), &vars, &args).await, 0);
    let report = root.join("sessions").join(&ids[0]).join("report.pdf");
    std::fs::remove_file(&report).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &report,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();

    let rerun = tokio::time::timeout(
        std::time::Duration::from_secs(300),
        creditdata(work.path(), &vars, &args),
    )
    .await
    .expect("the rerun blocked on the FIFO");
    assert_status(&rerun, 0);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(stderr.contains("not a regular file"), "{stderr}");
    assert!(std::fs::metadata(&report).unwrap().is_file());
    verified_manifests(&root);
}

/// The peak resident memory of a running command, read from `/proc` until it ends (or
/// `watchdog` passes; then it is killed): (peak KiB, exit status if it ended).
#[cfg(target_os = "linux")]
async fn peak_rss(
    mut child: tokio::process::Child,
    watchdog: std::time::Duration,
) -> (u64, Option<i32>) {
    let pid = child.id().unwrap();
    let status_file = format!("/proc/{pid}/status");
    let mut peak = 0;
    let deadline = tokio::time::Instant::now() + watchdog;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file)
            && let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: u64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            peak = peak.max(kib);
        }
        tokio::select! {
            status = child.wait() => return (peak, status.unwrap().code()),
            () = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill().await;
            return (peak, None);
        }
    }
}

/// Item 3's benchmark (BENCHMARKS.md, "Export against a listing of 400,000 ids"): the export's
/// peak RSS against one session listing 400,000 attachments, with the default settings. Prints
/// the numbers; run it against an older `creditdata` to compare (it is killed after
/// `EXPORT_MEMORY_WATCHDOG_SECONDS`, default 120, if it has not ended).
#[cfg(target_os = "linux")]
#[tokio::test]
#[ignore = "a benchmark: cargo test -p creditdata-cli --test it item_3_peak -- --ignored --nocapture"]
async fn item_3_peak_memory_against_400000_ids() {
    let (mock, work, _) = one_completed_session().await;
    // `EXPORT_MEMORY_IDS` sets another length, for comparison.
    let ids: usize = std::env::var("EXPORT_MEMORY_IDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400_000);
    let listing: Listing = Arc::new(move || {
        (0..ids)
            .map(|n| (format!("att-{n}"), None, Some("application/pdf".into())))
            .collect()
    });
    let content: Content = Arc::new(|id| {
        (
            format!("%PDF- {id}").into_bytes(),
            None,
            "application/pdf".into(),
        )
    });
    let service = hostile_attachments(&mock, listing, content).await;
    let watchdog = std::env::var("EXPORT_MEMORY_WATCHDOG_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let started = std::time::Instant::now();
    let child = crate::common::command(work.path(), &vars(&mock, &service), &EXPORT_TREE)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (peak, status) = peak_rss(child, std::time::Duration::from_secs(watchdog)).await;
    let attachments = std::fs::read_dir(work.path().join("tree/sessions"))
        .unwrap()
        .filter_map(|session| std::fs::read_dir(session.unwrap().path().join("attachments")).ok())
        .map(|files| files.count())
        .sum::<usize>();
    println!(
        "{ids} ids: peak RSS {} MiB, exit {status:?}, {attachments} attachment files written, \
         {:.0} s",
        peak / 1024,
        started.elapsed().as_secs_f64()
    );
    assert!(status.is_some(), "the export ends");
}

/// What a test serves in place of the mock's answer, by the path below the session
/// (`attachments`, `source-files`, `identity-verifications/ID/images`), given the mock's own
/// answer; `None` passes the mock's on.
type Replaced = Arc<dyn Fn(&str, &[u8]) -> Option<Vec<u8>> + Send + Sync>;

/// A service on 127.0.0.1 that is the mock but for the answers `replaced` gives, and a small
/// PDF for any attachment's content.
async fn replacing(mock: &MockServer, replaced: Replaced) -> String {
    let upstream = mock.base_url().trim_end_matches('/').to_string();
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |request: Request| {
        let (http, upstream, replaced) = (http.clone(), upstream.clone(), replaced.clone());
        async move {
            let path = request.uri().path().to_string();
            let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            if let ["v1", "sessions", _, "attachments", _, "content"] = parts.as_slice() {
                return Response::builder()
                    .header("content-type", "application/pdf")
                    .body(Body::from("%PDF- small"))
                    .unwrap();
            }
            let below = parts
                .get(3..)
                .map(|rest| rest.join("/"))
                .unwrap_or_default();
            let answer = forward(&http, &upstream, request).await;
            let status = answer.status();
            let body = answer.bytes().await.unwrap().to_vec();
            let body = if status.is_success() {
                replaced(&below, &body).unwrap_or(body)
            } else {
                body
            };
            Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Body::from(body))
                .unwrap()
        }
    });
    serve(app).await
}

/// Issue 27 item 4: every listed entry ends exported, failed (named, with why) or skipped with
/// a reason. Entries whose id cannot be used (not text, missing, too long, a source file's that
/// is not a UUID) make the session not complete (exit 1), named by position and never quoted;
/// an id listed twice is exported once and the second entry is skipped, saying so.
#[tokio::test]
async fn issue_27_item_4_no_listed_entry_is_dropped_without_a_word() {
    let (mock, work, ids) = one_completed_session().await;
    let long = "L".repeat(300);
    let attachments = serde_json::to_vec(&json!({"attachments": [
        {"id": "ok-1", "mimeType": "application/pdf"},
        {"id": 42, "fileName": "Jane Doe.pdf"},
        {"fileName": "Jane Doe.pdf"},
        {"id": long},
        {"id": "ok-1", "mimeType": "application/pdf"},
    ]}))
    .unwrap();
    let service = replacing(
        &mock,
        Arc::new(move |below, mock_answer| match below {
            "attachments" => Some(attachments.clone()),
            "source-files" => {
                // The mock's own source files, and one whose id is not a UUID.
                let mut listed: Value = serde_json::from_slice(mock_answer).unwrap();
                let extra = json!({"id": "Jane-Doe-2024", "type": "XML"});
                match listed.as_array_mut() {
                    Some(files) => files.push(extra),
                    None => listed = json!([extra]),
                }
                Some(serde_json::to_vec(&listed).unwrap())
            }
            _ => None,
        }),
    )
    .await;
    let exported = creditdata(work.path(), &vars(&mock, &service), &EXPORT_TREE).await;
    assert_status(&exported, 1);
    let manifests = verified_manifests(&work.path().join("tree"));
    let manifest = &manifests[&ids[0]];
    assert_eq!(manifest["complete"], false, "{manifest}");
    let failed = manifest["failed"].as_array().unwrap();
    let reason = |key: &str| {
        failed
            .iter()
            .find(|f| f["key"] == key)
            .and_then(|f| f["reason"].as_str())
            .unwrap_or_else(|| panic!("no failure {key}: {failed:?}"))
            .to_string()
    };
    let attachments = reason("dataset:attachments:unusable-entries");
    for said in [
        "3 listed entries cannot be exported",
        "entry 1 has an id that is not text",
        "entry 2 has no id",
        "entry 3 has an id longer than 256 bytes",
    ] {
        assert!(attachments.contains(said), "{attachments}");
    }
    let source_files = reason("dataset:source-files:unusable-entries");
    assert!(
        source_files.contains("has an id that is not a UUID"),
        "{source_files}"
    );
    for reason in [&attachments, &source_files] {
        assert!(
            !reason.contains("Jane") && !reason.contains("LLL"),
            "{reason}"
        );
    }
    // The usable entry is exported, once; its repetition is skipped with the reason.
    assert_eq!(
        attachments_of(manifest),
        ["attachments/ok-1.pdf"],
        "{manifest}"
    );
    let skipped = manifest["skipped"].as_array().unwrap();
    let again = skipped
        .iter()
        .find(|s| s["key"] == "dataset:attachments:entry:4")
        .unwrap_or_else(|| panic!("{skipped:?}"));
    assert!(
        again["reason"]
            .as_str()
            .unwrap()
            .contains("attachments/ok-1.pdf"),
        "{again}"
    );
    let stderr = String::from_utf8_lossy(&exported.stderr);
    assert!(stderr.contains("unusable-entries"), "{stderr}");
}

/// Issue 27 item 3: an identity verification's images are a listing below a listing, streamed
/// to `images.json` like the others and bounded by `--max-listing-bytes`: a larger one is that
/// file's failure (not fetched whole and rendered again), and the rest is exported.
#[tokio::test]
async fn issue_27_item_3_images_listings_are_bounded_by_max_listing_bytes() {
    let (mock, work, ids) = one_completed_session().await;
    let service = replacing(
        &mock,
        Arc::new(|below, mock_answer| {
            if !below.ends_with("/images") {
                return None;
            }
            let mut images: Value = serde_json::from_slice(mock_answer).unwrap();
            images["padding"] = json!("x".repeat(200_000));
            Some(serde_json::to_vec(&images).unwrap())
        }),
    )
    .await;
    let mut args = EXPORT_TREE.to_vec();
    args.extend(["--max-listing-bytes", "100000"]);
    let exported = creditdata(work.path(), &vars(&mock, &service), &args).await;
    assert_status(&exported, 1);
    let root = work.path().join("tree");
    assert_no_partial_file(&root);
    let manifests = verified_manifests(&root);
    let manifest = &manifests[&ids[0]];
    assert_eq!(manifest["complete"], false);
    let failed = manifest["failed"].as_array().unwrap();
    assert!(!failed.is_empty(), "{manifest}");
    for failure in failed {
        let key = failure["key"].as_str().unwrap();
        assert!(key.starts_with("identity-images:"), "{failure}");
        let reason = failure["reason"].as_str().unwrap();
        assert!(
            reason.contains("larger than --max-listing-bytes 100000"),
            "{reason}"
        );
    }
    // Nothing of an images listing refused is kept; the session's other files are.
    let files = manifest["files"].as_array().unwrap();
    assert!(
        !files
            .iter()
            .any(|f| f["key"].as_str().unwrap().starts_with("identity-images:"))
    );
    assert!(
        files
            .iter()
            .any(|f| f["key"] == "dataset:identity-verifications")
    );
}
