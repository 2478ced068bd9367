//! Credit data: the datasets a session's bureaus and registers deliver, each a JSON document
//! built by [`crate::views`].

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::path::{SessionPath, ValidPath};
use super::registration::Registration;
use crate::problem::Problem;
use crate::state::{AppState, read};

/// The credit datasets, by operationId.
pub fn handlers() -> Vec<Registration> {
    vec![
        Registration::new("GetCourtAndInsolvencies", court_and_insolvencies),
        Registration::new("GetImmovables", immovables),
        Registration::new("GetLegalEntities", legal_entities),
        Registration::new("GetMetrics", metrics),
        Registration::new("GetNegativeTradelines", negative_tradelines),
        Registration::new("GetPersonDetails", person_details),
        Registration::new("GetPositiveTradelines", positive_tradelines),
        Registration::new("GetRegistryIncomes", registry_incomes),
        Registration::new("GetScores", scores),
    ]
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
