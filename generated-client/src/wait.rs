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
//!
//! [`Client::wait_for_customer`]: crate::Client::wait_for_customer
//! [`Client::wait_for_data`]: crate::Client::wait_for_data
//! [`Error::WaitTimedOut`]: crate::Error::WaitTimedOut
//! [`Error::DeadlineExceeded`]: crate::Error::DeadlineExceeded

mod customer;
#[cfg(feature = "session-datasets")]
mod data;
mod schedule;

#[cfg(feature = "session-datasets")]
pub use data::DataWait;
pub use schedule::{DEADLINE_ALLOWANCE, WaitOptions};
