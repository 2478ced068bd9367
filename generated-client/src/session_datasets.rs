//! Every JSON dataset of a session at once: [`Client::session_datasets`].
//!
//! A lending decision needs all of a session's datasets. Read one after another they cost
//! fifteen round trips; read concurrently, about one. Each dataset keeps its own result: a
//! provider that failed (a `404` for a package the session does not include, a `5xx`, a body
//! that does not decode) does not hide the others.
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//!
//! # async fn f(client: &Client, id: uuid::Uuid) -> Result<()> {
//! let datasets = client.session_datasets(id).concurrency(8).await;
//! if let Ok(scores) = &datasets.scores {
//!     println!("{} scores", scores.scores.as_ref().map_or(0, Vec::len));
//! }
//! for (dataset, error) in datasets.failures() {
//!     eprintln!("{}: {error}", dataset.name());
//! }
//! # Ok(()) }
//! ```
//!
//! The requests go through the client like any other call: its retry policy, its token, and
//! its [rate limiter](crate::rate_limit), which paces them when one is configured (the
//! concurrency bounds how many are in flight; the limiter how fast they start).

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use futures_util::StreamExt as _;
use uuid::Uuid;

use crate::error::Error;
use crate::{Client, types};

/// How many datasets are read at once by default: all of them, so that a session costs one
/// round trip. Lower it with [`SessionDatasetsRequest::concurrency`] to be gentler.
pub const DEFAULT_CONCURRENCY: usize = 15;

/// Declares the datasets once: the enum, the typed result, and the fetch of each.
macro_rules! datasets {
    ($(
        $(#[$doc:meta])*
        $variant:ident($builder:ident) => $field:ident: $ty:ty = $method:ident, $name:literal;
    )*) => {
        /// One JSON dataset of a session.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Dataset {
            $( $(#[$doc])* $variant, )*
        }

        impl Dataset {
            /// Every JSON dataset, in the order of the API description.
            pub const ALL: [Dataset; datasets!(@count $($variant)*)] = [$(Dataset::$variant),*];

            /// Its name as the CLI spells it, also the last segment of its path
            /// (`person-details`).
            pub fn name(self) -> &'static str {
                match self {
                    $( Dataset::$variant => $name, )*
                }
            }

            /// Its operation, as errors name it.
            pub fn operation_id(self) -> &'static str {
                match self {
                    // The service deprecates `categorizations` but still serves it: it stays a
                    // dataset, read only when `include_deprecated` asks for it.
                    $( #[allow(deprecated)] Dataset::$variant => <crate::builder::$builder<'static> as
                        crate::operation::Operation>::META.id, )*
                }
            }
        }

        /// What one read returned, before it goes into its field.
        // Each value is moved once, into its slot: boxing the large ones would only add an
        // allocation per dataset.
        #[allow(clippy::large_enum_variant)]
        enum Fetched {
            $( $variant(Result<$ty, Error>), )*
        }

        fn fetch(client: &Client, session_id: Uuid, dataset: Dataset)
            -> Pin<Box<dyn Future<Output = Fetched> + Send + '_>>
        {
            match dataset {
                // As in `operation_id`: the deprecated `categorizations` is read only when asked.
                $( #[allow(deprecated)] Dataset::$variant => Box::pin(async move {
                    Fetched::$variant(client.$method().session_id(session_id).call().await)
                }), )*
            }
        }

        /// The fields being filled, one slot per dataset.
        #[derive(Default)]
        struct Slots {
            $( $field: Option<Result<$ty, Error>>, )*
        }

        impl Slots {
            fn put(&mut self, fetched: Fetched) {
                match fetched {
                    $( Fetched::$variant(result) => self.$field = Some(result), )*
                }
            }
        }

        impl SessionDatasets {
            /// Each dataset that was read, as JSON, or its error.
            pub fn to_json(&self) -> Vec<(Dataset, Result<serde_json::Value, Error>)> {
                let mut all = Vec::new();
                $(
                    if let Some(result) = self.$field.as_slot() {
                        all.push((Dataset::$variant, result.map_err(Error::clone).and_then(as_json)));
                    }
                )*
                all
            }

            /// The datasets that failed, with their errors.
            pub fn failures(&self) -> Vec<(Dataset, &Error)> {
                let mut failed = Vec::new();
                $(
                    if let Some(Err(error)) = self.$field.as_slot() {
                        failed.push((Dataset::$variant, error));
                    }
                )*
                failed
            }
        }
    };
    (@count) => { 0 };
    (@count $head:ident $($tail:ident)*) => { 1 + datasets!(@count $($tail)*) };
}

datasets! {
    /// `getPersonDetails`.
    PersonDetails(GetPersonDetails) => person_details: types::PersonDetailsResponse = get_person_details, "person-details";
    /// `getScores`.
    Scores(GetScores) => scores: types::ScoresResponse = get_scores, "scores";
    /// `getNegativeTradelines`.
    NegativeTradelines(GetNegativeTradelines) => negative_tradelines: types::NegativeTradelinesResponse = get_negative_tradelines, "negative-tradelines";
    /// `getPositiveTradelines`.
    PositiveTradelines(GetPositiveTradelines) => positive_tradelines: types::PositiveTradelinesResponse = get_positive_tradelines, "positive-tradelines";
    /// `getLegalEntities`.
    LegalEntities(GetLegalEntities) => legal_entities: types::LegalEntitiesResponse = get_legal_entities, "legal-entities";
    /// `getRegistryIncomes`.
    RegistryIncomes(GetRegistryIncomes) => registry_incomes: types::RegistryIncomesResponse = get_registry_incomes, "registry-incomes";
    /// `getCourtAndInsolvencies`.
    CourtAndInsolvencies(GetCourtAndInsolvencies) => court_and_insolvencies: types::CourtAndInsolvenciesResponse = get_court_and_insolvencies, "court-and-insolvencies";
    /// `getImmovables`.
    Immovables(GetImmovables) => immovables: types::ImmovablesResponse = get_immovables, "immovables";
    /// `getMetrics`.
    Metrics(GetMetrics) => metrics: types::MetricsResponse = get_metrics, "metrics";
    /// `getAccountStatements`.
    AccountStatements(GetAccountStatements) => account_statements: types::AccountStatementsResponse = get_account_statements, "account-statements";
    /// `getAttachments`.
    Attachments(GetAttachments) => attachments: types::AttachmentsResponse = get_attachments, "attachments";
    /// `getCategorizationsSummary`.
    CategorizationsSummary(GetCategorizationsSummary) => categorizations_summary: types::CategorizationsSummaryResponse = get_categorizations_summary, "categorizations-summary";
    /// `getCategorizations`: deprecated by the service (use `categorizations-summary`); read only
    /// when asked ([`SessionDatasetsRequest::include_deprecated`]).
    Categorizations(GetCategorizations) => categorizations: types::CategorizationsResponse = get_categorizations, "categorizations";
    /// `getIdentityVerifications`.
    IdentityVerifications(GetIdentityVerifications) => identity_verifications: types::IdentityVerificationsResponse = get_identity_verifications, "identity-verifications";
    /// `getSourceFiles`.
    SourceFiles(GetSourceFiles) => source_files: Vec<types::SourceFile> = get_source_files, "source-files";
}

impl Dataset {
    /// Whether the service deprecates the dataset (read only when asked).
    pub fn deprecated(self) -> bool {
        self == Dataset::Categorizations
    }
}

/// Every JSON dataset of one session, each with its own result. The deprecated
/// `categorizations` is `None` unless it was asked for.
#[derive(Debug, Clone)]
pub struct SessionDatasets {
    /// The session read.
    pub session_id: Uuid,
    /// `person-details`.
    pub person_details: Result<types::PersonDetailsResponse, Error>,
    /// `scores`.
    pub scores: Result<types::ScoresResponse, Error>,
    /// `negative-tradelines`.
    pub negative_tradelines: Result<types::NegativeTradelinesResponse, Error>,
    /// `positive-tradelines`.
    pub positive_tradelines: Result<types::PositiveTradelinesResponse, Error>,
    /// `legal-entities`.
    pub legal_entities: Result<types::LegalEntitiesResponse, Error>,
    /// `registry-incomes`.
    pub registry_incomes: Result<types::RegistryIncomesResponse, Error>,
    /// `court-and-insolvencies`.
    pub court_and_insolvencies: Result<types::CourtAndInsolvenciesResponse, Error>,
    /// `immovables`.
    pub immovables: Result<types::ImmovablesResponse, Error>,
    /// `metrics`.
    pub metrics: Result<types::MetricsResponse, Error>,
    /// `account-statements`.
    pub account_statements: Result<types::AccountStatementsResponse, Error>,
    /// `attachments`.
    pub attachments: Result<types::AttachmentsResponse, Error>,
    /// `categorizations-summary`.
    pub categorizations_summary: Result<types::CategorizationsSummaryResponse, Error>,
    /// `categorizations` (deprecated): `None` unless asked for.
    pub categorizations: Option<Result<types::CategorizationsResponse, Error>>,
    /// `identity-verifications`.
    pub identity_verifications: Result<types::IdentityVerificationsResponse, Error>,
    /// `source-files`.
    pub source_files: Result<Vec<types::SourceFile>, Error>,
}

/// Lets the macro treat the optional field like the others.
trait AsSlot<T> {
    fn as_slot(&self) -> Option<Result<&T, &Error>>;
}

impl<T> AsSlot<T> for Result<T, Error> {
    fn as_slot(&self) -> Option<Result<&T, &Error>> {
        Some(self.as_ref())
    }
}

impl<T> AsSlot<T> for Option<Result<T, Error>> {
    fn as_slot(&self) -> Option<Result<&T, &Error>> {
        self.as_ref().map(Result::as_ref)
    }
}

impl SessionDatasets {
    /// Whether every dataset that was read succeeded.
    pub fn all_succeeded(&self) -> bool {
        self.failures().is_empty()
    }
}

fn as_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::InvalidResponse {
        operation: None,
        message: format!(
            "a dataset could not be represented as JSON ({} error)",
            e.classify_name()
        ),
    })
}

/// The name of a serde_json error's kind, never its text (which may quote the data).
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "I/O",
            serde_json::error::Category::Syntax => "syntax",
            serde_json::error::Category::Data => "data",
            serde_json::error::Category::Eof => "end of input",
        }
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
}

impl SessionDatasetsRequest<'_> {
    /// How many datasets are read at once (default [`DEFAULT_CONCURRENCY`], all of them; 0
    /// counts as 1).
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// Also reads the deprecated `categorizations` (default: not).
    pub fn include_deprecated(mut self, include: bool) -> Self {
        self.include_deprecated = include;
        self
    }

    /// Reads the datasets (what `.await` does).
    pub async fn fetch(self) -> SessionDatasets {
        let SessionDatasetsRequest {
            client,
            session_id,
            concurrency,
            include_deprecated,
        } = self;
        let wanted = Dataset::ALL
            .into_iter()
            .filter(|dataset| include_deprecated || !dataset.deprecated());
        let mut reads = futures_util::stream::iter(wanted)
            .map(|dataset| fetch(client, session_id, dataset))
            .buffer_unordered(concurrency);
        let mut slots = Slots::default();
        while let Some(fetched) = reads.next().await {
            slots.put(fetched);
        }
        SessionDatasets {
            session_id,
            person_details: read(slots.person_details, Dataset::PersonDetails),
            scores: read(slots.scores, Dataset::Scores),
            negative_tradelines: read(slots.negative_tradelines, Dataset::NegativeTradelines),
            positive_tradelines: read(slots.positive_tradelines, Dataset::PositiveTradelines),
            legal_entities: read(slots.legal_entities, Dataset::LegalEntities),
            registry_incomes: read(slots.registry_incomes, Dataset::RegistryIncomes),
            court_and_insolvencies: read(
                slots.court_and_insolvencies,
                Dataset::CourtAndInsolvencies,
            ),
            immovables: read(slots.immovables, Dataset::Immovables),
            metrics: read(slots.metrics, Dataset::Metrics),
            account_statements: read(slots.account_statements, Dataset::AccountStatements),
            attachments: read(slots.attachments, Dataset::Attachments),
            categorizations_summary: read(
                slots.categorizations_summary,
                Dataset::CategorizationsSummary,
            ),
            categorizations: slots.categorizations,
            identity_verifications: read(
                slots.identity_verifications,
                Dataset::IdentityVerifications,
            ),
            source_files: read(slots.source_files, Dataset::SourceFiles),
        }
    }
}

/// A slot's result; a slot left empty (no read answered for it) is an error, not a panic.
fn read<T>(slot: Option<Result<T, Error>>, dataset: Dataset) -> Result<T, Error> {
    slot.unwrap_or_else(|| {
        Err(Error::InvalidResponse {
            operation: Some(dataset.operation_id()),
            message: format!("{} was not read", dataset.name()),
        })
    })
}

impl<'a> IntoFuture for SessionDatasetsRequest<'a> {
    type Output = SessionDatasets;
    type IntoFuture = Pin<Box<dyn Future<Output = SessionDatasets> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.fetch())
    }
}

impl Client {
    /// Reads every JSON dataset of the session concurrently (at most
    /// [`DEFAULT_CONCURRENCY`] at once unless set with
    /// [`concurrency`](SessionDatasetsRequest::concurrency)), each with its own result; `.await`
    /// it. See [`session_datasets`](crate::session_datasets).
    pub fn session_datasets(&self, session_id: Uuid) -> SessionDatasetsRequest<'_> {
        SessionDatasetsRequest {
            client: self,
            session_id,
            concurrency: DEFAULT_CONCURRENCY,
            include_deprecated: false,
        }
    }
}
