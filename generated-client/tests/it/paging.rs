//! Session search paging (`client.sessions`, `client.all_sessions`) against a loopback server.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use creditdata_client::paging::SessionFilter;
use creditdata_client::types::{self, CustomerProgressStatusInput};
use creditdata_client::{Client, Error};
use futures::TryStreamExt;
use serde_json::{Value, json};
use uuid::Uuid;
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

use crate::support::MockServer;

fn client(server: &MockServer) -> Client {
    crate::support::plain_client(&server.uri())
}

fn session(n: u128) -> Value {
    creditdata_mock::as_described(
        "Session",
        json!({
            "id": Uuid::from_u128(n),
            "createdAtUtc": "2026-01-02T03:04:05Z",
            "createdByName": "operator",
            "organizationalUnitName": null,
            "subjectEmail": format!("subject{n}@example.test"),
            "subjectFullName": "",
            "customerInputDeadlineUtc": "2026-01-09T00:00:00Z",
            "customerProgressStatus": "WAITING_FOR_CUSTOMER",
            "queryParameters": [{ "countryCode": "EST", "dataPackages": ["SCORE"] }],
            "customerInputDeadlineExtendableUntilUtc": null,
            "dataPackageUpgradableUntilUtc": null,
        }),
    )
}

fn query(request: &Request) -> BTreeMap<String, String> {
    request
        .url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// A server holding `count` sessions that honours Skip, caps Take at `cap`, and reports
/// `reported_total` (or no `paging` at all when `None`).
fn listing(
    count: usize,
    cap: usize,
    reported_total: Option<i64>,
) -> impl Fn(&Request) -> ResponseTemplate {
    move |request: &Request| {
        let q = query(request);
        let skip: usize = q.get("Skip").and_then(|v| v.parse().ok()).unwrap_or(0);
        let take: usize = q
            .get("Take")
            .and_then(|v| v.parse().ok())
            .unwrap_or(cap)
            .min(cap);
        let page: Vec<Value> = (skip..count)
            .take(take)
            .map(|n| session(n as u128))
            .collect();
        let mut body = json!({ "sessions": page });
        if let Some(total) = reported_total {
            body["paging"] = json!({ "totalCount": total, "skip": skip, "take": take });
        }
        ResponseTemplate::new(200).set_body_json(body)
    }
}

async fn requests(server: &MockServer) -> Vec<BTreeMap<String, String>> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(query)
        .collect()
}

/// A loopback server whose only route, `GET /v1/sessions`, answers with `responder`.
async fn sessions_server(responder: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/sessions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

fn ids(sessions: &[creditdata_client::types::Session]) -> Vec<u128> {
    sessions.iter().map(|s| s.id.as_u128()).collect()
}

#[tokio::test]
async fn pages_carry_every_filter_in_pascal_case_and_stop_at_total_count() {
    let server = sessions_server(listing(5, 1000, Some(5))).await;

    let filter = SessionFilter::new()
        .subject_email("subject@example.test")
        .subject_full_name("Mari Maasikas")
        .country_code("EST")
        .created_from(NaiveDate::from_ymd_opt(2026, 1, 1).unwrap())
        .created_to(NaiveDate::from_ymd_opt(2026, 1, 31).unwrap())
        .status(CustomerProgressStatusInput::WaitingForCustomer)
        .created_by_name("operator")
        .organizational_unit_name("Retail")
        .page_size(2);
    let sessions: Vec<_> = client(&server)
        .sessions(filter)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(ids(&sessions), [0, 1, 2, 3, 4]);

    let received = requests(&server).await;
    assert_eq!(received.len(), 3, "{received:#?}");
    for (request, skip) in received.iter().zip(["0", "2", "4"]) {
        let expected: BTreeMap<String, String> = [
            ("SubjectEmail", "subject@example.test"),
            ("SubjectFullName", "Mari Maasikas"),
            ("CountryCode", "EST"),
            ("CreatedFromUtc", "2026-01-01"),
            ("CreatedToUtc", "2026-01-31"),
            ("CustomerProgressStatus", "WAITING_FOR_CUSTOMER"),
            ("CreatedByName", "operator"),
            ("OrganizationalUnitName", "Retail"),
            ("Skip", skip),
            ("Take", "2"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(request, &expected);
    }
    let first = &server.received_requests().await.unwrap()[0];
    assert_eq!(first.headers.get("authorization").unwrap(), "Bearer t");
}

/// What a caller keeps the search in: a struct field, across awaits, in a spawned task.
struct Search {
    sessions: futures::stream::BoxStream<'static, creditdata_client::Result<types::Session>>,
}

#[tokio::test]
async fn the_session_stream_is_held_and_polled_without_pinning() {
    let server = sessions_server(listing(3, 2, Some(3))).await;
    let mut search = Search {
        sessions: client(&server).sessions(SessionFilter::new()),
    };
    let found = tokio::spawn(async move {
        let mut found = Vec::new();
        while let Some(session) = search.sessions.try_next().await? {
            found.push(session.id.as_u128());
        }
        Ok::<_, Error>(found)
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(found, [0, 1, 2]);

    // The page stream and the statement rows are held the same way.
    fn unpin_send_static<S: futures::Stream + Unpin + Send + 'static>(_: &S) {}
    let client = client(&server);
    unpin_send_static(&client.session_pages(SessionFilter::new()));
    unpin_send_static(&client.account_statement_rows(Uuid::nil(), "statement-1"));
}

#[tokio::test]
async fn an_empty_filter_sends_only_skip_and_take_with_the_default_page_size() {
    let server = sessions_server(listing(3, 1000, Some(3))).await;
    let sessions = client(&server)
        .all_sessions(SessionFilter::new())
        .await
        .unwrap();
    assert_eq!(ids(&sessions), [0, 1, 2]);
    let received = requests(&server).await;
    assert_eq!(
        received.len(),
        1,
        "3 of totalCount 3 arrived in the first page: {received:#?}"
    );
    let expected: BTreeMap<String, String> = [
        ("Skip".to_string(), "0".to_string()),
        ("Take".to_string(), "100".to_string()),
    ]
    .into();
    assert_eq!(received[0], expected);
}

#[tokio::test]
async fn a_total_count_the_pages_never_reach_ends_the_stream_with_an_error() {
    let server = sessions_server(listing(3, 1000, Some(1_000_000))).await;
    let items: Vec<_> =
        futures::StreamExt::collect(client(&server).sessions(SessionFilter::new().page_size(2)))
            .await;
    assert_eq!(items.len(), 4, "three sessions, then the error");
    let error = items[3].as_ref().unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("999997 sessions would be missing"),
        "{error}"
    );
    let skips: Vec<String> = requests(&server)
        .await
        .iter()
        .map(|q| q["Skip"].clone())
        .collect();
    assert_eq!(skips, ["0", "2", "3"]);
}

#[tokio::test]
async fn a_response_without_paging_ends_the_stream_with_an_error() {
    let server = sessions_server(listing(4, 1000, None)).await;
    let error = client(&server)
        .all_sessions(SessionFilter::new().page_size(3))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn a_server_side_cap_on_take_skips_nothing() {
    let server = sessions_server(listing(7, 3, Some(7))).await;
    let sessions = client(&server)
        .all_sessions(SessionFilter::new())
        .await
        .unwrap();
    assert_eq!(ids(&sessions), [0, 1, 2, 3, 4, 5, 6]);
    let received = requests(&server).await;
    let pairs: Vec<(String, String)> = received
        .iter()
        .map(|q| (q["Skip"].clone(), q["Take"].clone()))
        .collect();
    assert_eq!(
        pairs,
        [("0", "100"), ("3", "100"), ("6", "100")].map(|(s, t)| (s.to_string(), t.to_string()))
    );
}

#[tokio::test]
async fn pages_report_skip_and_total_count_and_resume_at_an_offset() {
    let server = sessions_server(listing(5, 1000, Some(5))).await;
    let pages: Vec<_> = client(&server)
        .session_pages(SessionFilter::new().page_size(2).starting_at(1))
        .try_collect()
        .await
        .unwrap();
    let shape: Vec<(u32, Option<u32>, usize)> = pages
        .iter()
        .map(|p| (p.skip, p.total_count, p.sessions.len()))
        .collect();
    assert_eq!(shape, [(1, Some(5), 2), (3, Some(5), 2)]);
}

#[tokio::test]
async fn an_error_page_comes_out_of_the_stream_and_ends_it() {
    let server = sessions_server(|request: &Request| {
        if query(request).get("Skip").map(String::as_str) == Some("0") {
            listing(10, 1000, Some(10))(request)
        } else {
            ResponseTemplate::new(400).set_body_json(json!({
                "title": "One or more validation errors occurred.",
                "status": 400,
                "errors": { "Skip": ["Skip is out of range."] }
            }))
        }
    })
    .await;
    let client = client(&server);
    let stream = client.sessions(SessionFilter::new().page_size(2));
    let items: Vec<_> = futures::StreamExt::collect(stream).await;
    assert_eq!(items.len(), 3, "two sessions, then the error, then nothing");
    assert!(items[0].is_ok() && items[1].is_ok());
    let error = items[2].as_ref().unwrap_err();
    assert!(matches!(error, Error::Api(_)), "{error:?}");
    assert_eq!(error.status().map(|s| s.as_u16()), Some(400));
    assert_eq!(error.operation(), Some("GetSessions"));
    let Error::Api(api) = error else {
        unreachable!("matched above")
    };
    assert!(error.to_string().ends_with("(invalid: Skip)"), "{error}");
    assert!(
        api.with_service_text()
            .to_string()
            .contains("Skip: Skip is out of range."),
        "{error}"
    );

    let error = client
        .all_sessions(SessionFilter::new().page_size(2))
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(400));
}

#[tokio::test]
async fn the_stream_is_send_and_lazy() {
    let server = sessions_server(listing(2, 1000, Some(2))).await;
    let stream = client(&server).sessions(SessionFilter::new());
    assert!(
        requests(&server).await.is_empty(),
        "nothing is sent before the stream is polled"
    );
    // Consumed on another task: the stream is Send + 'static.
    let sessions: Vec<_> = tokio::spawn(async move { stream.try_collect::<Vec<_>>().await })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(&sessions), [0, 1]);
}
