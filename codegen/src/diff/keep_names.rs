//! Names stay stable: pins for the Rust names a vendor rename would change.
//!
//! A vendor rename of an operationId (same method and path) renames a public Rust method; a
//! rename of a component schema (same shape, new name) renames a public Rust type. Both break
//! every caller at compile time for no gain. `cargo xtask regen --keep-names` answers each rename
//! the report found with overlay actions in [`KEEP_NAMES_FILE`], applied after every other
//! overlay:
//!
//! - an operation keeps its old operationId: one `update` of the operation, which also records
//!   the vendor's name in `x-creditdata-published-operation-id`;
//! - a schema keeps its old component name: the old name is created (recording the vendor's name
//!   in `x-creditdata-published-name`), filled with a `copy` of the vendor's schema (so later
//!   vendor changes to it still arrive), the vendor's name is removed, and every `$ref` to it
//!   is pointed at the old name.
//!
//! - an operation the description publishes without an operationId keeps the name the pipeline
//!   derived for it ([`crate::operation_names`]): `cargo xtask regen` writes one `update` of the
//!   operation per derived name, with the mark
//!   [`DERIVED_OPERATION_ID_MARK`] the
//!   pipeline sets as well. When the vendor later publishes an operationId of its own, the pin
//!   keeps the Rust method, and the report shows the vendor's name as a compatible change
//!   (`operation_id_published`).
//!
//! The markers let the report list the pins and check each against the published description.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use heck::ToSnakeCase;

use super::model::{
    Behaviour, Change, ChangeKind, Location, Pin, PinKind, PinStatus, Source, Wire,
};
use super::{Side, published_pointer};
use crate::document::pointer::{self, escape};
use crate::document::{self, DocumentError, Format};
use crate::operation_names::{DERIVED_OPERATION_ID_MARK, DerivedName};
use crate::overlay::{Overlay, OverlayErrors, TARGET_MAY_VANISH};

/// The overlay file holding the pins, inside the overlays directory.
pub const KEEP_NAMES_FILE: &str = "90-keep-names.overlay.yaml";
/// On a pinned operation: the operationId the vendor publishes.
pub const PUBLISHED_OPERATION_ID_MARK: &str = "x-creditdata-published-operation-id";
/// On a pinned schema: the component name the vendor publishes.
pub const PUBLISHED_NAME_MARK: &str = "x-creditdata-published-name";

const HEADER: &str = "\
# Rust names kept across vendor renames. Written by `cargo xtask regen` (derived operation
# names) and `cargo xtask regen --keep-names` (renames); applied after every other overlay. Each
# pin keeps the name existing Rust code uses (a method of creditdata_client::Client, or a type in
# creditdata_client::types) when the vendor renames an operationId or a component schema, or
# publishes an operationId for an operation the pipeline had to name. Delete a pin to take the
# vendor's name (a breaking change of creditdata-client); `cargo xtask regen` lists the pins and
# says when one is no longer needed.
overlay: 1.1.0
info:
  title: Rust names kept across vendor renames
  version: 1.0.0
actions:
";

/// The pins recorded in an effective document, each checked against the published description
/// it came from (when given).
pub fn pins(effective: &Value, published: Option<&Value>) -> Vec<Pin> {
    let mut out = Vec::new();
    for (path, item) in object(effective.get("paths")) {
        for (method, op) in object(Some(item)) {
            let kept = op
                .get("operationId")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if op.get(DERIVED_OPERATION_ID_MARK).is_some() {
                let vendor = published.map(|doc| published_operation_id(doc, path, method));
                out.push(Pin {
                    kind: PinKind::DerivedOperationId,
                    kept: kept.to_string(),
                    published: vendor.flatten().unwrap_or_default().to_string(),
                    at: format!("{} {path}", method.to_ascii_uppercase()),
                    status: match vendor {
                        None => PinStatus::Unchecked,
                        Some(Some(id)) if id == kept => PinStatus::Redundant,
                        Some(_) => PinStatus::Active,
                    },
                });
                continue;
            }
            let Some(recorded) = op.get(PUBLISHED_OPERATION_ID_MARK).and_then(Value::as_str) else {
                continue;
            };
            let status = match published {
                None => PinStatus::Unchecked,
                Some(doc) => match published_operation_id(doc, path, method) {
                    Some(id) if id == recorded => PinStatus::Active,
                    Some(id) if id == kept => PinStatus::Redundant,
                    _ => PinStatus::Outdated,
                },
            };
            out.push(Pin {
                kind: PinKind::OperationId,
                kept: kept.to_string(),
                published: recorded.to_string(),
                at: format!("{} {path}", method.to_ascii_uppercase()),
                status,
            });
        }
    }
    for (name, schema) in object(effective.pointer("/components/schemas")) {
        let Some(recorded) = schema.get(PUBLISHED_NAME_MARK).and_then(Value::as_str) else {
            continue;
        };
        let status = match published {
            None => PinStatus::Unchecked,
            Some(doc) => {
                let has = |n: &str| {
                    doc.pointer("/components/schemas")
                        .and_then(|s| s.get(n))
                        .is_some()
                };
                if has(recorded) {
                    PinStatus::Active
                } else if has(name) {
                    PinStatus::Redundant
                } else {
                    PinStatus::Outdated
                }
            }
        };
        out.push(Pin {
            kind: PinKind::Schema,
            kept: name.clone(),
            published: recorded.to_string(),
            at: format!("/components/schemas/{}", escape(name)),
            status,
        });
    }
    out.sort();
    out
}

fn object(value: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    value.and_then(Value::as_object).into_iter().flatten()
}

/// The operationId `doc` publishes for `method` `path`, if any.
fn published_operation_id<'d>(doc: &'d Value, path: &str, method: &str) -> Option<&'d str> {
    doc.get("paths")
        .and_then(|p| p.get(path))
        .and_then(|i| i.get(method))
        .and_then(|o| o.get("operationId"))
        .and_then(Value::as_str)
}

/// The overlay actions that pin the names the pipeline derived, one `update` per operation,
/// carrying the same mark the pipeline sets (so the effective document does not change).
pub fn derived_pin_actions(derived: &[DerivedName]) -> Vec<Value> {
    derived
        .iter()
        .map(|d| {
            json!({
                "target": format!("$.paths[{}].{}", quote(&d.path), d.method),
                "description": format!(
                    "The description gives {} {} no operationId; the pipeline named it {} (derived \
                     from method and path). Pinned so that the Rust method keeps its name when the \
                     vendor publishes one.",
                    d.method.to_ascii_uppercase(),
                    d.path,
                    d.name
                ),
                "update": {"operationId": d.name, DERIVED_OPERATION_ID_MARK: d.name},
                TARGET_MAY_VANISH: true,
            })
        })
        .collect()
}

/// `operation_id_published` changes: operations whose derived name a pin keeps, for which the
/// new published description has an operationId of the vendor's that the old one did not have.
/// Wire and Rust code are unaffected; the report says so instead of hiding the vendor's name.
pub fn published_names(old: &Side<'_>, new: &Side<'_>) -> Vec<Change> {
    let Some(new_published) = new.published else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for op in document::operations(new.effective) {
        if op.operation.get(DERIVED_OPERATION_ID_MARK).is_none() {
            continue;
        }
        let Some(kept) = op.operation.get("operationId").and_then(Value::as_str) else {
            continue;
        };
        let Some(vendor) = published_operation_id(new_published, op.path, op.method) else {
            continue;
        };
        let Some(before) = old
            .effective
            .get("paths")
            .and_then(|p| p.get(op.path))
            .and_then(|i| i.get(op.method))
        else {
            continue;
        };
        // What the vendor called the operation before: the old published description when it is
        // known; otherwise the old effective document's marks say it.
        let vendor_before = match old.published {
            Some(doc) => published_operation_id(doc, op.path, op.method),
            None if before.get(DERIVED_OPERATION_ID_MARK).is_some() => None,
            None => before
                .get(PUBLISHED_OPERATION_ID_MARK)
                .or_else(|| before.get("operationId"))
                .and_then(Value::as_str),
        };
        if vendor == kept || vendor_before == Some(vendor) {
            continue;
        }
        let at = op.pointer();
        let location = |side: &Side<'_>| Location {
            published: side
                .published
                .and_then(|doc| published_pointer(side.effective, doc, &at)),
            effective: at.clone(),
        };
        out.push(Change {
            kind: ChangeKind::OperationIdPublished,
            summary: format!(
                "{} {}: the vendor now publishes operationId {vendor}; the pinned name {kept} stays",
                op.method.to_ascii_uppercase(),
                op.path
            ),
            from: Some(kept.to_string()),
            to: Some(vendor.to_string()),
            operations: vec![kept.to_string()],
            old: Some(location(old)),
            new: Some(location(new)),
            wire: Wire::Yes,
            source: Source::Yes,
            behaviour: Behaviour::Same,
            reason: format!(
                "same request on the wire, and the Rust method stays {}: overlays/{KEEP_NAMES_FILE} \
                 keeps the name derived while the operation had no operationId (delete that pin \
                 to take the vendor's name, a breaking change)",
                kept.to_snake_case()
            ),
            rust: vec![format!("Client::{}", kept.to_snake_case())],
        });
    }
    out
}

/// A rename that cannot be pinned, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PinError(pub String);

/// The overlay actions that pin the old names of `renames` (operation_id_changed and
/// schema_renamed changes), checked against the new published description.
pub fn pin_actions<'a>(
    renames: impl IntoIterator<Item = &'a Change>,
    published: &Value,
) -> Result<Vec<Value>, PinError> {
    let mut actions = Vec::new();
    for change in renames {
        let (Some(old), Some(new)) = (change.from.as_deref(), change.to.as_deref()) else {
            continue;
        };
        match change.kind {
            ChangeKind::OperationIdChanged => {
                let at = change.new.as_ref().and_then(|l| l.published.as_deref()).ok_or_else(|| {
                    PinError(format!(
                        "operationId {old} → {new}: the operation is not in the published description, so no overlay can pin it"
                    ))
                })?;
                let target = operation_target(at).ok_or_else(|| {
                    PinError(format!(
                        "operationId {old} → {new}: unexpected location {at}"
                    ))
                })?;
                actions.push(json!({
                    "target": target,
                    "description": format!(
                        "The vendor renamed operationId {old} to {new} (same method and path). \
                         Pinned so that the Rust method keeps its name."
                    ),
                    "update": {"operationId": old, PUBLISHED_OPERATION_ID_MARK: new},
                    TARGET_MAY_VANISH: true,
                }));
            }
            ChangeKind::SchemaRenamed => {
                if published
                    .pointer("/components/schemas")
                    .and_then(|s| s.get(new))
                    .is_none()
                {
                    return Err(PinError(format!(
                        "schema {old} → {new}: the published description has no component {new} (an overlay supplies it); rename it in that overlay instead"
                    )));
                }
                let reference = format!("#/components/schemas/{new}");
                actions.push(json!({
                    "target": "$.components.schemas",
                    "description": format!(
                        "The vendor renamed schema {old} to {new} (same shape). Pinned so that \
                         the Rust type keeps its name: {old} is created here and filled with \
                         {new} by the next action."
                    ),
                    "update": {old: {PUBLISHED_NAME_MARK: new}},
                }));
                actions.push(json!({
                    "target": format!("$.components.schemas[{}]", quote(old)),
                    "description": format!(
                        "{old} takes the vendor's {new} as published, so later changes to it still arrive."
                    ),
                    "copy": format!("$.components.schemas[{}]", quote(new)),
                }));
                actions.push(json!({
                    "target": format!("$.components.schemas[{}]", quote(new)),
                    "description": format!("{new} lives on as {old}."),
                    "remove": true,
                }));
                if references(published, &reference) {
                    actions.push(json!({
                        "target": format!("$..[?@['$ref'] == {}]", quote(&reference)),
                        "description": format!("References to {new} point at {old}."),
                        "update": {"$ref": format!("#/components/schemas/{old}")},
                    }));
                }
            }
            _ => {}
        }
    }
    Ok(actions)
}

/// `/paths/~1v1~1sessions/get` → `$.paths['/v1/sessions'].get`.
fn operation_target(pointer: &str) -> Option<String> {
    let tokens = pointer::tokens(pointer);
    match tokens.as_slice() {
        [paths, path, method] if paths == "paths" => {
            Some(format!("$.paths[{}].{method}", quote(path)))
        }
        _ => None,
    }
}

/// A JSONPath string literal (RFC 9535), single-quoted.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn references(doc: &Value, reference: &str) -> bool {
    match doc {
        Value::Object(map) => {
            map.get("$ref").and_then(Value::as_str) == Some(reference)
                || map.values().any(|v| references(v, reference))
        }
        Value::Array(items) => items.iter().any(|v| references(v, reference)),
        _ => false,
    }
}

/// Why the pin file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum KeepNamesError {
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error(
        "{} is not a valid overlay, so pins cannot be added to it; fix or delete it:\n{errors}",
        path.display()
    )]
    Invalid {
        path: PathBuf,
        errors: OverlayErrors,
    },
}

/// The text of the pin file with `actions` appended: a new file, or the existing one with the
/// actions added at its end (its comments and earlier pins kept). The result is validated.
pub fn extended_file(
    existing: Option<&str>,
    actions: &[Value],
    path: &Path,
) -> Result<String, KeepNamesError> {
    extended_file_with_header(existing, actions, path, HEADER)
}

/// [`extended_file`] for any pin file: `header` (comments and the overlay's head, ending in
/// `actions:`) starts a new one.
pub fn extended_file_with_header(
    existing: Option<&str>,
    actions: &[Value],
    path: &Path,
    header: &str,
) -> Result<String, KeepNamesError> {
    let origin = path.display().to_string();
    let invalid = |errors| KeepNamesError::Invalid {
        path: path.to_path_buf(),
        errors,
    };
    let base = match existing {
        Some(text) => {
            let overlay = Overlay::parse(text, Format::Yaml, &origin).map_err(invalid)?;
            let mut t = text.to_string();
            if !t.ends_with('\n') {
                t.push('\n');
            }
            (t, overlay.actions.len())
        }
        None => (header.to_string(), 0),
    };
    let appended = document::to_string(&Value::Array(actions.to_vec()), Format::Yaml);
    let candidate = format!("{}{}", base.0, ends_with_newline(&appended));
    // Appending text keeps comments and layout, and works when `actions` is the last key of the
    // file; otherwise the file is rewritten from its data.
    let appended_ok = document::parse(&candidate, Format::Yaml, &origin)
        .ok()
        .and_then(|v| v.get("actions").and_then(Value::as_array).map(Vec::len))
        == Some(base.1 + actions.len());
    let text = if appended_ok {
        candidate
    } else {
        let mut value = document::parse(&base.0, Format::Yaml, &origin)?;
        if let Some(Value::Array(items)) = value.as_object_mut().and_then(|m| m.get_mut("actions"))
        {
            items.extend(actions.iter().cloned());
        }
        document::to_string(&value, Format::Yaml)
    };
    Overlay::parse(&text, Format::Yaml, &origin).map_err(invalid)?;
    Ok(text)
}

/// serde_norway writes a top-level sequence at column 0, which YAML also accepts as the block
/// sequence of `actions:`.
fn ends_with_newline(yaml: &str) -> String {
    let mut s = yaml.to_string();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::model::{Location, Source, Wire};

    fn rename(kind: ChangeKind, from: &str, to: &str, published: Option<&str>) -> Change {
        Change {
            kind,
            summary: String::new(),
            from: Some(from.into()),
            to: Some(to.into()),
            operations: vec![],
            old: None,
            new: Some(Location {
                effective: String::new(),
                published: published.map(String::from),
            }),
            wire: Wire::Yes,
            source: Source::No,
            behaviour: crate::diff::model::Behaviour::Same,
            reason: String::new(),
            rust: vec![],
        }
    }

    #[test]
    fn pins_are_written_as_a_valid_overlay_and_extended_in_place() {
        let published = json!({
            "paths": {"/v1/s/{id}": {"get": {"operationId": "FetchSession", "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreditScore"}}}}}}}},
            "components": {"schemas": {"CreditScore": {"type": "object"}}}
        });
        let op = rename(
            ChangeKind::OperationIdChanged,
            "GetSession",
            "FetchSession",
            Some("/paths/~1v1~1s~1{id}/get"),
        );
        let schema = rename(
            ChangeKind::SchemaRenamed,
            "Score",
            "CreditScore",
            Some("/components/schemas/CreditScore"),
        );
        let actions = pin_actions([&op], &published).unwrap();
        assert_eq!(actions[0]["target"], "$.paths['/v1/s/{id}'].get");
        let path = Path::new("overlays/90-keep-names.overlay.yaml");
        let first = extended_file(None, &actions, path).unwrap();
        assert!(first.starts_with("# Rust names kept"));
        let more = pin_actions([&schema], &published).unwrap();
        assert_eq!(more.len(), 4, "create, copy, remove, re-point references");
        let second = extended_file(Some(&first), &more, path).unwrap();
        assert!(
            second.starts_with(&first),
            "earlier text (comments, pins) is kept"
        );
        let overlay = Overlay::parse(&second, Format::Yaml, "t").unwrap();
        assert_eq!(overlay.actions.len(), 5);

        let mut doc = published.clone();
        crate::overlay::apply(
            &mut doc,
            &[overlay],
            &crate::overlay::ApplyOptions { lenient: false },
        )
        .unwrap();
        assert_eq!(
            doc.pointer("/paths/~1v1~1s~1{id}/get/operationId").unwrap(),
            "GetSession"
        );
        assert!(doc.pointer("/components/schemas/CreditScore").is_none());
        assert_eq!(
            doc.pointer("/components/schemas/Score/type").unwrap(),
            "object"
        );
        assert_eq!(
            doc.pointer(
                "/paths/~1v1~1s~1{id}/get/responses/200/content/application~1json/schema/$ref"
            )
            .unwrap(),
            "#/components/schemas/Score"
        );
        let pins = pins(&doc, Some(&published));
        assert_eq!(pins.len(), 2);
        assert!(
            pins.iter().all(|p| p.status == PinStatus::Active),
            "{pins:?}"
        );
    }

    #[test]
    fn a_rename_of_an_overlay_supplied_schema_cannot_be_pinned() {
        let published = json!({"components": {"schemas": {}}});
        let schema = rename(ChangeKind::SchemaRenamed, "A", "B", None);
        let e = pin_actions([&schema], &published).unwrap_err();
        assert!(e.0.contains("an overlay supplies it"), "{e}");
    }
}
