//! What the `creditdata-mock` binary writes to a log that is not a terminal: plain text.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The binary with both outputs piped (as under a supervisor, in CI, or `2> mock.log`) writes
/// its log lines without colour codes, even with no `NO_COLOR` set.
#[test]
fn the_log_written_to_a_pipe_has_no_colour_codes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"))
        .args(["--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "creditdata_mock=info")
        .env_remove("NO_COLOR")
        .env_remove("CREDITDATA_MOCK_CLIENT_ID")
        .env_remove("CREDITDATA_MOCK_CLIENT_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mock binary runs");
    let stderr = child.stderr.take().expect("stderr");
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    // A bound on waiting for the startup line, so a mock that never logs fails instead of
    // hanging; nothing is asserted about how long it took.
    while let Ok(line) = received.recv_timeout(Duration::from_secs(120)) {
        let serving = line.contains("serving /v1");
        log.push(line);
        if serving {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let log = log.join("\n");
    assert!(log.contains("serving /v1"), "no startup line in: {log}");
    assert!(log.contains("INFO"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a piped log: {log:?}"
    );
}
