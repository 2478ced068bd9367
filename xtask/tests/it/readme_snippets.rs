//! The check that every README's Rust compiles (`docs/readme-snippets`): it catches a broken
//! block and names its README and line, understands its fence attributes and refuses others,
//! reads every README there is, and the `Cargo.toml` lines the READMEs give are the ones the
//! blocks are compiled with, of the versions `Cargo.lock` holds.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use creditdata_readme_snippets::markdown::{self, Treatment};
use toml::Value;

use crate::support::workspace_root;

/// Compiles the crate [`markdown::write_crate_sources`] makes of the READMEs under `root`, as a
/// library with no dependency at all; rustc's exit status and messages.
fn compile_snippets_of(root: &Path) -> (bool, String) {
    let out = tempfile::tempdir().unwrap();
    let written = markdown::write_crate_sources(root, out.path()).unwrap();
    let lib = out.path().join("lib.rs");
    std::fs::write(
        &lib,
        format!("include!({:?});\n", written.root_module.to_str().unwrap()),
    )
    .unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = Command::new(rustc)
        .args([
            "--edition",
            "2024",
            "--crate-type",
            "lib",
            "--emit",
            "metadata",
        ])
        .arg("--out-dir")
        .arg(out.path())
        .arg(&lib)
        .output()
        .expect("rustc runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const GOOD_BLOCK: &str = "```rust\nfn answer() -> u32 {\n    42\n}\n```\n";

/// Line 9 opens a block whose line 10 names `uuid`, a crate this README never adds.
const BROKEN_README: &str = "# A README\n\nSome text.\n\n```rust\nfn answer() -> u32 {\n    42\n}\n```\n\n```rust,no_run\nfn id() -> uuid::Uuid {\n    uuid::Uuid::nil()\n}\n```\n";

#[test]
fn a_block_naming_a_crate_the_readme_never_adds_fails_naming_its_readme_and_line() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("guide")).unwrap();
    std::fs::write(root.path().join("guide/README.md"), BROKEN_README).unwrap();
    let (compiled, messages) = compile_snippets_of(root.path());
    assert!(!compiled, "the broken block compiled:\n{messages}");
    // The fence is on line 11, `uuid::Uuid` on line 12, column 12: where the README has it.
    assert!(
        messages.contains("guide/README.md/line-11.rs:12:12"),
        "the message names the README and the line: {messages}"
    );
    assert!(messages.contains("uuid"), "{messages}");

    // The same README without that block compiles: the failure was the block's.
    std::fs::write(
        root.path().join("guide/README.md"),
        format!("# A README\n\n{GOOD_BLOCK}"),
    )
    .unwrap();
    let (compiled, messages) = compile_snippets_of(root.path());
    assert!(compiled, "{messages}");
}

#[test]
fn fences_are_read_as_commonmark_writes_them_and_an_unknown_attribute_is_refused() {
    let readme = "\
- a list item:

  ```rust,no_run
  fn in_a_list() {}
  ```

~~~rs
fn tilde() {}
~~~

```rust ignore
this is not Rust
```

````
```rust
not a block: inside a plain one
```
````

```toml
a = 1
```
";
    let blocks = markdown::blocks(readme).unwrap();
    let rust: Vec<(usize, Option<Treatment>, &str)> = blocks
        .iter()
        .map(|b| (b.fence_line, b.treatment().unwrap(), b.code.as_str()))
        .filter(|(_, treatment, _)| treatment.is_some())
        .collect();
    assert_eq!(
        rust,
        [
            (3, Some(Treatment::Compiled), "fn in_a_list() {}\n"),
            (7, Some(Treatment::Compiled), "fn tilde() {}\n"),
            (11, Some(Treatment::Ignored), "this is not Rust\n"),
        ]
    );
    assert_eq!(blocks.len(), 5, "{blocks:#?}");

    let typo = markdown::blocks("```rust,no-run\nfn f() {}\n```\n").unwrap();
    let refused = typo[0].treatment().unwrap_err();
    assert!(
        refused.contains("line 1") && refused.contains("`no-run`") && refused.contains("`ignore`"),
        "{refused}"
    );
    let unclosed = markdown::blocks("text\n```rust\nfn f() {}\n").unwrap_err();
    assert!(unclosed.contains("line 2"), "{unclosed}");
}

#[test]
fn an_ignored_block_is_not_compiled_and_a_bad_attribute_stops_the_build_naming_the_readme() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("README.md"),
        format!("```rust,ignore\nlet fragment = 1;\n```\n\n{GOOD_BLOCK}"),
    )
    .unwrap();
    let (compiled, messages) = compile_snippets_of(root.path());
    assert!(compiled, "the ignored fragment was compiled: {messages}");

    std::fs::write(
        root.path().join("README.md"),
        "```rust,should_panic\nfn f() {}\n```\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let e = markdown::write_crate_sources(root.path(), out.path()).unwrap_err();
    assert!(
        e.starts_with("README.md: ") && e.contains("`should_panic`"),
        "{e}"
    );
}

#[test]
fn every_readme_git_knows_is_compiled() {
    let root = workspace_root();
    let listed = Command::new("git")
        .current_dir(&root)
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .output();
    let Ok(listed) = listed.as_ref().map_err(|e| e.to_string()).and_then(|o| {
        if o.status.success() {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }) else {
        eprintln!("skipped: git cannot list the workspace's files here: {listed:?}");
        return;
    };
    let mut known: Vec<String> = listed
        .lines()
        .filter(|path| {
            let name = path.rsplit('/').next().unwrap_or_default();
            name.eq_ignore_ascii_case("README.md") && root.join(path).is_file()
        })
        .map(str::to_string)
        .collect();
    known.sort();
    let read = markdown::readmes(&root).unwrap();
    assert_eq!(read, known);
    assert!(read.contains(&"README.md".to_string()), "{read:?}");
}

/// The dependencies a `Cargo.toml` excerpt of a README adds: its `[dependencies]`-like tables,
/// or, without any table, its lines themselves when they are dependency lines.
fn dependency_lines(excerpt: &toml::Table) -> Vec<(String, Value)> {
    let tables = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut found = Vec::new();
    for table in tables {
        if let Some(Value::Table(entries)) = excerpt.get(table) {
            found.extend(entries.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let is_dependency = |value: &Value| match value {
        Value::String(_) => true,
        Value::Table(t) => ["version", "path", "git"]
            .iter()
            .any(|k| t.contains_key(*k)),
        _ => false,
    };
    if found.is_empty() && !excerpt.is_empty() && excerpt.values().all(is_dependency) {
        found.extend(excerpt.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    found
}

/// Every dependency line of every README's ```` ```toml ```` blocks, by crate: the README and
/// line of each, and the line itself.
fn readme_dependencies() -> BTreeMap<String, Vec<(String, Value)>> {
    let root = workspace_root();
    let mut found: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for readme in markdown::readmes(&root).unwrap() {
        let text = std::fs::read_to_string(root.join(&readme)).unwrap();
        for block in markdown::blocks(&text).unwrap() {
            if block.language != "toml" {
                continue;
            }
            let excerpt: toml::Table = block.code.parse().unwrap_or_else(|e| {
                panic!("{readme}, the toml block at line {}: {e}", block.fence_line)
            });
            for (name, line) in dependency_lines(&excerpt) {
                let place = format!("{readme}:{}", block.fence_line);
                found.entry(name).or_default().push((place, line));
            }
        }
    }
    found
}

/// The version requirement of a dependency line.
fn requirement(line: &Value) -> Option<semver::VersionReq> {
    let text = match line {
        Value::String(text) => text.as_str(),
        Value::Table(table) => table.get("version")?.as_str()?,
        _ => return None,
    };
    Some(text.parse().unwrap_or_else(|e| panic!("{text:?}: {e}")))
}

/// `Cargo.lock`'s packages: name → versions.
fn locked() -> (BTreeMap<String, Vec<semver::Version>>, Vec<toml::Table>) {
    let lock: toml::Table = std::fs::read_to_string(workspace_root().join("Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let packages: Vec<toml::Table> = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_table().unwrap().clone())
        .collect();
    let mut versions: BTreeMap<String, Vec<semver::Version>> = BTreeMap::new();
    for package in &packages {
        versions
            .entry(package["name"].as_str().unwrap().to_string())
            .or_default()
            .push(package["version"].as_str().unwrap().parse().unwrap());
    }
    (versions, packages)
}

#[test]
fn the_readmes_cargo_lines_are_those_the_blocks_compile_with_at_the_locked_versions() {
    let readmes = readme_dependencies();
    let manifest: toml::Table =
        std::fs::read_to_string(workspace_root().join("docs/readme-snippets/Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
    let compiled_with = manifest["dev-dependencies"].as_table().unwrap();
    let (versions, _) = locked();
    // This repository's own crates are given from git or a path, which the READMEs leave to
    // the reader (`YOUR-FORGE`, `COMMIT`).
    let ours = |name: &str| name.starts_with("creditdata-");
    assert!(readmes.contains_key("tokio"), "{readmes:?}");
    for (name, lines) in readmes.iter().filter(|(name, _)| !ours(name)) {
        let (first_place, first) = &lines[0];
        for (place, line) in lines {
            assert_eq!(line, first, "{name}: {place} and {first_place} disagree");
        }
        assert_eq!(
            compiled_with.get(name),
            Some(first),
            "{name}: docs/readme-snippets/Cargo.toml must compile the blocks with the line the \
             READMEs give ({first_place})"
        );
        let requirement =
            requirement(first).unwrap_or_else(|| panic!("{name} ({first_place}) gives no version"));
        let matching: Vec<_> = versions
            .get(name)
            .into_iter()
            .flatten()
            .filter(|v| requirement.matches(v))
            .collect();
        assert_eq!(
            matching.len(),
            1,
            "{name} {requirement} ({first_place}) must match exactly one version of Cargo.lock; \
             it holds {:?}",
            versions.get(name)
        );
    }
    for name in compiled_with.keys().filter(|name| !ours(name)) {
        assert!(
            readmes.contains_key(name),
            "docs/readme-snippets compiles the blocks with {name}, which no README adds"
        );
    }
}

#[test]
fn the_telemetry_lines_are_of_the_opentelemetry_release_the_client_uses() {
    let readmes = readme_dependencies();
    let (versions, packages) = locked();
    let depends_on = |package: &str| -> Vec<String> {
        packages
            .iter()
            .filter(|p| p["name"].as_str() == Some(package))
            .flat_map(|p| {
                p.get("dependencies")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|d| d.as_str().map(str::to_string))
            .collect()
    };
    // The client's `opentelemetry` (a lock names the version only when there are several).
    let client_api: Vec<String> = depends_on("creditdata-client")
        .into_iter()
        .filter(|d| d == "opentelemetry" || d.starts_with("opentelemetry "))
        .collect();
    assert_eq!(client_api.len(), 1, "{client_api:?}");
    let api_versions = &versions["opentelemetry"];
    let api: semver::Version = match client_api[0].split_once(' ') {
        Some((_, version)) => version.parse().unwrap(),
        None => {
            assert_eq!(api_versions.len(), 1, "{api_versions:?}");
            api_versions[0].clone()
        }
    };
    for name in ["opentelemetry", "opentelemetry_sdk", "opentelemetry-otlp"] {
        let (place, line) = readmes
            .get(name)
            .and_then(|lines| lines.first())
            .unwrap_or_else(|| panic!("no README gives the Cargo.toml line of {name}"));
        let requirement = requirement(line).unwrap();
        if name == "opentelemetry" {
            assert!(
                requirement.matches(&api),
                "{place}: opentelemetry {requirement} is not the client's {api}"
            );
        } else {
            // The SDK and the exporter of the README's version depend on the client's API.
            let locked = versions[name]
                .iter()
                .find(|v| requirement.matches(v))
                .unwrap();
            let theirs = depends_on(name);
            assert!(
                theirs
                    .iter()
                    .any(|d| d == "opentelemetry" || *d == format!("opentelemetry {api}")),
                "{place}: {name} {locked} depends on {theirs:?}, not on the client's opentelemetry {api}"
            );
        }
    }
}
