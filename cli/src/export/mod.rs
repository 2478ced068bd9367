//! `creditdata export`: every session the search matches, to a directory tree (see
//! `cli/README.md`, "Export").
//!
//! ```text
//! OUT/manifest.json                        the run's index (filters, sessions, totals)
//! OUT/.creditdata-export.lock             the last export's process id (the lock is on OUT)
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
//! OUT/sessions/ID/source-files/FID.json    ...and its entry, as answered alone
//! OUT/sessions/ID/LISTING/EID[-WORDS].EXT  any other entry operation's answer
//! OUT/sessions/ID/WORDS.EXT                any other file of the session
//! ```
//!
//! Which files there are is read from the generated metadata ([`files`]): the session's own
//! files and every operation a listed entry leads to, each one `GET` by its operation's metadata
//! ([`fetch`]), so an operation a release adds is exported with no edit here. Names come from ids,
//! never from the service's suggested file names (which may carry a person's name).
//!
//! The modules follow the data: [`list`] the matching sessions, [`files`] what the description
//! gives a session and the names of its files, [`plan`] each session's files
//! (the bounds on what listings add, and their names), [`fetch`] each file (or keep it when it
//! verifies), [`store`] writes it atomically inside the tree (the confinement), [`record`]
//! the session's manifest, the run's index, the summary and the exit status; [`session`] drives
//! one session through them, this module the whole run, holding the directory's [`lock`]. What
//! they all share (the client, the tree, the bounds, the stop signal) is the run's
//! [`Context`], in [`context`], below every step: this module builds on its children and holds
//! nothing they import.
//!
//! Work flows through one queue per session: a dataset that lists entries (account statements,
//! attachments, identity verifications, source files...) adds the downloads of every operation
//! its entries lead to as soon as it is there, and every request of every session waits for one of `--concurrency` permits (and,
//! with `--rate-limit`, for the client's rate limiter).
//!
//! What one export holds at once is bounded whatever the service sends (`cli/README.md`,
//! "Memory"; measured in BENCHMARKS.md, "Memory follows the data"):
//!
//! - answers in flight: at most `--concurrency` (`Context::permits`, across all sessions), each
//!   streamed to its file and read back one entry at a time ([`crate::answer::read`]): a chunk,
//!   the reader's 64 KiB buffer and one entry of at most [`crate::answer::MAX_ENTRY_BYTES`],
//!   never the answer, whatever its size or shape;
//! - sessions in flight: at most `max(--concurrency, 2)`, each holding its plan: at most
//!   `--max-listed-files` entries per listing (ids of at most [`crate::answer::MAX_ID_BYTES`])
//!   and the files waiting their turn as plain data;
//! - answers held whole: [`ANSWERS_HELD`] (`Context::held`), a source file's content (Base64
//!   inside JSON, decoded and checked), within the client's limit on an answer
//!   (`max_response_body`): the body, its Base64 text and the decoded bytes, about 2.75 times
//!   the answer.
//!
//! So the peak is a fixed base plus `--concurrency` x ~1.2 MiB, plus the sessions' plans, plus
//! one source file's decode; it does not grow with a dataset's or a listing's size.
//!
//! With a rate-limit store (`--rate-limit-store`), the limit is shared with every process of the
//! same API client, and [`share`] claims each session through the store before it is exported,
//! so that workers started with the same filters each export their part.

mod context;
mod fetch;
mod files;
mod interrupt;
mod list;
mod lock;
mod manifest;
mod plan;
mod progress;
mod record;
#[cfg(test)]
mod released;
mod session;
mod share;
mod store;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use creditdata_client::rate_limit::RateLimitStore;
use creditdata_client::{Client, ClientInfo};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::{Semaphore, oneshot, watch};

use crate::cli::{ExportArgs, GlobalArgs};
use crate::failure::Failure;
use crate::output::Output;
use context::{Context, local};
use manifest::IndexWriter;
use progress::Progress;
use record::{RunSummary, Totals};

/// How many answers the export holds in memory at once (see [`Context::held`]).
const ANSWERS_HELD: usize = 1;

/// At most this many failures and providers are named one by one; the rest are in the
/// session manifests.
const NOTES_SHOWN: u64 = 20;

/// What is named on stderr as sessions finish: failures, pending and failed providers.
#[derive(Default)]
struct Notes {
    shown: u64,
}

impl Notes {
    fn add(&mut self, progress: &Progress, text: &str) {
        self.shown += 1;
        if self.shown <= NOTES_SHOWN {
            progress.note(text);
        } else if self.shown == NOTES_SHOWN + 1 {
            progress
                .note("further failures and providers are listed in the sessions' manifest.json");
        }
    }
}

/// Runs `creditdata export`.
pub async fn run(global: &GlobalArgs, out: Output, args: ExportArgs) -> Result<(), Failure> {
    let root = args.out.clone();
    if root.exists() && !root.is_dir() {
        return Err(Failure::Usage(format!(
            "--out {}: not a directory; give a directory (it is created if missing)",
            root.display()
        )));
    }
    let tree = store::Tree::open(&root).map_err(|e| Failure::Usage(e.0))?;
    let _lock = lock::DirectoryLock::take(&root).map_err(Failure::Usage)?;
    tree.create_dir_all(Path::new("sessions"))
        .map_err(|e| Failure::Usage(e.0))?;
    tree.remove_leftovers(Path::new(""), false);
    let rate_limit = args.rate_limit;
    let store = args
        .rate_limit_store
        .as_deref()
        .map(store_option)
        .transpose()?;
    if args.lease_ttl < std::time::Duration::from_secs(1) {
        return Err(Failure::Usage(
            "--lease-ttl must be at least 1s (leases are renewed every third of it)".into(),
        ));
    }
    let connection = crate::settings::connect_with(global, |builder| {
        let builder = match rate_limit {
            Some(limit) => builder.rate_limit(limit),
            None => builder,
        };
        match store {
            Some(store) => builder.rate_limit_store(store),
            None => builder,
        }
    })?;
    let had_credentials = connection.has_credentials;
    let outcome = export(&connection.client, out, &tree, &args).await;
    outcome.map_err(|failure| match failure {
        Failure::Client { error, .. } => Failure::Client {
            error,
            had_credentials,
        },
        other => other,
    })
}

async fn export(
    client: &Client,
    out: Output,
    tree: &store::Tree,
    args: &ExportArgs,
) -> Result<(), Failure> {
    let root = tree.root();
    let started_at = chrono::Utc::now();
    let started = std::time::Instant::now();
    let store = client
        .inner()
        .rate_limiter()
        .and_then(|limiter| limiter.store());
    let share = match store {
        Some((store, namespace)) if !args.no_share_work => Some(
            share::WorkShare::join(
                store,
                namespace,
                &list::filters_json(&args.filters),
                tree,
                args.lease_ttl,
            )
            .await?,
        ),
        _ => None,
    };
    let mut index =
        IndexWriter::start(root, started_at, &list::filters_json(&args.filters)).map_err(local)?;
    let progress = Progress::new();
    let (stop, _) = watch::channel(false);
    let context = Context {
        client,
        tree,
        include_deprecated: args.include_deprecated,
        concurrency: usize::from(args.concurrency),
        permits: Semaphore::new(usize::from(args.concurrency)),
        max_listed_files: usize::try_from(args.max_listed_files).unwrap_or(usize::MAX),
        max_listing_bytes: args.max_listing_bytes,
        live: Semaphore::new(usize::from(args.concurrency)),
        held: Semaphore::new(ANSWERS_HELD),
        peak_live: AtomicUsize::new(0),
        stop,
        progress: &progress,
    };
    let (noticed, mut interrupt_noticed) = oneshot::channel();
    let interrupts = tokio::spawn(interrupt::stop_on_interrupt(
        interrupt::Interrupts::listen(),
        context.stop.clone(),
        noticed,
    ));

    let sessions =
        list::sessions(client, &args.filters, &progress).take_until(Box::pin(context.stopped()));
    // With the work shared, each session is claimed through the store before it is exported.
    let work = match &share {
        None => sessions
            .map(|item| {
                item.map(|session| share::Work {
                    session,
                    lease: None,
                })
                .map_err(Failure::from)
            })
            .boxed_local(),
        Some(share) => share
            .claimed(client, Box::pin(sessions), context.stop.subscribe())
            .boxed_local(),
    };
    // Enough sessions in flight to keep every permit busy while one session waits on a dataset
    // that lists its files; each holds only its own small manifest.
    let sessions_in_flight = usize::from(args.concurrency).max(2);
    let mut reports = work
        .map(|item| {
            let context = &context;
            let share = share.as_ref();
            async move {
                let work = item?;
                let export = crate::telemetry::in_span(
                    "export session",
                    session::export_session(context, work.session),
                );
                Ok(match (share, work.lease) {
                    (Some(share), Some(lease)) => {
                        share
                            .run(lease, export, |report| outcome(context, report))
                            .await
                    }
                    _ => Some(export.await),
                })
            }
        })
        .buffer_unordered(sessions_in_flight);

    let mut totals = Totals::default();
    let mut fatal: Option<Failure> = None;
    let mut notes = Notes::default();
    let mut noticed = false;
    loop {
        let report = tokio::select! {
            report = reports.next() => match report {
                Some(report) => report,
                None => break,
            },
            Ok(()) = &mut interrupt_noticed, if !noticed => {
                noticed = true;
                progress.note(interrupt::NOTICE);
                continue;
            }
        };
        match report {
            // A session whose lease this worker lost: another worker exports it.
            Ok(None) => {}
            Ok(Some(report)) => {
                let id = report.index.id;
                for failed in &report.failures {
                    notes.add(
                        &progress,
                        &format!("warning: session {id}: {}: {}", failed.key, failed.reason),
                    );
                }
                for (what, providers) in [
                    ("pending", &report.pending_providers),
                    ("failed", &report.failed_providers),
                ] {
                    for provider in providers {
                        notes.add(&progress, &format!("session {id}: {what}: {provider}"));
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
            // The search failed (after the client's retries), or the store stopped answering:
            // what is left is unknown.
            Err(failure) => {
                fatal.get_or_insert(failure);
                context.stop.send_replace(true);
            }
        }
    }
    drop(reports);
    interrupts.abort();
    if !noticed && interrupt_noticed.try_recv().is_ok() {
        progress.note(interrupt::NOTICE);
    }
    let interrupted = fatal.is_none() && context.stopping();
    tracing::info!(
        files_obtained_at_once = context.peak_live.load(Ordering::Relaxed),
        concurrency = context.concurrency,
        "export: the most files obtained at once"
    );
    progress.finish(&totals.to_json(), interrupted);

    let rate_limiter = client.inner().rate_limiter().map(|limiter| {
        let status = limiter.status();
        json!({
            "limit": status.configured.to_string(),
            "admitted": status.admitted,
            "throttled": status.throttled,
            "slowdowns": status.slowdowns,
            "store": limiter.store_status().map(|store| json!({
                "store": store.store,
                "shared": store.shared,
                "replicasSeen": store.replicas_seen,
                "outages": store.outages,
                "sharedAdmissions": store.shared_admissions,
                "localAdmissions": store.local_admissions,
            })),
        })
    });
    let tail = json!({
        "finishedAt": chrono::Utc::now(),
        "interrupted": interrupted,
        "totals": totals.to_json(),
    });
    if let Err(error) = index.finish(&tail).await {
        fatal.get_or_insert(local(error));
    }
    let summary = RunSummary {
        root,
        interrupted,
        elapsed_seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        totals: &totals,
        rate_limiter,
        shared_work: share.as_ref().map(share::WorkShare::summary),
    };
    if let Some(share) = share {
        share.leave().await;
    }
    summary.print(out)?;
    match fatal {
        Some(failure) => Err(failure),
        None => summary.outcome(),
    }
}

/// `--rate-limit-store`: a Redis URL without a password (an option shows in every process
/// list; the variable is the place for one).
fn store_option(url: &str) -> Result<RateLimitStore, Failure> {
    let store = RateLimitStore::redis(url)
        .map_err(|e| Failure::Usage(format!("--rate-limit-store: {e}")))?;
    if store.shown_url().contains("[redacted]@") {
        return Err(Failure::Usage(format!(
            "--rate-limit-store {store}: a password on the command line shows in every process \
             list; put the URL in CREDITDATA_RATE_LIMIT_STORE instead"
        )));
    }
    Ok(store)
}

/// How a claimed session's export ended, for the other workers.
fn outcome(context: &Context<'_>, report: &record::SessionReport) -> share::Outcome {
    if context.stopping() && report.fatal.is_none() {
        return share::Outcome::Interrupted;
    }
    share::Outcome::Done(match report.index.state {
        manifest::SessionState::Complete => "complete",
        manifest::SessionState::Partial => "partial",
        manifest::SessionState::Failed => "failed",
    })
}
