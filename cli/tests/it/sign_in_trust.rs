//! The sign-in against local attackers (issue 21): what the browser launcher sees, a sign-in
//! of another person delivered to the port, the token's origin, processes refreshing together.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use creditdata_mock::{MockConfig, MockServer};
use reqwest::StatusCode;

use crate::common::{command, mock, mock_with};
use crate::sign_in::{Home, sign_in_over_http};

/// A browser launcher (`$BROWSER`) that only writes down the arguments it was given, one a
/// line, where every local user could read them from `/proc/PID/cmdline`.
#[cfg(unix)]
fn recording_launcher(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt as _;
    let record = dir.join("launched.txt");
    let script = dir.join("launcher.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, record)
}

/// Starts `creditdata login` with the recording launcher and returns the child and the one
/// argument the launcher got.
#[cfg(unix)]
async fn login_with_launcher(home: &Home) -> (tokio::process::Child, String) {
    let (script, record) = recording_launcher(home.dir.path());
    let mut vars: Vec<(String, String)> = home.vars.clone();
    vars.push(("BROWSER".into(), script.display().to_string()));
    vars.push(("CREDITDATA_TOKEN_STORE".into(), "file".into()));
    let child = command(home.dir.path(), &vars, &["login", "--timeout", "60s"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let launched = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Ok(text) = std::fs::read_to_string(&record) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the launcher is started");
    let args: Vec<&str> = launched.lines().collect();
    assert_eq!(args.len(), 1, "one argument: {launched}");
    (child, args[0].to_string())
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[cfg(unix)]
#[tokio::test]
async fn item_1_the_browser_launcher_gets_no_secret_and_a_second_reader_gets_nothing() {
    let mock = mock().await;
    let home = Home::new(&mock);
    let (child, url) = login_with_launcher(&home).await;
    let parsed = reqwest::Url::parse(&url).expect("a URL");
    assert_eq!(parsed.host_str(), Some("127.0.0.1"), "{url}");
    assert_eq!(parsed.path(), "/start", "{url}");
    assert_eq!(parsed.query(), None, "no parameter at all: {url}");
    for secret in ["state", "nonce", "code_challenge", "client_id"] {
        assert!(!url.contains(secret), "{secret} on the command line: {url}");
    }

    // The browser follows it once, to the provider...
    let first = no_redirects().get(&url).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    let location = first.headers()["location"].to_str().unwrap().to_string();
    assert!(location.starts_with(mock.issuer()), "{location}");
    assert!(location.contains("code_challenge="), "{location}");
    // ...and a second reader of the same argument gets nothing it could use, and the sign-in
    // it would have raced is ended rather than left to whoever answers first.
    let second = no_redirects().get(&url).send().await.unwrap();
    assert_eq!(second.status(), StatusCode::BAD_REQUEST);
    assert!(second.headers().get("location").is_none());
    let page = second.text().await.unwrap();
    assert!(
        !page.contains("state") && !page.contains("code_challenge"),
        "{page}"
    );
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("login ends")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("opened more than once"), "{stderr}");
    assert!(!home.token_file("default").exists());
}

/// The mock with a second person, Mallory, beside the default user.
async fn mock_with_mallory() -> MockServer {
    mock_with(MockConfig {
        users: vec![
            creditdata_mock::config::DEFAULT_USER.parse().unwrap(),
            "mallory:mallory-password:Mallory Attacker:mallory@example.com"
                .parse()
                .unwrap(),
        ],
        ..MockConfig::default()
    })
    .await
}

#[cfg(unix)]
#[tokio::test]
async fn item_1_an_attacker_who_reads_the_address_first_cannot_finish_the_sign_in() {
    let mock = mock_with_mallory().await;
    let home = Home::new(&mock);
    let (child, url) = login_with_launcher(&home).await;
    // Mallory reads the argument and gets there first: she has this sign-in's secrets...
    let stolen = no_redirects().get(&url).send().await.unwrap();
    assert_eq!(stolen.status(), StatusCode::SEE_OTHER);
    // ...the loan officer's browser then opens the address, which ends the sign-in...
    let browser = no_redirects().get(&url).send().await.unwrap();
    assert_eq!(browser.status(), StatusCode::BAD_REQUEST);
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("login ends")
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    // ...so Mallory's own sign-in, delivered to the port, reaches nobody.
    let answered = std::panic::AssertUnwindSafe(sign_in_over_http(
        url.clone(),
        "mallory",
        "mallory-password",
        "approve",
    ));
    let _ = futures::FutureExt::catch_unwind(answered).await;
    assert!(!home.token_file("default").exists(), "nothing was kept");
}

#[tokio::test]
async fn item_1_a_sign_in_naming_another_person_needs_force() {
    let mock = mock_with_mallory().await;
    let home = Home::new(&mock);
    let as_lena = |url| sign_in_over_http(url, "lena", "lena-password", "approve");
    let as_mallory = |url| sign_in_over_http(url, "mallory", "mallory-password", "approve");
    home.login(&[], &[], as_lena).await.ok();
    let lena = home.stored("default");

    let refused = home.login(&[], &[], as_mallory).await;
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    refused
        .says("WARNING")
        .says("Mallory Attacker")
        .says("--force");
    assert_eq!(
        home.stored("default")["refresh_token"],
        lena["refresh_token"],
        "the profile still signs in as Lena"
    );

    let forced = home.login(&[], &["--force"], as_mallory).await.ok();
    forced.says("WARNING");
    assert_eq!(home.stored("default")["user"]["username"], "mallory");
}

#[tokio::test]
async fn item_2_a_changed_base_url_does_not_carry_the_token_elsewhere() {
    let mock = mock().await;
    let home = Home::new(&mock);
    home.login(&[], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let token = home.stored("default")["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    // Another service on loopback, as a variable or a changed setting would name it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = vec![0u8; 8192];
            let n = stream.read(&mut buffer).await.unwrap_or(0);
            record
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
            let _ = stream
                .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n")
                .await;
        }
    });
    for vars in [
        vec![
            ("CREDITDATA_BASE_URL", elsewhere.as_str()),
            ("CREDITDATA_ISSUER", mock.issuer()),
        ],
        vec![("CREDITDATA_MOCK_URL", elsewhere.as_str())],
    ] {
        let run = home
            .run_with(&vars, &["--no-retries", "sessions", "list"])
            .await;
        assert!(matches!(run.status, 2 | 3), "{}", run.stderr);
        assert!(run.stderr.contains("creditdata login"), "{}", run.stderr);
    }
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.contains(&token), "the token reached another host");
    assert!(
        !seen.to_ascii_lowercase().contains("authorization"),
        "{seen}"
    );
    // Where it was issued for, it still works.
    home.run(&["sessions", "list"]).await.ok();
}

#[cfg(unix)]
#[tokio::test]
async fn item_2_a_configuration_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt as _;
    let mock = mock().await;
    let home = Home::new(&mock);
    let dir = home.config_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(
        &file,
        format!("[profiles.work]\nbase_url = \"{}\"\n", mock.base_url()),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let token_url = mock.token_url();
    let vars = [
        ("CREDITDATA_ENVIRONMENT", ""),
        ("CREDITDATA_TOKEN_URL", token_url.as_str()),
        ("CREDITDATA_CLIENT_ID", mock.client_id()),
        ("CREDITDATA_CLIENT_SECRET", mock.client_secret()),
    ];
    let packages = || home.run_with(&vars, &["--profile", "work", "packages"]);
    let run = packages().await;
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("can be written by others"),
        "{}",
        run.stderr
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = packages().await;
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(&dir.display().to_string()),
        "{}",
        run.stderr
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    packages().await.ok();

    // A plain-http service off loopback is refused where the file says it.
    std::fs::write(
        &file,
        "[profiles.work]\nbase_url = \"http://api.example.test\"\n",
    )
    .unwrap();
    let run = packages().await;
    assert_eq!(run.status, 2, "{}", run.stderr);
    assert!(run.stderr.contains("must use https"), "{}", run.stderr);
}

#[tokio::test]
async fn item_4_processes_refreshing_at_once_keep_the_sign_in() {
    // Access tokens of 30 s: every `auth token` renews (it wants a minute left), and the
    // provider ends the whole sign-in when a rotated refresh token comes back.
    let mock = mock_with(MockConfig {
        token_lifetime: Duration::from_secs(30),
        ..MockConfig::default()
    })
    .await;
    let home = Home::new(&mock);
    home.login(&[("CREDITDATA_TOKEN_STORE", "file")], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let runs = futures::future::join_all((0..6).map(|_| home.run(&["auth", "token"]))).await;
    for run in &runs {
        assert_eq!(run.status, 0, "{}", run.stderr);
    }
    let after = home.stored("default");
    for run in &runs {
        assert!(!run.stdout.trim().is_empty(), "a token printed");
    }
    // The sign-in survived: the stored refresh token is the provider's current one, and the
    // person still works.
    home.run(&["sessions", "list"]).await.ok();
    assert!(after["refresh_token"].as_str().is_some());
}

#[tokio::test]
async fn item_11_login_asks_for_the_scope_and_prompt_given_and_the_profile_keeps_them() {
    let mock = mock().await;
    let home = Home::new(&mock);
    let login = home
        .login(
            &[],
            &[
                "--scope", "openid", "--scope", "email", "--prompt", "consent",
            ],
            |url| async move {
                let start = no_redirects().get(&url).send().await.unwrap();
                let to =
                    reqwest::Url::parse(start.headers()["location"].to_str().unwrap()).unwrap();
                let query: std::collections::HashMap<_, _> =
                    to.query_pairs().into_owned().collect();
                assert_eq!(query["prompt"], "consent", "{to}");
                assert!(query["scope"].split(' ').any(|s| s == "email"), "{to}");
                sign_in_over_http(to.to_string(), "lena", "lena-password", "approve").await;
            },
        )
        .await
        .ok();
    assert!(
        !login.stderr.contains("no refresh token"),
        "{}",
        login.stderr
    );
    let config = std::fs::read_to_string(home.config_dir().join("config.toml")).unwrap();
    let config: toml::Table = config.parse().unwrap();
    let profile = &config["profiles"]["default"];
    assert_eq!(profile["prompt"].as_str(), Some("consent"));
    assert!(
        profile["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str() == Some("email")),
        "{profile}"
    );
    // A prompt no provider knows is refused before anything starts.
    let bad = home
        .run(&["login", "--no-browser", "--prompt", "always"])
        .await;
    assert_eq!(bad.status, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--prompt"), "{}", bad.stderr);
}

#[tokio::test]
async fn item_10_logout_says_what_was_ended() {
    let mock = mock().await;
    let home = Home::new(&mock);
    home.login(&[], &[], |url| {
        sign_in_over_http(url, "lena", "lena-password", "approve")
    })
    .await
    .ok();
    let logout = home.run(&["logout"]).await.ok();
    logout
        .says("the refresh token was revoked")
        .says("the identity provider ended its session");
}
