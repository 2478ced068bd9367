//! `cargo xtask`: runs the creditdata generation pipeline.
//!
//! A thin front end: it parses the command line, calls `creditdata-codegen` and prints what that
//! reports. The logic lives in the library.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::{Parser, Subcommand};
use creditdata_codegen::document::{self, Format};
use creditdata_codegen::error_chain;
use creditdata_codegen::overlay::{self, ApplyOptions, OverlayErrors};

mod build_seed;
mod changelog;
mod ci;
mod conformance;
mod consumer_app;
mod decisions;
mod drift;
mod fetch;
mod layers;
mod mock;
mod quickstart;
mod regen;
mod release_day;
mod semver_check;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "creditdata maintenance tasks")]
enum Command {
    /// Regenerate every checked-in output from spec/ and overlays/, and report what changed.
    Regen(regen::RegenArgs),
    /// Regenerate in memory and fail with a diff where a checked-in output differs.
    Check(regen::CheckArgs),
    /// Compare a new published description with the checked-in generation (exit 0 no change,
    /// 3 compatible, 4 breaking); changes nothing.
    Drift(drift::DriftArgs),
    /// Run schemathesis against the local mock with the effective description: no server
    /// errors, no response that violates the description, no undocumented status code.
    Conformance(conformance::ConformanceArgs),
    /// Run every check CI runs, in order; a failed step does not stop the others (the steps:
    /// `--help`, under `--skip`).
    Ci(ci::CiArgs),
    /// Download the published description and replace the vendored copy in spec/.
    Fetch(fetch::FetchArgs),
    /// Release the client: set its version in generated-client/Cargo.toml (by default the one the
    /// unreleased changelog entries call for) and move those entries under it.
    CutRelease(changelog::CutReleaseArgs),
    /// Rehearse a vendor release on a copy of the workspace: drift, fetch, regen and ci with no
    /// hand edit, then the mock and `creditdata` serve, list and export what it added.
    ReleaseDay(release_day::ReleaseDayArgs),
    /// Work with OAI Overlay documents.
    #[command(subcommand)]
    Overlay(OverlayCommand),
}

#[derive(Subcommand)]
enum OverlayCommand {
    /// Apply overlays to an OpenAPI document, in the order given, and print the result.
    ///
    /// Strict: an action whose target selects nothing is an error (exit 1), unless --lenient.
    Apply {
        /// The OpenAPI document (JSON or YAML).
        spec: PathBuf,
        /// The overlays to apply, in this order.
        #[arg(required = true)]
        overlays: Vec<PathBuf>,
        /// Write the result here (atomically) instead of to stdout; `.json` writes JSON, `.yaml`
        /// or `.yml` YAML, anything else the format of SPEC.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
        /// Report actions whose target selects nothing as warnings instead of errors.
        #[arg(long)]
        lenient: bool,
    },
}

fn main() -> ExitCode {
    match run(Command::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}", error_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// How a failure is shown, by `main` and by each failed step of `ci`: `error: ` and the chain of
/// causes on one line. Every error type below keeps its `Display` short and hands its cause to
/// `source()`, so each cause appears once (docs/traps.md, the thiserror trap).
pub fn error_line(error: &anyhow::Error) -> String {
    format!("error: {error:#}")
}

fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Regen(args) => regen::regen(&args)?,
        Command::Check(args) => regen::check(&args)?,
        Command::Drift(args) => return drift::run(&args).map(ExitCode::from),
        Command::Ci(args) => return ci::run(&args),
        Command::Conformance(args) => conformance::run(args)?,
        Command::Fetch(args) => fetch::fetch(&args)?,
        Command::ReleaseDay(args) => release_day::run(&args)?,
        Command::CutRelease(args) => changelog::cut_release(&args)?,
        Command::Overlay(OverlayCommand::Apply {
            spec,
            overlays,
            output,
            lenient,
        }) => overlay_apply(&spec, &overlays, output.as_deref(), lenient)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn overlay_apply(
    spec: &Path,
    overlays: &[PathBuf],
    output: Option<&Path>,
    lenient: bool,
) -> anyhow::Result<()> {
    let applied = match overlay::apply_files(spec, overlays, &ApplyOptions { lenient }) {
        Ok(applied) => applied,
        Err(errors) => {
            print_findings(&errors);
            let n = errors.errors.len();
            bail!(
                "overlay apply failed with {n} error{}",
                if n == 1 { "" } else { "s" }
            );
        }
    };
    for warning in &applied.report.warnings {
        eprintln!("warning: {warning}");
    }
    match output {
        Some(path) => {
            let format = Format::from_extension(path).unwrap_or(applied.format);
            let text = document::to_string(&applied.document, format);
            document::write_atomic(path, text.as_bytes())?;
        }
        None => {
            let text = document::to_string(&applied.document, applied.format);
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                // A reader that stops early (`| head`) is not a failure of ours.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(anyhow::Error::new(e).context("cannot write to stdout"));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every error of the run (with its causes), then every warning, one per line: a user fixing
/// overlays wants all of them at once, not the first.
fn print_findings(errors: &OverlayErrors) {
    for error in &errors.errors {
        eprintln!("error: {}", error_chain(error));
    }
    for warning in &errors.warnings {
        eprintln!("warning: {warning}");
    }
}
