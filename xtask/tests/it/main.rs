//! The integration tests of `cargo xtask`, run as the built binary, one module per command, linked
//! into one test binary (each links `creditdata-codegen`, the generator included).

mod dependency_tree;
mod drift;
mod fetch;
mod overlay_apply;
mod readme_snippets;
mod regen;
mod release_day;
mod support;
