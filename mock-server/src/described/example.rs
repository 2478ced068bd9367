//! A schema-valid, deterministic example of a schema of the description: what the mock answers
//! for an operation no hand-written code serves, or why it cannot make one ([`Unmakeable`]).
//!
//! No well-kept Rust crate generates JSON from a JSON Schema, so this is written here; strings
//! for a `pattern` come from `rand_regex` (over `regex-syntax`, the parser jsonschema uses too).
//! It respects what descriptions use: `$ref`, `allOf` (merged), `oneOf`/`anyOf` (the first
//! branch it can make), `enum`, `const`, `type` (a 3.1 list too), `required` (every declared
//! member is produced; an undeclared one from `additionalProperties`), `minProperties` and
//! `maxProperties`, `format` (every format jsonschema checks, and `byte`), `minLength` and
//! `maxLength`, `pattern` (groups, alternation, classes, anchors; no look-around or
//! back-references), `minimum`/`maximum` (3.0's exclusive flags and 3.1's exclusive bounds),
//! `multipleOf` (below 1 too), `minItems`/`maxItems`, `uniqueItems`.
//!
//! Every string and number is checked against its own schema's keywords by the `jsonschema`
//! validator before it is used, and an answer as a whole by [`valid_example`]: what the mock
//! cannot make valid is an [`Unmakeable`] naming where and what, never a value its schema
//! refuses. Work is linear in the answer's size, which is capped ([`MAX_ANSWER_SIZE`]).
//! Nesting deeper than [`MAX_DEPTH`] (a recursive schema) gets the smallest value. The same
//! schema and seed give the same value.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use base64::Engine as _;
use chrono::{Duration as ChronoDuration, NaiveDate, TimeZone as _, Utc};
use jsonschema::Validator;
use rand::Rng;
use rand::distributions::Distribution as _;
use rand_chacha::ChaCha8Rng;
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Repetition,
};
use serde_json::{Map, Number, Value, json};

use super::schema;

/// How deep an example nests before it stops following references.
pub const MAX_DEPTH: usize = 12;

/// The most one made-up answer holds: characters of its strings and member names, and 8 for
/// every other value. A schema that needs more (a `minLength` of millions) is refused with a
/// 501 rather than answered slowly.
pub const MAX_ANSWER_SIZE: usize = 1 << 20;

/// The largest integer a double holds exactly: made-up integers stay within it.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// How many candidates a string or number gets before the mock gives up on it.
const CANDIDATES: usize = 8;

/// How many whole answers [`valid_example`] makes before it gives up.
const ANSWER_ATTEMPTS: usize = 4;

/// The most repetitions `*`, `+` and `{n,}` add in a pattern's string (more when a
/// `minLength` needs it).
const SHORT_REPEAT: u32 = 8;

/// Words for plain strings: readable in a response, never personal data.
const WORDS: &[&str] = &[
    "alpha", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island", "juniper",
];

/// Why no valid example could be made: where in the answer (`$`, `items[0].name`) and what
/// (named by the schema's keywords; never a value made or received).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmakeable {
    /// The member, as the service names fields.
    pub at: String,
    /// What the mock could not make there.
    pub what: String,
}

impl std::fmt::Display for Unmakeable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}: {}", self.at, self.what)
    }
}

impl std::error::Error for Unmakeable {}

/// An example of `schema`, drawn from `rng`. Its strings and numbers are valid against their
/// own keywords; [`valid_example`] checks the whole.
pub fn example(
    document: &Value,
    schema: &Value,
    rng: &mut ChaCha8Rng,
) -> Result<Value, Unmakeable> {
    let mut examples = Examples {
        document,
        rng,
        spent: 0,
        patterns: HashMap::new(),
    };
    examples.value(schema, 0, "")
}

/// An example of `schema` that `validator` (the schema's) accepts once `adjust` has made it
/// follow the session: a few tries from `rng`, then the first refusal as an [`Unmakeable`].
pub fn valid_example(
    document: &Value,
    schema: &Value,
    validator: &Validator,
    rng: &mut ChaCha8Rng,
    mut adjust: impl FnMut(&mut Value, &mut ChaCha8Rng) -> Result<(), Unmakeable>,
) -> Result<Value, Unmakeable> {
    let mut refused = None;
    for _ in 0..ANSWER_ATTEMPTS {
        let mut value = example(document, schema, rng)?;
        adjust(&mut value, rng)?;
        match schema::refusals(validator, &value, "").into_iter().next() {
            None => return Ok(value),
            Some((at, message)) => {
                refused = Some(Unmakeable {
                    at,
                    what: format!("no value its schema accepts ({message})"),
                });
            }
        }
    }
    Err(refused.unwrap_or_else(|| Unmakeable {
        at: "$".into(),
        what: "no value its schema accepts".into(),
    }))
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
                    // The least a service may send: `null` where the member allows it. A
                    // member the mock cannot make is left out, so that the fixture's decode
                    // names it rather than meeting a value its schema refuses.
                    let value = if allows_null(&merged(document, &member)) {
                        Ok(Value::Null)
                    } else {
                        example(document, &member, rng)
                    };
                    if let Ok(value) = value {
                        members.insert(name.to_owned(), value);
                    }
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
    /// What the answer holds so far, against [`MAX_ANSWER_SIZE`].
    spent: usize,
    /// Each pattern's generators (short and long repetitions), or why there is none.
    patterns: HashMap<(String, u32), Result<Arc<rand_regex::Regex>, String>>,
}

impl Examples<'_> {
    fn value(&mut self, schema: &Value, depth: usize, at: &str) -> Result<Value, Unmakeable> {
        if schema == &Value::Bool(false) {
            return Err(unmakeable(
                at,
                "a value where the schema allows none (false)",
            ));
        }
        let schema = merged(self.document, schema);
        if depth > MAX_DEPTH {
            return Ok(smallest(&schema));
        }
        if let Some(constant) = schema.get("const") {
            self.spend(8, at)?;
            return Ok(constant.clone());
        }
        if let Some(Value::Array(options)) = schema.get("enum") {
            self.spend(8, at)?;
            let present: Vec<&Value> = options.iter().filter(|v| !v.is_null()).collect();
            if present.is_empty() {
                return Ok(options.first().cloned().unwrap_or(Value::Null));
            }
            return Ok(present[self.rng.gen_range(0..present.len())].clone());
        }
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                return self.one_of(&schema, keyword, branches, depth, at);
            }
        }
        match type_of(&schema) {
            "object" => self.object(&schema, depth, at),
            "array" => self.array(&schema, depth, at),
            "integer" => self.integer(&schema, at),
            "number" => self.number(&schema, at),
            "boolean" => {
                self.spend(8, at)?;
                Ok(Value::Bool(self.rng.gen_bool(0.5)))
            }
            "null" => Ok(Value::Null),
            _ => self.string(&schema, at).map(Value::String),
        }
    }

    /// The first branch that can be made (the first is the one the author lists as the usual
    /// shape; with `oneOf` a later one may accept it too, which [`valid_example`] catches).
    fn one_of(
        &mut self,
        schema: &Value,
        keyword: &str,
        branches: &[Value],
        depth: usize,
        at: &str,
    ) -> Result<Value, Unmakeable> {
        let mut first_error = None;
        for branch in branches.iter().filter(|b| !only_null(b)) {
            let mut branch = branch.clone();
            if let (Value::Object(branch_map), Value::Object(outer)) = (&mut branch, schema) {
                for (key, value) in outer {
                    if key != keyword {
                        branch_map.entry(key.clone()).or_insert(value.clone());
                    }
                }
            }
            let spent = self.spent;
            match self.value(&branch, depth + 1, at) {
                Ok(value) => return Ok(value),
                Err(error) => {
                    self.spent = spent;
                    first_error.get_or_insert(error);
                }
            }
        }
        // Only `null` branches (or none): `null`.
        first_error.map_or(Ok(Value::Null), Err)
    }

    fn object(&mut self, schema: &Value, depth: usize, at: &str) -> Result<Value, Unmakeable> {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let additional = schema.get("additionalProperties");
        let forbids_others = additional == Some(&Value::Bool(false));
        let declared = schema.get("properties").and_then(Value::as_object);
        let max = limit(schema, "maxProperties");
        if let Some(max) = max
            && (required.len() as u64) > max
        {
            return Err(unmakeable(
                at,
                &format!(
                    "an object with the {} members it requires and at most {max} (maxProperties)",
                    required.len()
                ),
            ));
        }
        let optional_room = max.map_or(u64::MAX, |max| max - required.len() as u64);
        let mut optional = 0u64;
        let mut out = Map::new();
        for (name, member) in declared.into_iter().flatten() {
            if member.get("writeOnly") == Some(&Value::Bool(true)) {
                continue;
            }
            if !required.contains(&name.as_str()) {
                if optional >= optional_room {
                    continue;
                }
                optional += 1;
            }
            self.spend(name.len(), at)?;
            let value = self.value(member, depth + 1, &member_at(at, name))?;
            out.insert(name.clone(), value);
        }
        // A required member without a declaration: what `additionalProperties` allows.
        for name in required {
            if out.contains_key(name) {
                continue;
            }
            if forbids_others {
                return Err(unmakeable(
                    at,
                    &format!(
                        "the member {name}, which the schema requires but does not declare \
                         while it allows no other (additionalProperties: false)"
                    ),
                ));
            }
            self.spend(name.len(), at)?;
            let value = self.other_member(additional, depth, &member_at(at, name))?;
            out.insert(name.to_owned(), value);
        }
        let min = limit(schema, "minProperties").unwrap_or(0);
        if out.len() as u64 >= min {
            return Ok(Value::Object(out));
        }
        if forbids_others || max.is_some_and(|max| max < min) {
            return Err(unmakeable(
                at,
                &format!("an object with at least {min} members (minProperties)"),
            ));
        }
        self.afford(min.saturating_sub(out.len() as u64), at, "members")?;
        let mut n = 0;
        while (out.len() as u64) < min {
            n += 1;
            let name = format!("extra{n}");
            if out.contains_key(&name) {
                continue;
            }
            self.spend(name.len(), at)?;
            let value = self.other_member(additional, depth, &member_at(at, &name))?;
            out.insert(name, value);
        }
        Ok(Value::Object(out))
    }

    /// A member the schema does not declare: of the `additionalProperties` schema, else a word.
    fn other_member(
        &mut self,
        additional: Option<&Value>,
        depth: usize,
        at: &str,
    ) -> Result<Value, Unmakeable> {
        match additional {
            Some(schema @ Value::Object(_)) => self.value(schema, depth + 1, at),
            _ => {
                self.spend(WORDS[0].len(), at)?;
                Ok(Value::String(WORDS[0].to_owned()))
            }
        }
    }

    fn array(&mut self, schema: &Value, depth: usize, at: &str) -> Result<Value, Unmakeable> {
        let min = limit(schema, "minItems").unwrap_or(0);
        let max = limit(schema, "maxItems").unwrap_or(u64::MAX);
        if max < min {
            return Err(unmakeable(
                at,
                &format!("an array of at least {min} and at most {max} items"),
            ));
        }
        self.afford(min, at, "items")?;
        let wanted = self.rng.gen_range(1..=2u64).clamp(min, max);
        let items = schema.get("items").cloned().unwrap_or(json!({}));
        let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
        // A few extra draws for `uniqueItems` (an enum with few values repeats).
        let draws = if unique {
            wanted.saturating_mul(4).saturating_add(8)
        } else {
            wanted
        };
        let mut out: Vec<Value> = Vec::new();
        for _ in 0..draws {
            if out.len() as u64 >= wanted {
                break;
            }
            let item_at = format!("{at}[{}]", out.len());
            let item = self.value(&items, depth + 1, &item_at)?;
            if unique && out.contains(&item) {
                continue;
            }
            out.push(item);
        }
        if (out.len() as u64) < min {
            return Err(unmakeable(
                at,
                &format!("an array of {min} distinct items (uniqueItems)"),
            ));
        }
        Ok(Value::Array(out))
    }

    fn integer(&mut self, schema: &Value, at: &str) -> Result<Value, Unmakeable> {
        self.spend(8, at)?;
        let bounds = Bounds::of(schema, true);
        let step = match schema.get("multipleOf").and_then(Value::as_f64) {
            Some(multiple) if multiple > 0.0 && multiple.is_finite() => integer_step(multiple)
                .ok_or_else(|| {
                    unmakeable(
                        at,
                        &format!("an integer that is a multiple of {multiple} (multipleOf)"),
                    )
                })?,
            _ => 1,
        };
        let low = bounds.lowest_integer();
        let high = bounds.highest_integer();
        // Near zero when the bounds allow, within a thousand steps of the lower bound.
        let low = low.unwrap_or_else(|| match high {
            Some(high) if high < 0 => high.saturating_sub(step.saturating_mul(1000)),
            _ => 0,
        });
        let high = high
            .unwrap_or(i128::MAX)
            .min(low.saturating_add(step.saturating_mul(1000)));
        let first = div_ceil(low, step);
        let last = div_floor(high, step);
        if first > last {
            return Err(unmakeable(
                at,
                &format!("an integer {}", describe_number(schema)),
            ));
        }
        let leaf = leaf_validator(schema);
        for _ in 0..CANDIDATES {
            let value = self.rng.gen_range(first..=last).saturating_mul(step);
            let Ok(value) = i64::try_from(value) else {
                continue;
            };
            let value = Value::Number(Number::from(value));
            if leaf.as_ref().is_none_or(|leaf| leaf.is_valid(&value)) {
                return Ok(value);
            }
        }
        Err(unmakeable(
            at,
            &format!("an integer {}", describe_number(schema)),
        ))
    }

    fn number(&mut self, schema: &Value, at: &str) -> Result<Value, Unmakeable> {
        self.spend(8, at)?;
        let bounds = Bounds::of(schema, false);
        let leaf = leaf_validator(schema);
        let accepts = |value: &Value| leaf.as_ref().is_none_or(|leaf| leaf.is_valid(value));
        let multiple = schema
            .get("multipleOf")
            .and_then(Value::as_f64)
            .filter(|m| *m > 0.0 && m.is_finite());
        // The values tried: multiples of `multipleOf`, else of 0.01, then ever finer decimals
        // (an open interval narrower than a cent), then the bounds and their midpoint.
        let grids: Vec<(i128, u32)> = match multiple {
            Some(multiple) => decimal_parts(multiple).into_iter().collect(),
            None => (2..=15).map(|decimals| (1, decimals)).collect(),
        };
        let (low, high) = bounds.window();
        for (mantissa, decimals) in grids {
            let Some(step) = mantissa_value(mantissa, decimals) else {
                continue;
            };
            let (Some(first), Some(last)) = (
                to_i128((low / step).ceil() - 1.0),
                to_i128((high / step).floor() + 1.0),
            ) else {
                continue;
            };
            // Within a hundred thousand steps of the lower bound.
            let last = last.min(first.saturating_add(100_000));
            let in_range = |k: i128| {
                decimal(k.checked_mul(mantissa)?, decimals)
                    .filter(|value| bounds.contains(value.as_f64().unwrap_or(f64::NAN)))
            };
            let Some(first) = (first..=last).find(|k| in_range(*k).is_some()) else {
                continue;
            };
            let Some(last) = (first..=last).rev().find(|k| in_range(*k).is_some()) else {
                continue;
            };
            for _ in 0..CANDIDATES {
                let k = self.rng.gen_range(first..=last);
                if let Some(value) = in_range(k).map(Value::Number)
                    && accepts(&value)
                {
                    return Ok(value);
                }
            }
            if multiple.is_some() {
                break;
            }
        }
        if multiple.is_none() {
            for value in [low, high, low / 2.0 + high / 2.0] {
                if let Some(value) = Number::from_f64(value).map(Value::Number)
                    && bounds.contains(value.as_f64().unwrap_or(f64::NAN))
                    && accepts(&value)
                {
                    return Ok(value);
                }
            }
        }
        // Zero is a multiple of anything.
        let zero = json!(0.0);
        if bounds.contains(0.0) && accepts(&zero) {
            return Ok(zero);
        }
        Err(unmakeable(
            at,
            &format!("a number {}", describe_number(schema)),
        ))
    }

    fn string(&mut self, schema: &Value, at: &str) -> Result<String, Unmakeable> {
        let min = limit(schema, "minLength").unwrap_or(0);
        let max = limit(schema, "maxLength");
        if let Some(max) = max
            && max < min
        {
            return Err(unmakeable(
                at,
                &format!("a string of at least {min} and at most {max} characters"),
            ));
        }
        self.afford(min, at, "characters")?;
        let min = usize::try_from(min).unwrap_or(usize::MAX);
        let max = max.map(|max| usize::try_from(max).unwrap_or(usize::MAX));
        let leaf = leaf_validator(schema);
        let format = schema.get("format").and_then(Value::as_str);
        let pattern = schema.get("pattern").and_then(Value::as_str);
        let mut why_not = None;
        for attempt in 0..CANDIDATES {
            let formatted = format.and_then(|format| self.formatted(format));
            let base = match (formatted, pattern) {
                (Some(text), None) => text,
                (Some(text), Some(_)) if attempt % 2 == 0 => text,
                (_, Some(pattern)) => {
                    // Long repetitions only when a `minLength` asks for them.
                    let repeat = if attempt % 2 == 1 && min > SHORT_REPEAT as usize {
                        u32::try_from(min.saturating_mul(2)).unwrap_or(u32::MAX)
                    } else {
                        SHORT_REPEAT
                    };
                    match self.matching(pattern, repeat) {
                        Ok(text) => text,
                        Err(reason) => {
                            why_not = Some(reason);
                            continue;
                        }
                    }
                }
                (None, None) => format!("{}-{}", self.word(), self.rng.gen_range(1..100)),
            };
            for candidate in fitted(base, min, max) {
                let length = candidate.len();
                if length > self.left() {
                    continue;
                }
                let text = Value::String(candidate);
                if leaf.as_ref().is_none_or(|leaf| leaf.is_valid(&text))
                    && let Value::String(text) = text
                {
                    self.spend(length, at)?;
                    return Ok(text);
                }
            }
        }
        let what = describe_string(schema);
        Err(unmakeable(
            at,
            &match why_not {
                Some(reason) => format!("a string {what}: {reason}"),
                None => format!("a string {what}"),
            },
        ))
    }

    /// A value of `format`, for every format jsonschema checks (and OpenAPI's `byte`); `None`
    /// for any other, which no validator checks.
    fn formatted(&mut self, format: &str) -> Option<String> {
        let hex = |rng: &mut ChaCha8Rng| rng.gen_range(1..0xffffu32);
        Some(match format {
            "date" => self.date().to_string(),
            "date-time" => Utc
                .from_utc_datetime(
                    &self
                        .date()
                        .and_hms_opt(self.rng.gen_range(0..24), self.rng.gen_range(0..60), 0)
                        .unwrap_or_default(),
                )
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "time" => format!(
                "{:02}:{:02}:{:02}Z",
                self.rng.gen_range(0..24),
                self.rng.gen_range(0..60),
                self.rng.gen_range(0..60)
            ),
            "duration" => format!(
                "P{}DT{}H",
                self.rng.gen_range(1..30),
                self.rng.gen_range(1..24)
            ),
            "uuid" => uuid::Builder::from_random_bytes(self.rng.r#gen())
                .into_uuid()
                .to_string(),
            "email" | "idn-email" => {
                format!(
                    "{}.{}@example.com",
                    self.word(),
                    self.rng.gen_range(1..1000)
                )
            }
            "uri" | "url" | "iri" => format!("https://example.com/{}", self.word()),
            "uri-reference" | "iri-reference" => format!("/{}/{}", self.word(), self.word()),
            "uri-template" => format!("https://example.com/{}/{{id}}", self.word()),
            "hostname" | "idn-hostname" => format!("{}.example.com", self.word()),
            // Documentation ranges (RFC 5737, RFC 3849).
            "ipv4" => format!("192.0.2.{}", self.rng.gen_range(1..255)),
            "ipv6" => format!("2001:db8::{:x}:{:x}", hex(self.rng), hex(self.rng)),
            "json-pointer" => format!("/{}/{}", self.word(), self.rng.gen_range(0..10)),
            "relative-json-pointer" => format!("{}/{}", self.rng.gen_range(0..3), self.word()),
            "regex" => format!("^{}[0-9]+$", self.word()),
            "byte" => {
                let bytes: [u8; 12] = self.rng.r#gen();
                base64::engine::general_purpose::STANDARD.encode(bytes)
            }
            _ => return None,
        })
    }

    /// A string `pattern` matches, or why the mock cannot make one.
    fn matching(&mut self, pattern: &str, repeat: u32) -> Result<String, String> {
        let left = self.left();
        let generator = self
            .patterns
            .entry((pattern.to_owned(), repeat))
            .or_insert_with(|| pattern_generator(pattern, repeat, left).map(Arc::new))
            .clone()?;
        let text: String = generator.sample(&mut *self.rng);
        Ok(text)
    }

    fn word(&mut self) -> String {
        WORDS[self.rng.gen_range(0..WORDS.len())].to_owned()
    }

    /// A day of the last ten years before a fixed day: answers do not change with the clock.
    fn date(&mut self) -> NaiveDate {
        let last = NaiveDate::from_ymd_opt(2026, 1, 1).unwrap_or_default();
        last - ChronoDuration::days(self.rng.gen_range(0..3650))
    }

    /// What the answer may still hold.
    fn left(&self) -> usize {
        MAX_ANSWER_SIZE.saturating_sub(self.spent)
    }

    /// Counts `size` against the cap.
    fn spend(&mut self, size: usize, at: &str) -> Result<(), Unmakeable> {
        if size > self.left() {
            return Err(too_large(at));
        }
        self.spent += size;
        Ok(())
    }

    /// Refuses at once what needs more than the cap allows (`count` items or characters).
    fn afford(&self, count: u64, at: &str, what: &str) -> Result<(), Unmakeable> {
        if usize::try_from(count).is_ok_and(|count| count <= self.left()) {
            return Ok(());
        }
        Err(unmakeable(
            at,
            &format!(
                "{count} {what}: more than the {MAX_ANSWER_SIZE} characters the mock makes up \
                 for one answer"
            ),
        ))
    }
}

fn unmakeable(at: &str, what: &str) -> Unmakeable {
    Unmakeable {
        at: if at.is_empty() {
            "$".to_owned()
        } else {
            at.to_owned()
        },
        what: what.to_owned(),
    }
}

fn too_large(at: &str) -> Unmakeable {
    unmakeable(
        at,
        &format!("an answer within the {MAX_ANSWER_SIZE} characters the mock makes up for one"),
    )
}

/// A member's place, as the service names fields: `items[0].name`.
fn member_at(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

/// `base`, and when its length is outside `min..=max` the ways to bring it inside: padded at
/// the end with its last character or with `x`, at the start with its first; cut at `max`. A
/// pattern or format may refuse some; the caller checks each.
fn fitted(base: String, min: usize, max: Option<usize>) -> Vec<String> {
    let length = base.chars().count();
    if length < min {
        let missing = min - length;
        let last = base.chars().last().unwrap_or('x');
        let first = base.chars().next().unwrap_or('x');
        let mut candidates = Vec::with_capacity(3);
        for (pad, at_end) in [(last, true), ('x', true), (first, false)] {
            let mut text = String::with_capacity(base.len() + missing * pad.len_utf8());
            if !at_end {
                text.extend(std::iter::repeat_n(pad, missing));
            }
            text.push_str(&base);
            if at_end {
                text.extend(std::iter::repeat_n(pad, missing));
            }
            candidates.push(text);
        }
        candidates.dedup();
        return candidates;
    }
    match max {
        Some(max) if length > max => vec![base.chars().take(max).collect()],
        _ => vec![base],
    }
}

/// The bounds of a number: 3.0's `exclusiveMinimum: true` beside `minimum`, and 3.1's
/// numeric `exclusiveMinimum` (the stricter of it and `minimum`), with the range of the
/// integer formats.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    low: Option<(f64, bool)>,
    high: Option<(f64, bool)>,
}

impl Bounds {
    fn of(schema: &Value, integer: bool) -> Bounds {
        let number = |key: &str| {
            schema
                .get(key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite())
        };
        let flag = |key: &str| schema.get(key) == Some(&Value::Bool(true));
        // 3.1: both may be given; the stricter one counts.
        let stricter = |inclusive: Option<f64>, exclusive: Option<f64>, lower: bool| match (
            inclusive, exclusive,
        ) {
            (Some(i), Some(e)) if (lower && e >= i) || (!lower && e <= i) => Some((e, true)),
            (Some(i), _) => Some((i, false)),
            (None, Some(e)) => Some((e, true)),
            (None, None) => None,
        };
        let mut low = match number("minimum") {
            Some(minimum) if flag("exclusiveMinimum") => Some((minimum, true)),
            minimum => stricter(minimum, number("exclusiveMinimum"), true),
        };
        let mut high = match number("maximum") {
            Some(maximum) if flag("exclusiveMaximum") => Some((maximum, true)),
            maximum => stricter(maximum, number("exclusiveMaximum"), false),
        };
        if integer {
            // JSON integers a double holds exactly, or the format's range.
            let (format_low, format_high) = match schema.get("format").and_then(Value::as_str) {
                Some("int32") => (f64::from(i32::MIN), f64::from(i32::MAX)),
                _ => (-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
            };
            low = low.map(|(value, exclusive)| {
                if value < format_low {
                    (format_low, false)
                } else {
                    (value, exclusive)
                }
            });
            high = Some(match high {
                Some((value, exclusive)) if value <= format_high => (value, exclusive),
                _ => (format_high, false),
            });
        }
        Bounds { low, high }
    }

    fn contains(&self, value: f64) -> bool {
        value.is_finite()
            && self.low.is_none_or(
                |(low, exclusive)| {
                    if exclusive { value > low } else { value >= low }
                },
            )
            && self.high.is_none_or(|(high, exclusive)| {
                if exclusive {
                    value < high
                } else {
                    value <= high
                }
            })
    }

    /// The smallest integer allowed, when bounded below (within the safe range).
    fn lowest_integer(&self) -> Option<i128> {
        let (low, exclusive) = self.low?;
        let value = if exclusive {
            low.floor() + 1.0
        } else {
            low.ceil()
        };
        to_i128(value.max(-MAX_SAFE_INTEGER))
    }

    /// The largest integer allowed, when bounded above.
    fn highest_integer(&self) -> Option<i128> {
        let (high, exclusive) = self.high?;
        let value = if exclusive {
            high.ceil() - 1.0
        } else {
            high.floor()
        };
        to_i128(value.min(MAX_SAFE_INTEGER))
    }

    /// Where a number is looked for: the bounds, or near zero on an open side (a thousand
    /// wide).
    fn window(&self) -> (f64, f64) {
        match (self.low, self.high) {
            (Some((low, _)), Some((high, _))) => (low, high),
            (Some((low, _)), None) => (low, low + 1000.0),
            (None, Some((high, _))) if high > 0.0 => (0.0, high),
            (None, Some((high, _))) => (high - 1000.0, high),
            (None, None) => (0.0, 1000.0),
        }
    }
}

fn to_i128(value: f64) -> Option<i128> {
    (value.is_finite() && value.abs() < 1e30).then_some(value as i128)
}

fn div_floor(a: i128, b: i128) -> i128 {
    let quotient = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        quotient - 1
    } else {
        quotient
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    let quotient = a / b;
    if (a % b != 0) && ((a < 0) == (b < 0)) {
        quotient + 1
    } else {
        quotient
    }
}

/// `value` as `mantissa / 10^decimals`, read from its shortest decimal form (`0.01` is
/// `(1, 2)`), as jsonschema reads `multipleOf`; `None` when that does not fit.
fn decimal_parts(value: f64) -> Option<(i128, u32)> {
    if !value.is_finite() {
        return None;
    }
    let text = value.to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let decimals = u32::try_from(fraction.len()).ok()?;
    if decimals > 30 {
        return None;
    }
    let digits: String = whole.chars().chain(fraction.chars()).collect();
    let mantissa: i128 = digits.parse().ok()?;
    Some((mantissa, decimals))
}

/// `mantissa / 10^decimals` as a double.
fn mantissa_value(mantissa: i128, decimals: u32) -> Option<f64> {
    decimal(mantissa, decimals)?.as_f64()
}

/// The JSON number `mantissa / 10^decimals`, written as that decimal (so `7 × 0.01` is `0.07`,
/// not `0.07000000000000001`).
fn decimal(mantissa: i128, decimals: u32) -> Option<Number> {
    let negative = mantissa < 0;
    let digits = mantissa.unsigned_abs().to_string();
    let decimals = decimals as usize;
    let text = if decimals == 0 {
        digits
    } else if digits.len() > decimals {
        let (whole, fraction) = digits.split_at(digits.len() - decimals);
        format!("{whole}.{fraction}")
    } else {
        format!("0.{}{digits}", "0".repeat(decimals - digits.len()))
    };
    let value: f64 = text.parse().ok()?;
    let value = if negative { -value } else { value };
    Number::from_f64(value)
}

/// The integers that are multiples of `multiple`: those of this step (`0.3` → 3, `0.5` → 1,
/// `4` → 4); `None` when it cannot be read exactly.
fn integer_step(multiple: f64) -> Option<i128> {
    let (mantissa, decimals) = decimal_parts(multiple)?;
    if mantissa <= 0 {
        return None;
    }
    let scale = 10i128.checked_pow(decimals)?;
    Some(mantissa / gcd(mantissa, scale))
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs().max(1)
}

/// `between 0 and 1 (multipleOf 0.01)`, from the schema's own keywords.
fn describe_number(schema: &Value) -> String {
    describe(
        schema,
        &[
            "minimum",
            "exclusiveMinimum",
            "maximum",
            "exclusiveMaximum",
            "multipleOf",
            "format",
        ],
    )
}

fn describe_string(schema: &Value) -> String {
    describe(schema, &["format", "pattern", "minLength", "maxLength"])
}

/// `(pattern ^a$, minLength 3)`: the keywords that constrain the value, as the description
/// writes them (the description's, never a value's).
fn describe(schema: &Value, keywords: &[&str]) -> String {
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
const LEAF_KEYWORDS: [&str; 13] = [
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
fn leaf_validator(schema: &Value) -> Option<Arc<Validator>> {
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

/// A generator of the strings `pattern` matches, each at most `left` characters: classes
/// narrowed to printable ASCII where they allow it (ECMA's `\d` is ASCII, and answers stay
/// readable), anchors dropped (a generated string is the whole match, which the validator checks
/// afterwards), `*`, `+` and `{n,}` repeating at most `repeat` more times (none more when that
/// could outgrow `left`).
fn pattern_generator(pattern: &str, repeat: u32, left: usize) -> Result<rand_regex::Regex, String> {
    let original = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|error| {
            let reason = match &error {
                regex_syntax::Error::Parse(error) => error.kind().to_string(),
                regex_syntax::Error::Translate(error) => error.kind().to_string(),
                other => other.to_string(),
            };
            format!("the mock cannot generate from the pattern {pattern} ({reason})")
        })?;
    let narrowed = |repeat| {
        printable(original.clone(), repeat).map_err(|why| format!("the pattern {pattern} {why}"))
    };
    let (mut hir, size) = narrowed(repeat)?;
    if size > left {
        let (least, size) = narrowed(0)?;
        if size > left {
            return Err(format!(
                "the pattern {pattern} needs more than the {MAX_ANSWER_SIZE} characters of one \
                 answer"
            ));
        }
        hir = least;
    }
    let generator = rand_regex::Regex::with_hir(hir, repeat).map_err(|error| {
        format!("the mock cannot generate from the pattern {pattern} ({error})")
    })?;
    if !generator.is_utf8() {
        return Err(format!(
            "the pattern {pattern} matches bytes that are not text"
        ));
    }
    Ok(generator)
}

/// `hir` as [`pattern_generator`] wants it, with the most characters it can produce (counted
/// with saturation: only what fits in an answer goes on to rand_regex, so no size it computes
/// overflows).
fn printable(hir: Hir, repeat: u32) -> Result<(Hir, usize), String> {
    Ok(match hir.into_kind() {
        HirKind::Empty | HirKind::Look(_) => (Hir::empty(), 0),
        HirKind::Literal(literal) => {
            let length = literal.0.len();
            (Hir::literal(literal.0), length)
        }
        HirKind::Class(Class::Unicode(class)) => {
            let mut ascii = ClassUnicode::new([ClassUnicodeRange::new(' ', '~')]);
            ascii.intersect(&class);
            let class = if ascii.ranges().is_empty() {
                class
            } else {
                ascii
            };
            if class.ranges().is_empty() {
                return Err("matches no character in one of its classes".to_owned());
            }
            (Hir::class(Class::Unicode(class)), 1)
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut ascii = ClassBytes::new([ClassBytesRange::new(b' ', b'~')]);
            ascii.intersect(&class);
            if ascii.ranges().is_empty() {
                return Err("matches no printable character in one of its classes".to_owned());
            }
            (Hir::class(Class::Bytes(ascii)), 1)
        }
        HirKind::Repetition(repetition) => {
            let (sub, each) = printable(*repetition.sub, repeat)?;
            let max = repetition
                .max
                .unwrap_or(u32::MAX)
                .min(repetition.min.saturating_add(repeat));
            (
                Hir::repetition(Repetition {
                    min: repetition.min,
                    max: Some(max),
                    greedy: repetition.greedy,
                    sub: Box::new(sub),
                }),
                each.saturating_mul(max as usize),
            )
        }
        HirKind::Capture(capture) => {
            let (sub, size) = printable(*capture.sub, repeat)?;
            (
                Hir::capture(Capture {
                    index: capture.index,
                    name: capture.name,
                    sub: Box::new(sub),
                }),
                size,
            )
        }
        HirKind::Concat(parts) => {
            let mut size = 0usize;
            let mut out = Vec::with_capacity(parts.len());
            for part in parts {
                let (part, part_size) = printable(part, repeat)?;
                size = size.saturating_add(part_size);
                out.push(part);
            }
            (Hir::concat(out), size)
        }
        HirKind::Alternation(branches) => {
            let mut size = 0usize;
            let mut out = Vec::with_capacity(branches.len());
            for branch in branches {
                let (branch, branch_size) = printable(branch, repeat)?;
                size = size.max(branch_size);
                out.push(branch);
            }
            (Hir::alternation(out), size)
        }
    })
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand::SeedableRng as _;

    use super::*;
    use crate::described::schema;

    /// `schema`'s example under `seed`, checked against the schema: the value, or why none.
    fn checked(document: &Value, schema: &Value, seed: u64) -> Result<Value, Unmakeable> {
        let validator = schema::validator(document, schema).expect("compiles");
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        valid_example(document, schema, &validator, &mut rng, |_, _| Ok(()))
    }

    /// `schema`'s example under `seed`, without the whole-answer check (what each keyword's own
    /// generation gives).
    fn made(schema: &Value, seed: u64) -> Result<Value, Unmakeable> {
        example(&json!({}), schema, &mut ChaCha8Rng::seed_from_u64(seed))
    }

    fn assert_valid(schema: &Value, value: &Value) {
        let validator = schema::validator(&json!({}), schema).expect("compiles");
        let refusals = schema::refusals(&validator, value, "");
        assert!(
            refusals.is_empty(),
            "{schema} refuses {value}: {refusals:?}"
        );
    }

    /// Every JSON answer of the description the mock embeds, made up under many seeds, is
    /// valid against its own schema (checked by `jsonschema`, formats included), without the
    /// whole-answer check's second tries.
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
                        let value = example(&document, schema, &mut rng)
                            .unwrap_or_else(|e| panic!("{method} {path} {status}: {e}"));
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
            let value =
                example(&document, &schema, &mut ChaCha8Rng::seed_from_u64(seed)).expect("made");
            let refusals = schema::refusals(&validator, &value, "");
            assert!(refusals.is_empty(), "seed {seed}: {refusals:?}\n{value}");
            assert_eq!(
                Ok(value.clone()),
                example(&document, &schema, &mut ChaCha8Rng::seed_from_u64(seed))
            );
            assert!(value["kind"].is_string(), "{value}");
            assert!(value["both"]["b"].is_string(), "{value}");
        }
    }

    /// What the third audit found wrong, each now valid: groups and alternation, `multipleOf`
    /// below 1, the `time` and `ipv6` formats, an exclusive bound below 1 (which panicked), 3.0's
    /// exclusive flags.
    #[test]
    fn the_keywords_the_audit_found_give_valid_values() {
        for schema in [
            json!({"type": "string", "pattern": "^(LN|MG)-[0-9]{4}(-[A-Z]{2})?$"}),
            json!({"type": "string", "pattern": "^(?:north|south)(east|west)?$"}),
            json!({"type": "string", "pattern": "[a-z]+@(example|test)\\.org"}),
            json!({"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 1}),
            json!({"type": "number", "multipleOf": 0.3, "minimum": -1, "maximum": 1}),
            json!({"type": "integer", "multipleOf": 0.3, "minimum": 1, "maximum": 10}),
            json!({"type": "number", "minimum": 0.495, "exclusiveMaximum": 0.5}),
            json!({"type": "number", "exclusiveMaximum": 0}),
            json!({"type": "number", "exclusiveMinimum": 0.999, "maximum": 1}),
            json!({"type": "integer", "exclusiveMaximum": 0.5}),
            json!({"type": "number", "minimum": 0, "exclusiveMinimum": true,
                   "maximum": 0.001, "exclusiveMaximum": true}),
            json!({"type": "string", "format": "time"}),
            json!({"type": "string", "format": "ipv6"}),
            json!({"type": "string", "format": "duration"}),
            json!({"type": "string", "format": "uri-reference"}),
            json!({"type": "string", "format": "json-pointer"}),
        ] {
            for seed in 0..30 {
                let value = made(&schema, seed).unwrap_or_else(|e| panic!("{schema}: {e}"));
                assert_valid(&schema, &value);
            }
        }
    }

    /// A `minLength` is padded in linear time up to the cap, and a larger one is refused at once,
    /// naming the member and the cap.
    #[test]
    fn long_strings_are_made_up_to_the_cap_and_refused_beyond_it() {
        let schema = json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 500_000, "pattern": "^[0-9]+$"}}});
        let value = checked(&json!({}), &schema, 1).expect("made");
        assert_eq!(value["text"].as_str().map(str::len), Some(500_000));

        let schema = json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 20_000_000}}});
        let refused = checked(&json!({}), &schema, 1).expect_err("beyond the cap");
        assert_eq!(refused.at, "text");
        assert!(refused.what.contains("20000000"), "{refused}");
        assert!(
            refused.what.contains(&MAX_ANSWER_SIZE.to_string()),
            "{refused}"
        );

        let schema = json!({"type": "array", "minItems": 1_000_000_000_000u64, "items": {}});
        let refused = checked(&json!({}), &schema, 1).expect_err("beyond the cap");
        assert!(refused.what.contains("1000000000000 items"), "{refused}");
        // A pattern whose shortest match is beyond the cap.
        let schema = json!({"type": "string", "pattern": "^(a{1000}){2000}$"});
        assert!(made(&schema, 1).is_err());
    }

    /// What no value meets, or what the mock cannot generate, is an error that names where and
    /// what, never a panic.
    #[test]
    fn what_cannot_be_made_is_named() {
        for (schema, named) in [
            (
                json!({"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{8}$"}),
                "^(?=.*[0-9])[a-z0-9]{8}$",
            ),
            (json!({"type": "string", "pattern": "^(a)\\1$"}), "^(a)\\1$"),
            (
                json!({"type": "string", "minLength": 5, "maxLength": 3}),
                "at most 3",
            ),
            (
                json!({"type": "number", "minimum": 2, "maximum": 1}),
                "minimum 2",
            ),
            (
                json!({"type": "integer", "minimum": 0.2, "maximum": 0.8}),
                "maximum 0.8",
            ),
            (
                json!({"type": "number", "multipleOf": 0.5, "minimum": 0.6, "maximum": 0.9}),
                "multipleOf 0.5",
            ),
            (
                json!({"type": "string", "format": "date", "minLength": 40}),
                "format date",
            ),
            (
                json!({"type": "object", "required": ["a"], "additionalProperties": false}),
                "additionalProperties: false",
            ),
            (
                json!({"type": "array", "uniqueItems": true, "minItems": 3,
                       "items": {"type": "boolean"}}),
                "3 distinct items",
            ),
        ] {
            let error = checked(&json!({}), &schema, 3).expect_err(&schema.to_string());
            assert!(error.to_string().contains(named), "{schema}: {error}");
        }
    }

    /// A value that keyword generation got right but the whole schema refuses (`oneOf` whose
    /// branches overlap) is refused by [`valid_example`], naming the member.
    #[test]
    fn the_whole_answer_is_checked() {
        let schema = json!({"type": "object", "required": ["x"], "properties": {
            "x": {"oneOf": [{"type": "string"}, {"type": "string", "minLength": 1}]}}});
        let error = checked(&json!({}), &schema, 1).expect_err("both branches accept it");
        assert_eq!(error.at, "x");
    }

    /// A regular expression made of the constructs descriptions use: literals, classes,
    /// escapes, groups, alternation, quantifiers, anchors.
    fn pattern() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            "[a-zA-Z0-9]".prop_map(|c| c.to_string()),
            Just("[A-Z]".to_owned()),
            Just("[a-f0-9]".to_owned()),
            Just("[^ ]".to_owned()),
            Just("\\d".to_owned()),
            Just("\\w".to_owned()),
            Just("\\.".to_owned()),
            Just("-".to_owned()),
            Just(".".to_owned()),
        ];
        let quantified = (
            atom,
            prop_oneof![
                Just(""),
                Just("?"),
                Just("*"),
                Just("+"),
                Just("{2}"),
                Just("{1,3}"),
                Just("{2,}")
            ],
        )
            .prop_map(|(atom, quantifier)| format!("{atom}{quantifier}"));
        let sequence = prop::collection::vec(quantified, 1..4).prop_map(|parts| parts.concat());
        let group = prop::collection::vec(sequence.clone(), 1..3)
            .prop_map(|branches| format!("({})", branches.join("|")));
        let part = prop_oneof![sequence, group.clone(), group.prop_map(|g| format!("{g}?"))];
        (
            prop::collection::vec(part, 1..4),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(parts, start, end)| {
                format!(
                    "{}{}{}",
                    if start { "^" } else { "" },
                    parts.concat(),
                    if end { "$" } else { "" }
                )
            })
    }

    /// Decimals the way descriptions write bounds and steps.
    fn decimal_value() -> impl Strategy<Value = f64> {
        (-2000i64..2000, 0u32..4).prop_map(|(mantissa, decimals)| {
            mantissa_value(i128::from(mantissa), decimals).unwrap_or_default()
        })
    }

    /// A number or integer schema that some value meets: built around a witness `k × step`.
    fn number_schema() -> impl Strategy<Value = Value> {
        (
            any::<bool>(),
            prop::option::of(prop_oneof![
                Just(0.01f64),
                Just(0.1),
                Just(0.25),
                Just(0.3),
                Just(0.5),
                Just(1.0),
                Just(2.5),
                Just(7.0),
                Just(0.001)
            ]),
            -500i64..500,
            0.0f64..50.0,
            0.0f64..50.0,
            0u8..4,
            0u8..3,
        )
            .prop_map(|(integer, step, k, below, above, low_kind, high_kind)| {
                // Integers: the multiples of `step` that are integers are those of its
                // integer step (0.3: 3).
                let witness = match step {
                    Some(step) if integer => {
                        (i128::from(k) * integer_step(step).unwrap_or(1)) as f64
                    }
                    Some(step) => {
                        let (mantissa, decimals) = decimal_parts(step).unwrap_or((1, 0));
                        mantissa_value(i128::from(k) * mantissa, decimals).unwrap_or_default()
                    }
                    None => k as f64,
                };
                let mut schema = json!({"type": if integer { "integer" } else { "number" }});
                if let Some(step) = step {
                    schema["multipleOf"] = json!(step);
                }
                // Inclusive, exclusive (3.1), exclusive (3.0 flag), or none.
                let mut bound = |kind: u8, gap: f64, lower: bool| {
                    let gap = if kind == 0 { 0.0 } else { gap };
                    let value = if lower { witness - gap } else { witness + gap };
                    let value = (value * 1000.0).round() / 1000.0;
                    // A bound at the witness itself is inclusive.
                    let exclusive = kind >= 2 && value != witness;
                    let (key, flag) = if lower {
                        ("minimum", "exclusiveMinimum")
                    } else {
                        ("maximum", "exclusiveMaximum")
                    };
                    match (kind, exclusive) {
                        (3, _) => {}
                        (2, true) if lower == (k % 2 == 0) => {
                            schema[key] = json!(value);
                            schema[flag] = json!(true);
                        }
                        (2, true) => schema[flag] = json!(value),
                        _ => schema[key] = json!(value),
                    }
                };
                bound(low_kind, below, true);
                bound(high_kind, above, false);
                schema
            })
    }

    /// A string schema that some value meets.
    fn string_schema() -> impl Strategy<Value = Value> {
        prop_oneof![
            pattern().prop_map(|pattern| json!({"type": "string", "pattern": pattern})),
            prop::sample::select(vec![
                "date",
                "date-time",
                "time",
                "duration",
                "email",
                "idn-email",
                "hostname",
                "idn-hostname",
                "ipv4",
                "ipv6",
                "uri",
                "uri-reference",
                "iri",
                "iri-reference",
                "uri-template",
                "uuid",
                "json-pointer",
                "relative-json-pointer",
                "regex",
                "byte",
                "unknown-format",
            ])
            .prop_map(|format| json!({"type": "string", "format": format})),
            (0u64..300, 0u64..300).prop_map(|(min, extra)| {
                json!({"type": "string", "minLength": min, "maxLength": min + extra})
            }),
            (
                1u64..40,
                prop::sample::select(vec!["^[a-z]+$", "^\\d+$", "[A-Z]", "^x(y|z)*$"])
            )
                .prop_map(|(min, pattern)| {
                    json!({"type": "string", "minLength": min, "pattern": pattern})
                }),
        ]
    }

    /// Objects and arrays over the scalar schemas above.
    fn any_schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            number_schema(),
            string_schema(),
            Just(json!({"type": "boolean"})),
            Just(json!({"enum": ["A", "B", null]})),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                (
                    prop::collection::btree_map("[a-z]{1,6}", inner.clone(), 0..4),
                    any::<bool>()
                )
                    .prop_map(|(members, all_required)| {
                        let required: Vec<&String> = if all_required {
                            members.keys().collect()
                        } else {
                            Vec::new()
                        };
                        json!({"type": "object", "properties": members, "required": required})
                    }),
                (inner, 0u64..4, 0u64..3).prop_map(|(items, min, extra)| {
                    json!({"type": "array", "items": items, "minItems": min,
                           "maxItems": min + extra})
                }),
            ]
        })
    }

    /// 300 cases from a fixed seed, so CI runs the same ones (`PROPTEST_CASES` and
    /// `PROPTEST_RNG_SEED` explore further), and no regression files written into the tree.
    fn config() -> ProptestConfig {
        let mut config = ProptestConfig::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = 300;
        }
        if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
            config.rng_seed = proptest::test_runner::RngSeed::Fixed(0x6d6f_636b);
        }
        config.failure_persistence = None;
        config
    }

    proptest! {
        #![proptest_config(config())]

        /// A schema some value meets gets a value it accepts, made by the keywords' own
        /// generation (the whole-answer check is not needed).
        #[test]
        fn a_satisfiable_schema_gets_a_valid_value(schema in any_schema(), seed in any::<u64>()) {
            let value = made(&schema, seed);
            prop_assert!(value.is_ok(), "{schema}: {value:?}");
            let value = value.unwrap_or_default();
            let validator = schema::validator(&json!({}), &schema).expect("compiles");
            let refusals = schema::refusals(&validator, &value, "");
            prop_assert!(refusals.is_empty(), "{schema} refuses {value}: {refusals:?}");
        }

        /// Any combination of these keywords, contradictory ones included, gives a value its
        /// schema accepts or an [`Unmakeable`]: never a panic, never a value refused.
        #[test]
        fn any_schema_gets_a_valid_value_or_a_reason(
            base in any_schema(),
            min_length in prop::option::of(0u64..50),
            max_length in prop::option::of(0u64..50),
            minimum in prop::option::of(decimal_value()),
            maximum in prop::option::of(decimal_value()),
            step in prop::option::of(decimal_value()),
            seed in any::<u64>(),
        ) {
            let mut schema = base;
            if let Value::Object(map) = &mut schema {
                for (key, value) in [
                    ("minLength", min_length.map(Value::from)),
                    ("maxLength", max_length.map(Value::from)),
                    ("minimum", minimum.map(Value::from)),
                    ("maximum", maximum.map(Value::from)),
                    ("multipleOf", step.filter(|s| *s > 0.0).map(Value::from)),
                ] {
                    if let Some(value) = value {
                        map.insert(key.to_owned(), value);
                    }
                }
            }
            if let Ok(value) = checked(&json!({}), &schema, seed) {
                assert_valid(&schema, &value);
            }
        }
    }
}
