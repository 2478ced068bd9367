//! `creditdata export`: every session the search matches, to a directory tree (see
//! `cli/README.md`, "Export").
//!
//! ```text
//! OUT/manifest.json                        the run's index (filters, sessions, totals)
//! OUT/sessions/ID/manifest.json            the session's files, sizes and SHA-256
//! OUT/sessions/ID/session.json             the session record
//! OUT/sessions/ID/datasets/NAME.json       each JSON dataset
//! OUT/sessions/ID/report.pdf               the PDF report
//! OUT/sessions/ID/transactions.xlsx        all transactions, Excel
//! OUT/sessions/ID/statements/SID.xlsx|.tsv each account statement
//! OUT/sessions/ID/attachments/AID.EXT      each attachment
//! OUT/sessions/ID/identity/VID/images.json each identity verification's images...
//! OUT/sessions/ID/identity/VID/IMG.EXT     ...and their content
//! OUT/sessions/ID/source-files/FID.EXT     each source file, decoded
//! ```
//!
//! Names come from ids, never from the service's suggested file names (which may carry a
//! person's name). Work flows through one queue per session: a dataset that lists files (account
//! statements, attachments, identity verifications, source files) adds their downloads as soon as
//! it is there, and every request of every session waits for one of `--concurrency` permits
//! (and, with `--rate-limit`, for the client's rate limiter).

mod manifest;
mod progress;
mod store;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use creditdata_client::download::{Download, DownloadExt};
use creditdata_client::types::Session;
use creditdata_client::{Client, ClientInfo, Error};
use futures::stream::{self, FuturesUnordered};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};
use uuid::Uuid;

use creditdata_client::session_datasets::Dataset;

use crate::cli::{ExportArgs, GlobalArgs, ListArgs};
use crate::failure::{EXIT_AUTH, Failure, client_exit_status};
use crate::output::Output;
use manifest::{FailedFile, FileEntry, IndexEntry, IndexWriter, SessionManifest, SkippedFile};
use progress::Progress;
use store::{StoreError, WriteStreamError};

/// At most this many failures are printed one by one; the rest are in the session manifests.
const FAILURES_SHOWN: u64 = 20;

/// Runs `creditdata export`.
pub async fn run(global: &GlobalArgs, out: Output, args: ExportArgs) -> Result<(), Failure> {
    let root = args.out.clone();
    if root.exists() && !root.is_dir() {
        return Err(Failure::Usage(format!(
            "--out {}: not a directory; give a directory (it is created if missing)",
            root.display()
        )));
    }
    store::create_private_dir_all(&root.join("sessions")).map_err(local)?;
    let _lock = store::DirectoryLock::take(&root).map_err(Failure::Usage)?;
    store::remove_leftovers(&root, false);
    let rate_limit = args.rate_limit;
    let connection = crate::settings::connect_with(global, |builder| match rate_limit {
        Some(limit) => builder.rate_limit(limit),
        None => builder,
    })?;
    let had_credentials = connection.has_credentials;
    let outcome = export(&connection.client, out, &root, &args).await;
    outcome.map_err(|failure| match failure {
        Failure::Client { error, .. } => Failure::Client {
            error,
            had_credentials,
        },
        other => other,
    })
}

/// What every session's work shares.
struct Context<'a> {
    client: &'a Client,
    root: &'a Path,
    include_deprecated: bool,
    permits: Semaphore,
    /// `true` once the export must stop: Ctrl-C, or a failure no other request can avoid.
    stop: watch::Sender<bool>,
    progress: &'a Progress,
}

impl Context<'_> {
    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    async fn stopped(&self) {
        let mut receiver = self.stop.subscribe();
        let _ = receiver.wait_for(|stop| *stop).await;
    }
}

/// The run's totals, in the summary and at the end of the index.
#[derive(Debug, Default)]
struct Totals {
    sessions: u64,
    sessions_complete: u64,
    files_fetched: u64,
    files_kept: u64,
    files_repaired: u64,
    files_failed: u64,
    bytes_fetched: u64,
    bytes_total: u64,
}

impl Totals {
    fn add(&mut self, report: &SessionReport) {
        self.sessions += 1;
        self.sessions_complete += u64::from(report.index.complete);
        self.files_fetched += report.fetched;
        self.files_kept += report.kept;
        self.files_repaired += report.repaired;
        self.files_failed += report.index.failed;
        self.bytes_fetched += report.bytes_fetched;
        self.bytes_total += report.index.bytes;
    }

    fn to_json(&self) -> Value {
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

async fn export(
    client: &Client,
    out: Output,
    root: &Path,
    args: &ExportArgs,
) -> Result<(), Failure> {
    let started_at = chrono::Utc::now();
    let started = std::time::Instant::now();
    let mut filter = crate::sessions::session_filter(&args.filters);
    if let Some(page_size) = args.filters.page_size {
        filter = filter.page_size(page_size);
    }
    let limit = args.filters.limit.unwrap_or(u64::MAX);
    let mut index =
        IndexWriter::start(root, started_at, &filters_json(&args.filters)).map_err(local)?;
    let progress = Progress::new();
    let (stop, _) = watch::channel(false);
    let context = Context {
        client,
        root,
        include_deprecated: args.include_deprecated,
        permits: Semaphore::new(usize::from(args.concurrency)),
        stop,
        progress: &progress,
    };
    let interrupts = tokio::spawn(stop_on_interrupt(
        Interrupts::listen(),
        context.stop.clone(),
    ));

    let sessions = client
        .session_pages(filter)
        .map_ok(|page| {
            if let Some(total) = page.total_count {
                progress.set_total(u64::from(total).min(limit));
            }
            stream::iter(page.sessions.into_iter().map(Ok::<Session, Error>))
        })
        .try_flatten()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .take_until(Box::pin(context.stopped()));
    // Enough sessions in flight to keep every permit busy while one session waits on a dataset
    // that lists its files; each holds only its own small manifest.
    let sessions_in_flight = usize::from(args.concurrency).max(2);
    let mut reports = sessions
        .map(|item| {
            let context = &context;
            async move {
                match item {
                    Ok(session) => Ok(export_session(context, session).await),
                    Err(error) => Err(error),
                }
            }
        })
        .buffer_unordered(sessions_in_flight);

    let mut totals = Totals::default();
    let mut fatal: Option<Failure> = None;
    let mut failures_shown = 0u64;
    while let Some(report) = reports.next().await {
        match report {
            Ok(report) => {
                for failed in &report.failures {
                    failures_shown += 1;
                    if failures_shown <= FAILURES_SHOWN {
                        progress.note(&format!(
                            "warning: session {}: {}: {}",
                            report.index.id, failed.key, failed.reason
                        ));
                    } else if failures_shown == FAILURES_SHOWN + 1 {
                        progress.note(
                            "warning: further failures are listed in the sessions' manifest.json",
                        );
                    }
                }
                if let Err(error) = index.add(&report.index) {
                    fatal.get_or_insert(local(error));
                    context.stop.send_replace(true);
                }
                totals.add(&report);
                progress.session_done();
                if let Some(failure) = report.fatal {
                    fatal.get_or_insert(failure);
                    context.stop.send_replace(true);
                }
            }
            // The search failed (after the client's retries): what is left is unknown.
            Err(error) => {
                fatal.get_or_insert(Failure::from(error));
                context.stop.send_replace(true);
            }
        }
    }
    drop(reports);
    interrupts.abort();
    let interrupted = fatal.is_none() && context.stopping();
    progress.finish();

    let rate_limiter = client.inner().rate_limiter().map(|limiter| {
        let status = limiter.status();
        json!({
            "limit": status.configured.to_string(),
            "admitted": status.admitted,
            "throttled": status.throttled,
            "slowdowns": status.slowdowns,
        })
    });
    let elapsed = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let tail = json!({
        "finishedAt": chrono::Utc::now(),
        "interrupted": interrupted,
        "totals": totals.to_json(),
    });
    if let Err(error) = index.finish(&tail).await {
        fatal.get_or_insert(local(error));
    }
    let summary = json!({
        "directory": root,
        "interrupted": interrupted,
        "elapsedSeconds": elapsed,
        "totals": totals.to_json(),
        "rateLimiter": rate_limiter,
    });
    if out.is_json() {
        out.document(&summary)?;
    } else {
        out.text(&crate::table::pairs([
            ("directory", root.display().to_string()),
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
            ("seconds", elapsed.to_string()),
        ]))?;
    }
    if let Some(failure) = fatal {
        return Err(failure);
    }
    if interrupted {
        return Err(Failure::Interrupted);
    }
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

/// Ctrl-C, listened to from the moment this is called (`tokio::signal::ctrl_c` would listen only
/// once first polled, leaving a window in which Ctrl-C kills the process outright).
struct Interrupts {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    fn listen() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Interrupts {
                signal: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Interrupts {}
        }
    }

    /// The next Ctrl-C; `false` when none can be received.
    async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            match self.signal.as_mut() {
                Some(signal) => signal.recv().await.is_some(),
                None => false,
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}

/// The first Ctrl-C stops the export: requests in flight are dropped (their temporary files
/// removed), each session's manifest records what is complete, the index is written. A second
/// Ctrl-C exits at once (hidden `.creditdata-*.part` files may then remain; never a partial file
/// under a final name).
async fn stop_on_interrupt(mut interrupts: Interrupts, stop: watch::Sender<bool>) {
    if !interrupts.next().await {
        return;
    }
    stop.send_replace(true);
    crate::terminal::note(
        "interrupted: recording what is complete (Ctrl-C again to quit at once); \
         run the same command again to resume",
    );
    if interrupts.next().await {
        std::process::exit(i32::from(crate::failure::EXIT_INTERRUPTED));
    }
}

/// The search filters, recorded in the index. They may quote a person's e-mail or name: the
/// index lives in the owner-only tree with the data itself.
fn filters_json(filters: &ListArgs) -> Value {
    json!({
        "email": filters.email,
        "name": filters.name,
        "country": filters.country,
        "from": filters.from,
        "to": filters.to,
        "status": filters
            .status
            .and_then(|s| s.to_possible_value())
            .map(|v| v.get_name().to_string()),
        "createdBy": filters.created_by,
        "unit": filters.unit,
        "limit": filters.limit,
    })
}

fn local(error: StoreError) -> Failure {
    Failure::Local(error.0)
}

/// How one session went.
struct SessionReport {
    index: IndexEntry,
    fetched: u64,
    kept: u64,
    repaired: u64,
    bytes_fetched: u64,
    failures: Vec<FailedFile>,
    /// A failure that stops the whole export (authentication, a local file).
    fatal: Option<Failure>,
}

/// What to fetch for one file of a session.
#[derive(Debug, Clone)]
enum Fetch {
    /// Bytes already at hand (the session record from the search).
    Known(Vec<u8>),
    Dataset(Dataset),
    IdentityImages(String),
    Pdf,
    TransactionsExcel,
    StatementExcel(String),
    StatementTsv(String),
    Attachment(String),
    Image(String, String),
    SourceFile(Uuid),
}

/// One file of a session: its key in the manifest, where it goes (without its extension when
/// the response decides it), what fetches it.
#[derive(Debug, Clone)]
struct Job {
    key: String,
    path: String,
    fetch: Fetch,
}

impl Job {
    /// Whether its content leads to more files.
    fn lists_files(&self) -> bool {
        matches!(
            self.fetch,
            Fetch::Dataset(
                Dataset::AccountStatements
                    | Dataset::Attachments
                    | Dataset::IdentityVerifications
                    | Dataset::SourceFiles
            ) | Fetch::IdentityImages(_)
        )
    }

    /// The jobs its content lists (ids the service chose become safe file names).
    fn listed(&self, content: &[u8]) -> Vec<Job> {
        let Ok(value) = serde_json::from_slice::<Value>(content) else {
            return Vec::new();
        };
        let ids = |list: Option<&Value>| -> Vec<String> {
            list.and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item.get("id").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        match &self.fetch {
            Fetch::Dataset(Dataset::AccountStatements) => ids(value.get("accountStatements"))
                .into_iter()
                .flat_map(|id| {
                    let name = store::name_for_id(&id);
                    [
                        Job {
                            key: format!("statement-excel:{id}"),
                            path: format!("statements/{name}.xlsx"),
                            fetch: Fetch::StatementExcel(id.clone()),
                        },
                        Job {
                            key: format!("statement-tsv:{id}"),
                            path: format!("statements/{name}.tsv"),
                            fetch: Fetch::StatementTsv(id),
                        },
                    ]
                })
                .collect(),
            Fetch::Dataset(Dataset::Attachments) => ids(value.get("attachments"))
                .into_iter()
                .map(|id| Job {
                    key: format!("attachment:{id}"),
                    path: format!("attachments/{}", store::name_for_id(&id)),
                    fetch: Fetch::Attachment(id),
                })
                .collect(),
            Fetch::Dataset(Dataset::IdentityVerifications) => {
                ids(value.get("identityVerifications"))
                    .into_iter()
                    .map(|id| Job {
                        key: format!("identity-images:{id}"),
                        path: format!("identity/{}/images.json", store::name_for_id(&id)),
                        fetch: Fetch::IdentityImages(id),
                    })
                    .collect()
            }
            Fetch::IdentityImages(verification) => ids(value.get("images"))
                .into_iter()
                .map(|image| Job {
                    key: format!("image:{verification}:{image}"),
                    path: format!(
                        "identity/{}/{}",
                        store::name_for_id(verification),
                        store::name_for_id(&image)
                    ),
                    fetch: Fetch::Image(verification.clone(), image),
                })
                .collect(),
            Fetch::Dataset(Dataset::SourceFiles) => {
                let list = if value.is_array() {
                    Some(&value)
                } else {
                    value.get("sourceFiles")
                };
                ids(list)
                    .into_iter()
                    .filter_map(|id| id.parse::<Uuid>().ok())
                    .map(|id| Job {
                        key: format!("source-file:{id}"),
                        path: format!("source-files/{id}"),
                        fetch: Fetch::SourceFile(id),
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// A file that is complete on disk.
struct Obtained {
    entry: FileEntry,
    fetched: bool,
    repaired: bool,
    bytes_fetched: u64,
    content: Option<Vec<u8>>,
}

/// Why a file is not complete.
enum Missed {
    Client(Error),
    Local(String),
    Interrupted,
}

impl From<Failure> for Missed {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Client { error, .. } => Missed::Client(error),
            Failure::Interrupted => Missed::Interrupted,
            other => Missed::Local(other.message().unwrap_or_default()),
        }
    }
}

impl From<Error> for Missed {
    fn from(error: Error) -> Self {
        Missed::Client(error)
    }
}

impl From<StoreError> for Missed {
    fn from(error: StoreError) -> Self {
        Missed::Local(error.0)
    }
}

impl From<WriteStreamError> for Missed {
    fn from(error: WriteStreamError) -> Self {
        match error {
            WriteStreamError::Client(error) => Missed::Client(error),
            WriteStreamError::Store(error) => Missed::Local(error.0),
        }
    }
}

fn initial_jobs(context: &Context<'_>, session_record: Vec<u8>) -> Vec<Job> {
    let mut jobs = vec![Job {
        key: "session".into(),
        path: "session.json".into(),
        fetch: Fetch::Known(session_record),
    }];
    for dataset in Dataset::ALL {
        if dataset.deprecated() && !context.include_deprecated {
            continue;
        }
        jobs.push(Job {
            key: dataset_key(dataset),
            path: format!("datasets/{}.json", dataset.name()),
            fetch: Fetch::Dataset(dataset),
        });
    }
    jobs.push(Job {
        key: "report".into(),
        path: "report.pdf".into(),
        fetch: Fetch::Pdf,
    });
    jobs.push(Job {
        key: "transactions-excel".into(),
        path: "transactions.xlsx".into(),
        fetch: Fetch::TransactionsExcel,
    });
    jobs
}

fn dataset_key(dataset: Dataset) -> String {
    format!("dataset:{}", dataset.name())
}

/// The datasets this run leaves out on purpose, so that a complete session says what it does
/// not contain: those the service deprecates, unless `--include-deprecated`.
fn skipped_datasets(context: &Context<'_>) -> Vec<SkippedFile> {
    if context.include_deprecated {
        return Vec::new();
    }
    Dataset::ALL
        .into_iter()
        .filter_map(|dataset| {
            dataset.deprecation().map(|note| SkippedFile {
                key: dataset_key(dataset),
                reason: format!("{note} (exported with --include-deprecated)"),
            })
        })
        .collect()
}

/// Exports one session: keeps what verifies against its manifest, fetches the rest, then
/// writes its manifest (also when stopped half-way, listing what is complete).
async fn export_session(context: &Context<'_>, session: Session) -> SessionReport {
    let id = session.id;
    let relative = format!("sessions/{id}");
    let dir = context.root.join(&relative);
    let status = serde_json::to_value(&session.customer_progress_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut report = SessionReport {
        index: IndexEntry {
            id,
            status,
            complete: false,
            files: 0,
            bytes: 0,
            failed: 0,
            manifest: format!("{relative}/{}", manifest::SESSION_MANIFEST),
        },
        fetched: 0,
        kept: 0,
        repaired: 0,
        bytes_fetched: 0,
        failures: Vec::new(),
        fatal: None,
    };
    if let Err(error) = store::create_private_dir_all(&dir) {
        report.fatal = Some(local(error));
        return report;
    }
    store::remove_leftovers(&dir, true);
    let record = match serde_json::to_vec_pretty(&session) {
        Ok(record) => record,
        Err(error) => {
            report.fatal = Some(Failure::Local(format!(
                "cannot render session {id}: {error}"
            )));
            return report;
        }
    };
    let mut previous = SessionManifest::load_entries(&dir, id);
    // A session that changed since the last run (its status, its packages...) may have other
    // data now: nothing of the last run is trusted.
    let record_digest = store::digest_of(&record);
    if previous
        .get("session")
        .is_some_and(|entry| entry.sha256 != record_digest.sha256)
    {
        previous.clear();
    }

    let mut complete: BTreeMap<String, FileEntry> = BTreeMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut interrupted = false;
    let mut pending = FuturesUnordered::new();
    let jobs = initial_jobs(context, record);
    // A session is complete only if each of these is there: every dataset of the description
    // (but those skipped on purpose), the session record, the report.
    let expected: Vec<String> = jobs.iter().map(|job| job.key.clone()).collect();
    for job in jobs {
        seen.insert(job.key.clone());
        let earlier = previous.remove(&job.key);
        pending.push(obtain(context, &dir, id, job, earlier));
    }
    while let Some((job, result)) = pending.next().await {
        match result {
            Ok(obtained) => {
                if let Some(content) = &obtained.content {
                    for next in job.listed(content) {
                        if seen.insert(next.key.clone()) {
                            let earlier = previous.remove(&next.key);
                            pending.push(obtain(context, &dir, id, next, earlier));
                        }
                    }
                }
                if obtained.fetched {
                    report.fetched += 1;
                    report.repaired += u64::from(obtained.repaired);
                    report.bytes_fetched += obtained.bytes_fetched;
                    context.progress.file_fetched();
                } else {
                    report.kept += 1;
                    context.progress.file_kept();
                }
                complete.insert(obtained.entry.key.clone(), obtained.entry);
            }
            Err(Missed::Interrupted) => interrupted = true,
            Err(Missed::Client(error)) => {
                context.progress.file_failed();
                if client_exit_status(&error) == EXIT_AUTH {
                    context.stop.send_replace(true);
                    report.failures.push(FailedFile {
                        key: job.key,
                        reason: "authentication failed".into(),
                    });
                    report.fatal.get_or_insert(Failure::from(error));
                } else {
                    report.failures.push(FailedFile {
                        key: job.key,
                        reason: crate::terminal::one_line(
                            &creditdata_client::error::DisplayChain(&error).to_string(),
                        ),
                    });
                }
            }
            // A local file that cannot be written will not be written for the next session
            // either (disk full, permissions): stop, leaving a resumable tree.
            Err(Missed::Local(message)) => {
                context.progress.file_failed();
                context.stop.send_replace(true);
                report.failures.push(FailedFile {
                    key: job.key,
                    reason: message.clone(),
                });
                report.fatal.get_or_insert(Failure::Local(message));
            }
        }
    }
    report.index.failed = report.failures.len() as u64;
    report.index.complete = !interrupted
        && report.failures.is_empty()
        && expected.iter().all(|key| complete.contains_key(key));
    report.index.files = complete.len() as u64;
    report.index.bytes = complete.values().map(|entry| entry.bytes).sum();
    let manifest = SessionManifest {
        format: manifest::FORMAT.to_string(),
        session_id: id,
        complete: report.index.complete,
        exported_at: chrono::Utc::now(),
        files: complete.into_values().collect(),
        failed: report.failures.clone(),
        skipped: skipped_datasets(context),
    };
    if let Err(error) = manifest.save(&dir).await {
        report.index.complete = false;
        report.fatal.get_or_insert(local(error));
    }
    report
}

/// Makes one file complete: keeps it when it verifies against `earlier` (its last manifest
/// entry), otherwise fetches it, unless the export is stopping.
async fn obtain(
    context: &Context<'_>,
    dir: &Path,
    session_id: Uuid,
    job: Job,
    earlier: Option<FileEntry>,
) -> (Job, Result<Obtained, Missed>) {
    let keep_content = job.lists_files();
    let mut repaired = false;
    if let Some(entry) = earlier {
        let path = dir.join(&entry.path);
        if let Some(content) = store::verify_off_thread(path, entry.digest(), keep_content).await {
            let kept = Obtained {
                entry,
                fetched: false,
                repaired: false,
                bytes_fetched: 0,
                content,
            };
            return (job, Ok(kept));
        }
        repaired = true;
    }
    if context.stopping() {
        return (job, Err(Missed::Interrupted));
    }
    let result = tokio::select! {
        biased;
        () = context.stopped() => Err(Missed::Interrupted),
        result = fetch(context, dir, session_id, &job, keep_content) => result,
    };
    let result = result.map(|mut obtained| {
        obtained.repaired = repaired;
        obtained
    });
    (job, result)
}

/// Fetches one file into place, holding one of the export's permits while it talks to the
/// service.
async fn fetch(
    context: &Context<'_>,
    dir: &Path,
    session_id: Uuid,
    job: &Job,
    keep_content: bool,
) -> Result<Obtained, Missed> {
    let client = context.client;
    let bytes_of = |value: &Value| {
        serde_json::to_vec_pretty(value)
            .map_err(|e| Missed::Local(format!("cannot render {}: {e}", job.key)))
    };
    // Bytes at hand need no request, hence no permit.
    let _permit = match job.fetch {
        Fetch::Known(_) => None,
        _ => Some(
            context
                .permits
                .acquire()
                .await
                .map_err(|e| Missed::Local(e.to_string()))?,
        ),
    };
    let download = match &job.fetch {
        Fetch::Known(content) => {
            return write_known(context, dir, job, content.clone(), keep_content).await;
        }
        Fetch::Dataset(name) => {
            let value = crate::datasets::fetch(client, session_id, *name).await?;
            return write_known(context, dir, job, bytes_of(&value)?, keep_content).await;
        }
        Fetch::IdentityImages(verification) => {
            let images = client
                .get_identity_verification_images()
                .session_id(session_id)
                .verification_id(verification.as_str())
                .call()
                .await?;
            let value = crate::output::to_value(&images)?;
            return write_known(context, dir, job, bytes_of(&value)?, keep_content).await;
        }
        Fetch::SourceFile(source_file) => {
            let decoded = client.source_file_bytes(session_id, *source_file).await?;
            // The source file's `type` (`XML`, `JSON`...) names its format.
            let extension = decoded
                .file_type
                .as_deref()
                .and_then(|kind| store::extension_of(Some(&format!("source.{kind}"))))
                .unwrap_or_default();
            let job = Job {
                path: format!("{}{extension}", job.path),
                ..job.clone()
            };
            return write_known(context, dir, &job, decoded.bytes, keep_content).await;
        }
        Fetch::Pdf => {
            client
                .get_pdf_report()
                .session_id(session_id)
                .download()
                .await?
        }
        Fetch::TransactionsExcel => {
            client
                .get_account_statement_transactions_excel()
                .session_id(session_id)
                .download()
                .await?
        }
        Fetch::StatementExcel(statement) => {
            client
                .get_account_statement_excel()
                .session_id(session_id)
                .account_statement_id(statement.as_str())
                .download()
                .await?
        }
        Fetch::StatementTsv(statement) => {
            client
                .get_account_statement_tsv()
                .session_id(session_id)
                .account_statement_id(statement.as_str())
                .download()
                .await?
        }
        Fetch::Attachment(attachment) => {
            client
                .get_attachment_content()
                .session_id(session_id)
                .attachment_id(attachment.as_str())
                .download()
                .await?
        }
        Fetch::Image(verification, image) => {
            client
                .get_identity_verification_image_content()
                .session_id(session_id)
                .verification_id(verification.as_str())
                .image_id(image.as_str())
                .download()
                .await?
        }
    };
    write_download(context, dir, job, download).await
}

/// Writes bytes at hand (a dataset, a decoded source file) into place.
async fn write_known(
    context: &Context<'_>,
    dir: &Path,
    job: &Job,
    content: Vec<u8>,
    keep_content: bool,
) -> Result<Obtained, Missed> {
    let digested = store::write_bytes(&dir.join(&job.path), &content).await?;
    context.progress.bytes(digested.bytes);
    Ok(Obtained {
        entry: FileEntry {
            key: job.key.clone(),
            path: job.path.clone(),
            bytes: digested.bytes,
            sha256: digested.sha256,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        content: keep_content.then_some(content),
    })
}

/// Streams a download into place; files whose kind the path does not say (attachments,
/// images) get the extension of the server's file name or content type.
async fn write_download(
    context: &Context<'_>,
    dir: &Path,
    job: &Job,
    download: Download,
) -> Result<Obtained, Missed> {
    let path = if matches!(job.fetch, Fetch::Attachment(_) | Fetch::Image(..)) {
        let extension = store::extension_of(download.file_name())
            .or_else(|| store::extension_for_content_type(download.content_type()))
            .unwrap_or_default();
        format!("{}{extension}", job.path)
    } else {
        job.path.clone()
    };
    let target: PathBuf = dir.join(&path);
    let digested = store::write_stream(&target, download.bytes_stream(), |received| {
        context.progress.bytes(received)
    })
    .await?;
    Ok(Obtained {
        entry: FileEntry {
            key: job.key.clone(),
            path,
            bytes: digested.bytes,
            sha256: digested.sha256,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        content: None,
    })
}
