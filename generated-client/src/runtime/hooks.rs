//! progenitor's `ClientHooks` for the generated `Client`, above it: every call's token, attempts,
//! retries, error capture, tracing span and OpenTelemetry report (`crate::telemetry`), and
//! [`Client::access_token`] on the same loop.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::header::AUTHORIZATION;
use tokio::time::Instant;
use tracing::Instrument;

use super::ClientState;
use crate::Client;
use crate::auth::{AccessToken, Authenticator};
use crate::body_limits::limit_body;
use crate::call_options::ActiveOptions;
use crate::error::{ApiError, CarriedError, Error, MAX_ERROR_BODY};
use crate::operation::{OperationMeta, ResponseKind};
#[cfg(feature = "rate-limit")]
use crate::rate_limit::{Admission, RateLimiter};
use crate::retry::{self, RetryPolicy, Retryable};
use crate::urls::{redact_url, same_origin, shown_location};

/// Operations the generated code knows by progenitor's name; anything else (a newer generated
/// file against an older runtime) is treated as a non-idempotent streamed call: never retried
/// once sent, and not bounded by the per-request timeout (it may be a download).
fn meta_for(info: &OperationInfo) -> &'static OperationMeta {
    static UNKNOWN: OperationMeta = OperationMeta {
        id: "",
        rust_name: "",
        method: "",
        path: "",
        summary: "",
        idempotent: false,
        deprecated: false,
        response: ResponseKind::Stream,
    };
    crate::generated::operations::by_rust_name(info.operation_id).unwrap_or(&UNKNOWN)
}

impl ClientHooks<ClientState> for Client {
    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        self.exec_as(request, info, meta_for(info).response).await
    }

    async fn post<E>(
        &self,
        result: &reqwest::Result<reqwest::Response>,
        _info: &OperationInfo,
    ) -> Result<(), progenitor_client::Error<E>> {
        match result {
            Ok(response) => match response.extensions().get::<CarriedError>() {
                Some(CarriedError(error)) => Err(progenitor_client::Error::UnexpectedResponse(
                    carrier_of(error.clone()),
                )),
                None => Ok(()),
            },
            Err(_) => Ok(()),
        }
    }
}

impl Client {
    /// [`ClientHooks::exec`] with the success body delivered as `response` says: the generated
    /// code passes its operation's kind; a crate-internal streamed read of a JSON operation
    /// (`crate::dataset_stream`) passes [`ResponseKind::Stream`], so that its body is neither
    /// held whole nor bounded by the whole-body limit and timeout (its reader bounds it).
    pub(crate) async fn exec_as(
        &self,
        mut request: reqwest::Request,
        info: &OperationInfo,
        response: ResponseKind,
    ) -> reqwest::Result<reqwest::Response> {
        let meta = meta_for(info);
        let operation = if meta.id.is_empty() {
            info.operation_id
        } else {
            meta.id
        };
        let span = tracing::info_span!(
            "creditdata.call",
            operation,
            method = %request.method(),
            attempt = tracing::field::Empty,
            status = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let mut record = CallRecord::default();
        if let Some(error) = crate::limits::violation(&request, operation) {
            return Ok(carrier(error));
        }
        // Read once: the call's own options, when it was made with some (`call_options`).
        let options = crate::call_options::active();
        if let Some(options) = &options
            && let Err(error) = options.add_headers(&mut request, operation)
        {
            return Ok(carrier(error));
        }
        #[cfg(feature = "opentelemetry")]
        {
            record.telemetry = self
                .inner()
                .inner
                .telemetry
                .as_ref()
                .map(|t| t.call(meta, operation));
        }
        let called = Called {
            meta,
            response,
            operation,
        };
        // With no subscriber interested in the span, entering and leaving it on every poll and
        // reading the clock for its duration are pure cost (`benches/client_overhead.rs`).
        let outcome = if span.is_disabled() {
            self.execute(request, called, options.as_ref(), &mut record)
                .await
        } else {
            let started = Instant::now();
            let outcome = self
                .execute(request, called, options.as_ref(), &mut record)
                .instrument(span.clone())
                .await;
            // Recorded once, at the end: some subscribers append a field recorded twice.
            span.record("attempt", record.attempts);
            if let Some(status) = record.status {
                span.record("status", status);
            }
            span.record("duration_ms", started.elapsed().as_millis() as u64);
            outcome
        };
        if let Some(options) = &options {
            options.report_attempts(record.attempts);
        }
        #[cfg(feature = "opentelemetry")]
        if let Some(telemetry) = record.telemetry.take() {
            telemetry.ended(outcome.as_ref().map(|_| ()));
        }
        match outcome {
            Ok(response) => Ok(response),
            Err(error) => Ok(carrier(error)),
        }
    }
}

/// A response whose only content is `error` in its extensions, for progenitor to pass through.
fn carrier(error: Error) -> reqwest::Response {
    carrier_of(Arc::new(error))
}

fn carrier_of(error: Arc<Error>) -> reqwest::Response {
    let status = error
        .status()
        .unwrap_or(reqwest::StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = http::Response::new(Bytes::new());
    *response.status_mut() = status;
    response.extensions_mut().insert(CarriedError(error));
    reqwest::Response::from(response)
}

/// What the span of a call reports.
#[derive(Default)]
struct CallRecord<'a> {
    attempts: u32,
    status: Option<u16>,
    /// The call's OpenTelemetry span and instruments, when the client reports to them.
    #[cfg(feature = "opentelemetry")]
    telemetry: Option<crate::telemetry::CallTelemetry<'a>>,
    #[cfg(not(feature = "opentelemetry"))]
    telemetry: std::marker::PhantomData<&'a ()>,
}

/// The operation a call is for, and how its success body is delivered.
#[derive(Clone, Copy)]
struct Called {
    meta: &'static OperationMeta,
    response: ResponseKind,
    operation: &'static str,
}

/// What became of one attempt.
enum Attempt {
    /// A response to hand to the generated code.
    Done(reqwest::Response),
    /// The service refused this token (401) and it could be replaced.
    Refused(AccessToken, Error),
    /// A failure, and whether it may be repeated.
    Failed(Error, Retryable),
}

impl Client {
    /// One call, with the client's settings or the call's own options.
    async fn execute(
        &self,
        request: reqwest::Request,
        called: Called,
        options: Option<&ActiveOptions>,
        record: &mut CallRecord<'_>,
    ) -> Result<reqwest::Response, Error> {
        let Some(options) = options else {
            let policy = &self.inner().inner.retry;
            return self
                .execute_with_policy(request, called, policy, None, record)
                .await;
        };
        // Boxed, like the other rare paths: a call without options keeps a small future.
        Box::pin(self.execute_with_options(request, called, options, record)).await
    }

    /// One call under its own options: its retry policy, and its deadline over everything
    /// (see [`crate::call_options`]).
    async fn execute_with_options(
        &self,
        request: reqwest::Request,
        called: Called,
        options: &ActiveOptions,
        record: &mut CallRecord<'_>,
    ) -> Result<reqwest::Response, Error> {
        let policy = options.retry.as_ref().unwrap_or(&self.inner().inner.retry);
        // A deadline too far to represent (`Duration::MAX`) is no deadline.
        let Some((timeout, deadline)) = options
            .timeout
            .and_then(|timeout| Some((timeout, Instant::now().checked_add(timeout)?)))
        else {
            return self
                .execute_with_policy(request, called, policy, None, record)
                .await;
        };
        let call = self.execute_with_policy(request, called, policy, Some(deadline), record);
        let outcome = tokio::time::timeout_at(deadline, call).await;
        let passed = Err(Error::DeadlineExceeded {
            operation: Some(called.operation),
            attempts: record.attempts,
            timeout,
        });
        match outcome {
            // An attempt cut short by the deadline's share of its request timeout.
            Ok(Err(Error::Timeout { .. })) if Instant::now() >= deadline => passed,
            Ok(outcome) => outcome,
            Err(_elapsed) => passed,
        }
    }

    /// One call: attempts, token handling and error capture (see the module documentation).
    async fn execute_with_policy(
        &self,
        request: reqwest::Request,
        called: Called,
        policy: &RetryPolicy,
        deadline: Option<Instant>,
        record: &mut CallRecord<'_>,
    ) -> Result<reqwest::Response, Error> {
        let Called {
            meta,
            response,
            operation,
        } = called;
        // Attempts made, the retry after a 401 included (what errors report).
        let mut attempts: u32 = 0;
        // Attempts counted against the policy (the retry after a 401 is not one of them).
        let mut counted: u32 = 0;
        let mut refreshed_after_401 = false;
        let mut refused: Option<AccessToken> = None;
        let state = &self.inner().inner;
        // Kept for another attempt only when one can happen: a retry, or the one after a 401.
        let may_repeat =
            policy.max_attempts > 1 || state.auth.as_ref().is_some_and(Authenticator::can_refresh);
        let mut original = Some(request);
        let mut first_attempt: Option<Instant> = None;
        loop {
            attempts += 1;
            counted += 1;
            record.attempts = attempts;
            // Before the token: a long wait for the budget must not outlast the token.
            #[cfg(feature = "rate-limit")]
            let admission = match &state.rate_limiter {
                // Boxed: the common path (no limiter) keeps a small future.
                Some(limiter) => {
                    #[cfg(feature = "opentelemetry")]
                    let waiting_since = Instant::now();
                    let admission = Box::pin(limiter.acquire()).await;
                    #[cfg(feature = "opentelemetry")]
                    if let Some(telemetry) = &record.telemetry {
                        telemetry.rate_limit_waited(waiting_since);
                        #[cfg(feature = "shared-rate-limit")]
                        if admission.store_outage_began() {
                            telemetry.rate_limit_store_unavailable();
                        }
                    }
                    Some(admission)
                }
                None => None,
            };
            // The retry policy's `max_elapsed` counts from the first admission: time spent
            // waiting for the rate limiter's budget is not the service being slow.
            let retry_clock = *first_attempt.get_or_insert_with(Instant::now);
            let token_to_replace = refused.take();
            // The token goes into the kept request before it is copied: the copy's headers then
            // need no room to grow.
            let token = match &state.auth {
                None => None,
                Some(auth) => {
                    let token = match &token_to_replace {
                        Some(old) => in_call(record, auth.refresh_after_rejection(old)).await,
                        None => in_call(record, auth.token()).await,
                    };
                    match token {
                        Ok(token) => Some(token),
                        Err(source) => {
                            // The request was not sent: repeating it is safe for any method.
                            let verdict = if source.is_transient() {
                                Retryable::Yes { not_before: None }
                            } else {
                                Retryable::No
                            };
                            tracing::debug!(
                                error = &source as &dyn std::error::Error,
                                "no access token"
                            );
                            let error = Error::Auth {
                                operation: Some(operation),
                                source,
                            };
                            match wait_before_retry(
                                policy,
                                counted,
                                retry_clock,
                                deadline,
                                error,
                                verdict,
                            ) {
                                Ok(delay) => {
                                    Box::pin(tokio::time::sleep(delay)).await;
                                    continue;
                                }
                                Err(error) => return Err(error),
                            }
                        }
                    }
                }
            };
            if let (Some(token), Some(kept)) = (&token, original.as_mut()) {
                kept.headers_mut()
                    .insert(AUTHORIZATION, token.header().clone());
            }
            // A body that cannot be copied (a stream) can be sent only once.
            let Some(mut this_try) = original
                .as_ref()
                .filter(|_| may_repeat)
                .and_then(copy_request)
                .or_else(|| original.take())
            else {
                unreachable!("the loop ends when the request could not be kept for another try")
            };
            let can_repeat = original.is_some();
            if let (Some(token), false) = (&token, can_repeat) {
                this_try
                    .headers_mut()
                    .insert(AUTHORIZATION, token.header().clone());
            }

            if let Some(deadline) = deadline {
                bound_by_deadline(&mut this_try, response, state.request_timeout, deadline);
            }
            #[cfg(feature = "opentelemetry")]
            let attempt_telemetry = record
                .telemetry
                .as_ref()
                .map(|t| t.attempt_started(&mut this_try, attempts));
            let outcome = self
                .attempt(this_try, meta, response, operation, attempts, token, record)
                .await;
            #[cfg(feature = "opentelemetry")]
            let outcome = match (&record.telemetry, attempt_telemetry) {
                (Some(telemetry), Some(attempt)) => {
                    attempt_reported(telemetry, attempt, outcome, meta)
                }
                _ => outcome,
            };
            #[cfg(feature = "rate-limit")]
            if let Some(admission) = admission {
                report_throttling(state.rate_limiter.as_ref(), admission, &outcome);
            }
            let (error, verdict) = match outcome {
                Attempt::Done(response) => return Ok(response),
                Attempt::Refused(token, error) => {
                    if !refreshed_after_401 && can_repeat {
                        // The token may have been revoked, or the clocks disagree: one new
                        // token, one more try, whatever the method (the service refused the
                        // request, so it had no effect).
                        tracing::debug!("access token refused (401); refreshing it once");
                        refreshed_after_401 = true;
                        refused = Some(token);
                        counted -= 1;
                        continue;
                    }
                    (error, Retryable::No)
                }
                Attempt::Failed(error, verdict) => (error, verdict),
            };
            if !can_repeat {
                return Err(error);
            }
            match wait_before_retry(policy, counted, retry_clock, deadline, error, verdict) {
                Ok(delay) => Box::pin(tokio::time::sleep(delay)).await,
                Err(error) => return Err(error),
            }
        }
    }
}

/// `future` (a token request) inside the call's OpenTelemetry context, when it has one.
#[cfg(feature = "opentelemetry")]
async fn in_call<F: Future>(record: &CallRecord<'_>, future: F) -> F::Output {
    match &record.telemetry {
        Some(telemetry) => telemetry.in_call(future).await,
        None => future.await,
    }
}

#[cfg(not(feature = "opentelemetry"))]
fn in_call<F: Future>(_: &CallRecord<'_>, future: F) -> F {
    future
}

/// Ends an attempt's span and records its duration; a streamed body counts its bytes.
#[cfg(feature = "opentelemetry")]
fn attempt_reported(
    telemetry: &crate::telemetry::CallTelemetry<'_>,
    attempt: crate::telemetry::AttemptTelemetry,
    outcome: Attempt,
    meta: &OperationMeta,
) -> Attempt {
    use crate::telemetry::AttemptEnd;
    match outcome {
        Attempt::Done(response) => {
            telemetry.attempt_ended(
                attempt,
                AttemptEnd::Status(response.status().as_u16(), None),
            );
            if meta.response == ResponseKind::Stream {
                Attempt::Done(telemetry.count_body(response))
            } else {
                Attempt::Done(response)
            }
        }
        Attempt::Refused(token, error) => {
            telemetry.attempt_ended(attempt, AttemptEnd::Status(401, Some(&error)));
            Attempt::Refused(token, error)
        }
        Attempt::Failed(error, verdict) => {
            let end = match &error {
                Error::Api(api) => AttemptEnd::Status(api.status.as_u16(), Some(&error)),
                other => AttemptEnd::Failed(other),
            };
            telemetry.attempt_ended(attempt, end);
            Attempt::Failed(error, verdict)
        }
    }
}

#[cfg(feature = "rate-limit")]
/// Tells the rate limiter about a 429, so that every clone holds back and the rate drops.
fn report_throttling(limiter: Option<&RateLimiter>, admission: Admission, outcome: &Attempt) {
    if let (Some(limiter), Attempt::Failed(Error::Api(api), _)) = (limiter, outcome)
        && api.status == reqwest::StatusCode::TOO_MANY_REQUESTS
    {
        limiter.throttled(admission, api.retry_after());
    }
}

/// The wait before the next attempt, or the error to return when there is none (a retry that
/// could not start before the call's deadline is none).
fn wait_before_retry(
    policy: &RetryPolicy,
    counted: u32,
    started: Instant,
    deadline: Option<Instant>,
    error: Error,
    verdict: Retryable,
) -> Result<Duration, Error> {
    let Retryable::Yes { not_before } = verdict else {
        return Err(error);
    };
    let Some(delay) = policy.next_delay(counted, not_before, started.elapsed()) else {
        return Err(error);
    };
    if let Some(deadline) = deadline
        && Instant::now()
            .checked_add(delay)
            .is_none_or(|end| end >= deadline)
    {
        return Err(error);
    }
    tracing::debug!(
        attempt = counted,
        error = &error as &dyn std::error::Error,
        delay_ms = delay.as_millis() as u64,
        retry_after = not_before.is_some(),
        "retrying"
    );
    Ok(delay)
}

impl Client {
    /// A currently valid access token, for a request the client does not make itself (a
    /// hand-written call, a `curl` for support, another tool).
    ///
    /// It comes from the same place as every call's token, with the same guarantees:
    ///
    /// - **Client credentials and sign-in**: the cached token while it is fresh; otherwise a new
    ///   one, refreshed ahead of its expiry (30 s before it, or a fifth of its lifetime if that is
    ///   shorter), so the token returned is good for at least that long. Only one token request
    ///   is in flight however many callers (and calls) wait: they all share its outcome.
    /// - **Sign-in**: a stored access token is used while it has more than a minute left;
    ///   otherwise the refresh token is used, and the rotated tokens are saved to the
    ///   `sign_in::TokenStore` (feature `sign-in`) before the new token is returned. A refused
    ///   refresh token is [`AuthErrorKind::SignInRequired`](crate::auth::AuthErrorKind::SignInRequired),
    ///   as for a call.
    /// - **A static bearer token**: that token, as configured (trimmed).
    ///
    /// No request is made to the service. A transient failure of the identity provider
    /// ([`Error::is_transient`]) is retried within the client's [`RetryPolicy`], as it would be
    /// for a call.
    ///
    /// The token is a [`SecretString`](secrecy::SecretString): it never shows in `Debug`, and
    /// reading it takes an explicit `expose_secret()`. Whoever holds it can act with the
    /// client's (or the person's) rights until it expires: do not log it or keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Auth`] when no token could be obtained (with the identity provider's reason),
    /// [`Error::Config`] when the client was built without credentials.
    pub async fn access_token(&self) -> Result<secrecy::SecretString, Error> {
        let state = &self.inner().inner;
        let Some(auth) = &state.auth else {
            return Err(Error::Config(
                "the client has no credentials, so it has no access token: give it a bearer \
                 token, client credentials or a sign-in when building it"
                    .to_string(),
            ));
        };
        let started = Instant::now();
        let mut counted: u32 = 0;
        loop {
            counted += 1;
            match auth.token().await {
                Ok(token) => return Ok(token.secret()),
                Err(source) => {
                    let verdict = if source.is_transient() {
                        Retryable::Yes { not_before: None }
                    } else {
                        Retryable::No
                    };
                    let error = Error::Auth {
                        operation: None,
                        source,
                    };
                    let delay =
                        wait_before_retry(&state.retry, counted, started, None, error, verdict)?;
                    Box::pin(tokio::time::sleep(delay)).await;
                }
            }
        }
    }

    /// One attempt: send (the token is in place), check the status; the success body is
    /// delivered as `response` says.
    #[allow(
        clippy::too_many_arguments,
        reason = "the call's state, passed down rather than bundled for one caller"
    )]
    async fn attempt(
        &self,
        mut request: reqwest::Request,
        meta: &'static OperationMeta,
        response_kind: ResponseKind,
        operation: &'static str,
        attempt: u32,
        token: Option<AccessToken>,
        record: &mut CallRecord<'_>,
    ) -> Attempt {
        let state = &self.inner().inner;
        // JSON calls: a total timeout per attempt, which reqwest applies to the body as well.
        if response_kind != ResponseKind::Stream
            && let Some(timeout) = state.request_timeout
        {
            request.timeout_mut().get_or_insert(timeout);
        }

        let response = match self.client().execute(request).await {
            Ok(response) => response,
            Err(error) => {
                let verdict = retry::transport_retryable(meta.idempotent, &error);
                let error = Error::from_reqwest(Some(operation), attempt, error);
                return Attempt::Failed(error, verdict);
            }
        };
        let status = response.status();
        record.status = Some(status.as_u16());
        if status.is_redirection() {
            // Only a redirect to another origin gets here: the builder's HTTP client follows
            // the others.
            let error = Error::Redirect {
                operation: Some(operation),
                status,
                location: shown_location(&response),
            };
            return Attempt::Failed(error, Retryable::No);
        }
        if let Some(origin) = &state.origin
            && !same_origin(origin, response.url())
        {
            let error = Error::InvalidResponse {
                operation: Some(operation),
                message: format!(
                    "the answer came from {}, not from the service's origin: the HTTP client given \
                     to ClientBuilder::http_client followed a redirect elsewhere (give it \
                     runtime::same_origin_redirects() as its redirect policy)",
                    redact_url(response.url())
                ),
            };
            return Attempt::Failed(error, Retryable::No);
        }
        if status.is_client_error() || status.is_server_error() {
            let verdict = retry::status_retryable(meta.idempotent, status, response.headers());
            // Boxed, like the other rare paths (token refresh, backoff): the common path's
            // future stays small, which measurably matters (`benches/client_overhead.rs`).
            let error = Box::pin(read_api_error(operation, response)).await;
            return match token {
                Some(token)
                    if status == reqwest::StatusCode::UNAUTHORIZED
                        && state.auth.as_ref().is_some_and(Authenticator::can_refresh) =>
                {
                    Attempt::Refused(token, error)
                }
                _ => Attempt::Failed(error, verdict),
            };
        }
        if response_kind == ResponseKind::AnyJson && is_empty_answer(&response) {
            return Attempt::Done(null_body(response));
        }
        if response_kind == ResponseKind::Stream {
            return Attempt::Done(response);
        }
        match limit_body(response, state.max_response_body) {
            Ok(response) => Attempt::Done(response),
            Err(exceeded) => Attempt::Failed(
                Error::ResponseTooLarge {
                    operation: Some(operation),
                    limit: exceeded.limit,
                },
                Retryable::No,
            ),
        }
    }
}

/// Bounds one attempt by the call's deadline, body included: reqwest's request timeout is the
/// one bound that follows the body after `exec` returns (a download's too). A JSON call's own
/// per-attempt timeout still applies when it ends sooner.
fn bound_by_deadline(
    request: &mut reqwest::Request,
    response: ResponseKind,
    per_attempt: Option<Duration>,
    deadline: Instant,
) {
    let left = deadline.saturating_duration_since(Instant::now());
    let own = per_attempt.filter(|_| response != ResponseKind::Stream);
    *request.timeout_mut() = Some(own.map_or(left, |own| own.min(left)));
}

/// A success answer with no body: 204, or a `Content-Length` of zero.
fn is_empty_answer(response: &reqwest::Response) -> bool {
    response.status() == reqwest::StatusCode::NO_CONTENT || response.content_length() == Some(0)
}

/// The same answer with the body `null`, for an operation whose body may be any JSON value or
/// none ([`ResponseKind::AnyJson`]): the generated decoder then yields `Value::Null` instead of
/// failing on an empty body after the service has acted.
fn null_body(response: reqwest::Response) -> reqwest::Response {
    let mut answer = http::Response::new(Bytes::from_static(b"null"));
    *answer.status_mut() = response.status();
    *answer.headers_mut() = response.headers().clone();
    answer.headers_mut().insert(
        reqwest::header::CONTENT_TYPE,
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    answer.headers_mut().insert(
        reqwest::header::CONTENT_LENGTH,
        reqwest::header::HeaderValue::from_static("4"),
    );
    reqwest::Response::from(answer)
}

/// A copy of `request` to send while the original is kept for another attempt; `None` when its
/// body is a stream. For body-less requests (every GET) it copies only what progenitor's
/// requests carry (method, URL, headers, version, timeout): `reqwest::Request::try_clone` also
/// builds and drops an extensions map on every call, a measurable share of the per-call cost
/// (`benches/client_overhead.rs`).
fn copy_request(request: &reqwest::Request) -> Option<reqwest::Request> {
    if request.body().is_some() {
        // reqwest alone can copy a body (or tell that it cannot).
        return request.try_clone();
    }
    let mut copy = reqwest::Request::new(request.method().clone(), request.url().clone());
    *copy.headers_mut() = request.headers().clone();
    *copy.version_mut() = request.version();
    if let Some(timeout) = request.timeout() {
        *copy.timeout_mut() = Some(*timeout);
    }
    Some(copy)
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of an error response into an [`ApiError`].
async fn read_api_error(operation: &'static str, mut response: reqwest::Response) -> Error {
    let status = response.status();
    let headers = std::mem::take(response.headers_mut());
    let mut body = BytesMut::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = MAX_ERROR_BODY - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            // A body cut short still leaves the status and what arrived.
            Ok(None) | Err(_) => break,
        }
    }
    Error::Api(Box::new(ApiError::new(
        Some(operation),
        status,
        headers,
        body.freeze(),
    )))
}

#[cfg(feature = "rate-limit")]
impl Client {
    /// The rate limiter every attempt of this client and its clones waits for, when one was
    /// configured ([`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)): its
    /// [`status`](crate::rate_limit::RateLimiter::status) tells progress displays how fast they may expect to go.
    pub fn rate_limiter(&self) -> Option<&RateLimiter> {
        progenitor_client::ClientInfo::inner(self).rate_limiter()
    }
}
