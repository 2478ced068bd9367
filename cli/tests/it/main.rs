//! The `creditdata` binary's integration tests, linked into one test binary. They run the binary
//! as child processes, so none of them needs a process of its own.

mod browser;
mod cli;
mod common;
mod export;
mod export_crash;
mod export_trust;
mod ready;
mod shared_export;
mod sign_in;
mod sign_in_trust;
mod telemetry;
mod trust;
mod wait_deadline;
