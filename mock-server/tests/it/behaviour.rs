//! Validation, the session search, the session's rules over time, provider statuses, the served
//! descriptions and persistence across a restart.

use crate::common;

use std::time::Duration;

use common::{Harness, everything, quick_config};
use creditdata_mock::{MockConfig, MockServer};
use reqwest::Method;
use serde_json::{Value, json};

async fn create_raw(harness: &Harness, body: &str, content_type: &str) -> (u16, Value) {
    let response = harness
        .http
        .post(harness.url("/v1/sessions"))
        .header("content-type", content_type)
        .body(body.to_owned())
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

fn errors(body: &Value) -> Vec<String> {
    body["errors"]
        .as_object()
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn bad_input_gets_400_validation_problems() {
    let harness = Harness::start().await;
    let json = "application/json";

    let (status, body) = create_raw(&harness, "{\"subjectEmail\": ", json).await;
    assert_eq!(status, 400);
    assert_eq!(errors(&body), ["$"]);
    assert_eq!(body["title"], "One or more validation errors occurred.");

    let (status, body) = create_raw(&harness, "[]", json).await;
    assert_eq!((status, errors(&body)), (400, vec!["$".to_owned()]));

    let (status, body) = create_raw(
        &harness,
        r#"{"subjectEmail":"not-an-email","queryParameters":[{"countryCode":"xyz","dataPackages":["SCORE","GOLD"]},{"countryCode":"GB","dataPackages":[]}]}"#,
        json,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        errors(&body),
        [
            "queryParameters[0].countryCode",
            "queryParameters[0].dataPackages[1]",
            "queryParameters[1].countryCode",
            "queryParameters[1].dataPackages",
            "subjectEmail",
        ]
    );
    // A mistyped address is still personal data: the refusal names the field, not the value.
    assert!(!body.to_string().contains("not-an-email"), "{body}");

    let (status, body) = create_raw(
        &harness,
        r#"{"subjectEmail":"a@example.com","queryParameters":[]}"#,
        json,
    )
    .await;
    assert_eq!(
        (status, errors(&body)),
        (400, vec!["queryParameters".to_owned()])
    );
    let (status, body) = create_raw(&harness, r#"{"subjectEmail":42}"#, json).await;
    assert_eq!(
        (status, errors(&body)),
        (
            400,
            vec!["queryParameters".to_owned(), "subjectEmail".to_owned()]
        )
    );
    let (status, _) = create_raw(&harness, r#"{"subjectEmail":"a@example.com","queryParameters":[{"countryCode":"FIN","dataPackages":["SCORE"]}]}"#, "text/plain").await;
    assert_eq!(status, 400, "only JSON bodies");
    // Country codes are upper case, as the description states (no silent normalising).
    let (status, body) = create_raw(
        &harness,
        r#"{"subjectEmail":"a@example.com","queryParameters":[{"countryCode":"fin","dataPackages":["SCORE"]}]}"#,
        json,
    )
    .await;
    assert_eq!(
        (status, errors(&body)),
        (400, vec!["queryParameters[0].countryCode".to_owned()])
    );
    // Duplicates are merged; text/json is one of the JSON media types the service lists.
    let (status, body) = create_raw(
        &harness,
        r#"{"subjectEmail":"a@example.com","queryParameters":[{"countryCode":"FIN","dataPackages":["SCORE","SCORE"]},{"countryCode":"FIN","dataPackages":["IDENTIFICATION"]}]}"#,
        "text/json",
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        body["queryParameters"],
        json!([{ "countryCode": "FIN", "dataPackages": ["SCORE", "IDENTIFICATION"] }])
    );

    let (status, body) = harness.get_json("/v1/sessions/12345").await;
    assert_eq!((status, errors(&body)), (400, vec!["sessionId".to_owned()]));
    let (status, body) = harness
        .get_json(&format!("/v1/sessions/{}/scores", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(status, 404);
    assert!(
        body["detail"]
            .as_str()
            .expect("detail")
            .contains("no session")
    );
    let (status, body) = harness
        .get_json(&format!(
            "/v1/sessions/{}/source-files/xyz",
            uuid::Uuid::new_v4()
        ))
        .await;
    assert_eq!(status, 400, "{body}");

    for query in [
        "Take=0",
        "Take=101",
        "Take=abc",
        "Skip=-1",
        "CreatedFromUtc=2026-13-01",
        "CreatedToUtc=",
        "CustomerProgressStatus=DONE",
        "CountryCode=gbr",
        "CountryCode=",
        "Take=99999999999",
    ] {
        let (status, body) = harness.get_json(&format!("/v1/sessions?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body["errors"].is_object(), "{query}");
    }

    // Never a plain-text error: unknown routes and wrong methods get problem details too.
    let (status, body) = harness.get_json("/v2/whatever").await;
    assert_eq!((status, body["status"].as_i64()), (404, Some(404)));
    let response = harness
        .http
        .delete(harness.url("/v1/sessions"))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 405);
    assert!(response.headers().contains_key("allow"));
    let body: Value = response.json().await.expect("problem");
    assert_eq!(body["status"], 405);
}

#[tokio::test]
async fn the_search_filters_and_pages() {
    let harness = Harness::start().await;
    for n in 0..25 {
        let countries = if n % 2 == 0 {
            everything(&["FIN"])
        } else {
            everything(&["SWE", "EST"])
        };
        harness
            .create(&format!("person{n}@example.com"), countries)
            .await;
    }
    let first = harness
        .create("special@example.org", everything(&["POL"]))
        .await;
    let id = first["id"].as_str().expect("id");
    harness.complete(id).await;
    let full_name = harness.get_json(&format!("/v1/sessions/{id}")).await.1["subjectFullName"]
        .as_str()
        .expect("name")
        .to_owned();

    let (_, page) = harness.get_json("/v1/sessions").await;
    assert_eq!(
        page["paging"],
        json!({ "totalCount": 26, "skip": 0, "take": 20 })
    );
    assert_eq!(page["sessions"].as_array().expect("sessions").len(), 20);
    assert_eq!(page["sessions"][0]["id"], id, "newest first");
    let (_, page) = harness.get_json("/v1/sessions?Skip=20&Take=100").await;
    assert_eq!(page["sessions"].as_array().expect("sessions").len(), 6);
    let (_, page) = harness.get_json("/v1/sessions?skip=24&take=5").await;
    assert_eq!(
        page["sessions"].as_array().expect("sessions").len(),
        2,
        "names bind case-insensitively"
    );

    let count = |query: &'static str| {
        let harness = &harness;
        async move {
            harness.get_json(&format!("/v1/sessions?{query}")).await.1["paging"]["totalCount"]
                .as_i64()
        }
    };
    assert_eq!(count("SubjectEmail=SPECIAL@example").await, Some(1));
    assert_eq!(count("CountryCode=EST").await, Some(12));
    assert_eq!(count("CountryCode=FIN").await, Some(13));
    assert_eq!(
        count("CustomerProgressStatus=COMPLETED_BY_CUSTOMER").await,
        Some(1)
    );
    assert_eq!(
        count("CustomerProgressStatus=WAITING_FOR_CUSTOMER").await,
        Some(25)
    );
    assert_eq!(count("CreatedByName=service-account").await, Some(26));
    assert_eq!(count("OrganizationalUnitName=retail").await, Some(26));
    assert_eq!(count("OrganizationalUnitName=treasury").await, Some(0));
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today.succ_opt().expect("date");
    assert_eq!(count_dates(&harness, today, today).await, 26);
    assert_eq!(count_dates(&harness, tomorrow, tomorrow).await, 0);
    let family = full_name.split(' ').next_back().expect("family").to_owned();
    let (_, by_name) = harness
        .get_json(&format!("/v1/sessions?SubjectFullName={family}"))
        .await;
    assert!(
        by_name["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .any(|s| s["id"] == id)
    );
}

async fn count_dates(harness: &Harness, from: chrono::NaiveDate, to: chrono::NaiveDate) -> i64 {
    harness
        .get_json(&format!(
            "/v1/sessions?CreatedFromUtc={from}&CreatedToUtc={to}"
        ))
        .await
        .1["paging"]["totalCount"]
        .as_i64()
        .expect("count")
}

#[tokio::test]
async fn time_expires_and_completes_sessions() {
    // A deadline of zero days has passed as soon as the session exists.
    let harness = Harness::with(MockConfig {
        deadline_days: 0,
        ..quick_config()
    })
    .await;
    let created = harness
        .create("late@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id");
    let (_, session) = harness.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["customerProgressStatus"], "EXPIRED");
    let (status, body) = harness
        .post(&format!(
            "/v1/sessions/{id}/actions/resend-customer-notification"
        ))
        .await;
    assert_eq!(status, 400);
    assert!(body["detail"].as_str().expect("detail").contains("expired"));

    // Extension is refused once customerInputDeadlineExtendableUntilUtc has passed.
    let harness = Harness::with(MockConfig {
        deadline_days: 0,
        extendable_for_days: 0,
        ..quick_config()
    })
    .await;
    let created = harness
        .create("later@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id");
    let (status, body) = harness
        .post(&format!(
            "/v1/sessions/{id}/actions/extend-customer-input-deadline"
        ))
        .await;
    assert_eq!(status, 400);
    assert!(
        body["detail"]
            .as_str()
            .expect("detail")
            .contains("customerInputDeadlineExtendableUntilUtc")
    );

    // Auto-completion.
    let harness = Harness::with(MockConfig {
        auto_complete_after: Some(Duration::from_millis(200)),
        ..quick_config()
    })
    .await;
    let created = harness
        .create("quick@example.com", everything(&["GBR"]))
        .await;
    let id = created["id"].as_str().expect("id");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, session) = harness.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["customerProgressStatus"], "COMPLETED_BY_CUSTOMER");
    assert!(session["subjectFullName"].is_string());
}

#[tokio::test]
async fn complete_on_read_lets_actions_meet_a_waiting_customer_and_reads_see_data() {
    let harness = Harness::with(MockConfig {
        complete_on_read: true,
        ..quick_config()
    })
    .await;
    let created = harness
        .create("eager@example.com", everything(&["GBR"]))
        .await;
    assert_eq!(created["customerProgressStatus"], "WAITING_FOR_CUSTOMER");
    let id = created["id"].as_str().expect("id");
    let resend = format!("/v1/sessions/{id}/actions/resend-customer-notification");
    let extend = format!("/v1/sessions/{id}/actions/extend-customer-input-deadline");
    // Before anything is read, the customer is still waiting.
    assert_eq!(harness.post(&resend).await.0, 200);
    let (status, extended) = harness.post(&extend).await;
    assert_eq!(status, 201, "{extended}");
    assert_eq!(extended["customerProgressStatus"], "WAITING_FOR_CUSTOMER");
    // The first read finds the customer done and the data delivered.
    let (_, attachments) = harness
        .get_json(&format!("/v1/sessions/{id}/attachments"))
        .await;
    assert!(
        !attachments["attachments"]
            .as_array()
            .expect("attachments")
            .is_empty(),
        "{attachments}"
    );
    let (_, session) = harness.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(session["customerProgressStatus"], "COMPLETED_BY_CUSTOMER");
    assert_eq!(harness.post(&resend).await.0, 400, "nothing left to do");
    // A listing is not a read of one session: it completes nothing.
    let other = harness
        .create("patient@example.com", everything(&["FIN"]))
        .await;
    let (_, page) = harness.get_json("/v1/sessions?SubjectEmail=patient").await;
    assert_eq!(
        page["sessions"][0]["customerProgressStatus"],
        "WAITING_FOR_CUSTOMER"
    );
    // An upgrade waits for the customer again, until the next read.
    let (status, upgraded) = harness
        .send_json(
            Method::PATCH,
            &format!("/v1/sessions/{id}"),
            &json!({ "queryParameters": [{ "countryCode": "FIN", "dataPackages": ["SCORE"] }] }),
        )
        .await;
    assert_eq!(status, 200, "{upgraded}");
    assert_eq!(upgraded["customerProgressStatus"], "WAITING_FOR_CUSTOMER");
    assert_eq!(harness.post(&resend).await.0, 200);
    let _ = other;
}

fn status_of(body: &Value, source: &str) -> String {
    body["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .find(|s| s["sourceId"] == source)
        .map(|s| s["status"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn providers_wait_answer_and_fail() {
    let harness = Harness::with(MockConfig {
        provider_delay: Duration::from_millis(400),
        provider_error_one_in: 0,
        ..MockConfig::default()
    })
    .await;
    let created = harness
        .create("statuses@example.com", everything(&["FIN", "EST"]))
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let path = format!("/v1/sessions/{id}/negative-tradelines");
    assert_eq!(
        status_of(&harness.get_json(&path).await.1, "FIN_AURORA_LUOTTO"),
        "WAITING_FOR_CUSTOMER"
    );
    harness.complete(&id).await;
    assert_eq!(
        status_of(&harness.get_json(&path).await.1, "FIN_AURORA_LUOTTO"),
        "WAITING_FOR_PROVIDER"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        status_of(&harness.get_json(&path).await.1, "FIN_AURORA_LUOTTO"),
        "SUCCESS"
    );

    // A provider forced to fail drops its data; the summary reports the partial answer.
    let before = harness
        .get_json(&format!("/v1/sessions/{id}/account-statements"))
        .await
        .1;
    let fin_accounts = before["accountStatements"]
        .as_array()
        .expect("statements")
        .iter()
        .filter(|s| s["sourceId"] == "FIN_SAIMAA_ACCOUNTS")
        .count();
    assert!(fin_accounts > 0);
    let response = harness
        .anonymous
        .put(harness.url(&format!(
            "/_mock/sessions/{id}/sources/FIN_SAIMAA_ACCOUNTS/status"
        )))
        .json(&json!({ "status": "ERROR" }))
        .send()
        .await
        .expect("control");
    assert_eq!(response.status().as_u16(), 200);
    let after = harness
        .get_json(&format!("/v1/sessions/{id}/account-statements"))
        .await
        .1;
    assert_eq!(status_of(&after, "FIN_SAIMAA_ACCOUNTS"), "ERROR");
    assert!(
        after["accountStatements"]
            .as_array()
            .expect("statements")
            .iter()
            .all(|s| s["sourceId"] != "FIN_SAIMAA_ACCOUNTS")
    );
    let summary = harness
        .get_json(&format!("/v1/sessions/{id}/categorizations-summary"))
        .await
        .1;
    assert_eq!(summary["summary"]["status"], "SOME_DATA_MISSING");
    let response = harness
        .anonymous
        .delete(harness.url(&format!(
            "/_mock/sessions/{id}/sources/FIN_SAIMAA_ACCOUNTS/status"
        )))
        .send()
        .await
        .expect("control");
    assert_eq!(response.status().as_u16(), 200);
    let restored = harness
        .get_json(&format!("/v1/sessions/{id}/account-statements"))
        .await
        .1;
    assert_eq!(status_of(&restored, "FIN_SAIMAA_ACCOUNTS"), "SUCCESS");

    // Unknown providers and statuses are refused.
    let response = harness
        .anonymous
        .put(harness.url(&format!("/_mock/sessions/{id}/sources/NOPE/status")))
        .json(&json!({ "status": "ERROR" }))
        .send()
        .await
        .expect("control");
    assert_eq!(response.status().as_u16(), 404);
    let (status, _) = harness
        .control(&format!("/_mock/sessions/{id}/complete"))
        .await;
    assert_eq!(status, 409, "already completed");

    // Simulated failures: with one in one, every provider fails.
    let failing = Harness::with(MockConfig {
        provider_error_one_in: 1,
        ..quick_config()
    })
    .await;
    let created = failing
        .create("unlucky@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id");
    failing.complete(id).await;
    let scores = failing
        .get_json(&format!("/v1/sessions/{id}/scores"))
        .await
        .1;
    assert_eq!(status_of(&scores, "FIN_AURORA_LUOTTO"), "ERROR");
    assert_eq!(scores["scores"], json!([]));
}

#[tokio::test]
async fn delivery_failure_blocks_the_customer_actions() {
    let harness = Harness::start().await;
    let created = harness
        .create("bounce@example.com", everything(&["DEU"]))
        .await;
    let id = created["id"].as_str().expect("id");
    let (status, session) = harness
        .control(&format!("/_mock/sessions/{id}/fail-delivery"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(session["customerProgressStatus"], "DELIVERY_FAILED");
    assert!(session["customerInputDeadlineExtendableUntilUtc"].is_null());
    for action in [
        "extend-customer-input-deadline",
        "resend-customer-notification",
    ] {
        let (status, body) = harness
            .post(&format!("/v1/sessions/{id}/actions/{action}"))
            .await;
        assert_eq!(status, 400, "{action}");
        let detail = body["detail"].as_str().expect("detail");
        assert!(detail.to_lowercase().contains("deliver"), "{body}");
        // Problem details end up in clients' error messages and logs: no personal data.
        assert!(
            !body.to_string().contains("bounce@example.com"),
            "{action} shows the e-mail address: {body}"
        );
    }
    let (status, _) = harness
        .send_json(
            Method::PATCH,
            &format!("/v1/sessions/{id}"),
            &json!({ "queryParameters": everything(&["FIN"]) }),
        )
        .await;
    assert_eq!(status, 400);
    let outbox: Value = harness
        .anonymous
        .get(harness.url(&format!("/_mock/sessions/{id}/notifications")))
        .send()
        .await
        .expect("outbox")
        .json()
        .await
        .expect("json");
    assert_eq!(outbox["notifications"][0]["kind"], "ONBOARDING");
}

#[tokio::test]
async fn the_published_descriptions_are_served() {
    let harness = Harness::start().await;
    for (path, prefix, media) in [
        (
            "/openapi/v1.json",
            creditdata_mock::OPENAPI_JSON,
            "application/json",
        ),
        (
            "/openapi/v1.yaml",
            creditdata_mock::OPENAPI_YAML,
            "application/yaml",
        ),
    ] {
        let response = harness
            .anonymous
            .get(harness.url(path))
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], media);
        assert_eq!(response.bytes().await.expect("body").as_ref(), prefix);
    }
}

#[tokio::test]
async fn state_survives_a_restart() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("mock-state.json");
    let config = MockConfig {
        state_file: Some(path.clone()),
        ..quick_config()
    };
    let harness = Harness::with(config.clone()).await;
    let created = harness
        .create("persist@example.com", everything(&["FIN"]))
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    harness.complete(&id).await;
    let before = harness
        .get_json(&format!("/v1/sessions/{id}/person-details"))
        .await
        .1;
    let token = harness.token.clone();
    // Restart on the same address, as `--listen` would: the issuer URL stays the same.
    let address = harness.mock.local_addr();
    harness.mock.shutdown().await;
    assert!(path.exists());

    let restarted = MockServer::start(MockConfig {
        listen: address,
        ..config
    })
    .await
    .expect("restart");
    let response = reqwest::Client::new()
        .get(format!(
            "{}/v1/sessions/{id}/person-details",
            restarted.base_url()
        ))
        .bearer_auth(&token)
        .send()
        .await
        .expect("request");
    assert_eq!(
        response.status().as_u16(),
        200,
        "the signing key survives too"
    );
    let after: Value = response.json().await.expect("json");
    assert_eq!(before, after, "same session, same person");
    let leftovers: Vec<_> = std::fs::read_dir(directory.path()).expect("dir").collect();
    assert_eq!(
        leftovers.len(),
        1,
        "only the state file, no temporary files"
    );
    restarted.shutdown().await;
}

/// Every path of the description with an id, and its methods (`$ref`ed path items aside).
fn operations_with_ids() -> Vec<(Method, String)> {
    let document: Value =
        serde_json::from_str(common::openapi::EFFECTIVE).expect("effective description");
    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        if !path.contains('{') {
            continue;
        }
        for method in ["get", "put", "post", "patch", "delete"] {
            if item.get(method).is_some() {
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
                operations.push((method, path.clone()));
            }
        }
    }
    operations
}

/// The path parameters of `method template` but the session's that the description makes
/// UUIDs.
fn uuid_parameters(method: &Method, template: &str) -> Vec<String> {
    let document: Value =
        serde_json::from_str(common::openapi::EFFECTIVE).expect("effective description");
    let item = &document["paths"][template];
    let operation = &item[method.as_str().to_ascii_lowercase()];
    operation["parameters"]
        .as_array()
        .into_iter()
        .chain(item["parameters"].as_array())
        .flatten()
        .filter(|p| p["in"] == "path" && p["name"] != "sessionId")
        .filter(|p| p["schema"]["format"] == "uuid")
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect()
}

/// `template` with `sessionId` and every other parameter replaced.
fn fill(template: &str, session_id: &str, other: &str) -> String {
    let mut path = String::new();
    for (i, part) in template.split('{').enumerate() {
        if i == 0 {
            path.push_str(part);
            continue;
        }
        let (name, rest) = part.split_once('}').expect("closed parameter");
        path.push_str(if name == "sessionId" {
            session_id
        } else {
            other
        });
        path.push_str(rest);
    }
    path
}

async fn call(harness: &Harness, method: Method, path: &str) -> (u16, Value) {
    let response = harness
        .http
        .request(method, harness.url(path))
        .header(common::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn every_path_parameter_is_read_by_its_name() {
    let harness = Harness::start().await;
    let created = harness
        .create("paths@example.com", everything(&["FIN"]))
        .await;
    let session = created["id"].as_str().expect("id").to_owned();
    harness.complete(&session).await;
    let operations = operations_with_ids();
    assert!(!operations.is_empty(), "{operations:?}");
    let control = [
        (Method::POST, "/_mock/sessions/{sessionId}/complete"),
        (Method::POST, "/_mock/sessions/{sessionId}/fail-delivery"),
        (Method::POST, "/_mock/sessions/{sessionId}/expire"),
        (Method::GET, "/_mock/sessions/{sessionId}/notifications"),
        (
            Method::PUT,
            "/_mock/sessions/{sessionId}/sources/{sourceId}/status",
        ),
        (
            Method::DELETE,
            "/_mock/sessions/{sessionId}/sources/{sourceId}/status",
        ),
    ]
    .map(|(method, path)| (method, path.to_owned()));

    // A malformed session id is a validation problem naming `sessionId`, before anything else
    // in the path or the body is looked at.
    for (method, template) in operations.iter().chain(&control) {
        let path = fill(template, "not-a-uuid", "also-not-a-uuid");
        let (status, body) = call(&harness, method.clone(), &path).await;
        assert_eq!(status, 400, "{method} {path}: {body}");
        assert_eq!(
            body["errors"],
            json!({ "sessionId": ["The value 'not-a-uuid' is not a valid UUID."] }),
            "{method} {path}"
        );
    }

    // With a real session, a malformed id that the description makes a UUID (a source file's)
    // is named in turn; the other ids are the service's own strings, so an unknown one is not
    // found (never read as an empty name).
    for (method, template) in &operations {
        let path = fill(template, &session, "not-a-uuid");
        let uuids = uuid_parameters(method, template);
        if !uuids.is_empty() {
            let (status, body) = call(&harness, method.clone(), &path).await;
            assert_eq!(status, 400, "{method} {path}: {body}");
            let expected: serde_json::Map<String, Value> = uuids
                .iter()
                .map(|name| {
                    (
                        name.clone(),
                        json!(["The value 'not-a-uuid' is not a valid UUID."]),
                    )
                })
                .collect();
            assert_eq!(body["errors"], Value::Object(expected), "{method} {path}");
        } else if template.matches('{').count() > 1 {
            let (status, body) = call(&harness, method.clone(), &path).await;
            assert_eq!(status, 404, "{method} {path}: {body}");
            let detail = body["detail"].as_str().expect("detail");
            assert!(detail.contains("'not-a-uuid'"), "{method} {path}: {detail}");
        }
    }
    let (status, body) = call(
        &harness,
        Method::PUT,
        &format!("/_mock/sessions/{session}/sources/NOT_A_PROVIDER/status"),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .expect("detail")
            .contains("'NOT_A_PROVIDER'"),
        "{body}"
    );
}

/// Three sessions created one after another: their ids and scores.
async fn ids_and_scores(harness: &Harness) -> Vec<(String, Value)> {
    let query = json!([{ "countryCode": "GBR", "dataPackages": ["SCORE"] }]);
    let mut out = Vec::new();
    for n in 0..3 {
        let session = harness
            .create(&format!("seeded.{n}@example.com"), query.clone())
            .await;
        let id = session["id"].as_str().expect("id").to_owned();
        harness.complete(&id).await;
        let (_, scores) = harness.get_json(&format!("/v1/sessions/{id}/scores")).await;
        out.push((id, scores["scores"].clone()));
    }
    out
}

/// A mock started with the same seed gives the n-th session the same id, hence the same subject
/// and data (the release-day rehearsal runs one program against two mocks and compares); another
/// seed gives others, and a reset starts the sequence again.
#[tokio::test]
async fn sessions_get_the_same_ids_and_data_under_the_same_seed() {
    let seeded = |seed| MockConfig {
        realism: creditdata_mock::Realism::new().seed(seed),
        ..quick_config()
    };
    let first = Harness::with(seeded(42)).await;
    let second = Harness::with(seeded(42)).await;
    let other = Harness::with(seeded(43)).await;
    let a = ids_and_scores(&first).await;
    assert_eq!(a, ids_and_scores(&second).await);
    let c = ids_and_scores(&other).await;
    assert!(a.iter().zip(&c).all(|(a, c)| a.0 != c.0), "{a:?} {c:?}");
    for (id, _) in &a {
        let id = uuid::Uuid::parse_str(id).expect("a UUID");
        assert_eq!(id.get_version_num(), 4, "random-looking, as the service's");
    }
    let (status, _) = first.control("/_mock/reset").await;
    assert_eq!(status, 200);
    assert_eq!(ids_and_scores(&first).await, a, "a reset starts again");
}

/// What `api-version` each operation's requests about a session carried, as a harness reads it.
#[tokio::test]
async fn the_api_version_of_each_operations_requests_is_reported_per_session() {
    let harness = Harness::start().await;
    let session = harness
        .create("versions@example.com", everything(&["GBR"]))
        .await;
    let id = session["id"].as_str().expect("id");
    let send = |path: String, version: Option<&'static str>| {
        let mut request = harness.http.get(harness.url(&path));
        if let Some(version) = version {
            request = request.header("api-version", version);
        }
        async move { request.send().await.expect("request").status().as_u16() }
    };
    assert_eq!(
        send(format!("/v1/sessions/{id}/scores"), Some("1.0")).await,
        200
    );
    assert_eq!(
        send(format!("/v1/sessions/{id}/scores"), Some("1.0")).await,
        200
    );
    assert_eq!(send(format!("/v1/sessions/{id}"), Some("1.1")).await, 200);
    assert_eq!(send(format!("/v1/sessions/{id}/metrics"), None).await, 200);
    // A request that is not answered, or about no session, is not counted.
    let unknown = uuid::Uuid::from_u128(1);
    assert_eq!(
        send(format!("/v1/sessions/{unknown}/scores"), Some("9")).await,
        404
    );
    let response = harness
        .anonymous
        .get(harness.url(&format!("/_mock/sessions/{id}/api-versions")))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 200);
    let seen: Value = response.json().await.expect("json");
    assert_eq!(
        seen["requests"],
        json!([
            {"operation": "GET /v1/sessions/{sessionId}", "apiVersion": "1.1", "requests": 1},
            {"operation": "GET /v1/sessions/{sessionId}/metrics", "apiVersion": "(none)", "requests": 1},
            {"operation": "GET /v1/sessions/{sessionId}/scores", "apiVersion": "1.0", "requests": 2},
        ]),
        "{seen}"
    );
    let missing = harness
        .anonymous
        .get(harness.url(&format!("/_mock/sessions/{unknown}/api-versions")))
        .send()
        .await
        .expect("request");
    assert_eq!(missing.status().as_u16(), 404);
}
