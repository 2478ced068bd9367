//! Waiting for the customer: [`Client::wait_for_customer`] polls a session until it leaves
//! `WAITING_FOR_CUSTOMER` (documented in [`crate::wait`]).

use uuid::Uuid;

use super::schedule::{Schedule, WaitOptions};
use crate::types::{CustomerProgressStatus, Session};
use crate::with_options::WithCallOptions;
use crate::{Client, Error, Result};

/// Waiting for the customer.
impl Client {
    /// Reads session `session_id` (`GET /v1/sessions/{sessionId}`) until its
    /// `customerProgressStatus` is no longer `WAITING_FOR_CUSTOMER`, and returns it. See the
    /// [module documentation](crate::wait) for what ends the wait.
    ///
    /// The session's providers may not have answered yet when this returns:
    /// [`wait_for_data`](Client::wait_for_data) waits for them too.
    pub async fn wait_for_customer(
        &self,
        session_id: Uuid,
        options: WaitOptions,
    ) -> Result<Session> {
        self.wait_for_customer_within(session_id, &mut Schedule::start(options, None))
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

impl WithCallOptions<'_> {
    /// [`Client::wait_for_customer`], every poll made with these options.
    pub async fn wait_for_customer(
        &self,
        session_id: Uuid,
        options: WaitOptions,
    ) -> Result<Session> {
        let mut schedule = Schedule::start(options, Some(self.options.clone()));
        self.client
            .wait_for_customer_within(session_id, &mut schedule)
            .await
    }
}
