//! Bank accounts and their transactions, as an account-information aggregator delivers them.

use chrono::{Datelike, NaiveDate};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use super::credit::CreditData;
use super::draw::{Money, RiskTier, fnv1a, item_id, months_back, pick, rng};
use super::person::Person;
use crate::catalog::Country;
use crate::redact::debug_showing;
use creditdata_client::types::ContractType;

/// Months of history an account statement covers (plus the current month so far).
pub const STATEMENT_MONTHS: u32 = 6;

/// One booked transaction.
#[derive(Clone, PartialEq)]
pub struct Transaction {
    /// Stable id.
    pub id: Uuid,
    /// Booking date.
    pub booking: NaiveDate,
    /// Value date.
    pub value: NaiveDate,
    /// Signed amount in minor units (credit positive).
    pub cents: i64,
    /// Balance after this transaction, in minor units.
    pub balance_after: i64,
    /// Counterparty.
    pub counterparty: String,
    /// Booking text.
    pub description: String,
    /// Category (INCOME, HOUSING, ...).
    pub category: &'static str,
    /// Subcategory (SALARY, RENT, ...).
    pub subcategory: &'static str,
}

// Who was paid, what for and how much is the subject's own business.
debug_showing!(Transaction { id });

/// A bank account with its statement.
#[derive(Clone, PartialEq)]
pub struct Account {
    /// Stable id (the `accountStatementId`).
    pub id: Uuid,
    /// Bank.
    pub bank: String,
    /// IBAN.
    pub iban: String,
    /// `CURRENT` or `SAVINGS`.
    pub kind: &'static str,
    /// ISO 4217.
    pub currency: &'static str,
    /// Account holder.
    pub holder: String,
    /// Balance at the start of the period.
    pub opening: Money,
    /// First day covered.
    pub period_start: NaiveDate,
    /// Last day covered.
    pub period_end: NaiveDate,
    /// Booked transactions, oldest first.
    pub transactions: Vec<Transaction>,
    /// Months (`YYYY-MM`) the bank did not deliver.
    pub missing_months: Vec<String>,
}

impl std::fmt::Debug for Account {
    // The account number and the holder are personal data; the transactions are counted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("currency", &self.currency)
            .field("period_start", &self.period_start)
            .field("period_end", &self.period_end)
            .field("transactions", &self.transactions.len())
            .finish_non_exhaustive()
    }
}

impl Account {
    /// Balance at the end of the period.
    pub fn closing(&self) -> Money {
        Money::new(
            self.opening.cents + self.transactions.iter().map(|t| t.cents).sum::<i64>(),
            self.currency,
        )
    }
}

struct Draft {
    day: NaiveDate,
    cents: i64,
    counterparty: String,
    description: String,
    category: &'static str,
    subcategory: &'static str,
}

const GROCERS: &[&str] = &["Market Basket", "DailyFoods", "GreenGrocer", "Corner Store"];
const RESTAURANTS: &[&str] = &[
    "Harbour Café",
    "Pasta Piccola",
    "Golden Wok",
    "The Old Mill",
];
const TRANSPORT: &[(&str, &str)] = &[
    ("City Transit", "PUBLIC_TRANSPORT"),
    ("Fuelstop", "FUEL"),
    ("Metro Taxi", "TAXI"),
];
const SHOPS: &[(&str, &str)] = &[
    ("Northwind Outfitters", "CLOTHING"),
    ("Polar Electronics", "ELECTRONICS"),
    ("Homeline Furniture", "HOME"),
];
const SUBSCRIPTIONS: &[&str] = &["StreamBox", "Melodify", "CloudDrive"];

/// The accounts of `person` in `country`.
pub fn generate(
    session: Uuid,
    country: &'static Country,
    person: &Person,
    credit: &CreditData,
    home: bool,
    created: NaiveDate,
) -> Vec<Account> {
    let mut rng = rng(session, &format!("bank/{}", country.code));
    let currency = country.currency;
    let period_start = months_back(created, STATEMENT_MONTHS);
    let period_end = created.pred_opt().unwrap_or(created);
    let salary = if home {
        person.salary.cents
    } else {
        i64::from(country.salary_range.0) * 100
    };
    let holder = person.full_name();

    let mut kinds = vec!["CURRENT"];
    if home {
        if rng.gen_bool(0.5) {
            kinds.push("SAVINGS");
        }
        if rng.gen_bool(0.25) {
            kinds.push("CURRENT");
        }
    }
    let mut accounts = Vec::new();
    let mut banks: Vec<&str> = country.banks.to_vec();
    for (index, kind) in kinds.iter().enumerate() {
        // Savings sit at the main bank; a second current account is at another bank.
        let bank = if *kind == "SAVINGS" {
            banks[0]
        } else {
            let at = rng.gen_range(0..banks.len());
            let bank = banks[at];
            if banks.len() > 1 {
                banks.remove(at);
                banks.insert(0, bank);
            }
            bank
        };
        let drafts = match (index, *kind) {
            (0, _) if home => primary_drafts(
                &mut rng,
                country,
                person,
                credit,
                salary,
                period_start,
                period_end,
                kinds.contains(&"SAVINGS"),
            ),
            (_, "SAVINGS") => savings_drafts(&mut rng, &holder, salary, period_start, period_end),
            _ => secondary_drafts(&mut rng, &holder, salary, period_start, period_end),
        };
        let opening = Money::new(
            match *kind {
                "SAVINGS" => salary * rng.gen_range(1..8),
                _ => salary * rng.gen_range(20..150) / 100,
            },
            currency,
        );
        accounts.push(build_account(
            session,
            country,
            index,
            bank,
            kind,
            &holder,
            opening,
            period_start,
            period_end,
            drafts,
        ));
    }

    // One session in four has an institution that delivered incomplete history: its latest
    // month is missing (the categorization summary then reports SOME_DATA_MISSING).
    let gap = home && fnv1a(format!("{session}/gap").as_bytes()).is_multiple_of(4);
    if gap && let Some(account) = accounts.last_mut() {
        let month_start = months_back(created, 1);
        let label = format!("{:04}-{:02}", month_start.year(), month_start.month());
        account
            .transactions
            .retain(|t| t.booking < month_start || t.booking >= months_back(created, 0));
        recompute_balances(account);
        account.missing_months.push(label);
    }
    accounts
}

#[allow(clippy::too_many_arguments)]
fn build_account(
    session: Uuid,
    country: &Country,
    index: usize,
    bank: &str,
    kind: &'static str,
    holder: &str,
    opening: Money,
    period_start: NaiveDate,
    period_end: NaiveDate,
    mut drafts: Vec<Draft>,
) -> Account {
    drafts.retain(|d| d.day >= period_start && d.day <= period_end);
    drafts.sort_by(|a, b| a.day.cmp(&b.day).then(b.cents.cmp(&a.cents)));
    let path = format!("{}/account/{index}", country.code);
    let id = item_id(session, &path);
    let transactions = drafts
        .into_iter()
        .enumerate()
        .map(|(n, draft)| Transaction {
            id: item_id(session, &format!("{path}/tx/{n}")),
            booking: draft.day,
            value: draft.day,
            cents: draft.cents,
            balance_after: 0,
            counterparty: draft.counterparty,
            description: draft.description,
            category: draft.category,
            subcategory: draft.subcategory,
        })
        .collect();
    let mut account = Account {
        id,
        bank: bank.to_owned(),
        iban: iban(country, fnv1a(path.as_bytes()) ^ fnv1a(session.as_bytes())),
        kind,
        currency: country.currency,
        holder: holder.to_owned(),
        opening,
        period_start,
        period_end,
        transactions,
        missing_months: Vec::new(),
    };
    recompute_balances(&mut account);
    account
}

fn recompute_balances(account: &mut Account) {
    let mut balance = account.opening.cents;
    for transaction in &mut account.transactions {
        balance += transaction.cents;
        transaction.balance_after = balance;
    }
}

fn months(period_start: NaiveDate, period_end: NaiveDate) -> Vec<NaiveDate> {
    let mut months = Vec::new();
    let mut month = period_start;
    while month <= period_end {
        months.push(month);
        let next = if month.month() == 12 {
            NaiveDate::from_ymd_opt(month.year() + 1, 1, 1)
        } else {
            NaiveDate::from_ymd_opt(month.year(), month.month() + 1, 1)
        };
        match next {
            Some(next) => month = next,
            None => break,
        }
    }
    months
}

fn day(month: NaiveDate, day: u32) -> NaiveDate {
    let mut day = day;
    loop {
        if let Some(date) = NaiveDate::from_ymd_opt(month.year(), month.month(), day) {
            return date;
        }
        day -= 1;
    }
}

fn month_name(month: NaiveDate) -> String {
    month.format("%B %Y").to_string()
}

#[allow(clippy::too_many_arguments)]
fn primary_drafts(
    rng: &mut ChaCha8Rng,
    country: &Country,
    person: &Person,
    credit: &CreditData,
    salary: i64,
    period_start: NaiveDate,
    period_end: NaiveDate,
    has_savings: bool,
) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let mortgage = credit
        .positive
        .iter()
        .find(|t| t.contract_type == ContractType::MortgageLoan && t.status == "ACTIVE");
    let rent = salary * rng.gen_range(24..34) / 100;
    let landlord = format!(
        "{} Housing",
        country.cities.first().map(|c| c.0).unwrap_or("City")
    );
    let utility = salary * rng.gen_range(2..5) / 100;
    let telecom = rng.gen_range(2_500..6_000) * salary / 300_000;
    let subscription = *pick(rng, SUBSCRIPTIONS);
    let subscription_fee = rng.gen_range(899..1599) * salary / 300_000;
    let savings = salary * rng.gen_range(5..15) / 100;
    for month in months(period_start, period_end) {
        let label = month_name(month);
        drafts.push(Draft {
            day: day(month, 25),
            cents: salary + rng.gen_range(-2000..2000),
            counterparty: person.employer.to_owned(),
            description: format!("Salary {label}"),
            category: "INCOME",
            subcategory: "SALARY",
        });
        if person.children > 0 {
            drafts.push(Draft {
                day: day(month, 20),
                cents: i64::from(person.children) * salary / 25,
                counterparty: "Social Insurance Agency".into(),
                description: format!("Child benefit {label}"),
                category: "INCOME",
                subcategory: "BENEFITS",
            });
        }
        match mortgage {
            Some(loan) => drafts.push(Draft {
                day: day(month, 1),
                cents: -loan.monthly_installment.cents,
                counterparty: loan.creditor.clone(),
                description: format!("Mortgage instalment {label}"),
                category: "LIABILITIES",
                subcategory: "MORTGAGE",
            }),
            None => drafts.push(Draft {
                day: day(month, 1),
                cents: -rent,
                counterparty: landlord.clone(),
                description: format!("Rent {label}"),
                category: "HOUSING",
                subcategory: "RENT",
            }),
        }
        for loan in credit.positive.iter().filter(|t| {
            t.status == "ACTIVE"
                && t.contract_type != ContractType::MortgageLoan
                && t.monthly_installment.cents > 0
        }) {
            let (description, subcategory) = match loan.contract_type {
                ContractType::CreditCard => ("Credit card repayment", "CREDIT_CARD"),
                ContractType::Leasing => ("Leasing instalment", "LEASING"),
                ContractType::Overdraft => ("Overdraft interest", "OVERDRAFT"),
                _ => ("Loan instalment", "CONSUMER_LOAN"),
            };
            drafts.push(Draft {
                day: day(month, 5 + (fnv1a(loan.id.as_bytes()) % 10) as u32),
                cents: -loan.monthly_installment.cents,
                counterparty: loan.creditor.clone(),
                description: format!("{description} {label}"),
                category: "LIABILITIES",
                subcategory,
            });
        }
        for entry in credit
            .negative
            .iter()
            .filter(|e| e.status == "IN_DEBT_COLLECTION")
        {
            drafts.push(Draft {
                day: day(month, 15),
                cents: -(entry.amount.cents / 12).max(1000),
                counterparty: format!("Collection on behalf of {}", entry.creditor),
                description: "Debt collection instalment".into(),
                category: "LIABILITIES",
                subcategory: "DEBT_COLLECTION",
            });
        }
        drafts.push(Draft {
            day: day(month, 10),
            cents: -(utility + rng.gen_range(-500..500)),
            counterparty: "Citywide Energy".into(),
            description: format!("Electricity and water {label}"),
            category: "HOUSING",
            subcategory: "UTILITIES",
        });
        drafts.push(Draft {
            day: day(month, 12),
            cents: -telecom,
            counterparty: "Lumo Mobile".into(),
            description: "Mobile subscription".into(),
            category: "BILLS",
            subcategory: "TELECOM",
        });
        drafts.push(Draft {
            day: day(month, 3),
            cents: -subscription_fee,
            counterparty: subscription.into(),
            description: format!("{subscription} monthly"),
            category: "LEISURE",
            subcategory: "SUBSCRIPTIONS",
        });
        if has_savings {
            drafts.push(Draft {
                day: day(month, 26),
                cents: -savings,
                counterparty: person.full_name(),
                description: "Transfer to savings".into(),
                category: "TRANSFERS",
                subcategory: "OWN_ACCOUNTS",
            });
        }
        everyday_spending(rng, month, salary, person.risk, &mut drafts);
    }
    drafts
}

fn everyday_spending(
    rng: &mut ChaCha8Rng,
    month: NaiveDate,
    salary: i64,
    risk: RiskTier,
    drafts: &mut Vec<Draft>,
) {
    let scale =
        |rng: &mut ChaCha8Rng, low: i64, high: i64| rng.gen_range(low..high) * salary / 300_000;
    for _ in 0..rng.gen_range(8..13) {
        drafts.push(Draft {
            day: day(month, rng.gen_range(1..29)),
            cents: -scale(rng, 800, 9_500),
            counterparty: (*pick(rng, GROCERS)).into(),
            description: "Card purchase".into(),
            category: "FOOD",
            subcategory: "GROCERIES",
        });
    }
    for _ in 0..rng.gen_range(2..7) {
        drafts.push(Draft {
            day: day(month, rng.gen_range(1..29)),
            cents: -scale(rng, 1_200, 7_000),
            counterparty: (*pick(rng, RESTAURANTS)).into(),
            description: "Card purchase".into(),
            category: "FOOD",
            subcategory: "RESTAURANTS",
        });
    }
    for _ in 0..rng.gen_range(2..6) {
        let (name, subcategory) = *pick(rng, TRANSPORT);
        drafts.push(Draft {
            day: day(month, rng.gen_range(1..29)),
            cents: -scale(rng, 300, 7_500),
            counterparty: name.into(),
            description: "Card purchase".into(),
            category: "TRANSPORT",
            subcategory,
        });
    }
    for _ in 0..rng.gen_range(0..3) {
        let (name, subcategory) = *pick(rng, SHOPS);
        drafts.push(Draft {
            day: day(month, rng.gen_range(1..29)),
            cents: -scale(rng, 2_000, 26_000),
            counterparty: name.into(),
            description: "Card purchase".into(),
            category: "SHOPPING",
            subcategory,
        });
    }
    if risk == RiskTier::Poor && rng.gen_bool(0.5) {
        drafts.push(Draft {
            day: day(month, rng.gen_range(1..29)),
            cents: -scale(rng, 1_000, 12_000),
            counterparty: "LuckyPlay Online".into(),
            description: "Online gaming".into(),
            category: "LEISURE",
            subcategory: "GAMBLING",
        });
    }
}

fn savings_drafts(
    rng: &mut ChaCha8Rng,
    holder: &str,
    salary: i64,
    period_start: NaiveDate,
    period_end: NaiveDate,
) -> Vec<Draft> {
    let mut drafts = Vec::new();
    let savings = salary * rng.gen_range(5..15) / 100;
    for month in months(period_start, period_end) {
        drafts.push(Draft {
            day: day(month, 26),
            cents: savings,
            counterparty: holder.to_owned(),
            description: "Transfer from current account".into(),
            category: "TRANSFERS",
            subcategory: "OWN_ACCOUNTS",
        });
        if month.month() % 3 == 0 {
            drafts.push(Draft {
                day: day(month, 31),
                cents: salary / rng.gen_range(150..400),
                counterparty: "Interest".into(),
                description: "Quarterly interest".into(),
                category: "INCOME",
                subcategory: "INTEREST",
            });
        }
    }
    drafts
}

fn secondary_drafts(
    rng: &mut ChaCha8Rng,
    holder: &str,
    salary: i64,
    period_start: NaiveDate,
    period_end: NaiveDate,
) -> Vec<Draft> {
    let mut drafts = Vec::new();
    for month in months(period_start, period_end) {
        let top_up = salary * rng.gen_range(5..12) / 100;
        drafts.push(Draft {
            day: day(month, 2),
            cents: top_up,
            counterparty: holder.to_owned(),
            description: "Own transfer".into(),
            category: "TRANSFERS",
            subcategory: "OWN_ACCOUNTS",
        });
        for _ in 0..rng.gen_range(2..6) {
            drafts.push(Draft {
                day: day(month, rng.gen_range(3..29)),
                cents: -(rng.gen_range(500..4_000) * salary / 300_000).min(top_up / 3),
                counterparty: (*pick(rng, GROCERS)).into(),
                description: "Card purchase".into(),
                category: "FOOD",
                subcategory: "GROCERIES",
            });
        }
    }
    drafts
}

/// A syntactically valid IBAN (ISO 13616 check digits) with a BBAN in the country's layout.
pub fn iban(country: &Country, seed: u64) -> String {
    let mut state = seed;
    let mut digits = |n: usize| -> String {
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b'0' + ((state >> 33) % 10) as u8)
            })
            .collect()
    };
    let bank_letters: String = country.code.chars().chain("BK".chars()).take(4).collect();
    let bban = match country.alpha2 {
        "GB" => format!("{bank_letters}{}", digits(14)),
        "DE" => digits(18),
        "SE" => digits(20),
        "FI" => digits(14),
        "EE" => digits(16),
        "LV" => format!("{bank_letters}{}", digits(13)),
        "LT" => digits(16),
        "PL" => digits(24),
        _ => digits(16),
    };
    let check = 98 - mod97(&format!("{bban}{}00", country.alpha2));
    format!("{}{check:02}{bban}", country.alpha2)
}

/// The ISO 7064 mod 97-10 remainder of an alphanumeric string (letters as 10..35).
pub fn mod97(text: &str) -> u32 {
    let mut remainder: u32 = 0;
    for c in text.chars() {
        let value = match c.to_digit(36) {
            Some(value) => value,
            None => continue,
        };
        remainder = if value >= 10 {
            (remainder * 100 + value) % 97
        } else {
            (remainder * 10 + value) % 97
        };
    }
    remainder
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[test]
    fn ibans_have_valid_check_digits() {
        // The published example GB82WEST12345698765432 validates.
        let example = "WEST12345698765432GB82";
        assert_eq!(mod97(example), 1);
        for country in catalog::COUNTRIES {
            let iban = iban(country, 42);
            let rearranged = format!("{}{}", &iban[4..], &iban[..4]);
            assert_eq!(mod97(&rearranged), 1, "{iban}");
        }
    }
}
