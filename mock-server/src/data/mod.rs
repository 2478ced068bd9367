//! Deterministic, realistic datasets.
//!
//! Everything about a session's subject is derived from the session id (and its creation time,
//! e-mail and requested countries): the same session always yields the same person, accounts,
//! tradelines and files, and every endpoint reads from the one [`Dossier`], so the PDF report,
//! the Excel workbooks, the TSV and the JSON datasets agree.

pub mod bank;
pub mod credit;
pub mod draw;
pub mod identity;
pub mod person;
pub mod scores;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::NaiveDate;
use uuid::Uuid;

use crate::catalog::{self, Country};
use crate::redact::debug_showing;
use crate::store::SessionRecord;

pub use bank::Account;
pub use credit::CreditData;
pub use draw::{Money, RiskTier, fnv1a, format_cents, item_id, rng};
pub use identity::{AttachmentSpec, IdentityData, ImageSpec, Verification};
pub use person::Person;

/// Everything the mock knows about one session's subject, country by country.
pub struct Dossier {
    /// The session.
    pub session: Uuid,
    /// The day the session was created (the providers' report date).
    pub created: NaiveDate,
    /// The subject.
    pub person: Person,
    /// Data per requested country the catalog covers, in request order.
    pub countries: Vec<CountryData>,
    files: Mutex<HashMap<String, Arc<Vec<u8>>>>,
}

/// What the providers of one country hold about the subject.
#[derive(PartialEq)]
pub struct CountryData {
    /// The country.
    pub country: &'static Country,
    /// Whether it is the subject's home country.
    pub home: bool,
    /// Credit bureau and registry data.
    pub credit: CreditData,
    /// Bank accounts with their transactions.
    pub accounts: Vec<Account>,
    /// Identity checks and documents.
    pub identity: Option<IdentityData>,
}

impl Dossier {
    /// Generates the dossier of `record` (deterministic in its id, creation time, e-mail and
    /// countries).
    pub fn generate(record: &SessionRecord) -> Dossier {
        let person = Person::generate(record);
        let created = record.created_at.date_naive();
        let countries = record
            .countries
            .iter()
            .filter_map(|request| catalog::country(&request.country))
            .map(|country| {
                let home = country.code == person.home.code;
                let credit = CreditData::generate(record.id, country, &person, home, created);
                let accounts = bank::generate(record.id, country, &person, &credit, home, created);
                let identity = country
                    .providers
                    .iter()
                    .any(|provider| provider.kind == catalog::ProviderKind::Identity)
                    .then(|| IdentityData::generate(record.id, country, &person, created));
                CountryData {
                    country,
                    home,
                    credit,
                    accounts,
                    identity,
                }
            })
            .collect();
        Dossier {
            session: record.id,
            created,
            person,
            countries,
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The data of `code`, if requested and covered.
    pub fn country(&self, code: &str) -> Option<&CountryData> {
        self.countries.iter().find(|data| data.country.code == code)
    }

    /// A generated file, made once by `make` and kept.
    pub fn file<E>(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<Arc<Vec<u8>>, E> {
        if let Some(file) = self.files.lock().ok().and_then(|f| f.get(key).cloned()) {
            return Ok(file);
        }
        let file = Arc::new(make()?);
        if let Ok(mut files) = self.files.lock() {
            files.insert(key.to_owned(), Arc::clone(&file));
        }
        Ok(file)
    }
}

/// Dossiers by session (and country list), generated on first use.
#[derive(Default)]
pub struct DossierCache {
    entries: Mutex<HashMap<(Uuid, String), Arc<Dossier>>>,
}

debug_showing!(Dossier {
    session,
    created,
    person,
    countries
});

/// Two dossiers are equal when they hold the same data (whichever files either rendered).
impl PartialEq for Dossier {
    fn eq(&self, other: &Self) -> bool {
        self.session == other.session
            && self.created == other.created
            && self.person == other.person
            && self.countries == other.countries
    }
}

impl std::fmt::Debug for CountryData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountryData")
            .field("country", &self.country.code)
            .field("home", &self.home)
            .field("credit", &self.credit)
            .field("accounts", &self.accounts)
            .field("identity", &self.identity)
            .finish()
    }
}

impl std::fmt::Debug for DossierCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.entries.lock().map_or(0, |entries| entries.len());
        f.debug_struct("DossierCache")
            .field("cached", &cached)
            .finish()
    }
}

/// Upper bound of cached dossiers; the cache is cleared when it is reached (regeneration is
/// deterministic, so that only costs time).
const CACHE_LIMIT: usize = 4096;

impl DossierCache {
    /// The dossier of `record`.
    pub fn get(&self, record: &SessionRecord) -> Arc<Dossier> {
        let countries: Vec<&str> = record
            .countries
            .iter()
            .map(|request| request.country.as_str())
            .collect();
        let key = (record.id, countries.join(","));
        if let Some(dossier) = self.entries.lock().ok().and_then(|e| e.get(&key).cloned()) {
            return dossier;
        }
        let dossier = Arc::new(Dossier::generate(record));
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_LIMIT {
                entries.clear();
            }
            entries.insert(key, Arc::clone(&dossier));
        }
        dossier
    }

    /// Forgets everything (after a reset).
    pub fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::draw::months_back;
    use super::*;

    #[test]
    fn cents_are_grouped() {
        assert_eq!(format_cents(12_345_678), "123 456.78");
        assert_eq!(format_cents(-5), "-0.05");
        assert_eq!(format_cents(100_000), "1 000.00");
    }

    fn record(id: Uuid, countries: &[&str]) -> SessionRecord {
        use crate::store::{CountryRequest, PackageRequest, Progress};
        let now = chrono::Utc::now();
        SessionRecord {
            id,
            created_at: now,
            created_by_name: "tester".into(),
            organizational_unit_name: None,
            subject_email: "someone@example.com".into(),
            countries: countries
                .iter()
                .map(|code| CountryRequest {
                    country: (*code).to_owned(),
                    packages: crate::catalog::ALL_PACKAGES
                        .iter()
                        .map(|package| PackageRequest {
                            package: *package,
                            requested_at: now,
                            consented_at: Some(now),
                        })
                        .collect(),
                })
                .collect(),
            deadline: now,
            progress: Progress::CompletedByCustomer { at: now },
            notifications: Vec::new(),
            source_overrides: Default::default(),
            described_members: Default::default(),
        }
    }

    #[test]
    fn the_same_session_always_yields_the_same_dossier() {
        let record = record(Uuid::from_u128(42), &["FIN", "SWE", "GBR"]);
        let first = Dossier::generate(&record);
        let second = Dossier::generate(&record);
        assert!(first == second);
        let other = Dossier::generate(&self::tests::record(
            Uuid::from_u128(43),
            &["FIN", "SWE", "GBR"],
        ));
        assert!(first != other);
    }

    #[test]
    fn many_sessions_generate_consistent_data() {
        let codes: Vec<&str> = crate::catalog::COUNTRIES.iter().map(|c| c.code).collect();
        let mut gaps = 0;
        for n in 0..400u128 {
            // Rotate the home country through the catalog.
            let mut countries = codes.clone();
            countries.rotate_left((n as usize) % codes.len());
            let dossier = Dossier::generate(&record(Uuid::from_u128(n * 7919 + 1), &countries));
            assert_eq!(dossier.countries.len(), codes.len());
            assert!(dossier.countries[0].home);
            assert!(!dossier.person.full_name().is_empty());
            for data in &dossier.countries {
                for account in &data.accounts {
                    let last = account.transactions.last().map(|t| t.balance_after);
                    assert_eq!(
                        last.unwrap_or(account.opening.cents),
                        account.closing().cents
                    );
                    assert!(
                        account
                            .transactions
                            .windows(2)
                            .all(|w| w[0].booking <= w[1].booking)
                    );
                }
                if data.home && data.accounts.iter().any(|a| !a.missing_months.is_empty()) {
                    gaps += 1;
                }
                for line in &data.credit.positive {
                    assert!(
                        line.outstanding.cents >= 0
                            && line.outstanding.cents
                                <= line.original.cents.max(line.outstanding.cents)
                    );
                }
            }
        }
        // One session in four has a gap in its bank history.
        assert!((60..140).contains(&gaps), "{gaps} of 400");
    }

    #[test]
    fn months_back_crosses_years() {
        let date = NaiveDate::from_ymd_opt(2026, 2, 14).expect("date");
        assert_eq!(
            months_back(date, 3),
            NaiveDate::from_ymd_opt(2025, 11, 1).expect("date")
        );
        assert_eq!(
            months_back(date, 0),
            NaiveDate::from_ymd_opt(2026, 2, 1).expect("date")
        );
    }
}
