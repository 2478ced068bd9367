//! The documents the subject handed over: the consent mandate (PDF), a proof of address (a
//! utility bill) and a certificate of the identity code.

use std::sync::Arc;

use creditdata_client::types::{AttachmentType, DataPackageInput};

use super::look::{encode_failed, palette};
use crate::catalog::ProviderKind;
use crate::data::{AttachmentSpec, CountryData, Dossier, fnv1a};
use crate::problem::Problem;
use crate::render::image::{Canvas, Rgb};
use crate::render::pdf::PdfDocument;
use crate::store::SessionRecord;

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
