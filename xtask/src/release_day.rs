//! `cargo xtask release-day`: the vendor's release, rehearsed end to end on a copy of the
//! workspace, with no hand-written line.
//!
//! A release is made from today's vendored description (an overlay applied to
//! `spec/openapi.json`: by default one made by code from whatever that description is,
//! [`made_release`], so it applies however much the vendor has published; or `--release FILE`)
//! and published, JSON and YAML, by a publisher stand-in on loopback. In a copy of the workspace
//! (every file git tracks or would track, as it is on disk), the commands a maintainer runs on
//! release day run as they are: `drift` must classify the release (exit 3 for an additive one),
//! `fetch` vendors it, `regen` regenerates, and `ci` (every step but this one) must pass. Then
//! the copy's mock and `creditdata` command must serve, list and export every JSON dataset the
//! release added below a Session: the operations are found by comparing the two descriptions,
//! never named here.
//!
//! Around it, the behaviour check ([`crate::decisions`]): an unchanged lending program
//! (`examples/lender-decisions`) runs against this workspace and its mock before the release and
//! against the regenerated copy and its mock after, both mocks seeded alike; a compatible release
//! must change none of its decisions and none of the `api-version` headers it sends.
//!
//! The copy builds in `target/release-day/` of this workspace, so this workspace's artifacts are
//! never overwritten, seeded with hard links to this workspace's compiled dependencies
//! (`build_seed.rs`): a fresh machine compiles them once, not twice.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use anyhow::{Context, anyhow, ensure};
use clap::Args;
use creditdata_codegen::document::{self, Format};
use creditdata_codegen::made_release;
use creditdata_codegen::overlay::{self, ApplyOptions};
use serde_json::Value;

use crate::mock::{MockOptions, MockProcess, build_mock, random_secret};
use crate::regen::workspace_root;
use crate::{build_seed, changelog, decisions, semver_check};

/// Where the publisher stand-in serves the release.
const JSON_PATH: &str = "/openapi/v1.json";
const YAML_PATH: &str = "/openapi/v1.yaml";

/// Rehearse a vendor release on a copy of the workspace: publish it on loopback, then drift,
/// fetch, regen and ci in the copy with no hand edit, and check that the mock serves and
/// `creditdata datasets all` / `creditdata export` write every dataset the release adds.
#[derive(Args, Debug)]
pub struct ReleaseDayArgs {
    /// The release: an OAI overlay applied to spec/openapi.json [default: one made from
    /// spec/openapi.json as it is, adding a dataset, a listing and its entries, members,
    /// parameters, enum values, a version and deprecations; --print-release shows it].
    #[arg(long, value_name = "OVERLAY")]
    release: Option<PathBuf>,
    /// Print the release (the overlay, YAML) that would be rehearsed, and stop.
    #[arg(long)]
    print_release: bool,
    /// Rehearse a breaking release made from spec/openapi.json instead (a dataset's items lose a
    /// member): drift must exit 4, then fetch, regen and the version check (no ci).
    #[arg(long, conflicts_with = "release")]
    breaking: bool,
    /// The exit status `cargo xtask drift` must give for the release: 3 for a compatible
    /// release, 4 for a breaking one (then the rehearsal stops after drift, as a maintainer
    /// would).
    #[arg(long, value_name = "STATUS", default_value_t = 3)]
    expect_drift: u8,
    /// Steps of the copy's `cargo xtask ci` to skip (repeatable); `release-day` is always
    /// skipped there.
    #[arg(long, value_name = "STEP")]
    skip: Vec<String>,
    /// Make the copy here (a new, empty directory) and keep it, instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

impl Default for ReleaseDayArgs {
    /// What `cargo xtask ci` runs: the default additive release, which drift must call
    /// compatible.
    fn default() -> Self {
        ReleaseDayArgs {
            release: None,
            print_release: false,
            breaking: false,
            expect_drift: 3,
            skip: Vec::new(),
            keep: None,
        }
    }
}

pub fn run(args: &ReleaseDayArgs) -> anyhow::Result<()> {
    let root = workspace_root();
    let before = document::load(&root.join("spec/openapi.json"))?;
    let Some((release, published)) = the_release(&root, &before, args)? else {
        return Ok(());
    };
    let added = added_datasets(&before, &published);
    println!(
        "release-day: {release} adds {} dataset(s) below a Session: {}",
        added.len(),
        added.iter().cloned().collect::<Vec<_>>().join(", ")
    );

    // Before the release: what the unchanged program decides against this workspace.
    println!("release-day: {} against this workspace", decisions::PROGRAM);
    let mock = build_mock(&root)?;
    let before = decisions::run(&root, &crate::mock::target_dir(&root), &mock, &[])?;
    println!(
        "release-day: {} decision(s) before the release",
        before.decisions.len()
    );

    let _temp;
    let copy = match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            ensure!(
                std::fs::read_dir(dir)?.next().is_none(),
                "{} is not empty: --keep needs a new, empty directory",
                dir.display()
            );
            dir.clone()
        }
        None => {
            _temp = tempfile::Builder::new()
                .prefix("creditdata-release-day-")
                .tempdir()
                .context("cannot create a temporary directory")?;
            _temp.path().to_path_buf()
        }
    };
    let copied = copy_workspace(&root, &copy)?;
    println!("release-day: copied {copied} files to {}", copy.display());
    // A repository of its own, as a clean clone is: the copy's tests may ask git, and its
    // history shows afterwards exactly what release day changed.
    git(&copy, &["init", "--quiet"])?;
    git(&copy, &["add", "--all"])?;
    git(
        &copy,
        &[
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            "before the release",
        ],
    )?;
    let target = crate::mock::target_dir(&root).join("release-day");
    let seeded = build_seed::seed(
        &build_dir(&root)?,
        &target,
        &build_seed::local_packages(&copy)?,
    )?;
    println!(
        "release-day: {} files of this workspace's compiled dependencies linked into {}; its own \
         packages ({} files) are built from the copy",
        seeded.linked,
        target.display(),
        seeded.left
    );
    let env = CopyEnv::new(&root, &copy, &target);

    let publisher = Publisher::start(
        document::to_string(&published, Format::Json),
        document::to_string(&published, Format::Yaml),
    )?;
    let url = format!("{}{JSON_PATH}", publisher.base);

    // 1. The scheduled job: what would the release change?
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let report = scratch.path().join("drift.json");
    let drift = env
        .xtask(&["drift", "--url", &url, "--json-out"])
        .arg(&report)
        .status()
        .context("running cargo xtask drift in the copy")?;
    let code = drift.code().unwrap_or(-1);
    let expected = if args.breaking { 4 } else { args.expect_drift };
    ensure!(
        code == i32::from(expected),
        "cargo xtask drift exited {code}, expected {expected} for this release",
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report)?)?;
    println!(
        "release-day: drift exit {code}; suggested version {}",
        report
            .pointer("/semver/suggested")
            .and_then(Value::as_str)
            .unwrap_or("(none)")
    );
    if expected == 4 {
        return breaking_release_version(&env, &root, &url, &report);
    }

    // 2. Release day itself: vendor, regenerate, check, with no hand edit in between.
    run_ok(env.xtask(&["fetch", "--url", &url]), "cargo xtask fetch")?;
    run_ok(env.xtask(&["regen"]), "cargo xtask regen")?;
    let changed = git_output(&copy, &["status", "--porcelain", "--untracked-files=all"])?;
    println!("release-day: what fetch and regen changed, with no hand edit:\n{changed}");
    // The crate's release: the changelog regen fed, the version cut, the tool's verdict.
    check_release_version(&env, &root, &report)?;
    run_ok(env.xtask(&["cut-release"]), "cargo xtask cut-release")?;
    check_cut(&env, &report)?;
    let mut ci = env.xtask(&["ci", "--skip", "release-day"]);
    for step in &args.skip {
        ci.args(["--skip", step]);
    }
    run_ok(ci, "cargo xtask ci")?;
    run_ok(
        env.cargo(crate::mock::BUILD_BINARIES),
        "cargo build of creditdata-mock and creditdata",
    )?;

    // 3. What existing code does: the same decisions and headers as before the release.
    let after = decisions::run(
        &env.copy,
        &env.target,
        &env.binary("creditdata-mock"),
        &[("CARGO_BUILD_BUILD_DIR", env.target.as_os_str())],
    )?;
    let compared = decisions::compare(&before, &after);
    for note in &compared.notes {
        println!("release-day: {note}");
    }
    ensure!(
        compared.differences.is_empty(),
        "the release changes what an unchanged program ({}) does; a compatible release must \
         not:\n  {}",
        decisions::PROGRAM,
        compared.differences.join("\n  ")
    );
    println!(
        "release-day: {} decision(s) and every header the same after the release",
        after.decisions.len()
    );

    // 4. What users see: the mock serves the new datasets, the CLI lists and exports them.
    check_served_and_exported(&env, &added)?;
    println!(
        "release-day: ok ({} new dataset(s) served, listed and exported)",
        added.len()
    );
    Ok(())
}

/// The copy's changelog holds the regeneration's report under `Unreleased`, with the bump the
/// drift report called for, and cargo-semver-checks between this workspace's client and the
/// copy's agrees with the report's suggested version ([`semver_check`]).
fn check_release_version(env: &CopyEnv, root: &Path, report: &Value) -> anyhow::Result<()> {
    let bump = report
        .pointer("/semver/bump")
        .and_then(Value::as_str)
        .context("the drift report has no semver.bump")?;
    let path = env.copy.join(changelog::CHANGELOG);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("regen wrote no {}", path.display()))?;
    let recorded: Vec<String> = changelog::unreleased_bumps(&text)?
        .into_iter()
        .map(|b| format!("{b:?}").to_ascii_lowercase())
        .collect();
    ensure!(
        recorded == [bump],
        "{} records {recorded:?} under Unreleased after regen; the drift report calls for \
         [{bump:?}]",
        changelog::CHANGELOG
    );
    println!(
        "release-day: {} has the report under Unreleased (bump {bump})",
        changelog::CHANGELOG
    );
    let verdict = semver_check::run_tool(
        &env.copy,
        root,
        &[
            ("CARGO_TARGET_DIR", &env.target),
            ("CARGO_BUILD_BUILD_DIR", &env.target),
        ],
    )?;
    println!("release-day: {}", semver_check::agree(report, &verdict)?);
    Ok(())
}

/// After `cargo xtask cut-release` in the copy: the client's version is the suggested one and
/// the changelog has its section.
fn check_cut(env: &CopyEnv, report: &Value) -> anyhow::Result<()> {
    let suggested = report
        .pointer("/semver/suggested")
        .and_then(Value::as_str)
        .context("the drift report has no semver.suggested")?;
    let manifest = std::fs::read_to_string(env.copy.join(changelog::CLIENT_MANIFEST))?;
    let version = manifest
        .parse::<toml::Table>()?
        .get("package")
        .and_then(|p| p.get("version"))
        .and_then(|v| v.as_str())
        .map(str::to_string);
    ensure!(
        version.as_deref() == Some(suggested),
        "after cut-release, {} has version {version:?}; the report suggests {suggested}",
        changelog::CLIENT_MANIFEST
    );
    let text = std::fs::read_to_string(env.copy.join(changelog::CHANGELOG))?;
    ensure!(
        text.contains(&format!("\n## {suggested} - "))
            && changelog::unreleased_bumps(&text)?.is_empty(),
        "after cut-release, {} has no section for {suggested}, or still something unreleased",
        changelog::CHANGELOG
    );
    println!(
        "release-day: cut-release set creditdata-client {suggested} and its changelog section"
    );
    Ok(())
}

/// A breaking release, after drift: a maintainer releasing a breaking version vendors and
/// regenerates it too, and the version check applies as for any release; the workspace's own
/// code is not expected to compile with it, so no `ci`. When `regen` stops (an overlay whose
/// target the release removed), that is the maintainer's next step, not a failure.
fn breaking_release_version(
    env: &CopyEnv,
    root: &Path,
    url: &str,
    report: &Value,
) -> anyhow::Result<()> {
    run_ok(env.xtask(&["fetch", "--url", url]), "cargo xtask fetch")?;
    if let Err(e) = run_ok(env.xtask(&["regen"]), "cargo xtask regen") {
        println!(
            "release-day: regen stops on this breaking release ({e:#}); the version is not \
             checked"
        );
        return Ok(());
    }
    check_release_version(env, root, report)
}

/// The release to rehearse, named, and the description it publishes: `--release FILE` applied
/// to `before`, or the release made from `before` ([`made_release`]). `None` when
/// `--print-release` printed it instead.
fn the_release(
    root: &Path,
    before: &Value,
    args: &ReleaseDayArgs,
) -> anyhow::Result<Option<(String, Value)>> {
    let spec = root.join("spec/openapi.json");
    if let Some(file) = &args.release {
        if args.print_release {
            print!(
                "{}",
                std::fs::read_to_string(file)
                    .with_context(|| { format!("cannot read {}", file.display()) })?
            );
            return Ok(None);
        }
        let published = overlay::apply_files(
            &spec,
            std::slice::from_ref(file),
            &ApplyOptions { lenient: false },
        )
        .with_context(|| format!("the release {} does not apply", file.display()))?
        .document;
        return Ok(Some((file.display().to_string(), published)));
    }
    let made = if args.breaking {
        made_release::breaking(before)
    } else {
        made_release::make(before)
    }
    .with_context(|| format!("making a release from {}", spec.display()))?;
    if args.print_release {
        print!("{}", document::to_string(&made.overlay, Format::Yaml));
        return Ok(None);
    }
    for line in &made.additions {
        println!("release-day: the made release adds {line}");
    }
    for line in &made.left_out {
        println!("release-day: the made release leaves out {line}");
    }
    let published = made.apply(before)?;
    Ok(Some((
        format!("the release made from {}", spec.display()),
        published,
    )))
}

/// The last path segment of every JSON GET the release added directly below a Session, taking
/// no parameter but the session's: the datasets the workspace must pick up by itself.
fn added_datasets(before: &Value, after: &Value) -> BTreeSet<String> {
    const SESSION: &str = "/v1/sessions/{sessionId}/";
    let old_paths = before.get("paths").and_then(Value::as_object);
    let mut added = BTreeSet::new();
    for (path, item) in after
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let Some(rest) = path.strip_prefix(SESSION) else {
            continue;
        };
        if rest.contains('/') || rest.contains('{') {
            continue;
        }
        if old_paths.is_some_and(|p| p.get(path).and_then(|i| i.get("get")).is_some()) {
            continue;
        }
        let Some(get) = item.get("get") else { continue };
        let json = get
            .pointer("/responses/200/content")
            .and_then(Value::as_object)
            .is_some_and(|c| c.keys().any(|k| k.contains("json")));
        if json {
            added.insert(rest.to_string());
        }
    }
    added
}

/// Copies every file git tracks or would track (untracked but not ignored), as it is on disk;
/// returns how many.
fn copy_workspace(root: &Path, copy: &Path) -> anyhow::Result<usize> {
    let listed = Command::new("git")
        .current_dir(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .context("running git ls-files (release-day copies the files git knows)")?;
    ensure!(
        listed.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&listed.stderr).trim()
    );
    let mut count = 0;
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).context("a file name that is not UTF-8")?;
        let from = root.join(name);
        // Listed but deleted in the work tree: the copy is the work tree as it is.
        if !from.is_file() {
            continue;
        }
        let to = copy.join(name);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::copy(&from, &to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        count += 1;
    }
    ensure!(count > 0, "git lists no file in {}", root.display());
    Ok(count)
}

/// This workspace's build directory, where its compiled dependencies are, as cargo resolves it
/// (`build.build-dir`, by default the target directory).
fn build_dir(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo metadata")?;
    ensure!(
        output.status.success(),
        "cargo metadata failed ({}) in {}",
        output.status,
        root.display()
    );
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("cargo metadata printed no JSON")?;
    metadata
        .get("build_directory")
        .or_else(|| metadata.get("target_directory"))
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("cargo metadata names no build or target directory"))
}

/// How commands run in the copy: its own target directory (its build directory too), this
/// workspace's schemathesis.
struct CopyEnv {
    copy: PathBuf,
    target: PathBuf,
    path: Option<std::ffi::OsString>,
}

impl CopyEnv {
    fn new(root: &Path, copy: &Path, target: &Path) -> CopyEnv {
        // The conformance step looks for schemathesis on PATH before installing it into the
        // copy's .venv: this workspace's pinned install serves both.
        let venv_bin = root.join(".venv/bin");
        let path = venv_bin.is_dir().then(|| {
            let mut dirs = vec![venv_bin];
            dirs.extend(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            ));
            std::env::join_paths(dirs).unwrap_or_default()
        });
        CopyEnv {
            copy: copy.to_path_buf(),
            target: target.to_path_buf(),
            path,
        }
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.copy)
            .env("CARGO_TARGET_DIR", &self.target)
            // Its build directory too, whatever a configuration file says: never this
            // workspace's (build_seed.rs says why).
            .env("CARGO_BUILD_BUILD_DIR", &self.target)
            .stdin(Stdio::null());
        if let Some(path) = &self.path {
            command.env("PATH", path);
        }
        command
    }

    fn cargo(&self, args: &[&str]) -> Command {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = self.command(cargo);
        command.args(args);
        command
    }

    fn xtask(&self, args: &[&str]) -> Command {
        let mut command = self.cargo(&["run", "--quiet", "--package", "xtask", "--"]);
        command.args(args);
        command
    }

    fn binary(&self, name: &str) -> PathBuf {
        self.target.join("debug").join(name)
    }
}

/// Runs git in `dir` with an identity of its own (the machine may have none).
fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    git_output(dir, args).map(drop)
}

fn git_output(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=release-day",
            "-c",
            "user.email=release-day@localhost",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .with_context(|| format!("cannot run git {}", args.join(" ")))?;
    ensure!(
        output.status.success(),
        "git {} failed in {}: {}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn run_ok(mut command: Command, what: &str) -> anyhow::Result<()> {
    println!("release-day: {what}");
    let status = command
        .status()
        .with_context(|| format!("cannot run {what}"))?;
    ensure!(status.success(), "{what} failed in the copy ({status})");
    Ok(())
}

fn output_ok(mut command: Command, what: &str) -> anyhow::Result<Output> {
    let output = command
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    ensure!(
        output.status.success(),
        "{what} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(output)
}

/// Starts the copy's mock (built), creates and completes a Session with the copy's `creditdata`,
/// and checks every added dataset in `datasets all` and in an export.
fn check_served_and_exported(env: &CopyEnv, added: &BTreeSet<String>) -> anyhow::Result<()> {
    let secret = random_secret();
    let mut mock = MockProcess::start(
        &env.binary("creditdata-mock"),
        "release-day",
        &secret,
        // Providers that answer at once and never fail: `datasets all` exits 7 when one fails
        // (8 while one is pending), and this checks the release's datasets, not providers.
        &MockOptions::default().args(["--provider-delay", "0s", "--provider-error-one-in", "0"]),
    )?;
    let result = (|| {
        let cli = |args: &[&str]| {
            let mut command = env.command(env.binary("creditdata"));
            command
                .args(args)
                .env("CREDITDATA_BASE_URL", &mock.base_url)
                .env("CREDITDATA_TOKEN_URL", &mock.token_url)
                .env("CREDITDATA_CLIENT_ID", "release-day")
                .env("CREDITDATA_CLIENT_SECRET", &secret)
                .env("HOME", &env.copy)
                .env("XDG_CONFIG_HOME", env.copy.join(".config"))
                .env_remove("CREDITDATA_TOKEN")
                .env_remove("CREDITDATA_ENVIRONMENT")
                .env_remove("CREDITDATA_PROFILE");
            command
        };
        let created = output_ok(
            cli(&[
                "sessions",
                "create",
                "--email",
                "jane.doe@example.com",
                "--query",
                "GBR:SCORE",
                "--output",
                "json",
            ]),
            "creditdata sessions create",
        )?;
        let session: Value = serde_json::from_slice(&created.stdout)
            .context("creditdata sessions create printed no JSON session")?;
        let id = session["id"]
            .as_str()
            .ok_or_else(|| anyhow!("the created session has no id: {session}"))?
            .to_string();
        let completed = reqwest::blocking::Client::new()
            .post(format!("{}/_mock/sessions/{id}/complete", mock.base_url))
            .header("X-Creditdata-Mock", "1")
            .timeout(Duration::from_secs(30))
            .send()
            .context("asking the mock to complete the customer's part")?;
        ensure!(
            completed.status().is_success(),
            "the mock refused to complete the session: {}",
            completed.status()
        );

        let all = output_ok(
            cli(&["datasets", "all", &id, "--output", "json"]),
            "creditdata datasets all",
        )?;
        let all = String::from_utf8_lossy(&all.stdout);
        for name in added {
            ensure!(
                all.contains(&format!("\"{name}\"")),
                "creditdata datasets all does not show the new dataset {name}"
            );
        }

        let out = env.copy.join("exported");
        let out_arg = out.display().to_string();
        output_ok(
            cli(&["export", "--out", &out_arg, "--output", "json"]),
            "creditdata export",
        )?;
        let manifest_path = out.join("sessions").join(&id).join("manifest.json");
        let manifest: Value = serde_json::from_slice(
            &std::fs::read(&manifest_path)
                .with_context(|| format!("export wrote no {}", manifest_path.display()))?,
        )?;
        ensure!(
            manifest["complete"] == true,
            "the export does not call the session complete: {manifest}"
        );
        for name in added {
            let key = format!("dataset:{name}");
            let file = manifest["files"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["key"] == key.as_str())
                .ok_or_else(|| anyhow!("the export's manifest has no {key}"))?;
            let path = out
                .join("sessions")
                .join(&id)
                .join(file["path"].as_str().unwrap_or_default());
            let body: Value = serde_json::from_slice(
                &std::fs::read(&path)
                    .with_context(|| format!("export wrote no {}", path.display()))?,
            )
            .with_context(|| format!("{} is not JSON", path.display()))?;
            ensure!(body.is_object(), "{} is not a dataset body", path.display());
            println!("release-day: exported {key} to {}", path.display());
        }
        Ok(())
    })();
    mock.stop();
    result
}

/// The vendor's publisher, on loopback: serves the release's JSON and YAML documents.
struct Publisher {
    base: String,
    server: std::sync::Arc<tiny_http::Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Publisher {
    fn start(json: String, yaml: String) -> anyhow::Result<Publisher> {
        let server = tiny_http::Server::http("127.0.0.1:0")
            .map_err(|e| anyhow!("cannot start the publisher stand-in on loopback: {e}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| anyhow!("the publisher stand-in has no IP address"))?;
        let server = std::sync::Arc::new(server);
        let serving = std::sync::Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            for request in serving.incoming_requests() {
                let (body, content_type) = match request.url() {
                    JSON_PATH => (json.clone(), "application/json"),
                    YAML_PATH => (yaml.clone(), "application/yaml"),
                    _ => {
                        let _ = request.respond(tiny_http::Response::empty(404));
                        continue;
                    }
                };
                let header = tiny_http::Header::from_bytes("Content-Type", content_type)
                    .expect("a valid header");
                let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
            }
        });
        Ok(Publisher {
            base: format!("http://127.0.0.1:{port}"),
            server,
            thread: Some(thread),
        })
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_new_json_gets_directly_below_a_session_are_added_datasets() {
        let json_200 = json!({"responses": {"200": {"content": {"application/json": {}}}}});
        let pdf_200 = json!({"responses": {"200": {"content": {"application/pdf": {}}}}});
        let before = json!({"paths": {
            "/v1/sessions/{sessionId}/scores": {"get": json_200},
        }});
        let after = json!({"paths": {
            "/v1/sessions/{sessionId}/scores": {"get": json_200},
            "/v1/sessions/{sessionId}/employment-histories": {"get": json_200},
            "/v1/sessions/{sessionId}/tax-report": {"get": pdf_200},
            "/v1/sessions/{sessionId}/employers/{employerId}": {"get": json_200},
            "/v1/sessions/{sessionId}/notes": {"post": json_200},
            "/v1/employers": {"get": json_200},
        }});
        assert_eq!(
            added_datasets(&before, &after),
            BTreeSet::from(["employment-histories".to_string()])
        );
    }

    #[test]
    fn the_copy_holds_what_git_knows_and_not_what_it_ignores() {
        let copy = tempfile::tempdir().unwrap();
        let root = workspace_root();
        let count = copy_workspace(&root, copy.path()).unwrap();
        assert!(count > 100, "{count}");
        assert!(copy.path().join("Cargo.toml").is_file());
        assert!(copy.path().join("spec/openapi.json").is_file());
        assert!(!copy.path().join("target").exists());
    }
}
