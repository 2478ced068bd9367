//! The API's responses, built from a session's [`Dossier`] with the generated types of
//! `creditdata-client` (so the mock cannot drift from the client), one module per part of the
//! API as in [`crate::api`].
//!
//! Which data a response carries follows the per-provider status: a provider contributes items
//! only once it has answered with `SUCCESS`; a package the session did not request reports
//! `PACKAGE_UPGRADE_REQUIRED`; a package or country the catalog does not offer reports
//! `UNSUPPORTED_COUNTRY`.

use crate::built::Built;
mod bank;
mod credit;
mod described;
mod identity;
mod person;
pub mod sessions;
mod source_files;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use creditdata_client::types::{DataPackageInput, Source, SourceStatus};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::catalog::{self, Dataset, Provider};
use crate::config::MockConfig;
use crate::data::{CountryData, Dossier, Money, fnv1a};
use crate::store::SessionRecord;

/// A settled session, its dossier and the clock: everything a response is made from.
pub struct View<'a> {
    /// The session, settled to `now`.
    pub record: &'a SessionRecord,
    /// Its data.
    pub dossier: &'a Dossier,
    /// Timing rules.
    pub config: &'a MockConfig,
    /// The clock.
    pub now: DateTime<Utc>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn money(value: Money) -> Value {
    json!({ "amount": value.value(), "currencyCode": value.currency })
}

/// The source of a country the mock's catalog does not serve for a dataset.
fn unsupported_country(code: &str) -> Source {
    Source::builder()
        .country_code(Some(code.to_owned()))
        .status(SourceStatus::UnsupportedCountry)
        .build()
        .built()
}

/// Whether the mock's simulated failures hit `provider` in `session`.
fn simulated_error(session: Uuid, provider: &str, one_in: u32) -> bool {
    one_in > 0
        && fnv1a(format!("{session}/{provider}/outcome").as_bytes())
            .is_multiple_of(u64::from(one_in))
}

impl View<'_> {
    /// The status of `provider` (of country `code`) for `dataset`.
    pub fn status(&self, code: &str, provider: &Provider, dataset: Dataset) -> SourceStatus {
        let Some(request) = self.record.package_request(code, dataset.package()) else {
            return SourceStatus::PackageUpgradeRequired;
        };
        self.status_since_consent(request.consented_at, provider)
    }

    /// The status of `provider` once the customer consented at `consented` (`None`: not yet):
    /// a forced outcome, else waiting for the provider's delay, else the simulated outcome.
    /// Hand-written and described datasets answer alike.
    pub fn status_since_consent(
        &self,
        consented: Option<chrono::DateTime<chrono::Utc>>,
        provider: &Provider,
    ) -> SourceStatus {
        let Some(consented) = consented else {
            return SourceStatus::WaitingForCustomer;
        };
        if let Some(forced) = self.record.source_overrides.get(provider.id) {
            return forced.status();
        }
        let delay = ChronoDuration::from_std(self.config.provider_delay).unwrap_or_default();
        if self.now < consented + delay {
            SourceStatus::WaitingForProvider
        } else if simulated_error(
            self.record.id,
            provider.id,
            self.config.provider_error_one_in,
        ) {
            SourceStatus::Error
        } else {
            SourceStatus::Success
        }
    }

    /// The `sources` of a dataset response.
    pub fn sources(&self, dataset: Dataset) -> Vec<Source> {
        let mut sources = Vec::new();
        for request in &self.record.countries {
            let code = request.country.as_str();
            let Some(country) = catalog::country(code) else {
                sources.push(unsupported_country(code));
                continue;
            };
            let providers: Vec<&Provider> = country
                .providers
                .iter()
                .filter(|provider| provider.delivers(dataset))
                .collect();
            if providers.is_empty() && !country.offers(dataset.package()) {
                sources.push(unsupported_country(code));
            }
            for provider in providers {
                sources.push(
                    Source::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .country_code(Some(code.to_owned()))
                        .status(self.status(code, provider, dataset))
                        .build()
                        .built(),
                );
            }
        }
        sources
    }

    /// The (country data, provider) pairs that delivered `dataset`.
    pub fn delivered(&self, dataset: Dataset) -> Vec<(&CountryData, &'static Provider)> {
        let mut delivered = Vec::new();
        for request in &self.record.countries {
            let Some(data) = self.dossier.country(&request.country) else {
                continue;
            };
            for provider in data
                .country
                .providers
                .iter()
                .filter(|p| p.delivers(dataset))
            {
                if self.status(data.country.code, provider, dataset) == SourceStatus::Success {
                    delivered.push((data, provider));
                }
            }
        }
        delivered
    }

    fn consent_of(&self, code: &str, package: DataPackageInput) -> DateTime<Utc> {
        self.record
            .package_request(code, package)
            .and_then(|request| request.consented_at)
            .unwrap_or(self.record.created_at)
    }
}
