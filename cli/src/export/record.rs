//! The export's last step: what a session and the run came to. Each session's manifest, its
//! line of the run's index, the run's totals, the summary on stdout and the exit status.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use uuid::Uuid;

use super::context::local;
use super::manifest::{
    self, FailedFile, FileEntry, IndexEntry, ProviderEntry, SessionManifest, SessionReadiness,
    SessionState, SkippedFile,
};
use super::plan;
use super::store::Tree;
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
    /// Listed entries left out on purpose, with why (an id listed again).
    pub skipped: Vec<SkippedFile>,
    /// Listed files left out by `--max-listed-files`.
    pub beyond_limit: u64,
    /// A failure that stops the whole export (authentication, a local file).
    pub fatal: Option<Failure>,
    /// What the session's datasets came to.
    pub readiness: SessionReadiness,
    pub pending_providers: Vec<ProviderEntry>,
    pub failed_providers: Vec<ProviderEntry>,
}

impl SessionReport {
    /// A session not yet exported; its manifest goes to `sessions/ID/manifest.json`.
    pub fn new(id: Uuid, status: String) -> SessionReport {
        SessionReport {
            index: IndexEntry {
                id,
                status,
                state: SessionState::Partial,
                complete: false,
                readiness: SessionReadiness::Unknown,
                pending_providers: 0,
                failed_providers: 0,
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
            skipped: Vec::new(),
            beyond_limit: 0,
            fatal: None,
            readiness: SessionReadiness::Unknown,
            pending_providers: Vec::new(),
            failed_providers: Vec::new(),
        }
    }

    /// Records what is complete of the session in its manifest (also when stopped half-way):
    /// complete only when every `expected` file is there, nothing failed, it was not
    /// interrupted and every provider had given its final answer.
    pub async fn record(
        &mut self,
        tree: &Tree,
        dir: &Path,
        include_deprecated: bool,
        expected: &[String],
        complete: BTreeMap<String, FileEntry>,
        interrupted: bool,
    ) {
        self.index.failed = self.failures.len() as u64;
        self.index.complete = !interrupted
            && self.failures.is_empty()
            && self.readiness.is_settled()
            && expected.iter().all(|key| complete.contains_key(key));
        self.index.readiness = self.readiness;
        self.index.pending_providers = self.pending_providers.len() as u64;
        self.index.failed_providers = self.failed_providers.len() as u64;
        self.index.files = complete.len() as u64;
        self.index.bytes = complete.values().map(|entry| entry.bytes).sum();
        let manifest = SessionManifest {
            format: manifest::FORMAT.to_string(),
            session_id: self.index.id,
            complete: self.index.complete,
            exporting: false,
            readiness: self.readiness,
            pending_providers: self.pending_providers.clone(),
            failed_providers: self.failed_providers.clone(),
            exported_at: chrono::Utc::now(),
            files: complete.into_values().collect(),
            failed: self.failures.clone(),
            skipped: plan::skipped_files(include_deprecated)
                .into_iter()
                .chain(self.skipped.iter().cloned())
                .collect(),
        };
        if let Err(error) = manifest.save(tree, dir).await {
            self.index.complete = false;
            self.fatal.get_or_insert(local(error));
        }
        self.index.state = if !self.failures.is_empty() || self.fatal.is_some() {
            SessionState::Failed
        } else if self.index.complete {
            SessionState::Complete
        } else {
            SessionState::Partial
        };
    }
}

/// The run's totals, in the summary and at the end of the index.
#[derive(Debug, Default)]
pub struct Totals {
    pub sessions: u64,
    pub sessions_complete: u64,
    /// Sessions whose providers had not all answered (or the run was interrupted).
    pub sessions_partial: u64,
    /// Sessions with files that could not be exported.
    pub sessions_failed: u64,
    /// Sessions whose data is final but some providers failed or refused.
    pub sessions_with_failed_providers: u64,
    /// Provider answers still pending, across sessions.
    pub providers_pending: u64,
    pub files_fetched: u64,
    pub files_kept: u64,
    pub files_repaired: u64,
    pub files_failed: u64,
    /// Listed files left out by `--max-listed-files`.
    pub files_beyond_limit: u64,
    pub bytes_fetched: u64,
    pub bytes_total: u64,
}

impl Totals {
    pub fn add(&mut self, report: &SessionReport) {
        self.sessions += 1;
        self.sessions_complete += u64::from(report.index.state == SessionState::Complete);
        self.sessions_partial += u64::from(report.index.state == SessionState::Partial);
        self.sessions_failed += u64::from(report.index.state == SessionState::Failed);
        self.sessions_with_failed_providers += u64::from(!report.failed_providers.is_empty());
        self.providers_pending += report.pending_providers.len() as u64;
        self.files_fetched += report.fetched;
        self.files_kept += report.kept;
        self.files_repaired += report.repaired;
        self.files_failed += report.index.failed;
        self.files_beyond_limit += report.beyond_limit;
        self.bytes_fetched += report.bytes_fetched;
        self.bytes_total += report.index.bytes;
    }

    pub fn to_json(&self) -> Value {
        json!({
            "sessions": self.sessions,
            "sessionsComplete": self.sessions_complete,
            "sessionsIncomplete": self.sessions - self.sessions_complete,
            "sessionsPartial": self.sessions_partial,
            "sessionsFailed": self.sessions_failed,
            "sessionsWithFailedProviders": self.sessions_with_failed_providers,
            "providersPending": self.providers_pending,
            "filesFetched": self.files_fetched,
            "filesKept": self.files_kept,
            "filesRepaired": self.files_repaired,
            "filesFailed": self.files_failed,
            "filesBeyondLimit": self.files_beyond_limit,
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
    /// The work shared with other workers through the store, when it is.
    pub shared_work: Option<Value>,
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
                "sharedWork": self.shared_work,
            }));
        }
        out.text(&crate::table::pairs([
            ("directory", self.root.display().to_string()),
            ("sessions", totals.sessions.to_string()),
            ("complete", totals.sessions_complete.to_string()),
            (
                "partial (providers pending)",
                totals.sessions_partial.to_string(),
            ),
            ("failed (files missing)", totals.sessions_failed.to_string()),
            (
                "with failed providers",
                totals.sessions_with_failed_providers.to_string(),
            ),
            (
                "provider answers pending",
                totals.providers_pending.to_string(),
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

    /// The exit status the run comes to, once the summary is out: interrupted (130), files
    /// missing (1), providers pending (8), complete (0). A session whose providers failed or
    /// refused is complete: its data is final, rerunning changes nothing (the summary, the
    /// index and its manifest say which providers, and they are named on stderr).
    pub fn outcome(&self) -> Result<(), Failure> {
        if self.interrupted {
            return Err(Failure::Interrupted);
        }
        let totals = self.totals;
        if totals.files_beyond_limit > 0 {
            return Err(Failure::Partial(format!(
                "{} listed file(s) were left out by --max-listed-files (see the warnings above \
                 and the sessions' manifest.json); export again with a larger \
                 --max-listed-files to take them: what is complete is kept",
                totals.files_beyond_limit
            )));
        }
        if totals.files_failed > 0 {
            return Err(Failure::Partial(format!(
                "{} file(s) of {} session(s) could not be exported (see the warnings above); \
                 run the same command again to fetch them: what is complete is kept",
                totals.files_failed, totals.sessions_failed
            )));
        }
        if totals.sessions_partial > 0 {
            return Err(Failure::ProvidersPending(format!(
                "{} session(s) are partial: {} provider answer(s) had not arrived (see above, and \
                 each session's manifest.json); run the same command again later: it reads those \
                 sessions again and keeps the rest",
                totals.sessions_partial, totals.providers_pending
            )));
        }
        Ok(())
    }
}
