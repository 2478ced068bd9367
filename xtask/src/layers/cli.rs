//! The CLI's layer table (`cli/src`): its layers, bottom to top, and every module with its
//! layer. A new file of the command is one line in [`MODULES`].

use super::Table;

/// The CLI's table.
pub const TABLE: Table = Table {
    name: "cli",
    src: "cli/src",
    table_file: "xtask/src/layers/cli.rs",
    layers: LAYERS,
    modules: MODULES,
};

/// The layers, bottom to top: a module may use its own layer and those below.
const LAYERS: &[(&str, &str)] = &[
    (
        "leaves",
        "no dependency in the crate: the terminal gate, query syntax, answers as bytes, the OS lock of a refresh, the export's tree and lock",
    ),
    (
        "failure",
        "exit statuses and what each failure says; the export's manifests and shared work over its tree",
    ),
    (
        "parts",
        "what commands share below the command tree: profiles, tables, the trace, the files the description gives a session, the export's progress, interrupts and the context its steps share",
    ),
    (
        "command tree",
        "the command line as types (clap) and the stored sign-in",
    ),
    (
        "context",
        "what every command runs on: the client built from settings, output, readiness shown",
    ),
    ("commands", "one module per command group"),
    ("root", "`main.rs`: parse, run, exit"),
];

/// Every module of `cli/src` and its layer (an index of [`LAYERS`]). `test_support` is
/// `#[cfg(test)]` and not listed.
const MODULES: &[(&str, usize)] = &[
    ("terminal", 0),
    ("query", 0),
    ("answer", 0),
    ("answer::entries", 0),
    ("answer::spool", 0),
    ("answer::visitor", 0),
    ("token_lock", 0),
    ("export::lock", 0),
    ("export::store", 0),
    ("failure", 1),
    ("export::manifest", 1),
    ("export::share", 1),
    ("profile", 2),
    ("table", 2),
    ("telemetry", 2),
    ("export::files", 2),
    ("export::progress", 2),
    ("export::interrupt", 2),
    ("export::context", 2),
    ("cli", 3),
    ("token_store", 3),
    ("settings", 4),
    ("output", 4),
    ("readiness", 4),
    ("datasets", 5),
    ("download", 5),
    ("operations", 5),
    ("sessions", 5),
    ("sign_in", 5),
    ("export", 5),
    ("export::fetch", 5),
    ("export::list", 5),
    ("export::plan", 5),
    ("export::record", 5),
    ("export::session", 5),
    ("", 6),
];
