//! Every parameter the description gives an operation is checked against its schema, on the
//! hand-written routes as on those served from the description, including a parameter a vendor
//! release adds to a hand-written route (schemathesis's negative data rejection): run on the
//! vendored description and on the next release made from the frozen 1.0
//! (`creditdata_codegen::made_release`), which adds a bounded query parameter to the session
//! search and to a dataset. A refusal names the parameter and never quotes the value; a value
//! the schema allows is accepted.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{Harness, everything, quick_config};
use creditdata_codegen::document;
use creditdata_codegen::made_release;
use creditdata_mock::MockConfig;
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The effective description of the release made from the frozen 1.0, as `regen` makes it.
pub fn made_release_effective() -> Value {
    let root = workspace();
    let frozen = root.join("codegen/tests/data/frozen-1.0");
    let published = document::load(&frozen.join("spec/openapi.json")).expect("the frozen 1.0");
    let released = made_release::make(&published)
        .and_then(|made| made.apply(&published))
        .expect("a release is made from the frozen 1.0");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, released.to_string()).expect("write");
    creditdata_codegen::pipeline::run(&creditdata_codegen::pipeline::Inputs {
        spec,
        overlays: frozen.join("overlays"),
        lenient: false,
        display_root: root,
    })
    .unwrap_or_else(|e| panic!("the release generates:\n{e}"))
    .effective
}

/// A value `schema` refuses, as query text, or `None` when it refuses no text (a plain string).
fn refused(document: &Value, schema: &Value) -> Option<String> {
    let schema = resolve(document, schema);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let mut value = String::from("NOT_LISTED");
        while values.iter().any(|v| v == &json!(value)) {
            value.push('X');
        }
        return Some(value);
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if kinds.contains(&"integer") || kinds.contains(&"number") {
        if let Some(max) = schema.get("maximum").and_then(Value::as_i64) {
            return Some((max + 1).to_string());
        }
        if let Some(min) = schema.get("minimum").and_then(Value::as_i64) {
            return Some((min - 1).to_string());
        }
        return Some("not-a-number".into());
    }
    if kinds.contains(&"boolean") {
        return Some("maybe".into());
    }
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
        return Some("r".repeat(usize::try_from(max).unwrap_or(0) + 1));
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("uuid") => Some("not-a-uuid".into()),
        Some("date") => Some("2026-13-45".into()),
        Some("date-time") => Some("yesterday".into()),
        _ => schema
            .get("pattern")
            .is_some()
            .then(|| "!not matching!".into()),
    }
}

fn resolve<'a>(document: &'a Value, node: &'a Value) -> &'a Value {
    match node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| document.pointer(p))
    {
        Some(target) => resolve(document, target),
        None => node,
    }
}

/// `(method, path, parameter, schema)` of every query parameter of an operation whose only path
/// parameter, if any, is the session's.
fn query_parameters(document: &Value) -> Vec<(String, String, String, Value)> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        if path.matches('{').count() > 1
            || (path.contains('{') && !path.starts_with("/v1/sessions/{sessionId}"))
        {
            continue;
        }
        for (method, operation) in item.as_object().expect("a path item") {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let parameter = resolve(document, parameter);
                if parameter["in"] == "query" {
                    found.push((
                        method.clone(),
                        path.clone(),
                        parameter["name"].as_str().expect("a name").to_owned(),
                        parameter["schema"].clone(),
                    ));
                }
            }
        }
    }
    found
}

/// Sends every refused value and one allowed value of every query parameter; returns what
/// went otherwise, one line each.
async fn check_every_query_parameter(harness: &Harness, document: &Value) -> (usize, Vec<String>) {
    let session = harness
        .create("parameters@example.com", everything(&["FIN"]))
        .await;
    let id = session["id"].as_str().expect("an id");
    harness.complete(id).await;
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (method, template, name, schema) in query_parameters(document) {
        let path = template.replace("{sessionId}", id);
        let method: reqwest::Method = method.to_ascii_uppercase().parse().expect("a method");
        let send = |value: String| {
            let query: String = form_urlencoded::Serializer::new(String::new())
                .append_pair(&name, &value)
                .finish();
            harness
                .http
                .request(method.clone(), harness.url(&format!("{path}?{query}")))
                .json(&json!({}))
                .send()
        };
        if let Some(value) = refused(document, &schema) {
            checked += 1;
            let response = send(value.clone()).await.expect("a response");
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let messages = body["errors"][&name].to_string();
            if status != 400 || !body["errors"][&name].is_array() {
                wrong.push(format!(
                    "{method} {template}?{name}={value}: {status} {body}"
                ));
            } else if value.len() > 3 && messages.contains(&value) {
                wrong.push(format!(
                    "{method} {template}?{name}: the refusal quotes the value: {messages}"
                ));
            }
        }
        // A value the schema allows is not refused for this parameter.
        let Some(allowed) = creditdata_mock::example_of(document, &schema, 7) else {
            wrong.push(format!(
                "{method} {template}?{name}: the mock cannot make a value its schema allows"
            ));
            continue;
        };
        let text = match &allowed {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let response = send(text.clone()).await.expect("a response");
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status == 400 && body["errors"].get(&name).is_some() {
            wrong.push(format!(
                "{method} {template}?{name}={text}: an allowed value is refused: {body}"
            ));
        }
    }
    (checked, wrong)
}

#[tokio::test]
async fn every_query_parameter_of_the_vendored_description_is_checked_against_its_schema() {
    let harness = Harness::start().await;
    let document: Value =
        serde_json::from_slice(creditdata_mock::EFFECTIVE_JSON).expect("the effective document");
    let (checked, wrong) = check_every_query_parameter(&harness, &document).await;
    assert!(checked > 0, "no parameter refuses anything");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn a_parameter_a_release_adds_to_a_hand_written_route_is_checked_against_its_schema() {
    let document = made_release_effective();
    let frozen =
        document::load(&workspace().join("codegen/tests/data/frozen-1.0/spec/openapi.json"))
            .expect("the frozen 1.0");
    // The release adds query parameters to operations the mock serves by hand.
    let new: Vec<(String, String)> = query_parameters(&document)
        .into_iter()
        .filter(|(method, path, name, _)| {
            frozen["paths"][path][method]["parameters"]
                .as_array()
                .is_some_and(|old| !old.iter().any(|p| p["name"] == json!(name)))
        })
        .map(|(_, path, name, _)| (path, name))
        .collect();
    assert!(
        new.iter().any(|(path, _)| path == "/v1/sessions"),
        "the release adds a search parameter: {new:?}"
    );
    assert!(new.len() >= 2, "{new:?}");
    let harness = Harness::with(MockConfig {
        effective_description: Some(Arc::new(document.clone())),
        ..quick_config()
    })
    .await;
    let (checked, wrong) = check_every_query_parameter(&harness, &document).await;
    assert!(checked >= new.len(), "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The session search's page limit is the effective description's `maximum` of `Take`, not a
/// number of the mock's own: the largest page is served, one more is refused naming the limit.
#[tokio::test]
async fn the_largest_page_is_the_descriptions_maximum_of_take() {
    let document: Value =
        serde_json::from_slice(creditdata_mock::EFFECTIVE_JSON).expect("the effective description");
    let take = query_parameters(&document)
        .into_iter()
        .find(|(_, path, name, _)| path == "/v1/sessions" && name == "Take")
        .map(|(_, _, _, schema)| schema)
        .expect("the session search takes Take");
    let maximum = take["maximum"].as_i64().expect("Take has a maximum");
    assert_eq!(i64::from(creditdata_mock::MAX_TAKE), maximum);

    let harness = Harness::start().await;
    let (status, _) = harness
        .get_json(&format!("/v1/sessions?Take={maximum}"))
        .await;
    assert_eq!(status, 200);
    let (status, body) = harness
        .get_json(&format!("/v1/sessions?Take={}", maximum + 1))
        .await;
    assert_eq!(status, 400);
    assert!(body.to_string().contains(&maximum.to_string()), "{body}");
}
