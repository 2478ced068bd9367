//! `cargo xtask overlay apply`, run as the built binary.

use std::path::{Path, PathBuf};
use std::process::Output;

use creditdata_codegen::document::{self, Format};

use crate::support::{self, text};

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/fixtures/overlay-compliant-sets"
);

/// Whether the OAI's compliant sets are beside the checkout; the tests that read them skip
/// where they are not.
fn have_cases() -> bool {
    let present = Path::new(CASES).is_dir();
    if !present {
        eprintln!("skipped: no OAI overlay compliant sets at {CASES}");
    }
    present
}

fn case(name: &str, file: &str) -> PathBuf {
    let path = Path::new(CASES).join(name).join(file);
    assert!(path.is_file(), "missing fixture {}", path.display());
    path
}

fn xtask(args: &[&Path]) -> Output {
    support::xtask()
        .args(["overlay", "apply"])
        .args(args)
        .output()
        .expect("the xtask binary runs")
}

#[test]
fn applies_a_compliant_set_to_stdout_in_the_format_of_the_spec() {
    if !have_cases() {
        return;
    }
    let out = xtask(&[
        &case("remove-matching-responses", "openapi.yaml"),
        &case("remove-matching-responses", "overlay.yaml"),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let actual = document::parse(&text(&out.stdout), Format::Yaml, "stdout").unwrap();
    let expected = document::load(&case("remove-matching-responses", "output.yaml")).unwrap();
    assert_eq!(actual, expected);
}

#[test]
fn writes_json_to_the_output_file_by_its_extension() {
    if !have_cases() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("nested").join("effective.json");
    let out = xtask(&[
        &case("add-a-license", "openapi.yaml"),
        &case("add-a-license", "overlay.yaml"),
        Path::new("-o"),
        &target,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(
        written.starts_with("{\n  \"openapi\": \"3.1.0\""),
        "{written}"
    );
    let actual = document::parse(&written, Format::Json, "out").unwrap();
    let expected = document::load(&case("add-a-license", "output.yaml")).unwrap();
    assert_eq!(actual, expected);
}

#[test]
fn a_target_that_selects_nothing_fails_and_names_file_index_and_target() {
    if !have_cases() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("20-moved.overlay.yaml");
    std::fs::write(
        &overlay,
        "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions:\n\
         - {target: $.info, update: {x-ok: true}}\n\
         - {target: \"$.paths['/gone'].get\", description: Name a moved operation, update: {operationId: Gone}}\n",
    )
    .unwrap();
    let spec = case("add-a-license", "openapi.yaml");
    let out = xtask(&[&spec, &overlay]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    let expected = format!(
        "error: {}: actions[1] (0-based) \"Name a moved operation\", target `$.paths['/gone'].get`: \
         the target selects nothing.",
        overlay.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");

    // --lenient turns it into a warning and succeeds.
    let out = xtask(&[&spec, &overlay, Path::new("--lenient")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("warning: ") && stderr.contains("actions[1] (0-based)"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("x-ok: true"));
}

#[test]
fn a_malformed_overlay_fails_with_a_parse_error_naming_the_file() {
    if !have_cases() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("broken.overlay.yaml");
    std::fs::write(&overlay, "overlay: 1.1.0\nactions: [\n  - target: $\n").unwrap();
    let out = xtask(&[&case("add-a-license", "openapi.yaml"), &overlay]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let expected = format!("error: {} is not valid YAML (line", overlay.display());
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn missing_files_and_bad_jsonpath_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("bad-path.overlay.yaml");
    std::fs::write(
        &overlay,
        "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions: [{target: '$.paths[', remove: true}]\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.yaml");
    let out = xtask(&[&missing, &overlay]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("error: cannot read {}", missing.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("the target is not RFC 9535 JSONPath"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
