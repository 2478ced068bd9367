//! Writes every Rust block of the repository's READMEs as a module of the test `readmes`
//! (src/markdown.rs says how), so that compiling the test compiles them.

use std::path::PathBuf;

#[allow(dead_code, reason = "xtask's tests read the rest of what it writes")]
#[path = "src/markdown.rs"]
mod markdown;

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // docs/readme-snippets → the repository root.
    let root = manifest_dir.join("../..");
    let written = match markdown::write_crate_sources(&root, &out_dir) {
        Ok(written) => written,
        Err(problems) => {
            eprintln!(
                "error: the READMEs' Rust blocks cannot be compiled as they are:\n{problems}"
            );
            std::process::exit(1);
        }
    };
    // Again when a README changes, or a README appears or goes: every directory that can hold
    // one is watched (cargo scans a directory's files); the root itself only through its
    // README, since it holds the build directory (a README in a new top-level directory is
    // seen at the next change of a watched one).
    println!("cargo::rerun-if-changed=src/markdown.rs");
    for readme in &written.readmes {
        println!("cargo::rerun-if-changed={}", root.join(readme).display());
    }
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if entry.file_type().is_ok_and(|t| t.is_dir())
                && !name.starts_with('.')
                && name != "target"
            {
                println!("cargo::rerun-if-changed={}", root.join(name).display());
            }
        }
    }
}
