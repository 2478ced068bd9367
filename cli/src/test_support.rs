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
