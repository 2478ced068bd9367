//! Every JSON dataset of a session at once: [`Client::session_datasets`].
//!
//! A lending decision needs all of a session's datasets. Read one after another they cost one
//! round trip each; read concurrently, about one in all. Each dataset keeps its own result: a
//! read that failed (a `5xx`, a body that does not decode) does not hide the others.
//!
//! **A read that succeeded is not data that arrived.** Once the customer has consented, each
//! Data Provider answers in its own time; until it does, its datasets are a `200` with empty
//! lists and `sources[].status = WAITING_FOR_PROVIDER`. A package the session did not request is
//! a `200` too, its sources `PACKAGE_UPGRADE_REQUIRED` (not a `404`). Gate a decision on
//! [`SessionDatasets::readiness`] ([`crate::readiness`]: judged on the default gate, the datasets
//! this client was first generated with, or on the datasets the decision uses,
//! [`SessionDatasetsRequest::gate`]), or wait for the data with
//! [`Client::wait_for_data`](crate::Client::wait_for_data):
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//!
//! # async fn f(client: &Client, id: uuid::Uuid) -> Result<()> {
//! let datasets = client.session_datasets(id).concurrency(8).await?;
//! let readiness = datasets.readiness();
//! if !readiness.is_complete() {
//!     eprintln!("not deciding on partial data: {readiness}");
//!     return Ok(());
//! }
//! if let Ok(scores) = &datasets.scores {
//!     println!("{} scores", scores.scores.as_ref().map_or(0, Vec::len));
//! }
//! # Ok(()) }
//! ```
//!
//! A session that does not exist is one error, not one per dataset: when every dataset read
//! answers `404`, the session itself is read once, and its `404` (`GetSession`) is the result.
//!
//! The list of datasets is generated from the API description (`generated_datasets.rs`, see
//! [`Dataset`]): a dataset the vendor adds is read here, by `creditdata datasets all` and by
//! `creditdata export` after `cargo xtask regen`, with no hand-written line. A deprecated
//! dataset is read only when asked ([`SessionDatasetsRequest::include_deprecated`]), or when the
//! gate of the read requires it ([`Gate::requires`]: one the default gate held before the
//! service deprecated it is still read by default).
//!
//! The requests go through the client like any other call: its retry policy, its token, and
//! its [rate limiter](crate::rate_limit), which paces them when one is configured (the
//! concurrency bounds how many are in flight; the limiter how fast they start).

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use futures_util::StreamExt as _;
use uuid::Uuid;

use crate::Client;
use crate::call_options::CallOptions;
use crate::error::Error;

pub use crate::dataset_shapes::Listing;
pub use crate::generated_datasets::Dataset;
pub use crate::generated_session_datasets::SessionDatasets;
use crate::generated_session_datasets::{Slots, fetch};
use crate::readiness::Report;

pub use crate::readiness::{Gate, Outcome, ProviderStatus, Readiness};

/// How many datasets are read at once by default: all of them, so that a session costs one
/// round trip. Lower it with [`SessionDatasetsRequest::concurrency`] to be gentler.
pub const DEFAULT_CONCURRENCY: usize = Dataset::ALL.len();

impl SessionDatasets {
    /// Whether every dataset read answered (`failures()` is empty); says nothing about the
    /// data having arrived.
    #[deprecated(
        note = "true while every provider is still waiting: use `readiness().is_complete()` \
                (or `is_complete()`) to gate a decision, `reads_succeeded()` for the reads alone"
    )]
    pub fn all_succeeded(&self) -> bool {
        self.reads_succeeded()
    }

    /// Whether every dataset read answered, whatever the answers say: a session whose
    /// providers are all still waiting passes. For whether the data has arrived, see
    /// [`is_complete`](Self::is_complete).
    pub fn reads_succeeded(&self) -> bool {
        self.failures().is_empty()
    }

    /// Whether every read made (but those `left_out`) failed with `404`: the session may not
    /// exist.
    fn every_read_not_found(&self, left_out: &[Dataset]) -> bool {
        let reads: Vec<_> = self
            .reports()
            .into_iter()
            .filter(|(dataset, _)| !left_out.contains(dataset))
            .collect();
        !reads.is_empty()
            && reads.iter().all(
                |(_, report)| matches!(report, Report::ReadFailed(error) if is_not_found(error)),
            )
    }
}

fn is_not_found(error: &Error) -> bool {
    error.status().map(|status| status.as_u16()) == Some(404)
}

impl SessionDatasets {
    /// Whether the session's data has arrived, judged on the gate the read (or the wait) was
    /// asked for: [`Gate::Default`] unless the caller named datasets
    /// ([`SessionDatasetsRequest::gate`](crate::session_datasets::SessionDatasetsRequest::gate),
    /// [`Client::wait_for_datasets`](crate::Client::wait_for_datasets)). Each provider's status
    /// by [`Outcome`], and the datasets that could not be read. See the
    /// [module documentation](crate::readiness).
    pub fn readiness(&self) -> Readiness {
        self.readiness_of(self.gate.clone())
    }

    /// Whether the data of the datasets of `gate` has arrived: [`readiness`](Self::readiness)
    /// judged on them (`[Dataset::Scores]`, [`Gate::Every`], ...). A dataset the gate
    /// [requires](Gate::requires) that was not read (a deprecated one not asked for) is
    /// unreadable.
    pub fn readiness_of(&self, gate: impl Into<Gate>) -> Readiness {
        Readiness::judge(gate, self.reports())
    }

    /// Every dataset of the read's gate was read and every provider of one answered: see
    /// [`Readiness::is_complete`].
    pub fn is_complete(&self) -> bool {
        self.readiness().is_complete()
    }

    /// Every dataset of `gate` was read and every provider of one answered.
    pub fn is_complete_for(&self, gate: impl Into<Gate>) -> bool {
        self.readiness_of(gate).is_complete()
    }

    /// The datasets [`readiness`](Self::readiness) judges.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }
}

/// A read of every JSON dataset of a session, made by [`Client::session_datasets`]: set the
/// options, then `.await` it.
#[derive(Debug, Clone)]
#[must_use = "nothing is read until it is awaited"]
pub struct SessionDatasetsRequest<'a> {
    client: &'a Client,
    session_id: Uuid,
    concurrency: usize,
    include_deprecated: bool,
    left_out: Vec<Dataset>,
    options: Option<CallOptions>,
    gate: Gate,
}

impl SessionDatasetsRequest<'_> {
    /// The datasets [`SessionDatasets::readiness`] of this read judges (default:
    /// [`Gate::Default`]): the datasets a decision uses (`[Dataset::Scores, ...]`), or
    /// [`Gate::Every`]. Every dataset is still read; a deprecated one the gate
    /// [requires](Gate::requires) is read too (one the default gate holds: the vendor deprecated
    /// it after this client was first generated, and code written then still waits for it).
    pub fn gate(mut self, gate: impl Into<Gate>) -> Self {
        self.gate = gate.into();
        self
    }

    /// Does not read these datasets (one the caller reads on its own, as a stream, say): their
    /// fields are then an [`Error::InvalidRequest`] saying so, which
    /// [`SessionDatasets::readiness`] counts as unreadable until
    /// [`Readiness::replace`] puts the caller's own read in its place.
    pub fn leave_out(mut self, datasets: impl IntoIterator<Item = Dataset>) -> Self {
        self.left_out.extend(datasets);
        self
    }

    /// How many datasets are read at once (default [`DEFAULT_CONCURRENCY`], all of them; 0
    /// counts as 1).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// Also reads the datasets the service deprecates (default: not; [`Dataset::deprecated`]
    /// says which).
    pub fn include_deprecated(mut self, include: bool) -> Self {
        self.include_deprecated = include;
        self
    }

    /// Options for every read (and the one read of the session after `404`s): see
    /// [`crate::call_options`]. The timeout is each read's deadline; bound the whole with
    /// `tokio::time::timeout`.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = Some(match self.options.take() {
            Some(earlier) => earlier.then(options),
            None => options,
        });
        self
    }

    /// Reads the datasets (what `.await` does). The one error is a session that does not
    /// exist (every dataset answered `404`, and so did the session); any other failure stays
    /// with its dataset.
    pub async fn fetch(self) -> Result<SessionDatasets, Error> {
        let SessionDatasetsRequest {
            client,
            session_id,
            concurrency,
            include_deprecated,
            left_out,
            options,
            gate,
        } = self;
        let wanted = Dataset::ALL
            .into_iter()
            .filter(|dataset| {
                include_deprecated || !dataset.deprecated() || gate.requires(*dataset)
            })
            .filter(|dataset| !left_out.contains(dataset))
            .collect::<Vec<_>>();
        let mut reads = futures_util::stream::iter(wanted)
            // Each read gets the options itself (its own deadline from its start).
            .map(|dataset| fetch(client, session_id, dataset, options.as_ref()))
            .buffer_unordered(concurrency);
        let mut slots = Slots::default();
        while let Some(fetched) = reads.next().await {
            slots.put(fetched);
        }
        let datasets = slots.finish(session_id, gate);
        if datasets.every_read_not_found(&left_out) {
            // One read says whether the session exists; its 404 replaces one per dataset. Any
            // other answer leaves the datasets' own errors, which say more than it would.
            let read = client.get_session().session_id(session_id);
            match crate::operation::call_with(read, options.clone()).await {
                Err(error) if is_not_found(&error) => return Err(error),
                _ => {}
            }
        }
        Ok(datasets)
    }
}

impl<'a> IntoFuture for SessionDatasetsRequest<'a> {
    type Output = Result<SessionDatasets, Error>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<SessionDatasets, Error>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.fetch())
    }
}

impl Client {
    /// Reads every JSON dataset of the session concurrently (at most
    /// [`DEFAULT_CONCURRENCY`] at once unless set with
    /// [`concurrency`](SessionDatasetsRequest::concurrency)), each with its own result; `.await`
    /// it. A session that does not exist is one error (`GetSession`'s `404`). Check
    /// [`SessionDatasets::readiness`] before deciding on the data: see
    /// [`session_datasets`](crate::session_datasets).
    pub fn session_datasets(&self, session_id: Uuid) -> SessionDatasetsRequest<'_> {
        SessionDatasetsRequest {
            client: self,
            session_id,
            concurrency: DEFAULT_CONCURRENCY,
            include_deprecated: false,
            left_out: Vec::new(),
            options: None,
            gate: Gate::Default,
        }
    }

    /// Reads one dataset of the session through its typed operation (so a body that does not
    /// match the description is an error, as for the typed call) and returns it as JSON.
    pub async fn session_dataset(
        &self,
        session_id: Uuid,
        dataset: Dataset,
    ) -> Result<serde_json::Value, Error> {
        fetch(self, session_id, dataset, None).await.into_json()
    }
}
