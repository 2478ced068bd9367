//! Issue 8, items 13–16: the mock holds up against a careless disk, a hostile web page, a
//! hostile unauthenticated caller and hostile command-line values.

use crate::common;

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{CONTROL_HEADER, Harness, everything, quick_config};
use creditdata_mock::{MockConfig, MockServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The largest token request body the identity provider reads (documented in the README).
const TOKEN_BODY_LIMIT: usize = 8 * 1024;
/// The largest body a `/_mock` control endpoint reads.
const CONTROL_BODY_LIMIT: usize = 4 * 1024;
/// The largest body a `/v1` operation reads.
const API_BODY_LIMIT: usize = 64 * 1024;
/// The longest duration (in days) and largest day count an option accepts.
const MAX_DAYS: u64 = 3650;

/// One HTTP/1.1 exchange over a fresh connection, written byte for byte (so the `Host` header
/// is exactly what a browser tricked by DNS rebinding would send). Returns the status and body.
async fn raw_exchange(address: SocketAddr, head: &str, body: &[u8]) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let mut request = head.replace('\n', "\r\n");
    request.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write head");
    // The server may answer (413) and close before it has read all of a large body.
    let _ = stream.write_all(body).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn session_ids_in_state_file(path: &Path) -> Vec<String> {
    let state: Value =
        serde_json::from_slice(&std::fs::read(path).expect("state file")).expect("state JSON");
    let mut ids: Vec<String> = state["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .collect();
    ids.sort();
    ids
}

async fn session_ids_served(harness: &Harness) -> Vec<String> {
    let (status, body) = harness.get_json("/v1/sessions?Take=100").await;
    assert_eq!(status, 200, "{body}");
    let mut ids: Vec<String> = body["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .collect();
    ids.sort();
    ids
}

fn entries(directory: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .expect("dir")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[tokio::test]
async fn item_13_state_file_is_private_and_never_torn() {
    use std::os::unix::fs::PermissionsExt as _;

    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("state.json");
    // Whatever another process left at the name a save would have used before (a symlink to a
    // file the mock must never write through), the save creates its own file.
    let victim = directory.path().join("victim.txt");
    std::fs::write(&victim, "not the mock's").expect("victim");
    let predictable = directory
        .path()
        .join(format!(".state.json.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &predictable).expect("symlink");

    let harness = Harness::with(MockConfig {
        state_file: Some(path.clone()),
        ..quick_config()
    })
    .await;
    let created = harness
        .create("private@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id").to_owned();

    // It holds the signing key and e-mail addresses: the owner alone may read it.
    let mode = std::fs::metadata(&path)
        .expect("state file")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "state file mode {mode:o}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "not the mock's",
        "a save wrote through a file it did not create"
    );

    // Acknowledged means on disk: after each answer the file already holds the change.
    assert_eq!(session_ids_in_state_file(&path), vec![id.clone()]);
    harness.complete(&id).await;
    let state: Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    assert_eq!(
        state["sessions"][0]["progress"]["status"], "COMPLETED_BY_CUSTOMER",
        "the completion was acknowledged before it was saved"
    );

    // Many writers at once: every save is whole, and the file matches what is served.
    let mut creations = Vec::new();
    for n in 0..24 {
        let http = harness.http.clone();
        let url = harness.url("/v1/sessions");
        creations.push(tokio::spawn(async move {
            http.post(url)
                .json(&json!({
                    "subjectEmail": format!("writer{n}@example.com"),
                    "queryParameters": [{"countryCode": "FIN", "dataPackages": ["SCORE"]}],
                }))
                .send()
                .await
                .expect("create")
                .status()
                .as_u16()
        }));
    }
    for creation in creations {
        assert_eq!(creation.await.expect("task"), 201);
    }
    assert_eq!(
        session_ids_in_state_file(&path),
        session_ids_served(&harness).await
    );
    let leftovers: Vec<String> = entries(directory.path())
        .into_iter()
        .filter(|name| !["state.json", "victim.txt"].contains(&name.as_str()))
        .filter(|name| !name.ends_with(&format!("{}.tmp", std::process::id())))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    harness.mock.shutdown().await;
    let mode = std::fs::metadata(&path)
        .expect("state file")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "after shutdown: {mode:o}");
}

#[tokio::test]
async fn item_13_a_failed_save_leaves_memory_unchanged() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("state.json");
    let harness = Harness::with(MockConfig {
        state_file: Some(path.clone()),
        ..quick_config()
    })
    .await;
    let kept = harness
        .create("kept@example.com", everything(&["FIN"]))
        .await;
    let kept = kept["id"].as_str().expect("id").to_owned();

    // A directory where the state file should be: no save can replace it (even as root).
    std::fs::remove_file(&path).expect("remove");
    std::fs::create_dir(&path).expect("dir in the way");
    std::fs::write(path.join("occupied"), "x").expect("occupied");

    let (status, problem) = harness
        .send_json(
            reqwest::Method::POST,
            "/v1/sessions",
            &json!({
                "subjectEmail": "lost@example.com",
                "queryParameters": [{"countryCode": "FIN", "dataPackages": ["SCORE"]}],
            }),
        )
        .await;
    assert_eq!(status, 500, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("state")),
        "{problem}"
    );
    assert_eq!(
        session_ids_served(&harness).await,
        vec![kept.clone()],
        "a session whose save failed is served anyway"
    );
    let (status, problem) = harness
        .control(&format!("/_mock/sessions/{kept}/complete"))
        .await;
    assert_eq!(status, 500, "{problem}");
    let (_, session) = harness.get_json(&format!("/v1/sessions/{kept}")).await;
    assert_eq!(
        session["customerProgressStatus"], "WAITING_FOR_CUSTOMER",
        "a completion whose save failed is served anyway"
    );
    let (status, _) = harness.control("/_mock/reset").await;
    assert_eq!(status, 500);
    assert_eq!(session_ids_served(&harness).await, vec![kept.clone()]);

    // Once the disk is usable again, saving resumes with exactly what was acknowledged.
    std::fs::remove_dir_all(&path).expect("clear the way");
    harness.complete(&kept).await;
    assert_eq!(session_ids_in_state_file(&path), vec![kept]);
    let leftovers: Vec<String> = entries(directory.path())
        .into_iter()
        .filter(|name| name != "state.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

async fn control_request(
    harness: &Harness,
    method: reqwest::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> u16 {
    let mut request = harness.anonymous.request(method, harness.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
        .body(body.to_owned())
        .send()
        .await
        .expect("request")
        .status()
        .as_u16()
}

#[tokio::test]
async fn item_14_control_endpoints_refuse_cross_site_requests() {
    let harness = Harness::start().await;
    let created = harness
        .create("csrf@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let complete = format!("/_mock/sessions/{id}/complete");
    let own_origin = harness.mock.base_url().to_owned();
    let post = reqwest::Method::POST;

    // What a web page can send without a CORS preflight: refused.
    let refused: [(&[(&str, &str)], &str); 6] = [
        // A no-body POST (fetch with mode "no-cors", a beacon, an old browser's form).
        (&[], ""),
        // An HTML form.
        (
            &[("Content-Type", "application/x-www-form-urlencoded")],
            "a=b",
        ),
        (&[("Content-Type", "text/plain; charset=utf-8")], "{}"),
        (&[("Content-Type", "multipart/form-data; boundary=x")], ""),
        // Another site, even with a content type only a script could set.
        (
            &[
                ("Origin", "http://attacker.example"),
                ("Content-Type", "application/json"),
            ],
            "{}",
        ),
        (&[("Origin", "null"), (CONTROL_HEADER, "1")], ""),
    ];
    for (headers, body) in refused {
        let status = control_request(&harness, post.clone(), &complete, headers, body).await;
        assert_eq!(status, 403, "{headers:?} was not refused");
    }
    let status = control_request(
        &harness,
        post.clone(),
        &complete,
        &[("Sec-Fetch-Site", "cross-site"), (CONTROL_HEADER, "1")],
        "",
    )
    .await;
    assert_eq!(status, 403, "a cross-site fetch was not refused");
    let status = control_request(
        &harness,
        reqwest::Method::PUT,
        &format!("/_mock/sessions/{id}/sources/FIN_SAIMAA_ACCOUNTS/status"),
        &[
            ("Origin", "http://localhost:3000"),
            ("Content-Type", "application/json"),
        ],
        r#"{"status":"ERROR"}"#,
    )
    .await;
    assert_eq!(status, 403, "another local origin was not refused");
    let status = control_request(&harness, post.clone(), "/_mock/reset", &[], "").await;
    assert_eq!(status, 403, "a simple reset was not refused");
    let (_, session) = harness.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["customerProgressStatus"], "WAITING_FOR_CUSTOMER");

    // The refusal says what to send instead.
    let response = harness
        .anonymous
        .post(harness.url(&complete))
        .send()
        .await
        .expect("request");
    let problem: Value = response.json().await.expect("problem");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains(CONTROL_HEADER)),
        "{problem}"
    );

    // Tools and tests: the control header, or a JSON body, or the mock's own page.
    let status = control_request(
        &harness,
        post.clone(),
        &complete,
        &[(CONTROL_HEADER, "1")],
        "",
    )
    .await;
    assert_eq!(status, 200);
    let status = control_request(
        &harness,
        post.clone(),
        "/_mock/reset",
        &[
            ("Origin", own_origin.as_str()),
            ("Content-Type", "application/json"),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        "{}",
    )
    .await;
    assert_eq!(status, 200);
    assert!(session_ids_served(&harness).await.is_empty());
}

#[tokio::test]
async fn item_14_every_route_refuses_a_host_that_is_not_the_mock() {
    let harness = Harness::start().await;
    let address = harness.mock.local_addr();
    let port = address.port();
    let token = harness.token.clone();
    let routes = [
        format!("GET /v1/sessions HTTP/1.1\nAuthorization: Bearer {token}\n"),
        "GET /_mock/health HTTP/1.1\n".to_owned(),
        "GET /openapi/v1.json HTTP/1.1\n".to_owned(),
        "GET /realms/consumer/.well-known/openid-configuration HTTP/1.1\n".to_owned(),
        "GET /no/such/route HTTP/1.1\n".to_owned(),
    ];
    let rebinding_hosts = [
        format!("attacker.example:{port}"),
        "attacker.example".to_owned(),
        format!("127.0.0.1.attacker.example:{port}"),
        format!("localhost.:{port}x"),
        // The right name on another port is another origin.
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        String::new(),
    ];
    for route in &routes {
        for host in &rebinding_hosts {
            let head = format!("{route}Host: {host}\n");
            let (status, body) = raw_exchange(address, &head, b"").await;
            assert_eq!(status, 400, "Host {host:?} on {route:?} answered {body}");
            assert!(body.contains("Host"), "{body}");
        }
        let (status, _) = raw_exchange(address, route, b"").await;
        assert_eq!(status, 400, "no Host header on {route:?}");
    }
    let allowed = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ];
    for host in &allowed {
        let head = format!("{}Host: {host}\n", routes[0]);
        let (status, body) = raw_exchange(address, &head, b"").await;
        assert_eq!(status, 200, "Host {host:?}: {body}");
    }
    // The token endpoint too: a rebinding page must not be able to spend the credentials.
    let form = format!(
        "grant_type=client_credentials&client_id={}&client_secret={}",
        harness.mock.client_id(),
        harness.mock.client_secret()
    );
    let head = format!(
        "POST /realms/consumer/protocol/openid-connect/token HTTP/1.1\nHost: attacker.example:{port}\nContent-Type: application/x-www-form-urlencoded\n"
    );
    let (status, _) = raw_exchange(address, &head, form.as_bytes()).await;
    assert_eq!(status, 400);
    let head = head.replace("attacker.example", "localhost");
    let (status, body) = raw_exchange(address, &head, form.as_bytes()).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn item_14_configured_host_names_are_answered() {
    let harness = Harness::with(MockConfig {
        allowed_hosts: vec!["Mock.Internal".into(), "gateway.test:9443".into()],
        ..quick_config()
    })
    .await;
    let address = harness.mock.local_addr();
    let port = address.port();
    for (host, expected) in [
        (format!("mock.internal:{port}"), 200),
        ("mock.internal".to_owned(), 200),
        ("MOCK.INTERNAL:1".to_owned(), 200),
        ("gateway.test:9443".to_owned(), 200),
        ("gateway.test:9444".to_owned(), 400),
        ("gateway.test".to_owned(), 400),
        (format!("localhost:{port}"), 200),
        (format!("attacker.example:{port}"), 400),
    ] {
        let head = format!("GET /_mock/health HTTP/1.1\nHost: {host}\n");
        let (status, body) = raw_exchange(address, &head, b"").await;
        assert_eq!(status, expected, "Host {host:?}: {body}");
    }
    // A control request from the mock's page under a configured name is its own origin.
    let id = harness
        .create("named@example.com", everything(&["FIN"]))
        .await["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let head = format!(
        "POST /_mock/sessions/{id}/complete HTTP/1.1\nHost: mock.internal\nOrigin: http://mock.internal\nContent-Type: application/json\n"
    );
    let (status, body) = raw_exchange(address, &head, b"{}").await;
    assert_eq!(status, 200, "{body}");

    // A name that is not a host name is refused at start, with the reason.
    for bad in [
        "exa mple",
        "user@host",
        "host:0",
        "host:99999",
        "-host",
        "a..b",
        "::1",
    ] {
        let error = MockServer::start(MockConfig {
            allowed_hosts: vec![bad.into()],
            ..quick_config()
        })
        .await
        .expect_err(bad);
        assert!(error.to_string().contains(bad), "{error}");
    }
}

#[tokio::test]
async fn item_15_request_bodies_are_bounded_per_route() {
    let harness = Harness::start().await;
    let address = harness.mock.local_addr();
    let host = format!("Host: {address}\n");
    let token = harness.token.clone();

    // Each part reads at most what its largest sane request needs.
    let cases = [
        (
            "POST /realms/consumer/protocol/openid-connect/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n".to_owned(),
            TOKEN_BODY_LIMIT,
        ),
        (
            format!(
                "PUT /_mock/sessions/00000000-0000-0000-0000-000000000000/sources/FIN_SAIMAA_ACCOUNTS/status HTTP/1.1\nContent-Type: application/json\n{CONTROL_HEADER}: 1\n"
            ),
            CONTROL_BODY_LIMIT,
        ),
        (
            format!(
                "POST /v1/sessions HTTP/1.1\nContent-Type: application/json\nAuthorization: Bearer {token}\n"
            ),
            API_BODY_LIMIT,
        ),
    ];
    for (head, limit) in &cases {
        let oversized = vec![b' '; limit + 1];
        let (status, body) = raw_exchange(address, &format!("{head}{host}"), &oversized).await;
        assert_eq!(status, 413, "{head}: {body}");
        assert!(body.contains(&limit.to_string()), "{body}");
        // At the limit, the body is read (and judged on its content).
        let mut at_limit = b"{}".to_vec();
        at_limit.resize(*limit, b' ');
        let (status, body) = raw_exchange(address, &format!("{head}{host}"), &at_limit).await;
        assert_ne!(status, 413, "{head}: {body}");
    }

    // The repeated-parameter check of the token endpoint still finds a repeat after thousands
    // of distinct names (one pass with a set, not a comparison of every pair).
    let mut form = String::from("grant_type=client_credentials");
    let mut n = 0;
    while form.len() < TOKEN_BODY_LIMIT - 64 {
        form.push_str(&format!("&p{n}="));
        n += 1;
    }
    form.push_str("&p0=again");
    let head = format!(
        "POST /realms/consumer/protocol/openid-connect/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n{host}"
    );
    let (status, body) = raw_exchange(address, &head, form.as_bytes()).await;
    assert_eq!(status, 400, "{body}");
    let error: Value = serde_json::from_str(&body).expect("OAuth error");
    assert_eq!(error["error"], "invalid_request");
    assert!(
        error["error_description"]
            .as_str()
            .is_some_and(|d| d.contains("`p0`")),
        "{error}"
    );
}

/// Runs the mock binary with `args` on a free port. `Ok(stderr)` when it exits on its own
/// with `Err` when it starts serving instead (it is then stopped).
pub(crate) fn run_mock_binary(args: &[&str]) -> Result<(Option<i32>, String), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_creditdata-mock"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("CREDITDATA_MOCK_CLIENT_ID")
        .env_remove("CREDITDATA_MOCK_CLIENT_SECRET")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mock binary runs");
    let stdout = child.stdout.take().expect("stdout");
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap_or_default();
        if line.contains("listening on") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(line);
        }
    }
    let output = child.wait_with_output().expect("wait");
    Ok((
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn item_16_out_of_range_options_are_usage_errors_not_panics() {
    let cases: [(&[&str], &str); 9] = [
        (
            &["--token-lifetime", "18446744073709551615"],
            "--token-lifetime",
        ),
        (
            &["--auto-complete-after", "99999999999999h"],
            "--auto-complete-after",
        ),
        (
            &["--auto-complete-after", "999999999999h"],
            "--auto-complete-after",
        ),
        (
            &["--provider-delay", "9999999999999999999h"],
            "--provider-delay",
        ),
        (
            &["--provider-delay", "99999999999999999999"],
            "--provider-delay",
        ),
        (
            &["--token-lifetime", "5000000000000000m"],
            "--token-lifetime",
        ),
        (&["--deadline-days", "4294967295"], "--deadline-days"),
        (&["--extension-days", "100000000"], "--extension-days"),
        (&["--allowed-host", "exa mple"], "--allowed-host"),
    ];
    for (args, option) in cases {
        match run_mock_binary(args) {
            Err(line) => panic!("{args:?}: the mock started anyway ({line})"),
            Ok((status, stderr)) => {
                assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
                assert_eq!(status, Some(2), "{args:?}: {stderr}");
                assert!(
                    stderr.contains(option),
                    "{args:?} names the option: {stderr}"
                );
            }
        }
    }
    // The largest accepted values still start.
    let max = MAX_DAYS.to_string();
    let started = run_mock_binary(&[
        "--token-lifetime",
        &format!("{}s", MAX_DAYS * 86_400),
        "--auto-complete-after",
        &format!("{}h", MAX_DAYS * 24),
        "--deadline-days",
        &max,
        "--extension-days",
        &max,
    ]);
    assert!(started.is_err(), "{started:?}");
}

#[tokio::test]
async fn item_16_in_process_configurations_are_checked_too() {
    for config in [
        MockConfig {
            token_lifetime: std::time::Duration::MAX,
            ..quick_config()
        },
        MockConfig {
            auto_complete_after: Some(std::time::Duration::from_secs(u64::MAX / 2)),
            ..quick_config()
        },
        MockConfig {
            provider_delay: std::time::Duration::from_secs(u64::MAX),
            ..quick_config()
        },
        MockConfig {
            extendable_for_days: u32::MAX,
            ..quick_config()
        },
    ] {
        let error = MockServer::start(config).await.expect_err("refused");
        assert!(error.to_string().contains("at most"), "{error}");
    }
}
