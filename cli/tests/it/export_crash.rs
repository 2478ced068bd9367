//! An export killed with `kill -9` part-way never leaves a false "complete": at every instant a
//! session manifest that says complete describes the files on disk, and so does the index.
//! The re-export of a session whose record changed is killed after a given number of its files
//! were replaced (watched on disk); a request held open without an answer (the PDF report's)
//! keeps the export from finishing first, so the kill points do not depend on timing.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::{command, control};
use crate::export::{
    assert_status, completed_sessions, creditdata, forward, mock_with, relayed, serve, vars,
};

/// The mock behind a proxy that holds every PDF report download open without an answer.
async fn report_never_answers(upstream: String) -> String {
    let http = reqwest::Client::new();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let (http, upstream) = (http.clone(), upstream.clone());
        async move {
            if request.uri().path().ends_with("/pdf-report") {
                std::future::pending::<()>().await;
            }
            relayed(forward(&http, &upstream, request).await).await
        }
    });
    serve(app).await
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Why `manifest` (of the session in `dir`), if it says complete, does not describe the files
/// on disk.
fn false_claim(dir: &Path, manifest: &Value) -> Option<String> {
    if manifest["complete"] != true {
        return None;
    }
    for file in manifest["files"].as_array()? {
        let path = dir.join(file["path"].as_str()?);
        let Ok(bytes) = std::fs::read(&path) else {
            return Some(format!("{} is listed but missing", path.display()));
        };
        if file["bytes"] != bytes.len() as u64 || file["sha256"] != sha256_hex(&bytes) {
            return Some(format!("{} does not match its SHA-256", path.display()));
        }
    }
    None
}

/// Every manifest and index line that says complete describes the files on disk.
fn assert_no_false_claim(root: &Path, when: &str) {
    for entry in std::fs::read_dir(root.join("sessions")).unwrap() {
        let dir = entry.unwrap().path();
        let path = dir.join("manifest.json");
        if path.exists()
            && let Some(why) = false_claim(&dir, &read_json(&path))
        {
            panic!("{when}: {} says complete, but {why}", path.display());
        }
    }
    let index = root.join("manifest.json");
    if !index.exists() {
        return;
    }
    let index = read_json(&index);
    for line in index["sessions"].as_array().into_iter().flatten() {
        if line["complete"] != true {
            continue;
        }
        let manifest_path = root.join(line["manifest"].as_str().unwrap());
        let manifest = read_json(&manifest_path);
        assert_eq!(
            manifest["complete"], true,
            "{when}: the index says session {} is complete, its manifest does not",
            line["id"]
        );
        if let Some(why) = false_claim(manifest_path.parent().unwrap(), &manifest) {
            panic!(
                "{when}: the index says session {} is complete, but {why}",
                line["id"]
            );
        }
    }
}

/// Each file of the session directory but its manifest, with its inode.
fn inodes(dir: &Path) -> BTreeMap<PathBuf, u64> {
    crate::export::files_under(dir)
        .into_iter()
        .filter(|path| path != Path::new("manifest.json"))
        .filter_map(|path| Some((path.clone(), std::fs::metadata(dir.join(&path)).ok()?.ino())))
        .collect()
}

#[tokio::test]
async fn a_killed_re_export_never_leaves_a_false_complete() {
    let mock = mock_with(creditdata_mock::realism::Realism::new()).await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let ids = completed_sessions(&mock, dir, 1).await;
    let id = &ids[0];
    let direct = vars(&mock, mock.base_url());
    let proxy = report_never_answers(mock.base_url().trim_end_matches('/').to_string()).await;
    let held = vars(&mock, &proxy);
    let args = [
        "export",
        "--out",
        "tree",
        "--email",
        "subject0@example.com",
        "--output",
        "json",
    ];
    let root = dir.join("tree");
    let session_dir = root.join("sessions").join(id);
    let first = creditdata(dir, &direct, &args).await;
    assert_status(&first, 0);
    assert_no_false_claim(&root, "after the first export");

    // Killed after the first file is replaced, after a few, after most.
    for (country, replaced) in [("DEU", 1), ("FIN", 4), ("SWE", 9)] {
        // The session's record changes (another country, which the customer accepts), so
        // everything of it is exported again.
        let updated = creditdata(
            dir,
            &direct,
            &[
                "sessions",
                "update",
                id,
                "--query",
                &format!("{country}:SCORE"),
            ],
        )
        .await;
        assert_status(&updated, 0);
        control(&mock, id, "complete").await;
        let before = inodes(&session_dir);
        assert!(
            before.len() > replaced,
            "{} files: {before:?}",
            before.len()
        );

        let mut child = command(dir, &held, &args).spawn().unwrap();
        let mut seen = 0;
        for _ in 0..6000 {
            let now = inodes(&session_dir);
            seen = before
                .iter()
                .filter(|(path, inode)| now.get(*path).is_some_and(|now| now != *inode))
                .count();
            if seen >= replaced {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the export cannot finish while the report is held"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            seen >= replaced,
            "only {seen} of {replaced} files were replaced"
        );
        child.start_kill().unwrap(); // SIGKILL
        let status = child.wait().await.unwrap();
        assert_eq!(status.code(), None, "killed by a signal");
        assert_no_false_claim(&root, &format!("killed after {seen} files of {country}"));

        // The next run completes, and its manifests and index are true.
        let rerun = creditdata(dir, &direct, &args).await;
        assert_status(&rerun, 0);
        assert_no_false_claim(&root, "after the rerun");
        assert_eq!(
            read_json(&session_dir.join("manifest.json"))["complete"],
            true
        );
    }
}
