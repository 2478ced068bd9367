//! The hostile-network tests of item 1: no redirect ever carries a credential.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 1: no redirect ever carries a credential.
// ---------------------------------------------------------------------------------------------

/// A second listener that would happily take the secret and answer with a token.
async fn credential_sink() -> MockServer {
    let sink = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(token_response("token-from-elsewhere", 300))
        .mount(&sink)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": sink.uri(),
            "token_endpoint": format!("{}/token", sink.uri()),
        })))
        .mount(&sink)
        .await;
    sink
}

#[tokio::test]
async fn item_01_token_request_never_follows_a_redirect() {
    let sink = credential_sink().await;
    let server = MockServer::start().await;
    for status in [307, 308] {
        let from = format!("/token-{status}");
        Mock::given(method("POST"))
            .and(path(from.as_str()))
            .respond_with(
                ResponseTemplate::new(status)
                    .insert_header("location", format!("{}/token?via={status}", sink.uri())),
            )
            .mount(&server)
            .await;
    }
    mount_session(&server, session_id()).await;

    for status in [307, 308] {
        let client = oauth_client(&server, format!("{}/token-{status}", server.uri()));
        let error = session_error(&client).await;
        let message = rendered(&error);
        let auth = auth_error(error);
        assert_eq!(auth.kind, AuthErrorKind::Redirect, "{auth}");
        // The Location is named (without its query), so the operator can see where it pointed.
        assert!(
            message.contains(&format!("{}/token", sink.uri())) && !message.contains("via="),
            "{message}"
        );
        assert!(!message.contains(CLIENT_SECRET), "{message}");
    }
    assert_eq!(
        received(&sink).await,
        Vec::<String>::new(),
        "the secret left"
    );
    assert_eq!(count(&server, "GET", &session_path(session_id())).await, 0);
}

#[tokio::test]
async fn item_01_discovery_never_follows_a_redirect() {
    let sink = credential_sink().await;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/issuer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("{}/.well-known/openid-configuration", sink.uri()),
        ))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = issuer_builder(&server, format!("{}/issuer", server.uri()))
        .build()
        .unwrap();
    let error = session_error(&client).await;
    let auth = auth_error(error);
    assert_eq!(auth.kind, AuthErrorKind::Redirect, "{auth}");
    assert!(rendered(&auth).contains(&sink.uri()), "{auth}");
    assert_eq!(received(&sink).await, Vec::<String>::new());
}

#[tokio::test]
async fn item_01_discovery_refuses_a_document_of_another_issuer() {
    let server = MockServer::start().await;
    let issuer = format!("{}/realms/consumer", server.uri());
    Mock::given(method("GET"))
        .and(path("/realms/consumer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": "https://login.attacker.example/realms/consumer",
            "token_endpoint": format!("{}{TOKEN_PATH}", server.uri()),
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_response("should-not-be-asked", 300))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let client = issuer_builder(&server, issuer.clone()).build().unwrap();
    let auth = auth_error(session_error(&client).await);
    assert_eq!(auth.kind, AuthErrorKind::Discovery, "{auth}");
    let message = rendered(&auth);
    assert!(
        message.contains("issuer") && message.contains("login.attacker.example"),
        "{message}"
    );
    assert_eq!(count(&server, "POST", TOKEN_PATH).await, 0);
}

#[tokio::test]
async fn item_01_discovery_refuses_a_token_endpoint_over_plain_http() {
    // The issuer's discovery document points to a plain-http token endpoint on a host that is
    // not loopback. The host name resolves to a loopback listener in this test, so nothing
    // could leave the machine even if the client sent the request.
    let sink = credential_sink().await;
    let sink_addr: SocketAddr = sink.address().to_owned();
    let server = MockServer::start().await;
    let issuer = format!("{}/realms/consumer", server.uri());
    Mock::given(method("GET"))
        .and(path("/realms/consumer/.well-known/openid-configuration"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "token_endpoint": format!("http://idp.example.test:{}/token", sink_addr.port()),
        })))
        .mount(&server)
        .await;
    mount_session(&server, session_id()).await;
    let resolve = move |b: reqwest::ClientBuilder| b.resolve("idp.example.test", sink_addr);
    let client = issuer_builder(&server, issuer)
        .http_client(
            reqwest::Client::builder()
                .resolve("idp.example.test", sink_addr)
                .build()
                .unwrap(),
        )
        .identity_provider_http(resolve)
        .build()
        .unwrap();
    let auth = auth_error(session_error(&client).await);
    assert_eq!(auth.kind, AuthErrorKind::Discovery, "{auth}");
    assert!(rendered(&auth).contains("https"), "{auth}");
    assert_eq!(
        received(&sink).await,
        Vec::<String>::new(),
        "the secret left"
    );
}

#[tokio::test]
async fn item_01_api_calls_follow_only_same_origin_redirects() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    // Same origin: followed, with the token.
    Mock::given(method("GET"))
        .and(path(session_path(session_id())))
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", "/moved/session?SubjectEmail=x"),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/moved/session"))
        .and(header("authorization", "Bearer api-token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(session_json(session_id())))
        .mount(&server)
        .await;
    // Another origin: not followed.
    let other = Uuid::from_u128(7);
    Mock::given(method("GET"))
        .and(path(session_path(other)))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!(
                "{}/v1/sessions/{other}?SubjectEmail=jane.doe@example.com",
                elsewhere.uri()
            ),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/sessions"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/v1/sessions", elsewhere.uri())),
        )
        .mount(&server)
        .await;
    let client = builder(&server)
        .bearer_token("api-token")
        .no_retries()
        .build()
        .unwrap();

    fetch_session(&client).await;

    let error = client
        .get_session()
        .session_id(other)
        .call()
        .await
        .unwrap_err();
    let Error::Redirect {
        status, location, ..
    } = &error
    else {
        panic!("expected a refused redirect, got {error:?}")
    };
    assert_eq!(status.as_u16(), 302);
    assert_eq!(
        location,
        &format!("{}/v1/sessions/{other}", elsewhere.uri())
    );
    assert!(!rendered(&error).contains("jane.doe"), "{error}");

    // A create-session body (a consumer's e-mail) is not re-sent elsewhere either.
    let error = client
        .create_session()
        .body(create_request())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Redirect { .. }), "{error:?}");
    assert_eq!(received(&elsewhere).await, Vec::<String>::new());
}
