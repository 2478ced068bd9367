//! Bank data: account statements (JSON, Excel, TSV), all transactions in one workbook, and their
//! categorization.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use uuid::Uuid;

use super::download::download;
use super::path::{SessionPath, ValidPath};
use super::registration::Registration;
use crate::data::bank::Account;
use crate::problem::Problem;
use crate::render;
use crate::state::{AppState, Context, read};

const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// The account statements and categorizations, by operationId.
pub fn handlers() -> Vec<Registration> {
    vec![
        Registration::new("GetAccountStatements", account_statements),
        Registration::new("GetAccountStatementTransactionsExcel", transactions_excel),
        Registration::new("GetAccountStatementExcel", statement_excel),
        Registration::new("GetAccountStatementTsv", statement_tsv),
        Registration::new("GetCategorizationsSummary", categorizations_summary),
        Registration::new("GetCategorizations", categorizations),
    ]
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
