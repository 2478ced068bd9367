//! `cargo xtask ci`: every check CI runs, in one command a newcomer can run too.

use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

use crate::regen::{self, workspace_root};
use crate::{conformance, consumer_app, layers, quickstart, release_day};

#[derive(Args, Debug)]
pub struct CiArgs {
    /// Skip these steps (repeatable): fmt, clippy, client-minimal, layers, package, check,
    /// test, conformance, quickstart, consumer-app, release-day.
    #[arg(long, value_name = "STEP")]
    skip: Vec<String>,
}

/// The step's name before it was `check` (which it runs): still accepted by --skip, with a
/// warning, so scripts written for it keep working while they are updated.
const OLD_CHECK_NAME: &str = "drift";

/// One check: a name and how to run it.
struct Step {
    name: &'static str,
    run: Box<dyn Fn() -> anyhow::Result<()>>,
}

fn cargo(args: &'static [&'static str]) -> Box<dyn Fn() -> anyhow::Result<()>> {
    Box::new(move || {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(&cargo)
            .args(args)
            .current_dir(workspace_root())
            .status()
            .with_context(|| format!("cannot run {cargo}"))?;
        if !status.success() {
            bail!("`cargo {}` failed ({status})", args.join(" "));
        }
        Ok(())
    })
}

fn steps() -> Vec<Step> {
    vec![
        Step {
            name: "fmt",
            run: cargo(&["fmt", "--all", "--", "--check"]),
        },
        Step {
            name: "clippy",
            run: cargo(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
        },
        // The client with every optional feature left out (static tokens, no statements, no
        // saved files, no rate limiter): the library alone, warnings denied. The workspace
        // build above unifies features, so it cannot see a gate that breaks this one.
        Step {
            name: "client-minimal",
            run: cargo(&[
                "clippy",
                "-p",
                "creditdata-client",
                "--no-default-features",
                "--lib",
                "--",
                "-D",
                "warnings",
            ]),
        },
        // The client's modules import only their own layer and those below (xtask/src/layers.rs).
        Step {
            name: "layers",
            run: Box::new(layers::run),
        },
        // The client as a registry would receive it: `cargo package` builds the packaged crate
        // alone (its verify step, offline), so a file it includes from outside the crate, or a
        // dependency only the workspace provides, fails here. `--allow-dirty`: this checks that
        // the crate builds, not where its files come from, and release-day runs it on a copy with
        // regenerated, uncommitted files.
        Step {
            name: "package",
            run: cargo(&[
                "package",
                "-p",
                "creditdata-client",
                "--offline",
                "--allow-dirty",
            ]),
        },
        Step {
            name: "check",
            run: Box::new(|| regen::check(&regen::CheckArgs::default())),
        },
        Step {
            name: "test",
            // Every test binary runs, so one run shows every failure.
            run: cargo(&["test", "--workspace", "--no-fail-fast"]),
        },
        Step {
            name: "conformance",
            run: Box::new(|| conformance::run(conformance::ConformanceArgs::ci_defaults())),
        },
        Step {
            name: "quickstart",
            run: Box::new(quickstart::run),
        },
        Step {
            name: "consumer-app",
            run: Box::new(consumer_app::run),
        },
        // Last: it copies the workspace and runs every step above again on a vendor release.
        Step {
            name: "release-day",
            run: Box::new(|| release_day::run(&release_day::ReleaseDayArgs::default())),
        },
    ]
}

/// The steps `--skip` names, checked against the known ones.
fn skipped_steps(args: &CiArgs, known: &[&str]) -> anyhow::Result<Vec<String>> {
    let mut skipped = Vec::new();
    for name in &args.skip {
        if name == OLD_CHECK_NAME {
            eprintln!(
                "warning: --skip {OLD_CHECK_NAME} is now --skip check (the step runs `cargo xtask check`)"
            );
            skipped.push("check".to_string());
        } else if known.contains(&name.as_str()) {
            skipped.push(name.clone());
        } else {
            bail!("unknown step {name:?}; steps are: {}", known.join(", "));
        }
    }
    Ok(skipped)
}

/// What a run's builds leave out, each unless the caller chose otherwise (set the variable): the
/// steps build every crate once, so incremental state is written and never read (2.1 of a fresh
/// test build's 5.0 GB, the largest thing on disk; CI once ran out of space); and debug info, the
/// standard library's included, about a quarter of each test binary (a failed test still says
/// where it panicked; these binaries run once, nobody steps through them in a debugger).
const LEAN_BUILD: [(&str, &str); 3] = [
    ("CARGO_INCREMENTAL", "0"),
    ("CARGO_PROFILE_DEV_DEBUG", "0"),
    ("CARGO_PROFILE_DEV_STRIP", "debuginfo"),
];

/// The [`LEAN_BUILD`] settings the caller left unset.
fn unset_lean_settings(is_set: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    LEAN_BUILD
        .into_iter()
        .filter(|(name, _)| !is_set(name))
        .collect()
}

/// Runs every step (a failure does not stop the others), then prints one summary line.
///
/// When a [`LEAN_BUILD`] setting is unset, the run starts again as a child process with it
/// set, which every cargo it starts inherits, release-day's in its copy included; the child has
/// them all, so it runs the steps.
pub fn run(args: &CiArgs) -> anyhow::Result<ExitCode> {
    let unset = unset_lean_settings(|name| std::env::var_os(name).is_some());
    if !unset.is_empty() {
        let exe = std::env::current_exe().context("cannot find the running xtask")?;
        let status = Command::new(&exe)
            .args(std::env::args_os().skip(1))
            .envs(unset)
            .status()
            .with_context(|| format!("cannot run {}", exe.display()))?;
        // The child printed its steps and its failures; its status is the run's.
        return Ok(match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        });
    }
    run_steps(args)?;
    Ok(ExitCode::SUCCESS)
}

fn run_steps(args: &CiArgs) -> anyhow::Result<()> {
    let known: Vec<&str> = steps().iter().map(|s| s.name).collect();
    let skip = skipped_steps(args, &known)?;
    let mut failed = Vec::new();
    let mut passed = 0;
    let mut skipped = 0;
    for step in steps() {
        if skip.iter().any(|s| s == step.name) {
            println!("== {}: skipped", step.name);
            skipped += 1;
            continue;
        }
        println!("== {}", step.name);
        let started = Instant::now();
        match (step.run)() {
            Ok(()) => {
                passed += 1;
                println!(
                    "== {}: ok ({:.0} s)",
                    step.name,
                    started.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                // Each failed step is reported as it happens; the run goes on.
                eprintln!("{}", crate::error_line(&e));
                println!(
                    "== {}: FAILED ({:.0} s)",
                    step.name,
                    started.elapsed().as_secs_f64()
                );
                failed.push(step.name);
            }
        }
    }
    println!(
        "ci: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    if !failed.is_empty() {
        bail!("failed steps: {}", failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_lean_settings_the_caller_left_unset_are_set_and_a_child_with_all_runs_the_steps() {
        assert_eq!(unset_lean_settings(|_| false), LEAN_BUILD.to_vec());
        assert_eq!(
            unset_lean_settings(|name| name == "CARGO_INCREMENTAL"),
            [
                ("CARGO_PROFILE_DEV_DEBUG", "0"),
                ("CARGO_PROFILE_DEV_STRIP", "debuginfo")
            ]
        );
        assert!(unset_lean_settings(|_| true).is_empty());
    }

    fn skipping(names: &[&str]) -> anyhow::Result<Vec<String>> {
        let known: Vec<&str> = steps().iter().map(|s| s.name).collect();
        let args = CiArgs {
            skip: names.iter().map(|s| s.to_string()).collect(),
        };
        skipped_steps(&args, &known)
    }

    #[test]
    fn the_generated_files_step_is_named_check_and_drift_still_skips_it() {
        let names: Vec<&str> = steps().iter().map(|s| s.name).collect();
        assert!(
            names.contains(&"check") && !names.contains(&"drift"),
            "{names:?}"
        );
        assert_eq!(skipping(&["check"]).unwrap(), ["check"]);
        assert_eq!(skipping(&["drift", "test"]).unwrap(), ["check", "test"]);
    }

    #[test]
    fn an_unknown_step_is_refused_with_the_list_of_steps() {
        let e = skipping(&["lint"]).unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown step \"lint\"; steps are: fmt, clippy, client-minimal, layers, package, \
             check, test, conformance, quickstart, consumer-app, release-day"
        );
    }
}
