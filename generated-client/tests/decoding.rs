//! What the generated types decode, end to end: the client generated from the generator's test
//! document `codegen/tests/data/decode-shapes.yaml` (every polymorphic shape ASP.NET Core and
//! Swashbuckle publish, and an object keeping unknown members), compiled here and served by a
//! loopback stub through the client's own runtime (`runtime::send`, which the generated code
//! calls: the same token, attempts, retries and errors; `decoding/unions.rs`); a vendor release of
//! today's description that adds a polymorphic member, generated and served the same way
//! (`decoding/rehearsal.rs`); and the memory one decode takes, counted by an allocator
//! (`decoding/memory.rs`).
//!
//! A test binary of its own: the generated code names the client's items as `crate::...` (as it
//! does inside the client crate), so this crate's root provides those paths; and the counting
//! allocator is this binary's global allocator.

// The counting allocator needs `unsafe impl GlobalAlloc`, as `benches/download_memory.rs` does.
#![allow(unsafe_code)]

// Loopback servers that cannot hang in Drop (`clippy.toml`), shared with the runtime tests.
#[path = "it/support.rs"]
mod support;

mod decoding {
    pub mod memory;
    pub mod rehearsal;
    pub mod unions;
}

// What the generated code reaches as `crate::...` inside the client crate.
pub use creditdata_client::{Error, Result, call_options, email, json, limits, operation, runtime};

// Formatted by the generator, never by rustfmt; the generator's allowances, as in the client's
// `lib.rs`. `cargo xtask regen` writes both files (`TEST_CLIENTS`, `RELEASE_CLIENT`).
#[rustfmt::skip]
#[allow(
    warnings,
    clippy::all,
    clippy::pedantic,
    clippy::nursery,
    clippy::restriction,
    clippy::cargo,
    rustdoc::all
)]
#[path = "decoding/generated.rs"]
mod generated;

#[rustfmt::skip]
#[allow(
    warnings,
    clippy::all,
    clippy::pedantic,
    clippy::nursery,
    clippy::restriction,
    clippy::cargo,
    rustdoc::all
)]
#[path = "decoding/release.rs"]
mod release;

/// The parts of a real client (state, HTTP client) against `base_url`, for a generated client
/// of another description.
pub fn parts(base_url: &str) -> (reqwest::Client, runtime::ClientState) {
    use progenitor_client::ClientInfo;
    let real = creditdata_client::Client::builder()
        .base_url(base_url)
        .bearer_token("test-token")
        .build()
        .expect("a client");
    (real.client().clone(), real.inner().clone())
}
