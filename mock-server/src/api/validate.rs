//! Request validation: what the effective description states about request bodies and
//! parameters, checked field by field so that every refusal names what was wrong and where.

use creditdata_client::types::DataPackageInput;
use email_address::{EmailAddress, Options as EmailOptions};
use serde_json::Value;

use crate::problem::{FieldErrors, Problem};

/// Reads `queryParameters` (create and update): countries and their packages, merged by
/// country, duplicates dropped.
pub fn query_parameters(
    body: &Value,
    errors: &mut FieldErrors,
) -> Vec<(String, Vec<DataPackageInput>)> {
    let mut merged: Vec<(String, Vec<DataPackageInput>)> = Vec::new();
    let items = match body.get("queryParameters") {
        None | Some(Value::Null) => {
            errors.add("queryParameters", "The queryParameters field is required.");
            return merged;
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.add(
                "queryParameters",
                "queryParameters must be an array of {countryCode, dataPackages}.",
            );
            return merged;
        }
    };
    if items.is_empty() {
        errors.add(
            "queryParameters",
            "At least one query parameter (a country and its data packages) is required.",
        );
    }
    if items.len() > 100 {
        errors.add(
            "queryParameters",
            "At most 100 query parameters are accepted.",
        );
        return merged;
    }
    let package_names = "CREDIT_HISTORY, SCORE, BANK_ACCOUNT_CATEGORIZATION or IDENTIFICATION";
    for (i, item) in items.iter().enumerate() {
        let at = format!("queryParameters[{i}]");
        let Value::Object(item) = item else {
            errors.add(
                &at,
                "Each query parameter must be an object with countryCode and dataPackages.",
            );
            continue;
        };
        let country = match item.get("countryCode") {
            None | Some(Value::Null) => {
                errors.add(
                    format!("{at}.countryCode"),
                    "The countryCode field is required.",
                );
                None
            }
            Some(Value::String(code)) => {
                if is_country_code(code) {
                    Some(code.clone())
                } else {
                    errors.add(format!("{at}.countryCode"), not_a_country_code(code));
                    None
                }
            }
            Some(_) => {
                errors.add(format!("{at}.countryCode"), "countryCode must be a string.");
                None
            }
        };
        let mut packages = Vec::new();
        match item.get("dataPackages") {
            None | Some(Value::Null) => errors.add(
                format!("{at}.dataPackages"),
                format!("At least one data package is required: {package_names}."),
            ),
            Some(Value::Array(values)) => {
                if values.is_empty() {
                    errors.add(
                        format!("{at}.dataPackages"),
                        format!("At least one data package is required: {package_names}."),
                    );
                }
                for (j, value) in values.iter().enumerate() {
                    match value.as_str().map(str::parse::<DataPackageInput>) {
                        Some(Ok(package)) => {
                            if !packages.contains(&package) {
                                packages.push(package);
                            }
                        }
                        _ => errors.add(
                            format!("{at}.dataPackages[{j}]"),
                            format!(
                                "The value {value} is not a data package; use {package_names}."
                            ),
                        ),
                    }
                }
            }
            Some(_) => errors.add(
                format!("{at}.dataPackages"),
                "dataPackages must be an array of data package names.",
            ),
        }
        if let Some(country) = country {
            match merged.iter_mut().find(|(code, _)| *code == country) {
                Some((_, existing)) => {
                    for package in packages {
                        if !existing.contains(&package) {
                            existing.push(package);
                        }
                    }
                }
                None => merged.push((country, packages)),
            }
        }
    }
    merged
}

/// `pattern: ^[A-Z]{3}$` of the request-side country codes (overlays/09-request-constraints):
/// the form of an ISO 3166-1 alpha-3 code. A well-formed code the catalog does not serve is
/// accepted and reported per provider as `UNSUPPORTED_COUNTRY`, as the service does.
pub fn is_country_code(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// The refusal of a code that is not of that form.
pub fn not_a_country_code(code: &str) -> String {
    format!(
        "The value '{code}' is not an ISO 3166-1 alpha-3 country code (three upper-case letters, e.g. GBR)."
    )
}

/// `maxLength` of `subjectEmail` in the effective description.
const MAX_EMAIL_CHARS: usize = 254;

/// `format: email`: an RFC 5321 mailbox (`local@domain`, the domain possibly an address literal),
/// no display name; `maxLength: 254` counts characters, as JSON Schema does.
fn is_email_address(text: &str) -> bool {
    text.chars().count() <= MAX_EMAIL_CHARS
        && EmailAddress::parse_with_options(text, EmailOptions::default().without_display_text())
            .is_ok()
}

/// Reads `subjectEmail` (create): required, an e-mail address.
pub fn subject_email(body: &Value, errors: &mut FieldErrors) -> Option<String> {
    match body.get("subjectEmail") {
        None | Some(Value::Null) => {
            errors.add("subjectEmail", "The subjectEmail field is required.");
            None
        }
        Some(Value::String(email)) => {
            if is_email_address(email) {
                Some(email.clone())
            } else {
                errors.add(
                    "subjectEmail",
                    // Not echoed: a mistyped address is still personal data, and problem
                    // details end up in clients' error messages and logs.
                    format!(
                        "The subjectEmail value is not an e-mail address of at most {MAX_EMAIL_CHARS} characters."
                    ),
                );
                None
            }
        }
        Some(_) => {
            errors.add("subjectEmail", "subjectEmail must be a string.");
            None
        }
    }
}

/// Refuses a body that is not a JSON object.
pub fn object_body(body: &Value) -> Result<(), Problem> {
    if body.is_object() {
        Ok(())
    } else {
        Err(Problem::invalid_field(
            "$",
            "The request body must be a JSON object.",
        ))
    }
}
