//! What existing code was written against, on the frozen description: the behaviour pins
//! (`api-version` per operation, the default readiness gate) are written for what is not pinned,
//! not moved by a release, moved by `--adopt-behaviour`; readiness is found by the whole shape of
//! a provider's entry; and the change report says which behaviour a release changes, with its
//! semver. The release is `tests/data/release-day/1.1-behaviour.overlay.yaml` (a version bump, a
//! dataset with providers, a listing whose entries have a `status` of their own).

use std::path::{Path, PathBuf};

use creditdata_codegen::behaviour::{API_VERSION_MARK, DEFAULT_GATE_MARK};
use creditdata_codegen::datasets::session_datasets;
use creditdata_codegen::diff::{self, ChangeReport, keep_behaviour};
use creditdata_codegen::document;
use creditdata_codegen::overlay::{self, ApplyOptions};
use creditdata_codegen::pipeline;
use serde_json::Value;

use crate::frozen::{self, Run};

fn release() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/release-day/1.1-behaviour.overlay.yaml")
}

/// The frozen description with the release applied.
fn released() -> Value {
    overlay::apply_files(
        &frozen::spec(),
        &[release()],
        &ApplyOptions { lenient: false },
    )
    .unwrap_or_else(|e| panic!("the release applies to the frozen description:\n{e}"))
    .document
}

impl Run {
    /// The generated code without its header (which names the overlays read).
    fn code(&self) -> &str {
        let code = &self.outputs.generated.code;
        &code[code.find("#![allow(").unwrap_or(0)..]
    }

    /// Both files of the datasets, without their headers (which name the inputs).
    fn datasets_code(&self) -> String {
        let code = &self.outputs.datasets;
        let reads = &self.outputs.session_datasets;
        format!(
            "{}{}",
            &code[code.find("//! Every JSON dataset").unwrap_or(0)..],
            &reads[reads.find("//! The [`SessionDatasets`]").unwrap_or(0)..]
        )
    }
}

fn run(published: &Value, overlays: &Path) -> Run {
    frozen::run_with(published, overlays, true)
}

/// The frozen overlays, with `pins` as the behaviour pin file (none: without one).
fn overlays_with(pins: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in pipeline::overlay_files(&frozen::overlays()).unwrap() {
        std::fs::copy(&file, dir.path().join(file.file_name().unwrap())).unwrap();
    }
    if let Some(pins) = pins {
        std::fs::write(dir.path().join(keep_behaviour::KEEP_BEHAVIOUR_FILE), pins).unwrap();
    }
    dir
}

/// The pin file `regen` writes for `run`, extending `existing`.
fn pins_for(run: &Run, existing: Option<&str>) -> String {
    let actions = keep_behaviour::missing_pin_actions(&run.outputs.effective).unwrap();
    keep_behaviour::extended_file(
        existing,
        &actions,
        Path::new(keep_behaviour::KEEP_BEHAVIOUR_FILE),
    )
    .unwrap()
}

fn frozen_published() -> Value {
    document::load(&frozen::spec()).unwrap()
}

fn report(old: &Run, new: &Run) -> ChangeReport {
    diff::compare(&old.side(), &new.side())
        .with_version("0.1.0")
        .unwrap()
}

fn kinds(report: &ChangeReport) -> Vec<&'static str> {
    report.changes.iter().map(|c| c.kind.name()).collect()
}

/// The `match` arm of `Dataset::<function>` for `variant` in the generated dataset code.
fn arm<'a>(code: &'a str, function: &str, variant: &str) -> &'a str {
    let body = &code[code
        .find(&format!("pub fn {function}(self)"))
        .unwrap_or_else(|| panic!("no Dataset::{function}"))..];
    let at = body
        .find(&format!("Dataset::{variant} =>"))
        .unwrap_or_else(|| panic!("no arm for {variant} in {function}"));
    let arm = &body[at..];
    arm[..arm.find(',').unwrap()].trim()
}

#[test]
fn pins_are_written_for_what_is_not_pinned_and_change_no_generated_code() {
    let bare = overlays_with(None);
    let unpinned = run(&frozen_published(), bare.path());
    let pins = pins_for(&unpinned, None);
    let pinned_dir = overlays_with(Some(&pins));
    let pinned = run(&frozen_published(), pinned_dir.path());

    // Every operation pinned to the description's version; every dataset read by default (all
    // but the deprecated ones) in the default gate.
    let effective = &pinned.outputs.effective;
    let version = effective["info"]["version"].as_str().unwrap();
    for op in document::operations(effective) {
        assert_eq!(
            op.operation[API_VERSION_MARK].as_str(),
            Some(version),
            "{} {}",
            op.method,
            op.path
        );
    }
    let datasets = session_datasets(effective).unwrap();
    assert!(!datasets.is_empty());
    for dataset in &datasets {
        let op = &effective["paths"][&dataset.path]["get"];
        assert_eq!(
            op[DEFAULT_GATE_MARK], !dataset.deprecated,
            "{}",
            dataset.name
        );
    }
    assert!(
        effective["info"]["x-creditdata-assumption"]
            .as_str()
            .is_some_and(|text| text.contains("ASP.NET")),
        "the assumption is written into the description"
    );
    // Nothing left to pin, and the pins are what the pipeline did without them.
    assert!(
        keep_behaviour::missing_pin_actions(effective)
            .unwrap()
            .is_empty()
    );
    assert_eq!(pinned.code(), unpinned.code());
    assert_eq!(pinned.datasets_code(), unpinned.datasets_code());
    let report = report(&unpinned, &pinned);
    assert!(report.is_empty(), "{}", report.to_text());
}

#[test]
fn a_release_adds_pins_and_changes_nothing_existing_code_does() {
    let bare = overlays_with(None);
    let before_pins = run(&frozen_published(), bare.path());
    let pins = pins_for(&before_pins, None);
    let pinned_dir = overlays_with(Some(&pins));
    let before = run(&frozen_published(), pinned_dir.path());
    let after = run(&released(), pinned_dir.path());

    // Existing operations keep 1.0; the release's three send 1.1; no request sends anything else.
    let code = after.code();
    assert_eq!(after.outputs.effective["info"]["version"], "1.1");
    let sending = |version: &str| {
        code.matches(&format!(r#"HeaderValue::from_static("{version}")"#))
            .count()
    };
    let operations = document::operations(&after.outputs.effective).count();
    assert_eq!(sending("1.1"), 3, "the release's own operations");
    assert_eq!(sending("1.0"), operations - 3, "every existing operation");
    let datasets = &after.datasets_code();
    assert_eq!(
        arm(datasets, "api_version", "Scores"),
        r#"Dataset::Scores => "1.0""#
    );
    assert_eq!(
        arm(datasets, "api_version", "TaxReturns"),
        r#"Dataset::TaxReturns => "1.1""#
    );
    // The release's datasets are read, not gated; the others stay gated.
    assert_eq!(
        arm(datasets, "gated_by_default", "TaxReturns"),
        "Dataset::TaxReturns => false"
    );
    assert_eq!(
        arm(datasets, "gated_by_default", "PensionEntitlements"),
        "Dataset::PensionEntitlements => false"
    );
    assert_eq!(
        arm(datasets, "gated_by_default", "Scores"),
        "Dataset::Scores => true"
    );

    // The report: additions and an informational version label, no behaviour change.
    let report = report(&before, &after);
    assert!(!report.is_breaking(), "{}", report.to_text());
    assert_eq!(report.summary.changes_behaviour, 0, "{}", report.to_text());
    assert!(kinds(&report).contains(&"document_version_changed"));
    assert!(kinds(&report).contains(&"operation_added"));
    for kind in [
        "request_header_value_changed",
        "readiness_gate_widened",
        "readiness_gate_narrowed",
    ] {
        assert!(!kinds(&report).contains(&kind), "{}", report.to_text());
    }
    let semver = report.semver.as_ref().unwrap();
    assert_eq!(semver.suggested, "0.1.1", "{}", semver.rule);

    // regen then pins what the release added, and moves nothing.
    let more = keep_behaviour::missing_pin_actions(&after.outputs.effective).unwrap();
    let targets: Vec<&str> = more
        .iter()
        .map(|action| action["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "$.paths['/v1/sessions/{sessionId}/tax-returns'].get",
            "$.paths['/v1/sessions/{sessionId}/tax-returns/{taxReturnId}/document'].get",
            "$.paths['/v1/sessions/{sessionId}/pension-entitlements'].get",
        ]
    );
    for action in &more {
        assert_eq!(action["update"][API_VERSION_MARK], "1.1");
        if let Some(gate) = action["update"].get(DEFAULT_GATE_MARK) {
            assert_eq!(gate, false, "{action}");
        }
    }
    let extended = pins_for(&after, Some(&pins));
    assert!(extended.starts_with(&pins), "earlier pins stay as written");
    let repinned_dir = overlays_with(Some(&extended));
    let repinned = run(&released(), repinned_dir.path());
    assert_eq!(
        repinned.code(),
        after.code(),
        "writing the pins changes no code"
    );
    assert_eq!(repinned.datasets_code(), after.datasets_code());
}

#[test]
fn adopting_moves_every_pin_and_the_report_says_it_is_breaking() {
    let bare = overlays_with(None);
    let before_pins = run(&frozen_published(), bare.path());
    let pins = pins_for(&before_pins, None);
    let pinned_dir = overlays_with(Some(&pins));
    let before = run(&frozen_published(), pinned_dir.path());
    // --adopt-behaviour: the pins made from the released description without any.
    let unpinned_release = run(&released(), bare.path());
    let adopted_dir = overlays_with(Some(&pins_for(&unpinned_release, None)));
    let adopted = run(&released(), adopted_dir.path());

    let datasets = &adopted.datasets_code();
    assert_eq!(
        arm(datasets, "api_version", "Scores"),
        r#"Dataset::Scores => "1.1""#
    );
    assert_eq!(
        arm(datasets, "gated_by_default", "TaxReturns"),
        "Dataset::TaxReturns => true"
    );

    let report = report(&before, &adopted);
    let header = report
        .changes
        .iter()
        .find(|c| c.kind.name() == "request_header_value_changed")
        .unwrap_or_else(|| panic!("{}", report.to_text()));
    assert_eq!(
        (header.from.as_deref(), header.to.as_deref()),
        (Some("1.0"), Some("1.1"))
    );
    assert!(header.summary.contains("api-version"), "{}", header.summary);
    let before_ops = document::operations(&before.outputs.effective).count();
    assert_eq!(
        header.operations.len(),
        before_ops,
        "every existing operation moved"
    );
    assert!(header.operations.iter().any(|op| op == "GetScores"));
    let widened: Vec<&str> = report
        .changes
        .iter()
        .filter(|c| c.kind.name() == "readiness_gate_widened")
        .map(|c| c.operations[0].as_str())
        .collect();
    assert_eq!(widened, ["GetPensionEntitlements", "GetTaxReturns"]);
    assert!(report.is_breaking());
    assert_eq!(report.summary.behaviour, diff::Behaviour::Changed);
    assert_eq!(report.summary.changes_behaviour, 3, "{}", report.to_text());
    assert_eq!(report.exit_code(), 4);
    let semver = report.semver.as_ref().unwrap();
    assert_eq!(semver.suggested, "0.2.0", "{}", semver.rule);
    let text = report.to_text();
    assert!(
        text.contains("Changes what existing code does (behaviour: changed)"),
        "{text}"
    );
    assert!(text.contains("behaviour: changed"), "{text}");
    let markdown = report.to_markdown();
    assert!(markdown.contains("| Behaviour |"), "{markdown}");
}

#[test]
fn without_pins_the_report_names_every_behaviour_the_release_changes() {
    // What the old pipeline did: the header followed info.version, every dataset was gated.
    let bare = overlays_with(None);
    let before = run(&frozen_published(), bare.path());
    let after = run(&released(), bare.path());
    let report = report(&before, &after);
    assert!(report.is_breaking(), "{}", report.to_text());
    for kind in ["request_header_value_changed", "readiness_gate_widened"] {
        assert!(
            kinds(&report).contains(&kind),
            "{kind}: {}",
            report.to_text()
        );
    }
    assert_ne!(report.semver.unwrap().bump, diff::Bump::Patch);
}

#[test]
fn a_listing_with_its_own_status_reports_only_its_providers() {
    let bare = overlays_with(None);
    let after = run(&released(), bare.path());
    let datasets = session_datasets(&after.outputs.effective).unwrap();
    let tax = datasets.iter().find(|d| d.name == "tax-returns").unwrap();
    let lists: Vec<&str> = tax
        .reporting
        .providers
        .iter()
        .map(|list| list.property.as_str())
        .collect();
    assert_eq!(lists, ["sources"], "the tax returns' own `status` is data");
    assert!(
        tax.listing.is_some(),
        "a listing: its entries lead to their documents"
    );
    let pensions = datasets
        .iter()
        .find(|d| d.name == "pension-entitlements")
        .unwrap();
    assert_eq!(pensions.reporting.providers.len(), 1);
    // The generated reader and the streamed reader's member names agree.
    let code = &after.datasets_code();
    let properties = &code[code.find("pub fn readiness_properties(self)").unwrap()..];
    let from = properties.find("Dataset::TaxReturns =>").unwrap();
    let rest = &properties[from + 1..];
    let arm = &rest[..rest.find("Dataset::").unwrap_or(rest.len())];
    assert!(arm.contains(r#"list: "sources""#), "{arm}");
    assert!(!arm.contains("taxReturns"), "{arm}");
}
