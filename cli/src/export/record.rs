//! The export's last step: what a session and the run came to. Each session's manifest, its
//! line of the run's index, the run's totals, the summary on stdout and the exit status.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use uuid::Uuid;

use super::manifest::{self, FailedFile, FileEntry, IndexEntry, SessionManifest};
use super::plan;
use crate::failure::Failure;
use crate::output::Output;

/// How one session went.
pub struct SessionReport {
    pub index: IndexEntry,
    pub fetched: u64,
    pub kept: u64,
    pub repaired: u64,
    pub bytes_fetched: u64,
    pub failures: Vec<FailedFile>,
    /// A failure that stops the whole export (authentication, a local file).
    pub fatal: Option<Failure>,
}

impl SessionReport {
    /// A session not yet exported; its manifest goes to `sessions/ID/manifest.json`.
    pub fn new(id: Uuid, status: String) -> SessionReport {
        SessionReport {
            index: IndexEntry {
                id,
                status,
                complete: false,
                files: 0,
                bytes: 0,
                failed: 0,
                manifest: format!("sessions/{id}/{}", manifest::SESSION_MANIFEST),
            },
            fetched: 0,
            kept: 0,
            repaired: 0,
            bytes_fetched: 0,
            failures: Vec::new(),
            fatal: None,
        }
    }

    /// Records what is complete of the session in its manifest (also when stopped half-way):
    /// complete only when every `expected` file is there, nothing failed and it was not
    /// interrupted.
    pub async fn record(
        &mut self,
        dir: &Path,
        include_deprecated: bool,
        expected: &[String],
        complete: BTreeMap<String, FileEntry>,
        interrupted: bool,
    ) {
        self.index.failed = self.failures.len() as u64;
        self.index.complete = !interrupted
            && self.failures.is_empty()
            && expected.iter().all(|key| complete.contains_key(key));
        self.index.files = complete.len() as u64;
        self.index.bytes = complete.values().map(|entry| entry.bytes).sum();
        let manifest = SessionManifest {
            format: manifest::FORMAT.to_string(),
            session_id: self.index.id,
            complete: self.index.complete,
            exported_at: chrono::Utc::now(),
            files: complete.into_values().collect(),
            failed: self.failures.clone(),
            skipped: plan::skipped_datasets(include_deprecated),
        };
        if let Err(error) = manifest.save(dir).await {
            self.index.complete = false;
            self.fatal.get_or_insert(super::local(error));
        }
    }
}

/// The run's totals, in the summary and at the end of the index.
#[derive(Debug, Default)]
pub struct Totals {
    pub sessions: u64,
    pub sessions_complete: u64,
    pub files_fetched: u64,
    pub files_kept: u64,
    pub files_repaired: u64,
    pub files_failed: u64,
    pub bytes_fetched: u64,
    pub bytes_total: u64,
}

impl Totals {
    pub fn add(&mut self, report: &SessionReport) {
        self.sessions += 1;
        self.sessions_complete += u64::from(report.index.complete);
        self.files_fetched += report.fetched;
        self.files_kept += report.kept;
        self.files_repaired += report.repaired;
        self.files_failed += report.index.failed;
        self.bytes_fetched += report.bytes_fetched;
        self.bytes_total += report.index.bytes;
    }

    pub fn to_json(&self) -> Value {
        json!({
            "sessions": self.sessions,
            "sessionsComplete": self.sessions_complete,
            "sessionsIncomplete": self.sessions - self.sessions_complete,
            "filesFetched": self.files_fetched,
            "filesKept": self.files_kept,
            "filesRepaired": self.files_repaired,
            "filesFailed": self.files_failed,
            "bytesFetched": self.bytes_fetched,
            "bytesTotal": self.bytes_total,
        })
    }
}

/// The run as a whole, for the summary.
pub struct RunSummary<'a> {
    pub root: &'a Path,
    pub interrupted: bool,
    pub elapsed_seconds: f64,
    pub totals: &'a Totals,
    pub rate_limiter: Option<Value>,
}

impl RunSummary<'_> {
    /// The summary on stdout: JSON, or a table of its lines.
    pub fn print(&self, out: Output) -> Result<(), Failure> {
        let totals = self.totals;
        if out.is_json() {
            return out.document(&json!({
                "directory": self.root,
                "interrupted": self.interrupted,
                "elapsedSeconds": self.elapsed_seconds,
                "totals": totals.to_json(),
                "rateLimiter": self.rate_limiter,
            }));
        }
        out.text(&crate::table::pairs([
            ("directory", self.root.display().to_string()),
            ("sessions", totals.sessions.to_string()),
            ("complete", totals.sessions_complete.to_string()),
            (
                "incomplete",
                (totals.sessions - totals.sessions_complete).to_string(),
            ),
            ("files fetched", totals.files_fetched.to_string()),
            ("files kept (verified)", totals.files_kept.to_string()),
            ("files repaired", totals.files_repaired.to_string()),
            ("files failed", totals.files_failed.to_string()),
            ("bytes fetched", totals.bytes_fetched.to_string()),
            ("bytes in the tree", totals.bytes_total.to_string()),
            ("seconds", self.elapsed_seconds.to_string()),
        ]))
    }

    /// The exit status the run comes to, once the summary is out.
    pub fn outcome(&self) -> Result<(), Failure> {
        if self.interrupted {
            return Err(Failure::Interrupted);
        }
        let totals = self.totals;
        if totals.files_failed > 0 {
            return Err(Failure::Partial(format!(
                "{} file(s) of {} session(s) could not be exported (see the warnings above); \
                 run the same command again to fetch them: what is complete is kept",
                totals.files_failed,
                totals.sessions - totals.sessions_complete
            )));
        }
        Ok(())
    }
}
