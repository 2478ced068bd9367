//! One session through the export's steps: plan its files, obtain each (kept or fetched),
//! follow what the datasets list, and record the outcome in its manifest.

use std::collections::{BTreeMap, HashSet};

use creditdata_client::error::DisplayChain;
use creditdata_client::types::Session;
use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::fetch::{Missed, obtain};
use super::manifest::{FailedFile, FileEntry, SessionManifest};
use super::record::SessionReport;
use super::{Context, local, plan, store};
use crate::failure::{EXIT_AUTH, Failure, client_exit_status};

/// Exports one session: keeps what verifies against its manifest, fetches the rest, then
/// writes its manifest (also when stopped half-way, listing what is complete).
pub async fn export_session(context: &Context<'_>, session: Session) -> SessionReport {
    let id = session.id;
    let dir = context.root.join(format!("sessions/{id}"));
    let status = serde_json::to_value(&session.customer_progress_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut report = SessionReport::new(id, status);
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
    let jobs = plan::initial_jobs(context.include_deprecated, record);
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
                        reason: crate::terminal::one_line(&DisplayChain(&error).to_string()),
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
    report
        .record(
            &dir,
            context.include_deprecated,
            &expected,
            complete,
            interrupted,
        )
        .await;
    report
}
