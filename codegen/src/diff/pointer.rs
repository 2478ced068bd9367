//! From a node of the effective document to the same node in the published description.
//!
//! The effective document is the published one after overlays, down-convert and the open-enum
//! stage. Most nodes keep their pointer; the exceptions are undone here:
//!
//! - request-side enum copies (`XInput`, marked `x-creditdata-request-variant-of: X`) and
//!   hoisted inline enums (marked `x-creditdata-hoisted-from`) point back at their origin;
//! - schemas pinned by `overlays/90-keep-names.overlay.yaml` (marked
//!   `x-creditdata-published-name`) point at the vendor's name;
//! - the `allOf: [..]` / `anyOf: [..]` wrappers down-convert introduces are skipped;
//! - array members are matched by `in` and `name` (parameters) or by value (enum values), not
//!   by index, because overlays may add members.
//!
//! A node that is not in the published description (supplied by an overlay) has no published
//! pointer.

use serde_json::Value;

use super::keep_names::PUBLISHED_NAME_MARK;
use crate::document::pointer::{escape, tokens};
use crate::open_enums::{HOISTED_MARK, REQUEST_VARIANT_MARK};

/// The pointer in `published` of the node at `effective_pointer` in `effective`.
pub fn published_pointer(
    effective: &Value,
    published: &Value,
    effective_pointer: &str,
) -> Option<String> {
    let mut tokens = tokens(effective_pointer);
    // Walk the effective document along the original tokens, but the published one along the
    // translated start.
    if tokens.len() >= 3 && tokens[0] == "components" && tokens[1] == "schemas" {
        let schema = effective.pointer(&format!("/components/schemas/{}", escape(&tokens[2])))?;
        let eff_root_tokens = tokens[..3].to_vec();
        if let Some(origin) = schema.get(HOISTED_MARK).and_then(Value::as_str) {
            let rest = tokens.split_off(3);
            tokens = self::tokens(origin);
            let prefix_len = tokens.len();
            tokens.extend(rest);
            return walk(effective, published, &eff_root_tokens, &tokens, prefix_len);
        }
        let name = schema
            .get(REQUEST_VARIANT_MARK)
            .or_else(|| schema.get(PUBLISHED_NAME_MARK))
            .and_then(Value::as_str);
        if let Some(name) = name {
            tokens[2] = name.to_string();
        }
        return walk(effective, published, &eff_root_tokens, &tokens, 3);
    }
    walk(effective, published, &[], &tokens, 0)
}

/// Walks `published` along `tokens`. The first `start` tokens are taken as they are (they were
/// translated); the rest are followed in the effective node too (from `eff_root`), to recognise
/// wrappers and to match array members.
fn walk(
    effective: &Value,
    published: &Value,
    eff_root: &[String],
    tokens: &[String],
    start: usize,
) -> Option<String> {
    let mut p = published;
    let mut path: Vec<String> = Vec::new();
    for token in &tokens[..start] {
        p = step(p, token)?;
        path.push(token.clone());
    }
    let mut e = effective;
    for token in eff_root {
        e = step(e, token)?;
    }
    let rest = &tokens[start..];
    let mut i = 0;
    while i < rest.len() {
        let token = &rest[i];
        let e_next = step(e, token);
        if let Some(p_next) = step(p, token)
            && !(p.is_array() && e.is_array())
        {
            p = p_next;
            path.push(token.clone());
            e = e_next?;
            i += 1;
            continue;
        }
        if let (Some(items), Some(member)) = (p.as_array(), e_next) {
            let found = items
                .iter()
                .position(|candidate| same_member(candidate, member))?;
            p = &items[found];
            path.push(found.to_string());
            e = member;
            i += 1;
            continue;
        }
        if matches!(token.as_str(), "allOf" | "anyOf" | "oneOf") && i + 1 < rest.len() {
            // A wrapper down-convert added: the published node itself is the match.
            e = step(step(e, token)?, &rest[i + 1])?;
            i += 2;
            continue;
        }
        return None;
    }
    Some(path.iter().fold(String::new(), |mut s, t| {
        s.push('/');
        s.push_str(&escape(t));
        s
    }))
}

fn step<'a>(value: &'a Value, token: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    }
}

/// Array members correspond when they are the same parameter (`in` and `name`), or equal.
fn same_member(published: &Value, effective: &Value) -> bool {
    let key = |v: &Value| {
        Some((
            v.get("in")?.as_str()?.to_string(),
            v.get("name")?.as_str()?.to_string(),
        ))
    };
    match (key(published), key(effective)) {
        (Some(a), Some(b)) => a == b,
        _ => published == effective,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_wrappers_parameters_and_enum_values_map_back() {
        let published = json!({
            "paths": {"/s": {"get": {"parameters": [
                {"name": "Skip", "in": "query", "schema": {"type": "integer"}},
                {"name": "Status", "in": "query", "schema": {"$ref": "#/components/schemas/Status"}}
            ]}}},
            "components": {"schemas": {
                "Status": {"type": "string", "enum": ["A", "B"]},
                "Session": {"properties": {"status": {"$ref": "#/components/schemas/Status", "description": "d"}}}
            }}
        });
        let effective = json!({
            "paths": {"/s": {"get": {"parameters": [
                {"name": "Extra", "in": "header", "schema": {"type": "string"}},
                {"name": "Status", "in": "query", "schema": {"$ref": "#/components/schemas/StatusInput"}},
                {"name": "Skip", "in": "query", "schema": {"type": "integer"}}
            ]}}},
            "components": {"schemas": {
                "Status": {"type": "string", "enum": ["A", "B"]},
                "StatusInput": {"type": "string", "enum": ["B"], "x-creditdata-request-variant-of": "Status"},
                "Session": {"properties": {"status": {"allOf": [{"$ref": "#/components/schemas/Status"}], "description": "d"}}}
            }}
        });
        let map = |p| published_pointer(&effective, &published, p);
        assert_eq!(
            map("/paths/~1s/get/parameters/2/schema").as_deref(),
            Some("/paths/~1s/get/parameters/0/schema")
        );
        assert_eq!(
            map("/paths/~1s/get/parameters/0"),
            None,
            "supplied by an overlay"
        );
        assert_eq!(
            map("/components/schemas/StatusInput/enum/0").as_deref(),
            Some("/components/schemas/Status/enum/1")
        );
        assert_eq!(
            map("/components/schemas/Session/properties/status/allOf/0").as_deref(),
            Some("/components/schemas/Session/properties/status")
        );
    }
}
