//! The fenced code blocks of the repository's READMEs, and the crate sources that compile their
//! Rust as a user would paste it: one module per block, at the line it has in its README.
//!
//! Only the standard library: `build.rs` includes this file as a module of its own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A fenced code block of a Markdown file (CommonMark: three or more backticks or tildes, at
/// any indentation, inside list items too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The line of the opening fence, counted from 1.
    pub fence_line: usize,
    /// The first word of the info string (`rust`, `toml`, `sh`...); empty for a bare fence.
    pub language: String,
    /// The other words of the info string (`no_run`, `ignore`), split at commas and spaces.
    pub attributes: Vec<String>,
    /// The lines between the fences, without the opening fence's indentation, each ending in a
    /// newline.
    pub code: String,
}

/// What the check does with a Rust block, from its fence attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// `rust` or `rust,no_run`: compiled (nothing is ever run).
    Compiled,
    /// `rust,ignore`: deliberately not compilable (a fragment); listed, not compiled.
    Ignored,
}

/// The fence attributes the check knows, and what each means.
pub const KNOWN_ATTRIBUTES: &[(&str, &str)] = &[
    ("no_run", "compiled, not run (nothing here is run)"),
    ("ignore", "deliberately not compilable: not compiled"),
];

/// Every fenced code block of `markdown`. `Err` names the line of a fence that is never closed.
pub fn blocks(markdown: &str) -> Result<Vec<Block>, String> {
    struct Open {
        fence_line: usize,
        indent: usize,
        fence_char: char,
        fence_len: usize,
        language: String,
        attributes: Vec<String>,
        code: String,
    }
    let mut found = Vec::new();
    let mut open: Option<Open> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let fence = fence_of(trimmed);
        match &mut open {
            None => {
                if let Some((fence_char, fence_len)) = fence {
                    let info = trimmed[fence_len * fence_char.len_utf8()..].trim();
                    let mut words = info
                        .split([',', ' ', '\t'])
                        .map(str::trim)
                        .filter(|word| !word.is_empty());
                    open = Some(Open {
                        fence_line: index + 1,
                        indent,
                        fence_char,
                        fence_len,
                        language: words.next().unwrap_or_default().to_string(),
                        attributes: words.map(str::to_string).collect(),
                        code: String::new(),
                    });
                }
            }
            Some(block) => {
                let closes = fence.is_some_and(|(fence_char, fence_len)| {
                    fence_char == block.fence_char
                        && fence_len >= block.fence_len
                        && trimmed[fence_len * fence_char.len_utf8()..]
                            .trim()
                            .is_empty()
                });
                if closes {
                    let block = open.take().expect("a block is open");
                    found.push(Block {
                        fence_line: block.fence_line,
                        language: block.language,
                        attributes: block.attributes,
                        code: block.code,
                    });
                } else {
                    // The fence's indentation is the container's (a list item): take it off,
                    // as far as the line has it.
                    let strip = indent.min(block.indent);
                    block.code.push_str(&line[strip..]);
                    block.code.push('\n');
                }
            }
        }
    }
    match open {
        Some(block) => Err(format!(
            "the code block opened at line {} is never closed",
            block.fence_line
        )),
        None => Ok(found),
    }
}

/// The fence character and its count, when `trimmed` starts with a fence.
fn fence_of(trimmed: &str) -> Option<(char, usize)> {
    let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence_len = trimmed.chars().take_while(|c| *c == fence_char).count();
    let info = &trimmed[fence_len * fence_char.len_utf8()..];
    // A backtick fence's info string has no backtick (CommonMark); that is inline code.
    (fence_len >= 3 && !(fence_char == '`' && info.contains('`')))
        .then_some((fence_char, fence_len))
}

impl Block {
    /// Whether this is a Rust block (`rust` or `rs`), and what the check does with it. `Err`
    /// names an attribute the check does not know, so a typo never skips a block silently.
    pub fn treatment(&self) -> Result<Option<Treatment>, String> {
        if self.language != "rust" && self.language != "rs" {
            return Ok(None);
        }
        let mut treatment = Treatment::Compiled;
        for attribute in &self.attributes {
            match attribute.as_str() {
                "no_run" => {}
                "ignore" => treatment = Treatment::Ignored,
                other => {
                    let known: Vec<String> = KNOWN_ATTRIBUTES
                        .iter()
                        .map(|(name, meaning)| format!("`{name}` ({meaning})"))
                        .collect();
                    return Err(format!(
                        "the Rust block at line {} has the fence attribute `{other}`, which the \
                         README check does not know; it knows {}",
                        self.fence_line,
                        known.join(" and ")
                    ));
                }
            }
        }
        Ok(Some(treatment))
    }
}

/// Every README of the repository at `root` (`README.md`, any case), relative to `root` with
/// `/` separators, sorted. Build output (`target`) and hidden directories (`.git`, `.venv`) are
/// not the repository's.
pub fn readmes(root: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(root.join(&relative))? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    pending.push(relative.join(name));
                }
            } else if file_type.is_file() && name.eq_ignore_ascii_case("README.md") {
                let path = relative.join(name);
                let parts: Vec<&str> = path.iter().filter_map(|p| p.to_str()).collect();
                found.push(parts.join("/"));
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A Rust block of a README and what the check does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The README, relative to the repository root.
    pub readme: String,
    pub block: Block,
    pub treatment: Treatment,
}

/// Every Rust block of the READMEs `readmes` (relative to `root`). `Err` lists every README
/// that cannot be read, has an unclosed fence or an unknown attribute, each with its line.
pub fn snippets(root: &Path, readmes: &[String]) -> Result<Vec<Snippet>, String> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for readme in readmes {
        let text = match std::fs::read_to_string(root.join(readme)) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{readme}: cannot be read: {e}"));
                continue;
            }
        };
        let blocks = match blocks(&text) {
            Ok(blocks) => blocks,
            Err(e) => {
                problems.push(format!("{readme}: {e}"));
                continue;
            }
        };
        for block in blocks {
            match block.treatment() {
                Ok(Some(treatment)) => found.push(Snippet {
                    readme: readme.clone(),
                    block,
                    treatment,
                }),
                Ok(None) => {}
                Err(e) => problems.push(format!("{readme}: {e}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(found)
    } else {
        Err(problems.join("\n"))
    }
}

/// What [`write_crate_sources`] wrote.
#[derive(Debug)]
pub struct Written {
    /// The READMEs read, relative to the root.
    pub readmes: Vec<String>,
    /// Every Rust block found.
    pub snippets: Vec<Snippet>,
    /// The file to `include!` at a crate's root: a module per compiled block.
    pub root_module: PathBuf,
}

/// The name of the file in `out_dir` that [`write_crate_sources`] writes for a crate's root.
pub const ROOT_MODULE: &str = "readmes.rs";

/// Writes into `out_dir` one file per compiled Rust block of every README under `root`, and
/// [`ROOT_MODULE`], which declares each as a module. A block's file holds the block as it is,
/// at the line it has in its README (the lines above it are blank), under
/// `readmes/<README path>/line-<fence line>.rs`: the compiler's messages name the README and
/// the line to fix. A module is code pasted into a file: items (`use`, `fn`, `struct`...), a
/// `main` among them or not; statements outside a function do not compile.
pub fn write_crate_sources(root: &Path, out_dir: &Path) -> Result<Written, String> {
    let readmes = readmes(root)
        .map_err(|e| format!("cannot list the READMEs under {}: {e}", root.display()))?;
    let snippets = snippets(root, &readmes)?;
    let mut modules = String::from(
        "// Generated by docs/readme-snippets/build.rs (src/markdown.rs): every Rust block of every\n\
         // README of the repository, one module each. Edit the READMEs, not this.\n",
    );
    for snippet in &snippets {
        let Snippet {
            readme,
            block,
            treatment,
        } = snippet;
        let line = block.fence_line;
        if *treatment == Treatment::Ignored {
            let _ = write!(
                modules,
                "\n// {readme}, the block at line {line}: marked `ignore`, not compiled.\n"
            );
            continue;
        }
        let file = out_dir
            .join("readmes")
            .join(readme)
            .join(format!("line-{line}.rs"));
        let dir = file.parent().expect("a file in a directory");
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // Line 1 says where the code comes from; the block starts on the line after its fence.
        let mut text =
            format!("// {readme}, the block at line {line}: edit the README, not this file.");
        text.push_str(&"\n".repeat(line));
        text.push_str(&block.code);
        write_if_changed(&file, &text)?;
        let path = file
            .to_str()
            .ok_or_else(|| format!("{} is not UTF-8", file.display()))?;
        let _ = write!(
            modules,
            "\n/// `{readme}`, the block at line {line}.\n#[allow(dead_code)]\n#[path = {path:?}]\nmod {};\n",
            module_name(readme, line)
        );
    }
    let root_module = out_dir.join(ROOT_MODULE);
    write_if_changed(&root_module, &modules)?;
    Ok(Written {
        readmes,
        snippets,
        root_module,
    })
}

/// `generated-client/README.md`, 71 → `generated_client_readme_md_line_71`.
fn module_name(readme: &str, line: usize) -> String {
    let mut name: String = readme
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let _ = write!(name, "_line_{line}");
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// Writes `text` to `path` unless it holds exactly that already (its time stamp then stays, and
/// with it the build's).
fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
