//! `cargo xtask conformance`: runs schemathesis against the mock server with the effective API
//! description and fails on any server error, schema-violating response or undocumented status
//! code.
//!
//! The run builds and starts `creditdata-mock` on `127.0.0.1:0`, takes a token from its token
//! endpoint, seeds one completed session (so the dataset, image, attachment and statement
//! endpoints answer 200, not only 404), and runs two schemathesis passes:
//!
//! - **seeded**: every path parameter fixed to an id of the seeded session; exercises the success
//!   responses and the query/body validation around them;
//! - **free**: path parameters generated; exercises unknown and malformed ids (404, 400), the
//!   session search and session creation.
//!
//! Checks: `not_a_server_error`, `status_code_conformance`, `content_type_conformance`,
//! `response_schema_conformance`, `response_headers_conformance`, `negative_data_rejection` and
//! `ignored_auth`. The token goes into a generated schemathesis config file (not the command
//! line); schemathesis masks it in its output.
//!
//! Only the standard library is used (the xtask crate stays light): the token request and the
//! seeding are plain HTTP/1.1 over loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

/// The schemathesis release installed into `.venv` when none is found.
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";

/// The checks every pass runs.
pub const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
response_schema_conformance,response_headers_conformance,negative_data_rejection,ignored_auth";

/// Options of `cargo xtask conformance`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConformanceArgs {
    /// Test cases per operation and phase, in each of the two passes.
    #[arg(long, default_value_t = 50)]
    pub max_examples: u32,
    /// Seed for reproducible generation (default: random; the seed used is printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Give up (and fail) when a pass runs longer than this many seconds.
    #[arg(long, default_value_t = 600)]
    pub pass_timeout: u64,
    /// The schemathesis executable (default: `schemathesis` on PATH, then `.venv/bin`, else it
    /// is installed into `.venv` at the pinned version).
    #[arg(long)]
    pub schemathesis: Option<PathBuf>,
    /// A `creditdata-mock` binary to run instead of building one.
    #[arg(long)]
    pub mock_binary: Option<PathBuf>,
    /// Where schemathesis writes its JUnit reports (default: `target/conformance`).
    #[arg(long)]
    pub report_dir: Option<PathBuf>,
}

impl ConformanceArgs {
    /// The options `cargo xtask ci` runs with: the command line's defaults and a fixed seed, so
    /// a CI run is reproducible (`cargo xtask conformance` alone explores with random seeds).
    pub fn ci_defaults() -> Self {
        ConformanceArgs {
            max_examples: 50,
            seed: Some(7),
            pass_timeout: 600,
            schemathesis: None,
            mock_binary: None,
            report_dir: None,
        }
    }
}

/// Runs the conformance check; `Err` when anything fails.
pub fn run(args: ConformanceArgs) -> anyhow::Result<()> {
    let root = workspace_root()?;
    let document = root.join("spec/openapi.effective.json");
    if !document.is_file() {
        bail!(
            "{} is missing; run `cargo xtask regen` first",
            document.display()
        );
    }
    let work = args
        .report_dir
        .clone()
        .unwrap_or_else(|| target_dir(&root).join("conformance"));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let schemathesis = find_schemathesis(&root, args.schemathesis.as_deref())?;
    let binary = match &args.mock_binary {
        Some(binary) => binary.clone(),
        None => build_mock(&root)?,
    };

    let secret = random_hex();
    let mut mock = MockProcess::start(&binary, "conformance", &secret)?;
    let base = mock.base_url.clone();
    println!("conformance: mock at {base}");
    let token = fetch_token(&base, "conformance", &secret)?;
    let seeded = seed(&base, &token)?;
    println!("conformance: seeded session {}", seeded.session);

    let seed = args
        .seed
        .unwrap_or_else(|| u64::from_str_radix(&random_hex()[..12], 16).unwrap_or(1));
    println!("conformance: schemathesis seed {seed}");
    let mut failures = Vec::new();
    for pass in [Pass::Seeded, Pass::Free] {
        let config = work.join(format!("schemathesis-{}.toml", pass.name()));
        write_config(&config, &token, (pass == Pass::Seeded).then_some(&seeded))?;
        let started = Instant::now();
        let status = run_schemathesis(
            &schemathesis,
            &config,
            &document,
            &base,
            &work,
            pass,
            seed,
            &args,
        )?;
        println!(
            "conformance: {} pass {} in {:.0?}",
            pass.name(),
            if status.success() { "passed" } else { "FAILED" },
            started.elapsed()
        );
        if !status.success() {
            failures.push(pass.name());
        }
        // The config holds a token; do not leave it behind.
        let _ = std::fs::remove_file(&config);
    }
    if !mock.is_running() {
        failures.push("mock server (it exited during the run)");
    }
    mock.stop();
    if failures.is_empty() {
        println!(
            "conformance: no server errors, no responses violating the description, no undocumented status codes"
        );
        Ok(())
    } else {
        bail!("conformance failed: {}", failures.join(", "))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    Seeded,
    Free,
}

impl Pass {
    fn name(self) -> &'static str {
        match self {
            Pass::Seeded => "seeded",
            Pass::Free => "free",
        }
    }
}

pub(crate) fn workspace_root() -> anyhow::Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| anyhow!("xtask has no parent directory"))
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

pub(crate) fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::new();
    for round in 0..2u64 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(round);
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out
}

fn is_executable(path: &Path) -> bool {
    path.is_file()
}

fn find_schemathesis(root: &Path, explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for directory in std::env::split_paths(&paths) {
            let candidate = directory.join("schemathesis");
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    let venv = root.join(".venv");
    let candidate = venv.join("bin/schemathesis");
    if is_executable(&candidate) {
        return Ok(candidate);
    }
    println!(
        "conformance: installing schemathesis {SCHEMATHESIS_VERSION} into {}",
        venv.display()
    );
    if !venv.join("bin/pip").is_file() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("running python3 -m venv (is Python 3 installed?)")?;
        if !status.success() {
            bail!("python3 -m venv {} failed", venv.display());
        }
    }
    let status = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            &format!("schemathesis=={SCHEMATHESIS_VERSION}"),
        ])
        .status()
        .context("running pip install schemathesis")?;
    if !status.success() || !is_executable(&candidate) {
        bail!(
            "installing schemathesis=={SCHEMATHESIS_VERSION} into {} failed",
            venv.display()
        );
    }
    Ok(candidate)
}

pub(crate) fn build_mock(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "-p",
            "creditdata-mock",
            "--bin",
            "creditdata-mock",
        ])
        .status()
        .context("running cargo build -p creditdata-mock")?;
    if !status.success() {
        bail!("building creditdata-mock failed");
    }
    let binary = target_dir(root).join("debug/creditdata-mock");
    if !binary.is_file() {
        bail!("{} was not built", binary.display());
    }
    Ok(binary)
}

/// The running mock; killed when dropped.
pub(crate) struct MockProcess {
    child: Child,
    pub(crate) base_url: String,
}

impl MockProcess {
    pub(crate) fn start(
        binary: &Path,
        client_id: &str,
        secret: &str,
    ) -> anyhow::Result<MockProcess> {
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--client-id", client_id])
            .args(["--token-lifetime", "2h", "--provider-delay", "0s"])
            .env("CREDITDATA_MOCK_CLIENT_SECRET", secret)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
        let (sender, receiver) = mpsc::channel();
        // Read the announced address, then keep draining stdout so the mock never blocks.
        std::thread::spawn(move || {
            let mut sender = Some(sender);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.split("listening on ").nth(1)
                    && let Some(sender) = sender.take()
                {
                    let _ = sender.send(url.trim().to_owned());
                }
            }
        });
        let base_url = match receiver.recv_timeout(Duration::from_secs(60)) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                bail!("the mock did not announce `listening on http://...` within 60 s");
            }
        };
        Ok(MockProcess { child, base_url })
    }

    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One HTTP/1.1 exchange over loopback: (status, body).
fn http(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> anyhow::Result<(u16, String)> {
    let authority = base
        .strip_prefix("http://")
        .ok_or_else(|| anyhow!("the mock's URL {base} is not http://"))?
        .trim_end_matches('/');
    let mut stream =
        TcpStream::connect(authority).with_context(|| format!("connecting to {authority}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("{method} {path}: malformed HTTP response"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| anyhow!("{method} {path}: no status line"))?;
    let chunked = head.lines().any(|line| {
        line.to_ascii_lowercase().starts_with("transfer-encoding:")
            && line.to_ascii_lowercase().contains("chunked")
    });
    Ok((
        status,
        if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        },
    ))
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}

/// The string value of the first `"key":"..."` after `after` in a JSON text.
fn string_after(json: &str, after: &str, key: &str) -> Option<String> {
    let start = json.find(after)? + after.len();
    let needle = format!("\"{key}\":\"");
    let at = json[start..].find(&needle)? + start + needle.len();
    let end = json[at..].find('"')? + at;
    Some(json[at..end].to_owned())
}

fn fetch_token(base: &str, client_id: &str, secret: &str) -> anyhow::Result<String> {
    let body =
        format!("grant_type=client_credentials&client_id={client_id}&client_secret={secret}");
    let (status, answer) = http(
        base,
        "POST",
        "/realms/consumer/protocol/openid-connect/token",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        &body,
    )?;
    if status != 200 {
        bail!("the token endpoint answered {status}");
    }
    string_after(&answer, "{", "access_token")
        .ok_or_else(|| anyhow!("the token response has no access_token"))
}

/// Ids of a completed session with data in every dataset.
struct Seeded {
    session: String,
    source_file: String,
    account_statement: String,
    attachment: String,
    verification: String,
    image: String,
}

fn seed(base: &str, token: &str) -> anyhow::Result<Seeded> {
    let authorization = format!("Bearer {token}");
    let get = |path: &str| -> anyhow::Result<String> {
        let (status, body) = http(base, "GET", path, &[("Authorization", &authorization)], "")?;
        if status != 200 {
            bail!("seeding: GET {path} answered {status}");
        }
        Ok(body)
    };
    let all = r#"["CREDIT_HISTORY","SCORE","BANK_ACCOUNT_CATEGORIZATION","IDENTIFICATION"]"#;
    let body = format!(
        r#"{{"subjectEmail":"conformance@example.com","queryParameters":[{{"countryCode":"FIN","dataPackages":{all}}},{{"countryCode":"GBR","dataPackages":{all}}},{{"countryCode":"SWE","dataPackages":["SCORE"]}},{{"countryCode":"NOR","dataPackages":["SCORE"]}}]}}"#
    );
    let (status, created) = http(
        base,
        "POST",
        "/v1/sessions",
        &[
            ("Authorization", &authorization),
            ("Content-Type", "application/json"),
        ],
        &body,
    )?;
    if status != 201 {
        bail!("seeding: POST /v1/sessions answered {status}: {created}");
    }
    let session =
        string_after(&created, "{", "id").ok_or_else(|| anyhow!("seeding: no session id"))?;
    let (status, _) = http(
        base,
        "POST",
        &format!("/_mock/sessions/{session}/complete"),
        &[],
        "",
    )?;
    if status != 200 {
        bail!("seeding: completing the session answered {status}");
    }
    let at = |suffix: &str| format!("/v1/sessions/{session}{suffix}");
    let missing = |what: &str| anyhow!("seeding: the seeded session has no {what}");
    let source_file = string_after(&get(&at("/source-files"))?, "[", "id")
        .ok_or_else(|| missing("source file"))?;
    let account_statement = string_after(
        &get(&at("/account-statements"))?,
        "\"accountStatements\":[",
        "id",
    )
    .ok_or_else(|| missing("account statement"))?;
    let attachment = string_after(&get(&at("/attachments"))?, "\"attachments\":[", "id")
        .ok_or_else(|| missing("attachment"))?;
    let verification = string_after(
        &get(&at("/identity-verifications"))?,
        "\"identityVerifications\":[",
        "id",
    )
    .ok_or_else(|| missing("identity verification"))?;
    let image = string_after(
        &get(&at(&format!(
            "/identity-verifications/{verification}/images"
        )))?,
        "\"images\":[",
        "id",
    )
    .ok_or_else(|| missing("image"))?;
    Ok(Seeded {
        session,
        source_file,
        account_statement,
        attachment,
        verification,
        image,
    })
}

fn write_config(path: &Path, token: &str, seeded: Option<&Seeded>) -> anyhow::Result<()> {
    let mut config =
        String::from("# Generated by cargo xtask conformance; removed after the run.\n");
    config.push_str("[headers]\n");
    config.push_str(&format!("Authorization = \"Bearer {token}\"\n"));
    if let Some(seeded) = seeded {
        config.push_str("\n[parameters]\n");
        for (name, value) in [
            ("sessionId", &seeded.session),
            ("sourceFileId", &seeded.source_file),
            ("accountStatementId", &seeded.account_statement),
            ("attachmentId", &seeded.attachment),
            ("verificationId", &seeded.verification),
            ("imageId", &seeded.image),
        ] {
            config.push_str(&format!("\"path.{name}\" = \"{value}\"\n"));
        }
    }
    std::fs::write(path, config).with_context(|| format!("writing {}", path.display()))
}

#[allow(clippy::too_many_arguments)]
fn run_schemathesis(
    schemathesis: &Path,
    config: &Path,
    document: &Path,
    base: &str,
    work: &Path,
    pass: Pass,
    seed: u64,
    args: &ConformanceArgs,
) -> anyhow::Result<ExitStatus> {
    let mut child = Command::new(schemathesis)
        .current_dir(work)
        .arg("--config-file")
        .arg(config)
        .arg("run")
        .arg(document)
        .args(["--url", base])
        .args(["--checks", CHECKS])
        .args(["--max-examples", &args.max_examples.to_string()])
        .args(["--seed", &seed.to_string()])
        // One worker: with several, schemathesis (on CPython 3.11) can hit an interpreter
        // error compiling in parallel threads ("AST constructor recursion depth mismatch").
        .args(["--workers", "1"])
        .args(["--generation-database", ":memory:"])
        .args(["--report", "junit"])
        .arg("--report-junit-path")
        .arg(work.join(format!("junit-{}.xml", pass.name())))
        .arg("--no-color")
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", schemathesis.display()))?;
    let deadline = Instant::now() + Duration::from_secs(args.pass_timeout);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "the {} pass ran longer than {} s",
                pass.name(),
                args.pass_timeout
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_after_finds_the_first_key_after_a_marker() {
        let json =
            r#"{"sources":[],"accountStatements":[{"id":"a1","transactions":[{"id":"t1"}]}]}"#;
        assert_eq!(
            string_after(json, "\"accountStatements\":[", "id").as_deref(),
            Some("a1")
        );
        assert_eq!(string_after(json, "\"missing\":[", "id"), None);
    }

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            "hello world"
        );
    }
}
