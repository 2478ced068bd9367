//! Release day for the mock: a vendor's next description (the additive 1.1 fixture of
//! `codegen/tests/data/release-day`, made with the pipeline's own stages) is given to a mock at
//! start, and the mock serves what it adds with no hand-written line: the new dataset (found
//! only in the description), and the new Session member (checked, stored, returned).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::openapi::validator;
use common::{Harness, everything, quick_config};
use creditdata_codegen::overlay::{self, ApplyOptions, Overlay};
use creditdata_mock::MockConfig;
use reqwest::Method;
use serde_json::{Value, json};

const DATASET: &str = "/v1/sessions/{sessionId}/employment-histories";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The effective description of release 1.1, made as `regen` makes it: the frozen description
/// of 1.0 (`codegen/tests/data/frozen-1.0`) with the release-day fixture applied, through the
/// whole pipeline with the frozen overlays (the new operation is named by the pipeline). Frozen,
/// so that this test still describes "a release the mock has no handler for" after the vendor
/// publishes it and it is vendored.
pub fn release_1_1() -> Value {
    let effective = frozen_effective(true);
    assert_eq!(
        effective["paths"][DATASET]["get"]["operationId"],
        json!("GetEmploymentHistories"),
        "the pipeline names the new operation"
    );
    effective
}

/// The effective description of the frozen 1.0, with the release-day fixture applied or not.
fn frozen_effective(released: bool) -> Value {
    let root = workspace();
    let frozen = root.join("codegen/tests/data/frozen-1.0");
    let mut document = creditdata_codegen::document::load(&frozen.join("spec/openapi.json"))
        .expect("the frozen description");
    if released {
        let fixture =
            Overlay::load(&root.join("codegen/tests/data/release-day/1.1-additive.overlay.yaml"))
                .expect("the release fixture");
        overlay::apply(&mut document, &[fixture], &ApplyOptions::default()).expect("the release");
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, document.to_string()).expect("write");
    let outputs = creditdata_codegen::pipeline::run(&creditdata_codegen::pipeline::Inputs {
        spec,
        overlays: frozen.join("overlays"),
        lenient: false,
        display_root: root,
    })
    .unwrap_or_else(|e| panic!("the frozen description generates:\n{e}"));
    outputs.effective
}

async fn release_mock(config: MockConfig, document: &Value) -> Harness {
    Harness::with(MockConfig {
        effective_description: Some(Arc::new(document.clone())),
        ..config
    })
    .await
}

/// A reference to the component schema `name`, for [`validator`].
fn schema_of(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

#[tokio::test]
async fn a_new_dataset_is_served_from_the_description() {
    let document = release_1_1();
    let harness = release_mock(quick_config(), &document).await;
    let session = harness
        .create("erin@example.com", everything(&["FIN", "XXX"]))
        .await;
    let id = session["id"].as_str().expect("id");
    let path = DATASET.replace("{sessionId}", id);
    let valid = validator(&document, &schema_of("EmploymentHistoriesResponse"));

    // Before the customer consents: every provider of each requested country waits for the
    // customer, a country the catalog does not serve is unsupported, and nothing is delivered.
    let (status, waiting) = harness.get_json(&path).await;
    assert_eq!(status, 200, "{waiting}");
    assert!(valid.is_valid(&waiting), "{waiting}");
    let sources = waiting["sources"].as_array().expect("sources");
    assert!(sources.len() > 2, "{waiting}");
    for source in sources {
        let expected = if source["countryCode"] == "XXX" {
            "UNSUPPORTED_COUNTRY"
        } else {
            "WAITING_FOR_CUSTOMER"
        };
        assert_eq!(source["status"], expected, "{waiting}");
    }
    assert_eq!(waiting["employmentHistories"], json!([]), "{waiting}");

    harness.complete(id).await;
    let (status, delivered) = harness.get_json(&path).await;
    assert_eq!(status, 200, "{delivered}");
    assert!(valid.is_valid(&delivered), "{delivered}");
    let answered: Vec<&str> = delivered["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter(|s| s["status"] == "SUCCESS")
        .filter_map(|s| s["sourceId"].as_str())
        .collect();
    assert!(
        answered.iter().all(|id| id.starts_with("FIN_")),
        "{delivered}"
    );
    let items = delivered["employmentHistories"].as_array().expect("items");
    assert!(items.len() >= answered.len(), "{delivered}");
    for item in items {
        let source = item["sourceId"].as_str().expect("sourceId");
        assert!(
            answered.contains(&source),
            "{item} comes from a provider that answered"
        );
    }
    // Seeded by the session and the operation: the same answer every time.
    assert_eq!(harness.get_json(&path).await.1, delivered);
    let other = harness
        .create("finn@example.com", everything(&["FIN"]))
        .await;
    harness.complete(other["id"].as_str().expect("id")).await;
    let (_, elsewhere) = harness
        .get_json(&DATASET.replace("{sessionId}", other["id"].as_str().expect("id")))
        .await;
    assert_ne!(
        elsewhere["employmentHistories"],
        delivered["employmentHistories"]
    );
}

/// The providers the catalog has for a country, and the packages each serves, read from the
/// hand-written datasets of a session that requested every package: a provider is listed in a
/// hand-written dataset's `sources` when it delivers that dataset.
#[tokio::test]
async fn a_new_dataset_lists_only_providers_of_the_packages_the_session_requested() {
    let document = release_1_1();
    // Failures drawn one time in two: a provider the session never asked for would show some.
    let harness = release_mock(
        MockConfig {
            provider_error_one_in: 2,
            ..quick_config()
        },
        &document,
    )
    .await;
    let mut seen_failure = false;
    for n in 0..6 {
        let session = harness
            .create(
                &format!("score.only.{n}@example.com"),
                json!([{ "countryCode": "GBR", "dataPackages": ["SCORE"] }]),
            )
            .await;
        let id = session["id"].as_str().expect("id");
        harness.complete(id).await;
        let (status, described) = harness.get_json(&DATASET.replace("{sessionId}", id)).await;
        assert_eq!(status, 200, "{described}");
        let (_, scores) = harness.get_json(&format!("/v1/sessions/{id}/scores")).await;
        // Exactly the providers of the requested package, each as the hand-written dataset of
        // that package reports it (a failure drawn for one is the same failure everywhere).
        let of = |body: &Value| -> Vec<(String, String)> {
            let mut sources: Vec<(String, String)> = body["sources"]
                .as_array()
                .expect("sources")
                .iter()
                .map(|s| {
                    (
                        s["sourceId"].as_str().unwrap_or_default().to_owned(),
                        s["status"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            sources.sort();
            sources
        };
        assert_eq!(of(&described), of(&scores), "{described}\n{scores}");
        seen_failure |= of(&described).iter().any(|(_, status)| status == "ERROR");
    }
    assert!(
        seen_failure,
        "with one failure in two, some provider failed: the comparison saw both outcomes"
    );

    // Two packages of one country: the providers of either, none of a third.
    let session = harness
        .create(
            "two.packages@example.com",
            json!([{ "countryCode": "GBR", "dataPackages": ["SCORE", "IDENTIFICATION"] }]),
        )
        .await;
    let id = session["id"].as_str().expect("id");
    let (_, waiting) = harness.get_json(&DATASET.replace("{sessionId}", id)).await;
    let providers = |body: &Value| -> Vec<String> {
        body["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .filter_map(|s| s["sourceId"].as_str().map(str::to_owned))
            .collect()
    };
    let mut expected = Vec::new();
    for dataset in ["scores", "person-details"] {
        let (_, body) = harness
            .get_json(&format!("/v1/sessions/{id}/{dataset}"))
            .await;
        expected.extend(providers(&body));
    }
    expected.sort();
    expected.dedup();
    let mut listed = providers(&waiting);
    listed.sort();
    assert_eq!(listed, expected, "{waiting}");
    assert!(
        waiting["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .all(|s| s["status"] == "WAITING_FOR_CUSTOMER"),
        "{waiting}"
    );
}

#[tokio::test]
async fn the_new_dataset_refuses_as_the_hand_written_ones_do() {
    let document = release_1_1();
    let harness = release_mock(quick_config(), &document).await;
    let unknown = "0b6f1a52-6f0e-4a5e-9a57-8f4b8f0b1f1e";

    // An unknown session: the same 404 problem as a hand-written dataset's.
    for dataset in ["/v1/sessions/{sessionId}/scores", DATASET] {
        let (status, problem) = harness
            .get_json(&dataset.replace("{sessionId}", unknown))
            .await;
        assert_eq!(status, 404, "{dataset}: {problem}");
        assert_eq!(
            problem["detail"],
            format!("There is no session with id {unknown}."),
            "{dataset}"
        );
    }
    // Not an id: the same 400 validation problem.
    let (_, hand_written) = harness.get_json("/v1/sessions/12345/scores").await;
    let (status, described) = harness
        .get_json("/v1/sessions/12345/employment-histories")
        .await;
    assert_eq!(status, 400, "{described}");
    assert_eq!(described, hand_written);
    // Without a token: the same 401, with its challenge.
    let response = harness
        .anonymous
        .get(harness.url(&DATASET.replace("{sessionId}", unknown)))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status().as_u16(), 401);
    assert!(
        response
            .headers()
            .get("www-authenticate")
            .is_some_and(|v| v.to_str().unwrap_or_default().starts_with("Bearer")),
    );
}

#[tokio::test]
async fn parameters_and_bodies_of_a_new_operation_are_checked_against_their_schemas() {
    let mut document = release_1_1();
    // What a later release might add: a filter on the new dataset, and an operation with a body.
    document["paths"][DATASET]["get"]["parameters"]
        .as_array_mut()
        .expect("parameters")
        .push(json!({
            "name": "Take", "in": "query",
            "schema": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10},
        }));
    document["paths"][DATASET]["post"] = json!({
        "operationId": "AddEmploymentHistoryNote",
        "parameters": [{"name": "sessionId", "in": "path", "required": true,
                        "schema": {"type": "string", "format": "uuid"}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "type": "object", "required": ["note"],
            "properties": {"note": {"type": "string", "maxLength": 5}},
        }}}},
        "responses": {"201": {"description": "Created", "content": {"application/json": {
            "schema": {"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string", "format": "uuid"}}},
        }}}},
    });
    let harness = release_mock(quick_config(), &document).await;
    let session = harness
        .create("gail@example.com", everything(&["GBR"]))
        .await;
    let path = DATASET.replace("{sessionId}", session["id"].as_str().expect("id"));

    let (status, fine) = harness.get_json(&format!("{path}?take=3")).await;
    assert_eq!(status, 200, "{fine}");
    for (query, message) in [
        ("Take=many", "The Take value must be of type integer."),
        ("Take=11", "The Take value must be at most 10."),
    ] {
        let (status, problem) = harness.get_json(&format!("{path}?{query}")).await;
        assert_eq!(status, 400, "{query}: {problem}");
        assert_eq!(problem["errors"]["Take"], json!([message]), "{query}");
    }

    let (status, created) = harness
        .send_json(Method::POST, &path, &json!({"note": "ok"}))
        .await;
    assert_eq!(status, 201, "{created}");
    assert!(uuid::Uuid::parse_str(created["id"].as_str().expect("id")).is_ok());
    let (status, problem) = harness
        .send_json(Method::POST, &path, &json!({"note": "far too long"}))
        .await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(
        problem["errors"]["note"],
        json!(["The note value must be at most 5 characters."])
    );
    let (status, problem) = harness.send_json(Method::POST, &path, &json!({})).await;
    assert_eq!(status, 400, "{problem}");
    assert_eq!(
        problem["errors"]["note"],
        json!(["The note field is required."])
    );
    // The hand-written dataset on the same session is still the hand-written one.
    let (status, _) = harness
        .get_json(&path.replace("employment-histories", "scores"))
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_new_session_member_is_checked_stored_and_returned() {
    let document = release_1_1();
    let directory = tempfile::tempdir().expect("tempdir");
    let state_file = directory.path().join("state.json");
    let config = MockConfig {
        state_file: Some(state_file.clone()),
        ..quick_config()
    };
    let harness = release_mock(config.clone(), &document).await;
    let body = |reference: Value| {
        json!({
            "subjectEmail": "hal@example.com",
            "queryParameters": everything(&["SWE"]),
            "externalReference": reference,
        })
    };
    for (refused, message) in [
        (
            json!({}),
            "The externalReference value must be of type null or string.",
        ),
        (
            json!("x".repeat(65)),
            "The externalReference value must be at most 64 characters.",
        ),
    ] {
        let (status, problem) = harness
            .send_json(Method::POST, "/v1/sessions", &body(refused.clone()))
            .await;
        assert_eq!(status, 400, "{refused}: {problem}");
        assert_eq!(problem["errors"]["externalReference"], json!([message]));
    }
    let (status, created) = harness
        .send_json(Method::POST, "/v1/sessions", &body(json!("LOAN-2026-0042")))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["externalReference"], "LOAN-2026-0042");
    let id = created["id"].as_str().expect("id").to_owned();
    let session = validator(&document, &schema_of("Session"));
    assert!(session.is_valid(&created), "{created}");

    let (_, read) = harness.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(read["externalReference"], "LOAN-2026-0042");
    let (_, listed) = harness.get_json("/v1/sessions").await;
    assert_eq!(listed["sessions"][0]["externalReference"], "LOAN-2026-0042");
    // The new search filter searches the new member, as the text filters search theirs.
    let other = harness
        .create("ida@example.com", everything(&["SWE"]))
        .await;
    for (query, expected) in [
        ("ExternalReference=loan-2026", vec![id.clone()]),
        ("externalreference=LOAN-2027", vec![]),
        (
            "ExternalReference=",
            vec![other["id"].as_str().expect("id").to_owned(), id.clone()],
        ),
    ] {
        let (status, found) = harness.get_json(&format!("/v1/sessions?{query}")).await;
        assert_eq!(status, 200, "{query}: {found}");
        let ids: Vec<String> = found["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .map(|s| s["id"].as_str().expect("id").to_owned())
            .collect();
        assert_eq!(ids, expected, "{query}");
    }
    let (status, updated) = harness
        .send_json(
            Method::PATCH,
            &format!("/v1/sessions/{id}"),
            &json!({"queryParameters": everything(&["FIN"])}),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["externalReference"], "LOAN-2026-0042");
    harness.mock.shutdown().await;

    // Kept in the state file, and back after a restart.
    let saved = std::fs::read_to_string(&state_file).expect("state file");
    assert!(saved.contains("LOAN-2026-0042"));
    let restarted = release_mock(config, &document).await;
    let (_, read) = restarted.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(read["externalReference"], "LOAN-2026-0042");

    // A mock of 1.0 has no such member: it neither refuses nor returns it.
    let today = release_mock(quick_config(), &frozen_effective(false)).await;
    let (status, created) = today
        .send_json(Method::POST, "/v1/sessions", &body(json!({})))
        .await;
    assert_eq!(status, 201, "{created}");
    assert!(created.get("externalReference").is_none(), "{created}");
}

#[test]
fn the_binary_serves_a_description_given_at_start_and_names_what_is_wrong_with_one() {
    let directory = tempfile::tempdir().expect("tempdir");
    let release = directory.path().join("release.json");
    std::fs::write(&release, release_1_1().to_string()).expect("write");
    let started = crate::trust::run_mock_binary(&[
        "--effective-description",
        release.to_str().expect("path"),
    ]);
    assert!(started.is_err(), "the mock serves release 1.1: {started:?}");

    let not_json = directory.path().join("notes.txt");
    std::fs::write(&not_json, "release notes").expect("write");
    let mut unroutable = release_1_1();
    unroutable["paths"]["/v1/:legacy"] =
        json!({"get": {"responses": {"200": {"description": "OK"}}}});
    let unroutable_file = directory.path().join("unroutable.json");
    std::fs::write(&unroutable_file, unroutable.to_string()).expect("write");
    let missing = directory.path().join("missing.json");
    for (file, expected) in [
        (&missing, "missing.json"),
        (&not_json, "is not a JSON document"),
        (
            &unroutable_file,
            "the path /v1/:legacy of the effective description cannot be routed",
        ),
    ] {
        let (code, stderr) = crate::trust::run_mock_binary(&[
            "--effective-description",
            file.to_str().expect("path"),
        ])
        .expect("the mock refuses to start");
        assert_ne!(code, Some(0), "{stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// What clients' tests borrow for a dataset the vendor added after their fixtures: an example
/// of the operation's JSON answer, valid against its schema, the same for the same seed.
#[test]
fn example_answer_is_a_valid_answer_of_the_operation_named_and_of_no_other() {
    let description: Value = serde_json::from_str(common::openapi::EFFECTIVE).unwrap();
    let answer = creditdata_mock::example_answer(&description, "GetScores", 7).unwrap();
    let schema = json!({"$ref": "#/components/schemas/ScoresResponse"});
    let errors: Vec<String> = validator(&description, &schema)
        .iter_errors(&answer)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{answer:#}");
    assert_eq!(
        creditdata_mock::example_answer(&description, "GetScores", 7),
        Some(answer)
    );
    assert!(creditdata_mock::example_answer(&description, "NoSuchOperation", 7).is_none());
    assert!(
        creditdata_mock::example_answer(&description, "GetPdfReport", 7).is_none(),
        "a PDF answer has no JSON example"
    );
}

/// A release whose new datasets' answers use what is hard to make up: patterns with groups and
/// alternation, `multipleOf` below 1, the `time` and `ipv6` formats, an exclusive bound below 1,
/// a very long string. The mock answers each with a value its schema accepts, or a 501 that
/// names what it cannot make (and never a 500, a panic or a value its schema refuses).
fn release_with_hard_answers() -> Value {
    let mut document = release_1_1();
    let dataset = |schema: Value| {
        json!({"get": {
            "parameters": [{"name": "sessionId", "in": "path", "required": true,
                            "schema": {"type": "string", "format": "uuid"}}],
            "responses": {"200": {"description": "OK", "content": {"application/json": {
                "schema": schema}}}},
        }})
    };
    let paths = document["paths"].as_object_mut().expect("paths");
    paths.insert(
        "/v1/sessions/{sessionId}/checks".into(),
        dataset(json!({
            "type": "object",
            "required": ["reference", "rate", "fraction", "window", "address"],
            "properties": {
                "reference": {"type": "string", "pattern": "^(LN|MG)-[0-9]{4}(-[A-Z]{2})?$"},
                "branch": {"type": "string", "pattern": "^(?:north|south)(east|west)?$"},
                "rate": {"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 1},
                "share": {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0.25,
                          "maximum": 0.75},
                "fraction": {"type": "number", "minimum": 0.495, "exclusiveMaximum": 0.5},
                "below": {"type": "number", "exclusiveMaximum": 0},
                "window": {"type": "string", "format": "time"},
                "address": {"type": "string", "format": "ipv6"},
                "long": {"type": "string", "minLength": 500000},
            },
        })),
    );
    paths.insert(
        "/v1/sessions/{sessionId}/notes".into(),
        dataset(
            json!({"type": "object", "required": ["text"], "properties": {
                "text": {"type": "string", "minLength": 20_000_000},
            }}),
        ),
    );
    paths.insert(
        "/v1/sessions/{sessionId}/codes".into(),
        dataset(
            json!({"type": "object", "required": ["code"], "properties": {
                "code": {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{8}$"},
            }}),
        ),
    );
    document
}

#[tokio::test]
async fn made_up_answers_are_valid_against_their_schema_or_a_501_naming_what_cannot_be_made() {
    // Bounded: the old padding of `minLength` took minutes on the 20,000,000 characters.
    tokio::time::timeout(std::time::Duration::from_secs(120), async {
        let document = release_with_hard_answers();
        let harness = release_mock(quick_config(), &document).await;
        let session = harness
            .create("jo@example.com", everything(&["GBR"]))
            .await;
        let id = session["id"].as_str().expect("id");
        let path = |dataset: &str| format!("/v1/sessions/{id}/{dataset}");
        let checks = &document["paths"]["/v1/sessions/{sessionId}/checks"]["get"]["responses"]
            ["200"]["content"]["application/json"]["schema"];
        let valid = validator(&document, checks);

        let (status, answer) = harness.get_json(&path("checks")).await;
        assert_eq!(status, 200, "{answer}");
        let refusals: Vec<String> = valid
            .iter_errors(&answer)
            .map(|e| format!("{:?} at {}", e.kind(), e.instance_path()))
            .collect();
        assert!(refusals.is_empty(), "{refusals:?}");
        assert_eq!(answer["long"].as_str().map(|s| s.chars().count()), Some(500_000));

        for (dataset, named) in [
            ("notes", ["text", "20000000"]),
            ("codes", ["code", "^(?=.*[0-9])[a-z0-9]{8}$"]),
        ] {
            let (status, problem) = harness.get_json(&path(dataset)).await;
            assert_eq!(status, 501, "{dataset}: {problem}");
            let detail = problem["detail"].as_str().expect("detail");
            for name in named {
                assert!(detail.contains(name), "{dataset}: {name} in {detail}");
            }
        }
    })
    .await
    .expect("the mock answers within the test's bound");
}

/// `{"level": {"level": ... "bottom" ...}}`, `depth` objects deep.
fn nested(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = json!({ "level": value });
    }
    value
}

/// A free-form Session member, as a release may add (`metadata`: any object), nested as deep as
/// the mock accepts survives a restart with `--state`; one deeper than it could load again is
/// refused with a 400 that says so (it was accepted, saved, and the next start failed).
#[tokio::test]
async fn what_the_mock_accepts_it_can_load_again() {
    let mut document = release_1_1();
    for schema in ["Session", "CreateSessionRequest"] {
        document["components"]["schemas"][schema]["properties"]["metadata"] =
            json!({"type": ["object", "null"], "description": "The lender's own data."});
    }
    let directory = tempfile::tempdir().expect("tempdir");
    let state_file = directory.path().join("state.json");
    let config = MockConfig {
        state_file: Some(state_file.clone()),
        ..quick_config()
    };
    let harness = release_mock(config.clone(), &document).await;
    let body = |metadata: Value| {
        json!({
            "subjectEmail": "kim@example.com",
            "queryParameters": everything(&["SWE"]),
            "metadata": metadata,
        })
    };
    let deepest = creditdata_mock::MAX_MEMBER_DEPTH;
    // 126 deep: what serde_json reads in a request body, but not inside the state file.
    for depth in [deepest + 1, 126] {
        let (status, problem) = harness
            .send_json(Method::POST, "/v1/sessions", &body(nested(depth)))
            .await;
        assert_eq!(status, 400, "{depth}: {problem}");
        let message = problem["errors"]["metadata"][0]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains(&format!("at most {deepest}")),
            "{depth}: {problem}"
        );
    }
    let (status, created) = harness
        .send_json(Method::POST, "/v1/sessions", &body(nested(deepest)))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    harness.mock.shutdown().await;

    let restarted = release_mock(config, &document).await;
    let (status, read) = restarted.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["metadata"], nested(deepest));
}
