//! The mock's hand-written handlers register under the operationIds of the description, and the
//! router serves every operation of the description: a description without an operation a
//! handler is registered under stops the start (naming the operationId and the file), and every
//! operation of the next release (`creditdata_codegen::made_release`, made from the frozen 1.0)
//! is served, its new ones from the description, with no edit of the mock.

use crate::common;

use std::sync::Arc;

use common::openapi::validator;
use common::{Harness, everything, quick_config};
use creditdata_mock::{MockConfig, MockServer, StartError};
use serde_json::Value;

/// Every operation of `document` as (method, path, operation object), in document order.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            if operation.get("responses").is_some() {
                found.push((method.clone(), path.clone(), operation.clone()));
            }
        }
    }
    found
}

#[tokio::test]
async fn a_description_that_renamed_the_operations_of_the_handlers_stops_the_start() {
    let mut document: Value =
        serde_json::from_slice(creditdata_mock::EFFECTIVE_JSON).expect("the effective document");
    let mut renamed = Vec::new();
    for item in document["paths"]
        .as_object_mut()
        .expect("paths")
        .values_mut()
    {
        for operation in item.as_object_mut().expect("a path item").values_mut() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                renamed.push(id.to_owned());
                let new = format!("{id}Renamed");
                operation["operationId"] = Value::String(new);
            }
        }
    }
    let error = match MockServer::start(MockConfig {
        effective_description: Some(Arc::new(document)),
        ..quick_config()
    })
    .await
    {
        Ok(_) => panic!("a mock started whose handlers serve no operation of its description"),
        Err(error) => error,
    };
    assert!(matches!(error, StartError::Description(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        renamed
            .iter()
            .any(|id| message.contains(&format!("operationId {id},"))),
        "names the operationId: {message}"
    );
    assert!(message.contains("src/api/"), "names the file: {message}");
    assert!(
        message.contains("dropped or renamed") && message.contains("register the handler"),
        "says what to do: {message}"
    );
}

#[tokio::test]
async fn every_dataset_of_the_next_release_is_served_with_no_edit() {
    let document = crate::parameters::made_release_effective();
    let harness = Harness::with(MockConfig {
        effective_description: Some(Arc::new(document.clone())),
        ..quick_config()
    })
    .await;
    let session = harness
        .create("erin@example.com", everything(&["FIN"]))
        .await;
    let id = session["id"].as_str().expect("id");
    harness.complete(id).await;
    // Every GET below a Session that needs only its id: the hand-written ones and those the
    // release adds, which only the description knows.
    let mut served = 0;
    for (method, path, operation) in operations(&document) {
        let Some(rest) = path.strip_prefix("/v1/sessions/{sessionId}") else {
            continue;
        };
        if method != "get" || rest.contains('{') {
            continue;
        }
        let url = path.replace("{sessionId}", id);
        let response = harness.get(&url).await;
        let status = response.status();
        let json = response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.contains("json"));
        let body = response.bytes().await.expect("a body");
        assert_eq!(
            status,
            200,
            "{method} {path}: {}",
            String::from_utf8_lossy(&body)
        );
        if json
            && let Some(schema) =
                operation.pointer("/responses/200/content/application~1json/schema")
        {
            let answer: Value = serde_json::from_slice(&body).expect("JSON");
            let errors: Vec<String> = validator(&document, schema)
                .iter_errors(&answer)
                .map(|error| format!("{} at {}", error, error.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{method} {path}: {errors:?}");
        }
        served += 1;
    }
    assert!(served > 0, "the release has datasets below a Session");
}
