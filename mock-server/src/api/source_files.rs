//! Source files: the providers' original reports, listed, described and downloaded (base64).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use uuid::Uuid;

use super::path::{SessionPath, ValidPath};
use super::registration::Registration;
use crate::problem::Problem;
use crate::state::{AppState, read};

/// The source files, by operationId.
pub fn handlers() -> Vec<Registration> {
    vec![
        Registration::new("GetSourceFiles", source_files),
        Registration::new("GetSourceFile", source_file),
        Registration::new("GetSourceFileContent", source_file_content),
    ]
}

/// `{sessionId}/source-files/{sourceFileId}`
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SourceFilePath {
    session_id: Uuid,
    source_file_id: Uuid,
}

async fn source_files(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).source_files()).into_response())
}

async fn source_file(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SourceFilePath>,
) -> Result<Response, Problem> {
    let file_id = path.source_file_id;
    let context = read(&state, path.session_id).await?;
    context
        .view(&state.config)
        .source_files()
        .into_iter()
        .find(|file| file.id == file_id)
        .map(|file| Json(file).into_response())
        .ok_or_else(|| {
            Problem::not_found(format!(
                "Session {} has no source file {file_id}.",
                context.record.id
            ))
        })
}

async fn source_file_content(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SourceFilePath>,
) -> Result<Response, Problem> {
    let file_id = path.source_file_id;
    let context = read(&state, path.session_id).await?;
    context
        .view(&state.config)
        .source_file_content(file_id)
        .map(|content| Json(content).into_response())
        .ok_or_else(|| {
            Problem::not_found(format!(
                "Session {} has no source file {file_id}.",
                context.record.id
            ))
        })
}
