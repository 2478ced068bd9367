//! The export's manifests.
//!
//! - `sessions/ID/manifest.json`, one per session, is the record a rerun trusts: every file of
//!   the session that is complete, with its size and SHA-256. It is small, read once when the
//!   session's turn comes and written once when the session is done (or interrupted), always
//!   atomically. A file on disk that it does not list is fetched again; a listed file whose
//!   size or digest differs (torn, truncated, edited) is fetched again.
//! - `manifest.json` at the top is the run's index: the filters, one line per session the run
//!   went through, and the totals. It is streamed to a temporary file as sessions finish (memory
//!   stays flat however many sessions match) and put in place at the end, also on Ctrl-C.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::store::{self, Digested, StoreError};

/// The format of both manifests; a later incompatible layout changes it.
pub const FORMAT: &str = "creditdata-export/1";

/// Where a session's manifest is, relative to the session's directory.
pub const SESSION_MANIFEST: &str = "manifest.json";

/// One complete file of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// What the file is, stable across runs: `session`, `dataset:scores`, `report`,
    /// `statement-tsv:ID`, `attachment:ID`, `image:VERIFICATION:IMAGE`, `source-file:ID`...
    pub key: String,
    /// Where it is, relative to the session's directory, with `/` separators.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
}

impl FileEntry {
    pub fn digest(&self) -> Digested {
        Digested {
            bytes: self.bytes,
            sha256: self.sha256.clone(),
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
    /// Whether every file of the session is listed in `files` (nothing failed, not interrupted).
    pub complete: bool,
    pub exported_at: chrono::DateTime<chrono::Utc>,
    pub files: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedFile>,
    /// What was left out on purpose (not counted against `complete`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
}

impl SessionManifest {
    /// The manifest in `session_dir`, keyed by file; empty when there is none. One that cannot
    /// be read or is not ours is ignored (with a warning): its files are then fetched again,
    /// which is slower but never wrong.
    pub fn load_entries(session_dir: &Path, session_id: Uuid) -> HashMap<String, FileEntry> {
        let path = session_dir.join(SESSION_MANIFEST);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return HashMap::new(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot read the session manifest; refetching the session");
                return HashMap::new();
            }
        };
        match serde_json::from_slice::<SessionManifest>(&text) {
            Ok(manifest) if manifest.format == FORMAT && manifest.session_id == session_id => {
                manifest
                    .files
                    .into_iter()
                    .filter(|entry| is_relative_plain(&entry.path))
                    .map(|entry| (entry.key.clone(), entry))
                    .collect()
            }
            Ok(_) => {
                tracing::warn!(path = %path.display(), "the session manifest is of another format or session; refetching the session");
                HashMap::new()
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "the session manifest is not valid; refetching the session");
                HashMap::new()
            }
        }
    }

    /// Writes it into `session_dir`, atomically.
    pub async fn save(&self, session_dir: &Path) -> Result<(), StoreError> {
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| StoreError(format!("cannot render the session manifest: {e}")))?;
        store::write_bytes(&session_dir.join(SESSION_MANIFEST), &text)
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
    pub complete: bool,
    pub files: u64,
    pub bytes: u64,
    pub failed: u64,
    pub manifest: String,
}

/// The top-level `manifest.json`, streamed (see the module documentation).
pub struct IndexWriter {
    writer: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
    first: bool,
}

impl IndexWriter {
    /// Starts the index in `root` (the previous one stays until [`IndexWriter::finish`]).
    pub fn start(
        root: &Path,
        started_at: chrono::DateTime<chrono::Utc>,
        filters: &serde_json::Value,
    ) -> Result<IndexWriter, StoreError> {
        let target = root.join("manifest.json");
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
                    complete: true,
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
