//! The token endpoint (RFC 6749 §3.2): client credentials (§4.4) for the confidential client,
//! and for people's clients the authorization code (§4.1.3, with PKCE, RFC 7636 §4.5) and the
//! refresh token (§6), which rotates on every use (RFC 9700 §4.14.2).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::clients::{self, AuthenticatedClient, ClientKind};
use super::oauth::{is_form_encoded, oauth_error, single_valued};
use crate::idp::codes::Redemption;
use crate::idp::grants::{Grant, RefreshTokenMatch, digest, random_token};
use crate::idp::{SignIn, TokenOptions, constant_time_eq};
use crate::problem::Problem;
use crate::state::AppState;

fn bad_request(error: &str, description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, error, description, false)
}

fn invalid_grant(description: &str) -> Response {
    bad_request("invalid_grant", description)
}

fn server_error(problem: &Problem) -> Response {
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        problem
            .body()
            .detail
            .as_deref()
            .unwrap_or("the identity provider failed"),
        false,
    )
}

fn token_response(body: Value) -> Response {
    let mut response = Json(body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// `POST {issuer}/protocol/openid-connect/token`.
pub async fn token(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !is_form_encoded(&headers) {
        return bad_request(
            "invalid_request",
            "The token request must be form-encoded (Content-Type: application/x-www-form-urlencoded).",
        );
    }
    let params = match single_valued(&body) {
        Ok(params) => params,
        Err(repeated) => return bad_request("invalid_request", &repeated),
    };
    let Some(grant_type) = params.get("grant_type").cloned() else {
        return bad_request("invalid_request", "Missing form parameter: grant_type");
    };
    let client = match clients::authenticate(&state, &headers, &params) {
        Ok(client) => client,
        Err(response) => return *response,
    };
    match (grant_type.as_str(), client.kind) {
        ("client_credentials", ClientKind::Confidential) => client_credentials(&state, &params),
        ("client_credentials", ClientKind::Public) => bad_request(
            "unauthorized_client",
            "A public client has no credentials of its own: use the Authorization Code flow.",
        ),
        ("authorization_code", _) => authorization_code(&state, &client, &params).await,
        ("refresh_token", _) => refresh_token(&state, &client, &params).await,
        (other, _) => bad_request(
            "unsupported_grant_type",
            &format!(
                "Unsupported grant_type `{other}`; this provider supports authorization_code, \
                 refresh_token and (for the confidential client) client_credentials."
            ),
        ),
    }
}

fn client_credentials(state: &AppState, params: &HashMap<String, String>) -> Response {
    if let Some(scope) = params.get("scope") {
        let unknown: Vec<&str> = scope
            .split_ascii_whitespace()
            .filter(|scope| *scope != "openid")
            .collect();
        if !unknown.is_empty() {
            return bad_request(
                "invalid_scope",
                &format!(
                    "Unknown scope: {}; the only scope of the client-credentials grant is openid.",
                    unknown.join(" ")
                ),
            );
        }
    }
    match state.idp.mint(&TokenOptions::default()) {
        Ok(access_token) => token_response(json!({
            "access_token": access_token,
            "expires_in": state.idp.lifetime_seconds(),
            "refresh_expires_in": 0,
            "token_type": "Bearer",
            "not-before-policy": 0,
            "scope": "openid",
        })),
        Err(problem) => server_error(&problem),
    }
}

/// Whether `verifier` is a PKCE code verifier: 43-128 unreserved characters (RFC 7636 §4.1).
fn is_code_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

async fn authorization_code(
    state: &Arc<AppState>,
    client: &AuthenticatedClient,
    params: &HashMap<String, String>,
) -> Response {
    let param = |name: &str| params.get(name).map(String::as_str);
    let Some(code) = param("code") else {
        return bad_request("invalid_request", "Missing form parameter: code");
    };
    let Some(redirect_uri) = param("redirect_uri") else {
        return bad_request(
            "invalid_request",
            "Missing form parameter: redirect_uri (the one of the authorization request).",
        );
    };
    let Some(verifier) = param("code_verifier") else {
        return bad_request(
            "invalid_request",
            "Missing form parameter: code_verifier (PKCE is required).",
        );
    };
    let (grant, sid) = match state.idp.codes().redeem(code) {
        Redemption::First { grant, sid } => (grant, sid),
        Redemption::Replayed { sid } => {
            if let Some(sid) = sid
                && let Err(problem) = state
                    .update_identity(|identity, _| identity.revoke(sid))
                    .await
            {
                return server_error(&problem);
            }
            tracing::warn!(
                client_id = %client.client_id,
                "an authorization code was presented twice; the sign-in it started was revoked"
            );
            return invalid_grant(
                "The authorization code was already used; the tokens issued from it are revoked.",
            );
        }
        Redemption::Expired => {
            return invalid_grant("The authorization code has expired; sign in again.");
        }
        Redemption::Unknown => {
            return invalid_grant("The authorization code is not valid.");
        }
    };
    // The code is spent from here on, whatever the outcome.
    if grant.client_id != client.client_id {
        return invalid_grant("The authorization code was issued to another client.");
    }
    if grant.redirect_uri != redirect_uri {
        return invalid_grant("redirect_uri differs from the one of the authorization request.");
    }
    if !is_code_verifier(verifier) {
        return bad_request(
            "invalid_request",
            "code_verifier must be 43-128 characters of A-Z, a-z, 0-9, `-`, `.`, `_`, `~` (RFC 7636 §4.1).",
        );
    }
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if !constant_time_eq(challenge.as_bytes(), grant.code_challenge.as_bytes()) {
        return invalid_grant("code_verifier does not match the code_challenge (PKCE).");
    }
    let Some(user) = state
        .config
        .users
        .iter()
        .find(|user| user.username == grant.username)
    else {
        return invalid_grant("The user who signed in no longer exists.");
    };

    let refresh_token = random_token();
    let now = Utc::now();
    let ends_at = add(now, state.config.sign_in_lifetime);
    let record = Grant {
        sid,
        client_id: grant.client_id.clone(),
        username: grant.username.clone(),
        scope: grant.scope.clone(),
        nonce: grant.nonce.clone(),
        auth_time: grant.auth_time,
        ends_at,
        refresh_token_digest: digest(&refresh_token),
        refresh_expires_at: add(now, state.config.refresh_token_lifetime).min(ends_at),
        rotated_digests: Vec::new(),
    };
    let refresh_expires_at = record.refresh_expires_at;
    if let Err(problem) = state
        .update_identity(move |identity, _| identity.grants.push(record))
        .await
    {
        return server_error(&problem);
    }
    // A replay that arrived while the sign-in was being saved could not end it yet.
    if state.idp.codes().was_replayed(code) {
        if let Err(problem) = state
            .update_identity(|identity, _| identity.revoke(sid))
            .await
        {
            return server_error(&problem);
        }
        return invalid_grant(
            "The authorization code was already used; the tokens issued from it are revoked.",
        );
    }
    let sign_in = SignIn {
        user,
        client_id: &grant.client_id,
        scope: &grant.scope,
        sid,
        auth_time: grant.auth_time,
        nonce: grant.nonce.as_deref(),
    };
    user_token_response(state, sign_in, &refresh_token, refresh_expires_at, now)
}

async fn refresh_token(
    state: &Arc<AppState>,
    client: &AuthenticatedClient,
    params: &HashMap<String, String>,
) -> Response {
    let Some(presented) = params.get("refresh_token").cloned() else {
        return bad_request("invalid_request", "Missing form parameter: refresh_token");
    };
    let narrowed = match params.get("scope") {
        None => None,
        Some(scope) => match clients::parse_scope(Some(scope)) {
            Ok(scopes) => Some(scopes),
            Err(description) => return bad_request("invalid_scope", &description),
        },
    };
    let idle = chrono::Duration::from_std(state.config.refresh_token_lifetime)
        .unwrap_or(chrono::Duration::zero());
    let client_id = client.client_id.clone();
    enum Outcome {
        Rotated(Box<Grant>, String),
        Replayed,
        OtherClient,
        Unknown,
    }
    let outcome = state
        .update_identity(
            move |identity, now| match identity.find_refresh_token(&presented, now) {
                RefreshTokenMatch::Current(sid) => match identity.grant_mut(sid, now) {
                    Some(grant) if grant.client_id != client_id => Outcome::OtherClient,
                    Some(grant) => {
                        let token = grant.rotate(now, idle);
                        Outcome::Rotated(Box::new(grant.clone()), token)
                    }
                    None => Outcome::Unknown,
                },
                RefreshTokenMatch::Rotated(sid) => {
                    identity.revoke(sid);
                    Outcome::Replayed
                }
                RefreshTokenMatch::Unknown => Outcome::Unknown,
            },
        )
        .await;
    let (grant, refresh_token) = match outcome {
        Err(problem) => return server_error(&problem),
        Ok(Outcome::Rotated(grant, token)) => (grant, token),
        Ok(Outcome::Replayed) => {
            tracing::warn!(
                client_id = %client.client_id,
                "a rotated refresh token was presented again; its sign-in was revoked"
            );
            return invalid_grant(
                "The refresh token was already used; the sign-in it belongs to is revoked. Sign in again.",
            );
        }
        Ok(Outcome::OtherClient) => {
            return invalid_grant("The refresh token was issued to another client.");
        }
        Ok(Outcome::Unknown) => {
            return invalid_grant(
                "The refresh token is not valid: expired, revoked or never issued. Sign in again.",
            );
        }
    };
    let granted: Vec<&str> = grant.scope.split_ascii_whitespace().collect();
    let scope = match narrowed {
        None => grant.scope.clone(),
        Some(requested) => {
            if let Some(extra) = requested.iter().find(|scope| !granted.contains(scope)) {
                return bad_request(
                    "invalid_scope",
                    &format!("The scope `{extra}` was not granted to this sign-in."),
                );
            }
            requested.join(" ")
        }
    };
    let Some(user) = state
        .config
        .users
        .iter()
        .find(|user| user.username == grant.username)
    else {
        let sid = grant.sid;
        let _ = state
            .update_identity(|identity, _| identity.revoke(sid))
            .await;
        return invalid_grant("The user who signed in no longer exists. Sign in again.");
    };
    let sign_in = SignIn {
        user,
        client_id: &grant.client_id,
        scope: &scope,
        sid: grant.sid,
        auth_time: grant.auth_time,
        nonce: grant.nonce.as_deref(),
    };
    user_token_response(
        state,
        sign_in,
        &refresh_token,
        grant.refresh_expires_at,
        Utc::now(),
    )
}

fn user_token_response(
    state: &AppState,
    sign_in: SignIn<'_>,
    refresh_token: &str,
    refresh_expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Response {
    let tokens = match state.idp.mint_for_user(sign_in) {
        Ok(tokens) => tokens,
        Err(problem) => return server_error(&problem),
    };
    let mut body = json!({
        "access_token": tokens.access_token,
        "expires_in": state.idp.lifetime_seconds(),
        "refresh_token": refresh_token,
        "refresh_expires_in": (refresh_expires_at - now).num_seconds().max(0),
        "token_type": "Bearer",
        "not-before-policy": 0,
        "session_state": sign_in.sid.to_string(),
        "scope": sign_in.scope,
    });
    if let Some(id_token) = tokens.id_token {
        body["id_token"] = Value::String(id_token);
    }
    token_response(body)
}

fn add(now: DateTime<Utc>, duration: std::time::Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(duration)
        .ok()
        .and_then(|duration| now.checked_add_signed(duration))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_verifiers_follow_rfc_7636() {
        assert!(is_code_verifier(&"a".repeat(43)));
        assert!(is_code_verifier(&"A-._~9".repeat(20)));
        assert!(!is_code_verifier(&"a".repeat(42)));
        assert!(!is_code_verifier(&"a".repeat(129)));
        assert!(!is_code_verifier(&format!("{}+", "a".repeat(43))));
    }
}
