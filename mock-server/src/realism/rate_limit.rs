//! The service's rate limit, emulated: per API client, refused with `429 Too Many Requests`, a
//! `Retry-After` in whole seconds and a problem body.
//!
//! The service does not publish its limits; the shape here is an assumption (see the crate
//! README): a token bucket (GCRA, by `governor`) refilled continuously at `N` per window and
//! holding one window's worth (`N`) unless another burst is given. The bucket of a request is
//! the API client of its *verified* bearer token (`azp`), else the remote address: a token that
//! does not verify cannot pick someone else's bucket, nor escape its sender's.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};

use super::connection::Connection;
use crate::idp::{IdentityProvider, bearer_token};
use crate::problem::Problem;

/// The most requests a limit may allow per window, and the largest burst.
pub const MAX_REQUESTS: u32 = 1_000_000;

/// The window a rate is counted over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Window {
    /// `N/s`.
    Second,
    /// `N/min`.
    Minute,
    /// `N/h`.
    Hour,
}

impl Window {
    fn suffix(self) -> &'static str {
        match self {
            Window::Second => "s",
            Window::Minute => "min",
            Window::Hour => "h",
        }
    }
}

/// A rate limit: `requests` per `window`, bursts of up to `burst` (default: `requests`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per window, sustained.
    pub requests: u32,
    /// The window.
    pub window: Window,
    /// The most requests accepted at once after a quiet spell; `None`: `requests`.
    pub burst: Option<u32>,
}

impl RateLimit {
    /// `requests` per second.
    pub fn per_second(requests: u32) -> Self {
        RateLimit {
            requests,
            window: Window::Second,
            burst: None,
        }
    }

    /// `requests` per minute.
    pub fn per_minute(requests: u32) -> Self {
        RateLimit {
            requests,
            window: Window::Minute,
            burst: None,
        }
    }

    /// `requests` per hour.
    pub fn per_hour(requests: u32) -> Self {
        RateLimit {
            requests,
            window: Window::Hour,
            burst: None,
        }
    }

    /// The same rate with bursts of up to `burst` requests.
    pub fn with_burst(mut self, burst: u32) -> Self {
        self.burst = Some(burst);
        self
    }

    /// The largest burst.
    pub fn burst_size(&self) -> u32 {
        self.burst.unwrap_or(self.requests)
    }

    /// `Err(reason)` when the values cannot be used.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=MAX_REQUESTS).contains(&self.requests) {
            return Err(format!(
                "the number of requests must be 1 to {MAX_REQUESTS}"
            ));
        }
        if !(1..=MAX_REQUESTS).contains(&self.burst_size()) {
            return Err(format!("the burst must be 1 to {MAX_REQUESTS}"));
        }
        Ok(())
    }

    fn quota(&self) -> Quota {
        let requests = NonZeroU32::new(self.requests).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(self.burst_size()).unwrap_or(NonZeroU32::MIN);
        let quota = match self.window {
            Window::Second => Quota::per_second(requests),
            Window::Minute => Quota::per_minute(requests),
            Window::Hour => Quota::per_hour(requests),
        };
        quota.allow_burst(burst)
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{} (burst {})",
            self.requests,
            self.window.suffix(),
            self.burst_size()
        )
    }
}

impl FromStr for RateLimit {
    type Err = String;

    /// `20/s`, `600/min`, `10000/h` (also `sec`, `second`, `m`, `minute`, `hour`).
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let syntax = || format!("`{text}` is not a rate; write N/s, N/min or N/h, e.g. 20/s");
        let (requests, window) = text.split_once('/').ok_or_else(syntax)?;
        if requests.is_empty() || !requests.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax());
        }
        let window = match window.trim() {
            "s" | "sec" | "second" => Window::Second,
            "m" | "min" | "minute" => Window::Minute,
            "h" | "hour" => Window::Hour,
            _ => return Err(syntax()),
        };
        let limit = RateLimit {
            requests: requests.parse().unwrap_or(u32::MAX),
            window,
            burst: None,
        };
        limit
            .check()
            .map_err(|reason| format!("`{text}`: {reason}"))?;
        Ok(limit)
    }
}

/// Whose bucket a request draws from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Bucket {
    /// The `azp` (authorized party: the OAuth2 client) of a verified token.
    Client(String),
    /// A request without a verified token: its remote address.
    Address(IpAddr),
}

/// Keyed token buckets over clock `C` (the monotonic clock; a fake one in tests).
struct Buckets<C: Clock> {
    limiter: RateLimiter<Bucket, HashMapStateStore<Bucket>, C, NoOpMiddleware<C::Instant>>,
    checks: AtomicU64,
}

/// How often (in checks) the buckets of idle callers are forgotten, bounding memory however
/// many addresses call.
const HOUSEKEEPING_EVERY: u64 = 1024;

impl<C: Clock> Buckets<C> {
    fn new(limit: &RateLimit, clock: C) -> Self {
        Buckets {
            limiter: RateLimiter::hashmap_with_clock(limit.quota(), clock),
            checks: AtomicU64::new(0),
        }
    }

    /// `Err(wait)` when `bucket` is empty: the time until it holds a request again.
    fn admit(&self, bucket: &Bucket) -> Result<(), Duration> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % HOUSEKEEPING_EVERY
            == HOUSEKEEPING_EVERY - 1
        {
            self.limiter.retain_recent();
        }
        self.limiter
            .check_key(bucket)
            .map(|_| ())
            .map_err(|not_until| not_until.wait_time_from(self.limiter.clock().now()))
    }
}

/// `Retry-After` for a wait: whole seconds rounded up, at least 1, so that a request sent
/// that many seconds later is accepted (unless others of the same client came first).
fn retry_after_seconds(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

/// The rate limit of a running server.
pub(crate) struct ApiRateLimiter {
    limit: RateLimit,
    buckets: Buckets<DefaultClock>,
    idp: Arc<IdentityProvider>,
    admitted: AtomicU64,
    refused: AtomicU64,
}

impl ApiRateLimiter {
    pub(crate) fn new(limit: RateLimit, idp: Arc<IdentityProvider>) -> Self {
        ApiRateLimiter {
            buckets: Buckets::new(&limit, DefaultClock::default()),
            limit,
            idp,
            admitted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }
    }

    /// What `GET /_mock/realism` shows of it.
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        serde_json::json!({
            "admitted": self.admitted.load(Ordering::Relaxed),
            "refused": self.refused.load(Ordering::Relaxed),
        })
    }

    /// The bucket of `request`: its verified client, else its remote address.
    fn bucket(&self, request: &Request) -> Bucket {
        let verified_client = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer_token)
            .and_then(|token| self.idp.verify(token).ok())
            .map(|claims| claims.azp);
        match verified_client {
            Some(client) => Bucket::Client(client),
            None => Bucket::Address(
                request
                    .extensions()
                    .get::<ConnectInfo<Connection>>()
                    .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| {
                        info.0.remote().ip()
                    }),
            ),
        }
    }

    fn refusal(&self, bucket: &Bucket, wait: Duration) -> Response {
        let seconds = retry_after_seconds(wait);
        let who = match bucket {
            Bucket::Client(_) => "this client",
            Bucket::Address(_) => "unauthenticated requests from this address",
        };
        let mut response = Problem::too_many_requests(format!(
            "The rate limit of {who} ({}) is used up; retry after {seconds} s (Retry-After).",
            self.limit
        ))
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        response
    }
}

/// Axum middleware: lets the request through while its bucket holds one, else answers 429.
pub(crate) async fn limit(
    State(limiter): State<Arc<ApiRateLimiter>>,
    request: Request,
    next: Next,
) -> Response {
    let bucket = limiter.bucket(&request);
    match limiter.buckets.admit(&bucket) {
        Ok(()) => {
            limiter.admitted.fetch_add(1, Ordering::Relaxed);
            next.run(request).await
        }
        Err(wait) => {
            limiter.refused.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(wait_ms = wait.as_millis() as u64, "rate limit: refused");
            limiter.refusal(&bucket, wait)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    #[test]
    fn rates_parse() {
        assert_eq!("20/s".parse(), Ok(RateLimit::per_second(20)));
        assert_eq!("600/min".parse(), Ok(RateLimit::per_minute(600)));
        assert_eq!("5/minute".parse(), Ok(RateLimit::per_minute(5)));
        assert_eq!("10000/h".parse(), Ok(RateLimit::per_hour(10_000)));
        for (text, says) in [
            ("20", "write N/s"),
            ("20/d", "write N/s"),
            ("-1/s", "write N/s"),
            ("/s", "write N/s"),
            ("0/s", "1 to"),
            ("99999999999/s", "1 to"),
        ] {
            let error = text.parse::<RateLimit>().expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
        assert_eq!(
            RateLimit::per_second(20).with_burst(5).to_string(),
            "20/s (burst 5)"
        );
        assert!(RateLimit::per_second(20).with_burst(0).check().is_err());
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds_and_is_at_least_one() {
        assert_eq!(retry_after_seconds(Duration::ZERO), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after_seconds(Duration::from_secs(59)), 59);
    }

    /// On a fake clock: the burst passes, the next is refused, and `Retry-After` is exactly
    /// when the bucket admits again (not a moment earlier for the exact wait).
    #[test]
    fn a_bucket_admits_again_when_retry_after_says() {
        let clock = FakeRelativeClock::default();
        let buckets = Buckets::new(&RateLimit::per_minute(3), clock.clone());
        let client = Bucket::Client("bank".into());
        for _ in 0..3 {
            assert_eq!(buckets.admit(&client), Ok(()));
        }
        let wait = buckets.admit(&client).expect_err("the fourth is refused");
        assert_eq!(wait, Duration::from_secs(20), "one request every 20 s");
        assert_eq!(retry_after_seconds(wait), 20);
        clock.advance(wait - Duration::from_millis(1));
        assert!(buckets.admit(&client).is_err(), "not yet");
        clock.advance(Duration::from_millis(1));
        assert_eq!(buckets.admit(&client), Ok(()));
        assert!(
            buckets.admit(&client).is_err(),
            "one at a time after the burst"
        );
        // Other buckets are untouched.
        assert_eq!(buckets.admit(&Bucket::Client("lender".into())), Ok(()));
        assert_eq!(
            buckets.admit(&Bucket::Address(IpAddr::V4(Ipv4Addr::LOCALHOST))),
            Ok(())
        );
    }

    #[test]
    fn a_larger_burst_passes_at_once_then_the_rate_holds() {
        let clock = FakeRelativeClock::default();
        let buckets = Buckets::new(&RateLimit::per_second(2).with_burst(10), clock.clone());
        let client = Bucket::Client("bank".into());
        for _ in 0..10 {
            assert_eq!(buckets.admit(&client), Ok(()));
        }
        let wait = buckets.admit(&client).expect_err("burst used");
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(retry_after_seconds(wait), 1);
        clock.advance(Duration::from_secs(1));
        assert_eq!(buckets.admit(&client), Ok(()));
        assert_eq!(buckets.admit(&client), Ok(()));
        assert!(buckets.admit(&client).is_err());
    }

    #[test]
    fn idle_buckets_are_forgotten() {
        let clock = FakeRelativeClock::default();
        let buckets = Buckets::new(&RateLimit::per_second(1), clock.clone());
        for last in 0..=255u8 {
            let _ = buckets.admit(&Bucket::Address(IpAddr::V4(Ipv4Addr::new(127, 0, 1, last))));
        }
        assert_eq!(buckets.limiter.len(), 256);
        clock.advance(Duration::from_secs(2));
        for _ in 0..HOUSEKEEPING_EVERY {
            let _ = buckets.admit(&Bucket::Client("bank".into()));
        }
        assert!(buckets.limiter.len() < 256, "{}", buckets.limiter.len());
    }
}
