//! Reading schemas the way the generator does: references, the `allOf: [one]` wrapper of a
//! nullable or annotated reference, nullability, type labels, and value-set inclusion.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::document::{SCHEMA_REF_PREFIX, resolve};
use crate::open_enums::OPEN_ENUM_MARK;

/// Keywords that narrow the values of a schema without changing its type.
pub const CONSTRAINTS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// The component name of a `#/components/schemas/X` reference.
pub fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix(SCHEMA_REF_PREFIX)
        .map(|s| s.split('/').next().unwrap_or(s))
}

/// The component schema of that name.
pub fn component<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.pointer("/components/schemas")?.get(name)
}

/// A schema seen through the wrapper 3.0 needs for an annotated or nullable reference
/// (`{allOf: [{$ref}], nullable: true, description}`): the wrapped schema is what counts.
#[derive(Debug, Clone)]
pub struct View<'a> {
    /// The schema that defines the type (the single `allOf` member, or the node itself).
    pub target: &'a Value,
    /// Its pointer.
    pub pointer: String,
    /// `nullable: true` on the node or on the wrapped schema.
    pub nullable: bool,
}

impl<'a> View<'a> {
    pub fn of(node: &'a Value, pointer: &str) -> View<'a> {
        let nullable = is_true(node.get("nullable"));
        if let Some([single]) = node
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            && !has_structure(node)
        {
            let inner = View::of(single, &format!("{pointer}/allOf/0"));
            return View {
                nullable: nullable || inner.nullable,
                ..inner
            };
        }
        View {
            target: node,
            pointer: pointer.to_string(),
            nullable,
        }
    }

    pub fn ref_name(&self) -> Option<&'a str> {
        ref_name(self.target)
    }
}

/// Whether a schema has keywords that define a type on their own (beyond annotations).
fn has_structure(node: &Value) -> bool {
    [
        "type",
        "properties",
        "items",
        "enum",
        "anyOf",
        "oneOf",
        "additionalProperties",
        "$ref",
    ]
    .iter()
    .any(|k| node.get(k).is_some())
}

pub fn is_true(value: Option<&Value>) -> bool {
    value.and_then(Value::as_bool).unwrap_or(false)
}

/// The `required` names of an object schema.
pub fn required(schema: &Value) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Whether a response enum stays open in the generated client (unknown values are kept).
pub fn is_open_enum(schema: &Value) -> bool {
    is_true(schema.get(OPEN_ENUM_MARK))
}

/// Enum values as text (strings bare, others as JSON).
pub fn enum_values(schema: &Value) -> Option<Vec<String>> {
    Some(
        schema
            .get("enum")?
            .as_array()?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect(),
    )
}

/// A short description of a schema's type for people: `string (uuid)`, `Session`,
/// `array of Session`, `integer (int32)`, `string enum`, `object`.
pub fn label(schema: &Value) -> String {
    let view = View::of(schema, "");
    let target = view.target;
    let base = if let Some(name) = ref_name(target) {
        name.to_string()
    } else if let Some(ty) = target.get("type").and_then(Value::as_str) {
        let mut text = match ty {
            "array" => match target.get("items") {
                Some(items) => format!("array of {}", label(items)),
                None => "array".into(),
            },
            "string" if target.get("enum").is_some() => "string enum".into(),
            other => other.to_string(),
        };
        if let Some(format) = target.get("format").and_then(Value::as_str) {
            text.push_str(&format!(" ({format})"));
        }
        text
    } else if let Some(branches) = ["anyOf", "oneOf", "allOf"]
        .iter()
        .find_map(|k| target.get(*k).and_then(Value::as_array).map(|b| (*k, b)))
    {
        let parts: Vec<String> = branches.1.iter().map(label).collect();
        format!("{}[{}]", branches.0, parts.join(", "))
    } else if target.get("properties").is_some() {
        "object".into()
    } else {
        "any JSON value".into()
    };
    if view.nullable {
        format!("{base}, nullable")
    } else {
        base
    }
}

/// The part of a schema that decides its type (not its constraints, enum values, properties
/// or annotations): compared to tell a type change from a change within the type.
pub fn type_signature(schema: &Value) -> String {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let format = schema.get("format").and_then(Value::as_str).unwrap_or("");
    let has_enum = schema.get("enum").is_some();
    let composition: Vec<String> = ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| {
            let branches = schema.get(*k)?.as_array()?;
            Some(format!("{k}{}", branches.len()))
        })
        .collect();
    let object = ty.is_empty() && schema.get("properties").is_some();
    format!(
        "{ty}|{format}|{has_enum}|{}|{object}",
        composition.join(",")
    )
}

/// Whether every value `inner` allows is allowed by `outer` (each resolved in its document).
/// Errs on the side of `false` where it cannot tell.
pub fn values_within(inner_doc: &Value, inner: &Value, outer_doc: &Value, outer: &Value) -> bool {
    within(inner_doc, inner, outer_doc, outer, 0)
}

fn within(
    inner_doc: &Value,
    inner: &Value,
    outer_doc: &Value,
    outer: &Value,
    depth: usize,
) -> bool {
    if depth > 24 {
        return false;
    }
    let (iv, ov) = (View::of(inner, ""), View::of(outer, ""));
    let (i, o) = (resolve(inner_doc, iv.target), resolve(outer_doc, ov.target));
    let i_nullable = iv.nullable || is_true(i.get("nullable"));
    let o_nullable = ov.nullable || is_true(o.get("nullable"));
    if i_nullable && !o_nullable {
        return false;
    }
    if is_any(o) {
        return true;
    }
    if is_any(i) {
        return false;
    }
    // Alternatives: every inner branch must fit some outer branch (or the outer schema).
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = i.get(key).and_then(Value::as_array) {
            return branches
                .iter()
                .all(|b| within(inner_doc, b, outer_doc, o, depth + 1));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = o.get(key).and_then(Value::as_array) {
            return branches
                .iter()
                .any(|b| within(inner_doc, i, outer_doc, b, depth + 1));
        }
    }
    if i.get("allOf").is_some() || o.get("allOf").is_some() {
        return i == o;
    }
    let (it, ot) = (type_of(i), type_of(o));
    let types_fit = it == ot || (it == "integer" && ot == "number");
    if !types_fit {
        return false;
    }
    if let Some(outer_values) = enum_values(o) {
        if is_open_enum(o) {
            // The old client keeps values it does not know.
        } else {
            match enum_values(i) {
                Some(inner_values) => {
                    if !inner_values.iter().all(|v| outer_values.contains(v)) {
                        return false;
                    }
                }
                None => return false,
            }
        }
    }
    if !format_within(it, i.get("format"), ot, o.get("format")) {
        return false;
    }
    match ot {
        "array" => match (i.get("items"), o.get("items")) {
            (Some(a), Some(b)) => within(inner_doc, a, outer_doc, b, depth + 1),
            (_, None) => true,
            (None, Some(b)) => is_any(b),
        },
        "object" => object_within(inner_doc, i, outer_doc, o, depth),
        _ => true,
    }
}

fn object_within(inner_doc: &Value, i: &Value, outer_doc: &Value, o: &Value, depth: usize) -> bool {
    let empty = serde_json::Map::new();
    let ip = i
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let op = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (ir, or) = (required(i), required(o));
    if !or.is_subset(&ir) {
        return false;
    }
    let closed = o.get("additionalProperties") == Some(&Value::Bool(false));
    ip.iter().all(|(name, schema)| match op.get(name) {
        Some(other) => within(inner_doc, schema, outer_doc, other, depth + 1),
        None => !closed,
    })
}

fn is_any(schema: &Value) -> bool {
    schema.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| k.starts_with("x-") || ANNOTATIONS.contains(&k.as_str()))
    })
}

/// Keywords that describe without constraining.
pub const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "example",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "externalDocs",
    "xml",
];

fn type_of(schema: &Value) -> &str {
    match schema.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if schema.get("properties").is_some() => "object",
        None if schema.get("items").is_some() => "array",
        None => "",
    }
}

/// Integer formats widen (`int32` within `int64` within no format); a string format narrows a
/// plain string; otherwise formats must match.
fn format_within(it: &str, inner: Option<&Value>, ot: &str, outer: Option<&Value>) -> bool {
    let (inner, outer) = (
        inner.and_then(Value::as_str).unwrap_or(""),
        outer.and_then(Value::as_str).unwrap_or(""),
    );
    if inner == outer || outer.is_empty() {
        return true;
    }
    let rank = |f: &str| match f {
        "int8" | "uint8" => Some(1),
        "int16" | "uint16" => Some(2),
        "int32" | "int" | "uint32" | "uint" => Some(3),
        "int64" | "uint64" => Some(4),
        "float" => Some(5),
        "double" => Some(6),
        _ => None,
    };
    if matches!(it, "integer" | "number") && matches!(ot, "integer" | "number") {
        return match (rank(inner), rank(outer)) {
            (Some(a), Some(b)) => a <= b,
            _ => false,
        };
    }
    false
}

/// How a constraint change moves the set of allowed values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Fewer values are allowed.
    Tightened,
    /// More values are allowed.
    Loosened,
    /// Some values are gained and others lost, or it cannot be told (a new `pattern`).
    Changed,
}

impl Direction {
    pub fn word(self) -> &'static str {
        match self {
            Direction::Tightened => "tightened",
            Direction::Loosened => "loosened",
            Direction::Changed => "changed",
        }
    }
}

/// The direction of the change of one constraint keyword from `old` to `new` (either absent).
pub fn constraint_direction(keyword: &str, old: Option<&Value>, new: Option<&Value>) -> Direction {
    let lower_bound = matches!(keyword, "minimum" | "minLength" | "minItems");
    let upper_bound = matches!(keyword, "maximum" | "maxLength" | "maxItems");
    let flag = matches!(
        keyword,
        "uniqueItems" | "exclusiveMinimum" | "exclusiveMaximum"
    );
    match (old, new) {
        (None, Some(v)) if flag && v == &Value::Bool(false) => Direction::Loosened,
        (None, Some(_)) => Direction::Tightened,
        (Some(v), None) if flag && v == &Value::Bool(false) => Direction::Tightened,
        (Some(_), None) => Direction::Loosened,
        (Some(a), Some(b)) => {
            if flag {
                return if is_true(Some(b)) {
                    Direction::Tightened
                } else {
                    Direction::Loosened
                };
            }
            match (a.as_f64(), b.as_f64()) {
                (Some(a), Some(b)) if lower_bound => {
                    if b > a {
                        Direction::Tightened
                    } else {
                        Direction::Loosened
                    }
                }
                (Some(a), Some(b)) if upper_bound => {
                    if b < a {
                        Direction::Tightened
                    } else {
                        Direction::Loosened
                    }
                }
                _ => Direction::Changed,
            }
        }
        (None, None) => Direction::Changed,
    }
}

/// Combines the directions of several keywords.
pub fn combine(directions: impl IntoIterator<Item = Direction>) -> Direction {
    let mut result: Option<Direction> = None;
    for d in directions {
        result = Some(match (result, d) {
            (None, d) => d,
            (Some(a), b) if a == b => a,
            _ => Direction::Changed,
        });
    }
    result.unwrap_or(Direction::Changed)
}

/// Whether typify checks these constraints when it decodes a value: strings with a length or
/// pattern become validating newtypes, and an integer with `minimum: 1` a `NonZero` type.
pub fn rust_type_validates(schema: &Value) -> bool {
    let ty = type_of(schema);
    (ty == "string"
        && schema.get("format").is_none()
        && ["minLength", "maxLength", "pattern"]
            .iter()
            .any(|k| schema.get(*k).is_some()))
        || (ty == "integer" && schema.get("minimum").and_then(Value::as_f64) == Some(1.0))
}

/// Structural equality of two schemas for rename detection: annotations and our own markers
/// are ignored, and references compare through `renamed` (old name → new name).
pub fn same_shape(old: &Value, new: &Value, renamed: &dyn Fn(&str) -> Option<String>) -> bool {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let keep =
                |k: &String| !ANNOTATIONS.contains(&k.as_str()) && !k.starts_with("x-creditdata-");
            let ka: BTreeSet<&String> = a.keys().filter(|k| keep(k)).collect();
            let kb: BTreeSet<&String> = b.keys().filter(|k| keep(k)).collect();
            if ka != kb {
                return false;
            }
            ka.into_iter().all(|k| {
                if k == "$ref" {
                    let (ra, rb) = (a[k].as_str().unwrap_or(""), b[k].as_str().unwrap_or(""));
                    return match ra.strip_prefix(SCHEMA_REF_PREFIX) {
                        Some(name) => {
                            let mapped = renamed(name).unwrap_or_else(|| name.to_string());
                            rb == format!("{SCHEMA_REF_PREFIX}{mapped}")
                        }
                        None => ra == rb,
                    };
                }
                if k == "properties" {
                    // Property names are data, not annotations: compare every value.
                    let (pa, pb) = (&a[k], &b[k]);
                    return match (pa.as_object(), pb.as_object()) {
                        (Some(pa), Some(pb)) => {
                            pa.len() == pb.len()
                                && pa.iter().all(|(name, s)| {
                                    pb.get(name).is_some_and(|t| same_shape(s, t, renamed))
                                })
                        }
                        _ => pa == pb,
                    };
                }
                same_shape(&a[k], &b[k], renamed)
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_shape(x, y, renamed))
        }
        _ => old == new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_formats_widen_and_numbers_absorb_integers() {
        let doc = json!({});
        let int32 = json!({"type": "integer", "format": "int32"});
        let int64 = json!({"type": "integer", "format": "int64"});
        let number = json!({"type": "number"});
        let string = json!({"type": "string"});
        assert!(values_within(&doc, &int32, &doc, &int64));
        assert!(!values_within(&doc, &int64, &doc, &int32));
        assert!(values_within(&doc, &int32, &doc, &number));
        assert!(!values_within(&doc, &string, &doc, &number));
    }

    #[test]
    fn nullability_enums_and_open_enums() {
        let doc = json!({});
        let plain = json!({"type": "string"});
        let nullable = json!({"type": "string", "nullable": true});
        let ab = json!({"type": "string", "enum": ["A", "B"]});
        let abc = json!({"type": "string", "enum": ["A", "B", "C"]});
        let open_ab = json!({"type": "string", "enum": ["A", "B"], "x-creditdata-open-enum": true});
        assert!(!values_within(&doc, &nullable, &doc, &plain));
        assert!(values_within(&doc, &plain, &doc, &nullable));
        assert!(values_within(&doc, &ab, &doc, &abc));
        assert!(!values_within(&doc, &abc, &doc, &ab));
        assert!(values_within(&doc, &abc, &doc, &open_ab));
        assert!(values_within(&doc, &ab, &doc, &plain));
        assert!(!values_within(&doc, &plain, &doc, &ab));
    }

    #[test]
    fn nullable_reference_wrappers_are_seen_through() {
        let wrapped = json!({"allOf": [{"$ref": "#/components/schemas/Paging"}], "nullable": true, "description": "d"});
        let view = View::of(&wrapped, "/p");
        assert_eq!(view.ref_name(), Some("Paging"));
        assert!(view.nullable);
        assert_eq!(view.pointer, "/p/allOf/0");
        assert_eq!(label(&wrapped), "Paging, nullable");
    }

    #[test]
    fn constraint_directions() {
        let d =
            |k, a: Option<Value>, b: Option<Value>| constraint_direction(k, a.as_ref(), b.as_ref());
        assert_eq!(d("minimum", None, Some(json!(0))), Direction::Tightened);
        assert_eq!(
            d("maximum", Some(json!(100)), Some(json!(500))),
            Direction::Loosened
        );
        assert_eq!(d("maxLength", Some(json!(10)), None), Direction::Loosened);
        assert_eq!(
            d("pattern", Some(json!("a")), Some(json!("b"))),
            Direction::Changed
        );
        assert_eq!(
            combine([Direction::Tightened, Direction::Loosened]),
            Direction::Changed
        );
    }

    #[test]
    fn shapes_compare_through_renames_and_ignore_annotations() {
        let a = json!({"type": "object", "description": "x", "properties": {"s": {"$ref": "#/components/schemas/Old"}}});
        let b =
            json!({"type": "object", "properties": {"s": {"$ref": "#/components/schemas/New"}}});
        assert!(!same_shape(&a, &b, &|_| None));
        assert!(same_shape(&a, &b, &|n| (n == "Old").then(|| "New".to_string())));
        let c =
            json!({"type": "object", "properties": {"t": {"$ref": "#/components/schemas/New"}}});
        assert!(!same_shape(&a, &c, &|n| (n == "Old").then(|| "New".to_string())));
    }
}
