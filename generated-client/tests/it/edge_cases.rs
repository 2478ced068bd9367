//! Answers and arguments at the edges of what the description says.

use creditdata_client::download::DownloadExt;
use creditdata_client::{Client, Error};
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

fn session_id() -> Uuid {
    Uuid::parse_str("6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e").unwrap()
}

async fn client(server: &MockServer) -> Client {
    crate::support::plain_client(&server.uri())
}

const RESEND: &str =
    "/v1/sessions/6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e/actions/resend-customer-notification";

#[tokio::test]
async fn resend_notification_accepts_a_body_no_body_or_204() {
    for (answer, expected) in [
        (
            ResponseTemplate::new(200).set_body_json(json!({"sent": true})),
            json!({"sent": true}),
        ),
        (ResponseTemplate::new(200), Value::Null),
        (ResponseTemplate::new(204), Value::Null),
        (
            ResponseTemplate::new(202).set_body_json(json!("queued")),
            json!("queued"),
        ),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(RESEND))
            .respond_with(answer)
            .expect(1)
            .mount(&server)
            .await;
        let value = client(&server)
            .await
            .resend_customer_notification()
            .session_id(session_id())
            .call()
            .await
            .expect("any 2xx is success");
        assert_eq!(value, expected);
    }
}

#[tokio::test]
async fn dot_and_empty_path_ids_are_refused_before_anything_is_sent() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200))
        .expect(0)
        .mount(&server)
        .await;
    let client = client(&server).await;
    for id in ["..", ".", ""] {
        let error = client
            .get_account_statement_excel()
            .session_id(session_id())
            .account_statement_id(id)
            .call()
            .await
            .map(|_| ())
            .expect_err("refused");
        match &error {
            Error::InvalidRequest { operation, message } => {
                assert_eq!(*operation, Some("GetAccountStatementExcel"), "{id:?}");
                // Named as the builder method the caller used.
                assert!(
                    message.contains("path parameter `account_statement_id`"),
                    "{id:?}: {message}"
                );
            }
            other => panic!("{id:?}: expected InvalidRequest, got {other:?}"),
        }
    }
    // An id that merely contains dots is an ordinary id.
    let server_ok = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(
            "/v1/sessions/6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e/account-statements/v1.2..3/excel",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"PK".to_vec()))
        .expect(1)
        .mount(&server_ok)
        .await;
    self::client(&server_ok)
        .await
        .get_account_statement_excel()
        .session_id(session_id())
        .account_statement_id("v1.2..3")
        .download()
        .await
        .expect("sent");
}
