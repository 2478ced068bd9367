//! `cargo xtask ci`'s quickstart step: the README's end-to-end, run as a check.
//!
//! Starts the mock, runs `cargo run -p creditdata-client --example quickstart -- EMAIL` with the
//! `CREDITDATA_*` variables the mock prints, and checks the contract of the example: exit 0, one
//! JSON object per line on stdout, every step present, and a PDF report on disk.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use creditdata_codegen::{datasets, document};

use crate::mock::{MockOptions, MockProcess, build_mock, random_secret};
use crate::regen::workspace_root;

/// The steps the quickstart must report, at least once each.
const REQUIRED_STEPS: &[&str] = &[
    "create_session",
    "get_session",
    "list_sessions",
    "dataset",
    "download_pdf_report",
];

/// The JSON datasets the quickstart must summarize, each on its own `dataset` line, read with
/// `Client::session_datasets`: every dataset of the effective description (the list the client
/// is generated from) but the deprecated ones, which are read only when asked.
fn required_datasets(root: &Path) -> anyhow::Result<Vec<String>> {
    let path = root.join("spec/openapi.effective.json");
    let effective = document::load(&path)
        .with_context(|| format!("reading {} (run `cargo xtask regen`)", path.display()))?;
    let datasets = datasets::session_datasets(&effective)
        .with_context(|| format!("the datasets of {}", path.display()))?;
    Ok(datasets
        .into_iter()
        .filter(|dataset| !dataset.deprecated)
        .map(|dataset| dataset.name)
        .collect())
}

pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    let required = required_datasets(&root)?;
    let binary = build_mock(&root)?;
    let secret = random_secret();
    let mut mock = MockProcess::start(
        &binary,
        "quickstart",
        &secret,
        &MockOptions::default().args(["--provider-delay", "0s"]),
    )?;
    let out_dir = tempfile::tempdir().context("creating a temporary output directory")?;
    let base = mock.base_url.clone();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(&root)
        .args([
            "run",
            "--quiet",
            "-p",
            "creditdata-client",
            "--example",
            "quickstart",
            "--",
        ])
        .arg("jane.doe@example.com")
        .env("CREDITDATA_BASE_URL", &base)
        .env("CREDITDATA_TOKEN_URL", &mock.token_url)
        .env("CREDITDATA_CLIENT_ID", "quickstart")
        .env("CREDITDATA_CLIENT_SECRET", &secret)
        .env("CREDITDATA_OUT_DIR", out_dir.path())
        .env_remove("CREDITDATA_TOKEN")
        .env_remove("CREDITDATA_ENVIRONMENT")
        .output()
        .context("running the quickstart example")?;
    mock.stop();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("the quickstart failed ({}):\n{stderr}", output.status);
    }
    let mut seen = BTreeSet::new();
    let mut summarized = BTreeSet::new();
    for (number, line) in stdout.lines().enumerate() {
        let value: serde_json::Value = serde_json::from_str(line).with_context(|| {
            format!("quickstart stdout line {} is not JSON: {line}", number + 1)
        })?;
        let Some(step) = value.get("step").and_then(serde_json::Value::as_str) else {
            bail!(
                "quickstart stdout line {} has no \"step\": {line}",
                number + 1
            );
        };
        seen.insert(step.to_string());
        if step == "dataset"
            && let Some(name) = value.get("dataset").and_then(serde_json::Value::as_str)
            && value.get("summary").is_some()
        {
            summarized.insert(name.to_string());
        }
    }
    let missing: Vec<&str> = REQUIRED_STEPS
        .iter()
        .copied()
        .filter(|s| !seen.contains(*s))
        .collect();
    if !missing.is_empty() {
        bail!("the quickstart did not report the step(s) {missing:?}; it printed:\n{stdout}");
    }
    let unread: Vec<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|d| !summarized.contains(*d))
        .collect();
    if !unread.is_empty() {
        bail!("the quickstart did not summarize the dataset(s) {unread:?}; it printed:\n{stdout}");
    }
    let pdfs: Vec<_> = std::fs::read_dir(out_dir.path())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| std::fs::read(p).is_ok_and(|bytes| bytes.starts_with(b"%PDF-")))
        .collect();
    if pdfs.is_empty() {
        bail!(
            "the quickstart reported success but wrote no PDF report to {}",
            out_dir.path().display()
        );
    }
    println!(
        "quickstart: {} steps reported ({}), PDF report {}",
        stdout.lines().count(),
        seen.into_iter().collect::<Vec<_>>().join(", "),
        pdfs[0]
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    Ok(())
}
