//! The Schema Object rules of the down-convert stage, one function per rule; the module docs of
//! [`super`] say what each does and why.

use serde_json::{Map, Value};

use crate::document::is_extension;
use crate::document::ordered::{set_after, splice};

const KNOWN_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Keywords without a 3.0 form, and what dropping them means.
const DROPPED: &[(&str, &str)] = &[
    (
        "$schema",
        "it selects a JSON Schema dialect; 3.0 schemas follow the 3.0 Schema Object rules",
    ),
    (
        "$id",
        "references to this schema by its URI will not resolve",
    ),
    ("$anchor", "references to this anchor will not resolve"),
    (
        "$dynamicAnchor",
        "references to this anchor will not resolve",
    ),
    (
        "$dynamicRef",
        "the schema accepts any value where the dynamic reference applied",
    ),
    ("$vocabulary", "it declares JSON Schema vocabularies"),
    (
        "$comment",
        "a note for schema authors; the client loses nothing",
    ),
    (
        "$defs",
        "3.0 tools resolve references only into `components/schemas`: move the definitions \
         that are referenced there with an overlay",
    ),
    (
        "unevaluatedProperties",
        "the object accepts properties no subschema names",
    ),
    (
        "unevaluatedItems",
        "the array accepts items no subschema covers",
    ),
    (
        "dependentRequired",
        "properties the presence of others makes required are no longer required",
    ),
    (
        "dependentSchemas",
        "schemas the presence of a property applies are no longer checked",
    ),
    (
        "contains",
        "the array no longer has to contain a matching item",
    ),
    ("minContains", "it only qualifies `contains`"),
    ("maxContains", "it only qualifies `contains`"),
    ("if", "the conditional schema is no longer checked"),
    ("then", "the conditional schema is no longer checked"),
    ("else", "the conditional schema is no longer checked"),
    (
        "patternProperties",
        "properties whose names match a pattern are no longer checked",
    ),
    ("propertyNames", "property names are no longer checked"),
    ("contentSchema", "the schema of the decoded content is lost"),
];

/// Annotations a null branch may carry and still be only "null".
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "externalDocs",
    "xml",
    "nullable",
    "enum",
];

/// Rewrites one schema's own keywords in place (subschemas are not visited). Returns the types
/// the schema has to be split into, once its subschemas are converted ([`split_types`]).
pub(super) fn rewrite(
    schema: &mut Map<String, Value>,
    notes: &mut Notes,
) -> Option<Vec<&'static str>> {
    drop_unsupported(schema, notes);
    tuples(schema, notes);
    constant(schema, notes);
    let (types, split) = types(schema, notes);
    examples(schema, notes);
    exclusive_bound(schema, notes, "exclusiveMinimum", "minimum", true);
    exclusive_bound(schema, notes, "exclusiveMaximum", "maximum", false);
    content(schema, notes, types.as_deref());
    null_in_enum(schema);
    if types.is_some_and(|t| t.contains(&"array")) && !schema.contains_key("items") {
        set_after(schema, "type", "items", Value::Object(Map::new()));
    }
    split
}

fn drop_unsupported(schema: &mut Map<String, Value>, notes: &mut Notes) {
    for (keyword, consequence) in DROPPED {
        if schema.shift_remove(*keyword).is_some() {
            notes.add(
                keyword,
                format!("`{keyword}` has no OpenAPI 3.0 form: dropped ({consequence})"),
            );
        }
    }
}

fn tuples(schema: &mut Map<String, Value>, notes: &mut Notes) {
    let any = || Value::Object(Map::new());
    if let Some(items @ Value::Array(_)) = schema.get_mut("items") {
        *items = any();
        notes.add(
            "items",
            "`items` as an array (tuple validation of JSON Schema drafts before 2020-12, \
             invalid in OpenAPI 3.1 too) has no OpenAPI 3.0 form: replaced by `{}`, so the \
             array accepts items of any type",
        );
    }
    if schema.contains_key("prefixItems") {
        let message = if let Some(items) = schema.get_mut("items") {
            *items = any();
            schema.shift_remove("prefixItems");
            "`prefixItems` (tuple validation) has no OpenAPI 3.0 form: dropped, and `items` \
             (which applied after the tuple) replaced by `{}`, so the array accepts items of \
             any type"
        } else {
            splice(schema, "prefixItems", vec![("items".into(), any())]);
            "`prefixItems` (tuple validation) has no OpenAPI 3.0 form: replaced by `items: {}`, \
             so the array accepts items of any type"
        };
        notes.add("prefixItems", message);
    }
}

fn constant(schema: &mut Map<String, Value>, notes: &mut Notes) {
    let Some(value) = schema.get("const").cloned() else {
        return;
    };
    if let Some(Value::Array(values)) = schema.get("enum")
        && !values.contains(&value)
    {
        notes.add(
            "const",
            "`const` and `enum` have no value in common (nothing is valid): kept `const` as \
             `enum`",
        );
    }
    let mut entries = Vec::new();
    if !schema.contains_key("type") {
        let inferred = match &value {
            Value::String(_) => Some("string"),
            Value::Bool(_) => Some("boolean"),
            Value::Number(_) if is_integer(&value) => Some("integer"),
            Value::Number(_) => Some("number"),
            _ => None,
        };
        if let Some(inferred) = inferred {
            entries.push(("type".to_string(), Value::String(inferred.into())));
        }
    }
    entries.push(("enum".to_string(), Value::Array(vec![value])));
    splice(schema, "const", entries);
}

/// Returns the non-null types a value of the schema may have (`None`: any, or a `type` this
/// stage does not understand), and the types to split into, if there are several.
fn types(
    schema: &mut Map<String, Value>,
    notes: &mut Notes,
) -> (Option<Vec<&'static str>>, Option<Vec<&'static str>>) {
    let known = |name: &str| KNOWN_TYPES.iter().copied().find(|t| *t == name);
    let (names, listed) = match schema.get("type") {
        Some(Value::String(name)) => match known(name) {
            Some(name) => (vec![name], false),
            None => return (None, None),
        },
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut names = Vec::new();
            for item in items {
                match item.as_str().and_then(known) {
                    Some(name) if names.contains(&name) => {}
                    Some(name) => names.push(name),
                    None => return (None, None),
                }
            }
            (names, true)
        }
        _ => return (None, None),
    };
    let nullable = names.contains(&"null");
    let mut others: Vec<&'static str> = names.into_iter().filter(|t| *t != "null").collect();
    if others.contains(&"number") {
        others.retain(|t| *t != "integer");
    }
    if let Some(number) = number_readable_from_string(schema, &others) {
        schema.shift_remove("pattern");
        notes.add(
            "type",
            format!(
                "`type: [{number}, string]` with the pattern of a numeric string is how ASP.NET \
                 Core (System.Text.Json number handling `AllowReadingFromString`, its web default) \
                 says \"a number, also accepted as a numeric string\": collapsed to `type: \
                 {number}` and the pattern dropped, so the client sends and reads numbers. If the \
                 service writes this number as a string (`WriteAsString`), type it `string` with \
                 an overlay"
            ),
        );
        others = vec![number];
    }
    if others.len() > 1
        && let Some(Value::Array(values)) = schema.get("enum")
    {
        let possible: Vec<_> = others
            .iter()
            .copied()
            .filter(|t| values.iter().any(|v| has_type(v, t)))
            .collect();
        if !possible.is_empty() {
            others = possible;
        }
    }
    let set_nullable = |schema: &mut Map<String, Value>| {
        if nullable {
            set_after(schema, "type", "nullable", Value::Bool(true));
        }
    };
    match others.as_slice() {
        [] => {
            splice(schema, "type", vec![("nullable".into(), Value::Bool(true))]);
            if !schema.contains_key("enum") {
                set_after(schema, "nullable", "enum", Value::Array(vec![Value::Null]));
            }
            (Some(Vec::new()), None)
        }
        [only] => {
            if listed {
                schema.insert("type".into(), Value::String((*only).into()));
            }
            set_nullable(schema);
            (Some(others), None)
        }
        several => {
            set_nullable(schema);
            let listed = several.join(", ");
            notes.add(
                "type",
                format!(
                    "a `type` of several types ({listed}) has no OpenAPI 3.0 form: split into \
                     `anyOf` with one schema per type, each carrying the keywords that apply \
                     to its type"
                ),
            );
            (Some(others.clone()), Some(others))
        }
    }
}

/// The patterns System.Text.Json's schema exporter gives a number that may be read from (or
/// written as) a string: integers, IEEE floating point, and `decimal`.
const NUMERIC_STRING_PATTERNS: &[&str] = &[
    r"^-?(?:0|[1-9]\d*)$",
    r"^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$",
    r"^-?(?:0|[1-9]\d*)(?:\.\d+)?$",
];

/// `integer` or `number`, when the schema's non-null types are that and `string` and its
/// `pattern` admits only numerals: the string is the same number in another spelling.
fn number_readable_from_string(
    schema: &Map<String, Value>,
    types: &[&'static str],
) -> Option<&'static str> {
    let number = match types {
        [number @ ("integer" | "number"), "string"]
        | ["string", number @ ("integer" | "number")] => *number,
        _ => return None,
    };
    let pattern = schema.get("pattern")?.as_str()?;
    NUMERIC_STRING_PATTERNS.contains(&pattern).then_some(number)
}

fn examples(schema: &mut Map<String, Value>, notes: &mut Notes) {
    let Some(examples) = schema.get("examples") else {
        return;
    };
    match examples {
        Value::Array(values) if schema.contains_key("example") => {
            if !values.is_empty() {
                notes.add(
                    "examples",
                    "a 3.0 schema has a single `example`, and this one already has one: \
                     `examples` dropped",
                );
            }
            schema.shift_remove("examples");
        }
        Value::Array(values) => match values.split_first() {
            None => {
                schema.shift_remove("examples");
            }
            Some((first, rest)) => {
                if !rest.is_empty() {
                    notes.add(
                        "examples",
                        format!(
                            "a 3.0 schema has a single `example`: kept the first of {} and \
                             dropped the other {}",
                            values.len(),
                            rest.len()
                        ),
                    );
                }
                let first = first.clone();
                splice(schema, "examples", vec![("example".into(), first)]);
            }
        },
        _ => {
            notes.add(
                "examples",
                "`examples` of a schema is an array in 3.1 and absent in 3.0; this one is not \
                 an array: dropped",
            );
            schema.shift_remove("examples");
        }
    }
}

/// 3.1's numeric `exclusiveMinimum: n` is 3.0's `minimum: n, exclusiveMinimum: true`
/// (`lower`), and likewise for the maximum.
fn exclusive_bound(
    schema: &mut Map<String, Value>,
    notes: &mut Notes,
    exclusive: &str,
    inclusive: &str,
    lower: bool,
) {
    let Some(Value::Number(limit)) = schema.get(exclusive).cloned() else {
        return;
    };
    let Some(Value::Number(bound)) = schema.get(inclusive).cloned() else {
        splice(
            schema,
            exclusive,
            vec![
                (inclusive.into(), Value::Number(limit)),
                (exclusive.into(), Value::Bool(true)),
            ],
        );
        return;
    };
    let (Some(x), Some(y)) = (limit.as_f64(), bound.as_f64()) else {
        return;
    };
    let exclusive_is_stricter = if lower { x >= y } else { x <= y };
    if exclusive_is_stricter {
        schema.insert(inclusive.into(), Value::Number(limit.clone()));
        schema.insert(exclusive.into(), Value::Bool(true));
        notes.add(
            exclusive,
            format!(
                "`{inclusive}: {bound}` and `{exclusive}: {limit}` both given: kept the stricter \
                 `{exclusive}`, as `{inclusive}: {limit}, {exclusive}: true`"
            ),
        );
    } else {
        schema.shift_remove(exclusive);
        notes.add(
            exclusive,
            format!(
                "`{inclusive}: {bound}` and `{exclusive}: {limit}` both given: kept the stricter \
                 `{inclusive}: {bound}` and dropped `{exclusive}`"
            ),
        );
    }
}

fn content(schema: &mut Map<String, Value>, notes: &mut Notes, types: Option<&[&str]>) {
    let encoding = schema.get("contentEncoding").map(display);
    let media_type = schema.get("contentMediaType").map(display);
    if encoding.is_none() && media_type.is_none() {
        return;
    }
    let may_be_string = types.is_some_and(|t| t.contains(&"string"));
    let base64 = encoding
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("base64") || e.eq_ignore_ascii_case("base64url"));
    let binary = media_type
        .as_deref()
        .is_some_and(|m| !is_text_media_type(m));
    let conversion = if !may_be_string {
        None
    } else if base64 {
        Some(("contentEncoding", "byte"))
    } else if encoding.is_none() && binary {
        Some(("contentMediaType", "binary"))
    } else {
        None
    };
    if let Some((keyword, format)) = conversion {
        match schema.get("format") {
            None => splice(
                schema,
                keyword,
                vec![("format".into(), Value::String(format.into()))],
            ),
            Some(existing) if existing.as_str() == Some(format) => {
                schema.shift_remove(keyword);
            }
            Some(existing) => {
                let existing = display(existing);
                notes.add(
                    keyword,
                    format!(
                        "`{keyword}` has no OpenAPI 3.0 form: dropped (it would be `format: \
                         {format}`, but the schema's own `format: {existing}` is kept)"
                    ),
                );
                schema.shift_remove(keyword);
            }
        }
    }
    let not_string = "it applies to strings only, and this schema is not declared `type: string`";
    for keyword in ["contentEncoding", "contentMediaType"] {
        if conversion.is_some_and(|(converted, _)| converted == keyword) {
            continue;
        }
        let Some(value) = schema.shift_remove(keyword) else {
            continue;
        };
        let value = display(&value);
        let reason = match keyword {
            _ if !may_be_string => not_string.to_string(),
            "contentEncoding" => {
                format!(
                    "`{value}` is not base64, the only encoding 3.0 can name, as `format: byte`"
                )
            }
            _ if base64 => format!(
                "the string is base64, now `format: byte`; the media type `{value}` of the \
                 decoded content is lost"
            ),
            _ if binary => "its content encoding is not base64, so the string is not raw \
                            binary (`format: binary`) either"
                .to_string(),
            _ => format!("`{value}` is text: an annotation only"),
        };
        notes.add(
            keyword,
            format!("`{keyword}` has no OpenAPI 3.0 form: dropped ({reason})"),
        );
    }
}

fn null_in_enum(schema: &mut Map<String, Value>) {
    let has_null =
        matches!(schema.get("enum"), Some(Value::Array(values)) if values.contains(&Value::Null));
    if has_null
        && !schema.contains_key("type")
        && schema.get("nullable") != Some(&Value::Bool(true))
    {
        set_after(schema, "enum", "nullable", Value::Bool(true));
    }
}

/// Replaces a `type` of several types by `anyOf` with one schema per type.
pub(super) fn split_types(schema: &mut Map<String, Value>, types: &[&'static str]) {
    let into_all_of = schema.contains_key("anyOf");
    if into_all_of && !matches!(schema.get("allOf"), None | Some(Value::Array(_))) {
        // Nowhere to put it without changing meaning; preflight reports the array `type`.
        return;
    }
    let numeric_format = schema
        .get("format")
        .and_then(Value::as_str)
        .map(is_numeric_format);
    let format_goes_to = |t: &str| match numeric_format {
        Some(true) => t == "integer" || t == "number",
        Some(false) => t == "string",
        None => false,
    };
    let enum_values = match schema.get("enum") {
        Some(Value::Array(values)) => Some(values.clone()),
        _ => None,
    };
    let mut moved: Vec<String> = Vec::new();
    let mut branches = Vec::new();
    for &t in types {
        let mut branch = Map::new();
        branch.insert("type".into(), Value::String(t.into()));
        for (key, value) in schema.iter() {
            let applies =
                keywords_of(t).contains(&key.as_str()) || (key == "format" && format_goes_to(t));
            if applies {
                branch.insert(key.clone(), value.clone());
                if !moved.contains(key) {
                    moved.push(key.clone());
                }
            }
        }
        if let Some(values) = &enum_values {
            let own: Vec<Value> = values.iter().filter(|v| has_type(v, t)).cloned().collect();
            if own.is_empty() {
                continue;
            }
            branch.insert("enum".into(), Value::Array(own));
        }
        branches.push(Value::Object(branch));
    }
    if enum_values.is_some() {
        moved.push("enum".into());
    }
    let any_of = Value::Array(branches);
    if into_all_of {
        let mut wrapper = Map::new();
        wrapper.insert("anyOf".into(), any_of);
        if let Some(Value::Array(all_of)) = schema.get_mut("allOf") {
            all_of.push(Value::Object(wrapper));
            schema.shift_remove("type");
        } else {
            let all_of = Value::Array(vec![Value::Object(wrapper)]);
            splice(schema, "type", vec![("allOf".into(), all_of)]);
        }
    } else {
        splice(schema, "type", vec![("anyOf".into(), any_of)]);
    }
    for key in moved {
        schema.shift_remove(&key);
    }
}

fn keywords_of(t: &str) -> &'static [&'static str] {
    match t {
        "string" => &["minLength", "maxLength", "pattern"],
        "integer" | "number" => &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
        "object" => &[
            "properties",
            "required",
            "additionalProperties",
            "minProperties",
            "maxProperties",
        ],
        "array" => &["items", "minItems", "maxItems", "uniqueItems"],
        _ => &[],
    }
}

/// Removes the null branches of a `oneOf`/`anyOf` in favour of `nullable: true`; a single
/// branch left over moves to `allOf`.
pub(super) fn lift_null_branches(schema: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(branches)) = schema.get(key) else {
        return;
    };
    let (nulls, others): (Vec<&Value>, Vec<&Value>) =
        branches.iter().partition(|b| is_null_only(b));
    if nulls.is_empty() || others.is_empty() {
        return;
    }
    let others: Vec<Value> = others.into_iter().cloned().collect();
    let holder = if others.len() == 1 {
        match schema.get_mut("allOf") {
            None => {
                splice(schema, key, vec![("allOf".into(), Value::Array(others))]);
                "allOf"
            }
            Some(Value::Array(all_of)) => {
                all_of.extend(others);
                schema.shift_remove(key);
                "allOf"
            }
            Some(_) => {
                schema.insert(key.into(), Value::Array(others));
                key
            }
        }
    } else {
        schema.insert(key.into(), Value::Array(others));
        key
    };
    set_after(schema, holder, "nullable", Value::Bool(true));
}

fn is_null_only(branch: &Value) -> bool {
    let Value::Object(map) = branch else {
        return false;
    };
    matches!(map.get("enum"), Some(Value::Array(values)) if values.as_slice() == [Value::Null])
        && map
            .keys()
            .all(|k| ANNOTATIONS.contains(&k.as_str()) || is_extension(k))
}

/// `$ref` with siblings becomes `allOf: [{$ref}]` plus the siblings, which 3.0 then honours.
pub(super) fn wrap_ref(schema: &mut Map<String, Value>) {
    if schema.len() < 2 {
        return;
    }
    let Some(reference @ Value::String(_)) = schema.get("$ref").cloned() else {
        return;
    };
    let mut target = Map::new();
    target.insert("$ref".into(), reference);
    match schema.get_mut("allOf") {
        None => splice(
            schema,
            "$ref",
            vec![("allOf".into(), Value::Array(vec![Value::Object(target)]))],
        ),
        Some(Value::Array(all_of)) => {
            all_of.insert(0, Value::Object(target));
            schema.shift_remove("$ref");
        }
        Some(_) => {}
    }
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => is_integer(value),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// JSON Schema counts `1.0` as an integer too.
fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn is_numeric_format(format: &str) -> bool {
    matches!(
        format,
        "int8"
            | "int16"
            | "int32"
            | "int64"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "float"
            | "double"
            | "decimal"
    )
}

/// Text, not bytes: `text/*`, JSON, XML, YAML and form data, with or without a `+suffix`.
fn is_text_media_type(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    kind == "text"
        || matches!(
            subtype,
            "json" | "xml" | "yaml" | "x-yaml" | "x-www-form-urlencoded" | "javascript"
        )
        || ["+json", "+xml", "+yaml"]
            .iter()
            .any(|suffix| subtype.ends_with(suffix))
}

/// A keyword's value for a message: strings without quotes, anything else as JSON.
fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Warnings about one schema's keywords, held until the walk reaches the keyword.
#[derive(Default)]
pub(super) struct Notes(Vec<(String, String)>);

impl Notes {
    fn add(&mut self, keyword: &str, message: impl Into<String>) {
        self.0.push((keyword.to_string(), message.into()));
    }

    pub(super) fn take(&mut self, keyword: &str) -> Vec<String> {
        let (taken, kept) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|(k, _)| k == keyword);
        self.0 = kept;
        taken.into_iter().map(|(_, message)| message).collect()
    }

    pub(super) fn rest(self) -> Vec<(String, String)> {
        self.0
    }
}
