//! The API's dataset responses, built from a session's [`Dossier`] with the generated types of
//! `creditdata-client` (so the mock cannot drift from the client).
//!
//! Which data a response carries follows the per-provider status: a provider contributes items
//! only once it has answered with `SUCCESS`; a package the session did not request reports
//! `PACKAGE_UPGRADE_REQUIRED`; a package or country the catalog does not offer reports
//! `UNSUPPORTED_COUNTRY`.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Duration as ChronoDuration, Utc};
use creditdata_client::types::{
    AccountStatement, AccountStatementsResponse, AddressSourcedValue, Attachment,
    AttachmentsResponse, Categorization, CategorizationPeriodSummary, CategorizationSummary,
    CategorizationSummaryStatus, CategorizationsResponse, CategorizationsSummaryResponse,
    CategorizedAccount, ConsumerPackage, ConsumerPackagesResponse, ContractType,
    CourtAndInsolvenciesResponse, CourtAndInsolvencyCase, Creditor, DataPackageInput,
    DateOnlySourcedValue, DocumentSourcedValue, IdentityVerification, IdentityVerificationImage,
    IdentityVerificationImagesResponse, IdentityVerificationsResponse, Immovable,
    ImmovablesResponse, InputRequirement, InputRequirementsResponse, LegalEntitiesResponse,
    LegalEntity, LegalEntityRelation, LegalEntityRelationType, MaritalStatusTypeSourcedValue,
    Metric, MetricsResponse, NegativeTradeline, NegativeTradelinesResponse, PersonDetailsResponse,
    PersonalIdentityCodeSourcedValue, PositiveTradeline, PositiveTradelinesResponse,
    RegistryIncome, RegistryIncomesResponse, ScoresResponse, Source, SourceFile, SourceFileContent,
    SourceStatus, StringSourcedValue, UntypedSourcedValue,
};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::catalog::{self, Dataset, Provider, ProviderKind};
use crate::config::MockConfig;
use crate::data::scores::score_items;
use crate::data::{Account, CountryData, Dossier, Money, Verification, fnv1a};
use crate::files;
use crate::problem::Problem;
use crate::store::{SessionRecord, package_output};

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

fn contract_type_name(contract_type: &ContractType) -> Value {
    serde_json::to_value(contract_type).unwrap_or(Value::Null)
}

/// Whether the mock's simulated failures hit `provider` in `session`.
pub fn simulated_error(session: Uuid, provider: &str, one_in: u32) -> bool {
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
        let Some(consented) = request.consented_at else {
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
                sources.push(Source {
                    source_id: None,
                    country_code: Some(code.to_owned()),
                    status: SourceStatus::UnsupportedCountry,
                });
                continue;
            };
            let providers: Vec<&Provider> = country
                .providers
                .iter()
                .filter(|provider| provider.delivers(dataset))
                .collect();
            if providers.is_empty() && !country.offers(dataset.package()) {
                sources.push(Source {
                    source_id: None,
                    country_code: Some(code.to_owned()),
                    status: SourceStatus::UnsupportedCountry,
                });
            }
            for provider in providers {
                sources.push(Source {
                    source_id: Some(provider.id.to_owned()),
                    country_code: Some(code.to_owned()),
                    status: self.status(code, provider, dataset),
                });
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

    /// `GET .../person-details`
    pub fn person_details(&self) -> PersonDetailsResponse {
        let delivered = self.delivered(Dataset::PersonDetails);
        let ids: Vec<String> = delivered.iter().map(|(_, p)| p.id.to_owned()).collect();
        let person = &self.dossier.person;
        let all = || (!ids.is_empty()).then(|| ids.clone());
        let strings = |value: &str| -> Vec<StringSourcedValue> {
            all().map_or_else(Vec::new, |ids| {
                vec![StringSourcedValue {
                    value: Some(value.to_owned()),
                    source_ids: Some(ids),
                }]
            })
        };
        let untyped =
            |value: Value| -> Option<(Value, Vec<String>)> { all().map(|ids| (value, ids)) };
        let home_ids: Vec<String> = delivered
            .iter()
            .filter(|(data, _)| data.home)
            .map(|(_, p)| p.id.to_owned())
            .collect();
        let mut addresses: Vec<AddressSourcedValue> = untyped(person.address.to_json())
            .map(|(value, ids)| AddressSourcedValue {
                value: Some(object_with(value, "addressType", "CURRENT")),
                source_ids: Some(ids),
                extra: Map::new(),
            })
            .into_iter()
            .collect();
        if let Some(previous) = &person.previous_address
            && !home_ids.is_empty()
        {
            addresses.push(AddressSourcedValue {
                value: Some(object_with(previous.to_json(), "addressType", "PREVIOUS")),
                source_ids: Some(home_ids.clone()),
                extra: Map::new(),
            });
        }
        PersonDetailsResponse {
            sources: Some(self.sources(Dataset::PersonDetails)),
            given_names: Some(strings(&person.given_name)),
            family_names: Some(strings(&person.family_name)),
            birth_dates: Some(
                untyped(json!(person.birth_date.to_string()))
                    .map(|(value, ids)| DateOnlySourcedValue {
                        value: Some(value),
                        source_ids: Some(ids),
                        extra: Map::new(),
                    })
                    .into_iter()
                    .collect(),
            ),
            personal_identity_codes: Some(
                untyped(json!({
                    "code": person.identity_code,
                    "countryCode": person.home.code,
                    "type": "NATIONAL_IDENTITY_NUMBER",
                }))
                .map(|(value, ids)| PersonalIdentityCodeSourcedValue {
                    value: Some(value),
                    source_ids: Some(ids),
                    extra: Map::new(),
                })
                .into_iter()
                .collect(),
            ),
            telephones: Some(strings(&person.phone)),
            emails: Some(strings(&person.email)),
            addresses: Some(addresses),
            documents: Some(
                untyped(person.document.to_json())
                    .map(|(value, ids)| DocumentSourcedValue {
                        value: Some(value),
                        source_ids: Some(ids),
                        extra: Map::new(),
                    })
                    .into_iter()
                    .collect(),
            ),
            citizenships: Some(strings(person.home.code)),
            marital_statuses: Some(
                untyped(json!(person.marital_status))
                    .map(|(value, ids)| MaritalStatusTypeSourcedValue {
                        value: Some(value),
                        source_ids: Some(ids),
                        extra: Map::new(),
                    })
                    .into_iter()
                    .collect(),
            ),
            underage_children_counts: Some(
                untyped(json!(person.children))
                    .map(|(value, ids)| UntypedSourcedValue {
                        value: Some(value),
                        source_ids: Some(ids),
                        extra: Map::new(),
                    })
                    .into_iter()
                    .collect(),
            ),
            extra: Map::new(),
        }
    }

    /// `GET .../negative-tradelines`
    pub fn negative_tradelines(&self) -> NegativeTradelinesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::NegativeTradelines) {
            for entry in &data.credit.negative {
                items.push(NegativeTradeline {
                    source_id: Some(provider.id.to_owned()),
                    amount: Some(entry.amount.amount()),
                    contract_type: entry.contract_type.clone(),
                    creditor: Some(Creditor {
                        sector: entry.sector.clone(),
                        extra: object(json!({ "name": entry.creditor })),
                    }),
                    extra: object(json!({
                        "id": entry.id,
                        "countryCode": data.country.code,
                        "registeredDate": entry.registered.to_string(),
                        "daysPastDue": entry.days_past_due,
                        "status": entry.status,
                        "settledDate": entry.settled.map(|d| d.to_string()),
                    })),
                });
            }
        }
        NegativeTradelinesResponse {
            sources: Some(self.sources(Dataset::NegativeTradelines)),
            negative_tradelines: Some(items),
        }
    }

    /// `GET .../positive-tradelines`
    pub fn positive_tradelines(&self) -> PositiveTradelinesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::PositiveTradelines) {
            for line in &data.credit.positive {
                items.push(PositiveTradeline {
                    source_id: Some(provider.id.to_owned()),
                    extra: object(json!({
                        "id": line.id,
                        "countryCode": data.country.code,
                        "contractType": contract_type_name(&line.contract_type),
                        "creditorName": line.creditor,
                        "openedDate": line.opened.to_string(),
                        "endDate": line.ends.map(|d| d.to_string()),
                        "originalAmount": money(line.original),
                        "outstandingBalance": money(line.outstanding),
                        "monthlyInstallment": money(line.monthly_installment),
                        "status": line.status,
                        "coBorrower": line.co_borrowed,
                    })),
                });
            }
        }
        PositiveTradelinesResponse {
            sources: Some(self.sources(Dataset::PositiveTradelines)),
            positive_tradelines: Some(items),
            extra: Map::new(),
        }
    }

    /// `GET .../court-and-insolvencies`
    pub fn court_and_insolvencies(&self) -> CourtAndInsolvenciesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::CourtAndInsolvencies) {
            for case in &data.credit.court {
                items.push(CourtAndInsolvencyCase {
                    source_id: Some(provider.id.to_owned()),
                    extra: object(json!({
                        "caseNumber": case.case_number,
                        "countryCode": data.country.code,
                        "court": case.court,
                        "caseType": case.kind,
                        "status": case.status,
                        "filedDate": case.filed.to_string(),
                        "decisionDate": case.decided.map(|d| d.to_string()),
                        "claimAmount": money(case.claim),
                        "claimant": case.claimant,
                    })),
                });
            }
        }
        CourtAndInsolvenciesResponse {
            sources: Some(self.sources(Dataset::CourtAndInsolvencies)),
            court_and_insolvencies: Some(items),
            extra: Map::new(),
        }
    }

    /// `GET .../legal-entities`
    pub fn legal_entities(&self) -> LegalEntitiesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::LegalEntities) {
            for company in &data.credit.companies {
                items.push(LegalEntity {
                    source_id: Some(provider.id.to_owned()),
                    name: Some(company.name.clone()),
                    relations: Some(vec![LegalEntityRelation {
                        type_: LegalEntityRelationType::Unknown,
                        start_date: Some(company.start.to_string()),
                        end_date: company.end.map(|d| d.to_string()),
                    }]),
                });
            }
        }
        LegalEntitiesResponse {
            sources: Some(self.sources(Dataset::LegalEntities)),
            legal_entities: Some(items),
        }
    }

    /// `GET .../registry-incomes`
    pub fn registry_incomes(&self) -> RegistryIncomesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::RegistryIncomes) {
            for income in &data.credit.incomes {
                items.push(RegistryIncome {
                    source_id: Some(provider.id.to_owned()),
                    assessment_year: Some(income.year),
                    gross_income: Some(income.gross.amount()),
                    net_income: Some(income.net.amount()),
                    total_tax_amount: Some(income.tax.amount()),
                });
            }
        }
        RegistryIncomesResponse {
            sources: Some(self.sources(Dataset::RegistryIncomes)),
            incomes: Some(items),
        }
    }

    /// `GET .../immovables`
    pub fn immovables(&self) -> ImmovablesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Immovables) {
            for property in &data.credit.properties {
                items.push(Immovable {
                    source_id: Some(provider.id.to_owned()),
                    extra: object(json!({
                        "id": property.id,
                        "countryCode": data.country.code,
                        "type": property.kind,
                        "address": property.address.to_json(),
                        "registryNumber": property.registry_number,
                        "ownershipShare": format!("{}/{}", property.share.0, property.share.1),
                        "acquiredDate": property.acquired.to_string(),
                        "areaSquareMeters": property.area_m2,
                        "mortgaged": property.mortgaged,
                        "assessedValue": money(property.assessed_value),
                    })),
                });
            }
        }
        ImmovablesResponse {
            sources: Some(self.sources(Dataset::Immovables)),
            immovables: Some(items),
            extra: Map::new(),
        }
    }

    /// `GET .../metrics`: figures each bureau derives from its own tradelines.
    pub fn metrics(&self) -> MetricsResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Metrics) {
            let currency = data.country.currency;
            let credit = &data.credit;
            let mut push = |name: &str, value: Value, unit: &str, description: &str| {
                items.push(Metric {
                    source_id: Some(provider.id.to_owned()),
                    extra: object(json!({
                        "countryCode": data.country.code,
                        "name": name,
                        "value": value,
                        "unit": unit,
                        "description": description,
                    })),
                });
            };
            if provider.delivers(Dataset::PositiveTradelines) {
                let active: Vec<_> = credit
                    .positive
                    .iter()
                    .filter(|t| t.status == "ACTIVE")
                    .collect();
                push(
                    "ACTIVE_CREDIT_COUNT",
                    json!(active.len()),
                    "COUNT",
                    "Open credit agreements",
                );
                push(
                    "TOTAL_OUTSTANDING_DEBT",
                    json!(
                        Money::new(active.iter().map(|t| t.outstanding.cents).sum(), currency)
                            .value()
                    ),
                    currency,
                    "Sum of outstanding balances of open credit agreements",
                );
                push(
                    "MONTHLY_DEBT_SERVICE",
                    json!(
                        Money::new(
                            active.iter().map(|t| t.monthly_installment.cents).sum(),
                            currency
                        )
                        .value()
                    ),
                    currency,
                    "Sum of monthly instalments of open credit agreements",
                );
                let (limit, used) = active
                    .iter()
                    .filter(|t| {
                        matches!(
                            t.contract_type,
                            ContractType::CreditCard | ContractType::Overdraft
                        )
                    })
                    .fold((0i64, 0i64), |(l, u), t| {
                        (l + t.original.cents, u + t.outstanding.cents)
                    });
                if limit > 0 {
                    push(
                        "REVOLVING_CREDIT_UTILIZATION",
                        json!((used * 1000 / limit) as f64 / 10.0),
                        "PERCENT",
                        "Used share of credit card and overdraft limits",
                    );
                }
            }
            let unsettled: Vec<_> = credit
                .negative
                .iter()
                .filter(|e| e.settled.is_none())
                .collect();
            push(
                "NEGATIVE_ENTRY_COUNT",
                json!(credit.negative.len()),
                "COUNT",
                "Registered payment defaults, settled or not",
            );
            push(
                "UNSETTLED_NEGATIVE_AMOUNT",
                json!(Money::new(unsettled.iter().map(|e| e.amount.cents).sum(), currency).value()),
                currency,
                "Sum of payment defaults not yet settled",
            );
            if let Some(latest) = credit.negative.iter().map(|e| e.registered).max() {
                let created = self.record.created_at.date_naive();
                let months = (created.year() - latest.year()) * 12 + created.month() as i32
                    - latest.month() as i32;
                push(
                    "MONTHS_SINCE_LAST_DEFAULT",
                    json!(months.max(0)),
                    "MONTHS",
                    "Months since the most recent payment default was registered",
                );
            }
        }
        MetricsResponse {
            sources: Some(self.sources(Dataset::Metrics)),
            metrics: Some(items),
            extra: Map::new(),
        }
    }

    /// `GET .../scores`
    pub fn scores(&self) -> ScoresResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Scores) {
            items.extend(score_items(self.dossier, data, provider));
        }
        ScoresResponse {
            sources: Some(self.sources(Dataset::Scores)),
            scores: Some(items),
        }
    }

    /// `GET .../source-files`
    pub fn source_files(&self) -> Vec<SourceFile> {
        self.delivered(Dataset::SourceFiles)
            .into_iter()
            .map(|(data, provider)| {
                let file = files::source_file(self.dossier, data, provider);
                SourceFile {
                    id: file.id,
                    source_id: Some(provider.id.to_owned()),
                    type_: Some(file.kind.to_owned()),
                    name: Some(file.name.clone()),
                    size_in_bytes: Some(file.content.len() as i64),
                }
            })
            .collect()
    }

    /// `GET .../source-files/{id}/content`
    pub fn source_file_content(&self, id: Uuid) -> Option<SourceFileContent> {
        use base64::Engine as _;
        self.delivered(Dataset::SourceFiles)
            .into_iter()
            .map(|(data, provider)| (provider, files::source_file(self.dossier, data, provider)))
            .find(|(_, file)| file.id == id)
            .map(|(provider, file)| SourceFileContent {
                source_id: Some(provider.id.to_owned()),
                type_: Some(file.kind.to_owned()),
                name: Some(file.name.clone()),
                size_in_bytes: Some(file.content.len() as i64),
                content_base64: Some(
                    base64::engine::general_purpose::STANDARD.encode(&*file.content),
                ),
            })
    }

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
                AccountStatement {
                    id: Some(account.id.to_string()),
                    source_id: Some(provider.id.to_owned()),
                    extra: object(json!({
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
                    })),
                }
            })
            .collect();
        AccountStatementsResponse {
            sources: Some(self.sources(Dataset::AccountStatements)),
            account_statements: Some(items),
            extra: Map::new(),
        }
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
            categorizations.push(Categorization {
                accounts: Some(
                    accounts
                        .iter()
                        .map(|account| CategorizedAccount {
                            country_code: Some(data.country.code.to_owned()),
                            bank_name: Some(account.bank.clone()),
                            account_number: Some(account.iban.clone()),
                            account_holder_names: Some(vec![account.holder.clone()]),
                        })
                        .collect(),
                ),
                total_period_months: Some(total_months as i32),
                total_period_received_months: Some(total_months.saturating_sub(missing) as i32),
                extra: object(json!({
                    "sourceId": provider.id,
                    "currencyCode": data.country.currency,
                    "categories": category_totals(&accounts),
                })),
            });
        }
        CategorizationsResponse {
            sources: Some(self.sources(Dataset::Categorizations)),
            summary: (!delivered.is_empty()).then_some(CategorizationPeriodSummary {
                period_with_income_months: Some(income_months.len() as i32),
                period_with_liabilities_months: Some(liability_months.len() as i32),
            }),
            categorizations: Some(categorizations),
        }
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
            return CategorizationsSummaryResponse {
                summary: Some(CategorizationSummary {
                    status,
                    count_of_institutions: Some(0),
                    extra: Map::new(),
                }),
            };
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
        CategorizationsSummaryResponse {
            summary: Some(CategorizationSummary {
                status,
                count_of_institutions: Some(institutions.len() as i32),
                extra,
            }),
        }
    }

    /// Delivered verifications with their provider and country.
    pub fn verifications(&self) -> Vec<(&CountryData, &'static Provider, &Verification)> {
        self.delivered(Dataset::IdentityVerifications)
            .into_iter()
            .filter_map(|(data, provider)| {
                data.identity
                    .as_ref()
                    .map(|identity| (data, provider, &identity.verification))
            })
            .collect()
    }

    fn verified_at(&self, code: &str) -> DateTime<Utc> {
        self.consent_of(code, DataPackageInput::Identification) - ChronoDuration::minutes(3)
    }

    /// `GET .../identity-verifications`
    pub fn identity_verifications(&self) -> IdentityVerificationsResponse {
        let items = self
            .verifications()
            .into_iter()
            .map(|(data, provider, verification)| IdentityVerification {
                id: Some(verification.id.to_string()),
                source_id: Some(provider.id.to_owned()),
                extra: object(json!({
                    "countryCode": data.country.code,
                    "method": verification.method,
                    "status": "APPROVED",
                    "verifiedAtUtc": self.verified_at(data.country.code),
                    "document": verification.document.to_json(),
                    "livenessCheck": "PASSED",
                    "faceMatchScore": verification.face_match,
                    "imageCount": verification.images.len(),
                })),
            })
            .collect();
        IdentityVerificationsResponse {
            sources: Some(self.sources(Dataset::IdentityVerifications)),
            identity_verifications: Some(items),
            extra: Map::new(),
        }
    }

    /// `GET .../identity-verifications/{id}/images`; `None` for an unknown verification.
    pub fn verification_images(
        &self,
        verification_id: &str,
    ) -> Result<Option<IdentityVerificationImagesResponse>, Problem> {
        let Some((data, provider, verification)) = self
            .verifications()
            .into_iter()
            .find(|(_, _, v)| v.id.to_string().eq_ignore_ascii_case(verification_id))
        else {
            return Ok(None);
        };
        let captured = self.verified_at(data.country.code) - ChronoDuration::seconds(40);
        let mut images = Vec::new();
        for image in &verification.images {
            let content = files::verification_image(self.dossier, data, verification, image)?;
            images.push(IdentityVerificationImage {
                id: Some(image.id.to_string()),
                source_id: Some(provider.id.to_owned()),
                extra: object(json!({
                    "verificationId": verification.id,
                    "type": image.kind,
                    "mimeType": image.mime,
                    "fileName": image.file_name,
                    "widthPixels": image.width,
                    "heightPixels": image.height,
                    "sizeInBytes": content.len(),
                    "capturedAtUtc": captured,
                })),
            });
        }
        Ok(Some(IdentityVerificationImagesResponse {
            sources: Some(vec![Source {
                source_id: Some(provider.id.to_owned()),
                country_code: Some(data.country.code.to_owned()),
                status: SourceStatus::Success,
            }]),
            images: Some(images),
            extra: Map::new(),
        }))
    }

    /// `GET .../attachments`
    pub fn attachments(&self) -> Result<AttachmentsResponse, Problem> {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Attachments) {
            let Some(identity) = &data.identity else {
                continue;
            };
            let added = self.consent_of(data.country.code, DataPackageInput::Identification);
            for spec in &identity.attachments {
                let content = files::attachment(self.dossier, self.record, data, spec)?;
                items.push(Attachment {
                    id: spec.id.to_string(),
                    source_id: Some(provider.id.to_owned()),
                    attachment_type: spec.kind.clone(),
                    mime_type: Some(spec.mime.to_owned()),
                    file_name: Some(spec.file_name.clone()),
                    file_size_bytes: content.len() as i64,
                    added_on_utc: added.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    country_code: Some(data.country.code.to_owned()),
                });
            }
        }
        Ok(AttachmentsResponse {
            attachments: Some(items),
        })
    }

    /// `GET .../input-requirements`: what the customer still has to do, per provider.
    pub fn input_requirements(&self) -> InputRequirementsResponse {
        let mut items = Vec::new();
        for request in &self.record.countries {
            let Some(country) = catalog::country(&request.country) else {
                continue;
            };
            let pending: Vec<DataPackageInput> = request
                .packages
                .iter()
                .filter(|p| p.consented_at.is_none())
                .map(|p| p.package)
                .collect();
            for provider in country.providers {
                let packages: Vec<DataPackageInput> = pending
                    .iter()
                    .copied()
                    .filter(|package| provider.datasets.iter().any(|d| d.package() == *package))
                    .collect();
                if packages.is_empty() {
                    continue;
                }
                let (kind, description) = match provider.kind {
                    ProviderKind::Identity => (
                        "IDENTITY_VERIFICATION",
                        format!(
                            "The subject must verify their identity with {}.",
                            provider.name
                        ),
                    ),
                    ProviderKind::BankAggregator => (
                        "BANK_ACCOUNT_LINK",
                        format!(
                            "The subject must link their bank accounts through {}.",
                            provider.name
                        ),
                    ),
                    ProviderKind::Bureau | ProviderKind::Registry => (
                        "CONSENT",
                        format!(
                            "The subject must consent to the retrieval of their data from {}.",
                            provider.name
                        ),
                    ),
                };
                items.push(InputRequirement {
                    source_id: Some(provider.id.to_owned()),
                    country_code: Some(country.code.to_owned()),
                    extra: object(json!({
                        "type": kind,
                        "description": description,
                        "dataPackages": packages.iter().map(|p| package_output(*p)).collect::<Vec<_>>(),
                        "dueUtc": self.record.deadline,
                    })),
                });
            }
        }
        InputRequirementsResponse {
            input_requirements: Some(items),
            extra: Map::new(),
        }
    }
}

fn object_with(value: Value, key: &str, item: &str) -> Value {
    let mut map = object(value);
    map.insert(key.to_owned(), json!(item));
    Value::Object(map)
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

/// `GET /v1/consumer/packages`: every catalog country with the packages it offers.
pub fn consumer_packages() -> ConsumerPackagesResponse {
    ConsumerPackagesResponse {
        packages: Some(
            catalog::COUNTRIES
                .iter()
                .map(|country| ConsumerPackage {
                    country_code: Some(country.code.to_owned()),
                    data_packages: Some(country.packages().into_iter().map(package_output).collect()),
                    extra: object(json!({
                        "countryName": country.name,
                        "sources": country.providers.iter().map(|p| json!({
                            "sourceId": p.id,
                            "name": p.name,
                            "dataPackages": catalog::ALL_PACKAGES
                                .iter()
                                .filter(|package| p.datasets.iter().any(|d| d.package() == **package))
                                .map(|package| package_output(*package))
                                .collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    })),
                })
                .collect(),
        ),
        extra: Map::new(),
    }
}
