//! `cargo xtask ci`'s consumer-app step: `examples/consumer-app`, a project outside the
//! workspace that depends on the client as a user's project does, built and run against the mock.

use std::process::Command;

use anyhow::{Context, bail};

use crate::mock::{MockOptions, MockProcess, build_mock, random_secret, target_dir};
use crate::regen::workspace_root;

/// `examples/consumer-app`, a project outside the workspace that depends on the client as a
/// user's project does, built and run against the mock. Its lock file is seeded from the
/// workspace's, so it builds with the versions the workspace is tested with (offline too, once
/// they are downloaded), and its build shares the workspace's target directory.
pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    let app = root.join("examples/consumer-app");
    std::fs::copy(root.join("Cargo.lock"), app.join("Cargo.lock"))
        .context("seeding examples/consumer-app/Cargo.lock from the workspace's")?;
    let binary = build_mock(&root)?;
    let secret = random_secret();
    let mut mock = MockProcess::start(&binary, "consumer-app", &secret, &MockOptions::default())?;
    let base = mock.base_url.clone();
    let target_dir = target_dir(&root);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(&app)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(app.join("Cargo.toml"))
        .args(["--", "consumer.app@example.com"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CREDITDATA_BASE_URL", &base)
        .env("CREDITDATA_TOKEN_URL", &mock.token_url)
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
