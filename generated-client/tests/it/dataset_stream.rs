//! `Client::session_dataset_stream`: a dataset's answer as the service sent it, read as it
//! arrives, through the same call loop as the typed read (token, headers, errors), and not
//! bounded by the limit on an answer held whole.

use creditdata_client::session_datasets::Dataset;
use creditdata_client::{Client, Error};
use futures::TryStreamExt;
use uuid::Uuid;
use wiremock::matchers::{header, header_exists, method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

const SESSION: Uuid = Uuid::from_u128(0x5e55);

fn client(base_url: &str, max_response_body: u64) -> Client {
    Client::builder()
        .base_url(base_url)
        .bearer_token("t")
        .no_retries()
        .max_response_body(max_response_body)
        .build()
        .unwrap()
}

/// An attachments listing written as no serializer would: spaces, a `null`, a member the
/// description does not know, and more bytes than `limit`.
fn listing(larger_than: usize) -> Vec<u8> {
    let mut body = String::from("{ \"attachments\" : [ ] , \"note\" : null , \"padding\" : \"");
    body.push_str(&"x".repeat(larger_than));
    body.push_str("\" }\n");
    body.into_bytes()
}

async fn attachments_server(status: u16, body: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{SESSION}/attachments")))
        .and(header("authorization", "Bearer t"))
        .and(header("accept", "application/json"))
        // Whichever version the description gives (a test naming one breaks on the vendor's
        // next release); that it is the typed read's is checked below.
        .and(header_exists("api-version"))
        .respond_with(
            ResponseTemplate::new(status)
                .insert_header("content-type", "application/json")
                .set_body_bytes(body),
        )
        .expect(1)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_streamed_dataset_is_the_services_bytes_beyond_the_body_limit() {
    let body = listing(4096);
    let server = attachments_server(200, body.clone()).await;
    let client = client(&server.uri(), 1024);
    let download = client
        .session_dataset_stream(SESSION, Dataset::Attachments)
        .await
        .unwrap();
    assert_eq!(download.operation(), Some("GetAttachments"));
    let received: Vec<u8> = download
        .bytes_stream()
        .map_ok(|chunk| chunk.to_vec())
        .try_concat()
        .await
        .unwrap();
    assert_eq!(received, body, "byte for byte what the service sent");
}

#[tokio::test]
async fn the_typed_read_of_the_same_answer_is_refused_as_too_large() {
    let server = attachments_server(200, listing(4096)).await;
    let error = client(&server.uri(), 1024)
        .get_attachments()
        .session_id(SESSION)
        .call()
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::ResponseTooLarge { limit: 1024, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_error_answer_is_the_typed_calls_error() {
    let problem = br#"{"title":"Not Found","status":404}"#.to_vec();
    let server = attachments_server(404, problem).await;
    let error = client(&server.uri(), 1024)
        .session_dataset_stream(SESSION, Dataset::Attachments)
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404), "{error:?}");
    assert!(error.to_string().contains("GetAttachments"), "{error}");
}

#[tokio::test]
async fn the_streamed_read_sends_the_headers_of_the_typed_read() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{SESSION}/attachments")))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/json")
                .set_body_bytes(listing(16)),
        )
        .expect(2)
        .mount(&server)
        .await;
    let client = client(&server.uri(), 1024);
    client
        .get_attachments()
        .session_id(SESSION)
        .call()
        .await
        .unwrap();
    client
        .session_dataset_stream(SESSION, Dataset::Attachments)
        .await
        .unwrap();
    let requests = server.received_requests().await.unwrap();
    let header_of = |index: usize, name: &str| {
        requests[index]
            .headers
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    for name in ["api-version", "accept", "authorization"] {
        assert!(header_of(0, name).is_some(), "the typed read sends {name}");
        assert_eq!(header_of(1, name), header_of(0, name), "{name}");
    }
}
