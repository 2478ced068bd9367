//! The walk that makes an example of a schema: objects, arrays, `oneOf`/`anyOf`, `enum`,
//! strings, numbers and formats, within the size an answer may have.

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine as _;
use chrono::{Duration as ChronoDuration, NaiveDate, TimeZone as _, Utc};
use rand::Rng;
use rand::distributions::Distribution as _;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Number, Value, json};

use super::leaf::leaf_validator;
use super::numbers::{
    Bounds, decimal, decimal_parts, describe_number, div_ceil, div_floor, integer_step,
    mantissa_value, to_i128,
};
use super::reading::{MAX_DEPTH, limit, merged, only_null, smallest, type_of};
use super::strings::{describe_string, fitted, pattern_generator};
use super::unmakeable::{MAX_ANSWER_SIZE, Unmakeable, member_at, too_large, unmakeable};

/// How many candidates a string or number gets before the mock gives up on it.
pub(super) const CANDIDATES: usize = 8;

/// The most repetitions `*`, `+` and `{n,}` add in a pattern's string (more when a
/// `minLength` needs it).
pub(super) const SHORT_REPEAT: u32 = 8;

/// Words for plain strings: readable in a response, never personal data.
pub(super) const WORDS: &[&str] = &[
    "alpha", "birch", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island", "juniper",
];

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

pub(super) struct Examples<'a> {
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
