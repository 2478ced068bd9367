//! What every invented dataset draws from: a seeded generator per session and aspect, stable
//! ids and hashes, picks, dates, money and the subject's risk tier.

use chrono::NaiveDate;
use creditdata_client::types::Amount;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use crate::built::Built;

/// A seeded random generator for one aspect (`salt`) of one session.
pub fn rng(session: Uuid, salt: &str) -> ChaCha8Rng {
    let mut seed = [0u8; 32];
    seed[..16].copy_from_slice(session.as_bytes());
    seed[16..24].copy_from_slice(&fnv1a(salt.as_bytes()).to_le_bytes());
    ChaCha8Rng::from_seed(seed)
}

/// FNV-1a, for stable (not secure) hashing of names into seeds and choices.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A stable id for an item of a session.
pub fn item_id(session: Uuid, path: &str) -> Uuid {
    Uuid::new_v5(&session, path.as_bytes())
}

/// Picks one element.
pub fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.gen_range(0..items.len())]
}

/// An amount of money in minor units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money {
    /// Minor units (cents).
    pub cents: i64,
    /// ISO 4217.
    pub currency: &'static str,
}

impl Money {
    /// `cents` of `currency`.
    pub fn new(cents: i64, currency: &'static str) -> Self {
        Money { cents, currency }
    }

    /// The API's `Amount`.
    pub fn amount(self) -> Amount {
        Amount::builder()
            .amount(self.value())
            .currency_code(Some(self.currency.to_owned()))
            .build()
            .built()
    }

    /// Major units as a float (what JSON and the workbooks carry).
    pub fn value(self) -> f64 {
        self.cents as f64 / 100.0
    }

    /// `1 234.56 EUR`-style text for the PDF report.
    pub fn display(self) -> String {
        format!("{} {}", format_cents(self.cents), self.currency)
    }
}

/// `-1 234.56`
pub fn format_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}.{:02}", cents % 100)
}

/// A round-ish random amount between `low` and `high` major units.
pub fn money_between(rng: &mut ChaCha8Rng, low: u32, high: u32, currency: &'static str) -> Money {
    let value = rng.gen_range(i64::from(low) * 100..=i64::from(high.max(low)) * 100);
    Money::new(value, currency)
}

/// Risk profile of the subject: drives tradelines, court cases and scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiskTier {
    /// No payment problems.
    Good,
    /// An old or small problem.
    Fair,
    /// Current payment problems.
    Poor,
}

/// The first day of the month `months` before the month of `date`.
pub fn months_back(date: NaiveDate, months: u32) -> NaiveDate {
    use chrono::Datelike;
    let total = date.year() * 12 + date.month0() as i32 - months as i32;
    NaiveDate::from_ymd_opt(total.div_euclid(12), total.rem_euclid(12) as u32 + 1, 1)
        .unwrap_or(date)
}

/// A random date in `[from, to]`.
pub fn date_between(rng: &mut ChaCha8Rng, from: NaiveDate, to: NaiveDate) -> NaiveDate {
    let span = (to - from).num_days().max(0);
    from + chrono::Duration::days(rng.gen_range(0..=span))
}
