//! The identity provider's endpoints: a Keycloak-style OpenID Connect issuer with discovery,
//! JWKS, the client-credentials grant, the Authorization Code flow with PKCE for people (sign-in
//! and consent pages, refresh tokens with rotation, ID tokens, revocation, RP-initiated logout),
//! and the bearer-token check every API call goes through.
//!
//! What they act on (claims, keys, grants, codes, pending requests, minting and verifying) is
//! the model in [`crate::idp`]; these modules parse requests and write answers.

mod authorize;
mod bearer;
mod clients;
mod discovery;
mod oauth;
mod pages;
mod session_end;
mod token;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::state::AppState;

pub use bearer::require_bearer;
// The model's public paths of before the split (`creditdata_mock::auth::Claims`, ...).
pub use crate::idp::{
    Caller, Claims, IdTokenClaims, IdentityProvider, KeyError, REALM, SignIn, SigningKey,
    TokenOptions, UserTokens, grants, user_subject,
};

/// The identity provider's routes, under `/realms/{REALM}`.
pub fn routes() -> Router<Arc<AppState>> {
    let realm = format!("/realms/{REALM}");
    let protocol = format!("{realm}/protocol/openid-connect");
    Router::new()
        .route(
            &format!("{realm}/.well-known/openid-configuration"),
            get(discovery::discovery),
        )
        .route(&format!("{protocol}/certs"), get(discovery::jwks))
        .route(&format!("{protocol}/token"), post(token::token))
        .route(&format!("{protocol}/auth"), get(authorize::authorize))
        .route(
            &format!("{realm}/login-actions/authenticate"),
            post(authorize::sign_in),
        )
        .route(
            &format!("{realm}/login-actions/consent"),
            post(authorize::consent),
        )
        .route(
            &format!("{protocol}/logout"),
            get(session_end::end_session_query).post(session_end::end_session_form),
        )
        .route(&format!("{protocol}/revoke"), post(session_end::revoke))
        .route(
            &format!("{protocol}/userinfo"),
            get(session_end::userinfo).post(session_end::userinfo),
        )
}
