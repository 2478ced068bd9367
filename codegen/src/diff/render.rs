//! The report for people: plain text for a terminal, Markdown for a pull request or CHANGELOG.

use std::fmt::{self, Write as _};

use super::keep_names::KEEP_NAMES_FILE;
use super::model::{
    Behaviour, Bump, Change, ChangeReport, Group, Location, PinKind, PinStatus, Source, Wire,
};

fn wire(w: Wire) -> &'static str {
    match w {
        Wire::Yes => "yes",
        Wire::Degraded => "degraded",
        Wire::No => "no",
    }
}

fn source(s: Source) -> &'static str {
    match s {
        Source::Yes => "yes",
        Source::No => "no",
    }
}

fn behaviour(b: Behaviour) -> &'static str {
    match b {
        Behaviour::Same => "same",
        Behaviour::Changed => "changed",
    }
}

fn headline(report: &ChangeReport) -> String {
    let s = &report.summary;
    format!(
        "{} change{}: {} break deployed clients, {} degrade them, {} change what existing code does, {} break Rust code only, {} compatible",
        s.changes,
        if s.changes == 1 { "" } else { "s" },
        s.breaks_deployed_clients,
        s.degrades_deployed_clients,
        s.changes_behaviour,
        s.breaks_rust_code,
        s.compatible
    )
}

/// `wire: yes, source: yes`, with `, behaviour: changed` when it did.
fn impacts(c: &Change) -> String {
    let mut text = format!("wire: {}, source: {}", wire(c.wire), source(c.source));
    if c.behaviour == Behaviour::Changed {
        text.push_str(&format!(", behaviour: {}", behaviour(c.behaviour)));
    }
    text
}

/// Where a change is, in one line: pointers in the effective and the published documents.
fn location(change: &Change, report: &ChangeReport) -> String {
    let one = |l: &Location, available: bool| match (&l.published, available) {
        (Some(p), _) if *p == l.effective => {
            format!("{} (same in the published description)", l.effective)
        }
        (Some(p), _) => format!("{} (published: {p})", l.effective),
        (None, true) => format!(
            "{} (not in the published description: an overlay supplies it)",
            l.effective
        ),
        (None, false) => l.effective.clone(),
    };
    let available = report.published_available;
    match (&change.old, &change.new) {
        (Some(a), Some(b)) if a == b => format!("at {}", one(b, available.new)),
        (Some(a), Some(b)) => format!(
            "was at {}; now at {}",
            one(a, available.old),
            one(b, available.new)
        ),
        (None, Some(b)) => format!("at {}", one(b, available.new)),
        (Some(a), None) => format!("was at {}", one(a, available.old)),
        (None, None) => "in the generated code".to_string(),
    }
}

fn pin_status(status: PinStatus) -> &'static str {
    match status {
        PinStatus::Active => "active",
        PinStatus::Redundant => {
            "no longer needed: the vendor publishes the kept name again; delete the pin"
        }
        PinStatus::Outdated => "outdated: the vendor publishes yet another name; look at the pin",
        PinStatus::Unchecked => "not checked (no published description)",
    }
}

fn pin_line(pin: &super::model::Pin) -> String {
    let what = match pin.kind {
        PinKind::OperationId => format!(
            "operation {} keeps operationId {} (published: {})",
            pin.at, pin.kept, pin.published
        ),
        PinKind::DerivedOperationId if pin.published.is_empty() => format!(
            "operation {} is named {}, derived from method and path (the description gives no operationId)",
            pin.at, pin.kept
        ),
        PinKind::DerivedOperationId => format!(
            "operation {} keeps its derived name {} (the vendor now publishes {})",
            pin.at, pin.kept, pin.published
        ),
        PinKind::Schema => format!(
            "schema {} keeps its name (published: {})",
            pin.kept, pin.published
        ),
    };
    format!("{what} — {}", pin_status(pin.status))
}

impl fmt::Display for ChangeReport {
    /// The plain-text report.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl ChangeReport {
    /// The plain-text report, grouped by impact, worst first.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if self.is_empty() {
            out.push_str("No change to the API surface.\n");
        } else {
            let _ = writeln!(out, "{}.", headline(self));
        }
        if let Some(semver) = &self.semver {
            let _ = match semver.bump {
                Bump::None => writeln!(
                    out,
                    "creditdata-client stays at {}: no release needed.",
                    semver.current
                ),
                _ => writeln!(
                    out,
                    "Suggested creditdata-client version: {} → {} ({}).",
                    semver.current, semver.suggested, semver.rule
                ),
            };
        }
        for group in Group::ALL {
            let changes: Vec<&Change> =
                self.changes.iter().filter(|c| c.group() == group).collect();
            if changes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{} — {}", group.title(), changes.len());
            for c in changes {
                let _ = writeln!(out, "  [{}] {}", c.kind, c.summary);
                if let (Some(from), Some(to)) = (&c.from, &c.to) {
                    let _ = writeln!(out, "      {from} → {to}");
                }
                let _ = writeln!(out, "      {}: {}", impacts(c), c.reason);
                if !c.operations.is_empty() {
                    let _ = writeln!(out, "      operations: {}", c.operations.join(", "));
                }
                let _ = writeln!(out, "      {}", location(c, self));
                if !c.rust.is_empty() {
                    let _ = writeln!(out, "      rust: {}", c.rust.join(", "));
                }
            }
        }
        let renames: Vec<&Change> = self.renames().collect();
        if !renames.is_empty() {
            let _ = writeln!(
                out,
                "\n{} rename(s) change public Rust names; `cargo xtask regen --keep-names` pins the old ones in overlays/{KEEP_NAMES_FILE}.",
                renames.len()
            );
        }
        if self.pins.is_empty() {
            let _ = writeln!(out, "\nPinned names (overlays/{KEEP_NAMES_FILE}): none.");
        } else {
            let _ = writeln!(out, "\nPinned names (overlays/{KEEP_NAMES_FILE}):");
            for pin in &self.pins {
                let _ = writeln!(out, "  {}", pin_line(pin));
            }
        }
        let _ = writeln!(out, "{}", rust_check_line(self));
        out
    }

    /// The Markdown report, for a pull-request body or a CHANGELOG entry.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("## creditdata-client: API changes\n\n");
        if self.is_empty() {
            out.push_str("No change to the API surface.\n");
        } else {
            let _ = writeln!(out, "**{}.**", headline(self));
        }
        if let Some(semver) = &self.semver {
            let _ = match semver.bump {
                Bump::None => writeln!(
                    out,
                    "\ncreditdata-client stays at `{}`: no release needed.",
                    semver.current
                ),
                _ => writeln!(
                    out,
                    "\nSuggested version: `{}` → `{}` ({}).",
                    semver.current, semver.suggested, semver.rule
                ),
            };
        }
        for group in Group::ALL {
            let changes: Vec<&Change> =
                self.changes.iter().filter(|c| c.group() == group).collect();
            if changes.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n### {}\n", group.title());
            out.push_str(
                "| Change | Kind | Wire | Source | Behaviour | Operations | Where | Why |\n",
            );
            out.push_str("|---|---|---|---|---|---|---|---|\n");
            for c in changes {
                let mut what = cell(&c.summary);
                if let (Some(from), Some(to)) = (&c.from, &c.to) {
                    let _ = write!(what, ": `{}` → `{}`", cell(from), cell(to));
                }
                let _ = writeln!(
                    out,
                    "| {what} | `{}` | {} | {} | {} | {} | {} | {} |",
                    c.kind,
                    wire(c.wire),
                    source(c.source),
                    behaviour(c.behaviour),
                    cell(&c.operations.join(", ")),
                    cell(&location(c, self)),
                    cell(&c.reason)
                );
            }
        }
        if !self.pins.is_empty() {
            let _ = writeln!(out, "\n### Pinned names (`overlays/{KEEP_NAMES_FILE}`)\n");
            for pin in &self.pins {
                let _ = writeln!(out, "- {}", cell(&pin_line(pin)));
            }
        }
        let _ = writeln!(out, "\n{}", rust_check_line(self));
        out
    }
}

fn rust_check_line(report: &ChangeReport) -> String {
    if !report.rust_api.checked {
        return "Generated Rust API: not compared (the generated code of one side was not available); source impact follows the generator's rules.".into();
    }
    match report.rust_api.incompatible.len() {
        0 => "Generated Rust API: compared; no incompatible difference.".into(),
        n => format!(
            "Generated Rust API: compared; {n} incompatible difference(s), each accounted for above."
        ),
    }
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
