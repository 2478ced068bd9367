//! Running the `creditdata` binary as a user's shell would, with nothing of the developer's own
//! environment.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use creditdata_mock::{MockConfig, MockServer};

/// `creditdata args` in `dir` with exactly these `CREDITDATA_*` and `OTEL_*` variables (and no
/// `RUST_LOG`): stdin empty, stdout and stderr captured, killed if dropped.
///
/// Nothing of the developer's own sign-ins is reachable: the configuration directory is
/// `dir/config` unless `vars` names another, and the session bus is hidden, so no test reads
/// or writes the real keyring.
pub fn command(
    dir: &Path,
    vars: &[(impl AsRef<OsStr>, impl AsRef<OsStr>)],
    args: &[&str],
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_creditdata"));
    for (name, _) in std::env::vars() {
        // The developer's own collector receives nothing from the tests.
        if name.starts_with("CREDITDATA_") || name.starts_with("OTEL_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("XDG_RUNTIME_DIR")
        .env("CREDITDATA_CONFIG", dir.join("config"))
        .envs(vars.iter().map(|(name, value)| (name, value)))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// A mock of the service whose providers answer at once and never fail, so datasets are
/// complete as soon as the customer has given consent.
pub async fn mock() -> MockServer {
    mock_with(MockConfig::default()).await
}

/// [`mock`] with the rest of `config`.
pub async fn mock_with(config: MockConfig) -> MockServer {
    MockServer::start(MockConfig {
        provider_delay: Duration::ZERO,
        provider_error_one_in: 0,
        ..config
    })
    .await
    .expect("the mock starts")
}

/// The arguments of `creditdata sessions create --email <email> --query <query>`.
pub fn create_session<'a>(email: &'a str, query: &'a str) -> [&'a str; 6] {
    ["sessions", "create", "--email", email, "--query", query]
}

/// Acts for the customer or the clock through the mock's control endpoint
/// (`/_mock/sessions/ID/ACTION`: `complete`, `expire`, ...).
pub async fn control(mock: &MockServer, id: &str, action: &str) {
    let url = format!("{}/_mock/sessions/{id}/{action}", mock.base_url());
    let response = reqwest::Client::new()
        .post(&url)
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
}

/// Whether a command that reads a session's data (`sessions wait`, `datasets all`) says that
/// every provider answered: exit 0, or 7 when the only failure is the mock's bank history with
/// a gap (one session in four: the categorization summary's `SOME_DATA_MISSING`, a final answer
/// without all of the data). `Err` says what it said instead.
pub fn every_provider_answered(status: Option<i32>, stderr: &str) -> Result<(), String> {
    let failed: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("failed: "))
        .collect();
    match status {
        Some(0) if !stderr.contains("pending:") && failed.is_empty() => Ok(()),
        Some(7) if failed == ["failed: categorizations-summary: SOME_DATA_MISSING"] => Ok(()),
        other => Err(format!("exit {other:?}, stderr: {stderr}")),
    }
}
