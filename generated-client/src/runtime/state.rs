//! The state every generated `Client` carries (progenitor's "inner type"): credentials, retry
//! policy, timeouts, body limit, origin and rate limiter, below the generated code.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Authenticator;
use crate::body_limits::DEFAULT_MAX_RESPONSE_BODY;
#[cfg(feature = "rate-limit")]
use crate::rate_limit::RateLimiter;
use crate::retry::RetryPolicy;
/// The `Client`'s inner state (progenitor's "inner type"): credentials, retry policy and
/// per-request timeout. Cheap to clone; its `Debug` never shows a secret. Built by
/// [`ClientBuilder::build`](crate::ClientBuilder::build).
// Plumbing of the generated code (progenitor's "inner type", in `Client::new`'s signature):
// public because the generated `Client` names it, hidden from the documented API.
#[doc(hidden)]
#[derive(Clone)]
pub struct ClientState {
    pub(crate) inner: Arc<StateInner>,
}

pub(crate) struct StateInner {
    pub(crate) auth: Option<Authenticator>,
    pub(crate) retry: RetryPolicy,
    /// Total time allowed for one attempt of a JSON call, body included (downloads are bounded
    /// by the idle-read timeout of the HTTP client instead, so large files are never cut off).
    pub(crate) request_timeout: Option<Duration>,
    /// The most bytes of a JSON success body read.
    pub(crate) max_response_body: u64,
    /// The service's base URL, whose origin every answer must come from (`None`: not checked).
    pub(crate) origin: Option<reqwest::Url>,
    /// Paces every attempt, shared by the client's clones ([`crate::rate_limit`]).
    #[cfg(feature = "rate-limit")]
    pub(crate) rate_limiter: Option<RateLimiter>,
    /// The tracer and instruments calls report to (`None`: a state no builder made).
    #[cfg(feature = "opentelemetry")]
    pub(crate) telemetry: Option<crate::telemetry::Telemetry>,
}

impl fmt::Debug for ClientState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("ClientState");
        shown
            .field("auth", &self.inner.auth)
            .field("retry", &self.inner.retry)
            .field("request_timeout", &self.inner.request_timeout)
            .field("max_response_body", &self.inner.max_response_body);
        #[cfg(feature = "rate-limit")]
        shown.field("rate_limiter", &self.inner.rate_limiter);
        shown.finish()
    }
}

impl ClientState {
    pub(crate) fn new(
        auth: Option<Authenticator>,
        retry: RetryPolicy,
        request_timeout: Option<Duration>,
        max_response_body: u64,
        origin: Option<reqwest::Url>,
    ) -> Self {
        ClientState {
            inner: Arc::new(StateInner {
                auth,
                retry,
                request_timeout,
                max_response_body,
                origin,
                #[cfg(feature = "rate-limit")]
                rate_limiter: None,
                #[cfg(feature = "opentelemetry")]
                telemetry: None,
            }),
        }
    }

    #[cfg(feature = "rate-limit")]
    /// The same state with `limiter` pacing every attempt. Only for a state no clone has seen
    /// yet (the builder's): a shared one is left as it is.
    pub(crate) fn with_rate_limiter(mut self, limiter: Option<RateLimiter>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.rate_limiter = limiter;
        }
        self
    }

    #[cfg(feature = "opentelemetry")]
    /// The same state reporting to the global OpenTelemetry providers as they are now, for the
    /// service at `base_url`. Only for a state no clone has seen yet (the builder's).
    pub(crate) fn with_telemetry(mut self, base_url: &str) -> Self {
        if let (Some(inner), Ok(url)) =
            (Arc::get_mut(&mut self.inner), reqwest::Url::parse(base_url))
        {
            inner.telemetry = Some(crate::telemetry::Telemetry::from_globals(&url));
        }
        self
    }

    #[cfg(feature = "rate-limit")]
    /// The rate limiter every attempt waits for, when one is configured.
    pub fn rate_limiter(&self) -> Option<&RateLimiter> {
        self.inner.rate_limiter.as_ref()
    }

    /// The retry policy calls follow.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The total time one attempt of a JSON call may take, if bounded.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.inner.request_timeout
    }

    /// The most bytes of a JSON success body the client reads.
    pub fn max_response_body(&self) -> u64 {
        self.inner.max_response_body
    }
}

impl Default for ClientState {
    /// No credentials, default retries, no request timeout, the default body limit, answers
    /// accepted from any origin (nothing is known of the service's).
    fn default() -> Self {
        ClientState::new(
            None,
            RetryPolicy::default(),
            None,
            DEFAULT_MAX_RESPONSE_BODY,
            None,
        )
    }
}
