//! Tests of the examples: every answer of the embedded description valid, each keyword's
//! values valid, what cannot be made named, and property tests over generated schemas.

use proptest::prelude::*;
use rand::SeedableRng as _;

use super::numbers::{decimal_parts, integer_step, mantissa_value};
use super::unmakeable::MAX_ANSWER_SIZE;
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
        serde_json::from_slice(crate::documents::EFFECTIVE_JSON).expect("the embedded description");
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
                Some(step) if integer => (i128::from(k) * integer_step(step).unwrap_or(1)) as f64,
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
