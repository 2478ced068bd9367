//! The identity provider: discovery, JWKS, the client-credentials grant and its RFC 6749 errors,
//! and the bearer check of the API (missing, malformed, badly signed, expired, wrong audience).

use crate::common;

use base64::Engine as _;
use common::Harness;
use creditdata_mock::TokenOptions;
use serde_json::Value;

#[tokio::test]
async fn discovery_and_jwks_describe_the_issuer() {
    let harness = Harness::start().await;
    let issuer = harness.mock.issuer().to_owned();
    assert!(issuer.ends_with("/realms/consumer"));
    let discovery: Value = harness
        .anonymous
        .get(format!("{issuer}/.well-known/openid-configuration"))
        .send()
        .await
        .expect("discovery")
        .json()
        .await
        .expect("json");
    assert_eq!(discovery["issuer"], issuer.as_str());
    assert_eq!(
        discovery["token_endpoint"],
        harness.mock.token_url().as_str()
    );
    assert_eq!(
        discovery["jwks_uri"],
        format!("{issuer}/protocol/openid-connect/certs").as_str()
    );
    let jwks: Value = harness
        .anonymous
        .get(discovery["jwks_uri"].as_str().expect("jwks_uri"))
        .send()
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    let key = &jwks["keys"][0];
    assert_eq!(key["kty"], "EC");
    assert_eq!(key["alg"], "ES256");
    // The token's header names that key.
    let header = harness.token.split('.').next().expect("header");
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .expect("base64url"),
    )
    .expect("json");
    assert_eq!(header["kid"], key["kid"]);
    assert_eq!(header["alg"], "ES256");
}

async fn token_request(
    harness: &Harness,
    form: &[(&str, &str)],
    basic: Option<(&str, &str)>,
) -> (u16, Value) {
    let mut request = harness.anonymous.post(harness.mock.token_url()).form(form);
    if let Some((id, secret)) = basic {
        request = request.basic_auth(id, Some(secret));
    }
    let response = request.send().await.expect("token request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

#[tokio::test]
async fn the_token_endpoint_follows_rfc_6749() {
    let harness = Harness::start().await;
    let id = harness.mock.client_id().to_owned();
    let secret = harness.mock.client_secret().to_owned();

    let (status, body) = token_request(
        &harness,
        &[("grant_type", "client_credentials")],
        Some((&id, &secret)),
    )
    .await;
    assert_eq!(status, 200, "HTTP Basic works: {body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["scope"], "openid");

    let (status, body) = token_request(
        &harness,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", &id),
            ("client_secret", "wrong"),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let (status, body) =
        token_request(&harness, &[("grant_type", "client_credentials")], None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );

    let (status, body) = token_request(
        &harness,
        &[
            ("grant_type", "password"),
            ("client_id", &id),
            ("client_secret", &secret),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );

    let (status, body) = token_request(
        &harness,
        &[("client_id", &id), ("client_secret", &secret)],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_request"))
    );

    let (status, body) = token_request(
        &harness,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", &id),
            ("client_secret", &secret),
            ("scope", "openid admin"),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope"))
    );

    let response = harness
        .anonymous
        .post(harness.mock.token_url())
        .json(&serde_json::json!({ "grant_type": "client_credentials" }))
        .send()
        .await
        .expect("request");
    assert_eq!(
        response.status().as_u16(),
        400,
        "JSON bodies are not accepted"
    );
}

#[tokio::test]
async fn the_api_refuses_bad_tokens_with_401() {
    let harness = Harness::start().await;
    let url = harness.url("/v1/consumer/packages");
    let call = |authorization: Option<String>| {
        let mut request = harness.anonymous.get(&url);
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        async move {
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            let challenge = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let body: Value = response.json().await.expect("problem json");
            (status, challenge, body)
        }
    };

    let (status, _, body) = call(Some(format!("Bearer {}", harness.token))).await;
    assert_eq!(status, 200, "{body}");

    let (status, challenge, body) = call(None).await;
    assert_eq!(status, 401);
    assert!(challenge.starts_with("Bearer"));
    assert_eq!(body["status"], 401);
    assert_eq!(body["title"], "Unauthorized");

    let (status, _, _) = call(Some("Basic abc".into())).await;
    assert_eq!(status, 401);
    let (status, _, body) = call(Some("Bearer not.a.jwt".into())).await;
    assert_eq!(status, 401, "malformed: {body}");

    let mut tampered: Vec<char> = harness.token.chars().collect();
    let at = harness.token.rfind('.').expect("signature") + 5;
    tampered[at] = if tampered[at] == 'x' { 'y' } else { 'x' };
    let (status, challenge, _) = call(Some(format!(
        "Bearer {}",
        tampered.into_iter().collect::<String>()
    )))
    .await;
    assert_eq!(status, 401, "badly signed");
    assert!(challenge.contains("invalid_token"));

    let expired = harness
        .mock
        .mint_token(&TokenOptions {
            lifetime_seconds: Some(-1),
            ..Default::default()
        })
        .expect("mint");
    let (status, _, body) = call(Some(format!("Bearer {expired}"))).await;
    assert_eq!(status, 401);
    assert!(body["detail"].as_str().expect("detail").contains("expired"));

    let foreign = harness
        .mock
        .mint_token(&TokenOptions {
            audience: Some("account".into()),
            ..Default::default()
        })
        .expect("mint");
    let (status, _, body) = call(Some(format!("Bearer {foreign}"))).await;
    assert_eq!(status, 401);
    assert!(
        body["detail"]
            .as_str()
            .expect("detail")
            .contains("audience")
    );

    // A token of another mock (another key) is refused too.
    let other = Harness::start().await;
    let (status, _, _) = call(Some(format!("Bearer {}", other.token))).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn short_lived_tokens_expire() {
    let harness = Harness::with(creditdata_mock::MockConfig {
        token_lifetime: std::time::Duration::from_secs(1),
        ..common::quick_config()
    })
    .await;
    assert_eq!(
        harness.get("/v1/consumer/packages").await.status().as_u16(),
        200
    );
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(
        harness.get("/v1/consumer/packages").await.status().as_u16(),
        401
    );
}
