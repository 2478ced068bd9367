//! A schema-valid, deterministic example of a schema of the description: what the mock answers
//! for an operation no hand-written code serves.
//!
//! No well-kept Rust crate generates JSON from a JSON Schema, so this is written here. It
//! respects what the effective description uses: `$ref`, `allOf` (merged), `oneOf`/`anyOf` (one
//! branch), `enum`, `const`, `type` (a 3.1 list too), `nullable`, `required` (every declared
//! member is produced), `format` (date, date-time, uuid, email, uri, byte), `minLength` and
//! `maxLength`, `pattern` (literals, classes, `\d`, `\w` and quantifiers; other patterns get
//! a plain string), `minimum`/`maximum` (exclusive too), `multipleOf`, `minItems`/`maxItems`.
//! Nesting deeper than [`MAX_DEPTH`] (a recursive schema) gets the smallest valid value.
//! The same schema and seed give the same value.

use base64::Engine as _;
use chrono::{Duration as ChronoDuration, NaiveDate, TimeZone as _, Utc};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Number, Value, json};

/// How deep an example nests before it stops following references.
pub const MAX_DEPTH: usize = 12;

/// Words for plain strings: readable in a response, never personal data.
const WORDS: &[&str] = &[
    "alpha", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island", "juniper",
];

/// An example of `schema`, drawn from `rng`.
pub fn example(document: &Value, schema: &Value, rng: &mut ChaCha8Rng) -> Value {
    Examples { document, rng }.value(schema, 0)
}

/// Fills every member `schema` requires that `value` lacks with an example drawn from `rng`,
/// and does the same inside the members and items `value` has (to [`MAX_DEPTH`]).
pub fn fill_required(document: &Value, schema: &Value, value: &mut Value, rng: &mut ChaCha8Rng) {
    fill_within(document, schema, value, rng, 0);
}

fn fill_within(
    document: &Value,
    schema: &Value,
    value: &mut Value,
    rng: &mut ChaCha8Rng,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = merged(document, schema);
    match value {
        Value::Object(members) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !members.contains_key(name) {
                    let member = properties
                        .and_then(|p| p.get(name))
                        .cloned()
                        .unwrap_or(json!({}));
                    // The least a service may send: `null` where the member allows it.
                    let value = if allows_null(&merged(document, &member)) {
                        Value::Null
                    } else {
                        example(document, &member, rng)
                    };
                    members.insert(name.to_owned(), value);
                }
            }
            for (name, member) in members.iter_mut() {
                if let Some(member_schema) = properties.and_then(|p| p.get(name)) {
                    fill_within(document, member_schema, member, rng, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(items_schema) = schema.get("items") {
                for item in items {
                    fill_within(document, items_schema, item, rng, depth + 1);
                }
            }
        }
        _ => {}
    }
}

struct Examples<'a> {
    document: &'a Value,
    rng: &'a mut ChaCha8Rng,
}

impl Examples<'_> {
    fn value(&mut self, schema: &Value, depth: usize) -> Value {
        let schema = merged(self.document, schema);
        if depth > MAX_DEPTH {
            return smallest(&schema);
        }
        if let Some(constant) = schema.get("const") {
            return constant.clone();
        }
        if let Some(Value::Array(options)) = schema.get("enum") {
            let present: Vec<&Value> = options.iter().filter(|v| !v.is_null()).collect();
            if present.is_empty() {
                return options.first().cloned().unwrap_or(Value::Null);
            }
            return present[self.rng.gen_range(0..present.len())].clone();
        }
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                let candidates: Vec<&Value> = branches.iter().filter(|b| !only_null(b)).collect();
                if let Some(branch) = candidates.first() {
                    // The first branch: with `oneOf`, a later one may also accept the first's
                    // values, but the first is the one the author lists as the usual shape.
                    let mut branch = (*branch).clone();
                    if let (Value::Object(branch_map), Value::Object(outer)) =
                        (&mut branch, &schema)
                    {
                        for (key, value) in outer {
                            if key != keyword {
                                branch_map.entry(key.clone()).or_insert(value.clone());
                            }
                        }
                    }
                    return self.value(&branch, depth + 1);
                }
                return Value::Null;
            }
        }
        match type_of(&schema) {
            "object" => self.object(&schema, depth),
            "array" => self.array(&schema, depth),
            "integer" => self.integer(&schema),
            "number" => self.number(&schema),
            "boolean" => Value::Bool(self.rng.gen_bool(0.5)),
            "null" => Value::Null,
            _ => Value::String(self.string(&schema)),
        }
    }

    fn object(&mut self, schema: &Value, depth: usize) -> Value {
        let mut out = Map::new();
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, member) in properties {
                if member.get("writeOnly") == Some(&Value::Bool(true)) {
                    continue;
                }
                out.insert(name.clone(), self.value(member, depth + 1));
            }
        }
        // A required member without a declaration may hold anything.
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                out.entry(name.to_owned())
                    .or_insert_with(|| Value::String(WORDS[0].to_owned()));
            }
        }
        Value::Object(out)
    }

    fn array(&mut self, schema: &Value, depth: usize) -> Value {
        let min = limit(schema, "minItems").unwrap_or(0);
        let max = limit(schema, "maxItems").unwrap_or(u64::MAX);
        let wanted = self.rng.gen_range(1..=2u64).clamp(min, max.max(min));
        let items = schema.get("items").cloned().unwrap_or(json!({}));
        let mut out = Vec::new();
        for _ in 0..wanted {
            let item = self.value(&items, depth + 1);
            // `uniqueItems`: a repeated item (an enum with few values) is not added twice.
            if schema.get("uniqueItems") == Some(&Value::Bool(true)) && out.contains(&item) {
                continue;
            }
            out.push(item);
        }
        Value::Array(out)
    }

    fn integer(&mut self, schema: &Value) -> Value {
        let (low, high) = bounds(schema);
        let format_high = match schema.get("format").and_then(Value::as_str) {
            Some("int32") => f64::from(i32::MAX),
            _ => 9_007_199_254_740_991.0,
        };
        let low = low
            .map(|l| l.ceil())
            .unwrap_or(0f64.min(high.unwrap_or(0.0)));
        let high = high
            .map(|h| h.floor())
            .unwrap_or(format_high)
            .min(low + 1000.0);
        let step = schema
            .get("multipleOf")
            .and_then(Value::as_f64)
            .filter(|m| *m >= 1.0)
            .unwrap_or(1.0);
        let mut value = if high > low {
            self.rng.gen_range(low as i64..=high as i64) as f64
        } else {
            low
        };
        value = (value / step).ceil() * step;
        if value > high {
            value -= step;
        }
        Value::Number(Number::from(value as i64))
    }

    fn number(&mut self, schema: &Value) -> Value {
        let (low, high) = bounds(schema);
        let low = low.unwrap_or(0.0);
        let high = high.unwrap_or(low + 1000.0);
        let value = if high > low {
            (self.rng.gen_range(low..high) * 100.0).round() / 100.0
        } else {
            low
        };
        let value = value.clamp(low, high);
        Number::from_f64(value)
            .map(Value::Number)
            .unwrap_or_else(|| json!(0))
    }

    fn string(&mut self, schema: &Value) -> String {
        let formatted = match schema.get("format").and_then(Value::as_str) {
            Some("date") => Some(self.date().to_string()),
            Some("date-time") => Some(
                Utc.from_utc_datetime(
                    &self
                        .date()
                        .and_hms_opt(self.rng.gen_range(0..24), self.rng.gen_range(0..60), 0)
                        .unwrap_or_default(),
                )
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ),
            Some("uuid") => Some(
                uuid::Builder::from_random_bytes(self.rng.r#gen())
                    .into_uuid()
                    .to_string(),
            ),
            Some("email") => Some(format!(
                "{}.{}@example.com",
                self.word(),
                self.rng.gen_range(1..1000)
            )),
            Some("uri") | Some("url") => Some(format!("https://example.com/{}", self.word())),
            Some("hostname") => Some(format!("{}.example.com", self.word())),
            Some("ipv4") => Some(format!("192.0.2.{}", self.rng.gen_range(1..255))),
            Some("byte") => {
                let bytes: [u8; 12] = self.rng.r#gen();
                Some(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            _ => None,
        };
        if let Some(value) = formatted {
            return value;
        }
        let mut text = match schema.get("pattern").and_then(Value::as_str) {
            Some(pattern) => match from_pattern(pattern, self.rng) {
                Some(text) => return text,
                None => self.word(),
            },
            None => format!("{}-{}", self.word(), self.rng.gen_range(1..100)),
        };
        let min = limit(schema, "minLength").unwrap_or(0) as usize;
        let max = limit(schema, "maxLength").map(|m| m as usize);
        while text.chars().count() < min {
            text.push('x');
        }
        if let Some(max) = max {
            text = text.chars().take(max).collect();
        }
        text
    }

    fn word(&mut self) -> String {
        WORDS[self.rng.gen_range(0..WORDS.len())].to_owned()
    }

    /// A day of the last ten years before a fixed day: answers do not change with the clock.
    fn date(&mut self) -> NaiveDate {
        let last = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap_or_default();
        last - ChronoDuration::days(self.rng.gen_range(0..3650))
    }
}

/// `schema` with its references followed and its `allOf` branches merged into one schema:
/// properties and `required` joined, the first of every other keyword kept.
pub fn merged(document: &Value, schema: &Value) -> Value {
    merged_within(document, schema, 0)
}

fn merged_within(document: &Value, schema: &Value, hops: usize) -> Value {
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
fn type_of(schema: &Value) -> &str {
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

fn only_null(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("null"))
}

fn allows_null(schema: &Value) -> bool {
    schema.get("nullable") == Some(&Value::Bool(true))
        || schema
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|types| types.contains(&json!("null")))
}

/// The smallest value of `schema`: what a recursion too deep to follow ends in.
fn smallest(schema: &Value) -> Value {
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

fn limit(schema: &Value, keyword: &str) -> Option<u64> {
    schema.get(keyword).and_then(Value::as_u64)
}

/// The inclusive bounds of a number (3.0's flags and 3.1's exclusive bounds alike).
fn bounds(schema: &Value) -> (Option<f64>, Option<f64>) {
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    let flag = |key: &str| schema.get(key) == Some(&Value::Bool(true));
    let nudge = |value: f64, up: bool| {
        let step = if value.fract() == 0.0 { 1.0 } else { 0.01 };
        if up { value + step } else { value - step }
    };
    let low = match (number("minimum"), number("exclusiveMinimum")) {
        (_, Some(exclusive)) => Some(nudge(exclusive, true)),
        (Some(minimum), _) if flag("exclusiveMinimum") => Some(nudge(minimum, true)),
        (minimum, _) => minimum,
    };
    let high = match (number("maximum"), number("exclusiveMaximum")) {
        (_, Some(exclusive)) => Some(nudge(exclusive, false)),
        (Some(maximum), _) if flag("exclusiveMaximum") => Some(nudge(maximum, false)),
        (maximum, _) => maximum,
    };
    (low, high)
}

/// A string matching `pattern`, for the patterns made of literals, classes (`[A-Z0-9]`, `\d`,
/// `\w`) and quantifiers (`{n}`, `{n,m}`, `{n,}`, `?`, `*`, `+`), anchored or not; `None` for
/// anything else (groups, alternation, look-around), which gets a plain string instead.
pub fn from_pattern(pattern: &str, rng: &mut ChaCha8Rng) -> Option<String> {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    let body = body.strip_suffix('$').unwrap_or(body);
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let choices: Vec<char> = match chars[i] {
            '[' => {
                let end = chars[i..].iter().position(|c| *c == ']')? + i;
                let class = &chars[i + 1..end];
                if class.first() == Some(&'^') {
                    return None;
                }
                i = end + 1;
                class_members(class)?
            }
            '\\' => {
                let escaped = *chars.get(i + 1)?;
                i += 2;
                match escaped {
                    'd' => ('0'..='9').collect(),
                    'w' => ('a'..='z').chain('0'..='9').collect(),
                    c if c.is_ascii_alphanumeric() => return None,
                    c => vec![c],
                }
            }
            '(' | ')' | '|' | '.' | '*' | '+' | '?' | '{' | '}' | '^' | '$' => return None,
            c => {
                i += 1;
                vec![c]
            }
        };
        let (low, high) = match chars.get(i) {
            Some('{') => {
                let end = chars[i..].iter().position(|c| *c == '}')? + i;
                let inner: String = chars[i + 1..end].iter().collect();
                i = end + 1;
                match inner.split_once(',') {
                    None => {
                        let n = inner.trim().parse().ok()?;
                        (n, n)
                    }
                    Some((low, "")) => {
                        let low: usize = low.trim().parse().ok()?;
                        (low, low + 2)
                    }
                    Some((low, high)) => (low.trim().parse().ok()?, high.trim().parse().ok()?),
                }
            }
            Some('?') => {
                i += 1;
                (0, 1)
            }
            Some('*') => {
                i += 1;
                (0, 3)
            }
            Some('+') => {
                i += 1;
                (1, 3)
            }
            _ => (1, 1),
        };
        if low > high || high > 1000 {
            return None;
        }
        for _ in 0..rng.gen_range(low..=high) {
            out.push(choices[rng.gen_range(0..choices.len())]);
        }
    }
    Some(out)
}

/// The characters of a class body (`A-Z0-9_`); `None` for escapes other than `\d`.
fn class_members(class: &[char]) -> Option<Vec<char>> {
    let mut members = Vec::new();
    let mut i = 0;
    while i < class.len() {
        match (class[i], class.get(i + 1), class.get(i + 2)) {
            ('\\', Some('d'), _) => {
                members.extend('0'..='9');
                i += 2;
            }
            ('\\', Some(c), _) if !c.is_ascii_alphanumeric() => {
                members.push(*c);
                i += 2;
            }
            ('\\', _, _) => return None,
            (from, Some('-'), Some(to)) => {
                if from > *to {
                    return None;
                }
                members.extend(from..=*to);
                i += 3;
            }
            (c, _, _) => {
                members.push(c);
                i += 1;
            }
        }
    }
    (!members.is_empty()).then_some(members)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng as _;

    use super::*;
    use crate::described::schema;

    /// Every JSON answer of the description the mock embeds, made up under many seeds, is
    /// valid against its own schema (checked by `jsonschema`, formats included).
    #[test]
    fn every_answer_of_the_effective_description_is_schema_valid() {
        let document: Value =
            serde_json::from_slice(crate::EFFECTIVE_JSON).expect("the embedded description");
        let mut checked = 0;
        for (path, item) in document["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("path item") {
                let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
                    continue;
                };
                for (status, response) in responses {
                    let Some(schema) = response.pointer("/content/application~1json/schema") else {
                        continue;
                    };
                    let validator = schema::validator(&document, schema).expect("compiles");
                    for seed in 0..20 {
                        let mut rng = ChaCha8Rng::seed_from_u64(seed);
                        let value = example(&document, schema, &mut rng);
                        let refusals = schema::refusals(&validator, &value, "");
                        assert!(
                            refusals.is_empty(),
                            "{method} {path} {status} (seed {seed}): {refusals:?}\n{value}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "only {checked} answers were checked");
    }

    #[test]
    fn constraints_are_respected_and_the_same_seed_gives_the_same_value() {
        let document = json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {
                "next": {"$ref": "#/components/schemas/Node"}}},
        }}});
        let schema = json!({"type": "object", "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "reference": {"type": "string", "pattern": "^LN-\\d{4}[a-c]?$"},
            "short": {"type": "string", "minLength": 12, "maxLength": 14},
            "count": {"type": "integer", "minimum": 5, "exclusiveMaximum": 7},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 0.75},
            "list": {"type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "boolean"}},
            "choice": {"oneOf": [{"type": "null"}, {"type": "string", "format": "uuid"}]},
            "both": {"allOf": [
                {"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "format": "date"}}},
                {"type": "object", "properties": {"b": {"type": "string", "format": "email"}}},
            ]},
            "kind": {"type": ["string", "null"], "enum": ["ONE", "TWO", null]},
            "loop": {"$ref": "#/components/schemas/Node"},
        }});
        let validator = schema::validator(&document, &schema).expect("compiles");
        for seed in 0..50 {
            let value = example(&document, &schema, &mut ChaCha8Rng::seed_from_u64(seed));
            let refusals = schema::refusals(&validator, &value, "");
            assert!(refusals.is_empty(), "seed {seed}: {refusals:?}\n{value}");
            assert_eq!(
                value,
                example(&document, &schema, &mut ChaCha8Rng::seed_from_u64(seed))
            );
            assert!(value["kind"].is_string(), "{value}");
            assert!(value["both"]["b"].is_string(), "{value}");
        }
        assert_eq!(
            from_pattern("^(a|b)$", &mut ChaCha8Rng::seed_from_u64(1)),
            None
        );
    }
}
