//! The client's integration tests, one binary: one module per concern, every server a loopback
//! fake on `127.0.0.1:0`. (`tests/redaction.rs` is the one test kept apart: it installs the
//! process-wide `tracing` subscriber.)

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

mod auth;
mod call_options;
mod config;
mod dataset_stream;
mod decoder_properties;
mod download;
mod edge_cases;
mod errors;
mod forward_compatible;
mod hostile_server;
mod operations;
mod paging;
mod rate_limit;
mod readiness;
mod readme;
mod request_limits;
mod retries;
mod server_drop;
mod session_datasets;
mod shared_rate_limit;
mod sign_in;
mod sign_in_hostile_provider;
mod sign_in_trust;
mod source_file;
mod statement;
mod support;
mod telemetry;
mod validation;
mod wait;
mod with_options;
