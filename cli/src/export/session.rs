//! One session through the export's steps: plan its files, read its datasets together (which
//! says how far its providers have got; the listings streamed to their files and read back
//! entry by entry) or keep them when the last run found them final, obtain
//! every other file (kept or fetched), follow what the datasets list, and record the outcome in
//! its manifest.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

use creditdata_client::Error;
use creditdata_client::error::DisplayChain;
use creditdata_client::readiness::ProviderStatus;
use creditdata_client::session_datasets::{Dataset, Gate, Readiness, SessionDatasets};
use creditdata_client::types::Session;
use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::fetch::{Missed, Obtained, kept_listing, obtain};
use super::manifest::{
    DatasetReadiness, FailedFile, FileEntry, Previous, ProviderEntry, SessionManifest,
    SessionReadiness,
};
use super::plan::{DatasetFile, Fetch, Job, ListingOf, Listings, Plan, read_listing};
use super::record::SessionReport;
use super::{Context, local, store};
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
                let job = file.with_content(Vec::new());
                run.listings.plan(&job.key);
                for next in run.obtained(&job, obtained) {
                    let earlier = earlier_of(&mut previous, &next);
                    queue.push_back((next, earlier));
                }
            }
        }
        None => {
            // The listings are streamed to their files and read back entry by entry; the
            // other datasets are read together, decoded (each bounded by the client's limit).
            let (listing_files, held_files): (Vec<&DatasetFile>, Vec<&DatasetFile>) =
                plan.datasets.iter().partition(|file| file.lists_files());
            let streamed = listing_files.iter().map(|file| file.dataset);
            match read_datasets(context, id, streamed).await {
                Ok(read) => {
                    // "complete" is judged on the default gate; each dataset's own record on
                    // what its answer says, gated or not (a dataset a release added included).
                    let mut readiness = read.readiness();
                    let mut every = read.readiness_of(Gate::Every);
                    // The typed answers are dropped before their JSON is rendered to bytes.
                    let all = read.to_json();
                    drop(read);
                    let streams = listing_files.iter().map(|file| {
                        let earlier = previous
                            .entries
                            .remove(&file.key)
                            .filter(|entry| entry.path == file.path);
                        stream_listing(context, &dir, id, file, earlier)
                    });
                    let streams: Vec<_> = streams.collect();
                    let results = futures::future::join_all(streams).await;
                    let listings: Vec<_> = listing_files.into_iter().zip(results).collect();
                    for (file, result) in &listings {
                        readiness.replace(file.dataset, statuses_of(file.dataset, result));
                        every.replace(file.dataset, statuses_of(file.dataset, result));
                    }
                    run.note_readiness(&readiness);
                    for (dataset, result) in all {
                        let Some(file) = held_files.iter().find(|f| f.dataset == dataset) else {
                            continue;
                        };
                        run.readiness
                            .insert(file.key.clone(), DatasetReadiness::of(dataset, &every));
                        run.listings.plan(&file.key);
                        let content = match result.map(|value| serde_json::to_vec_pretty(&value)) {
                            Ok(Ok(content)) => content,
                            Ok(Err(error)) => {
                                let missed =
                                    Missed::Local(format!("cannot render {}: {error}", file.key));
                                run.missed(file.key.clone(), missed);
                                continue;
                            }
                            Err(error) => {
                                run.missed(file.key.clone(), Missed::Client(error));
                                continue;
                            }
                        };
                        // Kept as it is when the service's answer has not changed; written
                        // otherwise.
                        let earlier = previous
                            .entries
                            .remove(&file.key)
                            .filter(|entry| entry.digest() == store::digest_of(&content));
                        queue.push_back((file.with_content(content), earlier));
                    }
                    for (file, result) in listings {
                        run.readiness
                            .insert(file.key.clone(), DatasetReadiness::of(file.dataset, &every));
                        run.listings.plan(&file.key);
                        match result {
                            Ok(obtained) => {
                                let job = file.with_content(Vec::new());
                                for next in run.obtained(&job, obtained) {
                                    let earlier = earlier_of(&mut previous, &next);
                                    queue.push_back((next, earlier));
                                }
                            }
                            Err(missed) => run.missed(file.key.clone(), missed),
                        }
                    }
                }
                Err(missed) => {
                    for file in &plan.datasets {
                        run.missed(file.key.clone(), missed.duplicate());
                    }
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

/// How many of the export's permits a session's datasets take while they are read together:
/// half, so that other sessions' downloads go on meanwhile.
fn dataset_permits(context: &Context<'_>) -> usize {
    (context.concurrency / 2).max(1)
}

/// Reads every dataset of the session at once but those `streamed`, holding its share of the
/// permits.
async fn read_datasets(
    context: &Context<'_>,
    id: uuid::Uuid,
    streamed: impl IntoIterator<Item = Dataset>,
) -> Result<SessionDatasets, Missed> {
    let share = dataset_permits(context);
    let _permits = context
        .permits
        .acquire_many(u32::try_from(share).unwrap_or(1))
        .await
        .map_err(|e| Missed::Local(e.to_string()))?;
    tokio::select! {
        biased;
        () = context.stopped() => Err(Missed::Interrupted),
        read = context
            .client
            .session_datasets(id)
            .include_deprecated(context.include_deprecated)
            .leave_out(streamed)
            .concurrency(share) => read.map_err(Missed::Client),
    }
}

/// Streams a listing dataset to its file, holding one of the export's permits, and reads it
/// back entry by entry (see [`store::Tree::write_listing`]): memory holds a chunk and what the
/// plan takes, whatever the listing's length.
async fn stream_listing(
    context: &Context<'_>,
    dir: &Path,
    id: uuid::Uuid,
    file: &DatasetFile,
    earlier: Option<FileEntry>,
) -> Result<Obtained, Missed> {
    let Some(listing) = ListingOf::of(&Fetch::Dataset(file.dataset, Vec::new())) else {
        return Err(Missed::Refused(format!("{} lists no files", file.key)));
    };
    let limit = context.max_listed_files;
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
        let written = context
            .tree
            .write_listing(
                &dir.join(&file.path),
                download.bytes_stream(),
                context.max_listing_bytes,
                |received| context.progress.bytes(received),
                earlier.as_ref().map(FileEntry::digest),
                move |reader| read_listing(reader, listing, limit),
            )
            .await?;
        let fetched = !written.unchanged;
        Ok(Obtained {
            entry: FileEntry {
                key: file.key.clone(),
                path: file.path.clone(),
                bytes: written.digested.bytes,
                sha256: written.digested.sha256,
                readiness: None,
            },
            fetched,
            repaired: false,
            bytes_fetched: if fetched { written.digested.bytes } else { 0 },
            listing: Some(written.read),
        })
    };
    tokio::select! {
        biased;
        () = context.stopped() => Err(Missed::Interrupted),
        result = stream => result,
    }
}

/// What a streamed listing says of its providers, for the session's readiness.
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
        let listing = ListingOf::of(&Fetch::Dataset(file.dataset, Vec::new()));
        let listing = kept_listing(context, dir.join(&entry.path), entry, listing).await?;
        kept.push((
            file.clone(),
            Obtained {
                entry: entry.clone(),
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
            let listed = self.listings.of(job, listing.items);
            next = listed.jobs;
            if listed.beyond > 0 {
                self.beyond_limit(&job.key, listed.beyond);
            }
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

impl Missed {
    /// The same reason, for another file (a failure that concerns all of a session's datasets).
    fn duplicate(&self) -> Missed {
        match self {
            Missed::Client(error) => Missed::Client(error.clone()),
            Missed::Local(message) => Missed::Local(message.clone()),
            Missed::Refused(message) => Missed::Refused(message.clone()),
            Missed::Interrupted => Missed::Interrupted,
        }
    }
}
