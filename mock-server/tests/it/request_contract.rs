//! The mock refuses exactly the requests the effective API description refuses: a request the
//! description allows is served (2xx), one it does not allow is a 400 validation problem. The
//! description's own schemas (as JSON Schema, formats included) decide which is which, so a rule
//! only the mock knows, or a limit only the document states, fails here before schemathesis's
//! `positive_data_acceptance` / `negative_data_rejection` checks find it.

use crate::common;

use common::Harness;
use common::openapi::{EFFECTIVE, validator};
use serde_json::{Value, json};

struct Contract {
    document: Value,
}

impl Contract {
    fn load() -> Contract {
        Contract {
            document: serde_json::from_str(EFFECTIVE).expect("effective document"),
        }
    }

    /// Whether the description allows `body` for the JSON request body of `method path`.
    fn allows_body(&self, path: &str, method: &str, body: &Value) -> bool {
        let schema = &self.document["paths"][path][method]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert!(!schema.is_null(), "{method} {path} has a JSON body");
        validator(&self.document, schema).is_valid(body)
    }

    /// Whether the description allows the query parameter `name=raw` of `GET /v1/sessions`: the
    /// raw text read as the parameter's type, then checked against its schema.
    fn allows_search_parameter(&self, name: &str, raw: &str) -> bool {
        let parameters = self.document["paths"]["/v1/sessions"]["get"]["parameters"]
            .as_array()
            .expect("parameters");
        let parameter = parameters
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("GET /v1/sessions has no parameter {name}"));
        let schema = &parameter["schema"];
        let value = match schema["type"].as_str() {
            Some("integer") => match raw.parse::<i64>() {
                Ok(number) => json!(number),
                Err(_) => return false,
            },
            _ => json!(raw),
        };
        validator(&self.document, schema).is_valid(&value)
    }
}

/// The mock's verdict: `Some(true)` served, `Some(false)` refused with a 400 problem.
fn verdict(status: u16, body: &Value) -> Option<bool> {
    match status {
        200..=299 => Some(true),
        400 if body["errors"].is_object() => Some(false),
        _ => None,
    }
}

fn session_body(email: Value, query: Value) -> Value {
    json!({ "subjectEmail": email, "queryParameters": query })
}

fn one_country(country: Value, packages: Value) -> Value {
    json!([{ "countryCode": country, "dataPackages": packages }])
}

/// Longest address `maxLength: 254` allows, built from labels that are each within their own
/// limits (local part 64, domain labels 63).
fn email_of_length(length: usize) -> String {
    let local = "a".repeat(64);
    let tail = length - 64 - 1 - 64 - 64;
    format!(
        "{local}@{}.{}.{}",
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(tail)
    )
}

fn create_bodies() -> Vec<(&'static str, Value)> {
    let fin = one_country(json!("FIN"), json!(["SCORE"]));
    let many = |n: usize| {
        Value::Array(
            (0..n)
                .map(|_| json!({ "countryCode": "FIN", "dataPackages": ["SCORE"] }))
                .collect(),
        )
    };
    vec![
        (
            "valid",
            session_body(json!("jane.doe@example.com"), fin.clone()),
        ),
        (
            "unknown members are allowed",
            json!({ "subjectEmail": "a@example.com", "queryParameters": fin, "note": 1 }),
        ),
        (
            "email: domain literal",
            session_body(json!("a@[127.0.0.1]"), fin.clone()),
        ),
        (
            "email: dotless domain",
            session_body(json!("a@localhost"), fin.clone()),
        ),
        (
            "email: 254 characters",
            session_body(json!(email_of_length(254)), fin.clone()),
        ),
        (
            "email: 255 characters",
            session_body(json!(email_of_length(255)), fin.clone()),
        ),
        (
            "email: no @",
            session_body(json!("not-an-email"), fin.clone()),
        ),
        ("email: empty", session_body(json!(""), fin.clone())),
        (
            "email: two dots",
            session_body(json!("a..b@example.com"), fin.clone()),
        ),
        ("email: a number", session_body(json!(42), fin.clone())),
        ("email: null", session_body(Value::Null, fin.clone())),
        ("email: missing", json!({ "queryParameters": fin })),
        (
            "queryParameters: missing",
            json!({ "subjectEmail": "a@example.com" }),
        ),
        (
            "queryParameters: null",
            session_body(json!("a@example.com"), Value::Null),
        ),
        (
            "queryParameters: empty",
            session_body(json!("a@example.com"), json!([])),
        ),
        (
            "queryParameters: 100",
            session_body(json!("a@example.com"), many(100)),
        ),
        (
            "queryParameters: 101",
            session_body(json!("a@example.com"), many(101)),
        ),
        (
            "queryParameters: an object",
            session_body(json!("a@example.com"), json!({})),
        ),
        (
            "queryParameters: an item not an object",
            session_body(json!("a@example.com"), json!(["FIN"])),
        ),
        (
            "countryCode: assigned by no country, but well formed",
            session_body(
                json!("a@example.com"),
                one_country(json!("ZZZ"), json!(["SCORE"])),
            ),
        ),
        (
            "countryCode: lower case",
            session_body(
                json!("a@example.com"),
                one_country(json!("fin"), json!(["SCORE"])),
            ),
        ),
        (
            "countryCode: two letters",
            session_body(
                json!("a@example.com"),
                one_country(json!("FI"), json!(["SCORE"])),
            ),
        ),
        (
            "countryCode: padded",
            session_body(
                json!("a@example.com"),
                one_country(json!(" FIN"), json!(["SCORE"])),
            ),
        ),
        (
            "countryCode: null",
            session_body(
                json!("a@example.com"),
                one_country(Value::Null, json!(["SCORE"])),
            ),
        ),
        (
            "countryCode: missing",
            session_body(
                json!("a@example.com"),
                json!([{ "dataPackages": ["SCORE"] }]),
            ),
        ),
        (
            "dataPackages: null",
            session_body(
                json!("a@example.com"),
                one_country(json!("GBR"), Value::Null),
            ),
        ),
        (
            "dataPackages: missing",
            session_body(json!("a@example.com"), json!([{ "countryCode": "GBR" }])),
        ),
        (
            "dataPackages: empty",
            session_body(json!("a@example.com"), one_country(json!("GBR"), json!([]))),
        ),
        (
            "dataPackages: repeated",
            session_body(
                json!("a@example.com"),
                one_country(json!("GBR"), json!(["SCORE", "SCORE"])),
            ),
        ),
        (
            "dataPackages: unknown value",
            session_body(
                json!("a@example.com"),
                one_country(json!("GBR"), json!(["GOLD"])),
            ),
        ),
        (
            "dataPackages: a string",
            session_body(
                json!("a@example.com"),
                one_country(json!("GBR"), json!("SCORE")),
            ),
        ),
        ("not an object", json!([])),
    ]
}

#[tokio::test]
async fn the_mock_accepts_exactly_the_create_and_update_bodies_the_description_allows() {
    let harness = Harness::start().await;
    let contract = Contract::load();
    let mut disagreements = Vec::new();
    for (case, body) in create_bodies() {
        let allowed = contract.allows_body("/v1/sessions", "post", &body);
        let (status, answer) = harness
            .send_json(reqwest::Method::POST, "/v1/sessions", &body)
            .await;
        if verdict(status, &answer) != Some(allowed) {
            disagreements.push(format!(
                "create, {case}: the description {} it, the mock answered {status} {answer}",
                if allowed { "allows" } else { "refuses" }
            ));
        }
    }

    let session = harness
        .create(
            "upgrade@example.com",
            one_country(json!("FIN"), json!(["SCORE"])),
        )
        .await;
    let path = format!("/v1/sessions/{}", session["id"].as_str().expect("id"));
    for (case, body) in create_bodies() {
        // The update body is the create body without the e-mail.
        let Some(query) = body.get("queryParameters").cloned() else {
            continue;
        };
        let body = json!({ "queryParameters": query });
        let allowed = contract.allows_body("/v1/sessions/{sessionId}", "patch", &body);
        let (status, answer) = harness
            .send_json(reqwest::Method::PATCH, &path, &body)
            .await;
        if verdict(status, &answer) != Some(allowed) {
            disagreements.push(format!(
                "update, {case}: the description {} it, the mock answered {status} {answer}",
                if allowed { "allows" } else { "refuses" }
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[tokio::test]
async fn the_mock_accepts_exactly_the_search_parameters_the_description_allows() {
    let harness = Harness::start().await;
    let contract = Contract::load();
    let cases: &[(&str, &[&str])] = &[
        (
            "Skip",
            &[
                "-2147483648",
                "-1",
                "0",
                "1",
                "2147483647",
                "2147483648",
                "1.5",
                "abc",
                "",
            ],
        ),
        (
            "Take",
            &["-1", "0", "1", "20", "100", "101", "99999999999", "x", ""],
        ),
        (
            "CountryCode",
            &["GBR", "ZZZ", "gbr", "GB", "GBRR", "G1R", ""],
        ),
        (
            "CreatedFromUtc",
            &[
                "2026-05-01",
                "2024-02-29",
                "2026-02-29",
                "2026-13-01",
                "2026-5-1",
                "",
            ],
        ),
        (
            "CreatedToUtc",
            &["2026-05-01", "0001-01-01", "yesterday", ""],
        ),
        (
            "CustomerProgressStatus",
            &[
                "DELIVERY_FAILED",
                "WAITING_FOR_CUSTOMER",
                "COMPLETED_BY_CUSTOMER",
                "EXPIRED",
                "waiting_for_customer",
                "DONE",
                "",
            ],
        ),
        ("SubjectEmail", &["jane", "", "ünïcödé"]),
        ("SubjectFullName", &["Jane Doe", ""]),
        ("CreatedByName", &["someone", ""]),
        ("OrganizationalUnitName", &["Retail Lending", ""]),
    ];
    let mut disagreements = Vec::new();
    for (name, values) in cases {
        for raw in *values {
            let allowed = contract.allows_search_parameter(name, raw);
            let query: String = form_urlencoded::Serializer::new(String::new())
                .append_pair(name, raw)
                .finish();
            let (status, answer) = harness.get_json(&format!("/v1/sessions?{query}")).await;
            if verdict(status, &answer) != Some(allowed) {
                disagreements.push(format!(
                    "{name}={raw:?}: the description {} it, the mock answered {status} {answer}",
                    if allowed { "allows" } else { "refuses" }
                ));
            }
        }
    }
    // A rule across two parameters is one no schema states: a reversed range is an empty page.
    let (status, answer) = harness
        .get_json("/v1/sessions?CreatedFromUtc=2026-05-02&CreatedToUtc=2026-05-01")
        .await;
    if status != 200 || answer["paging"]["totalCount"] != 0 {
        disagreements.push(format!(
            "a reversed date range: expected an empty page, the mock answered {status} {answer}"
        ));
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// `schemathesis.toml` biases generated country codes towards the countries the service offers
/// (a session for any other country has no data to reach); the list must be the one the mock's
/// `GET /v1/consumer/packages` answers with.
#[tokio::test]
async fn the_conformance_dictionary_lists_the_offered_countries() {
    let config: toml::Table =
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../schemathesis.toml"))
            .parse()
            .expect("schemathesis.toml is TOML");
    let mut listed: Vec<String> = config["dictionaries"]["offered-countries"]["values"]
        .as_array()
        .expect("the offered-countries dictionary")
        .iter()
        .map(|value| value.as_str().expect("a country code").to_owned())
        .collect();
    let harness = Harness::start().await;
    let (status, packages) = harness.get_json("/v1/consumer/packages").await;
    assert_eq!(status, 200);
    let mut offered: Vec<String> = packages["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|package| {
            package["countryCode"]
                .as_str()
                .expect("countryCode")
                .to_owned()
        })
        .collect();
    listed.sort();
    offered.sort();
    assert_eq!(listed, offered);
}
