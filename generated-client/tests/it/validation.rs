//! Issue 18, item 5: a validating type refuses a bad value when it is parsed, every refusal
//! names its field as the description does, and no message shows generated code.

use creditdata_client::types::{
    CreateSessionRequest, CreateSessionRequestSubjectEmail, DataPackageInput,
    GetSessionsCountryCode, QueryParameterInput, QueryParameterInputCountryCode,
};
use creditdata_client::{Client, Error};
use creditdata_mock::{MockConfig, MockServer};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use serde_json::json;
use wiremock::ResponseTemplate;
use wiremock::matchers::any;

/// What a user must never read in a message: Rust paths and the generators' own phrases.
fn assert_no_generated_text(message: &str) {
    for text in [
        "::",
        "conversion to",
        "error converting supplied value",
        "no value supplied",
        "failed",
    ] {
        assert!(!message.contains(text), "{text:?} in {message:?}");
    }
}

#[test]
fn a_malformed_email_is_refused_by_parse_naming_the_member_not_the_value() {
    for malformed in [
        "",
        "jane@",
        "@example.com",
        "Jane <jane@example.com>",
        "jane doe@example.com",
        "jane@@example.com",
        "jane.example.com",
    ] {
        let parsed = malformed.parse::<CreateSessionRequestSubjectEmail>();
        let Err(error) = parsed else {
            panic!("{malformed:?} parsed as an e-mail address");
        };
        let message = error.to_string();
        assert!(message.starts_with("subjectEmail "), "{message}");
        assert!(message.contains("not an e-mail address"), "{message}");
        if !malformed.is_empty() {
            assert!(!message.contains(malformed), "shows the value: {message}");
        }
        assert_no_generated_text(&message);
        assert!(CreateSessionRequestSubjectEmail::try_from(malformed).is_err());
        assert!(CreateSessionRequestSubjectEmail::try_from(malformed.to_string()).is_err());
        // Deserialisation is parsing too: a body read from a file cannot smuggle one in.
        assert!(
            serde_json::from_value::<CreateSessionRequestSubjectEmail>(json!(malformed)).is_err()
        );
        // And the request builder says the same, naming the member.
        let built = CreateSessionRequest::builder()
            .subject_email(malformed)
            .query_parameters(vec![query("GBR")])
            .build();
        let message = built.unwrap_err().to_string();
        assert!(message.starts_with("subjectEmail "), "{message}");
        assert_no_generated_text(&message);
    }
    let too_long = format!("{}@example.com", "a".repeat(250));
    let message = too_long
        .parse::<CreateSessionRequestSubjectEmail>()
        .unwrap_err()
        .to_string();
    assert_eq!(message, "subjectEmail: longer than 254 characters");
    for fine in [
        "jane.doe@example.com",
        "j+tag@mail.example.co.uk",
        "x@example.org",
    ] {
        assert_eq!(
            fine.parse::<CreateSessionRequestSubjectEmail>()
                .ok()
                .map(|e| e.to_string()),
            Some(fine.to_string()),
            "{fine}"
        );
    }
}

fn query(country: &str) -> QueryParameterInput {
    QueryParameterInput::builder()
        .country_code(country)
        .data_packages(vec![DataPackageInput::Score])
        .build()
        .unwrap()
}

#[test]
fn a_bad_country_code_names_its_member_or_parameter() {
    let message = "gbr"
        .parse::<QueryParameterInputCountryCode>()
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        r#"countryCode: doesn't match pattern "^[A-Z]{3}$""#
    );
    let message = "gbr"
        .parse::<GetSessionsCountryCode>()
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        r#"CountryCode: doesn't match pattern "^[A-Z]{3}$""#
    );
    let message = QueryParameterInput::builder()
        .country_code("GB")
        .data_packages(vec![DataPackageInput::Score])
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        r#"countryCode: doesn't match pattern "^[A-Z]{3}$""#
    );
    let message = QueryParameterInput::builder()
        .data_packages(vec![DataPackageInput::Score])
        .build()
        .unwrap_err()
        .to_string();
    assert_eq!(message, "countryCode is required");
}

async fn counting_client() -> (crate::support::MockServer, Client) {
    let server = crate::support::MockServer::start().await;
    wiremock::Mock::given(any())
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let client = crate::support::plain_client(&server.uri());
    (server, client)
}

fn refusal<T: std::fmt::Debug>(result: Result<T, Error>) -> String {
    match result {
        Err(error @ Error::InvalidRequest { .. }) => error.to_string(),
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
}

#[tokio::test]
async fn a_parameter_that_does_not_convert_is_named_with_what_it_should_be() {
    let (server, client) = counting_client().await;
    let message = refusal(
        client
            .get_session()
            .session_id("not-a-session")
            .call()
            .await,
    );
    assert!(
        message.starts_with("GetSession: invalid request: sessionId is not a UUID (such as "),
        "{message}"
    );
    assert_no_generated_text(&message);
    let message = refusal(client.get_sessions().country_code("gb").call().await);
    assert_eq!(
        message,
        r#"GetSessions: invalid request: CountryCode: doesn't match pattern "^[A-Z]{3}$""#
    );
    let body = CreateSessionRequest::builder()
        .subject_email("Jane <jane@example.com>")
        .query_parameters(vec![query("GBR")]);
    let message = refusal(client.create_session().body(body).call().await);
    assert!(
        message
            .starts_with("CreateSession: invalid request: subjectEmail is not an e-mail address"),
        "{message}"
    );
    assert!(!message.contains("jane@example.com"), "{message}");
    assert_no_generated_text(&message);
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// Characters e-mail addresses and near misses are made of.
const ALPHABET: &[char] = &[
    'a', 'b', 'Z', '0', '9', '.', '.', '@', '@', '-', '+', '_', ' ', '<', '>', '"', '(', ')', '[',
    ']', ',', ';', ':', '\\', 'é',
];

/// Characters of ordinary addresses, so that the samples hold addresses as well as near misses.
/// (The first five are letters and digits only.)
const PLAIN: &[char] = &['a', 'k', 'z', '0', '7', '.', '-', '_', '+'];

fn candidate() -> impl Strategy<Value = String> {
    let part = |alphabet: &'static [char], min, max| {
        prop::collection::vec(prop::sample::select(alphabet), min..max)
    };
    let address = |alphabet, min| {
        (
            part(alphabet, min, 10),
            part(alphabet, min, 6),
            part(alphabet, min, 6),
        )
            .prop_map(|(local, host, tld)| {
                let text = |c: Vec<char>| c.into_iter().collect::<String>();
                format!("{}@{}.{}", text(local), text(host), text(tld))
            })
    };
    prop_oneof![
        part(ALPHABET, 0, 24).prop_map(|chars| chars.into_iter().collect()),
        address(ALPHABET, 0),
        address(PLAIN, 0),
        address(&PLAIN[..5], 1),
    ]
}

/// The client's type and the mock agree: what `parse()` accepts the mock takes as a subject's
/// address, and what it refuses the mock refuses with a 400 naming `subjectEmail`.
#[test]
fn the_type_and_the_mock_agree_on_what_an_email_address_is() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mock, token, http) = runtime.block_on(async {
        let mock = MockServer::start(MockConfig::immediate()).await.unwrap();
        let client = Client::builder()
            .base_url(mock.base_url())
            .client_credentials(mock.token_url(), mock.client_id(), mock.client_secret())
            .build()
            .unwrap();
        let token = client.access_token().await.unwrap();
        (mock, token, reqwest::Client::new())
    });
    let url = format!("{}/v1/sessions", mock.base_url());
    let mut runner = TestRunner::new(Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        rng_seed: RngSeed::Fixed(0x18),
        failure_persistence: None,
        ..Config::default()
    });
    let accepted_samples = std::cell::Cell::new(0);
    runner
        .run(&candidate(), |address| {
            let parsed = address.parse::<CreateSessionRequestSubjectEmail>().is_ok();
            accepted_samples.set(accepted_samples.get() + usize::from(parsed));
            let (status, body) = runtime.block_on(async {
                use secrecy::ExposeSecret as _;
                let response = http
                    .post(&url)
                    .bearer_auth(token.expose_secret())
                    .json(&json!({
                        "subjectEmail": address,
                        "queryParameters": [{"countryCode": "GBR", "dataPackages": ["SCORE"]}]
                    }))
                    .send()
                    .await
                    .unwrap();
                (response.status().as_u16(), response.text().await.unwrap())
            });
            let accepted = (200..300).contains(&status);
            prop_assert_eq!(
                parsed,
                accepted,
                "{:?}: mock said {} {}",
                address,
                status,
                body
            );
            if !accepted {
                prop_assert!(status == 400 && body.contains("subjectEmail"), "{}", body);
            }
            Ok(())
        })
        .unwrap();
    // Both sides of the agreement were tried.
    assert!(accepted_samples.get() > 0, "no sample was an address");
}
