//! When progenitor fails on a document the static checks pass, preflight runs it on parts of the
//! document to find what fails: every failing component schema (alone, or with the schema it
//! fails with) and every failing operation, in one run, with a fix aimed at the node that makes
//! it fail, and with a bounded number of progenitor runs.

use std::path::{Path, PathBuf};

use creditdata_codegen::pipeline::{self, Inputs, PipelineError};
use creditdata_codegen::preflight::{Problem, Report, narrow_generator_failure};
use serde_json::{Map, Value, json};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs the pipeline on `spec` with the overlays in `overlays` (created if missing).
fn pipeline_run(spec: &Path, overlays: &Path) -> Result<pipeline::Outputs, PipelineError> {
    std::fs::create_dir_all(overlays).unwrap();
    pipeline::run(&Inputs {
        spec: spec.to_path_buf(),
        overlays: overlays.to_path_buf(),
        lenient: false,
        display_root: spec.parent().unwrap().to_path_buf(),
    })
}

fn preflight_report(result: Result<pipeline::Outputs, PipelineError>) -> Report {
    match result {
        Err(PipelineError::Preflight { report }) => report,
        Err(other) => panic!("expected a preflight report, got: {other}"),
        Ok(_) => panic!("expected a preflight report, but the document generates"),
    }
}

/// (pointer of the finding, target of each of its actions).
fn summary(report: &Report) -> Vec<(String, Vec<String>)> {
    report
        .findings
        .iter()
        .map(|f| {
            assert_eq!(f.problem, Problem::GeneratorFailure, "{report}");
            (
                f.pointer.clone(),
                f.actions().map(|a| a.target.clone()).collect(),
            )
        })
        .collect()
}

#[test]
fn every_failing_schema_is_found_in_one_run_and_each_fix_aims_at_its_node() {
    let report = preflight_report(pipeline_run(
        &data("independent-schema-failures.json"),
        &tempfile::tempdir().unwrap().path().join("overlays"),
    ));
    let found = summary(&report);
    let text = report.to_string();
    assert_eq!(
        found,
        [
            (
                "/components/schemas/RecordConfig".to_string(),
                vec!["$.components.schemas.RecordConfig.properties.retain.default".to_string()]
            ),
            (
                "/components/schemas/Camera".to_string(),
                vec!["$.components.schemas.Camera.properties.serial.pattern".to_string()]
            ),
            (
                "/components/schemas/ModeRequest/properties/mode".to_string(),
                vec![
                    "$.components.schemas.ModeRequest.properties.mode.enum[?@ == 'Auto']"
                        .to_string()
                ]
            ),
            (
                "/components/schemas/Review".to_string(),
                vec!["$.components.schemas.Review.properties.severity.default".to_string()]
            ),
        ],
        "\n{text}"
    );
    // No operation is blamed for what its schemas do.
    assert!(!text.contains("Last resort"), "{text}");
    // The pair is named as a pair: the default fails only against the enum it points to.
    assert!(
        text.contains("`Review` together with `ReviewSeverity`"),
        "{text}"
    );
    // The request-side copy the open-enum stage made is not reported twice.
    assert!(!text.contains("ModeRequestModeInput`"), "{text}");
}

#[test]
fn the_suggested_overlay_makes_the_published_document_generate() {
    let dir = tempfile::tempdir().unwrap();
    let overlays = dir.path().join("overlays");
    let spec = data("independent-schema-failures.json");
    let report = preflight_report(pipeline_run(&spec, &overlays));
    std::fs::write(
        overlays.join("90-preflight.overlay.yaml"),
        report.to_overlay_yaml(),
    )
    .unwrap();
    let outputs = pipeline_run(&spec, &overlays)
        .unwrap_or_else(|e| panic!("the suggested fixes cure the document:\n{e}"));
    assert!(outputs.generated.code.contains("pub struct RecordConfig"));
}

#[test]
fn independent_failures_among_operations_are_each_found() {
    // Two operations fail on their own (an inline schema with an invalid pattern each); the
    // schemas are fine.
    let failing = |pattern: &str| {
        json!({ "200": { "description": "ok", "content": { "application/json": {
            "schema": { "type": "string", "pattern": pattern } } } } })
    };
    let fine = json!({ "200": { "description": "ok" } });
    let mut paths = Map::new();
    for i in 0..12 {
        let responses = match i {
            3 => failing("(a"),
            9 => failing("[b"),
            _ => fine.clone(),
        };
        paths.insert(
            format!("/r{i}"),
            json!({ "get": { "operationId": format!("Get{i}"), "responses": responses } }),
        );
    }
    let doc = json!({ "openapi": "3.0.3", "info": { "title": "t", "version": "1" },
                      "paths": paths });
    let narrowing = narrow_generator_failure(&doc, 200);
    let pointers: Vec<&str> = narrowing
        .report
        .findings
        .iter()
        .map(|f| f.pointer.as_str())
        .collect();
    assert_eq!(
        pointers,
        ["/paths/~1r3/get", "/paths/~1r9/get"],
        "{}",
        narrowing.report
    );
    assert!(narrowing.complete);
}

/// A document with `innocent` harmless schemas and three that fail on their own, spread out.
fn many_schemas(innocent: usize) -> Value {
    let mut schemas = Map::new();
    let mut paths = Map::new();
    for i in 0..innocent {
        let name = format!("Thing{i:04}");
        let mut schema = json!({ "type": "object", "properties": {
            "id": { "type": "string", "format": "uuid" },
            "count": { "type": "integer", "minimum": 0 },
            "label": { "type": "string", "maxLength": 40 },
        } });
        if i > 0 {
            schema["properties"]["previous"] =
                json!({ "$ref": format!("#/components/schemas/Thing{:04}", i - 1) });
        }
        schemas.insert(name.clone(), schema);
        if i % 10 == 0 {
            paths.insert(
                format!("/things/{i}"),
                json!({ "get": { "operationId": format!("GetThing{i}"), "responses": {
                    "200": { "description": "ok", "content": { "application/json": {
                        "schema": { "$ref": format!("#/components/schemas/{name}") } } } } } } }),
            );
        }
    }
    for (at, name) in [
        (innocent / 4, "BadA"),
        (innocent / 2, "BadB"),
        (innocent - 1, "BadC"),
    ] {
        schemas.insert(
            name.to_string(),
            json!({ "type": "string", "pattern": "(" }),
        );
        let thing = format!("Thing{at:04}");
        schemas[&thing]["properties"]["bad"] =
            json!({ "$ref": format!("#/components/schemas/{name}") });
    }
    json!({ "openapi": "3.0.3", "info": { "title": "t", "version": "1" },
            "paths": paths, "components": { "schemas": schemas } })
}

#[test]
fn hundreds_of_schemas_are_narrowed_with_a_bounded_number_of_generator_runs() {
    let doc = many_schemas(300);
    let narrowing = narrow_generator_failure(&doc, 1_000);
    let pointers: Vec<&str> = narrowing
        .report
        .findings
        .iter()
        .map(|f| f.pointer.as_str())
        .collect();
    assert_eq!(
        pointers,
        [
            "/components/schemas/BadA",
            "/components/schemas/BadB",
            "/components/schemas/BadC"
        ],
        "{}",
        narrowing.report
    );
    assert!(narrowing.complete);
    // One run for the whole document and one without operations, one per schema on its own,
    // then one to confirm the rest generates, and a few for each fix.
    assert!(
        narrowing.generator_runs <= 303 + 3 + 3 * 8,
        "{} runs",
        narrowing.generator_runs
    );
}

#[test]
fn an_exhausted_budget_reports_what_it_found_and_says_it_stopped() {
    let doc = many_schemas(60);
    let narrowing = narrow_generator_failure(&doc, 20);
    assert!(!narrowing.complete);
    assert!(
        narrowing.generator_runs <= 20,
        "{}",
        narrowing.generator_runs
    );
    let text = narrowing.report.to_string();
    assert!(
        text.contains("narrowing stopped after 20 progenitor runs"),
        "{text}"
    );
}

#[test]
fn findings_on_schemas_the_open_enum_stage_made_point_where_the_author_wrote_them() {
    // Found by the property tests: a 3.1 `$ref` with siblings, inside the schema it references,
    // next to a second `allOf` branch. Down-convert wraps the reference in `allOf`, the open-enum
    // stage hoists the inline enum into a component of its own, and typify would merge the
    // cycle until the stack overflows. The findings and their fixes name the published nodes.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(
        &spec,
        json!({
            "openapi": "3.1.0",
            "info": { "title": "t", "version": "1" },
            "paths": { "/items": { "get": { "operationId": "GetItem", "responses": { "200": {
                "description": "ok",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Item" } } },
            } } } } },
            "components": { "schemas": { "Item": { "type": "object", "properties": {
                "name": { "type": "string" },
                "status": { "allOf": [
                    { "$ref": "#/components/schemas/Item", "enum": ["a", "b"], "minLength": 1 },
                    { "type": "object", "properties": {} },
                ] },
            } } } },
        })
        .to_string(),
    )
    .unwrap();
    let overlays = dir.path().join("overlays");
    let report = preflight_report(pipeline_run(&spec, &overlays));
    let found: Vec<(String, Vec<String>)> = report
        .findings
        .iter()
        .map(|f| {
            assert_eq!(f.problem, Problem::RecursiveMerge, "{report}");
            (
                f.pointer.clone(),
                f.actions().map(|a| a.target.clone()).collect(),
            )
        })
        .collect();
    let status = "$.components.schemas.Item.properties.status";
    assert_eq!(
        found,
        [
            (
                "/components/schemas/Item/properties/status".to_string(),
                vec![format!("{status}.allOf[1]")]
            ),
            (
                "/components/schemas/Item/properties/status/allOf/0".to_string(),
                vec![
                    format!("{status}.allOf[0].enum"),
                    format!("{status}.allOf[0].minLength")
                ]
            ),
        ],
        "\n{report}"
    );
    std::fs::write(
        overlays.join("90-preflight.overlay.yaml"),
        report.to_overlay_yaml(),
    )
    .unwrap();
    pipeline_run(&spec, &overlays)
        .unwrap_or_else(|e| panic!("the suggested fixes cure the document:\n{e}"));
}
