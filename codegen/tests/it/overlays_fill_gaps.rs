//! The project's overlays, applied strictly to the description, fill every gap a generated client
//! would trip over; and the whole pipeline is deterministic. Both as of version 1.0: the frozen
//! copies of `tests/data/frozen-1.0/` (that the live ones still apply is what `regen` and
//! `cargo xtask check` prove on every run).

use std::path::{Path, PathBuf};

use creditdata_codegen::overlay::{self, ApplyOptions};
use creditdata_codegen::pipeline::{self, Inputs};
use serde_json::Value;

use crate::frozen;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn overlaid() -> Value {
    let overlays = pipeline::overlay_files(&frozen::overlays()).expect("overlays listed");
    assert!(overlays.len() >= 8, "overlays/ lost files: {overlays:?}");
    let applied =
        overlay::apply_files(&frozen::spec(), &overlays, &ApplyOptions { lenient: false })
            .unwrap_or_else(|e| panic!("the overlays apply strictly:\n{e}"));
    assert!(applied.report.warnings.is_empty());
    applied.document
}

/// (pointer, operation) for every operation of the document.
fn operations(doc: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            out.push((format!("{} {path}", method.to_uppercase()), op));
        }
    }
    out
}

#[test]
fn every_operation_has_an_operation_id() {
    let doc = overlaid();
    let ops = operations(&doc);
    assert_eq!(
        ops.len(),
        32,
        "31 published operations and the TSV download"
    );
    let missing: Vec<&String> = ops
        .iter()
        .filter(|(_, op)| op.get("operationId").and_then(Value::as_str).is_none())
        .map(|(name, _)| name)
        .collect();
    assert!(
        missing.is_empty(),
        "operations without operationId: {missing:?}"
    );
}

#[test]
fn no_json_media_type_lacks_a_schema_and_bodies_have_one_media_type() {
    let doc = overlaid();
    let mut problems = Vec::new();
    for (name, op) in operations(&doc) {
        if let Some(body) = op.get("requestBody") {
            let content = body["content"].as_object().expect("content");
            if content.len() != 1 || !content.contains_key("application/json") {
                problems.push(format!(
                    "{name}: request media types {:?}",
                    content.keys().collect::<Vec<_>>()
                ));
            }
            if content.values().any(|m| m.get("schema").is_none()) {
                problems.push(format!("{name}: request body without schema"));
            }
        }
        for (status, response) in op["responses"].as_object().expect("responses") {
            for (media, m) in response
                .get("content")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if media.contains("json") && m.get("schema").is_none() {
                    problems.push(format!("{name} {status}: {media} without schema"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_error_response_has_the_problem_details_body() {
    let doc = overlaid();
    let mut problems = Vec::new();
    for (name, op) in operations(&doc) {
        for (status, response) in op["responses"].as_object().expect("responses") {
            if !(status.starts_with('4') || status.starts_with('5')) {
                continue;
            }
            let schema = response.pointer("/content/application~1json/schema/$ref");
            if schema != Some(&Value::from("#/components/schemas/ProblemDetails")) {
                problems.push(format!("{name} {status}: {schema:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_binary_download_has_a_binary_media_type() {
    let doc = overlaid();
    let mut checked = 0;
    for (name, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap_or_default();
        let binary = id.contains("Excel")
            || id.contains("Tsv")
            || id.ends_with("Content") && !id.contains("SourceFile")
            || id == "GetPdfReport";
        if !binary {
            continue;
        }
        let content = op
            .pointer("/responses/200/content")
            .and_then(Value::as_object);
        let content = content.unwrap_or_else(|| panic!("{name}: no 200 content"));
        assert!(
            content.values().all(|m| m["schema"]["format"] == "binary")
                && !content.contains_key("application/json"),
            "{name}: {content:?}"
        );
        checked += 1;
    }
    assert_eq!(
        checked, 6,
        "PDF report, two Excel exports, attachment, image, TSV"
    );
}

#[test]
fn generation_is_deterministic() {
    let inputs = Inputs {
        spec: frozen::spec(),
        overlays: frozen::overlays(),
        lenient: false,
        display_root: root(),
    };
    let first = pipeline::run(&inputs).expect("pipeline runs");
    let second = pipeline::run(&inputs).expect("pipeline runs");
    assert_eq!(first.generated.code, second.generated.code);
    assert_eq!(first.effective, second.effective);
}
