//! Property tests: random and mutated documents fed to the overlay engine, the down-convert and
//! preflight (with progenitor and generation behind it) never make them panic.
//!
//! Deterministic by default: a fixed seed and a case count that keeps `cargo test` within
//! seconds. For a longer hunt, set `PROPTEST_CASES` (and `PROPTEST_RNG_SEED` for other inputs):
//!
//! ```sh
//! PROPTEST_CASES=5000 PROPTEST_RNG_SEED=7 cargo test -p creditdata-codegen --test it properties::
//! ```
//!
//! A failure prints the shrunk input; nothing is written to the source tree.

use std::path::Path;
use std::sync::OnceLock;

use creditdata_codegen::document;
use creditdata_codegen::downconvert::downconvert;
use creditdata_codegen::overlay::{ApplyOptions, Overlay, apply};
use creditdata_codegen::{generate, links, open_enums, preflight};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::{Map, Value, json};

/// The seed CI runs with.
const SEED: u64 = 0x0c4e_d17d_a7a0_0001;

/// The default config (which reads `PROPTEST_*` variables), with this file's defaults for what
/// the environment does not set.
fn config(cases: u32) -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(SEED);
    }
    config.failure_persistence = None;
    config
}

// ---------------------------------------------------------------------------------------------
// Values that look like parts of OpenAPI documents

const KEYS: &[&str] = &[
    "openapi",
    "info",
    "title",
    "version",
    "paths",
    "components",
    "schemas",
    "responses",
    "parameters",
    "requestBody",
    "requestBodies",
    "content",
    "schema",
    "type",
    "properties",
    "items",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "$ref",
    "enum",
    "const",
    "default",
    "nullable",
    "required",
    "additionalProperties",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "examples",
    "example",
    "discriminator",
    "description",
    "in",
    "name",
    "style",
    "operationId",
    "get",
    "post",
    "patch",
    "put",
    "delete",
    "200",
    "204",
    "400",
    "4XX",
    "default",
    "/a",
    "/a/{id}",
    "{id}",
    "application/json",
    "application/json-patch+json",
    "application/*+json",
    "text/plain",
    "application/octet-stream",
    "multipart/form-data",
    "encoding",
    "headers",
    "$defs",
    "$schema",
    "contentEncoding",
    "contentMediaType",
    "webhooks",
    "security",
    "securitySchemes",
    "x-creditdata-open-enum",
    "x-creditdata-hoisted-from",
    "x-creditdata-request-variant-of",
    "x-y",
    "links",
    "callbacks",
    "A",
    "B",
    "AInput",
    "",
];

const STRINGS: &[&str] = &[
    "object",
    "string",
    "integer",
    "number",
    "array",
    "boolean",
    "null",
    "file",
    "3.1.0",
    "3.0.3",
    "3.1",
    "2.0",
    "1.0.0",
    "#/components/schemas/A",
    "#/components/schemas/B",
    "#/components/schemas/",
    "#/components/schemas/A/properties/x",
    "#/",
    "#",
    "#/paths/~1a/get",
    "#/components/responses/R",
    "#/components/requestBodies/B",
    "other.json#/A",
    "http://example.com/x#/y",
    "application/json",
    "application/merge-patch+json; charset=utf-8",
    "application/*+json",
    "text/json",
    "^-?(?:0|[1-9]\\d*)$",
    "^[A-Z",
    "(",
    "int32",
    "int64",
    "double",
    "date-time",
    "uuid",
    "binary",
    "byte",
    "base64",
    "path",
    "query",
    "header",
    "cookie",
    "matrix",
    "deepObject",
    "form",
    "/a/{id}",
    "{id}",
    "auto",
    "Auto",
    "a/b~c",
    "\u{202e}",
    "",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..300).prop_map(|n| json!(n)),
        prop_oneof![
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(1e308)),
            Just(json!(-0.5)),
            Just(json!(2.0))
        ],
        prop::sample::select(STRINGS).prop_map(|s| json!(s)),
        "[a-zA-Z0-9_/{}$#.~ -]{0,10}".prop_map(Value::String),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(KEYS).prop_map(str::to_string),
        1 => "[a-zA-Z0-9_/{}$~.-]{0,8}",
    ]
}

/// JSON trees up to a few levels deep, with OpenAPI keywords for keys and values.
fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Schemas made of real keywords with plausible values: what typify and our passes see.
fn schema() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(&["A", "B", "Item", "JsonPatchOperation", "Missing"][..]);
    let simple = (
        prop::option::of(prop::sample::select(
            &[
                "string", "integer", "number", "boolean", "object", "array", "null",
            ][..],
        )),
        prop::option::of(prop::collection::vec(
            prop_oneof![
                prop::sample::select(&["a", "A", "b", "", "1"][..]).prop_map(|s| json!(s)),
                leaf()
            ],
            0..4,
        )),
        prop::option::of(leaf()),
        prop::option::of(prop::sample::select(
            &[
                "int32",
                "int64",
                "uuid",
                "date-time",
                "binary",
                "byte",
                "email",
                "double",
                "x",
            ][..],
        )),
        prop::option::of(prop::sample::select(
            &["^[a-z]+$", "(", "^-?(?:0|[1-9]\\d*)$"][..],
        )),
        prop::option::of(0u64..3),
        any::<bool>(),
        prop::option::of(names.clone()),
    )
        .prop_map(
            |(ty, values, default, format, pattern, min_length, nullable, reference)| {
                let mut schema = Map::new();
                if let Some(reference) = reference {
                    schema.insert(
                        "$ref".into(),
                        json!(format!("#/components/schemas/{reference}")),
                    );
                }
                if let Some(ty) = ty {
                    schema.insert("type".into(), json!(ty));
                }
                if let Some(values) = values {
                    schema.insert("enum".into(), Value::Array(values));
                }
                if let Some(default) = default {
                    schema.insert("default".into(), default);
                }
                if let Some(format) = format {
                    schema.insert("format".into(), json!(format));
                }
                if let Some(pattern) = pattern {
                    schema.insert("pattern".into(), json!(pattern));
                }
                if let Some(min) = min_length {
                    schema.insert("minLength".into(), json!(min));
                }
                if nullable {
                    schema.insert("nullable".into(), json!(true));
                }
                Value::Object(schema)
            },
        );
    simple.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((key(), inner.clone()), 0..4).prop_map(|properties| {
                json!({ "type": "object", "properties": Value::Object(properties.into_iter().collect()) })
            }),
            inner.clone().prop_map(|items| json!({ "type": "array", "items": items })),
            (prop::sample::select(&["allOf", "anyOf", "oneOf"][..]), prop::collection::vec(inner, 1..4))
                .prop_map(|(k, branches)| json!({ k: branches })),
        ]
    })
}

/// A document shaped like OpenAPI at the top, random below.
fn random_document() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(json!("3.1.0")),
            Just(json!("3.0.3")),
            Just(json!("3.1.1")),
            leaf()
        ],
        prop::collection::vec((key(), value()), 0..4),
        prop::collection::vec((key(), value()), 0..6),
        prop::option::of(value()),
    )
        .prop_map(|(version, paths, schemas, extra)| {
            let mut doc = json!({
                "openapi": version,
                "info": { "title": "t", "version": "1" },
                "paths": Value::Object(paths.into_iter().map(|(k, v)| (format!("/{k}"), v)).collect()),
                "components": { "schemas": Value::Object(schemas.into_iter().collect()) },
            });
            if let Some(extra) = extra {
                doc["x-extra"] = extra;
            }
            doc
        })
}

// ---------------------------------------------------------------------------------------------
// Mutations of real documents

fn data(name: &str) -> Value {
    document::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Small documents each reproducing constructs real generators publish.
fn small_seeds() -> &'static [Value] {
    static SEEDS: OnceLock<Vec<Value>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        [
            "tests/data/aspnet10-numbers.json",
            "tests/data/json-patch-bodies.json",
            "tests/data/lint-provoking.json",
            "tests/data/independent-schema-failures.json",
        ]
        .into_iter()
        .map(data)
        .collect()
    })
}

/// The description of the service, version 1.0 (the frozen copy: a vendor release changes the
/// inputs of no property test).
fn vendored() -> &'static Value {
    static SPEC: OnceLock<Value> = OnceLock::new();
    SPEC.get_or_init(|| data("tests/data/frozen-1.0/spec/openapi.json"))
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the node with a random value.
    Replace(usize, Value),
    /// Remove the node from its parent.
    Remove(usize),
    /// Set a member of the node (if an object) to a random value.
    Insert(usize, String, Value),
    /// Replace the node with a copy of another node.
    CopyFrom(usize, usize),
    /// Replace a schema (a component schema, a property, items, a media type's schema) with
    /// another plausible schema.
    Schema(usize, Value),
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let one = prop_oneof![
        1 => (any::<usize>(), value()).prop_map(|(at, v)| Mutation::Replace(at, v)),
        1 => any::<usize>().prop_map(Mutation::Remove),
        1 => (any::<usize>(), key(), value()).prop_map(|(at, k, v)| Mutation::Insert(at, k, v)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(at, from)| Mutation::CopyFrom(at, from)),
        3 => (any::<usize>(), schema()).prop_map(|(at, v)| Mutation::Schema(at, v)),
    ];
    prop::collection::vec(one, 1..5)
}

/// JSON pointers of every node, in preorder.
fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    walk(
                        v,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

fn mutate(mut doc: Value, mutations: &[Mutation]) -> Value {
    for mutation in mutations {
        let all = pointers(&doc);
        let pick = |i: &usize| all[i % all.len()].clone();
        match mutation {
            Mutation::Replace(at, v) => {
                if let Some(node) = doc.pointer_mut(&pick(at)) {
                    *node = v.clone();
                }
            }
            Mutation::Remove(at) => {
                let at = pick(at);
                let Some((parent, last)) = at.rsplit_once('/') else {
                    continue;
                };
                let last = last.replace("~1", "/").replace("~0", "~");
                match doc.pointer_mut(parent) {
                    Some(Value::Object(map)) => {
                        map.shift_remove(&last);
                    }
                    Some(Value::Array(items)) => {
                        if let Ok(i) = last.parse::<usize>()
                            && i < items.len()
                        {
                            items.remove(i);
                        }
                    }
                    _ => {}
                }
            }
            Mutation::Insert(at, k, v) => {
                if let Some(Value::Object(map)) = doc.pointer_mut(&pick(at)) {
                    map.insert(k.clone(), v.clone());
                }
            }
            Mutation::Schema(at, schema) => {
                let schemas: Vec<&String> = all
                    .iter()
                    .filter(|p| {
                        let parent = p.rsplit_once('/').map_or("", |(parent, _)| parent);
                        parent.ends_with("/properties")
                            || parent == "/components/schemas"
                            || p.ends_with("/items")
                            || p.ends_with("/schema")
                    })
                    .collect();
                if !schemas.is_empty()
                    && let Some(node) = doc.pointer_mut(schemas[at % schemas.len()])
                {
                    *node = schema.clone();
                }
            }
            Mutation::CopyFrom(at, from) => {
                let source = doc.pointer(&pick(from)).cloned();
                if let (Some(source), Some(node)) = (source, doc.pointer_mut(&pick(at))) {
                    *node = source;
                }
            }
        }
    }
    doc
}

fn mutated_small_seed() -> impl Strategy<Value = Value> {
    (0..small_seeds().len(), mutations())
        .prop_map(|(seed, mutations)| mutate(small_seeds()[seed].clone(), &mutations))
}

// ---------------------------------------------------------------------------------------------
// Overlays

const TARGETS: &[&str] = &[
    "$",
    "$.paths",
    "$.paths.*",
    "$.paths.*.*",
    "$.paths.*.*.requestBody.content",
    "$.paths.*.*.requestBody.content['text/json']",
    "$..type",
    "$..properties",
    "$.components.schemas",
    "$.components.schemas.*",
    "$.components.schemas[*].required",
    "$..[?@.type == 'string']",
    "$..enum[?@ == 'Auto']",
    "$.info.title",
    "$.info",
    "$['paths']['/a']",
    "$.a[0]",
    "$.a[-1]",
    "$.a[1:3]",
    "$..*",
    "$..required[0]",
    "$.openapi",
    "not a path",
    "$[",
    "$.x..",
    "info.version",
    "",
];

fn action() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            8 => prop::sample::select(TARGETS).prop_map(|t| json!(t)),
            1 => leaf(),
        ],
        prop::option::of(value()),
        prop::option::of(prop_oneof![Just(json!(true)), Just(json!(false)), leaf()]),
        prop::option::of(prop_oneof![
            prop::sample::select(TARGETS).prop_map(|t| json!(t)),
            leaf()
        ]),
        prop::option::of("[a-z ]{0,12}"),
        prop::option::of((key(), leaf())),
    )
        .prop_map(|(target, update, remove, copy, description, extra)| {
            let mut action = Map::new();
            action.insert("target".into(), target);
            if let Some(update) = update {
                action.insert("update".into(), update);
            }
            if let Some(remove) = remove {
                action.insert("remove".into(), remove);
            }
            if let Some(copy) = copy {
                action.insert("copy".into(), copy);
            }
            if let Some(description) = description {
                action.insert("description".into(), json!(description));
            }
            if let Some((k, v)) = extra {
                action.insert(k, v);
            }
            Value::Object(action)
        })
}

fn overlay_document() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            4 => prop::sample::select(&["1.0.0", "1.1.0"][..]).prop_map(|v| json!(v)),
            1 => leaf(),
        ],
        prop::collection::vec(action(), 0..6),
        prop::option::of((key(), leaf())),
    )
        .prop_map(|(version, actions, extra)| {
            let mut overlay = json!({
                "overlay": version,
                "info": { "title": "t", "version": "1" },
                "actions": actions,
            });
            if let Some((k, v)) = extra {
                overlay[k] = v;
            }
            overlay
        })
}

fn small_document() -> impl Strategy<Value = Value> {
    prop_oneof![random_document(), mutated_small_seed(), value()]
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn overlays_never_panic_and_a_refused_run_changes_nothing(
        document in small_document(),
        overlays in prop::collection::vec(overlay_document(), 1..3),
        lenient in any::<bool>(),
    ) {
        let parsed: Vec<Overlay> = overlays
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Overlay::from_value(o, &format!("o{i}.yaml")).ok())
            .collect();
        let mut applied = document.clone();
        let result = apply(&mut applied, &parsed, &ApplyOptions { lenient });
        if result.is_err() {
            prop_assert_eq!(&applied, &document);
        }
        // Every message renders.
        match result {
            Ok(report) => { let _ = report.warnings.iter().map(ToString::to_string).count(); }
            Err(errors) => { let _ = errors.to_string(); }
        }
    }

    #[test]
    fn down_convert_and_static_preflight_never_panic_on_random_documents(
        document in prop_oneof![random_document(), value()],
    ) {
        if let Ok(converted) = downconvert(&document) {
            let _ = preflight::preflight_static(&converted.document).to_string();
        }
    }
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn down_convert_and_static_preflight_never_panic_on_the_mutated_service_description(
        mutations in mutations(),
    ) {
        let document = mutate(vendored().clone(), &mutations);
        if let Ok(converted) = downconvert(&document) {
            let mut effective = converted.document;
            if open_enums::prepare(&mut effective).is_ok() {
                let _ = links::derive(&mut effective);
                let report = preflight::preflight_static(&effective);
                let _ = report.to_string();
                let _ = report.to_overlay_yaml();
            }
        }
    }

    #[test]
    fn the_whole_chain_never_panics_on_small_documents(
        document in prop_oneof![4 => mutated_small_seed(), 1 => random_document()],
    ) {
        // What the pipeline does after the overlays, in memory: down-convert, open enums,
        // links, preflight (progenitor and the narrowing included), generation.
        let Ok(converted) = downconvert(&document) else { return Ok(()) };
        let mut effective = converted.document;
        let Ok(plan) = open_enums::prepare(&mut effective) else { return Ok(()) };
        let _ = links::derive(&mut effective);
        let checks = preflight::preflight_static(&effective);
        let _ = checks.to_string();
        // As in the pipeline, progenitor runs only on what the static checks pass: some of what
        // they refuse (a `$ref` cycle) overflows its stack, which no panic handler catches.
        if !checks.is_clean() {
            return Ok(());
        }
        let report = preflight::narrow_generator_failure(&effective, 64).report;
        let _ = report.to_string();
        if report.is_clean() {
            let _ = generate::generate(&effective, &plan, "// test\n");
        }
    }
}
