//! Control endpoints under `/_mock`: they play the customer and the providers, which the real
//! service hears from outside its API. They need no token (a local test harness drives them).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::api::path::{SessionPath, ValidPath};
use crate::body_limits::CONTROL_BODY_LIMIT;
use crate::catalog;
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::{Progress, SourceOverride};

/// The `/_mock` routes.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/_mock/health", get(health))
        .route("/_mock/reset", post(reset))
        .route("/_mock/sessions/{sessionId}/complete", post(complete))
        .route(
            "/_mock/sessions/{sessionId}/fail-delivery",
            post(fail_delivery),
        )
        .route("/_mock/sessions/{sessionId}/expire", post(expire))
        .route(
            "/_mock/sessions/{sessionId}/notifications",
            get(notifications),
        )
        .route(
            "/_mock/sessions/{sessionId}/api-versions",
            get(api_versions),
        )
        .route(
            "/_mock/sessions/{sessionId}/sources/{sourceId}/status",
            put(set_source_status).delete(clear_source_status),
        )
}

/// `{sessionId}/sources/{sourceId}`: the source id is a catalog provider's id.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SourcePath {
    session_id: Uuid,
    source_id: String,
}

async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn reset(State(state): State<Arc<AppState>>) -> Result<Json<Value>, Problem> {
    state.reset().await?;
    Ok(Json(json!({ "sessions": 0 })))
}

fn conflict(action: &str, progress: &Progress) -> Problem {
    Problem::conflict(format!(
        "Cannot {action}: the session is {}.",
        progress.name()
    ))
}

/// The customer completes the onboarding: every pending package gets consent now.
async fn complete(
    state: State<Arc<AppState>>,
    path: ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    customer_step(state, path, "complete the session", |record, now| {
        record.complete(now)
    })
    .await
}

/// The onboarding e-mail bounces.
async fn fail_delivery(
    state: State<Arc<AppState>>,
    path: ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    customer_step(state, path, "fail the delivery", |record, now| {
        record.progress = Progress::DeliveryFailed { at: now };
    })
    .await
}

/// The deadline passes now.
async fn expire(
    state: State<Arc<AppState>>,
    path: ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    customer_step(state, path, "expire the session", |record, now| {
        record.deadline = now;
        record.progress = Progress::Expired { at: now };
    })
    .await
}

/// Applies a step of the customer's, which only a session still waiting for the customer can
/// take (anything else is a 409 naming the session's state), and answers the session.
async fn customer_step(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
    action: &'static str,
    step: impl FnOnce(&mut crate::store::SessionRecord, chrono::DateTime<Utc>) + Send,
) -> Result<Response, Problem> {
    let id = path.session_id;
    let now = Utc::now();
    let session = state
        .mutate(id, |record, _| match record.progress {
            Progress::WaitingForCustomer { .. } => {
                step(record, now);
                Ok(())
            }
            other => Err(conflict(action, &other)),
        })
        .await?;
    Ok(Json(session).into_response())
}

/// The e-mails the service sent to the subject.
async fn notifications(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let id = path.session_id;
    let store = state.read_store();
    let record = store
        .sessions
        .get(&id)
        .ok_or_else(|| Problem::not_found(format!("There is no session with id {id}.")))?;
    Ok(Json(json!({ "notifications": record.notifications })).into_response())
}

/// The `api-version` each operation's requests about the session carried
/// ([`crate::api_versions`]): 404 for a session the mock does not hold.
async fn api_versions(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let id = path.session_id;
    if !state.read_store().sessions.contains_key(&id) {
        return Err(Problem::not_found(format!(
            "There is no session with id {id}."
        )));
    }
    Ok(Json(state.api_versions.of(id)).into_response())
}

/// Forces a provider's outcome for this session: body `{"status": "ERROR"}` (or SUCCESS,
/// FORBIDDEN, UNSUPPORTED_COUNTRY, WAITING_FOR_PROVIDER, ID_TAX_ONLY). It applies once the
/// customer has consented to the provider's data.
async fn set_source_status(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SourcePath>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Problem> {
    let id = path.session_id;
    let source_id = path.source_id;
    known_source(&source_id)?;
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Problem::payload_too_large(format!(
                "The request body is larger than the {CONTROL_BODY_LIMIT} bytes this endpoint reads."
            ))
        } else {
            Problem::bad_request(format!("The request body could not be read: {rejection}"))
        }
    })?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        Problem::invalid_field("$", format!("The request body is not valid JSON: {e}."))
    })?;
    let raw = value
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let status = SourceOverride::parse(&raw).ok_or_else(|| {
        Problem::invalid_field(
            "status",
            format!(
                "'{raw}' is not a status a provider can be forced to; use SUCCESS, ERROR, FORBIDDEN, \
                 UNSUPPORTED_COUNTRY, WAITING_FOR_PROVIDER or ID_TAX_ONLY."
            ),
        )
    })?;
    state
        .mutate(id, |record, _| {
            record.source_overrides.insert(source_id.clone(), status);
            Ok(())
        })
        .await?;
    Ok(Json(json!({ "sourceId": source_id, "status": raw })).into_response())
}

/// Removes a forced outcome: the provider behaves as configured again.
async fn clear_source_status(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SourcePath>,
) -> Result<Response, Problem> {
    let id = path.session_id;
    let source_id = path.source_id;
    known_source(&source_id)?;
    state
        .mutate(id, |record, _| {
            record.source_overrides.remove(&source_id);
            Ok(())
        })
        .await?;
    Ok(Json(json!({ "sourceId": source_id, "status": null })).into_response())
}

fn known_source(source_id: &str) -> Result<(), Problem> {
    catalog::provider(source_id).map(|_| ()).ok_or_else(|| {
        Problem::not_found(format!(
            "There is no provider '{source_id}'; GET /v1/consumer/packages lists them."
        ))
    })
}
