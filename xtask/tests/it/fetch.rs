//! `cargo xtask fetch` end to end: the binary, a temporary copy of spec/ (`--spec-dir`) and a
//! loopback server standing in for the publisher. Nothing here leaves 127.0.0.1.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::pipeline::sha256_hex;

use crate::support::{self, serve, text, workspace_root};

/// The frozen copy of `spec/` (version 1.0, see codegen/tests/data/README.md): what these tests
/// count and compare stays true when the vendor releases.
fn spec_dir() -> PathBuf {
    workspace_root().join("codegen/tests/data/frozen-1.0/spec")
}

/// A copy of the frozen spec/'s fetch inputs in a temporary directory.
fn spec_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["source.toml", "openapi.json", "openapi.yaml"] {
        std::fs::copy(spec_dir().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// Every file in `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn xtask(dir: &Path, args: &[&str]) -> (Output, String, String) {
    let output = support::xtask()
        .arg("fetch")
        .arg("--spec-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    (output, stdout, stderr)
}

fn vendored() -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(spec_dir().join("openapi.json")).unwrap(),
        std::fs::read(spec_dir().join("openapi.yaml")).unwrap(),
    )
}

/// The vendored document with its first path removed and info.version changed, as JSON and YAML.
fn changed() -> (Vec<u8>, Vec<u8>) {
    let mut doc = document::load(&spec_dir().join("openapi.json")).unwrap();
    let paths = doc["paths"].as_object_mut().unwrap();
    let first = paths.keys().next().unwrap().clone();
    paths.shift_remove(&first);
    doc["info"]["version"] = "2.0".into();
    (
        document::to_string(&doc, Format::Json).into_bytes(),
        document::to_string(&doc, Format::Yaml).into_bytes(),
    )
}

#[test]
fn the_vendored_copy_is_up_to_date_and_nothing_is_written() {
    let (json, yaml) = vendored();
    let base = serve(vec![("/v1.json", json), ("/v1.yaml", yaml)]);
    let dir = spec_copy();
    let before = snapshot(dir.path());
    let (out, stdout, stderr) = xtask(dir.path(), &["--url", &format!("{base}/v1.json")]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("up to date"), "{stdout}");
    assert!(stderr.contains("31 operations"), "{stderr}");
    assert_eq!(snapshot(dir.path()), before);

    let (out, stdout, _) = xtask(
        dir.path(),
        &["--check", "--url", &format!("{base}/v1.yaml")],
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("Up to date"), "{stdout}");
}

#[test]
fn a_changed_publication_replaces_the_files_and_the_digests() {
    let (json, yaml) = changed();
    let base = serve(vec![
        ("/openapi.json", json.clone()),
        ("/openapi.yaml", yaml.clone()),
    ]);
    let dir = spec_copy();
    let source_before = std::fs::read_to_string(dir.path().join("source.toml")).unwrap();

    let (out, stdout, stderr) = xtask(
        dir.path(),
        &["--check", "--url", &format!("{base}/openapi.json")],
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("Paths: 0 added, 1 removed."), "{stdout}");
    assert!(stdout.contains("~ /info/version"), "{stdout}");
    assert!(
        stdout.contains("[operation_removed] GET /v1/sessions (GetSessions) removed"),
        "{stdout}"
    );
    assert!(stderr.contains("run `cargo xtask fetch`"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("source.toml")).unwrap(),
        source_before
    );

    let (out, stdout, stderr) = xtask(
        dir.path(),
        &[
            "--json-url",
            &format!("{base}/openapi.json"),
            "--yaml-url",
            &format!("{base}/openapi.yaml"),
        ],
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("[operation_removed] GET /v1/sessions (GetSessions) removed"),
        "{stdout}"
    );
    assert!(stdout.contains("cargo xtask regen"), "{stdout}");
    assert_eq!(
        std::fs::read(dir.path().join("openapi.json")).unwrap(),
        json
    );
    assert_eq!(
        std::fs::read(dir.path().join("openapi.yaml")).unwrap(),
        yaml
    );
    let (old_json, old_yaml) = vendored();
    let expected = source_before
        .replace(&sha256_hex(&old_json), &sha256_hex(&json))
        .replace(&sha256_hex(&old_yaml), &sha256_hex(&yaml));
    let source_after = std::fs::read_to_string(dir.path().join("source.toml")).unwrap();
    assert_eq!(
        source_after, expected,
        "digests updated, comments and addresses kept"
    );
    let files: Vec<String> = snapshot(dir.path()).into_keys().collect();
    assert_eq!(
        files,
        ["openapi.json", "openapi.yaml", "source.toml"],
        "no temporary file left"
    );

    let (out, stdout, _) = xtask(
        dir.path(),
        &["--check", "--url", &format!("{base}/openapi.json")],
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

#[test]
fn json_and_yaml_that_disagree_write_nothing() {
    let (json, _) = changed();
    let (_, yaml) = vendored();
    let base = serve(vec![("/openapi.json", json), ("/openapi.yaml", yaml)]);
    let dir = spec_copy();
    let before = snapshot(dir.path());
    let (out, stdout, stderr) = xtask(dir.path(), &["--url", &format!("{base}/openapi.json")]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("the JSON and the YAML document differ"),
        "{stderr}"
    );
    assert!(stderr.contains("~ /info/version"), "{stderr}");
    assert!(stderr.contains("the vendored copy in"), "{stderr}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_document_that_is_not_openapi_writes_nothing() {
    let base = serve(vec![
        (
            "/openapi.json",
            br#"{"swagger": "2.0", "paths": {}}"#.to_vec(),
        ),
        ("/openapi.yaml", b"swagger: '2.0'\npaths: {}\n".to_vec()),
    ]);
    let dir = spec_copy();
    let before = snapshot(dir.path());
    let (out, _, stderr) = xtask(dir.path(), &["--url", &format!("{base}/openapi.yaml")]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr
            .contains("/openapi.json is not an OpenAPI 3.x description: found a Swagger document"),
        "{stderr}"
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn an_unreachable_publisher_is_a_clear_error_and_writes_nothing() {
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = spec_copy();
    let before = snapshot(dir.path());
    let url = format!("http://127.0.0.1:{port}/openapi.json");
    let (out, _, stderr) = xtask(dir.path(), &["--url", &url]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(": cannot reach {url}: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: fetch failed; nothing was written, the vendored copy in"),
        "{stderr}"
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn placeholder_addresses_say_where_to_set_the_real_ones() {
    let dir = spec_copy();
    let before = snapshot(dir.path());
    let (out, _, stderr) = xtask(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("are placeholders"), "{stderr}");
    assert!(stderr.contains("source.toml"), "{stderr}");
    assert!(stderr.contains("--url"), "{stderr}");
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_url_without_a_known_extension_asks_for_both() {
    let dir = spec_copy();
    let (out, _, stderr) = xtask(dir.path(), &["--url", "http://127.0.0.1:9/openapi"]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--json-url and --yaml-url"), "{stderr}");
}

#[test]
fn an_error_is_printed_once_with_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let source = missing.join("source.toml");
    let cause = std::fs::read(&source).unwrap_err().to_string();
    let (out, stdout, stderr) = xtask(&missing, &[]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: fetch failed; nothing was written, the vendored copy in {} is unchanged: \
             cannot read {}: {cause}\n",
            missing.display(),
            source.display()
        ),
        "one line: `error: `, what failed, then its cause, each once"
    );
}

#[test]
fn a_signed_address_is_logged_and_reported_without_its_token() {
    let (json, yaml) = vendored();
    let base = serve(vec![("/v1.json", json), ("/v1.yaml", yaml)]);
    let dir = spec_copy();
    let signed = format!("{base}/v1.json?X-Amz-Signature=very-secret-token");
    let (out, stdout, stderr) = xtask(dir.path(), &["--url", &signed]);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("fetching {base}/v1.json?… and {base}/v1.yaml?…")),
        "{stderr}"
    );
    assert!(!format!("{stdout}{stderr}").contains("very-secret-token"));

    // A failure names the address too, the same way.
    let signed = format!("{base}/gone.json?X-Amz-Signature=very-secret-token");
    let (out, stdout, stderr) = xtask(dir.path(), &["--url", &signed]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("{base}/gone.json?… answered 404")),
        "{stderr}"
    );
    assert!(!format!("{stdout}{stderr}").contains("very-secret-token"));
}
