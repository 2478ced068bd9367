//! The mock's state: its sessions and how they move through their life; [`state_file`] keeps
//! them across restarts.
//!
//! Time-driven transitions (auto-completion, a passed deadline) are a pure function of a record
//! and the clock ([`SessionRecord::settle`]): reads settle a copy, writes settle the stored record
//! first, so nothing depends on a background timer.

use crate::built::Built;
use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use creditdata_client::types::{
    CustomerProgressStatus, DataPackage, DataPackageInput, QueryParameter, Session, SourceStatus,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::config::MockConfig;
use crate::idp::grants::IdentityState;
use crate::redact::debug_showing;

pub mod state_file;

/// A session as the mock stores it.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// Session id.
    pub id: Uuid,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// `createdByName`: the service account that created it.
    pub created_by_name: String,
    /// `organizationalUnitName`.
    pub organizational_unit_name: Option<String>,
    /// The Data Subject's e-mail.
    pub subject_email: String,
    /// Requested countries and packages, in request order.
    pub countries: Vec<CountryRequest>,
    /// The customer input deadline.
    pub deadline: DateTime<Utc>,
    /// How far the customer has got.
    pub progress: Progress,
    /// E-mails sent to the subject (the mock's outbox).
    pub notifications: Vec<Notification>,
    /// Provider outcomes forced through the control endpoints, by `sourceId`.
    #[serde(default)]
    pub source_overrides: BTreeMap<String, SourceOverride>,
    /// Members the description declares for the session that no hand-written code knows
    /// (see `crate::described::members`), as the client sent them; not shown by `Debug`.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub described_members: serde_json::Map<String, serde_json::Value>,
}

/// One requested country.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountryRequest {
    /// ISO alpha-3.
    pub country: String,
    /// Its packages, in request order.
    pub packages: Vec<PackageRequest>,
}

/// One requested (country, package) pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageRequest {
    /// The package.
    pub package: DataPackageInput,
    /// When it was requested (creation or PATCH).
    pub requested_at: DateTime<Utc>,
    /// When the customer consented to it; `None` while waiting for the customer.
    pub consented_at: Option<DateTime<Utc>>,
}

/// `customerProgressStatus` with the moment it was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Progress {
    /// Waiting for the customer since `since`.
    WaitingForCustomer {
        /// Start of the current wait (creation, an upgrade or a revival by extension).
        since: DateTime<Utc>,
    },
    /// The customer completed the onboarding.
    CompletedByCustomer {
        /// When.
        at: DateTime<Utc>,
    },
    /// The onboarding e-mail could not be delivered.
    DeliveryFailed {
        /// When.
        at: DateTime<Utc>,
    },
    /// The deadline passed.
    Expired {
        /// When.
        at: DateTime<Utc>,
    },
}

impl Progress {
    /// The API's status value.
    pub fn status(&self) -> CustomerProgressStatus {
        match self {
            Progress::WaitingForCustomer { .. } => CustomerProgressStatus::WaitingForCustomer,
            Progress::CompletedByCustomer { .. } => CustomerProgressStatus::CompletedByCustomer,
            Progress::DeliveryFailed { .. } => CustomerProgressStatus::DeliveryFailed,
            Progress::Expired { .. } => CustomerProgressStatus::Expired,
        }
    }

    /// The status as the API spells it.
    pub fn name(&self) -> &'static str {
        match self {
            Progress::WaitingForCustomer { .. } => "WAITING_FOR_CUSTOMER",
            Progress::CompletedByCustomer { .. } => "COMPLETED_BY_CUSTOMER",
            Progress::DeliveryFailed { .. } => "DELIVERY_FAILED",
            Progress::Expired { .. } => "EXPIRED",
        }
    }
}

/// An e-mail the service sent to the subject.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// When.
    pub sent_at: DateTime<Utc>,
    /// Why.
    pub kind: NotificationKind,
    /// To whom.
    pub to: String,
}

// The subject's e-mail address and the creator's name are personal data.
debug_showing!(SessionRecord {
    id,
    created_at,
    organizational_unit_name,
    countries,
    deadline,
    progress,
    notifications,
    source_overrides,
});
debug_showing!(Notification { sent_at, kind });

/// Why an e-mail was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NotificationKind {
    /// The first onboarding e-mail, at creation.
    Onboarding,
    /// A resend requested through the API.
    Resend,
    /// Countries or packages were appended and need the customer's consent.
    Upgrade,
    /// The deadline was extended.
    DeadlineExtended,
}

/// A provider outcome forced through `/_mock/sessions/{id}/sources/{sourceId}/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SourceOverride {
    /// The provider answered.
    Success,
    /// The provider failed.
    Error,
    /// The client is not entitled to this provider.
    Forbidden,
    /// The provider does not cover the subject's country.
    UnsupportedCountry,
    /// The provider keeps the session waiting.
    WaitingForProvider,
    /// The subject's identity code is granted for tax purposes only.
    IdTaxOnly,
}

impl SourceOverride {
    /// The API's value.
    pub fn status(self) -> SourceStatus {
        match self {
            SourceOverride::Success => SourceStatus::Success,
            SourceOverride::Error => SourceStatus::Error,
            SourceOverride::Forbidden => SourceStatus::Forbidden,
            SourceOverride::UnsupportedCountry => SourceStatus::UnsupportedCountry,
            SourceOverride::WaitingForProvider => SourceStatus::WaitingForProvider,
            SourceOverride::IdTaxOnly => SourceStatus::IdTaxOnly,
        }
    }

    /// Parses the API spelling.
    pub fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "SUCCESS" => SourceOverride::Success,
            "ERROR" => SourceOverride::Error,
            "FORBIDDEN" => SourceOverride::Forbidden,
            "UNSUPPORTED_COUNTRY" => SourceOverride::UnsupportedCountry,
            "WAITING_FOR_PROVIDER" => SourceOverride::WaitingForProvider,
            "ID_TAX_ONLY" => SourceOverride::IdTaxOnly,
            _ => return None,
        })
    }
}

fn days(n: u32) -> ChronoDuration {
    ChronoDuration::days(i64::from(n))
}

impl SessionRecord {
    /// Applies the transitions time has made by `now`: auto-completion (when configured) or
    /// expiry, whichever came first.
    pub fn settle(&mut self, now: DateTime<Utc>, config: &MockConfig) {
        let Progress::WaitingForCustomer { since } = self.progress else {
            return;
        };
        let auto_complete_at = config
            .auto_complete_after
            .and_then(|after| ChronoDuration::from_std(after).ok())
            .map(|after| since + after);
        match auto_complete_at {
            Some(at) if at <= now && at < self.deadline => self.complete(at),
            _ if now >= self.deadline => {
                self.progress = Progress::Expired { at: self.deadline };
            }
            _ => {}
        }
    }

    /// A settled copy.
    pub fn settled(&self, now: DateTime<Utc>, config: &MockConfig) -> SessionRecord {
        let mut copy = self.clone();
        copy.settle(now, config);
        copy
    }

    /// The customer completes: every pending package gets consent at `at`.
    pub fn complete(&mut self, at: DateTime<Utc>) {
        self.progress = Progress::CompletedByCustomer { at };
        for country in &mut self.countries {
            for package in &mut country.packages {
                if package.consented_at.is_none() {
                    package.consented_at = Some(at);
                }
            }
        }
    }

    /// The request of `package` for `country`, if any.
    pub fn package_request(
        &self,
        country: &str,
        package: DataPackageInput,
    ) -> Option<&PackageRequest> {
        self.countries
            .iter()
            .find(|request| request.country == country)
            .and_then(|request| request.packages.iter().find(|p| p.package == package))
    }

    /// Whether the subject has completed the identification step at least once.
    pub fn identified(&self) -> bool {
        self.first_consent().is_some()
    }

    /// The earliest consent.
    pub fn first_consent(&self) -> Option<DateTime<Utc>> {
        self.countries
            .iter()
            .flat_map(|country| country.packages.iter())
            .filter_map(|package| package.consented_at)
            .min()
    }

    /// `customerInputDeadlineExtendableUntilUtc`: set while the customer can still be waited
    /// for (waiting or expired), null once completed or undeliverable.
    pub fn extendable_until(&self, config: &MockConfig) -> Option<DateTime<Utc>> {
        match self.progress {
            Progress::WaitingForCustomer { .. } | Progress::Expired { .. } => {
                Some(self.created_at + days(config.extendable_for_days))
            }
            _ => None,
        }
    }

    /// `dataPackageUpgradableUntilUtc`: set while packages can be appended (waiting or
    /// completed), null once expired or undeliverable.
    pub fn upgradable_until(&self, config: &MockConfig) -> Option<DateTime<Utc>> {
        match self.progress {
            Progress::WaitingForCustomer { .. } | Progress::CompletedByCustomer { .. } => {
                Some(self.created_at + days(config.upgradable_for_days))
            }
            _ => None,
        }
    }

    /// The API view of a settled record.
    pub fn to_api(&self, config: &MockConfig, full_name: Option<String>) -> Session {
        Session::builder()
            .id(self.id)
            .created_at_utc(self.created_at)
            .created_by_name(Some(self.created_by_name.clone()))
            .organizational_unit_name(self.organizational_unit_name.clone())
            .subject_email(Some(self.subject_email.clone()))
            .subject_full_name(full_name)
            .customer_input_deadline_utc(Some(self.deadline))
            .customer_progress_status(self.progress.status())
            .query_parameters(Some(
                self.countries
                    .iter()
                    .map(|country| {
                        QueryParameter::builder()
                            .country_code(Some(country.country.clone()))
                            .data_packages(Some(
                                country
                                    .packages
                                    .iter()
                                    .map(|p| package_output(p.package))
                                    .collect(),
                            ))
                            .build()
                            .built()
                    })
                    .collect(),
            ))
            .customer_input_deadline_extendable_until_utc(self.extendable_until(config))
            .data_package_upgradable_until_utc(self.upgradable_until(config))
            .build()
            .built()
    }
}

/// The response-side spelling of a requested package: the same value on the wire, so a package
/// a release adds needs no line here.
pub fn package_output(package: DataPackageInput) -> DataPackage {
    DataPackage::from(package.to_string())
}

/// All sessions, and who is signed in.
#[derive(Default)]
pub struct Store {
    /// Sessions by id.
    pub sessions: HashMap<Uuid, SessionRecord>,
    /// The identity provider's sign-ins and revoked access tokens.
    pub identity: IdentityState,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("sessions", &self.sessions.len())
            .field("identity", &self.identity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn record(now: DateTime<Utc>) -> SessionRecord {
        SessionRecord {
            id: Uuid::nil(),
            created_at: now,
            created_by_name: "me".into(),
            organizational_unit_name: None,
            subject_email: "a@example.com".into(),
            countries: vec![CountryRequest {
                country: "FIN".into(),
                packages: vec![PackageRequest {
                    package: DataPackageInput::Score,
                    requested_at: now,
                    consented_at: None,
                }],
            }],
            deadline: now + ChronoDuration::days(7),
            progress: Progress::WaitingForCustomer { since: now },
            notifications: vec![],
            source_overrides: BTreeMap::new(),
            described_members: Default::default(),
        }
    }

    #[test]
    fn a_passed_deadline_expires_the_session() {
        let now = Utc::now();
        let config = MockConfig::default();
        let settled = record(now).settled(now + ChronoDuration::days(8), &config);
        assert_eq!(settled.progress.name(), "EXPIRED");
        assert!(settled.extendable_until(&config).is_some());
        assert!(settled.upgradable_until(&config).is_none());
    }

    #[test]
    fn auto_completion_wins_over_a_later_deadline() {
        let now = Utc::now();
        let config = MockConfig {
            auto_complete_after: Some(std::time::Duration::from_secs(60)),
            ..MockConfig::default()
        };
        let settled = record(now).settled(now + ChronoDuration::days(30), &config);
        assert_eq!(settled.progress.name(), "COMPLETED_BY_CUSTOMER");
        assert_eq!(
            settled.countries[0].packages[0].consented_at,
            Some(now + ChronoDuration::seconds(60))
        );
        assert!(settled.identified());
    }
}
