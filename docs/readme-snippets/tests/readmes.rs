//! The READMEs' Rust, compiled: `build.rs` writes each Rust block of every README as a module
//! included here, at its README's line numbers. Compiling this test is the check; it runs
//! nothing. Its crates are exactly the lines the READMEs tell a user to add (this package's
//! `[dev-dependencies]`, compared with the READMEs by `xtask/tests/it/readme_snippets.rs`).

include!(concat!(env!("OUT_DIR"), "/readmes.rs"));
