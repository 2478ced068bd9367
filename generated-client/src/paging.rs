//! The session search (`GET /v1/sessions`) as a stream of sessions, paged with `Skip`/`Take`.
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//! use creditdata_client::types::CustomerProgressStatusInput;
//!
//! async fn waiting_in_estonia(client: &Client) -> Result<Vec<types::Session>> {
//!     let filter = SessionFilter::new()
//!         .country_code("EST")
//!         .status(CustomerProgressStatusInput::WaitingForCustomer)
//!         .created_from(chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap());
//!     let mut sessions = client.sessions(filter.clone());
//!     while let Some(session) = sessions.try_next().await? {
//!         println!("{} {}", session.id, session.customer_progress_status);
//!     }
//!     // Or all at once:
//!     client.all_sessions(filter).await
//! }
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
//! The stream ends when `Skip` reaches the page's `paging.totalCount`. Offset paging is not a
//! snapshot: sessions created or removed while paging can shift the pages. A session that
//! arrives a second time (the pages shifted forward) is not yielded again; one that moved to
//! an earlier page while paging is not seen.
//!
//! # A server cannot make it loop or lie
//!
//! The stream ends with [`Error::InvalidResponse`] instead of looping, repeating sessions or
//! silently stopping short, when a page:
//!
//! - has no `paging` (nothing would tell whether sessions are missing);
//! - says it starts at another `paging.skip` than the `Skip` it was requested with;
//! - holds only sessions already yielded (the server ignores `Skip`);
//! - is empty while `totalCount` says more sessions follow, or holds more than `totalCount`
//!   leaves room for;
//! - would be page number [`SessionFilter::max_pages`] + 1 (default [`DEFAULT_MAX_PAGES`]).
//!
//! The ids already yielded are remembered for the duplicate check (16 bytes each, bounded by
//! the page cap).
//!
//! Errors come out of the stream as [`Error`] (the client has already retried what its retry
//! policy allows); the stream ends after the first one.

use std::collections::HashSet;

use chrono::NaiveDate;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt, stream};
use uuid::Uuid;

use crate::call_options::CallOptions;
use crate::types::{CustomerProgressStatusInput, Session};
use crate::{Client, Error, Result};

/// The page size (`Take`) used unless [`SessionFilter::page_size`] says otherwise.
pub const DEFAULT_PAGE_SIZE: u32 = 100;

/// The most pages one search requests unless [`SessionFilter::max_pages`] says otherwise: a
/// million sessions at the default page size.
pub const DEFAULT_MAX_PAGES: u32 = 10_000;

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
    max_pages: u32,
    options: Option<CallOptions>,
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
            max_pages: DEFAULT_MAX_PAGES,
            options: None,
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

    /// The most pages to request (default [`DEFAULT_MAX_PAGES`]): a listing that would need
    /// more ends the stream with [`Error::InvalidResponse`] after this many, so no server can
    /// keep it going forever. Narrow the filter, or raise the cap, to list more.
    pub fn max_pages(mut self, pages: u32) -> Self {
        self.max_pages = pages;
        self
    }

    /// Options for every page's call (each page gets its own deadline): see
    /// [`crate::call_options`].
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = Some(match self.options.take() {
            Some(earlier) => earlier.then(options),
            None => options,
        });
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
    /// `paging.totalCount` as the service reported it with this page (always present: a page
    /// without one ends the stream with an error).
    pub total_count: Option<u32>,
}

/// Where the next request starts, or that there is none; what has been seen so far.
struct Cursor {
    client: Client,
    filter: SessionFilter,
    next_skip: Option<u32>,
    /// Pages requested so far.
    pages: u32,
    /// The ids of the sessions yielded so far.
    seen: HashSet<Uuid>,
}

fn operation_id() -> &'static str {
    <crate::builder::GetSessions<'static> as crate::operation::Operation>::META.id
}

fn invalid(message: String) -> Error {
    Error::InvalidRequest {
        operation: Some(operation_id()),
        message,
    }
}

fn untrustworthy(message: String) -> Error {
    Error::InvalidResponse {
        operation: Some(operation_id()),
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
    if cursor.pages >= filter.max_pages {
        return Err(untrustworthy(format!(
            "the listing did not end after {} pages (SessionFilter::max_pages); narrow the \
             filter or raise the cap",
            filter.max_pages
        )));
    }

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
    let response = match &filter.options {
        Some(options) => request.options(options.clone()).call().await?,
        None => request.call().await?,
    };
    cursor.pages += 1;

    let Some(paging) = response.paging else {
        return Err(untrustworthy(format!(
            "the page requested with Skip={skip} has no `paging`, so nothing tells whether \
             sessions are missing"
        )));
    };
    if let Some(page_skip) = paging.skip
        && i64::from(page_skip) != i64::from(skip)
    {
        return Err(untrustworthy(format!(
            "the page requested with Skip={skip} says it starts at {page_skip}: the service \
             does not honour Skip"
        )));
    }
    let total = u32::try_from(paging.total_count).map_err(|_| {
        untrustworthy(format!(
            "the page requested with Skip={skip} reports a negative totalCount ({})",
            paging.total_count
        ))
    })?;
    let sessions = response.sessions.unwrap_or_default();
    let received = sessions.len();
    if sessions.is_empty() {
        if skip < total {
            return Err(untrustworthy(format!(
                "totalCount is {total}, but the page requested with Skip={skip} is empty: {} \
                 sessions would be missing",
                total - skip
            )));
        }
        cursor.next_skip = None;
        return Ok(Some((
            SessionPage {
                sessions,
                skip,
                total_count: Some(total),
            },
            cursor,
        )));
    }
    let after = u32::try_from(received)
        .ok()
        .and_then(|n| skip.checked_add(n))
        .filter(|after| *after <= total)
        .ok_or_else(|| {
            untrustworthy(format!(
                "the page requested with Skip={skip} holds {received} sessions, more than \
                 totalCount {total} leaves room for"
            ))
        })?;
    let mut fresh = Vec::with_capacity(received);
    for session in sessions {
        if cursor.seen.insert(session.id) {
            fresh.push(session);
        }
    }
    if fresh.is_empty() {
        return Err(untrustworthy(format!(
            "the page requested with Skip={skip} repeats only sessions already received: the \
             service does not honour Skip"
        )));
    }
    if fresh.len() < received {
        tracing::debug!(
            skip,
            repeated = received - fresh.len(),
            "sessions seen on an earlier page were skipped (the listing shifted)"
        );
    }
    cursor.next_skip = (after < total).then_some(after);
    Ok(Some((
        SessionPage {
            sessions: fresh,
            skip,
            total_count: Some(total),
        },
        cursor,
    )))
}

/// Paged session search (see the [module documentation](self)).
impl Client {
    /// Every session matching `filter`, as a stream, fetching one page per `page_size`
    /// sessions as it is consumed. Boxed, so it is `Unpin` (`try_next()` needs no pinning),
    /// `Send` and `'static` (it holds a clone of the client): it can be stored in a struct or
    /// moved into a task.
    pub fn sessions(&self, filter: SessionFilter) -> BoxStream<'static, Result<Session>> {
        self.session_pages(filter)
            .map_ok(|page| stream::iter(page.sessions.into_iter().map(Ok)))
            .try_flatten()
            .boxed()
    }

    /// The same search page by page, with the `Skip` and `totalCount` of each page (e.g. for a
    /// progress display). Never yields an empty page, nor a session already yielded (a page's
    /// `sessions` may then be fewer than it held).
    /// Boxed like [`Client::sessions`].
    pub fn session_pages(&self, filter: SessionFilter) -> BoxStream<'static, Result<SessionPage>> {
        let cursor = Cursor {
            client: self.clone(),
            next_skip: Some(filter.start),
            filter,
            pages: 0,
            seen: HashSet::new(),
        };
        stream::try_unfold(cursor, next_page)
            .try_filter(|page| futures_util::future::ready(!page.sessions.is_empty()))
            .boxed()
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
