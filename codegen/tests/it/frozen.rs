//! Where the frozen copy of version 1.0 of the description and of the project's overlays lives
//! (`tests/data/frozen-1.0/`, see `tests/data/README.md`). Tests that need "a real description"
//! read it here, never `spec/` or `overlays/`, so a vendor release leaves them green.

use std::path::{Path, PathBuf};

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
