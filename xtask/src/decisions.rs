//! Release-day's behaviour check: `examples/lender-decisions`, an unchanged lending program, run
//! against a workspace and its mock before the release and against the regenerated copy and its
//! mock after, both mocks started with the same seed. A compatible release must change none of
//! its decisions and none of the `api-version` headers its requests carried; any difference
//! fails the rehearsal, naming the session, both decisions and the dataset that made the
//! difference.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail, ensure};

use crate::mock::{MockOptions, MockProcess, random_secret};

/// The program, relative to a workspace's root.
pub const PROGRAM: &str = "examples/lender-decisions";

/// Both mocks start with this seed (the n-th session gets the same id, subject and data), the
/// providers answering after a second (so the waits poll) and failing one time in eight (the
/// mock's default: some decisions are referrals).
const MOCK_ARGS: [&str; 6] = [
    "--seed",
    "30",
    "--provider-delay",
    "1s",
    "--provider-error-one-in",
    "8",
];

/// One session's decision as the program printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: String,
    pub reason: String,
    /// The datasets the decision cites.
    pub cites: BTreeSet<String>,
}

/// Everything one run printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Run {
    /// By session number (1-based, in creation order).
    pub decisions: BTreeMap<u32, Decision>,
    /// (session, `METHOD template`) → the `api-version` values its requests carried.
    pub headers: BTreeMap<(u32, String), BTreeSet<String>>,
}

impl Run {
    /// Reads the program's tab-separated lines (`decision`, `header`).
    pub fn parse(stdout: &str) -> anyhow::Result<Run> {
        let mut run = Run::default();
        for (number, line) in stdout.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            let session = |text: &str| {
                text.parse::<u32>().with_context(|| {
                    format!("line {}: `{text}` is not a session number", number + 1)
                })
            };
            match fields.as_slice() {
                ["decision", n, verdict, reason, cites] => {
                    run.decisions.insert(
                        session(n)?,
                        Decision {
                            verdict: verdict.to_string(),
                            reason: reason.to_string(),
                            cites: cites
                                .split(',')
                                .filter(|c| !c.is_empty())
                                .map(str::to_string)
                                .collect(),
                        },
                    );
                }
                ["header", n, operation, version] => {
                    run.headers
                        .entry((session(n)?, operation.to_string()))
                        .or_default()
                        .insert(version.to_string());
                }
                [""] => {}
                _ => bail!(
                    "{PROGRAM} printed a line this check does not read (line {}): {line}",
                    number + 1
                ),
            }
        }
        ensure!(!run.decisions.is_empty(), "{PROGRAM} printed no decision");
        Ok(run)
    }
}

/// What differs between two runs: every difference of a decision or of a header (the
/// rehearsal fails on any), and notes (operations only the second run called: a release's new
/// operations send the version that added them).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub differences: Vec<String>,
    pub notes: Vec<String>,
}

fn shown(decision: &Decision) -> String {
    format!(
        "`{}` ({}; cites {})",
        decision.verdict,
        decision.reason,
        if decision.cites.is_empty() {
            "no dataset".to_string()
        } else {
            decision
                .cites
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        }
    )
}

/// Compares the run before the release with the run after it.
pub fn compare(before: &Run, after: &Run) -> Comparison {
    let mut out = Comparison::default();
    for (session, old) in &before.decisions {
        match after.decisions.get(session) {
            None => out
                .differences
                .push(format!("session {session}: decided before, not after")),
            Some(new) if new != old => {
                let made_it: Vec<&String> = new.cites.symmetric_difference(&old.cites).collect();
                let cause = if made_it.is_empty() {
                    "the same datasets cited, read differently".to_string()
                } else {
                    format!(
                        "the difference comes from {}",
                        made_it
                            .iter()
                            .map(|d| d.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                out.differences.push(format!(
                    "session {session}: before {}, after {}: {cause}",
                    shown(old),
                    shown(new)
                ));
            }
            Some(_) => {}
        }
    }
    for session in after.decisions.keys() {
        if !before.decisions.contains_key(session) {
            out.differences
                .push(format!("session {session}: decided after, not before"));
        }
    }
    for ((session, operation), old) in &before.headers {
        match after.headers.get(&(*session, operation.clone())) {
            None => out.differences.push(format!(
                "session {session}: {operation} was called before the release (api-version {}), \
                 not after",
                joined(old)
            )),
            Some(new) if new != old => out.differences.push(format!(
                "session {session}: {operation} sent api-version {} before the release, {} after",
                joined(old),
                joined(new)
            )),
            Some(_) => {}
        }
    }
    for ((session, operation), new) in &after.headers {
        if !before.headers.contains_key(&(*session, operation.clone())) {
            out.notes.push(format!(
                "session {session}: {operation} (new) sent api-version {}",
                joined(new)
            ));
        }
    }
    out
}

fn joined(values: &BTreeSet<String>) -> String {
    values.iter().cloned().collect::<Vec<_>>().join(", ")
}

/// Runs the program of the workspace at `root` (built in `target`, its lock file seeded from the
/// workspace's) against a mock started from `mock_binary`, and reads what it printed.
pub fn run(
    root: &Path,
    target: &Path,
    mock_binary: &Path,
    extra_env: &[(&str, &std::ffi::OsStr)],
) -> anyhow::Result<Run> {
    let program = root.join(PROGRAM);
    std::fs::copy(root.join("Cargo.lock"), program.join("Cargo.lock"))
        .with_context(|| format!("seeding {PROGRAM}/Cargo.lock from the workspace's"))?;
    let secret = random_secret();
    let mut mock = MockProcess::start(
        mock_binary,
        "lender-decisions",
        &secret,
        &MockOptions::default().args(MOCK_ARGS),
    )?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(&program)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(program.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env("CREDITDATA_BASE_URL", &mock.base_url)
        .env("CREDITDATA_TOKEN_URL", &mock.token_url)
        .env("CREDITDATA_CLIENT_ID", "lender-decisions")
        .env("CREDITDATA_CLIENT_SECRET", &secret)
        .env_remove("CREDITDATA_TOKEN")
        .env_remove("CREDITDATA_ENVIRONMENT")
        .stdin(std::process::Stdio::null());
    for (name, value) in extra_env {
        command.env(name, value);
    }
    let output = command
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    mock.stop();
    ensure!(
        output.status.success(),
        "{} failed ({}):\n{}",
        program.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Run::parse(&String::from_utf8_lossy(&output.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "\
decision\t1\tapprove\tprobability of default 0.0100, 0 negative tradelines\tnegative-tradelines,scores
decision\t2\trefer\tdata missing: scores: provider X (GBR) ERROR\tscores
header\t1\tGET /v1/sessions/{sessionId}/scores\t1.0
header\t2\tGET /v1/sessions/{sessionId}/scores\t1.0
";

    #[test]
    fn the_same_output_is_no_difference() {
        let run = Run::parse(BEFORE).unwrap();
        assert_eq!(run.decisions.len(), 2);
        assert_eq!(compare(&run, &run), Comparison::default());
    }

    #[test]
    fn a_changed_decision_names_the_session_both_decisions_and_the_dataset() {
        let before = Run::parse(BEFORE).unwrap();
        let after = Run::parse(&BEFORE.replace(
            "decision\t1\tapprove\tprobability of default 0.0100, 0 negative tradelines\tnegative-tradelines,scores",
            "decision\t1\trefer\tdata missing: tax-returns: provider X ASSESSED\ttax-returns",
        ))
        .unwrap();
        let found = compare(&before, &after);
        assert_eq!(found.differences.len(), 1, "{found:?}");
        let text = &found.differences[0];
        for part in [
            "session 1",
            "`approve`",
            "`refer`",
            "the difference comes from negative-tradelines, scores, tax-returns",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn a_changed_header_fails_and_a_new_operation_is_a_note() {
        let before = Run::parse(BEFORE).unwrap();
        let after = Run::parse(&format!(
            "{}header\t1\tGET /v1/sessions/{{sessionId}}/tax-returns\t1.1\n",
            BEFORE.replace(
                "header\t2\tGET /v1/sessions/{sessionId}/scores\t1.0",
                "header\t2\tGET /v1/sessions/{sessionId}/scores\t1.1"
            )
        ))
        .unwrap();
        let found = compare(&before, &after);
        assert_eq!(
            found.differences,
            [
                "session 2: GET /v1/sessions/{sessionId}/scores sent api-version 1.0 before the \
              release, 1.1 after"
            ]
        );
        assert_eq!(
            found.notes,
            ["session 1: GET /v1/sessions/{sessionId}/tax-returns (new) sent api-version 1.1"]
        );
    }

    #[test]
    fn output_the_check_cannot_read_is_an_error() {
        assert!(Run::parse("").is_err());
        assert!(Run::parse("decision\tx\tapprove\t\t\n").is_err());
        assert!(Run::parse("something else\n").is_err());
    }
}
