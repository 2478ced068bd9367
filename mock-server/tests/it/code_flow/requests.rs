//! What an authorization request must be: PKCE (S256, matching), a trusted client and
//! redirect URI (else an error page, never a redirect), escaped reflections, what discovery
//! lists, and the confidential client with its secret.

use super::*;

#[tokio::test]
async fn pkce_is_required_s256_only_and_must_match() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();

    // Without a challenge, or with `plain`, the request goes back as invalid_request.
    for (method, challenge) in [
        (None, None),
        (Some("S256"), None),
        (Some("plain"), Some(challenge.as_str())),
        (Some("S256"), Some("too-short")),
    ] {
        let mut params = request_params(&mock, "");
        params.retain(|(name, _)| !name.starts_with("code_challenge"));
        params.push(("code_challenge", challenge));
        params.push(("code_challenge_method", method));
        let response = browser()
            .get(authorization_url(&mock, &params))
            .send()
            .await
            .expect("authorize");
        let params = redirect_params(&response);
        assert_eq!(
            get(&params, "error"),
            Some("invalid_request"),
            "{method:?} {challenge:?}"
        );
        assert_eq!(get(&params, "state"), Some("state-123"));
        assert!(get(&params, "code").is_none());
    }

    // A verifier that is not the challenge's is refused, and spends the code.
    let (code, verifier) = code_for_default_user(&mock).await;
    let (other_verifier, _) = pkce();
    let (status, body) = exchange(&mock, &code, &other_verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "a code is spent by any attempt"
    );

    // No verifier at all is a malformed request.
    let (code, _) = code_for_default_user(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", mock.public_client_id()),
            ("code", &code),
            ("redirect_uri", REDIRECT_URI),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_request")
    );
}

#[tokio::test]
async fn an_untrusted_client_or_redirect_uri_gets_an_error_page_never_a_redirect() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let cases = [
        ("creditdata-cli", "https://evil.example/callback"),
        ("creditdata-cli", "http://localhost:49152/callback"),
        ("creditdata-cli", "http://127.0.0.1.evil.example/callback"),
        ("creditdata-cli", "http://127.0.0.1:49152@evil.example/"),
        ("creditdata-cli", "http://127.0.0.1:49152/callback#fragment"),
        ("no-such-client", REDIRECT_URI),
    ];
    for (client_id, redirect_uri) in cases {
        let mut params = request_params(&mock, &challenge);
        params.retain(|(name, _)| *name != "client_id" && *name != "redirect_uri");
        params.push(("client_id", Some(client_id)));
        params.push(("redirect_uri", Some(redirect_uri)));
        let response = browser()
            .get(authorization_url(&mock, &params))
            .send()
            .await
            .expect("authorize");
        assert_eq!(
            response.status(),
            StatusCode::BAD_REQUEST,
            "{client_id} {redirect_uri}"
        );
        assert!(
            response.headers().get("location").is_none(),
            "never redirected"
        );
        assert!(
            response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.to_str().unwrap_or_default().starts_with("text/html")),
            "an error page for a person"
        );
    }

    // A configured URI is accepted exactly.
    let configured = start(MockConfig {
        redirect_uris: vec!["https://app.lender.example/callback".into()],
        ..config()
    })
    .await;
    let mut params = request_params(&configured, &challenge);
    params.retain(|(name, _)| *name != "redirect_uri");
    params.push(("redirect_uri", Some("https://app.lender.example/callback")));
    let response = browser()
        .get(authorization_url(&configured, &params))
        .send()
        .await
        .expect("authorize");
    assert_eq!(response.status(), StatusCode::OK);

    // The token request must repeat the redirect URI of the authorization request.
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "authorization_code"),
            ("client_id", mock.public_client_id()),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:49153/callback"),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
}

#[tokio::test]
async fn reflected_values_are_escaped() {
    let mock = start(MockConfig {
        users: vec!["eve:pw:<script>alert(1)</script>".parse().expect("user")],
        ..config()
    })
    .await;
    let (_, challenge) = pkce();
    let mut params = request_params(&mock, &challenge);
    params.retain(|(name, _)| *name != "client_id");
    params.push(("client_id", Some("<img src=x onerror=alert(1)>")));
    let page = browser()
        .get(authorization_url(&mock, &params))
        .send()
        .await
        .expect("authorize")
        .text()
        .await
        .expect("html");
    assert!(!page.contains("<img"), "{page}");
    assert!(
        page.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{page}"
    );

    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let consent = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "eve"),
            ("password", "pw"),
        ],
    )
    .await
    .text()
    .await
    .expect("html");
    assert!(!consent.contains("<script>"), "{consent}");
    assert!(consent.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    // A wrong user name is shown again, escaped.
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let again = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "\"><script>x</script>"),
            ("password", "nope"),
        ],
    )
    .await
    .text()
    .await
    .expect("html");
    assert!(!again.contains("<script>x"), "{again}");
}

#[tokio::test]
async fn discovery_lists_the_code_flow() {
    let mock = start(config()).await;
    let issuer = mock.issuer();
    let discovery: Value = reqwest::get(format!("{issuer}/.well-known/openid-configuration"))
        .await
        .expect("discovery")
        .json()
        .await
        .expect("json");
    let endpoint = |name: &str| format!("{issuer}/protocol/openid-connect/{name}");
    assert_eq!(discovery["authorization_endpoint"], endpoint("auth"));
    assert_eq!(discovery["end_session_endpoint"], endpoint("logout"));
    assert_eq!(discovery["revocation_endpoint"], endpoint("revoke"));
    assert_eq!(discovery["userinfo_endpoint"], endpoint("userinfo"));
    assert_eq!(
        discovery["code_challenge_methods_supported"],
        json!(["S256"])
    );
    assert_eq!(discovery["response_types_supported"], json!(["code"]));
    assert_eq!(
        discovery["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );
    for grant in ["authorization_code", "refresh_token", "client_credentials"] {
        assert!(
            discovery["grant_types_supported"]
                .as_array()
                .expect("array")
                .contains(&json!(grant)),
            "{grant}"
        );
    }
    assert!(
        discovery["token_endpoint_auth_methods_supported"]
            .as_array()
            .expect("array")
            .contains(&json!("none")),
        "public clients"
    );
    assert_eq!(
        discovery["scopes_supported"],
        json!(["openid", "profile", "email"])
    );
    // Every endpoint it lists answers (a GET of a POST-only endpoint is 405, not 404).
    for name in ["auth", "logout", "userinfo", "certs"] {
        let status = reqwest::get(endpoint(name)).await.expect("get").status();
        assert_ne!(status, StatusCode::NOT_FOUND, "{name}");
    }
}

#[tokio::test]
async fn the_confidential_client_uses_the_code_flow_with_its_secret() {
    let mock = start(config()).await;
    let (verifier, challenge) = pkce();
    let mut params = request_params(&mock, &challenge);
    params.retain(|(name, _)| *name != "client_id");
    params.push(("client_id", Some(mock.client_id())));
    let url = authorization_url(&mock, &params);
    let response =
        sign_in_and_answer(&browser(), &mock, &url, "lena", "lena-password", "approve").await;
    let answer = redirect_params(&response);
    let code = get(&answer, "code").expect("code");
    let base = [
        ("grant_type", "authorization_code"),
        ("client_id", mock.client_id()),
        ("code", code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", verifier.as_str()),
    ];
    let (status, body) = token_request(&mock, &base).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::UNAUTHORIZED, "invalid_client"),
        "a confidential client must authenticate"
    );
    let mut with_secret = base.to_vec();
    with_secret.push(("client_secret", mock.client_secret()));
    let (status, body) = token_request(&mock, &with_secret).await;
    // The unauthenticated attempt was refused before the code was looked at.
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        jwt_claims(string(&body, "access_token"))["azp"],
        mock.client_id()
    );

    // The public client has no client-credentials grant.
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", mock.public_client_id()),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "unauthorized_client")
    );
}

#[test]
fn configured_redirect_uris_must_be_safe_to_send_a_code_to() {
    use creditdata_mock::config::check_configured_redirect_uri;
    for good in [
        "https://app.lender.example/callback",
        "http://localhost:8400/callback",
        "http://127.0.0.1:8400/callback",
        "com.lender.app:/oauth2redirect",
    ] {
        assert!(check_configured_redirect_uri(good).is_ok(), "{good}");
    }
    for bad in [
        "http://app.lender.example/callback",
        "https://app.lender.example/callback#x",
        "https://user:pw@app.lender.example/callback",
        "javascript:alert(1)",
        "not a url",
    ] {
        assert!(check_configured_redirect_uri(bad).is_err(), "{bad}");
    }
    let config = MockConfig {
        redirect_uris: vec!["http://intranet.lender.example/cb".into()],
        ..MockConfig::default()
    };
    assert!(
        config.validate().is_err(),
        "MockServer::start refuses it too"
    );
}
