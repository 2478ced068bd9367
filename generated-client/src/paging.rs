//! The session search (`GET /v1/sessions`) as a stream of sessions, paged with `Skip`/`Take`.
//!
//! ```no_run
//! # async fn f(client: &creditdata_client::Client) -> creditdata_client::Result<()> {
//! use creditdata_client::paging::SessionFilter;
//! use creditdata_client::types::CustomerProgressStatusInput;
//! use futures::TryStreamExt;
//!
//! let filter = SessionFilter::new()
//!     .country_code("EST")
//!     .status(CustomerProgressStatusInput::WaitingForCustomer)
//!     .created_from(chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap());
//! let mut sessions = std::pin::pin!(client.sessions(filter.clone()));
//! while let Some(session) = sessions.try_next().await? {
//!     println!("{} {}", session.id, session.customer_progress_status);
//! }
//! // Or all at once:
//! let all = client.all_sessions(filter).await?;
//! # Ok(()) }
//! ```
//!
//! # How paging works
//!
//! Pages are requested one at a time, lazily, as the stream is consumed, each with
//! `Take` = the page size ([`DEFAULT_PAGE_SIZE`], or [`SessionFilter::page_size`]) and `Skip` =
//! the number of sessions received so far. The service publishes neither the default nor the
//! maximum of `Take`; if it returns fewer sessions than asked (a server-side cap), the next
//! `Skip` still follows what actually arrived, so nothing is skipped.
//!
//! The stream ends when `Skip` reaches `paging.totalCount`, or when a page comes back empty
//! (so a server that misreports `totalCount`, or omits `paging`, cannot make it loop forever).
//! Offset paging is not a snapshot: sessions created or removed while paging can shift the
//! pages, so a session may be seen twice or not at all.
//!
//! Errors come out of the stream as [`Error`] (the client has already retried what its retry
//! policy allows); the stream ends after the first one.

use chrono::NaiveDate;
use futures::{Stream, TryStreamExt, stream};

use crate::operation::OperationExt;
use crate::types::{CustomerProgressStatusInput, Session};
use crate::{Client, Error, Result};

/// The page size (`Take`) used unless [`SessionFilter::page_size`] says otherwise.
pub const DEFAULT_PAGE_SIZE: u32 = 100;

/// Filters of the session search, plus the page size. All filters are optional and combine
/// (the service applies them together); an empty filter lists every session the caller may see.
///
/// Each setter maps to one query parameter of `GET /v1/sessions` (named in its documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFilter {
    subject_email: Option<String>,
    subject_full_name: Option<String>,
    country_code: Option<String>,
    created_from: Option<NaiveDate>,
    created_to: Option<NaiveDate>,
    status: Option<CustomerProgressStatusInput>,
    created_by_name: Option<String>,
    organizational_unit_name: Option<String>,
    page_size: u32,
    start: u32,
}

impl Default for SessionFilter {
    fn default() -> Self {
        SessionFilter {
            subject_email: None,
            subject_full_name: None,
            country_code: None,
            created_from: None,
            created_to: None,
            status: None,
            created_by_name: None,
            organizational_unit_name: None,
            page_size: DEFAULT_PAGE_SIZE,
            start: 0,
        }
    }
}

impl SessionFilter {
    /// No filters, [`DEFAULT_PAGE_SIZE`], starting at the first session.
    pub fn new() -> Self {
        Self::default()
    }

    /// `SubjectEmail`: the Data Subject's e-mail.
    pub fn subject_email(mut self, email: impl Into<String>) -> Self {
        self.subject_email = Some(email.into());
        self
    }

    /// `SubjectFullName`: the Data Subject's full name (empty until the subject has identified).
    pub fn subject_full_name(mut self, name: impl Into<String>) -> Self {
        self.subject_full_name = Some(name.into());
        self
    }

    /// `CountryCode`: an ISO 3166-1 alpha-3 country requested in the session (e.g. `EST`).
    pub fn country_code(mut self, code: impl Into<String>) -> Self {
        self.country_code = Some(code.into());
        self
    }

    /// `CreatedFromUtc`: sessions created on or after this date (UTC).
    pub fn created_from(mut self, date: NaiveDate) -> Self {
        self.created_from = Some(date);
        self
    }

    /// `CreatedToUtc`: sessions created up to this date (UTC). Whether the day itself is
    /// included is the service's choice; it is not published.
    pub fn created_to(mut self, date: NaiveDate) -> Self {
        self.created_to = Some(date);
        self
    }

    /// `CustomerProgressStatus`: sessions in this state.
    pub fn status(mut self, status: CustomerProgressStatusInput) -> Self {
        self.status = Some(status);
        self
    }

    /// `CreatedByName`: the name of the user who created the session.
    pub fn created_by_name(mut self, name: impl Into<String>) -> Self {
        self.created_by_name = Some(name.into());
        self
    }

    /// `OrganizationalUnitName`: the organizational unit of the session.
    pub fn organizational_unit_name(mut self, name: impl Into<String>) -> Self {
        self.organizational_unit_name = Some(name.into());
        self
    }

    /// `Take`: how many sessions to ask for per request (default [`DEFAULT_PAGE_SIZE`]). The
    /// service's own default and maximum are not published; a smaller page than asked is
    /// handled (see the [module documentation](self)). Must be between 1 and [`MAX_TAKE`](crate::limits::MAX_TAKE), or the
    /// stream fails with [`Error::InvalidRequest`] before sending anything.
    pub fn page_size(mut self, take: u32) -> Self {
        self.page_size = take;
        self
    }

    /// Starts at this offset (`Skip` of the first request; default 0), e.g. to resume.
    pub fn starting_at(mut self, skip: u32) -> Self {
        self.start = skip;
        self
    }

    /// The page size in effect.
    pub fn get_page_size(&self) -> u32 {
        self.page_size
    }
}

/// One page of the session search, as [`Client::session_pages`] yields it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPage {
    /// The sessions of this page, in the service's order.
    pub sessions: Vec<Session>,
    /// The `Skip` this page was requested with.
    pub skip: u32,
    /// `paging.totalCount` as the service reported it with this page, if it did.
    pub total_count: Option<u32>,
}

/// Where the next request starts, or that there is none.
struct Cursor {
    client: Client,
    filter: SessionFilter,
    next_skip: Option<u32>,
}

fn invalid(message: String) -> Error {
    Error::InvalidRequest {
        operation: Some(
            <crate::builder::GetSessions<'static> as crate::operation::Operation>::META.id,
        ),
        message,
    }
}

async fn next_page(mut cursor: Cursor) -> Result<Option<(SessionPage, Cursor)>> {
    let Some(skip) = cursor.next_skip else {
        return Ok(None);
    };
    let filter = &cursor.filter;
    let take = std::num::NonZeroU32::new(filter.page_size)
        .filter(|take| take.get() <= crate::limits::MAX_TAKE)
        .ok_or_else(|| {
            invalid(format!(
                "page size {} is not between 1 and {}",
                filter.page_size,
                crate::limits::MAX_TAKE
            ))
        })?;
    let skip_param = i32::try_from(skip)
        .map_err(|_| invalid(format!("Skip {skip} is larger than {}", i32::MAX)))?;

    let mut request = cursor.client.get_sessions().skip(skip_param).take(take);
    if let Some(v) = &filter.subject_email {
        request = request.subject_email(v.clone());
    }
    if let Some(v) = &filter.subject_full_name {
        request = request.subject_full_name(v.clone());
    }
    if let Some(v) = &filter.country_code {
        request = request.country_code(v.clone());
    }
    if let Some(v) = filter.created_from {
        request = request.created_from_utc(v);
    }
    if let Some(v) = filter.created_to {
        request = request.created_to_utc(v);
    }
    if let Some(v) = filter.status {
        request = request.customer_progress_status(v);
    }
    if let Some(v) = &filter.created_by_name {
        request = request.created_by_name(v.clone());
    }
    if let Some(v) = &filter.organizational_unit_name {
        request = request.organizational_unit_name(v.clone());
    }
    let response = request.call().await?;

    let sessions = response.sessions.unwrap_or_default();
    // A negative count is treated as "nothing more".
    let total_count = response
        .paging
        .map(|p| u32::try_from(p.total_count).unwrap_or(0));
    let after = u32::try_from(sessions.len())
        .ok()
        .and_then(|n| skip.checked_add(n));
    cursor.next_skip = match (after, total_count) {
        _ if sessions.is_empty() => None,
        (None, _) => None,
        (Some(after), Some(total)) if after >= total => None,
        (Some(after), _) => Some(after),
    };
    Ok(Some((
        SessionPage {
            sessions,
            skip,
            total_count,
        },
        cursor,
    )))
}

/// Paged session search (see the [module documentation](self)).
impl Client {
    /// Every session matching `filter`, as a stream, fetching one page per `page_size`
    /// sessions as it is consumed. `Send` and `'static` (it holds a clone of the client).
    pub fn sessions(
        &self,
        filter: SessionFilter,
    ) -> impl Stream<Item = Result<Session>> + Send + 'static {
        self.session_pages(filter)
            .map_ok(|page| stream::iter(page.sessions.into_iter().map(Ok)))
            .try_flatten()
    }

    /// The same search page by page, with the `Skip` and `totalCount` of each page (e.g. for a
    /// progress display). Never yields an empty page.
    pub fn session_pages(
        &self,
        filter: SessionFilter,
    ) -> impl Stream<Item = Result<SessionPage>> + Send + 'static {
        let cursor = Cursor {
            client: self.clone(),
            next_skip: Some(filter.start),
            filter,
        };
        stream::try_unfold(cursor, next_page)
            .try_filter(|page| futures::future::ready(!page.sessions.is_empty()))
    }

    /// Every session matching `filter`, collected into one `Vec` (all pages are requested
    /// before this returns; for large result sets prefer [`Client::sessions`]).
    pub async fn all_sessions(&self, filter: SessionFilter) -> Result<Vec<Session>> {
        self.sessions(filter).try_collect().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_builder_sets_fields() {
        let date = NaiveDate::from_ymd_opt(2026, 2, 3).unwrap();
        let f = SessionFilter::new()
            .created_from(date)
            .page_size(7)
            .starting_at(3);
        assert_eq!(f.created_from, Some(date));
        assert_eq!(f.get_page_size(), 7);
        assert_eq!(f.start, 3);
        assert_eq!(SessionFilter::default().get_page_size(), DEFAULT_PAGE_SIZE);
    }

    #[tokio::test]
    async fn an_invalid_page_size_fails_before_sending() {
        // Nothing listens on this client's address: an error other than InvalidRequest would
        // mean a request was attempted.
        let client = Client::builder()
            .base_url("http://127.0.0.1:9")
            .no_retries()
            .build()
            .unwrap();
        let err = client
            .all_sessions(SessionFilter::new().page_size(0))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidRequest { .. }), "{err:?}");
        assert!(err.to_string().contains("page size 0"), "{err}");
    }
}
