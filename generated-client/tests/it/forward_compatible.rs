//! Code written the way the READMEs teach, which the vendor's next additive release (a member,
//! an optional parameter, an enum value) cannot break: generated values are built, never written
//! as literals, and every `match` on a generated enum has a wildcard arm. The generated structs
//! and enums are `#[non_exhaustive]`, so nothing else compiles outside the crate; these tests
//! check that the builders send exactly what was set and refuse what is missing before sending.

use creditdata_client::Error;
use creditdata_client::types::{
    CreateSessionRequest, CustomerProgressStatus, DataPackage, DataPackageInput,
    QueryParameterInput, Session,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::{MockServer, builder, session_id, session_json};

/// What a user's code does with a status: a wildcard arm for the values of later releases (and
/// the ones this version does not know, kept as `Unrecognized`).
fn waiting(status: &CustomerProgressStatus) -> Option<bool> {
    match status {
        CustomerProgressStatus::WaitingForCustomer => Some(true),
        CustomerProgressStatus::CompletedByCustomer | CustomerProgressStatus::Expired => {
            Some(false)
        }
        _ => None,
    }
}

#[tokio::test]
async fn a_body_built_through_builders_sends_exactly_the_members_that_were_set() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .expect(1)
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();

    let session = client
        .create_session()
        .body(
            CreateSessionRequest::builder()
                .subject_email("jane.doe@example.com")
                .query_parameters(vec![
                    QueryParameterInput::builder()
                        .country_code("GBR")
                        .data_packages(vec![DataPackageInput::Score])
                        .build()
                        .unwrap(),
                ]),
        )
        .call()
        .await
        .unwrap();

    let sent: Value = server.received_requests().await.unwrap()[0]
        .body_json()
        .unwrap();
    assert_eq!(
        sent,
        json!({
            "subjectEmail": "jane.doe@example.com",
            "queryParameters": [{ "countryCode": "GBR", "dataPackages": ["SCORE"] }]
        }),
        "no member that was not set: an optional member a release adds stays off the wire"
    );
    assert_eq!(waiting(&session.customer_progress_status), Some(true));
}

#[tokio::test]
async fn a_body_missing_a_required_member_is_refused_before_sending_and_names_it() {
    let server = MockServer::start().await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let result = client
        .create_session()
        .body(CreateSessionRequest::builder().subject_email("jane.doe@example.com"))
        .call()
        .await;
    match result {
        Err(Error::InvalidRequest { message, .. }) => {
            assert!(message.contains("queryParameters is required"), "{message}");
            assert!(
                !message.contains("jane.doe"),
                "no value in errors: {message}"
            );
        }
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[test]
fn build_names_the_member_that_is_missing_or_invalid_without_its_value() {
    let missing = QueryParameterInput::builder()
        .data_packages(DataPackageInput::ALL.to_vec())
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(missing, "countryCode is required");

    let invalid = QueryParameterInput::builder()
        .country_code("not a country")
        .data_packages(DataPackageInput::ALL.to_vec())
        .build()
        .unwrap_err()
        .to_string();
    assert!(invalid.starts_with("countryCode: "), "{invalid}");
    assert!(!invalid.contains("not a country"), "{invalid}");
}

#[test]
fn values_this_version_does_not_know_reach_the_wildcard_arm_with_their_text() {
    let mut json = session_json(session_id());
    json["customerProgressStatus"] = json!("ON_HOLD");
    json["queryParameters"][0]["dataPackages"] = json!(["SCORE", "EMPLOYMENT_HISTORY"]);
    let session: Session = serde_json::from_value(json).unwrap();

    assert_eq!(waiting(&session.customer_progress_status), None);
    assert_eq!(session.customer_progress_status.as_str(), "ON_HOLD");
    let packages = session.query_parameters.unwrap()[0]
        .data_packages
        .clone()
        .unwrap();
    let names: Vec<&str> = packages.iter().map(DataPackage::as_str).collect();
    assert_eq!(names, ["SCORE", "EMPLOYMENT_HISTORY"]);
}
