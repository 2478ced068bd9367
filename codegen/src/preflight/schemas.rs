//! Schemas progenitor hands to typify: what panics in progenitor's conversion (`to_schema.rs`)
//! and in typify that a look at the schema can tell.

use openapiv3::{AnySchema, ReferenceOr, Schema, SchemaKind, Type};
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::loc::Loc;
use super::refs::reference_of;
use super::report::{Problem, SuggestedFix};
use crate::document::{SCHEMA_REF_PREFIX, pointer};

/// Every component schema: progenitor converts them all (`add_ref_types`), used or not.
pub(crate) fn check_components(ctx: &mut Ctx) {
    let doc = ctx.doc;
    let Some(Value::Object(schemas)) = doc.pointer("/components/schemas") else {
        return;
    };
    let at = Loc::root().key("components").key("schemas");
    for name in schemas.keys() {
        check(ctx, &at.key(name));
    }
}

/// The schema at `at` and everything inline in it; references are checked, not followed (what
/// they lead to is a component schema, checked on its own). Each node is judged on its own, so
/// a child openapiv3 cannot read (reported by the deserialization check) hides nothing else.
pub(crate) fn check(ctx: &mut Ctx, at: &Loc) {
    if !ctx.schemas_seen.insert(at.clone()) {
        return;
    }
    let doc = ctx.doc;
    let Some(value) = at.get(doc) else { return };
    if let Some(reference) = reference_of(value) {
        typify_reference(ctx, reference, at);
        return;
    }
    let Value::Object(map) = value else { return };

    let mut node = map.clone();
    for (key, child) in node.iter_mut() {
        match (key.as_str(), child) {
            ("properties", Value::Object(children)) => {
                children.values_mut().for_each(|c| *c = json!({}))
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(children)) => {
                children.iter_mut().for_each(|c| *c = json!({}))
            }
            ("items" | "additionalProperties", child @ Value::Object(_)) => *child = json!({}),
            _ => {}
        }
    }
    if let Ok(schema) = serde_json::from_value::<Schema>(Value::Object(node)) {
        match &schema.schema_kind {
            SchemaKind::AllOf { all_of } if all_of.is_empty() => ctx.report(
                at,
                Problem::EmptyAllOf,
                "`allOf` is empty; typify panics (`we should not be trying to merge an empty \
                 array of schemas`).",
                SuggestedFix::remove(
                    at.key("allOf").path(),
                    "An empty allOf constrains nothing; without it the schema accepts any JSON.",
                ),
            ),
            SchemaKind::Not { not } => not_(ctx, not, at),
            SchemaKind::Any(any) => any_(ctx, any, at),
            _ => {}
        }
    }

    values_fit(ctx, map, at);

    // typify converts every subschema but those under `not` (handled as a whole above).
    for (key, child) in map {
        match (key.as_str(), child) {
            ("properties", Value::Object(children)) => {
                for name in children.keys() {
                    check(ctx, &at.key("properties").key(name));
                }
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(children)) => {
                for i in 0..children.len() {
                    check(ctx, &at.key(key).index(i));
                }
            }
            ("items" | "additionalProperties", Value::Object(_)) => check(ctx, &at.key(key)),
            _ => {}
        }
    }
}

/// A schema openapiv3 could not fit into one of its typed kinds (no `type`, or keywords that
/// do not belong to its `type`).
fn any_(ctx: &mut Ctx, any: &AnySchema, at: &Loc) {
    const TYPES: [&str; 6] = ["boolean", "object", "array", "number", "string", "integer"];
    if let Some(typ) = &any.typ
        && !TYPES.contains(&typ.as_str())
    {
        let (description, fix) = if typ == "file" {
            (
                "`file` is Swagger 2.0 for binary content; OpenAPI 3.0 says string/binary.",
                SuggestedFix::update(
                    at.path(),
                    "",
                    json!({ "type": "string", "format": "binary" }),
                ),
            )
        } else {
            (
                "Without `type` the schema accepts any JSON value.",
                SuggestedFix::remove(at.key("type").path(), ""),
            )
        };
        let fix = SuggestedFix {
            description: description.into(),
            ..fix
        };
        ctx.report(
            at,
            Problem::UnsupportedSchemaType,
            format!(
                "`type: {typ}` is not an OpenAPI 3.0 type (boolean, object, array, number, string, \
                 integer); progenitor panics converting it (`not yet implemented: invalid type: \
                 {typ}`)."
            ),
            fix,
        );
    }
    for (flag, bound, present) in [
        (
            "exclusiveMinimum",
            "minimum",
            any.exclusive_minimum == Some(true) && any.minimum.is_none(),
        ),
        (
            "exclusiveMaximum",
            "maximum",
            any.exclusive_maximum == Some(true) && any.maximum.is_none(),
        ),
    ] {
        if present {
            ctx.report(
                at,
                Problem::ExclusiveBoundWithoutBound,
                format!(
                    "`{flag}: true` without `{bound}` means nothing in OpenAPI 3.0, and in a schema \
                     like this one (no single type) progenitor panics on it (`exclusive_{bound} \
                     set without {bound}`)."
                ),
                SuggestedFix::remove(
                    at.key(flag).path(),
                    format!("`{flag}` only qualifies `{bound}`, which is absent."),
                ),
            );
        }
    }
    keywords_without_type(ctx, any, at);
    if is_bare_enum(any) {
        let kinds = enum_kinds(&any.enumeration);
        if kinds.len() > 1 {
            ctx.report(
                at,
                Problem::MixedUntypedEnum,
                format!(
                    "This `enum` has no `type` and mixes {}; typify infers the type from the \
                     values and panics (`multiple implied types for an un-typed enum`).",
                    kinds.join(" and ")
                ),
                SuggestedFix::remove(
                    at.key("enum").path(),
                    "No one Rust type holds these values; without the enum the schema accepts any \
                     JSON (or write a oneOf of typed enums).",
                ),
            );
        }
    }
}

/// The shapes typify's `convert_schema_object` has no arm for (found by probing it: string
/// keywords or subschemas next to them, or `nullable`, lead elsewhere and are fine).
fn keywords_without_type(ctx: &mut Ctx, any: &AnySchema, at: &Loc) {
    let typ = any.typ.as_deref();
    if let (Some(format), Some(typ @ ("object" | "array" | "boolean"))) = (&any.format, typ) {
        ctx.report(
            at,
            Problem::KeywordWithoutFittingType,
            format!(
                "`format: {format}` on a schema of type {typ}: OpenAPI formats qualify strings and \
                 numbers, openapiv3 cannot type the schema and typify panics on it (`not yet \
                 implemented: invalid (or unexpected) schema`)."
            ),
            SuggestedFix::remove(
                at.key("format").path(),
                format!("A format means nothing for the type {typ}."),
            ),
        );
        return;
    }
    let bound = [
        ("minimum", any.minimum.is_some()),
        ("maximum", any.maximum.is_some()),
        ("multipleOf", any.multiple_of.is_some()),
    ]
    .into_iter()
    .find(|(_, present)| *present)
    .map(|(name, _)| name);
    let string_keywords =
        any.pattern.is_some() || any.min_length.is_some() || any.max_length.is_some();
    let subschemas = !any.one_of.is_empty()
        || !any.all_of.is_empty()
        || !any.any_of.is_empty()
        || any.not.is_some();
    let nullable = at
        .get(ctx.doc)
        .and_then(|s| s.get("nullable"))
        .is_some_and(|n| n == &Value::Bool(true));
    if typ.is_some() || string_keywords || subschemas || nullable {
        return;
    }
    let keyword = match (&any.format, bound) {
        (Some(format), _) => format!("format: {format}"),
        (None, Some(bound)) => bound.to_string(),
        (None, None) => return,
    };
    let inferred = match (any.format.as_deref(), bound) {
        (Some("int32" | "int64"), _) => "integer",
        (Some("float" | "double"), _) | (None, Some(_)) => "number",
        _ => "string",
    };
    ctx.report(
        at,
        Problem::KeywordWithoutFittingType,
        format!(
            "`{keyword}` in a schema without `type`: openapiv3 cannot type the schema and typify \
             panics on it (`not yet implemented: invalid (or unexpected) schema`)."
        ),
        SuggestedFix::update(
            at.path(),
            format!(
                "The type that `{keyword}` implies ({inferred}); check it is the intended one."
            ),
            json!({ "type": inferred }),
        ),
    );
}

/// `enum` values and `default` against the schema's `type`, by JSON type only (typify checks
/// more, e.g. bounds, and reports those itself).
fn values_fit(ctx: &mut Ctx, map: &serde_json::Map<String, Value>, at: &Loc) {
    let Some(typ) = map.get("type").and_then(Value::as_str) else {
        return;
    };
    let nullable = map.get("nullable") == Some(&Value::Bool(true));
    let fits = |value: &Value, in_enum: bool| match value {
        // A null default means none; typify drops null from string enumerations and ignores
        // boolean ones (found by probing it).
        Value::Null => !in_enum || nullable || matches!(typ, "string" | "boolean"),
        _ => match typ {
            "string" => value.is_string(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            "number" => value.is_number(),
            // typify ignores the values of boolean enumerations.
            "boolean" => in_enum || value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            _ => true,
        },
    };
    if let Some(Value::Array(values)) = map.get("enum") {
        let misfits: Vec<String> = values
            .iter()
            .filter(|v| !fits(v, true))
            .map(Value::to_string)
            .collect();
        if !misfits.is_empty() {
            let fitting: Vec<Value> = values.iter().filter(|v| fits(v, true)).cloned().collect();
            let follow_up = if fitting.is_empty() {
                Vec::new()
            } else {
                vec![SuggestedFix::update(
                    at.path(),
                    "The values that fit the type.",
                    json!({ "enum": fitting }),
                )]
            };
            ctx.report_then(
                at,
                Problem::ValueDoesNotFitSchema,
                format!(
                    "The `enum` of this {typ} schema lists {}, which {} not of type {typ}; typify \
                     rejects the schema (`value does not conform to the given schema` or \
                     `unexpected value type`).",
                    misfits.join(", "),
                    if misfits.len() == 1 { "is" } else { "are" }
                ),
                SuggestedFix::remove(
                    at.key("enum").path(),
                    "An overlay cannot filter a list: remove the enum, then add back the values \
                     that fit (if any).",
                ),
                follow_up,
            );
        }
    }
    if let Some(default) = map.get("default")
        && !fits(default, false)
    {
        ctx.report(
            at,
            Problem::ValueDoesNotFitSchema,
            format!(
                "The `default` {default} of this {typ} schema is not of type {typ}; typify rejects it \
                 (`value does not conform to the given schema`) or panics rendering it (`The \
                 default value could not be rendered for this type`)."
            ),
            SuggestedFix::remove(
                at.key("default").path(),
                "A default of another type cannot be used; write one of the right type if it matters.",
            ),
        );
    }
}

/// Whether typify makes a struct of the schema: an object with properties, `required` or
/// `additionalProperties: false`, an `allOf` of such, or a reference to one.
pub(crate) fn is_struct(doc: &Value, schema: &Value) -> bool {
    fn walk(doc: &Value, schema: &Value, depth: usize) -> bool {
        if depth > 32 {
            return false;
        }
        if let Some(reference) = reference_of(schema) {
            let name = pointer::unescape(reference.rsplit('/').next().unwrap_or(reference));
            return doc
                .get("components")
                .and_then(|c| c.get("schemas"))
                .and_then(|s| s.get(&name))
                .is_some_and(|target| walk(doc, target, depth + 1));
        }
        let Value::Object(map) = schema else {
            return false;
        };
        if let Some(Value::Array(all_of)) = map.get("allOf")
            && all_of.iter().any(|member| walk(doc, member, depth + 1))
        {
            return true;
        }
        let typ = map.get("type").and_then(Value::as_str);
        let non_empty = |key: &str| match map.get(key) {
            Some(Value::Object(o)) => !o.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            _ => false,
        };
        matches!(typ, None | Some("object"))
            && (non_empty("properties")
                || non_empty("required")
                || map.get("additionalProperties") == Some(&Value::Bool(false)))
    }
    walk(doc, schema, 0)
}

/// An `enum` and nothing else but annotations: the one shape whose type typify infers from the
/// values.
fn is_bare_enum(any: &AnySchema) -> bool {
    let bare = AnySchema {
        enumeration: any.enumeration.clone(),
        ..AnySchema::default()
    };
    !any.enumeration.is_empty() && *any == bare
}

/// The JSON types of the non-null values, as typify tells them apart.
fn enum_kinds(values: &[Value]) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    for value in values {
        let kind = match value {
            Value::Null => continue,
            Value::Bool(_) => "booleans",
            Value::Number(_) => "numbers",
            Value::String(_) => "strings",
            Value::Array(_) => "arrays",
            Value::Object(_) => "objects",
        };
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    kinds
}

/// typify's `convert_not` handles `not: {}`, `not` of a typed enum and `not` of an untyped enum
/// of one scalar type; anything else is `todo!`.
fn not_(ctx: &mut Ctx, not: &ReferenceOr<Schema>, at: &Loc) {
    let supported = match not {
        ReferenceOr::Reference { .. } => false,
        ReferenceOr::Item(inner) => match &inner.schema_kind {
            SchemaKind::Any(any) => {
                let permissive = *any == AnySchema::default();
                let scalar_enum = is_bare_enum(any)
                    && !any
                        .enumeration
                        .iter()
                        .any(|v| v.is_null() || v.is_array() || v.is_object())
                    && enum_kinds(&any.enumeration).len() == 1;
                permissive || scalar_enum
            }
            SchemaKind::Type(typed) => {
                !inner.schema_data.nullable
                    && match typed {
                        Type::String(s) => !s.enumeration.is_empty(),
                        Type::Number(n) => !n.enumeration.is_empty(),
                        Type::Integer(i) => !i.enumeration.is_empty(),
                        Type::Boolean(b) => !b.enumeration.is_empty(),
                        Type::Object(_) | Type::Array(_) => false,
                    }
            }
            _ => false,
        },
    };
    if !supported {
        ctx.report(
            at,
            Problem::UnsupportedNot,
            "typify turns `not` into a Rust type only around `{}` or an enumeration of values; \
             for this one it panics (`not yet implemented: unhandled not schema`).",
            SuggestedFix::remove(
                at.key("not").path(),
                "No Rust type expresses this exclusion; without `not` the schema accepts any JSON \
                 (validate the excluded values by hand if they matter).",
            ),
        );
    }
}

/// How typify resolves a schema reference: only within the document, by the last segment
/// (unescaped) in `components.schemas`.
fn typify_reference(ctx: &mut Ctx, reference: &str, at: &Loc) {
    let doc = ctx.doc;
    let schemas = Loc::root().key("components").key("schemas");
    if !reference.starts_with('#') {
        let name = reference
            .rsplit(['/', '#'])
            .find(|s| !s.is_empty())
            .unwrap_or("External")
            .trim_end_matches(".json")
            .trim_end_matches(".yaml")
            .to_string();
        ctx.refs_reported.insert(at.clone());
        let message = format!(
            "`{reference}` points into another document; typify panics on it (`external \
             references are not supported`)."
        );
        let paste = format!(
            "Paste the schema `{reference}` points to here (`{{}}` accepts any JSON meanwhile)."
        );
        if at.parent() == Some(schemas.clone()) {
            // The component itself is the reference: replace it.
            ctx.report_then(
                at,
                Problem::ExternalRef,
                message,
                SuggestedFix::remove(
                    at.path(),
                    "An overlay cannot replace a schema in one action: remove it, then add it back.",
                ),
                vec![SuggestedFix::update(schemas.path(), paste, json!({ at.last_key().unwrap_or_default(): {} }))],
            );
        } else {
            let follow_up = if schemas.key(&name).get(doc).is_none() {
                vec![ctx.add_under(&schemas, paste, json!({ &name: {} }))]
            } else {
                Vec::new()
            };
            ctx.report_then(
                at,
                Problem::ExternalRef,
                message,
                SuggestedFix::update(
                    at.path(),
                    format!("Point at a local copy, components.schemas.{name}."),
                    json!({ "$ref": format!("#/components/schemas/{name}") }),
                ),
                follow_up,
            );
        }
        return;
    }
    let name = match reference.rfind('/') {
        _ if reference == "#" => None,
        Some(slash) => Some(pointer::unescape(&reference[slash + 1..])),
        None => None,
    };
    let exists = |name: &str| schemas.key(name).get(doc).is_some();
    if name.as_deref().is_some_and(exists) {
        return;
    }
    ctx.refs_reported.insert(at.clone());
    let why = match &name {
        None if reference == "#" => "it refers to the whole document, which is not a schema \
                                     typify knows (`$ref # is missing`)"
            .to_string(),
        None => format!("it has no `/` (`expected a '/' in $ref: {reference}`)"),
        Some(name) => format!(
            "typify looks it up as components.schemas['{name}'] (the last segment, whatever \
             comes before it), which does not exist, and panics (`$ref {reference} is missing`)"
        ),
    };
    let message = format!("The schema reference `{reference}` cannot be resolved: {why}.");
    let fix = match name {
        Some(name) => {
            // A schema of that name under another spelling is the likely intent.
            let existing = doc
                .pointer("/components/schemas")
                .and_then(Value::as_object)
                .and_then(|map| map.keys().find(|k| k.eq_ignore_ascii_case(&name)).cloned());
            match existing {
                Some(existing) => SuggestedFix::update(
                    at.path(),
                    format!("Point at the existing schema `{existing}`."),
                    json!({ "$ref": format!("{SCHEMA_REF_PREFIX}{}", pointer::escape(&existing)) }),
                ),
                None => ctx.add_under(
                    &schemas,
                    format!(
                        "Define the missing schema `{name}` (`{{}}` accepts any JSON: better, its \
                         real schema)."
                    ),
                    json!({ name: {} }),
                ),
            }
        }
        None => SuggestedFix::remove(
            at.path(),
            "Drop the reference, or point it at a schema in components.schemas.",
        ),
    };
    ctx.report(at, Problem::UnresolvableRef, message, fix);
}

/// The shape of a JSON body for comparing responses: the schema without the annotations that do
/// not change the Rust type, with references reduced to the name typify resolves them by.
pub(crate) fn shape(schema: &Value) -> Value {
    if let Some(reference) = reference_of(schema) {
        let name = pointer::unescape(reference.rsplit('/').next().unwrap_or(reference));
        return json!({ "$ref": name });
    }
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        let value = match key.as_str() {
            "description" | "example" | "externalDocs" | "deprecated" => continue,
            "properties" => match value {
                Value::Object(props) => {
                    Value::Object(props.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
                }
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => shape(value),
            "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}
