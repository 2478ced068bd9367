//! Which datasets say how far their providers have got, found by the shape of their answer in
//! the effective document, and the code that reads it out (`generated_datasets.rs` says where each answer reports it, `generated_session_datasets.rs` reads it out).
//!
//! Two shapes count, wherever they appear at the top of a dataset's `2xx` JSON answer and
//! whatever the properties are called:
//!
//! - a **provider list**: an array property whose items are objects with a string `sourceId`
//!   (and, when present, a string `countryCode`) and a required `status` that is a string enum
//!   speaking the providers' language: it can say every word of [`PROVIDER_STATUS_WORDS`]
//!   (answered, still waiting), as `SourceStatus` and any superset of it can. That is the
//!   service's `sources[]` of `Source`. The whole shape counts, not one member: a listing whose
//!   entries name their provider and carry a `status` of their own (a tax return `FILED`,
//!   `ASSESSED`) is data, and reading it as providers' answers would fail every session;
//! - a **dataset status**: an object property (possibly behind a one-element `allOf`) with a
//!   required `status` whose enum speaks the providers' language: it holds every value of
//!   [`READINESS_WORDS`] that a provider list's status enum holds. That is the categorizations
//!   summary's `summary.status` (SourceStatus plus `SOME_DATA_MISSING`), also after a release
//!   adds a provider status (`PROVIDER_MAINTENANCE`) to SourceStatus and not to the summary's
//!   copy, which "every value of SourceStatus" would not survive.
//!
//! A dataset with neither (attachments, source files) does not report readiness, and the client
//! says so instead of pretending. No dataset or schema is named here: a release that adds a
//! dataset with `sources` is covered by the same rule.

use std::collections::BTreeSet;

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::document::{self as openapi, resolve};

/// The statuses the client's classification names as answered or pending
/// (`generated-client/src/readiness.rs`, `Outcome::of_wire`): a dataset-level status that can
/// say these is one the client can read. Every other value is a failure to the client, so
/// whether a status enum lists it does not matter here.
pub const READINESS_WORDS: [&str; 3] = ["SUCCESS", "WAITING_FOR_PROVIDER", "WAITING_FOR_CUSTOMER"];

/// The statuses a provider's status enum must be able to say: that it answered and that it has
/// not yet (`generated-client/src/readiness.rs`, `Outcome::of_wire`). An entry whose `status`
/// cannot say both is not a provider's answer, whatever else it has.
pub const PROVIDER_STATUS_WORDS: [&str; 2] = ["SUCCESS", "WAITING_FOR_PROVIDER"];

/// One string property of a provider's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringField {
    /// The property as the description spells it (`sourceId`).
    pub property: String,
    /// The Rust field name (`source_id`).
    pub rust: String,
    /// Whether the generated field is an `Option` (not required, or nullable).
    pub optional: bool,
}

/// An array of provider statuses at the top of a dataset's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderList {
    /// The property as the description spells it (`sources`).
    pub property: String,
    /// The Rust field name.
    pub rust: String,
    /// Whether the generated field is an `Option`.
    pub optional: bool,
    /// `sourceId`.
    pub source_id: StringField,
    /// `countryCode`, when the entries have one.
    pub country_code: Option<StringField>,
}

/// An object at the top of a dataset's answer whose `status` speaks for the whole dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetStatus {
    /// The property as the description spells it (`summary`).
    pub property: String,
    /// The Rust field name.
    pub rust: String,
    /// Whether the generated field is an `Option`.
    pub optional: bool,
}

/// Where a dataset's answer reports readiness; empty when it does not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reporting {
    /// Provider lists (`sources`).
    pub providers: Vec<ProviderList>,
    /// Dataset-level statuses (`summary.status`).
    pub statuses: Vec<DatasetStatus>,
}

impl Reporting {
    /// Whether the dataset reports readiness at all.
    pub fn reports(&self) -> bool {
        !self.providers.is_empty() || !self.statuses.is_empty()
    }
}

/// The schema of the JSON `2xx` answer of `operation`, resolved (the first one declared).
fn answer_schema<'a>(doc: &'a Value, operation: &'a Value) -> Option<&'a Value> {
    let responses = operation.get("responses")?.as_object()?;
    responses
        .iter()
        .filter(|(status, _)| status.starts_with('2'))
        .find_map(|(_, response)| {
            let content = resolve(doc, response).get("content")?.as_object()?;
            content.values().find_map(|media| media.get("schema"))
        })
        .map(|schema| through_all_of(doc, schema))
}

/// `schema` resolved, also through a one-element `allOf` (how a nullable `$ref` is written).
fn through_all_of<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(doc, schema);
    match schema.get("allOf").and_then(Value::as_array) {
        Some(parts) if parts.len() == 1 => resolve(doc, &parts[0]),
        _ => schema,
    }
}

fn is_nullable(doc: &Value, schema: &Value) -> bool {
    let own = |node: &Value| node.get("nullable").and_then(Value::as_bool) == Some(true);
    own(schema) || own(through_all_of(doc, schema))
}

fn is_required(object: &Value, property: &str) -> bool {
    object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|name| name == property))
}

fn properties(object: &Value) -> impl Iterator<Item = (&String, &Value)> {
    object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// typify's name for a property: snake case, a keyword followed by `_`.
fn rust_field(property: &str) -> String {
    let snake = property.to_snake_case();
    if syn::parse_str::<syn::Ident>(&snake).is_ok() {
        snake
    } else {
        format!("{snake}_")
    }
}

fn optional(doc: &Value, object: &Value, property: &str, schema: &Value) -> bool {
    !is_required(object, property) || is_nullable(doc, schema)
}

/// The values of the string enum `schema` is, if it is one.
fn enum_values(doc: &Value, schema: &Value) -> Option<BTreeSet<String>> {
    let schema = through_all_of(doc, schema);
    let values = schema.get("enum")?.as_array()?;
    let strings: BTreeSet<String> = values
        .iter()
        .filter_map(|value| value.as_str().map(str::to_string))
        .collect();
    (!strings.is_empty()).then_some(strings)
}

/// A string property `name` of `object`, if it has one.
fn string_field(doc: &Value, object: &Value, name: &str) -> Option<StringField> {
    let schema = object.get("properties")?.get(name)?;
    let resolved = through_all_of(doc, schema);
    (resolved.get("type").and_then(Value::as_str) == Some("string")).then(|| StringField {
        property: name.to_string(),
        rust: rust_field(name),
        optional: optional(doc, object, name, schema),
    })
}

/// The status enum's values if `item` is a provider's entry (`Source`): a provider's id and a
/// required status of the providers' language ([`PROVIDER_STATUS_WORDS`]).
fn provider_entry(doc: &Value, item: &Value) -> Option<(BTreeSet<String>, StringField)> {
    let item = through_all_of(doc, item);
    if !is_required(item, "status") {
        return None;
    }
    let values = enum_values(doc, item.get("properties")?.get("status")?)?;
    if !PROVIDER_STATUS_WORDS
        .iter()
        .all(|word| values.contains(*word))
    {
        return None;
    }
    let source_id = string_field(doc, item, "sourceId")?;
    Some((values, source_id))
}

/// The provider lists of an answer, with the status values their entries use.
fn provider_lists(doc: &Value, answer: &Value) -> Vec<(ProviderList, BTreeSet<String>)> {
    let mut found = Vec::new();
    for (property, schema) in properties(answer) {
        let resolved = through_all_of(doc, schema);
        if resolved.get("type").and_then(Value::as_str) != Some("array") {
            continue;
        }
        let Some(items) = resolved.get("items") else {
            continue;
        };
        let Some((values, source_id)) = provider_entry(doc, items) else {
            continue;
        };
        let entry = through_all_of(doc, items);
        found.push((
            ProviderList {
                property: property.clone(),
                rust: rust_field(property),
                optional: optional(doc, answer, property, schema),
                source_id,
                country_code: string_field(doc, entry, "countryCode"),
            },
            values,
        ));
    }
    found
}

/// The status values of every provider list of every operation's answer: the language a
/// dataset-level status must speak.
fn provider_status_values(doc: &Value) -> Vec<BTreeSet<String>> {
    let mut all: Vec<BTreeSet<String>> = Vec::new();
    for op in openapi::operations(doc) {
        if let Some(answer) = answer_schema(doc, op.operation) {
            for (_, values) in provider_lists(doc, answer) {
                if !all.contains(&values) {
                    all.push(values);
                }
            }
        }
    }
    all
}

/// How the answer of `operation` reports readiness.
pub fn reporting(doc: &Value, operation: &Value) -> Reporting {
    let Some(answer) = answer_schema(doc, operation) else {
        return Reporting::default();
    };
    let providers: Vec<ProviderList> = provider_lists(doc, answer)
        .into_iter()
        .map(|(list, _)| list)
        .collect();
    let provider_values = provider_status_values(doc);
    let mut statuses = Vec::new();
    for (property, schema) in properties(answer) {
        let object = through_all_of(doc, schema);
        if object.get("type").and_then(Value::as_str) == Some("array")
            || !is_required(object, "status")
        {
            continue;
        }
        let Some(values) = object
            .get("properties")
            .and_then(|p| p.get("status"))
            .and_then(|status| enum_values(doc, status))
        else {
            continue;
        };
        let speaks_like = |provider: &BTreeSet<String>| {
            let words: Vec<&str> = READINESS_WORDS
                .into_iter()
                .filter(|word| provider.contains(*word))
                .collect();
            !words.is_empty() && words.iter().all(|word| values.contains(*word))
        };
        if provider_values.iter().any(speaks_like) {
            statuses.push(DatasetStatus {
                property: property.clone(),
                rust: rust_field(property),
                optional: optional(doc, answer, property, schema),
            });
        }
    }
    Reporting {
        providers,
        statuses,
    }
}

fn field_ident(rust: &str) -> syn::Ident {
    format_ident!("{}", rust)
}

/// `Some(&str)` of a string field of `source`.
fn string_of(field: Option<&StringField>) -> TokenStream {
    match field {
        None => quote!(None),
        Some(field) => {
            let name = field_ident(&field.rust);
            if field.optional {
                quote!(source.#name.as_deref())
            } else {
                quote!(Some(source.#name.as_str()))
            }
        }
    }
}

/// The expression that turns `value` (the dataset's decoded answer) into a
/// `crate::readiness::Report` for dataset `variant`.
pub fn report_code(reporting: &Reporting, variant: &syn::Ident) -> TokenStream {
    if !reporting.reports() {
        return quote!(crate::readiness::Report::NotReported);
    }
    let mut pushes = Vec::new();
    for list in &reporting.providers {
        let name = field_ident(&list.rust);
        let iter = if list.optional {
            quote!(value.#name.iter().flatten())
        } else {
            quote!(value.#name.iter())
        };
        let source_id = string_of(Some(&list.source_id));
        let country = string_of(list.country_code.as_ref());
        pushes.push(quote! {
            for source in #iter {
                statuses.push(crate::readiness::ProviderStatus::new(
                    Dataset::#variant,
                    #source_id,
                    #country,
                    &source.status.to_string(),
                ));
            }
        });
    }
    for status in &reporting.statuses {
        let name = field_ident(&status.rust);
        let iter = if status.optional {
            quote!(value.#name.iter())
        } else {
            quote!(std::iter::once(&value.#name))
        };
        pushes.push(quote! {
            for summary in #iter {
                statuses.push(crate::readiness::ProviderStatus::dataset_level(
                    Dataset::#variant,
                    &summary.status.to_string(),
                ));
            }
        });
    }
    quote! {{
        let mut statuses = Vec::new();
        #(#pushes)*
        crate::readiness::Report::Statuses(statuses)
    }}
}

/// The expression that says where the answer reports readiness by its JSON members' names (a
/// `crate::dataset_shapes::ReadinessProperties`), for a reader of the answer's bytes that does not
/// decode it into its type (the export's streamed listings).
pub fn properties_code(reporting: &Reporting) -> TokenStream {
    let lists = reporting.providers.iter().map(|list| {
        let property = &list.property;
        let source_id = &list.source_id.property;
        let country = match &list.country_code {
            Some(field) => {
                let name = &field.property;
                quote!(Some(#name))
            }
            None => quote!(None),
        };
        quote! {
            crate::dataset_shapes::ProviderListProperties {
                list: #property,
                source_id: #source_id,
                country_code: #country,
            }
        }
    });
    let statuses = reporting.statuses.iter().map(|status| &status.property);
    quote! {
        crate::dataset_shapes::ReadinessProperties {
            provider_lists: &[#(#lists),*],
            dataset_statuses: &[#(#statuses),*],
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A document whose names are not the service's: the shapes alone decide.
    fn document() -> Value {
        let answer = |schema: &str| {
            json!({ "get": { "responses": { "200": { "content": { "application/json": {
                "schema": { "$ref": format!("#/components/schemas/{schema}") } } } } } } })
        };
        json!({
            "paths": {
                "/a": answer("WithProviders"),
                "/b": answer("WithSummary"),
                "/c": answer("Silent"),
                "/d": answer("StatusWithoutProvider"),
                "/e": answer("WithOwnStatuses"),
            },
            "components": { "schemas": {
                "Fetch": { "type": "string", "enum": ["SUCCESS", "WAITING_FOR_PROVIDER"] },
                "FetchOrPartial": { "type": "string",
                    "enum": ["SUCCESS", "WAITING_FOR_PROVIDER", "SOME_DATA_MISSING"] },
                "Origin": { "type": "object", "required": ["origin", "status"], "properties": {
                    "origin": { "type": "string" },
                    "sourceId": { "type": "string", "nullable": true },
                    "status": { "$ref": "#/components/schemas/Fetch" } } },
                "WithProviders": { "type": "object", "required": ["origins"], "properties": {
                    "origins": { "type": "array", "items": { "$ref": "#/components/schemas/Origin" } },
                    "items": { "type": "array", "items": { "type": "string" } } } },
                "WithSummary": { "type": "object", "properties": {
                    "totals": { "allOf": [{ "type": "object", "required": ["status"],
                        "properties": { "status": { "$ref": "#/components/schemas/FetchOrPartial" } } }],
                        "nullable": true } } },
                "Silent": { "type": "object", "properties": {
                    "files": { "type": "array", "items": { "type": "string" } } } },
                "Filing": { "type": "string", "enum": ["FILED", "ASSESSED", "AMENDED"] },
                "TaxReturn": { "type": "object", "required": ["id", "status"], "properties": {
                    "id": { "type": "string" },
                    "sourceId": { "type": "string", "nullable": true },
                    "status": { "$ref": "#/components/schemas/Filing" } } },
                "WithOwnStatuses": { "type": "object", "properties": {
                    "origins": { "type": "array", "items": { "$ref": "#/components/schemas/Origin" } },
                    "returns": { "type": "array", "items": { "$ref": "#/components/schemas/TaxReturn" } } } },
                "StatusWithoutProvider": { "type": "object", "properties": {
                    "rows": { "type": "array", "items": { "type": "object", "required": ["status"],
                        "properties": { "status": { "$ref": "#/components/schemas/Fetch" } } } } } },
            } }
        })
    }

    fn reporting_of(doc: &Value, path: &str) -> Reporting {
        reporting(doc, &doc["paths"][path]["get"])
    }

    #[test]
    fn a_list_of_entries_with_a_status_and_a_source_id_is_a_provider_list() {
        let doc = document();
        let found = reporting_of(&doc, "/a");
        assert_eq!(
            found.providers,
            [ProviderList {
                property: "origins".into(),
                rust: "origins".into(),
                optional: false,
                source_id: StringField {
                    property: "sourceId".into(),
                    rust: "source_id".into(),
                    optional: true
                },
                country_code: None,
            }]
        );
        assert!(found.statuses.is_empty());
    }

    #[test]
    fn an_object_whose_status_covers_the_provider_statuses_speaks_for_the_dataset() {
        let doc = document();
        let found = reporting_of(&doc, "/b");
        assert_eq!(
            found.statuses,
            [DatasetStatus {
                property: "totals".into(),
                rust: "totals".into(),
                optional: true,
            }]
        );
        assert!(found.reports());
    }

    #[test]
    fn a_provider_status_the_summary_does_not_list_does_not_silence_it() {
        // A release adds a provider status and not the summary's copy of the list.
        let mut doc = document();
        doc["components"]["schemas"]["Fetch"]["enum"] =
            json!(["SUCCESS", "WAITING_FOR_PROVIDER", "PROVIDER_MAINTENANCE"]);
        assert!(reporting_of(&doc, "/b").reports());
        // A status that cannot say "waiting" is not the providers' language.
        doc["components"]["schemas"]["FetchOrPartial"]["enum"] = json!(["SUCCESS", "DONE"]);
        assert!(!reporting_of(&doc, "/b").reports());
    }

    #[test]
    fn the_members_a_reader_of_the_bytes_needs_are_named_as_the_description_spells_them() {
        let doc = document();
        let code = |path: &str| {
            properties_code(&reporting_of(&doc, path))
                .to_string()
                .replace(' ', "")
        };
        let providers = code("/a");
        assert!(providers.contains(r#"list:"origins""#), "{providers}");
        assert!(providers.contains(r#"source_id:"sourceId""#), "{providers}");
        assert!(providers.contains("country_code:None"), "{providers}");
        assert!(code("/b").contains(r#"dataset_statuses:&["totals"]"#));
        assert!(code("/c").contains("provider_lists:&[],dataset_statuses:&[]"));
    }

    #[test]
    fn entries_with_a_provider_and_a_status_of_their_own_are_not_provider_statuses() {
        // A tax return names its provider and has a status, but not a provider's: only the
        // provider list of the same answer reports readiness.
        let doc = document();
        let found = reporting_of(&doc, "/e");
        let lists: Vec<&str> = found
            .providers
            .iter()
            .map(|l| l.property.as_str())
            .collect();
        assert_eq!(lists, ["origins"]);
        assert!(found.statuses.is_empty());
        // Nor does a status that can say it answered but never that it waits.
        let mut doc = document();
        doc["components"]["schemas"]["Filing"]["enum"] = json!(["SUCCESS", "FILED"]);
        let lists = reporting_of(&doc, "/e").providers;
        assert_eq!(lists.len(), 1, "{lists:?}");
        // A superset of the providers' statuses still is one (a release adds a value).
        doc["components"]["schemas"]["Filing"]["enum"] =
            json!(["SUCCESS", "WAITING_FOR_PROVIDER", "PROVIDER_MAINTENANCE"]);
        assert_eq!(reporting_of(&doc, "/e").providers.len(), 2);
    }

    #[test]
    fn other_answers_do_not_report_readiness() {
        let doc = document();
        assert!(!reporting_of(&doc, "/c").reports());
        // Entries with a status but no provider are not provider statuses.
        assert!(!reporting_of(&doc, "/d").reports());
    }
}
