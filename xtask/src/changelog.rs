//! The client's release bookkeeping: `generated-client/CHANGELOG.md`, which `cargo xtask regen`
//! feeds (each regeneration that changes the API adds its change report under `Unreleased`), and
//! `cargo xtask cut-release`, which moves what is unreleased under the version it sets in
//! `generated-client/Cargo.toml`, the one place the client's version lives.
//!
//! Each entry carries the version bump its report called for in a comment
//! (`<!-- creditdata-regen: bump=patch -->`), so the cut takes the largest of them without
//! comparing anything again.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use clap::Args;
use creditdata_codegen::diff::{Bump, ChangeReport};
use creditdata_codegen::document;

use crate::regen::workspace_root;

/// The changelog, relative to the workspace root.
pub const CHANGELOG: &str = "generated-client/CHANGELOG.md";
/// The client's manifest, where its version is set.
pub const CLIENT_MANIFEST: &str = "generated-client/Cargo.toml";

/// The heading everything not yet released goes under.
const UNRELEASED: &str = "## Unreleased";
/// What `Unreleased` says when it is empty.
const NOTHING_UNRELEASED: &str = "Nothing yet: `cargo xtask regen` adds the change report of each \
                                  regeneration that changes the API here.";
/// The start of the comment recording an entry's bump.
const BUMP_MARK: &str = "<!-- creditdata-regen: bump=";

/// A new changelog: the title, how it is kept, and an empty `Unreleased`.
fn new_changelog() -> String {
    format!(
        "# Changelog of creditdata-client\n\n\
         Every release of the client crate, newest first. `cargo xtask regen` adds the change \
         report of each regeneration that changes the API under *Unreleased*; `cargo xtask \
         cut-release` moves it under the version it sets in `generated-client/Cargo.toml` (see \
         the README, \"When the vendor releases\").\n\n{UNRELEASED}\n\n{NOTHING_UNRELEASED}\n"
    )
}

fn bump_name(bump: Bump) -> &'static str {
    match bump {
        Bump::None => "none",
        Bump::Patch => "patch",
        Bump::Minor => "minor",
        Bump::Major => "major",
    }
}

fn parse_bump(name: &str) -> Option<Bump> {
    Some(match name {
        "none" => Bump::None,
        "patch" => Bump::Patch,
        "minor" => Bump::Minor,
        "major" => Bump::Major,
        _ => return None,
    })
}

/// The entry for one regeneration: a heading naming the description's versions, the bump mark,
/// and the report's Markdown one heading level down, without its title and the pins (a
/// maintainer's matter, in `overlays/90-keep-names.overlay.yaml`).
pub fn entry(report: &ChangeReport, old_version: &str, new_version: &str) -> String {
    let bump = report.semver.as_ref().map_or(Bump::None, |s| s.bump);
    let heading = if old_version == new_version {
        format!("### Regenerated from the service's description {new_version}")
    } else {
        format!("### The service's description {old_version} → {new_version}")
    };
    let mut body = String::new();
    let mut in_pins = false;
    for line in report.to_markdown().lines().skip(1) {
        if line.starts_with("### Pinned names") {
            in_pins = true;
            continue;
        }
        if in_pins && !line.starts_with('#') && !line.starts_with("Generated Rust API") {
            continue;
        }
        in_pins = false;
        if line.starts_with('#') {
            body.push('#');
        }
        body.push_str(line);
        body.push('\n');
    }
    format!(
        "{heading}\n{BUMP_MARK}{} -->\n\n{}\n",
        bump_name(bump),
        body.trim()
    )
}

/// `text` (a changelog, or none yet) with `entry` added at the end of `Unreleased`.
pub fn with_entry(text: Option<&str>, entry: &str) -> anyhow::Result<String> {
    let text = text.map_or_else(new_changelog, str::to_string);
    let (before, unreleased, after) = split(&text)?;
    let kept = unreleased
        .trim()
        .trim_start_matches(NOTHING_UNRELEASED)
        .trim();
    let mut out = format!("{before}{UNRELEASED}\n\n");
    if !kept.is_empty() {
        out.push_str(kept);
        out.push_str("\n\n");
    }
    out.push_str(entry.trim());
    out.push('\n');
    if !after.is_empty() {
        out.push('\n');
        out.push_str(after);
    }
    Ok(out)
}

/// The text before `## Unreleased`, the body of that section, and everything from the next
/// `## ` heading on.
fn split(text: &str) -> anyhow::Result<(&str, &str, &str)> {
    let start = text
        .match_indices(UNRELEASED)
        .find(|(at, _)| *at == 0 || text[..*at].ends_with('\n'))
        .map(|(at, _)| at)
        .with_context(|| format!("{CHANGELOG} has no `{UNRELEASED}` heading; add one"))?;
    let body_start = start + UNRELEASED.len();
    let rest = &text[body_start..];
    let end = rest
        .match_indices("\n## ")
        .next()
        .map_or(text.len(), |(at, _)| body_start + at + 1);
    Ok((&text[..start], &text[body_start..end], &text[end..]))
}

/// The bumps the unreleased entries recorded.
pub fn unreleased_bumps(text: &str) -> anyhow::Result<Vec<Bump>> {
    let (_, unreleased, _) = split(text)?;
    unreleased
        .lines()
        .filter_map(|line| line.trim().strip_prefix(BUMP_MARK))
        .map(|rest| {
            let name = rest.trim_end_matches("-->").trim();
            parse_bump(name)
                .with_context(|| format!("{CHANGELOG}: an entry records an unknown bump {name:?}"))
        })
        .collect()
}

/// `current` (`MAJOR.MINOR.PATCH`) raised by `bump`.
pub fn bumped(current: &str, bump: Bump) -> anyhow::Result<String> {
    let parts: Vec<u64> = current
        .split('.')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()
        .filter(|parts: &Vec<u64>| parts.len() == 3)
        .with_context(|| format!("the client's version {current:?} is not MAJOR.MINOR.PATCH"))?;
    let (major, minor, patch) = (parts[0], parts[1], parts[2]);
    Ok(match bump {
        Bump::None => current.to_string(),
        Bump::Patch => format!("{major}.{minor}.{}", patch + 1),
        Bump::Minor => format!("{major}.{}.0", minor + 1),
        Bump::Major => format!("{}.0.0", major + 1),
    })
}

/// `text` with what is unreleased moved under `## {version} - {date}`, and `Unreleased` empty.
pub fn cut(text: &str, version: &str, date: &str) -> anyhow::Result<String> {
    let (before, unreleased, after) = split(text)?;
    let body = unreleased
        .trim()
        .trim_start_matches(NOTHING_UNRELEASED)
        .trim();
    ensure!(
        !body.is_empty(),
        "{CHANGELOG} has nothing under `{UNRELEASED}`: nothing to release"
    );
    let heading = format!("## {version} - {date}");
    ensure!(
        !text
            .lines()
            .any(|line| line.starts_with(&format!("## {version} "))),
        "{CHANGELOG} already has a section for {version}"
    );
    let mut out = format!("{before}{UNRELEASED}\n\n{NOTHING_UNRELEASED}\n\n{heading}\n\n{body}\n");
    if !after.is_empty() {
        out.push('\n');
        out.push_str(after);
    }
    Ok(out)
}

/// Adds `report` to the workspace's changelog when it changes anything; returns the path written.
pub fn record(
    root: &Path,
    report: &ChangeReport,
    old_version: &str,
    new_version: &str,
) -> anyhow::Result<Option<PathBuf>> {
    if report.is_empty() {
        return Ok(None);
    }
    let path = root.join(CHANGELOG);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display())));
        }
    };
    let text = with_entry(
        existing.as_deref(),
        &entry(report, old_version, new_version),
    )?;
    document::write_atomic(&path, text.as_bytes())?;
    Ok(Some(path))
}

/// `cargo xtask cut-release`.
#[derive(Args, Debug)]
pub struct CutReleaseArgs {
    /// The version to release [default: the current one raised by the largest bump the
    /// unreleased entries call for].
    #[arg(long, value_name = "X.Y.Z")]
    version: Option<String>,
    /// The release date written in the changelog [default: today, UTC].
    #[arg(long, value_name = "YYYY-MM-DD")]
    date: Option<String>,
}

/// Sets the client's version and moves the unreleased changelog entries under it.
pub fn cut_release(args: &CutReleaseArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    let changelog = root.join(CHANGELOG);
    let text = std::fs::read_to_string(&changelog)
        .with_context(|| format!("cannot read {}", changelog.display()))?;
    let current = crate::regen::client_version()?;
    let version = match &args.version {
        Some(version) => {
            bumped(version, Bump::None)?;
            version.clone()
        }
        None => {
            let bump = unreleased_bumps(&text)?
                .into_iter()
                .max()
                .unwrap_or(Bump::None);
            ensure!(
                bump != Bump::None,
                "{CHANGELOG} has no unreleased change that calls for a release; give --version \
                 to release anyway"
            );
            bumped(&current, bump)?
        }
    };
    ensure!(
        version != current,
        "creditdata-client is already at {version}"
    );
    let date = match &args.date {
        Some(date) => date.clone(),
        None => today(),
    };
    let cut_text = cut(&text, &version, &date)?;
    let manifest = root.join(CLIENT_MANIFEST);
    let manifest_text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let new_manifest = with_version(&manifest_text, &version)?;
    document::write_atomic(&manifest, new_manifest.as_bytes())?;
    document::write_atomic(&changelog, cut_text.as_bytes())?;
    // Cargo.lock records the workspace's own versions too.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(&root)
        .args(["update", "--workspace", "--offline", "--quiet"])
        .status()
        .context("cannot run cargo update")?;
    if !status.success() {
        bail!(
            "`cargo update --workspace --offline` failed ({status}): Cargo.lock still names {current}"
        );
    }
    println!(
        "creditdata-client {current} -> {version}: {CLIENT_MANIFEST} and {CHANGELOG} (## {version} - \
         {date}); commit them and tag the release, e.g. `git tag creditdata-client-v{version}`"
    );
    Ok(())
}

/// `manifest` (generated-client/Cargo.toml) with its own `package.version` set to `version`,
/// formatting and comments kept.
pub fn with_version(manifest: &str, version: &str) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = manifest
        .parse()
        .with_context(|| format!("{CLIENT_MANIFEST} is not valid TOML"))?;
    let package = doc
        .get_mut("package")
        .and_then(toml_edit::Item::as_table_mut)
        .with_context(|| format!("{CLIENT_MANIFEST} has no [package] table"))?;
    package["version"] = toml_edit::value(version);
    Ok(doc.to_string())
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    civil(i64::try_from(days).unwrap_or(0))
}

/// The date `days` after 1970-01-01, `YYYY-MM-DD` (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY_A: &str =
        "### The service's description 1.0 → 1.1\n<!-- creditdata-regen: bump=patch -->\n\nA\n";
    const ENTRY_B: &str =
        "### The service's description 1.1 → 1.2\n<!-- creditdata-regen: bump=minor -->\n\nB\n";

    #[test]
    fn regen_entries_gather_under_unreleased_and_the_cut_moves_them_under_the_version() {
        let once = with_entry(None, ENTRY_A).unwrap();
        assert!(
            once.starts_with("# Changelog of creditdata-client\n"),
            "{once}"
        );
        assert!(!once.contains(NOTHING_UNRELEASED), "{once}");
        let twice = with_entry(Some(&once), ENTRY_B).unwrap();
        assert_eq!(
            unreleased_bumps(&twice).unwrap(),
            [Bump::Patch, Bump::Minor]
        );
        let a = twice.find("\nA\n").unwrap();
        let b = twice.find("\nB\n").unwrap();
        assert!(a < b, "in the order they were regenerated: {twice}");

        let version = bumped(
            "0.1.0",
            unreleased_bumps(&twice).unwrap().into_iter().max().unwrap(),
        )
        .unwrap();
        assert_eq!(version, "0.2.0");
        let released = cut(&twice, &version, "2026-05-20").unwrap();
        assert!(unreleased_bumps(&released).unwrap().is_empty());
        let unreleased_at = released.find(UNRELEASED).unwrap();
        let section_at = released.find("## 0.2.0 - 2026-05-20\n").unwrap();
        assert!(unreleased_at < section_at, "{released}");
        assert!(released[section_at..].contains("\nA\n"), "{released}");
        assert!(released[unreleased_at..section_at].contains(NOTHING_UNRELEASED));

        // The next regeneration goes above the released section, which stays as it is.
        let next = with_entry(Some(&released), ENTRY_A).unwrap();
        assert_eq!(unreleased_bumps(&next).unwrap(), [Bump::Patch]);
        assert!(next.ends_with(&released[section_at..]), "{next}");
        assert!(
            cut(&released, "0.2.1", "2026-05-21").is_err(),
            "nothing unreleased"
        );
        assert!(cut(&next, "0.2.0", "2026-05-21").is_err(), "0.2.0 exists");
    }

    #[test]
    fn versions_rise_by_the_component_the_bump_names() {
        assert_eq!(bumped("0.1.0", Bump::Patch).unwrap(), "0.1.1");
        assert_eq!(bumped("0.1.3", Bump::Minor).unwrap(), "0.2.0");
        assert_eq!(bumped("1.4.2", Bump::Major).unwrap(), "2.0.0");
        assert_eq!(bumped("1.4.2", Bump::None).unwrap(), "1.4.2");
        assert!(bumped("1.4", Bump::Patch).is_err());
    }

    #[test]
    fn the_version_is_set_in_the_clients_own_manifest_keeping_the_rest() {
        let manifest = "[package]\nname = \"creditdata-client\"\n# ours\nversion = \"0.1.0\"\nedition.workspace = true\n";
        let changed = with_version(manifest, "0.1.1").unwrap();
        assert_eq!(
            changed,
            "[package]\nname = \"creditdata-client\"\n# ours\nversion = \"0.1.1\"\nedition.workspace = true\n"
        );
    }

    #[test]
    fn the_checked_in_changelog_has_an_unreleased_section() {
        let text = std::fs::read_to_string(workspace_root().join(CHANGELOG)).unwrap();
        unreleased_bumps(&text).unwrap();
    }

    #[test]
    fn days_since_the_epoch_are_dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(11_016), "2000-02-29");
        assert_eq!(civil(20_593), "2026-05-20");
        assert_eq!(today().len(), 10);
    }
}
