//! What the vendor's next generator release publishes, end to end through the pipeline: small
//! documents of our own under `tests/data/`, each reproducing one construct found in real
//! ASP.NET Core 10, Swashbuckle, NSwag and FastAPI documents.

use std::path::{Path, PathBuf};

use creditdata_codegen::pipeline::{self, Inputs, Outputs, PipelineError};
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs the whole pipeline on `tests/data/<name>` without overlays.
fn run(name: &str) -> Result<Outputs, PipelineError> {
    let overlays = tempfile::tempdir().unwrap();
    pipeline::run(&Inputs {
        spec: data(name),
        overlays: overlays.path().to_path_buf(),
        lenient: false,
        display_root: data(""),
    })
}

fn generated(name: &str) -> Outputs {
    run(name).unwrap_or_else(|e| panic!("{name} generates:\n{e}"))
}

/// The text of the generated item (struct, fn, impl) that starts with `start`, up to the line
/// that closes it at the same indentation.
fn item<'a>(code: &'a str, start: &str) -> &'a str {
    let from = code
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in the generated code"));
    let indent = code[..from].rsplit('\n').next().unwrap_or_default();
    let close = format!("\n{indent}}}");
    let to = code[from..]
        .find(&close)
        .map_or(code.len(), |end| from + end + close.len());
    &code[from..to]
}

#[test]
fn aspnet_numbers_readable_from_strings_generate_plain_numbers() {
    let outputs = generated("aspnet10-numbers.json");
    let code = &outputs.generated.code;
    let item_struct = item(code, "pub struct Item {");
    assert!(item_struct.contains("pub id: i32,"), "{item_struct}");
    assert!(
        item_struct.contains("pub price: ::std::option::Option<f64>,"),
        "{item_struct}"
    );
    assert!(
        item_struct.contains("pub status: ::std::option::Option<i32>,"),
        "{item_struct}"
    );
    assert!(
        !code.contains("Int32OrString"),
        "an int-or-string type is left"
    );
    // The string half of `code` (integer or a pattern) refuses on behalf of the member, though
    // it is the type of an enum's variant, not of the member (codegen/src/field_messages.rs).
    assert!(
        code.contains(r#"Err("code: doesn't match pattern"#),
        "{}",
        item(code, "impl ::std::str::FromStr for ItemCodeString")
    );
    assert!(
        outputs.generated.surface.contains("id: i32")
            && outputs.generated.surface.contains("page_size: Option<i32>"),
        "{}",
        outputs.generated.surface
    );
    let collapsed = outputs
        .warnings
        .iter()
        .filter(|w| w.contains("collapsed to `type: integer`"))
        .count();
    assert_eq!(collapsed, 5, "{:#?}", outputs.warnings);
}

#[test]
fn json_suffix_request_bodies_are_sent_as_json_under_their_own_media_type() {
    let outputs = generated("json-patch-bodies.json");
    let code = &outputs.generated.code;
    let send = |builder: &str| {
        let imp = item(code, &format!("impl<'a> {builder}<'a> {{"));
        item(imp, "pub fn send_with(").to_string()
    };
    let patch = send("PatchItem");
    let content_type = "::reqwest::header::CONTENT_TYPE,";
    let json = patch
        .find(".json(&body)")
        .expect("the patch is sent as JSON");
    let header = patch
        .find(content_type)
        .expect("the patch sets its Content-Type");
    assert!(
        header < json,
        "the header comes before .json(), which keeps it:\n{patch}"
    );
    assert!(patch.contains("\"application/json-patch+json\""), "{patch}");
    // A body reached through components/requestBodies, with a parameter on its media type.
    let merge = send("MergeItem");
    assert!(
        merge.contains("\"application/merge-patch+json; charset=utf-8\"")
            && merge.contains(content_type),
        "{merge}"
    );
    // Plain JSON bodies are left to reqwest's own `application/json`.
    assert!(!send("CreateItem").contains(content_type));
    // The body is the typed patch document, not raw bytes.
    assert!(
        outputs
            .generated
            .surface
            .contains("patch_item(id: String, body: JsonPatchDocument)"),
        "{}",
        outputs.generated.surface
    );

    // The effective document keeps the published names: it is what the service takes.
    let patch_content = outputs
        .effective
        .pointer("/paths/~1items~1{id}/patch/requestBody/content")
        .and_then(Value::as_object)
        .expect("the patch body");
    assert_eq!(
        patch_content.keys().collect::<Vec<_>>(),
        ["application/json-patch+json"]
    );
}

#[test]
fn a_media_range_or_a_second_json_name_is_still_reported() {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(data("json-patch-bodies.json")).unwrap())
            .unwrap();
    let content = doc
        .pointer_mut("/paths/~1items~1{id}/patch/requestBody/content")
        .and_then(Value::as_object_mut)
        .unwrap();
    let media = content["application/json-patch+json"].clone();
    content.insert("application/*+json".into(), media.clone());
    content.insert("application/json".into(), media);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, doc.to_string()).unwrap();
    let overlays = dir.path().join("overlays");
    std::fs::create_dir(&overlays).unwrap();
    let error = pipeline::run(&Inputs {
        spec,
        overlays,
        lenient: false,
        display_root: dir.path().to_path_buf(),
    });
    let Err(PipelineError::Preflight { report }) = error else {
        panic!("preflight reports the extra media types");
    };
    let text = report.to_string();
    // application/json is the one to keep; the other two are named for removal.
    assert!(
        text.contains("`application/json` is the one to keep"),
        "{text}"
    );
    assert!(
        text.contains("content['application/json-patch+json']"),
        "{text}"
    );
    assert!(text.contains("content['application/*+json']"), "{text}");
}

#[test]
fn generated_code_carries_the_lint_allowances_generated_code_needs() {
    // `minLength: 0` makes typify compare a length with 0 (`unused_comparisons`, clippy's
    // deny-by-default `absurd_extreme_comparisons`); a deprecated operation, defaults,
    // mixed-case names: the rest of what generated code trips.
    let outputs = generated("lint-provoking.json");
    let code = &outputs.generated.code;
    assert!(
        code.contains("count() < 0usize"),
        "the construct is still there"
    );
    let first_item = code
        .lines()
        .find(|line| !line.starts_with("//") && !line.trim().is_empty())
        .unwrap();
    assert_eq!(first_item, "#![allow(");
    let allowances = item(code, "#![allow(");
    for lint in [
        "warnings",
        "clippy::all",
        "clippy::pedantic",
        "clippy::nursery",
        "clippy::restriction",
        "clippy::cargo",
        "rustdoc::all",
    ] {
        assert!(
            allowances.contains(&format!("    {lint},"))
                || allowances.contains(&format!("    {lint}\n")),
            "{lint} missing from\n{allowances}"
        );
    }
}

#[test]
fn the_client_crate_mounts_the_generated_module_with_the_same_allowances() {
    let lib = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated-client/src/lib.rs"),
    )
    .unwrap();
    let at = lib
        .find("mod generated;")
        .expect("the client mounts the generated module");
    let attributes = &lib[lib[..at].rfind("#[rustfmt::skip]").expect("rustfmt skip")..at];
    for lint in [
        "warnings",
        "clippy::all",
        "clippy::pedantic",
        "rustdoc::all",
    ] {
        assert!(
            attributes.contains(lint),
            "{lint} missing from\n{attributes}"
        );
    }
}
