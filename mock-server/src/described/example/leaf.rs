//! The keywords of a string's or number's own schema: described in words for a refusal, and
//! checked by a shared validator.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::{Map, Value};

use crate::described::schema;

/// `(pattern ^a$, minLength 3)`: the keywords that constrain the value, as the description
/// writes them (the description's, never a value's).
pub(super) fn describe(schema: &Value, keywords: &[&str]) -> String {
    let parts: Vec<String> = keywords
        .iter()
        .filter_map(|keyword| {
            let value = schema.get(*keyword)?;
            Some(match value {
                Value::String(text) => format!("{keyword} {text}"),
                other => format!("{keyword} {other}"),
            })
        })
        .collect();
    if parts.is_empty() {
        "that its schema accepts".to_owned()
    } else {
        format!("with {}", parts.join(", "))
    }
}

/// The keywords of a string or number's own schema: what its value alone must meet.
pub(super) const LEAF_KEYWORDS: [&str; 13] = [
    "type",
    "nullable",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "enum",
    "const",
];

/// A validator of `schema`'s own keywords (formats checked), shared by every answer: the same
/// few scalar schemas recur. `None` when they do not compile (the description's schemas are
/// compiled at start, so this is a schema made up here).
pub(super) fn leaf_validator(schema: &Value) -> Option<Arc<Validator>> {
    /// Past this many different scalar schemas, the cache starts again.
    const MAX_CACHED: usize = 4096;
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Validator>>>>> = OnceLock::new();
    let own: Map<String, Value> = LEAF_KEYWORDS
        .iter()
        .filter_map(|keyword| Some(((*keyword).to_owned(), schema.get(*keyword)?.clone())))
        .collect();
    let key = Value::Object(own.clone()).to_string();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().ok()?.get(&key) {
        return found.clone();
    }
    let compiled = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema::to_json_schema(&Value::Object(own)))
        .ok()
        .map(Arc::new);
    let mut cache = cache.lock().ok()?;
    if cache.len() >= MAX_CACHED {
        cache.clear();
    }
    cache.insert(key, compiled.clone());
    compiled
}
