//! The export's third step: one file made complete. A file the last run's manifest lists is
//! kept when it still verifies; otherwise it is fetched (holding one of the export's permits
//! while it talks to the service) and written into place by [`super::store`].

use std::path::{Path, PathBuf};

use creditdata_client::download::Download;
use creditdata_client::session_datasets::Dataset;
use creditdata_client::source_file;
use creditdata_client::types::SourceFileContent;
use creditdata_client::{ClientInfo, Error};
use futures::StreamExt;
use uuid::Uuid;

use super::context::Context;
use super::files::Kept;
use super::manifest::FileEntry;
use super::plan::{Fetch, Job, reading_of};
use super::store::{Bound, StoreError, WriteStreamError};
use crate::answer::{AnswerRead, Reading};
use crate::failure::Failure;

/// A file that is complete on disk.
pub struct Obtained {
    pub entry: FileEntry,
    pub fetched: bool,
    pub repaired: bool,
    pub bytes_fetched: u64,
    /// What its content says (providers' statuses; entries, when it is a listing), when it
    /// is read.
    pub listing: Option<AnswerRead>,
}

/// Why a file is not complete.
pub enum Missed {
    Client(Error),
    /// The local file could not be written: the export stops.
    Local(String),
    /// What the service sent cannot be taken (a listing too large, or not one): this file's
    /// failure only.
    Refused(String),
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
            WriteStreamError::Refused(message) => Missed::Refused(message),
        }
    }
}

/// Makes one file complete: keeps it when it verifies against `earlier` (its last manifest
/// entry), otherwise fetches it, unless the export is stopping.
pub async fn obtain(
    context: &Context<'_>,
    dir: &Path,
    session_id: Uuid,
    mut job: Job,
    earlier: Option<FileEntry>,
) -> (Job, Result<Obtained, Missed>) {
    let reading = reading_of(&job.fetch, context.max_listed_files);
    let mut repaired = false;
    if let Some(mut entry) = earlier {
        let path = dir.join(&entry.path);
        if let Some(listing) = kept_listing(context, path, &entry, reading).await {
            // A manifest written before files named their operation.
            entry.operation = job.operation().map(str::to_string);
            let kept = Obtained {
                entry,
                fetched: false,
                repaired: false,
                bytes_fetched: 0,
                listing,
            };
            return (job, Ok(kept));
        }
        repaired = true;
    }
    // Bytes at hand (the session record) are written even when the export is stopping: a
    // local write takes a moment, and what was read is then kept.
    let at_hand = matches!(job.fetch, Fetch::Known(_));
    let result = if at_hand {
        fetch(context, dir, session_id, &mut job, reading).await
    } else if context.stopping() {
        Err(Missed::Interrupted)
    } else {
        tokio::select! {
            biased;
            () = context.stopped() => Err(Missed::Interrupted),
            result = fetch(context, dir, session_id, &mut job, reading) => result,
        }
    };
    let result = result.map(|mut obtained| {
        obtained.repaired = repaired;
        obtained
    });
    (job, result)
}

/// `Some` when the last run's file verifies against `entry`: with what it says, read in the
/// same pass (a file that no longer reads is fetched again).
pub async fn kept_listing(
    context: &Context<'_>,
    path: PathBuf,
    entry: &FileEntry,
    reading: Option<Reading>,
) -> Option<Option<AnswerRead>> {
    let tree = context.tree;
    match reading {
        None => tree
            .verify_off_thread(path, entry.digest())
            .await
            .then_some(None),
        Some(reading) => tree
            .verify_read_off_thread(path, entry.digest(), move |reader| {
                crate::answer::read(reader, reading)
            })
            .await
            .and_then(Result::ok)
            .map(Some),
    }
}

/// Fetches one file into place, holding one of the export's permits while it talks to the
/// service.
async fn fetch(
    context: &Context<'_>,
    dir: &Path,
    session_id: Uuid,
    job: &mut Job,
    reading: Option<Reading>,
) -> Result<Obtained, Missed> {
    let client = context.client;
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
    match &job.fetch {
        Fetch::Known(_) => {
            // Moved, not copied.
            let content = job.take_content();
            write_known(context, dir, job, content).await
        }
        Fetch::Dataset(dataset) => {
            // Read with the session's other datasets (`session.rs`), never queued; streamed
            // the same way should it be.
            let download = client.session_dataset_stream(session_id, *dataset).await?;
            let bound = dataset_bound(context, *dataset);
            write_read(context, dir, job, download, bound, reading, None).await
        }
        Fetch::Operation {
            operation,
            ids,
            kept,
        } => {
            // Every other file: one `GET` by its operation's metadata, the session's id and the
            // ids the listing gave, whatever the operation (one a release added included).
            let session = session_id.to_string();
            let values: Vec<&str> = std::iter::once(session.as_str())
                .chain(ids.iter().map(String::as_str))
                .collect();
            match kept {
                Kept::AsSent => {
                    let download = client.operation_stream(operation, &values).await?;
                    write_download(context, dir, job, download).await
                }
                Kept::Json => {
                    let download = client.operation_stream(operation, &values).await?;
                    let bound = answer_bound(context);
                    write_read(context, dir, job, download, bound, reading, None).await
                }
                // A listing below a listing: streamed to its file and read back entry by
                // entry, under --max-listing-bytes, like the session's listings.
                Kept::Listing(_) => {
                    let download = client.operation_stream(operation, &values).await?;
                    let bound = listing_bound(context);
                    write_read(context, dir, job, download, bound, reading, None).await
                }
                Kept::Decoded => {
                    // The one answer the export holds in memory (its content is Base64 inside
                    // JSON, decoded and checked): one at a time across the export
                    // (`Context::held`), each within the client's body limit.
                    let _held = context
                        .held
                        .acquire()
                        .await
                        .map_err(|e| Missed::Local(e.to_string()))?;
                    let download = client.operation_stream(operation, &values).await?;
                    let decoded = decoded_source_file(context, operation.id, download).await?;
                    write_known(context, dir, job, decoded).await
                }
            }
        }
    }
}

/// A source file's content as its answer carries it (Base64 inside JSON), decoded and checked
/// ([`source_file::decode_content`]); the answer is read within the client's limit on an
/// answer. An error says what and where, never a value of the answer. (The decoded bytes are
/// what the progress counts, when they are written.)
async fn decoded_source_file(
    context: &Context<'_>,
    operation: &'static str,
    download: Download,
) -> Result<Vec<u8>, Missed> {
    let limit = context.client.inner().max_response_body();
    let mut body = Vec::new();
    let mut stream = download.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if (body.len() as u64).saturating_add(chunk.len() as u64) > limit {
            return Err(Missed::Refused(format!(
                "the answer of {operation} is larger than the client's limit on an answer \
                 ({limit} bytes, max_response_body)"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let content: SourceFileContent = serde_json::from_slice(&body).map_err(|error| {
        // serde's message may quote the answer's values (personal data): where, never what.
        Missed::Refused(format!(
            "the answer of {operation} is not the source file content the description says \
             ({:?} at line {}, column {})",
            error.classify(),
            error.line(),
            error.column()
        ))
    })?;
    drop(body);
    Ok(source_file::decode_content(&content)?.bytes)
}

/// The most bytes a dataset's file may have: `--max-listing-bytes` for a listing (it may list
/// many files), the client's limit on an answer (`max_response_body`, the bound its typed read
/// had) for the others.
pub fn dataset_bound(context: &Context<'_>, dataset: Dataset) -> Bound {
    if dataset.listing().is_some() {
        listing_bound(context)
    } else {
        answer_bound(context)
    }
}

/// The client's limit on an answer (`max_response_body`), for a JSON answer that lists nothing.
fn answer_bound(context: &Context<'_>) -> Bound {
    Bound {
        bytes: context.client.inner().max_response_body(),
        name: "the client's limit on an answer (max_response_body)",
        advice: "",
    }
}

/// `--max-listing-bytes`.
fn listing_bound(context: &Context<'_>) -> Bound {
    Bound {
        bytes: context.max_listing_bytes,
        name: "--max-listing-bytes",
        advice: ": export again with a larger --max-listing-bytes to take it",
    }
}

/// Streams a JSON answer to its file (at most `bound` bytes; see
/// [`super::store::Tree::write_listing`]) and reads it back as `reading` says before it takes
/// its name: memory holds a chunk and what is kept, whatever the answer's size. When its bytes
/// are `earlier`'s, the file there is kept as it is.
pub async fn write_read(
    context: &Context<'_>,
    dir: &Path,
    job: &Job,
    download: Download,
    bound: Bound,
    reading: Option<Reading>,
    earlier: Option<FileEntry>,
) -> Result<Obtained, Missed> {
    let reading = reading.unwrap_or(Reading {
        dataset: None,
        listing: None,
        limit: 0,
        printable: false,
    });
    let written = context
        .tree
        .write_listing(
            &dir.join(&job.path),
            download.bytes_stream(),
            bound,
            |received| context.progress.bytes(received),
            earlier.as_ref().map(FileEntry::digest),
            move |reader| crate::answer::read(reader, reading),
        )
        .await?;
    let fetched = !written.unchanged;
    Ok(Obtained {
        entry: FileEntry {
            key: job.key.clone(),
            path: job.path.clone(),
            bytes: written.digested.bytes,
            sha256: written.digested.sha256,
            operation: job.operation().map(str::to_string),
            readiness: None,
        },
        fetched,
        repaired: written.repaired,
        bytes_fetched: if fetched { written.digested.bytes } else { 0 },
        listing: Some(written.read),
    })
}

/// Writes bytes at hand (the session record, a decoded source file) into place.
async fn write_known(
    context: &Context<'_>,
    dir: &Path,
    job: &Job,
    content: Vec<u8>,
) -> Result<Obtained, Missed> {
    let digested = context
        .tree
        .write_bytes(&dir.join(&job.path), &content)
        .await?;
    context.progress.bytes(digested.bytes);
    Ok(Obtained {
        entry: FileEntry {
            key: job.key.clone(),
            path: job.path.clone(),
            bytes: digested.bytes,
            sha256: digested.sha256,
            operation: job.operation().map(str::to_string),
            readiness: None,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        listing: None,
    })
}

/// Streams a download into place, under the name its listing decided (never the response's:
/// two files could then share one).
async fn write_download(
    context: &Context<'_>,
    dir: &Path,
    job: &Job,
    download: Download,
) -> Result<Obtained, Missed> {
    let path = job.path.clone();
    let target: PathBuf = dir.join(&path);
    let digested = context
        .tree
        .write_stream(&target, download.bytes_stream(), |received| {
            context.progress.bytes(received)
        })
        .await?;
    Ok(Obtained {
        entry: FileEntry {
            key: job.key.clone(),
            path,
            bytes: digested.bytes,
            sha256: digested.sha256,
            operation: job.operation().map(str::to_string),
            readiness: None,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        listing: None,
    })
}
