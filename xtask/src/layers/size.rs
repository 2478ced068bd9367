//! No hand-written Rust file over [`MAX_LINES`] lines: a file that long holds more than one
//! job. Generated files (their first line is codegen's [`GENERATED_MARK`]) are not counted, nor
//! is anything that is not Rust (`BENCHMARKS.md`, the spec, fixtures).

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use creditdata_codegen::pipeline::GENERATED_MARK;

/// The most lines a hand-written `.rs` file may have.
pub const MAX_LINES: usize = 900;

/// A hand-written file over the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized {
    pub file: PathBuf,
    pub lines: usize,
}

impl fmt::Display for Oversized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} lines, over the {MAX_LINES} a hand-written Rust file may have: split it by \
             job into a module folder (`name/mod.rs` re-exporting what others import, so their \
             paths stay), each new file opening with a line saying what it is",
            self.file.display(),
            self.lines
        )
    }
}

/// Every hand-written `.rs` file under `root` (build output in `target/` and hidden folders
/// skipped) longer than [`MAX_LINES`].
pub fn check(root: &Path) -> anyhow::Result<Vec<Oversized>> {
    let mut found = Vec::new();
    walk(root, root, &mut found)?;
    found.sort_by(|a, b| a.file.cmp(&b.file));
    Ok(found)
}

fn walk(root: &Path, dir: &Path, found: &mut Vec<Oversized>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(root, &path, found)?;
            }
        } else if name.ends_with(".rs") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let lines = text.lines().count();
            if lines > MAX_LINES && !text.starts_with(GENERATED_MARK) {
                found.push(Oversized {
                    file: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                    lines,
                });
            }
        }
    }
    Ok(())
}
