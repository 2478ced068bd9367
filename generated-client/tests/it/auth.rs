//! Authentication against loopback identity providers: token caching and single flight,
//! refresh before expiry and after a 401, typed token-endpoint errors, OIDC discovery, the two
//! client authentication styles, static tokens.

use std::time::Duration;

use crate::support::*;
use creditdata_client::Error;
use creditdata_client::auth::{AuthErrorKind, Credentials, TokenEndpoint};
use secrecy::ExposeSecret as _;
use wiremock::matchers::{body_string_contains, header, method, path};
use wiremock::{Mock, ResponseTemplate};

/// A token endpoint handing out `shared-token` slowly, so that every caller arrives while the
/// one token request is in flight.
async fn slow_token_endpoint() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("shared-token", 300).set_delay(Duration::from_millis(300)))
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_client_with_1000_concurrent_calls_makes_one_token_request() {
    let server = slow_token_endpoint().await;
    Mock::given(method("GET"))
        .and(header("authorization", "Bearer shared-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    let client = oauth_builder(&server).build().unwrap();

    let calls: Vec<_> = (0..1000)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .get_session()
                    .session_id(session_id())
                    .call()
                    .await
                    .map(|s| s.id)
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), session_id());
    }

    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);
    assert_eq!(
        count(&server, "GET", &session_path(session_id())).await,
        1000
    );
}

#[tokio::test]
async fn a_token_is_reused_while_fresh_and_replaced_once_stale() {
    let server = MockServer::start().await;
    // One second of life: stale after 800 ms (a fifth of its lifetime before expiry; the unit
    // tests of `auth` check the margin itself with a paused clock).
    mount_token_endpoint_answering(
        &server,
        token_response("short-lived", 1),
        token_response("long-lived", 300),
    )
    .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();
    let get = || client.get_session().session_id(session_id()).call();

    get().await.unwrap();
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);

    // Sleeping past the token's whole life makes it certainly stale, without measuring time.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..3 {
        get().await.unwrap();
    }
    assert_eq!(
        count(&server, "POST", TOKEN_PATH).await,
        2,
        "one new token for the stale one"
    );
    assert_eq!(
        authorizations(&server).await,
        [
            "Bearer short-lived",
            "Bearer long-lived",
            "Bearer long-lived",
            "Bearer long-lived"
        ]
    );
}

#[tokio::test]
async fn a_401_refreshes_the_token_once_and_retries_once() {
    let server = MockServer::start().await;
    mount_token_endpoint_answering(
        &server,
        token_response("revoked", 300),
        token_response("renewed", 300),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .and(header("authorization", "Bearer revoked"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .and(header("authorization", "Bearer renewed"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    // Retries disabled: the 401 refresh is not a retry of the policy.
    let client = oauth_builder(&server).no_retries().build().unwrap();

    // Even a POST: the service refused it, so it had no effect.
    let session = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap();
    assert_eq!(session.id, session_id());
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 2);
    assert_eq!(count(&server, "POST", "/v1/sessions").await, 2);
    assert_eq!(
        authorizations(&server).await,
        ["Bearer revoked", "Bearer renewed"]
    );
    // The request sent again is built again from the call's body: the same bytes.
    let bodies: Vec<Vec<u8>> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|request| request.url.path() == "/v1/sessions")
        .map(|request| request.body)
        .collect();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1]);
    assert!(!bodies[0].is_empty());
}

/// Makes `server` answer every GET with 401, then reads the session through a client with
/// client credentials; the error.
async fn session_read_refused_with_401(server: &MockServer) -> Error {
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401))
        .mount(server)
        .await;
    session_error(&oauth_builder(server).build().unwrap()).await
}

#[tokio::test]
async fn a_second_401_is_returned_as_an_api_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("never-accepted", 300))
        .mount(&server)
        .await;
    let error = session_read_refused_with_401(&server).await;
    let Error::Api(api) = &error else {
        panic!("expected an API error, got {error:?}")
    };
    assert_eq!(api.status.as_u16(), 401);
    assert_eq!(api.operation, Some("GetSession"));
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 2, "one refresh");
    assert_eq!(
        count(&server, "GET", &session_path(session_id())).await,
        2,
        "one retry"
    );
    assert!(error.to_string().contains("401"), "{error}");
}

#[tokio::test]
async fn a_refresh_refused_by_the_identity_provider_is_an_auth_error() {
    let server = MockServer::start().await;
    mount_token_endpoint_answering(
        &server,
        token_response("revoked", 300),
        token_error(401, "invalid_client", "Client secret rotated"),
    )
    .await;
    let error = session_read_refused_with_401(&server).await;
    let Error::Auth { operation, source } = &error else {
        panic!("expected an auth error, got {error:?}")
    };
    assert_eq!(*operation, Some("GetSession"));
    assert_eq!(source.kind, AuthErrorKind::InvalidClient);
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 1);
}

#[tokio::test]
async fn invalid_client_at_the_token_endpoint_is_a_typed_auth_error_shared_by_waiting_calls() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(
            token_error(
                401,
                "invalid_client",
                "Invalid client or Invalid client credentials",
            )
            .set_delay(Duration::from_millis(200)),
        )
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();

    let calls: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.get_session().session_id(session_id()).call().await })
        })
        .collect();
    for call in calls {
        let error = call.await.unwrap().unwrap_err();
        let Error::Auth { source, .. } = &error else {
            panic!("expected an auth error, got {error:?}")
        };
        assert_eq!(source.kind, AuthErrorKind::InvalidClient);
        assert_eq!(
            source.description.as_deref(),
            Some("Invalid client or Invalid client credentials")
        );
        assert!(!error.is_transient());
        assert_eq!(
            error.to_string(),
            "GetSession: could not obtain an access token"
        );
        assert_eq!(
            rendered(&error),
            "GetSession: could not obtain an access token: the identity provider rejected the \
             client id or secret (invalid_client); check the client credentials: Invalid client \
             or Invalid client credentials"
        );
    }
    assert_eq!(
        count(&server, "POST", TOKEN_PATH).await,
        1,
        "waiting calls share the failure"
    );
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 0);
}

#[tokio::test]
async fn other_token_endpoint_failures_are_classified() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/scope"))
        .respond_with(token_error(
            400,
            "invalid_scope",
            "Invalid scopes: payments",
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/html"))
        .respond_with(
            ResponseTemplate::new(404).set_body_raw("<html>Not Found</html>", "text/html"),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/garbled"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            r#"{"access_token":"leaky-token","expires_in":"soon"}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    let kind_for = |token_path: &'static str| {
        let server_uri = server.uri();
        async move {
            let client = creditdata_client::Client::builder()
                .base_url(&server_uri)
                .no_retries()
                .client_credentials(format!("{server_uri}{token_path}"), "id", "secret")
                .build()
                .unwrap();
            match client.get_consumer_packages().call().await {
                Err(Error::Auth { source, .. }) => source,
                other => panic!("expected an auth error, got {other:?}"),
            }
        }
    };
    assert_eq!(kind_for("/scope").await.kind, AuthErrorKind::InvalidScope);
    let html = kind_for("/html").await;
    assert_eq!(html.kind, AuthErrorKind::InvalidResponse);
    assert!(html.to_string().contains("404"), "{html}");
    let garbled = kind_for("/garbled").await;
    assert_eq!(garbled.kind, AuthErrorKind::InvalidResponse);
    assert!(!garbled.to_string().contains("leaky-token"), "{garbled}");
}

#[tokio::test]
async fn an_unavailable_token_endpoint_is_retried_even_for_a_post() {
    let server = MockServer::start().await;
    mount_token_endpoint_answering(
        &server,
        ResponseTemplate::new(503),
        token_response("late", 300),
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(ResponseTemplate::new(201).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    let client = oauth_builder(&server).build().unwrap();

    // The request was never sent while no token could be had: repeating it is safe.
    client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap();
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 2);
    assert_eq!(count(&server, "POST", "/v1/sessions").await, 1);
}

#[tokio::test]
async fn the_token_endpoint_is_found_through_openid_connect_discovery() {
    let server = MockServer::start().await;
    let issuer = format!("{}/realms/consumer", server.uri());
    Mock::given(method("GET"))
        .and(path("/realms/consumer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "issuer": issuer,
            "token_endpoint": format!("{}{TOKEN_PATH}", server.uri()),
            "grant_types_supported": ["client_credentials"],
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("discovered", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = builder(&server)
        .credentials(Credentials::client_credentials(
            TokenEndpoint::Issuer(format!("{issuer}/")),
            "id",
            "secret",
        ))
        .build()
        .unwrap();

    for _ in 0..2 {
        crate::support::session(&client).await;
    }
    assert_eq!(
        count(
            &server,
            "GET",
            "/realms/consumer/.well-known/openid-configuration"
        )
        .await,
        1
    );
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);
    assert_eq!(authorizations(&server).await, ["Bearer discovered"; 2]);
}

#[tokio::test]
async fn a_discovery_document_without_token_endpoint_is_a_discovery_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/issuer/.well-known/openid-configuration"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"issuer": format!("{}/issuer", server.uri())})),
        )
        .mount(&server)
        .await;
    let client = builder(&server)
        .credentials(Credentials::client_credentials(
            TokenEndpoint::Issuer(format!("{}/issuer", server.uri())),
            "id",
            "secret",
        ))
        .build()
        .unwrap();
    let error = client.get_consumer_packages().call().await.unwrap_err();
    let Error::Auth { source, .. } = &error else {
        panic!("expected an auth error, got {error:?}")
    };
    assert_eq!(source.kind, AuthErrorKind::Discovery);
    assert!(rendered(&error).contains("no token_endpoint"), "{error}");
}

#[tokio::test]
async fn client_credentials_go_in_the_form_body_by_default() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .and(header("content-type", "application/x-www-form-urlencoded"))
        .and(body_string_contains("grant_type=client_credentials"))
        .and(body_string_contains("client_id=creditdata-client-test"))
        .and(body_string_contains("client_secret=client-secret-value"))
        .respond_with(token_response("form", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server).build().unwrap();
    crate::support::session(&client).await;
    let token_request = token_requests(&server).await.remove(0);
    assert!(!token_request.headers.contains_key("authorization"));
}

#[tokio::test]
async fn client_credentials_can_use_http_basic_authentication() {
    let server = MockServer::start().await;
    // base64("creditdata-client-test:client-secret-value")
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .and(header(
            "authorization",
            "Basic Y3JlZGl0ZGF0YS1jbGllbnQtdGVzdDpjbGllbnQtc2VjcmV0LXZhbHVl",
        ))
        .and(body_string_contains("grant_type=client_credentials"))
        .respond_with(token_response("basic", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    // Set before the credentials: applied when the client is built.
    let client = builder(&server)
        .basic_client_auth()
        .client_credentials(
            format!("{}{TOKEN_PATH}", server.uri()),
            "creditdata-client-test",
            "client-secret-value",
        )
        .build()
        .unwrap();
    crate::support::session(&client).await;
    let body = String::from_utf8(token_requests(&server).await.remove(0).body).unwrap();
    assert!(!body.contains("client_secret"), "{body}");
    assert_eq!(authorizations(&server).await, ["Bearer basic"]);
}

#[tokio::test]
async fn basic_authentication_form_encodes_the_id_and_secret_first() {
    use base64::Engine as _;
    let server = MockServer::start().await;
    // RFC 6749 §2.3.1: each is application/x-www-form-urlencoded, then joined by `:`.
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("client+id%2B1:s%3Ae%2Fc+r%3Dt%C3%A4")
    );
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .and(header("authorization", expected.as_str()))
        .respond_with(token_response("basic", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = builder(&server)
        .basic_client_auth()
        .client_credentials(
            format!("{}{TOKEN_PATH}", server.uri()),
            "client id+1",
            "s:e/c r=tä",
        )
        .build()
        .unwrap();
    crate::support::session(&client).await;
}

#[tokio::test]
async fn scopes_are_requested_space_separated() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .and(body_string_contains("scope=openid+payments"))
        .respond_with(token_response("scoped", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = oauth_builder(&server)
        .scopes(["openid", "payments"])
        .build()
        .unwrap();
    crate::support::session(&client).await;
    assert_eq!(authorizations(&server).await, ["Bearer scoped"]);
}

#[tokio::test]
async fn a_token_of_another_type_than_bearer_is_not_used() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "access_token": "mac-token",
            "token_type": "mac",
            "expires_in": 300
        })))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let error = oauth_builder(&server)
        .build()
        .unwrap()
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    let Error::Auth { source, .. } = &error else {
        panic!("expected an auth error, got {error:?}")
    };
    assert_eq!(source.kind, AuthErrorKind::InvalidResponse);
    assert!(
        rendered(&error).contains("not Bearer"),
        "{}",
        rendered(&error)
    );
    assert!(
        !rendered(&error).contains("mac-token"),
        "{}",
        rendered(&error)
    );
    assert!(
        authorizations(&server).await.is_empty(),
        "the token was used"
    );
}

#[tokio::test]
async fn a_static_token_is_sent_as_is_and_a_401_is_returned_without_refresh() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(header("authorization", "Bearer static-token"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let client = builder(&server)
        .bearer_token("static-token")
        .build()
        .unwrap();
    let error = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(401));
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 1);
}

async fn token_requests(server: &MockServer) -> Vec<wiremock::Request> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path() == TOKEN_PATH)
        .collect()
}

/// The `Authorization` headers of the API requests, in order.
async fn authorizations(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.url.path().starts_with("/v1/"))
        .filter_map(|r| r.headers.get("authorization"))
        .map(|v| v.to_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_token_fetches_one_client_credentials_token_for_many_callers_and_calls_nothing_else()
{
    let server = slow_token_endpoint().await;
    let client = oauth_builder(&server).build().unwrap();
    let callers: Vec<_> = (0..50)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.access_token().await })
        })
        .collect();
    for caller in callers {
        let token = caller.await.unwrap().expect("a token");
        assert_eq!(token.expose_secret(), "shared-token");
    }
    // Fresh: the cache answers.
    assert_eq!(
        client.access_token().await.unwrap().expose_secret(),
        "shared-token"
    );
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 1);
    assert_eq!(requests.len(), 1, "nothing but the token request was made");
}

#[tokio::test]
async fn access_token_is_the_static_token_or_the_token_endpoint_s_typed_refusal() {
    let server = MockServer::start().await;
    let token = builder(&server)
        .bearer_token("  static-token\n")
        .build()
        .unwrap()
        .access_token()
        .await
        .unwrap();
    assert_eq!(token.expose_secret(), "static-token");
    assert!(!format!("{token:?}").contains("static-token"));

    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_error(401, "invalid_client", "bad secret"))
        .mount(&server)
        .await;
    let error = oauth_builder(&server)
        .build()
        .unwrap()
        .access_token()
        .await
        .unwrap_err();
    match &error {
        Error::Auth { source, .. } => assert_eq!(source.kind, AuthErrorKind::InvalidClient),
        other => panic!("expected an auth error, got {other:?}"),
    }
    assert!(!rendered(&error).contains("client-secret-value"));

    let error = builder(&server)
        .build()
        .unwrap()
        .access_token()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Config(message) if message.contains("no credentials")),
        "{error:?}"
    );
    assert!(
        server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .all(|r| r.url.path() == TOKEN_PATH),
        "no request went to the service"
    );
}
