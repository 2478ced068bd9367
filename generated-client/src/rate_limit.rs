//! A client-side rate limiter that keeps a client (and every clone of it) under the service's
//! rate limit, and slows down by itself when the service says it went too fast.
//!
//! ```no_run
//! use creditdata_client::Client;
//! use creditdata_client::rate_limit::RateLimit;
//!
//! # fn f() -> creditdata_client::Result<()> {
//! let client = Client::builder()
//!     .rate_limit(RateLimit::per_second(20).burst(5))
//!     .build()?;
//! let for_another_task = client.clone(); // shares the limiter
//! # Ok(()) }
//! ```
//!
//! # What it does
//!
//! - **Before every attempt** of every API call (JSON calls, downloads, retries, the retry after
//!   a 401), the call waits for its turn: at most [`RateLimit::burst`] requests at once after a
//!   quiet spell, then one every `1 / rate`. Token and discovery requests to the identity
//!   provider are not counted: they do not go to the service.
//! - **In order**: calls are admitted in the order they asked (a fair queue), so a long export
//!   does not starve one call behind later ones.
//! - **Shared**: the state lives in the client's `Arc`; every clone draws from the same budget.
//! - **429 slows it down**: when the service answers `429 Too Many Requests`, every clone holds
//!   back until the answer's `Retry-After` has passed (at most [`RateLimit::max_pause`]), and
//!   the rate is halved (multiplicative decrease, down to a sixteenth of the configured rate).
//!   Several 429s answering requests that were sent at the same rate count as one: the rate is
//!   halved once per rate, not once per answer.
//! - **and recovers**: for every window of the limit ([`RateLimit::per`]) without a 429 the
//!   rate grows back by a tenth of the configured rate (additive increase), up to the
//!   configured rate, never beyond.
//!
//! The waiting happens before the request is sent, so it is not part of the request timeout;
//! a call dropped while it waits gives its turn to the next one. Whether a 429 is *retried* is
//! still the [`RetryPolicy`](crate::retry::RetryPolicy)'s decision (`Retry-After` longer than
//! `max_backoff`: not retried).
//!
//! # How
//!
//! The pacing itself is [`governor`]'s GCRA (the algorithm the mock's emulation of the service
//! uses too), run on tokio's clock ([`TokioClock`]), so an application or a test that pauses
//! tokio's time pauses the limiter with it. A governor limiter's quota is fixed when it is
//! built, so a change of rate (a 429, a recovery step) swaps in a limiter with the new quota;
//! the next request after a swap still keeps the new interval after the last one admitted.
//! Below the configured rate the burst is 1: a service that has just refused a request gets
//! no burst until the rate is back where it was configured. On top of governor: the fair
//! queue, the hold after a `Retry-After`, and the decrease and recovery of the rate.
//!
//! # Many processes, one limit
//!
//! This limiter paces one process (and every clone of its client). Processes that share an API
//! client share the service's limit; with the feature `shared-rate-limit`, a `RateLimitStore`
//! (Redis) holds the limiter's state for all of them: see the module `store` and
//! `ClientBuilder::rate_limit_store` (not linked: they exist only with that feature).

use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

mod limit;
#[cfg(feature = "shared-rate-limit")]
pub mod store;

use limit::largest_burst;
pub use limit::{DEFAULT_MAX_PAUSE, MAX_WINDOW, ParseRateLimitError, RateLimit};
#[cfg(feature = "shared-rate-limit")]
pub use store::{RateLimitStore, StoreStatus};

/// After a 429 the rate is divided by this.
const DECREASE_FACTOR: f64 = 2.0;
/// The rate never drops below the configured rate divided by this.
const FLOOR_DIVISOR: f64 = 16.0;
/// Every window without a 429 adds the configured rate divided by this.
const RECOVERY_DIVISOR: f64 = 10.0;

/// What a [`RateLimiter`] is doing, for progress displays, logs and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitStatus {
    /// The configured limit.
    pub configured: RateLimit,
    /// The rate in effect now, in requests per second (the configured one, or less after a
    /// 429).
    pub current_per_second: f64,
    /// How much longer every call holds back after a 429's `Retry-After`, if it does.
    pub paused_for: Option<Duration>,
    /// Requests admitted so far.
    pub admitted: u64,
    /// 429 answers reported so far.
    pub throttled: u64,
    /// How many of them lowered the rate (429s answering requests sent at an already lowered
    /// rate count once).
    pub slowdowns: u64,
}

/// The right to send one request, given by [`RateLimiter::acquire`]. Hand it back to
/// [`RateLimiter::throttled`] when the service answers 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// The rate in effect when the request was admitted (incremented by every slowdown).
    generation: u64,
    /// Whether the shared store stopped answering while this request waited (the first
    /// admission of an outage): the call's telemetry reports it.
    store_outage_began: bool,
}

impl Admission {
    fn new(generation: u64) -> Admission {
        Admission {
            generation,
            store_outage_began: false,
        }
    }

    /// Whether the rate limit's shared store stopped answering while this request waited for
    /// its turn (only the first request of an outage says so).
    pub fn store_outage_began(&self) -> bool {
        self.store_outage_began
    }
}

/// The limiter itself: what [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)
/// puts in a client. Cheap to clone; clones share the budget. Usable on its own for anything
/// else that must keep a pace.
#[derive(Clone)]
pub struct RateLimiter {
    shared: Arc<Shared>,
}

struct Shared {
    limit: RateLimit,
    /// Callers wait here in the order they came (tokio's mutex is fair); the one holding it
    /// sleeps until its slot.
    queue: tokio::sync::Mutex<()>,
    pace: Mutex<Pace>,
    admitted: AtomicU64,
    throttled: AtomicU64,
    slowdowns: AtomicU64,
    /// The state in a shared store, when the limit is shared with other processes.
    #[cfg(feature = "shared-rate-limit")]
    store: Option<store::SharedState>,
}

/// governor's direct (un-keyed) limiter on tokio's clock.
type Gcra = governor::RateLimiter<
    governor::state::NotKeyed,
    governor::state::InMemoryState,
    TokioClock,
    governor::middleware::NoOpMiddleware<TokioInstant>,
>;

/// The pace in effect: a governor limiter for the current rate, and what governor does not
/// do (a rate that changes, a pause).
struct Pace {
    gcra: Gcra,
    /// Requests per second now (AIMD).
    rate: f64,
    /// The most requests per second the local limiter admits whatever `rate` says: the
    /// process's share of a shared limit while its store does not answer (infinite otherwise).
    ceiling: f64,
    /// Incremented by every slowdown: tells whether a 429 answers a request sent at the
    /// current rate.
    generation: u64,
    /// Nothing is admitted before this (a 429's `Retry-After`).
    paused_until: Option<Instant>,
    /// Nothing is admitted before this either: one interval of the new rate after the last
    /// admission, set when a new limiter is swapped in (a fresh one would admit at once).
    spaced_until: Option<Instant>,
    /// The last admission.
    last_admitted: Option<Instant>,
    /// From when the next recovery step is counted.
    recovering_since: Instant,
}

/// tokio's clock for governor: follows `tokio::time::pause` and `advance`, so tests (and
/// applications) that control tokio's time control the limiter too.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

/// A reading of [`TokioClock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TokioInstant(Instant);

impl TokioInstant {
    /// The tokio instant.
    pub fn into_inner(self) -> Instant {
        self.0
    }
}

impl std::ops::Add<governor::nanos::Nanos> for TokioInstant {
    type Output = TokioInstant;

    fn add(self, nanos: governor::nanos::Nanos) -> TokioInstant {
        TokioInstant(later(self.0, Duration::from(nanos)))
    }
}

impl governor::clock::Reference for TokioInstant {
    fn duration_since(&self, earlier: TokioInstant) -> governor::nanos::Nanos {
        self.0.saturating_duration_since(earlier.0).into()
    }

    fn saturating_sub(&self, duration: governor::nanos::Nanos) -> TokioInstant {
        TokioInstant(
            self.0
                .checked_sub(Duration::from(duration))
                .unwrap_or(self.0),
        )
    }
}

impl governor::clock::Clock for TokioClock {
    type Instant = TokioInstant;

    fn now(&self) -> TokioInstant {
        TokioInstant(Instant::now())
    }
}

impl fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimiter")
            .field("status", &self.status())
            .finish()
    }
}

impl RateLimiter {
    /// A limiter with a full burst available.
    pub fn new(limit: RateLimit) -> RateLimiter {
        RateLimiter::build(
            limit,
            #[cfg(feature = "shared-rate-limit")]
            None,
        )
    }

    /// A limiter whose state lives in `store` under the name `identity` hashes to (the service,
    /// its identity provider and the API client): every process naming the same shares `limit`.
    /// [`ClientBuilder::rate_limit_store`](crate::ClientBuilder::rate_limit_store) makes one
    /// from the client's settings.
    #[cfg(feature = "shared-rate-limit")]
    pub fn shared(limit: RateLimit, store: RateLimitStore, identity: &[&str]) -> RateLimiter {
        let interval = limit.per / limit.requests.get();
        let state = store::SharedState::new(store, identity, interval);
        RateLimiter::build(limit, Some(state))
    }

    fn build(
        limit: RateLimit,
        #[cfg(feature = "shared-rate-limit")] store: Option<store::SharedState>,
    ) -> RateLimiter {
        let now = Instant::now();
        let rate = limit.per_second_rate();
        RateLimiter {
            shared: Arc::new(Shared {
                limit,
                queue: tokio::sync::Mutex::new(()),
                pace: Mutex::new(Pace {
                    gcra: governor_for(&limit, rate),
                    rate,
                    ceiling: f64::INFINITY,
                    generation: 0,
                    paused_until: None,
                    spaced_until: None,
                    last_admitted: None,
                    recovering_since: now,
                }),
                admitted: AtomicU64::new(0),
                throttled: AtomicU64::new(0),
                slowdowns: AtomicU64::new(0),
                #[cfg(feature = "shared-rate-limit")]
                store,
            }),
        }
    }

    /// What the shared limit is doing, when the limit is shared through a store.
    #[cfg(feature = "shared-rate-limit")]
    pub fn store_status(&self) -> Option<StoreStatus> {
        let configured = self.shared.limit.per_second_rate();
        self.shared
            .store
            .as_ref()
            .map(|store| store.status(configured))
    }

    /// The store and the name of the limit in it (`prefix:{hash}`), when the limit is shared:
    /// other work that must be shared by the same processes (the `creditdata` command's
    /// shared export) keys itself under it.
    #[cfg(feature = "shared-rate-limit")]
    pub fn store(&self) -> Option<(&RateLimitStore, &str)> {
        self.shared
            .store
            .as_ref()
            .map(|store| (store.store(), store.namespace()))
    }

    /// The configured limit.
    pub fn limit(&self) -> RateLimit {
        self.shared.limit
    }

    fn pace(&self) -> MutexGuard<'_, Pace> {
        // The state is a few numbers and a limiter, consistent after every statement: a panic
        // elsewhere while it was held leaves nothing half-done.
        self.shared
            .pace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for this request's turn (in the order callers asked) and admits it. With a shared
    /// store, the turn is the one the store reserves (see the module `store`); while it does not answer,
    /// the local limiter's at the process's last known share.
    pub async fn acquire(&self) -> Admission {
        let _turn = self.shared.queue.lock().await;
        #[cfg(feature = "shared-rate-limit")]
        if let Some(shared) = &self.shared.store {
            return self.acquire_shared(shared).await;
        }
        loop {
            let admitted = self.pace().admit(&self.shared.limit, Instant::now());
            match admitted {
                Ok(generation) => {
                    self.shared.admitted.fetch_add(1, Ordering::Relaxed);
                    return Admission::new(generation);
                }
                // Checked again after the sleep: a 429 meanwhile may have pushed the slot.
                Err(slot) => tokio::time::sleep_until(slot).await,
            }
        }
    }

    /// [`acquire`](Self::acquire) through the shared store: the caller holds the queue.
    #[cfg(feature = "shared-rate-limit")]
    async fn acquire_shared(&self, shared: &store::SharedState) -> Admission {
        let limit = &self.shared.limit;
        let configured = limit.per_second_rate();
        let mut outage_began = false;
        loop {
            let now = Instant::now();
            let paused = self.pace().paused(now);
            if let Some(until) = paused {
                tokio::time::sleep_until(until).await;
                continue;
            }
            match shared.route(now, configured) {
                store::Route::Store => {
                    let charge = self.pace().charge(limit, now);
                    match shared.reserve(charge).await {
                        Ok(reserved) => {
                            let send_at = later(Instant::now(), reserved.wait);
                            self.pace().set_ceiling(limit, f64::INFINITY);
                            tokio::time::sleep_until(send_at).await;
                            // A 429 meanwhile: its pause holds this request too (the slot
                            // reserved is spent).
                            let paused = self.pace().paused(Instant::now());
                            if let Some(until) = paused {
                                tokio::time::sleep_until(until).await;
                            }
                            let generation = {
                                let mut pace = self.pace();
                                pace.last_admitted = Some(Instant::now());
                                pace.generation
                            };
                            self.shared.admitted.fetch_add(1, Ordering::Relaxed);
                            return Admission {
                                generation,
                                store_outage_began: outage_began,
                            };
                        }
                        Err(reason) => {
                            outage_began |= shared.failed(Instant::now(), &reason, configured);
                        }
                    }
                }
                store::Route::Local { ceiling } => {
                    let admitted = {
                        let mut pace = self.pace();
                        pace.set_ceiling(limit, ceiling);
                        pace.admit(limit, now)
                    };
                    match admitted {
                        Ok(generation) => {
                            shared.admitted_locally();
                            self.shared.admitted.fetch_add(1, Ordering::Relaxed);
                            return Admission {
                                generation,
                                store_outage_began: outage_began,
                            };
                        }
                        Err(slot) => tokio::time::sleep_until(slot).await,
                    }
                }
            }
        }
    }

    /// Admits a request now if the budget allows it, without waiting (and without regard to
    /// callers waiting in [`acquire`](Self::acquire): use one or the other). Decided by the
    /// local limiter alone, shared store or not: the store is asked only by `acquire`, which is
    /// what the client calls.
    pub fn try_acquire(&self) -> Option<Admission> {
        let admitted = self.pace().admit(&self.shared.limit, Instant::now()).ok();
        if admitted.is_some() {
            self.shared.admitted.fetch_add(1, Ordering::Relaxed);
        }
        admitted.map(Admission::new)
    }

    /// The service answered 429 to the request admitted as `admission`: every clone holds back
    /// for `retry_after` (at most [`RateLimit::max_pause`]), and, unless the rate was already
    /// lowered since that request was admitted, the rate is halved.
    pub fn throttled(&self, admission: Admission, retry_after: Option<Duration>) {
        self.shared.throttled.fetch_add(1, Ordering::Relaxed);
        let slowed =
            self.pace()
                .slow_down(&self.shared.limit, admission, retry_after, Instant::now());
        if slowed {
            self.shared.slowdowns.fetch_add(1, Ordering::Relaxed);
        }
        let status = self.status();
        tracing::debug!(
            rate_per_second = status.current_per_second,
            pause_ms = status.paused_for.map_or(0, |p| p.as_millis() as u64),
            slowed,
            "the service answered 429: holding back"
        );
    }

    /// What the limiter is doing now.
    pub fn status(&self) -> RateLimitStatus {
        let now = Instant::now();
        let (rate, paused_until) = {
            let mut pace = self.pace();
            pace.recover(&self.shared.limit, now);
            (pace.rate.min(pace.ceiling), pace.paused_until)
        };
        RateLimitStatus {
            configured: self.shared.limit,
            current_per_second: rate,
            paused_for: paused_until
                .filter(|until| *until > now)
                .map(|until| until - now),
            admitted: self.shared.admitted.load(Ordering::Relaxed),
            throttled: self.shared.throttled.load(Ordering::Relaxed),
            slowdowns: self.shared.slowdowns.load(Ordering::Relaxed),
        }
    }
}

/// A governor limiter for `rate` requests per second: the configured burst at the configured
/// rate, one at a time below it.
fn governor_for(limit: &RateLimit, rate: f64) -> Gcra {
    let configured = rate >= limit.per_second_rate();
    let interval = if configured {
        // Exact for the configured rate (50/s: 20 ms, not 19.999... ms).
        limit.per / limit.requests.get()
    } else {
        interval_of(rate)
    };
    let burst = if configured {
        // Never above what governor can hold, whatever was configured: `build` refuses such
        // a limit, and a limiter made directly must not panic before that.
        NonZeroU32::new(limit.burst_size().min(largest_burst(interval))).unwrap_or(NonZeroU32::MIN)
    } else {
        NonZeroU32::MIN
    };
    let quota = governor::Quota::with_period(interval.max(Duration::from_nanos(1)))
        .unwrap_or_else(|| governor::Quota::per_hour(NonZeroU32::MIN))
        .allow_burst(burst);
    governor::RateLimiter::direct_with_clock(quota, TokioClock)
}

/// The time between two requests at `rate` per second, within [1 ns, [`MAX_WINDOW`]].
fn interval_of(rate: f64) -> Duration {
    Duration::try_from_secs_f64(1.0 / rate)
        .unwrap_or(MAX_WINDOW)
        .clamp(Duration::from_nanos(1), MAX_WINDOW)
}

impl Pace {
    /// Puts in a limiter for `rate` (at most the ceiling), keeping one interval of it after the
    /// last admission.
    fn change_rate(&mut self, limit: &RateLimit, rate: f64) {
        self.rate = rate;
        let effective = rate.min(self.ceiling);
        self.gcra = governor_for(limit, effective);
        self.spaced_until = self
            .last_admitted
            .map(|last| later(last, interval_of(effective)));
    }

    /// Caps the local limiter at `ceiling` requests per second (infinite: no cap).
    #[cfg(feature = "shared-rate-limit")]
    fn set_ceiling(&mut self, limit: &RateLimit, ceiling: f64) {
        if ceiling != self.ceiling {
            self.ceiling = ceiling;
            self.change_rate(limit, self.rate);
        }
    }

    /// When a 429's pause ends, if it has not yet.
    #[cfg(feature = "shared-rate-limit")]
    fn paused(&mut self, now: Instant) -> Option<Instant> {
        match self.paused_until {
            Some(until) if now < until => Some(until),
            _ => {
                self.paused_until = None;
                None
            }
        }
    }

    /// What one admission takes of a shared budget at the rate in effect: the configured
    /// interval and burst at the configured rate; below it (after a 429), one interval of the
    /// lowered rate and no burst, so a process told 429 slows the whole fleet.
    #[cfg(feature = "shared-rate-limit")]
    fn charge(&mut self, limit: &RateLimit, now: Instant) -> store::Charge {
        self.recover(limit, now);
        if self.rate >= limit.per_second_rate() {
            let interval = limit.per / limit.requests.get();
            let burst = limit.burst_size().min(largest_burst(interval)).max(1);
            store::Charge {
                interval,
                tolerance: interval.saturating_mul(burst - 1).min(MAX_WINDOW),
            }
        } else {
            store::Charge {
                interval: interval_of(self.rate),
                tolerance: Duration::ZERO,
            }
        }
    }

    /// Grows the rate back by a tenth of the configured rate per window since the last change.
    fn recover(&mut self, limit: &RateLimit, now: Instant) {
        let configured = limit.per_second_rate();
        if self.rate >= configured {
            return;
        }
        let since = now.saturating_duration_since(self.recovering_since);
        let windows = since.as_nanos() / limit.per.as_nanos().max(1);
        if windows == 0 {
            return;
        }
        let windows = u32::try_from(windows).unwrap_or(u32::MAX);
        let step = configured / RECOVERY_DIVISOR;
        let rate = (self.rate + step * f64::from(windows)).min(configured);
        self.change_rate(limit, rate);
        self.recovering_since = later(self.recovering_since, limit.per.saturating_mul(windows));
    }

    /// `Ok(generation)` and the budget spent, or `Err(when)` to try again.
    fn admit(&mut self, limit: &RateLimit, now: Instant) -> Result<u64, Instant> {
        for hold in [&mut self.paused_until, &mut self.spaced_until] {
            if let Some(until) = *hold {
                if now < until {
                    return Err(until);
                }
                *hold = None;
            }
        }
        self.recover(limit, now);
        if let Some(until) = self.spaced_until.filter(|until| now < *until) {
            return Err(until);
        }
        match self.gcra.check() {
            Ok(()) => {
                self.last_admitted = Some(now);
                Ok(self.generation)
            }
            Err(not_until) => Err(not_until.earliest_possible().into_inner()),
        }
    }

    /// Applies a 429; returns whether the rate was lowered.
    fn slow_down(
        &mut self,
        limit: &RateLimit,
        admission: Admission,
        retry_after: Option<Duration>,
        now: Instant,
    ) -> bool {
        self.recover(limit, now);
        let pause = retry_after.unwrap_or(Duration::ZERO).min(limit.max_pause);
        let resume = later(now, pause);
        if pause > Duration::ZERO {
            self.paused_until = Some(self.paused_until.map_or(resume, |p| p.max(resume)));
        }
        let slowed = admission.generation == self.generation;
        if slowed {
            let floor = limit.per_second_rate() / FLOOR_DIVISOR;
            self.generation += 1;
            self.change_rate(limit, (self.rate / DECREASE_FACTOR).max(floor));
        }
        // Recovery counts from the end of the pause.
        let resume = self.paused_until.unwrap_or(now).max(now);
        self.recovering_since = self.recovering_since.max(resume);
        slowed
    }
}

/// `at + wait`, saturating far in the future instead of overflowing: every duration here can
/// come from configuration or from a server's `Retry-After`.
fn later(at: Instant, wait: Duration) -> Instant {
    at.checked_add(wait)
        .or_else(|| at.checked_add(MAX_WINDOW))
        .unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_refuse_nonsense() {
        let limit: RateLimit = "50/s".parse().unwrap();
        assert_eq!(limit.requests(), 50);
        assert_eq!(limit.per(), Duration::from_secs(1));
        assert_eq!(limit.burst_size(), 5);
        assert_eq!(
            "600/min".parse::<RateLimit>().unwrap().per(),
            Duration::from_secs(60)
        );
        assert_eq!(
            " 10000 / h "
                .parse::<RateLimit>()
                .unwrap()
                .per_second_rate(),
            10000.0 / 3600.0
        );
        for bad in [
            "",
            "50",
            "50/fortnight",
            "x/s",
            "0/s",
            "-3/s",
            "5000000000/s",
        ] {
            let error = bad.parse::<RateLimit>().unwrap_err().to_string();
            assert!(error.contains(bad.trim()), "{bad}: {error}");
        }
        assert_eq!(RateLimit::per_second(3).burst_size(), 1);
        assert_eq!(RateLimit::per_second(3).burst(0).burst_size(), 1);
        assert_eq!(
            RateLimit::per_minute(600).burst(20).to_string(),
            "600/min (burst 20)"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_passes_at_once_then_one_per_interval() {
        let limiter = RateLimiter::new(RateLimit::per_second(10).burst(3));
        let start = Instant::now();
        for _ in 0..3 {
            limiter.acquire().await;
        }
        assert_eq!(Instant::now(), start, "the burst waits for nothing");
        limiter.acquire().await;
        assert_eq!(Instant::now() - start, Duration::from_millis(100));
        assert!(limiter.try_acquire().is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn recovery_is_a_tenth_of_the_configured_rate_per_window() {
        let limiter = RateLimiter::new(RateLimit::per_second(100));
        let admission = limiter.acquire().await;
        limiter.throttled(admission, None);
        assert_eq!(limiter.status().current_per_second, 50.0);
        tokio::time::advance(Duration::from_millis(999)).await;
        assert_eq!(limiter.status().current_per_second, 50.0);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(limiter.status().current_per_second, 60.0);
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(limiter.status().current_per_second, 100.0);
    }

    #[cfg(feature = "shared-rate-limit")]
    #[tokio::test(start_paused = true)]
    async fn a_process_told_429_charges_the_shared_budget_its_lowered_interval_without_burst() {
        let limit = RateLimit::per_second(10).burst(5);
        let limiter = RateLimiter::new(limit);
        let now = Instant::now();
        let charge = limiter.pace().charge(&limit, now);
        assert_eq!(charge.interval, Duration::from_millis(100));
        assert_eq!(
            charge.tolerance,
            Duration::from_millis(400),
            "the burst of 5"
        );
        let admission = limiter.acquire().await;
        limiter.throttled(admission, None);
        let charge = limiter.pace().charge(&limit, Instant::now());
        assert_eq!(charge.interval, Duration::from_millis(200), "half the rate");
        assert_eq!(
            charge.tolerance,
            Duration::ZERO,
            "no burst below the configured rate"
        );
        tokio::time::advance(Duration::from_secs(60)).await;
        let charge = limiter.pace().charge(&limit, Instant::now());
        assert_eq!(charge.interval, Duration::from_millis(100), "recovered");
    }

    #[cfg(feature = "shared-rate-limit")]
    #[tokio::test(start_paused = true)]
    async fn the_local_ceiling_paces_at_the_share_without_a_burst_then_lifts() {
        let limit = RateLimit::per_second(10).burst(5);
        let limiter = RateLimiter::new(limit);
        limiter.pace().set_ceiling(&limit, 2.5);
        assert_eq!(limiter.status().current_per_second, 2.5);
        let start = Instant::now();
        limiter.acquire().await;
        limiter.acquire().await;
        assert_eq!(
            Instant::now() - start,
            Duration::from_millis(400),
            "one per 1/2.5 s"
        );
        limiter.pace().set_ceiling(&limit, f64::INFINITY);
        assert_eq!(limiter.status().current_per_second, 10.0);
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_never_drops_below_a_sixteenth() {
        let limiter = RateLimiter::new(RateLimit::per_second(64));
        for _ in 0..20 {
            let admission = limiter.acquire().await;
            limiter.throttled(admission, None);
        }
        assert_eq!(limiter.status().current_per_second, 4.0);
        assert_eq!(limiter.status().slowdowns, 20);
    }
}
