//! A person's sign-in against a hostile configuration (issue 21): the token goes only to the
//! service it was issued for, never over plain http off loopback.

use std::sync::Arc;

use creditdata_client::sign_in::MemoryTokenStore;
use creditdata_client::{Client, Error};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::sign_in::{browse, provider_of, signed_in, start_mock, started};
use crate::sign_in_hostile_provider::{CLIENT_ID, now, sign, test_key};

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
    let elsewhere = crate::support::MockServer::start().await;
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

/// A certified provider's habits: its issuer written with a trailing slash (and so in its ID
/// tokens), profile claims only at userinfo, and no refresh token unless asked otherwise.
#[tokio::test]
async fn item_11_a_provider_with_a_slash_userinfo_names_and_no_refresh_token() {
    let key = test_key("kid-1");
    let server = crate::support::MockServer::start().await;
    let issuer = format!("{}/t/", server.uri());
    Mock::given(method("GET"))
        .and(path("/t/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}auth"),
            "token_endpoint": format!("{issuer}token"),
            "jwks_uri": format!("{issuer}certs"),
            "userinfo_endpoint": format!("{issuer}userinfo"),
            "id_token_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/t/certs"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "keys": [key.jwk] })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/t/userinfo"))
        .and(wiremock::matchers::header(
            "authorization",
            "Bearer access-token-value",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "sub": "user-1", "name": "Test Person", "preferred_username": "tp",
        })))
        .mount(&server)
        .await;
    // As written, slash and all.
    let provider =
        creditdata_client::sign_in::IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    let pending = started(&provider).await;
    let url = pending.authorization_url().clone();
    let parameter = |name: &str| crate::sign_in::query_parameter(&url, name).expect("parameter");
    let (state, nonce) = (parameter("state"), parameter("nonce"));
    let id_token = sign(
        &key,
        "kid-1",
        &json!({
            "iss": issuer, "aud": CLIENT_ID, "sub": "user-1", "nonce": nonce,
            "iat": now(), "exp": now() + 300,
        }),
    );
    Mock::given(method("POST"))
        .and(path("/t/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "access-token-value",
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": id_token,
        })))
        .mount(&server)
        .await;
    let redirect = format!("{}?code=the-code&state={state}", pending.redirect_uri());
    let (outcome, _) = tokio::join!(pending.finish(), async {
        reqwest::get(&redirect).await.expect("redirect")
    });
    let signed_in = outcome.expect("the provider's own issuer, slash included, is accepted");
    assert_eq!(signed_in.user().display_name(), "Test Person");
    assert_eq!(signed_in.user().username.as_deref(), Some("tp"));
    assert!(signed_in.refresh_token.is_none());
}

#[tokio::test]
async fn item_10_sign_out_reports_only_what_the_provider_confirmed() {
    use creditdata_client::sign_in::{ProviderSession, StoredSignIn, sign_out};
    use secrecy::SecretString;

    // The mock revokes, and ends its session with a redirect to the post-logout URI.
    let mock = start_mock().await;
    let provider = provider_of(&mock);
    let stored = signed_in(&mock, &provider).await;
    let report = sign_out(&provider, &stored).await.expect("signed out");
    assert!(report.revoked);
    assert_eq!(report.provider_session, ProviderSession::Ended);

    // A provider that answers the end-session request with a confirmation page, and offers no
    // revocation: nothing was confirmed, and the report says so.
    let server = crate::support::MockServer::start().await;
    let issuer = format!("{}/t", server.uri());
    Mock::given(method("GET"))
        .and(path("/t/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/certs"),
            "end_session_endpoint": format!("{issuer}/logout"),
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/t/logout"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/html")
                .set_body_string(
                    "<form><p>Do you want to sign out?</p><button>Yes</button></form>",
                ),
        )
        .mount(&server)
        .await;
    let provider =
        creditdata_client::sign_in::IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    let stored = StoredSignIn {
        issuer: issuer.clone(),
        client_id: CLIENT_ID.into(),
        refresh_token: Some(SecretString::from("refresh".to_string())),
        access_token: None,
        access_token_expires_at: None,
        id_token: Some(SecretString::from("an.id.token".to_string())),
        scopes: vec!["openid".into()],
        user: serde_json::from_value(json!({ "subject": "user-1" })).unwrap(),
        signed_in_at: std::time::SystemTime::now(),
        api_origin: None,
    };
    let report = sign_out(&provider, &stored).await.expect("answered");
    assert!(!report.revoked);
    assert_eq!(report.provider_session, ProviderSession::Unconfirmed);
}
