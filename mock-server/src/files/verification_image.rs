//! The images of an identity verification: the document's front (with a portrait and, for
//! passports, the machine-readable zone), its back, and a selfie.

use std::sync::Arc;

use super::look::{encode_failed, palette};
use crate::data::{CountryData, Dossier, ImageSpec, Verification, fnv1a};
use crate::problem::Problem;
use crate::render::font::mrz;
use crate::render::image::{Canvas, Rgb};

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
