//! Reading a schema of the description as the examples need it: references followed, `allOf`
//! branches merged, its type, whether it allows `null`, its smallest value.

use serde_json::{Map, Value, json};

/// How deep an example nests before it stops following references.
pub const MAX_DEPTH: usize = 12;

/// `schema` with its references followed and its `allOf` branches merged into one schema:
/// properties and `required` joined, the first of every other keyword kept.
pub fn merged(document: &Value, schema: &Value) -> Value {
    merged_within(document, schema, 0)
}

pub(super) fn merged_within(document: &Value, schema: &Value, hops: usize) -> Value {
    let schema = resolve(document, schema);
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let Some(Value::Array(branches)) = map.get("allOf") else {
        return schema.clone();
    };
    let mut out: Map<String, Value> = map
        .iter()
        .filter(|(key, _)| key.as_str() != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if hops > MAX_DEPTH {
        return Value::Object(out);
    }
    for branch in branches {
        let Value::Object(branch) = merged_within(document, branch, hops + 1) else {
            continue;
        };
        for (key, value) in branch {
            match (key.as_str(), out.get_mut(&key), value) {
                ("properties", Some(Value::Object(ours)), Value::Object(theirs)) => {
                    for (name, member) in theirs {
                        ours.entry(name).or_insert(member);
                    }
                }
                ("required", Some(Value::Array(ours)), Value::Array(theirs)) => {
                    for name in theirs {
                        if !ours.contains(&name) {
                            ours.push(name);
                        }
                    }
                }
                // `nullable` beside the `allOf` (3.0's way of a nullable reference) is the
                // outer schema's; the branch's own says nothing about it.
                ("nullable", Some(_), _) => {}
                (_, Some(_), _) => {}
                (_, None, value) => {
                    out.insert(key, value);
                }
            }
        }
    }
    Value::Object(out)
}

/// Follows local `$ref`s (a loop, or one that leads nowhere, stops at the reference).
pub fn resolve<'a>(document: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..=MAX_DEPTH {
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| reference.strip_prefix('#'))
            .and_then(|pointer| document.pointer(pointer))
        {
            Some(target) => schema = target,
            None => return schema,
        }
    }
    schema
}

/// The JSON type an example of `schema` takes: its `type` (the first that is not `null` of a
/// 3.1 list), else what its keywords imply.
pub(super) fn type_of(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(single)) => single,
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() || schema.get("required").is_some() => "object",
        _ if schema.get("items").is_some() => "array",
        _ => "string",
    }
}

pub(super) fn only_null(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null"))
}

pub(super) fn allows_null(schema: &Value) -> bool {
    schema.get("nullable") == Some(&Value::Bool(true))
        || schema
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|types| types.contains(&json!("null")))
}

/// The smallest value of `schema`: what a recursion too deep to follow ends in.
pub(super) fn smallest(schema: &Value) -> Value {
    if allows_null(schema) {
        return Value::Null;
    }
    match type_of(schema) {
        "object" => json!({}),
        "array" => json!([]),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        _ => json!(""),
    }
}

pub(super) fn limit(schema: &Value, keyword: &str) -> Option<u64> {
    schema.get(keyword).and_then(Value::as_u64)
}
