//! `cargo xtask drift` as a scheduled CI job runs it: exit codes that follow the report's
//! classification, the report in every format, downloads from a loopback server, nothing
//! changed in the workspace. Nothing here leaves 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Output;

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::overlay::{self, ApplyOptions};
use serde_json::Value;

use crate::support::{self, serve, text, workspace_root};

fn release(name: &str) -> PathBuf {
    workspace_root()
        .join("codegen/tests/data/releases")
        .join(name)
}

/// The vendored description after a release, as a JSON file in `dir`.
fn released(dir: &Path, name: &str) -> PathBuf {
    let doc = overlay::apply_files(
        &workspace_root().join("spec/openapi.json"),
        &[release(name)],
        &ApplyOptions { lenient: false },
    )
    .unwrap()
    .document;
    let path = dir.join(name.replace(".overlay.yaml", ".json"));
    std::fs::write(&path, document::to_string(&doc, Format::Json)).unwrap();
    path
}

fn xtask(args: &[&str]) -> Output {
    support::xtask().args(args).output().expect("xtask runs")
}

/// The checked-in outputs drift compares with, byte for byte.
fn checked_in() -> Vec<Vec<u8>> {
    [
        "spec/openapi.effective.json",
        "generated-client/src/generated.rs",
        "generated-client/SURFACE.md",
        "generated-client/src/generated_datasets.rs",
        "spec/openapi.json",
    ]
    .iter()
    .map(|p| std::fs::read(workspace_root().join(p)).unwrap())
    .collect()
}

/// Runs drift on `spec` with a JSON report; returns the exit code, what it said on stderr and
/// the report.
fn drift_json_and_stderr(spec: &Path) -> (Option<i32>, String, Value) {
    let out = xtask(&[
        "drift",
        "--spec",
        spec.to_str().unwrap(),
        "--report",
        "json",
    ]);
    let stderr = text(&out.stderr);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is the JSON report ({e}); stderr:\n{stderr}"));
    (out.status.code(), stderr, report)
}

/// Runs drift on `spec` with a JSON report; returns the exit code and the report.
fn drift_json(spec: &Path) -> (i32, Value) {
    let (code, _, report) = drift_json_and_stderr(spec);
    (code.expect("an exit code"), report)
}

#[test]
fn exit_codes_follow_the_classification() {
    let dir = tempfile::tempdir().unwrap();
    let before = checked_in();

    let (code, report) = drift_json(&workspace_root().join("spec/openapi.json"));
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["summary"]["changes"], 0);

    let documentation = released(dir.path(), "21-documentation-only.overlay.yaml");
    assert_eq!(
        drift_json(&documentation).0,
        0,
        "documentation is not an API change"
    );

    let additive = released(dir.path(), "01-delete-session.overlay.yaml");
    let (code, report) = drift_json(&additive);
    assert_eq!(code, 3, "{report:#}");
    assert_eq!(report["summary"]["breaking"], false);
    // The next patch of whatever version the client has (a release cut moves it).
    let current = report["semver"]["current"].as_str().unwrap();
    let (minor, patch) = current.rsplit_once('.').unwrap();
    let next_patch = format!("{minor}.{}", patch.parse::<u64>().unwrap() + 1);
    assert_eq!(
        report["semver"]["suggested"],
        next_patch.as_str(),
        "{report:#}"
    );

    let rust_only = released(dir.path(), "03-get-session-renamed.overlay.yaml");
    let (code, report) = drift_json(&rust_only);
    assert_eq!(
        code, 4,
        "a rename breaks callers at compile time: {report:#}"
    );
    assert_eq!(report["summary"]["wire"], "yes");
    assert_eq!(report["summary"]["source"], "no");

    let wire = released(
        dir.path(),
        "02-deprecated-categorizations-removed.overlay.yaml",
    );
    let (code, report) = drift_json(&wire);
    assert_eq!(code, 4, "{report:#}");
    assert_eq!(report["summary"]["wire"], "no");
    assert_eq!(report["semver"]["suggested"], "0.2.0");

    assert!(
        before == checked_in(),
        "drift changes nothing in the workspace"
    );
}

#[test]
fn the_text_and_markdown_reports_and_a_json_copy() {
    let dir = tempfile::tempdir().unwrap();
    let spec = released(dir.path(), "11-enum-values-added.overlay.yaml");
    let json_copy = dir.path().join("report.json");
    let out = xtask(&[
        "drift",
        "--spec",
        spec.to_str().unwrap(),
        "--report",
        "markdown",
        "--json-out",
        json_copy.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "new enum values are compatible (the enums are #[non_exhaustive]); stderr:\n{}",
        text(&out.stderr)
    );
    let markdown = text(&out.stdout);
    assert!(
        markdown.starts_with("## creditdata-client: API changes"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| `response_enum_value_added` | yes | yes |"),
        "{markdown}"
    );
    let copy: Value = serde_json::from_str(&std::fs::read_to_string(&json_copy).unwrap()).unwrap();
    assert_eq!(copy["schema_version"], 1);
    assert_eq!(copy["summary"]["changes"], 3);

    let out = xtask(&["drift", "--spec", spec.to_str().unwrap()]);
    let plain = text(&out.stdout);
    assert!(
        plain.contains(
            "[request_enum_value_added] CustomerProgressStatusInput: value \"ON_HOLD\" added"
        ),
        "{plain}"
    );
}

#[test]
fn a_description_the_generator_cannot_take_exits_1_and_says_why() {
    let broken = workspace_root().join("codegen/tests/data/preflight-broken.json");
    let out = xtask(&["drift", "--spec", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("nothing was compared"), "{stderr}");
    assert!(out.stdout.is_empty(), "no report: {}", text(&out.stdout));
}

#[test]
fn url_and_spec_exclude_each_other() {
    let out = xtask(&[
        "drift",
        "--url",
        "http://127.0.0.1:9/x.json",
        "--spec",
        "spec/openapi.json",
    ]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn url_downloads_both_documents_and_keeps_the_query_out_of_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let spec = support::with_unnamed_dataset(dir.path());
    let doc = document::load(&spec).unwrap();
    let base = serve(vec![
        (
            "/openapi/v1.json",
            document::to_string(&doc, Format::Json).into_bytes(),
        ),
        (
            "/openapi/v1.yaml",
            document::to_string(&doc, Format::Yaml).into_bytes(),
        ),
    ]);
    let before = checked_in();
    let url = format!("{base}/openapi/v1.json?signature=very-secret-token");
    let out = xtask(&["drift", "--url", &url, "--report", "json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("fetching {base}/openapi/v1.json?…")),
        "{stderr}"
    );
    assert!(!stderr.contains("very-secret-token"), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["changes"][0]["kind"], "operation_added");
    assert!(
        before == checked_in(),
        "drift changes nothing in the workspace"
    );
}

/// The most common vendor change, a dataset published without an operationId, is classified
/// (exit 3) instead of refused: the pipeline names it and says so.
#[test]
fn a_new_operation_without_an_operation_id_is_named_and_classified() {
    let dir = tempfile::tempdir().unwrap();
    let before = checked_in();
    let spec = support::with_unnamed_dataset(dir.path());
    let (code, stderr, report) = drift_json_and_stderr(&spec);
    assert_eq!(code, Some(3), "stderr:\n{stderr}");
    let (path, name) = support::UNNAMED_DATASET;
    assert!(
        stderr.contains(&format!(
            "note: GET {path}: no operationId; named {name} (derived from method and path)"
        )),
        "{stderr}"
    );
    let changes = report["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{report:#}");
    assert_eq!(changes[0]["kind"], "operation_added");
    assert_eq!(changes[0]["operations"], serde_json::json!([name]));
    assert!(
        report["pins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["kind"] == "derived_operation_id" && p["kept"] == name),
        "{:#}",
        report["pins"]
    );
    assert!(
        before == checked_in(),
        "drift changes nothing in the workspace (no pin either)"
    );
}

/// A release that removes operations the overlays patch (each named by the pipeline, pinned in
/// 90-keep-names, and given a schema or a body by a hand-written overlay) is still classified:
/// the removal is breaking (exit 4) and named, and the overlay actions left without a target
/// are said, not turned into "cannot compare". Made from `spec/openapi.json` as it is.
#[test]
fn a_removed_operation_that_overlays_patch_is_classified_as_breaking() {
    let effective = document::load(&workspace_root().join("spec/openapi.effective.json")).unwrap();
    let mut spec = document::load(&workspace_root().join("spec/openapi.json")).unwrap();
    // Every path whose operations the pipeline named: each is pinned, most are patched too.
    let removed: Vec<(String, String)> = document::operations(&effective)
        .filter(|op| {
            op.operation
                .get("x-creditdata-derived-operation-id")
                .is_some()
        })
        .map(|op| {
            (
                op.path.to_string(),
                op.operation["operationId"].as_str().unwrap().to_string(),
            )
        })
        .take(3)
        .collect();
    assert!(!removed.is_empty(), "the description has derived names");
    for (path, _) in &removed {
        spec["paths"].as_object_mut().unwrap().shift_remove(path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("removed.json");
    std::fs::write(&path, document::to_string(&spec, Format::Json)).unwrap();

    let (code, stderr, report) = drift_json_and_stderr(&path);
    assert_eq!(code, Some(4), "{stderr}");
    for (_, id) in &removed {
        assert!(
            report["changes"].as_array().unwrap().iter().any(|c| {
                c["kind"] == "operation_removed"
                    && c["operations"]
                        .as_array()
                        .is_some_and(|o| o.contains(&id.as_str().into()))
            }),
            "{id} is reported removed: {report:#}"
        );
    }
    assert!(stderr.contains("select nothing"), "{stderr}");
    assert!(!stderr.contains("nothing was compared"), "{stderr}");
}
