//! OpenID Connect Discovery 1.0 and the JWKS.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::clients::SCOPES;
use crate::state::AppState;

/// `GET {issuer}/.well-known/openid-configuration`
pub async fn discovery(State(state): State<Arc<AppState>>) -> Response {
    let idp = &state.idp;
    let scopes: Vec<&str> = SCOPES.iter().map(|(name, _)| *name).collect();
    let client_auth = ["client_secret_post", "client_secret_basic", "none"];
    Json(json!({
        "issuer": idp.issuer(),
        "authorization_endpoint": idp.endpoint("auth"),
        "token_endpoint": idp.token_endpoint(),
        "userinfo_endpoint": idp.endpoint("userinfo"),
        "jwks_uri": idp.endpoint("certs"),
        "end_session_endpoint": idp.endpoint("logout"),
        "revocation_endpoint": idp.endpoint("revoke"),
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": ["S256"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "token_endpoint_auth_methods_supported": client_auth,
        "revocation_endpoint_auth_methods_supported": client_auth,
        "scopes_supported": scopes,
        "claims_supported": [
            "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "azp", "sid", "at_hash",
            "scope", "name", "preferred_username", "email", "email_verified",
        ],
        "prompt_values_supported": ["none", "login", "consent"],
        "authorization_response_iss_parameter_supported": true,
        "request_parameter_supported": false,
        "request_uri_parameter_supported": false,
        "claims_parameter_supported": false,
        "frontchannel_logout_supported": false,
        "backchannel_logout_supported": false,
    }))
    .into_response()
}

/// `GET {issuer}/protocol/openid-connect/certs`
pub async fn jwks(State(state): State<Arc<AppState>>) -> Response {
    Json(json!({ "keys": [state.idp.key().jwk().clone()] })).into_response()
}
