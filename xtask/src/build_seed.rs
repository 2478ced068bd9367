//! Release-day's copy starts from this workspace's compiled dependencies, never from its own
//! packages.
//!
//! The copy builds in a target directory of its own (`target/release-day/`). Empty, it would
//! compile every dependency again: minutes, and as much disk as this workspace's build (CI once
//! ran out of space doing it). Sharing this workspace's directory is no answer: cargo names a
//! workspace package's artifacts by its path relative to the workspace root, so the copy's
//! packages would replace this workspace's, and cargo would take them as fresh afterwards
//! (docs/traps.md). So the copy's directory is seeded with hard links (no disk) to every
//! artifact of this workspace's `debug` profile, but those of the packages whose `Cargo.toml`
//! the workspace holds: found by the hash that names each of their build units.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The parts of a profile's directory that hold build units: fingerprints, build scripts'
/// outputs, compiled crates.
const UNIT_DIRS: [&str; 3] = [".fingerprint", "build", "deps"];

/// The profile the copy builds with.
const PROFILE: &str = "debug";

/// What a seeding did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Seeded {
    /// Files hard-linked.
    pub linked: usize,
    /// Files of the workspace's own packages, left for the copy to build.
    pub left: usize,
}

/// The names of the packages whose `Cargo.toml` is under `root` (a target directory excluded):
/// the workspace's members and any other workspace it holds (`examples/consumer-app`).
pub fn local_packages(root: &Path) -> anyhow::Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?
        {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                let name = entry.file_name();
                if name != "target" && name != ".git" {
                    dirs.push(path);
                }
            } else if kind.is_file() && entry.file_name() == "Cargo.toml" {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let manifest: toml::Table = toml::from_str(&text)
                    .with_context(|| format!("{} is not TOML", path.display()))?;
                if let Some(name) = manifest
                    .get("package")
                    .and_then(|package| package.get("name"))
                    .and_then(toml::Value::as_str)
                {
                    names.insert(name.to_string());
                }
            }
        }
    }
    Ok(names)
}

/// Replaces the build units of `to`'s `debug` profile with hard links to `from`'s, but those of
/// `local` packages (and incremental state, which the copy does without).
pub fn seed(from: &Path, to: &Path, local: &BTreeSet<String>) -> anyhow::Result<Seeded> {
    let from = from.join(PROFILE);
    let to = to.join(PROFILE);
    for dir in UNIT_DIRS.iter().chain(&["incremental"]) {
        let dir = to.join(dir);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot empty {}", dir.display()))?;
        }
    }
    let own = own_hashes(&from.join(".fingerprint"), local)?;
    let mut seeded = Seeded::default();
    for dir in UNIT_DIRS {
        let Ok(entries) = std::fs::read_dir(from.join(dir)) else {
            continue;
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let files = files_under(&entry.path())?;
            if unit_hash(name).is_some_and(|hash| own.contains(hash)) {
                seeded.left += files.len();
                continue;
            }
            for file in files {
                let relative = file.strip_prefix(&from).unwrap_or(&file);
                let target = to.join(relative);
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                // A file that cannot be linked (another file system) is built by the copy.
                if std::fs::hard_link(&file, &target).is_ok() {
                    seeded.linked += 1;
                }
            }
        }
    }
    Ok(seeded)
}

/// The hashes of the build units of `local` packages: `.fingerprint/{package}-{hash}`.
fn own_hashes(fingerprints: &Path, local: &BTreeSet<String>) -> anyhow::Result<HashSet<String>> {
    let mut hashes = HashSet::new();
    let Ok(entries) = std::fs::read_dir(fingerprints) else {
        return Ok(hashes);
    };
    for entry in entries {
        let name = entry?.file_name();
        let Some((package, hash)) = name.to_str().and_then(|name| name.rsplit_once('-')) else {
            continue;
        };
        if local.contains(package) && is_hash(hash) {
            hashes.insert(hash.to_string());
        }
    }
    Ok(hashes)
}

/// The hash in a unit's file or directory name: `libserde-0123456789abcdef.rlib`,
/// `it-0123456789abcdef`, `serde-0123456789abcdef/`.
fn unit_hash(name: &str) -> Option<&str> {
    let stem = name.split('.').next()?;
    let (_, hash) = stem.rsplit_once('-')?;
    is_hash(hash).then_some(hash)
}

fn is_hash(text: &str) -> bool {
    text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Every file at or below `path` (symbolic links left out: cargo writes none there).
fn files_under(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(path) = pending.pop() {
        let kind = std::fs::symlink_metadata(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .file_type();
        if kind.is_dir() {
            for entry in std::fs::read_dir(&path)
                .with_context(|| format!("cannot read {}", path.display()))?
            {
                pending.push(entry?.path());
            }
        } else if kind.is_file() {
            files.push(path);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    const OURS: &str = "0123456789abcdef";
    const THEIRS: &str = "fedcba9876543210";

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A `debug` profile with one unit of ours (`creditdata-client`, its test `it`) and one
    /// dependency's (`serde`, with a build script's output).
    fn built(root: &Path) {
        let debug = root.join("debug");
        write(
            &debug.join(format!(".fingerprint/creditdata-client-{OURS}/lib")),
            "x",
        );
        write(&debug.join(format!(".fingerprint/serde-{THEIRS}/lib")), "x");
        write(
            &debug.join(format!("deps/libcreditdata_client-{OURS}.rlib")),
            "ours",
        );
        write(&debug.join(format!("deps/it-{OURS}")), "ours");
        write(
            &debug.join(format!("deps/libserde-{THEIRS}.rlib")),
            "theirs",
        );
        write(&debug.join(format!("deps/serde-{THEIRS}.d")), "theirs");
        write(
            &debug.join(format!("build/serde-{THEIRS}/out/private.rs")),
            "theirs",
        );
        write(&debug.join("creditdata"), "an uplifted binary");
        write(&debug.join("incremental/x/y"), "state");
    }

    #[test]
    fn dependencies_are_linked_and_our_own_packages_left_to_build() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        built(from.path());
        // What an earlier copy left: gone, whatever it was.
        write(&to.path().join("debug/deps/stale"), "old");
        write(&to.path().join("debug/incremental/z"), "old");
        let local = BTreeSet::from(["creditdata-client".to_string()]);

        let seeded = seed(from.path(), to.path(), &local).unwrap();

        assert_eq!(seeded, Seeded { linked: 4, left: 3 });
        let debug = to.path().join("debug");
        for theirs in [
            format!("deps/libserde-{THEIRS}.rlib"),
            format!("deps/serde-{THEIRS}.d"),
            format!("build/serde-{THEIRS}/out/private.rs"),
            format!(".fingerprint/serde-{THEIRS}/lib"),
        ] {
            let linked = std::fs::metadata(debug.join(&theirs)).unwrap();
            let original = std::fs::metadata(from.path().join("debug").join(&theirs)).unwrap();
            assert_eq!(linked.ino(), original.ino(), "{theirs} is a hard link");
        }
        for ours in [
            format!("deps/libcreditdata_client-{OURS}.rlib"),
            format!("deps/it-{OURS}"),
            format!(".fingerprint/creditdata-client-{OURS}"),
            "creditdata".to_string(),
            "deps/stale".to_string(),
            "incremental".to_string(),
        ] {
            assert!(
                !debug.join(&ours).exists(),
                "{ours} is not in the copy's directory"
            );
        }
    }

    #[test]
    fn a_workspace_that_never_built_seeds_nothing() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        let seeded = seed(from.path(), to.path(), &BTreeSet::new()).unwrap();
        assert_eq!(seeded, Seeded::default());
    }

    #[test]
    fn local_packages_are_every_manifest_with_a_package_outside_target() {
        let root = tempfile::tempdir().unwrap();
        write(
            &root.path().join("Cargo.toml"),
            "[workspace]\nmembers = [\"a\"]\n",
        );
        write(
            &root.path().join("a/Cargo.toml"),
            "[package]\nname = \"alpha\"\n",
        );
        write(
            &root.path().join("examples/app/Cargo.toml"),
            "[package]\nname = \"app\"\n[workspace]\n",
        );
        write(
            &root.path().join("target/package/x/Cargo.toml"),
            "[package]\nname = \"packaged\"\n",
        );
        let names = local_packages(root.path()).unwrap();
        assert_eq!(names, BTreeSet::from(["alpha".into(), "app".into()]));
    }

    #[test]
    fn unit_hashes_are_read_from_file_and_directory_names() {
        assert_eq!(unit_hash(&format!("libserde-{THEIRS}.rlib")), Some(THEIRS));
        assert_eq!(unit_hash(&format!("it-{OURS}")), Some(OURS));
        assert_eq!(unit_hash(&format!("build-script-{OURS}")), Some(OURS));
        assert_eq!(unit_hash("creditdata"), None);
        assert_eq!(unit_hash("xtask-notahash"), None);
    }
}
