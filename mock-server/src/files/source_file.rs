//! A provider's original report about the subject: XML from bureaus, JSON from registers.

use std::sync::Arc;

use serde_json::json;
use uuid::Uuid;

use crate::catalog::{Dataset, Provider, ProviderKind};
use crate::data::scores::score_items;
use crate::data::{CountryData, Dossier, item_id};

/// A provider's original answer.
pub struct SourceFileBlob {
    /// The source file id.
    pub id: Uuid,
    /// `XML` or `JSON`.
    pub kind: &'static str,
    /// Download name.
    pub name: String,
    /// Content.
    pub content: Arc<Vec<u8>>,
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The original report of `provider` about the subject (XML from bureaus, JSON from registers).
pub fn source_file(dossier: &Dossier, data: &CountryData, provider: &Provider) -> SourceFileBlob {
    let id = item_id(
        dossier.session,
        &format!("{}/source-file/{}", data.country.code, provider.id),
    );
    let date = dossier.created.to_string();
    let lower = provider.id.to_lowercase().replace('_', "-");
    let (kind, name) = if provider.kind == ProviderKind::Bureau {
        ("XML", format!("{lower}-credit-report-{date}.xml"))
    } else {
        ("JSON", format!("{lower}-register-extract-{date}.json"))
    };
    let content = dossier
        .file::<std::convert::Infallible>(&id.to_string(), || {
            Ok(if kind == "XML" {
                bureau_xml(dossier, data, provider, &date).into_bytes()
            } else {
                registry_json(dossier, data, provider, &date)
            })
        })
        .unwrap_or_else(|never| match never {});
    SourceFileBlob {
        id,
        kind,
        name,
        content,
    }
}

fn bureau_xml(dossier: &Dossier, data: &CountryData, provider: &Provider, date: &str) -> String {
    let person = &dossier.person;
    let credit = &data.credit;
    let mut xml = String::new();
    xml.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<CreditReport provider=\"{}\" providerName=\"{}\" country=\"{}\" reportDate=\"{date}\" reference=\"{}\">\n",
        provider.id,
        xml_escape(provider.name),
        data.country.code,
        dossier.session
    ));
    xml.push_str(&format!(
        "  <Subject>\n    <GivenName>{}</GivenName>\n    <FamilyName>{}</FamilyName>\n    <BirthDate>{}</BirthDate>\n    <IdentityCode country=\"{}\">{}</IdentityCode>\n    <Address>{}</Address>\n  </Subject>\n",
        xml_escape(&person.given_name),
        xml_escape(&person.family_name),
        person.birth_date,
        person.home.code,
        xml_escape(&person.identity_code),
        xml_escape(&person.address.line()),
    ));
    if provider.delivers(Dataset::PositiveTradelines) {
        xml.push_str("  <CreditAgreements>\n");
        for line in &credit.positive {
            xml.push_str(&format!(
                "    <Agreement id=\"{}\" type=\"{}\" status=\"{}\" opened=\"{}\">\n      <Creditor>{}</Creditor>\n      <OriginalAmount currency=\"{}\">{}</OriginalAmount>\n      <Outstanding currency=\"{}\">{}</Outstanding>\n      <MonthlyInstallment currency=\"{}\">{}</MonthlyInstallment>\n    </Agreement>\n",
                line.id,
                serde_json::to_value(&line.contract_type).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
                line.status,
                line.opened,
                xml_escape(&line.creditor),
                line.original.currency,
                crate::render::tsv::plain_cents(line.original.cents),
                line.outstanding.currency,
                crate::render::tsv::plain_cents(line.outstanding.cents),
                line.monthly_installment.currency,
                crate::render::tsv::plain_cents(line.monthly_installment.cents),
            ));
        }
        xml.push_str("  </CreditAgreements>\n");
    }
    xml.push_str("  <PaymentDefaults>\n");
    for entry in &credit.negative {
        xml.push_str(&format!(
            "    <Default id=\"{}\" registered=\"{}\" status=\"{}\" daysPastDue=\"{}\">\n      <Creditor>{}</Creditor>\n      <Amount currency=\"{}\">{}</Amount>\n    </Default>\n",
            entry.id,
            entry.registered,
            entry.status,
            entry.days_past_due,
            xml_escape(&entry.creditor),
            entry.amount.currency,
            crate::render::tsv::plain_cents(entry.amount.cents),
        ));
    }
    xml.push_str("  </PaymentDefaults>\n");
    if provider.delivers(Dataset::Scores) {
        xml.push_str("  <Scores>\n");
        for score in score_items(dossier, data, provider) {
            let kind = serde_json::to_value(&score.type_)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            match (&score.original_value, &score.unavailable_reason) {
                (Some(value), _) => xml.push_str(&format!(
                    "    <Score type=\"{kind}\">{}</Score>\n",
                    xml_escape(value)
                )),
                (None, Some(reason)) => {
                    let reason = serde_json::to_value(reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default();
                    xml.push_str(&format!(
                        "    <Score type=\"{kind}\" unavailable=\"{reason}\"/>\n"
                    ));
                }
                (None, None) => {}
            }
        }
        xml.push_str("  </Scores>\n");
    }
    xml.push_str("</CreditReport>\n");
    xml
}

fn registry_json(
    dossier: &Dossier,
    data: &CountryData,
    provider: &Provider,
    date: &str,
) -> Vec<u8> {
    let person = &dossier.person;
    let credit = &data.credit;
    let document = json!({
        "register": provider.name,
        "sourceId": provider.id,
        "countryCode": data.country.code,
        "extractDate": date,
        "reference": dossier.session,
        "subject": {
            "name": person.full_name(),
            "birthDate": person.birth_date.to_string(),
            "identityCode": person.identity_code,
        },
        "courtCases": if provider.delivers(Dataset::CourtAndInsolvencies) {
            credit.court.iter().map(|c| json!({
                "caseNumber": c.case_number,
                "court": c.court,
                "type": c.kind,
                "status": c.status,
                "filed": c.filed.to_string(),
                "decided": c.decided.map(|d| d.to_string()),
                "claim": crate::render::tsv::plain_cents(c.claim.cents),
                "currency": c.claim.currency,
            })).collect::<Vec<_>>()
        } else { Vec::new() },
        "companyRoles": if provider.delivers(Dataset::LegalEntities) {
            credit.companies.iter().map(|c| json!({
                "company": c.name,
                "registryCode": c.registry_code,
                "from": c.start.to_string(),
                "until": c.end.map(|d| d.to_string()),
            })).collect::<Vec<_>>()
        } else { Vec::new() },
        "properties": if provider.delivers(Dataset::Immovables) {
            credit.properties.iter().map(|p| json!({
                "registryNumber": p.registry_number,
                "type": p.kind,
                "address": p.address.line(),
                "share": format!("{}/{}", p.share.0, p.share.1),
                "acquired": p.acquired.to_string(),
                "mortgaged": p.mortgaged,
            })).collect::<Vec<_>>()
        } else { Vec::new() },
        "taxableIncome": if provider.delivers(Dataset::RegistryIncomes) {
            credit.incomes.iter().map(|i| json!({
                "year": i.year,
                "gross": crate::render::tsv::plain_cents(i.gross.cents),
                "tax": crate::render::tsv::plain_cents(i.tax.cents),
                "net": crate::render::tsv::plain_cents(i.net.cents),
                "currency": i.gross.currency,
            })).collect::<Vec<_>>()
        } else { Vec::new() },
    });
    serde_json::to_vec_pretty(&document).unwrap_or_default()
}
