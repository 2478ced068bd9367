//! The change report's version verdict checked with the field's own tool: `cargo-semver-checks`
//! compares the client crate before and after a release (its rustdoc, item by item), and must
//! agree with the report's `semver.suggested`.
//!
//! What "agree" means, since each side sees what the other cannot:
//!
//! 1. **The report never understates.** The suggested version must satisfy the tool: the level
//!    the tool requires (nothing, cargo's minor, cargo's major) is at most the level of the
//!    step from the current version to the suggested one, in cargo's terms (`0.1.0` → `0.1.1` is
//!    a minor step, `0.1.0` → `0.2.0` a major one, as cargo and the tool read 0.x versions).
//! 2. **Breaking Rust code is judged the same.** The report has a change whose `source` verdict
//!    is `no` (Rust code written against the old crate stops compiling) exactly when the tool
//!    requires a major step. Either side alone is a disagreement a person must look at: the
//!    report missing a break, or seeing one the tool does not (the tool has known blind spots,
//!    the report's generated-API comparison too).
//! 3. **What the tool cannot see may only raise the report.** A change that breaks deployed
//!    clients on the wire while the Rust API is unchanged (`wire` `no` or `degraded`, `source`
//!    `yes`: a path or a status moved), and a behaviour change (a header's value, the default
//!    readiness gate; its `source` verdict is `yes` too), make the report's suggestion breaking
//!    while the tool sees nothing to require: that is agreement, and the rehearsal says which
//!    changes raised it. The tool also has no rule for additions (cargo's guide makes a new public
//!    item a minor change from 1.0 on); a report stricter than the tool for additions alone
//!    agrees too.
//!
//! A disagreement fails the rehearsal with both verdicts and the changes behind the report's.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail, ensure};
use serde_json::Value;

/// The release of `cargo-semver-checks` the rehearsal runs (`.ci/run` installs it).
pub const TOOL_VERSION: &str = "0.51.0";

/// How to install it, for messages.
pub const INSTALL: &str = "cargo install cargo-semver-checks --locked --version 0.51.0";

/// A step between two versions, in cargo's terms: what a dependent's `^` requirement crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CargoStep {
    /// The same version, or a step `^` follows without a new API (`1.2.3` → `1.2.4`).
    Patch,
    /// A step `^` follows (`0.1.0` → `0.1.1`, `1.2.3` → `1.3.0`): new API, nothing broken.
    Minor,
    /// A step `^` does not follow (`0.1.0` → `0.2.0`, `1.2.3` → `2.0.0`): breaking allowed.
    Major,
}

/// What the tool requires between the two crates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolVerdict {
    /// The smallest step that passes every lint.
    pub requires: CargoStep,
    /// The tool's summary line, for messages.
    pub summary: String,
}

/// The step from `from` to `to` as cargo reads versions (the left-most non-zero component
/// signals breakage).
pub fn cargo_step(from: &str, to: &str) -> anyhow::Result<CargoStep> {
    let parse = |v: &str| -> anyhow::Result<[u64; 3]> {
        let parts: Vec<u64> = v
            .split('.')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()
            .filter(|p: &Vec<u64>| p.len() == 3)
            .with_context(|| format!("version {v:?} is not MAJOR.MINOR.PATCH"))?;
        Ok([parts[0], parts[1], parts[2]])
    };
    let (a, b) = (parse(from)?, parse(to)?);
    Ok(if a == b {
        CargoStep::Patch
    } else if a[0] > 0 || b[0] > 0 {
        if a[0] != b[0] {
            CargoStep::Major
        } else if a[1] != b[1] {
            CargoStep::Minor
        } else {
            CargoStep::Patch
        }
    } else if a[1] > 0 || b[1] > 0 {
        if a[1] != b[1] {
            CargoStep::Major
        } else {
            CargoStep::Minor
        }
    } else {
        CargoStep::Major
    })
}

/// The tool's verdict from its output (run with `--release-type patch`, so every lint above a
/// patch reports): its `Summary` line.
pub fn parse_verdict(output: &str) -> Option<ToolVerdict> {
    let summary = output
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("Summary "))?;
    let requires = if summary.contains("no semver update required") {
        CargoStep::Patch
    } else if summary.contains("requires new major version") {
        CargoStep::Major
    } else if summary.contains("requires new minor version") {
        CargoStep::Minor
    } else {
        return None;
    };
    Some(ToolVerdict {
        requires,
        summary: summary.trim_start_matches("Summary ").to_string(),
    })
}

/// One change of the report's JSON shape (`codegen/CHANGE-REPORT.md`), as far as the rules read it.
struct Change<'a> {
    kind: &'a str,
    summary: &'a str,
    wire: &'a str,
    source: &'a str,
}

impl Change<'_> {
    fn breaks(&self) -> bool {
        self.wire != "yes" || self.source == "no"
    }
}

/// One line per change, for messages.
fn listed<'a>(changes: impl Iterator<Item = &'a Change<'a>>) -> String {
    changes
        .map(|c| format!("{} (`{}`)", c.summary, c.kind))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the report (its published JSON shape, as `drift --json-out` writes it) and the tool
/// agree (the rules of the module documentation); `Ok` says how, `Err` names both verdicts and
/// the changes behind the report's.
pub fn agree(report: &Value, tool: &ToolVerdict) -> anyhow::Result<String> {
    let text = |pointer: &str| report.pointer(pointer).and_then(Value::as_str);
    let (Some(current), Some(suggested), Some(bump)) = (
        text("/semver/current"),
        text("/semver/suggested"),
        text("/semver/bump"),
    ) else {
        bail!("the change report has no semver section to check");
    };
    let changes: Vec<Change<'_>> = report
        .get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| Change {
            kind: c.get("kind").and_then(Value::as_str).unwrap_or_default(),
            summary: c.get("summary").and_then(Value::as_str).unwrap_or_default(),
            wire: c.get("wire").and_then(Value::as_str).unwrap_or_default(),
            source: c.get("source").and_then(Value::as_str).unwrap_or_default(),
        })
        .collect();
    let step = cargo_step(current, suggested)?;
    let both = format!(
        "the change report suggests {current} -> {suggested} (bump: {bump}), \
         cargo-semver-checks {TOOL_VERSION}: {}",
        tool.summary
    );
    ensure!(
        tool.requires <= step,
        "disagreement: {both}; the suggested version does not satisfy the tool, so the report \
         understates the release (a change it classifies as compatible breaks or deprecates \
         Rust API: see the tool's lints above)"
    );
    let rust_breaks: Vec<&Change<'_>> = changes.iter().filter(|c| c.source == "no").collect();
    let tool_breaks = tool.requires == CargoStep::Major;
    if !rust_breaks.is_empty() && !tool_breaks {
        bail!(
            "disagreement: {both}; the report says Rust code stops compiling ({}) but the tool \
             finds no breaking change",
            listed(rust_breaks.into_iter())
        );
    }
    if rust_breaks.is_empty() && tool_breaks {
        bail!(
            "disagreement: {both}; the tool finds a breaking change the report does not (no \
             change has source verdict `no`)"
        );
    }
    if step == CargoStep::Major && !tool_breaks {
        // Wire-only breaks first; else the changes that are neither additions nor breaks of
        // either kind (behaviour changes).
        let wire_only: Vec<&Change<'_>> = changes
            .iter()
            .filter(|c| c.source == "yes" && c.breaks())
            .collect();
        let raised = if wire_only.is_empty() {
            listed(changes.iter().filter(|c| {
                c.source == "yes"
                    && c.wire == "yes"
                    && !c.kind.ends_with("_added")
                    && !c.kind.ends_with("_deprecated")
            }))
        } else {
            listed(wire_only.into_iter())
        };
        ensure!(
            !raised.is_empty(),
            "disagreement: {both}; the report calls for a breaking release but names no change \
             that breaks"
        );
        return Ok(format!(
            "agreement: {both}; the report is stricter for what the tool cannot see: {raised}"
        ));
    }
    Ok(format!("agreement: {both}"))
}

/// Runs the tool on the client crate of the workspace at `current` against the one at
/// `baseline` (the workspace before the release), with the crate's default features, every lint
/// above a patch reported; its output is echoed.
pub fn run_tool(
    current: &Path,
    baseline: &Path,
    envs: &[(&str, &Path)],
) -> anyhow::Result<ToolVerdict> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let version = Command::new(&cargo)
        .args(["semver-checks", "--version"])
        .output();
    let installed = version
        .as_ref()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match installed {
        Some(found) if found.ends_with(TOOL_VERSION) => {}
        Some(found) => bail!(
            "{found} is installed; the rehearsal checks with cargo-semver-checks {TOOL_VERSION}: \
             `{INSTALL}`"
        ),
        None => bail!(
            "cargo-semver-checks is not installed; the rehearsal checks the report's version \
             with it: `{INSTALL}` (.ci/run installs it)"
        ),
    }
    let mut command = Command::new(&cargo);
    command
        .current_dir(current)
        .args([
            "semver-checks",
            "check-release",
            "--package",
            "creditdata-client",
            "--default-features",
            "--release-type",
            "patch",
            "--color",
            "never",
            "--baseline-root",
        ])
        .arg(baseline);
    for (name, value) in envs {
        command.env(name, value);
    }
    let output = command.output().context("cannot run cargo semver-checks")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    print!("{text}");
    parse_verdict(&text).with_context(|| {
        format!(
            "cargo semver-checks gave no verdict ({}); its output is above",
            output.status
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use creditdata_codegen::diff::{self, Side};
    use serde_json::json;

    #[test]
    fn steps_are_read_as_cargo_reads_versions() {
        assert_eq!(cargo_step("0.1.0", "0.1.1").unwrap(), CargoStep::Minor);
        assert_eq!(cargo_step("0.1.0", "0.2.0").unwrap(), CargoStep::Major);
        assert_eq!(cargo_step("0.0.1", "0.0.2").unwrap(), CargoStep::Major);
        assert_eq!(cargo_step("1.2.3", "1.2.4").unwrap(), CargoStep::Patch);
        assert_eq!(cargo_step("1.2.3", "1.3.0").unwrap(), CargoStep::Minor);
        assert_eq!(cargo_step("1.2.3", "2.0.0").unwrap(), CargoStep::Major);
        assert_eq!(cargo_step("0.1.0", "0.1.0").unwrap(), CargoStep::Patch);
    }

    /// The summaries cargo-semver-checks 0.51 prints (seen on crates made for the purpose).
    #[test]
    fn the_tools_summary_is_its_verdict() {
        let verdict = |text: &str| parse_verdict(text).map(|v| v.requires);
        assert_eq!(
            verdict(
                "     Checked [   0.786s] 229 checks: 229 pass, 31 skip\n     Summary no semver update required\n"
            ),
            Some(CargoStep::Patch)
        );
        assert_eq!(
            verdict(
                "     Summary semver requires new minor version: 0 major and 1 minor checks failed"
            ),
            Some(CargoStep::Minor)
        );
        assert_eq!(
            verdict(
                "     Summary semver requires new major version: 1 major and 0 minor checks failed"
            ),
            Some(CargoStep::Major)
        );
        assert_eq!(verdict("error: could not build"), None);
    }

    /// The JSON report between two small documents, versioned from `current`.
    fn report(before: &Value, after: &Value, current: &str) -> Value {
        let report = diff::compare(&Side::effective(before), &Side::effective(after))
            .with_version(current)
            .unwrap();
        serde_json::from_str(&report.to_json()).unwrap()
    }

    fn document(extra_op: bool, members: &[&str], path: &str) -> Value {
        let mut properties = serde_json::Map::new();
        for m in members {
            properties.insert(
                (*m).to_string(),
                json!({"type": "string", "nullable": true}),
            );
        }
        let mut paths = json!({
            path: {"get": {"operationId": "GetThing", "responses": {"200": {"description": "OK",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}}
        });
        if extra_op {
            paths["/v1/other"] = json!({"get": {"operationId": "GetOther", "responses": {"204": {"description": "none"}}}});
        }
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1.0"}, "paths": paths,
            "components": {"schemas": {"Thing": {"type": "object", "properties": properties}}}})
    }

    fn tool(requires: CargoStep) -> ToolVerdict {
        ToolVerdict {
            requires,
            summary: format!("{requires:?}"),
        }
    }

    #[test]
    fn an_additive_release_both_call_compatible_agrees() {
        let report = report(
            &document(false, &["a"], "/v1/thing"),
            &document(true, &["a", "b"], "/v1/thing"),
            "0.1.0",
        );
        assert_eq!(report["semver"]["suggested"], "0.1.1");
        let ok = agree(&report, &tool(CargoStep::Patch)).unwrap();
        assert!(ok.starts_with("agreement"), "{ok}");
        // A deprecation needs a cargo-minor step; 0.1.1 is one.
        agree(&report, &tool(CargoStep::Minor)).unwrap();
    }

    #[test]
    fn a_breaking_release_the_tool_also_calls_breaking_agrees() {
        let report = report(
            &document(true, &["a", "b"], "/v1/thing"),
            &document(false, &["a"], "/v1/thing"),
            "0.1.0",
        );
        assert_eq!(report["semver"]["suggested"], "0.2.0");
        agree(&report, &tool(CargoStep::Major)).unwrap();
    }

    #[test]
    fn a_report_weaker_than_the_tool_or_breaking_alone_disagrees_naming_both() {
        let additive = report(
            &document(false, &["a"], "/v1/thing"),
            &document(true, &["a", "b"], "/v1/thing"),
            "0.1.0",
        );
        let e = agree(&additive, &tool(CargoStep::Major))
            .unwrap_err()
            .to_string();
        assert!(e.contains("0.1.0 -> 0.1.1") && e.contains("Major"), "{e}");
        let breaking = report(
            &document(true, &["a", "b"], "/v1/thing"),
            &document(false, &["a"], "/v1/thing"),
            "0.1.0",
        );
        let e = agree(&breaking, &tool(CargoStep::Patch))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("0.1.0 -> 0.2.0") && e.contains("finds no breaking"),
            "{e}"
        );
    }

    /// A document whose one operation takes a JSON body, required or not.
    fn with_body(required: bool) -> Value {
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1.0"}, "paths": {
            "/v1/things": {"post": {"operationId": "MakeThing",
                "requestBody": {"required": required, "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"a": {"type": "string"}}}}}},
                "responses": {"204": {"description": "made"}}}}
        }})
    }

    #[test]
    fn a_report_stricter_for_what_the_tool_cannot_see_agrees_and_says_why() {
        // The body becomes required: deployed clients that send none are refused, the Rust API
        // does not change.
        let report = report(&with_body(false), &with_body(true), "0.1.0");
        assert_eq!(report["semver"]["suggested"], "0.2.0", "{report}");
        let ok = agree(&report, &tool(CargoStep::Patch)).unwrap();
        assert!(ok.contains("cannot see"), "{ok}");
    }
}
