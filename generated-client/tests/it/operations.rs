//! Every operation of the generated client, called against a loopback recorder.
//!
//! Each call goes through the public client (`Client::builder()`, the generated builders,
//! `call()` for JSON and `download()` for byte streams) to a `wiremock` server on
//! 127.0.0.1 that answers every request with one canned response and records what it received.
//! The test then checks what the service would have seen (method, exact path, query, headers,
//! body) and what the caller got back (the decoded value, or the bytes of a download).
//!
//! The responses (`tests/data/*.json`) follow what is known of the production service, written
//! down in `tests/data/README.md`: ISO codes, amounts as numbers, scores as strings, required
//! fields sent as `null`, enum values the API description does not list, and members the schema
//! does not know.
//!
//! Every assertion message starts with the operationId, so a failure names the operation.

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate, Utc};
use creditdata_client::download::DownloadExt;
use creditdata_client::operation::Operation;
use creditdata_client::session_datasets::Dataset;
use creditdata_client::types::{
    self, AttachmentType, CategorizationSummaryStatus, ContractType, CreditorSector,
    CustomerProgressStatus, CustomerProgressStatusInput, DataPackage, DataPackageInput,
    LegalEntityRelationType, ScoreType, ScoreUnavailableReason, SourceStatus,
};
use creditdata_client::{ByteStream, Client};
use futures::StreamExt;
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::any;
use wiremock::{Mock, Request, ResponseTemplate};

use crate::support::MockServer;

const SESSION_ID: Uuid = Uuid::from_u128(0x3f0c9a52_7d1e_4b8a_9c2f_5e6d7a8b9c01);
const SESSION: &str = "3f0c9a52-7d1e-4b8a-9c2f-5e6d7a8b9c01";
const SOURCE_FILE_ID: Uuid = Uuid::from_u128(0x9b2d4e61_0a3c_4f7e_8d15_c6a7b8e9f012);
const SOURCE_FILE: &str = "9b2d4e61-0a3c-4f7e-8d15-c6a7b8e9f012";

/// The operations this file calls. A regenerated client with an operation missing here fails
/// `every_operation_is_exercised`, and every helper refuses an operation not listed here.
const EXERCISED: [&str; 32] = [
    "GetSessions",
    "CreateSession",
    "GetSession",
    "UpdateSession",
    "ExtendCustomerInputDeadline",
    "ResendCustomerNotification",
    "GetInputRequirements",
    "GetPdfReport",
    "GetSourceFiles",
    "GetSourceFile",
    "GetSourceFileContent",
    "GetConsumerPackages",
    "GetAccountStatements",
    "GetAccountStatementTransactionsExcel",
    "GetAccountStatementExcel",
    "GetAttachments",
    "GetAttachmentContent",
    "GetCategorizationsSummary",
    "GetCategorizations",
    "GetCourtAndInsolvencies",
    "GetIdentityVerifications",
    "GetIdentityVerificationImages",
    "GetIdentityVerificationImageContent",
    "GetImmovables",
    "GetLegalEntities",
    "GetMetrics",
    "GetNegativeTradelines",
    "GetPersonDetails",
    "GetPositiveTradelines",
    "GetRegistryIncomes",
    "GetScores",
    "GetAccountStatementTsv",
];

// ---------------------------------------------------------------------------------------------
// The recorder and the checks every call goes through
// ---------------------------------------------------------------------------------------------

/// A loopback server that answers every request with one canned response, and a client for it.
struct Recorder {
    server: MockServer,
    client: Client,
}

impl Recorder {
    async fn start() -> Recorder {
        let server = MockServer::start().await;
        let client = Client::builder()
            .base_url(server.uri())
            .bearer_token("t")
            .no_retries()
            .build()
            .expect("a client for the loopback server");
        Recorder { server, client }
    }

    /// Forgets earlier requests and answers the next ones with `reply`.
    async fn answer(&self, reply: ResponseTemplate) {
        self.server.reset().await;
        Mock::given(any())
            .respond_with(reply)
            .mount(&self.server)
            .await;
    }

    /// The one request the last call made.
    async fn only_request(&self, op: &str) -> Request {
        let mut requests = self
            .server
            .received_requests()
            .await
            .expect("recording is on");
        assert_eq!(
            requests.len(),
            1,
            "{op}: expected exactly one request, got {requests:#?}"
        );
        requests.remove(0)
    }
}

/// What the service must receive for one call.
struct Expected {
    method: &'static str,
    /// The path as sent on the wire (path parameters substituted and percent-encoded).
    path: String,
    query: Vec<(&'static str, String)>,
    json_body: Option<Value>,
}

impl Expected {
    fn new(method: &'static str, path: impl Into<String>) -> Expected {
        Expected {
            method,
            path: path.into(),
            query: Vec::new(),
            json_body: None,
        }
    }

    fn get(path: impl Into<String>) -> Expected {
        Expected::new("GET", path)
    }

    fn post(path: impl Into<String>) -> Expected {
        Expected::new("POST", path)
    }

    fn patch(path: impl Into<String>) -> Expected {
        Expected::new("PATCH", path)
    }

    fn query(mut self, name: &'static str, value: impl Into<String>) -> Expected {
        self.query.push((name, value.into()));
        self
    }

    fn json_body(mut self, body: Value) -> Expected {
        self.json_body = Some(body);
        self
    }
}

/// `info.version` of the effective document: what every request sends as `api-version`.
/// The `api-version` the operation `op` sends: the one its behaviour pin keeps (the version it
/// was first generated with), whatever `info.version` a later release carries.
fn pinned_api_version(op: &str) -> &'static str {
    creditdata_client::operations::api_version(op)
        .unwrap_or_else(|| panic!("{op} is an operation of the description"))
}

fn header<'r>(request: &'r Request, name: &str) -> Option<&'r str> {
    request
        .headers
        .get(name)
        .map(|v| v.to_str().expect("an ASCII header value"))
}

/// Checks the recorded request against `expected`; `json_response` says whether the operation
/// answers JSON (and so must ask for it).
fn assert_request(op: &str, request: &Request, expected: &Expected, json_response: bool) {
    assert_eq!(
        request.method.as_str(),
        expected.method,
        "{op}: HTTP method"
    );
    assert_eq!(
        request.url.path(),
        expected.path,
        "{op}: path (as sent, percent-encoded)"
    );

    let mut sent: Vec<(String, String)> = request
        .url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    sent.sort();
    let mut wanted: Vec<(String, String)> = expected
        .query
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    wanted.sort();
    assert_eq!(
        sent,
        wanted,
        "{op}: query parameters (raw query: {:?})",
        request.url.query()
    );

    assert_eq!(
        header(request, "authorization"),
        Some("Bearer t"),
        "{op}: Authorization header"
    );
    let versions: Vec<&str> = request
        .headers
        .get_all("api-version")
        .iter()
        .map(|v| v.to_str().expect("an ASCII header value"))
        .collect();
    assert_eq!(
        versions,
        [pinned_api_version(op)],
        "{op}: exactly one api-version header, the version its pin keeps"
    );
    if json_response {
        assert_eq!(
            header(request, "accept"),
            Some("application/json"),
            "{op}: Accept header"
        );
    }

    match &expected.json_body {
        Some(body) => {
            assert_eq!(
                header(request, "content-type"),
                Some("application/json"),
                "{op}: Content-Type of the request body"
            );
            let sent: Value = serde_json::from_slice(&request.body).unwrap_or_else(|e| {
                panic!(
                    "{op}: the request body is not JSON ({e}): {:?}",
                    String::from_utf8_lossy(&request.body)
                )
            });
            assert_eq!(&sent, body, "{op}: request body");
        }
        None => {
            assert!(
                request.body.is_empty(),
                "{op}: no request body expected, got {:?}",
                String::from_utf8_lossy(&request.body)
            );
            assert_eq!(
                header(request, "content-type"),
                None,
                "{op}: Content-Type without a body"
            );
        }
    }
}

fn assert_exercised<O: Operation>(expected: &Expected) {
    let op = O::META.id;
    assert!(
        EXERCISED.contains(&op),
        "{op} is called here but missing from EXERCISED"
    );
    assert_eq!(
        O::META.method,
        expected.method,
        "{op}: the operation's metadata disagrees on the method"
    );
}

/// Sends a JSON operation with `call()`, answered by `status` and `response`; checks the request
/// and returns the decoded value.
async fn call_json<O>(
    recorder: &Recorder,
    expected: Expected,
    status: u16,
    response: Value,
    operation: O,
) -> O::Output
where
    O: Operation + Send,
    O::ErrorBody: serde::Serialize,
{
    let op = O::META.id;
    assert_exercised::<O>(&expected);
    recorder
        .answer(ResponseTemplate::new(status).set_body_json(response))
        .await;
    let output = operation
        .call()
        .await
        .unwrap_or_else(|e| panic!("{op}: the call failed: {e}"));
    assert_request(op, &recorder.only_request(op).await, &expected, true);
    output
}

/// Sends a download operation, answered by `body` as `content_type`; checks the request, the
/// status and the content type the caller sees, and returns the bytes read from the stream.
async fn download<O>(
    recorder: &Recorder,
    expected: Expected,
    content_type: &str,
    body: &[u8],
    operation: O,
) -> Vec<u8>
where
    O: Operation<Output = ByteStream> + Send,
    O::ErrorBody: serde::Serialize,
{
    let op = O::META.id;
    assert_exercised::<O>(&expected);
    recorder
        .answer(
            ResponseTemplate::new(200)
                .set_body_raw(body.to_vec(), content_type)
                .insert_header(
                    "content-disposition",
                    "attachment; filename=\"download.bin\"",
                ),
        )
        .await;
    let download = operation
        .download()
        .await
        .unwrap_or_else(|e| panic!("{op}: the call failed: {e}"));
    assert_eq!(
        download.content_type(),
        Some(content_type),
        "{op}: Content-Type seen by the caller"
    );
    assert_eq!(download.operation(), Some(op), "{op}: operation");
    let mut stream = download.bytes_stream();
    let mut received = Vec::new();
    while let Some(chunk) = stream.next().await {
        received.extend_from_slice(
            &chunk.unwrap_or_else(|e| panic!("{op}: reading the body failed: {e}")),
        );
    }
    assert_request(op, &recorder.only_request(op).await, &expected, false);
    assert_eq!(received.len(), body.len(), "{op}: body length");
    assert!(
        received == body,
        "{op}: the body bytes differ from what the server sent"
    );
    received
}

fn utc(text: &str) -> DateTime<Utc> {
    text.parse().expect("an RFC 3339 date-time")
}

fn session_path(rest: &str) -> String {
    format!("/v1/sessions/{SESSION}{rest}")
}

/// A `Source` entry as the datasets start with it.
fn source(source_id: Option<&str>, status: SourceStatus, country: &str) -> types::Source {
    types::Source::builder()
        .source_id(source_id.map(str::to_string))
        .status(status)
        .country_code(Some(country.to_string()))
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Realistic bodies
// ---------------------------------------------------------------------------------------------

/// A canned response body from `tests/data/NAME.json` (what those bodies are modelled on:
/// `tests/data/README.md`).
/// A recorded answer of `tests/data/`, with whatever the description requires of it beyond what
/// was recorded (a member a later release makes required): `session_*` is a Session, `get_x` the
/// answer of `GetX`.
fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let recorded =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if name.starts_with("session_") {
        return creditdata_mock::as_described("Session", recorded);
    }
    let operation: String = name
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect();
    creditdata_mock::as_answer_of(&operation, recorded)
}

/// A Session as `GET /v1/sessions/{id}` answers: the customer has finished, the e-mail is
/// withheld (`null` in a required field), the deadline can no longer be extended (`null`), the
/// service already speaks of a package this description does not list, and it sends a member the
/// (closed) Session schema does not know.
fn completed_session_json() -> Value {
    fixture("session_completed")
}

fn completed_session() -> types::Session {
    types::Session::builder()
        .id(SESSION_ID)
        .created_at_utc(utc("2026-03-02T09:14:27.513Z"))
        .created_by_name(Some("Anna Lindqvist".into()))
        .organizational_unit_name(Some("Retail Lending Baltics".into()))
        .subject_full_name(Some("Jonas Petraitis".into()))
        .customer_input_deadline_utc(Some(utc("2026-03-09T09:14:27Z")))
        .customer_progress_status(CustomerProgressStatus::CompletedByCustomer)
        .query_parameters(Some(vec![
            types::QueryParameter::builder()
                .country_code(Some("LTU".into()))
                .data_packages(Some(vec![
                    DataPackage::CreditHistory,
                    DataPackage::Score,
                    DataPackage::Unrecognized("INCOME_VERIFICATION".into()),
                ]))
                .build()
                .unwrap(),
            types::QueryParameter::builder()
                .country_code(Some("LVA".into()))
                .build()
                .unwrap(),
        ]))
        .data_package_upgradable_until_utc(Some(utc("2026-04-01T00:00:00Z")))
        .build()
        .unwrap()
}

/// A Session just created: waiting for the customer, nothing requested yet visible
/// (`queryParameters: null`), both deadlines open.
fn waiting_session_json(id: Uuid) -> Value {
    let mut session = fixture("session_waiting");
    session["id"] = json!(id);
    session
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn session_search_sends_every_filter_under_its_published_pascal_case_name() {
    let recorder = Recorder::start().await;
    let other = Uuid::from_u128(0x71e2c0aa_55b4_4e0f_a1c3_0d9e8f7a6b54);

    let found = call_json(
        &recorder,
        Expected::get("/v1/sessions")
            // '+', '&', spaces and non-ASCII letters must survive the query string.
            .query("SubjectEmail", "jonas.petraitis+loans@example.lt")
            .query("SubjectFullName", "Zoë Müller-Åberg")
            .query("CountryCode", "LTU")
            .query("CreatedFromUtc", "2026-01-01")
            .query("CreatedToUtc", "2026-03-31")
            .query("CustomerProgressStatus", "WAITING_FOR_CUSTOMER")
            .query("CreatedByName", "Anna Lindqvist")
            .query("OrganizationalUnitName", "Retail Lending & Cards")
            .query("Skip", "20")
            .query("Take", "10"),
        200,
        json!({
            "sessions": [completed_session_json(), waiting_session_json(other)],
            "paging": { "totalCount": 57, "skip": 20, "take": 10 }
        }),
        recorder
            .client
            .get_sessions()
            .subject_email("jonas.petraitis+loans@example.lt")
            .subject_full_name("Zoë Müller-Åberg")
            .country_code("LTU")
            .created_from_utc(NaiveDate::from_ymd_opt(2026, 1, 1).unwrap())
            .created_to_utc(NaiveDate::from_ymd_opt(2026, 3, 31).unwrap())
            .customer_progress_status(CustomerProgressStatusInput::WaitingForCustomer)
            .created_by_name("Anna Lindqvist")
            .organizational_unit_name("Retail Lending & Cards")
            .skip(20)
            .take(10),
    )
    .await;

    let sessions = found.sessions.expect("GetSessions: sessions");
    assert_eq!(sessions.len(), 2, "GetSessions: sessions");
    assert_eq!(
        sessions[0],
        completed_session(),
        "GetSessions: first session"
    );
    assert_eq!(sessions[1].id, other, "GetSessions: second session id");
    assert_eq!(
        sessions[1].query_parameters, None,
        "GetSessions: queryParameters null"
    );
    assert_eq!(
        sessions[1].subject_email.as_deref(),
        Some("kadri.tamm@example.ee")
    );
    assert_eq!(
        sessions[1].customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer
    );
    assert_eq!(
        sessions[1].customer_input_deadline_extendable_until_utc,
        Some(utc("2026-03-26T14:02:11Z")),
        "GetSessions: customerInputDeadlineExtendableUntilUtc"
    );
    let paging = found.paging.expect("GetSessions: paging");
    assert_eq!(
        (paging.total_count, paging.skip, paging.take),
        (57, Some(20), Some(10)),
        "GetSessions: paging"
    );

    // Without filters nothing is sent: no empty `Skip=` or the like.
    let all = call_json(
        &recorder,
        Expected::get("/v1/sessions"),
        200,
        json!({ "sessions": [], "paging": { "totalCount": 0, "skip": null, "take": null } }),
        recorder.client.get_sessions(),
    )
    .await;
    assert_eq!(all.sessions, Some(vec![]), "GetSessions: empty page");
    assert_eq!(
        recorder.only_request("GetSessions").await.url.query(),
        None,
        "GetSessions: no query string"
    );
}

#[tokio::test]
async fn session_lifecycle_operations_send_their_bodies_and_decode_sessions() {
    let recorder = Recorder::start().await;

    // POST /v1/sessions: the exact camelCase body; 201 with the new Session.
    let created = call_json(
        &recorder,
        Expected::post("/v1/sessions").json_body(json!({
            "subjectEmail": "kadri.tamm@example.ee",
            "queryParameters": [
                { "countryCode": "EST", "dataPackages": ["CREDIT_HISTORY", "SCORE", "IDENTIFICATION"] },
                { "countryCode": "FIN", "dataPackages": ["SCORE"] }
            ]
        })),
        201,
        waiting_session_json(SESSION_ID),
        recorder.client.create_session().body(types::CreateSessionRequest::builder().subject_email("kadri.tamm@example.ee").query_parameters(vec![
                types::QueryParameterInput::builder().country_code("EST").data_packages(vec![DataPackageInput::CreditHistory, DataPackageInput::Score, DataPackageInput::Identification]).build().unwrap(),
                types::QueryParameterInput::builder().country_code("FIN").data_packages(vec![DataPackageInput::Score]).build().unwrap(),
            ])),
    )
    .await;
    assert_eq!(created.id, SESSION_ID, "CreateSession: id");
    assert_eq!(
        created.customer_progress_status,
        CustomerProgressStatus::WaitingForCustomer,
        "CreateSession: status"
    );
    assert_eq!(
        created.data_package_upgradable_until_utc, None,
        "CreateSession: dataPackageUpgradableUntilUtc null"
    );
    assert_eq!(
        created.customer_input_deadline_utc,
        Some(utc("2026-03-12T14:02:11Z")),
        "CreateSession: deadline"
    );

    // GET /v1/sessions/{id}: nulls in required fields, an unknown package, an unknown member.
    let session = call_json(
        &recorder,
        Expected::get(session_path("")),
        200,
        completed_session_json(),
        recorder.client.get_session().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(session, completed_session(), "GetSession: decoded Session");
    assert_eq!(session.subject_email, None, "GetSession: subjectEmail null");
    assert_eq!(
        session.customer_input_deadline_extendable_until_utc, None,
        "GetSession: extendable-until null"
    );
    let packages = session
        .query_parameters
        .as_ref()
        .and_then(|q| q[0].data_packages.as_ref())
        .expect("GetSession: packages");
    assert_eq!(
        packages[2],
        DataPackage::Unrecognized("INCOME_VERIFICATION".into()),
        "GetSession: unknown package kept"
    );
    assert_eq!(
        packages[2].as_str(),
        "INCOME_VERIFICATION",
        "GetSession: unknown package as_str"
    );
    assert!(
        !packages[2].is_known() && packages[0].is_known(),
        "GetSession: is_known"
    );
    // Session is a closed schema: the unknown `riskTier` is dropped, decoding still succeeds.
    assert!(
        serde_json::to_value(&session)
            .unwrap()
            .get("riskTier")
            .is_none(),
        "GetSession: closed schema"
    );

    // PATCH /v1/sessions/{id}: appends a country.
    let updated = call_json(
        &recorder,
        Expected::patch(session_path("")).json_body(json!({
            "queryParameters": [ { "countryCode": "SWE", "dataPackages": ["BANK_ACCOUNT_CATEGORIZATION"] } ]
        })),
        200,
        completed_session_json(),
        recorder.client.update_session().session_id(SESSION_ID).body(types::UpdateSessionRequest::builder().query_parameters(vec![types::QueryParameterInput::builder().country_code("SWE").data_packages(vec![DataPackageInput::BankAccountCategorization]).build().unwrap()])),
    )
    .await;
    assert_eq!(
        updated,
        completed_session(),
        "UpdateSession: decoded Session"
    );

    // POST .../actions/extend-customer-input-deadline: no body; 201 with the Session.
    let mut extended_json = waiting_session_json(SESSION_ID);
    extended_json["customerInputDeadlineUtc"] = json!("2026-03-19T14:02:11Z");
    let extended = call_json(
        &recorder,
        Expected::post(session_path("/actions/extend-customer-input-deadline")),
        201,
        extended_json,
        recorder
            .client
            .extend_customer_input_deadline()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        extended.customer_input_deadline_utc,
        Some(utc("2026-03-19T14:02:11Z")),
        "ExtendCustomerInputDeadline: new deadline"
    );

    // POST .../actions/resend-customer-notification: no body; the answer is untyped JSON.
    let answer =
        json!({ "notificationSentAtUtc": "2026-03-05T15:40:00Z", "recipient": "k***@example.ee" });
    let resent = call_json(
        &recorder,
        Expected::post(session_path("/actions/resend-customer-notification")),
        200,
        answer.clone(),
        recorder
            .client
            .resend_customer_notification()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        resent, answer,
        "ResendCustomerNotification: the answer as sent"
    );
}

#[tokio::test]
async fn session_metadata_operations_decode_their_bodies() {
    let recorder = Recorder::start().await;

    let requirements = call_json(
        &recorder,
        Expected::get(session_path("/input-requirements")),
        200,
        fixture("get_input_requirements"),
        recorder
            .client
            .get_input_requirements()
            .session_id(SESSION_ID),
    )
    .await;
    let requirement = &requirements
        .input_requirements
        .expect("GetInputRequirements: list")[0];
    assert_eq!(
        requirement.source_id.as_deref(),
        Some("LT-CREDITINFO"),
        "GetInputRequirements: sourceId"
    );
    assert_eq!(
        requirement.country_code.as_deref(),
        Some("LTU"),
        "GetInputRequirements: countryCode"
    );
    assert_eq!(
        requirement.extra.to_map()["requirementType"],
        "PERSONAL_IDENTITY_CODE",
        "GetInputRequirements: unknown member kept"
    );
    assert_eq!(
        requirement.extra.to_map()["mandatory"],
        true,
        "GetInputRequirements: unknown member kept"
    );

    let second_file = Uuid::from_u128(0x0c1d2e3f_4a5b_4c6d_8e7f_8091a2b3c4d5);
    let files = call_json(
        &recorder,
        Expected::get(session_path("/source-files")),
        200,
        json!([
            { "id": SOURCE_FILE, "sourceId": "LT-CREDITINFO", "type": "XML", "name": "creditinfo-report.xml", "sizeInBytes": 48213 },
            { "id": second_file, "sourceId": null, "type": null, "name": null, "sizeInBytes": null }
        ]),
        recorder.client.get_source_files().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        files,
        vec![
            types::SourceFile::builder()
                .id(SOURCE_FILE_ID)
                .source_id(Some("LT-CREDITINFO".into()))
                .type_(Some("XML".into()))
                .name(Some("creditinfo-report.xml".into()))
                .size_in_bytes(Some(48213))
                .build()
                .unwrap(),
            types::SourceFile::builder()
                .id(second_file)
                .build()
                .unwrap(),
        ],
        "GetSourceFiles: decoded list"
    );

    let file = call_json(
        &recorder,
        Expected::get(format!("/v1/sessions/{SESSION}/source-files/{SOURCE_FILE}")),
        200,
        json!({ "id": SOURCE_FILE, "sourceId": "LT-CREDITINFO", "type": "XML", "name": "creditinfo-report.xml", "sizeInBytes": 48213 }),
        recorder.client.get_source_file().session_id(SESSION_ID).source_file_id(SOURCE_FILE_ID),
    )
    .await;
    assert_eq!(
        file.name.as_deref(),
        Some("creditinfo-report.xml"),
        "GetSourceFile: name"
    );
    assert_eq!(file.size_in_bytes, Some(48213), "GetSourceFile: size");

    let content = call_json(
        &recorder,
        Expected::get(format!(
            "/v1/sessions/{SESSION}/source-files/{SOURCE_FILE}/content"
        )),
        200,
        fixture("get_source_file_content"),
        recorder
            .client
            .get_source_file_content()
            .session_id(SESSION_ID)
            .source_file_id(SOURCE_FILE_ID),
    )
    .await;
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(
            content
                .content_base64
                .expect("GetSourceFileContent: contentBase64"),
        )
        .expect("GetSourceFileContent: valid Base64");
    assert_eq!(
        decoded,
        br#"<?xml version="1.0" encoding="UTF-8"?><CreditReport bureau="Creditinfo Lietuva"/>"#,
        "GetSourceFileContent: content"
    );
    assert_eq!(
        content.size_in_bytes,
        Some(decoded.len() as i64),
        "GetSourceFileContent: size"
    );

    let packages = call_json(
        &recorder,
        Expected::get("/v1/consumer/packages"),
        200,
        fixture("get_consumer_packages"),
        recorder.client.get_consumer_packages(),
    )
    .await;
    let packages = packages.packages.expect("GetConsumerPackages: packages");
    assert_eq!(packages[0].country_code.as_deref(), Some("LTU"));
    let swedish = packages[1]
        .data_packages
        .as_ref()
        .expect("GetConsumerPackages: SWE packages");
    assert_eq!(
        swedish,
        &[
            DataPackage::BankAccountCategorization,
            DataPackage::Unrecognized("INCOME_VERIFICATION".into())
        ],
        "GetConsumerPackages: unknown package kept"
    );
    assert_eq!(
        swedish[1].as_str(),
        "INCOME_VERIFICATION",
        "GetConsumerPackages: as_str"
    );
    assert!(!swedish[1].is_known(), "GetConsumerPackages: is_known");
    assert_eq!(
        packages[1].extra.to_map()["maxSessionsPerMonth"],
        500,
        "GetConsumerPackages: unknown member kept"
    );
}

// ---------------------------------------------------------------------------------------------
// Downloads
// ---------------------------------------------------------------------------------------------

/// Bytes that are not text, long enough to arrive in several chunks.
fn binary(header: &[u8], len: usize) -> Vec<u8> {
    let mut bytes = header.to_vec();
    let mut state: u32 = 0x2545_f491;
    while bytes.len() < len {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        bytes.push((state >> 24) as u8);
    }
    bytes
}

#[tokio::test]
async fn downloads_stream_every_byte_with_the_content_type() {
    let recorder = Recorder::start().await;

    let pdf = binary(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", 150_000);
    download(
        &recorder,
        Expected::get(session_path("/pdf-report")),
        "application/pdf",
        &pdf,
        recorder.client.get_pdf_report().session_id(SESSION_ID),
    )
    .await;

    const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
    let workbook = binary(b"PK\x03\x04\x14\x00\x06\x00", 300_000);
    download(
        &recorder,
        Expected::get(session_path("/account-statements/transactions/excel")),
        XLSX,
        &workbook,
        recorder
            .client
            .get_account_statement_transactions_excel()
            .session_id(SESSION_ID),
    )
    .await;

    // Identifiers are opaque strings: everything but letters, digits and `-._~` is
    // percent-encoded so the path keeps its shape (`/`, `\`, `%` and control characters are
    // refused instead: see tests/hostile_server.rs).
    download(
        &recorder,
        Expected::get(session_path(
            "/account-statements/SE45%205000%3A2026-02/excel",
        )),
        XLSX,
        &workbook[..20_000],
        recorder
            .client
            .get_account_statement_excel()
            .session_id(SESSION_ID)
            .account_statement_id("SE45 5000:2026-02"),
    )
    .await;

    let png = binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 40_000);
    download(
        &recorder,
        Expected::get(session_path("/attachments/mandate%237%3Fv%3D2/content")),
        "image/png",
        &png,
        recorder
            .client
            .get_attachment_content()
            .session_id(SESSION_ID)
            .attachment_id("mandate#7?v=2"),
    )
    .await;

    let jpeg = binary(b"\xff\xd8\xff\xe0\0\x10JFIF\0", 60_000);
    download(
        &recorder,
        Expected::get(session_path(
            "/identity-verifications/idv%204821/images/front%401/content",
        )),
        "image/jpeg",
        &jpeg,
        recorder
            .client
            .get_identity_verification_image_content()
            .session_id(SESSION_ID)
            .verification_id("idv 4821")
            .image_id("front@1"),
    )
    .await;

    let tsv = "bookingDate\tamount\tcurrencyCode\tcounterparty\tdescription\n\
               2026-02-01\t-1250.00\tSEK\tVattenfall AB\tEl februari\n\
               2026-02-25\t38250.00\tSEK\tÅhléns AB\tLön\n";
    let received = download(
        &recorder,
        Expected::get(session_path("/account-statements/stmt-2026-02/tsv")),
        "text/tab-separated-values; charset=utf-8",
        tsv.as_bytes(),
        recorder
            .client
            .get_account_statement_tsv()
            .session_id(SESSION_ID)
            .account_statement_id("stmt-2026-02"),
    )
    .await;
    assert_eq!(
        String::from_utf8(received).expect("GetAccountStatementTsv: UTF-8"),
        tsv,
        "GetAccountStatementTsv: text"
    );
}

// ---------------------------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn credit_datasets_decode_nulls_unknown_values_and_unknown_members() {
    let recorder = Recorder::start().await;

    let tradelines = call_json(
        &recorder,
        Expected::get(session_path("/negative-tradelines")),
        200,
        fixture("get_negative_tradelines"),
        recorder
            .client
            .get_negative_tradelines()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        tradelines.sources,
        Some(vec![
            source(Some("LT-CREDITINFO"), SourceStatus::Success, "LTU"),
            source(None, SourceStatus::PackageUpgradeRequired, "LVA"),
        ]),
        "GetNegativeTradelines: sources (sourceId null)"
    );
    let items = tradelines
        .negative_tradelines
        .expect("GetNegativeTradelines: items");
    assert_eq!(
        items[0].amount,
        Some(
            types::Amount::builder()
                .amount(1249.99)
                .currency_code(Some("EUR".into()))
                .build()
                .unwrap()
        )
    );
    assert_eq!(items[0].contract_type, ContractType::CreditCard);
    let creditor = items[0]
        .creditor
        .as_ref()
        .expect("GetNegativeTradelines: creditor");
    assert_eq!(creditor.sector, CreditorSector::Finance);
    assert_eq!(
        creditor.extra.to_map()["name"],
        "Luminor Bank AS",
        "GetNegativeTradelines: creditor's unknown member kept"
    );
    assert_eq!(
        items[0].extra.to_map()["registeredOnDate"],
        "2024-11-05",
        "GetNegativeTradelines: unknown member kept"
    );
    assert_eq!(
        items[0].extra.to_map()["daysPastDue"],
        187,
        "GetNegativeTradelines: unknown member kept"
    );
    assert_eq!(
        items[1].amount.as_ref().map(|a| a.currency_code.clone()),
        Some(None),
        "GetNegativeTradelines: currencyCode null"
    );
    assert_eq!(
        items[1].contract_type,
        ContractType::Unrecognized("BUY_NOW_PAY_LATER".into())
    );
    assert_eq!(items[1].contract_type.as_str(), "BUY_NOW_PAY_LATER");
    assert!(!items[1].contract_type.is_known());
    assert_eq!(
        items[1].creditor.as_ref().map(|c| c.sector.as_str()),
        Some("E_COMMERCE")
    );
    assert_eq!(
        (
            items[2].source_id.as_deref(),
            items[2].amount.as_ref(),
            items[2].creditor.as_ref()
        ),
        (None, None, None)
    );

    let scores = call_json(
        &recorder,
        Expected::get(session_path("/scores")),
        200,
        fixture("get_scores"),
        recorder.client.get_scores().session_id(SESSION_ID),
    )
    .await;
    let items = scores.scores.expect("GetScores: scores");
    assert_eq!(
        items[0],
        types::Score::builder()
            .type_(ScoreType::RiskScoreV1)
            .source_id(Some("LT-CREDITINFO".into()))
            .country_code(Some("LTU".into()))
            .original_value(Some("B2".into()))
            .normalized_value(Some("0.0412".into()))
            .build()
            .unwrap(),
        "GetScores: values are strings"
    );
    assert_eq!(
        items[1].unavailable_reason,
        Some(ScoreUnavailableReason::Underage)
    );
    assert_eq!(
        items[2].type_,
        ScoreType::Unrecognized("BEHAVIOUR_SCORE_V2".into()),
        "GetScores: unknown type kept"
    );
    assert_eq!(
        items[2]
            .unavailable_reason
            .as_ref()
            .map(|r| (r.as_str(), r.is_known())),
        Some(("TEMPORARILY_SUSPENDED", false)),
        "GetScores: unknown reason kept"
    );
    // Score is closed: `scoreCardVersion` is not kept, and decoding still succeeds.
    assert!(
        serde_json::to_value(&items[2])
            .unwrap()
            .get("scoreCardVersion")
            .is_none()
    );

    let positive = call_json(
        &recorder,
        Expected::get(session_path("/positive-tradelines")),
        200,
        fixture("get_positive_tradelines"),
        recorder
            .client
            .get_positive_tradelines()
            .session_id(SESSION_ID),
    )
    .await;
    let item = &positive
        .positive_tradelines
        .expect("GetPositiveTradelines: items")[0];
    assert_eq!(item.source_id.as_deref(), Some("SE-UC"));
    assert_eq!(
        item.extra.to_map()["balance"],
        json!({ "amount": 1987350.5, "currencyCode": "SEK" }),
        "GetPositiveTradelines: unknown member kept"
    );
    assert_eq!(item.extra.to_map()["contractType"], "MORTGAGE_LOAN");
    assert_eq!(
        positive.extra.to_map()["reportedAtUtc"],
        "2026-03-05T10:00:00Z",
        "GetPositiveTradelines: unknown envelope member kept"
    );

    let incomes = call_json(
        &recorder,
        Expected::get(session_path("/registry-incomes")),
        200,
        fixture("get_registry_incomes"),
        recorder
            .client
            .get_registry_incomes()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        incomes.sources.as_ref().unwrap()[0].status,
        SourceStatus::IdTaxOnly
    );
    let items = incomes.incomes.expect("GetRegistryIncomes: incomes");
    assert_eq!(items[0].assessment_year, Some(2025));
    assert_eq!(
        items[0].gross_income.as_ref().map(|a| a.amount),
        Some(36180.0),
        "GetRegistryIncomes: integer amount"
    );
    assert_eq!(
        items[0].net_income.as_ref().map(|a| a.amount),
        Some(28412.75)
    );
    assert_eq!(
        items[0]
            .total_tax_amount
            .as_ref()
            .and_then(|a| a.currency_code.as_deref()),
        Some("EUR")
    );
    assert_eq!(
        (items[1].source_id.as_ref(), items[1].net_income.as_ref()),
        (None, None),
        "GetRegistryIncomes: nulls"
    );
}

#[tokio::test]
async fn person_and_legal_datasets_decode() {
    let recorder = Recorder::start().await;

    let person = call_json(
        &recorder,
        Expected::get(session_path("/person-details")),
        200,
        fixture("get_person_details"),
        recorder.client.get_person_details().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        person.sources.as_ref().unwrap()[1].status,
        SourceStatus::WaitingForProvider
    );
    assert_eq!(
        person.given_names,
        Some(vec![
            types::StringSourcedValue::builder()
                .value(Some("Jonas".into()))
                .source_ids(Some(vec!["LT-CREDITINFO".into(), "LT-REGITRA".into()]))
                .build()
                .unwrap()
        ]),
        "GetPersonDetails: givenNames"
    );
    assert_eq!(
        person.birth_dates.as_ref().unwrap()[0].value,
        Some(json!("1987-04-12"))
    );
    assert_eq!(
        person.personal_identity_codes.as_ref().unwrap()[0].value,
        Some(json!({ "code": "38704120123", "countryCode": "LTU" }))
    );
    assert_eq!(
        person.telephones.as_ref().unwrap()[0].source_ids,
        None,
        "GetPersonDetails: sourceIds null"
    );
    assert_eq!(
        person.emails.as_ref().unwrap()[0].value,
        None,
        "GetPersonDetails: value null"
    );
    let address = &person.addresses.as_ref().unwrap()[0];
    assert_eq!(address.value.as_ref().unwrap()["city"], "Vilnius");
    assert_eq!(
        address.extra.to_map()["validFrom"],
        "2021-09-01",
        "GetPersonDetails: unknown member of an address kept"
    );
    assert_eq!(person.documents, None);
    assert_eq!(
        person.citizenships.as_ref().unwrap()[0].value.as_deref(),
        Some("LTU")
    );
    assert_eq!(
        person.marital_statuses.as_ref().unwrap()[0].value,
        Some(json!("MARRIED"))
    );
    assert_eq!(
        person.underage_children_counts.as_ref().unwrap()[0].value,
        Some(json!(2))
    );
    assert_eq!(
        person.extra.to_map().get("genders"),
        Some(&json!([ { "value": "MALE", "sourceIds": ["LT-REGITRA"] } ])),
        "GetPersonDetails: unknown dataset member kept in `extra`"
    );

    let entities = call_json(
        &recorder,
        Expected::get(session_path("/legal-entities")),
        200,
        fixture("get_legal_entities"),
        recorder.client.get_legal_entities().session_id(SESSION_ID),
    )
    .await;
    let items = entities.legal_entities.expect("GetLegalEntities: items");
    assert_eq!(items[0].name.as_deref(), Some("Tamm Consulting OÜ"));
    let relations = items[0]
        .relations
        .as_ref()
        .expect("GetLegalEntities: relations");
    assert_eq!(
        relations[0],
        types::LegalEntityRelation::builder()
            .type_(LegalEntityRelationType::Unknown)
            .start_date(Some("2019-05-14".into()))
            .build()
            .unwrap()
    );
    assert_eq!(
        relations[1].type_,
        LegalEntityRelationType::Unrecognized("BOARD_MEMBER".into()),
        "GetLegalEntities: unknown relation kept"
    );
    assert_eq!(relations[1].type_.to_string(), "BOARD_MEMBER");
    // LegalEntity is closed: `registryCode` is dropped, decoding still succeeds.
    assert_eq!(
        (items[1].source_id.as_ref(), items[1].relations.as_ref()),
        (None, None)
    );

    let cases = call_json(
        &recorder,
        Expected::get(session_path("/court-and-insolvencies")),
        200,
        fixture("get_court_and_insolvencies"),
        recorder
            .client
            .get_court_and_insolvencies()
            .session_id(SESSION_ID),
    )
    .await;
    let status = &cases.sources.as_ref().unwrap()[0].status;
    assert_eq!(
        status,
        &SourceStatus::Unrecognized("NEW_STATUS_2027".into()),
        "GetCourtAndInsolvencies: unknown status kept"
    );
    assert_eq!(
        (status.as_str(), status.is_known()),
        ("NEW_STATUS_2027", false)
    );
    let case = &cases
        .court_and_insolvencies
        .expect("GetCourtAndInsolvencies: cases")[0];
    assert_eq!(case.source_id.as_deref(), Some("FI-OIKEUSREKISTERI"));
    assert_eq!(
        case.extra.to_map()["court"],
        "Helsingin käräjäoikeus",
        "GetCourtAndInsolvencies: unknown member kept"
    );
    assert_eq!(case.extra.to_map()["caseNumber"], "R 25/1234");

    let immovables = call_json(
        &recorder,
        Expected::get(session_path("/immovables")),
        200,
        fixture("get_immovables"),
        recorder.client.get_immovables().session_id(SESSION_ID),
    )
    .await;
    let immovable = &immovables.immovables.expect("GetImmovables: items")[0];
    assert_eq!(immovable.source_id.as_deref(), Some("LV-ZEMESGRAMATA"));
    assert_eq!(
        immovable.extra.to_map()["address"],
        "Brīvības iela 12, Rīga",
        "GetImmovables: unknown member kept"
    );
    assert_eq!(immovable.extra.to_map()["area"]["value"], 68.4);

    let verifications = call_json(
        &recorder,
        Expected::get(session_path("/identity-verifications")),
        200,
        fixture("get_identity_verifications"),
        recorder
            .client
            .get_identity_verifications()
            .session_id(SESSION_ID),
    )
    .await;
    let verification = &verifications
        .identity_verifications
        .expect("GetIdentityVerifications: items")[0];
    assert_eq!(verification.id.as_deref(), Some("idv 4821"));
    assert_eq!(
        verification.extra.to_map()["method"],
        "SMART_ID",
        "GetIdentityVerifications: unknown member kept"
    );

    let images = call_json(
        &recorder,
        Expected::get(session_path("/identity-verifications/idv%204821/images")),
        200,
        fixture("get_identity_verification_images"),
        recorder
            .client
            .get_identity_verification_images()
            .session_id(SESSION_ID)
            .verification_id("idv 4821"),
    )
    .await;
    let images = images
        .images
        .expect("GetIdentityVerificationImages: images");
    assert_eq!(
        images.iter().map(|i| i.id.as_deref()).collect::<Vec<_>>(),
        [Some("front/1"), Some("selfie")]
    );
    assert_eq!(
        images[1].extra.to_map()["mimeType"],
        "image/png",
        "GetIdentityVerificationImages: unknown member kept"
    );
}

#[tokio::test]
async fn bank_account_datasets_decode() {
    let recorder = Recorder::start().await;

    let statements = call_json(
        &recorder,
        Expected::get(session_path("/account-statements")),
        200,
        fixture("get_account_statements"),
        recorder
            .client
            .get_account_statements()
            .session_id(SESSION_ID),
    )
    .await;
    let statement = &statements
        .account_statements
        .expect("GetAccountStatements: items")[0];
    assert_eq!(statement.id.as_deref(), Some("stmt-2026-02"));
    assert_eq!(
        statement.extra.to_map()["iban"],
        "SE4550000000058398257466",
        "GetAccountStatements: unknown member kept"
    );
    assert_eq!(
        statement.extra.to_map()["openingBalance"]["amount"],
        15230.5
    );

    let attachments = call_json(
        &recorder,
        Expected::get(session_path("/attachments")),
        200,
        fixture("get_attachments"),
        recorder.client.get_attachments().session_id(SESSION_ID),
    )
    .await;
    let items = attachments.attachments.expect("GetAttachments: items");
    assert_eq!(
        items[0],
        types::Attachment::builder()
            .id("att-1")
            .source_id(Some("LT-CREDITINFO".into()))
            .attachment_type(AttachmentType::OriginalCreditReport)
            .mime_type(Some("application/pdf".into()))
            .file_name(Some("creditinfo-report.pdf".into()))
            .file_size_bytes(184320)
            .added_on_utc("2026-03-05T14:31:02Z")
            .country_code(Some("LTU".into()))
            .build()
            .unwrap(),
        "GetAttachments: first attachment"
    );
    assert_eq!(
        items[1].attachment_type,
        AttachmentType::Unrecognized("PAYSLIP".into()),
        "GetAttachments: unknown type kept"
    );
    assert_eq!(
        (
            items[1].source_id.as_ref(),
            items[1].mime_type.as_ref(),
            items[1].file_name.as_ref()
        ),
        (None, None, None)
    );

    // The categorization summary's real-world SOME_DATA_MISSING is a known value (overlay).
    let summary = call_json(
        &recorder,
        Expected::get(session_path("/categorizations-summary")),
        200,
        fixture("get_categorizations_summary"),
        recorder
            .client
            .get_categorizations_summary()
            .session_id(SESSION_ID),
    )
    .await;
    let summary = summary.summary.expect("GetCategorizationsSummary: summary");
    assert_eq!(
        summary.status,
        CategorizationSummaryStatus::SomeDataMissing,
        "GetCategorizationsSummary: SOME_DATA_MISSING"
    );
    assert!(
        summary.status.is_known(),
        "GetCategorizationsSummary: SOME_DATA_MISSING is a known value"
    );
    assert_eq!(summary.status.as_str(), "SOME_DATA_MISSING");
    assert_eq!(summary.count_of_institutions, Some(2));
    assert_eq!(
        summary.extra.to_map()["averageMonthlyIncome"]["amount"],
        3120.4,
        "GetCategorizationsSummary: figures kept"
    );
    assert_eq!(
        summary.extra.to_map()["incomeByCategory"][0]["category"],
        "SALARY"
    );

    // `summary` is required and nullable: null before the bank data has arrived.
    let pending = call_json(
        &recorder,
        Expected::get(session_path("/categorizations-summary")),
        200,
        json!({ "summary": null }),
        recorder
            .client
            .get_categorizations_summary()
            .session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        pending.summary, None,
        "GetCategorizationsSummary: summary null"
    );

    // Deprecated by the service, which still serves it: the client must still call it right.
    #[allow(deprecated)]
    let categorizations = call_json(
        &recorder,
        Expected::get(session_path("/categorizations")),
        200,
        fixture("get_categorizations"),
        recorder.client.get_categorizations().session_id(SESSION_ID),
    )
    .await;
    assert_eq!(
        categorizations.summary,
        Some(
            types::CategorizationPeriodSummary::builder()
                .period_with_income_months(Some(6))
                .period_with_liabilities_months(Some(4))
                .build()
                .unwrap()
        )
    );
    let categorization = &categorizations
        .categorizations
        .expect("GetCategorizations: items")[0];
    assert_eq!(
        categorization.accounts.as_ref().unwrap()[0],
        types::CategorizedAccount::builder()
            .country_code(Some("EST".into()))
            .bank_name(Some("Swedbank AS".into()))
            .account_number(Some("EE382200221020145685".into()))
            .account_holder_names(Some(vec!["Kadri Tamm".into()]))
            .build()
            .unwrap()
    );
    assert_eq!(categorization.total_period_received_months, Some(6));
    assert_eq!(
        categorization.extra.to_map()["incomes"][0]["category"],
        "SALARY",
        "GetCategorizations: unknown member kept"
    );

    let metrics = call_json(
        &recorder,
        Expected::get(session_path("/metrics")),
        200,
        fixture("get_metrics"),
        recorder.client.get_metrics().session_id(SESSION_ID),
    )
    .await;
    let metrics = metrics.metrics.expect("GetMetrics: items");
    assert_eq!(metrics.len(), 2);
    assert_eq!(
        metrics[0].extra.to_map()["name"],
        "AVERAGE_MONTHLY_INCOME",
        "GetMetrics: unknown member kept"
    );
    assert_eq!(metrics[1].extra.to_map()["value"], "0.013");
}

// ---------------------------------------------------------------------------------------------
// Enums on both sides of the wire, and coverage
// ---------------------------------------------------------------------------------------------

#[test]
fn request_side_enums_accept_only_listed_values() {
    assert!(
        "INCOME_VERIFICATION".parse::<DataPackageInput>().is_err(),
        "DataPackageInput must have no catch-all"
    );
    assert!(
        DataPackageInput::try_from("score").is_err(),
        "values are case-sensitive"
    );
    assert_eq!(
        "SCORE".parse::<DataPackageInput>().unwrap(),
        DataPackageInput::Score
    );
    assert!(serde_json::from_value::<DataPackageInput>(json!("INCOME_VERIFICATION")).is_err());
    assert_eq!(
        serde_json::to_value(DataPackageInput::BankAccountCategorization).unwrap(),
        json!("BANK_ACCOUNT_CATEGORIZATION")
    );
    assert!(
        "ARCHIVED".parse::<CustomerProgressStatusInput>().is_err(),
        "CustomerProgressStatusInput must have no catch-all"
    );
}

#[test]
fn response_side_enums_round_trip_unknown_values_unchanged() {
    let unknown: DataPackage = serde_json::from_value(json!("INCOME_VERIFICATION")).unwrap();
    assert_eq!(
        unknown,
        DataPackage::Unrecognized("INCOME_VERIFICATION".into())
    );
    assert_eq!(
        serde_json::to_value(&unknown).unwrap(),
        json!("INCOME_VERIFICATION")
    );
    let known: DataPackage = serde_json::from_value(json!("SCORE")).unwrap();
    assert_eq!(known, DataPackage::Score);
    assert_eq!(serde_json::to_value(&known).unwrap(), json!("SCORE"));
    // The same through a containing type and through `FromStr`/`Display`.
    let parameter =
        json!({ "countryCode": "NOR", "dataPackages": ["IDENTIFICATION", "OPEN_BANKING_PLUS"] });
    let decoded: types::QueryParameter = serde_json::from_value(parameter.clone()).unwrap();
    assert_eq!(serde_json::to_value(&decoded).unwrap(), parameter);
    let parsed: DataPackage = "OPEN_BANKING_PLUS".parse().unwrap();
    assert_eq!(parsed.to_string(), "OPEN_BANKING_PLUS");
    // A known value is never taken for an unknown one.
    let status: CategorizationSummaryStatus =
        serde_json::from_value(json!("SOME_DATA_MISSING")).unwrap();
    assert_eq!(status, CategorizationSummaryStatus::SomeDataMissing);
}

/// Every operation of the generated client is called in this file by name (`EXERCISED`), or,
/// for a dataset of a session, through the generated dataset list
/// (`every_dataset_is_read_with_a_get_of_its_path`), or, for any other `GET` (an entry of a
/// listing a vendor release adds, say), by its metadata through `Client::operation_stream`
/// (`operations_a_release_adds_are_read_by_their_metadata`): a read the vendor adds is reached
/// with no line here; a new operation that sends a body fails until it is called here.
#[test]
fn every_operation_is_exercised() {
    let generated: BTreeSet<&str> = creditdata_client::operations::ALL
        .iter()
        .map(|op| op.id)
        .collect();
    let exercised: BTreeSet<&str> = EXERCISED.into_iter().collect();
    assert_eq!(
        exercised.len(),
        EXERCISED.len(),
        "EXERCISED lists an operation twice"
    );
    let unknown: Vec<&&str> = exercised.difference(&generated).collect();
    assert!(
        unknown.is_empty(),
        "EXERCISED names operations the client does not have: {unknown:?}"
    );
    let datasets: BTreeSet<&str> = Dataset::ALL.iter().map(|d| d.operation_id()).collect();
    let by_metadata: BTreeSet<&str> = read_by_metadata().iter().map(|op| op.id).collect();
    let unreached: Vec<&&str> = generated
        .iter()
        .filter(|id| {
            !exercised.contains(*id) && !datasets.contains(*id) && !by_metadata.contains(*id)
        })
        .collect();
    assert!(
        unreached.is_empty(),
        "operations called nowhere in this file: {unreached:?}"
    );
}

/// The operations neither `EXERCISED` nor datasets that `Client::operation_stream` can read:
/// the `GET`s with an answer (on today's description, none; a release adds some).
fn read_by_metadata() -> Vec<&'static creditdata_client::operation::OperationMeta> {
    let datasets: BTreeSet<&str> = Dataset::ALL.iter().map(|d| d.operation_id()).collect();
    creditdata_client::operations::ALL
        .iter()
        .filter(|op| !EXERCISED.contains(&op.id) && !datasets.contains(op.id))
        .filter(|op| is_read(op))
        .collect()
}

/// A `GET` with an answer: what `Client::operation_stream` reads.
fn is_read(op: &creditdata_client::operation::OperationMeta) -> bool {
    op.method == "GET" && op.response != creditdata_client::operation::ResponseKind::Empty
}

/// Each `GET` no test here calls by name is read by its metadata: one request, the path filled
/// with the values given, the `api-version` its pin keeps, and the answer's bytes as sent.
#[tokio::test]
async fn operations_a_release_adds_are_read_by_their_metadata() {
    // Every GET, so that the generic read is shown on today's description too; the ones no
    // test calls by name are what a release adds.
    let gets: Vec<_> = creditdata_client::operations::ALL
        .iter()
        .filter(|op| is_read(op))
        .collect();
    assert!(
        read_by_metadata().iter().all(|op| gets.contains(op)),
        "every operation read by metadata is a GET"
    );
    for op in gets {
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(b"{\"k\":1}".to_vec(), "application/json"),
            )
            .expect(1)
            .mount(&server)
            .await;
        let client = crate::support::plain_client(&server.uri());
        let parameters = op.path.matches('{').count();
        let values: Vec<String> = (0..parameters)
            .map(|n| Uuid::from_u128(0x5e55_0000 + n as u128).to_string())
            .collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let download = client
            .operation_stream(op, &refs)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", op.id));
        let mut body = Vec::new();
        download.write_to(&mut body).await.unwrap();
        assert_eq!(body, b"{\"k\":1}", "{}: the bytes as sent", op.id);
        let requests = server.received_requests().await.unwrap();
        let mut expected_path = op.path.to_string();
        for value in &values {
            let start = expected_path.find('{').unwrap();
            let end = start + expected_path[start..].find('}').unwrap();
            expected_path.replace_range(start..=end, value);
        }
        assert_eq!(requests.len(), 1, "{}", op.id);
        assert_eq!(requests[0].method.as_str(), "GET", "{}", op.id);
        assert_eq!(requests[0].url.path(), expected_path, "{}", op.id);
        assert_eq!(
            header(&requests[0], "api-version"),
            Some(pinned_api_version(op.id)),
            "{}",
            op.id
        );
    }
    // Not a GET: refused before anything is sent.
    let post = creditdata_client::operations::ALL
        .iter()
        .find(|op| op.method != "GET")
        .expect("the description has operations that are not reads");
    let client = crate::support::plain_client("http://127.0.0.1:9");
    let refused = client.operation_stream(post, &[]).await.unwrap_err();
    assert!(
        refused.to_string().contains("is not a GET"),
        "{}: {refused}",
        post.id
    );
}

#[tokio::test]
async fn every_dataset_is_read_with_a_get_of_its_path() {
    let recorder = Recorder::start().await;
    let session = Uuid::from_u128(0x5e55_1011);
    for dataset in Dataset::ALL {
        let op = dataset.operation_id();
        recorder
            .answer(ResponseTemplate::new(200).set_body_json(json!({})))
            .await;
        // The body may not decode (`{}` for a list); what the service saw is what counts here.
        let _ = recorder.client.session_dataset(session, dataset).await;
        let request = recorder.only_request(op).await;
        assert_eq!(request.method.as_str(), "GET", "{op}");
        let below = dataset
            .operation()
            .path
            .replace("{sessionId}", &session.to_string());
        assert_eq!(request.url.path(), below, "{op}");
        assert_eq!(
            request.url.query(),
            None,
            "{op}: nothing but the session's id"
        );
    }
}
