//! Where the frozen copy of version 1.0 of the description and of the project's overlays lives
//! (`tests/data/frozen-1.0/`, see `tests/data/README.md`). Tests that need "a real description"
//! read it here, never `spec/` or `overlays/`, so a vendor release leaves them green.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use creditdata_codegen::diff::{Side, keep_behaviour};
use creditdata_codegen::document::{self, Format};
use creditdata_codegen::pipeline::{self, Inputs, Outputs};
use serde_json::Value;

/// `tests/data/frozen-1.0/spec/`: `openapi.json`, `openapi.yaml`, `source.toml`.
pub fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/frozen-1.0/spec")
}

/// The frozen published description (JSON form).
pub fn spec() -> PathBuf {
    spec_dir().join("openapi.json")
}

/// The frozen overlays, applied in file-name order.
pub fn overlays() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/frozen-1.0/overlays")
}

/// The frozen overlays and the behaviour pins `cargo xtask regen` writes for the frozen
/// description (`91-keep-behaviour.overlay.yaml`, which the frozen copy predates), in a
/// directory made once per test binary: a release compared on these is compared as the
/// workspace regenerates it, each operation keeping its `api-version` and the default readiness
/// gate its datasets.
pub fn overlays_with_behaviour_pins() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for file in pipeline::overlay_files(&overlays()).unwrap() {
            std::fs::copy(&file, dir.path().join(file.file_name().unwrap())).unwrap();
        }
        let unpinned = pipeline::run(&Inputs {
            spec: spec(),
            overlays: dir.path().to_path_buf(),
            lenient: false,
            display_root: Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        })
        .unwrap_or_else(|e| panic!("the frozen description generates:\n{e}"));
        let file = dir.path().join(keep_behaviour::KEEP_BEHAVIOUR_FILE);
        let actions = keep_behaviour::missing_pin_actions(&unpinned.effective).unwrap();
        let text = keep_behaviour::extended_file(None, &actions, &file).unwrap();
        std::fs::write(&file, text).unwrap();
        dir
    })
    .path()
}

/// A published description and what the pipeline made of it.
pub struct Run {
    pub published: Value,
    pub outputs: Outputs,
}

impl Run {
    /// One side of a change report.
    pub fn side(&self) -> Side<'_> {
        Side {
            effective: &self.outputs.effective,
            published: Some(&self.published),
            code: Some(&self.outputs.generated.code),
        }
    }
}

/// Runs the pipeline on `published` with the overlays of `overlays`.
pub fn run_with(published: &Value, overlays: &Path, lenient: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, document::to_string(published, Format::Json)).unwrap();
    let outputs = pipeline::run(&Inputs {
        spec,
        overlays: overlays.to_path_buf(),
        lenient,
        display_root: Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    })
    .unwrap_or_else(|e| panic!("the pipeline runs:\n{e}"));
    Run {
        published: published.clone(),
        outputs,
    }
}
