//! Real-world descriptions nobody on the project wrote (read in place from
//! `shared/fixtures/foreign-specs`, never copied; the tests skip when the folder is absent) go
//! through the whole pipeline without an internal error: each generates, or preflight reports
//! what would stop progenitor with a JSON pointer and a fix. A pass that cannot do its work
//! warns and generation goes on (issue 30 §4).

use std::path::{Path, PathBuf};

use creditdata_codegen::pipeline::{self, Inputs, PipelineError};

/// `shared/fixtures/foreign-specs` beside the workspace or one of its parents (a worktree lives
/// deeper than the main checkout); `None` where it is absent.
fn foreign_specs() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/fixtures/foreign-specs"))
        .find(|dir| dir.is_dir())
}

fn run(spec: &Path) -> Result<pipeline::Outputs, PipelineError> {
    let overlays = tempfile::tempdir().unwrap();
    pipeline::run(&Inputs {
        spec: spec.to_path_buf(),
        overlays: overlays.path().to_path_buf(),
        lenient: false,
        display_root: spec.parent().unwrap().to_path_buf(),
    })
}

#[test]
fn every_foreign_description_generates_or_is_reported_with_a_pointer() {
    let Some(dir) = foreign_specs() else {
        eprintln!("skipped: no shared/fixtures/foreign-specs beside the workspace");
        return;
    };
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml" | "yml")
            )
        })
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no description in {}", dir.display());
    let mut internal = Vec::new();
    for spec in &specs {
        let name = spec.file_name().unwrap().to_string_lossy().to_string();
        match run(spec) {
            Ok(_) => {}
            // Reported before progenitor runs, each finding with its JSON pointer and fix.
            Err(PipelineError::Preflight { report }) => {
                assert!(!report.findings.is_empty(), "{name}: an empty report");
            }
            Err(error @ PipelineError::Downconvert(_)) => {
                assert!(error.to_string().contains('/'), "{name}: {error}");
            }
            Err(error) => internal.push(format!(
                "{name}: {}",
                creditdata_codegen::error_chain(&error)
            )),
        }
    }
    assert!(
        internal.is_empty(),
        "internal errors of the pipeline:\n{}",
        internal.join("\n")
    );
}

#[test]
fn a_validating_type_nothing_uses_is_a_warning_not_an_internal_error() {
    let Some(dir) = foreign_specs() else {
        eprintln!("skipped: no shared/fixtures/foreign-specs beside the workspace");
        return;
    };
    // `TicketCodeImage` (`type: string, format: binary`) is the body of an `image/png` response
    // only: a newtype no member or parameter uses, which stopped the field-messages pass.
    let outputs = run(&dir.join("handwritten-redocly-museum.yaml"))
        .unwrap_or_else(|e| panic!("the museum generates: {e}"));
    assert!(
        outputs
            .warnings
            .iter()
            .any(|w| w.contains("types::TicketCodeImage") && w.contains("generator's message")),
        "{:#?}",
        outputs.warnings
    );
    assert!(
        outputs
            .generated
            .code
            .contains("pub struct TicketCodeImage(")
    );
}
