//! `cargo xtask ci`: every check CI runs, in one command a newcomer can run too.

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser};

use crate::regen::{self, workspace_root};
use crate::{conformance, consumer_app, layers, quickstart, release_day};

#[derive(Args, Debug)]
pub struct CiArgs {
    /// Skip this step (repeatable). The steps, in the order they run:
    #[arg(long, value_name = "STEP", value_parser = step_names())]
    skip: Vec<String>,
}

/// The step's name before it was `check` (which it runs): still accepted by --skip, with a
/// warning, so scripts written for it keep working while they are updated.
const OLD_CHECK_NAME: &str = "drift";

/// One check: a name, what it checks (for `--help`) and how to run it.
struct Step {
    name: &'static str,
    about: &'static str,
    run: Box<dyn Fn() -> anyhow::Result<()>>,
}

/// What `--skip` accepts: the name of every step of [`steps`], with its `about` (so `--help`
/// lists them all, in order), and the old name of `check`, accepted but not shown.
fn step_names() -> PossibleValuesParser {
    let mut names: Vec<PossibleValue> = steps()
        .into_iter()
        .map(|step| PossibleValue::new(step.name).help(step.about))
        .collect();
    names.push(PossibleValue::new(OLD_CHECK_NAME).hide(true));
    PossibleValuesParser::new(names)
}

fn cargo(args: &'static [&'static str]) -> Box<dyn Fn() -> anyhow::Result<()>> {
    Box::new(move || run_cargo(args))
}

/// Runs cargo with `args` in the workspace; `Err` says which command failed.
fn run_cargo(args: &[&str]) -> anyhow::Result<()> {
    run_cargo_with(args, &[])
}

/// [`run_cargo`] with `env` set for that command alone.
fn run_cargo_with(args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("cannot run {cargo}"))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn steps() -> Vec<Step> {
    vec![
        Step {
            name: "fmt",
            about: "formatting, as `cargo fmt --check`",
            run: cargo(&["fmt", "--all", "--", "--check"]),
        },
        Step {
            name: "clippy",
            about: "lints of every crate and target, warnings denied",
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
            about: "the client library with no optional feature, warnings denied",
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
        // Every crate's documentation builds with no broken or ambiguous link (rustdoc's lints,
        // warnings denied): the docs are how a reader walks the house. Twice for the client:
        // with the workspace's features, and with its default ones (what a user's `cargo doc`
        // and a registry's build show), where a link to a feature-gated item breaks.
        Step {
            name: "doc",
            about: "every crate's documentation builds without a broken link, warnings denied",
            run: Box::new(|| {
                let deny = [("RUSTDOCFLAGS", "-D warnings")];
                run_cargo_with(&["doc", "--workspace", "--no-deps"], &deny)?;
                run_cargo_with(&["doc", "-p", "creditdata-client", "--no-deps"], &deny)
            }),
        },
        // The client's, the mock's and the CLI's modules import only their own layer and those
        // below, with no circle; no path dependency into another member; no hand-written Rust
        // file over 900 lines (xtask/src/layers/).
        Step {
            name: "layers",
            about: "client, mock and CLI import their own layer or below, with no circle; no path dependency into another member; no hand-written .rs over 900 lines",
            run: Box::new(layers::run),
        },
        // The client as a registry would receive it: `cargo package` builds the packaged crate
        // alone (its verify step, offline), so a file it includes from outside the crate, or a
        // dependency only the workspace provides, fails here. `--allow-dirty`: this checks that
        // the crate builds, not where its files come from, and release-day runs it on a copy with
        // regenerated, uncommitted files.
        Step {
            name: "package",
            about: "the client as a registry receives it builds alone, offline",
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
            about: "the generated files match their inputs (`cargo xtask check`)",
            run: Box::new(|| regen::check(&regen::CheckArgs::default())),
        },
        Step {
            name: "test",
            about: "every test under cargo-nextest, each with a time limit, then the doctests",
            run: Box::new(test),
        },
        Step {
            name: "conformance",
            about: "schemathesis against the local mock, every check",
            run: Box::new(|| conformance::run(conformance::ConformanceArgs::ci_defaults())),
        },
        Step {
            name: "quickstart",
            about: "the client's quickstart example against the mock",
            run: Box::new(quickstart::run),
        },
        Step {
            name: "consumer-app",
            about: "examples/consumer-app, a project outside the workspace, against the mock",
            run: Box::new(consumer_app::run),
        },
        // Last: it copies the workspace and runs every step above again on a vendor release.
        Step {
            name: "release-day",
            about: "a vendor release rehearsed on a copy of the workspace",
            run: Box::new(|| release_day::run(&release_day::ReleaseDayArgs::default())),
        },
    ]
}

/// The steps `--skip` names (clap has refused any other), the old name of `check` as `check`.
fn skipped_steps(args: &CiArgs) -> Vec<String> {
    args.skip
        .iter()
        .map(|name| {
            if name == OLD_CHECK_NAME {
                eprintln!(
                    "warning: --skip {OLD_CHECK_NAME} is now --skip check (the step runs `cargo xtask check`)"
                );
                "check".to_string()
            } else {
                name.clone()
            }
        })
        .collect()
}

/// The nextest profile of the `test` step (`.config/nextest.toml`): every test in a process of
/// its own, ended and failed when it outlives its time limit.
const NEXTEST_PROFILE: &str = "ci";

/// How long the doctests may take, compiling included, before they count as hung: nextest does
/// not run doctests, so their bound is this one, on the whole command (what they take on a
/// loaded 2-core machine: BENCHMARKS.md, "A test run that cannot hang").
const DOCTEST_LIMIT: Duration = Duration::from_secs(10 * 60);

/// The `test` step: every test of the workspace under cargo-nextest with the [`NEXTEST_PROFILE`]
/// profile, then the doctests (`cargo test --doc`, which nextest cannot run) within
/// [`DOCTEST_LIMIT`]. Both run whatever the other gave, so one run shows every failure.
fn test() -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let nextest = Command::new(&cargo)
        .args(["nextest", "--version"])
        .current_dir(workspace_root())
        .output();
    if !nextest.is_ok_and(|output| output.status.success()) {
        bail!(
            "cargo-nextest is not installed, and the test step runs every test under it (each \
             with a time limit): install it with `cargo install cargo-nextest --locked` (.ci/run \
             does)"
        );
    }
    let tests = run_cargo(&[
        "nextest",
        "run",
        "--workspace",
        "--profile",
        NEXTEST_PROFILE,
    ]);
    let mut doctests = Command::new(&cargo);
    doctests
        .args(["test", "--workspace", "--doc"])
        .current_dir(workspace_root());
    let doctests = run_within(doctests, "cargo test --workspace --doc", DOCTEST_LIMIT);
    match (tests, doctests) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Err(tests), Err(doctests)) => bail!("{tests:#}; {doctests:#}"),
    }
}

/// Runs `command` (shown as `shown`) to its end, or until `limit` has passed: then it ends it
/// and every process it started, and fails saying so.
fn run_within(mut command: Command, shown: &str, limit: Duration) -> anyhow::Result<()> {
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot run `{shown}`"))?;
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("cannot wait for `{shown}`"))?
        {
            if !status.success() {
                bail!("`{shown}` failed ({status})");
            }
            return Ok(());
        }
        if Instant::now() >= deadline {
            end_process_tree(&mut child);
            bail!(
                "`{shown}` was still running after {} and was ended: a test that never ends is \
                 the likely cause (run the command alone to see which one does not finish)",
                shown_duration(limit)
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// `20 minutes`, `90 seconds`.
fn shown_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds >= 60 && seconds.is_multiple_of(60) {
        format!("{} minutes", seconds / 60)
    } else {
        format!("{seconds} seconds")
    }
}

/// Kills `child` and, where `/proc` lists them (Linux), every process below it: cargo's
/// rustdoc and the doctests it runs would go on without their parent.
fn end_process_tree(child: &mut std::process::Child) {
    let below = descendants(child.id());
    let _ = child.kill();
    let _ = child.wait();
    if !below.is_empty() {
        let _ = Command::new("kill")
            .arg("-KILL")
            .args(below.iter().map(u32::to_string))
            .status();
    }
}

/// The processes below `root`, from each process's parent in `/proc/PID/stat`; none where
/// there is no `/proc`.
fn descendants(root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            Some((pid, parent_in_stat(&stat)?))
        })
        .collect();
    let mut found = vec![root];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    found.remove(0);
    found
}

/// The parent's id in a `/proc/PID/stat` line: the second field after the command name, which
/// is in parentheses and may itself hold spaces and parentheses.
fn parent_in_stat(stat: &str) -> Option<u32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
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
    let skip = skipped_steps(args);
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
    use clap::{CommandFactory, Parser};

    use super::*;

    /// `cargo xtask ci` as main.rs parses it.
    #[derive(Parser)]
    #[command(name = "ci")]
    struct Ci {
        #[command(flatten)]
        args: CiArgs,
    }

    fn parse(arguments: &[&str]) -> Result<CiArgs, clap::Error> {
        Ci::try_parse_from(std::iter::once("ci").chain(arguments.iter().copied())).map(|ci| ci.args)
    }

    fn names() -> Vec<&'static str> {
        steps().iter().map(|s| s.name).collect()
    }

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

    #[test]
    fn the_generated_files_step_is_named_check_and_drift_still_skips_it() {
        assert!(
            names().contains(&"check") && !names().contains(&"drift"),
            "{:?}",
            names()
        );
        assert_eq!(
            skipped_steps(&parse(&["--skip", "check"]).unwrap()),
            ["check"]
        );
        assert_eq!(
            skipped_steps(&parse(&["--skip", "drift", "--skip", "test"]).unwrap()),
            ["check", "test"]
        );
    }

    #[test]
    fn an_unknown_step_is_refused_with_the_list_of_steps() {
        let e = parse(&["--skip", "lint"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue);
        let message = e.to_string();
        assert!(message.contains("'lint'"), "{message}");
        for name in names() {
            assert!(
                message.contains(name),
                "{name} is not offered in: {message}"
            );
        }
    }

    /// The steps `cargo xtask ci --help` lists under `--skip`, in its order.
    fn steps_in_help() -> Vec<String> {
        let help = Ci::command().render_long_help().to_string();
        let listed = help
            .split_once("Possible values:")
            .unwrap_or_else(|| panic!("--help lists no steps:\n{help}"))
            .1;
        listed
            .lines()
            .map(str::trim)
            .skip_while(|line| line.is_empty())
            .take_while(|line| line.starts_with("- "))
            .map(|line| line[2..].split(':').next().unwrap_or_default().to_string())
            .collect()
    }

    #[test]
    fn help_lists_every_step_skip_accepts_in_the_order_they_run() {
        assert_eq!(steps_in_help(), names());
        for name in names() {
            let skipped = skipped_steps(&parse(&["--skip", name]).unwrap());
            assert_eq!(skipped, [name], "--skip {name}");
        }
        let help = Ci::command().render_long_help().to_string();
        for step in steps() {
            assert!(
                help.contains(step.about),
                "{} has no line in:\n{help}",
                step.name
            );
        }
    }

    #[test]
    fn the_readme_names_every_step_in_the_order_they_run() {
        let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let line = readme
            .lines()
            .find(|line| line.starts_with("cargo xtask ci "))
            .expect("the README shows `cargo xtask ci`");
        let listed: Vec<&str> = line
            .split_once("every test: ")
            .expect("the README's `cargo xtask ci` line lists the steps after `every test: `")
            .1
            .split(", ")
            .map(str::trim)
            .collect();
        assert_eq!(listed, names(), "README.md: {line}");
    }

    #[test]
    fn a_parent_is_read_from_a_stat_line_whose_command_has_spaces_and_parentheses() {
        assert_eq!(
            parent_in_stat("4242 (a (b) c) S 17 4242 4242 0 -1"),
            Some(17)
        );
        assert_eq!(parent_in_stat("garbage"), None);
    }

    /// A process that outlives its limit is ended with what it started, and the step says so.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_command_past_its_limit_is_ended_with_every_process_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild");
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "sleep 600 & echo $! > {}; wait",
            pid_file.display()
        ));
        let e = run_within(command, "sh -c 'sleep 600 & wait'", Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("was still running after 2 seconds and was ended"),
            "{e}"
        );
        let grandchild = std::fs::read_to_string(&pid_file).unwrap();
        let stat = std::path::Path::new("/proc")
            .join(grandchild.trim())
            .join("stat");
        // SIGKILL is delivered asynchronously: wait (bounded) until the process is gone or a
        // zombie its new parent has yet to reap.
        let bound = Instant::now() + Duration::from_secs(30);
        loop {
            let state = std::fs::read_to_string(&stat).ok().and_then(|line| {
                let after = &line[line.rfind(')')? + 1..];
                after.split_whitespace().next().map(str::to_string)
            });
            match state.as_deref() {
                None | Some("Z") | Some("X") => break,
                Some(other) => assert!(
                    Instant::now() < bound,
                    "the grandchild sleep is still there, state {other}"
                ),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
