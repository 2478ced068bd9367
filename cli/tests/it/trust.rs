//! Issue 8, items 11 and 12: the `creditdata` binary against a hostile service and identity
//! provider (an axum server on 127.0.0.1:0 that answers what an attacker would).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::common::command;

/// What a hostile server puts in every string it controls: an OSC title change with BEL, a
/// screen clear, a colour, an 8-bit CSI, a carriage return (overwrites the line), bidi
/// overrides and isolates, a zero-width space, DEL, a line separator and a BOM.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}1m\rfake\u{202e}txt.exe\u{2066}iso\u{2069}\u{200b}zw\u{7f}\u{2028}\u{feff}end";

/// Characters that must never reach a terminal from the network.
fn terminal_driving(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c,
                    '\u{200b}'..='\u{200f}'
                    | '\u{2028}'..='\u{202e}'
                    | '\u{2060}'..='\u{2069}'
                    | '\u{061c}'
                    | '\u{feff}'
                )
        })
        .collect()
}

fn assert_terminal_safe(what: &str, text: &str) {
    let found = terminal_driving(text);
    assert!(
        found.is_empty(),
        "{what} carries {found:?} to the terminal:\n{text:?}"
    );
}

const SESSION: &str = "3f0d1f5e-7f58-4d5f-9a53-3c1e9b0f0a11";

fn session(email: &str) -> Value {
    creditdata_mock::as_described(
        "Session",
        json!({
            "id": SESSION,
            "createdAtUtc": "2026-01-05T10:00:00Z",
            "customerProgressStatus": "WAITING_FOR_CUSTOMER",
            "subjectEmail": email,
            "subjectFullName": HOSTILE,
            "createdByName": HOSTILE,
            "queryParameters": [{"countryCode": HOSTILE, "dataPackages": ["SCORE"]}],
        }),
    )
}

fn json_response(status: StatusCode, content_type: &'static str, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.to_string(),
    )
        .into_response()
}

/// The PDF a slow download serves: its first part at once, the rest when `release` fires.
struct SlowPdf {
    release: Notify,
}

const PDF_HEAD: &[u8] = b"%PDF-1.7\n% first part\n";
const PDF_TAIL: &[u8] = b"% second part\n%%EOF\n";

async fn hostile_server(slow_pdf: Arc<SlowPdf>) -> SocketAddr {
    let problem = || {
        json_response(
            StatusCode::BAD_REQUEST,
            "application/problem+json",
            json!({
                "type": "about:blank",
                "title": HOSTILE,
                "detail": HOSTILE,
                "status": 400,
                "errors": { HOSTILE: [HOSTILE] },
            }),
        )
    };
    let app = Router::new()
        .route(
            "/token",
            post(|| async {
                json_response(
                    StatusCode::UNAUTHORIZED,
                    "application/json",
                    json!({"error": "invalid_client", "error_description": HOSTILE}),
                )
            }),
        )
        .route(
            "/v1/sessions",
            get(|| async {
                json_response(
                    StatusCode::OK,
                    "application/json",
                    json!({
                        "sessions": [session(HOSTILE)],
                        "paging": {"skip": 0, "take": 20, "totalCount": 1},
                    }),
                )
            })
            .post(move || async move { problem() }),
        )
        .route(
            &format!("/v1/sessions/{SESSION}"),
            get(|| async { json_response(StatusCode::OK, "application/json", session(HOSTILE)) }),
        )
        .route(
            "/v1/sessions/{id}/scores",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "text/plain")],
                    HOSTILE,
                )
            }),
        )
        .route(
            "/v1/sessions/{id}/account-statements",
            get(|| async {
                json_response(
                    StatusCode::OK,
                    "application/json",
                    json!({
                        "accountStatements": [{"id": "S1", "sourceId": "BANK", HOSTILE: HOSTILE}],
                        "sources": [],
                        HOSTILE: {HOSTILE: HOSTILE},
                    }),
                )
            }),
        )
        .route(
            "/v1/sessions/{id}/account-statements/{statement}/tsv",
            get(|| async {
                let tsv = format!(
                    "bookingDate\tamount\t{HOSTILE}\n2026-01-02\t-12.50\t{HOSTILE}\nonly-one-field\n"
                );
                (
                    [
                        (header::CONTENT_TYPE, "text/tab-separated-values"),
                        (
                            header::CONTENT_DISPOSITION,
                            "attachment; filename=\"statement.tsv\"",
                        ),
                    ],
                    tsv,
                )
            }),
        )
        .route(
            "/v1/sessions/{id}/pdf-report",
            get(move || {
                let slow_pdf = Arc::clone(&slow_pdf);
                async move {
                    let body = futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(PDF_HEAD)) })
                        .chain(futures::stream::once(async move {
                            slow_pdf.release.notified().await;
                            Ok(Bytes::from_static(PDF_TAIL))
                        }));
                    (
                        [
                            (header::CONTENT_TYPE, "application/pdf".to_owned()),
                            (
                                header::CONTENT_DISPOSITION,
                                "attachment; filename=\"report.pdf\"".to_owned(),
                            ),
                            (
                                header::CONTENT_LENGTH,
                                (PDF_HEAD.len() + PDF_TAIL.len()).to_string(),
                            ),
                        ],
                        Body::from_stream(body),
                    )
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    address
}

async fn run(dir: &Path, vars: &[(&str, String)], args: &[&str]) -> Output {
    command(dir, vars, args)
        .output()
        .await
        .expect("the binary runs")
}

/// Variables a user would export for a service with a static token.
type Vars = Vec<(&'static str, String)>;

fn token_vars(address: SocketAddr) -> Vars {
    vec![
        ("CREDITDATA_BASE_URL", format!("http://{address}")),
        ("CREDITDATA_TOKEN", "static-token".to_owned()),
    ]
}

#[tokio::test]
async fn item_11_nothing_a_server_sends_can_drive_the_terminal() {
    let address = hostile_server(Arc::new(SlowPdf {
        release: Notify::new(),
    }))
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let vars = token_vars(address);
    let table = ["--output", "table"];
    let cases: Vec<(&str, Vars, Vec<&str>)> = vec![
        // Problem title, detail and validation errors, in an error message (the service's
        // text is printed only when asked for).
        (
            "a problem",
            vars.clone(),
            vec![
                "--show-service-text",
                "sessions",
                "create",
                "--email",
                "a@example.com",
                "--query",
                "GBR:SCORE",
            ],
        ),
        // A plain-text error body.
        (
            "a text error",
            vars.clone(),
            vec!["--show-service-text", "datasets", "get", SESSION, "scores"],
        ),
        // The identity provider's error description.
        (
            "an identity provider error",
            vec![
                ("CREDITDATA_BASE_URL", format!("http://{address}")),
                ("CREDITDATA_TOKEN_URL", format!("http://{address}/token")),
                ("CREDITDATA_CLIENT_ID", "client".to_owned()),
                ("CREDITDATA_CLIENT_SECRET", "secret".to_owned()),
            ],
            vec!["sessions", "get", SESSION],
        ),
        // TSV header cells and cells, and the warning about a malformed row.
        (
            "a statement table",
            vars.clone(),
            [&table[..], &["statement", "rows", SESSION, "S1"]].concat(),
        ),
        // JSON keys of `extra` maps, as table headers and as key-value lines.
        (
            "a dataset table",
            vars.clone(),
            [
                &table[..],
                &["datasets", "get", SESSION, "account-statements"],
            ]
            .concat(),
        ),
        (
            "a session",
            vars.clone(),
            [&table[..], &["sessions", "get", SESSION]].concat(),
        ),
        (
            "a session list",
            vars.clone(),
            [&table[..], &["sessions", "list"]].concat(),
        ),
        (
            "a verbose session list",
            vars.clone(),
            [&table[..], &["-vvv", "sessions", "list"]].concat(),
        ),
    ];
    for (what, vars, args) in cases {
        let output = run(dir.path(), &vars, &args).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if std::env::var_os("PEEK").is_some() {
            eprintln!("=== {what}\n--- stdout\n{stdout}--- stderr\n{stderr}");
        }
        assert_terminal_safe(&format!("{what}: stdout"), &stdout);
        assert_terminal_safe(&format!("{what}: stderr"), &stderr);
        // The text is still there, only made harmless.
        assert!(
            stdout.contains("pwned") || stderr.contains("pwned"),
            "{what}: the server's text is gone:\n{stdout}\n{stderr}"
        );
    }

    // JSON stays exact: the same strings once parsed, yet nothing raw reaches a terminal.
    let output = run(
        dir.path(),
        &vars,
        &["--output", "json", "sessions", "get", SESSION],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_terminal_safe("JSON", &stdout);
    let session: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(session["subjectEmail"], HOSTILE);
    assert_eq!(session["subjectFullName"], HOSTILE);
    let output = run(
        dir.path(),
        &vars,
        &[
            "--output",
            "json",
            "datasets",
            "get",
            SESSION,
            "account-statements",
        ],
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_terminal_safe("JSON keys", &stdout);
    let statements: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(statements[HOSTILE][HOSTILE], HOSTILE);
    assert_eq!(statements["accountStatements"][0][HOSTILE], HOSTILE);
    let output = run(dir.path(), &vars, &["sessions", "list"]).await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_terminal_safe("JSON Lines", &stdout);
    let line: Value = serde_json::from_str(stdout.lines().next().expect("a line")).expect("JSON");
    assert_eq!(line["subjectEmail"], HOSTILE);
}

/// Waits until the download's temporary file exists next to its target (the destination was
/// checked and the body is being written), or fails with the command's output if it ended.
/// The README's promise holds for the command's stderr too: what a service wrote into an error
/// answer (here a text body) is left out unless `--show-service-text` asks for it, and the
/// message says so.
#[tokio::test]
async fn what_the_service_wrote_is_on_stderr_only_when_asked_for() {
    let address = hostile_server(Arc::new(SlowPdf {
        release: Notify::new(),
    }))
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let vars = token_vars(address);
    let quiet = run(dir.path(), &vars, &["datasets", "get", SESSION, "scores"]).await;
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert_eq!(quiet.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("GetScores") && stderr.contains("500"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("pwned"),
        "the service's text by default: {stderr}"
    );
    assert!(stderr.contains("--show-service-text"), "{stderr}");
    let asked = run(
        dir.path(),
        &vars,
        &["datasets", "get", SESSION, "scores", "--show-service-text"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert_eq!(asked.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("pwned"), "{stderr}");
    assert_terminal_safe("--show-service-text", &stderr);
}

async fn wait_for_temporary_file(dir: &Path, child: &mut tokio::process::Child) {
    loop {
        let writing = std::fs::read_dir(dir).expect("dir").any(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .starts_with(".creditdata-")
        });
        if writing {
            return;
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("the download ended before writing ({status})");
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn item_12_a_download_never_replaces_a_file_created_meanwhile() {
    let slow_pdf = Arc::new(SlowPdf {
        release: Notify::new(),
    });
    let address = hostile_server(Arc::clone(&slow_pdf)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let vars = token_vars(address);
    let target = dir.path().join("report.pdf");

    let mut child = command(
        dir.path(),
        &vars,
        &[
            "--output",
            "json",
            "download",
            "pdf",
            SESSION,
            "-o",
            "report.pdf",
        ],
    )
    .spawn()
    .expect("spawn");
    wait_for_temporary_file(dir.path(), &mut child).await;
    // Someone else creates the file while the body is still arriving.
    std::fs::write(&target, "someone else's file").expect("write");
    slow_pdf.release.notify_one();
    let output = child.wait_with_output().await.expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).expect("target"),
        "someone else's file",
        "the download replaced a file it had not checked"
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("report.pdf") && stderr.contains("--force"),
        "{stderr}"
    );
    let leftovers: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "report.pdf")
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");

    // With --force the same race ends with the download in place.
    let mut child = command(
        dir.path(),
        &vars,
        &[
            "--output",
            "json",
            "download",
            "pdf",
            SESSION,
            "-o",
            "report.pdf",
            "--force",
        ],
    )
    .spawn()
    .expect("spawn");
    wait_for_temporary_file(dir.path(), &mut child).await;
    std::fs::write(&target, "replaced on purpose").expect("write");
    slow_pdf.release.notify_one();
    let output = child.wait_with_output().await.expect("wait");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read(&target).expect("target"),
        [PDF_HEAD, PDF_TAIL].concat()
    );
}
