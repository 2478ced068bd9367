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
//!
//! Bottom up: [`reading`] (references, `allOf`, types), [`unmakeable`] (why not, and the size
//! cap), [`leaf`] (a string's or number's own keywords), [`numbers`], [`strings`], then
//! [`generator`] (the walk); this module checks whole answers and fills what fixtures lack.

mod generator;
mod leaf;
mod numbers;
mod reading;
mod strings;
#[cfg(test)]
mod tests;
mod unmakeable;

use jsonschema::Validator;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::schema;
pub use generator::example;
use reading::allows_null;
pub use reading::{MAX_DEPTH, merged, resolve};
pub use unmakeable::Unmakeable;

/// How many whole answers [`valid_example`] makes before it gives up.
const ANSWER_ATTEMPTS: usize = 4;

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
