//! Credit data: the datasets a session's bureaus and registers deliver, each a JSON document
//! built by [`crate::views`].

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::path::{SessionPath, ValidPath};
use super::read;
use crate::problem::Problem;
use crate::state::AppState;

/// `/v1/sessions/{sessionId}/<dataset>` for the credit datasets.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/v1/sessions/{sessionId}/court-and-insolvencies",
            get(court_and_insolvencies),
        )
        .route("/v1/sessions/{sessionId}/immovables", get(immovables))
        .route(
            "/v1/sessions/{sessionId}/legal-entities",
            get(legal_entities),
        )
        .route("/v1/sessions/{sessionId}/metrics", get(metrics))
        .route(
            "/v1/sessions/{sessionId}/negative-tradelines",
            get(negative_tradelines),
        )
        .route(
            "/v1/sessions/{sessionId}/person-details",
            get(person_details),
        )
        .route(
            "/v1/sessions/{sessionId}/positive-tradelines",
            get(positive_tradelines),
        )
        .route(
            "/v1/sessions/{sessionId}/registry-incomes",
            get(registry_incomes),
        )
        .route("/v1/sessions/{sessionId}/scores", get(scores))
}

macro_rules! dataset_handler {
    ($name:ident, $method:ident) => {
        async fn $name(
            State(state): State<Arc<AppState>>,
            ValidPath(path): ValidPath<SessionPath>,
        ) -> Result<Response, Problem> {
            let context = read(&state, path.session_id).await?;
            Ok(Json(context.view(&state.config).$method()).into_response())
        }
    };
}

dataset_handler!(court_and_insolvencies, court_and_insolvencies);
dataset_handler!(immovables, immovables);
dataset_handler!(legal_entities, legal_entities);
dataset_handler!(metrics, metrics);
dataset_handler!(negative_tradelines, negative_tradelines);
dataset_handler!(person_details, person_details);
dataset_handler!(positive_tradelines, positive_tradelines);
dataset_handler!(registry_incomes, registry_incomes);
dataset_handler!(scores, scores);
