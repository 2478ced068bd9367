//! Release-day's copy starts from this workspace's compiled dependencies, never from its own
//! packages, and nothing the copy's build does reaches this workspace's build directory.
//!
//! The copy builds in a target directory of its own (`target/release-day/`). Empty, it would
//! compile every dependency again: minutes, and as much disk as this workspace's build (CI once
//! ran out of space doing it). Sharing this workspace's directory is no answer: cargo names a
//! workspace package's artifacts by its path relative to the workspace root, so the copy's
//! packages would replace this workspace's, and cargo would take them as fresh afterwards
//! (docs/traps.md). So the copy's directory is seeded with this workspace's `debug` profile but
//! the units of the packages whose `Cargo.toml` the workspace holds (found by the hash that
//! names each of their build units).
//!
//! A hard link is the same file under two names: whatever writes into it in place writes into
//! this workspace's build. The copy does rebuild dependencies with the same file names when its
//! environment differs (`CFLAGS`: every build script that watches it runs again, and the crates
//! above it compile again): cargo rewrites fingerprints and build-script outputs in place,
//! rustc truncates its `.d` files, build scripts write into their `OUT_DIR`. Only what rustc
//! and the linker replace (a new file renamed over the name: `.rlib`, `.rmeta`, `.so`, checked
//! with strace) is linked, the bulk of the bytes; everything else is copied, with its
//! modification time, so freshness reads the same. And cargo's lock on each build directory
//! (`debug/.cargo-lock`, `flock`) is held while seeding, so no build of this workspace writes
//! while it is read, and no other copy's build while its directory is refilled.

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
    /// Files hard-linked (what the compiler and the linker only ever replace).
    pub linked: usize,
    /// Files copied (what cargo, rustc and build scripts may write in place).
    pub copied: usize,
    /// Files of the workspace's own packages, left for the copy to build.
    pub left: usize,
}

/// The lock file cargo takes in a profile's directory while it builds there.
const CARGO_LOCK: &str = ".cargo-lock";

/// Whether a unit's file is only ever replaced, never written in place, by what builds it:
/// rustc renames a new `.rlib` and `.rmeta` over the old name, the linker does the same for a
/// proc-macro's shared library. Everything else of `deps/` (the `.d` files rustc truncates) and
/// all of `.fingerprint/` and `build/` is copied.
fn replaced_whole(relative: &Path) -> bool {
    relative.starts_with("deps")
        && relative
            .extension()
            .and_then(|extension| extension.to_str())
            .is_some_and(|extension| matches!(extension, "rlib" | "rmeta" | "so" | "dylib" | "dll"))
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

/// Replaces the build units of `to`'s `debug` profile with `from`'s, but those of `local`
/// packages (and incremental state, which the copy does without): what is only ever replaced
/// hard-linked, the rest copied. Holds cargo's lock on both directories meanwhile (saying so
/// when it has to wait for a build).
pub fn seed(from: &Path, to: &Path, local: &BTreeSet<String>) -> anyhow::Result<Seeded> {
    seed_waiting(from, to, local, |dir| {
        println!(
            "release-day: waiting for cargo's lock on {} (a build is running there)",
            dir.display()
        );
    })
}

/// [`seed`], calling `waiting` with a directory whose lock another process holds, before
/// waiting for it.
fn seed_waiting(
    from: &Path,
    to: &Path,
    local: &BTreeSet<String>,
    mut waiting: impl FnMut(&Path),
) -> anyhow::Result<Seeded> {
    let from = from.join(PROFILE);
    let to = to.join(PROFILE);
    // A workspace that never built has no directory to lock, and nothing to seed.
    let _built = if from.is_dir() {
        Some(lock::BuildDirectory::take(&from, &mut waiting)?)
    } else {
        None
    };
    std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
    let _copy = lock::BuildDirectory::take(&to, &mut waiting)?;
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
                // A file that cannot be linked (another file system) is copied.
                if replaced_whole(relative) && std::fs::hard_link(&file, &target).is_ok() {
                    seeded.linked += 1;
                } else {
                    copy_with_time(&file, &target)?;
                    seeded.copied += 1;
                }
            }
        }
    }
    Ok(seeded)
}

/// Copies `from` to `to` (a new file) with `from`'s modification time: cargo compares times to
/// decide what is fresh.
fn copy_with_time(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    let modified = std::fs::metadata(from)
        .and_then(|metadata| metadata.modified())
        .with_context(|| format!("cannot read {}", from.display()))?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|file| file.set_modified(modified))
        .with_context(|| format!("cannot set the time of {}", to.display()))
}

/// Cargo's lock on a build directory.
mod lock {
    use std::path::Path;

    use anyhow::Context;

    /// Held until dropped: the same advisory `flock` cargo takes on `debug/.cargo-lock`
    /// ("Blocking waiting for file lock on build directory").
    pub struct BuildDirectory {
        #[cfg(unix)]
        _file: std::fs::File,
    }

    impl BuildDirectory {
        #[cfg(unix)]
        pub fn take(dir: &Path, waiting: &mut impl FnMut(&Path)) -> anyhow::Result<Self> {
            use rustix::fs::{FlockOperation, flock};
            let path = dir.join(super::CARGO_LOCK);
            let file = std::fs::File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            loop {
                match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                    Ok(()) => return Ok(BuildDirectory { _file: file }),
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(rustix::io::Errno::WOULDBLOCK) => {
                        waiting(dir);
                        loop {
                            match flock(&file, FlockOperation::LockExclusive) {
                                Ok(()) => return Ok(BuildDirectory { _file: file }),
                                Err(rustix::io::Errno::INTR) => continue,
                                Err(error) => {
                                    return Err(error).with_context(|| {
                                        format!("cannot lock {}", path.display())
                                    });
                                }
                            }
                        }
                    }
                    Err(error) => {
                        return Err(error)
                            .with_context(|| format!("cannot lock {}", path.display()));
                    }
                }
            }
        }

        /// Elsewhere cargo's lock is not an `flock`: nothing is taken.
        #[cfg(not(unix))]
        pub fn take(_dir: &Path, _waiting: &mut impl FnMut(&Path)) -> anyhow::Result<Self> {
            Ok(BuildDirectory {})
        }
    }
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
    use std::collections::BTreeMap;
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

        assert_eq!(
            seeded,
            Seeded {
                linked: 1,
                copied: 3,
                left: 3
            }
        );
        let debug = to.path().join("debug");
        let original = |path: &str| from.path().join("debug").join(path);
        let linked = format!("deps/libserde-{THEIRS}.rlib");
        assert_eq!(
            std::fs::metadata(debug.join(&linked)).unwrap().ino(),
            std::fs::metadata(original(&linked)).unwrap().ino(),
            "{linked} is a hard link"
        );
        // What cargo, rustc or a build script may write in place is a copy, with its time.
        for copied in [
            format!("deps/serde-{THEIRS}.d"),
            format!("build/serde-{THEIRS}/out/private.rs"),
            format!(".fingerprint/serde-{THEIRS}/lib"),
        ] {
            let copy = std::fs::metadata(debug.join(&copied)).unwrap();
            let source = std::fs::metadata(original(&copied)).unwrap();
            assert_ne!(copy.ino(), source.ino(), "{copied} is a file of its own");
            assert_eq!(
                copy.modified().unwrap(),
                source.modified().unwrap(),
                "{copied}"
            );
            assert_eq!(
                std::fs::read(debug.join(&copied)).unwrap(),
                std::fs::read(original(&copied)).unwrap()
            );
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

    /// Every file below `dir`: its bytes and modification time.
    fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
        files_under(dir)
            .unwrap()
            .into_iter()
            .map(|file| {
                let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
                let bytes = std::fs::read(&file).unwrap();
                (
                    file.strip_prefix(dir).unwrap().to_path_buf(),
                    (bytes, modified),
                )
            })
            .collect()
    }

    /// `cargo build` of the workspace `root` into `root/target`, with `flavour` for the
    /// dependency's build script; its stderr.
    fn cargo_build(root: &Path, flavour: Option<&str>) -> String {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = std::process::Command::new(cargo);
        command
            .current_dir(root)
            .args(["build", "--offline"])
            .env("CARGO_TARGET_DIR", root.join("target"))
            .env("CARGO_BUILD_BUILD_DIR", root.join("target"))
            .env("CARGO_INCREMENTAL", "0")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("SEED_TEST_FLAVOUR");
        if let Some(flavour) = flavour {
            command.env("SEED_TEST_FLAVOUR", flavour);
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "cargo build in {}: {stderr}",
            root.display()
        );
        stderr
    }

    /// What the audit found: the copy, built with another environment, rebuilt a dependency
    /// whose build script watches a variable (as cc-based ones watch `CFLAGS`), and wrote
    /// through the links into this workspace's fingerprints and build-script outputs (which
    /// then named the copy's directory). With a real cargo: seed, build the copy with the
    /// variable changed, and not a byte or a modification time of the original changes.
    #[test]
    fn the_copys_build_changes_nothing_of_the_original() {
        let root = tempfile::tempdir().unwrap();
        let dep = root.path().join("dep");
        write(
            &dep.join("Cargo.toml"),
            "[package]\nname = \"seeddep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(
            &dep.join("build.rs"),
            r#"fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SEED_TEST_FLAVOUR");
    let flavour = std::env::var("SEED_TEST_FLAVOUR").unwrap_or_else(|_| "plain".into());
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(
        format!("{out}/flavour.rs"),
        format!("pub const FLAVOUR: &str = {flavour:?};"),
    )
    .unwrap();
    println!("cargo:rustc-env=SEED_TEST_OUT={out}");
}
"#,
        );
        write(
            &dep.join("src/lib.rs"),
            "include!(concat!(env!(\"OUT_DIR\"), \"/flavour.rs\"));\n\
             pub fn out() -> &'static str { env!(\"SEED_TEST_OUT\") }\n",
        );
        let original = root.path().join("original");
        write(
            &original.join("Cargo.toml"),
            "[package]\nname = \"seedapp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [dependencies]\nseeddep = { path = \"../dep\" }\n[workspace]\n",
        );
        write(
            &original.join("src/main.rs"),
            "fn main() { println!(\"{} {}\", seeddep::FLAVOUR, seeddep::out()); }\n",
        );
        cargo_build(&original, None);
        let copy = root.path().join("copy");
        for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
            write(
                &copy.join(file),
                &std::fs::read_to_string(original.join(file)).unwrap(),
            );
        }
        let built = original.join("target");
        let before = snapshot(&built);

        let seeded = seed(
            &built,
            &copy.join("target"),
            &local_packages(&copy).unwrap(),
        )
        .unwrap();
        assert!(
            seeded.linked > 0 && seeded.copied > 0 && seeded.left > 0,
            "{seeded:?}"
        );
        let stderr = cargo_build(&copy, Some("changed"));

        // Not vacuous: the dependency was built again under the same names.
        assert!(stderr.contains("Compiling seeddep"), "{stderr}");
        let after = snapshot(&built);
        let changed: Vec<&PathBuf> = before
            .iter()
            .filter(|(path, old)| after.get(*path) != Some(old))
            .map(|(path, _)| path)
            .collect();
        assert!(
            changed.is_empty(),
            "files of the original changed: {changed:?}"
        );
        let added: Vec<&PathBuf> = after
            .keys()
            .filter(|path| !before.contains_key(*path))
            .collect();
        assert!(added.is_empty(), "files added to the original: {added:?}");
    }

    /// Seeding waits for cargo's lock on this workspace's build directory (a build running
    /// there), says so, and touches nothing until it has it.
    #[test]
    fn seeding_waits_for_cargos_lock_on_the_build_directory() {
        use rustix::fs::{FlockOperation, flock};
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        built(from.path());
        let lock_path = from.path().join("debug").join(CARGO_LOCK);
        let held = std::fs::File::create(&lock_path).unwrap();
        flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();

        let (said, waited) = std::sync::mpsc::channel();
        let (source, target) = (from.path().to_owned(), to.path().to_owned());
        let seeding = std::thread::spawn(move || {
            seed_waiting(&source, &target, &BTreeSet::new(), |dir| {
                said.send(dir.to_owned()).unwrap();
            })
        });
        let dir = waited
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("seeding says it waits");
        assert_eq!(dir, from.path().join("debug"));
        assert!(
            !to.path().join("debug/deps").exists(),
            "nothing is seeded while a build holds the lock"
        );
        drop(held);
        let seeded = seeding.join().unwrap().unwrap();
        assert_eq!(seeded.linked + seeded.copied, 7, "{seeded:?}");
    }

    #[test]
    fn a_workspace_that_never_built_seeds_nothing() {
        let from = tempfile::tempdir().unwrap();
        let to = tempfile::tempdir().unwrap();
        write(&to.path().join("debug/deps/stale"), "old");
        let seeded = seed(from.path(), to.path(), &BTreeSet::new()).unwrap();
        assert_eq!(seeded, Seeded::default());
        assert!(
            !to.path().join("debug/deps").exists(),
            "what an earlier copy left is gone"
        );
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
