//! The bearer-token check every `/v1` call goes through (and the userinfo endpoint): signature,
//! issuer, audience and expiry, then whether the token or its sign-in was revoked.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use std::sync::Arc;

use crate::idp::{Caller, Claims, REALM, bearer_token, invalid_token};
use crate::problem::Problem;
use crate::state::AppState;

/// Axum middleware: refuses the request with 401 unless it carries a valid bearer token.
pub async fn require_bearer(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match authenticate_bearer(&state, request.headers()) {
        Ok(claims) => {
            request.extensions_mut().insert(Caller {
                client_id: claims.azp,
                username: claims.preferred_username,
                name: claims.name,
            });
            next.run(request).await
        }
        Err(problem) => problem.into_response(),
    }
}

/// The claims of the request's bearer token, once its signature, issuer, audience and expiry
/// check out and neither it nor its sign-in was revoked; otherwise the 401 to send.
pub(crate) fn authenticate_bearer(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Claims, Problem> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(Problem::unauthorized(
            "The request has no Authorization header; send `Authorization: Bearer <access token>` \
             with a token from the token endpoint.",
            format!("Bearer realm=\"{REALM}\""),
        ));
    };
    let Some(token) = value.to_str().ok().and_then(bearer_token) else {
        return Err(Problem::unauthorized(
            "The Authorization header is not of the form `Bearer <access token>`.",
            format!("Bearer realm=\"{REALM}\", error=\"invalid_request\""),
        ));
    };
    let claims = state.idp.verify(token)?;
    let now = Utc::now();
    let store = state.read_store();
    if store.identity.is_access_token_revoked(&claims.jti) {
        return Err(invalid_token("The access token was revoked."));
    }
    if let Some(sid) = &claims.sid {
        let live = uuid::Uuid::parse_str(sid)
            .ok()
            .and_then(|sid| store.identity.grant(sid, now))
            .is_some();
        if !live {
            return Err(invalid_token(
                "The sign-in this access token belongs to has ended (signed out, revoked or \
                 expired); sign in again.",
            ));
        }
    }
    Ok(claims)
}
