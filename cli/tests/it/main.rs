//! The `creditdata` binary's integration tests, linked into one test binary. They run the binary
//! as child processes, so none of them needs a process of its own.

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

mod browser;
mod cli;
mod common;
mod export;
mod export_crash;
mod export_entries;
mod export_trust;
mod ready;
mod shared_export;
mod sign_in;
mod sign_in_trust;
mod telemetry;
mod trust;
mod wait_deadline;
