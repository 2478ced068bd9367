//! The client crate users depend on never pulls in the generator.

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::workspace_root;

#[test]
fn the_client_crate_has_no_generator_crate_in_its_dependency_tree() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .args([
            "tree",
            "-p",
            "creditdata-client",
            "-e",
            "normal,build",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let crates: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(
        crates.contains("progenitor-client"),
        "the runtime support crate is there: {crates:?}"
    );
    let generator = [
        "progenitor",
        "progenitor-impl",
        "progenitor-macro",
        "typify",
        "typify-impl",
        "openapiv3",
        "prettyplease",
        "schemars",
        "creditdata-codegen",
    ];
    let found: Vec<&str> = generator
        .iter()
        .copied()
        .filter(|c| crates.contains(*c))
        .collect();
    assert!(
        found.is_empty(),
        "generator crates in the client's tree: {found:?}"
    );
}
