//! The request limits of the API description that the generated types cannot hold, checked
//! before a request is sent.
//!
//! The description states what a request may carry (`overlays/09-request-constraints`), and
//! the mock refuses exactly that. typify turns most of it into types: a `pattern` or
//! `maxLength` becomes a validating newtype ([`QueryParameterInputCountryCode`],
//! [`CreateSessionRequestSubjectEmail`], whose `parse()` the generator also makes refuse what
//! [`is_email_address`] refuses when the schema says `format: email`), `minimum: 1` becomes
//! [`NonZeroU32`](std::num::NonZeroU32), a required non-nullable member a plain field. It leaves
//! out a lower bound of 0 on an `int32`, every `maximum` and `minItems`/`maxItems`; those are the
//! tables below (with `format: email` again), and the generated `send_with()` of each operation
//! with a limit checks its typed values ([`check_range`], [`check_body`]) before it builds the
//! request, refusing one that breaks a limit with [`Error::InvalidRequest`] before anything
//! leaves, as the service would refuse it with a 400.
//!
//! The tables are generated from the description (`generated_limits.rs`), so a limit a release
//! adds (a bounded parameter) is checked the day the client is regenerated; a unit test reads
//! `spec/openapi.effective.json` on its own and compares. Messages name the parameter or member
//! and the limit, never the value sent (an e-mail address is personal data).
//!
//! [`QueryParameterInputCountryCode`]: crate::types::QueryParameterInputCountryCode
//! [`CreateSessionRequestSubjectEmail`]: crate::types::CreateSessionRequestSubjectEmail

use serde_json::Value;

use crate::Error;

pub(crate) mod rows;

pub use rows::{ArrayLength, EmailMember, QueryRange};

/// The largest page (`Take`) the session search accepts: the description's `maximum` of `Take`
/// (read from [`QUERY_RANGES`] when the crate is compiled).
pub const MAX_TAKE: u32 = {
    let maximum = query_maximum("Take");
    assert!(
        maximum >= 1 && maximum <= u32::MAX as i64,
        "the description's maximum of Take is not a page size"
    );
    maximum as u32
};

/// The most query parameters (countries with their packages) one create or update may carry:
/// the description's `maxItems` of `queryParameters` (read from [`ARRAY_LENGTHS`]).
pub const MAX_QUERY_PARAMETERS: usize = match array_max_items("/queryParameters") {
    Some(most) => most,
    None => panic!("the description gives queryParameters no maxItems"),
};

/// Whether two strings are the same (`==` is not `const`).
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The `maximum` of the first integer query parameter named `parameter` in [`QUERY_RANGES`]; a
/// compile error when the description gives it none.
const fn query_maximum(parameter: &str) -> i64 {
    let mut i = 0;
    while i < QUERY_RANGES.len() {
        if same(QUERY_RANGES[i].parameter, parameter) {
            return QUERY_RANGES[i].maximum;
        }
        i += 1;
    }
    panic!("the description gives this query parameter no range")
}

/// The `maxItems` of the first body array at `pointer` in [`ARRAY_LENGTHS`]; a compile error
/// when the description has no such array.
const fn array_max_items(pointer: &str) -> Option<usize> {
    let mut i = 0;
    while i < ARRAY_LENGTHS.len() {
        if same(ARRAY_LENGTHS[i].pointer, pointer) {
            return ARRAY_LENGTHS[i].max_items;
        }
        i += 1;
    }
    panic!("the description has no such body array")
}

/// The tables of this description, generated from it (`generated_limits.rs`, written by
/// `cargo xtask regen` from `codegen/src/request_limits.rs`): `minimum`/`maximum` of the integer
/// query parameters, `minItems`/`maxItems` of the arrays in request bodies, and their
/// `format: email` members.
pub use crate::generated_limits::{ARRAY_LENGTHS, EMAIL_MEMBERS, QUERY_RANGES};

pub use crate::email::is_email_address;

/// An integer query parameter's value as the generated builder holds it (`i32`,
/// `NonZeroU32`, `Option` of either, ...): checked against its range before the request is built.
#[doc(hidden)]
pub trait QueryInteger {
    /// The value, `None` when the parameter is not sent.
    fn integer(&self) -> Option<i128>;
}

macro_rules! query_integers {
    ($($t:ty),*) => {$(
        impl QueryInteger for $t {
            fn integer(&self) -> Option<i128> {
                Some(i128::from(*self))
            }
        }
    )*};
}
query_integers!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! non_zero_query_integers {
    ($($t:ty),*) => {$(
        impl QueryInteger for $t {
            fn integer(&self) -> Option<i128> {
                Some(i128::from(self.get()))
            }
        }
    )*};
}
non_zero_query_integers!(
    std::num::NonZeroI32,
    std::num::NonZeroI64,
    std::num::NonZeroU32,
    std::num::NonZeroU64
);

impl<T: QueryInteger> QueryInteger for Option<T> {
    fn integer(&self) -> Option<i128> {
        self.as_ref().and_then(QueryInteger::integer)
    }
}

/// Refuses `value` of the query parameter `parameter` (as the description spells it) of
/// `operation` (an operationId) outside `minimum..=maximum`: what the generated `send_with()`
/// of an operation with a row in [`QUERY_RANGES`] runs on the typed value before it builds the
/// request (`codegen/src/request_limits.rs` writes the call from the same row).
///
/// # Errors
///
/// [`Error::InvalidRequest`] naming the parameter and its range, never the value.
#[doc(hidden)]
pub fn check_range(
    operation: &'static str,
    parameter: &'static str,
    value: &impl QueryInteger,
    minimum: i64,
    maximum: i64,
) -> Result<(), Error> {
    match value.integer() {
        Some(number) if !(i128::from(minimum)..=i128::from(maximum)).contains(&number) => {
            Err(Error::InvalidRequest {
                operation: Some(operation),
                message: format!("{parameter} must be an integer from {minimum} to {maximum}"),
            })
        }
        _ => Ok(()),
    }
}

/// Refuses a request body of `operation` (an operationId) that breaks one of its rows of
/// [`ARRAY_LENGTHS`] or [`EMAIL_MEMBERS`]: what the generated `send_with()` of such an operation
/// runs on the typed body before it builds (and serialises) the request. The body is viewed as
/// the JSON it will be sent as, so the member is named as the description spells it
/// (`queryParameters[1].dataPackages`).
///
/// # Errors
///
/// [`Error::InvalidRequest`] naming the member and the limit, never the value.
#[doc(hidden)]
pub fn check_body<T: serde::Serialize>(operation: &'static str, body: &T) -> Result<(), Error> {
    let arrays = ARRAY_LENGTHS.iter().filter(|a| a.operation == operation);
    let emails = EMAIL_MEMBERS.iter().filter(|e| e.operation == operation);
    if arrays.clone().next().is_none() && emails.clone().next().is_none() {
        return Ok(());
    }
    // A body serde cannot view as JSON cannot be sent as JSON either: building the request
    // reports that.
    let Ok(body) = serde_json::to_value(body) else {
        return Ok(());
    };
    match body_violation(&body, arrays, emails) {
        Some(message) => Err(Error::InvalidRequest {
            operation: Some(operation),
            message,
        }),
        None => Ok(()),
    }
}

fn body_violation<'t>(
    body: &Value,
    arrays: impl Iterator<Item = &'t ArrayLength>,
    emails: impl Iterator<Item = &'t EmailMember>,
) -> Option<String> {
    for limit in arrays {
        for (at, value) in select(body, limit.pointer) {
            let Some(items) = value.as_array().map(Vec::len) else {
                continue;
            };
            if items < limit.min_items {
                return Some(format!(
                    "{at} needs at least {} item{}, it has {items}",
                    limit.min_items,
                    if limit.min_items == 1 { "" } else { "s" }
                ));
            }
            if let Some(max) = limit.max_items
                && items > max
            {
                return Some(format!("{at} takes at most {max} items, it has {items}"));
            }
        }
    }
    for member in emails {
        for (at, value) in select(body, member.pointer) {
            if value.as_str().is_some_and(|text| !is_email_address(text)) {
                return Some(format!("{at} is not an e-mail address"));
            }
        }
    }
    None
}

/// The values at `pointer` (`*` = every array item), each with a readable path
/// (`queryParameters[1].dataPackages`).
fn select<'a>(body: &'a Value, pointer: &str) -> Vec<(String, &'a Value)> {
    let mut found = vec![(String::new(), body)];
    for segment in pointer.split('/').skip(1) {
        let mut next = Vec::new();
        for (at, value) in found {
            if segment == "*" {
                for (index, item) in value.as_array().into_iter().flatten().enumerate() {
                    next.push((format!("{at}[{index}]"), item));
                }
            } else if let Some(member) = value.get(segment) {
                let at = if at.is_empty() {
                    segment.to_owned()
                } else {
                    format!("{at}.{segment}")
                };
                next.push((at, member));
            }
        }
        found = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{Value, json};

    use super::*;

    /// Read when the test runs, not compiled in: the crate includes nothing from outside its
    /// own directory (its package must build alone).
    fn effective() -> String {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/openapi.effective.json");
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    fn resolve<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.trim_start_matches('#');
                resolve(document, document.pointer(pointer).expect("$ref resolves"))
            }
            None => schema,
        }
    }

    /// Every `minItems`/`maxItems` array and `format: email` string under `schema`.
    fn walk(
        document: &Value,
        schema: &Value,
        pointer: String,
        arrays: &mut Vec<(String, usize, Option<usize>)>,
        emails: &mut Vec<String>,
    ) {
        let schema = resolve(document, schema);
        if schema.get("format").and_then(Value::as_str) == Some("email") {
            emails.push(pointer.clone());
        }
        let min = schema.get("minItems").and_then(Value::as_u64);
        let max = schema.get("maxItems").and_then(Value::as_u64);
        if min.is_some() || max.is_some() {
            arrays.push((
                pointer.clone(),
                min.unwrap_or(0) as usize,
                max.map(|m| m as usize),
            ));
        }
        if let Some(items) = schema.get("items") {
            walk(document, items, format!("{pointer}/*"), arrays, emails);
        }
        for (name, member) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk(
                document,
                member,
                format!("{pointer}/{name}"),
                arrays,
                emails,
            );
        }
    }

    #[test]
    fn the_tables_state_exactly_the_limits_of_the_effective_description() {
        let document: Value = serde_json::from_str(&effective()).expect("effective document");
        let mut ranges = BTreeSet::new();
        let mut arrays = BTreeSet::new();
        let mut emails = BTreeSet::new();
        for item in document["paths"].as_object().expect("paths").values() {
            for operation in item.as_object().expect("path item").values() {
                let Some(id) = operation.get("operationId").and_then(Value::as_str) else {
                    continue;
                };
                for parameter in operation["parameters"].as_array().into_iter().flatten() {
                    let schema = resolve(&document, &parameter["schema"]);
                    if schema.get("minimum").is_some() || schema.get("maximum").is_some() {
                        ranges.insert((
                            id.to_owned(),
                            parameter["name"].as_str().expect("name").to_owned(),
                            schema["minimum"].as_i64().unwrap_or(i64::MIN),
                            schema["maximum"].as_i64().unwrap_or(i64::MAX),
                        ));
                    }
                }
                let body = &operation["requestBody"]["content"]["application/json"]["schema"];
                if !body.is_null() {
                    let (mut found_arrays, mut found_emails) = (Vec::new(), Vec::new());
                    walk(
                        &document,
                        body,
                        String::new(),
                        &mut found_arrays,
                        &mut found_emails,
                    );
                    for (pointer, min, max) in found_arrays {
                        arrays.insert((id.to_owned(), pointer, min, max));
                    }
                    for pointer in found_emails {
                        emails.insert((id.to_owned(), pointer));
                    }
                }
            }
        }
        let table_ranges: BTreeSet<_> = QUERY_RANGES
            .iter()
            .map(|r| {
                (
                    r.operation.to_owned(),
                    r.parameter.to_owned(),
                    r.minimum,
                    r.maximum,
                )
            })
            .collect();
        let table_arrays: BTreeSet<_> = ARRAY_LENGTHS
            .iter()
            .map(|a| {
                (
                    a.operation.to_owned(),
                    a.pointer.to_owned(),
                    a.min_items,
                    a.max_items,
                )
            })
            .collect();
        let table_emails: BTreeSet<_> = EMAIL_MEMBERS
            .iter()
            .map(|e| (e.operation.to_owned(), e.pointer.to_owned()))
            .collect();
        assert_eq!(table_ranges, ranges, "QUERY_RANGES against the description");
        assert_eq!(
            table_arrays, arrays,
            "ARRAY_LENGTHS against the description"
        );
        assert_eq!(
            table_emails, emails,
            "EMAIL_MEMBERS against the description"
        );
    }

    /// Each range of the table, checked on typed values (plain, `NonZero`, `Option`) as the
    /// generated `send_with()` checks them, before anything is built.
    #[test]
    fn query_ranges_are_checked_on_typed_values() {
        for range in QUERY_RANGES {
            let within = |n: i64| {
                check_range(
                    range.operation,
                    range.parameter,
                    &n,
                    range.minimum,
                    range.maximum,
                )
            };
            assert!(within(range.minimum).is_ok(), "{range:?}");
            assert!(within(range.maximum).is_ok(), "{range:?}");
            let none: Option<i64> = None;
            assert!(
                check_range(
                    range.operation,
                    range.parameter,
                    &none,
                    range.minimum,
                    range.maximum
                )
                .is_ok(),
                "an absent parameter is not sent"
            );
            for outside in [range.minimum.checked_sub(1), range.maximum.checked_add(1)]
                .into_iter()
                .flatten()
            {
                let error = check_range(
                    range.operation,
                    range.parameter,
                    &Some(outside),
                    range.minimum,
                    range.maximum,
                )
                .unwrap_err();
                let Error::InvalidRequest { operation, message } = &error else {
                    panic!("{error:?}")
                };
                assert_eq!(*operation, Some(range.operation));
                assert_eq!(
                    message,
                    &format!(
                        "{} must be an integer from {} to {}",
                        range.parameter, range.minimum, range.maximum
                    )
                );
            }
        }
        let five = std::num::NonZeroU32::new(5).expect("not zero");
        assert!(check_range("Op", "Take", &Some(five), 1, 4).is_err());
        assert!(check_range("Op", "Take", &Some(five), 1, 5).is_ok());
    }

    /// Each array row of the table, checked on a body value before it is serialised: one item
    /// too few (and, where bounded, one too many) is refused naming the member as the
    /// description spells it.
    #[test]
    fn body_limits_are_checked_on_the_value_to_send() {
        for limit in ARRAY_LENGTHS {
            // The body with `items` items at the limit's place (every `*` one item).
            let body_with = |items: usize| {
                let mut value = Value::Array(vec![Value::Null; items]);
                for segment in limit
                    .pointer
                    .split('/')
                    .skip(1)
                    .collect::<Vec<_>>()
                    .iter()
                    .rev()
                {
                    value = if *segment == "*" {
                        Value::Array(vec![value])
                    } else {
                        json!({ *segment: value })
                    };
                }
                value
            };
            let shown = limit.pointer.trim_start_matches('/').replace("/*/", "[0].");
            if limit.min_items > 0 {
                let error = check_body(limit.operation, &body_with(limit.min_items - 1))
                    .unwrap_err()
                    .to_string();
                assert!(error.contains(&shown), "{limit:?}: {error}");
                assert!(error.contains("needs at least"), "{limit:?}: {error}");
            }
            if let Some(max) = limit.max_items {
                let error = check_body(limit.operation, &body_with(max + 1))
                    .unwrap_err()
                    .to_string();
                assert!(error.contains(&shown), "{limit:?}: {error}");
            }
        }
        for member in EMAIL_MEMBERS {
            let name = member.pointer.trim_start_matches('/');
            let error = check_body(member.operation, &json!({ name: "not an address" }))
                .unwrap_err()
                .to_string();
            assert!(error.contains("is not an e-mail address"), "{error}");
            assert!(
                !error.contains("not an address"),
                "the value is not shown: {error}"
            );
            assert!(check_body(member.operation, &json!({ name: "jane@example.com" })).is_ok());
        }
    }

    #[test]
    fn select_names_every_item() {
        let body = json!({"queryParameters": [{"dataPackages": []}, {"dataPackages": ["SCORE"]}]});
        let found: Vec<String> = select(&body, "/queryParameters/*/dataPackages")
            .into_iter()
            .map(|(at, _)| at)
            .collect();
        assert_eq!(
            found,
            [
                "queryParameters[0].dataPackages",
                "queryParameters[1].dataPackages"
            ]
        );
    }

    #[test]
    fn e_mail_addresses_follow_rfc_5321_without_display_names() {
        for valid in [
            "jane.doe@example.com",
            "a@localhost",
            "a@[127.0.0.1]",
            "x+tag@b.co",
        ] {
            assert!(is_email_address(valid), "{valid}");
        }
        for invalid in [
            "",
            "jane",
            "a..b@example.com",
            "Jane <jane@example.com>",
            "a@",
            "@b.com",
        ] {
            assert!(!is_email_address(invalid), "{invalid}");
        }
    }
}
