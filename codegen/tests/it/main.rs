//! The integration tests of `creditdata-codegen`, one module per stage or concern, linked into
//! one test binary: each binary links the whole generator (progenitor, typify, syn), so one
//! binary instead of fifteen is most of the time `cargo test` spends after a change to the
//! library.
//!
//! Snapshots live in `snapshots/`, named `it__<module>__<name>.snap` after the module path
//! (review them with `cargo insta review`). Test data lives in `../data/`.
//!
//! Some tests run progenitor, which `creditdata_codegen::generate::catch_panic` guards by
//! swapping the process-wide panic hook while it runs: a test that fails at that moment on
//! another thread fails all the same, but its panic message may not be printed. Re-run a
//! failing test alone (`cargo test -p creditdata-codegen --test it -- NAME`) to read it.

mod behaviour_pins;
mod change_catalogue;
mod deprecations;
mod downconvert;
mod fetch;
mod foreign_specs;
mod forward_compatible;
mod frozen;
mod generated_surface;
mod generator_version;
mod made_release;
mod next_generator;
mod operation_names;
mod overlay;
mod overlay_compliant_sets;
mod overlay_outlived;
mod overlay_peers;
mod overlays_fill_gaps;
mod preflight;
mod preflight_narrowing;
mod preflight_proofs;
mod properties;
mod releases;
mod session_datasets;
mod spec_documents;
