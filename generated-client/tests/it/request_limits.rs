//! A request the API description does not allow never leaves the client: the generated types
//! cannot hold it, or the client refuses it with `Error::InvalidRequest` before sending. Each
//! test runs against a loopback server that counts what reaches it.

use creditdata_client::paging::SessionFilter;
use creditdata_client::types::{
    CreateSessionRequest, CreateSessionRequestSubjectEmail, DataPackageInput, QueryParameterInput,
    QueryParameterInputCountryCode, UpdateSessionRequest,
};
use creditdata_client::{Client, Error};
use serde_json::json;
use uuid::Uuid;
use wiremock::matchers::any;
use wiremock::{Mock, ResponseTemplate};

use crate::support::MockServer;

const SESSION_ID: &str = "6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e";

/// A server that answers everything with an empty session page, and the client for it.
async fn setup() -> (MockServer, Client) {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "sessions": [],
            "paging": { "totalCount": 0, "skip": 0, "take": 20 }
        })))
        .mount(&server)
        .await;
    let client = crate::support::plain_client(&server.uri());
    (server, client)
}

async fn requests_received(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

/// The message of an `InvalidRequest`, or a panic naming what came instead.
fn refusal<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
    match result {
        Err(Error::InvalidRequest { message, .. }) => message,
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
}

fn query(country: &str, packages: Vec<DataPackageInput>) -> QueryParameterInput {
    QueryParameterInput::builder()
        .country_code(country)
        .data_packages(packages)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_negative_skip_is_refused_before_sending() {
    let (server, client) = setup().await;
    let message = refusal(client.get_sessions().skip(-1).call().await);
    assert!(
        message.contains("Skip") && message.contains("0 to 2147483647"),
        "{message}"
    );
    assert_eq!(requests_received(&server).await, 0);

    client
        .get_sessions()
        .skip(0)
        .call()
        .await
        .expect("Skip=0 is sent");
    assert_eq!(requests_received(&server).await, 1);
}

#[tokio::test]
async fn a_take_outside_1_to_100_is_refused_before_sending() {
    let (server, client) = setup().await;
    let message = refusal(client.get_sessions().take(101u32).call().await);
    assert!(
        message.contains("Take") && message.contains("1 to 100"),
        "{message}"
    );
    // Zero cannot even be written: the parameter is a NonZeroU32.
    refusal(client.get_sessions().take(0u32).call().await);
    assert_eq!(requests_received(&server).await, 0);

    client
        .get_sessions()
        .take(100u32)
        .call()
        .await
        .expect("Take=100 is sent");
    assert_eq!(requests_received(&server).await, 1);
}

#[tokio::test]
async fn the_session_stream_never_asks_for_a_page_above_the_maximum() {
    let (server, client) = setup().await;
    let message = refusal(
        client
            .all_sessions(SessionFilter::new().page_size(101))
            .await,
    );
    assert!(message.contains("between 1 and 100"), "{message}");
    assert_eq!(requests_received(&server).await, 0);
    client
        .all_sessions(SessionFilter::new().page_size(100))
        .await
        .expect("a page of 100 is sent");
    assert_eq!(requests_received(&server).await, 1);
}

#[tokio::test]
async fn a_malformed_country_code_cannot_be_built_or_sent() {
    for malformed in ["gbr", "GB", "GBRR", " GBR", "G1R", ""] {
        assert!(
            malformed.parse::<QueryParameterInputCountryCode>().is_err(),
            "{malformed:?}"
        );
    }
    assert!("GBR".parse::<QueryParameterInputCountryCode>().is_ok());
    // The body cannot smuggle one in either: the type checks what it deserialises.
    assert!(
        serde_json::from_value::<QueryParameterInput>(json!({
            "countryCode": "gbr", "dataPackages": ["SCORE"]
        }))
        .is_err()
    );
    let (server, client) = setup().await;
    refusal(client.get_sessions().country_code("gbr").call().await);
    assert_eq!(requests_received(&server).await, 0);
}

#[tokio::test]
async fn a_query_parameter_needs_data_packages() {
    // Null or missing cannot be written: the member is a plain Vec.
    assert!(
        serde_json::from_value::<QueryParameterInput>(json!({ "countryCode": "GBR" })).is_err()
    );
    assert!(
        serde_json::from_value::<QueryParameterInput>(json!({
            "countryCode": "GBR", "dataPackages": null
        }))
        .is_err()
    );
    // Empty can, and is refused before sending, naming the member.
    let (server, client) = setup().await;
    let body = CreateSessionRequest::builder()
        .subject_email("jane.doe@example.com")
        .query_parameters(vec![
            query("GBR", vec![DataPackageInput::Score]),
            query("FIN", vec![]),
        ])
        .build()
        .unwrap();
    let message = refusal(client.create_session().body(body).call().await);
    assert_eq!(
        message,
        "queryParameters[1].dataPackages needs at least 1 item, it has 0"
    );
    let update = UpdateSessionRequest::builder()
        .query_parameters(vec![query("FIN", vec![])])
        .build()
        .unwrap();
    let message = refusal(
        client
            .update_session()
            .session_id(Uuid::parse_str(SESSION_ID).unwrap())
            .body(update)
            .call()
            .await,
    );
    assert!(
        message.starts_with("queryParameters[0].dataPackages"),
        "{message}"
    );
    assert_eq!(requests_received(&server).await, 0);
}

#[tokio::test]
async fn query_parameters_are_between_1_and_100() {
    let (server, client) = setup().await;
    for count in [0, 101] {
        let body = CreateSessionRequest::builder()
            .subject_email("jane.doe@example.com")
            .query_parameters(
                (0..count)
                    .map(|_| query("GBR", vec![DataPackageInput::Score]))
                    .collect::<Vec<_>>(),
            )
            .build()
            .unwrap();
        let message = refusal(client.create_session().body(body).call().await);
        assert!(message.starts_with("queryParameters "), "{message}");
    }
    assert_eq!(requests_received(&server).await, 0);
}

#[tokio::test]
async fn the_subject_email_must_be_an_address_and_is_never_repeated_in_the_error() {
    let too_long = format!("{}@example.com", "a".repeat(243));
    assert_eq!(too_long.chars().count(), 255);
    assert!(
        too_long
            .parse::<CreateSessionRequestSubjectEmail>()
            .is_err()
    );

    let (server, client) = setup().await;
    for address in [
        "jane.doe",
        "Jane Doe <jane.doe@example.com>",
        "jane..doe@example.com",
    ] {
        // Refused where the value is made (`parse()`, the builder), and by `call()` when the
        // builder is handed over unbuilt.
        assert!(address.parse::<CreateSessionRequestSubjectEmail>().is_err());
        let body = CreateSessionRequest::builder()
            .subject_email(address)
            .query_parameters(vec![query("GBR", vec![DataPackageInput::Score])]);
        let built = body.clone().build().unwrap_err().to_string();
        assert!(
            built.starts_with("subjectEmail is not an e-mail address"),
            "{built}"
        );
        assert!(!built.contains("jane"), "the address leaked: {built}");
        let error = client.create_session().body(body).call().await.unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(
            shown.contains("subjectEmail is not an e-mail address"),
            "{shown}"
        );
        assert!(!shown.contains("jane"), "the address leaked: {shown}");
    }
    assert_eq!(requests_received(&server).await, 0);
}

#[tokio::test]
async fn a_request_within_every_limit_is_sent() {
    let (server, client) = setup().await;
    let body = CreateSessionRequest::builder()
        .subject_email("jane.doe@example.com")
        .query_parameters(vec![query("GBR", DataPackageInput::ALL.to_vec())])
        .build()
        .unwrap();
    // The canned answer is not a Session; what matters is that the request went out.
    let _ = client.create_session().body(body).call().await;
    assert_eq!(requests_received(&server).await, 1);
}
