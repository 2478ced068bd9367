//! How much of a body the client reads: a limit per body, enforced whether or not the answer
//! declares its length, and recognisable in the error chain of a read that hit it.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::Stream;
use reqwest::ResponseBuilderExt;

/// The largest JSON success body read unless
/// [`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body) says otherwise:
/// 128 MiB. The service's largest JSON answers (a source file's Base64 content, the categorised
/// transactions of years of bank statements) stay far below it; a body that does not is either
/// broken or hostile.
pub const DEFAULT_MAX_RESPONSE_BODY: u64 = 128 * 1024 * 1024;

/// `response` with its body limited to `limit` bytes: refused at once when it declares a longer
/// `Content-Length`; read through [`CappedBody`] when it declares none (a declared length is
/// enforced by the HTTP stack: no more than that is ever read as this body). The identity
/// provider's reads use it (feature `oauth2`); a call's success body is read whole by the
/// runtime's door with the same rules (`runtime/call.rs`, `read_whole`).
#[cfg_attr(not(feature = "oauth2"), allow(dead_code))]
pub(crate) fn limit_body(
    response: reqwest::Response,
    limit: u64,
) -> Result<reqwest::Response, BodyLimitExceeded> {
    match response.content_length() {
        Some(length) if length > limit => Err(BodyLimitExceeded { limit }),
        Some(_) => Ok(response),
        None => Ok(capped(response, limit)),
    }
}

#[cfg_attr(not(feature = "oauth2"), allow(dead_code))]
fn capped(response: reqwest::Response, limit: u64) -> reqwest::Response {
    let url = response.url().clone();
    let status = response.status();
    let version = response.version();
    let headers = response.headers().clone();
    let body = CappedBody {
        inner: Box::pin(response.bytes_stream()),
        remaining: limit,
        limit,
        done: false,
    };
    let mut rebuilt = http::Response::builder()
        .status(status)
        .version(version)
        .url(url)
        .body(reqwest::Body::wrap_stream(body))
        .unwrap_or_else(|error| {
            // Every part came from a valid response, so the builder has nothing to refuse; if
            // it ever did, the body stays capped and only the URL is lost.
            tracing::debug!(%error, "rebuilding a capped response");
            http::Response::new(reqwest::Body::from(Bytes::new()))
        });
    *rebuilt.headers_mut() = headers;
    reqwest::Response::from(rebuilt)
}

/// A body stream that fails with [`BodyLimitExceeded`] instead of yielding more than `limit`
/// bytes, and ends there.
#[cfg_attr(not(feature = "oauth2"), allow(dead_code))]
struct CappedBody {
    inner: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    remaining: u64,
    limit: u64,
    done: bool,
}

impl Stream for CappedBody {
    type Item = Result<Bytes, Box<dyn std::error::Error + Send + Sync>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match ready!(this.inner.as_mut().poll_next(cx)) {
            Some(Ok(chunk)) => match this.remaining.checked_sub(chunk.len() as u64) {
                Some(remaining) => {
                    this.remaining = remaining;
                    Poll::Ready(Some(Ok(chunk)))
                }
                None => {
                    this.done = true;
                    let limit = this.limit;
                    Poll::Ready(Some(Err(Box::new(BodyLimitExceeded { limit }))))
                }
            },
            Some(Err(error)) => {
                this.done = true;
                Poll::Ready(Some(Err(Box::new(error))))
            }
            None => {
                this.done = true;
                Poll::Ready(None)
            }
        }
    }
}

/// Whether `error` (a body read) stopped at a body-size limit, and which.
pub(crate) fn body_limit_exceeded(error: &(dyn std::error::Error + 'static)) -> Option<u64> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(exceeded) = cause.downcast_ref::<BodyLimitExceeded>() {
            return Some(exceeded.limit);
        }
        source = cause.source();
    }
    None
}

/// A body was longer than the limit it was read with.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the body is larger than the limit of {limit} bytes")]
pub(crate) struct BodyLimitExceeded {
    pub(crate) limit: u64,
}
