//! What the generated types decode, end to end: the client generated from the generator's test
//! document `codegen/tests/data/decode-shapes.yaml` (every polymorphic shape ASP.NET Core and
//! Swashbuckle publish, and an object keeping unknown members), compiled here and served by a
//! loopback stub through the client's own hooks (`decoding/unions.rs`); and the memory one
//! decode takes, counted by an allocator (`decoding/memory.rs`).
//!
//! A test binary of its own: the generated code names the client's items as `crate::...` (as it
//! does inside the client crate), so this crate's root provides those paths; and the counting
//! allocator is this binary's global allocator.

// The counting allocator needs `unsafe impl GlobalAlloc`, as `benches/download_memory.rs` does.
#![allow(unsafe_code)]

mod decoding {
    pub mod memory;
    pub mod unions;
}

// What the generated code reaches as `crate::...` inside the client crate.
pub use creditdata_client::{Error, Result, call_options, json, operation, runtime};

// Formatted by the generator, never by rustfmt; the generator's allowances, as in the client's
// `lib.rs`.
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

/// The test document's client goes through the same hooks as the real one (token, attempts,
/// retries, errors): each call is handed to a `creditdata_client::Client` made of the same
/// parts.
impl progenitor_client::ClientHooks<runtime::ClientState> for generated::Client {
    async fn exec(
        &self,
        request: reqwest::Request,
        info: &progenitor_client::OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        real(self).exec(request, info).await
    }

    async fn post<E>(
        &self,
        result: &reqwest::Result<reqwest::Response>,
        info: &progenitor_client::OperationInfo,
    ) -> std::result::Result<(), progenitor_client::Error<E>> {
        real(self).post(result, info).await
    }
}

fn real(client: &generated::Client) -> creditdata_client::Client {
    use progenitor_client::ClientInfo;
    creditdata_client::Client::new_with_client(
        client.baseurl(),
        client.client().clone(),
        client.inner().clone(),
    )
}
