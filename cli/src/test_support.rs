//! Helpers the unit tests of several modules share.

use std::collections::HashMap;

use clap::Parser;

use crate::cli::{Cli, GlobalArgs};

/// The global options of `creditdata <args> operations`: the subcommand only completes the
/// command line, as the global options parse the same before any of them.
pub(crate) fn global(args: &[&str]) -> GlobalArgs {
    let mut argv = vec!["creditdata"];
    argv.extend_from_slice(args);
    argv.push("operations");
    Cli::try_parse_from(argv).unwrap().global
}

/// An environment holding exactly `vars`.
pub(crate) fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

/// What `run` returns, and the most bytes this thread held at once while it ran beyond what it
/// held before (what `run` allocated and freed on other threads is not seen: call it on one).
/// Counted by `allocation-counter`, whose global allocator (the system's, counting each
/// thread's allocations) is this test binary's: the bound is asserted without timing anything.
pub(crate) fn peak_during<T>(run: impl FnOnce() -> T) -> (T, usize) {
    let mut value = None;
    let info = allocation_counter::measure(|| value = Some(run()));
    let value = value.expect("the measured call ran");
    (value, usize::try_from(info.bytes_max).unwrap_or(usize::MAX))
}
