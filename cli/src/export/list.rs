//! The export's first step: the sessions the search matches, read page by page, and the
//! filters as the run's index records them.

use clap::ValueEnum;
use creditdata_client::types::Session;
use creditdata_client::{Client, Error};
use futures::stream::{self, Stream};
use futures::{StreamExt, TryStreamExt};
use serde_json::{Value, json};

use super::progress::Progress;
use crate::cli::ListArgs;

/// The matching sessions, at most `--limit`, one page in memory at a time. The first page's
/// total sets the progress's length.
pub fn sessions<'a>(
    client: &'a Client,
    filters: &ListArgs,
    progress: &'a Progress,
) -> impl Stream<Item = Result<Session, Error>> + 'a {
    let mut filter = crate::sessions::session_filter(filters);
    if let Some(page_size) = filters.page_size {
        filter = filter.page_size(page_size);
    }
    let limit = filters.limit.unwrap_or(u64::MAX);
    client
        .session_pages(filter)
        .map_ok(move |page| {
            if let Some(total) = page.total_count {
                progress.set_total(u64::from(total).min(limit));
            }
            stream::iter(page.sessions.into_iter().map(Ok::<Session, Error>))
        })
        .try_flatten()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
}

/// The search filters, recorded in the index. They may quote a person's e-mail or name: the
/// index lives in the owner-only tree with the data itself.
pub fn filters_json(filters: &ListArgs) -> Value {
    json!({
        "email": filters.email,
        "name": filters.name,
        "country": filters.country,
        "from": filters.from,
        "to": filters.to,
        "status": filters
            .status
            .and_then(|s| s.to_possible_value())
            .map(|v| v.get_name().to_string()),
        "createdBy": filters.created_by,
        "unit": filters.unit,
        "limit": filters.limit,
    })
}
