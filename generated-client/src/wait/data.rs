//! Waiting for the data: [`Client::wait_for_data`] waits for the customer, then until every
//! provider of the datasets of the default gate has given its final answer;
//! [`Client::wait_for_datasets`] does the same for the datasets the caller names (documented in
//! [`crate::wait`]; the gate in [`crate::readiness`]).

use std::fmt;
use std::time::Duration;

use futures_util::StreamExt as _;
use uuid::Uuid;

use super::schedule::{Schedule, WaitOptions};
use crate::generated_session_datasets::fetch;
use crate::readiness::Gate;
use crate::session_datasets::{Dataset, SessionDatasets};
use crate::types::{CustomerProgressStatus, Session};
use crate::with_options::WithCallOptions;
use crate::{Client, Error, Result};

/// How [`Client::wait_for_data`] ended, with what it read last (so the caller need not read
/// again). `Debug` shows the session's id and status and each dataset's readiness, never
/// personal data or dataset contents.
#[derive(Clone)]
#[non_exhaustive]
pub enum DataWait {
    /// The customer completed and every provider of the gate's datasets answered:
    /// [`SessionDatasets::is_complete`] (judged on the gate of the wait).
    Ready {
        /// The session as last read.
        session: Box<Session>,
        /// Every dataset, as last read.
        datasets: Box<SessionDatasets>,
    },
    /// Every provider of the gate's datasets gave its final answer, but some failed or
    /// refused, or a dataset of the gate could not be read (with an error that is not
    /// transient): `datasets.readiness()` says which.
    ReadyWithFailures {
        /// The session as last read.
        session: Box<Session>,
        /// Every dataset, as last read.
        datasets: Box<SessionDatasets>,
    },
    /// The deadline passed first. While the customer had not completed, `datasets` is `None`
    /// (the session says `WAITING_FOR_CUSTOMER`); after, it is the last read, whose
    /// `readiness().pending` lists what is still pending.
    TimedOut {
        /// The session as last read.
        session: Box<Session>,
        /// The datasets as last read, once the customer had completed.
        datasets: Option<Box<SessionDatasets>>,
        /// How long the wait lasted.
        waited: Duration,
    },
    /// The customer will not complete: the session left `WAITING_FOR_CUSTOMER` for something
    /// other than `COMPLETED_BY_CUSTOMER` (`EXPIRED`, `DELIVERY_FAILED`, or a status this client
    /// does not know). No data is read.
    CustomerDidNotComplete {
        /// The session as read.
        session: Box<Session>,
    },
}

impl DataWait {
    /// The session as last read.
    pub fn session(&self) -> &Session {
        match self {
            DataWait::Ready { session, .. }
            | DataWait::ReadyWithFailures { session, .. }
            | DataWait::TimedOut { session, .. }
            | DataWait::CustomerDidNotComplete { session } => session,
        }
    }

    /// The datasets as last read, if any were.
    pub fn datasets(&self) -> Option<&SessionDatasets> {
        match self {
            DataWait::Ready { datasets, .. } | DataWait::ReadyWithFailures { datasets, .. } => {
                Some(datasets)
            }
            DataWait::TimedOut { datasets, .. } => datasets.as_deref(),
            DataWait::CustomerDidNotComplete { .. } => None,
        }
    }

    /// The datasets as last read, if any were.
    pub fn into_datasets(self) -> Option<SessionDatasets> {
        match self {
            DataWait::Ready { datasets, .. } | DataWait::ReadyWithFailures { datasets, .. } => {
                Some(*datasets)
            }
            DataWait::TimedOut { datasets, .. } => datasets.map(|d| *d),
            DataWait::CustomerDidNotComplete { .. } => None,
        }
    }

    /// Whether every provider answered ([`DataWait::Ready`]).
    pub fn is_ready(&self) -> bool {
        matches!(self, DataWait::Ready { .. })
    }
}

impl fmt::Debug for DataWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DataWait::Ready { .. } => "Ready",
            DataWait::ReadyWithFailures { .. } => "ReadyWithFailures",
            DataWait::TimedOut { .. } => "TimedOut",
            DataWait::CustomerDidNotComplete { .. } => "CustomerDidNotComplete",
        };
        let session = self.session();
        let mut out = f.debug_struct(name);
        out.field("session_id", &session.id).field(
            "customer_progress_status",
            &session.customer_progress_status,
        );
        if let DataWait::TimedOut { waited, .. } = self {
            out.field("waited", waited);
        }
        if let Some(datasets) = self.datasets() {
            out.field("readiness", &datasets.readiness().to_string());
        }
        out.finish()
    }
}

/// `session 6f1c…: ready`, `…: still 2 pending (...) after 900 s`.
impl fmt::Display for DataWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.session();
        write!(f, "session {}: ", session.id)?;
        match self {
            DataWait::Ready { .. } => f.write_str("every provider answered"),
            DataWait::ReadyWithFailures { datasets, .. } => {
                write!(f, "final, with failures: {}", datasets.readiness())
            }
            DataWait::TimedOut {
                datasets: Some(datasets),
                waited,
                ..
            } => write!(
                f,
                "still {} after {} s",
                datasets.readiness(),
                waited.as_secs()
            ),
            DataWait::TimedOut { waited, .. } => write!(
                f,
                "still {} after {} s",
                session.customer_progress_status,
                waited.as_secs()
            ),
            DataWait::CustomerDidNotComplete { .. } => write!(
                f,
                "{}: the customer did not complete",
                session.customer_progress_status
            ),
        }
    }
}

/// The datasets of the gate worth reading again: those with a pending provider, and those
/// whose read failed with an error that may pass. A dataset outside the gate is read once and
/// never waited for.
fn to_read_again(datasets: &SessionDatasets) -> Vec<Dataset> {
    let readiness = datasets.readiness();
    let mut again = readiness.pending_datasets();
    again.extend(
        readiness
            .unreadable
            .iter()
            .filter(|(_, error)| error.is_transient())
            .map(|(dataset, _)| *dataset),
    );
    again.into_iter().collect()
}

/// Waiting for the data.
impl Client {
    /// Waits until the customer has completed session `session_id` **and** every provider of
    /// the datasets of the default gate ([`Gate::Default`]: the datasets this client was first
    /// generated with) has given its final answer, or until `options.timeout`; see
    /// [`DataWait`] for the results. The same as [`wait_for_datasets`](Client::wait_for_datasets)
    /// with [`Gate::Default`]: a dataset a later release of the API adds is read and reported,
    /// never waited for, so this call decides as it did when the code was written. Name the
    /// datasets a decision uses with [`wait_for_datasets`](Client::wait_for_datasets).
    ///
    /// First the session is polled as by [`wait_for_customer`](Client::wait_for_customer);
    /// once it is `COMPLETED_BY_CUSTOMER`, every dataset is read
    /// ([`session_datasets`](Client::session_datasets)), then only the datasets still pending
    /// (or whose read failed with a transient error) are read again, with the same backoff
    /// ([`WaitOptions`]) and within the client's rate limiter, until nothing is pending. A
    /// provider whose status this client does not know counts as final (failed), so it never
    /// holds the wait: see [`crate::readiness`].
    ///
    /// Errors: those that end [`wait_for_customer`](Client::wait_for_customer) (a session
    /// that does not exist, a refused token...), and a session that does not exist when its
    /// datasets are read. A deadline is not an error: it is [`DataWait::TimedOut`].
    pub async fn wait_for_data(&self, session_id: Uuid, options: WaitOptions) -> Result<DataWait> {
        self.wait_for_datasets(session_id, Gate::Default, options)
            .await
    }

    /// Waits as [`wait_for_data`](Client::wait_for_data) does, for the datasets of `gate`: the
    /// datasets a decision uses (`[Dataset::Scores, Dataset::NegativeTradelines]`), or
    /// [`Gate::Every`]. Every dataset is read once; only those of the gate are waited for and
    /// judged ([`DataWait::Ready`] means every provider of them answered), and a deprecated one
    /// the gate [requires](Gate::requires) is read too. The datasets returned keep the gate: their
    /// [`readiness`](SessionDatasets::readiness) is judged on it.
    ///
    /// ```no_run
    /// use creditdata_client::prelude::*;
    /// use creditdata_client::session_datasets::Dataset;
    ///
    /// # async fn f(client: &Client, id: uuid::Uuid) -> Result<()> {
    /// let gate = [Dataset::Scores, Dataset::NegativeTradelines];
    /// match client.wait_for_datasets(id, gate, WaitOptions::default()).await? {
    ///     DataWait::Ready { datasets, .. } => {
    ///         // decide on the scores and the negative tradelines
    ///         let _ = datasets;
    ///     }
    ///     other => eprintln!("no decision: {other}"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn wait_for_datasets(
        &self,
        session_id: Uuid,
        gate: impl Into<Gate>,
        options: WaitOptions,
    ) -> Result<DataWait> {
        self.wait_for_datasets_on(session_id, gate.into(), Schedule::start(options, None))
            .await
    }

    /// [`wait_for_datasets`](Client::wait_for_datasets) on `schedule`'s clock, each call with
    /// its options.
    async fn wait_for_datasets_on(
        &self,
        session_id: Uuid,
        gate: Gate,
        mut schedule: Schedule,
    ) -> Result<DataWait> {
        let session = match self
            .wait_for_customer_within(session_id, &mut schedule)
            .await
        {
            Ok(session) => session,
            Err(Error::WaitTimedOut { session, waited }) => {
                return Ok(DataWait::TimedOut {
                    session,
                    datasets: None,
                    waited,
                });
            }
            Err(error) => return Err(error),
        };
        let session = Box::new(session);
        if session.customer_progress_status != CustomerProgressStatus::CompletedByCustomer {
            return Ok(DataWait::CustomerDidNotComplete { session });
        }
        let mut read = self.session_datasets(session_id).gate(gate);
        if let Some(options) = schedule.call_options() {
            read = read.options(options);
        }
        let mut datasets = Box::new(read.await?);
        loop {
            let again = to_read_again(&datasets);
            if again.is_empty() {
                return Ok(if datasets.is_complete() {
                    DataWait::Ready { session, datasets }
                } else {
                    DataWait::ReadyWithFailures { session, datasets }
                });
            }
            if schedule.is_over() {
                return Ok(DataWait::TimedOut {
                    session,
                    datasets: Some(datasets),
                    waited: schedule.waited(),
                });
            }
            tracing::debug!(
                %session_id,
                pending = again.len(),
                "datasets still waiting for their providers"
            );
            schedule.pause().await;
            let mut reads = futures_util::stream::iter(again)
                .map(|dataset| fetch(self, session_id, dataset, schedule.call_options().as_ref()))
                .buffer_unordered(crate::session_datasets::DEFAULT_CONCURRENCY);
            while let Some(fetched) = reads.next().await {
                datasets.store(fetched);
            }
        }
    }
}

impl WithCallOptions<'_> {
    /// [`Client::wait_for_data`], every poll and read made with these options.
    pub async fn wait_for_data(&self, session_id: Uuid, options: WaitOptions) -> Result<DataWait> {
        self.wait_for_datasets(session_id, Gate::Default, options)
            .await
    }

    /// [`Client::wait_for_datasets`], every poll and read made with these options.
    pub async fn wait_for_datasets(
        &self,
        session_id: Uuid,
        gate: impl Into<Gate>,
        options: WaitOptions,
    ) -> Result<DataWait> {
        let schedule = Schedule::start(options, Some(self.options.clone()));
        self.client
            .wait_for_datasets_on(session_id, gate.into(), schedule)
            .await
    }
}
