//! What the export's steps share, below all of them: the run's [`Context`] (the client, the
//! tree, the bounds, the stop signal) and [`local`], a failure of the tree as the command's.

use std::sync::atomic::{AtomicUsize, Ordering};

use creditdata_client::Client;
use tokio::sync::{Semaphore, watch};

use super::progress::Progress;
use super::store::{self, StoreError};
use crate::failure::Failure;

/// What every session's work shares.
pub struct Context<'a> {
    pub client: &'a Client,
    /// The export's directory: every file of it goes through here.
    pub tree: &'a store::Tree,
    pub include_deprecated: bool,
    /// `--concurrency`: the permits' number.
    pub concurrency: usize,
    pub permits: Semaphore,
    /// `--max-listed-files`: ids taken from one listing of a session.
    pub max_listed_files: usize,
    /// `--max-listing-bytes`: the largest listing written and read back.
    pub max_listing_bytes: u64,
    /// Answers held in memory at once, across sessions: one (a source file, whose content
    /// comes Base64 inside JSON and is decoded whole; every other answer is streamed to its
    /// file). With the client's body limit, what bounds the export's memory: see
    /// `cli/README.md`, "Bounded and paced".
    pub held: Semaphore,
    /// Files being obtained at once, across sessions: `--concurrency` slots. The rest wait as
    /// plain data in their session's queue, so memory does not grow with a listing's length.
    pub live: Semaphore,
    /// The most files obtained at once during the run (logged with `-v`).
    pub peak_live: AtomicUsize,
    /// `true` once the export must stop: Ctrl-C, or a failure no other request can avoid.
    pub stop: watch::Sender<bool>,
    pub progress: &'a Progress,
}

impl Context<'_> {
    /// Notes that one more file is being obtained.
    pub fn note_live(&self) {
        let live = self.concurrency - self.live.available_permits();
        self.peak_live.fetch_max(live, Ordering::Relaxed);
    }

    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    pub async fn stopped(&self) {
        let mut receiver = self.stop.subscribe();
        let _ = receiver.wait_for(|stop| *stop).await;
    }
}

/// A failure of the export's tree (a file not written, read or renamed) as the command's.
pub fn local(error: StoreError) -> Failure {
    Failure::Local(error.0)
}
