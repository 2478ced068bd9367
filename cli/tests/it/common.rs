//! Running the `creditdata` binary as a user's shell would, with nothing of the developer's own
//! environment.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;

/// `creditdata args` in `dir` with exactly these `CREDITDATA_*` variables (and no `RUST_LOG`):
/// stdin empty, stdout and stderr captured, killed if dropped.
pub fn command(
    dir: &Path,
    vars: &[(impl AsRef<OsStr>, impl AsRef<OsStr>)],
    args: &[&str],
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_creditdata"));
    for (name, _) in std::env::vars() {
        if name.starts_with("CREDITDATA_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
        .envs(vars.iter().map(|(name, value)| (name, value)))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}
