//! A rate limit as configured: `requests` per `per` in bursts of at most `burst`, the longest
//! pause a `Retry-After` may impose, read from text (`20/s`). The limiter (`rate_limit.rs`)
//! paces calls by it.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

/// The longest window a [`RateLimit`] takes: a year.
pub const MAX_WINDOW: Duration = Duration::from_secs(365 * 24 * 3600);

/// The longest `Retry-After` every clone holds back for, unless set with
/// [`RateLimit::max_pause`].
pub const DEFAULT_MAX_PAUSE: Duration = Duration::from_secs(60);

/// How fast a client may call the service: `requests` per `per`, in bursts of at most `burst`.
///
/// Read from text as `N/s`, `N/min` or `N/h` (`"20/s".parse()`), as `CREDITDATA_RATE_LIMIT`
/// does ([`ClientBuilder::from_env`](crate::ClientBuilder::from_env)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub(super) requests: NonZeroU32,
    pub(super) per: Duration,
    pub(super) burst: Option<NonZeroU32>,
    pub(super) max_pause: Duration,
}

impl RateLimit {
    /// `requests` per `per` (a zero `requests` counts as 1; `per` is kept between one
    /// nanosecond and [`MAX_WINDOW`]).
    pub fn new(requests: u32, per: Duration) -> RateLimit {
        RateLimit {
            requests: NonZeroU32::new(requests).unwrap_or(NonZeroU32::MIN),
            per: per.clamp(Duration::from_nanos(1), MAX_WINDOW),
            burst: None,
            max_pause: DEFAULT_MAX_PAUSE,
        }
    }

    /// `requests` per second.
    pub fn per_second(requests: u32) -> RateLimit {
        RateLimit::new(requests, Duration::from_secs(1))
    }

    /// `requests` per minute.
    pub fn per_minute(requests: u32) -> RateLimit {
        RateLimit::new(requests, Duration::from_secs(60))
    }

    /// `requests` per hour.
    pub fn per_hour(requests: u32) -> RateLimit {
        RateLimit::new(requests, Duration::from_secs(3600))
    }

    /// The most requests sent at once after a quiet spell (at least 1). Default: a tenth of
    /// `requests`, at least 1: a service's own bucket usually holds a whole window's worth, and
    /// a smaller client burst leaves room for the network bunching requests up on their way.
    pub fn burst(mut self, burst: u32) -> RateLimit {
        self.burst = Some(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN));
        self
    }

    /// The longest a 429's `Retry-After` holds every clone back (default
    /// [`DEFAULT_MAX_PAUSE`], 60 s): a service asking for an hour's silence should not make
    /// every call of an application hang for an hour; beyond this the calls go on at the
    /// lowered rate, and the retry policy decides about the refused call itself.
    pub fn max_pause(mut self, max_pause: Duration) -> RateLimit {
        self.max_pause = max_pause;
        self
    }

    /// Requests per window.
    pub fn requests(&self) -> u32 {
        self.requests.get()
    }

    /// The window.
    pub fn per(&self) -> Duration {
        self.per
    }

    /// Whether the limiter can represent this limit: governor keeps `interval × burst` in
    /// nanoseconds in a `u64`, next to the clock it is added to, so a burst spanning more than
    /// about 146 years (`RateLimit::per_hour(1).burst(5_200_000)`) would overflow it (a panic
    /// in a debug build, a wrong pace in a release build).
    /// [`ClientBuilder::build`](crate::ClientBuilder::build) refuses such a limit with
    /// [`Error::Config`](crate::Error::Config).
    pub fn check(&self) -> Result<(), String> {
        let burst = self.burst_size();
        let largest = largest_burst(self.per / self.requests.get());
        if burst > largest {
            return Err(format!(
                "rate limit {self}: a burst of {burst} cannot be represented at this rate (at \
                 most {largest}: the burst would take centuries to refill); choose a smaller \
                 burst"
            ));
        }
        Ok(())
    }

    /// The burst in effect (see [`burst`](Self::burst)).
    pub fn burst_size(&self) -> u32 {
        match self.burst {
            Some(burst) => burst.get(),
            None => (self.requests.get() / 10).max(1),
        }
    }

    /// The longest pause after a 429 (see [`max_pause`](Self::max_pause)).
    pub fn max_pause_duration(&self) -> Duration {
        self.max_pause
    }

    /// The configured rate, in requests per second.
    pub fn per_second_rate(&self) -> f64 {
        f64::from(self.requests.get()) / self.per.as_secs_f64()
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let window = match self.per.as_secs() {
            1 if self.per.subsec_nanos() == 0 => "s".to_string(),
            60 if self.per.subsec_nanos() == 0 => "min".to_string(),
            3600 if self.per.subsec_nanos() == 0 => "h".to_string(),
            _ => format!("{:?}", self.per),
        };
        write!(
            f,
            "{}/{window} (burst {})",
            self.requests,
            self.burst_size()
        )
    }
}

/// Why a rate limit could not be read from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseRateLimitError(String);

impl FromStr for RateLimit {
    type Err = ParseRateLimitError;

    /// `20/s`, `600/min`, `10000/h` (also `sec`, `second`, `m`, `minute`, `hour`).
    fn from_str(text: &str) -> Result<RateLimit, ParseRateLimitError> {
        let text = text.trim();
        let syntax = || {
            ParseRateLimitError(format!(
                "`{text}` is not a rate limit: write N/s, N/min or N/h, e.g. 20/s"
            ))
        };
        let (requests, window) = text.split_once('/').ok_or_else(syntax)?;
        let requests: u32 = requests.trim().parse().map_err(|_| syntax())?;
        if requests == 0 {
            return Err(ParseRateLimitError(format!(
                "`{text}`: the number of requests must be at least 1"
            )));
        }
        let per = match window.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            _ => return Err(syntax()),
        };
        Ok(RateLimit::new(requests, per))
    }
}

/// The largest burst governor can represent at one request every `interval`: `interval ×
/// burst` within a quarter of `u64` nanoseconds, leaving room for the clock it is added to.
pub(super) fn largest_burst(interval: Duration) -> u32 {
    let room = u128::from(u64::MAX / 4) / interval.as_nanos().max(1);
    u32::try_from(room).unwrap_or(u32::MAX).max(1)
}
