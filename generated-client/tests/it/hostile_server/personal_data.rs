//! The hostile-network tests of item 8: personal data stays out of errors and logs by default.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 8: personal data stays out of errors and logs by default.
// ---------------------------------------------------------------------------------------------

/// A server that reads each request and closes the connection without answering.
async fn hanging_up_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = read_request_head(&mut socket).await;
                drop(socket);
            });
        }
    });
    addr
}

/// A server that reads each request and never answers.
async fn silent_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let _ = read_request_head(&mut socket).await;
            open.push(socket);
        }
    });
    addr
}

const EMAIL: &str = "jane.doe@example.com";
const FULL_NAME: &str = "Janet Quintessa Doe";

fn assert_no_personal_data(what: &str, text: &str) {
    for value in [EMAIL, "jane.doe", "Janet", "Quintessa"] {
        assert!(!text.contains(value), "{what} shows {value:?}: {text}");
    }
}

async fn search_by_person(client: &Client) -> Error {
    client
        .get_sessions()
        .subject_email(EMAIL)
        .subject_full_name(FULL_NAME)
        .take(10)
        .call()
        .await
        .unwrap_err()
}

#[tokio::test]
async fn item_08_query_values_never_appear_in_transport_errors_or_retry_logs() {
    let captured = Captured::default();
    let _subscriber = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=trace",
    ));
    let addr = hanging_up_server().await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .retry_policy(fast_retries(3))
        .build()
        .unwrap();
    let error = search_by_person(&client).await;
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    let message = rendered(&error);
    assert_no_personal_data("the message", &message);
    assert_no_personal_data("Debug", &format!("{error:?}"));
    if let Error::Transport { source, .. } = &error {
        assert_no_personal_data("the reqwest error", &source.to_string());
    }
    // What is shown instead: the path and the names of the query parameters.
    assert!(
        message.contains("/v1/sessions") && message.contains("SubjectEmail"),
        "{message}"
    );
    let logs = captured.text();
    assert!(logs.contains("retrying"), "{logs}");
    assert_no_personal_data("the logs", &logs);
}

#[tokio::test]
async fn item_08_query_values_never_appear_in_timeouts() {
    let addr = silent_server().await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .request_timeout(Some(Duration::from_millis(300)))
        .build()
        .unwrap();
    let error = search_by_person(&client).await;
    assert!(matches!(error, Error::Timeout { .. }), "{error:?}");
    assert_no_personal_data("the message", &rendered(&error));
    assert_no_personal_data("Debug", &format!("{error:?}"));
}

#[tokio::test]
async fn item_08_decode_errors_keep_the_path_but_not_the_body() {
    let server = MockServer::start().await;
    let mut session = session_json(session_id());
    session["subjectEmail"] = json!(EMAIL);
    session["subjectFullName"] = json!(FULL_NAME);
    // A personal identity code where a name belongs: the value must not be quoted.
    session["createdByName"] = json!(38001085718u64);
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session))
        .mount(&server)
        .await;
    let client = builder(&server).build().unwrap();
    let error = session_error(&client).await;
    let Error::Decode(decode) = &error else {
        panic!("expected a decode error, got {error:?}")
    };
    assert_eq!(decode.path.as_deref(), Some("createdByName"));
    for shown in [rendered(&error), format!("{error:?}")] {
        assert_no_personal_data("the decode error", &shown);
        assert!(!shown.contains("38001085718"), "{shown}");
    }
    assert!(rendered(&error).contains("createdByName"), "{error}");
    // For debugging, on purpose: the body around the failure.
    assert!(decode.body_snippet().contains("38001085718"), "{decode:?}");
}

#[test]
fn item_08_the_token_url_is_validated_like_the_base_url() {
    for (url, hidden) in [
        ("http://operator:hunter2@127.0.0.1:1/token", "hunter2"),
        ("http://127.0.0.1:1/token?client_secret=s3cr3t", "s3cr3t"),
        ("http://127.0.0.1:1/token#access_token=t0k3n", "t0k3n"),
        ("ftp://127.0.0.1:1/token", "\u{0}"),
        ("http://login.example.test/token", "\u{0}"),
    ] {
        let error = Client::builder()
            .base_url("http://127.0.0.1:1")
            .client_credentials(url, "client-id", CLIENT_SECRET)
            .build()
            .err()
            .unwrap_or_else(|| panic!("{url} was accepted"));
        assert!(matches!(error, Error::Config(_)), "{url}: {error:?}");
        let message = rendered(&error);
        assert!(!message.contains(hidden), "{url}: {message}");
        assert!(message.contains("token"), "{url}: {message}");
    }
    for issuer in [
        "http://operator:hunter2@127.0.0.1:1/realms/x",
        "http://127.0.0.1:1/realms/x?k=v",
    ] {
        let error = Client::builder()
            .base_url("http://127.0.0.1:1")
            .credentials(Credentials::client_credentials(
                TokenEndpoint::Issuer(issuer.into()),
                "client-id",
                CLIENT_SECRET,
            ))
            .build()
            .err()
            .unwrap_or_else(|| panic!("{issuer} was accepted"));
        assert!(matches!(error, Error::Config(_)), "{issuer}: {error:?}");
        assert!(!rendered(&error).contains("hunter2"), "{error}");
    }
}
