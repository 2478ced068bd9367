//! Construction: configuration from the environment, base URLs, user agent, and the three
//! timeouts (connect, per-request for JSON calls, idle-read for downloads).

use std::collections::HashMap;
use std::time::Duration;

use crate::support::*;
use creditdata_client::auth::{ClientAuthStyle, Credentials, TokenEndpoint};
use creditdata_client::download::DownloadExt;
use creditdata_client::{Client, ClientBuilder, Environment, Error};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::matchers::{header, method};
use wiremock::{Mock, ResponseTemplate};

fn from_vars(vars: &[(&str, &str)]) -> creditdata_client::Result<ClientBuilder> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ClientBuilder::from_env_with(|name| vars.get(name).cloned())
}

#[test]
fn from_env_reads_the_base_url_and_the_credentials() {
    let shown = format!(
        "{:?}",
        from_vars(&[
            ("CREDITDATA_BASE_URL", "https://api.example.test/"),
            ("CREDITDATA_TOKEN_URL", "https://login.example.test/token"),
            ("CREDITDATA_CLIENT_ID", "my-client"),
            ("CREDITDATA_CLIENT_SECRET", "my-secret"),
            ("CREDITDATA_CLIENT_AUTH", "basic"),
            ("CREDITDATA_SCOPES", "openid, profile"),
        ])
        .unwrap()
    );
    assert!(
        shown.contains(r#"Custom("https://api.example.test/")"#),
        "{shown}"
    );
    assert!(
        shown.contains(r#"Url("https://login.example.test/token")"#),
        "{shown}"
    );
    assert!(shown.contains(r#"client_id: "my-client""#), "{shown}");
    assert!(shown.contains("Some(BasicAuth)"), "{shown}");
    assert!(shown.contains(r#"["openid", "profile"]"#), "{shown}");
    assert!(!shown.contains("my-secret"), "{shown}");
}

#[test]
fn from_env_prefers_a_static_token_and_knows_issuers() {
    let shown = format!(
        "{:?}",
        from_vars(&[
            ("CREDITDATA_ENVIRONMENT", "mock"),
            ("CREDITDATA_TOKEN", "static-token-value"),
            ("CREDITDATA_TOKEN_URL", "https://login.example.test/token"),
            ("CREDITDATA_CLIENT_ID", "id"),
            ("CREDITDATA_CLIENT_SECRET", "secret"),
        ])
        .unwrap()
    );
    assert!(shown.contains("BearerToken([redacted])"), "{shown}");
    assert!(!shown.contains("static-token-value"), "{shown}");

    let shown = format!(
        "{:?}",
        from_vars(&[
            (
                "CREDITDATA_ISSUER",
                "https://login.example.test/realms/consumer"
            ),
            ("CREDITDATA_CLIENT_ID", "id"),
            ("CREDITDATA_CLIENT_SECRET", "secret"),
            ("CREDITDATA_ENVIRONMENT", "test"),
        ])
        .unwrap()
    );
    assert!(
        shown.contains("Issuer(\"https://login.example.test/realms/consumer\")"),
        "{shown}"
    );
    assert!(shown.contains("environment: Test"), "{shown}");

    // The mock when asked for; an empty token is no token.
    let shown = format!(
        "{:?}",
        from_vars(&[
            ("CREDITDATA_ENVIRONMENT", "mock"),
            ("CREDITDATA_TOKEN", "  ")
        ])
        .unwrap()
    );
    assert!(
        shown.contains("environment: Mock, credentials: None"),
        "{shown}"
    );
}

#[test]
fn from_env_with_no_service_configured_names_the_variables_instead_of_using_the_mock() {
    // Nothing at all, blanks, and credentials without a service: none of them is the mock.
    for vars in [
        &[][..],
        &[("CREDITDATA_ENVIRONMENT", " "), ("CREDITDATA_BASE_URL", "")][..],
        &[("CREDITDATA_TOKEN", "a-token-value")][..],
    ] {
        let error = from_vars(vars).unwrap_err();
        assert!(matches!(error, Error::Config(_)), "{error:?}");
        let message = error.to_string();
        for variable in [
            "CREDITDATA_ENVIRONMENT",
            "CREDITDATA_BASE_URL",
            "CREDITDATA_TOKEN",
            "CREDITDATA_CLIENT_ID",
            "CREDITDATA_CLIENT_SECRET",
            "CREDITDATA_ENVIRONMENT=mock",
        ] {
            assert!(message.contains(variable), "{variable} not in {message}");
        }
        assert!(!message.contains("a-token-value"), "{message}");
    }
    for (name, value) in [
        ("CREDITDATA_ENVIRONMENT", "mock"),
        ("CREDITDATA_BASE_URL", "http://127.0.0.1:9"),
    ] {
        assert!(from_vars(&[(name, value)]).is_ok_and(|b| b.build().is_ok()));
    }
}

#[test]
fn from_env_refuses_incomplete_credentials() {
    let message = |vars: &[(&str, &str)]| from_vars(vars).unwrap_err().to_string();
    assert_eq!(
        message(&[
            ("CREDITDATA_TOKEN_URL", "https://login.example.test/token"),
            ("CREDITDATA_CLIENT_ID", "id"),
        ]),
        "invalid client configuration: client credentials need both CREDITDATA_CLIENT_ID and CREDITDATA_CLIENT_SECRET"
    );
    assert!(
        message(&[
            ("CREDITDATA_CLIENT_ID", "id"),
            ("CREDITDATA_CLIENT_SECRET", "s")
        ])
        .contains("neither CREDITDATA_TOKEN_URL nor CREDITDATA_ISSUER")
    );
    assert!(message(&[("CREDITDATA_ENVIRONMENT", "staging")]).contains("unknown environment"));
    assert!(message(&[("CREDITDATA_CLIENT_AUTH", "jwt")]).contains("use body or basic"));
}

#[test]
fn environments_without_a_known_address_say_which_variable_to_set() {
    // Production and test have no public address: they come from configuration.
    if std::env::var_os("CREDITDATA_PRODUCTION_URL").is_none() {
        let error = Client::builder()
            .environment(Environment::Production)
            .build()
            .unwrap_err();
        assert!(matches!(error, Error::Config(_)));
        assert!(
            error.to_string().contains("set CREDITDATA_PRODUCTION_URL"),
            "{error}"
        );
    }
    let error = Client::builder()
        .base_url("https://user:password@api.example.test")
        .build()
        .unwrap_err();
    assert!(!error.to_string().contains("password@"), "{error}");
    assert!(
        error
            .to_string()
            .contains("must not contain a user name or password")
    );
    let error = Client::builder().base_url("not a url").build().unwrap_err();
    assert!(error.to_string().contains("is not a URL"), "{error}");
    let error = Client::builder()
        .bearer_token("line\nbreak")
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("cannot carry"), "{error}");
    assert!(!error.to_string().contains("line"), "{error}");
    let error = Client::builder()
        .retry_policy(creditdata_client::retry::RetryPolicy {
            max_attempts: 0,
            ..Default::default()
        })
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("max_attempts"), "{error}");
}

#[test]
fn explicit_credentials_and_settings_show_in_debug_without_secrets() {
    let client = Client::builder()
        .base_url("http://127.0.0.1:1")
        .credentials(Credentials::ClientCredentials(
            creditdata_client::auth::ClientCredentials {
                endpoint: TokenEndpoint::Url("http://127.0.0.1:1/token".into()),
                client_id: "visible-id".into(),
                client_secret: "hidden-secret".to_string().into(),
                scopes: vec!["openid".into()],
                auth_style: ClientAuthStyle::BasicAuth,
            },
        ))
        .user_agent("my-app/1.0")
        .connect_timeout(Duration::from_secs(3))
        .read_timeout(Duration::from_secs(5))
        .request_timeout(None)
        .build()
        .unwrap();
    let shown = format!("{client:?}");
    assert!(shown.contains("visible-id"), "{shown}");
    assert!(shown.contains("request_timeout: None"), "{shown}");
    assert!(!shown.contains("hidden-secret"), "{shown}");
}

#[tokio::test]
async fn the_user_agent_is_sent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(header("user-agent", "lender-backoffice/2.3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    let client = builder(&server)
        .user_agent("lender-backoffice/2.3")
        .build()
        .unwrap();
    crate::support::session(&client).await;
    let default = builder(&server).build().unwrap();
    let error = default
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert_eq!(
        error.status().map(|s| s.as_u16()),
        Some(404),
        "default agent differs"
    );
    let agents: Vec<_> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.headers["user-agent"].to_str().unwrap().to_string())
        .collect();
    assert!(agents[1].starts_with("creditdata-client/"), "{agents:?}");
}

#[tokio::test]
async fn the_request_timeout_bounds_json_calls_but_not_downloads() {
    let server = MockServer::start().await;
    // Both answers take one second to start.
    Mock::given(method("GET"))
        .and(wiremock::matchers::path(format!(
            "/v1/sessions/{}/pdf-report",
            session_id()
        )))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(b"%PDF-1.7 report".to_vec(), "application/pdf")
                .set_delay(Duration::from_secs(1)),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(wiremock::matchers::path(session_path(session_id())))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(session_json(session_id()))
                .set_delay(Duration::from_secs(1)),
        )
        .mount(&server)
        .await;
    let client = builder(&server)
        .no_retries()
        .request_timeout(Some(Duration::from_millis(200)))
        .read_timeout(Duration::from_secs(20))
        .build()
        .unwrap();

    let error = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetSession"));
    assert!(
        error
            .to_string()
            .starts_with("GetSession: the service did not answer in time"),
        "{error}"
    );

    let body = client
        .get_pdf_report()
        .session_id(session_id())
        .download()
        .await
        .unwrap()
        .bytes_stream()
        .collect::<Vec<_>>()
        .await;
    let body: Vec<u8> = body
        .into_iter()
        .flat_map(|chunk| chunk.unwrap().to_vec())
        .collect();
    assert_eq!(body, b"%PDF-1.7 report");
}

/// A loopback server that answers each connection with `script(n)` (n = 0, 1, ...) and then
/// keeps the connection open without writing, or closes it when `close` is set.
async fn scripted_server(
    script: fn(usize) -> (Vec<u8>, bool),
) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        for n in 0.. {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(read) => request.extend_from_slice(&buf[..read]),
                }
            }
            let (bytes, close) = script(n);
            let _ = socket.write_all(&bytes).await;
            let _ = socket.flush().await;
            if close {
                drop(socket);
            } else {
                held.push(socket);
            }
        }
    });
    (format!("http://{address}"), task)
}

fn partial_response(content_type: &str, declared: usize, sent: &[u8]) -> Vec<u8> {
    let mut bytes = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {declared}\r\n\r\n"
    )
    .into_bytes();
    bytes.extend_from_slice(sent);
    bytes
}

#[tokio::test]
async fn a_stalled_download_fails_after_the_idle_read_timeout() {
    let (base, server) = scripted_server(|_| {
        (
            partial_response("application/pdf", 1000, b"%PDF-1.7"),
            false,
        )
    })
    .await;
    let client = Client::builder()
        .base_url(base)
        .no_retries()
        .request_timeout(None)
        .read_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let mut body = client
        .get_pdf_report()
        .session_id(session_id())
        .download()
        .await
        .unwrap()
        .bytes_stream();
    assert_eq!(&body.next().await.unwrap().unwrap()[..], b"%PDF-1.7");
    let error = body.next().await.unwrap().unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    server.abort();
}

#[tokio::test]
async fn a_json_body_that_stalls_is_bounded_by_the_request_timeout() {
    let (base, server) = scripted_server(|_| {
        (
            partial_response("application/json", 1000, b"{\"id\":"),
            false,
        )
    })
    .await;
    let client = Client::builder()
        .base_url(base)
        .no_retries()
        .request_timeout(Some(Duration::from_millis(300)))
        .read_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetSession"));
    server.abort();
}

#[tokio::test]
async fn a_json_body_cut_short_is_a_transport_error_naming_the_operation() {
    let (base, server) = scripted_server(|_| {
        let full = serde_json::to_vec(&session_json(session_id())).unwrap();
        // The connection breaks after half the body.
        (
            partial_response("application/json", full.len(), &full[..full.len() / 2]),
            true,
        )
    })
    .await;
    let client = Client::builder()
        .base_url(base)
        .retry_policy(fast_retries(3))
        .build()
        .unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetSession"));
    assert!(
        error
            .to_string()
            .starts_with("GetSession: the connection to the service failed"),
        "{error}"
    );
    server.abort();
}
