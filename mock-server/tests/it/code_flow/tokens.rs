//! What the application does with a sign-in: single-use and expiring codes, rotating refresh
//! tokens, revocation, logout, and sign-ins that survive a restart.

use super::*;

#[tokio::test]
async fn a_code_is_single_use_and_a_replay_revokes_what_it_issued() {
    let mock = start(config()).await;
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, tokens) = exchange(&mock, &code, &verifier).await;
    assert_eq!(status, StatusCode::OK);
    let access = string(&tokens, "access_token");
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);

    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert!(string(&body, "error_description").contains("already used"));
    assert_eq!(
        api_status(&mock, access).await,
        StatusCode::UNAUTHORIZED,
        "the access token issued from the code is revoked"
    );
    let (status, body) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "and so is the refresh token"
    );
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let mock = start(MockConfig {
        code_lifetime: Duration::ZERO,
        ..config()
    })
    .await;
    let (code, verifier) = code_for_default_user(&mock).await;
    let (status, body) = exchange(&mock, &code, &verifier).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert!(string(&body, "error_description").contains("expired"));
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_replayed_one_ends_the_sign_in() {
    let mock = start(config()).await;
    let tokens = signed_in(&mock).await;
    let first = string(&tokens, "refresh_token");

    let (status, rotated) = refresh(&mock, first).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let second = string(&rotated, "refresh_token");
    assert_ne!(second, first, "a new refresh token on every use");
    let access = string(&rotated, "access_token");
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);
    let id = jwt_claims(string(&rotated, "id_token"));
    assert_eq!(id["nonce"], "nonce-456", "OpenID Connect Core §12.2");
    let (_, session) = create_session(&mock, access).await;
    assert_eq!(session["createdByName"], "Lena Loan Officer");

    // Narrowing the scope is allowed, widening is not.
    let (status, narrowed) = token_request(
        &mock,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", mock.public_client_id()),
            ("refresh_token", second),
            ("scope", "openid"),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    assert_eq!(narrowed["scope"], "openid");
    let third = string(&narrowed, "refresh_token").to_owned();

    // The first token again: a replay. The whole family ends, the current token included.
    let (status, body) = refresh(&mock, first).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    let (status, body) = refresh(&mock, &third).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant"),
        "the current token of a replayed family is revoked too"
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);

    // Another client cannot use a user's refresh token.
    let tokens = signed_in(&mock).await;
    let (status, body) = token_request(
        &mock,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", mock.client_id()),
            ("client_secret", mock.client_secret()),
            ("refresh_token", string(&tokens, "refresh_token")),
        ],
    )
    .await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
}

#[tokio::test]
async fn revocation_ends_a_sign_in_or_one_access_token() {
    let mock = start(config()).await;
    let public = mock.public_client_id().to_owned();
    let tokens = signed_in(&mock).await;
    let access = string(&tokens, "access_token");
    let refresh_token = string(&tokens, "refresh_token");

    // Another client may not revoke it.
    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", refresh_token),
                ("client_id", mock.client_id()),
                ("client_secret", mock.client_secret()),
            ],
        )
        .await,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::OK);

    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", refresh_token),
                ("token_type_hint", "refresh_token"),
                ("client_id", &public),
            ],
        )
        .await,
        StatusCode::OK
    );
    let (status, body) = refresh(&mock, refresh_token).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);

    // An access token alone (here a client-credentials one) can be revoked too.
    let (_, issued) = token_request(
        &mock,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", mock.client_id()),
            ("client_secret", mock.client_secret()),
        ],
    )
    .await;
    let service = string(&issued, "access_token");
    assert_eq!(api_status(&mock, service).await, StatusCode::OK);
    assert_eq!(
        revoke(
            &mock,
            &[
                ("token", service),
                ("client_id", mock.client_id()),
                ("client_secret", mock.client_secret()),
            ],
        )
        .await,
        StatusCode::OK
    );
    assert_eq!(api_status(&mock, service).await, StatusCode::UNAUTHORIZED);

    // Unknown tokens are answered 200 (RFC 7009 §2.2); unknown clients are not.
    assert_eq!(
        revoke(&mock, &[("token", "nonsense"), ("client_id", &public)]).await,
        StatusCode::OK
    );
    assert_eq!(
        revoke(&mock, &[("token", "nonsense"), ("client_id", "stranger")]).await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn end_session_signs_out_and_returns_to_the_application() {
    let mock = start(config()).await;
    let tokens = signed_in(&mock).await;
    let id_token = string(&tokens, "id_token");
    let logout = format!("{}/protocol/openid-connect/logout", mock.issuer());

    // A post-logout redirect elsewhere is refused with a page, and nothing ends.
    let response = browser()
        .get(&logout)
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", "https://evil.example/"),
        ])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.headers().get("location").is_none());
    assert_eq!(
        api_status(&mock, string(&tokens, "access_token")).await,
        StatusCode::OK
    );
    // Without id_token_hint there is no telling whose redirect it is.
    let response = browser()
        .get(&logout)
        .query(&[("post_logout_redirect_uri", REDIRECT_URI)])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);

    let response = browser()
        .get(&logout)
        .query(&[
            ("id_token_hint", id_token),
            ("post_logout_redirect_uri", REDIRECT_URI),
            ("state", "bye"),
        ])
        .send()
        .await
        .expect("logout");
    let params = redirect_params(&response);
    assert_eq!(get(&params, "state"), Some("bye"));
    let (status, body) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(
        (status, string(&body, "error")),
        (StatusCode::BAD_REQUEST, "invalid_grant")
    );
    assert_eq!(
        api_status(&mock, string(&tokens, "access_token")).await,
        StatusCode::UNAUTHORIZED
    );

    // POST works as well; without a redirect the browser is told it is signed out.
    let tokens = signed_in(&mock).await;
    let response = browser()
        .post(&logout)
        .form(&[("id_token_hint", string(&tokens, "id_token"))])
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.expect("html").contains("signed out"));
    let (status, _) = refresh(&mock, string(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn sign_ins_survive_a_restart_with_state() {
    let directory = tempfile::tempdir().expect("tempdir");
    let path = directory.path().join("state.json");
    let with_state = || MockConfig {
        state_file: Some(path.clone()),
        ..config()
    };
    let mock = start(with_state()).await;
    let tokens = signed_in(&mock).await;
    let refresh_token = string(&tokens, "refresh_token").to_owned();
    mock.shutdown().await;

    let saved = std::fs::read_to_string(&path).expect("state file");
    assert!(
        !saved.contains(&refresh_token),
        "refresh tokens are stored hashed"
    );
    assert!(saved.contains("refreshTokenDigest"));

    let mock = start(with_state()).await;
    let (status, rotated) = refresh(&mock, &refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let access = string(&rotated, "access_token");
    let (_, session) = create_session(&mock, access).await;
    assert_eq!(session["createdByName"], "Lena Loan Officer");
    // A replay is recognised across the restart as well.
    let (status, _) = refresh(&mock, &refresh_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(api_status(&mock, access).await, StatusCode::UNAUTHORIZED);
    mock.shutdown().await;
}
