//! The PDF report of a session: a summary of the same data the JSON datasets deliver, as of the
//! moment it is requested.

use creditdata_client::types::SourceStatus;

use crate::catalog::{self, Dataset};
use crate::data::scores::score_items;
use crate::data::{Money, format_cents};
use crate::render::pdf::PdfDocument;
use crate::views::View;

fn status_name(status: &SourceStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn type_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ").to_lowercase()))
        .unwrap_or_default()
}

/// The report's download name.
pub fn file_name(view: &View<'_>) -> String {
    format!("credit-report-{}.pdf", view.record.id)
}

/// Renders the report.
pub fn render(view: &View<'_>) -> Vec<u8> {
    let record = view.record;
    let person = &view.dossier.person;
    let mut doc = PdfDocument::new("Consumer credit report");
    doc.title(
        "Consumer credit report",
        &format!(
            "Session {}  |  created {}  |  report generated {}  |  customer progress {}",
            record.id,
            record.created_at.format("%Y-%m-%d %H:%M UTC"),
            view.now.format("%Y-%m-%d %H:%M UTC"),
            record.progress.name()
        ),
    );

    doc.heading("Data subject");
    let identity = view.delivered(Dataset::PersonDetails);
    if identity.is_empty() {
        doc.facts(&[
            ("E-mail", record.subject_email.clone()),
            (
                "Name",
                if record.identified() {
                    person.full_name()
                } else {
                    "not yet identified".into()
                },
            ),
        ]);
        doc.paragraph(
            "Person details are not part of this report: the IDENTIFICATION package was not \
             requested or its providers have not answered yet.",
            9.0,
        );
    } else {
        doc.facts(&[
            ("Name", person.full_name()),
            ("Date of birth", person.birth_date.to_string()),
            (
                "Identity code",
                format!("{} ({})", person.identity_code, person.home.code),
            ),
            ("Address", person.address.line()),
            ("E-mail", person.email.clone()),
            ("Telephone", person.phone.clone()),
            ("Marital status", person.marital_status.to_lowercase()),
            ("Children under 18", person.children.to_string()),
            (
                "Document",
                format!(
                    "{} {} valid until {}",
                    person.document.kind.replace('_', " ").to_lowercase(),
                    person.document.number,
                    person.document.expires
                ),
            ),
        ]);
    }

    doc.heading("Requested data and source status");
    let mut rows = Vec::new();
    for request in &record.countries {
        let packages: Vec<String> = request
            .packages
            .iter()
            .map(|p| p.package.to_string())
            .collect();
        let country_name = catalog::country_name(&request.country);
        match catalog::country(&request.country) {
            None => rows.push(vec![
                country_name,
                "-".into(),
                packages.join(", "),
                "UNSUPPORTED_COUNTRY".into(),
            ]),
            Some(country) => {
                for provider in country.providers {
                    // One row per provider, with the status of its first dataset.
                    let Some(dataset) = provider.datasets.first() else {
                        continue;
                    };
                    rows.push(vec![
                        country_name.clone(),
                        provider.name.to_owned(),
                        dataset.package().to_string(),
                        status_name(&view.status(country.code, provider, *dataset)),
                    ]);
                }
            }
        }
    }
    doc.table(
        &["Country", "Source", "Package", "Status"],
        &[0.16, 0.3, 0.3, 0.24],
        &[false, false, false, false],
        &rows,
    );

    let scores: Vec<_> = view
        .delivered(Dataset::Scores)
        .into_iter()
        .flat_map(|(data, provider)| {
            score_items(view.dossier, data, provider)
                .into_iter()
                .map(move |score| (provider, score))
        })
        .collect();
    if !scores.is_empty() {
        doc.heading("Scores");
        let rows: Vec<Vec<String>> = scores
            .iter()
            .map(|(provider, score)| {
                vec![
                    provider.name.to_owned(),
                    type_name(&score.type_),
                    score.original_value.clone().unwrap_or_else(|| "-".into()),
                    score.normalized_value.clone().unwrap_or_else(|| "-".into()),
                    score
                        .unavailable_reason
                        .as_ref()
                        .map(type_name)
                        .unwrap_or_default(),
                ]
            })
            .collect();
        doc.table(
            &[
                "Source",
                "Score",
                "Value",
                "Normalized",
                "Unavailable because",
            ],
            &[0.27, 0.2, 0.13, 0.13, 0.27],
            &[false, false, true, true, false],
            &rows,
        );
    }

    let positive = view.delivered(Dataset::PositiveTradelines);
    if !positive.is_empty() {
        doc.heading("Credit agreements");
        let mut rows = Vec::new();
        let mut totals: std::collections::BTreeMap<&str, (i64, i64)> = Default::default();
        for (data, _) in &positive {
            for line in &data.credit.positive {
                if line.status == "ACTIVE" {
                    let total = totals.entry(line.outstanding.currency).or_default();
                    total.0 += line.outstanding.cents;
                    total.1 += line.monthly_installment.cents;
                }
                rows.push(vec![
                    line.creditor.clone(),
                    type_name(&line.contract_type),
                    line.opened.to_string(),
                    line.status.to_lowercase(),
                    line.outstanding.display(),
                    line.monthly_installment.display(),
                ]);
            }
        }
        doc.table(
            &[
                "Creditor",
                "Type",
                "Opened",
                "Status",
                "Outstanding",
                "Monthly",
            ],
            &[0.25, 0.17, 0.13, 0.1, 0.18, 0.17],
            &[false, false, false, false, true, true],
            &rows,
        );
        for (currency, (outstanding, monthly)) in totals {
            doc.paragraph(
                &format!(
                    "Open credit in {currency}: outstanding {} {currency}, monthly instalments {} {currency}.",
                    format_cents(outstanding),
                    format_cents(monthly)
                ),
                9.0,
            );
        }
    }

    let negative = view.delivered(Dataset::NegativeTradelines);
    if !negative.is_empty() {
        doc.heading("Payment defaults");
        let rows: Vec<Vec<String>> = negative
            .iter()
            .flat_map(|(data, _)| data.credit.negative.iter())
            .map(|entry| {
                vec![
                    entry.creditor.clone(),
                    entry.registered.to_string(),
                    entry.status.replace('_', " ").to_lowercase(),
                    entry.days_past_due.to_string(),
                    entry.amount.display(),
                ]
            })
            .collect();
        if rows.is_empty() {
            doc.paragraph("No payment defaults are registered.", 9.0);
        } else {
            doc.table(
                &[
                    "Creditor",
                    "Registered",
                    "Status",
                    "Days past due",
                    "Amount",
                ],
                &[0.3, 0.15, 0.2, 0.15, 0.2],
                &[false, false, false, true, true],
                &rows,
            );
        }
    }

    let court = view.delivered(Dataset::CourtAndInsolvencies);
    if !court.is_empty() {
        doc.heading("Court and insolvency cases");
        let rows: Vec<Vec<String>> = court
            .iter()
            .flat_map(|(data, _)| data.credit.court.iter())
            .map(|case| {
                vec![
                    case.case_number.clone(),
                    case.kind.replace('_', " ").to_lowercase(),
                    case.status.to_lowercase(),
                    case.filed.to_string(),
                    case.claim.display(),
                ]
            })
            .collect();
        if rows.is_empty() {
            doc.paragraph("No court or insolvency cases are registered.", 9.0);
        } else {
            doc.table(
                &["Case", "Type", "Status", "Filed", "Claim"],
                &[0.25, 0.22, 0.13, 0.15, 0.25],
                &[false, false, false, false, true],
                &rows,
            );
        }
    }

    let incomes = view.delivered(Dataset::RegistryIncomes);
    if !incomes.is_empty() {
        doc.heading("Registered income");
        let rows: Vec<Vec<String>> = incomes
            .iter()
            .flat_map(|(data, _)| data.credit.incomes.iter())
            .map(|income| {
                vec![
                    income.year.to_string(),
                    income.gross.display(),
                    income.tax.display(),
                    income.net.display(),
                ]
            })
            .collect();
        doc.table(
            &["Year", "Gross", "Tax", "Net"],
            &[0.16, 0.28, 0.28, 0.28],
            &[false, true, true, true],
            &rows,
        );
    }

    let property = view.delivered(Dataset::Immovables);
    let companies = view.delivered(Dataset::LegalEntities);
    if !property.is_empty() || !companies.is_empty() {
        doc.heading("Property and company roles");
        let mut rows: Vec<Vec<String>> = property
            .iter()
            .flat_map(|(data, _)| data.credit.properties.iter())
            .map(|p| {
                vec![
                    p.kind.replace('_', " ").to_lowercase(),
                    p.address.line(),
                    format!("{}/{}", p.share.0, p.share.1),
                    if p.mortgaged { "mortgaged" } else { "" }.into(),
                ]
            })
            .collect();
        rows.extend(
            companies
                .iter()
                .flat_map(|(data, _)| data.credit.companies.iter())
                .map(|c| {
                    vec![
                        "company role".into(),
                        c.name.clone(),
                        c.start.to_string(),
                        c.end
                            .map(|d| format!("until {d}"))
                            .unwrap_or_else(|| "current".into()),
                    ]
                }),
        );
        if rows.is_empty() {
            doc.paragraph("No property or company roles are registered.", 9.0);
        } else {
            doc.table(
                &["Kind", "What", "Share / since", "Note"],
                &[0.18, 0.5, 0.14, 0.18],
                &[false, false, false, false],
                &rows,
            );
        }
    }

    let accounts = view.accounts();
    if !accounts.is_empty() {
        doc.heading("Bank accounts");
        let rows: Vec<Vec<String>> = accounts
            .iter()
            .map(|(_, _, account)| {
                vec![
                    account.bank.clone(),
                    account.iban.clone(),
                    format!("{} - {}", account.period_start, account.period_end),
                    account.opening.display(),
                    account.closing().display(),
                    account.transactions.len().to_string(),
                ]
            })
            .collect();
        doc.table(
            &["Bank", "IBAN", "Period", "Opening", "Closing", "Tx"],
            &[0.17, 0.27, 0.2, 0.13, 0.15, 0.08],
            &[false, false, false, true, true, true],
            &rows,
        );
        let mut per_currency: std::collections::BTreeMap<&str, (i64, i64)> = Default::default();
        for (_, _, account) in &accounts {
            let entry = per_currency.entry(account.currency).or_default();
            for t in account
                .transactions
                .iter()
                .filter(|t| t.category != "TRANSFERS")
            {
                if t.cents > 0 {
                    entry.0 += t.cents;
                } else {
                    entry.1 += t.cents;
                }
            }
        }
        for (currency, (income, spending)) in per_currency {
            doc.paragraph(
                &format!(
                    "Over the statement period: income {} and spending {} (own transfers excluded). \
                     Categorization status: {}.",
                    Money::new(income, currency).display(),
                    Money::new(-spending, currency).display(),
                    serde_json::to_value(view.categorization_status())
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ),
                9.0,
            );
        }
    }

    let verifications = view.verifications();
    if !verifications.is_empty() {
        doc.heading("Identity verification");
        let rows: Vec<Vec<String>> = verifications
            .iter()
            .map(|(data, provider, verification)| {
                vec![
                    provider.name.to_owned(),
                    data.country.code.to_owned(),
                    verification.method.replace('_', " ").to_lowercase(),
                    format!("{:.3}", verification.face_match),
                    "approved".into(),
                ]
            })
            .collect();
        doc.table(
            &["Source", "Country", "Method", "Face match", "Result"],
            &[0.3, 0.1, 0.3, 0.15, 0.15],
            &[false, false, false, true, false],
            &rows,
        );
    }

    doc.space(12.0);
    doc.paragraph(
        "This report was produced by creditdata-mock, a local stand-in for the consumer \
         credit-data service. Every person, company, bank and provider in it is invented.",
        8.0,
    );
    doc.finish()
}
