//! The `/v1` operations of the effective API description, one module per part of the API, each
//! with its own routes: sessions (and the package catalog), source files, bank data, identity,
//! credit data. Path parameters are read in [`path`], request bodies checked in [`validate`].

mod bank;
mod credit;
mod identity;
pub mod path;
mod sessions;
mod source_files;
mod validate;

pub(crate) use validate::json_body;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use chrono::Utc;
use uuid::Uuid;

use crate::problem::Problem;
use crate::state::{AppState, Context};
use crate::store::Progress;

/// The `/v1` routes (the caller adds the bearer-token layer).
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .merge(sessions::routes())
        .merge(source_files::routes())
        .merge(bank::routes())
        .merge(identity::routes())
        .merge(credit::routes())
}

/// The session a read (of the session, a dataset or a file) is about, settled to now. With
/// `complete_on_read`, a customer still waiting completes first, so the read sees delivered
/// data; whatever happened before the first read (a resend, an extension) met a waiting
/// customer.
pub(crate) async fn read(state: &Arc<AppState>, id: Uuid) -> Result<Context, Problem> {
    if state.config.complete_on_read
        && matches!(
            state.context(id)?.record.progress,
            Progress::WaitingForCustomer { .. }
        )
    {
        state
            .mutate(id, |record, _| {
                if matches!(record.progress, Progress::WaitingForCustomer { .. }) {
                    record.complete(Utc::now());
                }
                Ok(())
            })
            .await?;
    }
    state.context(id)
}

/// A download: the bytes with Content-Type, Content-Length and Content-Disposition.
pub fn download(bytes: Vec<u8>, content_type: &str, file_name: &str) -> Response {
    let length = bytes.len();
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    let safe: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{safe}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}
