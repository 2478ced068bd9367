//! The `creditdata` binary against an in-process mock of the service (loopback only).

use std::path::Path;
use std::process::Output;

use creditdata_client::session_datasets::Dataset;
use creditdata_mock::MockServer;
use serde_json::Value;

use crate::common::{command, control, create_session, mock};

/// Runs `creditdata` with `args` in `dir`, with exactly these `CREDITDATA_*` variables.
async fn creditdata(dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    command(dir, vars, args)
        .output()
        .await
        .expect("the binary runs")
}

/// The mock's address and credentials, as a user exports them.
fn mock_vars(mock: &MockServer) -> Vec<(&'static str, String)> {
    vec![
        ("CREDITDATA_BASE_URL", mock.base_url().to_string()),
        ("CREDITDATA_TOKEN_URL", mock.token_url()),
        ("CREDITDATA_CLIENT_ID", mock.client_id().to_string()),
        ("CREDITDATA_CLIENT_SECRET", mock.client_secret().to_string()),
    ]
}

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }

    fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"))
            })
            .collect()
    }

    fn ok(self) -> Self {
        assert_eq!(
            self.status, 0,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts that every provider of the session answered (see
    /// [`crate::common::every_provider_answered`]).
    fn answered(self) -> Self {
        if let Err(said) = crate::common::every_provider_answered(Some(self.status), &self.stderr) {
            panic!("{said}\nstdout: {}", self.stdout);
        }
        self
    }
}

struct Shell {
    dir: tempfile::TempDir,
    vars: Vec<(&'static str, String)>,
}

impl Shell {
    fn new(mock: &MockServer) -> Self {
        Shell {
            dir: tempfile::tempdir().unwrap(),
            vars: mock_vars(mock),
        }
    }

    async fn run(&self, args: &[&str]) -> Run {
        self.run_with(&[], args).await
    }

    /// Runs with the mock's variables, overridden or extended by `extra`.
    async fn run_with(&self, extra: &[(&str, &str)], args: &[&str]) -> Run {
        let mut vars: Vec<(&str, &str)> = self
            .vars
            .iter()
            .filter(|(name, _)| !extra.iter().any(|(n, _)| n == name))
            .map(|(n, v)| (*n, v.as_str()))
            .collect();
        vars.extend_from_slice(extra);
        let output = creditdata(self.dir.path(), &vars, args).await;
        Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

#[tokio::test]
async fn a_session_from_creation_to_its_files() {
    let mock = mock().await;
    let sh = Shell::new(&mock);

    // Create, with package names in every accepted spelling.
    let created = sh
        .run(&create_session(
            "jane.doe@example.com",
            "gbr:credit-history,Score,bank_account_categorization,IDENTIFICATION",
        ))
        .await
        .ok()
        .json();
    let id = created["id"].as_str().expect("an id").to_string();
    assert_eq!(created["customerProgressStatus"], "WAITING_FOR_CUSTOMER");
    assert_eq!(
        created["queryParameters"][0]["dataPackages"],
        serde_json::json!([
            "CREDIT_HISTORY",
            "SCORE",
            "BANK_ACCOUNT_CATEGORIZATION",
            "IDENTIFICATION"
        ])
    );

    let got = sh.run(&["sessions", "get", &id]).await.ok().json();
    assert_eq!(got["subjectEmail"], "jane.doe@example.com");

    // The list streams JSON Lines, one session per line, across pages.
    sh.run(&[
        "sessions",
        "create",
        "--email",
        "john@example.com",
        "-q",
        "DEU:SCORE",
    ])
    .await
    .ok();
    let listed = sh
        .run(&["sessions", "list", "--page-size", "1"])
        .await
        .ok()
        .json_lines();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.iter().any(|s| s["id"] == id.as_str()));
    let filtered = sh
        .run(&[
            "sessions",
            "list",
            "--email",
            "jane.doe",
            "--status",
            "waiting-for-customer",
        ])
        .await
        .ok()
        .json_lines();
    assert_eq!(filtered.len(), 1);
    let limited = sh.run(&["sessions", "list", "--limit", "1"]).await.ok();
    assert_eq!(limited.json_lines().len(), 1);

    // The customer completes; the wait (for the data, by default) ends at once: the mock's
    // providers here answer the moment the customer consents.
    control(&mock, &id, "complete").await;
    let waited = sh
        .run(&[
            "sessions",
            "wait",
            &id,
            "--timeout",
            "1m",
            "--interval",
            "100ms",
        ])
        .await
        .answered()
        .json();
    assert_eq!(waited["customerProgressStatus"], "COMPLETED_BY_CUSTOMER");

    let scores = sh
        .run(&["datasets", "get", &id, "scores"])
        .await
        .ok()
        .json();
    assert!(
        !scores["scores"].as_array().expect("scores").is_empty(),
        "{scores}"
    );
    let deprecated = sh
        .run(&["datasets", "get", &id, "categorizations"])
        .await
        .ok();
    assert!(
        deprecated.stderr.contains("deprecated"),
        "{}",
        deprecated.stderr
    );

    let all = sh.run(&["datasets", "all", &id]).await.answered().json();
    let names: Vec<&str> = all
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let wanted: Vec<&str> = Dataset::ALL
        .into_iter()
        .filter(|dataset| !dataset.deprecated())
        .map(Dataset::name)
        .collect();
    assert_eq!(names, wanted, "every dataset of the client, in its order");
    assert!(
        !names.contains(&"categorizations"),
        "deprecated dataset in `all` by default"
    );
    let with_deprecated = sh
        .run(&["datasets", "all", &id, "--include-deprecated"])
        .await
        .answered();
    let every: Vec<String> = with_deprecated
        .json()
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    let all_names: Vec<String> = Dataset::ALL.iter().map(|d| d.name().to_string()).collect();
    assert_eq!(every, all_names, "--include-deprecated reads every dataset");

    // The PDF report, under the server's file name, in the current directory.
    let saved = sh.run(&["download", "pdf", &id]).await.ok().json();
    let path = sh.dir.path().join(saved["path"].as_str().expect("a path"));
    let bytes = std::fs::read(&path).expect("the report was written");
    assert!(bytes.starts_with(b"%PDF-"), "not a PDF");
    assert_eq!(saved["bytes"], bytes.len() as u64);
    assert_eq!(saved["contentType"], "application/pdf");
    // It is not replaced without --force.
    let again = sh.run(&["download", "pdf", &id]).await;
    assert_eq!(again.status, 1, "{}", again.stderr);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    sh.run(&["download", "pdf", &id, "--force", "-o", "report.pdf"])
        .await
        .ok();
    assert!(sh.dir.path().join("report.pdf").is_file());

    // The statement's rows, keyed by the TSV header.
    let statements = sh
        .run(&["datasets", "get", &id, "account-statements"])
        .await
        .ok()
        .json();
    let statement_id = statements["accountStatements"][0]["id"]
        .as_str()
        .expect("a statement")
        .to_string();
    let rows = sh
        .run(&["statement", "rows", &id, &statement_id])
        .await
        .ok()
        .json_lines();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r.as_object().is_some_and(|o| o.len() > 1))
    );
    let table = sh
        .run(&["statement", "rows", &id, &statement_id, "--output", "table"])
        .await
        .ok();
    assert_eq!(
        table.stdout.lines().count(),
        rows.len() + 1,
        "header plus one line per row"
    );

    // A source file, decoded, to stdout.
    let files = sh
        .run(&["datasets", "get", &id, "source-files"])
        .await
        .ok()
        .json();
    let file_id = files[0]["id"].as_str().expect("a source file").to_string();
    let decoded = sh
        .run(&["download", "source-file", &id, &file_id, "-o", "-"])
        .await
        .ok();
    assert_eq!(
        Some(decoded.stdout.len() as u64),
        files[0]["sizeInBytes"].as_u64()
    );

    // People get tables.
    let shown = sh
        .run(&["sessions", "get", &id, "--output", "table"])
        .await
        .ok();
    assert!(
        shown.stdout.contains("COMPLETED_BY_CUSTOMER"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("GBR:CREDIT_HISTORY,SCORE"),
        "{}",
        shown.stdout
    );
}

#[tokio::test]
async fn usage_errors_exit_2_and_say_what_is_valid() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let bad = sh
        .run(&[
            "sessions",
            "create",
            "--email",
            "a@example.com",
            "-q",
            "GBR:SCORES",
        ])
        .await;
    assert_eq!(bad.status, 2, "{}", bad.stderr);
    for name in [
        "CREDIT_HISTORY",
        "SCORE",
        "BANK_ACCOUNT_CATEGORIZATION",
        "IDENTIFICATION",
    ] {
        assert!(
            bad.stderr.contains(name),
            "{name} not listed: {}",
            bad.stderr
        );
    }
    assert!(bad.stdout.is_empty());

    let bad_id = sh.run(&["sessions", "get", "not-a-uuid"]).await;
    assert_eq!(bad_id.status, 2, "{}", bad_id.stderr);

    // A secret is never an option value.
    let secret_flag = sh.run(&["--client-secret", "x", "sessions", "list"]).await;
    assert_eq!(secret_flag.status, 2, "{}", secret_flag.stderr);

    let bad_env = sh
        .run_with(
            &[
                ("CREDITDATA_BASE_URL", ""),
                ("CREDITDATA_ENVIRONMENT", "staging"),
            ],
            &["sessions", "list"],
        )
        .await;
    assert_eq!(bad_env.status, 2, "{}", bad_env.stderr);
    assert!(
        bad_env.stderr.contains("unknown environment"),
        "{}",
        bad_env.stderr
    );

    let missing_secret = sh
        .run(&["--client-secret-file", "no-such-file", "sessions", "list"])
        .await;
    assert_eq!(missing_secret.status, 2, "{}", missing_secret.stderr);
}

#[tokio::test]
async fn bad_credentials_exit_3_without_showing_the_secret() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let wrong = sh
        .run_with(
            &[("CREDITDATA_CLIENT_SECRET", "wrong-secret-value")],
            &["sessions", "list", "-vv"],
        )
        .await;
    assert_eq!(wrong.status, 3, "{}", wrong.stderr);
    assert!(wrong.stderr.contains("invalid_client"), "{}", wrong.stderr);
    assert!(
        !wrong.stderr.contains("wrong-secret-value"),
        "{}",
        wrong.stderr
    );
    assert!(!wrong.stdout.contains("wrong-secret-value"));

    // A secret read from a file is used (and not shown either).
    std::fs::write(
        sh.dir.path().join("secret"),
        format!("{}\n", mock.client_secret()),
    )
    .unwrap();
    sh.run_with(
        &[("CREDITDATA_CLIENT_SECRET", "wrong-secret-value")],
        &["--client-secret-file", "secret", "sessions", "list"],
    )
    .await
    .ok();

    let refused_token = sh
        .run_with(&[("CREDITDATA_TOKEN", "not-a-jwt")], &["packages"])
        .await;
    assert_eq!(refused_token.status, 3, "{}", refused_token.stderr);
}

#[tokio::test]
async fn an_unknown_session_exits_4() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let missing = sh
        .run(&["sessions", "get", "00000000-0000-0000-0000-000000000000"])
        .await;
    assert_eq!(missing.status, 4, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("GetSession"),
        "names the operation: {}",
        missing.stderr
    );
    let missing = sh
        .run(&["download", "pdf", "00000000-0000-0000-0000-000000000000"])
        .await;
    assert_eq!(missing.status, 4, "{}", missing.stderr);
    assert_eq!(
        std::fs::read_dir(sh.dir.path()).unwrap().count(),
        0,
        "no file left behind"
    );
}

/// A request the description does not allow is refused by the client, before anything is sent
/// (the server's field-by-field validation problems are rendered as in `failure.rs`'s tests).
#[tokio::test]
async fn an_invalid_request_is_refused_before_sending() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let refused = sh
        .run(&[
            "sessions",
            "create",
            "--email",
            "not-an-address",
            "-q",
            "GBR:SCORE",
        ])
        .await;
    assert_eq!(refused.status, 2, "{}", refused.stderr);
    // Refused where the address is parsed: the option and the member are named.
    assert!(
        refused.stderr.contains("--email") && refused.stderr.contains("subjectEmail"),
        "{}",
        refused.stderr
    );
    assert!(
        !refused.stderr.contains("not-an-address"),
        "the address is not repeated: {}",
        refused.stderr
    );
    let listed = sh.run(&["sessions", "list"]).await;
    assert_eq!(listed.status, 0, "{}", listed.stderr);
    assert!(
        !listed.stdout.contains("not-an-address"),
        "nothing reached the service: {}",
        listed.stdout
    );
}

#[tokio::test]
async fn a_wait_that_does_not_end_in_completion_fails() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let id = |run: Run| run.ok().json()["id"].as_str().unwrap().to_string();
    let expiring = id(sh
        .run(&[
            "sessions",
            "create",
            "--email",
            "a@example.com",
            "-q",
            "EST:SCORE",
        ])
        .await);
    let waiting = id(sh
        .run(&[
            "sessions",
            "create",
            "--email",
            "b@example.com",
            "-q",
            "EST:SCORE",
        ])
        .await);

    control(&mock, &expiring, "expire").await;
    let expired = sh.run(&["sessions", "wait", &expiring]).await;
    assert_eq!(expired.status, 5, "{}", expired.stderr);
    assert!(expired.stderr.contains("EXPIRED"), "{}", expired.stderr);

    let timed_out = sh
        .run(&[
            "sessions",
            "wait",
            &waiting,
            "--timeout",
            "300ms",
            "--interval",
            "100ms",
        ])
        .await;
    assert_eq!(timed_out.status, 6, "{}", timed_out.stderr);
    assert!(
        timed_out.stderr.contains("WAITING_FOR_CUSTOMER"),
        "{}",
        timed_out.stderr
    );
}

/// With nothing saying where the service is, the command still reaches the local mock (for a
/// newcomer's first try) but says so in one line on stderr; naming the mock says nothing.
#[tokio::test]
async fn the_mock_used_by_default_is_announced_on_stderr() {
    let mock = mock().await;
    let sh = Shell::new(&mock);
    let implicit = sh
        .run_with(
            &[
                ("CREDITDATA_BASE_URL", ""),
                ("CREDITDATA_MOCK_URL", mock.base_url()),
            ],
            &["sessions", "list", "--limit", "1"],
        )
        .await
        .ok();
    let notes: Vec<&str> = implicit
        .stderr
        .lines()
        .filter(|line| line.contains("local mock"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", implicit.stderr);
    assert!(
        notes[0].contains("no environment configured") && notes[0].contains("--environment"),
        "{}",
        notes[0]
    );
    let named = sh
        .run_with(
            &[
                ("CREDITDATA_BASE_URL", ""),
                ("CREDITDATA_ENVIRONMENT", "mock"),
                ("CREDITDATA_MOCK_URL", mock.base_url()),
            ],
            &["sessions", "list", "--limit", "1"],
        )
        .await
        .ok();
    assert!(!named.stderr.contains("local mock"), "{}", named.stderr);
    let explicit = sh.run(&["sessions", "list", "--limit", "1"]).await.ok();
    assert!(
        !explicit.stderr.contains("local mock"),
        "{}",
        explicit.stderr
    );
}

#[tokio::test]
async fn operations_need_no_network_or_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let output = creditdata(dir.path(), &[], &["operations"]).await;
    assert_eq!(output.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), creditdata_client::operations::ALL.len());
    for (op, meta) in list.iter().zip(&creditdata_client::operations::ALL) {
        assert_eq!(op["operationId"], meta.id);
        assert_eq!(op["deprecated"], meta.deprecated, "{op}");
    }
}

/// Every operation of the effective description is reached: `creditdata operations` lists each
/// with its `Client` method; a dataset is run by `datasets get ID NAME` (derived from the
/// client's list), the others the tool knows by their hand-written commands. An operation a
/// vendor release adds that is not a dataset is listed with its method and no command (the mock
/// serves it from the description: mock-server/tests/it/described.rs), so a release needs no
/// line here. (The hand-written commands name their operations through the generated builders:
/// a command whose operation the vendor removed does not compile.)
#[tokio::test]
async fn every_operation_is_listed_with_its_client_method_and_datasets_with_commands() {
    let dir = tempfile::tempdir().unwrap();
    let output = creditdata(dir.path(), &[], &["operations", "--output", "json"]).await;
    assert_eq!(output.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let effective: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec/openapi.effective.json"
    )))
    .unwrap();
    let described: Vec<&str> = effective["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .filter_map(|op| op.get("operationId").and_then(Value::as_str))
        .collect();
    let listed: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["operationId"].as_str().unwrap())
        .collect();
    for id in &described {
        assert!(listed.contains(id), "{id} is not listed: {listed:?}");
    }
    assert_eq!(described.len(), listed.len(), "{listed:?}");
    for op in list.as_array().unwrap() {
        assert!(
            op["client"]
                .as_str()
                .is_some_and(|c| c.starts_with("Client::")),
            "{op}"
        );
    }
    for dataset in Dataset::ALL {
        let op = list
            .as_array()
            .unwrap()
            .iter()
            .find(|op| op["operationId"] == dataset.operation_id())
            .unwrap_or_else(|| panic!("{} is not listed", dataset.operation_id()));
        let command = op["command"].as_str().unwrap();
        assert!(
            command.contains(&format!("datasets get ID {}", dataset.name())),
            "{command}"
        );
    }
}
