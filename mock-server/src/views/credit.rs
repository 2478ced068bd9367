//! The bureaus' and registers' datasets: tradelines, court cases, legal entities, registry
//! incomes, immovables, metrics and scores.

use crate::built::Built;
use chrono::Datelike;
use creditdata_client::types::{
    ContractType, CourtAndInsolvenciesResponse, CourtAndInsolvencyCase, Creditor, Immovable,
    ImmovablesResponse, LegalEntitiesResponse, LegalEntity, LegalEntityRelation,
    LegalEntityRelationType, Metric, MetricsResponse, NegativeTradeline,
    NegativeTradelinesResponse, PositiveTradeline, PositiveTradelinesResponse, RegistryIncome,
    RegistryIncomesResponse, ScoresResponse,
};
use serde_json::{Value, json};

use super::{View, money, object};
use crate::catalog::Dataset;
use crate::data::Money;
use crate::data::scores::score_items;

impl View<'_> {
    /// `GET .../negative-tradelines`
    pub fn negative_tradelines(&self) -> NegativeTradelinesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::NegativeTradelines) {
            for entry in &data.credit.negative {
                items.push(
                    NegativeTradeline::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .amount(Some(entry.amount.amount()))
                        .contract_type(entry.contract_type.clone())
                        .creditor(Some(
                            Creditor::builder()
                                .sector(entry.sector.clone())
                                .extra(object(json!({ "name": entry.creditor })))
                                .build()
                                .built(),
                        ))
                        .extra(object(json!({
                            "id": entry.id,
                            "countryCode": data.country.code,
                            "registeredDate": entry.registered.to_string(),
                            "daysPastDue": entry.days_past_due,
                            "status": entry.status,
                            "settledDate": entry.settled.map(|d| d.to_string()),
                        })))
                        .build()
                        .built(),
                );
            }
        }
        NegativeTradelinesResponse::builder()
            .sources(Some(self.sources(Dataset::NegativeTradelines)))
            .negative_tradelines(Some(items))
            .build()
            .built()
    }

    /// `GET .../positive-tradelines`
    pub fn positive_tradelines(&self) -> PositiveTradelinesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::PositiveTradelines) {
            for line in &data.credit.positive {
                items.push(
                    PositiveTradeline::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .extra(object(json!({
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
                        })))
                        .build()
                        .built(),
                );
            }
        }
        PositiveTradelinesResponse::builder()
            .sources(Some(self.sources(Dataset::PositiveTradelines)))
            .positive_tradelines(Some(items))
            .build()
            .built()
    }

    /// `GET .../court-and-insolvencies`
    pub fn court_and_insolvencies(&self) -> CourtAndInsolvenciesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::CourtAndInsolvencies) {
            for case in &data.credit.court {
                items.push(
                    CourtAndInsolvencyCase::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .extra(object(json!({
                            "caseNumber": case.case_number,
                            "countryCode": data.country.code,
                            "court": case.court,
                            "caseType": case.kind,
                            "status": case.status,
                            "filedDate": case.filed.to_string(),
                            "decisionDate": case.decided.map(|d| d.to_string()),
                            "claimAmount": money(case.claim),
                            "claimant": case.claimant,
                        })))
                        .build()
                        .built(),
                );
            }
        }
        CourtAndInsolvenciesResponse::builder()
            .sources(Some(self.sources(Dataset::CourtAndInsolvencies)))
            .court_and_insolvencies(Some(items))
            .build()
            .built()
    }

    /// `GET .../legal-entities`
    pub fn legal_entities(&self) -> LegalEntitiesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::LegalEntities) {
            for company in &data.credit.companies {
                items.push(
                    LegalEntity::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .name(Some(company.name.clone()))
                        .relations(Some(vec![
                            LegalEntityRelation::builder()
                                .type_(LegalEntityRelationType::Unknown)
                                .start_date(Some(company.start.to_string()))
                                .end_date(company.end.map(|d| d.to_string()))
                                .build()
                                .built(),
                        ]))
                        .build()
                        .built(),
                );
            }
        }
        LegalEntitiesResponse::builder()
            .sources(Some(self.sources(Dataset::LegalEntities)))
            .legal_entities(Some(items))
            .build()
            .built()
    }

    /// `GET .../registry-incomes`
    pub fn registry_incomes(&self) -> RegistryIncomesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::RegistryIncomes) {
            for income in &data.credit.incomes {
                items.push(
                    RegistryIncome::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .assessment_year(Some(income.year))
                        .gross_income(Some(income.gross.amount()))
                        .net_income(Some(income.net.amount()))
                        .total_tax_amount(Some(income.tax.amount()))
                        .build()
                        .built(),
                );
            }
        }
        RegistryIncomesResponse::builder()
            .sources(Some(self.sources(Dataset::RegistryIncomes)))
            .incomes(Some(items))
            .build()
            .built()
    }

    /// `GET .../immovables`
    pub fn immovables(&self) -> ImmovablesResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Immovables) {
            for property in &data.credit.properties {
                items.push(
                    Immovable::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .extra(object(json!({
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
                        })))
                        .build()
                        .built(),
                );
            }
        }
        ImmovablesResponse::builder()
            .sources(Some(self.sources(Dataset::Immovables)))
            .immovables(Some(items))
            .build()
            .built()
    }

    /// `GET .../metrics`: figures each bureau derives from its own tradelines.
    pub fn metrics(&self) -> MetricsResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Metrics) {
            let currency = data.country.currency;
            let credit = &data.credit;
            let mut push = |name: &str, value: Value, unit: &str, description: &str| {
                items.push(
                    Metric::builder()
                        .source_id(Some(provider.id.to_owned()))
                        .extra(object(json!({
                            "countryCode": data.country.code,
                            "name": name,
                            "value": value,
                            "unit": unit,
                            "description": description,
                        })))
                        .build()
                        .built(),
                );
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
        MetricsResponse::builder()
            .sources(Some(self.sources(Dataset::Metrics)))
            .metrics(Some(items))
            .build()
            .built()
    }

    /// `GET .../scores`
    pub fn scores(&self) -> ScoresResponse {
        let mut items = Vec::new();
        for (data, provider) in self.delivered(Dataset::Scores) {
            items.extend(score_items(self.dossier, data, provider));
        }
        ScoresResponse::builder()
            .sources(Some(self.sources(Dataset::Scores)))
            .scores(Some(items))
            .build()
            .built()
    }
}

fn contract_type_name(contract_type: &ContractType) -> Value {
    serde_json::to_value(contract_type).unwrap_or(Value::Null)
}
