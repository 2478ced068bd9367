//! The export's third step: one file made complete. A file the last run's manifest lists is
//! kept when it still verifies; otherwise it is fetched (holding one of the export's permits
//! while it talks to the service) and written into place by [`super::store`].

use std::path::{Path, PathBuf};

use creditdata_client::Error;
use creditdata_client::download::{Download, DownloadExt};
use serde_json::Value;
use uuid::Uuid;

use super::Context;
use super::manifest::FileEntry;
use super::plan::{Fetch, Job, ListingOf, ListingRead, read_listing};
use super::store::{StoreError, WriteStreamError};
use crate::failure::Failure;

/// A file that is complete on disk.
pub struct Obtained {
    pub entry: FileEntry,
    pub fetched: bool,
    pub repaired: bool,
    pub bytes_fetched: u64,
    /// What its content lists, when it is a listing.
    pub listing: Option<ListingRead>,
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
    let listing = ListingOf::of(&job.fetch);
    let mut repaired = false;
    if let Some(entry) = earlier {
        let path = dir.join(&entry.path);
        if let Some(listing) = kept_listing(context, path, &entry, listing).await {
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
    // Bytes at hand (the session record, datasets already read) are written even when the
    // export is stopping: a local write takes a moment, and what was read is then kept.
    let at_hand = matches!(job.fetch, Fetch::Known(_) | Fetch::Dataset(..));
    let result = if at_hand {
        fetch(context, dir, session_id, &mut job, listing).await
    } else if context.stopping() {
        Err(Missed::Interrupted)
    } else {
        tokio::select! {
            biased;
            () = context.stopped() => Err(Missed::Interrupted),
            result = fetch(context, dir, session_id, &mut job, listing) => result,
        }
    };
    let result = result.map(|mut obtained| {
        obtained.repaired = repaired;
        obtained
    });
    (job, result)
}

/// `Some` when the last run's file verifies against `entry`: with what it lists, read in the
/// same pass (a listing that no longer reads is fetched again).
pub async fn kept_listing(
    context: &Context<'_>,
    path: PathBuf,
    entry: &FileEntry,
    listing: Option<ListingOf>,
) -> Option<Option<ListingRead>> {
    let tree = context.tree;
    match listing {
        None => tree
            .verify_off_thread(path, entry.digest())
            .await
            .then_some(None),
        Some(listing) => {
            let limit = context.max_listed_files;
            tree.verify_read_off_thread(path, entry.digest(), move |reader| {
                read_listing(reader, listing, limit)
            })
            .await
            .and_then(Result::ok)
            .map(Some)
        }
    }
}

/// Fetches one file into place, holding one of the export's permits while it talks to the
/// service.
async fn fetch(
    context: &Context<'_>,
    dir: &Path,
    session_id: Uuid,
    job: &mut Job,
    listing: Option<ListingOf>,
) -> Result<Obtained, Missed> {
    let client = context.client;
    let bytes_of = |value: &Value| {
        serde_json::to_vec_pretty(value)
            .map_err(|e| Missed::Local(format!("cannot render {}: {e}", job.key)))
    };
    // Bytes at hand need no request, hence no permit.
    let _permit = match job.fetch {
        Fetch::Known(_) | Fetch::Dataset(..) => None,
        _ => Some(
            context
                .permits
                .acquire()
                .await
                .map_err(|e| Missed::Local(e.to_string()))?,
        ),
    };
    let download = match &job.fetch {
        Fetch::Known(_) | Fetch::Dataset(..) => {
            // Moved, not copied: a listing's document can be large.
            let content = job.take_content();
            return write_known(context, dir, job, content, listing).await;
        }
        Fetch::IdentityImages(verification) => {
            let images = client
                .get_identity_verification_images()
                .session_id(session_id)
                .verification_id(verification.as_str())
                .call()
                .await?;
            let value = crate::output::to_value(&images)?;
            return write_known(context, dir, job, bytes_of(&value)?, listing).await;
        }
        Fetch::SourceFile(source_file) => {
            let decoded = client.source_file_bytes(session_id, *source_file).await?;
            return write_known(context, dir, job, decoded.bytes, listing).await;
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
    listing: Option<ListingOf>,
) -> Result<Obtained, Missed> {
    // Read before it is written: a listing that cannot be read is not taken. These bytes are
    // in memory already (an identity verification's images, bounded by the client's limit).
    let listing = match listing {
        Some(listing) => Some(
            read_listing(&mut &content[..], listing, context.max_listed_files)
                .map_err(|message| Missed::Refused(format!("{}: {message}", job.key)))?,
        ),
        None => None,
    };
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
            readiness: None,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        listing,
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
            readiness: None,
        },
        fetched: true,
        repaired: false,
        bytes_fetched: digested.bytes,
        listing: None,
    })
}
