//! The export's manifests.
//!
//! - `sessions/ID/manifest.json`, one per session, is the record a rerun trusts: every file of
//!   the session that is complete, with its size and SHA-256. It is small, read once when the
//!   session's turn comes and written once when the session is done (or interrupted), always
//!   atomically. A file on disk that it does not list is fetched again; a listed file whose
//!   size or digest differs (torn, truncated, edited) is fetched again.
//! - Each dataset's entry records what its providers had answered when it was read
//!   ([`DatasetReadiness`]), and the session's manifest what that makes of the session
//!   ([`SessionReadiness`]). A session whose providers had not all given their final answer is
//!   never complete, and a rerun reads it again: only a settled session's datasets and
//!   session-wide files (report, transactions) are kept on the strength of their digest.
//! - `manifest.json` at the top is the run's index: the filters, one line per session the run
//!   went through, and the totals. It is streamed to a temporary file as sessions finish (memory
//!   stays flat however many sessions match) and put in place at the end, also on Ctrl-C.
//!
//! A manifest that says complete is true at every instant, a crash or `kill -9` included. A run
//! replaces files of sessions the last run completed (a session whose record changed, a report
//! made again), so before the first of a session's files is replaced its manifest takes the
//! claim back ([`Previous::retract`]: `complete: false`, `exporting: true`, written
//! atomically), and the new manifest is written last. Likewise the index: when a run starts,
//! the last run's index is replaced by one that says the run is in progress and lists no
//! session (`"inProgress": true`), until the run's own index is put in place at its end.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use creditdata_client::session_datasets::{Dataset, ProviderStatus, Readiness};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::store::{self, Digested, StoreError, Tree};

/// The format of both manifests; a later incompatible layout changes it.
pub const FORMAT: &str = "creditdata-export/2";

/// The formats a rerun reads. Format 1 recorded no readiness: its sessions count as
/// [`SessionReadiness::Unknown`] and are read again (it may have archived pending data as
/// complete), while their downloads named by id are kept when they verify.
const READABLE_FORMATS: [&str; 2] = ["creditdata-export/1", FORMAT];

/// Where a session's manifest is, relative to the session's directory.
pub const SESSION_MANIFEST: &str = "manifest.json";

/// One complete file of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// What the file is, stable across runs: `session`, `dataset:scores`, `report`,
    /// `statement-tsv:ID`, `attachment:ID`, `image:VERIFICATION:IMAGE`, `source-file:ID`... (the
    /// names the export gave before it derived its files); any other file is its operation's id
    /// and the ids it took, `GetSourceFile:ID`, `GetTaxReturnDocument:ID`.
    pub key: String,
    /// Where it is, relative to the session's directory, with `/` separators.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// The operationId whose answer it is (`GetAttachmentContent`), with the ids at the end of
    /// its key; absent for the session record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// For a dataset: what its providers had answered when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness: Option<DatasetReadiness>,
}

impl FileEntry {
    pub fn digest(&self) -> Digested {
        Digested {
            bytes: self.bytes,
            sha256: self.sha256.clone(),
        }
    }
}

/// How far a dataset's providers had got when it was read (the client's
/// [`Readiness`], recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DatasetState {
    /// Every provider answered (or the session did not request some of the data).
    Answered,
    /// Some provider had not answered yet: the file is partial, a rerun reads it again.
    Pending,
    /// Every provider gave its final answer, some without the data (failed or refused).
    Failed,
    /// The dataset's answer does not say (attachments, source files...).
    NotReported,
}

/// A dataset's readiness: its state and each of its providers' statuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasetReadiness {
    pub state: DatasetState,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderEntry>,
}

/// One provider's status for one dataset, as the service sent it, and how the client counts it
/// (`answered`, `pending`, `failed`, `not requested`). Provider ids and countries are not
/// personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderEntry {
    pub dataset: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    pub status: String,
    pub outcome: String,
}

/// What a session's datasets came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SessionReadiness {
    /// Every provider answered.
    Ready,
    /// Every provider gave its final answer; some failed or refused. Rerunning changes
    /// nothing.
    ProvidersFailed,
    /// Some providers had not answered yet: the session is partial.
    Pending,
    /// Not every dataset was read (a read failed, Ctrl-C), or the manifest is of format 1.
    #[default]
    Unknown,
}

impl SessionReadiness {
    /// Whether every provider had given its final answer: the datasets and the session-wide
    /// files will not change.
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            SessionReadiness::Ready | SessionReadiness::ProvidersFailed
        )
    }
}

impl DatasetReadiness {
    /// What `readiness` (the client's, of the session's datasets) says of `dataset`.
    pub fn of(dataset: Dataset, readiness: &Readiness) -> DatasetReadiness {
        let state = if readiness.pending_datasets().contains(&dataset) {
            DatasetState::Pending
        } else if readiness.failed_datasets().contains(&dataset) {
            DatasetState::Failed
        } else if readiness.not_reported.contains(&dataset) {
            DatasetState::NotReported
        } else {
            DatasetState::Answered
        };
        let providers = [
            &readiness.answered,
            &readiness.pending,
            &readiness.failed,
            &readiness.not_requested,
        ]
        .into_iter()
        .flatten()
        .filter(|status| status.dataset == dataset)
        .map(ProviderEntry::from)
        .collect();
        DatasetReadiness { state, providers }
    }
}

impl From<&ProviderStatus> for ProviderEntry {
    fn from(status: &ProviderStatus) -> Self {
        ProviderEntry {
            dataset: status.dataset.name().to_string(),
            provider: status.source_id.clone(),
            country: status.country_code.clone(),
            status: status.status.to_string(),
            outcome: status.outcome().to_string().replace(' ', "-"),
        }
    }
}

/// `scores: provider GB-BUREAU (GBR) WAITING_FOR_PROVIDER`, as the client says it.
impl std::fmt::Display for ProviderEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.dataset)?;
        if let Some(provider) = &self.provider {
            write!(f, "provider {provider} ")?;
        }
        if let Some(country) = &self.country {
            write!(f, "({country}) ")?;
        }
        f.write_str(&self.status)
    }
}

impl SessionReadiness {
    /// What the client's readiness of every dataset makes of the session.
    pub fn of(readiness: &Readiness) -> SessionReadiness {
        if !readiness.is_settled() {
            SessionReadiness::Pending
        } else if !readiness.unreadable.is_empty() {
            SessionReadiness::Unknown
        } else if readiness.is_complete() {
            SessionReadiness::Ready
        } else {
            SessionReadiness::ProvidersFailed
        }
    }
}

/// A file that could not be exported in the last run, and why (the client's message: the
/// operation and the service's status, never the data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedFile {
    pub key: String,
    pub reason: String,
}

/// A file the run left out on purpose (a dataset the service deprecates), and why: a session
/// can be complete without it, but not silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedFile {
    pub key: String,
    pub reason: String,
}

/// `sessions/ID/manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionManifest {
    pub format: String,
    pub session_id: Uuid,
    /// Whether every file of the session is listed in `files` (nothing failed, not
    /// interrupted) and every provider had given its final answer.
    pub complete: bool,
    /// An export of the session was under way when this was written (before it replaced any
    /// file): `complete` is false until that export writes the manifest again. Left after a
    /// crash; the next run reads the session again, keeping what verifies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exporting: bool,
    /// What the session's datasets came to.
    #[serde(default)]
    pub readiness: SessionReadiness,
    /// The providers that had not answered yet (dataset, provider, country, status).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_providers: Vec<ProviderEntry>,
    /// The providers that failed or refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_providers: Vec<ProviderEntry>,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    pub files: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedFile>,
    /// What was left out on purpose (not counted against `complete`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

/// What a rerun takes from the last run's manifest of a session.
#[derive(Debug, Default)]
pub struct Previous {
    /// The files it lists, by key.
    pub entries: HashMap<String, FileEntry>,
    /// What the session's datasets came to then.
    pub readiness: SessionReadiness,
    pub failed_providers: Vec<ProviderEntry>,
    /// The manifest as it is on disk, when it says the session is complete: a claim this run
    /// takes back ([`Previous::retract`]) before it replaces any of the session's files.
    claimed: Option<SessionManifest>,
}

impl Previous {
    /// Takes back the last run's claim that the session is complete, before this run replaces
    /// any of its files: the same manifest, `complete: false` and `exporting: true`, written
    /// atomically (and durably, before any file is). Nothing to do when it made no such claim.
    pub async fn retract(&mut self, tree: &Tree, session_dir: &Path) -> Result<(), StoreError> {
        let Some(mut manifest) = self.claimed.take() else {
            return Ok(());
        };
        manifest.format = FORMAT.to_string();
        manifest.complete = false;
        manifest.exporting = true;
        manifest.save(tree, session_dir).await
    }
}

impl SessionManifest {
    /// The last run's manifest in `session_dir`; empty when there is none. One that cannot be
    /// read or is not ours is ignored (with a warning): its files are then fetched again, which
    /// is slower but never wrong.
    pub fn load(tree: &Tree, session_dir: &Path, session_id: Uuid) -> Previous {
        let path = session_dir.join(SESSION_MANIFEST);
        let text = match tree.read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Previous::default();
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read the session manifest; refetching the session");
                return Previous::default();
            }
        };
        match serde_json::from_slice::<SessionManifest>(&text) {
            Ok(manifest)
                if READABLE_FORMATS.contains(&manifest.format.as_str())
                    && manifest.session_id == session_id =>
            {
                let readiness = if manifest.format == FORMAT {
                    manifest.readiness
                } else {
                    SessionReadiness::Unknown
                };
                let claimed = manifest.complete.then(|| manifest.clone());
                Previous {
                    claimed,
                    entries: manifest
                        .files
                        .into_iter()
                        .filter(|entry| is_relative_plain(&entry.path))
                        .map(|entry| (entry.key.clone(), entry))
                        .collect(),
                    readiness,
                    failed_providers: manifest.failed_providers,
                }
            }
            Ok(_) => {
                tracing::warn!(path = %path.display(), "the session manifest is of another format or session; refetching the session");
                Previous::default()
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "the session manifest is not valid; refetching the session");
                Previous::default()
            }
        }
    }

    /// Writes it into `session_dir`, atomically.
    pub async fn save(&self, tree: &Tree, session_dir: &Path) -> Result<(), StoreError> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| StoreError(format!("cannot render the session manifest: {e}")))?;
        tree.write_bytes(&session_dir.join(SESSION_MANIFEST), &text)
            .await
            .map(drop)
    }
}

/// A path from a manifest is used only if it stays inside the session's directory: relative,
/// made of plain components. A manifest edited to point elsewhere cannot make the export read
/// or overwrite files outside the tree.
pub fn is_relative_plain(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\\'))
        && !path.starts_with('/')
        && !path.contains(':')
}

/// One line of the index: how a session ended in this run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub id: Uuid,
    pub status: String,
    /// `complete`, `partial` (providers pending, or interrupted) or `failed` (files could
    /// not be exported).
    pub state: SessionState,
    pub complete: bool,
    pub readiness: SessionReadiness,
    pub pending_providers: u64,
    pub failed_providers: u64,
    pub files: u64,
    pub bytes: u64,
    pub failed: u64,
    pub manifest: String,
}

/// How a session's export ended, in the run's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// Every file is there and every provider had given its final answer.
    Complete,
    /// What is there is sound, but providers had not answered yet (or the run was
    /// interrupted): rerun later.
    Partial,
    /// Some files could not be exported (named in the session's manifest): rerun.
    Failed,
}

/// The top-level `manifest.json`, streamed (see the module documentation).
pub struct IndexWriter {
    writer: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
    first: bool,
}

impl IndexWriter {
    /// Starts the index in `root`: the last run's index is replaced at once by one that says
    /// this run is in progress and lists no session (its claims may stop being true as soon as
    /// this run replaces a file), and this run's is put in place by [`IndexWriter::finish`].
    pub fn start(
        root: &Path,
        started_at: chrono::DateTime<chrono::Utc>,
        filters: &serde_json::Value,
    ) -> Result<IndexWriter, StoreError> {
        let target = root.join("manifest.json");
        let in_progress = format!(
            "{{\n  \"format\": {},\n  \"startedAt\": {},\n  \"filters\": {},\n  \
             \"inProgress\": true,\n  \"sessions\": []\n}}\n",
            json(&FORMAT)?,
            json(&started_at)?,
            json(filters)?,
        );
        put_in_place(root, &target, in_progress.as_bytes())?;
        let temporary = tempfile::Builder::new()
            .prefix(store::TEMP_PREFIX)
            .suffix(store::TEMP_SUFFIX)
            .tempfile_in(root)
            .map_err(|e| StoreError(format!("{}: {e}", root.display())))?;
        let mut index = IndexWriter {
            writer: BufWriter::new(temporary),
            target,
            first: true,
        };
        let head = format!(
            "{{\n  \"format\": {},\n  \"startedAt\": {},\n  \"filters\": {},\n  \"sessions\": [",
            json(&FORMAT)?,
            json(&started_at)?,
            json(filters)?,
        );
        index.write(head.as_bytes())?;
        Ok(index)
    }

    /// Adds a session.
    pub fn add(&mut self, entry: &IndexEntry) -> Result<(), StoreError> {
        let separator = if self.first { "\n    " } else { ",\n    " };
        self.first = false;
        let line = format!("{separator}{}", json(entry)?);
        self.write(line.as_bytes())
    }

    /// Ends the document with `tail` (the run's totals) and puts it in place atomically.
    pub async fn finish(mut self, tail: &serde_json::Value) -> Result<(), StoreError> {
        let mut end = String::from(if self.first { "],\n" } else { "\n  ],\n" });
        let serde_json::Value::Object(tail) = tail else {
            return Err(StoreError("the index's tail is not an object".into()));
        };
        for (position, (key, value)) in tail.iter().enumerate() {
            let comma = if position + 1 == tail.len() { "" } else { "," };
            end.push_str(&format!("  {}: {}{comma}\n", json(key)?, json(value)?));
        }
        end.push_str("}\n");
        self.write(end.as_bytes())?;
        let target = self.target.clone();
        let temporary = self
            .writer
            .into_inner()
            .map_err(|e| StoreError(format!("{}: {}", target.display(), e.error())))?;
        tokio::task::spawn_blocking(move || {
            temporary
                .as_file()
                .sync_all()
                .map_err(|e| StoreError(format!("{}: {e}", target.display())))?;
            temporary
                .persist(&target)
                .map_err(|e| StoreError(format!("{}: {}", target.display(), e.error)))?;
            Ok(())
        })
        .await
        .map_err(|e| StoreError(format!("the index: {e}")))?
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        self.writer
            .write_all(bytes)
            .map_err(|e| StoreError(format!("{}: {e}", self.target.display())))
    }
}

/// Writes `bytes` to `target` in `root` atomically and durably: a temporary file, synced,
/// renamed over `target`, and the directory synced so that the rename outlives a crash.
fn put_in_place(root: &Path, target: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let failed = |e: &dyn std::fmt::Display| StoreError(format!("{}: {e}", target.display()));
    let mut temporary = tempfile::Builder::new()
        .prefix(store::TEMP_PREFIX)
        .suffix(store::TEMP_SUFFIX)
        .tempfile_in(root)
        .map_err(|e| failed(&e))?;
    temporary.write_all(bytes).map_err(|e| failed(&e))?;
    temporary.as_file().sync_all().map_err(|e| failed(&e))?;
    temporary.persist(target).map_err(|e| failed(&e.error))?;
    #[cfg(unix)]
    std::fs::File::open(root)
        .and_then(|directory| directory.sync_all())
        .map_err(|e| failed(&e))?;
    Ok(())
}

fn json<T: Serialize + ?Sized>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError(format!("cannot render JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_paths_stay_inside_the_session() {
        assert!(is_relative_plain("datasets/scores.json"));
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "./a",
            "c:x",
            "a\\b",
        ] {
            assert!(!is_relative_plain(bad), "{bad}");
        }
    }

    fn manifest_text(format: &str, readiness: &str, id: Uuid) -> String {
        format!(
            r#"{{"format":"{format}","sessionId":"{id}","complete":true,{readiness}
                "exportedAt":"2026-01-01T00:00:00Z",
                "files":[{{"key":"dataset:scores","path":"datasets/scores.json","bytes":2,"sha256":"00"}}]}}"#
        )
    }

    #[test]
    fn only_a_settled_session_of_this_format_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let id = Uuid::from_u128(7);
        let load = |text: String| {
            std::fs::write(dir.path().join(SESSION_MANIFEST), text).unwrap();
            SessionManifest::load(&Tree::open(dir.path()).unwrap(), Path::new(""), id)
        };
        // Format 1 recorded no readiness: it may hold pending data marked complete.
        let old = load(manifest_text("creditdata-export/1", "", id));
        assert_eq!(old.readiness, SessionReadiness::Unknown);
        assert!(!old.readiness.is_settled());
        assert_eq!(old.entries.len(), 1, "its files are still known");
        let pending = load(manifest_text(FORMAT, r#""readiness":"pending","#, id));
        assert!(!pending.readiness.is_settled());
        let ready = load(manifest_text(FORMAT, r#""readiness":"ready","#, id));
        assert!(ready.readiness.is_settled());
        let failed = load(manifest_text(
            FORMAT,
            r#""readiness":"providers-failed","#,
            id,
        ));
        assert!(failed.readiness.is_settled());
        let other = load(manifest_text("creditdata-export/9", "", id));
        assert!(other.entries.is_empty());
    }

    #[tokio::test]
    async fn a_complete_claim_is_taken_back_before_the_session_is_exported_again() {
        let dir = tempfile::tempdir().unwrap();
        let id = Uuid::from_u128(7);
        let path = dir.path().join(SESSION_MANIFEST);
        let tree = Tree::open(dir.path()).unwrap();
        let complete = manifest_text(FORMAT, r#""readiness":"ready","#, id);
        std::fs::write(&path, &complete).unwrap();
        let mut previous = SessionManifest::load(&tree, Path::new(""), id);
        previous.retract(&tree, Path::new("")).await.unwrap();
        let retracted: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(retracted["complete"], false);
        assert_eq!(retracted["exporting"], true);
        assert_eq!(
            retracted["files"].as_array().unwrap().len(),
            1,
            "{retracted}"
        );
        // What the run knew is unchanged: the files it may keep when they verify.
        assert_eq!(previous.entries.len(), 1);
        assert!(previous.readiness.is_settled());
        // A manifest that claims nothing is left as it is.
        let partial = complete.replace(r#""complete":true"#, r#""complete":false"#);
        std::fs::write(&path, &partial).unwrap();
        let mut previous = SessionManifest::load(&tree, Path::new(""), id);
        previous.retract(&tree, Path::new("")).await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), partial);
    }

    #[tokio::test]
    async fn a_started_run_replaces_the_last_index_with_one_that_claims_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        std::fs::write(&path, r#"{"sessions":[{"complete":true}]}"#).unwrap();
        let index =
            IndexWriter::start(dir.path(), chrono::Utc::now(), &serde_json::json!({})).unwrap();
        let started: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(started["inProgress"], true);
        assert_eq!(started["sessions"], serde_json::json!([]));
        index
            .finish(&serde_json::json!({"interrupted": false}))
            .await
            .unwrap();
        let finished: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert!(finished.get("inProgress").is_none(), "{finished}");
    }

    #[tokio::test]
    async fn the_index_is_one_json_document() {
        let dir = tempfile::tempdir().unwrap();
        let mut index =
            IndexWriter::start(dir.path(), chrono::Utc::now(), &serde_json::json!({})).unwrap();
        for n in 0..2 {
            index
                .add(&IndexEntry {
                    id: Uuid::from_u128(n),
                    status: "EXPIRED".into(),
                    state: SessionState::Complete,
                    complete: true,
                    readiness: SessionReadiness::Ready,
                    pending_providers: 0,
                    failed_providers: 0,
                    files: 1,
                    bytes: 2,
                    failed: 0,
                    manifest: "m".into(),
                })
                .unwrap();
        }
        index
            .finish(&serde_json::json!({"interrupted": false, "totals": {"files": 2}}))
            .await
            .unwrap();
        let text = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["sessions"].as_array().unwrap().len(), 2);
        assert_eq!(value["totals"]["files"], 2);
        assert_eq!(value["format"], FORMAT);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left");
    }
}
