//! Whether a session's data has arrived, against the mock in process with a provider delay:
//! `SessionDatasets::readiness`, `Client::wait_for_data`, and one "not found" for a session
//! that does not exist. No assertion depends on how long anything takes: the delays are either
//! far longer than any test (providers still waiting) or shorter than generous timeouts.

use std::time::Duration;

use creditdata_client::Client;
use creditdata_client::readiness::Outcome;
use creditdata_client::session_datasets::Dataset;
use creditdata_client::types::{CustomerProgressStatus, SourceStatus};
use creditdata_client::wait::{DataWait, WaitOptions};
use creditdata_mock::{MockConfig, MockServer};
use serde_json::json;
use uuid::Uuid;

/// The bureau of the mock's United Kingdom: it delivers the scores.
const BUREAU: &str = "GBR_ALBION_CREDIT";

/// Providers that answer `delay` after the customer's consent, and never fail by themselves.
async fn mock(delay: Duration) -> MockServer {
    MockServer::start(MockConfig {
        provider_delay: delay,
        ..MockConfig::immediate()
    })
    .await
    .expect("the mock starts")
}

fn client(mock: &MockServer) -> Client {
    Client::builder()
        .base_url(mock.base_url())
        .client_credentials(mock.token_url(), mock.client_id(), mock.client_secret())
        .build()
        .unwrap()
}

/// A session in the United Kingdom for the score and credit history packages only.
async fn session(client: &Client) -> Uuid {
    let request: creditdata_client::types::CreateSessionRequest = serde_json::from_value(json!({
        "subjectEmail": "jane.doe@example.com",
        "queryParameters": [{ "countryCode": "GBR", "dataPackages": ["SCORE", "CREDIT_HISTORY"] }]
    }))
    .unwrap();
    client
        .create_session()
        .body(request)
        .call()
        .await
        .unwrap()
        .id
}

/// Acts for the customer (`POST`) or forces a provider's status (`PUT` with a body) through
/// the mock's control endpoint.
async fn control(mock: &MockServer, path: &str, body: Option<serde_json::Value>) {
    let url = format!("{}/_mock/sessions/{path}", mock.base_url());
    let http = reqwest::Client::new();
    let mut request = match &body {
        Some(body) => http.put(&url).json(body),
        None => http.post(&url),
    };
    request = request.header(creditdata_mock::CONTROL_HEADER, "1");
    let response = request.send().await.unwrap();
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
}

fn quick(timeout: Duration) -> WaitOptions {
    WaitOptions::default()
        .timeout(timeout)
        .initial_interval(Duration::from_millis(20))
        .max_interval(Duration::from_millis(100))
}

#[tokio::test]
async fn datasets_read_while_providers_wait_are_not_complete() {
    let mock = mock(Duration::from_secs(3600)).await;
    let client = client(&mock);
    let id = session(&client).await;
    control(&mock, &format!("{id}/complete"), None).await;

    let datasets = client.session_datasets(id).await.unwrap();

    // Every read answered: that is not the data.
    assert!(datasets.reads_succeeded(), "{:?}", datasets.failures());
    #[allow(deprecated, reason = "shows what the deprecated name said")]
    let said_before = datasets.all_succeeded();
    assert!(said_before);
    let readiness = datasets.readiness();
    assert!(
        !readiness.is_complete() && !datasets.is_complete(),
        "{readiness}"
    );
    let waiting = readiness
        .pending
        .iter()
        .find(|p| p.dataset == Dataset::Scores)
        .expect("the scores' provider is pending");
    assert_eq!(waiting.source_id.as_deref(), Some(BUREAU));
    assert_eq!(waiting.country_code.as_deref(), Some("GBR"));
    assert_eq!(waiting.status, SourceStatus::WaitingForProvider);
    assert_eq!(waiting.outcome(), Outcome::Pending);
    assert!(readiness.to_string().contains(BUREAU), "{readiness}");
    assert!(
        readiness.answered.is_empty(),
        "nothing answered: {readiness:?}"
    );
    // The packages the session did not request are reported, not pending, not failed.
    assert!(
        readiness
            .not_requested
            .iter()
            .any(|p| p.dataset == Dataset::CategorizationsSummary),
        "{readiness:?}"
    );
    // A package the session did not request (bank data) is a `200`, not a `404`: its
    // provider says `PACKAGE_UPGRADE_REQUIRED` (what the rustdoc says, as the facts sheet).
    assert!(datasets.account_statements.is_ok());
    let bank = readiness
        .not_requested
        .iter()
        .find(|p| p.dataset == Dataset::AccountStatements)
        .expect("the bank provider reports the package as not requested");
    assert_eq!(bank.status, SourceStatus::PackageUpgradeRequired);
    assert_eq!(bank.outcome(), Outcome::NotRequested);
    assert!(bank.source_id.is_some(), "{bank:?}");
    assert!(readiness.not_reported.contains(&Dataset::Attachments));
    let scores = datasets.scores.as_ref().unwrap();
    assert!(scores.scores.as_ref().is_none_or(Vec::is_empty));
}

#[tokio::test]
async fn the_data_waiter_returns_when_every_provider_has_answered() {
    let mock = MockServer::start(MockConfig {
        provider_delay: Duration::from_millis(300),
        // The customer completes by themselves while the waiter polls the session.
        auto_complete_after: Some(Duration::from_millis(100)),
        ..MockConfig::immediate()
    })
    .await
    .unwrap();
    let client = client(&mock);
    let id = session(&client).await;

    let waited = client
        .wait_for_data(id, quick(Duration::from_secs(120)))
        .await
        .unwrap();

    assert!(waited.is_ready(), "{waited:?}");
    assert_eq!(
        waited.session().customer_progress_status,
        CustomerProgressStatus::CompletedByCustomer
    );
    let datasets = waited.into_datasets().unwrap();
    let readiness = datasets.readiness();
    assert!(readiness.is_complete(), "{readiness}");
    assert!(readiness.pending.is_empty());
    assert!(
        readiness
            .answered
            .iter()
            .any(|p| p.dataset == Dataset::Scores && p.source_id.as_deref() == Some(BUREAU))
    );
    // The data is there, as read by the waiter: no second read needed.
    let scores = datasets.scores.as_ref().unwrap();
    assert!(
        scores.scores.as_ref().is_some_and(|s| !s.is_empty()),
        "the bureau's scores arrived"
    );
}

#[tokio::test]
async fn a_failed_provider_is_a_final_answer_with_failures() {
    let mock = mock(Duration::from_millis(200)).await;
    let client = client(&mock);
    let id = session(&client).await;
    control(
        &mock,
        &format!("{id}/sources/{BUREAU}/status"),
        Some(json!({ "status": "ERROR" })),
    )
    .await;
    control(&mock, &format!("{id}/complete"), None).await;

    let waited = client
        .wait_for_data(id, quick(Duration::from_secs(120)))
        .await
        .unwrap();

    let DataWait::ReadyWithFailures { datasets, .. } = &waited else {
        panic!("expected ReadyWithFailures, got {waited:?}");
    };
    let readiness = datasets.readiness();
    assert!(readiness.is_settled() && !readiness.is_complete());
    let failed = readiness
        .failed
        .iter()
        .find(|p| p.dataset == Dataset::Scores)
        .expect("the bureau's error is listed");
    assert_eq!(failed.source_id.as_deref(), Some(BUREAU));
    assert_eq!(failed.status, SourceStatus::Error);
    assert!(waited.to_string().contains(BUREAU), "{waited}");
}

#[tokio::test]
async fn at_the_deadline_the_waiter_names_what_is_still_pending() {
    let mock = mock(Duration::from_secs(3600)).await;
    let client = client(&mock);
    let id = session(&client).await;
    control(&mock, &format!("{id}/complete"), None).await;

    let waited = client
        .wait_for_data(id, quick(Duration::from_millis(50)))
        .await
        .unwrap();

    let DataWait::TimedOut {
        datasets: Some(datasets),
        ..
    } = &waited
    else {
        panic!("expected TimedOut with the last data, got {waited:?}");
    };
    let readiness = datasets.readiness();
    assert!(readiness.pending_datasets().contains(&Dataset::Scores));
    assert!(
        readiness
            .pending
            .iter()
            .any(|p| p.source_id.as_deref() == Some(BUREAU))
    );
    let shown = format!("{waited} {waited:?}");
    assert!(
        shown.contains(BUREAU) && shown.contains("pending"),
        "{shown}"
    );
    assert!(!shown.contains("jane.doe"), "{shown}");
}

#[tokio::test]
async fn a_customer_who_never_completes_ends_the_wait_without_data() {
    let mock = mock(Duration::ZERO).await;
    let client = client(&mock);

    let waiting = session(&client).await;
    let waited = client
        .wait_for_data(waiting, quick(Duration::from_millis(50)))
        .await
        .unwrap();
    assert!(
        matches!(&waited, DataWait::TimedOut { datasets: None, session, .. }
            if session.customer_progress_status == CustomerProgressStatus::WaitingForCustomer),
        "{waited:?}"
    );

    let expired = session(&client).await;
    control(&mock, &format!("{expired}/expire"), None).await;
    let waited = client
        .wait_for_data(expired, quick(Duration::from_secs(120)))
        .await
        .unwrap();
    assert!(
        matches!(&waited, DataWait::CustomerDidNotComplete { session }
            if session.customer_progress_status == CustomerProgressStatus::Expired),
        "{waited:?}"
    );
    assert!(waited.datasets().is_none());
}

#[tokio::test]
async fn a_session_that_does_not_exist_is_one_not_found() {
    let mock = mock(Duration::ZERO).await;
    let client = client(&mock);
    let missing = Uuid::from_u128(0x5eed);

    let error = client.session_datasets(missing).await.unwrap_err();

    assert_eq!(error.status().map(|s| s.as_u16()), Some(404), "{error:?}");
    assert_eq!(error.operation(), Some("GetSession"));

    let error = client
        .wait_for_data(missing, quick(Duration::from_secs(120)))
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(404), "{error:?}");
}

/// The recorded answer of a dataset (`tests/data/get_NAME.json`), or for a dataset a release
/// added, the mock's example of it; every `status` in it `SUCCESS`, so only what a test sets
/// is pending.
fn answered(dataset: Dataset) -> serde_json::Value {
    fn settle(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, member) in map.iter_mut() {
                    if key == "status" && member.is_string() {
                        *member = json!("SUCCESS");
                    } else {
                        settle(member);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(settle),
            _ => {}
        }
    }
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("get_{}.json", dataset.name().replace('-', "_")));
    let mut body: serde_json::Value = match std::fs::read_to_string(&file) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) if dataset == Dataset::SourceFiles => json!([]),
        Err(_) => serde_json::from_str(
            &crate::session_datasets::described_example(dataset.name()).unwrap(),
        )
        .unwrap(),
    };
    settle(&mut body);
    body
}

#[tokio::test]
async fn the_waiter_reads_again_only_what_is_pending_or_failed_transiently() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};

    use crate::support::MockServer as Wiremock;

    let id = Uuid::from_u128(0xda7a);
    let server = Wiremock::start().await;
    let mut session: serde_json::Value = creditdata_mock::as_described(
        "Session",
        serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/session_completed.json"
        )))
        .unwrap(),
    );
    session["id"] = json!(id);
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(session))
        .mount(&server)
        .await;
    let pending = Dataset::PersonDetails;
    let flaky = Dataset::Scores;
    for dataset in Dataset::ALL {
        let at = format!("/v1/sessions/{id}/{}", dataset.name());
        let body = answered(dataset);
        if dataset == flaky {
            // The first read fails with a status that may pass: read again, like a pending one.
            Mock::given(method("GET"))
                .and(path(at.as_str()))
                .respond_with(ResponseTemplate::new(503))
                .up_to_n_times(1)
                .with_priority(1)
                .mount(&server)
                .await;
        }
        if dataset == pending {
            // Twice still waiting for one provider, then answered.
            let mut waiting = body.clone();
            waiting["sources"][0]["status"] = json!("WAITING_FOR_PROVIDER");
            Mock::given(method("GET"))
                .and(path(at.as_str()))
                .respond_with(ResponseTemplate::new(200).set_body_json(waiting))
                .up_to_n_times(2)
                .with_priority(1)
                .mount(&server)
                .await;
        }
        Mock::given(method("GET"))
            .and(path(at.as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .mount(&server)
            .await;
    }
    let client = crate::support::plain_client(&server.uri());

    let waited = client
        .wait_for_data(id, quick(Duration::from_secs(120)))
        .await
        .unwrap();

    assert!(waited.is_ready(), "{waited:?}");
    let requests = server.received_requests().await.unwrap();
    let reads = |dataset: Dataset| {
        let wanted = format!("/v1/sessions/{id}/{}", dataset.name());
        requests.iter().filter(|r| r.url.path() == wanted).count()
    };
    assert_eq!(reads(pending), 3, "read until its provider answered");
    assert_eq!(reads(flaky), 2, "read again after a 503");
    for dataset in Dataset::ALL
        .into_iter()
        .filter(|d| ![pending, flaky].contains(d) && !d.deprecated())
    {
        assert_eq!(reads(dataset), 1, "{dataset:?} was final at the first read");
    }
}

/// The collapse into one "not found" needs the session's own 404: a session that exists and
/// whose every dataset answers 404 keeps each dataset's error.
#[tokio::test]
async fn datasets_that_all_answer_404_of_a_session_that_exists_keep_their_errors() {
    use wiremock::matchers::{method, path, path_regex};
    use wiremock::{Mock, ResponseTemplate};

    use crate::support::MockServer as Wiremock;

    let id = Uuid::from_u128(0x404);
    let server = Wiremock::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/v1/sessions/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(crate::support::session_json(id)))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex(format!("^/v1/sessions/{id}/.+")))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let client = crate::support::plain_client(&server.uri());

    let datasets = client.session_datasets(id).await.unwrap();

    // Read: every dataset but those deprecated outside the default gate; judged (unreadable):
    // those of the default gate; a dataset a release added is read, reported, not judged.
    let read: Vec<Dataset> = Dataset::ALL
        .into_iter()
        .filter(|d| !d.deprecated() || d.gated_by_default())
        .collect();
    assert_eq!(datasets.failures().len(), read.len());
    let readiness = datasets.readiness();
    let gated = read.iter().filter(|d| d.gated_by_default()).count();
    assert_eq!(readiness.unreadable.len(), gated);
    assert_eq!(readiness.outside_gate.len(), read.len() - gated);
    assert!(!readiness.is_complete());
}

/// The registry of the mock's United Kingdom: court cases, companies, property (credit history).
const REGISTRY: &str = "GBR_BRITANNIA_REGISTRY";

/// A decision names the datasets it uses: a provider of any other dataset neither holds its
/// wait nor fails it, while the default gate and every dataset still judge them.
#[tokio::test]
async fn a_named_gate_waits_for_and_judges_only_its_datasets() {
    use creditdata_client::readiness::Gate;

    let mock = mock(Duration::from_millis(100)).await;
    let client = client(&mock);
    let id = session(&client).await;
    // The registry never answers; the bureau (scores, negative tradelines) does.
    control(
        &mock,
        &format!("{id}/sources/{REGISTRY}/status"),
        Some(json!({ "status": "WAITING_FOR_PROVIDER" })),
    )
    .await;
    control(&mock, &format!("{id}/complete"), None).await;

    let uses = [Dataset::Scores, Dataset::NegativeTradelines];
    let waited = client
        .wait_for_datasets(id, uses, quick(Duration::from_secs(120)))
        .await
        .unwrap();
    let DataWait::Ready { datasets, .. } = &waited else {
        panic!("expected Ready on the named datasets, got {waited:?}");
    };
    let readiness = datasets.readiness();
    assert_eq!(readiness.gate(), &Gate::only(uses));
    assert!(readiness.is_complete(), "{readiness}");
    assert!(
        readiness
            .answered
            .iter()
            .all(|status| uses.contains(&status.dataset)),
        "only the gate's statuses are judged: {readiness:?}"
    );
    // The registry's datasets were read and are named, not judged.
    assert!(
        readiness
            .outside_gate
            .contains(&Dataset::CourtAndInsolvencies),
        "{readiness:?}"
    );
    // The same data judged otherwise: the default gate and every dataset wait for the registry.
    assert!(!datasets.is_complete_for(Gate::Default));
    let every = datasets.readiness_of(Gate::Every);
    assert!(
        every
            .pending_datasets()
            .contains(&Dataset::CourtAndInsolvencies),
        "{every}"
    );
    assert!(every.outside_gate.is_empty(), "{every:?}");
    assert!(datasets.is_complete_for([Dataset::Scores]));
    assert!(!datasets.is_complete_for(Dataset::CourtAndInsolvencies));

    // Waiting on the default gate holds until its deadline: the registry is in it.
    let waited = client
        .wait_for_data(id, quick(Duration::from_millis(300)))
        .await
        .unwrap();
    let DataWait::TimedOut {
        datasets: Some(datasets),
        ..
    } = &waited
    else {
        panic!("expected the default gate to wait for the registry, got {waited:?}");
    };
    assert_eq!(datasets.gate(), &Gate::Default);
    assert!(
        datasets
            .readiness()
            .pending
            .iter()
            .any(|p| p.source_id.as_deref() == Some(REGISTRY))
    );
}

/// A failure outside the gate is reported, never a reason to refuse the data a decision uses.
#[tokio::test]
async fn a_failure_outside_the_gate_does_not_fail_it() {
    use creditdata_client::readiness::Gate;

    let mock = mock(Duration::from_millis(100)).await;
    let client = client(&mock);
    let id = session(&client).await;
    control(
        &mock,
        &format!("{id}/sources/{REGISTRY}/status"),
        Some(json!({ "status": "ERROR" })),
    )
    .await;
    control(&mock, &format!("{id}/complete"), None).await;

    let waited = client
        .wait_for_datasets(id, Gate::Every, quick(Duration::from_secs(120)))
        .await
        .unwrap();
    let DataWait::ReadyWithFailures { datasets, .. } = &waited else {
        panic!("every dataset judged: the registry's failure counts, got {waited:?}");
    };
    assert!(
        datasets
            .readiness()
            .failed
            .iter()
            .any(|p| p.source_id.as_deref() == Some(REGISTRY))
    );
    let scores_only = client
        .session_datasets(id)
        .gate([Dataset::Scores])
        .await
        .unwrap();
    let readiness = scores_only.readiness();
    assert!(readiness.is_complete(), "{readiness}");
    assert!(readiness.failed.is_empty(), "{readiness:?}");
    assert_eq!(readiness.to_string(), "complete");
}
