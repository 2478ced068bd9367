//! `Client::session_datasets`: every JSON dataset of a session, concurrently, with bounded
//! concurrency, each with its own result.
//!
//! The server here counts the requests in flight and holds each one until as many as the
//! client may send at once have arrived (or every expected request has): a client that sends
//! fewer at once never gets an answer (the test fails on its time guard), one that sends more
//! is seen doing so. No assertion depends on how long anything takes.

use std::future::IntoFuture;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use creditdata_client::session_datasets::{DEFAULT_CONCURRENCY, Dataset, ProviderStatus};
use creditdata_client::{Client, Error};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::support::session_id;

/// What the server saw.
#[derive(Debug, Default, Clone)]
struct Seen {
    in_flight: usize,
    most_in_flight: usize,
    received: usize,
    paths: Vec<String>,
}

struct HoldingServer {
    url: String,
    seen: Arc<Mutex<Seen>>,
}

/// Serves the datasets, holding each request until `hold_until` are in flight or `expected`
/// have arrived; `failing` (a dataset name) answers 503.
async fn holding_server(
    hold_until: usize,
    expected: usize,
    failing: Option<&'static str>,
) -> HoldingServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (changed, _) = watch::channel(());
    let changed = Arc::new(changed);
    let server_seen = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let seen = server_seen.clone();
            let changed = changed.clone();
            tokio::spawn(answer(stream, seen, changed, hold_until, expected, failing));
        }
    });
    HoldingServer { url, seen }
}

async fn answer(
    mut stream: TcpStream,
    seen: Arc<Mutex<Seen>>,
    changed: Arc<watch::Sender<()>>,
    hold_until: usize,
    expected: usize,
    failing: Option<&'static str>,
) {
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let mut released = changed.subscribe();
    changed.send_modify(|()| {
        let mut seen = seen.lock().unwrap();
        seen.in_flight += 1;
        seen.received += 1;
        seen.most_in_flight = seen.most_in_flight.max(seen.in_flight);
        seen.paths.push(path.clone());
    });
    released
        .wait_for(|()| {
            let seen = seen.lock().unwrap();
            seen.in_flight >= hold_until || seen.received >= expected
        })
        .await
        .unwrap();
    // Held a little longer, so that a client allowed one more request at once has sent it by
    // now and is seen doing so. (This only gives a wrong client time to show itself: a client
    // within its bound passes however long the hold.)
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Counted out before the answer leaves: the client cannot start another request on it
    // before this one stops counting.
    changed.send_modify(|()| seen.lock().unwrap().in_flight -= 1);

    let name = path.rsplit('/').next().unwrap_or_default();
    let (status, body) = if Some(name) == failing {
        ("503 Service Unavailable", String::new())
    } else if name == "source-files" {
        ("200 OK", "[]".to_string())
    } else {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(format!("get_{}.json", name.replace('-', "_")));
        match std::fs::read_to_string(&file) {
            Ok(body) => ("200 OK", body),
            // A dataset the description gained after these fixtures were written: the mock's
            // schema-valid example of its answer, so a vendor release needs no new file here.
            Err(_) => match described_example(name) {
                Some(body) => ("200 OK", body),
                None => ("404 Not Found", String::new()),
            },
        }
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The mock's example answer of the dataset named `name`, from the effective description.
pub fn described_example(name: &str) -> Option<String> {
    let dataset = Dataset::ALL.into_iter().find(|d| d.name() == name)?;
    let description: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec/openapi.effective.json"
    )))
    .ok()?;
    creditdata_mock::example_answer(&description, dataset.operation_id(), 1)
        .map(|body| body.to_string())
}

fn client(server: &HoldingServer) -> Client {
    Client::builder()
        .base_url(&server.url)
        .no_retries()
        .build()
        .unwrap()
}

/// A guard against a client that never reaches the server's hold (it would wait forever).
async fn within_a_minute<T>(future: impl IntoFuture<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .expect("the client never had as many requests in flight as it may")
}

#[tokio::test]
async fn reads_every_dataset_with_at_most_the_given_concurrency() {
    let wanted = Dataset::ALL.iter().filter(|d| !d.deprecated()).count();
    let server = holding_server(4, wanted, None).await;
    let client = client(&server);

    let datasets = within_a_minute(client.session_datasets(session_id()).concurrency(4))
        .await
        .unwrap();

    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.most_in_flight, 4, "four at once, never more: {seen:?}");
    assert_eq!(seen.received, wanted, "one request per dataset");
    assert!(datasets.reads_succeeded(), "{:?}", datasets.failures());
    #[allow(
        deprecated,
        reason = "checks that the deprecated dataset is left unread"
    )]
    let categorizations = &datasets.categorizations;
    assert!(
        categorizations.is_none(),
        "the deprecated dataset is read only when asked for"
    );
    assert!(!seen.paths.iter().any(|p| p.ends_with("/categorizations")));
    let scores = datasets.scores.as_ref().unwrap();
    assert!(scores.scores.as_ref().is_some_and(|s| !s.is_empty()));
    assert_eq!(datasets.session_id, session_id());
}

#[tokio::test]
async fn by_default_a_session_is_one_round_trip() {
    let every = Dataset::ALL.len();
    assert!(DEFAULT_CONCURRENCY >= every);
    let server = holding_server(every, every, None).await;
    let client = client(&server);

    let datasets = within_a_minute(
        client
            .session_datasets(session_id())
            .include_deprecated(true),
    )
    .await
    .unwrap();

    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen.most_in_flight, every,
        "every dataset at once: {seen:?}"
    );
    #[allow(
        deprecated,
        reason = "checks that the deprecated dataset is read when asked for"
    )]
    let categorizations = &datasets.categorizations;
    assert!(matches!(categorizations, Some(Ok(_))));
    let json = datasets.to_json();
    let names: Vec<_> = json.iter().map(|(dataset, _)| dataset.name()).collect();
    let every_name: Vec<_> = Dataset::ALL.iter().map(|dataset| dataset.name()).collect();
    assert_eq!(
        names, every_name,
        "every dataset, in the order of Dataset::ALL"
    );
    assert!(
        json.iter()
            .all(|(_, value)| value.as_ref().is_ok_and(|v| !v.is_null()))
    );
}

#[tokio::test]
async fn one_failed_dataset_does_not_hide_the_others() {
    let wanted = Dataset::ALL.iter().filter(|d| !d.deprecated()).count();
    let server = holding_server(3, wanted, Some("scores")).await;
    let client = client(&server);

    let datasets = within_a_minute(client.session_datasets(session_id()).concurrency(3))
        .await
        .unwrap();

    let failures = datasets.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let (dataset, error) = failures[0];
    assert_eq!(dataset, Dataset::Scores);
    assert!(
        matches!(error, Error::Api(api) if api.status == 503),
        "{error:?}"
    );
    assert!(
        error.to_string().contains(Dataset::Scores.operation_id()),
        "{error}"
    );
    assert!(datasets.person_details.is_ok());
    assert!(datasets.source_files.as_ref().is_ok_and(Vec::is_empty));
    let json = datasets.to_json();
    assert_eq!(json.iter().filter(|(_, value)| value.is_err()).count(), 1);
}

#[test]
fn dataset_names_are_their_paths_below_the_session() {
    for dataset in Dataset::ALL {
        let meta = creditdata_client::operations::ALL
            .iter()
            .find(|meta| meta.id == dataset.operation_id())
            .unwrap_or_else(|| panic!("{dataset:?}: no operation {}", dataset.operation_id()));
        let below = meta
            .path
            .strip_prefix("/v1/sessions/{sessionId}/")
            .unwrap_or_else(|| panic!("{dataset:?}: {} is not below a session", meta.path));
        assert_eq!(below.replace('/', "-"), dataset.name(), "{dataset:?}");
        assert_eq!(meta.method, "GET", "{dataset:?}");
        assert_eq!(meta, dataset.operation(), "{dataset:?}");
        assert_eq!(meta.deprecated, dataset.deprecated(), "{dataset:?}");
    }
}

/// The datasets of a session, found in the effective description the way a reader of the issue
/// would: JSON `GET`s below `/v1/sessions/{sessionId}` that require nothing else.
fn datasets_of_the_description() -> Vec<(String, String, bool)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/openapi.effective.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let resolve = |node: &serde_json::Value| -> serde_json::Value {
        match node.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => doc.pointer(r.trim_start_matches('#')).cloned().unwrap(),
            None => node.clone(),
        }
    };
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(rest) = path.strip_prefix("/v1/sessions/{sessionId}/") else {
            continue;
        };
        let Some(get) = item.get("get") else { continue };
        let parameters: Vec<_> = [item.get("parameters"), get.get("parameters")]
            .into_iter()
            .flatten()
            .flat_map(|list| list.as_array().unwrap().iter().map(&resolve))
            .collect();
        let needs_more = parameters
            .iter()
            .any(|p| p["name"] != "sessionId" && p["required"] == true);
        let json_only = get["responses"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(status, _)| status.starts_with('2'))
            .all(|(_, response)| {
                resolve(response)["content"]
                    .as_object()
                    .is_some_and(|c| !c.is_empty() && c.keys().all(|m| m == "application/json"))
            });
        if rest.contains('{') || needs_more || !json_only {
            continue;
        }
        found.push((
            rest.replace('/', "-"),
            get["operationId"].as_str().unwrap().to_string(),
            get["deprecated"] == true,
        ));
    }
    found
}

#[test]
fn the_datasets_are_those_of_the_effective_description() {
    let listed: Vec<(String, String, bool)> = Dataset::ALL
        .iter()
        .map(|d| {
            (
                d.name().to_string(),
                d.operation_id().to_string(),
                d.deprecated(),
            )
        })
        .collect();
    let described = datasets_of_the_description();
    assert_eq!(listed, described);
    assert!(
        listed.iter().any(|(name, _, _)| name == "person-details"),
        "{listed:?}"
    );
    assert_eq!(DEFAULT_CONCURRENCY, Dataset::ALL.len());
}

/// The provider statuses of the recorded answers (`tests/data/get_*.json`), decoded by the
/// generated code and sorted the way a decision needs them.
#[tokio::test]
async fn readiness_sorts_every_provider_of_every_dataset() {
    let wanted = Dataset::ALL.iter().filter(|d| !d.deprecated()).count();
    let server = holding_server(wanted, wanted, None).await;
    let client = client(&server);

    let datasets = within_a_minute(client.session_datasets(session_id()))
        .await
        .unwrap();
    assert!(datasets.reads_succeeded(), "{:?}", datasets.failures());
    let readiness = datasets.readiness();
    let has = |list: &[ProviderStatus], dataset: Dataset, status: &str| {
        list.iter()
            .any(|p| p.dataset == dataset && p.status.as_str() == status)
    };

    // person-details: one provider answered, one still waiting.
    assert!(has(&readiness.answered, Dataset::PersonDetails, "SUCCESS"));
    assert!(has(
        &readiness.pending,
        Dataset::PersonDetails,
        "WAITING_FOR_PROVIDER"
    ));
    assert!(
        readiness
            .pending_datasets()
            .contains(&Dataset::PersonDetails)
    );
    // A status no release of the description lists: failed, never answered.
    assert!(has(
        &readiness.failed,
        Dataset::CourtAndInsolvencies,
        "NEW_STATUS_2027"
    ));
    assert!(has(
        &readiness.failed,
        Dataset::RegistryIncomes,
        "ID_TAX_ONLY"
    ));
    // The categorizations summary's dataset-level status, without provider or country.
    let summary = readiness
        .failed
        .iter()
        .find(|p| p.dataset == Dataset::CategorizationsSummary)
        .expect("the summary's SOME_DATA_MISSING is a failure");
    assert_eq!(summary.status.as_str(), "SOME_DATA_MISSING");
    assert_eq!((&summary.source_id, &summary.country_code), (&None, &None));
    assert!(has(
        &readiness.not_requested,
        Dataset::NegativeTradelines,
        "PACKAGE_UPGRADE_REQUIRED"
    ));
    for silent in [Dataset::Attachments, Dataset::SourceFiles] {
        assert!(!silent.reports_readiness(), "{silent:?}");
        assert!(readiness.not_reported.contains(&silent), "{silent:?}");
    }
    assert!(Dataset::Scores.reports_readiness());
    assert!(readiness.unreadable.is_empty());
    assert!(!readiness.is_complete() && !readiness.is_settled());
    assert!(!datasets.is_complete());
    let scores = readiness
        .answered
        .iter()
        .find(|p| p.dataset == Dataset::Scores)
        .unwrap();
    assert!(
        scores.source_id.is_some() && scores.country_code.is_some(),
        "{scores:?}"
    );

    // Debug shows the readiness and the reads, never the data.
    let debug = format!("{datasets:?} {readiness:?}");
    let person: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/get_person_details.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let family_name = person["familyNames"][0]["value"].as_str().unwrap();
    assert!(!debug.contains(family_name), "{debug}");
    assert!(debug.contains("WaitingForProvider") && debug.contains("person-details"));
}
