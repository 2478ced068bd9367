//! The effective API description as JSON Schema, so tests can ask it whether a value is valid.

use serde_json::{Map, Value, json};

/// The effective description the client is generated from.
pub const EFFECTIVE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../spec/openapi.effective.json"
));

/// OpenAPI 3.0 schema → JSON Schema 2020-12.
pub fn convert(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                match key.as_str() {
                    "nullable" | "example" => {}
                    "$ref" => {
                        let target = value.as_str().unwrap_or_default();
                        out.insert(
                            key.clone(),
                            json!(target.replace("#/components/schemas/", "#/$defs/")),
                        );
                    }
                    key if key.starts_with("x-") => {}
                    _ => {
                        out.insert(key.clone(), convert(value));
                    }
                }
            }
            if map.get("nullable") == Some(&Value::Bool(true)) {
                json!({ "anyOf": [Value::Object(out), { "type": "null" }] })
            } else {
                Value::Object(out)
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(convert).collect()),
        other => other.clone(),
    }
}

/// A validator for `schema` (an OpenAPI 3.0 schema of the effective description, `$ref`s into
/// its components allowed), formats included.
pub fn validator(document: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = match convert(schema) {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("allOf".into(), json!([other]));
            map
        }
    };
    root.insert("$defs".into(), convert(&document["components"]["schemas"]));
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&Value::Object(root))
        .expect("schema compiles")
}
