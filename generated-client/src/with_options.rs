//! Options for the calls a client makes on its own: `client.with_options(options)` gives the
//! waits (every poll of [`wait_for_customer`](WithCallOptions::wait_for_customer), every read of
//! `wait_for_data`) and the reads by metadata (`session_dataset_stream`, `json_answer_stream`,
//! `operation_stream`) the per-call options a builder takes with `.options(..)`: extra headers
//! (a correlation id, a tenant), a retry policy, a deadline per call.
//!
//! ```no_run
//! # async fn f(client: &creditdata_client::Client, id: uuid::Uuid) -> creditdata_client::Result<()> {
//! use creditdata_client::call_options::CallOptions;
//! use creditdata_client::wait::WaitOptions;
//!
//! let traced = CallOptions::new().header("x-correlation-id", "loan-4711")?;
//! let session = client
//!     .with_options(traced)
//!     .wait_for_customer(id, WaitOptions::default())
//!     .await?;
//! # let _ = session;
//! # Ok(()) }
//! ```
//!
//! A wait's own deadline still bounds each of its calls: a call's timeout is the shorter of the
//! options' and what is left of the wait (plus
//! [`DEADLINE_ALLOWANCE`](crate::wait::DEADLINE_ALLOWANCE)).

use crate::Client;
use crate::call_options::CallOptions;

impl Client {
    /// This client's own calls (waits, reads by metadata) made with `options`, as a builder's
    /// call is with `.options(options)` (see [the module](crate::with_options)).
    pub fn with_options(&self, options: CallOptions) -> WithCallOptions<'_> {
        WithCallOptions {
            client: self,
            options,
        }
    }
}

/// A client whose waits and reads by metadata carry per-call options: made by
/// [`Client::with_options`]. Its methods are the client's, each call they make given the
/// options.
#[derive(Debug, Clone)]
#[must_use = "nothing is sent until one of its methods is awaited"]
pub struct WithCallOptions<'c> {
    pub(crate) client: &'c Client,
    pub(crate) options: CallOptions,
}

impl WithCallOptions<'_> {
    /// The options each call is given.
    pub fn options(&self) -> &CallOptions {
        &self.options
    }
}
