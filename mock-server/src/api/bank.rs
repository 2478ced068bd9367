//! Bank data: account statements (JSON, Excel, TSV), all transactions in one workbook, and their
//! categorization.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use uuid::Uuid;

use super::path::{SessionPath, ValidPath};
use super::{download, read};
use crate::data::bank::Account;
use crate::problem::Problem;
use crate::render;
use crate::state::{AppState, Context};

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// `/v1/sessions/{sessionId}/account-statements...` and `.../categorizations...`
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/v1/sessions/{sessionId}/account-statements",
            get(account_statements),
        )
        .route(
            "/v1/sessions/{sessionId}/account-statements/transactions/excel",
            get(transactions_excel),
        )
        .route(
            "/v1/sessions/{sessionId}/account-statements/{accountStatementId}/excel",
            get(statement_excel),
        )
        .route(
            "/v1/sessions/{sessionId}/account-statements/{accountStatementId}/tsv",
            get(statement_tsv),
        )
        .route(
            "/v1/sessions/{sessionId}/categorizations-summary",
            get(categorizations_summary),
        )
        .route(
            "/v1/sessions/{sessionId}/categorizations",
            get(categorizations),
        )
}

/// `{sessionId}/account-statements/{accountStatementId}`: the statement id is the service's own
/// string.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct StatementPath {
    session_id: Uuid,
    account_statement_id: String,
}

async fn account_statements(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).account_statements()).into_response())
}

async fn transactions_excel(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    let view = context.view(&state.config);
    let accounts: Vec<&crate::data::Account> =
        view.accounts().into_iter().map(|(_, _, a)| a).collect();
    let bytes = render::xlsx::transactions(
        &accounts,
        &format!("Transactions of session {}", context.record.id),
    )
    .map_err(|e| Problem::internal(format!("the workbook could not be written: {e}")))?;
    Ok(download(
        bytes,
        XLSX,
        &format!("transactions-{}.xlsx", context.record.id),
    ))
}

fn statement_not_found(context: &Context, id: &str) -> Problem {
    Problem::not_found(format!(
        "Session {} has no delivered account statement '{id}' (see GET .../account-statements).",
        context.record.id
    ))
}

async fn statement_excel(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<StatementPath>,
) -> Result<Response, Problem> {
    statement_file(
        &state,
        &path,
        render::xlsx::statement,
        "workbook",
        XLSX,
        "xlsx",
    )
    .await
}

async fn statement_tsv(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<StatementPath>,
) -> Result<Response, Problem> {
    let tsv = "text/tab-separated-values";
    statement_file(&state, &path, render::tsv::statement, "TSV", tsv, "tsv").await
}

/// One delivered account statement rendered as a download (`what` names the format in the
/// error a failed rendering gives).
async fn statement_file<E: std::fmt::Display>(
    state: &Arc<AppState>,
    path: &StatementPath,
    render: fn(&Account) -> Result<Vec<u8>, E>,
    what: &str,
    media_type: &str,
    extension: &str,
) -> Result<Response, Problem> {
    let context = read(state, path.session_id).await?;
    let view = context.view(&state.config);
    let id = path.account_statement_id.as_str();
    let account = view
        .account(id)
        .ok_or_else(|| statement_not_found(&context, id))?;
    let bytes = render(account)
        .map_err(|e| Problem::internal(format!("the {what} could not be written: {e}")))?;
    Ok(download(
        bytes,
        media_type,
        &format!("account-statement-{}.{extension}", account.id),
    ))
}

async fn categorizations_summary(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).categorizations_summary()).into_response())
}

async fn categorizations(
    State(state): State<Arc<AppState>>,
    ValidPath(path): ValidPath<SessionPath>,
) -> Result<Response, Problem> {
    let context = read(&state, path.session_id).await?;
    Ok(Json(context.view(&state.config).categorizations()).into_response())
}
