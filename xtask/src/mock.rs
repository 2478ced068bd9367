//! The `creditdata-mock` binary as a child process, for the steps that need a running service
//! (`cargo xtask conformance`, the quickstart step of `cargo xtask ci`).

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use rand::Rng;
use rand::distributions::Alphanumeric;

/// How long a starting mock may take to announce its address.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// `CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// A client secret for one run: 32 random alphanumerics, never written anywhere.
pub fn random_secret() -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(32)
        .map(char::from)
        .collect()
}

/// How the checks build the binaries they start (the mock, the `creditdata` command): as
/// `cargo test --workspace` builds them, the whole workspace selected and its examples with it.
/// The dependencies' features then unify exactly as for the tests (dev-dependencies in play), so
/// after the test step nothing is compiled again. Built with `-p creditdata-mock` alone, every
/// dependency the mock shares with the tests would be compiled a second time with other
/// features: on a fresh machine, minutes and several hundred megabytes of disk.
pub const BUILD_BINARIES: &[&str] = &[
    "build",
    "--quiet",
    "--workspace",
    "--bin",
    "creditdata-mock",
    "--bin",
    "creditdata",
    "--examples",
];

/// Builds the mock (debug, [`BUILD_BINARIES`]) and returns the binary's path.
pub fn build_mock(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(BUILD_BINARIES)
        .status()
        .context("running cargo build for creditdata-mock")?;
    if !status.success() {
        bail!("building creditdata-mock failed");
    }
    let binary = target_dir(root).join("debug/creditdata-mock");
    if !binary.is_file() {
        bail!("{} was not built", binary.display());
    }
    Ok(binary)
}

/// What the mock is started with besides its credentials.
#[derive(Debug, Clone, Default)]
pub struct MockOptions {
    /// Further command-line options (`--complete-on-read`, `--provider-delay 0s`, ...).
    pub args: Vec<OsString>,
}

impl MockOptions {
    /// Adds command-line options.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
}

/// A running mock on `127.0.0.1:0`; killed when dropped.
pub struct MockProcess {
    child: Child,
    /// The base URL it announced (`http://127.0.0.1:PORT`).
    pub base_url: String,
    /// Its token endpoint, as it announced it.
    pub token_url: String,
}

impl MockProcess {
    /// Starts `binary` accepting `client_id` with `secret` (handed over in the environment, never
    /// on the command line, where any local user could read it).
    pub fn start(
        binary: &Path,
        client_id: &str,
        secret: &str,
        options: &MockOptions,
    ) -> anyhow::Result<MockProcess> {
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--client-id", client_id])
            .args(["--token-lifetime", "2h"])
            .args(&options.args)
            .env("CREDITDATA_MOCK_CLIENT_SECRET", secret)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let (sender, receiver) = mpsc::channel();
        // Reads the announced addresses, then keeps draining stdout so the mock never blocks on
        // a full pipe.
        std::thread::spawn(move || {
            let mut base_url = None;
            let mut sender = Some(sender);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.split("listening on ").nth(1) {
                    base_url = Some(url.trim().to_owned());
                }
                if let Some(url) = line.strip_prefix("export CREDITDATA_TOKEN_URL=")
                    && let (Some(base), Some(sender)) = (base_url.clone(), sender.take())
                {
                    let _ = sender.send((base, url.trim().to_owned()));
                }
            }
        });
        match receiver.recv_timeout(START_TIMEOUT) {
            Ok((base_url, token_url)) => Ok(MockProcess {
                child,
                base_url,
                token_url,
            }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "{} did not announce `listening on http://...` and its token URL within {} s",
                    binary.display(),
                    START_TIMEOUT.as_secs()
                )
            }
        }
    }

    /// Whether the process is still alive.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the process and reaps it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_random_and_printable() {
        let (a, b) = (random_secret(), random_secret());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
    }
}
