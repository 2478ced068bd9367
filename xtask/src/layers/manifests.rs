//! Crates depend on crates, not on a folder inside another member: a `path` dependency (in a
//! member's `Cargo.toml` or `[workspace.dependencies]`) that points into another member's
//! folder is refused. A crate two members share lives at the top level (`otlp/`).

use std::fmt;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use toml::Value;

/// A `path` dependency into another member's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntoMember {
    /// The manifest declaring it, from the workspace root.
    pub manifest: PathBuf,
    pub line: usize,
    pub dependency: String,
    /// Where it points, from the workspace root.
    pub path: PathBuf,
    /// The member whose folder holds it.
    pub member: PathBuf,
}

impl fmt::Display for IntoMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: dependency `{}` points to `{}`, inside `{}/`, the folder of another member: \
             a crate more than one member uses lives at the top level (move it to its own \
             folder, then fix `members`, `[workspace.dependencies]` and every path to it; \
             docs/architecture.md)",
            self.manifest.display(),
            self.line,
            self.dependency,
            self.path.display(),
            self.member.display(),
        )
    }
}

/// Every `path` dependency of the workspace at `root` that points into another member's folder.
pub fn check(root: &Path) -> anyhow::Result<Vec<IntoMember>> {
    let (workspace, _) = read(root, Path::new("Cargo.toml"))?;
    let Some(members) = workspace
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(Value::as_array)
    else {
        bail!("Cargo.toml: no [workspace] members");
    };
    let members: Vec<PathBuf> = members
        .iter()
        .filter_map(Value::as_str)
        .map(|m| normal(Path::new(m)))
        .collect();
    let mut found = Vec::new();
    let mut manifests = vec![PathBuf::from("Cargo.toml")];
    manifests.extend(members.iter().map(|m| m.join("Cargo.toml")));
    for manifest in manifests {
        let (value, text) = read(root, &manifest)?;
        let dir = manifest.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut tables = Vec::new();
        dependency_tables(&value, &mut tables);
        for table in tables {
            for (name, spec) in table {
                let Some(path) = spec.get("path").and_then(Value::as_str) else {
                    continue;
                };
                let target = normal(&dir.join(path));
                for member in &members {
                    let inside = target != *member && target.starts_with(member);
                    let from_outside = !dir.starts_with(member);
                    if inside && from_outside {
                        found.push(IntoMember {
                            manifest: manifest.clone(),
                            line: line_of(&text, name),
                            dependency: name.clone(),
                            path: target.clone(),
                            member: member.clone(),
                        });
                    }
                }
            }
        }
    }
    Ok(found)
}

fn read(root: &Path, manifest: &Path) -> anyhow::Result<(Value, String)> {
    let full = root.join(manifest);
    let text = std::fs::read_to_string(&full)
        .with_context(|| format!("cannot read {}", full.display()))?;
    let value = toml::from_str(&text)
        .with_context(|| format!("{} is not a valid manifest", manifest.display()))?;
    Ok((value, text))
}

/// `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, their `[target.*]` forms and
/// `[workspace.dependencies]`.
fn dependency_tables<'a>(value: &'a Value, tables: &mut Vec<&'a toml::Table>) {
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(table) = value.get(key).and_then(Value::as_table) {
            tables.push(table);
        }
    }
    if let Some(targets) = value.get("target").and_then(Value::as_table) {
        for target in targets.values() {
            dependency_tables(target, tables);
        }
    }
    if let Some(workspace) = value.get("workspace") {
        dependency_tables(workspace, tables);
    }
}

/// A path with `.` and `..` taken out, as far as it goes (`cli/../otlp` → `otlp`).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The first line declaring `name` (`name = ...` or `name.workspace = ...`), 1-based.
fn line_of(text: &str, name: &str) -> usize {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([' ', '=', '.']))
        })
        .map_or(1, |i| i + 1)
}
