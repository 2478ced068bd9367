//! Credit bureau and public-register data: tradelines, court cases, companies, incomes and
//! property.

use chrono::{Datelike, NaiveDate};
use creditdata_client::types::{ContractType, CreditorSector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use super::draw::{Money, RiskTier, date_between, item_id, money_between, pick, rng};
use super::person::{Address, Person};
use crate::catalog::Country;
use crate::redact::debug_showing;

/// An open or closed credit agreement (positive data).
#[derive(Clone, PartialEq)]
pub struct Tradeline {
    /// Stable id.
    pub id: Uuid,
    /// Kind of credit.
    pub contract_type: ContractType,
    /// The lender.
    pub creditor: String,
    /// Opened.
    pub opened: NaiveDate,
    /// Contractual end, if any.
    pub ends: Option<NaiveDate>,
    /// Original amount or credit limit.
    pub original: Money,
    /// Outstanding balance.
    pub outstanding: Money,
    /// Monthly instalment.
    pub monthly_installment: Money,
    /// `ACTIVE` or `CLOSED`.
    pub status: &'static str,
    /// Whether the subject shares it with a co-borrower.
    pub co_borrowed: bool,
}

// Creditors, amounts and dates are the subject's credit history: only what identifies an item
// shows.
debug_showing!(Tradeline {
    id,
    contract_type,
    status
});

/// A payment default (negative data).
#[derive(Clone, PartialEq)]
pub struct NegativeEntry {
    /// Stable id.
    pub id: Uuid,
    /// Kind of credit the default arose from.
    pub contract_type: ContractType,
    /// The creditor.
    pub creditor: String,
    /// The creditor's sector.
    pub sector: CreditorSector,
    /// Unpaid amount.
    pub amount: Money,
    /// When the default was registered.
    pub registered: NaiveDate,
    /// Days past due when registered.
    pub days_past_due: u32,
    /// `UNPAID`, `IN_DEBT_COLLECTION` or `SETTLED`.
    pub status: &'static str,
    /// Settlement date, when settled.
    pub settled: Option<NaiveDate>,
}

debug_showing!(NegativeEntry { id, status });

/// A court or insolvency case.
#[derive(Clone, PartialEq)]
pub struct CourtCase {
    /// Case number.
    pub case_number: String,
    /// Court.
    pub court: String,
    /// `DEBT_RECOVERY`, `PAYMENT_ORDER` or `DEBT_RESTRUCTURING`.
    pub kind: &'static str,
    /// `PENDING`, `DECIDED` or `CLOSED`.
    pub status: &'static str,
    /// Filed.
    pub filed: NaiveDate,
    /// Decided, if so.
    pub decided: Option<NaiveDate>,
    /// Amount claimed.
    pub claim: Money,
    /// Claimant.
    pub claimant: String,
}

debug_showing!(CourtCase { kind, status });

/// A company the subject is or was involved in.
#[derive(Clone, PartialEq)]
pub struct Company {
    /// Registered name.
    pub name: String,
    /// Registry code.
    pub registry_code: String,
    /// Relation start.
    pub start: NaiveDate,
    /// Relation end, if ended.
    pub end: Option<NaiveDate>,
}

debug_showing!(Company {});

/// One assessment year of taxable income.
#[derive(Clone, PartialEq)]
pub struct Income {
    /// Assessment year.
    pub year: i32,
    /// Gross income.
    pub gross: Money,
    /// Net income.
    pub net: Money,
    /// Tax paid.
    pub tax: Money,
}

debug_showing!(Income { year });

/// A registered property.
#[derive(Clone, PartialEq)]
pub struct Property {
    /// Stable id.
    pub id: Uuid,
    /// `APARTMENT`, `DETACHED_HOUSE`, `SUMMER_COTTAGE` or `LAND`.
    pub kind: &'static str,
    /// Where.
    pub address: Address,
    /// Cadastral or land-register number.
    pub registry_number: String,
    /// Ownership share numerator and denominator.
    pub share: (u32, u32),
    /// Acquired.
    pub acquired: NaiveDate,
    /// Floor or land area in m².
    pub area_m2: u32,
    /// Whether a mortgage is registered on it.
    pub mortgaged: bool,
    /// Assessed value.
    pub assessed_value: Money,
}

debug_showing!(Property { id, kind });

/// What bureaus and registers of one country hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreditData {
    /// Positive tradelines.
    pub positive: Vec<Tradeline>,
    /// Payment defaults.
    pub negative: Vec<NegativeEntry>,
    /// Court and insolvency cases.
    pub court: Vec<CourtCase>,
    /// Company roles.
    pub companies: Vec<Company>,
    /// Registry incomes (home country only).
    pub incomes: Vec<Income>,
    /// Property.
    pub properties: Vec<Property>,
}

const TELECOMS: &[&str] = &["Lumo Mobile", "Northwave Telecom", "Kite Communications"];
const UTILITIES: &[&str] = &["Citywide Energy", "Brightwater Utilities"];
const RETAILERS: &[&str] = &["Homeline Furniture", "Polar Electronics"];

fn legal_suffix(country: &Country) -> &'static str {
    match country.code {
        "GBR" => "Ltd",
        "DEU" => "GmbH",
        "SWE" => "AB",
        "FIN" => "Oy",
        "EST" => "OÜ",
        "LVA" => "SIA",
        "LTU" => "UAB",
        "POL" => "Sp. z o.o.",
        _ => "Ltd",
    }
}

impl CreditData {
    /// The credit data of `person` in `country`.
    pub fn generate(
        session: Uuid,
        country: &'static Country,
        person: &Person,
        home: bool,
        created: NaiveDate,
    ) -> CreditData {
        let mut rng = rng(session, &format!("credit/{}", country.code));
        let currency = country.currency;
        let salary = if home {
            person.salary
        } else {
            money_between(&mut rng, 500, 1500, currency)
        };
        let adult_since = NaiveDate::from_ymd_opt(person.birth_date.year() + 19, 1, 1)
            .unwrap_or(created)
            .max(created - chrono::Duration::days(20 * 365));
        let mut data = CreditData::default();

        // Property first: a mortgage needs something to be secured on.
        let owns_home = home
            && rng.gen_bool(if person.risk == RiskTier::Poor {
                0.2
            } else {
                0.55
            });
        if owns_home {
            let acquired =
                date_between(&mut rng, adult_since, created - chrono::Duration::days(200));
            let kind = *pick(&mut rng, &["APARTMENT", "APARTMENT", "DETACHED_HOUSE"]);
            let value = salary.cents * i64::from(rng.gen_range(40u32..90));
            let mortgaged = rng.gen_bool(0.75);
            data.properties.push(Property {
                id: item_id(session, &format!("{}/property/0", country.code)),
                kind,
                address: person.address.clone(),
                registry_number: registry_number(&mut rng, country),
                share: if person.marital_status == "MARRIED" {
                    (1, 2)
                } else {
                    (1, 1)
                },
                acquired,
                area_m2: if kind == "APARTMENT" {
                    rng.gen_range(38..110)
                } else {
                    rng.gen_range(95..220)
                },
                mortgaged,
                assessed_value: Money::new(value, currency),
            });
            if mortgaged {
                let original = Money::new(value * 8 / 10, currency);
                let years = rng.gen_range(20..31);
                let elapsed_months = months_between(acquired, created);
                let total_months = years * 12;
                let remaining = (total_months - elapsed_months.min(total_months - 1)).max(1);
                let outstanding = original.cents * i64::from(remaining) / i64::from(total_months);
                data.positive.push(Tradeline {
                    id: item_id(session, &format!("{}/positive/mortgage", country.code)),
                    contract_type: ContractType::MortgageLoan,
                    creditor: (*pick(&mut rng, country.banks)).to_owned(),
                    opened: acquired,
                    ends: NaiveDate::from_ymd_opt(
                        acquired.year() + years as i32,
                        acquired.month(),
                        1,
                    ),
                    original,
                    outstanding: Money::new(outstanding, currency),
                    monthly_installment: Money::new(
                        annuity(original.cents, total_months),
                        currency,
                    ),
                    status: "ACTIVE",
                    co_borrowed: person.marital_status == "MARRIED",
                });
            }
        }
        if (home && rng.gen_bool(0.2)) || (!home && rng.gen_bool(0.1)) {
            let acquired =
                date_between(&mut rng, adult_since, created - chrono::Duration::days(100));
            let (city, postal) = *pick(&mut rng, country.cities);
            let index = data.properties.len();
            data.properties.push(Property {
                id: item_id(session, &format!("{}/property/{index}", country.code)),
                kind: ["SUMMER_COTTAGE", "LAND"][rng.gen_range(0..2)],
                address: Address {
                    street: format!(
                        "{} {}",
                        pick(&mut rng, country.streets),
                        rng.gen_range(1..300)
                    ),
                    postal_code: postal.to_owned(),
                    city: city.to_owned(),
                    country: country.code,
                },
                registry_number: registry_number(&mut rng, country),
                share: (1, 1),
                acquired,
                area_m2: rng.gen_range(600..9000),
                mortgaged: false,
                assessed_value: Money::new(
                    salary.cents * i64::from(rng.gen_range(6u32..20)),
                    currency,
                ),
            });
        }

        // Consumer credit.
        let extra_lines = if home {
            rng.gen_range(1..4)
        } else {
            rng.gen_range(0..2)
        };
        for n in 0..extra_lines {
            let contract_type = match rng.gen_range(0..4) {
                0 => ContractType::CreditCard,
                1 => ContractType::UnsecuredLoan,
                2 => ContractType::Leasing,
                _ => ContractType::Overdraft,
            };
            let opened = date_between(&mut rng, adult_since, created - chrono::Duration::days(30));
            let multiple = |rng: &mut ChaCha8Rng, low: i64, high: i64| {
                Money::new(
                    salary.cents * rng.gen_range(low..high) / 100 * 100,
                    currency,
                )
            };
            let (original, months) = match contract_type {
                ContractType::CreditCard | ContractType::Overdraft => (multiple(&mut rng, 1, 3), 0),
                ContractType::Leasing => (multiple(&mut rng, 4, 12), 60),
                _ => (multiple(&mut rng, 1, 6), rng.gen_range(24..84)),
            };
            let elapsed = months_between(opened, created);
            let closed = months > 0 && elapsed >= months;
            let outstanding = if closed {
                0
            } else if months > 0 {
                original.cents * i64::from(months - elapsed) / i64::from(months)
            } else {
                original.cents * i64::from(rng.gen_range(0u32..70)) / 100
            };
            let installment = if closed {
                0
            } else if months > 0 {
                annuity(original.cents, months)
            } else {
                outstanding / 20
            };
            data.positive.push(Tradeline {
                id: item_id(session, &format!("{}/positive/{n}", country.code)),
                contract_type,
                creditor: (*pick(&mut rng, country.banks)).to_owned(),
                opened,
                ends: (months > 0).then(|| opened + chrono::Duration::days(i64::from(months) * 30)),
                original,
                outstanding: Money::new(outstanding, currency),
                monthly_installment: Money::new(installment, currency),
                status: if closed { "CLOSED" } else { "ACTIVE" },
                co_borrowed: false,
            });
        }

        // Payment defaults, by risk tier.
        let defaults = match (person.risk, home) {
            (RiskTier::Good, _) => 0,
            (RiskTier::Fair, true) => rng.gen_range(0..2),
            (RiskTier::Poor, true) => rng.gen_range(1..4),
            (RiskTier::Poor, false) => u32::from(rng.gen_bool(0.3)),
            (RiskTier::Fair, false) => 0,
        };
        for n in 0..defaults {
            let (creditor, sector, contract_type) = match rng.gen_range(0..4) {
                0 => (
                    (*pick(&mut rng, TELECOMS)).to_owned(),
                    CreditorSector::Telecom,
                    ContractType::Other,
                ),
                1 => (
                    (*pick(&mut rng, UTILITIES)).to_owned(),
                    CreditorSector::Private,
                    ContractType::Other,
                ),
                2 => (
                    (*pick(&mut rng, RETAILERS)).to_owned(),
                    CreditorSector::Private,
                    ContractType::UnsecuredLoan,
                ),
                _ => (
                    (*pick(&mut rng, country.banks)).to_owned(),
                    CreditorSector::Finance,
                    ContractType::CreditCard,
                ),
            };
            let registered = date_between(
                &mut rng,
                created - chrono::Duration::days(4 * 365),
                created - chrono::Duration::days(20),
            );
            let settled = (person.risk == RiskTier::Fair || rng.gen_bool(0.25))
                .then(|| date_between(&mut rng, registered, created - chrono::Duration::days(1)));
            let status = match settled {
                Some(_) => "SETTLED",
                None if rng.gen_bool(0.5) => "IN_DEBT_COLLECTION",
                None => "UNPAID",
            };
            data.negative.push(NegativeEntry {
                id: item_id(session, &format!("{}/negative/{n}", country.code)),
                contract_type,
                creditor,
                sector,
                amount: money_between(&mut rng, 80, 4200, currency),
                registered,
                days_past_due: rng.gen_range(45..240),
                status,
                settled,
            });
        }

        // Court cases follow the larger defaults.
        for (n, entry) in data.negative.iter().enumerate() {
            if entry.amount.cents < 50_000 && entry.status != "IN_DEBT_COLLECTION" {
                continue;
            }
            let filed = entry.registered + chrono::Duration::days(rng.gen_range(30..120));
            if filed >= created {
                continue;
            }
            let decided = rng
                .gen_bool(0.6)
                .then(|| date_between(&mut rng, filed, created - chrono::Duration::days(1)));
            data.court.push(CourtCase {
                case_number: format!(
                    "{}-{}/{:05}",
                    country.alpha2,
                    filed.year(),
                    rng.gen_range(1..99999) + n
                ),
                court: court_name(country),
                kind: if entry.amount.cents < 100_000 {
                    "PAYMENT_ORDER"
                } else {
                    "DEBT_RECOVERY"
                },
                status: match (decided, entry.settled) {
                    (_, Some(_)) => "CLOSED",
                    (Some(_), None) => "DECIDED",
                    (None, None) => "PENDING",
                },
                filed,
                decided,
                claim: Money::new(entry.amount.cents + entry.amount.cents / 10, currency),
                claimant: entry.creditor.clone(),
            });
        }
        if person.risk == RiskTier::Poor && home && data.negative.len() >= 3 {
            let filed = created - chrono::Duration::days(rng.gen_range(20..200));
            data.court.push(CourtCase {
                case_number: format!(
                    "{}-{}/R{:04}",
                    country.alpha2,
                    filed.year(),
                    rng.gen_range(1..9999)
                ),
                court: court_name(country),
                kind: "DEBT_RESTRUCTURING",
                status: "PENDING",
                filed,
                decided: None,
                claim: Money::new(data.negative.iter().map(|e| e.amount.cents).sum(), currency),
                claimant: person.full_name(),
            });
        }

        // Company roles.
        let companies = if home {
            match rng.gen_range(0..12) {
                0..=2 => 1,
                3 => 2,
                _ => 0,
            }
        } else {
            0
        };
        for n in 0..companies {
            let start = date_between(&mut rng, adult_since, created - chrono::Duration::days(60));
            let end = (n > 0 || rng.gen_bool(0.3))
                .then(|| date_between(&mut rng, start, created - chrono::Duration::days(1)));
            let trade = *pick(
                &mut rng,
                &["Consulting", "Renovation", "Design", "Trading", "Software"],
            );
            data.companies.push(Company {
                name: format!("{} {trade} {}", person.family_name, legal_suffix(country)),
                registry_code: format!("{:08}", rng.gen_range(10_000_000..99_999_999)),
                start,
                end,
            });
        }

        // Taxable income of the last three assessment years (home country only).
        if home {
            let rate = i64::from(country.tax_rate_percent);
            for back in 1..=3 {
                let year = created.year() - back;
                let growth = 100 - i64::from(back) * i64::from(rng.gen_range(1u32..4));
                let net = salary.cents * 12 * growth / 100;
                let gross = net * 100 / (100 - rate);
                data.incomes.push(Income {
                    year,
                    gross: Money::new(gross, currency),
                    net: Money::new(net, currency),
                    tax: Money::new(gross - net, currency),
                });
            }
        }
        data
    }
}

fn registry_number(rng: &mut ChaCha8Rng, country: &Country) -> String {
    format!(
        "{}-{:03}-{:04}-{:04}",
        country.alpha2,
        rng.gen_range(1..999),
        rng.gen_range(1..9999),
        rng.gen_range(1..9999)
    )
}

fn court_name(country: &Country) -> String {
    let city = country
        .cities
        .first()
        .map(|(city, _)| *city)
        .unwrap_or("Central");
    format!("{city} District Court")
}

/// Whole months from `from` to `to`.
pub fn months_between(from: NaiveDate, to: NaiveDate) -> u32 {
    let months = (to.year() - from.year()) * 12 + to.month() as i32 - from.month() as i32;
    months.max(0) as u32
}

/// Monthly payment of an annuity loan at 5 % a year.
fn annuity(principal_cents: i64, months: u32) -> i64 {
    let rate = 0.05 / 12.0;
    let n = f64::from(months.max(1));
    let payment = principal_cents as f64 * rate / (1.0 - (1.0 + rate).powf(-n));
    payment.round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annuity_is_plausible() {
        // 100 000.00 over 25 years at 5 %: about 584.59 a month.
        let payment = annuity(10_000_000, 300);
        assert!((58_400..58_500).contains(&payment), "{payment}");
    }

    #[test]
    fn months_between_counts_whole_months() {
        let a = NaiveDate::from_ymd_opt(2024, 11, 20).expect("date");
        let b = NaiveDate::from_ymd_opt(2026, 2, 1).expect("date");
        assert_eq!(months_between(a, b), 15);
        assert_eq!(months_between(b, a), 0);
    }
}
