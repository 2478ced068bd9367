//! `cargo xtask ci`: every check CI runs, in one command a newcomer can run too.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;

use crate::regen::{self, workspace_root};
use crate::{conformance, quickstart};

#[derive(Args, Debug)]
pub struct CiArgs {
    /// Skip these steps (repeatable): fmt, clippy, drift, test, conformance, quickstart,
    /// consumer-app.
    #[arg(long, value_name = "STEP")]
    skip: Vec<String>,
}

/// One check: a name and how to run it.
struct Step {
    name: &'static str,
    run: Box<dyn Fn() -> Result<(), String>>,
}

fn cargo(args: &'static [&'static str]) -> Box<dyn Fn() -> Result<(), String>> {
    Box::new(move || {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(&cargo)
            .args(args)
            .current_dir(workspace_root())
            .status()
            .map_err(|e| format!("cannot run {cargo}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`cargo {}` failed ({status})", args.join(" ")))
        }
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
        Step {
            name: "drift",
            run: Box::new(|| regen::check(&regen::CheckArgs::default())),
        },
        Step {
            name: "test",
            run: cargo(&["test", "--workspace"]),
        },
        Step {
            name: "conformance",
            run: Box::new(|| {
                conformance::run(conformance::ConformanceArgs::ci_defaults())
                    .map_err(|e| format!("error: {e:#}"))
            }),
        },
        Step {
            name: "quickstart",
            run: Box::new(|| quickstart::run().map_err(|e| format!("error: {e:#}"))),
        },
        Step {
            name: "consumer-app",
            run: Box::new(|| consumer_app().map_err(|e| format!("error: {e:#}"))),
        },
    ]
}

/// `examples/consumer-app`, a project outside the workspace that depends on the client as a
/// user's project does, built and run against the mock. Its lock file is seeded from the
/// workspace's, so it builds with the versions the workspace is tested with (offline too, once
/// they are downloaded), and its build shares the workspace's target directory.
fn consumer_app() -> anyhow::Result<()> {
    let root = conformance::workspace_root()?;
    let app = root.join("examples/consumer-app");
    std::fs::copy(root.join("Cargo.lock"), app.join("Cargo.lock"))
        .context("seeding examples/consumer-app/Cargo.lock from the workspace's")?;
    let binary = conformance::build_mock(&root)?;
    let secret = conformance::random_hex();
    let mut mock = conformance::MockProcess::start(&binary, "consumer-app", &secret)?;
    let base = mock.base_url.clone();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(&app)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(app.join("Cargo.toml"))
        .args(["--", "consumer.app@example.com"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CREDITDATA_BASE_URL", &base)
        .env(
            "CREDITDATA_TOKEN_URL",
            format!("{base}/realms/consumer/protocol/openid-connect/token"),
        )
        .env("CREDITDATA_CLIENT_ID", "consumer-app")
        .env("CREDITDATA_CLIENT_SECRET", &secret)
        .env_remove("CREDITDATA_TOKEN")
        .env_remove("CREDITDATA_ENVIRONMENT")
        .output()
        .context("running examples/consumer-app")?;
    mock.stop();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!(
            "examples/consumer-app failed ({}):\n{stderr}",
            output.status
        );
    }
    if !stdout.starts_with("created session ") {
        bail!("examples/consumer-app printed no summary line:\n{stdout}");
    }
    print!("consumer-app: {stdout}");
    Ok(())
}

/// Runs every step (a failure does not stop the others), then prints one summary line.
pub fn run(args: &CiArgs) -> Result<(), String> {
    let known: Vec<&str> = steps().iter().map(|s| s.name).collect();
    if let Some(unknown) = args.skip.iter().find(|s| !known.contains(&s.as_str())) {
        return Err(format!(
            "error: unknown step {unknown:?}; steps are: {}",
            known.join(", ")
        ));
    }
    let mut failed = Vec::new();
    let mut passed = 0;
    let mut skipped = 0;
    for step in steps() {
        if args.skip.iter().any(|s| s == step.name) {
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
            Err(message) => {
                eprintln!("{message}");
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
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("error: failed steps: {}", failed.join(", ")))
    }
}
