//! What changed between two effective documents, in the terms a client user cares about.
//!
//! `cargo xtask regen` prints this report after regenerating, so a service change arrives with a
//! readable account: operations added, removed or changed (parameters, bodies, responses,
//! deprecation), and schemas added, removed or changed (properties, required members, types,
//! enum values). It compares the effective documents (what the generator saw), so changes made by
//! overlays show up too.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// The report. Empty when nothing a generated client exposes changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeReport {
    /// `METHOD /path (operationId)` of operations that are new.
    pub operations_added: Vec<String>,
    /// The same for operations that are gone.
    pub operations_removed: Vec<String>,
    /// Per changed operation, what changed.
    pub operations_changed: BTreeMap<String, Vec<String>>,
    pub schemas_added: Vec<String>,
    pub schemas_removed: Vec<String>,
    /// Per changed schema, what changed.
    pub schemas_changed: BTreeMap<String, Vec<String>>,
    /// Other top-level changes (info.version, servers, security schemes).
    pub other: Vec<String>,
}

impl ChangeReport {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self == &ChangeReport::default()
    }

    /// Whether a change can break code written against the old client: a removed operation or
    /// schema, a removed property, or an operation or schema changed in a way that is not purely
    /// additive.
    pub fn is_breaking(&self) -> bool {
        !self.operations_removed.is_empty()
            || !self.schemas_removed.is_empty()
            || self
                .operations_changed
                .values()
                .chain(self.schemas_changed.values())
                .flatten()
                .any(|c| c.starts_with('-') || c.starts_with('~'))
    }
}

impl fmt::Display for ChangeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return writeln!(f, "No change to the API surface.");
        }
        let list = |f: &mut fmt::Formatter<'_>, title: &str, items: &[String]| -> fmt::Result {
            if !items.is_empty() {
                writeln!(f, "{title} ({}):", items.len())?;
                for item in items {
                    writeln!(f, "  {item}")?;
                }
            }
            Ok(())
        };
        let changes = |f: &mut fmt::Formatter<'_>,
                       title: &str,
                       items: &BTreeMap<String, Vec<String>>|
         -> fmt::Result {
            if !items.is_empty() {
                writeln!(f, "{title} ({}):", items.len())?;
                for (name, lines) in items {
                    writeln!(f, "  {name}")?;
                    for line in lines {
                        writeln!(f, "    {line}")?;
                    }
                }
            }
            Ok(())
        };
        list(f, "Operations added", &self.operations_added)?;
        list(f, "Operations removed", &self.operations_removed)?;
        changes(f, "Operations changed", &self.operations_changed)?;
        list(f, "Schemas added", &self.schemas_added)?;
        list(f, "Schemas removed", &self.schemas_removed)?;
        changes(f, "Schemas changed", &self.schemas_changed)?;
        list(f, "Other", &self.other)?;
        writeln!(
            f,
            "{}",
            if self.is_breaking() {
                "Breaking: code written against the previous client may no longer compile or behave the same (lines marked - or ~)."
            } else {
                "Additive only (lines marked +)."
            }
        )
    }
}

/// Compares two effective documents. Lines start with `+` (added), `-` (removed) or `~` (changed).
pub fn compare(old: &Value, new: &Value) -> ChangeReport {
    let mut report = ChangeReport::default();
    let (old_ops, new_ops) = (operations(old), operations(new));
    for (key, op) in &new_ops {
        match old_ops.get(key) {
            None => report.operations_added.push(describe(key, op)),
            Some(previous) => {
                let lines = operation_changes(previous, op);
                if !lines.is_empty() {
                    report.operations_changed.insert(describe(key, op), lines);
                }
            }
        }
    }
    for (key, op) in &old_ops {
        if !new_ops.contains_key(key) {
            report.operations_removed.push(describe(key, op));
        }
    }

    let (old_schemas, new_schemas) = (schemas(old), schemas(new));
    for (name, schema) in &new_schemas {
        match old_schemas.get(name) {
            None => report.schemas_added.push(name.clone()),
            Some(previous) => {
                let mut lines = Vec::new();
                schema_changes("", previous, schema, &mut lines);
                if !lines.is_empty() {
                    report.schemas_changed.insert(name.clone(), lines);
                }
            }
        }
    }
    for name in old_schemas.keys() {
        if !new_schemas.contains_key(name) {
            report.schemas_removed.push(name.clone());
        }
    }

    for (pointer, label) in [
        ("/info/version", "info.version"),
        ("/servers", "servers"),
        ("/components/securitySchemes", "security schemes"),
    ] {
        let (a, b) = (old.pointer(pointer), new.pointer(pointer));
        if a != b {
            report
                .other
                .push(format!("~ {label}: {} → {}", short(a), short(b)));
        }
    }
    report
}

type OpKey = (String, String);

fn operations(doc: &Value) -> BTreeMap<OpKey, &Value> {
    let mut out = BTreeMap::new();
    for (path, item) in doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for (method, op) in item.as_object().into_iter().flatten() {
            if matches!(
                method.as_str(),
                "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace"
            ) {
                out.insert((method.to_ascii_uppercase(), path.clone()), op);
            }
        }
    }
    out
}

fn describe((method, path): &OpKey, op: &Value) -> String {
    match op.get("operationId").and_then(Value::as_str) {
        Some(id) => format!("{method} {path} ({id})"),
        None => format!("{method} {path}"),
    }
}

fn operation_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let field = |v: &Value, key: &str| v.get(key).cloned();
    if field(old, "operationId") != field(new, "operationId") {
        lines.push(format!(
            "~ operationId: {} → {} (the Rust method is renamed)",
            short(old.get("operationId")),
            short(new.get("operationId"))
        ));
    }
    let deprecated = |v: &Value| {
        v.get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    if !deprecated(old) && deprecated(new) {
        lines.push("~ now deprecated".into());
    } else if deprecated(old) && !deprecated(new) {
        lines.push("+ no longer deprecated".into());
    }

    let params = |v: &Value| -> BTreeMap<String, Value> {
        v.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let name = p.get("name")?.as_str()?;
                let location = p.get("in")?.as_str()?;
                Some((format!("{location} {name}"), p.clone()))
            })
            .collect()
    };
    let (old_params, new_params) = (params(old), params(new));
    for (name, p) in &new_params {
        match old_params.get(name) {
            None => {
                let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
                let sign = if required { "-" } else { "+" };
                let note = if required {
                    " (required: existing calls must now set it)"
                } else {
                    ""
                };
                lines.push(format!("{sign} parameter {name}{note}"));
            }
            Some(previous) if previous != p => lines.push(format!("~ parameter {name} changed")),
            Some(_) => {}
        }
    }
    for name in old_params.keys() {
        if !new_params.contains_key(name) {
            lines.push(format!("- parameter {name}"));
        }
    }

    if old.get("requestBody") != new.get("requestBody") {
        lines.push("~ request body changed".into());
    }
    let responses = |v: &Value| -> BTreeMap<String, Value> {
        v.get("responses")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (old_resp, new_resp) = (responses(old), responses(new));
    for (status, r) in &new_resp {
        match old_resp.get(status) {
            None => lines.push(format!("+ response {status}")),
            Some(previous) if previous.get("content") != r.get("content") => {
                lines.push(format!("~ response {status} body changed"))
            }
            Some(_) => {}
        }
    }
    for status in old_resp.keys() {
        if !new_resp.contains_key(status) {
            lines.push(format!("- response {status}"));
        }
    }
    lines
}

fn schemas(doc: &Value) -> BTreeMap<String, &Value> {
    doc.pointer("/components/schemas")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}

/// Property-level changes of one schema (nested properties reported with dotted names).
fn schema_changes(prefix: &str, old: &Value, new: &Value, lines: &mut Vec<String>) {
    let at = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    let here = if prefix.is_empty() {
        "schema".to_string()
    } else {
        prefix.to_string()
    };

    for key in [
        "type", "format", "nullable", "$ref", "allOf", "anyOf", "oneOf", "items",
    ] {
        let (a, b) = (old.get(key), new.get(key));
        if a != b && !(key == "items" && a.is_some() && b.is_some()) {
            lines.push(format!("~ {here}: {key} {} → {}", short(a), short(b)));
        }
    }
    if let (Some(a), Some(b)) = (old.get("items"), new.get("items")) {
        schema_changes(&format!("{here}[]"), a, b, lines);
    }

    let strings = |v: &Value, key: &str| -> BTreeSet<String> {
        v.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| x.to_string())
            })
            .collect()
    };
    let (old_enum, new_enum) = (strings(old, "enum"), strings(new, "enum"));
    for value in new_enum.difference(&old_enum) {
        lines.push(format!("+ {here}: enum value {value}"));
    }
    for value in old_enum.difference(&new_enum) {
        lines.push(format!("- {here}: enum value {value}"));
    }
    let (old_req, new_req) = (strings(old, "required"), strings(new, "required"));
    for name in new_req.difference(&old_req) {
        lines.push(format!("~ {}: now required", at(name)));
    }
    for name in old_req.difference(&new_req) {
        lines.push(format!("~ {}: no longer required", at(name)));
    }

    let props = |v: &Value| -> BTreeMap<String, Value> {
        v.get("properties")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (old_props, new_props) = (props(old), props(new));
    for (name, p) in &new_props {
        match old_props.get(name) {
            None => lines.push(format!("+ {}: new property", at(name))),
            Some(previous) => schema_changes(&at(name), previous, p, lines),
        }
    }
    for name in old_props.keys() {
        if !new_props.contains_key(name) {
            lines.push(format!("- {}: property removed", at(name)));
        }
    }
    let open = |v: &Value| {
        v.get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
    };
    if open(old) != open(new) {
        lines.push(format!(
            "~ {here}: {}",
            if open(new) {
                "now keeps unknown members"
            } else {
                "no longer keeps unknown members"
            }
        ));
    }
}

fn short(value: Option<&Value>) -> String {
    match value {
        None => "(none)".into(),
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 80 {
                format!("{}…", text.chars().take(80).collect::<String>())
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(extra_op: bool, status_values: &[&str], with_prop: bool) -> Value {
        let mut paths = json!({
            "/v1/sessions/{id}": {"get": {"operationId": "GetSession", "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ], "responses": {"200": {"description": "OK"}}}}
        });
        if extra_op {
            paths["/v1/x"] = json!({"post": {"operationId": "MakeX", "responses": {"201": {"description": "Created"}}}});
        }
        let mut session = json!({"type": "object", "properties": {"id": {"type": "string"}}});
        if with_prop {
            session["properties"]["nickname"] = json!({"type": "string", "nullable": true});
        }
        json!({
            "openapi": "3.0.3", "info": {"title": "t", "version": "1.0"}, "paths": paths,
            "components": {"schemas": {"Status": {"type": "string", "enum": status_values}, "Session": session}}
        })
    }

    #[test]
    fn additive_changes_are_reported_as_such() {
        let report = compare(&doc(false, &["A"], false), &doc(true, &["A", "B"], true));
        assert_eq!(
            report.operations_added,
            vec!["POST /v1/x (MakeX)".to_string()]
        );
        assert_eq!(
            report.schemas_changed["Status"],
            vec!["+ schema: enum value B".to_string()]
        );
        assert_eq!(
            report.schemas_changed["Session"],
            vec!["+ nickname: new property".to_string()]
        );
        assert!(!report.is_breaking());
        assert!(
            report
                .to_string()
                .ends_with("Additive only (lines marked +).\n")
        );
    }

    #[test]
    fn removals_are_breaking() {
        let report = compare(&doc(true, &["A", "B"], true), &doc(false, &["A"], false));
        assert_eq!(
            report.operations_removed,
            vec!["POST /v1/x (MakeX)".to_string()]
        );
        assert!(report.is_breaking());
        let text = report.to_string();
        assert!(text.contains("- schema: enum value B"), "{text}");
        assert!(text.contains("- nickname: property removed"), "{text}");
    }

    #[test]
    fn identical_documents_report_nothing() {
        let d = doc(true, &["A"], true);
        assert!(compare(&d, &d).is_empty());
        assert_eq!(
            compare(&d, &d).to_string(),
            "No change to the API surface.\n"
        );
    }
}
