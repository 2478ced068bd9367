//! A person's sign-in against a hostile configuration (issue 21): the token goes only to the
//! service it was issued for, never over plain http off loopback.

use std::sync::Arc;

use creditdata_client::sign_in::MemoryTokenStore;
use creditdata_client::{Client, Error};

use crate::sign_in::{browse, provider_of, signed_in, start_mock, started};

#[tokio::test]
async fn item_2_a_token_goes_only_to_the_origin_recorded_at_sign_in() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let mut stored = signed_in(&mock, &provider).await;
    let origin = reqwest::Url::parse(mock.base_url())
        .unwrap()
        .origin()
        .ascii_serialization();
    stored.api_origin = Some(origin);
    let store = Arc::new(MemoryTokenStore::with(stored));

    // Another host named by a changed setting gets nothing, not even a request.
    let elsewhere = wiremock::MockServer::start().await;
    let client = Client::builder()
        .base_url(elsewhere.uri())
        .signed_in(store.clone(), provider.clone())
        .build()
        .expect("a client");
    let refused = client.get_sessions().call().await.expect_err("refused");
    assert!(
        refused.to_string().contains("sign in again")
            || format!("{refused:?}").contains("SignInRequired"),
        "{refused}"
    );
    assert!(
        elsewhere
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty(),
        "a request reached the other host"
    );
    assert!(
        client.access_token().await.is_err(),
        "nor handed out for it"
    );

    // The service it was issued for gets it.
    let client = Client::builder()
        .base_url(mock.base_url())
        .signed_in(store, provider)
        .build()
        .expect("a client");
    client
        .get_sessions()
        .call()
        .await
        .expect("the service answers");
}

#[tokio::test]
async fn item_2_plain_http_off_loopback_is_refused_whenever_credentials_are_attached() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    for build in [
        Client::builder()
            .base_url("http://api.example.test")
            .signed_in(Arc::new(MemoryTokenStore::default()), provider.clone())
            .build(),
        Client::builder()
            .base_url("http://api.example.test")
            .bearer_token("a-token")
            .build(),
    ] {
        match build {
            Err(Error::Config(message)) => {
                assert!(message.contains("plain http"), "{message}")
            }
            other => panic!("expected a Config error, got {:?}", other.map(|_| ())),
        }
    }
    // Without credentials there is nothing to protect.
    Client::builder()
        .base_url("http://api.example.test")
        .build()
        .expect("no credentials, no refusal");
}

#[tokio::test]
async fn item_5_a_crowd_of_idle_local_connections_cannot_lose_the_browsers_redirect() {
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let pending = started(&provider).await;
    let url = pending.authorization_url().to_string();
    let port = reqwest::Url::parse(pending.redirect_uri())
        .unwrap()
        .port()
        .unwrap();
    // A hostile local page (or process) fills every slot with connections that never speak,
    // and keeps more waiting behind them.
    let mut idle = Vec::new();
    for _ in 0..48 {
        idle.push(
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("the kernel accepts into the backlog"),
        );
    }
    let (signed_in, (status, page)) = tokio::join!(pending.finish(), browse(&mock, url, "approve"));
    assert_eq!(status, reqwest::StatusCode::OK, "{page}");
    signed_in.expect("signed in despite the crowd");
    drop(idle);
}
