//! What the generated list of datasets (`generated_datasets.rs`) says of each dataset, as
//! plain data below it: where its answer reports readiness ([`ReadinessProperties`]) and what
//! it lists ([`Listing`]). Public as `readiness::ReadinessProperties`,
//! `readiness::ProviderListProperties` and `session_datasets::Listing`.

use crate::operation::OperationMeta;

/// A dataset whose answer lists entries that other operations take by id
/// ([`Dataset::listing`](crate::session_datasets::Dataset::listing)): the attachments, each one's content; the account statements, each
/// one's Excel file and TSV statement. Found in the API description's links, never named by
/// hand, so a listing a release adds is known here after `cargo xtask regen`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listing {
    /// The member of the answer holding the entries (`attachments`); `None` when the answer is
    /// the list itself.
    pub member: Option<&'static str>,
    /// The member of each entry holding its id (`id`).
    pub id: &'static str,
    /// The operations taking one entry's id, in the order the description links them.
    pub entry_operations: &'static [&'static OperationMeta],
}

/// Where a dataset's answer reports readiness, by its JSON members' names
/// ([`Dataset::readiness_properties`](crate::session_datasets::Dataset::readiness_properties), generated from the API description). Empty for a dataset
/// that does not report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadinessProperties {
    /// The arrays of provider entries (`sources`), each entry's status in its `status`.
    pub provider_lists: &'static [ProviderListProperties],
    /// The objects whose `status` speaks for the whole dataset (`summary`).
    pub dataset_statuses: &'static [&'static str],
}

/// One provider list of a dataset's answer: its member and its entries' members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderListProperties {
    /// The list (`sources`).
    pub list: &'static str,
    /// The provider's id in an entry (`sourceId`).
    pub source_id: &'static str,
    /// The provider's country in an entry (`countryCode`), when entries have one.
    pub country_code: Option<&'static str>,
}
