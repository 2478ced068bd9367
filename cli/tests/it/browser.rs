//! `creditdata login` completed in a real browser: headless Chromium, driven through
//! chromedriver (WebDriver) with `fantoccini`, types the password into the mock's sign-in page
//! and approves on its consent page; the command then works with the stored sign-in.
//!
//! Skips (with a message) only when Chromium or chromedriver is not installed and
//! [`REQUIRE_VAR`] is not set; CI's `.ci/run` installs Debian's `chromium` and `chromium-driver`
//! and sets it, so there their absence fails the test instead of skipping it. Everything has a time limit, and the
//! browser resolves no name and reaches nothing but 127.0.0.1.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::common::{create_session, mock};
use crate::sign_in::Home;

/// The longest the whole test may take; a stuck browser fails it instead of hanging CI.
const TEST_LIMIT: Duration = Duration::from_secs(180);
/// The longest one page may take to show what the test waits for.
const PAGE_LIMIT: Duration = Duration::from_secs(30);

/// Set (to anything but empty) where the browser must be there: CI.
const REQUIRE_VAR: &str = "CREDITDATA_REQUIRE_BROWSER";

/// Skips the test with `why`, or fails it when [`REQUIRE_VAR`] says the browser is required.
fn skip_or_fail(why: &str) {
    let required = std::env::var_os(REQUIRE_VAR).is_some_and(|value| !value.is_empty());
    assert!(
        !required,
        "{why}, and {REQUIRE_VAR} says this test needs it (CI installs Debian's chromium and \
         chromium-driver): install them, set CHROME/CHROMEDRIVER, or unset {REQUIRE_VAR} to skip"
    );
    eprintln!(
        "SKIPPED login_completes_in_a_real_browser: {why} (Debian: apt-get install chromium chromium-driver)"
    );
}

/// The first of `names` found on `PATH`, or the path a variable gives.
fn find_program(variable: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable).map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// chromedriver on a loopback port, killed when dropped.
struct Driver {
    process: tokio::process::Child,
    url: String,
}

impl Driver {
    async fn start(program: &Path) -> Driver {
        let port = free_port();
        let process = tokio::process::Command::new(program)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let url = format!("http://127.0.0.1:{port}");
        let ready = async {
            let http = reqwest::Client::new();
            loop {
                let status = http.get(format!("{url}/status")).send().await;
                if let Ok(response) = status
                    && let Ok(body) = response.json::<serde_json::Value>().await
                    && body["value"]["ready"] == true
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::time::timeout(PAGE_LIMIT, ready)
            .await
            .expect("chromedriver answers on its port");
        Driver { process, url }
    }

    /// Asks chromedriver to shut down (it ends its browsers and reaps them), and kills it if it
    /// has not within a few seconds.
    async fn stop(mut self) {
        let shutdown = reqwest::Client::new()
            .get(format!("{}/shutdown", self.url))
            .timeout(Duration::from_secs(5))
            .send();
        let _ = shutdown.await;
        if tokio::time::timeout(Duration::from_secs(5), self.process.wait())
            .await
            .is_err()
        {
            let _ = self.process.kill().await;
        }
    }
}

/// Headless Chromium with a profile of its own that resolves no name and reaches only
/// loopback.
async fn browser(driver: &Driver, chromium: &Path, profile: &Path) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new",
                // Root in containers and CI has no user namespace for the sandbox.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                format!("--user-data-dir={}", profile.display()),
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--no-proxy-server",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            ],
        }),
    );
    ClientBuilder::rustls()
        .expect("a WebDriver client")
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .expect("a Chromium session")
}

/// What a person does in the browser: open the address, sign in as Lena, approve. An error
/// says which step failed (returned, not panicked, so the browser is always closed).
async fn sign_in_in_browser(browser: &Client, url: &str) -> Result<(), String> {
    let step = |what: &'static str| move |e: fantoccini::error::CmdError| format!("{what}: {e}");
    let find = |id: &'static str| {
        browser
            .wait()
            .at_most(PAGE_LIMIT)
            .for_element(Locator::Id(id))
    };
    browser
        .goto(url)
        .await
        .map_err(step("opening the address"))?;
    let fill = async |id, field: &str, value| {
        let input = find(id)
            .await
            .map_err(|e| format!("the {field} field: {e}"))?;
        input
            .send_keys(value)
            .await
            .map_err(|e| format!("typing the {field}: {e}"))
    };
    let click = async |id, button: &'static str, doing: &'static str| {
        find(id)
            .await
            .map_err(step(button))?
            .click()
            .await
            .map_err(step(doing))
    };
    fill("username", "user name", "lena").await?;
    fill("password", "password", "lena-password").await?;
    click("sign-in", "the sign-in button", "signing in").await?;
    click("approve", "the consent page's Approve button", "approving").await?;
    // The browser lands on the command's loopback page.
    let landed = async {
        loop {
            let url = browser
                .current_url()
                .await
                .map_err(step("reading the address"))?;
            if url.host_str() == Some("127.0.0.1") && url.path() == "/callback" {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(PAGE_LIMIT, landed)
        .await
        .map_err(|_| "the browser never reached the command's loopback port".to_string())?
}

#[tokio::test]
async fn login_completes_in_a_real_browser() {
    let Some(chromedriver) = find_program("CHROMEDRIVER", &["chromedriver"]) else {
        skip_or_fail("no chromedriver (CHROMEDRIVER names none, or none on PATH)");
        return;
    };
    let Some(chromium) = find_program(
        "CHROME",
        &["chromium", "chromium-browser", "google-chrome", "chrome"],
    ) else {
        skip_or_fail("no Chromium (CHROME names none, or none on PATH)");
        return;
    };

    tokio::time::timeout(TEST_LIMIT, async {
        let mock = mock().await;
        let home = Home::new(&mock);
        let driver = Driver::start(&chromedriver).await;
        let profile = tempfile::tempdir().expect("a browser profile directory");
        let client = browser(&driver, &chromium, profile.path()).await;

        let mut browsing = Ok(());
        let login = home
            .login(&[("CREDITDATA_TOKEN_STORE", "file")], &[], |url| {
                let browsing = &mut browsing;
                let client = &client;
                async move {
                    *browsing = sign_in_in_browser(client, &url).await;
                }
            })
            .await;
        // The browser goes whatever the outcome, before anything can fail.
        let _ = tokio::time::timeout(PAGE_LIMIT, client.close()).await;
        driver.stop().await;
        browsing.expect("the person's steps in the browser");
        let login = login.ok();
        login.says("Signed in to mock as Lena Loan Officer (lena)");

        let created = home
            .run(&create_session("jane.doe@example.com", "DEU:SCORE"))
            .await
            .ok();
        assert_eq!(created.json()["createdByName"], "Lena Loan Officer");
    })
    .await
    .expect("the browser test finishes in time");
}
