//! The OpenAPI links of the effective description lead from one created session to every
//! operation that takes an id, down to statements, attachments, images and source files: this
//! test follows them against the mock as a link-following tool would (schemathesis's stateful
//! phase), evaluating each runtime expression on the real answers, and nothing else.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use common::openapi::EFFECTIVE;
use common::{Harness, everything, quick_config};
use creditdata_mock::MockConfig;
use reqwest::Method;
use serde_json::{Map, Value, json};

/// One operation of the description.
struct Operation {
    method: Method,
    path: String,
    path_parameters: BTreeSet<String>,
    /// Response status → links (`$ref`s resolved).
    links: BTreeMap<String, Map<String, Value>>,
}

fn operations(document: &Value) -> BTreeMap<String, Operation> {
    let mut found = BTreeMap::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let id = operation["operationId"].as_str().expect("operationId");
            let path_parameters = operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .map(|p| p["name"].as_str().expect("name").to_owned())
                .collect();
            let mut links = BTreeMap::new();
            for (status, response) in operation["responses"].as_object().expect("responses") {
                let Some(declared) = response.get("links").and_then(Value::as_object) else {
                    continue;
                };
                let resolved = declared
                    .iter()
                    .map(|(name, link)| {
                        let link = match link.get("$ref").and_then(Value::as_str) {
                            Some(reference) => document
                                .pointer(reference.trim_start_matches('#'))
                                .unwrap_or_else(|| {
                                    panic!("{id}: link {name}: {reference} resolves")
                                })
                                .clone(),
                            None => link.clone(),
                        };
                        (name.clone(), link)
                    })
                    .collect();
                links.insert(status.clone(), resolved);
            }
            found.insert(
                id.to_owned(),
                Operation {
                    method: method.to_uppercase().parse().expect("method"),
                    path: path.clone(),
                    path_parameters,
                    links,
                },
            );
        }
    }
    found
}

/// A runtime expression of a link parameter, evaluated on one step.
fn evaluate(
    expression: &str,
    body: &Value,
    path_parameters: &BTreeMap<String, String>,
) -> Option<String> {
    if let Some(pointer) = expression.strip_prefix("$response.body#") {
        return body.pointer(pointer).and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        });
    }
    if let Some(name) = expression.strip_prefix("$request.path.") {
        return path_parameters.get(name).cloned();
    }
    panic!("an expression this test does not know: {expression}")
}

/// A call that follows a link: the target and the values of its path parameters.
struct Step {
    operation: String,
    path_parameters: BTreeMap<String, String>,
}

#[test]
fn every_link_names_an_operation_and_only_parameters_it_has() {
    let document: Value = serde_json::from_str(EFFECTIVE).expect("effective document");
    let operations = operations(&document);
    for (id, operation) in &operations {
        for (status, links) in &operation.links {
            for (name, link) in links {
                let target = link["operationId"].as_str().expect("operationId");
                let target = operations
                    .get(target)
                    .unwrap_or_else(|| panic!("{id} {status} link {name}: no operation {target}"));
                let given: BTreeSet<String> = link["parameters"]
                    .as_object()
                    .expect("parameters")
                    .keys()
                    .cloned()
                    .collect();
                assert_eq!(
                    given, target.path_parameters,
                    "{id} {status} link {name} must give exactly the target's path parameters"
                );
            }
        }
    }
}

#[tokio::test]
async fn following_the_links_from_a_created_session_reaches_every_operation_that_takes_an_id() {
    let document: Value = serde_json::from_str(EFFECTIVE).expect("effective document");
    follow_every_link(&document, quick_config()).await;
}

/// Release day: the links stage of the pipeline reaches the dataset a release adds below a
/// Session (no overlay names it), and the mock serves it where the links lead.
#[tokio::test]
async fn the_links_reach_an_operation_a_release_adds_below_a_session() {
    let document = crate::described::release_1_1();
    let served = follow_every_link(
        &document,
        MockConfig {
            effective_description: Some(std::sync::Arc::new(document.clone())),
            ..quick_config()
        },
    )
    .await;
    assert!(served.contains("GetEmploymentHistories"), "{served:?}");
}

/// Follows every link of `document` from a created and a listed session against a mock
/// started with `config`, and checks that every operation that takes an id was reached with a
/// success; returns the operations reached so.
async fn follow_every_link(document: &Value, config: MockConfig) -> BTreeSet<String> {
    let operations = operations(document);
    let harness = Harness::with(MockConfig {
        complete_on_read: true,
        ..config
    })
    .await;

    let mut answers: VecDeque<(String, u16, Value, BTreeMap<String, String>)> = VecDeque::new();
    let created = harness
        .create("linked@example.com", everything(&["GBR"]))
        .await;
    answers.push_back(("CreateSession".into(), 201, created, BTreeMap::new()));
    let (status, listed) = harness.get_json("/v1/sessions").await;
    answers.push_back(("GetSessions".into(), status, listed, BTreeMap::new()));

    let mut reached: BTreeMap<String, u16> = BTreeMap::new();
    let mut followed: BTreeSet<(String, BTreeMap<String, String>)> = BTreeSet::new();
    let mut unresolved = Vec::new();
    while let Some((source, status, body, source_parameters)) = answers.pop_front() {
        let Some(links) = operations[&source].links.get(&status.to_string()) else {
            continue;
        };
        let mut steps = Vec::new();
        for (name, link) in links {
            let target = link["operationId"]
                .as_str()
                .expect("operationId")
                .to_owned();
            let mut path_parameters = BTreeMap::new();
            for (parameter, expression) in link["parameters"].as_object().expect("parameters") {
                let expression = expression.as_str().expect("an expression");
                match evaluate(expression, &body, &source_parameters) {
                    Some(value) => {
                        path_parameters.insert(parameter.clone(), value);
                    }
                    None => unresolved.push(format!("{source} {status} → {name}: {expression}")),
                }
            }
            if path_parameters.len() == operations[&target].path_parameters.len() {
                steps.push(Step {
                    operation: target,
                    path_parameters,
                });
            }
        }
        // Actions first: reading the session is what completes it (--complete-on-read), and
        // the actions are meant to meet a customer who is still waiting.
        steps.sort_by_key(|step| operations[&step.operation].method == Method::GET);
        for step in steps {
            if !followed.insert((step.operation.clone(), step.path_parameters.clone())) {
                continue;
            }
            let target = &operations[&step.operation];
            let mut path = target.path.clone();
            for (name, value) in &step.path_parameters {
                path = path.replace(&format!("{{{name}}}"), value);
            }
            let request = harness
                .http
                .request(target.method.clone(), harness.url(&path));
            let request = if target.method == Method::PATCH {
                request.json(&json!({
                    "queryParameters": [{ "countryCode": "FIN", "dataPackages": ["SCORE"] }]
                }))
            } else {
                request
            };
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            let is_json = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
            let body = if is_json {
                response.json().await.unwrap_or(Value::Null)
            } else {
                let _ = response.bytes().await;
                Value::Null
            };
            let best = reached.entry(step.operation.clone()).or_insert(status);
            if (200..300).contains(&status) {
                *best = status;
            }
            answers.push_back((step.operation, status, body, step.path_parameters));
        }
    }

    assert!(
        unresolved.is_empty(),
        "links that found nothing:\n{}",
        unresolved.join("\n")
    );
    let taking_an_id: BTreeSet<&String> = operations
        .iter()
        .filter(|(_, operation)| !operation.path_parameters.is_empty())
        .map(|(id, _)| id)
        .collect();
    let served: BTreeSet<&String> = reached
        .iter()
        .filter(|(_, status)| (200..300).contains(*status))
        .map(|(id, _)| id)
        .collect();
    let missing: Vec<_> = taking_an_id.difference(&served).collect();
    assert!(
        missing.is_empty(),
        "not reached with a success through links: {missing:?} (reached: {reached:?})"
    );
    assert!(
        !taking_an_id.is_empty(),
        "the description has operations that take an id"
    );
    served.into_iter().cloned().collect()
}
