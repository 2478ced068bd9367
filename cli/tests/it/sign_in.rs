//! A person signs in with `creditdata login` against the in-process mock, and every command then
//! acts in their name. The browser is a cookie-aware HTTP client posting the mock's sign-in and
//! consent forms (the real browser is in `browser.rs`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use creditdata_mock::{MockConfig, MockServer};
use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};

use crate::common::{command, create_session, mock, mock_with};

/// The longest a login may take in a test: the browser's part is a few local requests.
const LOGIN_LIMIT: Duration = Duration::from_secs(60);

/// A person's machine: a working directory whose `config/` is the configuration directory.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub vars: Vec<(String, String)>,
}

pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(self) -> Self {
        assert_eq!(
            self.status, 0,
            "stdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts that stderr says `text`.
    pub fn says(&self, text: &str) -> &Self {
        assert!(
            self.stderr.contains(text),
            "stderr does not say {text:?}:\n{}",
            self.stderr
        );
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }

    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

impl Home {
    /// The mock as the `mock` environment, and nothing else configured: no client credentials.
    pub fn new(mock: &MockServer) -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
            vars: vec![
                ("CREDITDATA_ENVIRONMENT".into(), "mock".into()),
                ("CREDITDATA_MOCK_URL".into(), mock.base_url().to_string()),
            ],
        }
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    fn vars_with<'a>(&'a self, extra: &'a [(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut vars: Vec<(&str, &str)> = self
            .vars
            .iter()
            .filter(|(name, _)| !extra.iter().any(|(n, _)| n == name))
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        vars.extend_from_slice(extra);
        vars
    }

    pub async fn run(&self, args: &[&str]) -> Run {
        self.run_with(&[], args).await
    }

    pub async fn run_with(&self, extra: &[(&str, &str)], args: &[&str]) -> Run {
        let output = tokio::time::timeout(
            LOGIN_LIMIT,
            command(self.dir.path(), &self.vars_with(extra), args).output(),
        )
        .await
        .expect("the command finishes")
        .expect("the binary runs");
        Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `creditdata login --no-browser ARGS`, with `browser` given the printed address and
    /// left to finish the sign-in; the login's outcome.
    pub async fn login<F, Fut>(&self, extra: &[(&str, &str)], args: &[&str], browser: F) -> Run
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let mut argv = vec!["login", "--no-browser", "--timeout", "60s"];
        argv.extend_from_slice(args);
        let mut child = command(self.dir.path(), &self.vars_with(extra), &argv)
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        let url = tokio::time::timeout(LOGIN_LIMIT, async {
            loop {
                let mut line = String::new();
                if stderr.read_line(&mut line).await.expect("stderr") == 0 {
                    return None;
                }
                seen.push_str(&line);
                let trimmed = line.trim();
                if trimmed.starts_with("http://") || trimmed.starts_with("https://") {
                    return Some(trimmed.to_string());
                }
            }
        })
        .await
        .expect("login prints the address in time");
        let Some(url) = url else {
            let output = child.wait_with_output().await.expect("login ends");
            return Run {
                status: output.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: seen,
            };
        };
        browser(url).await;
        let mut rest = String::new();
        let output = tokio::time::timeout(LOGIN_LIMIT, async {
            stderr.read_to_string(&mut rest).await.expect("stderr");
            child.wait_with_output().await.expect("login ends")
        })
        .await
        .expect("login finishes once the browser is done");
        Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: seen + &rest,
        }
    }

    /// The stored sign-in of `profile` (file store).
    pub fn stored(&self, profile: &str) -> Value {
        let text = std::fs::read_to_string(self.token_file(profile)).expect("a stored sign-in");
        serde_json::from_str(&text).expect("JSON")
    }

    pub fn token_file(&self, profile: &str) -> PathBuf {
        self.config_dir()
            .join("tokens")
            .join(format!("{profile}.json"))
    }
}

/// The status the provider answers when `refresh_token` is offered for new tokens, as the
/// command would offer it.
async fn refresh_answer(mock: &MockServer, refresh_token: &str) -> StatusCode {
    reqwest::Client::new()
        .post(mock.token_url())
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", mock.public_client_id()),
        ])
        .send()
        .await
        .expect("the provider answers")
        .status()
}

/// A browser without a window: keeps cookies, and follows the mock's redirects itself so the
/// last one (to the command's loopback port) is seen.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The value of the hidden input `name` in `html`.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{name} in {html}"))
        + marker.len();
    let end = html[start..].find('"').expect("end of value");
    html[start..start + end].to_owned()
}

/// The `action` of the page's form, resolved against `page`.
fn form_action(page: &reqwest::Url, html: &str) -> reqwest::Url {
    let marker = "action=\"";
    let start = html.find(marker).expect("a form") + marker.len();
    let end = html[start..].find('"').expect("end of action");
    page.join(&html[start..start + end].replace("&amp;", "&"))
        .expect("action URL")
}

/// Signs `user` in on the mock's pages at `url` and answers the consent page with `decision`;
/// then delivers the redirect to the command's loopback port, as a browser would.
pub async fn sign_in_over_http(url: String, user: &str, password: &str, decision: &str) {
    let browser = browser();
    let mut page = reqwest::Url::parse(&url).expect("an address");
    // The command's one-time start address sends the browser on to the provider.
    if page.host_str() == Some("127.0.0.1") && page.path() == "/start" {
        let start = browser.get(&url).send().await.expect("the start address");
        assert_eq!(start.status(), StatusCode::SEE_OTHER, "{url} sends on");
        page = reqwest::Url::parse(start.headers()["location"].to_str().expect("ascii"))
            .expect("an address");
    }
    let response = browser
        .get(page.clone())
        .send()
        .await
        .expect("sign-in page");
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.expect("html");
    let consent = browser
        .post(form_action(&page, &html))
        .form(&[
            ("request", hidden(&html, "request")),
            ("csrf_token", hidden(&html, "csrf_token")),
            ("username", user.to_string()),
            ("password", password.to_string()),
        ])
        .send()
        .await
        .expect("sign-in form");
    assert_eq!(consent.status(), StatusCode::OK);
    let consent_url = consent.url().clone();
    let html = consent.text().await.expect("consent html");
    let answer = browser
        .post(form_action(&consent_url, &html))
        .form(&[
            ("request", hidden(&html, "request")),
            ("csrf_token", hidden(&html, "csrf_token")),
            ("decision", decision.to_string()),
        ])
        .send()
        .await
        .expect("consent form");
    assert_eq!(
        answer.status(),
        StatusCode::SEE_OTHER,
        "back to the command"
    );
    let location = answer.headers()["location"].to_str().expect("ascii");
    assert!(
        location.starts_with("http://127.0.0.1:"),
        "to the loopback port: {location}"
    );
    let landing = browser
        .get(location)
        .send()
        .await
        .expect("the loopback page");
    let landing_status = landing.status();
    let page = landing.text().await.unwrap_or_default();
    if decision == "approve" {
        assert!(landing_status.is_success(), "{landing_status}: {page}");
    }
}

/// The tokens of a stored sign-in, none of which may ever be printed.
fn secrets(stored: &Value) -> Vec<String> {
    ["access_token", "refresh_token", "id_token"]
        .iter()
        .filter_map(|k| stored[*k].as_str().map(str::to_string))
        .collect()
}

fn assert_no_secret(run: &Run, secrets: &[String]) {
    for secret in secrets {
        assert!(
            !run.all().contains(secret.as_str()),
            "a token was printed:\n{}",
            run.all()
        );
    }
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn a_person_signs_in_works_in_their_name_and_signs_out() {
    let mock = mock().await;
    let home = Home::new(&mock);

    let login = home
        .login(&[], &[], |url| {
            sign_in_over_http(url, "lena", "lena-password", "approve")
        })
        .await
        .ok();
    login.says("Signed in to mock as Lena Loan Officer (lena)");
    // Headless here: no keyring, so the file, and the person is told.
    login.says("no system keyring is available");
    let stored = home.stored("default");
    let secrets = secrets(&stored);
    assert_eq!(secrets.len(), 3, "access, refresh and ID tokens kept");
    assert_no_secret(&login, &secrets);
    #[cfg(unix)]
    {
        assert_eq!(mode(&home.token_file("default")), 0o600);
        assert_eq!(mode(&home.config_dir().join("tokens")), 0o700);
        assert_eq!(mode(&home.config_dir().join("config.toml")), 0o600);
    }
    // The profile remembers where and how.
    let config = std::fs::read_to_string(home.config_dir().join("config.toml")).unwrap();
    let config: toml::Table = config.parse().unwrap();
    let profile = &config["profiles"]["default"];
    assert_eq!(profile["environment"].as_str(), Some("mock"));
    assert_eq!(profile["issuer"].as_str(), Some(mock.issuer()));
    assert_eq!(profile["client_id"].as_str(), Some(mock.public_client_id()));
    assert_eq!(profile["token_store"].as_str(), Some("file"));

    // Every command now acts as Lena, with nothing but the profile.
    let created = home
        .run(&create_session("jane.doe@example.com", "GBR:score"))
        .await
        .ok();
    assert_no_secret(&created, &secrets);
    assert_eq!(created.json()["createdByName"], "Lena Loan Officer");

    let status = home.run(&["auth", "status", "--output", "json"]).await.ok();
    assert_no_secret(&status, &secrets);
    let shown = status.json();
    assert_eq!(shown["profile"], "default");
    assert_eq!(shown["environment"], "mock");
    assert_eq!(shown["issuer"], mock.issuer());
    assert_eq!(shown["username"], "lena");
    assert_eq!(shown["name"], "Lena Loan Officer");
    assert_eq!(shown["accessTokenValid"], true);
    assert!(shown["subject"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        shown["tokenStore"]
            .as_str()
            .is_some_and(|s| s.starts_with("file ")),
        "{shown}"
    );
    let table = home
        .run(&["auth", "status", "--output", "table"])
        .await
        .ok();
    assert_no_secret(&table, &secrets);
    assert!(
        table.stdout.contains("Lena Loan Officer"),
        "{}",
        table.stdout
    );

    // For scripts, explicitly: the access token on stdout and nothing else.
    let token = home.run(&["auth", "token"]).await.ok();
    assert_eq!(
        token.stdout.trim(),
        home.stored("default")["access_token"].as_str().unwrap()
    );
    assert!(!token.stderr.contains(token.stdout.trim()));

    // A sign-in file others can read is not used.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = home.token_file("default");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = home.run(&["sessions", "list"]).await;
        assert_eq!(refused.status, 2, "{}", refused.stderr);
        refused.says("permissions 0644");
        refused.says(file.to_str().unwrap());
        assert_no_secret(&refused, &secrets);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // Signing out revokes at the provider and forgets here; twice is fine.
    let refresh_token = stored["refresh_token"].as_str().unwrap().to_string();
    let logout = home.run(&["logout"]).await.ok();
    logout.says("Signed out");
    assert!(!home.token_file("default").exists());
    assert_eq!(
        refresh_answer(&mock, &refresh_token).await,
        StatusCode::BAD_REQUEST,
        "revoked at the IdP"
    );
    let again = home.run(&["logout"]).await.ok();
    again.says("Not signed in");

    let after = home.run(&["sessions", "list"]).await;
    assert_eq!(after.status, 3, "{}", after.stderr);
    after.says("creditdata login");
    let status = home.run(&["auth", "status"]).await;
    assert_eq!(status.status, 3, "{}", status.stderr);
    status.says("not signed in");
}

#[tokio::test]
async fn a_sign_in_ended_at_the_provider_asks_to_log_in_again() {
    let mock = mock().await;
    let home = Home::new(&mock);
    home.login(&[("CREDITDATA_TOKEN_STORE", "file")], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let stored = home.stored("default");
    // The organisation revokes the sign-in (RFC 7009): its access tokens die with it.
    let revoked = reqwest::Client::new()
        .post(format!("{}/protocol/openid-connect/revoke", mock.issuer()))
        .form(&[
            ("token", stored["refresh_token"].as_str().unwrap()),
            ("token_type_hint", "refresh_token"),
            ("client_id", mock.public_client_id()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);

    let run = home.run(&["sessions", "list"]).await;
    assert_eq!(run.status, 3, "{}", run.stderr);
    run.says("creditdata login");
    assert_no_secret(&run, &secrets(&stored));
}

#[tokio::test]
async fn a_denied_sign_in_keeps_nothing() {
    let mock = mock().await;
    let home = Home::new(&mock);
    let login = home
        .login(&[], &[], |url| {
            sign_in_over_http(url, "lena", "lena-password", "deny")
        })
        .await;
    assert_eq!(login.status, 3, "{}", login.stderr);
    login.says("access_denied");
    assert!(!home.token_file("default").exists());
    assert!(!home.config_dir().join("config.toml").exists());
}

#[tokio::test]
async fn the_keyring_asked_for_and_absent_is_a_clear_error() {
    let mock = mock().await;
    let home = Home::new(&mock);
    let run = home
        .run(&["login", "--no-browser", "--token-store", "keyring"])
        .await;
    assert_eq!(run.status, 2, "{}", run.stderr);
    run.says("system keyring is not available")
        .says("--token-store file");
    assert!(
        !run.stderr.contains("http://"),
        "no sign-in was started: {}",
        run.stderr
    );
}

#[tokio::test]
async fn settings_come_from_option_then_variable_then_profile() {
    let mock = mock().await;
    let home = Home::new(&mock);
    // A port nothing listens on.
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    std::fs::create_dir_all(home.config_dir()).unwrap();
    std::fs::write(
        home.config_dir().join("config.toml"),
        format!(
            "# the mock\n[profiles.work]\nbase_url = \"{}\"\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let client_credentials = [
        ("CREDITDATA_TOKEN_URL", mock.token_url()),
        ("CREDITDATA_CLIENT_ID", mock.client_id().to_string()),
        ("CREDITDATA_CLIENT_SECRET", mock.client_secret().to_string()),
    ];
    let vars = |extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
        // The home's mock environment is not wanted here: the profile is.
        let mut vars = vec![("CREDITDATA_ENVIRONMENT", String::new())];
        vars.extend(client_credentials.iter().cloned());
        vars.extend(extra.iter().cloned());
        vars
    };
    let run = |extra: Vec<(&'static str, String)>, args: Vec<String>| {
        let home = &home;
        async move {
            let extra: Vec<(&str, &str)> = extra.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            home.run_with(&extra, &args).await
        }
    };
    let args = |a: &[&str]| -> Vec<String> { a.iter().map(|s| s.to_string()).collect() };

    // The profile, chosen by option or variable, says where the service is.
    run(
        vars(&[]),
        args(&["--profile", "work", "--no-retries", "packages"]),
    )
    .await
    .ok();
    run(
        vars(&[("CREDITDATA_PROFILE", "work".into())]),
        args(&["--no-retries", "packages"]),
    )
    .await
    .ok();
    // The variable beats the profile...
    let beaten = run(
        vars(&[("CREDITDATA_BASE_URL", dead.clone())]),
        args(&["--profile", "work", "--no-retries", "packages"]),
    )
    .await;
    assert_eq!(beaten.status, 1, "{}", beaten.stderr);
    // ...and the option beats the variable.
    run(
        vars(&[("CREDITDATA_BASE_URL", dead.clone())]),
        args(&[
            "--profile",
            "work",
            "--base-url",
            mock.base_url(),
            "--no-retries",
            "packages",
        ]),
    )
    .await
    .ok();

    // A profile named on purpose must exist.
    let missing = run(vars(&[]), args(&["--profile", "wrok", "packages"])).await;
    assert_eq!(missing.status, 2, "{}", missing.stderr);
    missing.says("no profile \"wrok\"").says("config.toml");

    // A mistake in the file names the file, line and key; nothing is sent.
    std::fs::write(
        home.config_dir().join("config.toml"),
        "[profiles.work]\nbase_url = \"http://127.0.0.1:1\"\nisuer = \"http://127.0.0.1:2\"\n",
    )
    .unwrap();
    let bad = run(vars(&[]), args(&["--profile", "work", "packages"])).await;
    assert_eq!(bad.status, 2, "{}", bad.stderr);
    let file = home.config_dir().join("config.toml");
    bad.says(&format!("{}:3:1:", file.display())).says("isuer");
}

#[tokio::test]
async fn auth_token_renews_a_token_about_to_expire() {
    // Access tokens of 30 s: less than the minute `auth token` wants a script to have.
    let mock = mock_with(MockConfig {
        token_lifetime: Duration::from_secs(30),
        ..MockConfig::default()
    })
    .await;
    let home = Home::new(&mock);
    home.login(&[], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let before = home.stored("default");
    // The service is a closed port: renewing a token is the identity provider's business only,
    // and any request to the service would fail the command.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let token = home
        .run_with(
            &[
                ("CREDITDATA_BASE_URL", &nowhere),
                ("CREDITDATA_ISSUER", mock.issuer()),
            ],
            &["auth", "token"],
        )
        .await
        .ok();
    let after = home.stored("default");
    let printed = token.stdout.trim();
    assert_ne!(printed, before["access_token"].as_str().unwrap(), "renewed");
    assert_eq!(printed, after["access_token"].as_str().unwrap(), "and kept");
    assert_ne!(
        after["refresh_token"], before["refresh_token"],
        "the rotated refresh token is kept"
    );
    // The renewed token is Lena's.
    let created = home
        .run_with(
            &[("CREDITDATA_TOKEN", printed)],
            &[
                "sessions",
                "create",
                "--email",
                "a@example.com",
                "-q",
                "GBR:score",
            ],
        )
        .await
        .ok();
    assert_eq!(created.json()["createdByName"], "Lena Loan Officer");
}

#[tokio::test]
async fn logout_forgets_even_when_the_provider_is_gone_and_says_so() {
    let mock = mock().await;
    let home = Home::new(&mock);
    home.login(&[], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let secrets = secrets(&home.stored("default"));
    mock.shutdown().await;
    let logout = home.run(&["logout"]).await;
    assert_eq!(logout.status, 1, "{}", logout.stderr);
    logout
        .says("removed from this computer")
        .says("stays valid until it expires");
    assert_no_secret(&logout, &secrets);
    assert!(!home.token_file("default").exists());
}

#[cfg(unix)]
#[tokio::test]
async fn an_unreadable_sign_in_is_refused_without_quoting_it_and_logout_removes_it() {
    use std::os::unix::fs::PermissionsExt;
    let mock = mock().await;
    let home = Home::new(&mock);
    let tokens = home.config_dir().join("tokens");
    std::fs::create_dir_all(&tokens).unwrap();
    std::fs::set_permissions(home.config_dir(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = home.token_file("default");
    std::fs::write(&file, "{\"refresh_token\": \"not-json-secret-value\" oops").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let run = home
        .run(&["--token-store", "file", "sessions", "list"])
        .await;
    assert_eq!(run.status, 2, "{}", run.stderr);
    run.says("cannot be read").says("creditdata logout");
    assert!(
        !run.all().contains("not-json-secret-value"),
        "{}",
        run.stderr
    );
    home.run(&["--token-store", "file", "logout"]).await.ok();
    assert!(!file.exists());
}

#[tokio::test]
async fn a_second_login_ends_the_first_at_the_provider() {
    let mock = mock().await;
    let home = Home::new(&mock);
    let approve = |url| sign_in_over_http(url, "lena", "lena-password", "approve");
    home.login(&[], &[], approve).await.ok();
    let first = home.stored("default")["refresh_token"]
        .as_str()
        .unwrap()
        .to_string();
    let second = home.login(&[], &[], approve).await.ok();
    assert!(!second.stderr.contains("warning"), "{}", second.stderr);
    assert_ne!(home.stored("default")["refresh_token"], first.as_str());
    assert_eq!(
        refresh_answer(&mock, &first).await,
        StatusCode::BAD_REQUEST,
        "the first sign-in was revoked"
    );
    home.run(&["sessions", "list"]).await.ok();
}
