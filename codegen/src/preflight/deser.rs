//! Can openapiv3 read the document? Deserializing the whole document stops at the first error,
//! and `#[serde(flatten)]` (used by schemas and parameters) hides where inside a node it
//! happened. So each node is read on its own, with its child nodes replaced by harmless
//! placeholders, and the children are read in turn: every error is found, at the innermost node.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::ctx::Ctx;
use super::loc::Loc;
use super::report::{Problem, SuggestedFix};
use crate::document::{HTTP_METHODS, is_http_method};

pub(crate) fn check(ctx: &mut Ctx) {
    let doc = ctx.doc;
    let Value::Object(root) = doc else {
        return;
    };
    let before = ctx.findings.len();

    if let Some(Value::Object(paths)) = root.get("paths") {
        for (key, item) in paths {
            // openapiv3 keeps only keys starting with "/" (and x- extensions, any JSON).
            if key.starts_with('/') {
                check_path_item(ctx, item, &Loc::root().key("paths").key(key));
            }
        }
    }
    if let Some(Value::Object(components)) = root.get("components") {
        check_components(ctx, components, &Loc::root().key("components"));
    }
    let shell = hollow(
        root,
        &[
            ("paths", Hollow::EmptyObject),
            ("components", Hollow::EmptyObject),
        ],
    );
    read::<openapiv3::OpenAPI>(ctx, &shell, &Loc::root());

    // The pieces above cover the whole document; reading it whole catches whatever they
    // might have missed, and only speaks if they found nothing.
    if ctx.findings.len() == before
        && let Err(e) = serde_path_to_error::deserialize::<_, openapiv3::OpenAPI>(doc)
    {
        report(ctx, &Loc::root(), e.path(), &e.inner().to_string());
    }
}

fn check_path_item(ctx: &mut Ctx, item: &Value, at: &Loc) {
    let Value::Object(map) = item else {
        read::<openapiv3::ReferenceOr<openapiv3::PathItem>>(ctx, item, at);
        return;
    };
    if map.contains_key("$ref") {
        read::<openapiv3::ReferenceOr<openapiv3::PathItem>>(ctx, item, at);
        return;
    }
    for (key, value) in map {
        if is_http_method(key) {
            check_operation(ctx, value, &at.key(key));
        }
    }
    if let Some(Value::Array(params)) = map.get("parameters") {
        for (i, param) in params.iter().enumerate() {
            check_parameter(ctx, param, &at.key("parameters").index(i));
        }
    }
    let mut hollows: Vec<(&str, Hollow)> =
        HTTP_METHODS.iter().map(|m| (*m, Hollow::Remove)).collect();
    hollows.push(("parameters", Hollow::EmptyArray));
    read::<openapiv3::PathItem>(ctx, &hollow(map, &hollows), at);
}

fn check_operation(ctx: &mut Ctx, op: &Value, at: &Loc) {
    let Value::Object(map) = op else {
        read::<openapiv3::Operation>(ctx, op, at);
        return;
    };
    if let Some(Value::Array(params)) = map.get("parameters") {
        for (i, param) in params.iter().enumerate() {
            check_parameter(ctx, param, &at.key("parameters").index(i));
        }
    }
    if let Some(body) = map.get("requestBody") {
        check_request_body(ctx, body, &at.key("requestBody"));
    }
    if let Some(Value::Object(responses)) = map.get("responses") {
        for (key, response) in responses {
            if is_response_key(key) {
                check_response(ctx, response, &at.key("responses").key(key));
            }
        }
    }
    let shell = hollow(
        map,
        &[
            ("parameters", Hollow::EmptyArray),
            ("requestBody", Hollow::Remove),
            ("responses", Hollow::EmptyObject),
        ],
    );
    read::<openapiv3::Operation>(ctx, &shell, at);
}

/// Keys of a Responses object whose value openapiv3 reads as a response: `default` and status
/// codes. It keeps `x-` keys as any JSON and drops the others unread.
pub(crate) fn is_response_key(key: &str) -> bool {
    key == "default" || serde_json::from_value::<openapiv3::StatusCode>(json!(key)).is_ok()
}

fn check_parameter(ctx: &mut Ctx, param: &Value, at: &Loc) {
    let Some(map) = item_object(param) else {
        read::<openapiv3::ReferenceOr<openapiv3::Parameter>>(ctx, param, at);
        return;
    };
    if let Some(schema) = map.get("schema").filter(|s| s.is_object()) {
        check_schema(ctx, schema, &at.key("schema"));
    }
    let content = check_media_types(ctx, map.get("content"), &at.key("content"));
    let shell = hollow(
        map,
        &[("schema", Hollow::EmptyObject), ("content", content)],
    );
    read::<openapiv3::Parameter>(ctx, &shell, at);
}

fn check_request_body(ctx: &mut Ctx, body: &Value, at: &Loc) {
    let Some(map) = item_object(body) else {
        read::<openapiv3::ReferenceOr<openapiv3::RequestBody>>(ctx, body, at);
        return;
    };
    let content = check_media_types(ctx, map.get("content"), &at.key("content"));
    read::<openapiv3::RequestBody>(ctx, &hollow(map, &[("content", content)]), at);
}

fn check_response(ctx: &mut Ctx, response: &Value, at: &Loc) {
    let Some(map) = item_object(response) else {
        read::<openapiv3::ReferenceOr<openapiv3::Response>>(ctx, response, at);
        return;
    };
    let content = check_media_types(ctx, map.get("content"), &at.key("content"));
    if let Some(Value::Object(headers)) = map.get("headers") {
        for (name, header) in headers {
            read::<openapiv3::ReferenceOr<openapiv3::Header>>(
                ctx,
                header,
                &at.key("headers").key(name),
            );
        }
    }
    let shell = hollow(
        map,
        &[("content", content), ("headers", Hollow::EmptyObject)],
    );
    read::<openapiv3::Response>(ctx, &shell, at);
}

/// Reads each media type of a `content` map and says how to hollow the map out.
fn check_media_types(ctx: &mut Ctx, content: Option<&Value>, at: &Loc) -> Hollow {
    let Some(Value::Object(content)) = content else {
        return Hollow::Keep;
    };
    for (name, media) in content {
        let here = at.key(name);
        match media {
            Value::Object(map) => {
                if let Some(schema) = map.get("schema").filter(|s| s.is_object()) {
                    check_schema(ctx, schema, &here.key("schema"));
                }
                let shell = hollow(map, &[("schema", Hollow::EmptyObject)]);
                read::<openapiv3::MediaType>(ctx, &shell, &here);
            }
            _ => {
                read::<openapiv3::MediaType>(ctx, media, &here);
            }
        }
    }
    // Keys stay, in order, because openapiv3 and progenitor care which media type comes first.
    Hollow::EachValue(json!({}))
}

const SCHEMA_MAPS: [&str; 1] = ["properties"];
const SCHEMA_LISTS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const SCHEMA_SINGLES: [&str; 3] = ["items", "additionalProperties", "not"];

fn check_schema(ctx: &mut Ctx, schema: &Value, at: &Loc) {
    let Some(map) = item_object(schema) else {
        read::<openapiv3::ReferenceOr<openapiv3::Schema>>(ctx, schema, at);
        return;
    };
    let mut hollows = Vec::new();
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(children)) = map.get(key) {
            for (name, child) in children {
                check_schema(ctx, child, &at.key(key).key(name));
            }
            hollows.push((key, Hollow::EachValue(json!({}))));
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(children)) = map.get(key) {
            for (i, child) in children.iter().enumerate() {
                check_schema(ctx, child, &at.key(key).index(i));
            }
            hollows.push((key, Hollow::EachValue(json!({}))));
        }
    }
    for key in SCHEMA_SINGLES {
        if let Some(child @ Value::Object(_)) = map.get(key) {
            check_schema(ctx, child, &at.key(key));
            hollows.push((key, Hollow::EmptyObject));
        }
    }
    read::<openapiv3::Schema>(ctx, &hollow(map, &hollows), at);
}

fn check_components(ctx: &mut Ctx, components: &Map<String, Value>, at: &Loc) {
    type Reader = fn(&mut Ctx, &Value, &Loc);
    let sections: [(&str, Reader); 9] = [
        ("schemas", check_schema),
        ("responses", check_response),
        ("parameters", check_parameter),
        ("requestBodies", check_request_body),
        ("headers", |ctx, v, at| {
            read::<openapiv3::ReferenceOr<openapiv3::Header>>(ctx, v, at);
        }),
        ("examples", |ctx, v, at| {
            read::<openapiv3::ReferenceOr<openapiv3::Example>>(ctx, v, at);
        }),
        ("securitySchemes", |ctx, v, at| {
            read::<openapiv3::ReferenceOr<openapiv3::SecurityScheme>>(ctx, v, at);
        }),
        ("links", |ctx, v, at| {
            read::<openapiv3::ReferenceOr<openapiv3::Link>>(ctx, v, at);
        }),
        ("callbacks", |ctx, v, at| {
            read::<openapiv3::ReferenceOr<openapiv3::Callback>>(ctx, v, at);
        }),
    ];
    let mut hollows = Vec::new();
    for (section, reader) in sections {
        if let Some(Value::Object(entries)) = components.get(section) {
            for (name, entry) in entries {
                reader(ctx, entry, &at.key(section).key(name));
            }
            hollows.push((section, Hollow::EmptyObject));
        }
    }
    read::<openapiv3::Components>(ctx, &hollow(components, &hollows), at);
}

/// The object of a node that is an inline item rather than a `$ref` (openapiv3 reads any
/// object with a `$ref` as a reference and ignores its other keys).
fn item_object(value: &Value) -> Option<&Map<String, Value>> {
    match value {
        Value::Object(map) if !map.contains_key("$ref") => Some(map),
        _ => None,
    }
}

#[derive(Clone)]
enum Hollow {
    Keep,
    Remove,
    EmptyObject,
    EmptyArray,
    /// Keep the keys (or the length) of an object (array) and replace each value.
    EachValue(Value),
}

/// A copy of `map` whose child nodes, already checked on their own, are replaced so that
/// reading the copy only judges the node itself. A child of the wrong JSON type is kept, so the
/// error is the node's.
fn hollow(map: &Map<String, Value>, hollows: &[(&str, Hollow)]) -> Value {
    let mut out = Map::new();
    for (key, value) in map {
        let how = hollows
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, how)| how.clone())
            .unwrap_or(Hollow::Keep);
        let replaced = match (how, value) {
            (Hollow::Remove, _) => continue,
            (Hollow::EmptyObject, Value::Object(_)) => json!({}),
            (Hollow::EmptyArray, Value::Array(_)) => json!([]),
            (Hollow::EachValue(with), Value::Object(children)) => {
                Value::Object(children.keys().map(|k| (k.clone(), with.clone())).collect())
            }
            (Hollow::EachValue(with), Value::Array(children)) => {
                Value::Array(children.iter().map(|_| with.clone()).collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), replaced);
    }
    Value::Object(out)
}

fn read<T: DeserializeOwned>(ctx: &mut Ctx, value: &Value, at: &Loc) -> bool {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => true,
        Err(e) => {
            report(ctx, at, e.path(), &e.inner().to_string());
            false
        }
    }
}

fn report(ctx: &mut Ctx, at: &Loc, path: &serde_path_to_error::Path, error: &str) {
    let mut loc = at.clone();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Map { key } => loc = loc.key(key),
            serde_path_to_error::Segment::Seq { index } => loc = loc.index(*index),
            serde_path_to_error::Segment::Enum { .. } => {}
            serde_path_to_error::Segment::Unknown => break,
        }
    }
    // A path into a hollowed placeholder, or past a wrong JSON type, names no real node.
    while loc.get(ctx.doc).is_none() {
        match loc.parent() {
            Some(parent) => loc = parent,
            None => break,
        }
    }
    let message = format!(
        "openapiv3, which progenitor reads the document with, cannot read this node: {error}."
    );
    // With a type list the error names either the schema or its `type`.
    if loc.last_key() == Some("type")
        && matches!(loc.get(ctx.doc), Some(Value::Array(_)))
        && let Some(parent) = loc.parent()
    {
        loc = parent;
    }
    let node = loc.get(ctx.doc);

    if let Some(field) = missing_field(error) {
        let placeholder = placeholder_for(field);
        ctx.report(
            &loc,
            Problem::Unreadable,
            message,
            SuggestedFix::update(
                loc.path(),
                format!("`{field}` is required here; fill in the real value."),
                json!({ field: placeholder }),
            ),
        );
        return;
    }

    // OpenAPI 3.1 type lists are the usual cause; 3.0 says `nullable` instead.
    if let Some(Value::Array(types)) = node.and_then(|n| n.get("type")) {
        let others: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        let nullable = others.len() < types.len();
        let mut update = Map::new();
        if let [single] = others.as_slice() {
            update.insert("type".into(), (*single).clone());
        }
        if nullable {
            update.insert("nullable".into(), json!(true));
        }
        ctx.report_then(
            &loc,
            Problem::Unreadable,
            format!(
                "{message} `type` is a list, which is OpenAPI 3.1; OpenAPI 3.0 takes one type and \
                 says `nullable: true` for null."
            ),
            SuggestedFix::remove(
                loc.key("type").path(),
                "OpenAPI 3.0 takes a single `type`; the list goes.",
            ),
            vec![SuggestedFix::update(
                loc.path(),
                if others.len() > 1 {
                    "Several non-null types have no OpenAPI 3.0 form but `oneOf`; without a type the \
                     schema accepts any JSON. Write the oneOf by hand if it matters."
                } else {
                    "The one non-null type, plus nullable: true if the list allowed null."
                },
                Value::Object(update),
            )],
        );
        return;
    }

    let pointer = loc.pointer();
    let fix = if loc.0.is_empty() {
        SuggestedFix::update(
            "$".into(),
            "Rewrite the document as OpenAPI 3.0.",
            json!({}),
        )
    } else {
        SuggestedFix::remove(
            loc.path(),
            format!(
                "The blunt fix: drop the node. Better, rewrite {pointer} in the shape OpenAPI 3.0 \
                 expects ({error})."
            ),
        )
    };
    ctx.report(&loc, Problem::Unreadable, message, fix);
}

fn missing_field(error: &str) -> Option<&str> {
    let rest = error.strip_prefix("missing field `")?;
    Some(&rest[..rest.find('`')?])
}

fn placeholder_for(field: &str) -> Value {
    match field {
        "openapi" => json!("3.0.3"),
        "info" => json!({ "title": "", "version": "" }),
        "paths" | "content" => json!({}),
        "responses" => json!({ "default": { "description": "" } }),
        _ => json!(""),
    }
}
