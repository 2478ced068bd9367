//! Whether a session's data has arrived, against the mock with a provider delay (loopback
//! only): `sessions wait` returns only once every provider has answered and names what is
//! pending at its deadline; `datasets all` exits 8 while providers are pending; an export taken
//! then is partial, and a rerun after they answered holds the full data, byte for byte what the
//! service serves (every dataset and listing as the service sent it, which the command that
//! reads it prints as the same JSON; every other file as the command that reads it writes it).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use creditdata_client::session_datasets::Dataset;
use creditdata_mock::{MockConfig, MockServer, TokenOptions};
use serde_json::Value;

use crate::common::{command, control, every_provider_answered};
use crate::export::{assert_status, creditdata, file_of, summary, vars, verified_manifests};

/// Providers that never answer by themselves (within a test), and never fail by themselves:
/// they answer when the test says so.
async fn slow_providers_mock() -> MockServer {
    MockServer::start(MockConfig {
        provider_delay: Duration::from_secs(24 * 3600),
        provider_error_one_in: 0,
        ..MockConfig::default()
    })
    .await
    .expect("the mock starts")
}

/// Makes `provider` answer `status` for session `id` (the mock's control endpoint).
async fn answer(mock: &MockServer, id: &str, provider: &str, status: &str) {
    let url = format!(
        "{}/_mock/sessions/{id}/sources/{provider}/status",
        mock.base_url()
    );
    let response = reqwest::Client::new()
        .put(&url)
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .json(&serde_json::json!({ "status": status }))
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The customer has completed a session asking for every package of GBR; returns its id.
async fn completed_session(mock: &MockServer, dir: &Path) -> String {
    let vars = vars(mock, mock.base_url());
    let created = creditdata(
        dir,
        &vars,
        &[
            "sessions",
            "create",
            "--email",
            "jane.doe@example.com",
            "--query",
            "GBR:credit-history,score,bank-account-categorization,identification",
        ],
    )
    .await;
    assert_status(&created, 0);
    let id = serde_json::from_slice::<Value>(&created.stdout).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    control(mock, &id, "complete").await;
    id
}

fn assert_every_provider_answered(output: &Output) {
    if let Err(said) = every_provider_answered(output.status.code(), &text(&output.stderr)) {
        panic!("{said}\nstdout: {}", text(&output.stdout));
    }
}

/// What the service serves now for one file of the export (its manifest key), read directly
/// with the command that reads it.
async fn served_now(dir: &Path, vars: &[(&'static str, String)], id: &str, key: &str) -> Vec<u8> {
    let (kind, rest) = key.split_once(':').unwrap_or((key, ""));
    let parts: Vec<&str> = rest.split(':').collect();
    let mut args: Vec<&str> = match kind {
        "dataset" => vec!["datasets", "get", id, rest],
        "identity-images" => vec!["datasets", "images", id, rest],
        "report" => vec!["download", "pdf", id],
        "transactions-excel" => vec!["download", "transactions-excel", id],
        "statement-excel" => vec!["download", "statement-excel", id, rest],
        "statement-tsv" => vec!["download", "statement-tsv", id, rest],
        "attachment" => vec!["download", "attachment", id, rest],
        "image" => vec!["download", "image", id, parts[0], parts[1]],
        "source-file" => vec!["download", "source-file", id, rest],
        other => panic!("no direct read for {other}"),
    };
    if args[0] == "download" {
        args.extend(["-o", "-"]);
    } else {
        args.extend(["--output", "json"]);
    }
    let read = creditdata(dir, vars, &args).await;
    assert_status(&read, 0);
    let mut bytes = read.stdout;
    if args[0] != "download" && bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    bytes
}

/// Whether the export writes this manifest key's file as the service sent it (streamed: an
/// answer's size never grows its memory): every dataset of the client's list.
fn is_dataset(key: &str) -> bool {
    Dataset::ALL
        .into_iter()
        .any(|dataset| key == format!("dataset:{}", dataset.name()))
}

/// What the service sends for a dataset (`dataset:NAME`) or a verification's images
/// (`identity-images:VID`), as it sends it: read with a plain HTTP client.
async fn served_as_sent(mock: &MockServer, id: &str, key: &str) -> Vec<u8> {
    let dataset = match key.strip_prefix("identity-images:") {
        Some(verification) => format!("identity-verifications/{verification}/images"),
        None => key.trim_start_matches("dataset:").to_string(),
    };
    let token = mock.mint_token(&TokenOptions::default()).unwrap();
    let url = format!(
        "{}/v1/sessions/{id}/{dataset}",
        mock.base_url().trim_end_matches('/')
    );
    let answer = reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .header("api-version", "1.0")
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{key}: {}", answer.status());
    answer.bytes().await.unwrap().to_vec()
}

/// What the service sends for a file whose manifest key is its operation's id and the ids it
/// took (`GetSourceFile:ID`: an operation the export reads from the description, with no
/// command of its own), read with a plain HTTP client; `None` for any other key.
async fn served_by_operation(mock: &MockServer, id: &str, key: &str) -> Option<Vec<u8>> {
    let (operation, ids) = key.split_once(':')?;
    let operation = creditdata_client::operations::ALL
        .iter()
        .find(|meta| meta.id == operation)?;
    let mut values = std::iter::once(id).chain(ids.split(':'));
    let path: Vec<String> = operation
        .path
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') && segment.ends_with('}') {
                values.next().expect("a value per parameter").to_string()
            } else {
                segment.to_string()
            }
        })
        .collect();
    let token = mock.mint_token(&TokenOptions::default()).unwrap();
    let url = format!(
        "{}{}",
        mock.base_url().trim_end_matches('/'),
        path.join("/")
    );
    let version = creditdata_client::operations::api_version(operation.id).unwrap_or("1.0");
    let answer = reqwest::Client::new()
        .get(url)
        .bearer_auth(token)
        .header("api-version", version)
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_success(), "{key}: {}", answer.status());
    Some(answer.bytes().await.unwrap().to_vec())
}

/// Every sheet of an Excel file: its name and its cells.
fn sheets(bytes: Vec<u8>) -> Vec<(String, Vec<Vec<calamine::Data>>)> {
    use calamine::Reader as _;
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(bytes)).expect("xlsx opens");
    workbook
        .sheet_names()
        .into_iter()
        .map(|name| {
            let range = workbook.worksheet_range(&name).expect("a sheet");
            let rows = range.rows().map(<[calamine::Data]>::to_vec).collect();
            (name, rows)
        })
        .collect()
}

/// Whether two PDF reports are the same but for the minute each says it was generated at
/// ("report generated 2026-11-27 10:00 UTC", written as plain text): a read a minute later
/// differs there, and only there, in digits.
fn same_report(a: &[u8], b: &[u8]) -> bool {
    const STAMP: &[u8] = b"report generated ";
    let Some(at) = a.windows(STAMP.len()).position(|w| w == STAMP) else {
        return a == b;
    };
    let stamp = at + STAMP.len()..at + STAMP.len() + 48;
    a.len() == b.len()
        && a.iter().zip(b).enumerate().all(|(i, (x, y))| {
            x == y || (stamp.contains(&i) && x.is_ascii_digit() && y.is_ascii_digit())
        })
}

#[tokio::test]
async fn nothing_pending_is_presented_as_complete_and_a_rerun_catches_up() {
    let mock = slow_providers_mock().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let vars = vars(&mock, mock.base_url());
    let id = completed_session(&mock, dir).await;

    // `datasets all` prints what there is, and says it is partial: exit 8, naming the
    // providers still awaited.
    let all = creditdata(dir, &vars, &["datasets", "all", &id, "--output", "json"]).await;
    assert_status(&all, 8);
    let printed: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert!(
        printed["scores"]["scores"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "no scores yet: {printed}"
    );
    let stderr = text(&all.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("pending: scores: provider ")
                && l.ends_with("(GBR) WAITING_FOR_PROVIDER")),
        "{stderr}"
    );

    // `sessions wait` waits for the data by default: at its deadline it exits 6 and names what
    // is pending. `--until customer` is satisfied at once.
    let timed_out = creditdata(
        dir,
        &vars,
        &[
            "sessions",
            "wait",
            &id,
            "--timeout",
            "300ms",
            "--interval",
            "100ms",
        ],
    )
    .await;
    assert_status(&timed_out, 6);
    let stderr = text(&timed_out.stderr);
    assert!(stderr.contains("pending: scores: provider "), "{stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
    let customer = creditdata(
        dir,
        &vars,
        &[
            "sessions", "wait", &id, "--until", "customer", "--output", "json",
        ],
    )
    .await;
    assert_status(&customer, 0);

    // An export now is partial: exit 8, the index and the manifest say so, dataset by dataset.
    let args = ["export", "--out", "tree", "--output", "json"];
    let root = dir.join("tree");
    let first = creditdata(dir, &vars, &args).await;
    assert_status(&first, 8);
    let first = summary(&first);
    assert_eq!(first["totals"]["sessionsPartial"], 1, "{first}");
    assert_eq!(first["totals"]["sessionsComplete"], 0, "{first}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let line = &index["sessions"][0];
    assert_eq!(line["state"], "partial", "{index}");
    assert_eq!(line["readiness"], "pending", "{index}");
    assert_eq!(line["complete"], false, "{index}");
    let manifests = verified_manifests(&root);
    let manifest = &manifests[&id];
    assert_eq!(manifest["complete"], false, "{manifest}");
    assert_eq!(manifest["readiness"], "pending", "{manifest}");
    let scores = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "dataset:scores")
        .unwrap();
    assert_eq!(scores["readiness"]["state"], "pending", "{scores}");
    let pending: BTreeSet<String> = manifest["pendingProviders"]
        .as_array()
        .expect("the pending providers are listed")
        .iter()
        // A dataset-level status (the categorization summary's) names no provider.
        .filter_map(|p| p["provider"].as_str().map(str::to_string))
        .collect();
    assert!(!pending.is_empty(), "{manifest}");

    // The providers answer while a wait is under way: it returns once they all have.
    let waiter = command(
        dir,
        &vars,
        &[
            "sessions",
            "wait",
            &id,
            "--timeout",
            "5m",
            "--interval",
            "100ms",
            "--max-interval",
            "200ms",
            "--output",
            "json",
        ],
    )
    .spawn()
    .unwrap();
    for provider in &pending {
        answer(&mock, &id, provider, "SUCCESS").await;
    }
    let waited = waiter.wait_with_output().await.unwrap();
    assert_every_provider_answered(&waited);
    let session: Value = serde_json::from_slice(&waited.stdout).unwrap();
    assert_eq!(session["id"], id.as_str());
    assert_every_provider_answered(
        &creditdata(dir, &vars, &["datasets", "all", &id, "--output", "json"]).await,
    );

    // The rerun reads the session again: complete, every file what the service serves now.
    let second = creditdata(dir, &vars, &args).await;
    assert_status(&second, 0);
    let second = summary(&second);
    assert_eq!(second["totals"]["sessionsComplete"], 1, "{second}");
    assert_eq!(second["totals"]["sessionsPartial"], 0, "{second}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(index["sessions"][0]["state"], "complete", "{index}");
    let manifests = verified_manifests(&root);
    let manifest = &manifests[&id];
    assert_eq!(manifest["complete"], true, "{manifest}");
    assert!(manifest.get("pendingProviders").is_none(), "{manifest}");
    let session_dir = root.join("sessions").join(&id);
    let scores: Value = serde_json::from_slice(
        &std::fs::read(session_dir.join(file_of(manifest, "dataset:scores"))).unwrap(),
    )
    .unwrap();
    assert!(
        !scores["scores"].as_array().unwrap().is_empty(),
        "the scores have arrived: {scores}"
    );
    let mut compared = 0;
    for file in manifest["files"].as_array().unwrap() {
        let key = file["key"].as_str().unwrap();
        if key == "session" {
            continue;
        }
        let archived = std::fs::read(session_dir.join(file["path"].as_str().unwrap())).unwrap();
        let served = if is_dataset(key) {
            // The command that reads it prints the same document (re-indented, escaped).
            let printed: Value =
                serde_json::from_slice(&served_now(dir, &vars, &id, key).await).unwrap();
            let stored: Value = serde_json::from_slice(&archived).unwrap();
            assert!(
                printed == stored,
                "{key}: `datasets get` prints another document"
            );
            served_as_sent(&mock, &id, key).await
        } else if key.starts_with("identity-images:") {
            // The verification's images as the service sent them; `datasets images` prints
            // the same document.
            let printed: Value =
                serde_json::from_slice(&served_now(dir, &vars, &id, key).await).unwrap();
            let stored: Value = serde_json::from_slice(&archived).unwrap();
            assert!(
                printed == stored,
                "{key}: `datasets images` prints another document"
            );
            served_as_sent(&mock, &id, key).await
        } else if let Some(served) = served_by_operation(&mock, &id, key).await {
            served
        } else {
            served_now(dir, &vars, &id, key).await
        };
        if file["path"].as_str().unwrap().ends_with(".xlsx") {
            // Each Excel file is stamped with the moment it was made (docProps/core.xml): the
            // same data is never the same bytes twice, so its sheets are compared cell by cell.
            assert_eq!(sheets(archived), sheets(served), "{key}");
        } else if key == "report" {
            assert!(
                same_report(&archived, &served),
                "the report differs from what is served"
            );
        } else {
            assert!(
                archived == served,
                "{key}: the archive differs from what is served"
            );
        }
        compared += 1;
    }
    assert!(
        manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["key"].as_str().unwrap().starts_with("statement-tsv:")),
        "the statements listed once the bank answered are exported: {manifest}"
    );
    assert!(compared > 20, "{compared} files compared");

    // Settled: a third run keeps everything.
    let third = creditdata(dir, &vars, &args).await;
    assert_status(&third, 0);
    let third = summary(&third);
    assert_eq!(third["totals"]["filesFetched"], 0, "{third}");
}

#[tokio::test]
async fn a_provider_that_failed_is_named_and_final() {
    let mock = crate::common::mock().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let vars = vars(&mock, mock.base_url());
    let id = completed_session(&mock, dir).await;
    let scores = creditdata(
        dir,
        &vars,
        &["datasets", "get", &id, "scores", "--output", "json"],
    )
    .await;
    assert_status(&scores, 0);
    let scores: Value = serde_json::from_slice(&scores.stdout).unwrap();
    let provider = scores["sources"][0]["sourceId"]
        .as_str()
        .unwrap()
        .to_string();
    answer(&mock, &id, &provider, "ERROR").await;

    let all = creditdata(dir, &vars, &["datasets", "all", &id, "--output", "json"]).await;
    assert_status(&all, 7);
    let stderr = text(&all.stderr);
    let named = format!("failed: scores: provider {provider} (GBR) ERROR");
    assert!(stderr.lines().any(|l| l == named), "{stderr}");
    assert!(!stderr.contains("pending:"), "{stderr}");

    let waited = creditdata(dir, &vars, &["sessions", "wait", &id, "--output", "json"]).await;
    assert_status(&waited, 7);
    assert!(
        text(&waited.stderr).lines().any(|l| l == named),
        "{}",
        text(&waited.stderr)
    );

    // The data is final: the export is complete (exit 0) and records who failed.
    let exported = creditdata(dir, &vars, &["export", "--out", "tree", "--output", "json"]).await;
    assert_status(&exported, 0);
    let exported = summary(&exported);
    assert_eq!(exported["totals"]["sessionsComplete"], 1, "{exported}");
    assert_eq!(
        exported["totals"]["sessionsWithFailedProviders"], 1,
        "{exported}"
    );
    assert!(
        text(
            &creditdata(
                dir,
                &vars,
                &["export", "--out", "again", "--output", "json"]
            )
            .await
            .stderr
        )
        .contains(&format!("failed: {}", &named["failed: ".len()..])),
        "the export names the failed provider"
    );
    let manifests = verified_manifests(&dir.join("tree"));
    let manifest = &manifests[&id];
    assert_eq!(manifest["readiness"], "providers-failed", "{manifest}");
    assert!(
        manifest["failedProviders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["provider"] == provider.as_str() && p["status"] == "ERROR"),
        "{manifest}"
    );
}

#[tokio::test]
async fn an_archive_written_before_readiness_was_recorded_is_read_again() {
    use sha2::{Digest, Sha256};

    let mock = crate::common::mock().await;
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let vars = vars(&mock, mock.base_url());
    let id = completed_session(&mock, dir).await;
    let args = ["export", "--out", "tree", "--output", "json"];
    assert_status(&creditdata(dir, &vars, &args).await, 0);

    // What an older `creditdata` (manifest format 1) kept for good: the scores as they were
    // while the provider was still waiting, in a manifest that calls them complete.
    let session_dir = dir.join("tree/sessions").join(&id);
    let manifest_path = session_dir.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let stale = br#"{"sources":[{"sourceId":"GBR_ALBION_CREDIT","status":"WAITING_FOR_PROVIDER","countryCode":"GBR"}],"scores":[]}"#;
    std::fs::write(session_dir.join("datasets/scores.json"), stale).unwrap();
    let digest: String = Sha256::digest(stale)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let object = manifest.as_object_mut().unwrap();
    object.insert("format".into(), "creditdata-export/1".into());
    object.remove("readiness");
    object.remove("failedProviders");
    for file in object["files"].as_array_mut().unwrap() {
        let file = file.as_object_mut().unwrap();
        file.remove("readiness");
        if file["key"] == "dataset:scores" {
            file.insert("bytes".into(), stale.len().into());
            file.insert("sha256".into(), digest.clone().into());
        }
    }
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();

    let rerun = creditdata(dir, &vars, &args).await;
    assert_status(&rerun, 0);
    let rerun = summary(&rerun);
    assert!(
        rerun["totals"]["filesFetched"].as_u64().unwrap() >= 1,
        "{rerun}"
    );
    let archived = std::fs::read(session_dir.join("datasets/scores.json")).unwrap();
    assert!(
        archived == served_as_sent(&mock, &id, "dataset:scores").await,
        "the stale scores were read again"
    );
    let manifest: Value = serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    assert_eq!(manifest["format"], "creditdata-export/2");
    assert!(
        manifest["readiness"] == "ready" || manifest["readiness"] == "providers-failed",
        "{manifest}"
    );
}

/// `--dataset` names the datasets a decision uses: the exit status of `datasets all` and
/// `sessions wait` is judged on them alone (7 failed, 8 or 6 pending), every dataset is still
/// printed, and what is left out is noted, not judged; `--every-dataset` judges them all.
#[tokio::test]
async fn named_datasets_decide_the_exit_status() {
    let mock = slow_providers_mock().await;
    let dir = tempfile::tempdir().unwrap();
    let vars = vars(&mock, mock.base_url());
    let id = completed_session(&mock, dir.path()).await;
    // The bureau answers, the identity provider fails, everyone else is still waiting.
    answer(&mock, &id, "GBR_ALBION_CREDIT", "SUCCESS").await;
    answer(&mock, &id, "GBR_KESTREL_ID", "ERROR").await;
    let run = |args: Vec<&'static str>| {
        let dir = dir.path().to_path_buf();
        let vars = vars.clone();
        let id = id.clone();
        async move {
            let mut full: Vec<&str> = args;
            let at = full.iter().position(|a| *a == "ID").unwrap();
            full[at] = id.as_str();
            creditdata(&dir, &vars, &full).await
        }
    };

    let scores = run(vec![
        "datasets",
        "all",
        "ID",
        "--dataset",
        "scores",
        "--output",
        "json",
    ])
    .await;
    assert_status(&scores, 0);
    let printed: Value = serde_json::from_slice(&scores.stdout).unwrap();
    assert!(
        printed.get("person-details").is_some(),
        "every dataset is printed: {printed}"
    );
    let stderr = text(&scores.stderr);
    assert!(
        !stderr.contains("pending:") && !stderr.contains("failed:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("not judged: person-details"),
        "what the gate leaves out is named: {stderr}"
    );

    let identity = run(vec!["datasets", "all", "ID", "--dataset", "person-details"]).await;
    assert_status(&identity, 7);
    let stderr = text(&identity.stderr);
    assert!(
        stderr.contains("failed: person-details: provider GBR_KESTREL_ID"),
        "{stderr}"
    );
    assert!(!stderr.contains("pending:"), "{stderr}");

    // Without --dataset: the default gate, which waits for every provider of the session.
    let default = run(vec!["datasets", "all", "ID"]).await;
    assert_status(&default, 8);
    let every = run(vec!["datasets", "all", "ID", "--every-dataset"]).await;
    assert_status(&every, 8);

    let waited = run(vec![
        "sessions",
        "wait",
        "ID",
        "--dataset",
        "scores",
        "--dataset",
        "negative-tradelines",
        "--timeout",
        "60s",
        "--interval",
        "50ms",
    ])
    .await;
    assert_status(&waited, 0);
    let failed = run(vec![
        "sessions",
        "wait",
        "ID",
        "--dataset",
        "person-details",
        "--timeout",
        "60s",
        "--interval",
        "50ms",
    ])
    .await;
    assert_status(&failed, 7);
    let pending = run(vec![
        "sessions",
        "wait",
        "ID",
        "--timeout",
        "1s",
        "--interval",
        "50ms",
    ])
    .await;
    assert_status(&pending, 6);

    // What does not make sense is refused before anything is read.
    let customer = run(vec![
        "sessions",
        "wait",
        "ID",
        "--until",
        "customer",
        "--dataset",
        "scores",
    ])
    .await;
    assert_status(&customer, 2);
    let both = run(vec![
        "datasets",
        "all",
        "ID",
        "--dataset",
        "scores",
        "--every-dataset",
    ])
    .await;
    assert_status(&both, 2);
    let unknown = run(vec![
        "datasets",
        "all",
        "ID",
        "--dataset",
        "no-such-dataset",
    ])
    .await;
    assert_status(&unknown, 2);
}
