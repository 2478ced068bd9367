//! Whether a session's data has arrived: each provider's answer, typed, and a summary a
//! decision can gate on ([`SessionDatasets::readiness`](crate::session_datasets::SessionDatasets::readiness)).
//!
//! A session is `COMPLETED_BY_CUSTOMER` once the consumer has consented; each Data Provider
//! answers later. Until it does, every dataset is a `200` with empty lists and
//! `sources[].status = WAITING_FOR_PROVIDER`: a read that succeeded is not data that arrived.
//! Each dataset's answer lists its providers (`sources`), and each provider's status falls in
//! one of four [`Outcome`]s:
//!
//! | status | [`Outcome`] |
//! |---|---|
//! | `SUCCESS` (an empty answer included: the subject is unknown to the provider) | [`Answered`](Outcome::Answered) |
//! | `WAITING_FOR_PROVIDER`, `WAITING_FOR_CUSTOMER` | [`Pending`](Outcome::Pending) |
//! | `PACKAGE_UPGRADE_REQUIRED` (the session did not request this data) | [`NotRequested`](Outcome::NotRequested) |
//! | `ERROR`, `FORBIDDEN`, `UNSUPPORTED_COUNTRY`, `ID_TAX_ONLY`, `UNKNOWN`, and **any status this client does not know** | [`Failed`](Outcome::Failed) |
//!
//! A status a newer service sends (`PROVIDER_MAINTENANCE`, say) is never taken for an answer.
//! It counts as failed rather than pending: this client cannot tell whether it will ever
//! change, and a wait on it would last until its deadline. The status itself is kept
//! ([`ProviderStatus::status`]), so a caller who knows better can say so.
//!
//! The categorizations summary has no providers, only a dataset-level `summary.status`
//! (SourceStatus plus `SOME_DATA_MISSING`, which the service sends when some providers answered
//! and others did not). It counts as one entry without provider or country, classified the
//! same way: `SOME_DATA_MISSING` is a final answer with data missing, so it is failed. Which
//! datasets report readiness, and how, is found in the API description by the shape of their
//! answer ([`Dataset::reports_readiness`]); those that do not (attachments, source files,
//! input requirements) are listed as [`not_reported`](Readiness::not_reported), never as
//! ready.
//!
//! **Complete** ([`Readiness::is_complete`]) means: every dataset of the [`Gate`] was read, and
//! every provider of every such dataset that reports readiness answered `SUCCESS`, or reported
//! that the session did not request its data. Nothing pending, nothing failed. A decision that
//! needs the data refuses to run otherwise:
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//!
//! # async fn f(client: &Client, id: uuid::Uuid) -> Result<()> {
//! let datasets = client.session_datasets(id).await?;
//! let readiness = datasets.readiness();
//! if !readiness.is_complete() {
//!     for provider in &readiness.pending {
//!         eprintln!("still waiting: {provider}");
//!     }
//!     for provider in &readiness.failed {
//!         eprintln!("failed: {provider}");
//!     }
//!     for (dataset, error) in &readiness.unreadable {
//!         eprintln!("{}: {error}", dataset.name());
//!     }
//!     return Ok(()); // no decision on partial data
//! }
//! // every provider answered: decide
//! # Ok(()) }
//! ```
//!
//! To wait until the data is there, use
//! [`Client::wait_for_data`](crate::Client::wait_for_data).
//!
//! # Which datasets are judged: the gate
//!
//! A readiness is judged on a [`Gate`]: a set of datasets. Its lists (answered, pending,
//! failed, ...) hold the statuses of those datasets only; a dataset read but outside the gate is
//! named in [`Readiness::outside_gate`] and never keeps the readiness from being complete.
//!
//! - [`Gate::Default`], what [`SessionDatasets::readiness`](crate::session_datasets::SessionDatasets::readiness),
//!   [`Client::wait_for_data`](crate::Client::wait_for_data) and the CLI use when the caller
//!   names no datasets: the datasets the API had when this client was first generated, but the
//!   deprecated ones ([`Dataset::gated_by_default`], pinned in
//!   `overlays/91-keep-behaviour.overlay.yaml`). A dataset a later release of the API adds is
//!   read and reported, but not gated; one a later release deprecates stays gated and is still
//!   read by default: code written before either decides exactly as it did, on the data it was
//!   written for.
//! - [`Gate::Only`], the datasets a decision uses: name them, and a provider of any other
//!   dataset neither holds a wait nor fails a decision. This is what a decision should say.
//! - [`Gate::Every`]: every dataset read, the ones a release adds included.
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//! use creditdata_client::readiness::Gate;
//! use creditdata_client::session_datasets::Dataset;
//!
//! # async fn f(client: &Client, id: uuid::Uuid) -> Result<()> {
//! let datasets = client.session_datasets(id).await?;
//! // The data this decision uses, whatever else the session holds:
//! if datasets.is_complete_for([Dataset::Scores, Dataset::NegativeTradelines]) {
//!     // decide on the scores and the negative tradelines
//! }
//! // Everything, the datasets a release added included:
//! let every = datasets.readiness_of(Gate::Every);
//! # let _ = every;
//! # Ok(()) }
//! ```
//!
//! Provider ids and countries are not personal data: they appear in `Debug` and `Display`.
//! Dataset contents never do.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::Error;

pub use crate::dataset_shapes::{ProviderListProperties, ReadinessProperties};
use crate::generated_datasets::Dataset;
use crate::types::SourceStatus;

/// How a provider's status counts. See the [module documentation](self) for which status is
/// which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Outcome {
    /// The provider answered (`SUCCESS`): its data, possibly none, is in the dataset.
    Answered,
    /// The provider has not answered yet (`WAITING_FOR_PROVIDER`), or waits for the customer
    /// (`WAITING_FOR_CUSTOMER`). Reading again later may find its data.
    Pending,
    /// The session did not request this data (`PACKAGE_UPGRADE_REQUIRED`): no provider was
    /// asked. It does not make a session incomplete; upgrade the session if you need the data.
    NotRequested,
    /// The provider gave a final answer without the data (`ERROR`, `FORBIDDEN`,
    /// `UNSUPPORTED_COUNTRY`, `ID_TAX_ONLY`, `UNKNOWN`, `SOME_DATA_MISSING`), or a status this
    /// client does not know.
    Failed,
}

impl Outcome {
    /// The outcome of a provider's status.
    pub fn of(status: &SourceStatus) -> Outcome {
        Outcome::of_wire(status.as_str())
    }

    /// The outcome of a status as the service spells it (`"WAITING_FOR_PROVIDER"`): also for
    /// dataset-level statuses such as the categorizations summary's.
    pub fn of_wire(status: &str) -> Outcome {
        // By the wire value rather than the enum's variants, so that the dataset-level status
        // enums (a superset of SourceStatus) and a value a release adds classify alike.
        match status {
            "SUCCESS" => Outcome::Answered,
            "WAITING_FOR_PROVIDER" | "WAITING_FOR_CUSTOMER" => Outcome::Pending,
            "PACKAGE_UPGRADE_REQUIRED" => Outcome::NotRequested,
            _ => Outcome::Failed,
        }
    }

    /// Whether the provider has given its final answer (anything but pending).
    pub fn is_final(self) -> bool {
        self != Outcome::Pending
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Answered => "answered",
            Outcome::Pending => "pending",
            Outcome::NotRequested => "not requested",
            Outcome::Failed => "failed",
        })
    }
}

/// One provider's status for one dataset (an element of its `sources`), or a dataset-level
/// status (no provider, no country).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ProviderStatus {
    /// The dataset that reported it.
    pub dataset: Dataset,
    /// The provider (`sourceId`); `None` for a dataset-level status, or when the service sent
    /// none.
    pub source_id: Option<String>,
    /// The provider's country (ISO 3166-1 alpha-3), when the service sent it.
    pub country_code: Option<String>,
    /// The status as the service sent it; a value this client does not know is
    /// [`SourceStatus::Unrecognized`], and so is `SOME_DATA_MISSING`.
    pub status: SourceStatus,
}

impl ProviderStatus {
    /// An entry of a dataset's provider list as the answer spells it (`sourceId`,
    /// `countryCode`, `status`): what the generated code reads from a decoded answer, and what
    /// a reader of the answer's bytes builds from the members
    /// [`Dataset::readiness_properties`] names.
    pub fn new(
        dataset: Dataset,
        source_id: Option<&str>,
        country_code: Option<&str>,
        status: &str,
    ) -> ProviderStatus {
        ProviderStatus {
            dataset,
            source_id: source_id.map(str::to_owned),
            country_code: country_code.map(str::to_owned),
            status: SourceStatus::from(status),
        }
    }

    /// A status that speaks for the whole dataset (the categorizations summary's
    /// `summary.status`), without provider or country.
    pub fn dataset_level(dataset: Dataset, status: &str) -> ProviderStatus {
        ProviderStatus::new(dataset, None, None, status)
    }

    /// How its status counts.
    pub fn outcome(&self) -> Outcome {
        Outcome::of(&self.status)
    }
}

/// `scores: provider GB-BUREAU (GBR) WAITING_FOR_PROVIDER`; `categorizations-summary:
/// SOME_DATA_MISSING` for a dataset-level status.
impl fmt::Display for ProviderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.dataset.name())?;
        if let Some(source) = &self.source_id {
            write!(f, "provider {source} ")?;
        }
        if let Some(country) = &self.country_code {
            write!(f, "({country}) ")?;
        }
        write!(f, "{}", self.status)
    }
}

/// The datasets a [`Readiness`] is judged on: see [the module documentation](self#which-datasets-are-judged-the-gate).
///
/// Made from a dataset, an array, a `Vec`, a slice or a set of datasets, or collected from an
/// iterator of them: `[Dataset::Scores, Dataset::PersonDetails].into()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Gate {
    /// The default gate: the datasets [`Dataset::gated_by_default`] says, those of the API as
    /// this client was first generated (but the deprecated ones). A dataset a later release adds
    /// is not in it; one the service deprecates later stays in it, and is read by default.
    #[default]
    Default,
    /// Every dataset read (a deprecated one only when it was asked for, or is in the default
    /// gate).
    Every,
    /// These datasets, read even when deprecated; one that was not read counts as unreadable.
    /// An empty set judges nothing: it is always complete.
    Only(BTreeSet<Dataset>),
}

impl Gate {
    /// [`Gate::Only`] these datasets.
    pub fn only(datasets: impl IntoIterator<Item = Dataset>) -> Gate {
        Gate::Only(datasets.into_iter().collect())
    }

    /// Whether the gate judges `dataset`.
    pub fn contains(&self, dataset: Dataset) -> bool {
        match self {
            Gate::Default => dataset.gated_by_default(),
            Gate::Every => true,
            Gate::Only(datasets) => datasets.contains(&dataset),
        }
    }

    /// Whether the gate names `dataset` itself ([`Gate::Only`]).
    pub fn names(&self, dataset: Dataset) -> bool {
        matches!(self, Gate::Only(datasets) if datasets.contains(&dataset))
    }

    /// Whether a read judged on this gate must read `dataset`, deprecated or not: the datasets
    /// [`Gate::Only`] names, those of [`Gate::Default`], and for [`Gate::Every`] every dataset
    /// the service does not deprecate. One that was not read is unreadable.
    pub fn requires(&self, dataset: Dataset) -> bool {
        match self {
            Gate::Default => dataset.gated_by_default(),
            Gate::Every => !dataset.deprecated(),
            Gate::Only(datasets) => datasets.contains(&dataset),
        }
    }
}

impl From<Dataset> for Gate {
    fn from(dataset: Dataset) -> Gate {
        Gate::only([dataset])
    }
}

impl<const N: usize> From<[Dataset; N]> for Gate {
    fn from(datasets: [Dataset; N]) -> Gate {
        Gate::only(datasets)
    }
}

impl From<&[Dataset]> for Gate {
    fn from(datasets: &[Dataset]) -> Gate {
        Gate::only(datasets.iter().copied())
    }
}

impl From<Vec<Dataset>> for Gate {
    fn from(datasets: Vec<Dataset>) -> Gate {
        Gate::only(datasets)
    }
}

impl From<BTreeSet<Dataset>> for Gate {
    fn from(datasets: BTreeSet<Dataset>) -> Gate {
        Gate::Only(datasets)
    }
}

impl FromIterator<Dataset> for Gate {
    fn from_iter<I: IntoIterator<Item = Dataset>>(datasets: I) -> Gate {
        Gate::only(datasets)
    }
}

/// `the default gate`, `every dataset`, or the datasets named (`scores, person-details`).
impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gate::Default => f.write_str("the default gate"),
            Gate::Every => f.write_str("every dataset"),
            Gate::Only(datasets) if datasets.is_empty() => f.write_str("no dataset"),
            Gate::Only(datasets) => {
                let names: Vec<&str> = datasets.iter().map(|d| d.name()).collect();
                f.write_str(&names.join(", "))
            }
        }
    }
}

/// What one dataset read says about readiness (filled in by the generated code).
pub(crate) enum Report<'a> {
    /// The read failed.
    ReadFailed(&'a Error),
    /// The dataset's answer has no provider statuses.
    NotReported,
    /// The statuses it reported (possibly none).
    Statuses(Vec<ProviderStatus>),
}

/// Whether a session's data has arrived: every provider status of every dataset of the
/// [`Gate`] read, sorted by [`Outcome`], and those datasets that could not be read. Made by
/// [`SessionDatasets::readiness`](crate::session_datasets::SessionDatasets::readiness) (the gate the read was asked for, the default gate unless
/// named) or [`SessionDatasets::readiness_of`](crate::session_datasets::SessionDatasets::readiness_of); see the [module documentation](self).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Readiness {
    /// Providers that answered (`SUCCESS`).
    pub answered: Vec<ProviderStatus>,
    /// Providers that have not answered yet.
    pub pending: Vec<ProviderStatus>,
    /// Providers that gave a final answer without the data, or a status this client does not
    /// know.
    pub failed: Vec<ProviderStatus>,
    /// Data the session did not request (`PACKAGE_UPGRADE_REQUIRED`).
    pub not_requested: Vec<ProviderStatus>,
    /// Datasets whose read failed, with the error: nothing is known of their providers.
    pub unreadable: Vec<(Dataset, Error)>,
    /// Datasets read whose answer does not say how far its providers have got (attachments,
    /// source files, ...): their content is what the service has now.
    pub not_reported: Vec<Dataset>,
    /// Datasets read (or whose read failed) that the gate leaves out, in the order they were
    /// read: reported, never judged. A dataset a release added is here under the default gate;
    /// [`SessionDatasets::readiness_of`](crate::session_datasets::SessionDatasets::readiness_of) says how it stands.
    pub outside_gate: Vec<Dataset>,
    /// The datasets judged.
    gate: Gate,
}

impl Readiness {
    /// An empty readiness judged on `gate`, to [`replace`](Self::replace) datasets into.
    pub fn new(gate: impl Into<Gate>) -> Readiness {
        Readiness {
            gate: gate.into(),
            ..Readiness::default()
        }
    }

    /// The datasets it is judged on.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// Every dataset of the gate was read and no provider of one is pending or failed: the
    /// data a decision needs is all there. (Data the session did not request, datasets that do
    /// not report readiness and datasets outside the gate do not count against it.)
    pub fn is_complete(&self) -> bool {
        self.is_settled() && self.failed.is_empty() && self.unreadable.is_empty()
    }

    /// No provider of the gate's datasets is pending: every one has given its final answer
    /// (some may have failed).
    /// A dataset whose read failed is not counted here: nothing is known of its providers
    /// ([`unreadable`](Self::unreadable); [`Client::wait_for_data`](crate::Client::wait_for_data)
    /// reads it again when its error may pass).
    pub fn is_settled(&self) -> bool {
        self.pending.is_empty()
    }

    /// The datasets with at least one pending provider, in the order of [`Dataset::ALL`].
    pub fn pending_datasets(&self) -> BTreeSet<Dataset> {
        self.pending.iter().map(|status| status.dataset).collect()
    }

    /// The datasets with at least one failed provider or a failed read.
    pub fn failed_datasets(&self) -> BTreeSet<Dataset> {
        self.failed
            .iter()
            .map(|status| status.dataset)
            .chain(self.unreadable.iter().map(|(dataset, _)| *dataset))
            .collect()
    }

    /// Replaces what this readiness says of `dataset` with a read of it made on its own (its
    /// answer's bytes read as they arrived rather than decoded, say; then left out of
    /// [`SessionDatasetsRequest::leave_out`](crate::session_datasets::SessionDatasetsRequest::leave_out)):
    /// the statuses its answer gave (for a dataset that does not
    /// [report readiness](Dataset::reports_readiness), none, and it is
    /// [`not_reported`](Self::not_reported)), or why it could not be read.
    pub fn replace(&mut self, dataset: Dataset, read: Result<Vec<ProviderStatus>, Error>) {
        for statuses in [
            &mut self.answered,
            &mut self.pending,
            &mut self.failed,
            &mut self.not_requested,
        ] {
            statuses.retain(|status| status.dataset != dataset);
        }
        self.unreadable.retain(|(other, _)| *other != dataset);
        self.not_reported.retain(|other| *other != dataset);
        self.outside_gate.retain(|other| *other != dataset);
        let report = match &read {
            Err(error) => Report::ReadFailed(error),
            Ok(_) if !dataset.reports_readiness() => Report::NotReported,
            Ok(statuses) => Report::Statuses(statuses.clone()),
        };
        self.add(report, dataset);
    }

    fn add(&mut self, report: Report<'_>, dataset: Dataset) {
        if !self.gate.contains(dataset) {
            if !self.outside_gate.contains(&dataset) {
                self.outside_gate.push(dataset);
            }
            return;
        }
        match report {
            Report::ReadFailed(error) => self.unreadable.push((dataset, error.clone())),
            Report::NotReported => self.not_reported.push(dataset),
            Report::Statuses(statuses) => {
                for status in statuses {
                    match status.outcome() {
                        Outcome::Answered => self.answered.push(status),
                        Outcome::Pending => self.pending.push(status),
                        Outcome::NotRequested => self.not_requested.push(status),
                        Outcome::Failed => self.failed.push(status),
                    }
                }
            }
        }
    }
}

/// `complete`, or what keeps it from being: `2 pending (scores: provider X (GBR)
/// WAITING_FOR_PROVIDER, ...); 1 failed (...); 1 unreadable (scores)`.
impl fmt::Display for Readiness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_complete() {
            return f.write_str("complete");
        }
        let mut parts = Vec::new();
        let list = |statuses: &[ProviderStatus]| {
            statuses
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.pending.is_empty() {
            parts.push(format!(
                "{} pending ({})",
                self.pending.len(),
                list(&self.pending)
            ));
        }
        if !self.failed.is_empty() {
            parts.push(format!(
                "{} failed ({})",
                self.failed.len(),
                list(&self.failed)
            ));
        }
        if !self.unreadable.is_empty() {
            let names: Vec<&str> = self.unreadable.iter().map(|(d, _)| d.name()).collect();
            parts.push(format!(
                "{} unreadable ({})",
                self.unreadable.len(),
                names.join(", ")
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

impl Readiness {
    /// Judged on `gate` from what each dataset read reported, in the order of
    /// [`Dataset::ALL`] ([`SessionDatasets::readiness_of`](crate::session_datasets::SessionDatasets::readiness_of)):
    /// a dataset the gate requires that was not read is unreadable.
    pub(crate) fn judge(gate: impl Into<Gate>, reports: Vec<(Dataset, Report<'_>)>) -> Readiness {
        let mut readiness = Readiness::new(gate);
        let mut read = BTreeSet::new();
        for (dataset, report) in reports {
            read.insert(dataset);
            readiness.add(report, dataset);
        }
        let missing: Vec<Dataset> = Dataset::ALL
            .into_iter()
            .filter(|dataset| readiness.gate.requires(*dataset) && !read.contains(dataset))
            .collect();
        for dataset in missing {
            readiness.unreadable.push((
                dataset,
                Error::InvalidRequest {
                    operation: Some(dataset.operation_id()),
                    message: format!(
                        "{} was not read: a deprecated dataset is read only when asked \
                         (SessionDatasetsRequest::include_deprecated, or a gate that requires it)",
                        dataset.name()
                    ),
                },
            ));
        }
        readiness
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_read_on_its_own_replaces_what_the_read_together_said() {
        let mut readiness = Readiness::default();
        let left_out = Error::InvalidRequest {
            operation: None,
            message: "left out".into(),
        };
        readiness.add(Report::ReadFailed(&left_out), Dataset::AccountStatements);
        readiness.add(Report::ReadFailed(&left_out), Dataset::Attachments);
        let waiting = ProviderStatus::new(
            Dataset::AccountStatements,
            Some("BANK"),
            Some("DEU"),
            "WAITING_FOR_PROVIDER",
        );
        readiness.replace(Dataset::AccountStatements, Ok(vec![waiting.clone()]));
        readiness.replace(Dataset::Attachments, Ok(Vec::new()));
        assert!(readiness.unreadable.is_empty(), "{readiness}");
        assert_eq!(readiness.pending, [waiting]);
        assert_eq!(readiness.not_reported, [Dataset::Attachments]);
        // Read again: the new answer replaces the old one, whatever it was.
        readiness.replace(Dataset::AccountStatements, Err(left_out));
        assert!(readiness.pending.is_empty(), "{readiness}");
        assert_eq!(
            readiness.failed_datasets().into_iter().collect::<Vec<_>>(),
            [Dataset::AccountStatements]
        );
    }

    #[test]
    fn a_gate_judges_its_datasets_and_names_the_others() {
        let mut readiness = Readiness::new([Dataset::Scores]);
        readiness.add(
            Report::Statuses(vec![status(Dataset::Scores, "SUCCESS")]),
            Dataset::Scores,
        );
        readiness.add(
            Report::Statuses(vec![status(Dataset::PersonDetails, "ERROR")]),
            Dataset::PersonDetails,
        );
        let error = Error::InvalidResponse {
            operation: Some("GetMetrics"),
            message: "x".into(),
        };
        readiness.add(Report::ReadFailed(&error), Dataset::Metrics);
        assert!(readiness.is_complete(), "{readiness}");
        assert_eq!(readiness.to_string(), "complete");
        assert_eq!(
            readiness.outside_gate,
            [Dataset::PersonDetails, Dataset::Metrics]
        );
        assert!(readiness.failed.is_empty() && readiness.unreadable.is_empty());
        // Read again on its own, a dataset outside the gate stays outside it, once.
        readiness.replace(Dataset::PersonDetails, Ok(Vec::new()));
        assert_eq!(
            readiness.outside_gate,
            [Dataset::Metrics, Dataset::PersonDetails]
        );
        // Every dataset judged: the same reads are not complete.
        let mut every = Readiness::new(Gate::Every);
        every.add(
            Report::Statuses(vec![status(Dataset::PersonDetails, "ERROR")]),
            Dataset::PersonDetails,
        );
        assert!(!every.is_complete() && every.outside_gate.is_empty());
    }

    #[test]
    fn gates_are_made_from_datasets_and_say_what_they_hold() {
        let named: Gate = [Dataset::PersonDetails, Dataset::Scores].into();
        assert_eq!(named, Gate::only([Dataset::Scores, Dataset::PersonDetails]));
        assert_eq!(named, vec![Dataset::Scores, Dataset::PersonDetails].into());
        assert_eq!(Gate::from(Dataset::Scores), Gate::only([Dataset::Scores]));
        assert_eq!(
            Dataset::ALL.into_iter().collect::<Gate>(),
            Gate::only(Dataset::ALL)
        );
        assert!(named.contains(Dataset::Scores) && named.names(Dataset::Scores));
        assert!(named.requires(Dataset::Scores) && !named.requires(Dataset::Metrics));
        assert!(!named.contains(Dataset::Metrics));
        assert!(Gate::Every.contains(Dataset::Metrics) && !Gate::Every.names(Dataset::Metrics));
        for dataset in Dataset::ALL {
            assert_eq!(
                Gate::Default.contains(dataset),
                dataset.gated_by_default(),
                "{dataset:?}"
            );
            assert!(!Gate::Default.names(dataset));
            assert_eq!(Gate::Default.requires(dataset), dataset.gated_by_default());
            assert_eq!(Gate::Every.requires(dataset), !dataset.deprecated());
        }
        assert_eq!(Gate::default(), Gate::Default);
        assert_eq!(Readiness::default().gate(), &Gate::Default);
        assert_eq!(named.to_string(), "person-details, scores");
        assert_eq!(Gate::Every.to_string(), "every dataset");
        assert_eq!(Gate::Only(BTreeSet::new()).to_string(), "no dataset");
        assert!(Readiness::new(Gate::Only(BTreeSet::new())).is_complete());
    }

    #[test]
    fn a_named_dataset_that_was_not_read_is_unreadable() {
        // Nothing read at all: every field empty (as `leave_out` leaves them).
        let datasets = crate::generated_session_datasets::Slots::default()
            .finish(uuid::Uuid::nil(), Gate::Default);
        let named = [Dataset::Scores];
        let readiness = datasets.readiness_of(named);
        assert!(!readiness.is_complete());
        assert_eq!(
            readiness
                .unreadable
                .iter()
                .map(|(d, _)| *d)
                .collect::<Vec<_>>(),
            named
        );
        // A deprecated dataset is not read unless asked; named in a gate, its absence counts.
        if let Some(deprecated) = Dataset::ALL.into_iter().find(|d| d.deprecated()) {
            let readiness = datasets.readiness_of(deprecated);
            let (dataset, error) = &readiness.unreadable[0];
            assert_eq!(*dataset, deprecated);
            assert!(error.to_string().contains("was not read"), "{error}");
            assert!(
                !datasets
                    .readiness_of(Gate::Every)
                    .unreadable
                    .iter()
                    .any(|(d, _)| *d == deprecated),
                "every dataset read is judged; a deprecated one not asked for is not missing"
            );
            assert_eq!(
                datasets
                    .readiness_of(Gate::Default)
                    .unreadable
                    .iter()
                    .any(|(d, _)| *d == deprecated),
                deprecated.gated_by_default(),
                "the default gate misses a deprecated dataset exactly when it is in it"
            );
        }
    }

    #[test]
    fn only_success_is_an_answer() {
        assert_eq!(Outcome::of(&SourceStatus::Success), Outcome::Answered);
        for pending in [
            SourceStatus::WaitingForProvider,
            SourceStatus::WaitingForCustomer,
        ] {
            assert_eq!(Outcome::of(&pending), Outcome::Pending, "{pending}");
        }
        assert_eq!(
            Outcome::of(&SourceStatus::PackageUpgradeRequired),
            Outcome::NotRequested
        );
        for failed in [
            SourceStatus::Error,
            SourceStatus::Forbidden,
            SourceStatus::UnsupportedCountry,
            SourceStatus::IdTaxOnly,
            SourceStatus::Unknown,
        ] {
            assert_eq!(Outcome::of(&failed), Outcome::Failed, "{failed}");
        }
    }

    #[test]
    fn a_status_of_a_newer_release_is_not_an_answer() {
        // The release-day fixture's new value, and whatever comes after it: kept as sent and
        // counted as failed, never as answered or pending.
        for wire in ["PROVIDER_MAINTENANCE", "SOMETHING_NEW", "SOME_DATA_MISSING"] {
            let status = SourceStatus::from(wire);
            assert_eq!(status.as_str(), wire);
            assert_eq!(Outcome::of(&status), Outcome::Failed, "{wire}");
            assert!(Outcome::of(&status).is_final());
        }
    }

    fn status(dataset: Dataset, wire: &str) -> ProviderStatus {
        ProviderStatus::new(dataset, Some("GB-BUREAU"), Some("GBR"), wire)
    }

    #[test]
    fn complete_means_nothing_pending_failed_or_unread() {
        let mut readiness = Readiness::default();
        readiness.add(
            Report::Statuses(vec![
                status(Dataset::Scores, "SUCCESS"),
                status(Dataset::Scores, "PACKAGE_UPGRADE_REQUIRED"),
            ]),
            Dataset::Scores,
        );
        readiness.add(Report::NotReported, Dataset::Attachments);
        assert!(readiness.is_complete(), "{readiness}");
        assert_eq!(readiness.to_string(), "complete");

        let mut waiting = readiness.clone();
        waiting.add(
            Report::Statuses(vec![status(Dataset::PersonDetails, "WAITING_FOR_PROVIDER")]),
            Dataset::PersonDetails,
        );
        assert!(!waiting.is_complete() && !waiting.is_settled());
        assert_eq!(
            waiting.pending_datasets().into_iter().collect::<Vec<_>>(),
            [Dataset::PersonDetails]
        );
        assert_eq!(
            waiting.to_string(),
            "1 pending (person-details: provider GB-BUREAU (GBR) WAITING_FOR_PROVIDER)"
        );

        let mut failed = readiness.clone();
        failed.add(
            Report::Statuses(vec![ProviderStatus::dataset_level(
                Dataset::CategorizationsSummary,
                "SOME_DATA_MISSING",
            )]),
            Dataset::CategorizationsSummary,
        );
        assert!(failed.is_settled() && !failed.is_complete());
        assert_eq!(
            failed.to_string(),
            "1 failed (categorizations-summary: SOME_DATA_MISSING)"
        );

        let mut unread = readiness;
        let error = Error::InvalidResponse {
            operation: Some("GetScores"),
            message: "x".into(),
        };
        unread.add(Report::ReadFailed(&error), Dataset::Scores);
        assert!(unread.is_settled() && !unread.is_complete());
        assert_eq!(unread.to_string(), "1 unreadable (scores)");
        assert_eq!(
            unread.failed_datasets().into_iter().collect::<Vec<_>>(),
            [Dataset::Scores]
        );
    }
}
