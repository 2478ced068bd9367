//! Every JSON response of a full session life, validated against the response schemas of the
//! effective API description (OpenAPI 3.0 `nullable` turned into JSON Schema 2020-12 unions),
//! and every status code checked to be one the description documents for the operation.

use crate::common;

use std::collections::BTreeSet;

use common::openapi::{EFFECTIVE, convert};
use common::{Harness, everything};
use reqwest::Method;
use serde_json::{Map, Value, json};

struct Contract {
    document: Value,
    defs: Value,
}

impl Contract {
    fn load() -> Contract {
        let document: Value = serde_json::from_str(EFFECTIVE).expect("effective document");
        let defs = convert(&document["components"]["schemas"]);
        Contract { document, defs }
    }

    /// Checks one response; returns a description of what is wrong, if anything.
    fn check(
        &self,
        method: &Method,
        template: &str,
        status: u16,
        content_type: &str,
        body: &Value,
    ) -> Option<String> {
        let operation = &self.document["paths"][template][method.as_str().to_lowercase()];
        if operation.is_null() {
            return Some(format!("{method} {template} is not in the description"));
        }
        // The exact code, else its range (`2XX`), else `default`.
        let responses = &operation["responses"];
        let Some(response) = [
            status.to_string(),
            format!("{}XX", status / 100),
            "default".into(),
        ]
        .iter()
        .map(|key| &responses[key.as_str()])
        .find(|response| !response.is_null()) else {
            return Some(format!(
                "{method} {template}: status {status} is not documented"
            ));
        };
        let media = content_type.split(';').next().unwrap_or_default().trim();
        let Some(schema) = response["content"].get(media).map(|c| &c["schema"]) else {
            return Some(format!(
                "{method} {template} {status}: content type {media} is not documented"
            ));
        };
        let mut root = match convert(schema) {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("allOf".into(), json!([other]));
                map
            }
        };
        root.insert("$defs".into(), self.defs.clone());
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&Value::Object(root))
            .expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        (!errors.is_empty()).then(|| format!("{method} {template} {status}: {}", errors.join("; ")))
    }
}

struct Recorder<'a> {
    harness: &'a Harness,
    contract: Contract,
    problems: Vec<String>,
    seen: BTreeSet<(String, String)>,
}

impl Recorder<'_> {
    async fn call(
        &mut self,
        method: Method,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .harness
            .http
            .request(method.clone(), self.harness.url(path));
        if let Some(body) = &body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let bytes = response.bytes().await.expect("body");
        self.seen.insert((method.to_string(), template.to_owned()));
        if content_type.starts_with("application/json") {
            let value: Value = serde_json::from_slice(&bytes).expect("JSON body parses");
            if let Some(problem) =
                self.contract
                    .check(&method, template, status, &content_type, &value)
            {
                self.problems.push(problem);
            }
            (status, value)
        } else {
            // Binary downloads: status and media type must be documented.
            let operation =
                &self.contract.document["paths"][template][method.as_str().to_lowercase()];
            let documented = &operation["responses"][status.to_string()]["content"];
            let media = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            if documented.get(&media).is_none() {
                self.problems.push(format!(
                    "{method} {template} {status}: undocumented {media}"
                ));
            }
            (status, Value::Null)
        }
    }

    async fn get(&mut self, template: &str, path: &str) -> (u16, Value) {
        self.call(Method::GET, template, path, None).await
    }
}

/// Every `GET` of the description not exercised yet that a `GET` below the session links to
/// (with the session's id from the request and the rest from the linking answer's body, as
/// `$response.body#/member/0/id` says): called with the first entry the linking answer gives.
async fn follow_links(r: &mut Recorder<'_>, session: &str) {
    let s = "/v1/sessions/{sessionId}";
    let document = r.contract.document.clone();
    let id_of = |operation_id: &str| -> Option<String> {
        document["paths"]
            .as_object()?
            .iter()
            .find_map(|(path, item)| {
                (item["get"]["operationId"] == operation_id).then(|| path.clone())
            })
    };
    for (path, item) in document["paths"].as_object().expect("paths") {
        let Some(rest) = path.strip_prefix(s) else {
            continue;
        };
        if rest.contains('{') || item.get("get").is_none() {
            continue;
        }
        let links = item["get"]["responses"]["200"]["links"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if links.is_empty() {
            continue;
        }
        let mut answer = None;
        for link in links.values() {
            let Some(target) = link["operationId"].as_str().and_then(id_of) else {
                continue;
            };
            if r.seen.contains(&("GET".to_string(), target.clone())) {
                continue;
            }
            if answer.is_none() {
                answer = Some(r.get(path, &format!("{session}{rest}")).await.1);
            }
            let body = answer.as_ref().expect("the answer");
            let mut concrete = target.replacen(s, session, 1);
            let mut resolved = true;
            for (name, value) in link["parameters"].as_object().into_iter().flatten() {
                let Some(pointer) = value
                    .as_str()
                    .and_then(|v| v.strip_prefix("$response.body#"))
                else {
                    continue;
                };
                match body.pointer(pointer).and_then(Value::as_str) {
                    Some(id) => concrete = concrete.replace(&format!("{{{name}}}"), id),
                    None => resolved = false,
                }
            }
            assert!(
                resolved,
                "GET {path} gives nothing the link to {target} can follow: {body}"
            );
            r.get(&target, &concrete).await;
        }
    }
}

#[tokio::test]
async fn every_response_of_a_session_life_matches_the_description() {
    let harness = Harness::start().await;
    let mut r = Recorder {
        harness: &harness,
        contract: Contract::load(),
        problems: Vec::new(),
        seen: BTreeSet::new(),
    };
    let s = "/v1/sessions/{sessionId}";
    // The converted schemas do reject what the description forbids.
    let bad_session = json!({ "id": "not-a-uuid", "createdAtUtc": "yesterday", "customerProgressStatus": "MAYBE" });
    assert!(
        r.contract
            .check(&Method::GET, s, 200, "application/json", &bad_session)
            .is_some()
    );
    let null_where_nullable =
        json!({ "sessions": null, "paging": { "totalCount": 0, "skip": null, "take": null } });
    assert!(
        r.contract
            .check(
                &Method::GET,
                "/v1/sessions",
                200,
                "application/json",
                &null_where_nullable
            )
            .is_none()
    );
    assert!(
        r.contract
            .check(&Method::GET, s, 418, "application/json", &json!({}))
            .is_some()
    );

    // Errors first: validation, unknown session, missing token is checked in auth.rs.
    r.call(
        Method::POST,
        "/v1/sessions",
        "/v1/sessions",
        Some(json!({ "subjectEmail": "nope", "queryParameters": [] })),
    )
    .await;
    r.get("/v1/sessions", "/v1/sessions?Take=1000").await;
    r.get(s, "/v1/sessions/not-a-uuid").await;
    r.get(s, &format!("/v1/sessions/{}", uuid::Uuid::new_v4()))
        .await;
    r.get("/v1/consumer/packages", "/v1/consumer/packages")
        .await;

    let (_, created) = r
        .call(
            Method::POST,
            "/v1/sessions",
            "/v1/sessions",
            Some(json!({ "subjectEmail": "schema.check@example.com", "queryParameters": everything(&["GBR", "SWE", "LVA"]) })),
        )
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    let at = |suffix: &str| format!("/v1/sessions/{id}{suffix}");

    let datasets = [
        "/person-details",
        "/negative-tradelines",
        "/positive-tradelines",
        "/court-and-insolvencies",
        "/legal-entities",
        "/registry-incomes",
        "/immovables",
        "/metrics",
        "/scores",
        "/account-statements",
        "/categorizations",
        "/categorizations-summary",
        "/identity-verifications",
        "/attachments",
        "/input-requirements",
        "/source-files",
    ];
    // Waiting for the customer.
    for suffix in datasets {
        r.get(&format!("{s}{suffix}"), &at(suffix)).await;
    }
    r.call(
        Method::POST,
        &format!("{s}/actions/resend-customer-notification"),
        &at("/actions/resend-customer-notification"),
        None,
    )
    .await;
    r.call(
        Method::POST,
        &format!("{s}/actions/extend-customer-input-deadline"),
        &at("/actions/extend-customer-input-deadline"),
        None,
    )
    .await;
    r.get(&format!("{s}/pdf-report"), &at("/pdf-report")).await;

    harness.complete(&id).await;
    // One provider fails, so some responses mix SUCCESS and ERROR.
    let response = harness
        .anonymous
        .put(harness.url(&format!(
            "/_mock/sessions/{id}/sources/LVA_BALTICSEA_OPENBANKING/status"
        )))
        .json(&json!({ "status": "ERROR" }))
        .send()
        .await
        .expect("control");
    assert_eq!(response.status().as_u16(), 200);

    for suffix in datasets {
        r.get(&format!("{s}{suffix}"), &at(suffix)).await;
    }
    // Whatever else the description has directly below a session, as a vendor release adds
    // it: the mock answers it from the description.
    let more: Vec<String> = r.contract.document["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .filter(|(path, item)| {
            item.get("get").is_some()
                && path
                    .strip_prefix(&format!("{s}/"))
                    .is_some_and(|rest| !rest.contains('{'))
                && !r.seen.contains(&("GET".to_string(), path.to_string()))
        })
        .map(|(path, _)| path[s.len()..].to_string())
        .collect();
    for suffix in &more {
        r.get(&format!("{s}{suffix}"), &at(suffix)).await;
    }
    r.get(s, &at("")).await;
    r.get(
        "/v1/sessions",
        "/v1/sessions?SubjectEmail=schema.check&Take=5",
    )
    .await;

    let (_, files) = r
        .get(&format!("{s}/source-files"), &at("/source-files"))
        .await;
    for file in files.as_array().expect("files") {
        let file_id = file["id"].as_str().expect("id");
        r.get(
            &format!("{s}/source-files/{{sourceFileId}}"),
            &at(&format!("/source-files/{file_id}")),
        )
        .await;
        r.get(
            &format!("{s}/source-files/{{sourceFileId}}/content"),
            &at(&format!("/source-files/{file_id}/content")),
        )
        .await;
    }
    r.get(
        &format!("{s}/source-files/{{sourceFileId}}"),
        &at(&format!("/source-files/{}", uuid::Uuid::new_v4())),
    )
    .await;

    let (_, statements) = r
        .get(
            &format!("{s}/account-statements"),
            &at("/account-statements"),
        )
        .await;
    for statement in statements["accountStatements"]
        .as_array()
        .expect("statements")
    {
        let statement_id = statement["id"].as_str().expect("id");
        r.get(
            &format!("{s}/account-statements/{{accountStatementId}}/excel"),
            &at(&format!("/account-statements/{statement_id}/excel")),
        )
        .await;
        r.get(
            &format!("{s}/account-statements/{{accountStatementId}}/tsv"),
            &at(&format!("/account-statements/{statement_id}/tsv")),
        )
        .await;
    }
    r.get(
        &format!("{s}/account-statements/transactions/excel"),
        &at("/account-statements/transactions/excel"),
    )
    .await;
    r.get(
        &format!("{s}/account-statements/{{accountStatementId}}/tsv"),
        &at("/account-statements/unknown/tsv"),
    )
    .await;

    let (_, verifications) = r
        .get(
            &format!("{s}/identity-verifications"),
            &at("/identity-verifications"),
        )
        .await;
    for verification in verifications["identityVerifications"]
        .as_array()
        .expect("verifications")
    {
        let verification_id = verification["id"].as_str().expect("id");
        let template = format!("{s}/identity-verifications/{{verificationId}}/images");
        let (_, images) = r
            .get(
                &template,
                &at(&format!("/identity-verifications/{verification_id}/images")),
            )
            .await;
        for image in images["images"].as_array().expect("images") {
            let image_id = image["id"].as_str().expect("id");
            r.get(
                &format!("{template}/{{imageId}}/content"),
                &at(&format!(
                    "/identity-verifications/{verification_id}/images/{image_id}/content"
                )),
            )
            .await;
        }
    }
    let (_, attachments) = r
        .get(&format!("{s}/attachments"), &at("/attachments"))
        .await;
    for attachment in attachments["attachments"].as_array().expect("attachments") {
        let attachment_id = attachment["id"].as_str().expect("id");
        r.get(
            &format!("{s}/attachments/{{attachmentId}}/content"),
            &at(&format!("/attachments/{attachment_id}/content")),
        )
        .await;
    }
    r.get(&format!("{s}/pdf-report"), &at("/pdf-report")).await;

    // Refusals after completion, then PATCH, expiry, revival.
    r.call(
        Method::POST,
        &format!("{s}/actions/extend-customer-input-deadline"),
        &at("/actions/extend-customer-input-deadline"),
        None,
    )
    .await;
    r.call(
        Method::POST,
        &format!("{s}/actions/resend-customer-notification"),
        &at("/actions/resend-customer-notification"),
        None,
    )
    .await;
    r.call(
        Method::PATCH,
        s,
        &at(""),
        Some(json!({ "queryParameters": [{ "countryCode": "POL", "dataPackages": ["SCORE"] }] })),
    )
    .await;
    r.call(
        Method::PATCH,
        s,
        &at(""),
        Some(json!({ "queryParameters": [{ "countryCode": "XX", "dataPackages": ["NOPE"] }] })),
    )
    .await;
    harness
        .control(&format!("/_mock/sessions/{id}/expire"))
        .await;
    r.call(
        Method::PATCH,
        s,
        &at(""),
        Some(json!({ "queryParameters": [{ "countryCode": "POL", "dataPackages": ["SCORE"] }] })),
    )
    .await;
    r.call(
        Method::POST,
        &format!("{s}/actions/extend-customer-input-deadline"),
        &at("/actions/extend-customer-input-deadline"),
        None,
    )
    .await;

    // Whatever a release adds below a listing (an entry and its document), reached as a client
    // reaches it: through the links the description gives the listing's answer.
    follow_links(&mut r, &at("")).await;

    assert!(
        r.problems.is_empty(),
        "responses that violate the description:\n{}",
        r.problems.join("\n")
    );
    // Every operation of the description was exercised.
    let document = &r.contract.document;
    let mut missing = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("item").keys() {
            if !r.seen.contains(&(method.to_uppercase(), path.clone())) {
                missing.push(format!("{method} {path}"));
            }
        }
    }
    assert!(missing.is_empty(), "operations not exercised: {missing:?}");
}
