//! Additive for the wire is additive for Rust: the release-day fixture (an additive vendor
//! release) is a compatible crate release, and the generated code has what makes it so.

use std::path::{Path, PathBuf};

use creditdata_codegen::diff::{self, Side};
use creditdata_codegen::document::{self, Format};
use creditdata_codegen::overlay::{self, ApplyOptions};
use creditdata_codegen::pipeline::{self, Inputs, Outputs};
use serde_json::Value;

use crate::frozen;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

const FIXTURE: &str = "tests/data/release-day/1.1-additive.overlay.yaml";
const NEW_OPERATION: &str = "/paths/~1v1~1sessions~1{sessionId}~1employment-histories/get";

/// The pipeline on `published` with the overlays in `overlays`.
fn pipeline_on(published: &Value, overlays: &Path) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, document::to_string(published, Format::Json)).unwrap();
    pipeline::run(&Inputs {
        spec,
        overlays: overlays.to_path_buf(),
        lenient: false,
        display_root: root(),
    })
    .unwrap_or_else(|e| panic!("the pipeline runs:\n{e}"))
}

fn side<'a>(published: &'a Value, outputs: &'a Outputs) -> Side<'a> {
    Side {
        effective: &outputs.effective,
        published: Some(published),
        code: Some(&outputs.generated.code),
    }
}

#[test]
fn the_additive_release_day_fixture_suggests_a_compatible_release() {
    // The frozen 1.0 and its overlays: the fixture is a release of 1.0, and applying it to the
    // vendored description would repeat what that description has once it is released.
    let base_file = frozen::spec();
    let base = document::load(&base_file).unwrap();
    let released = overlay::apply_files(
        &base_file,
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)],
        &ApplyOptions { lenient: false },
    )
    .unwrap()
    .document;
    // The fixture publishes the new operation without an operationId, as the vendor does: the
    // pipeline names it.
    assert!(
        released
            .pointer(NEW_OPERATION)
            .is_some_and(|op| op.get("operationId").is_none())
    );
    // The overlays as regen leaves them: with the behaviour pins of 1.0, so that the release's
    // dataset stays out of the default readiness gate as it does in the workspace.
    let overlays = frozen::overlays_with_behaviour_pins();
    let (old, new) = (
        pipeline_on(&base, overlays),
        pipeline_on(&released, overlays),
    );
    let report = diff::compare(&side(&base, &old), &side(&released, &new))
        .with_version("0.1.0")
        .unwrap();
    let text = report.to_text();

    assert!(!report.is_breaking(), "{text}");
    assert_eq!(report.exit_code(), 3, "{text}");
    let semver = report.semver.as_ref().unwrap();
    assert_eq!(semver.suggested, "0.1.1", "{text}");
    assert!(
        report.rust_api.checked && report.rust_api.incompatible.is_empty(),
        "{text}"
    );
    for change in &report.changes {
        assert_eq!(
            (change.wire, change.source),
            (diff::Wire::Yes, diff::Source::Yes),
            "{}",
            change.summary
        );
    }
    let kinds: Vec<&str> = report.changes.iter().map(|c| c.kind.name()).collect();
    for kind in [
        "operation_added",
        "optional_parameter_added",
        "optional_request_member_added",
        "request_enum_value_added",
        "response_property_added",
        "response_enum_value_added",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in:\n{text}");
    }
}

/// The rule of `codegen/src/forward_compatible.rs`, checked on the whole generated file: every
/// public struct of `types` with public named fields and every public enum is
/// `#[non_exhaustive]`, and every builder of `types::builder` has `build()`.
#[test]
fn every_struct_with_public_fields_and_every_enum_of_types_is_non_exhaustive() {
    // Whatever the current description is: the rule holds for every release.
    let outputs = pipeline_on(
        &document::load(&root().join("spec/openapi.json")).unwrap(),
        &root().join("overlays"),
    );
    let file = syn::parse_file(&outputs.generated.code).unwrap();
    let types = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_ref().map(|(_, i)| i),
            _ => None,
        })
        .expect("a types module");
    let marked =
        |attrs: &[syn::Attribute]| attrs.iter().any(|a| a.path().is_ident("non_exhaustive"));
    let public = |vis: &syn::Visibility| matches!(vis, syn::Visibility::Public(_));
    let (mut structs, mut enums, mut missing) = (0, 0, Vec::new());
    for item in types {
        match item {
            syn::Item::Struct(s)
                if public(&s.vis)
                    && matches!(&s.fields, syn::Fields::Named(n) if n.named.iter().any(|f| public(&f.vis))) =>
            {
                structs += 1;
                if !marked(&s.attrs) {
                    missing.push(s.ident.to_string());
                }
            }
            syn::Item::Enum(e) if public(&e.vis) => {
                enums += 1;
                if !marked(&e.attrs) {
                    missing.push(e.ident.to_string());
                }
            }
            _ => {}
        }
    }
    assert!(structs > 0 && enums > 0, "nothing was checked");
    assert!(missing.is_empty(), "not #[non_exhaustive]: {missing:?}");

    let builders = types
        .iter()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "builder" => m.content.as_ref().map(|(_, i)| i),
            _ => None,
        })
        .expect("a types::builder module");
    let with_build: Vec<String> = builders
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp)
                if imp.trait_.is_none()
                    && imp
                        .items
                        .iter()
                        .any(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "build")) =>
            {
                match &*imp.self_ty {
                    syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    let without: Vec<String> = builders
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) if !with_build.contains(&s.ident.to_string()) => {
                Some(s.ident.to_string())
            }
            _ => None,
        })
        .collect();
    assert!(without.is_empty(), "builders without build(): {without:?}");
}
