//! The binary and text files behind the datasets: providers' original reports (source files),
//! identity-verification images and the subject's attachments. Each is generated once per
//! session from the dossier and kept, so listed sizes and downloads always agree.

use std::sync::Arc;

use creditdata_client::types::{AttachmentType, DataPackageInput};
use serde_json::json;
use uuid::Uuid;

use crate::catalog::{Dataset, Provider, ProviderKind};
use crate::data::scores::score_items;
use crate::data::{AttachmentSpec, CountryData, Dossier, ImageSpec, Verification, fnv1a, item_id};
use crate::problem::Problem;
use crate::render::font::mrz;
use crate::render::image::{Canvas, Rgb};
use crate::render::pdf::PdfDocument;
use crate::store::SessionRecord;

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

fn encode_failed(error: impl std::fmt::Display) -> Problem {
    Problem::internal(format!("the mock could not render the file: {error}"))
}

/// Light and dark colours of a country's documents.
fn palette(code: &str) -> (Rgb, Rgb) {
    match fnv1a(code.as_bytes()) % 4 {
        0 => (Rgb(226, 236, 246), Rgb(20, 60, 120)),
        1 => (Rgb(236, 244, 230), Rgb(30, 90, 50)),
        2 => (Rgb(246, 236, 228), Rgb(120, 40, 30)),
        _ => (Rgb(238, 232, 246), Rgb(70, 40, 110)),
    }
}

/// Skin, hair and clothing colours for a portrait.
fn portrait_colors(seed: u64) -> (Rgb, Rgb, Rgb) {
    let skins = [
        Rgb(241, 204, 178),
        Rgb(224, 177, 140),
        Rgb(198, 142, 104),
        Rgb(160, 110, 80),
    ];
    let hair = [
        Rgb(60, 40, 25),
        Rgb(20, 20, 20),
        Rgb(170, 130, 70),
        Rgb(110, 70, 40),
        Rgb(200, 190, 170),
    ];
    let clothes = [
        Rgb(40, 60, 90),
        Rgb(90, 90, 95),
        Rgb(120, 30, 40),
        Rgb(30, 90, 80),
    ];
    (
        skins[(seed % 4) as usize],
        hair[((seed >> 8) % 5) as usize],
        clothes[((seed >> 16) % 4) as usize],
    )
}

fn portrait(canvas: &mut Canvas, x: i64, y: i64, width: i64, height: i64, seed: u64, female: bool) {
    let (skin, hair, clothes) = portrait_colors(seed);
    canvas.clip(Some((x, y, width, height)));
    canvas.rect(x, y, width, height, Rgb(205, 212, 220));
    let cx = x + width / 2;
    let head_y = y + height * 2 / 5;
    let rx = width / 5;
    let ry = height / 6;
    // Shoulders, long hair behind, neck, hair on top, face, features.
    canvas.ellipse(
        cx,
        y + height + height / 20,
        width / 2,
        height * 2 / 5,
        clothes,
    );
    if female {
        canvas.rect(
            cx - rx * 6 / 5,
            head_y - ry / 2,
            rx * 12 / 5,
            ry + ry / 2,
            hair,
        );
    }
    canvas.rect(cx - rx / 3, head_y + ry / 2, rx * 2 / 3, ry + ry / 2, skin);
    canvas.ellipse(cx, head_y - ry / 4, rx + rx / 10, ry - ry / 8, hair);
    canvas.ellipse(cx, head_y + ry / 8, rx, ry, skin);
    let eye = Rgb(40, 40, 50);
    canvas.ellipse(cx - rx / 2, head_y, rx / 8, ry / 12, eye);
    canvas.ellipse(cx + rx / 2, head_y, rx / 8, ry / 12, eye);
    canvas.rect(
        cx - rx / 2 - rx / 6,
        head_y - ry / 5,
        rx / 3,
        ry / 24 + 1,
        hair,
    );
    canvas.rect(
        cx + rx / 2 - rx / 6,
        head_y - ry / 5,
        rx / 3,
        ry / 24 + 1,
        hair,
    );
    let shade = Rgb(
        skin.0.saturating_sub(25),
        skin.1.saturating_sub(30),
        skin.2.saturating_sub(30),
    );
    canvas.ellipse(cx, head_y + ry / 3, rx / 12, ry / 10, shade);
    canvas.ellipse(cx, head_y + ry * 3 / 5, rx / 3, ry / 14, Rgb(150, 60, 60));
    canvas.clip(None);
}

/// ICAO 9303 check digit.
fn mrz_check(field: &str) -> char {
    let weights = [7u32, 3, 1];
    let sum: u32 = field
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let value = match c {
                '0'..='9' => c as u32 - '0' as u32,
                'A'..='Z' => c as u32 - 'A' as u32 + 10,
                _ => 0,
            };
            value * weights[i % 3]
        })
        .sum();
    char::from(b'0' + (sum % 10) as u8)
}

fn pad(text: &str, width: usize) -> String {
    let mut text: String = text.chars().take(width).collect();
    while text.chars().count() < width {
        text.push('<');
    }
    text
}

/// The machine-readable zone of the subject's document (TD3 for passports, TD1 for ID cards).
pub fn machine_readable_zone(dossier: &Dossier) -> Vec<String> {
    let person = &dossier.person;
    let document = &person.document;
    let name = format!("{}<<{}", mrz(&person.family_name), mrz(&person.given_name));
    let number = pad(&mrz(&document.number), 9);
    let birth = person.birth_date.format("%y%m%d").to_string();
    let expiry = document.expires.format("%y%m%d").to_string();
    let sex = if person.female { 'F' } else { 'M' };
    let nationality = document.issuing_country;
    if document.kind == "PASSPORT" {
        let personal = pad(&mrz(&person.identity_code), 14);
        let line1 = pad(&format!("P<{nationality}{name}"), 44);
        let mut line2 = format!(
            "{number}{}{nationality}{birth}{}{sex}{expiry}{}{personal}{}",
            mrz_check(&number),
            mrz_check(&birth),
            mrz_check(&expiry),
            mrz_check(&personal)
        );
        let composite = format!("{}{}{}", &line2[0..10], &line2[13..20], &line2[21..43]);
        line2.push(mrz_check(&composite));
        vec![line1, line2]
    } else {
        let optional = pad(&mrz(&person.identity_code), 15);
        let line1 = format!("I<{nationality}{number}{}{optional}", mrz_check(&number));
        let mut line2 = format!(
            "{birth}{}{sex}{expiry}{}{nationality}{}",
            mrz_check(&birth),
            mrz_check(&expiry),
            pad("", 11)
        );
        let composite = format!(
            "{}{}{}{}",
            &line1[5..30],
            &line2[0..7],
            &line2[8..15],
            &line2[18..29]
        );
        line2.push(mrz_check(&composite));
        vec![line1, line2, pad(&name, 30)]
    }
}

/// An image of a verification.
pub fn verification_image(
    dossier: &Dossier,
    data: &CountryData,
    verification: &Verification,
    image: &ImageSpec,
) -> Result<Arc<Vec<u8>>, Problem> {
    dossier.file(&image.id.to_string(), || {
        let person = &dossier.person;
        let seed = fnv1a(dossier.session.as_bytes());
        let (light, dark) = palette(verification.document.issuing_country);
        let canvas = match image.kind {
            "SELFIE" => {
                let mut canvas = Canvas::new(image.width, image.height, Rgb(0, 0, 0));
                canvas.vertical_gradient(Rgb(232, 228, 220), Rgb(180, 176, 170));
                let (w, h) = (i64::from(image.width), i64::from(image.height));
                portrait(&mut canvas, 0, 0, w, h, seed, person.female);
                canvas
            }
            "DOCUMENT_BACK" => {
                let mut canvas = Canvas::new(image.width, image.height, light);
                canvas.rect(0, 0, i64::from(image.width), 60, dark);
                canvas.text(
                    30,
                    18,
                    4,
                    Rgb(255, 255, 255),
                    &crate::catalog::country_name(data.country.code),
                );
                canvas.text(40, 100, 2, Rgb(90, 90, 90), "ADDRESS");
                canvas.text(40, 125, 3, Rgb(20, 20, 20), &person.address.line());
                canvas.text(40, 175, 2, Rgb(90, 90, 90), "DATE OF ISSUE");
                canvas.text(
                    40,
                    200,
                    3,
                    Rgb(20, 20, 20),
                    &verification.document.issued.to_string(),
                );
                canvas.rect(40, 260, i64::from(image.width) - 80, 2, dark);
                for (n, line) in machine_readable_zone(dossier).iter().enumerate() {
                    canvas.text(40, 300 + n as i64 * 40, 4, Rgb(20, 20, 20), line);
                }
                canvas
            }
            _ => {
                let mut canvas = Canvas::new(image.width, image.height, light);
                let width = i64::from(image.width);
                canvas.rect(0, 0, width, 70, dark);
                canvas.text(
                    30,
                    24,
                    4,
                    Rgb(255, 255, 255),
                    &crate::catalog::country_name(data.country.code),
                );
                let title = if verification.document.kind == "PASSPORT" {
                    "PASSPORT"
                } else {
                    "IDENTITY CARD"
                };
                canvas.text(
                    width - 30 - Canvas::text_width(title, 3),
                    28,
                    3,
                    Rgb(255, 255, 255),
                    title,
                );
                portrait(&mut canvas, 40, 100, 230, 290, seed, person.female);
                canvas.frame(40, 100, 230, 290, 3, dark);
                let fields = [
                    ("SURNAME", person.family_name.clone()),
                    ("GIVEN NAMES", person.given_name.clone()),
                    (
                        "DATE OF BIRTH",
                        person.birth_date.format("%d.%m.%Y").to_string(),
                    ),
                    (
                        "NATIONALITY",
                        verification.document.issuing_country.to_owned(),
                    ),
                    ("DOCUMENT NO", verification.document.number.clone()),
                    (
                        "DATE OF EXPIRY",
                        verification.document.expires.format("%d.%m.%Y").to_string(),
                    ),
                ];
                for (n, (label, value)) in fields.iter().enumerate() {
                    let y = 100 + n as i64 * 48;
                    canvas.text(310, y, 2, Rgb(90, 90, 90), label);
                    canvas.text(310, y + 18, 3, Rgb(20, 20, 20), value);
                }
                if verification.document.kind == "PASSPORT" {
                    canvas.rect(0, 420, width, 120, Rgb(250, 250, 250));
                    for (n, line) in machine_readable_zone(dossier).iter().enumerate() {
                        canvas.text(32, 440 + n as i64 * 40, 3, Rgb(20, 20, 20), line);
                    }
                } else {
                    canvas.text(310, 410, 2, Rgb(90, 90, 90), "SIGNATURE");
                    canvas.rect(310, 470, 300, 2, Rgb(60, 60, 60));
                }
                canvas
            }
        };
        match image.mime {
            "image/png" => canvas.png(),
            _ => canvas.jpeg(),
        }
        .map_err(encode_failed)
    })
}

/// The content of an attachment.
pub fn attachment(
    dossier: &Dossier,
    record: &SessionRecord,
    data: &CountryData,
    spec: &AttachmentSpec,
) -> Result<Arc<Vec<u8>>, Problem> {
    let person = &dossier.person;
    let provider = data
        .country
        .providers
        .iter()
        .find(|p| p.kind == ProviderKind::Identity);
    let provider_name = provider.map(|p| p.name).unwrap_or("the identity provider");
    let consent = record
        .package_request(data.country.code, DataPackageInput::Identification)
        .and_then(|p| p.consented_at)
        .unwrap_or(record.created_at);
    dossier.file(&spec.id.to_string(), || match spec.kind {
        AttachmentType::Mandate => {
            let country = record
                .countries
                .iter()
                .find(|c| c.country == data.country.code);
            let packages: Vec<String> = country
                .map(|c| {
                    c.packages
                        .iter()
                        .filter(|p| p.consented_at.is_some_and(|at| at <= consent))
                        .map(|p| p.package.to_string())
                        .collect()
                })
                .unwrap_or_default();
            let mut doc = PdfDocument::new("Consent mandate");
            doc.title("Consent mandate", &format!("Reference {} - {}", record.id, crate::catalog::country_name(data.country.code)));
            doc.facts(&[
                ("Data subject", person.full_name()),
                ("Date of birth", person.birth_date.to_string()),
                ("Identity code", person.identity_code.clone()),
                ("E-mail", person.email.clone()),
                ("Requested by", record.created_by_name.clone()),
                ("Data packages", packages.join(", ")),
                ("Signed", consent.format("%Y-%m-%d %H:%M UTC").to_string()),
            ]);
            doc.space(10.0);
            doc.paragraph(
                &format!(
                    "I, {}, authorise the retrieval of my credit, register, bank-account and identity data \
                     listed above from the data providers of {} and its transfer to the requesting \
                     organisation, for the assessment of my application. This consent is valid for the \
                     session referenced above and may be withdrawn at any time.",
                    person.full_name(),
                    crate::catalog::country_name(data.country.code)
                ),
                10.0,
            );
            doc.space(10.0);
            doc.paragraph(&format!("Signed electronically after identity verification with {provider_name}."), 10.0);
            Ok(doc.finish())
        }
        AttachmentType::AddressProof => {
            let mut canvas = Canvas::new(620, 877, Rgb(255, 255, 255));
            let dark = Rgb(20, 90, 70);
            canvas.rect(0, 0, 620, 90, dark);
            canvas.text(30, 25, 4, Rgb(255, 255, 255), "CITYWIDE ENERGY");
            canvas.text(30, 62, 2, Rgb(220, 240, 230), "ELECTRICITY AND WATER BILL");
            canvas.text(30, 130, 3, Rgb(20, 20, 20), &person.full_name());
            canvas.text(30, 160, 3, Rgb(20, 20, 20), &person.address.street);
            canvas.text(30, 190, 3, Rgb(20, 20, 20), &format!("{} {}", person.address.postal_code, person.address.city));
            let bill = last_utility_bill(dossier);
            canvas.text(30, 260, 2, Rgb(90, 90, 90), "BILLING PERIOD");
            canvas.text(30, 282, 3, Rgb(20, 20, 20), &bill.0);
            canvas.text(30, 330, 2, Rgb(90, 90, 90), "AMOUNT DUE");
            canvas.text(30, 352, 4, Rgb(20, 20, 20), &bill.1);
            canvas.rect(30, 420, 560, 2, dark);
            for row in 0..8 {
                let y = 450 + row * 34;
                canvas.rect(30, y, 300 - (row * 17) % 120, 10, Rgb(200, 205, 210));
                canvas.rect(480, y, 110, 10, Rgb(200, 205, 210));
            }
            canvas.text(30, 820, 2, Rgb(120, 120, 120), "CUSTOMER NUMBER");
            canvas.text(240, 820, 2, Rgb(60, 60, 60), &format!("{:010}", fnv1a(person.email.as_bytes()) % 10_000_000_000));
            canvas.jpeg().map_err(encode_failed)
        }
        _ => {
            let (light, dark) = palette(person.home.code);
            let mut canvas = Canvas::new(640, 400, light);
            canvas.frame(10, 10, 620, 380, 4, dark);
            canvas.text(40, 40, 3, dark, "CERTIFICATE OF PERSONAL");
            canvas.text(40, 70, 3, dark, "IDENTITY CODE");
            canvas.text(40, 120, 2, Rgb(90, 90, 90), "NAME");
            canvas.text(40, 142, 3, Rgb(20, 20, 20), &person.full_name());
            canvas.text(40, 190, 2, Rgb(90, 90, 90), "PERSONAL IDENTITY CODE");
            canvas.text(40, 212, 5, Rgb(20, 20, 20), &person.identity_code);
            canvas.text(40, 280, 2, Rgb(90, 90, 90), "DATE OF BIRTH");
            canvas.text(40, 302, 3, Rgb(20, 20, 20), &person.birth_date.format("%d.%m.%Y").to_string());
            canvas.text(40, 350, 2, Rgb(90, 90, 90), &format!("ISSUED BY {provider_name}"));
            canvas.ellipse(540, 300, 55, 55, dark);
            canvas.ellipse(540, 300, 45, 45, light);
            canvas.text(517, 293, 2, dark, "SEAL");
            canvas.png().map_err(encode_failed)
        }
    })
}

/// Period and amount of the subject's latest utility payment, as the bill shows them.
fn last_utility_bill(dossier: &Dossier) -> (String, String) {
    let latest = dossier
        .countries
        .iter()
        .filter(|c| c.home)
        .flat_map(|c| {
            c.accounts
                .iter()
                .flat_map(move |a| a.transactions.iter().map(move |t| (a, t)))
        })
        .filter(|(_, t)| t.subcategory == "UTILITIES")
        .max_by_key(|(_, t)| t.booking);
    match latest {
        Some((account, transaction)) => (
            transaction.booking.format("%m/%Y").to_string(),
            format!(
                "{} {}",
                crate::render::tsv::plain_cents(-transaction.cents),
                account.currency
            ),
        ),
        None => {
            // No bank data (cannot happen for catalog countries): bill 3 % of the salary.
            let person = &dossier.person;
            (
                dossier.created.format("%m/%Y").to_string(),
                format!(
                    "{} {}",
                    crate::render::tsv::plain_cents(person.salary.cents * 3 / 100),
                    person.salary.currency
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mrz_check_digit_matches_icao_example() {
        // ICAO 9303 part 3 example: document number L898902C3 has check digit 6.
        assert_eq!(mrz_check("L898902C3"), '6');
        assert_eq!(mrz_check("740812"), '2');
    }
}
