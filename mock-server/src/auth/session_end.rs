//! Ending a sign-in: token revocation (RFC 7009) and RP-initiated logout (OpenID Connect
//! RP-Initiated Logout 1.0); and the UserInfo endpoint (OpenID Connect Core §5.3).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use chrono::{TimeZone as _, Utc};
use serde_json::json;
use uuid::Uuid;

use super::bearer::authenticate_bearer;
use super::clients;
use super::oauth::{is_form_encoded, oauth_error, single_valued};
use super::pages;
use crate::idp::grants::{RefreshTokenMatch, RevokedAccessToken};
use crate::state::AppState;

/// `POST {issuer}/protocol/openid-connect/revoke` (RFC 7009): a refresh token ends its whole
/// sign-in (and so every access token of it); an access token is refused from then on. An
/// unknown, expired or malformed token is answered 200 as well (§2.2): the client's job is
/// done either way.
pub async fn revoke(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !is_form_encoded(&headers) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The revocation request must be form-encoded (Content-Type: application/x-www-form-urlencoded).",
            false,
        );
    }
    let params = match single_valued(&body) {
        Ok(params) => params,
        Err(repeated) => {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", &repeated, false);
        }
    };
    let client = match clients::authenticate(&state, &headers, &params) {
        Ok(client) => client,
        Err(response) => return *response,
    };
    let Some(token) = params.get("token").cloned() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing form parameter: token",
            false,
        );
    };
    let not_yours = || {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "The token was not issued to this client.",
            false,
        )
    };
    // A refresh token (current or already rotated) names its sign-in.
    let client_id = client.client_id.clone();
    let refresh = {
        let store = state.read_store();
        match store.identity.find_refresh_token(&token, Utc::now()) {
            RefreshTokenMatch::Current(sid) | RefreshTokenMatch::Rotated(sid) => store
                .identity
                .grants
                .iter()
                .find(|grant| grant.sid == sid)
                .map(|grant| (sid, grant.client_id == client_id)),
            RefreshTokenMatch::Unknown => None,
        }
    };
    let outcome = match refresh {
        Some((_, false)) => return not_yours(),
        Some((sid, true)) => {
            state
                .update_identity(move |identity, _| {
                    identity.revoke(sid);
                })
                .await
        }
        None => match state.idp.verify(&token) {
            Ok(claims) if claims.azp != client.client_id => return not_yours(),
            Ok(claims) => {
                let expires_at = Utc
                    .timestamp_opt(claims.exp, 0)
                    .single()
                    .unwrap_or_else(Utc::now);
                state
                    .update_identity(move |identity, _| {
                        if !identity.is_access_token_revoked(&claims.jti) {
                            identity.revoked_access_tokens.push(RevokedAccessToken {
                                jti: claims.jti,
                                expires_at,
                            });
                        }
                    })
                    .await
            }
            // Not a live token of this provider: nothing to revoke.
            Err(_) => Ok(()),
        },
    };
    match outcome {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(problem) => oauth_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            problem
                .body()
                .detail
                .as_deref()
                .unwrap_or("revocation failed"),
            false,
        ),
    }
}

/// `GET {issuer}/protocol/openid-connect/logout` (parameters in the query).
pub async fn end_session_query(State(state): State<Arc<AppState>>, uri: Uri) -> Response {
    match single_valued(uri.query().unwrap_or_default().as_bytes()) {
        Ok(params) => end_session(&state, &params).await,
        Err(repeated) => logout_refused(&repeated),
    }
}

/// `POST {issuer}/protocol/openid-connect/logout` (parameters in a form).
pub async fn end_session_form(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !is_form_encoded(&headers) {
        return logout_refused(
            "The logout request must be a form (application/x-www-form-urlencoded).",
        );
    }
    match single_valued(&body) {
        Ok(params) => end_session(&state, &params).await,
        Err(repeated) => logout_refused(&repeated),
    }
}

fn logout_refused(text: &str) -> Response {
    pages::message(StatusCode::BAD_REQUEST, "Sign-out refused", text)
}

/// Ends the sign-in named by `id_token_hint` and sends the browser to
/// `post_logout_redirect_uri` (with `state`) when it is one this client may be sent to.
///
/// Without `id_token_hint` nothing can be ended (the provider keeps no browser sign-in), and a
/// `post_logout_redirect_uri` is refused: the provider would not know whose URI it is.
async fn end_session(state: &Arc<AppState>, params: &HashMap<String, String>) -> Response {
    let param = |name: &str| {
        params
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    let post_logout = param("post_logout_redirect_uri");
    let Some(hint) = param("id_token_hint") else {
        if post_logout.is_some() {
            return logout_refused(
                "post_logout_redirect_uri needs id_token_hint: send the ID token of the sign-in \
                 to end.",
            );
        }
        return pages::message(
            StatusCode::OK,
            "Nothing to sign out",
            "This identity provider keeps no browser sign-in. An application ends its sign-in \
             by sending its ID token as id_token_hint.",
        );
    };
    let Some(claims) = state.idp.verify_id_token_hint(hint) else {
        return logout_refused("id_token_hint is not an ID token of this identity provider.");
    };
    if clients::client_kind(&state.config, &claims.aud).is_none() {
        return logout_refused(
            "id_token_hint was issued to a client this provider no longer knows.",
        );
    }
    if let Some(client_id) = param("client_id")
        && client_id != claims.aud
    {
        return logout_refused("client_id is not the client the id_token_hint was issued to.");
    }
    if let Some(uri) = post_logout
        && let Some(problem) = clients::redirect_uri_problem(&state.config, uri)
    {
        return logout_refused(&format!("post_logout_redirect_uri is refused. {problem}"));
    }
    if let Ok(sid) = Uuid::parse_str(&claims.sid)
        && let Err(problem) = state
            .update_identity(|identity, _| identity.revoke(sid))
            .await
    {
        return pages::message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Sign-out failed",
            problem
                .body()
                .detail
                .as_deref()
                .unwrap_or("Saving the state failed."),
        );
    }
    let Some(uri) = post_logout else {
        return pages::message(
            StatusCode::OK,
            "Signed out",
            "You are signed out. You can close this window.",
        );
    };
    let Ok(mut target) = url::Url::parse(uri) else {
        return logout_refused("post_logout_redirect_uri is not a URL.");
    };
    if let Some(client_state) = param("state") {
        target.query_pairs_mut().append_pair("state", client_state);
    }
    let Ok(location) = HeaderValue::from_str(target.as_str()) else {
        return logout_refused("post_logout_redirect_uri cannot be sent in a header.");
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET`/`POST {issuer}/protocol/openid-connect/userinfo`: who the access token's user is.
pub async fn userinfo(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let claims = match authenticate_bearer(&state, &headers) {
        Ok(claims) => claims,
        Err(problem) => return problem.into_response(),
    };
    let scopes: Vec<&str> = claims.scope.split_ascii_whitespace().collect();
    if !scopes.contains(&"openid") {
        let mut response = (
            StatusCode::FORBIDDEN,
            Json(json!({
                "error": "insufficient_scope",
                "error_description": "The UserInfo endpoint needs a token with the openid scope.",
            })),
        )
            .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer error=\"insufficient_scope\", scope=\"openid\""),
        );
        return response;
    }
    let mut body = json!({
        "sub": claims.sub,
        "preferred_username": claims.preferred_username,
    });
    if let Some(name) = &claims.name {
        body["name"] = json!(name);
    }
    if scopes.contains(&"email")
        && claims.sid.is_some()
        && let Some(user) = state
            .config
            .users
            .iter()
            .find(|user| user.username == claims.preferred_username)
        && let Some(email) = &user.email
    {
        body["email"] = json!(email);
        body["email_verified"] = json!(true);
    }
    let mut response = Json(body).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
