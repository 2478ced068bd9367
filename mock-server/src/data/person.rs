//! The Data Subject: one invented person per session.

use chrono::{Datelike, NaiveDate};
use rand::Rng;
use serde_json::{Value, json};

use super::draw::{Money, RiskTier, date_between, pick, rng};
use crate::catalog::{self, COUNTRIES, Country};
use crate::redact::debug_showing;
use crate::store::SessionRecord;

/// A postal address.
#[derive(Clone, PartialEq, Eq)]
pub struct Address {
    /// Street and house number.
    pub street: String,
    /// Postal code.
    pub postal_code: String,
    /// City.
    pub city: String,
    /// ISO alpha-3.
    pub country: &'static str,
}

impl Address {
    /// The JSON value of an `AddressSourcedValue`.
    pub fn to_json(&self) -> Value {
        json!({
            "street": self.street,
            "postalCode": self.postal_code,
            "city": self.city,
            "countryCode": self.country,
        })
    }

    /// One line.
    pub fn line(&self) -> String {
        format!("{}, {} {}", self.street, self.postal_code, self.city)
    }
}

/// An identity document.
#[derive(Clone, PartialEq, Eq)]
pub struct Document {
    /// `PASSPORT` or `ID_CARD`.
    pub kind: &'static str,
    /// Document number.
    pub number: String,
    /// Issuing country (alpha-3).
    pub issuing_country: &'static str,
    /// Issue date.
    pub issued: NaiveDate,
    /// Expiry date.
    pub expires: NaiveDate,
}

impl Document {
    /// The JSON value of a `DocumentSourcedValue`.
    pub fn to_json(&self) -> Value {
        json!({
            "type": self.kind,
            "number": self.number,
            "issuingCountryCode": self.issuing_country,
            "issueDate": self.issued.to_string(),
            "expiryDate": self.expires.to_string(),
        })
    }
}

/// The subject of a session.
#[derive(Clone, PartialEq)]
pub struct Person {
    /// Given name.
    pub given_name: String,
    /// Family name.
    pub family_name: String,
    /// Whether the given name is a woman's (drives gendered family names and identity codes).
    pub female: bool,
    /// Date of birth.
    pub birth_date: NaiveDate,
    /// Country of residence and citizenship.
    pub home: &'static Country,
    /// Current address.
    pub address: Address,
    /// Previous address (moved within the last years), if any.
    pub previous_address: Option<Address>,
    /// National identity code of the home country.
    pub identity_code: String,
    /// Mobile number.
    pub phone: String,
    /// E-mail (the session's subject e-mail).
    pub email: String,
    /// `SINGLE`, `MARRIED`, `DIVORCED` or `COHABITING`.
    pub marital_status: &'static str,
    /// Children under 18.
    pub children: u32,
    /// Identity document.
    pub document: Document,
    /// Credit risk profile.
    pub risk: RiskTier,
    /// Monthly net salary in the home currency.
    pub salary: Money,
    /// Employer.
    pub employer: &'static str,
}

// Everything about the subject is personal data; a document shows only what kind it is.
debug_showing!(Person {});
debug_showing!(Address { country });
debug_showing!(Document {
    kind,
    issuing_country
});

impl Person {
    /// The person of `record`.
    pub fn generate(record: &SessionRecord) -> Person {
        let mut rng = rng(record.id, "person");
        let home = record
            .countries
            .iter()
            .find_map(|request| catalog::country(&request.country))
            .unwrap_or_else(|| pick(&mut rng, COUNTRIES));
        let index = rng.gen_range(0..home.given_names.len());
        let given_name = home.given_names[index].to_owned();
        let female = index % 2 == 1;
        let family_name = gendered(home, pick::<&str>(&mut rng, home.family_names), female);
        let created = record.created_at.date_naive();
        let age = rng.gen_range(23..68);
        let birth_date = date_between(
            &mut rng,
            NaiveDate::from_ymd_opt(created.year() - age - 1, created.month(), 1)
                .unwrap_or(created),
            NaiveDate::from_ymd_opt(created.year() - age, created.month(), 1).unwrap_or(created),
        );
        let address = address(&mut rng, home);
        let previous_address = rng.gen_bool(0.4).then(|| address_moved(&mut rng, home));
        let identity_code = identity_code(&mut rng, home, birth_date, female);
        let phone = format!(
            "{} {} {:03} {:04}",
            home.phone_prefix,
            rng.gen_range(40..80),
            rng.gen_range(0..1000),
            rng.gen_range(0..10000)
        );
        let marital_status = *pick(
            &mut rng,
            &["SINGLE", "MARRIED", "MARRIED", "DIVORCED", "COHABITING"],
        );
        let children = if age < 26 { 0 } else { rng.gen_range(0..4) };
        let issued = date_between(
            &mut rng,
            created - chrono::Duration::days(9 * 365),
            created - chrono::Duration::days(60),
        );
        let document = Document {
            kind: if rng.gen_bool(0.5) {
                "PASSPORT"
            } else {
                "ID_CARD"
            },
            // Nine characters, the width of the machine-readable zone's number field.
            number: format!(
                "{}{}{:06}",
                home.alpha2,
                (b'A' + rng.gen_range(0..26)) as char,
                rng.gen_range(0..1_000_000)
            ),
            issuing_country: home.code,
            issued,
            expires: NaiveDate::from_ymd_opt(
                issued.year() + 10,
                issued.month(),
                issued.day().min(28),
            )
            .unwrap_or(issued),
        };
        let risk = match rng.gen_range(0..10) {
            0..=5 => RiskTier::Good,
            6..=8 => RiskTier::Fair,
            _ => RiskTier::Poor,
        };
        let (low, high) = home.salary_range;
        let salary = Money::new(
            i64::from(rng.gen_range(low..=high) / 10 * 10) * 100,
            home.currency,
        );
        let employer = *pick(&mut rng, home.employers);
        Person {
            given_name,
            family_name,
            female,
            birth_date,
            home,
            address,
            previous_address,
            identity_code,
            phone,
            email: record.subject_email.clone(),
            marital_status,
            children,
            document,
            risk,
            salary,
            employer,
        }
    }

    /// `Given Family`.
    pub fn full_name(&self) -> String {
        format!("{} {}", self.given_name, self.family_name)
    }
}

/// Baltic family names take a feminine form.
fn gendered(country: &Country, family: &str, female: bool) -> String {
    if !female {
        return family.to_owned();
    }
    match country.code {
        "LVA" => family
            .strip_suffix('s')
            .map(|stem| format!("{stem}a"))
            .unwrap_or_else(|| family.to_owned()),
        "LTU" => family
            .strip_suffix("ius")
            .or_else(|| family.strip_suffix("as"))
            .map(|stem| format!("{stem}iene"))
            .unwrap_or_else(|| family.to_owned()),
        _ => family.to_owned(),
    }
}

fn address(rng: &mut rand_chacha::ChaCha8Rng, country: &'static Country) -> Address {
    let (city, postal_code) = *pick(rng, country.cities);
    Address {
        street: street_line(rng, country),
        postal_code: postal_code.to_owned(),
        city: city.to_owned(),
        country: country.code,
    }
}

fn address_moved(rng: &mut rand_chacha::ChaCha8Rng, country: &'static Country) -> Address {
    address(rng, country)
}

fn street_line(rng: &mut rand_chacha::ChaCha8Rng, country: &Country) -> String {
    let street = pick(rng, country.streets);
    let number = rng.gen_range(1..120);
    match country.code {
        // House number first in English addresses.
        "GBR" => format!("{number} {street}"),
        "FIN" | "SWE" | "EST" | "LVA" | "LTU" | "POL" if rng.gen_bool(0.6) => {
            format!("{street} {number}-{}", rng.gen_range(1..40))
        }
        _ => format!("{street} {number}"),
    }
}

/// A national identity code in the home country's format (with its check character where the
/// format has one).
fn identity_code(
    rng: &mut rand_chacha::ChaCha8Rng,
    country: &Country,
    birth: NaiveDate,
    female: bool,
) -> String {
    let (yy, mm, dd) = (birth.year() % 100, birth.month(), birth.day());
    match country.code {
        "FIN" => {
            // DDMMYYCZZZQ: century sign, odd individual number for men, check character mod 31.
            let individual = rng.gen_range(1..450) * 2 + u32::from(!female);
            let century = if birth.year() >= 2000 { 'A' } else { '-' };
            let number: u64 = format!("{dd:02}{mm:02}{yy:02}{individual:03}")
                .parse()
                .unwrap_or(0);
            let check = b"0123456789ABCDEFHJKLMNPRSTUVWXY"[(number % 31) as usize] as char;
            format!("{dd:02}{mm:02}{yy:02}{century}{individual:03}{check}")
        }
        "SWE" => {
            // YYMMDD-NNNC with a Luhn check digit.
            let serial = rng.gen_range(10..99) * 10 + rng.gen_range(0..5) * 2 + u32::from(!female);
            let digits = format!("{yy:02}{mm:02}{dd:02}{serial:03}");
            format!(
                "{yy:02}{mm:02}{dd:02}-{serial:03}{}",
                luhn_check_digit(&digits)
            )
        }
        "EST" => {
            // GYYMMDDSSSC: G encodes century and sex, C is the two-pass weighted check digit.
            let g = match (birth.year() >= 2000, female) {
                (false, false) => 3,
                (false, true) => 4,
                (true, false) => 5,
                (true, true) => 6,
            };
            let body = format!("{g}{yy:02}{mm:02}{dd:02}{:03}", rng.gen_range(0..1000));
            format!("{body}{}", estonian_check_digit(&body))
        }
        "GBR" => format!(
            "{}{}{:06}{}",
            (b'A' + rng.gen_range(0..20)) as char,
            (b'A' + rng.gen_range(0..20)) as char,
            rng.gen_range(0..1_000_000),
            ['A', 'B', 'C', 'D'][rng.gen_range(0..4)]
        ),
        "LVA" => format!("{dd:02}{mm:02}{yy:02}-{:05}", rng.gen_range(10000..30000)),
        "POL" => {
            let month = if birth.year() >= 2000 { mm + 20 } else { mm };
            let serial = rng.gen_range(0..500) * 2 + u32::from(!female);
            format!(
                "{yy:02}{month:02}{dd:02}{serial:04}{}",
                rng.gen_range(0..10)
            )
        }
        _ => format!(
            "{}{yy:02}{mm:02}{dd:02}{:04}",
            if female { 4 } else { 3 },
            rng.gen_range(0..10000)
        ),
    }
}

fn luhn_check_digit(digits: &str) -> u32 {
    let sum: u32 = digits
        .chars()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(i, d)| {
            let d = if i % 2 == 0 { d * 2 } else { d };
            if d > 9 { d - 9 } else { d }
        })
        .sum();
    (10 - sum % 10) % 10
}

fn estonian_check_digit(body: &str) -> u32 {
    let digits: Vec<u32> = body.chars().filter_map(|c| c.to_digit(10)).collect();
    let weighted = |weights: [u32; 10]| -> u32 {
        digits.iter().zip(weights).map(|(d, w)| d * w).sum::<u32>() % 11
    };
    let first = weighted([1, 2, 3, 4, 5, 6, 7, 8, 9, 1]);
    if first < 10 {
        return first;
    }
    let second = weighted([3, 4, 5, 6, 7, 8, 9, 1, 2, 3]);
    if second < 10 { second } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_matches_a_known_personnummer() {
        // 811218-9876 is the Swedish tax agency's documentation example.
        assert_eq!(luhn_check_digit("811218987"), 6);
    }

    #[test]
    fn estonian_check_digit_matches_a_known_code() {
        // 37605030299 is the commonly cited valid example.
        assert_eq!(estonian_check_digit("3760503029"), 9);
    }

    #[test]
    fn baltic_family_names_are_gendered() {
        let lva = catalog::country("LVA").expect("LVA");
        let ltu = catalog::country("LTU").expect("LTU");
        assert_eq!(gendered(lva, "Ozols", true), "Ozola");
        assert_eq!(gendered(ltu, "Kazlauskas", true), "Kazlauskiene");
        assert_eq!(gendered(ltu, "Stankevicius", true), "Stankeviciene");
        assert_eq!(gendered(ltu, "Kazlauskas", false), "Kazlauskas");
    }
}
