//! One session through the export's steps: plan its files, read its datasets together (each
//! streamed to its file as the service sent it and read back entry by entry, which says how far
//! its providers have got and what its listings list) or keep them when the last run found them
//! final, obtain
//! every other file (kept or fetched), follow what the datasets list, and record the outcome in
//! its manifest.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use creditdata_client::Error;
use creditdata_client::error::DisplayChain;
use creditdata_client::readiness::ProviderStatus;
use creditdata_client::session_datasets::{Dataset, Gate, Readiness};
use creditdata_client::types::Session;
use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::context::{Context, local};
use super::fetch::{Missed, Obtained, dataset_bound, kept_listing, obtain, write_read};
use super::manifest::{
    DatasetReadiness, FailedFile, FileEntry, Previous, ProviderEntry, SessionManifest,
    SessionReadiness,
};
use super::plan::{DatasetFile, Job, Listings, Plan, reading_of};
use super::record::SessionReport;
use super::store;
use crate::failure::{EXIT_AUTH, Failure, client_exit_status};

/// Exports one session: keeps what verifies against its manifest (and, for its datasets and
/// session-wide files, only when the last run found every provider's answer final), fetches the
/// rest, then writes its manifest (also when stopped half-way, listing what is complete).
pub async fn export_session(context: &Context<'_>, session: Session) -> SessionReport {
    let id = session.id;
    // Relative to the tree, which opens it without following links.
    let dir = Path::new("sessions").join(id.to_string());
    let status = serde_json::to_value(&session.customer_progress_status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut report = SessionReport::new(id, status);
    if let Err(error) = context.tree.create_dir_all(&dir) {
        report.fatal = Some(local(error));
        return report;
    }
    context.tree.remove_leftovers(&dir, true);
    let record = match serde_json::to_vec_pretty(&session) {
        Ok(record) => record,
        Err(error) => {
            report.fatal = Some(Failure::Local(format!(
                "cannot render session {id}: {error}"
            )));
            return report;
        }
    };
    let mut previous = SessionManifest::load(context.tree, &dir, id);
    // Its claim to be complete is taken back before any of its files is replaced.
    if let Err(error) = previous.retract(context.tree, &dir).await {
        report.fatal = Some(local(error));
        return report;
    }
    // A session that changed since the last run (its status, its packages...) may have other
    // data now: nothing of the last run is trusted.
    let record_digest = store::digest_of(&record);
    if previous
        .entries
        .get("session")
        .is_some_and(|entry| entry.sha256 != record_digest.sha256)
    {
        previous = Previous::default();
    }
    let settled_before = previous.readiness.is_settled();
    let plan = Plan::new(context.include_deprecated, record);
    // Complete only if each of these is there: the session record, every dataset of the
    // description (but those skipped on purpose), the session-wide files.
    let expected = plan.expected();
    let fixed: Vec<&str> = std::iter::once(plan.record.path.as_str())
        .chain(plan.datasets.iter().map(|file| file.path.as_str()))
        .chain(plan.session_wide.iter().map(|job| job.path.as_str()))
        .collect();
    let listings = Listings::new(context.max_listed_files, &fixed);
    let mut run = SessionRun {
        context,
        dir: &dir,
        report,
        complete: BTreeMap::new(),
        listings,
        interrupted: false,
        readiness: HashMap::new(),
    };

    // Files waiting their turn, as plain data; at most `--concurrency` of the whole export's
    // are being obtained at once (`Context::live`).
    let mut queue: VecDeque<(Job, Option<FileEntry>)> = VecDeque::new();
    let kept = if settled_before {
        keep_datasets(context, &dir, &plan.datasets, &previous).await
    } else {
        None
    };
    match kept {
        Some(kept) => {
            run.report.readiness = previous.readiness;
            run.report.failed_providers = previous.failed_providers.clone();
            for (file, obtained) in kept {
                let job = file.job();
                run.listings.plan(&job.key);
                for next in run.obtained(&job, obtained) {
                    let earlier = earlier_of(&mut previous, &next);
                    queue.push_back((next, earlier));
                }
            }
        }
        None => {
            // Every dataset is streamed to its file as the service sends it and read back
            // entry by entry (its providers' statuses; what a listing lists), all at once, each
            // holding one of the export's permits: memory holds a chunk and what is kept per
            // dataset, never an answer.
            let streams = plan.datasets.iter().map(|file| {
                let earlier = previous.entries.remove(&file.key);
                stream_dataset(context, &dir, id, file, earlier)
            });
            let results = futures::future::join_all(streams.collect::<Vec<_>>()).await;
            let read: Vec<_> = plan.datasets.iter().zip(results).collect();
            // "complete" is judged on the default gate; each dataset's own record on what its
            // answer says, gated or not (a dataset a release added included).
            let mut readiness = Readiness::new(Gate::Default);
            let mut every = Readiness::new(Gate::Every);
            for (file, result) in &read {
                readiness.replace(file.dataset, statuses_of(file.dataset, result));
                every.replace(file.dataset, statuses_of(file.dataset, result));
            }
            run.note_readiness(&readiness);
            for (file, result) in read {
                run.readiness
                    .insert(file.key.clone(), DatasetReadiness::of(file.dataset, &every));
                run.listings.plan(&file.key);
                match result {
                    Ok(obtained) => {
                        for next in run.obtained(&file.job(), obtained) {
                            let earlier = earlier_of(&mut previous, &next);
                            queue.push_back((next, earlier));
                        }
                    }
                    Err(missed) => run.missed(file.key.clone(), missed),
                }
            }
        }
    }
    // The record, then what is made of all of the session's data: from the last run only when
    // its providers had all answered then (this run read the datasets before fetching these).
    let mut rest = vec![plan.record];
    rest.extend(plan.session_wide.iter().cloned());
    for job in rest {
        run.listings.plan(&job.key);
        let earlier = previous.entries.remove(&job.key);
        let earlier = earlier.filter(|_| settled_before || job.key == "session");
        queue.push_back((job, earlier));
    }
    let session_dir: &Path = &dir;
    let mut pending = FuturesUnordered::new();
    loop {
        // Start what the export's free slots allow; wait for one only when nothing of this
        // session is under way (its own files free slots otherwise).
        while !queue.is_empty() {
            let slot = if pending.is_empty() {
                context.live.acquire().await
            } else {
                match context.live.try_acquire() {
                    Ok(slot) => Ok(slot),
                    Err(_) => break,
                }
            };
            let Ok(slot) = slot else { break };
            let Some((job, earlier)) = queue.pop_front() else {
                break;
            };
            context.note_live();
            pending.push(async move {
                let obtained = obtain(context, session_dir, id, job, earlier).await;
                drop(slot);
                obtained
            });
        }
        let Some((job, result)) = pending.next().await else {
            break;
        };
        match result {
            Ok(obtained) => {
                for next in run.obtained(&job, obtained) {
                    let earlier = earlier_of(&mut previous, &next);
                    queue.push_back((next, earlier));
                }
            }
            Err(missed) => run.missed(job.key, missed),
        }
    }
    run.finish(&expected).await
}

/// A listed file's entry of the last run, when it was written under the name this run decided
/// (a name decided otherwise then, say before two ids were kept apart, is fetched again).
fn earlier_of(previous: &mut Previous, job: &Job) -> Option<FileEntry> {
    previous
        .entries
        .remove(&job.key)
        .filter(|entry| entry.path == job.path)
}

/// Streams a dataset to its file, holding one of the export's permits, and reads it back
/// entry by entry (see [`write_read`]): memory holds a chunk and what the plan takes, whatever
/// the answer's size.
async fn stream_dataset(
    context: &Context<'_>,
    dir: &Path,
    id: uuid::Uuid,
    file: &DatasetFile,
    earlier: Option<FileEntry>,
) -> Result<Obtained, Missed> {
    let job = file.job();
    let reading = reading_of(&job.fetch, context.max_listed_files);
    let earlier = earlier.filter(|entry| entry.path == file.path);
    let stream = async {
        let _permit = context
            .permits
            .acquire()
            .await
            .map_err(|e| Missed::Local(e.to_string()))?;
        let download = context
            .client
            .session_dataset_stream(id, file.dataset)
            .await?;
        let bound = dataset_bound(context, file.dataset);
        write_read(context, dir, &job, download, bound, reading, earlier).await
    };
    tokio::select! {
        biased;
        () = context.stopped() => Err(Missed::Interrupted),
        result = stream => result,
    }
}

/// What a streamed dataset says of its providers, for the session's readiness.
fn statuses_of(
    dataset: Dataset,
    result: &Result<Obtained, Missed>,
) -> Result<Vec<ProviderStatus>, Error> {
    match result {
        Ok(obtained) => Ok(obtained
            .listing
            .as_ref()
            .map(|listing| listing.statuses.clone())
            .unwrap_or_default()),
        Err(Missed::Client(error)) => Err(error.clone()),
        Err(Missed::Refused(message) | Missed::Local(message)) => Err(Error::InvalidResponse {
            operation: Some(dataset.operation_id()),
            message: message.clone(),
        }),
        Err(Missed::Interrupted) => Err(Error::InvalidResponse {
            operation: Some(dataset.operation_id()),
            message: "not read: the export was interrupted".into(),
        }),
    }
}

/// The datasets of the last run, when every one of them still verifies (with its readiness
/// recorded; a listing read again in the same pass); `None` as soon as one does not, and then
/// they are all read again.
async fn keep_datasets(
    context: &Context<'_>,
    dir: &Path,
    files: &[DatasetFile],
    previous: &Previous,
) -> Option<Vec<(DatasetFile, Obtained)>> {
    let mut kept = Vec::with_capacity(files.len());
    for file in files {
        let entry = previous.entries.get(&file.key)?;
        entry.readiness.as_ref()?;
        let reading = reading_of(&file.job().fetch, context.max_listed_files);
        let listing = kept_listing(context, dir.join(&entry.path), entry, reading).await?;
        let mut entry = entry.clone();
        entry.operation = Some(file.dataset.operation_id().to_string());
        kept.push((
            file.clone(),
            Obtained {
                entry,
                fetched: false,
                repaired: false,
                bytes_fetched: 0,
                listing,
            },
        ));
    }
    Some(kept)
}

/// One session's export as it goes.
struct SessionRun<'a, 'c> {
    context: &'a Context<'c>,
    dir: &'a Path,
    report: SessionReport,
    complete: BTreeMap<String, FileEntry>,
    /// The files planned so far, their names, and the bounds on what listings add.
    listings: Listings,
    interrupted: bool,
    /// What this run read of each dataset's providers, by key.
    readiness: HashMap<String, DatasetReadiness>,
}

impl SessionRun<'_, '_> {
    /// Records what the session's datasets said of its providers.
    fn note_readiness(&mut self, readiness: &Readiness) {
        self.report.readiness = SessionReadiness::of(readiness);
        self.report.pending_providers = readiness.pending.iter().map(ProviderEntry::from).collect();
        self.report.failed_providers = readiness.failed.iter().map(ProviderEntry::from).collect();
    }

    /// Counts a complete file in, and returns the files its content lists (not seen yet).
    fn obtained(&mut self, job: &Job, mut obtained: Obtained) -> Vec<Job> {
        let mut next = Vec::new();
        if let Some(listing) = obtained.listing.take() {
            let listed = self.listings.of(job, listing.entries);
            next = listed.jobs;
            if listed.beyond > 0 {
                self.beyond_limit(&job.key, listed.beyond);
            }
            if let Some(reason) = listed.unusable {
                // Entries whose files cannot be named or fetched: the session is not complete.
                self.context.progress.file_failed();
                self.report.failures.push(FailedFile {
                    key: format!("{}:unusable-entries", job.key),
                    reason,
                });
            }
            self.report.skipped.extend(listed.skipped);
        }
        let progress = self.context.progress;
        if obtained.fetched {
            self.report.fetched += 1;
            self.report.repaired += u64::from(obtained.repaired);
            self.report.bytes_fetched += obtained.bytes_fetched;
            progress.file_fetched();
        } else {
            self.report.kept += 1;
            progress.file_kept();
        }
        if let Some(readiness) = self.readiness.remove(&obtained.entry.key) {
            obtained.entry.readiness = Some(readiness);
        }
        self.complete
            .insert(obtained.entry.key.clone(), obtained.entry);
        next
    }

    /// Records the ids a listing had beyond `--max-listed-files` as the session's failure: the
    /// session is not complete, and the message says how to take them.
    fn beyond_limit(&mut self, key: &str, beyond: u64) {
        let limit = self.context.max_listed_files;
        self.context.progress.file_failed();
        self.report.beyond_limit += beyond;
        self.report.failures.push(FailedFile {
            key: format!("{key}:beyond-limit"),
            reason: format!(
                "lists {beyond} more file(s) than --max-listed-files {limit} takes; they were \
                 not exported: export again with a larger --max-listed-files to take them"
            ),
        });
    }

    /// Counts in a file that could not be made complete.
    fn missed(&mut self, key: String, missed: Missed) {
        let context = self.context;
        let report = &mut self.report;
        match missed {
            Missed::Interrupted => self.interrupted = true,
            Missed::Client(error) => {
                context.progress.file_failed();
                if client_exit_status(&error) == EXIT_AUTH {
                    context.stop.send_replace(true);
                    report.failures.push(FailedFile {
                        key,
                        reason: "authentication failed".into(),
                    });
                    report.fatal.get_or_insert(Failure::from(error));
                } else {
                    report.failures.push(FailedFile {
                        key,
                        reason: crate::terminal::one_line(&DisplayChain(&error).to_string()),
                    });
                }
            }
            Missed::Refused(reason) => {
                context.progress.file_failed();
                report.failures.push(FailedFile { key, reason });
            }
            // A local file that cannot be written will not be written for the next session
            // either (disk full, permissions): stop, leaving a resumable tree.
            Missed::Local(message) => {
                context.progress.file_failed();
                context.stop.send_replace(true);
                report.failures.push(FailedFile {
                    key,
                    reason: message.clone(),
                });
                report.fatal.get_or_insert(Failure::Local(message));
            }
        }
    }

    async fn finish(self, expected: &[String]) -> SessionReport {
        let mut report = self.report;
        report
            .record(
                self.context.tree,
                self.dir,
                self.context.include_deprecated,
                expected,
                self.complete,
                self.interrupted,
            )
            .await;
        report
    }
}
