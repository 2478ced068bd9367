//! `cargo xtask conformance`: schemathesis against the mock, with the effective API description,
//! every check and every phase.
//!
//! The run builds and starts `creditdata-mock` on `127.0.0.1:0` with [`MOCK_OPTIONS`], takes a
//! token from its token endpoint, and runs schemathesis once with `--checks all` and the
//! examples, coverage, fuzzing and stateful phases. Everything else lives in the checked-in
//! `schemathesis.toml` at the repository root: the `Authorization` header (read from the
//! `CREDITDATA_TOKEN` environment variable, so the token is never written to a file or put on a
//! command line), warnings that fail the run, and the statuses the service answers to a
//! schema-valid request because of a session's state. Nothing is seeded: the stateful phase
//! follows the description's OpenAPI links from a created session to every operation.
//!
//! The pass condition is schemathesis's exit status: 0 failures and 0 warnings.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::mock::{self, MockOptions, MockProcess};
use crate::regen::workspace_root;

/// The schemathesis release a run uses; installed into `.venv` when no such release is found.
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";

/// The configuration file, relative to the repository root.
pub const CONFIG_FILE: &str = "schemathesis.toml";

/// The environment variable `schemathesis.toml` reads the bearer token from.
pub const TOKEN_VARIABLE: &str = "CREDITDATA_TOKEN";

/// The client id the mock accepts during a run.
const CLIENT_ID: &str = "conformance";

/// The mock's options for a run, documented in the README:
///
/// - `--complete-on-read`: a waiting customer completes the moment anything of the session is
///   read, so the links from a dataset list reach real files and images, while resending the
///   notification or extending the deadline before the first read (or after an upgrade) meets
///   a waiting customer and succeeds;
/// - `--provider-delay 0s`: providers answer at once, with no clock in the test;
/// - `--provider-error-one-in 0`: no simulated provider failures, which would leave some
///   datasets empty for some sessions and make what the links reach depend on the session id.
pub const MOCK_OPTIONS: &[&str] = &[
    "--complete-on-read",
    "--provider-delay",
    "0s",
    "--provider-error-one-in",
    "0",
];

/// The phases a run goes through, in schemathesis's order.
pub const PHASES: &str = "examples,coverage,fuzzing,stateful";

/// Options of `cargo xtask conformance`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConformanceArgs {
    /// Test cases per operation and phase.
    #[arg(long, default_value_t = 50)]
    pub max_examples: u32,
    /// Seed for reproducible generation (default: random; the seed used is printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Give up (and fail) when schemathesis runs longer than this many seconds.
    #[arg(long, default_value_t = 900)]
    pub timeout: u64,
    /// The schemathesis executable (default: `schemathesis` on PATH or in `.venv/bin` if it is
    /// the pinned release, else the pinned release is installed into `.venv`).
    #[arg(long)]
    pub schemathesis: Option<PathBuf>,
    /// A `creditdata-mock` binary to run instead of building one.
    #[arg(long)]
    pub mock_binary: Option<PathBuf>,
    /// Where schemathesis writes its reports (default: `target/conformance`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
}

impl ConformanceArgs {
    /// The options `cargo xtask ci` runs with: the command line's defaults and a fixed seed, so
    /// a CI run is reproducible (`cargo xtask conformance` alone explores with random seeds).
    pub fn ci_defaults() -> Self {
        ConformanceArgs {
            max_examples: 50,
            seed: Some(7),
            timeout: 900,
            schemathesis: None,
            mock_binary: None,
            report_dir: None,
        }
    }
}

/// Runs the conformance check; `Err` when anything fails.
pub fn run(args: ConformanceArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    let document = root.join("spec/openapi.effective.json");
    if !document.is_file() {
        bail!(
            "{} is missing; run `cargo xtask regen` first",
            document.display()
        );
    }
    let config = root.join(CONFIG_FILE);
    if !config.is_file() {
        bail!(
            "{} is missing: it configures the run (checks, warnings, authentication)",
            config.display()
        );
    }
    let reports = args
        .report_dir
        .clone()
        .unwrap_or_else(|| mock::target_dir(&root).join("conformance"));
    std::fs::create_dir_all(&reports).with_context(|| format!("creating {}", reports.display()))?;
    let schemathesis = find_schemathesis(&root, args.schemathesis.as_deref())?;
    let binary = match &args.mock_binary {
        Some(binary) => binary.clone(),
        None => mock::build_mock(&root)?,
    };

    let secret = mock::random_secret();
    let mut mock = MockProcess::start(
        &binary,
        CLIENT_ID,
        &secret,
        &MockOptions::default().args(MOCK_OPTIONS),
    )?;
    println!(
        "conformance: mock at {} ({})",
        mock.base_url,
        MOCK_OPTIONS.join(" ")
    );
    let token = fetch_token(&mock.token_url, CLIENT_ID, &secret)?;
    let seed = args
        .seed
        .unwrap_or_else(|| u64::from(rand::random::<u32>()));
    println!("conformance: schemathesis {SCHEMATHESIS_VERSION}, seed {seed}");

    let invocation = Invocation {
        schemathesis: &schemathesis,
        config: &config,
        document: &document,
        base_url: &mock.base_url,
        reports: &reports,
        max_examples: args.max_examples,
        seed,
    };
    let started = Instant::now();
    let outcome = run_schemathesis(&invocation, &token, Duration::from_secs(args.timeout));
    let mock_survived = mock.is_running();
    mock.stop();
    let status = outcome?;
    println!(
        "conformance: schemathesis {} in {:.0?}; reports in {}",
        if status.success() { "passed" } else { "FAILED" },
        started.elapsed(),
        reports.display()
    );
    if !mock_survived {
        bail!("the mock exited during the run");
    }
    if !status.success() {
        bail!(
            "schemathesis found failures or warnings ({status}); rerun with --seed {seed} to reproduce"
        );
    }
    println!(
        "conformance: every check, every phase: no failures, no warnings, every operation reached"
    );
    Ok(())
}

/// A client-credentials token from the mock's token endpoint.
fn fetch_token(token_url: &str, client_id: &str, secret: &str) -> anyhow::Result<String> {
    let http = reqwest::blocking::Client::builder()
        // A token request never follows a redirect: it would carry the secret elsewhere.
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .context("building an HTTP client")?;
    let response = http
        .post(token_url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client_id),
            ("client_secret", secret),
        ])
        .send()
        .with_context(|| format!("requesting a token from {token_url}"))?;
    let status = response.status();
    let body: Value = response.json().with_context(|| {
        format!("the token endpoint {token_url} answered {status} with no JSON")
    })?;
    if !status.is_success() {
        bail!(
            "the token endpoint {token_url} answered {status} ({})",
            body["error"].as_str().unwrap_or("no error code")
        );
    }
    body["access_token"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("the token response of {token_url} has no access_token"))
}

/// One schemathesis run.
struct Invocation<'a> {
    schemathesis: &'a Path,
    config: &'a Path,
    document: &'a Path,
    base_url: &'a str,
    reports: &'a Path,
    max_examples: u32,
    seed: u64,
}

impl Invocation<'_> {
    /// The command, with the token in its environment only.
    fn command(&self, token: &str) -> Command {
        let mut command = Command::new(self.schemathesis);
        command
            .current_dir(self.reports)
            .arg("--config-file")
            .arg(self.config)
            .arg("run")
            .arg(self.document)
            .args(["--url", self.base_url])
            .args(["--checks", "all"])
            .args(["--phases", PHASES])
            .args(["--max-examples", &self.max_examples.to_string()])
            .args(["--seed", &self.seed.to_string()])
            .args(["--report", "junit,ndjson"])
            .arg("--report-dir")
            .arg(self.reports)
            .arg("--no-color")
            .env(TOKEN_VARIABLE, token)
            .stdin(Stdio::null());
        command
    }
}

/// Runs schemathesis to completion, or kills it after `timeout`.
fn run_schemathesis(
    invocation: &Invocation<'_>,
    token: &str,
    timeout: Duration,
) -> anyhow::Result<ExitStatus> {
    let mut child = invocation
        .command(token)
        .spawn()
        .with_context(|| format!("starting {}", invocation.schemathesis.display()))?;
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("schemathesis ran longer than {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The release an executable reports with `--version` (`schemathesis, version 4.32.5`).
fn version_of(executable: &Path) -> Option<String> {
    let output = Command::new(executable)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .last()
        .map(str::to_owned)
}

/// The pinned schemathesis: `explicit` as given, else the first of PATH and `.venv/bin` that
/// is the pinned release, else the pinned release installed into `.venv`.
fn find_schemathesis(root: &Path, explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    let venv = root.join(".venv");
    let in_venv = venv.join("bin/schemathesis");
    let on_path = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|directory| directory.join("schemathesis"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for candidate in on_path.iter().chain([&in_venv]) {
        if candidate.is_file() && version_of(candidate).as_deref() == Some(SCHEMATHESIS_VERSION) {
            return Ok(candidate.clone());
        }
    }
    println!(
        "conformance: installing schemathesis {SCHEMATHESIS_VERSION} into {}",
        venv.display()
    );
    if !venv.join("bin/pip").is_file() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("running python3 -m venv (is Python 3 installed, with its venv module?)")?;
        if !status.success() {
            bail!("python3 -m venv {} failed", venv.display());
        }
    }
    let status = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            &format!("schemathesis=={SCHEMATHESIS_VERSION}"),
        ])
        .status()
        .context("running pip install schemathesis")?;
    if !status.success() || version_of(&in_venv).as_deref() != Some(SCHEMATHESIS_VERSION) {
        bail!(
            "installing schemathesis=={SCHEMATHESIS_VERSION} into {} failed",
            venv.display()
        );
    }
    Ok(in_venv)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    const TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.conformance-test-token.c2lnbmF0dXJl";

    fn invocation<'a>(schemathesis: &'a Path, reports: &'a Path) -> Invocation<'a> {
        Invocation {
            schemathesis,
            config: Path::new("schemathesis.toml"),
            document: Path::new("openapi.json"),
            base_url: "http://127.0.0.1:1",
            reports,
            max_examples: 1,
            seed: 7,
        }
    }

    /// Every file under `dir` whose bytes contain `needle`.
    fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).expect("readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(files_containing(&path, needle));
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
        found
    }

    #[test]
    fn the_token_travels_in_the_environment_only() {
        let reports = tempfile::tempdir().unwrap();
        let command = invocation(Path::new("schemathesis"), reports.path()).command(TOKEN);
        assert!(
            command
                .get_args()
                .all(|arg| !arg.to_string_lossy().contains(TOKEN)),
            "the token is on the command line"
        );
        let environment: Vec<_> = command.get_envs().collect();
        assert_eq!(
            environment,
            [(OsStr::new(TOKEN_VARIABLE), Some(OsStr::new(TOKEN)))]
        );
        let args: Vec<String> = command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        assert!(joined.contains("--checks all"), "{joined}");
        assert!(joined.contains(&format!("--phases {PHASES}")), "{joined}");
        assert!(!joined.contains("exclude"), "{joined}");
    }

    /// A stand-in for schemathesis that proves it received the token, then fails or succeeds.
    #[cfg(unix)]
    fn fake_schemathesis(dir: &Path, exit_code: i32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("schemathesis");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n[ -n \"${TOKEN_VARIABLE}\" ] && echo received > token-received\nexit {exit_code}\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[cfg(unix)]
    #[test]
    fn no_file_holds_the_token_after_a_run_that_passes_fails_or_times_out() {
        let bin = tempfile::tempdir().unwrap();
        for (exit_code, expect_success) in [(0, true), (1, false)] {
            let reports = tempfile::tempdir().unwrap();
            let script = fake_schemathesis(bin.path(), exit_code);
            let status = run_schemathesis(
                &invocation(&script, reports.path()),
                TOKEN,
                Duration::from_secs(60),
            )
            .expect("it ran");
            assert_eq!(status.success(), expect_success);
            assert!(
                reports.path().join("token-received").is_file(),
                "the token reached schemathesis"
            );
            assert_eq!(
                files_containing(reports.path(), TOKEN),
                Vec::<PathBuf>::new()
            );
        }

        // A run that never ends is killed, and leaves nothing behind either.
        let reports = tempfile::tempdir().unwrap();
        let script = bin.path().join("schemathesis-hangs");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 600\n").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let error = run_schemathesis(&invocation(&script, reports.path()), TOKEN, Duration::ZERO)
            .unwrap_err();
        assert!(error.to_string().contains("ran longer than"), "{error}");
        assert_eq!(
            files_containing(reports.path(), TOKEN),
            Vec::<PathBuf>::new()
        );
    }

    /// The checked-in configuration: authentication from the environment, no secret, no seeded
    /// ids, no check turned off, and warnings that fail the run.
    #[test]
    fn the_checked_in_configuration_runs_everything_and_holds_no_secret() {
        let path = workspace_root().join(CONFIG_FILE);
        let text = std::fs::read_to_string(&path).expect("schemathesis.toml is checked in");
        let config: toml::Table = text.parse().expect("schemathesis.toml is TOML");
        assert_eq!(
            config["headers"]["Authorization"].as_str(),
            Some(format!("Bearer ${{{TOKEN_VARIABLE}}}").as_str())
        );
        assert!(!text.contains("eyJ"), "a literal token in {CONFIG_FILE}");
        // Ids come from links: nothing seeds a path parameter.
        let seeded: Vec<&String> = config
            .get("parameters")
            .and_then(toml::Value::as_table)
            .into_iter()
            .flatten()
            .map(|(name, _)| name)
            .filter(|name| !name.starts_with("body.") && !name.starts_with("query."))
            .collect();
        assert!(seeded.is_empty(), "seeded parameters: {seeded:?}");
        assert_eq!(
            config["warnings"]["fail-on"].as_bool(),
            Some(true),
            "every warning fails the run"
        );
        // No `enabled = false` anywhere: every check and phase runs, for every operation.
        assert!(
            !text
                .lines()
                .map(|line| line.split('#').next().unwrap_or_default().replace(' ', ""))
                .any(|line| line.contains("enabled=false")),
            "something is switched off in {CONFIG_FILE}"
        );
    }

    #[test]
    fn versions_are_read_from_the_version_line() {
        let dir = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let script = dir.path().join("schemathesis");
            std::fs::write(&script, "#!/bin/sh\necho 'schemathesis, version 4.32.5'\n").unwrap();
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(version_of(&script).as_deref(), Some("4.32.5"));
        }
        assert_eq!(version_of(&dir.path().join("missing")), None);
    }
}
