//! Bank data: the delivered accounts, their statements and the categorization of their
//! transactions.

use crate::built::Built;
use std::collections::BTreeMap;

use chrono::Datelike;
use creditdata_client::types::{
    AccountStatement, AccountStatementsResponse, Categorization, CategorizationPeriodSummary,
    CategorizationSummary, CategorizationSummaryStatus, CategorizationsResponse,
    CategorizationsSummaryResponse, CategorizedAccount, SourceStatus,
};
use serde_json::{Value, json};

use super::{View, money, object};
use crate::catalog::{Dataset, Provider};
use crate::data::{Account, CountryData, Money};

impl View<'_> {
    /// The delivered accounts with their provider.
    pub fn accounts(&self) -> Vec<(&CountryData, &'static Provider, &Account)> {
        self.delivered(Dataset::AccountStatements)
            .into_iter()
            .flat_map(|(data, provider)| {
                data.accounts
                    .iter()
                    .map(move |account| (data, provider, account))
            })
            .collect()
    }

    /// The delivered account with statement id `id`.
    pub fn account(&self, id: &str) -> Option<&Account> {
        self.accounts()
            .into_iter()
            .map(|(_, _, account)| account)
            .find(|account| account.id.to_string().eq_ignore_ascii_case(id))
    }

    /// `GET .../account-statements`
    pub fn account_statements(&self) -> AccountStatementsResponse {
        let items = self
            .accounts()
            .into_iter()
            .map(|(data, provider, account)| {
                let closing = account.closing();
                AccountStatement::builder()
                    .id(Some(account.id.to_string()))
                    .source_id(Some(provider.id.to_owned()))
                    .extra(object(json!({
                        "countryCode": data.country.code,
                        "bankName": account.bank,
                        "accountNumber": account.iban,
                        "accountType": account.kind,
                        "accountHolderName": account.holder,
                        "currencyCode": account.currency,
                        "periodStartDate": account.period_start.to_string(),
                        "periodEndDate": account.period_end.to_string(),
                        "openingBalance": money(account.opening),
                        "closingBalance": money(closing),
                        "missingMonths": account.missing_months,
                        "transactionCount": account.transactions.len(),
                        "transactions": account.transactions.iter().map(|t| json!({
                            "id": t.id,
                            "bookingDate": t.booking.to_string(),
                            "valueDate": t.value.to_string(),
                            "amount": money(Money::new(t.cents, account.currency)),
                            "creditDebitIndicator": if t.cents >= 0 { "CREDIT" } else { "DEBIT" },
                            "balanceAfter": money(Money::new(t.balance_after, account.currency)),
                            "counterpartyName": t.counterparty,
                            "description": t.description,
                            "category": t.category,
                            "subcategory": t.subcategory,
                        })).collect::<Vec<_>>(),
                    })))
                    .build()
                    .built()
            })
            .collect();
        AccountStatementsResponse::builder()
            .sources(Some(self.sources(Dataset::AccountStatements)))
            .account_statements(Some(items))
            .build()
            .built()
    }

    /// `GET .../categorizations` (deprecated)
    pub fn categorizations(&self) -> CategorizationsResponse {
        let delivered = self.delivered(Dataset::Categorizations);
        let mut income_months = std::collections::BTreeSet::new();
        let mut liability_months = std::collections::BTreeSet::new();
        let mut categorizations = Vec::new();
        for (data, provider) in &delivered {
            let accounts: Vec<&Account> = data.accounts.iter().collect();
            for account in &accounts {
                for t in &account.transactions {
                    let month = (t.booking.year(), t.booking.month());
                    if t.category == "INCOME" {
                        income_months.insert(month);
                    }
                    if t.category == "LIABILITIES" {
                        liability_months.insert(month);
                    }
                }
            }
            let total_months = accounts
                .iter()
                .map(|a| crate::data::credit::months_between(a.period_start, a.period_end) + 1)
                .max()
                .unwrap_or(0);
            let missing = accounts
                .iter()
                .map(|a| a.missing_months.len() as u32)
                .max()
                .unwrap_or(0);
            categorizations.push(
                Categorization::builder()
                    .accounts(Some(
                        accounts
                            .iter()
                            .map(|account| {
                                CategorizedAccount::builder()
                                    .country_code(Some(data.country.code.to_owned()))
                                    .bank_name(Some(account.bank.clone()))
                                    .account_number(Some(account.iban.clone()))
                                    .account_holder_names(Some(vec![account.holder.clone()]))
                                    .build()
                                    .built()
                            })
                            .collect(),
                    ))
                    .total_period_months(Some(total_months as i32))
                    .total_period_received_months(Some(total_months.saturating_sub(missing) as i32))
                    .extra(object(json!({
                        "sourceId": provider.id,
                        "currencyCode": data.country.currency,
                        "categories": category_totals(&accounts),
                    })))
                    .build()
                    .built(),
            );
        }
        CategorizationsResponse::builder()
            .sources(Some(self.sources(Dataset::Categorizations)))
            .summary(
                (!delivered.is_empty()).then_some(
                    CategorizationPeriodSummary::builder()
                        .period_with_income_months(Some(income_months.len() as i32))
                        .period_with_liabilities_months(Some(liability_months.len() as i32))
                        .build()
                        .built(),
                ),
            )
            .categorizations(Some(categorizations))
            .build()
            .built()
    }

    /// The summary's status: the providers' statuses combined, `SOME_DATA_MISSING` when some
    /// answered and others did not, or when an institution's history has gaps.
    pub fn categorization_status(&self) -> CategorizationSummaryStatus {
        let statuses: Vec<SourceStatus> = self
            .sources(Dataset::Categorizations)
            .into_iter()
            .map(|source| source.status)
            .collect();
        let requested: Vec<&SourceStatus> = statuses
            .iter()
            .filter(|s| {
                !matches!(
                    s,
                    SourceStatus::PackageUpgradeRequired | SourceStatus::UnsupportedCountry
                )
            })
            .collect();
        if requested.is_empty() {
            return if statuses.contains(&SourceStatus::PackageUpgradeRequired) {
                CategorizationSummaryStatus::PackageUpgradeRequired
            } else if statuses.is_empty() {
                CategorizationSummaryStatus::Unknown
            } else {
                CategorizationSummaryStatus::UnsupportedCountry
            };
        }
        if requested.contains(&&SourceStatus::WaitingForCustomer) {
            return CategorizationSummaryStatus::WaitingForCustomer;
        }
        if requested.contains(&&SourceStatus::WaitingForProvider) {
            return CategorizationSummaryStatus::WaitingForProvider;
        }
        let successes = requested
            .iter()
            .filter(|s| ***s == SourceStatus::Success)
            .count();
        if successes == 0 {
            return match requested.first() {
                Some(SourceStatus::Forbidden) => CategorizationSummaryStatus::Forbidden,
                Some(SourceStatus::IdTaxOnly) => CategorizationSummaryStatus::IdTaxOnly,
                _ => CategorizationSummaryStatus::Error,
            };
        }
        let gaps = self
            .accounts()
            .iter()
            .any(|(_, _, a)| !a.missing_months.is_empty());
        if successes < requested.len() || gaps {
            CategorizationSummaryStatus::SomeDataMissing
        } else {
            CategorizationSummaryStatus::Success
        }
    }

    /// `GET .../categorizations-summary`
    pub fn categorizations_summary(&self) -> CategorizationsSummaryResponse {
        let status = self.categorization_status();
        let accounts = self.accounts();
        if accounts.is_empty() {
            return CategorizationsSummaryResponse::builder()
                .summary(Some(
                    CategorizationSummary::builder()
                        .status(status)
                        .count_of_institutions(Some(0))
                        .build()
                        .built(),
                ))
                .build()
                .built();
        }
        let mut institutions: BTreeMap<(String, String), (String, usize, Vec<String>)> =
            BTreeMap::new();
        for (data, provider, account) in &accounts {
            let entry = institutions
                .entry((data.country.code.to_owned(), account.bank.clone()))
                .or_insert_with(|| (provider.id.to_owned(), 0, Vec::new()));
            entry.1 += 1;
            entry.2.extend(account.missing_months.iter().cloned());
        }
        let period_start = accounts.iter().map(|(_, _, a)| a.period_start).min();
        let period_end = accounts.iter().map(|(_, _, a)| a.period_end).max();
        let months = match (period_start, period_end) {
            (Some(start), Some(end)) => {
                (crate::data::credit::months_between(start, end) + 1) as i64
            }
            _ => 1,
        };
        // Per currency: income, spending and liabilities, own transfers excluded.
        let mut per_currency: BTreeMap<&str, (i64, i64, i64)> = BTreeMap::new();
        // (counterparty, category, subcategory, currency) → (total, months with income)
        type IncomeKey<'k> = (String, &'k str, &'k str, &'k str);
        let mut income_sources: BTreeMap<IncomeKey, (i64, std::collections::BTreeSet<(i32, u32)>)> =
            BTreeMap::new();
        let mut creditors: BTreeMap<(String, &str, &str), i64> = BTreeMap::new();
        for (_, _, account) in &accounts {
            for t in account
                .transactions
                .iter()
                .filter(|t| t.category != "TRANSFERS")
            {
                let totals = per_currency.entry(account.currency).or_default();
                if t.cents > 0 {
                    totals.0 += t.cents;
                    let entry = income_sources
                        .entry((
                            t.counterparty.clone(),
                            t.category,
                            t.subcategory,
                            account.currency,
                        ))
                        .or_default();
                    entry.0 += t.cents;
                    entry.1.insert((t.booking.year(), t.booking.month()));
                } else {
                    totals.1 += t.cents;
                    if t.category == "LIABILITIES" {
                        totals.2 += t.cents;
                        *creditors
                            .entry((t.counterparty.clone(), t.subcategory, account.currency))
                            .or_default() += t.cents;
                    }
                }
            }
        }
        let account_refs: Vec<&Account> = accounts.iter().map(|(_, _, a)| *a).collect();
        let extra = object(json!({
            "periodStartDate": period_start.map(|d| d.to_string()),
            "periodEndDate": period_end.map(|d| d.to_string()),
            "countOfAccounts": accounts.len(),
            "totals": per_currency.iter().map(|(currency, (income, spending, liabilities))| json!({
                "currencyCode": currency,
                "totalIncome": *income as f64 / 100.0,
                "totalSpending": (-*spending) as f64 / 100.0,
                "averageMonthlyIncome": (*income / months) as f64 / 100.0,
                "averageMonthlySpending": (-*spending / months) as f64 / 100.0,
                "averageMonthlyLiabilities": (-*liabilities / months) as f64 / 100.0,
            })).collect::<Vec<_>>(),
            "incomeSources": income_sources.iter().map(|((counterparty, category, subcategory, currency), (total, months_seen))| json!({
                "counterpartyName": counterparty,
                "category": category,
                "subcategory": subcategory,
                "currencyCode": currency,
                "totalAmount": *total as f64 / 100.0,
                "monthsReceived": months_seen.len(),
            })).collect::<Vec<_>>(),
            "creditors": creditors.iter().map(|((counterparty, subcategory, currency), total)| json!({
                "counterpartyName": counterparty,
                "subcategory": subcategory,
                "currencyCode": currency,
                "totalAmount": (-*total) as f64 / 100.0,
                "monthlyAverage": (-*total / months) as f64 / 100.0,
            })).collect::<Vec<_>>(),
            "categories": category_totals(&account_refs),
            "institutions": institutions.iter().map(|((country, bank), (source, count, missing))| json!({
                "bankName": bank,
                "countryCode": country,
                "sourceId": source,
                "accountCount": count,
                "dataComplete": missing.is_empty(),
                "missingMonths": missing,
            })).collect::<Vec<_>>(),
        }));
        CategorizationsSummaryResponse::builder()
            .summary(Some(
                CategorizationSummary::builder()
                    .status(status)
                    .count_of_institutions(Some(institutions.len() as i32))
                    .extra(extra)
                    .build()
                    .built(),
            ))
            .build()
            .built()
    }
}

/// Spending and income by category and subcategory (own transfers excluded).
fn category_totals(accounts: &[&Account]) -> Vec<Value> {
    let mut totals: BTreeMap<(&str, &str, &str), (i64, usize)> = BTreeMap::new();
    for account in accounts {
        for t in account
            .transactions
            .iter()
            .filter(|t| t.category != "TRANSFERS")
        {
            let entry = totals
                .entry((t.category, t.subcategory, account.currency))
                .or_default();
            entry.0 += t.cents;
            entry.1 += 1;
        }
    }
    totals
        .into_iter()
        .map(|((category, subcategory, currency), (total, count))| {
            json!({
                "category": category,
                "subcategory": subcategory,
                "currencyCode": currency,
                "totalAmount": total as f64 / 100.0,
                "transactionCount": count,
            })
        })
        .collect()
}
