//! Waiting on a session: for the Data Subject ([`Client::wait_for_customer`]: until the
//! session leaves `WAITING_FOR_CUSTOMER`) and for the data ([`Client::wait_for_data`]: until
//! every provider has answered too).
//!
//! The service has no webhooks or callbacks (none are published), so the only way to learn
//! that the customer has acted is to read the session again. [`Client::wait_for_customer`]
//! does that with exponential backoff, up to a deadline:
//!
//! ```no_run
//! # async fn f(client: &creditdata_client::Client, id: uuid::Uuid) -> creditdata_client::Result<()> {
//! use std::time::Duration;
//! use creditdata_client::types::CustomerProgressStatus;
//! use creditdata_client::wait::WaitOptions;
//!
//! let session = client
//!     .wait_for_customer(id, WaitOptions::default().timeout(Duration::from_secs(600)))
//!     .await?;
//! if session.customer_progress_status == CustomerProgressStatus::CompletedByCustomer {
//!     // read the datasets
//! }
//! # Ok(()) }
//! ```
//!
//! The wait ends with the session as soon as its status is anything other than
//! `WAITING_FOR_CUSTOMER`: `COMPLETED_BY_CUSTOMER`, but also `EXPIRED`, `DELIVERY_FAILED` or a
//! status this client does not know yet (`Unrecognized`). Check the status of what it returns.
//! When the deadline passes first, the result is [`Error::WaitTimedOut`] with the last session
//! seen. Transient failures of a poll (timeouts, broken connections, 408/429/5xx after the
//! client's own retries) do not end the wait; other errors (404, 401, ...) end it at once.
//!
//! The deadline is a deadline: every call a wait makes is bounded by it (retries, the rate
//! limiter's and the token's waits included), with [`DEADLINE_ALLOWANCE`] for a poll made at
//! the deadline, so a wait with timeout T returns within T plus that allowance however slowly,
//! or not at all, the service answers. A poll cut short so ends in
//! [`Error::DeadlineExceeded`] (naming the operation); when it was the last, that is the
//! wait's error.
//!
//! # Waiting for the data
//!
//! A session is `COMPLETED_BY_CUSTOMER` once the consumer has consented, but each Data Provider
//! answers later: until then its datasets are empty, `sources[].status = WAITING_FOR_PROVIDER`.
//! `Client::wait_for_data` (feature `session-datasets`) waits for both: the customer as above,
//! then every dataset is read, and only the datasets still pending (or whose read failed with a
//! transient error) are read again, with the same backoff and deadline, within the client's
//! rate limiter. It ends with a `DataWait` that carries what it read last:
//!
//! ```no_run
//! # async fn f(client: &creditdata_client::Client, id: uuid::Uuid) -> creditdata_client::Result<()> {
//! use std::time::Duration;
//! use creditdata_client::wait::{DataWait, WaitOptions};
//!
//! match client
//!     .wait_for_data(id, WaitOptions::default().timeout(Duration::from_secs(900)))
//!     .await?
//! {
//!     DataWait::Ready { datasets, .. } => {
//!         // every provider answered SUCCESS (or was not requested): decide on `datasets`
//!         # let _ = datasets;
//!     }
//!     DataWait::ReadyWithFailures { datasets, .. } => {
//!         eprintln!("final, with failures: {}", datasets.readiness());
//!     }
//!     DataWait::TimedOut { datasets: Some(datasets), .. } => {
//!         eprintln!("still pending: {}", datasets.readiness());
//!     }
//!     other => eprintln!("no data: {other}"), // the customer has not completed, or never will
//! }
//! # Ok(()) }
//! ```
//!
//! A deadline is a result (`DataWait::TimedOut`), not an error; so is a customer who will not
//! complete (`DataWait::CustomerDidNotComplete`: `EXPIRED`, `DELIVERY_FAILED`, or a status this
//! client does not know), which ends the wait at once without reading data. A provider status
//! this client does not know counts as a final failure ([`crate::readiness`]), so it never
//! holds the wait until its deadline.

#[cfg(feature = "session-datasets")]
mod data;

use std::time::Duration;

use tokio::time::Instant;
use uuid::Uuid;

use crate::call_options::CallOptions;
use crate::types::{CustomerProgressStatus, Session};
use crate::{Client, Error, Result};

/// How long past its deadline a wait's last call may take: a poll made at the deadline gets
/// this long to be answered. A wait returns within its timeout plus this.
pub const DEADLINE_ALLOWANCE: Duration = Duration::from_secs(2);

#[cfg(feature = "session-datasets")]
pub use data::DataWait;

/// How long and how often [`Client::wait_for_customer`] and [`Client::wait_for_data`] poll.
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
    started: Instant,
    deadline: Option<Instant>,
    interval: Duration,
    max_interval: Duration,
}

impl Schedule {
    pub(crate) fn start(options: WaitOptions) -> Schedule {
        let started = Instant::now();
        // Zero intervals would spin: at least a millisecond between polls.
        let max_interval = options.max_interval.max(Duration::from_millis(1));
        Schedule {
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

    /// The options of a call the wait starts now (a poll or a read): a deadline of its own
    /// that ends [`DEADLINE_ALLOWANCE`] after the wait's, retries and waits for the rate limiter
    /// or a token included; none when the wait has no deadline.
    pub(crate) fn call_options(&self) -> Option<CallOptions> {
        let left = self
            .deadline?
            .saturating_duration_since(Instant::now())
            .saturating_add(DEADLINE_ALLOWANCE);
        Some(CallOptions::new().timeout(left))
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

/// Waiting for the customer.
impl Client {
    /// Reads session `session_id` (`GET /v1/sessions/{sessionId}`) until its
    /// `customerProgressStatus` is no longer `WAITING_FOR_CUSTOMER`, and returns it. See the
    /// [module documentation](self) for what ends the wait.
    ///
    /// The session's providers may not have answered yet when this returns:
    /// [`wait_for_data`](Client::wait_for_data) waits for them too.
    pub async fn wait_for_customer(
        &self,
        session_id: Uuid,
        options: WaitOptions,
    ) -> Result<Session> {
        self.wait_for_customer_within(session_id, &mut Schedule::start(options))
            .await
    }

    /// [`wait_for_customer`](Client::wait_for_customer) on `schedule`'s clock.
    pub(crate) async fn wait_for_customer_within(
        &self,
        session_id: Uuid,
        schedule: &mut Schedule,
    ) -> Result<Session> {
        loop {
            // This poll's outcome; the failures that end the wait at once return here.
            let poll = self.get_session().session_id(session_id);
            let poll = crate::operation::call_with(poll, schedule.call_options());
            let outcome: Result<Session> = match poll.await {
                Ok(session)
                    if session.customer_progress_status
                        != CustomerProgressStatus::WaitingForCustomer =>
                {
                    return Ok(session);
                }
                Ok(session) => {
                    tracing::debug!(%session_id, "session still waiting for the customer");
                    Ok(session)
                }
                Err(error) if error.is_transient() => {
                    tracing::warn!(
                        %session_id,
                        error = &error as &dyn std::error::Error,
                        "polling the session failed; polling again"
                    );
                    Err(error)
                }
                Err(error) => return Err(error),
            };
            if schedule.is_over() {
                // When the last poll failed, its error says more than an older session would.
                let session = outcome?;
                return Err(Error::WaitTimedOut {
                    session: Box::new(session),
                    waited: schedule.waited(),
                });
            }
            schedule.pause().await;
        }
    }
}
