//! Secrets (client secret, static token, access tokens) never appear in `Debug` output, error
//! messages with their causes or `tracing` output, while the per-call span carries operation,
//! attempt, status and duration.
//!
//! One test in its own binary, apart from `tests/it`: it installs the process-wide subscriber
//! (with the `log` bridge, so `reqwest`'s own records are captured too) at `TRACE`, which would
//! capture, and be disturbed by, every other test running in the same process.

// The tests call every operation the service offers, deprecated or not: a deprecation the vendor
// publishes must not stop them from compiling (CI's clippy denies warnings).
#![allow(deprecated)]

#[path = "it/support.rs"]
mod support;

use std::time::Duration;

use creditdata_client::Client;
use creditdata_client::auth::{Credentials, TokenEndpoint};
use support::*;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

const CLIENT_SECRET: &str = "cs-7f3a9c1e-secret";
const ACCESS_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.at-5b2d8e4f-token.sig";
const STATIC_TOKEN: &str = "st-91c4e7aa-static";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_appear_in_debug_display_or_tracing_output() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        // The loopback server's own logs are not the client's output.
        .with_env_filter(tracing_subscriber::EnvFilter::new("trace,wiremock=off"))
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .try_init()
        .expect("the only subscriber of this test binary");

    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response(ACCESS_TOKEN, 300))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/bad-token"))
        .respond_with(token_error(
            401,
            "invalid_client",
            "Invalid client credentials",
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .and(header(
            "authorization",
            format!("Bearer {ACCESS_TOKEN}").as_str(),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;

    let oauth = builder(&server).credentials(Credentials::client_credentials(
        TokenEndpoint::Url(format!("{}{TOKEN_PATH}", server.uri())),
        "visible-client-id",
        CLIENT_SECRET,
    ));
    let mut shown = vec![format!("{oauth:?}")];
    let client = oauth.build().unwrap();
    // A successful call (the token is now cached in the client), then a 401 after refresh.
    client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap();
    shown.push(format!("{client:?}"));
    let refused = client
        .get_scores()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    shown.push(format!("{refused:?} {}", rendered(&refused)));

    // A refused client secret.
    let bad = builder(&server)
        .client_credentials(format!("{}/bad-token", server.uri()), "id", CLIENT_SECRET)
        .build()
        .unwrap();
    let auth_error = bad
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    shown.push(format!("{bad:?} {auth_error:?} {}", rendered(&auth_error)));

    // A static token the service refuses, and one on a server that is gone.
    let static_client = builder(&server).bearer_token(STATIC_TOKEN).build().unwrap();
    let static_error = static_client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    shown.push(format!(
        "{static_client:?} {static_error:?} {}",
        rendered(&static_error)
    ));
    let gone = Client::builder()
        .base_url("http://127.0.0.1:9")
        .bearer_token(STATIC_TOKEN)
        .retry_policy(fast_retries(2))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let transport_error = gone
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    shown.push(format!(
        "{transport_error:?} {}",
        rendered(&transport_error)
    ));

    let logged = captured.text();
    // Not vacuous: the calls were traced, with the span's fields.
    assert!(logged.contains("creditdata.call"), "{logged}");
    assert!(
        logged.contains("operation=\"GetSession\"") || logged.contains("operation=GetSession"),
        "{logged}"
    );
    assert!(logged.contains("attempt=1"), "{logged}");
    assert!(logged.contains("status=200"), "{logged}");
    assert!(logged.contains("status=401"), "{logged}");
    assert!(logged.contains("duration_ms="), "{logged}");
    assert!(logged.contains("access token refused (401)"), "{logged}");
    for secret in [
        CLIENT_SECRET,
        ACCESS_TOKEN,
        STATIC_TOKEN,
        "at-5b2d8e4f",
        "cs-7f3a9c1e",
        "st-91c4e7aa",
    ] {
        assert!(
            !logged.contains(secret),
            "{secret} in tracing output:\n{logged}"
        );
        for text in &shown {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    assert!(shown[0].contains("visible-client-id"));
}
