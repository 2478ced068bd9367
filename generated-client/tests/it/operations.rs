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
//! The recorder, the checks and the realistic bodies are here; the tests, one module per part
//! of the API.

mod coverage;
mod datasets;
mod downloads;
mod sessions;

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
