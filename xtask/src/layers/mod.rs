//! `cargo xtask ci`'s `layers` step: imports run one way in the client, the mock and the CLI,
//! crates depend on crates (not on a folder inside another member), and no hand-written Rust
//! file grows past [`size::MAX_LINES`] lines.
//!
//! Each crate has a layer table, data in its own module ([`client`], [`mock`], [`cli`]): a list
//! of layers, bottom to top, with their job, and every module of its `src` with its layer. A new
//! file needs one line there; the step fails naming it until it has one. Every `crate::`,
//! `self::` and `super::` path (in macro calls too, in the generated files too; `#[cfg(test)]`
//! modules skipped) is resolved to the longest module of the table it starts with, through the
//! crate root's re-exports (`crate::Client` → `generated`), and must point to its own layer or
//! one below. The same paths make a graph of files, which must have no circle: a strongly
//! connected component of more than one file is refused, same layer or not, with the files of
//! the circle and the imports that close it ([`graph`]). [`manifests`] refuses a `path`
//! dependency that points into another member's folder; [`size`] refuses a hand-written `.rs`
//! file over 900 lines (files that are not Rust, such as `BENCHMARKS.md`, are not counted).

pub mod cli;
pub mod client;
pub mod graph;
pub mod manifests;
pub mod mock;
pub mod size;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// One crate's layer table.
pub struct Table {
    /// What the crate is called in messages (`client`).
    pub name: &'static str,
    /// Its sources, from the workspace root (`generated-client/src`).
    pub src: &'static str,
    /// This table's module, named in messages (`xtask/src/layers/client.rs`).
    pub table_file: &'static str,
    /// The layers, bottom to top, with their job: a module may use its own layer and those below.
    pub layers: &'static [(&'static str, &'static str)],
    /// Every module of `src` and its layer (an index of `layers`).
    pub modules: &'static [(&'static str, usize)],
}

/// Every table the step checks.
pub const TABLES: &[&Table] = &[&client::TABLE, &mock::TABLE, &cli::TABLE];

impl Table {
    /// The layer of the longest module of the table `module` starts with.
    pub fn layer_of(&self, module: &str) -> Option<usize> {
        let name = self.module_of(module);
        self.modules
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, layer)| *layer)
    }

    /// The module of the table a resolved path (`auth::error::AuthError`) lands in.
    pub fn module_of(&self, path: &str) -> &'static str {
        graph::longest_prefix(self.modules.iter().map(|(n, _)| *n), path)
    }

    fn layer_shown(&self, module: &str) -> String {
        let n = self.layer_of(module).unwrap_or(usize::MAX);
        format!("layer {n}, {}", self.layers.get(n).map_or("?", |l| l.0))
    }
}

/// The table as `docs/architecture.md` shows it: one row per layer, its job and its modules
/// (the crate root is `crate`); a test checks that the document holds exactly this.
pub fn markdown(table: &Table) -> String {
    let mut text = String::from("| layer | job | modules |\n|---|---|---|\n");
    for (n, (name, job)) in table.layers.iter().enumerate() {
        let modules: Vec<String> = table
            .modules
            .iter()
            .filter(|(_, layer)| *layer == n)
            .map(|(module, _)| format!("`{}`", shown(module)))
            .collect();
        text.push_str(&format!(
            "| {n} {name} | {job} | {} |\n",
            modules.join(", ")
        ));
    }
    text
}

/// One path that points up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub file: PathBuf,
    pub line: usize,
    pub from: String,
    pub path: String,
    pub to: String,
    /// What the message says about the layers (`layer 0, leaves`), from and to.
    pub layers: (String, String),
    pub table_file: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}` ({}) uses `{}`, which is `{}` ({}): an import must point to its own \
             layer or one below (docs/architecture.md, {})",
            self.file.display(),
            self.line,
            shown(&self.from),
            self.layers.0,
            self.path,
            shown(&self.to),
            self.layers.1,
            self.table_file,
        )
    }
}

/// One import of a circle: `file:line` uses `path`, which is in `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub file: PathBuf,
    pub line: usize,
    pub path: String,
    /// The file it points to.
    pub to: String,
}

/// Files that import each other round a circle (a strongly connected component).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    pub crate_name: &'static str,
    /// Every file of the component (an inline module the table lists on its own, named).
    pub files: Vec<String>,
    /// One way round, an import per step; the last closes it.
    pub links: Vec<Link>,
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {}'s files {} import each other in a circle:",
            self.crate_name,
            self.files.join(", ")
        )?;
        for link in &self.links {
            write!(
                f,
                " {}:{} uses `{}` ({});",
                link.file.display(),
                link.line,
                link.path,
                link.to
            )?;
        }
        if let Some(last) = self.links.last() {
            write!(
                f,
                " the import at {}:{} closes it. Move what both ends need into a module below \
                 them (or merge the files), so imports run one way (docs/architecture.md)",
                last.file.display(),
                last.line
            )?;
        }
        Ok(())
    }
}

/// What one crate's check found.
#[derive(Debug, Default)]
pub struct Findings {
    pub upward: Vec<Violation>,
    pub circles: Vec<Circle>,
}

pub fn shown(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

/// `file` from the workspace root, where it is under it.
fn relative(file: &Path) -> PathBuf {
    let root = crate::regen::workspace_root();
    file.strip_prefix(&root).unwrap_or(file).to_path_buf()
}

/// Checks every `.rs` file under `src` against `table`: the upward paths and the circles
/// found, or an error for a file whose module is not in the table, or that does not parse.
pub fn check(table: &Table, src: &Path) -> anyhow::Result<Findings> {
    let files = graph::read_crate(src)?;
    let Some(root) = files.iter().find(|f| f.module.is_empty()) else {
        bail!("{}: no lib.rs or main.rs", src.display());
    };
    let aliases = graph::root_aliases(&root.syntax);
    let mut modules: Vec<String> = files.iter().map(|f| f.module.clone()).collect();
    for file in &files {
        if !table.modules.iter().any(|(name, _)| *name == file.module) {
            bail!(
                "{}: module `{}` is not in the {}'s layer table: add a line (\"{}\", LAYER) to \
                 MODULES in {}, and the module to its layer in docs/architecture.md",
                relative(&file.file).display(),
                shown(&file.module),
                table.name,
                file.module,
                table.table_file,
            );
        }
    }
    modules.extend(table.modules.iter().map(|(n, _)| (*n).to_string()));
    // The graph's nodes are the table's modules: a file, or an inline module the table lists on
    // its own (the generated file's `types`).
    let nodes: Vec<&str> = table.modules.iter().map(|(n, _)| *n).collect();
    let shown_file = |node: &str| {
        let file_modules = files
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.module.as_str());
        let module = graph::longest_prefix(file_modules, node);
        let file = files
            .iter()
            .find(|f| !f.binary && f.module == module)
            .map_or_else(|| src.to_path_buf(), |f| relative(&f.file));
        if module == node {
            file.display().to_string()
        } else {
            format!("{} (`{node}`)", file.display())
        }
    };
    let mut findings = Findings::default();
    let mut next = vec![BTreeSet::new(); nodes.len()];
    // The first import from one node to another, for the circle's message.
    let mut first = std::collections::BTreeMap::new();
    for file in &files {
        for edge in graph::edges(file, &modules, &aliases) {
            let from = table.module_of(&edge.from);
            let to = table.module_of(&edge.target);
            if table.layer_of(to) > table.layer_of(from) {
                findings.upward.push(Violation {
                    file: relative(&file.file),
                    line: edge.line,
                    layers: (table.layer_shown(&edge.from), table.layer_shown(to)),
                    from: edge.from.clone(),
                    path: edge.path.clone(),
                    to: to.to_string(),
                    table_file: table.table_file,
                });
            }
            let (Some(i), Some(j)) = (
                nodes.iter().position(|n| *n == from),
                nodes.iter().position(|n| *n == to),
            ) else {
                continue;
            };
            if i != j {
                next[i].insert(j);
                first
                    .entry((i, j))
                    .or_insert((relative(&file.file), edge.line, edge.path));
            }
        }
    }
    for component in graph::circles(nodes.len(), &next) {
        let way = graph::shortest_cycle(component[0], &component, &next);
        let links = way
            .iter()
            .zip(way.iter().cycle().skip(1))
            .map(|(&a, &b)| {
                let (file, line, path) = first[&(a, b)].clone();
                Link {
                    file,
                    line,
                    path,
                    to: shown_file(nodes[b]),
                }
            })
            .collect();
        findings.circles.push(Circle {
            crate_name: table.name,
            files: component.iter().map(|&i| shown_file(nodes[i])).collect(),
            links,
        });
    }
    Ok(findings)
}

/// The `layers` step: fails listing every upward path, circle, path dependency into another
/// member, oversized file and layer table the architecture document shows otherwise.
pub fn run() -> anyhow::Result<()> {
    let root = crate::regen::workspace_root();
    let mut problems = Vec::new();
    let doc = std::fs::read_to_string(root.join("docs/architecture.md"))?;
    for table in TABLES {
        let findings = check(table, &root.join(table.src))?;
        problems.extend(findings.upward.iter().map(ToString::to_string));
        problems.extend(findings.circles.iter().map(ToString::to_string));
        let shown = markdown(table);
        if !doc.contains(&shown) {
            problems.push(format!(
                "docs/architecture.md: the {}'s layer table differs from {}: replace it with\n{shown}",
                table.name, table.table_file
            ));
        }
    }
    problems.extend(manifests::check(&root)?.iter().map(ToString::to_string));
    problems.extend(size::check(&root)?.iter().map(ToString::to_string));
    if problems.is_empty() {
        println!(
            "the client, the mock and the CLI import their own layer or below, with no circle; \
             no member depends on a folder inside another; no hand-written Rust file is over {} \
             lines",
            size::MAX_LINES
        );
        return Ok(());
    }
    for problem in &problems {
        eprintln!("{problem}");
    }
    bail!(
        "{} layering problem(s): each is named above with what to do",
        problems.len()
    )
}
