//! The schema half: which component schemas a request and a response can reach, request-side
//! copies of shared enums, inline response enums hoisted into components, open-enum marks.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use serde_json::{Map, Value};

use super::{
    HOISTED_MARK, OPEN_ENUM_MARK, OpenEnumError, OpenEnumPlan, REQUEST_SUFFIX, REQUEST_VARIANT_MARK,
};
use crate::document::pointer::{escape, unescape};
use crate::document::{self, SCHEMA_REF_PREFIX, is_extension, is_http_method, resolve};

/// Splits shared enums, hoists inline response enums and marks the open ones (see module docs).
///
/// Expects an OpenAPI 3.0 document; parts that are not shaped as OpenAPI are left alone (the
/// preflight stage reports them).
pub fn prepare(doc: &mut Value) -> Result<OpenEnumPlan, OpenEnumError> {
    let mut plan = OpenEnumPlan::default();
    let initial = Reachability::of(doc);
    hoist_inline_response_enums(doc, &initial.response, &mut plan)?;

    let reach = Reachability::of(doc);
    let Some(schemas) = component_schemas(doc) else {
        return Ok(plan);
    };
    let shared: BTreeSet<String> = reach
        .request
        .intersection(&reach.response)
        .cloned()
        .collect();
    let to_copy: BTreeSet<String> = shared
        .iter()
        .filter(|name| reaches_string_enum(schemas, name))
        .cloned()
        .collect();
    for original in &to_copy {
        let wanted = format!("{original}{REQUEST_SUFFIX}");
        if schemas.contains_key(&wanted) {
            return Err(OpenEnumError::NameTaken {
                pointer: format!("/components/schemas/{}", escape(original)),
                original: original.clone(),
                wanted,
            });
        }
        plan.request_variants.insert(wanted, original.clone());
    }
    let renames: BTreeMap<String, String> = plan
        .request_variants
        .iter()
        .map(|(copy, original)| (original.clone(), copy.clone()))
        .collect();

    let schemas = component_schemas_mut(doc).expect("checked above");
    for (copy, original) in &plan.request_variants {
        let mut schema = schemas[original].clone();
        rewrite_refs(&mut schema, &renames);
        if let Value::Object(map) = &mut schema {
            map.insert(REQUEST_VARIANT_MARK.into(), Value::String(original.clone()));
        }
        schemas.insert(copy.clone(), schema);
    }
    // Request-only schemas now point at the copies; response-side ones keep the originals.
    for name in reach.request.difference(&reach.response) {
        if let Some(schema) = schemas.get_mut(name) {
            rewrite_refs(schema, &renames);
        }
    }
    for_each_request_root(doc, |schema| rewrite_refs(schema, &renames));

    let schemas = component_schemas_mut(doc).expect("checked above");
    for name in &reach.response {
        if let Some(schema @ Value::Object(_)) = schemas.get_mut(name)
            && is_string_enum(schema)
        {
            schema[OPEN_ENUM_MARK] = Value::Bool(true);
            plan.open.insert(name.clone());
        }
    }
    Ok(plan)
}

/// Named schemas reachable from request parameters and bodies, and from responses.
struct Reachability {
    request: BTreeSet<String>,
    response: BTreeSet<String>,
}

impl Reachability {
    fn of(doc: &Value) -> Reachability {
        let mut request_roots = Vec::new();
        let mut response_roots = Vec::new();
        for_each_root(doc, &mut |side, schema| match side {
            Side::Request => collect_schema_refs(schema, &mut request_roots),
            Side::Response => collect_schema_refs(schema, &mut response_roots),
        });
        Reachability {
            request: closure(doc, request_roots),
            response: closure(doc, response_roots),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

/// Calls `f` with every schema an operation uses directly, and which side it is on.
fn for_each_root(doc: &Value, f: &mut dyn FnMut(Side, &Value)) {
    for op in document::operations(doc) {
        let shared_params = op.item.get("parameters");
        for params in [shared_params, op.operation.get("parameters")]
            .into_iter()
            .flatten()
        {
            for param in params.as_array().into_iter().flatten() {
                let param = resolve(doc, param);
                for_each_parameter_schema(param, |s| f(Side::Request, s));
            }
        }
        if let Some(body) = op.operation.get("requestBody") {
            for_each_content_schema(resolve(doc, body), |s| f(Side::Request, s));
        }
        for response in op
            .operation
            .get("responses")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let response = resolve(doc, response.1);
            for_each_content_schema(response, |s| f(Side::Response, s));
            for header in response
                .get("headers")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                for_each_parameter_schema(resolve(doc, header.1), |s| f(Side::Response, s));
            }
        }
    }
}

/// The request-side roots again, mutably, for rewriting references in place (the operations
/// [`document::operations`] yields). Parameters and bodies defined under `components` are
/// rewritten there: only requests use them.
fn for_each_request_root(doc: &mut Value, mut f: impl FnMut(&mut Value)) {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut().filter(|_| !is_extension(path)) else {
                continue;
            };
            for (key, value) in item.iter_mut() {
                if key == "parameters" {
                    rewrite_parameters(value, &mut f);
                } else if is_http_method(key) {
                    if let Some(params) = value.get_mut("parameters") {
                        rewrite_parameters(params, &mut f);
                    }
                    if let Some(body) = value.get_mut("requestBody") {
                        for_each_content_schema_mut(body, &mut f);
                    }
                }
            }
        }
    }
    if let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut) {
        if let Some(params) = components
            .get_mut("parameters")
            .and_then(Value::as_object_mut)
        {
            for param in params.values_mut() {
                for_each_parameter_schema_mut(param, &mut f);
            }
        }
        if let Some(bodies) = components
            .get_mut("requestBodies")
            .and_then(Value::as_object_mut)
        {
            for body in bodies.values_mut() {
                for_each_content_schema_mut(body, &mut f);
            }
        }
    }
}

fn rewrite_parameters(params: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for param in params.as_array_mut().into_iter().flatten() {
        for_each_parameter_schema_mut(param, f);
    }
}

fn for_each_parameter_schema(param: &Value, mut f: impl FnMut(&Value)) {
    if let Some(schema) = param.get("schema") {
        f(schema);
    }
    for_each_content_schema(param, f);
}

fn for_each_parameter_schema_mut(param: &mut Value, f: &mut impl FnMut(&mut Value)) {
    if let Some(schema) = param.get_mut("schema") {
        f(schema);
    }
    for_each_content_schema_mut(param, f);
}

fn for_each_content_schema(holder: &Value, mut f: impl FnMut(&Value)) {
    for media in holder
        .get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(schema) = media.1.get("schema") {
            f(schema);
        }
    }
}

fn for_each_content_schema_mut(holder: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for media in holder
        .get_mut("content")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flatten()
    {
        if let Some(schema) = media.1.get_mut("schema") {
            f(schema);
        }
    }
}

/// Every component-schema name referenced anywhere inside `value`.
fn collect_schema_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(SCHEMA_REF_PREFIX))
            {
                out.push(unescape(name));
            }
            for v in map.values() {
                collect_schema_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_schema_refs(v, out)),
        _ => {}
    }
}

fn closure(doc: &Value, mut pending: Vec<String>) -> BTreeSet<String> {
    let schemas = component_schemas(doc);
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if seen.insert(name.clone())
            && let Some(schema) = schemas.and_then(|s| s.get(&name))
        {
            collect_schema_refs(schema, &mut pending);
        }
    }
    seen
}

fn reaches_string_enum(schemas: &Map<String, Value>, name: &str) -> bool {
    let mut pending = vec![name.to_string()];
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.get(&name) {
            if is_string_enum(schema) {
                return true;
            }
            collect_schema_refs(schema, &mut pending);
        }
    }
    false
}

/// A schema typify turns into a Rust enum of unit variants: an `enum` of strings (a `null`
/// member only makes it nullable).
fn is_string_enum(schema: &Value) -> bool {
    let Some(values) = schema.get("enum").and_then(Value::as_array) else {
        return false;
    };
    let typed_string = match schema.get("type") {
        None => true,
        Some(t) => t == "string",
    };
    typed_string
        && values.iter().any(Value::is_string)
        && values.iter().all(|v| v.is_string() || v.is_null())
}

fn rewrite_refs(value: &mut Value, renames: &BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix(SCHEMA_REF_PREFIX)
                && let Some(new) = renames.get(&unescape(name))
            {
                *r = format!("{SCHEMA_REF_PREFIX}{}", escape(new));
            }
            for v in map.values_mut() {
                rewrite_refs(v, renames);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, renames)),
        _ => {}
    }
}

fn component_schemas(doc: &Value) -> Option<&Map<String, Value>> {
    doc.get("components")?.get("schemas")?.as_object()
}

fn component_schemas_mut(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    doc.get_mut("components")?
        .get_mut("schemas")?
        .as_object_mut()
}

/// Moves string enums written inline inside response-side component schemas into components of
/// their own (named parent + property), so that each has a Rust name this stage can find.
fn hoist_inline_response_enums(
    doc: &mut Value,
    response_side: &BTreeSet<String>,
    plan: &mut OpenEnumPlan,
) -> Result<(), OpenEnumError> {
    let Some(schemas) = component_schemas_mut(doc) else {
        return Ok(());
    };
    let mut hoisted: Vec<(String, String, Value)> = Vec::new();
    for name in response_side {
        let Some(schema) = schemas.get_mut(name) else {
            continue;
        };
        let pointer = format!("/components/schemas/{}", escape(name));
        hoist_within(schema, &name.to_upper_camel_case(), &pointer, &mut hoisted);
    }
    for (new_name, pointer, schema) in hoisted {
        if schemas.contains_key(&new_name) || plan.hoisted.contains_key(&new_name) {
            return Err(OpenEnumError::NameTaken {
                pointer,
                original: "(inline enum)".into(),
                wanted: new_name,
            });
        }
        plan.hoisted.insert(new_name.clone(), pointer);
        schemas.insert(new_name, schema);
    }
    Ok(())
}

fn hoist_within(
    schema: &mut Value,
    base: &str,
    pointer: &str,
    out: &mut Vec<(String, String, Value)>,
) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let mut children: Vec<(String, String, &mut Value)> = Vec::new();
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" => {
                for (prop, sub) in value.as_object_mut().into_iter().flatten() {
                    children.push((
                        format!("{base}{}", prop.to_upper_camel_case()),
                        format!("{pointer}/properties/{}", escape(prop)),
                        sub,
                    ));
                }
            }
            "items" => children.push((format!("{base}Item"), format!("{pointer}/items"), value)),
            "additionalProperties" if value.is_object() => children.push((
                format!("{base}Value"),
                format!("{pointer}/additionalProperties"),
                value,
            )),
            "allOf" | "anyOf" | "oneOf" => {
                for (i, sub) in value.as_array_mut().into_iter().flatten().enumerate() {
                    children.push((
                        format!("{base}Variant{i}"),
                        format!("{pointer}/{key}/{i}"),
                        sub,
                    ));
                }
            }
            _ => {}
        }
    }
    for (name, ptr, sub) in children {
        if is_string_enum(sub) {
            let mut enum_schema = std::mem::take(sub);
            let mut usage = Map::new();
            if let Value::Object(m) = &mut enum_schema {
                // Nullability, documentation and a deprecation belong to the use (the member),
                // not to the named enum.
                let annotations = [
                    "nullable",
                    "description",
                    "default",
                    "example",
                    "deprecated",
                ];
                let deprecation = crate::deprecations::MESSAGE_KEYS
                    .iter()
                    .chain(crate::deprecations::REPLACEMENT_KEYS);
                for key in annotations.iter().chain(deprecation) {
                    if let Some(v) = m.remove(*key) {
                        usage.insert((*key).to_string(), v);
                    }
                }
                if let Some(Value::Array(values)) = m.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
                m.insert(HOISTED_MARK.into(), Value::String(ptr.clone()));
            }
            let reference =
                serde_json::json!({ "$ref": format!("{SCHEMA_REF_PREFIX}{}", escape(&name)) });
            *sub = if usage.is_empty() {
                reference
            } else {
                usage.insert("allOf".into(), Value::Array(vec![reference]));
                Value::Object(usage)
            };
            out.push((name, ptr, enum_schema));
        } else {
            hoist_within(sub, &name, &ptr, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": {
                "/things": {
                    "get": {
                        "parameters": [{"name": "Status", "in": "query", "schema": {"$ref": "#/components/schemas/Status"}}],
                        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    },
                    "post": {
                        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewThing"}}}},
                        "responses": {"201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    }
                }
            },
            "components": {"schemas": {
                "Status": {"type": "string", "enum": ["A", "B"]},
                "Kind": {"type": "string", "enum": ["X"]},
                "Part": {"type": "object", "properties": {"kind": {"$ref": "#/components/schemas/Kind"}}},
                "Thing": {"type": "object", "properties": {
                    "status": {"$ref": "#/components/schemas/Status"},
                    "part": {"$ref": "#/components/schemas/Part"},
                    "colour": {"type": "string", "enum": ["RED", null], "nullable": true, "description": "c"}
                }},
                "NewThing": {"type": "object", "properties": {"part": {"$ref": "#/components/schemas/Part"}}},
                "OnlyIn": {"type": "string", "enum": ["Q"]}
            }}
        })
    }

    #[test]
    fn shared_enums_and_their_containers_are_split_and_requests_point_at_the_copies() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.request_variants,
            BTreeMap::from([
                ("KindInput".to_string(), "Kind".to_string()),
                ("PartInput".to_string(), "Part".to_string()),
                ("StatusInput".to_string(), "Status".to_string()),
            ])
        );
        assert_eq!(
            d.pointer("/paths/~1things/get/parameters/0/schema/$ref")
                .unwrap(),
            "#/components/schemas/StatusInput"
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(
            schemas["NewThing"]["properties"]["part"]["$ref"],
            "#/components/schemas/PartInput"
        );
        assert_eq!(
            schemas["PartInput"]["properties"]["kind"]["$ref"],
            "#/components/schemas/KindInput"
        );
        assert_eq!(
            schemas["Thing"]["properties"]["part"]["$ref"],
            "#/components/schemas/Part"
        );
        assert_eq!(schemas["PartInput"][REQUEST_VARIANT_MARK], "Part");
    }

    #[test]
    fn response_enums_are_marked_open_request_copies_and_unused_enums_are_not() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.open,
            BTreeSet::from(["Kind".into(), "Status".into(), "ThingColour".into()])
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(schemas["Status"][OPEN_ENUM_MARK], true);
        assert!(schemas["StatusInput"].get(OPEN_ENUM_MARK).is_none());
        assert!(schemas["OnlyIn"].get(OPEN_ENUM_MARK).is_none());
    }

    #[test]
    fn inline_response_enums_are_hoisted_keeping_nullability_at_the_use() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.hoisted["ThingColour"],
            "/components/schemas/Thing/properties/colour"
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(
            schemas["Thing"]["properties"]["colour"],
            json!({"nullable": true, "description": "c", "allOf": [{"$ref": "#/components/schemas/ThingColour"}]})
        );
        assert_eq!(schemas["ThingColour"]["enum"], json!(["RED"]));
    }

    #[test]
    fn a_taken_copy_name_is_an_error_naming_both_schemas() {
        let mut d = doc();
        d["components"]["schemas"]["StatusInput"] = json!({"type": "string"});
        let err = prepare(&mut d).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/components/schemas/Status: the request-side copy of schema `Status` would be named \
             `StatusInput`, but a schema of that name already exists; rename one of them with an overlay"
        );
    }
}
