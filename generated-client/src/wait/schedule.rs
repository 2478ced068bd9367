//! How long and how often a wait polls: [`WaitOptions`], the caller's settings, and
//! [`Schedule`], the clock of one wait (its deadline, the pause between polls, the bound on each
//! call), shared by the wait for the customer and the wait for the data.

use std::time::Duration;

use tokio::time::Instant;

use crate::call_options::CallOptions;

/// How long past its deadline a wait's last call may take: a poll made at the deadline gets
/// this long to be answered. A wait returns within its timeout plus this.
pub const DEADLINE_ALLOWANCE: Duration = Duration::from_secs(2);

/// How long and how often [`Client::wait_for_customer`](crate::Client::wait_for_customer) and
/// [`Client::wait_for_data`](crate::Client::wait_for_data) poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// How long to wait in total before giving up (default 15 minutes). The last poll happens
    /// at the deadline at the latest, and every call is bounded by it: the wait returns within
    /// this plus [`DEADLINE_ALLOWANCE`]. Any value is accepted: one too long for the clock
    /// (`Duration::MAX`) waits without a deadline.
    pub timeout: Duration,
    /// The pause after the first poll (default 2 s); each later pause doubles, up to
    /// `max_interval`.
    pub initial_interval: Duration,
    /// The longest pause between two polls (default 60 s).
    pub max_interval: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            timeout: Duration::from_secs(15 * 60),
            initial_interval: Duration::from_secs(2),
            max_interval: Duration::from_secs(60),
        }
    }
}

impl WaitOptions {
    /// Sets [`timeout`](Self::timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`initial_interval`](Self::initial_interval).
    pub fn initial_interval(mut self, interval: Duration) -> Self {
        self.initial_interval = interval;
        self
    }

    /// Sets [`max_interval`](Self::max_interval).
    pub fn max_interval(mut self, interval: Duration) -> Self {
        self.max_interval = interval;
        self
    }
}

/// The clock of one wait: its start, its deadline and the growing pause between polls.
pub(crate) struct Schedule {
    /// The caller's options for every call of the wait (`Client::with_options`).
    calls: Option<CallOptions>,
    started: Instant,
    deadline: Option<Instant>,
    interval: Duration,
    max_interval: Duration,
}

impl Schedule {
    /// The clock of a wait with `options`, whose calls get `calls` (bounded by the wait).
    pub(crate) fn start(options: WaitOptions, calls: Option<CallOptions>) -> Schedule {
        let started = Instant::now();
        // Zero intervals would spin: at least a millisecond between polls.
        let max_interval = options.max_interval.max(Duration::from_millis(1));
        Schedule {
            calls,
            started,
            // A timeout too long for the clock (`Duration::MAX`) means no deadline.
            deadline: started.checked_add(options.timeout),
            interval: options
                .initial_interval
                .clamp(Duration::from_millis(1), max_interval),
            max_interval,
        }
    }

    /// Whether the deadline has passed.
    pub(crate) fn is_over(&self) -> bool {
        self.deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// How long the wait has lasted.
    pub(crate) fn waited(&self) -> Duration {
        Instant::now().saturating_duration_since(self.started)
    }

    /// The options of a call the wait starts now (a poll or a read): the caller's, with a
    /// deadline of its own that ends [`DEADLINE_ALLOWANCE`] after the wait's at the latest
    /// (retries and waits for the rate limiter or a token included); none when the wait has
    /// neither options nor a deadline.
    pub(crate) fn call_options(&self) -> Option<CallOptions> {
        let left = self.deadline.map(|deadline| {
            deadline
                .saturating_duration_since(Instant::now())
                .saturating_add(DEADLINE_ALLOWANCE)
        });
        match (&self.calls, left) {
            (None, None) => None,
            (None, Some(left)) => Some(CallOptions::new().timeout(left)),
            (Some(calls), None) => Some(calls.clone()),
            (Some(calls), Some(left)) => {
                let own = calls.timeout.map_or(left, |own| own.min(left));
                Some(calls.clone().timeout(own))
            }
        }
    }

    /// Sleeps until the next poll (at the deadline at the latest), and doubles the pause.
    pub(crate) async fn pause(&mut self) {
        let until_deadline = self.deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        });
        tokio::time::sleep(self.interval.min(until_deadline)).await;
        self.interval = self.interval.saturating_mul(2).min(self.max_interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout_of(schedule: &Schedule) -> Option<Duration> {
        schedule.call_options().and_then(|options| options.timeout)
    }

    #[test]
    fn a_waits_calls_get_the_callers_options_bounded_by_the_wait() {
        let wait = WaitOptions::default().timeout(Duration::from_secs(10));
        let bound = Duration::from_secs(10) + DEADLINE_ALLOWANCE;

        let own = Schedule::start(wait, None);
        let left = timeout_of(&own).expect("a wait with a deadline bounds its calls");
        assert!(
            left <= bound && left > bound - Duration::from_secs(1),
            "{left:?}"
        );

        let shorter = CallOptions::new().timeout(Duration::from_secs(1));
        let schedule = Schedule::start(wait, Some(shorter));
        assert_eq!(timeout_of(&schedule), Some(Duration::from_secs(1)));

        let longer = CallOptions::new().timeout(Duration::from_secs(3600));
        let schedule = Schedule::start(wait, Some(longer));
        assert!(timeout_of(&schedule).is_some_and(|t| t <= bound));

        let traced = CallOptions::new().header("x-correlation-id", "a").unwrap();
        let schedule = Schedule::start(wait, Some(traced.clone()));
        let options = schedule.call_options().unwrap();
        assert!(options.headers.contains_key("x-correlation-id"));
        assert!(options.timeout.is_some_and(|t| t <= bound));

        // No deadline: the caller's options as given, or none at all.
        let endless = wait.timeout(Duration::MAX);
        assert!(Schedule::start(endless, None).call_options().is_none());
        let options = Schedule::start(endless, Some(traced))
            .call_options()
            .unwrap();
        assert_eq!(options.timeout, None);
        assert!(options.headers.contains_key("x-correlation-id"));
    }
}
