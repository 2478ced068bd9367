//! The description's schemas as JSON Schema 2020-12 validators, and their refusals as the
//! service's field errors.
//!
//! The effective description is OpenAPI 3.0.3, whose Schema Object is not JSON Schema: `nullable`
//! stands for a `null` type, `exclusiveMinimum` is a flag, and references point into
//! `components/schemas`. Written as 2020-12, the well-kept `jsonschema` crate checks what the
//! description states, formats included. A 3.1 schema (already 2020-12) passes through unchanged.

use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, Validator};
use serde_json::{Map, Value, json};

use crate::problem::FieldErrors;

/// Where component schemas live in the validator's root.
const DEFS: &str = "#/$defs/";
const COMPONENT_SCHEMAS: &str = "#/components/schemas/";

/// OpenAPI 3.0 (or 3.1) Schema Object → JSON Schema 2020-12.
pub fn to_json_schema(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            // Annotations of OpenAPI that JSON Schema does not know, and `nullable`, which is
            // rewritten below.
            "nullable" | "example" | "discriminator" | "xml" | "externalDocs" => {}
            key if key.starts_with("x-") => {}
            "$ref" => {
                let target = value.as_str().unwrap_or_default();
                out.insert(
                    key.to_owned(),
                    json!(target.replace(COMPONENT_SCHEMAS, DEFS)),
                );
            }
            // Maps whose keys are names, not keywords: a property called `example` is kept.
            "properties" | "patternProperties" | "$defs" | "dependentSchemas" => {
                let converted = value
                    .as_object()
                    .map(|members| {
                        members
                            .iter()
                            .map(|(name, member)| (name.clone(), to_json_schema(member)))
                            .collect::<Map<String, Value>>()
                    })
                    .map(Value::Object)
                    .unwrap_or_else(|| value.clone());
                out.insert(key.to_owned(), converted);
            }
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_boolean() => {
                // 3.0: a flag on `minimum`/`maximum`; 2020-12: the bound itself.
                let bound = if key == "exclusiveMinimum" {
                    "minimum"
                } else {
                    "maximum"
                };
                if value == &Value::Bool(true)
                    && let Some(limit) = map.get(bound)
                {
                    out.insert(key.to_owned(), limit.clone());
                }
            }
            "enum" | "const" | "default" | "examples" | "required" => {
                out.insert(key.to_owned(), value.clone());
            }
            _ => {
                out.insert(key.to_owned(), to_json_schema_value(value));
            }
        }
    }
    if map
        .get("exclusiveMinimum")
        .is_some_and(|flag| flag == &Value::Bool(true))
    {
        out.remove("minimum");
    }
    if map
        .get("exclusiveMaximum")
        .is_some_and(|flag| flag == &Value::Bool(true))
    {
        out.remove("maximum");
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        return allow_null(out);
    }
    Value::Object(out)
}

/// A keyword's value: a schema, or an array of schemas (`allOf`, `items` of old drafts).
fn to_json_schema_value(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        Value::Object(_) => to_json_schema(value),
        other => other.clone(),
    }
}

/// `nullable: true`: a `null` type beside the declared one (so a refusal still names the
/// expected type), else `anyOf` with `null` where the schema has no type of its own.
fn allow_null(mut schema: Map<String, Value>) -> Value {
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match schema.get("type").cloned() {
        Some(Value::String(single)) => {
            schema.insert("type".into(), json!([single, "null"]));
            Value::Object(schema)
        }
        Some(Value::Array(mut types)) => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
            schema.insert("type".into(), Value::Array(types));
            Value::Object(schema)
        }
        _ => json!({ "anyOf": [Value::Object(schema), { "type": "null" }] }),
    }
}

/// A validator of `schema` (a schema of `document`, its `$ref`s into the components allowed).
pub fn validator(document: &Value, schema: &Value) -> Result<Validator, String> {
    let mut root = Map::new();
    root.insert("allOf".into(), json!([to_json_schema(schema)]));
    // Only the components `schema` reaches: a body refers to a handful of the description's
    // schemas, and every mock start compiles the Session bodies.
    let components = document
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    let mut defs = Map::new();
    let mut pending = references(schema);
    while let Some(name) = pending.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        let Some(component) = components.and_then(|schemas| schemas.get(&name)) else {
            continue;
        };
        pending.extend(references(component));
        defs.insert(name, to_json_schema(component));
    }
    root.insert("$defs".into(), Value::Object(defs));
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(&Value::Object(root))
        .map_err(|error| error.to_string())
}

/// The names of the component schemas `schema` refers to directly.
fn references(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix(COMPONENT_SCHEMAS))
                {
                    found.push(name.replace("~1", "/").replace("~0", "~"));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

/// A JSON pointer into a request body as the service names fields: `queryParameters[0].countryCode`.
pub fn field_name(pointer: &str) -> String {
    let mut name = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            name.push_str(&format!("[{segment}]"));
        } else {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(&segment);
        }
    }
    if name.is_empty() {
        "$".to_owned()
    } else {
        name
    }
}

/// Every refusal of `instance` by `validator`, as (field, message). Messages never quote the
/// value sent (it may be an e-mail address or a name): they say what the schema expects.
pub fn refusals(validator: &Validator, instance: &Value, prefix: &str) -> Vec<(String, String)> {
    validator
        .iter_errors(instance)
        .map(|error| {
            let mut pointer = format!("{prefix}{}", error.instance_path().as_str());
            if let ValidationErrorKind::Required { property } = error.kind()
                && let Some(property) = property.as_str()
            {
                pointer.push('/');
                pointer.push_str(property);
                let field = field_name(&pointer);
                return (field.clone(), format!("The {field} field is required."));
            }
            let field = field_name(&pointer);
            let message = expectation(error.kind())
                .map(|expected| format!("The {field} value {expected}."))
                .unwrap_or_else(|| format!("The {field} value is not valid: {}.", error.masked()));
            (field, message)
        })
        .collect()
}

/// What the schema expected, for the kinds of refusal a request meets most.
fn expectation(kind: &ValidationErrorKind) -> Option<String> {
    Some(match kind {
        ValidationErrorKind::Type { kind } => format!("must be of type {}", type_names(kind)),
        ValidationErrorKind::Enum { options } => format!("must be one of {options}"),
        ValidationErrorKind::Format { format } => format!("must be in the {format} format"),
        ValidationErrorKind::MaxLength { limit } => format!("must be at most {limit} characters"),
        ValidationErrorKind::MinLength { limit } => format!("must be at least {limit} characters"),
        ValidationErrorKind::Pattern { pattern } => format!("must match the pattern {pattern}"),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}"),
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("must be greater than {limit}")
        }
        ValidationErrorKind::MaxItems { limit } => format!("must have at most {limit} items"),
        ValidationErrorKind::MinItems { limit } => format!("must have at least {limit} items"),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            format!(
                "has members the description does not allow: {}",
                unexpected.join(", ")
            )
        }
        _ => return None,
    })
}

fn type_names(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(single) => single.to_string(),
        jsonschema::error::TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}

/// Adds every refusal to `errors`.
pub fn check(validator: &Validator, instance: &Value, prefix: &str, errors: &mut FieldErrors) {
    for (field, message) in refusals(validator, instance, prefix) {
        errors.add(field, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_becomes_a_null_type_and_names_are_not_keywords() {
        let converted = to_json_schema(&json!({
            "type": "object",
            "properties": {
                "example": {"type": "string", "nullable": true, "enum": ["A"]},
                "amount": {"allOf": [{"$ref": "#/components/schemas/Amount"}], "nullable": true},
            },
        }));
        assert_eq!(
            converted,
            json!({
                "type": "object",
                "properties": {
                    "example": {"type": ["string", "null"], "enum": ["A", null]},
                    "amount": {"anyOf": [{"allOf": [{"$ref": "#/$defs/Amount"}]}, {"type": "null"}]},
                },
            })
        );
    }

    #[test]
    fn refusals_name_the_field_and_never_quote_the_value() {
        let document = json!({"components": {"schemas": {
            "Body": {"type": "object", "required": ["ref"], "properties": {
                "ref": {"type": "string", "nullable": true, "maxLength": 3},
                "items": {"type": "array", "items": {"type": "integer", "format": "int32"}},
            }},
        }}});
        let validator =
            validator(&document, &json!({"$ref": "#/components/schemas/Body"})).expect("compiles");
        let found = refusals(
            &validator,
            &json!({"ref": {"secret@example.com": 1}, "items": [1, "jane.doe@example.com"]}),
            "",
        );
        assert_eq!(
            found,
            [
                (
                    "ref".to_owned(),
                    "The ref value must be of type null or string.".to_owned()
                ),
                (
                    "items[1]".to_owned(),
                    "The items[1] value must be of type integer.".to_owned()
                ),
            ]
        );
        let missing = refusals(&validator, &json!({}), "");
        assert_eq!(
            missing,
            [("ref".to_owned(), "The ref field is required.".to_owned())]
        );
        assert_eq!(
            field_name("/queryParameters/0/countryCode"),
            "queryParameters[0].countryCode"
        );
    }
}
