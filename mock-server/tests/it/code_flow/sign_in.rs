//! Signing a person in: the whole flow, configured users, a denied consent, a wrong password,
//! a form without its CSRF token, and the user options the command line takes.

use super::*;

#[tokio::test]
async fn the_whole_flow_signs_a_person_in_and_names_them_as_the_sessions_creator() {
    let mock = start(config()).await;
    let browser = browser();
    let (verifier, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));

    // The sign-in page: real HTML, not framable, nothing loaded from elsewhere, a cookie.
    let response = browser.get(&url).send().await.expect("authorize");
    assert_eq!(response.status(), StatusCode::OK);
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().expect("ascii").to_owned())
            .unwrap_or_default()
    };
    assert!(header("content-type").starts_with("text/html"));
    let policy = header("content-security-policy");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert_eq!(header("x-frame-options"), "DENY");
    assert_eq!(header("cache-control"), "no-store");
    let cookie = header("set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let html = response.text().await.expect("html");
    assert!(html.contains("<form method=\"post\""), "{html}");
    assert!(html.contains("type=\"password\""));
    assert!(html.contains(mock.public_client_id()));
    for external in ["src=", "href=\"http", "url(", "@import"] {
        assert!(
            !html.contains(external),
            "no external resource ({external}): {html}"
        );
    }

    // Sign in, see the consent question, approve.
    let request = hidden(&html, "request").expect("request");
    let csrf = hidden(&html, "csrf_token").expect("csrf");
    let consent = post_form(
        &browser,
        &mock,
        "authenticate",
        &[
            ("request", &request),
            ("csrf_token", &csrf),
            ("username", "lena"),
            ("password", "lena-password"),
        ],
    )
    .await;
    assert_eq!(consent.status(), StatusCode::OK);
    let policy = consent
        .headers()
        .get("content-security-policy")
        .expect("csp")
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:49152"),
        "the answer's redirect is an allowed form target: {policy}"
    );
    let html = consent.text().await.expect("html");
    assert!(html.contains("Lena Loan Officer"), "who is signed in");
    assert!(html.contains(mock.public_client_id()), "which client asks");
    for scope in ["openid", "profile", "email"] {
        assert!(
            html.contains(&format!("<code>{scope}</code>")),
            "scope {scope}"
        );
    }
    assert!(html.contains(REDIRECT_URI), "where the answer goes");
    let consent_csrf = hidden(&html, "csrf_token").expect("csrf");
    assert_ne!(consent_csrf, csrf, "the CSRF token changes once signed in");
    let answer = post_form(
        &browser,
        &mock,
        "consent",
        &[
            ("request", &request),
            ("csrf_token", &consent_csrf),
            ("decision", "approve"),
        ],
    )
    .await;
    let params = redirect_params(&answer);
    assert_eq!(get(&params, "state"), Some("state-123"));
    assert_eq!(get(&params, "iss"), Some(mock.issuer()), "RFC 9207");
    let code = get(&params, "code").expect("code");

    // The application exchanges the code with its verifier.
    let (status, tokens) = exchange(&mock, code, &verifier).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 300);
    assert_eq!(tokens["scope"], "openid profile email");
    assert!(
        tokens["refresh_expires_in"]
            .as_i64()
            .expect("refresh_expires_in")
            > 0
    );
    let access = string(&tokens, "access_token");
    let claims = jwt_claims(access);
    assert_eq!(claims["name"], "Lena Loan Officer");
    assert_eq!(claims["preferred_username"], "lena");
    assert_eq!(claims["azp"], mock.public_client_id());
    assert_eq!(claims["scope"], "openid profile email");
    assert!(claims["sub"].is_string());

    // The ID token verifies against the published key and carries the nonce.
    let id_token = string(&tokens, "id_token");
    let jwks: Value = reqwest::get(format!("{}/protocol/openid-connect/certs", mock.issuer()))
        .await
        .expect("jwks")
        .json()
        .await
        .expect("json");
    let key = &jwks["keys"][0];
    let decoding = jsonwebtoken::DecodingKey::from_ec_components(
        key["x"].as_str().expect("x"),
        key["y"].as_str().expect("y"),
    )
    .expect("key");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[mock.public_client_id()]);
    validation.set_issuer(&[mock.issuer()]);
    let id = jsonwebtoken::decode::<Value>(id_token, &decoding, &validation)
        .expect("the ID token verifies")
        .claims;
    assert_eq!(id["nonce"], "nonce-456");
    assert_eq!(id["name"], "Lena Loan Officer");
    assert_eq!(id["email"], "lena@lender.example");
    assert_eq!(id["sub"], claims["sub"]);
    assert!(id["auth_time"].as_i64().expect("auth_time") <= id["iat"].as_i64().expect("iat"));
    assert!(id["exp"].as_i64() > id["iat"].as_i64());

    // The API takes the access token, and the session names the user.
    let (status, session) = create_session(&mock, access).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    assert_eq!(session["createdByName"], "Lena Loan Officer");
    // Not the ID token, though: it is for the application, not the API.
    assert_eq!(api_status(&mock, id_token).await, StatusCode::UNAUTHORIZED);

    // UserInfo says who it is.
    let info: Value = reqwest::Client::new()
        .get(format!(
            "{}/protocol/openid-connect/userinfo",
            mock.issuer()
        ))
        .bearer_auth(access)
        .send()
        .await
        .expect("userinfo")
        .json()
        .await
        .expect("json");
    assert_eq!(info["name"], "Lena Loan Officer");
    assert_eq!(info["email"], "lena@lender.example");

    // Client-credentials sessions keep the service account's name.
    let service = mock
        .mint_token(&Default::default())
        .expect("client-credentials token");
    let (_, session) = create_session(&mock, &service).await;
    assert_eq!(
        session["createdByName"],
        format!("service-account-{}", mock.client_id())
    );
}

#[tokio::test]
async fn a_configured_user_signs_in_with_their_own_name() {
    let mock = start(MockConfig {
        users: vec![
            "omar:s3cret:Omar Underwriter".parse().expect("user"),
            "jane:secret:Jane Loan Officer:jane@bank.example"
                .parse()
                .expect("user"),
        ],
        ..config()
    })
    .await;
    let (verifier, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let refused = sign_in_or_page(&browser(), &mock, &url, "lena", "lena-password").await;
    assert!(
        refused.contains("Invalid user name or password"),
        "the default user is replaced"
    );
    let response = sign_in_and_answer(&browser(), &mock, &url, "jane", "secret", "approve").await;
    let params = redirect_params(&response);
    let (_, tokens) = exchange(&mock, get(&params, "code").expect("code"), &verifier).await;
    let (_, session) = create_session(&mock, string(&tokens, "access_token")).await;
    assert_eq!(session["createdByName"], "Jane Loan Officer");
}

#[tokio::test]
async fn deny_sends_access_denied() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let response =
        sign_in_and_answer(&browser(), &mock, &url, "lena", "lena-password", "deny").await;
    let params = redirect_params(&response);
    assert_eq!(get(&params, "error"), Some("access_denied"));
    assert_eq!(get(&params, "state"), Some("state-123"));
    assert!(get(&params, "code").is_none());
}

#[tokio::test]
async fn a_wrong_password_issues_nothing() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    for attempt in 1..=5 {
        let response = post_form(
            &browser,
            &mock,
            "authenticate",
            &[
                ("request", &request),
                ("csrf_token", &csrf),
                ("username", "lena"),
                ("password", "wrong"),
            ],
        )
        .await;
        if attempt < 5 {
            assert_eq!(response.status(), StatusCode::OK);
            let html = response.text().await.expect("html");
            assert!(html.contains("Invalid user name or password."), "{html}");
            assert!(!html.contains("Allow access?"));
        } else {
            // The fifth wrong password abandons the request and tells the application.
            let params = redirect_params(&response);
            assert_eq!(get(&params, "error"), Some("access_denied"));
            assert!(get(&params, "code").is_none());
        }
    }
    // An unknown user is answered exactly like a wrong password.
    let html = sign_in_or_page(&browser, &mock, &url, "nobody", "lena-password").await;
    assert!(html.contains("Invalid user name or password."));
}

#[tokio::test]
async fn a_form_without_its_csrf_token_or_cookie_is_refused() {
    let mock = start(config()).await;
    let (_, challenge) = pkce();
    let url = authorization_url(&mock, &request_params(&mock, &challenge));
    let browser = browser();
    let (_, request, csrf) = open_sign_in(&browser, &url).await;
    let credentials = [("username", "lena"), ("password", "lena-password")];

    let mut form = vec![("request", request.as_str())];
    form.extend(credentials);
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "no CSRF token");
    assert!(response.text().await.expect("html").contains("csrf_token"));

    let mut form = vec![("request", request.as_str()), ("csrf_token", "forged")];
    form.extend(credentials);
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(
        response.status(),
        StatusCode::FORBIDDEN,
        "a wrong CSRF token"
    );

    // The right token from another browser (no cookie) is refused as well.
    let mut form = vec![("request", request.as_str()), ("csrf_token", csrf.as_str())];
    form.extend(credentials);
    let stranger = self::browser();
    let response = post_form(&stranger, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "another browser");

    // None of that spent the request: the real form still works.
    let response = post_form(&browser, &mock, "authenticate", &form).await;
    assert_eq!(response.status(), StatusCode::OK);
    let html = response.text().await.expect("html");
    assert!(html.contains("Allow access?"));
    // The consent form checks its token too.
    let response = post_form(
        &browser,
        &mock,
        "consent",
        &[("request", &request), ("decision", "approve")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers().get("location").is_none());
}

#[test]
fn user_options_are_checked_without_echoing_the_password() {
    let user: TestUser = "jane:secret:Jane Loan Officer:jane@bank.example"
        .parse()
        .expect("user");
    assert_eq!(user.name, "Jane Loan Officer");
    assert_eq!(user.email.as_deref(), Some("jane@bank.example"));
    assert!(!format!("{user:?}").contains("secret"));
    let plain: TestUser = "omar:pw".parse().expect("user");
    assert_eq!(
        plain.name, "omar",
        "the display name defaults to the user name"
    );
    for bad in [
        "nopassword",
        "bad name:pw",
        "jane:pw:Jane:not-an-email",
        ":pw",
    ] {
        let error = bad.parse::<TestUser>().expect_err(bad).to_string();
        assert!(!error.contains("pw:"), "{error}");
    }
    let error = "jane:hunter2:Jane:bad@"
        .parse::<TestUser>()
        .expect_err("bad e-mail")
        .to_string();
    assert!(!error.contains("hunter2"), "{error}");
    let clash = MockConfig {
        public_client_id: MockConfig::default().client_id,
        ..MockConfig::default()
    };
    assert!(clash.validate().is_err());
}
