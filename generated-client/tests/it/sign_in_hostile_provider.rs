//! People sign in against a hostile or broken identity provider (wiremock, with an ES256 key
//! of the test's own): ID tokens with a wrong nonce, audience, issuer, algorithm, signature or
//! age; a refused refresh token; redirects; bounded requests. The mock-driven sign-in tests are
//! `sign_in.rs`.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use creditdata_client::Client;
use creditdata_client::auth::AuthErrorKind;
use creditdata_client::sign_in::{
    IdentityProvider, MemoryTokenStore, SignIn, SignInError, SignInOptions, StoredSignIn,
};
use reqwest::StatusCode;
use secrecy::SecretString;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::sign_in::{auth_kind, query_parameter, started};
use crate::support::session_id;

const WIREMOCK_REALM: &str = "/realms/t";
pub(crate) const CLIENT_ID: &str = "test-app";

pub(crate) struct TestKey {
    pem: String,
    pub(crate) jwk: Value,
}

pub(crate) fn test_key(kid: &str) -> TestKey {
    use p256::elliptic_curve::sec1::ToEncodedPoint as _;
    use p256::pkcs8::EncodePrivateKey as _;
    let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let point = secret.public_key().to_encoded_point(false);
    let pem = secret
        .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
        .expect("pem")
        .to_string();
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(point.x().expect("x")),
        "y": URL_SAFE_NO_PAD.encode(point.y().expect("y")),
    });
    TestKey { pem, jwk }
}

pub(crate) fn sign(key: &TestKey, kid: &str, claims: &Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some(kid.to_string());
    let key = jsonwebtoken::EncodingKey::from_ec_pem(key.pem.as_bytes()).expect("key");
    jsonwebtoken::encode(&header, claims, &key).expect("signed")
}

pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A wiremock identity provider: discovery and JWKS (the key `kid-1`).
async fn hostile_provider(key: &TestKey) -> (crate::support::MockServer, String) {
    hostile_provider_announcing_iss(key, false).await
}

/// [`hostile_provider`], its discovery document promising `iss` in the redirect (RFC 9207)
/// when `iss_supported`.
async fn hostile_provider_announcing_iss(
    key: &TestKey,
    iss_supported: bool,
) -> (crate::support::MockServer, String) {
    let server = crate::support::MockServer::start().await;
    let issuer = format!("{}{WIREMOCK_REALM}", server.uri());
    Mock::given(method("GET"))
        .and(path(format!(
            "{WIREMOCK_REALM}/.well-known/openid-configuration"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/protocol/openid-connect/auth"),
            "token_endpoint": format!("{issuer}/protocol/openid-connect/token"),
            "jwks_uri": format!("{issuer}/protocol/openid-connect/certs"),
            "revocation_endpoint": format!("{issuer}/protocol/openid-connect/revoke"),
            "id_token_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": iss_supported,
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(format!(
            "{WIREMOCK_REALM}/protocol/openid-connect/certs"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "keys": [key.jwk] })))
        .mount(&server)
        .await;
    (server, issuer)
}

/// Signs in at a fresh hostile provider whose token endpoint answers with
/// `id_token(nonce, issuer)`, the browser redirected back with the right state; the outcome.
async fn sign_in_with_id_token(
    key: &TestKey,
    id_token: &dyn Fn(&str, &str) -> String,
) -> Result<StoredSignIn, SignInError> {
    let (server, issuer) = hostile_provider(key).await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    let pending = started(&provider).await;
    let url = pending.authorization_url().clone();
    let parameter = |name: &str| query_parameter(&url, name).expect("parameter");
    let (state, nonce) = (parameter("state"), parameter("nonce"));
    Mock::given(method("POST"))
        .and(path(format!(
            "{WIREMOCK_REALM}/protocol/openid-connect/token"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "access-token-value",
            "token_type": "Bearer",
            "expires_in": 300,
            "refresh_token": "refresh-token-value",
            "id_token": id_token(&nonce, &issuer),
            "scope": "openid profile",
        })))
        .mount(&server)
        .await;
    let redirect = format!("{}?code=the-code&state={state}", pending.redirect_uri());
    let (outcome, _) = tokio::join!(pending.finish(), async {
        reqwest::get(&redirect).await.expect("redirect")
    });
    outcome
}

#[tokio::test]
async fn id_tokens_with_a_wrong_nonce_audience_issuer_algorithm_signature_or_age_are_refused() {
    let key = test_key("kid-1");
    let other_key = test_key("kid-1");
    let claims = |nonce: &str, issuer: &str| {
        json!({
            "iss": issuer, "aud": CLIENT_ID, "sub": "user-1", "name": "Test Person",
            "preferred_username": "tp", "nonce": nonce, "iat": now(), "exp": now() + 300,
        })
    };
    // Makes the ID token for a sign-in's nonce and issuer.
    type IdToken<'a> = Box<dyn Fn(&str, &str) -> String + 'a>;
    // An ID token signed as the provider would, but for what `change` does to its claims.
    let claims_changed = |change: fn(&mut Value)| -> IdToken<'_> {
        let (key, claims) = (&key, &claims);
        Box::new(move |nonce, issuer| {
            let mut claims = claims(nonce, issuer);
            change(&mut claims);
            sign(key, "kid-1", &claims)
        })
    };

    let good = sign_in_with_id_token(&key, &|n, i| sign(&key, "kid-1", &claims(n, i))).await;
    assert_eq!(
        good.expect("a valid ID token").user().display_name(),
        "Test Person"
    );

    type Case<'a> = (&'a str, IdToken<'a>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "wrong nonce",
            claims_changed(|c| c["nonce"] = json!("another-sign-in")),
            "nonce",
        ),
        (
            "no nonce",
            claims_changed(|c| {
                c.as_object_mut().unwrap().shift_remove("nonce");
            }),
            "nonce",
        ),
        (
            "another audience",
            claims_changed(|c| c["aud"] = json!("other-app")),
            "aud",
        ),
        (
            "another issuer",
            claims_changed(|c| c["iss"] = json!("https://evil.example/realms/t")),
            "iss",
        ),
        (
            "expired",
            claims_changed(|c| c["exp"] = json!(now() - 3600)),
            "expired",
        ),
        (
            "another party (azp)",
            claims_changed(|c| {
                c["aud"] = json!([CLIENT_ID, "other"]);
                c["azp"] = json!("other");
            }),
            "azp",
        ),
        (
            "another key's signature",
            Box::new(|n, i| sign(&other_key, "kid-1", &claims(n, i))),
            "signature",
        ),
        (
            "an unknown kid",
            Box::new(|n, i| sign(&key, "kid-2", &claims(n, i))),
            "kid",
        ),
        (
            "HS256 (a public client has no secret)",
            Box::new(|n, i| {
                let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
                jsonwebtoken::encode(
                    &header,
                    &claims(n, i),
                    &jsonwebtoken::EncodingKey::from_secret(b"guessable"),
                )
                .unwrap()
            }),
            "HS256",
        ),
        (
            "alg none",
            Box::new(|n, i| {
                let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
                let payload = URL_SAFE_NO_PAD.encode(claims(n, i).to_string());
                format!("{header}.{payload}.")
            }),
            "readable header",
        ),
    ];
    for (what, id_token, says) in cases {
        match sign_in_with_id_token(&key, &*id_token).await {
            Err(SignInError::IdToken(why)) => assert!(why.contains(says), "{what}: {why}"),
            other => panic!("{what}: expected the ID token to be refused, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_refused_refresh_token_is_asked_once_not_once_per_call() {
    let key = test_key("kid-1");
    let (server, issuer) = hostile_provider(&key).await;
    Mock::given(method("POST"))
        .and(path(format!(
            "{WIREMOCK_REALM}/protocol/openid-connect/token"
        )))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({ "error": "invalid_grant", "error_description": "Token is not active" }),
        ))
        .mount(&server)
        .await;
    let api = crate::support::MockServer::start().await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    let stored = StoredSignIn {
        issuer: issuer.clone(),
        client_id: CLIENT_ID.into(),
        refresh_token: Some(SecretString::from("revoked-refresh-token".to_string())),
        access_token: Some(SecretString::from("old-access-token".to_string())),
        access_token_expires_at: Some(SystemTime::now() - Duration::from_secs(5)),
        id_token: None,
        scopes: vec!["openid".into()],
        user: serde_json::from_value(json!({ "subject": "user-1" })).unwrap(),
        signed_in_at: SystemTime::now() - Duration::from_secs(3600),
        api_origin: None,
    };
    let client = Client::builder()
        .base_url(api.uri())
        .retry_policy(crate::support::fast_retries(4))
        .signed_in(Arc::new(MemoryTokenStore::with(stored)), provider)
        .build()
        .expect("client");
    let calls: Vec<_> = (0..10)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.get_session().session_id(session_id()).call().await })
        })
        .collect();
    for call in calls {
        let error = call.await.expect("task").expect_err("signed out");
        assert_eq!(auth_kind(&error), Some(AuthErrorKind::SignInRequired));
    }
    let later = client
        .get_sessions()
        .call()
        .await
        .expect_err("still signed out");
    assert_eq!(auth_kind(&later), Some(AuthErrorKind::SignInRequired));
    let asked = client
        .access_token()
        .await
        .expect_err("no token for an ended sign-in");
    assert_eq!(auth_kind(&asked), Some(AuthErrorKind::SignInRequired));
    let token_requests = crate::support::count(
        &server,
        "POST",
        &format!("{WIREMOCK_REALM}/protocol/openid-connect/token"),
    )
    .await;
    assert_eq!(
        token_requests, 1,
        "one refresh attempt, never a storm or a retry"
    );
    assert!(api.received_requests().await.unwrap_or_default().is_empty());
}

#[tokio::test]
async fn identity_provider_requests_never_follow_redirects_and_are_bounded() {
    let server = crate::support::MockServer::start().await;
    let issuer = format!("{}{WIREMOCK_REALM}", server.uri());
    Mock::given(method("GET"))
        .and(path(format!(
            "{WIREMOCK_REALM}/.well-known/openid-configuration"
        )))
        .respond_with(
            ResponseTemplate::new(302).insert_header("location", "https://evil.example/x?secret=1"),
        )
        .mount(&server)
        .await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    match SignIn::start(&provider, SignInOptions::default()).await {
        Err(SignInError::Provider(error)) => {
            assert_eq!(error.kind, AuthErrorKind::Redirect);
            assert!(!error.to_string().contains("secret=1"), "{error}");
        }
        other => panic!("expected a redirect error, got {other:?}"),
    }

    server.reset().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "{WIREMOCK_REALM}/.well-known/openid-configuration"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_string(" ".repeat(2 * 1024 * 1024)))
        .mount(&server)
        .await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    match SignIn::start(&provider, SignInOptions::default()).await {
        Err(SignInError::Provider(error)) => {
            assert!(error.to_string().contains("larger than"), "{error}")
        }
        other => panic!("expected a size error, got {other:?}"),
    }

    server.reset().await;
    Mock::given(method("GET"))
        .and(path(format!(
            "{WIREMOCK_REALM}/.well-known/openid-configuration"
        )))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "issuer": "https://evil.example/realms/t",
            "authorization_endpoint": "https://evil.example/auth",
            "token_endpoint": "https://evil.example/token",
            "jwks_uri": "https://evil.example/certs",
        })))
        .mount(&server)
        .await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    match SignIn::start(&provider, SignInOptions::default()).await {
        Err(SignInError::Provider(error)) => assert_eq!(error.kind, AuthErrorKind::Discovery),
        other => panic!("expected another issuer's document to be refused, got {other:?}"),
    }
    assert!(IdentityProvider::new("http://login.example.test/realms/t", CLIENT_ID).is_err());
}

#[tokio::test]
async fn a_redirect_naming_another_issuer_or_none_it_promised_is_refused() {
    let key = test_key("kid-1");
    let (_server, issuer) = hostile_provider_announcing_iss(&key, true).await;
    let provider = IdentityProvider::new(&issuer, CLIENT_ID).expect("provider");
    for (what, iss) in [
        (
            "another issuer (a mix-up)",
            Some("https://evil.example/realms/t"),
        ),
        ("no iss although promised", None),
    ] {
        let pending = started(&provider).await;
        let url = pending.authorization_url().clone();
        let state = url
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .unwrap();
        let mut redirect = reqwest::Url::parse(pending.redirect_uri()).unwrap();
        redirect
            .query_pairs_mut()
            .append_pair("code", "c")
            .append_pair("state", &state);
        if let Some(iss) = iss {
            redirect.query_pairs_mut().append_pair("iss", iss);
        }
        let (outcome, answer) = tokio::join!(pending.finish(), async {
            reqwest::get(redirect).await.expect("redirect")
        });
        assert!(
            matches!(outcome, Err(SignInError::InvalidRedirect(ref why)) if why.contains("iss")),
            "{what}: {outcome:?}"
        );
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{what}");
    }
}
