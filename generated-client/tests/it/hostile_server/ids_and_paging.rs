//! The hostile-network tests of items 5 and 6: an id cannot leave its path segment, paging cannot loop or lie.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 5: an id cannot leave its path segment.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_05_a_backslash_id_cannot_reach_another_session() {
    let server = MockServer::start().await;
    let other_session = Uuid::from_u128(2);
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{other_session}/attachments/A2/content"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_raw("someone else's file", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    let error = client
        .get_attachment_content()
        .session_id(session_id())
        .attachment_id(format!("..\\..\\{other_session}\\attachments\\A2"))
        .download()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
    let message = rendered(&error);
    assert!(message.contains("attachment_id"), "{message}");
    assert_eq!(received(&server).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_05_hostile_ids_are_refused_before_sending() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("data", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    for hostile in [
        "", ".", "..", "a/b", "a\\b", "%2e%2e", "a%2Fb", "a\u{0}b", "a\nb", "a\u{7f}b",
    ] {
        let error = client
            .get_attachment_content()
            .session_id(session_id())
            .attachment_id(hostile)
            .download()
            .await
            .unwrap_err();
        assert!(
            matches!(error, Error::InvalidRequest { .. }),
            "{hostile:?}: {error:?}"
        );
        assert!(
            rendered(&error).contains("attachment_id"),
            "{hostile:?}: {error}"
        );
    }
    assert_eq!(received(&server).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_05_an_id_cannot_reach_a_sibling_operation() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "/v1/sessions/{}/account-statements/transactions/excel",
            session_id()
        )))
        .respond_with(ResponseTemplate::new(200).set_body_raw("every transaction", "text/plain"))
        .mount(&server)
        .await;
    let client = builder(&server).bearer_token("t").build().unwrap();
    for id in ["transactions", "Transactions"] {
        let error = client
            .get_account_statement_excel()
            .session_id(session_id())
            .account_statement_id(id)
            .download()
            .await
            .unwrap_err();
        assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
        assert!(rendered(&error).contains("account_statement_id"), "{error}");
    }
    assert_eq!(received(&server).await, Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// Item 6: paging cannot loop or lie.
// ---------------------------------------------------------------------------------------------

/// A loopback server whose `GET /v1/sessions` answers with `responder`, and a client of it
/// with a bearer token and no retries.
async fn session_listing(responder: impl Respond + 'static) -> (MockServer, Client) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/sessions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    let client = builder(&server)
        .bearer_token("t")
        .no_retries()
        .build()
        .unwrap();
    (server, client)
}

fn listed_session(n: u128) -> Value {
    let mut session = session_json(Uuid::from_u128(n));
    session["subjectEmail"] = json!(format!("subject{n}@example.test"));
    session
}

fn skip_of(request: &Request) -> u64 {
    request
        .url
        .query_pairs()
        .find(|(k, _)| k == "Skip")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// The first `limit` items of the session stream.
async fn first_items(
    client: &Client,
    filter: SessionFilter,
    limit: usize,
) -> Vec<Result<Uuid, Error>> {
    client
        .sessions(filter)
        .take(limit)
        .map(|item| item.map(|session| session.id))
        .collect()
        .await
}

fn assert_ends_in_one_error_without_duplicates(items: &[Result<Uuid, Error>]) {
    let (ok, errors): (Vec<_>, Vec<_>) = items.iter().partition(|item| item.is_ok());
    let ids: Vec<Uuid> = ok.iter().map(|item| *item.as_ref().unwrap()).collect();
    let unique: HashSet<&Uuid> = ids.iter().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "a session was yielded twice: {ids:?}"
    );
    assert_eq!(errors.len(), 1, "{items:?}");
    assert!(
        items.last().unwrap().is_err(),
        "the error ends the stream: {items:?}"
    );
    let error = items.last().unwrap().as_ref().unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    assert_eq!(error.operation(), Some("GetSessions"));
}

#[tokio::test]
async fn item_06_a_server_that_ignores_skip_cannot_loop() {
    // Same page every time; once with `paging.skip` echoing 0, once without `skip`.
    for echo_skip in [true, false] {
        let (_server, client) = session_listing(move |_: &Request| {
            let mut paging = json!({"totalCount": 1_000_000, "take": 2});
            if echo_skip {
                paging["skip"] = json!(0);
            }
            ResponseTemplate::new(200).set_body_json(json!({
                "sessions": [listed_session(1), listed_session(2)],
                "paging": paging,
            }))
        })
        .await;
        let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
        assert_ends_in_one_error_without_duplicates(&items);
        assert_eq!(items.len(), 3, "echo_skip={echo_skip}: {items:?}");
    }
}

#[tokio::test]
async fn item_06_a_page_without_paging_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request) as u128;
        let page: Vec<Value> = (skip..4).take(2).map(listed_session).collect();
        ResponseTemplate::new(200).set_body_json(json!({ "sessions": page }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
    assert_ends_in_one_error_without_duplicates(&items);
    let message = rendered(items.last().unwrap().as_ref().unwrap_err());
    assert!(message.contains("paging"), "{message}");
}

#[tokio::test]
async fn item_06_a_total_count_the_pages_do_not_reach_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        let page: Vec<Value> = (skip as u128..3).take(2).map(listed_session).collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": 1_000_000, "skip": skip, "take": 2},
        }))
    })
    .await;
    let error = client
        .all_sessions(SessionFilter::new().page_size(2))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    let message = rendered(&error);
    assert!(
        message.contains("1000000") && message.contains("3"),
        "{message}"
    );
}

#[tokio::test]
async fn item_06_a_page_for_another_skip_is_an_error() {
    let (_server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        // Fresh ids every time, but the page claims to start elsewhere.
        let page: Vec<Value> = (0..2)
            .map(|i| listed_session(skip as u128 * 10 + i + 1))
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": 10, "skip": skip + 5, "take": 2},
        }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2), 10).await;
    assert_eq!(items.len(), 1, "{items:?}");
    assert_ends_in_one_error_without_duplicates(&items);
}

#[tokio::test]
async fn item_06_an_endless_listing_stops_at_the_page_cap() {
    let (server, client) = session_listing(|request: &Request| {
        let skip = skip_of(request);
        let page: Vec<Value> = (0..2)
            .map(|i| listed_session(u128::from(skip) + i + 1))
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({
            "sessions": page,
            "paging": {"totalCount": i32::MAX, "skip": skip, "take": 2},
        }))
    })
    .await;
    let items = first_items(&client, SessionFilter::new().page_size(2).max_pages(3), 100).await;
    assert_eq!(
        items.len(),
        7,
        "three pages of two, then the error: {items:?}"
    );
    assert_ends_in_one_error_without_duplicates(&items);
    assert!(
        rendered(items[6].as_ref().unwrap_err()).contains("3 pages"),
        "{items:?}"
    );
    assert_eq!(count(&server, "GET", "/v1/sessions").await, 3);
}
