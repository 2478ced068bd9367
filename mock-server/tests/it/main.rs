//! The mock's integration tests, one module per concern, linked into one test binary (each
//! binary links the whole mock and the generated client again). Nothing here needs a process of
//! its own: no test installs a global subscriber or changes the environment or the working
//! directory, and the tests that start the `creditdata-mock` binary do so as child processes.

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

mod behaviour;
mod code_flow;
mod common;
mod described;
mod e2e;
mod identity_provider;
mod links;
mod logs;
mod parameters;
mod realism;
mod registration;
mod request_contract;
mod schema;
#[cfg(unix)]
mod telemetry;
mod trust;
