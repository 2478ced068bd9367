//! Source file content decoded from Base64, against a loopback server.

use base64::Engine as _;
use creditdata_client::{Client, Error};
use serde_json::json;
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

const SESSION: Uuid = Uuid::from_u128(0x5e55);
const FILE: Uuid = Uuid::from_u128(0xf11e);

fn client(server: &MockServer) -> Client {
    crate::support::plain_client(&server.uri())
}

async fn content_server(body: serde_json::Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{SESSION}/source-files/{FILE}/content"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn content_is_decoded_and_checked_against_its_size() {
    let original: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let server = content_server(json!({
        "sourceId": "bureau-ee",
        "type": "XML",
        "name": "../bureau response.xml",
        "sizeInBytes": original.len(),
        "contentBase64": base64::engine::general_purpose::STANDARD.encode(&original),
    }))
    .await;
    let decoded = client(&server)
        .source_file_bytes(SESSION, FILE)
        .await
        .unwrap();
    assert_eq!(decoded.bytes, original);
    assert_eq!(decoded.name.as_deref(), Some("../bureau response.xml"));
    assert_eq!(
        decoded.safe_file_name().as_deref(),
        Some("_bureau response.xml")
    );
    assert_eq!(decoded.file_type.as_deref(), Some("XML"));
    assert_eq!(decoded.source_id.as_deref(), Some("bureau-ee"));
}

#[tokio::test]
async fn bad_base64_names_the_source_file_and_the_offset() {
    let server = content_server(json!({
        "name": "bureau.xml",
        "contentBase64": "PHhtbD4=PC94bWw+",
    }))
    .await;
    let error = client(&server)
        .source_file_bytes(SESSION, FILE)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Decode(_)), "{error:?}");
    assert_eq!(error.operation(), Some("GetSourceFileContent"));
    let message = error.to_string();
    assert!(message.contains(&FILE.to_string()), "{message}");
    assert!(message.contains("\"bureau.xml\""), "{message}");
    assert!(
        message.contains("contentBase64 is not valid Base64"),
        "{message}"
    );
    assert!(message.contains("offset 7"), "{message}");
}

#[tokio::test]
async fn a_size_mismatch_and_missing_content_are_errors() {
    let server = content_server(json!({ "sizeInBytes": 4, "contentBase64": "YWJj" })).await;
    let message = client(&server)
        .source_file_bytes(SESSION, FILE)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("sizeInBytes says 4 bytes but contentBase64 decodes to 3 bytes"),
        "{message}"
    );

    let server = content_server(json!({ "contentBase64": null })).await;
    let message = client(&server)
        .source_file_bytes(SESSION, FILE)
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("contentBase64 is null"), "{message}");
}

#[tokio::test]
async fn an_absent_size_is_not_checked() {
    let server = content_server(json!({ "contentBase64": "YWJj" })).await;
    let decoded = client(&server)
        .source_file_bytes(SESSION, FILE)
        .await
        .unwrap();
    assert_eq!(decoded.bytes, b"abc");
    assert_eq!(decoded.name, None);
}
