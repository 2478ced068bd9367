//! The generator version written into every generated header is the progenitor this workspace
//! really builds with: the one Cargo.lock resolved, pinned exactly in the workspace manifest.

use std::path::Path;

use creditdata_codegen::pipeline::PROGENITOR_VERSION;

fn workspace_file(name: &str) -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()))
}

#[test]
fn the_header_names_the_progenitor_of_the_lock_file() {
    let lock = workspace_file("Cargo.lock");
    let packages = lock["package"]
        .as_array()
        .expect("Cargo.lock lists packages");
    for name in ["progenitor", "progenitor-impl", "progenitor-client"] {
        let versions: Vec<&str> = packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(name))
            .filter_map(|p| p["version"].as_str())
            .collect();
        assert_eq!(
            versions,
            [PROGENITOR_VERSION],
            "Cargo.lock resolves {name} to {versions:?}, but generated headers say progenitor \
             {PROGENITOR_VERSION}: update PROGENITOR_VERSION (codegen/src/pipeline.rs) with the \
             pin in Cargo.toml, then run `cargo xtask regen`"
        );
    }
}

#[test]
fn progenitor_is_pinned_exactly_in_the_workspace_manifest() {
    let manifest = workspace_file("Cargo.toml");
    let dependencies = &manifest["workspace"]["dependencies"];
    let exact = format!("={PROGENITOR_VERSION}");
    for name in ["progenitor", "progenitor-client"] {
        let requirement = match &dependencies[name] {
            toml::Value::String(version) => version.as_str(),
            table => table["version"].as_str().unwrap_or_default(),
        };
        assert_eq!(
            requirement, exact,
            "[workspace.dependencies] {name} must be pinned to exactly the version preflight \
             mirrors and the header names"
        );
    }
}
