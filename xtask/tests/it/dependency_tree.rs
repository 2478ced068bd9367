//! The client crate users depend on never pulls in the generator; the CLI and the mock bring
//! their OTLP exporter without a second HTTP or protobuf stack.

use std::collections::BTreeSet;
use std::process::Command;

use crate::support::workspace_root;

/// `cargo tree` with `args` in the workspace, one package per line as `{p}` prints it.
fn cargo_tree(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(workspace_root())
        .arg("tree")
        .args(args)
        .args(["--prefix", "none", "--format", "{p}"])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The names of the crates in a `cargo_tree` listing.
fn names(listing: &str) -> BTreeSet<String> {
    listing
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_client_crate_has_no_generator_crate_in_its_dependency_tree() {
    let crates = names(&cargo_tree(&[
        "-p",
        "creditdata-client",
        "-e",
        "normal,build",
    ]));
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

/// The crates of the HTTP stack, protobuf and OpenTelemetry: one version each, or the OTLP
/// exporter brought an HTTP client of its own (issue 20 item 6).
fn one_version_only(name: &str) -> bool {
    matches!(
        name,
        "reqwest" | "hyper" | "hyper-util" | "h2" | "http" | "http-body" | "prost"
    ) || name.starts_with("opentelemetry")
        // The TLS stack: redis (`rediss://`, issue 26) uses reqwest's rustls, not one of its own.
        || matches!(
            name,
            "rustls" | "tokio-rustls" | "rustls-native-certs" | "rustls-pki-types" | "rustls-webpki"
        )
}

/// The crates present in more than one version in `package`'s normal dependencies, with
/// their versions (`cargo tree -d`, offline: CI has a warm registry and no network).
fn duplicated(package: &str) -> BTreeSet<(String, String)> {
    let listing = cargo_tree(&[
        "--offline",
        "-d",
        "--depth",
        "0",
        "-e",
        "normal",
        "-p",
        package,
    ]);
    listing
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}

#[test]
fn the_cli_and_the_mock_have_one_version_of_each_http_protobuf_and_telemetry_crate() {
    for package in ["creditdata-cli", "creditdata-mock"] {
        let twice: Vec<(String, String)> = duplicated(package)
            .into_iter()
            .filter(|(name, _)| one_version_only(name))
            .collect();
        assert!(
            twice.is_empty(),
            "{package}: in two versions: {twice:?} (see `cargo tree -d -e normal -p {package}`)"
        );
    }
}

#[test]
fn the_otlp_exporter_uses_the_workspaces_reqwest_and_no_grpc_stack() {
    let crates = names(&cargo_tree(&[
        "--offline",
        "-e",
        "normal",
        "-p",
        "creditdata-cli",
    ]));
    // Not vacuous: the exporter is there, over reqwest.
    for present in ["opentelemetry-otlp", "opentelemetry-http", "reqwest"] {
        assert!(crates.contains(present), "{present} in the CLI's tree");
    }
    for absent in ["tonic", "ureq", "isahc", "surf"] {
        assert!(!crates.contains(absent), "{absent} in the CLI's tree");
    }
}

#[test]
fn redis_is_in_the_client_only_with_its_feature_and_brings_no_second_tls_stack() {
    let default = names(&cargo_tree(&[
        "--offline",
        "-e",
        "normal",
        "-p",
        "creditdata-client",
    ]));
    assert!(
        !default.contains("redis"),
        "the client's default build has redis in its tree"
    );
    let shared = names(&cargo_tree(&[
        "--offline",
        "-e",
        "normal",
        "-p",
        "creditdata-client",
        "--features",
        "shared-rate-limit",
    ]));
    // Not vacuous: the feature brings it, with rustls for `rediss://`.
    for present in ["redis", "rustls", "tokio-rustls"] {
        assert!(shared.contains(present), "{present} with shared-rate-limit");
    }
    for absent in ["native-tls", "openssl", "tokio-native-tls", "ring"] {
        assert!(
            !shared.contains(absent),
            "{absent} in the client's tree with shared-rate-limit: a second TLS stack"
        );
    }
}
