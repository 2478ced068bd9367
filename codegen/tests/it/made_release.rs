//! The release made from a description (`creditdata_codegen::made_release`), the one `cargo xtask
//! release-day` rehearses: it applies to whatever it was made from, including a description that
//! already holds everything a fixture (or an earlier made release) added, and the pipeline
//! calls it compatible. Run on the frozen 1.0, so a vendor release changes nothing here.

use std::path::Path;

use creditdata_codegen::diff::{self, Side};
use creditdata_codegen::document::{self, Format, operations};
use creditdata_codegen::made_release::{self, MadeRelease};
use creditdata_codegen::overlay::{self, ApplyOptions, Overlay};
use creditdata_codegen::pipeline::{self, Inputs};
use serde_json::Value;

use crate::frozen;

fn frozen_published() -> Value {
    document::load(&frozen::spec()).expect("the frozen description")
}

fn paths(doc: &Value) -> Vec<String> {
    doc["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .cloned()
        .collect()
}

/// Made from `doc` and applied to it; the release and its result.
fn released(doc: &Value) -> (MadeRelease, Value) {
    let made = made_release::make(doc).expect("a release is made");
    let after = made
        .apply(doc)
        .unwrap_or_else(|e| panic!("the made release applies to what it was made from: {e}"));
    (made, after)
}

/// Every fixture of `tests/data/release-day/` that applies to `doc`, applied in file-name order:
/// the vendor publishing what the hand-written releases add.
fn with_every_fixture(mut doc: Value) -> (Value, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/release-day");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the release-day fixtures")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.to_string_lossy().ends_with(".overlay.yaml"))
        .collect();
    files.sort();
    let mut applied = Vec::new();
    for file in files {
        let fixture = Overlay::load(&file).expect("a valid fixture");
        let mut candidate = doc.clone();
        if overlay::apply(&mut candidate, &[fixture], &ApplyOptions::default()).is_ok() {
            doc = candidate;
            applied.push(file.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    (doc, applied)
}

#[test]
fn the_made_release_adds_what_the_issue_lists_under_names_not_taken() {
    let before = frozen_published();
    let (made, after) = released(&before);
    let new_paths: Vec<String> = paths(&after)
        .into_iter()
        .filter(|p| !paths(&before).contains(p))
        .collect();
    assert_eq!(
        new_paths.len(),
        4,
        "a dataset, a listing and its two entry operations: {new_paths:?}"
    );
    // The entry operations take a second path parameter.
    assert_eq!(
        new_paths
            .iter()
            .filter(|p| p.matches('{').count() == 2)
            .count(),
        2,
        "{new_paths:?}"
    );
    // Published without operationIds, as most of the vendor's operations are.
    for op in operations(&after).filter(|op| new_paths.iter().any(|p| p == op.path)) {
        assert!(op.operation.get("operationId").is_none(), "{}", op.path);
    }
    assert_ne!(after["info"]["version"], before["info"]["version"]);
    // A required member of the Session that 1.0 does not have.
    let required = |doc: &Value| doc["components"]["schemas"]["Session"]["required"].clone();
    assert_eq!(
        required(&after).as_array().unwrap().len(),
        required(&before).as_array().unwrap().len() + 1
    );
    // Every string enum of more than one value gains one.
    for (name, schema) in before["components"]["schemas"].as_object().unwrap() {
        if let Some(values) = schema["enum"].as_array().filter(|v| v.len() > 1) {
            assert_eq!(
                after["components"]["schemas"][name]["enum"]
                    .as_array()
                    .unwrap()
                    .len(),
                values.len() + 1,
                "{name}"
            );
        }
    }
    // The Session's actions are deprecated.
    let deprecated = operations(&after)
        .filter(|op| op.operation["deprecated"] == Value::Bool(true))
        .count();
    assert!(
        deprecated
            > operations(&before)
                .filter(|op| op.operation["deprecated"] == Value::Bool(true))
                .count()
    );
    assert!(made.left_out.is_empty(), "{:?}", made.left_out);
    let text = made.additions.join("\n");
    assert!(text.contains("info.version"), "{text}");
}

#[test]
fn a_release_made_after_the_vendor_published_one_applies_and_adds_under_new_names() {
    let (first, once) = released(&frozen_published());
    let (second, twice) = released(&once);
    assert_eq!(twice["info"]["version"], "1.2");
    let added_first: Vec<String> = paths(&once)
        .into_iter()
        .filter(|p| !paths(&frozen_published()).contains(p))
        .collect();
    let added_second: Vec<String> = paths(&twice)
        .into_iter()
        .filter(|p| !paths(&once).contains(p))
        .collect();
    assert_eq!(added_second.len(), added_first.len(), "{added_second:?}");
    assert!(
        added_second.iter().all(|p| !added_first.contains(p)),
        "{added_second:?}"
    );
    assert_ne!(first.additions, second.additions);
}

#[test]
fn a_release_made_after_every_fixture_was_published_applies() {
    let (published, applied) = with_every_fixture(frozen_published());
    assert!(
        applied
            .iter()
            .any(|name| name == "1.1-additive.overlay.yaml"),
        "the additive fixture applies to the frozen 1.0: {applied:?}"
    );
    // The fixture no longer applies once published: the rehearsal's old failure.
    let fixture = Overlay::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/release-day/1.1-additive.overlay.yaml"),
    )
    .unwrap();
    let mut again = published.clone();
    assert!(
        overlay::apply(&mut again, &[fixture], &ApplyOptions::default()).is_err(),
        "the fixture's additions are taken once the vendor published them"
    );
    let (made, after) = released(&published);
    assert!(made.left_out.is_empty(), "{:?}", made.left_out);
    assert!(paths(&after).len() > paths(&published).len());
}

/// The whole pipeline generates the released description with the frozen overlays, and the
/// change report calls it compatible for deployed clients and for Rust code.
#[test]
fn the_pipeline_calls_the_made_release_compatible() {
    let before = frozen_published();
    let (_, after) = released(&before);
    let generate = |doc: &Value| {
        let dir = tempfile::tempdir().unwrap();
        let spec = dir.path().join("openapi.json");
        std::fs::write(&spec, document::to_string(doc, Format::Json)).unwrap();
        pipeline::run(&Inputs {
            spec,
            overlays: frozen::overlays_with_behaviour_pins().to_path_buf(),
            lenient: false,
            display_root: Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        })
        .unwrap_or_else(|e| panic!("the pipeline generates:\n{e}"))
    };
    let old = generate(&before);
    let new = generate(&after);
    let report = diff::compare(
        &Side {
            effective: &old.effective,
            published: Some(&before),
            code: Some(&old.generated.code),
        },
        &Side {
            effective: &new.effective,
            published: Some(&after),
            code: Some(&new.generated.code),
        },
    );
    assert_eq!(report.exit_code(), 3, "{}", report.to_text());
}
