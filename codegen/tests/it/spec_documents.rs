//! The vendored description: its JSON and YAML forms are one document, and `spec/source.toml`
//! pins their bytes.

use std::path::{Path, PathBuf};

use creditdata_codegen::document;
use creditdata_codegen::fetch::{self, Source};
use creditdata_codegen::pipeline::sha256_hex;

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec")
}

#[test]
fn json_and_yaml_are_the_same_document() {
    let json = document::load(&spec_dir().join("openapi.json")).unwrap();
    let yaml = document::load(&spec_dir().join("openapi.yaml")).unwrap();
    let differences = fetch::differences(&json, &yaml, 10);
    assert_eq!(differences.count, 0, "{:?}", differences.pointers);
    assert_eq!(json, yaml);
}

/// What fetch's validation counts is what the pipeline reads as operations (no number of the
/// current release is asserted: `regen` writes that, in SURFACE.md).
#[test]
fn the_document_is_openapi_3_1_and_validation_counts_every_operation() {
    let bytes = (
        std::fs::read(spec_dir().join("openapi.json")).unwrap(),
        std::fs::read(spec_dir().join("openapi.yaml")).unwrap(),
    );
    let urls = fetch::Urls::from_one("http://127.0.0.1:9/openapi.json").unwrap();
    let published = fetch::validate(&urls, bytes.0, bytes.1).unwrap();
    assert!(
        published.version.starts_with("3.1."),
        "{}",
        published.version
    );
    let json = document::load(&spec_dir().join("openapi.json")).unwrap();
    assert_eq!(
        published.operation_count(),
        document::operations(&json).count()
    );
    assert!(published.operation_count() > 0);
}

#[test]
fn source_toml_digests_match_the_vendored_files() {
    let source = Source::load(&spec_dir()).unwrap();
    for (path, pinned) in [
        (source.json_path(&spec_dir()), &source.vendored.json_sha256),
        (source.yaml_path(&spec_dir()), &source.vendored.yaml_sha256),
    ] {
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            &sha256_hex(&bytes),
            pinned,
            "{} changed without `cargo xtask fetch`: its digest in spec/source.toml is stale",
            path.display()
        );
    }
}
