//! The one door of every call, below the generated code: the generated `send_with()` of each
//! operation builds its request and hands it to [`send`] with its operation's metadata
//! (`Self::META`) and the call's options; [`send`] adds the token, paces, attempts, retries,
//! reads the success body (bounded, [`crate::body_limits`]) and decodes it as the operation's
//! [`Answer`] says, and returns the typed value with the final status, headers and attempts
//! ([`CallResponse`]) or the [`Error`] naming the operation. Nothing here calls back into
//! generated code. [`access_token`] is the same token-and-retry step without a request.

use std::future::Future;
use std::marker::PhantomData;
use std::ops::RangeInclusive;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt;
use progenitor_client::ByteStream;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use tokio::time::Instant;
use tracing::Instrument;

use super::requests::{Attempts, Build};
use super::state::ClientState;
use super::state::StateInner;
use crate::auth::{AccessToken, Authenticator};
use crate::call_options::{CallOptions, CallResponse};
use crate::error::{ApiError, DecodeError, Error, MAX_ERROR_BODY};
use crate::operation::{OperationMeta, ResponseKind};
#[cfg(feature = "rate-limit")]
use crate::rate_limit::{Admission, RateLimiter};
use crate::retry::{self, RetryPolicy, Retryable};
use crate::urls::{redact_url, same_origin, shown_location};

/// How a success body is read before it is decoded.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Whole, within the client's body limit and the attempt's timeout, inside the attempt (a
    /// body cut off half-way is a failed attempt, retried like any transient failure).
    Whole,
    /// Not read: handed over as a stream.
    Stream,
    /// Not read at all (an operation without a success body).
    Nothing,
}

/// A success body as the attempt that got it left it.
#[doc(hidden)]
pub enum Body {
    /// Read whole.
    Whole(Bytes),
    /// Unread, the answer's body to stream.
    Stream(reqwest::Response),
    /// None read.
    Nothing,
}

/// How an operation's success answer becomes its output; the generated code names one per
/// operation ([`Json`], [`Streamed`], [`NoBody`]).
// Plumbing of the generated code: public because it names it, hidden from the documented API.
#[doc(hidden)]
pub trait Answer {
    /// What the call returns.
    type Output;
    /// How the body is read.
    const READ: Read;
    /// The output of `body`, an answer of `meta`'s operation.
    fn decode(meta: &'static OperationMeta, body: Body) -> Result<Self::Output, Error>;
}

/// A JSON body decoded as `T` (an operation whose body may be any JSON value or none,
/// [`ResponseKind::AnyJson`], gets `null` for an empty answer).
#[doc(hidden)]
pub struct Json<T>(PhantomData<fn() -> T>);

impl<T: serde::de::DeserializeOwned> Answer for Json<T> {
    type Output = T;
    const READ: Read = Read::Whole;

    fn decode(meta: &'static OperationMeta, body: Body) -> Result<T, Error> {
        let Body::Whole(body) = body else {
            return Err(unread(meta));
        };
        serde_json::from_slice(&body).map_err(|error| {
            Error::Decode(Box::new(DecodeError::from_serde(
                Some(meta.id),
                locate_decode_error::<T>(&body),
                &error,
                &body,
            )))
        })
    }
}

/// A body handed over unread, as a stream of bytes.
#[doc(hidden)]
pub struct Streamed;

impl Answer for Streamed {
    type Output = ByteStream;
    const READ: Read = Read::Stream;

    fn decode(meta: &'static OperationMeta, body: Body) -> Result<ByteStream, Error> {
        match body {
            Body::Stream(response) => Ok(ByteStream::new(Box::pin(response.bytes_stream()))),
            _ => Err(unread(meta)),
        }
    }
}

/// No body: the status says it all.
#[doc(hidden)]
pub struct NoBody;

impl Answer for NoBody {
    type Output = ();
    const READ: Read = Read::Nothing;

    fn decode(_: &'static OperationMeta, _: Body) -> Result<(), Error> {
        Ok(())
    }
}

/// A body delivered otherwise than its [`Answer`] reads it: only a bug of this module.
fn unread(meta: &'static OperationMeta) -> Error {
    Error::InvalidResponse {
        operation: Some(meta.id),
        message: "the answer's body was not read as the operation reads it".to_string(),
    }
}

/// Decodes `body` as `T` again, tracking the path, to say where it failed
/// (`sessions[2].createdAtUtc`). Only on the error path.
fn locate_decode_error<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<String> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(_) => None,
        Err(error) => Some(error.path().to_string()),
    }
}

/// The message of a request the generated code could not build (a required parameter not
/// given, a value its type refused), as the client's error.
#[doc(hidden)]
pub fn invalid_request(message: String) -> Error {
    Error::InvalidRequest {
        operation: None,
        message,
    }
}

/// A request reqwest could not build (a header value it refused), as the client's error.
#[doc(hidden)]
pub fn unbuilt(error: reqwest::Error) -> Error {
    Error::InvalidRequest {
        operation: None,
        message: crate::error::DisplayChain(&crate::urls::redact_reqwest(error)).to_string(),
    }
}

/// Sends `request`, the request of `meta`'s operation, with the client's policies and the
/// call's `options` (see [the module](self) and [`crate::call_options`]), and returns its
/// success answer as `A` decodes it, with the final status, headers and attempts. `request`
/// is the first attempt's request and the operation's build step that made it, which builds
/// each further attempt's request again (`None`: a request that cannot be built again, copied
/// for another attempt when its body can be). `success` holds the statuses the description
/// declares a success of the operation: any other status below 400 is an [`Error::Api`] naming
/// it (the generator writes them beside `Self::META`).
///
/// # Errors
///
/// Every failure as the [`Error`] naming the operation: an error status, a transport failure,
/// no token, a body over the limit or that does not decode, a refused per-call header.
#[doc(hidden)]
pub fn send<'c, A, F>(
    http: &'c reqwest::Client,
    state: &'c ClientState,
    meta: &'static OperationMeta,
    success: &'static [RangeInclusive<u16>],
    request: Result<(reqwest::Request, Option<F>), Error>,
    options: Option<Box<CallOptions>>,
) -> impl Future<Output = Result<CallResponse<A::Output>, Error>> + Send + use<'c, A, F>
where
    A: Answer,
    F: Fn() -> Result<reqwest::Request, Error> + Send + Sync + 'c,
{
    let called = Called {
        http,
        state: &state.inner,
        meta,
        success,
        read: A::READ,
    };
    // Not an `async fn`: one future fewer around the call's, each level copied whole when it
    // is first awaited (BENCHMARKS.md, P1). The request's own refusal (a parameter not given)
    // is returned when the future is awaited, like every other failure.
    call(called, request, options).map(move |outcome| {
        let (received, attempts) = outcome?;
        let Received {
            status,
            headers,
            body,
        } = received;
        let output = A::decode(meta, body)?;
        Ok(CallResponse::new(output, status, headers, attempts))
    })
}

/// A success answer: the final attempt's status and headers, its body as read.
pub(crate) struct Received {
    status: StatusCode,
    headers: HeaderMap,
    body: Body,
}

/// [`send`] up to the decoding: the same for every answer type.
async fn call<F>(
    called: Called<'_>,
    request: Result<(reqwest::Request, Option<F>), Error>,
    options: Option<Box<CallOptions>>,
) -> Result<(Received, u32), Error>
where
    F: Fn() -> Result<reqwest::Request, Error> + Sync,
{
    let meta = called.meta;
    let operation = meta.id;
    let (mut request, build) = request.map_err(|error| error.with_operation(operation))?;
    let span = tracing::info_span!(
        "creditdata.call",
        operation,
        method = %request.method(),
        attempt = tracing::field::Empty,
        status = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    );
    let mut record = CallRecord::default();
    if let Some(options) = &options {
        options.add_headers(&mut request, operation)?;
    }
    #[cfg(feature = "opentelemetry")]
    {
        record.telemetry = called
            .state
            .telemetry
            .as_ref()
            .map(|t| t.call(meta, operation));
    }
    let requests = Attempts::new(request, build.as_ref().map(|build| build as Build<'_>));
    // With no subscriber interested in the span, entering and leaving it on every poll and
    // reading the clock for its duration are pure cost (`benches/client_overhead.rs`).
    let outcome = if span.is_disabled() {
        execute(requests, called, options.as_deref(), &mut record).await
    } else {
        let started = Instant::now();
        let outcome = execute(requests, called, options.as_deref(), &mut record)
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
    #[cfg(feature = "opentelemetry")]
    if let Some(telemetry) = record.telemetry.take() {
        telemetry.ended(outcome.as_ref().map(|_| ()));
    }
    outcome.map(|received| (received, record.attempts))
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
    telemetry: PhantomData<&'a ()>,
}

/// The operation a call is for, the client it goes through, and how its success body is read.
#[derive(Clone, Copy)]
struct Called<'c> {
    http: &'c reqwest::Client,
    state: &'c StateInner,
    meta: &'static OperationMeta,
    /// The statuses of a success.
    success: &'static [RangeInclusive<u16>],
    read: Read,
}

/// What became of one attempt.
enum Attempt {
    /// A success answer, its body read as the call reads it.
    Done(Received),
    /// The service refused this token (401) and it could be replaced.
    Refused(AccessToken, Error),
    /// A failure, and whether it may be repeated.
    Failed(Error, Retryable),
}

/// One call, with the client's settings or the call's own options.
async fn execute(
    requests: Attempts<'_>,
    called: Called<'_>,
    options: Option<&CallOptions>,
    record: &mut CallRecord<'_>,
) -> Result<Received, Error> {
    let Some(options) = options else {
        let policy = &called.state.retry;
        return execute_with_policy(requests, called, policy, None, None, record).await;
    };
    // Boxed, like the other rare paths: a call without options keeps a small future.
    Box::pin(execute_with_options(requests, called, options, record)).await
}

/// One call under its own options: its retry policy, and its deadline over everything
/// (see [`crate::call_options`]).
async fn execute_with_options(
    requests: Attempts<'_>,
    called: Called<'_>,
    options: &CallOptions,
    record: &mut CallRecord<'_>,
) -> Result<Received, Error> {
    let policy = options.retry.as_ref().unwrap_or(&called.state.retry);
    // A deadline too far to represent (`Duration::MAX`) is no deadline.
    let Some((timeout, deadline)) = options
        .timeout
        .and_then(|timeout| Some((timeout, Instant::now().checked_add(timeout)?)))
    else {
        return execute_with_policy(requests, called, policy, Some(options), None, record).await;
    };
    let call = execute_with_policy(
        requests,
        called,
        policy,
        Some(options),
        Some(deadline),
        record,
    );
    let outcome = tokio::time::timeout_at(deadline, call).await;
    let passed = Err(Error::DeadlineExceeded {
        operation: Some(called.meta.id),
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
    mut requests: Attempts<'_>,
    called: Called<'_>,
    policy: &RetryPolicy,
    options: Option<&CallOptions>,
    deadline: Option<Instant>,
    record: &mut CallRecord<'_>,
) -> Result<Received, Error> {
    let Called {
        state, meta, read, ..
    } = called;
    let operation = meta.id;
    // Attempts made, the retry after a 401 included (what errors report).
    let mut attempts: u32 = 0;
    // Attempts counted against the policy (the retry after a 401 is not one of them).
    let mut counted: u32 = 0;
    let mut refreshed_after_401 = false;
    let mut refused: Option<AccessToken> = None;
    // Another attempt can happen: a retry, or the one after a 401.
    let may_repeat =
        policy.max_attempts > 1 || state.auth.as_ref().is_some_and(Authenticator::can_refresh);
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
        // A body that can be neither built again nor copied (a stream) is sent only once.
        let (mut this_try, can_repeat) = requests.next(may_repeat, options, operation)?;
        if let Some(token) = &token {
            this_try
                .headers_mut()
                .insert(AUTHORIZATION, token.header().clone());
        }

        if let Some(deadline) = deadline {
            bound_by_deadline(&mut this_try, read, state.request_timeout, deadline);
        }
        #[cfg(feature = "opentelemetry")]
        let attempt_telemetry = record
            .telemetry
            .as_ref()
            .map(|t| t.attempt_started(&mut this_try, attempts));
        let outcome = attempt(this_try, called, attempts, token, record).await;
        #[cfg(feature = "opentelemetry")]
        let outcome = match (&record.telemetry, attempt_telemetry) {
            (Some(telemetry), Some(attempt)) => attempt_reported(telemetry, attempt, outcome, meta),
            _ => outcome,
        };
        #[cfg(feature = "rate-limit")]
        if let Some(admission) = admission {
            report_throttling(state.rate_limiter.as_ref(), admission, &outcome);
        }
        let (error, verdict) = match outcome {
            Attempt::Done(received) => return Ok(received),
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
        Attempt::Done(mut received) => {
            telemetry.attempt_ended(attempt, AttemptEnd::Status(received.status.as_u16(), None));
            if meta.response == ResponseKind::Stream
                && let Body::Stream(response) = received.body
            {
                received.body = Body::Stream(telemetry.count_body(response));
            }
            Attempt::Done(received)
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

/// A currently valid access token of the client whose state is `state`, through the same
/// token step and retry policy as every call (`Client::access_token` documents it).
pub(crate) async fn access_token(state: &ClientState) -> Result<secrecy::SecretString, Error> {
    let state = &state.inner;
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

/// One attempt: send (the token is in place), check the status, read the success body as the
/// call reads it.
async fn attempt(
    mut request: reqwest::Request,
    called: Called<'_>,
    attempt: u32,
    token: Option<AccessToken>,
    record: &mut CallRecord<'_>,
) -> Attempt {
    let Called {
        http,
        state,
        meta,
        success,
        read,
    } = called;
    let operation = meta.id;
    // Calls whose body is read here: a total timeout per attempt, which reqwest applies to the
    // body as well.
    if read != Read::Stream
        && let Some(timeout) = state.request_timeout
    {
        request.timeout_mut().get_or_insert(timeout);
    }

    let mut response = match http.execute(request).await {
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
    if !success.iter().any(|range| range.contains(&status.as_u16())) {
        // A status the description does not list for the operation (a 202 for a 201, a 1xx the
        // HTTP client surfaced): an error naming it, its body not read.
        let error = Error::Api(Box::new(ApiError::new(
            Some(operation),
            status,
            std::mem::take(response.headers_mut()),
            Bytes::new(),
        )));
        return Attempt::Failed(error, Retryable::No);
    }
    let empty = is_empty_answer(&response);
    let headers = std::mem::take(response.headers_mut());
    let body = match read {
        Read::Nothing => Body::Nothing,
        Read::Stream => Body::Stream(response),
        Read::Whole if empty && meta.response == ResponseKind::AnyJson => {
            // The body may be any JSON value or none: none decodes as `null`, not as a failure
            // after the service has acted.
            Body::Whole(Bytes::from_static(b"null"))
        }
        // Not boxed: boxing this read to keep it out of the futures above cost more than their
        // copies (BENCHMARKS.md, P1).
        Read::Whole => match read_whole(response, state.max_response_body).await {
            Ok(body) => Body::Whole(body),
            Err(WholeRead::TooLarge(limit)) => {
                let error = Error::ResponseTooLarge {
                    operation: Some(operation),
                    limit,
                };
                return Attempt::Failed(error, Retryable::No);
            }
            Err(WholeRead::Broken(error)) => {
                // The answer broke off (a connection closed before its declared length, a
                // chunked body that ends early, the attempt's timeout): the service answered,
                // so only an idempotent operation may be asked again.
                let verdict = retry::body_retryable(meta.idempotent);
                let error = Error::from_reqwest(Some(operation), attempt, error);
                return Attempt::Failed(error, verdict);
            }
        },
    };
    Attempt::Done(Received {
        status,
        headers,
        body,
    })
}

/// Why a success body could not be read whole.
enum WholeRead {
    /// It is longer than the limit (of so many bytes).
    TooLarge(u64),
    /// The read failed or broke off.
    Broken(reqwest::Error),
}

/// The body of `response`, at most `limit` bytes: refused at once when it declares a longer
/// `Content-Length`; a declared length is enforced by the HTTP stack (no more than that is ever
/// read as this body), one without is counted as it arrives.
async fn read_whole(mut response: reqwest::Response, limit: u64) -> Result<Bytes, WholeRead> {
    match response.content_length() {
        Some(length) if length > limit => Err(WholeRead::TooLarge(limit)),
        Some(_) => response.bytes().await.map_err(WholeRead::Broken),
        None => {
            let mut body = BytesMut::new();
            while let Some(chunk) = response.chunk().await.map_err(WholeRead::Broken)? {
                if (body.len() + chunk.len()) as u64 > limit {
                    return Err(WholeRead::TooLarge(limit));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(body.freeze())
        }
    }
}

/// Bounds one attempt by the call's deadline, body included: reqwest's request timeout is the
/// one bound that follows a streamed body after the call returns (a download's too). A call's
/// own per-attempt timeout still applies when it ends sooner.
fn bound_by_deadline(
    request: &mut reqwest::Request,
    read: Read,
    per_attempt: Option<Duration>,
    deadline: Instant,
) {
    let left = deadline.saturating_duration_since(Instant::now());
    let own = per_attempt.filter(|_| read != Read::Stream);
    *request.timeout_mut() = Some(own.map_or(left, |own| own.min(left)));
}

/// A success answer with no body: 204, or a `Content-Length` of zero.
fn is_empty_answer(response: &reqwest::Response) -> bool {
    response.status() == reqwest::StatusCode::NO_CONTENT || response.content_length() == Some(0)
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
