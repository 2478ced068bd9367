//! The hostile-network tests of items 2–4: what an identity provider sends cannot panic the client, stampede its token requests or pass a transient failure off as final.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 2: no value from the identity provider can panic the client.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn item_02_a_huge_expires_in_cannot_panic_the_client() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"access_token":"forever","token_type":"Bearer","expires_in":18446744073709551615}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    for _ in 0..2 {
        fetch_session(&client).await;
    }
    // Clamped to a sane ceiling, but still a long-lived token: reused.
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);
}

#[tokio::test]
async fn item_02_a_zero_or_missing_expires_in_means_use_once() {
    for body in [
        json!({"access_token": "once", "token_type": "Bearer"}),
        json!({"access_token": "once", "token_type": "Bearer", "expires_in": 0}),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(TOKEN_PATH))
            .respond_with(ResponseTemplate::new(200).set_body_json(body.clone()))
            .mount(&server)
            .await;
        mount_session(&server, session_id()).await;
        let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
        for _ in 0..3 {
            fetch_session(&client).await;
        }
        assert_eq!(count(&server, "POST", TOKEN_PATH).await, 3, "{body}");
    }
}

// ---------------------------------------------------------------------------------------------
// Item 3: short-lived tokens do not stampede.
// ---------------------------------------------------------------------------------------------

async fn concurrent_calls_with_token(expires_in: u64, token_delay: Duration) -> usize {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("short-lived", expires_in).set_delay(token_delay))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    let calls = (0..20).map(|_| {
        let client = client.clone();
        async move { client.get_session().session_id(session_id()).call().await }
    });
    for outcome in futures::future::join_all(calls).await {
        outcome.unwrap();
    }
    count(&server, "POST", TOKEN_PATH).await
}

#[tokio::test]
async fn item_03_a_zero_lifetime_token_is_shared_by_every_waiting_call() {
    assert_eq!(
        concurrent_calls_with_token(0, Duration::from_millis(50)).await,
        1
    );
}

#[tokio::test]
async fn item_03_a_token_outlived_by_its_own_request_is_shared_by_every_waiting_call() {
    // One second of life, but the identity provider takes longer than that to answer: the
    // token is already past its refresh deadline when it arrives.
    assert_eq!(
        concurrent_calls_with_token(1, Duration::from_millis(1100)).await,
        1
    );
}

// ---------------------------------------------------------------------------------------------
// Item 4: a transient identity-provider failure is transient, whatever the body.
// ---------------------------------------------------------------------------------------------

async fn token_failure_then_success(failure: ResponseTemplate) -> (Result<(), Error>, usize) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(failure)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("after-the-outage", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();
    let outcome = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .map(|_| ());
    (outcome, count(&server, "POST", TOKEN_PATH).await)
}

#[tokio::test]
async fn item_04_a_503_with_a_json_body_that_is_no_oauth2_error_is_retried() {
    let (outcome, token_requests) = token_failure_then_success(
        ResponseTemplate::new(503).set_body_json(json!({"message": "down"})),
    )
    .await;
    outcome.unwrap();
    assert_eq!(token_requests, 2);
}

#[tokio::test]
async fn item_04_a_429_or_500_with_an_empty_json_body_is_retried() {
    for status in [429, 500, 502] {
        let (outcome, token_requests) = token_failure_then_success(
            ResponseTemplate::new(status).set_body_raw("", "application/json"),
        )
        .await;
        outcome.unwrap_or_else(|e| panic!("{status}: {e}"));
        assert_eq!(token_requests, 2, "{status}");
    }
}

#[tokio::test]
async fn item_04_the_transient_failure_is_reported_as_such_when_retries_run_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({"message": "down"})))
        .mount(&server)
        .await;
    let client = oauth_client(&server, format!("{}{TOKEN_PATH}", server.uri()));
    let error = session_error(&client).await;
    assert!(error.is_transient(), "{error}");
    assert_eq!(auth_error(error).kind, AuthErrorKind::Unavailable);
}
