//! One error type: API errors with problem details or the raw body (body-less ones too),
//! decode errors with a path and a snippet, unknown enum values kept, messages for people.

use crate::support::*;
use creditdata_client::error::{ApiError, DisplayChain, MAX_ERROR_BODY};
use creditdata_client::types::{CustomerProgressStatus, DataPackage};
use creditdata_client::{Client, Error};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// A loopback server that answers every `http_method` request with `response`.
async fn answering(http_method: &str, response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method(http_method))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

/// The details of an error that must be an API error.
fn api_error(error: &Error) -> &ApiError {
    match error {
        Error::Api(api) => api,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_body_less_404_is_an_api_error_naming_the_operation() {
    let server = answering("GET", ResponseTemplate::new(404)).await;
    let client = builder(&server).build().unwrap();

    // Through `call()` and `call_with_response()`: the same error.
    let called = session_error(&client).await;
    let with_response = client
        .get_session()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap_err();
    for error in [called, with_response] {
        let api = api_error(&error);
        assert_eq!(api.status.as_u16(), 404);
        assert_eq!(api.operation, Some("GetSession"));
        assert!(api.body.is_empty());
        assert!(api.problem.is_none());
        assert_eq!(
            error.to_string(),
            "GetSession: the service answered 404 Not Found (no such resource, or it is not \
             visible to these credentials)"
        );
    }
}

#[tokio::test]
async fn body_less_401_403_and_500_keep_their_status() {
    for status in [401u16, 403, 500] {
        let server = answering("GET", ResponseTemplate::new(status)).await;
        let client = builder(&server).build().unwrap();
        let error = client.get_consumer_packages().call().await.unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
        assert_eq!(error.operation(), Some("GetConsumerPackages"));
    }
}

#[tokio::test]
async fn validation_problem_details_are_decoded_with_their_errors_map() {
    let server = MockServer::start().await;
    let problem = json!({
        "type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
        "title": "One or more validation errors occurred.",
        "status": 400,
        "traceId": "00-84c1fd4063c38d9f3900d06e56542d48-85d1d4-00",
        "errors": {
            "SubjectEmail": ["The SubjectEmail field is not a valid e-mail address."],
            "QueryParameters[0].CountryCode": ["Unknown country code 'XXX'."]
        }
    });
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(400).set_body_raw(
            problem.to_string(),
            "application/problem+json; charset=utf-8",
        ))
        .mount(&server)
        .await;
    let client = builder(&server).build().unwrap();
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    let api = api_error(&error);
    let details = api.problem.as_ref().expect("problem details");
    assert_eq!(details.status, Some(400));
    assert_eq!(
        details.title.as_deref(),
        Some("One or more validation errors occurred.")
    );
    assert_eq!(
        details.extra.to_map().get("traceId"),
        Some(&json!("00-84c1fd4063c38d9f3900d06e56542d48-85d1d4-00"))
    );
    let errors = api.validation_errors().expect("errors map");
    assert_eq!(
        errors["SubjectEmail"],
        ["The SubjectEmail field is not a valid e-mail address."]
    );
    assert_eq!(error.problem(), Some(details));
    // The messages may echo what was sent (`'XXX'`): named fields by default, the service's
    // text only when asked for.
    assert_eq!(
        error.to_string(),
        "CreateSession: the service answered 400 Bad Request: One or more validation errors \
         occurred. (invalid: QueryParameters[0].CountryCode, SubjectEmail)"
    );
    assert_eq!(
        api.with_service_text().to_string(),
        "CreateSession: the service answered 400 Bad Request: One or more validation errors \
         occurred.; QueryParameters[0].CountryCode: Unknown country code 'XXX'.; SubjectEmail: \
         The SubjectEmail field is not a valid e-mail address."
    );
}

#[tokio::test]
async fn plain_problem_details_are_decoded_on_any_status() {
    let server = answering(
        "GET",
        ResponseTemplate::new(409).set_body_json(json!({
            "title": "Conflict",
            "status": 409,
            "detail": "The session has expired."
        })),
    )
    .await;
    let client = builder(&server).build().unwrap();
    let error = client
        .get_scores()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    let problem = error.problem().expect("problem details");
    assert_eq!(problem.detail.as_deref(), Some("The session has expired."));
    assert!(problem.errors.is_none());
    assert_eq!(
        error.to_string(),
        "GetScores: the service answered 409 Conflict: Conflict"
    );
    let Error::Api(api) = &error else {
        unreachable!("it has problem details")
    };
    assert_eq!(api.detail(), Some("The session has expired."));
    assert_eq!(
        api.with_service_text().to_string(),
        "GetScores: the service answered 409 Conflict: Conflict: The session has expired."
    );
}

#[tokio::test]
async fn an_html_502_from_a_proxy_keeps_its_raw_body() {
    let page = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
    let server = answering(
        "GET",
        ResponseTemplate::new(502).set_body_raw(page, "text/html"),
    )
    .await;
    let client = builder(&server).no_retries().build().unwrap();
    let error = session_error(&client).await;
    let api = api_error(&error);
    assert_eq!(api.status.as_u16(), 502);
    assert!(api.problem.is_none());
    assert_eq!(api.body_text(), page);
    assert_eq!(api.headers["content-type"], "text/html");
    assert!(error.is_transient());
    assert_eq!(
        error.to_string(),
        "GetSession: the service answered 502 Bad Gateway (a failure on the service's side)"
    );
    let excerpt = api.body_excerpt().expect("an excerpt");
    assert!(
        excerpt.starts_with("<html><head><title>502 Bad Gateway"),
        "{excerpt}"
    );
    let with_text = api.with_service_text().to_string();
    assert!(
        with_text.starts_with(
            "GetSession: the service answered 502 Bad Gateway: <html><head><title>502 Bad Gateway"
        ),
        "{with_text}"
    );
}

#[tokio::test]
async fn a_huge_error_body_is_kept_up_to_a_bound() {
    let server = answering(
        "GET",
        ResponseTemplate::new(500).set_body_string("x".repeat(MAX_ERROR_BODY * 3)),
    )
    .await;
    let client = builder(&server).build().unwrap();
    let error = client
        .get_metrics()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    let api = api_error(&error);
    assert_eq!(api.body.len(), MAX_ERROR_BODY);
    assert!(!error.to_string().contains("xxx"), "{error}");
    assert!(
        api.with_service_text().to_string().len() < 400,
        "the message stays readable"
    );
}

#[tokio::test]
async fn a_decode_error_names_the_operation_the_path_and_a_snippet() {
    let mut session = session_json(session_id());
    session["queryParameters"][0]["countryCode"] = json!(826);
    let body = serde_json::to_string_pretty(&session).unwrap();
    let server = answering(
        "GET",
        ResponseTemplate::new(200).set_body_raw(body, "application/json"),
    )
    .await;
    let client = builder(&server).build().unwrap();

    let error = session_error(&client).await;
    let Error::Decode(decode) = &error else {
        panic!("expected a decode error, got {error:?}")
    };
    assert_eq!(decode.operation, Some("GetSession"));
    assert_eq!(
        decode.path.as_deref(),
        Some("queryParameters[0].countryCode")
    );
    assert!(decode.body_snippet().contains("826"), "{decode:?}");
    assert!(
        decode.body_snippet().chars().count() <= 122,
        "bounded: {decode:?}"
    );
    // The message names the kind of mismatch, never the value found (bodies are personal data).
    let message = error.to_string();
    assert!(
        message.starts_with(
            "GetSession: the response body does not match its type at `queryParameters[0].countryCode`: invalid type: integer, expected a string"
        ),
        "{message}"
    );
    assert!(!message.contains("826"), "{message}");

    // `call_with_response()` reports the same failure, path included.
    let error = client
        .get_session()
        .session_id(session_id())
        .call_with_response()
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), message);
}

#[tokio::test]
async fn a_decode_error_on_a_single_line_body_shows_only_the_neighbourhood() {
    let mut session = session_json(session_id());
    session["createdAtUtc"] = json!("yesterday");
    session["subjectFullName"] = json!("y".repeat(5000));
    let server = answering("GET", ResponseTemplate::new(200).set_body_json(session)).await;
    let client = builder(&server).build().unwrap();
    let Err(Error::Decode(decode)) = client.get_session().session_id(session_id()).call().await
    else {
        panic!("expected a decode error")
    };
    assert_eq!(decode.path.as_deref(), Some("createdAtUtc"));
    assert!(decode.body_snippet().contains("yesterday"), "{decode:?}");
    assert!(
        decode.body_snippet().chars().count() <= 122,
        "bounded: {decode:?}"
    );
}

#[tokio::test]
async fn unknown_enum_values_are_kept() {
    let mut session = session_json(session_id());
    session["customerProgressStatus"] = json!("PAUSED_BY_OPERATOR");
    session["queryParameters"][0]["dataPackages"] = json!(["SCORE", "OPEN_BANKING_PLUS"]);
    session["someFieldAddedLater"] = json!({"kept": "or ignored, never fatal"});
    let server = answering("GET", ResponseTemplate::new(200).set_body_json(session)).await;
    let client = builder(&server).build().unwrap();
    let session = crate::support::session(&client).await;
    assert_eq!(
        session.customer_progress_status,
        CustomerProgressStatus::Unrecognized("PAUSED_BY_OPERATOR".into())
    );
    assert_eq!(
        session.query_parameters.unwrap()[0]
            .data_packages
            .as_deref(),
        Some(
            &[
                DataPackage::Score,
                DataPackage::Unrecognized("OPEN_BANKING_PLUS".into())
            ][..]
        )
    );
}

#[tokio::test]
async fn a_success_status_the_description_does_not_list_is_an_api_error() {
    // The description says 201 Created.
    let server = answering("POST", ResponseTemplate::new(202).set_body_string("queued")).await;
    let client = builder(&server).build().unwrap();
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    let api = api_error(&error);
    assert_eq!(api.status.as_u16(), 202);
    assert_eq!(api.operation, Some("CreateSession"));
    assert_eq!(
        error.to_string(),
        "CreateSession: the service answered 202 Accepted, which the API description does not \
         list for this operation"
    );
}

#[tokio::test]
async fn a_missing_parameter_is_an_invalid_request_and_nothing_is_sent() {
    let server = MockServer::start().await;
    let client = builder(&server).build().unwrap();
    let error = client.get_session().call().await.unwrap_err();
    assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "GetSession: invalid request: session_id was not initialized"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A loopback address nothing listens on (the listener is gone): connections are refused.
async fn refusing_address() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}")
}

#[tokio::test]
async fn a_chain_printer_shows_each_cause_once() {
    let refused = refusing_address().await;

    // Transport: the short message, then reqwest's and hyper's causes.
    let client = Client::builder()
        .base_url(&refused)
        .retry_policy(fast_retries(2))
        .build()
        .unwrap();
    let transport = session_error(&client).await;
    assert!(
        matches!(transport, Error::Transport { .. }),
        "{transport:?}"
    );
    assert_eq!(
        transport.to_string(),
        "GetSession: the connection to the service failed after 2 attempts"
    );
    let shown = rendered(&transport);
    assert!(
        shown.starts_with(&format!(
            "GetSession: the connection to the service failed after 2 attempts: error sending \
             request for url ({refused}/v1/sessions/{})",
            session_id()
        )),
        "{shown}"
    );
    assert_each_cause_once(&transport);

    // Timeout.
    let server = answering(
        "GET",
        ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(5)),
    )
    .await;
    let timeout = builder(&server)
        .no_retries()
        .request_timeout(Some(std::time::Duration::from_millis(100)))
        .build()
        .unwrap()
        .get_consumer_packages()
        .call()
        .await
        .unwrap_err();
    assert!(matches!(timeout, Error::Timeout { .. }), "{timeout:?}");
    assert_eq!(
        timeout.to_string(),
        "GetConsumerPackages: the service did not answer in time"
    );
    assert_each_cause_once(&timeout);

    // Authentication: an unreachable identity provider, then one that refuses the client.
    let unreachable = Client::builder()
        .base_url(&refused)
        .client_credentials(format!("{refused}{TOKEN_PATH}"), "id", "secret")
        .no_retries()
        .build()
        .unwrap()
        .get_consumer_packages()
        .call()
        .await
        .unwrap_err();
    assert_eq!(
        unreachable.to_string(),
        "GetConsumerPackages: could not obtain an access token"
    );
    assert!(
        rendered(&unreachable).starts_with(&format!(
            "GetConsumerPackages: could not obtain an access token: the identity provider could \
             not be reached or is not available: error sending request for url \
             ({refused}{TOKEN_PATH})"
        )),
        "{}",
        rendered(&unreachable)
    );
    assert_each_cause_once(&unreachable);

    let server = answering("POST", token_error(401, "invalid_client", "Unknown client")).await;
    let refused_client = oauth_builder(&server)
        .build()
        .unwrap()
        .get_consumer_packages()
        .call()
        .await
        .unwrap_err();
    assert_eq!(
        rendered(&refused_client),
        "GetConsumerPackages: could not obtain an access token: the identity provider rejected \
         the client id or secret (invalid_client); check the client credentials: Unknown client"
    );
    assert_each_cause_once(&refused_client);

    // A file that cannot be written: the operating system's reason is the cause.
    let server = answering(
        "GET",
        ResponseTemplate::new(200).set_body_raw(b"%PDF-1.7".to_vec(), "application/pdf"),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("missing").join("report.pdf");
    let io = builder(&server)
        .build()
        .unwrap()
        .download_pdf_report(session_id(), &target)
        .await
        .unwrap_err();
    assert!(matches!(io, Error::Io { .. }), "{io:?}");
    assert!(io.to_string().starts_with("cannot write "), "{io}");
    assert!(!io.to_string().contains("os error"), "{io}");
    assert!(rendered(&io).contains("os error"), "{}", rendered(&io));
    assert_each_cause_once(&io);
}

#[test]
fn display_chain_prints_what_anyhow_prints() {
    let io = std::io::Error::other("disk full");
    let error = Error::Io {
        path: "report.pdf".into(),
        source: std::sync::Arc::new(io),
    };
    assert_eq!(
        DisplayChain(&error).to_string(),
        "cannot write report.pdf: disk full"
    );
    assert_eq!(DisplayChain(&error).to_string(), rendered(&error));
}

/// What the service writes in an error answer may echo personal data (the e-mail, the name and
/// the country code sent): `Display` keeps to the status, the problem's title and the names of
/// invalid fields; `with_service_text` shows the rest to whoever asks.
#[tokio::test]
async fn api_error_messages_leave_out_what_the_service_wrote() {
    let validation = json!({
        "title": "One or more validation errors occurred.",
        "status": 400,
        "errors": {
            "SubjectEmail": ["'jane.doe@example' is not a valid e-mail address."],
            "QueryParameters[0].CountryCode": ["Unknown country code 'XXX'."]
        }
    });
    let answers = [
        ("404 without a body", ResponseTemplate::new(404)),
        (
            "400 validation problem",
            ResponseTemplate::new(400)
                .set_body_raw(validation.to_string(), "application/problem+json"),
        ),
        (
            "409 problem with a detail",
            ResponseTemplate::new(409).set_body_json(json!({
                "title": "Conflict",
                "status": 409,
                "detail": "A session for jane.doe@example.com is already open."
            })),
        ),
        (
            "500 plain text",
            ResponseTemplate::new(500)
                .set_body_raw("NullReferenceException for subject Jane Doe", "text/plain"),
        ),
        (
            "429 with Retry-After",
            ResponseTemplate::new(429).insert_header("retry-after", "30"),
        ),
        (
            "202 not in the description",
            ResponseTemplate::new(202).set_body_string("queued for Jane Doe"),
        ),
    ];
    let mut shown = String::new();
    for (label, answer) in answers {
        let server = answering("POST", answer).await;
        let error = builder(&server)
            .no_retries()
            .build()
            .unwrap()
            .create_session()
            .body(create_request())
            .call()
            .await
            .unwrap_err();
        let Error::Api(api) = &error else {
            panic!("{label}: expected an API error, got {error:?}")
        };
        for personal in ["jane.doe", "Jane Doe", "XXX"] {
            assert!(!rendered(&error).contains(personal), "{label}: {error}");
            assert!(
                !format!("{error:?}").contains(personal),
                "{label}: {error:?}"
            );
        }
        shown.push_str(&format!(
            "{label}\n  Display:           {error}\n  with_service_text: {}\n",
            api.with_service_text()
        ));
    }
    insta::assert_snapshot!(shown);
}
