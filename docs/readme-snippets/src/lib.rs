//! Every Rust block of every README of the repository, compiled as a user would paste it.
//!
//! `build.rs` writes each block as a module of this package's test `readmes`
//! (`tests/readmes.rs`), so `cargo build`/`clippy`/`test --workspace --all-targets` compile
//! them. Like a user's project, that test sees only the crates the READMEs tell a user to add
//! (this package's `[dev-dependencies]`, the same lines): a snippet that names a crate the
//! README never adds (`uuid::Uuid` with only the client's prelude imported) fails here, with
//! the compiler's message naming the README and the line. A block fenced ```` ```rust,ignore ````
//! is deliberately not compiled; any other fence attribute than `no_run` and `ignore` is an
//! error ([`markdown::KNOWN_ATTRIBUTES`]). This library holds only the Markdown reading, for
//! the build script and for xtask's tests of the check itself.

pub mod markdown;
