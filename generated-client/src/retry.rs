//! When a failed call is tried again, and how long to wait first.
//!
//! Safe by construction: an operation the API description does not make idempotent (every POST
//! and PATCH: creating a Session e-mails a consumer) is repeated only when the request provably
//! never reached the server: the connection could not be made, or no access token could be
//! obtained for it. Idempotent operations (GET) are also repeated after timeouts, broken
//! connections and the statuses 408, 429, 502, 503, 504, with exponential backoff and full
//! jitter, honouring `Retry-After`, bounded by attempts and by total time.
//!
//! # `Retry-After`
//!
//! A `Retry-After` (delta-seconds or an HTTP date) replaces the backoff before the next attempt.
//! When it asks for a wait longer than [`RetryPolicy::max_backoff`], or one that would end past
//! [`RetryPolicy::max_elapsed`], the client does not retry at all and returns the error at once:
//! retrying sooner would ignore what the server asked (a 429 would most likely be answered with
//! another 429), and waiting longer would hold the caller beyond the bounds it chose. The
//! server's wish stays readable in [`ApiError::retry_after`](crate::error::ApiError::retry_after)
//! for callers that prefer to schedule the call again themselves.
//!
//! The 401 handling (one token refresh, one more try) is not a retry in this sense: it happens
//! even with retries [disabled](RetryPolicy::disabled), and does not count against
//! [`RetryPolicy::max_attempts`].

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// How failed calls are retried. [`RetryPolicy::default`] suits interactive and batch use;
/// [`RetryPolicy::disabled`] makes every call a single attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 disables retries; 0 is refused by
    /// [`ClientBuilder::build`](crate::ClientBuilder::build)).
    pub max_attempts: u32,
    /// The ceiling of the backoff before the first retry; it doubles with each further retry.
    pub initial_backoff: Duration,
    /// The longest wait before one retry: the backoff's ceiling, and the longest `Retry-After`
    /// honoured (a longer one ends retrying; see the [module documentation](self)).
    pub max_backoff: Duration,
    /// No retry starts that would begin later than this after the first attempt started
    /// (attempts and waits included).
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    /// Four attempts, 200 ms initial backoff, 20 s longest wait, 60 s in total.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(20),
            max_elapsed: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Every call is a single attempt.
    pub fn disabled() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The full-jitter backoff before retry number `retry` (1 for the first retry): a random
    /// duration between zero and `min(max_backoff, initial_backoff × 2^(retry-1))`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = retry.saturating_sub(1).min(30);
        let ceiling = self
            .initial_backoff
            .saturating_mul(1u32 << exp)
            .min(self.max_backoff);
        ceiling.mul_f64(fastrand::f64())
    }

    /// The wait before retry number `retry` after a failure whose server asked for
    /// `retry_after`, or `None` when the policy ends retrying here. `elapsed` is the time since
    /// the first attempt started.
    pub(crate) fn next_delay(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
        elapsed: Duration,
    ) -> Option<Duration> {
        if retry >= self.max_attempts {
            return None;
        }
        let delay = match retry_after {
            Some(asked) if asked > self.max_backoff => return None,
            Some(asked) => asked,
            None => self.backoff(retry),
        };
        (elapsed.saturating_add(delay) <= self.max_elapsed).then_some(delay)
    }
}

/// Whether a failed attempt may be repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Retryable {
    /// Not without risking a second effect, or pointless.
    No,
    /// After the given delay at the earliest (from `Retry-After`), else after a backoff.
    Yes { not_before: Option<Duration> },
}

/// Whether a transport failure may be repeated. A connect failure (including a connect
/// timeout) never reached the server, so any operation may be repeated; other failures
/// (timeouts, resets) may have been processed, so only idempotent operations are.
pub(crate) fn transport_retryable(idempotent: bool, error: &reqwest::Error) -> Retryable {
    let never_sent = error.is_connect();
    let maybe_processed = error.is_timeout() || error.is_request();
    if never_sent || (idempotent && maybe_processed) {
        Retryable::Yes { not_before: None }
    } else {
        Retryable::No
    }
}

/// Whether a call whose success answer broke off while its body was read (the connection
/// closed before the declared length, a chunked body ended early, the attempt's timeout
/// passed) may be repeated: the service acted on the request, so only an idempotent operation.
pub(crate) fn body_retryable(idempotent: bool) -> Retryable {
    if idempotent {
        Retryable::Yes { not_before: None }
    } else {
        Retryable::No
    }
}

/// Whether a response status may be repeated: only for idempotent operations.
pub(crate) fn status_retryable(
    idempotent: bool,
    status: StatusCode,
    headers: &HeaderMap,
) -> Retryable {
    if idempotent && is_retryable_status(status) {
        Retryable::Yes {
            not_before: retry_after(headers, SystemTime::now()),
        }
    } else {
        Retryable::No
    }
}

/// 408, 429, 502, 503 and 504: the statuses that say "not now" rather than "not this".
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429 | 502 | 503 | 504)
}

/// `Retry-After` as a delay: delta-seconds or an HTTP date (RFC 9110 §10.2.3), measured from
/// `now`. A date in the past means "now"; an unreadable value is ignored.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            retry_after(&headers("7"), now),
            Some(Duration::from_secs(7))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(
            retry_after(&headers(&later), now),
            Some(Duration::from_secs(90))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(retry_after(&headers(&earlier), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&headers("-3"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_is_full_jitter_under_an_exponential_ceiling() {
        let policy = RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            ..RetryPolicy::default()
        };
        for _ in 0..200 {
            assert!(policy.backoff(1) <= Duration::from_millis(100));
            assert!(policy.backoff(2) <= Duration::from_millis(200));
            assert!(policy.backoff(10) <= Duration::from_millis(500));
            assert!(policy.backoff(u32::MAX) <= Duration::from_millis(500));
        }
        let spread: std::collections::BTreeSet<_> = (0..50).map(|_| policy.backoff(3)).collect();
        assert!(
            spread.len() > 10,
            "backoff should be randomised, got {spread:?}"
        );
    }

    #[test]
    fn next_delay_is_bounded_by_attempts_time_and_the_longest_wait() {
        let policy = RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(10),
        };
        let zero = Duration::ZERO;
        assert!(policy.next_delay(1, None, zero).is_some());
        assert!(policy.next_delay(2, None, zero).is_some());
        assert_eq!(policy.next_delay(3, None, zero), None, "attempts exhausted");
        let asked = Some(Duration::from_secs(4));
        assert_eq!(
            policy.next_delay(1, asked, zero),
            asked,
            "Retry-After replaces the backoff"
        );
        assert_eq!(
            policy.next_delay(1, Some(Duration::from_secs(6)), zero),
            None,
            "a Retry-After beyond max_backoff ends retrying"
        );
        assert_eq!(
            policy.next_delay(1, asked, Duration::from_secs(7)),
            None,
            "a wait that would end past max_elapsed ends retrying"
        );
        assert_eq!(RetryPolicy::disabled().next_delay(1, None, zero), None);
    }

    #[test]
    fn only_idempotent_operations_retry_on_status() {
        let h = HeaderMap::new();
        assert_eq!(
            status_retryable(false, StatusCode::SERVICE_UNAVAILABLE, &h),
            Retryable::No
        );
        for status in [408, 429, 502, 503, 504] {
            assert_eq!(
                status_retryable(true, StatusCode::from_u16(status).unwrap(), &h),
                Retryable::Yes { not_before: None },
                "{status}"
            );
        }
        for status in [400, 401, 403, 404, 409, 500, 501] {
            assert_eq!(
                status_retryable(true, StatusCode::from_u16(status).unwrap(), &h),
                Retryable::No,
                "{status}"
            );
        }
        assert_eq!(
            status_retryable(true, StatusCode::TOO_MANY_REQUESTS, &headers("3")),
            Retryable::Yes {
                not_before: Some(Duration::from_secs(3))
            }
        );
    }
}
