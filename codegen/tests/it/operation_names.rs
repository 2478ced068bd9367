//! The names the pipeline gives operations without an operationId: the rule reproduces every
//! name of version 1.0 (the 11 the vendor publishes and the 20 the project gave by hand in
//! `overlays/01-operation-ids.overlay.yaml`), so generating without that overlay changes no
//! line of code; and derived names that collide are told apart.

use std::collections::BTreeMap;

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::operation_names::{self, DERIVED_OPERATION_ID_MARK};
use creditdata_codegen::overlay::{self, ApplyOptions};
use creditdata_codegen::pipeline::{self, Inputs, Outputs};
use serde_json::{Value, json};

use crate::frozen;

const HAND_NAMES: &str = "01-operation-ids.overlay.yaml";

/// `METHOD path` → operationId, for every operation of `doc`.
fn ids(doc: &Value) -> BTreeMap<String, Option<String>> {
    document::operations(doc)
        .map(|op| {
            (
                format!("{} {}", op.method.to_ascii_uppercase(), op.path),
                op.operation
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn the_rule_gives_every_name_of_version_1_0() {
    let published = document::load(&frozen::spec()).unwrap();
    let named = overlay::apply_files(
        &frozen::spec(),
        &[frozen::overlays().join(HAND_NAMES)],
        &ApplyOptions { lenient: false },
    )
    .unwrap()
    .document;
    let (published_ids, expected) = (ids(&published), ids(&named));
    assert_eq!(expected.len(), 31, "the frozen 1.0 has 31 operations");
    assert_eq!(
        published_ids.values().filter(|id| id.is_some()).count(),
        11,
        "the vendor names 11 of them, the overlay the other 20"
    );

    let mut wrong = Vec::new();
    for op in document::operations(&published) {
        let key = format!("{} {}", op.method.to_ascii_uppercase(), op.path);
        let rule = operation_names::operation_name(op.method, op.path);
        if Some(&rule) != expected[&key].as_ref() {
            wrong.push(format!("{key}: rule {rule}, 1.0 {:?}", expected[&key]));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");

    // The stage itself: the 20 unnamed ones, none needing a collision's alternative.
    let derived = operation_names::derive(&published);
    assert_eq!(derived.len(), 20);
    for d in &derived {
        assert_eq!(d.name, d.rule, "{}", d.note());
        let key = format!("{} {}", d.method.to_ascii_uppercase(), d.path);
        assert_eq!(Some(&d.name), expected[&key].as_ref());
    }
}

fn run(spec: &std::path::Path, overlays: &std::path::Path) -> Outputs {
    pipeline::run(&Inputs {
        spec: spec.to_path_buf(),
        overlays: overlays.to_path_buf(),
        lenient: false,
        display_root: frozen::spec_dir(),
    })
    .unwrap_or_else(|e| panic!("the pipeline runs:\n{e}"))
}

/// The generated code below its header (which lists the overlay files).
fn body(code: &str) -> String {
    code.lines()
        .skip_while(|l| l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn without_marks(mut doc: Value) -> Value {
    for item in doc["paths"].as_object_mut().unwrap().values_mut() {
        for op in item.as_object_mut().unwrap().values_mut() {
            if let Some(op) = op.as_object_mut() {
                op.shift_remove(DERIVED_OPERATION_ID_MARK);
            }
        }
    }
    doc
}

#[test]
fn without_the_hand_given_names_the_generated_code_is_the_same() {
    let by_hand = run(&frozen::spec(), &frozen::overlays());
    assert!(by_hand.derived.is_empty());

    let overlays = tempfile::tempdir().unwrap();
    for file in pipeline::overlay_files(&frozen::overlays()).unwrap() {
        if !file.ends_with(HAND_NAMES) {
            std::fs::copy(&file, overlays.path().join(file.file_name().unwrap())).unwrap();
        }
    }
    let derived = run(&frozen::spec(), overlays.path());
    assert_eq!(derived.derived.len(), 20);
    assert_eq!(
        derived.derived[0].note(),
        "POST /v1/sessions: no operationId; named CreateSession (derived from method and path)"
    );
    assert!(
        body(&by_hand.generated.code) == body(&derived.generated.code),
        "the generated code differs"
    );
    assert_eq!(by_hand.generated.surface, derived.generated.surface);
    assert_eq!(by_hand.effective, without_marks(derived.effective.clone()));
    assert_eq!(
        derived
            .effective
            .pointer("/paths/~1v1~1consumer~1packages/get")
            .map(|op| (&op["operationId"], &op[DERIVED_OPERATION_ID_MARK])),
        Some((&json!("GetConsumerPackages"), &json!("GetConsumerPackages")))
    );
}

/// A small description whose unnamed operations would all be `GetScores`: the published name
/// keeps it, the others get their context, and everything generates.
#[test]
fn colliding_derived_names_are_told_apart_and_generate() {
    let op = |id: Option<&str>| {
        let mut op = json!({
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"type": "string"}}}}}
        });
        if let Some(id) = id {
            op["operationId"] = json!(id);
        }
        op
    };
    let doc = json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/v1/persons/{id}/scores": {"get": op(None)},
            "/v2/persons/{id}/scores": {"get": op(None)},
            "/v1/sessions/{id}/scores": {"get": op(Some("GetScores"))},
            "/v1/firms/{id}/scores": {"get": op(None)}
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, document::to_string(&doc, Format::Json)).unwrap();
    let overlays = dir.path().join("overlays");
    std::fs::create_dir(&overlays).unwrap();
    let outputs = run(&spec, &overlays);
    let names: Vec<(&str, &str)> = outputs
        .derived
        .iter()
        .map(|d| (d.rule.as_str(), d.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("GetScores", "GetPersonScores"),
            ("GetScores", "GetV2PersonScores"),
            ("GetScores", "GetFirmScores"),
        ]
    );
    for method in [
        "get_scores",
        "get_person_scores",
        "get_v2_person_scores",
        "get_firm_scores",
    ] {
        assert!(
            outputs
                .generated
                .code
                .contains(&format!("pub fn {method}(&self)")),
            "no Client::{method}"
        );
    }
}
