//! The whole chain, from the vendored description to every checked-in output.
//!
//! [`run`] is pure: it reads its inputs and returns the outputs in memory. `cargo xtask regen`
//! writes them ([`write()`]); `cargo xtask check` compares them with the files on disk ([`drift`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::datasets::{self, DatasetsError};
use crate::document::{self, DocumentError, Format};
use crate::downconvert::{self, DownconvertError};
use crate::generate::{self, GenerateError, Generated};
use crate::open_enums::{self, OpenEnumError, OpenEnumPlan};
use crate::operation_names::{self, DerivedName};
use crate::overlay::{self, ApplyOptions, OverlayErrors};
use crate::preflight;

/// Where the pipeline reads from.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The published description (OpenAPI 3.0 or 3.1, JSON or YAML).
    pub spec: PathBuf,
    /// The directory of overlays, applied in file-name order.
    pub overlays: PathBuf,
    /// Downgrade overlay actions that select nothing to warnings.
    pub lenient: bool,
    /// Paths in the generated header are shown relative to this directory.
    pub display_root: PathBuf,
}

/// Where the outputs go, relative to an output root.
#[derive(Debug, Clone)]
pub struct Layout {
    pub effective: PathBuf,
    pub generated: PathBuf,
    pub surface: PathBuf,
    /// The session's datasets, named ([`crate::datasets`]).
    pub datasets: PathBuf,
    /// The session's datasets, read ([`crate::datasets`]).
    pub session_datasets: PathBuf,
    /// The security schemes' issuers ([`crate::issuers`]).
    pub issuers: PathBuf,
    /// The request limits the client checks before sending ([`crate::request_limits`]).
    pub limits: PathBuf,
}

impl Layout {
    /// The checked-in layout of this workspace.
    pub fn workspace() -> Layout {
        Layout {
            effective: "spec/openapi.effective.json".into(),
            generated: "generated-client/src/generated.rs".into(),
            surface: "generated-client/SURFACE.md".into(),
            datasets: "generated-client/src/generated_datasets.rs".into(),
            session_datasets: "generated-client/src/generated_session_datasets.rs".into(),
            issuers: "generated-client/src/generated_issuers.rs".into(),
            limits: "generated-client/src/generated_limits.rs".into(),
        }
    }

    /// A flat layout for `--out DIR`.
    pub fn flat() -> Layout {
        Layout {
            effective: "openapi.effective.json".into(),
            generated: "generated.rs".into(),
            surface: "SURFACE.md".into(),
            datasets: "generated_datasets.rs".into(),
            session_datasets: "generated_session_datasets.rs".into(),
            issuers: "generated_issuers.rs".into(),
            limits: "generated_limits.rs".into(),
        }
    }
}

/// Everything the pipeline produced.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// The document progenitor saw (OpenAPI 3.0.3).
    pub effective: Value,
    pub plan: OpenEnumPlan,
    pub generated: Generated,
    /// `generated_datasets.rs` (the `Dataset` list), header included.
    pub datasets: String,
    /// `generated_session_datasets.rs` (`SessionDatasets`, the reads), header included.
    pub session_datasets: String,
    /// `generated_issuers.rs`, header included.
    pub issuers: String,
    /// `generated_limits.rs`, header included.
    pub limits: String,
    /// What the stages noticed but did not refuse (lenient overlay misses, down-convert drops).
    pub warnings: Vec<String>,
    /// Number of overlay files applied.
    pub overlay_files: usize,
    /// The operations that had no operationId and were named by the pipeline, in document
    /// order (none once `regen` has pinned them).
    pub derived: Vec<DerivedName>,
}

impl Outputs {
    /// The files to write, as (path relative to the output root, contents).
    pub fn files(&self, layout: &Layout) -> Vec<(PathBuf, String)> {
        vec![
            (
                layout.effective.clone(),
                document::to_string(&self.effective, Format::Json),
            ),
            (layout.generated.clone(), self.generated.code.clone()),
            (
                layout.surface.clone(),
                surface_markdown(&self.generated.surface),
            ),
            (layout.datasets.clone(), self.datasets.clone()),
            (
                layout.session_datasets.clone(),
                self.session_datasets.clone(),
            ),
            (layout.issuers.clone(), self.issuers.clone()),
            (layout.limits.clone(), self.limits.clone()),
        ]
    }
}

/// A stage refused its input. Each variant carries the full report of that stage.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("cannot list the overlays in {}", dir.display())]
    OverlayDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("overlays failed:\n{0}")]
    Overlay(OverlayErrors),
    #[error("down-convert to OpenAPI 3.0 failed")]
    Downconvert(#[from] DownconvertError),
    #[error(transparent)]
    OpenEnums(#[from] OpenEnumError),
    #[error(
        "preflight found {} problem(s) that would make progenitor fail; each names the node and the overlay action that fixes it:\n\n{report}",
        report.findings.len()
    )]
    Preflight { report: preflight::Report },
    #[error("generation failed")]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Datasets(#[from] DatasetsError),
    #[error(transparent)]
    Document(#[from] DocumentError),
}

/// The overlay files of `dir` (`*.yaml`, `*.yml`, `*.json`), in file-name order.
pub fn overlay_files(dir: &Path) -> Result<Vec<PathBuf>, PipelineError> {
    let err = |source| PipelineError::OverlayDir {
        dir: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let path = entry.map_err(err)?.path();
        if path.is_file() && Format::from_extension(&path).is_some() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Runs every stage on `inputs`.
pub fn run(inputs: &Inputs) -> Result<Outputs, PipelineError> {
    let overlays = overlay_files(&inputs.overlays)?;
    let options = ApplyOptions {
        lenient: inputs.lenient,
    };
    let applied =
        overlay::apply_files(&inputs.spec, &overlays, &options).map_err(PipelineError::Overlay)?;
    let mut warnings: Vec<String> = applied
        .report
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();

    let mut overlaid = applied.document;
    let derived = operation_names::name_operations(&mut overlaid);

    let converted = downconvert::downconvert(&overlaid)?;
    warnings.extend(
        converted
            .warnings
            .iter()
            .map(|w| format!("down-convert: {w}")),
    );
    let mut effective = converted.document;

    warnings.extend(
        crate::unions::prepare(&mut effective)
            .into_iter()
            .map(|w| format!("unions: {w}")),
    );
    let plan = open_enums::prepare(&mut effective)?;
    warnings.extend(crate::links::derive(&mut effective));

    let report = preflight::preflight_static(&effective);
    if !report.is_clean() {
        return Err(PipelineError::Preflight { report });
    }

    let header = header(inputs, &overlays, &effective)?;
    let generated = match generate::generate(&effective, &plan, &header) {
        Ok(generated) => generated,
        // A failure the static checks did not foresee: narrow it down to a node and its fix.
        Err(error @ (GenerateError::Panicked(_) | GenerateError::Progenitor(_))) => {
            let report = preflight::locate_generator_failure(&effective);
            return Err(if report.is_clean() {
                PipelineError::Generate(error)
            } else {
                PipelineError::Preflight { report }
            });
        }
        Err(error) => return Err(error.into()),
    };
    warnings.extend(generated.warnings.iter().map(|w| format!("generate: {w}")));
    let datasets::DatasetFiles {
        list: datasets,
        reads: session_datasets,
    } = datasets::generate(&effective, &generated.success_types, &header)?;
    let issuers = crate::issuers::generate(&effective, &header);
    let limits = crate::request_limits::generate(&effective, &header);
    Ok(Outputs {
        effective,
        plan,
        generated,
        datasets,
        session_datasets,
        issuers,
        limits,
        warnings,
        overlay_files: overlays.len(),
        derived,
    })
}

/// How every generated Rust file begins (its header's first words): `cargo xtask ci`'s `layers`
/// step knows a generated file by it (no line limit for those).
pub const GENERATED_MARK: &str = "// @generated by creditdata-codegen";

/// The do-not-edit header: what generated the file, from which inputs (with their digests).
fn header(
    inputs: &Inputs,
    overlays: &[PathBuf],
    effective: &Value,
) -> Result<String, PipelineError> {
    let shown = |p: &Path| {
        p.strip_prefix(&inputs.display_root)
            .unwrap_or(p)
            .display()
            .to_string()
            .replace('\\', "/")
    };
    let digest_of = |p: &Path| -> Result<String, PipelineError> {
        let bytes = std::fs::read(p).map_err(|source| DocumentError::Read {
            path: p.to_path_buf(),
            source,
        })?;
        Ok(sha256_hex(&bytes))
    };
    let mut h = String::new();
    h.push_str(GENERATED_MARK);
    h.push_str(" (`cargo xtask regen`). DO NOT EDIT.\n");
    h.push_str("// Change the description, an overlay or the generator, then run `cargo xtask regen`.\n//\n");
    h.push_str("// Inputs (sha256):\n");
    let _ = writeln!(
        h,
        "//   {}  {}",
        digest_of(&inputs.spec)?,
        shown(&inputs.spec)
    );
    for overlay in overlays {
        let _ = writeln!(h, "//   {}  {}", digest_of(overlay)?, shown(overlay));
    }
    let effective_text = document::to_string(effective, Format::Json);
    let _ = writeln!(
        h,
        "// Effective document: {} (sha256 of its JSON form)",
        sha256_hex(effective_text.as_bytes())
    );
    let _ = writeln!(
        h,
        "// Generator: progenitor {}, creditdata-codegen {}",
        PROGENITOR_VERSION,
        env!("CARGO_PKG_VERSION")
    );
    Ok(h)
}

/// The progenitor release this generator is built against, as the generated header names it.
/// `codegen/tests/it/generator_version.rs` fails unless Cargo.lock resolves exactly this
/// version and the workspace manifest pins it with `=`.
pub const PROGENITOR_VERSION: &str = "0.15.1";

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .fold(String::with_capacity(64), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn surface_markdown(surface: &str) -> String {
    let mut out = String::from(
        "<!-- @generated by creditdata-codegen (`cargo xtask regen`). DO NOT EDIT. -->\n\
         # Generated surface\n\n\
         One line per operation: HTTP method and path → `Client` method(parameters) -> success \
         type, error type.\n\n```text\n",
    );
    out.push_str(surface);
    out.push_str("```\n");
    out
}

/// Writes `outputs` under `root` (each file atomically). Returns the paths written.
pub fn write(
    outputs: &Outputs,
    root: &Path,
    layout: &Layout,
) -> Result<Vec<PathBuf>, PipelineError> {
    let mut written = Vec::new();
    for (relative, contents) in outputs.files(layout) {
        let path = root.join(relative);
        document::write_atomic(&path, contents.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}

/// One output whose file on disk differs from what the pipeline produces.
#[derive(Debug, Clone)]
pub struct Drift {
    pub path: PathBuf,
    /// A unified diff from the file on disk to the expected contents (empty file if missing).
    pub diff: String,
}

/// Compares `outputs` with the files under `root`.
pub fn drift(outputs: &Outputs, root: &Path, layout: &Layout) -> Vec<Drift> {
    outputs
        .files(layout)
        .into_iter()
        .filter_map(|(relative, expected)| drift_of(root, &relative, &expected))
        .collect()
}

/// The difference between the file `relative` under `root` and `expected`, if any.
pub fn drift_of(root: &Path, relative: &Path, expected: &str) -> Option<Drift> {
    let path = root.join(relative);
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    if actual == expected {
        return None;
    }
    let shown = relative.display().to_string();
    let diff = similar::TextDiff::from_lines(&actual, expected)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{shown} (checked in)"),
            &format!("b/{shown} (regenerated)"),
        )
        .to_string();
    Some(Drift { path, diff })
}
