//! The state every generated `Client` carries, and its `ClientHooks`: authentication, retries,
//! timeouts, error capture and tracing for every call.
//!
//! progenitor calls `pre`, `exec` and `post` around each request. Everything happens in `exec`,
//! which owns the request: it adds the bearer token, sends, retries what the
//! [`RetryPolicy`] allows, refreshes the token once after a 401, reads JSON bodies (so that a
//! body cut short is retried like any other transport failure, and the per-request timeout
//! covers it), and turns every failure (an error status, a transport failure, no token) into a
//! typed [`Error`]. progenitor's hooks can only return responses, so the error travels in the
//! extensions of a synthesized response that `post` hands back as `Error::UnexpectedResponse`;
//! `From<progenitor_client::Error<_>> for Error` unpacks it. The generated code therefore never
//! decodes an error body itself: body-less 401/403/404/500s and HTML pages from proxies keep
//! their status and body.
//!
//! # Tracing
//!
//! Each call runs in an `INFO` span named `creditdata.call` with the fields `operation` (the
//! operationId) and `method`, and, recorded when the call ends, `attempt` (attempts made, the
//! retry after a 401 included), `status` (the last HTTP status, absent when none arrived) and
//! `duration_ms` (until the response headers for downloads, until the whole body for JSON
//! calls). Retries, token refreshes and token failures are `DEBUG` events inside it. No field or
//! event carries a token, a secret or a body.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::ResponseBuilderExt;
use reqwest::header::AUTHORIZATION;
use tokio::time::Instant;
use tracing::Instrument;

use crate::Client;
use crate::auth::{AccessToken, Authenticator};
use crate::error::{ApiError, CarriedError, Error, MAX_ERROR_BODY, ResponseContext};
use crate::operation::{OperationMeta, ResponseKind};
use crate::retry::{self, RetryPolicy, Retryable};

/// The `Client`'s inner state (progenitor's "inner type"): credentials, retry policy and
/// per-request timeout. Cheap to clone; its `Debug` never shows a secret. Built by
/// [`ClientBuilder::build`](crate::ClientBuilder::build).
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
}

impl fmt::Debug for ClientState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientState")
            .field("auth", &self.inner.auth)
            .field("retry", &self.inner.retry)
            .field("request_timeout", &self.inner.request_timeout)
            .finish()
    }
}

impl ClientState {
    pub(crate) fn new(
        auth: Option<Authenticator>,
        retry: RetryPolicy,
        request_timeout: Option<Duration>,
    ) -> Self {
        ClientState {
            inner: Arc::new(StateInner {
                auth,
                retry,
                request_timeout,
            }),
        }
    }

    /// The retry policy calls follow.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The total time one attempt of a JSON call may take, if bounded.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.inner.request_timeout
    }
}

impl Default for ClientState {
    /// No credentials, default retries, no request timeout.
    fn default() -> Self {
        ClientState::new(None, RetryPolicy::default(), None)
    }
}

/// Operations the generated code knows by progenitor's name; anything else (a newer generated
/// file against an older runtime) is treated as a non-idempotent streamed call: never retried
/// once sent, and its body left unread.
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
        let started = Instant::now();
        let mut record = CallRecord::default();
        let outcome = self
            .execute_with_policy(request, meta, operation, &mut record)
            .instrument(span.clone())
            .await;
        // Recorded once, at the end: some subscribers append a field recorded twice.
        span.record("attempt", record.attempts);
        if let Some(status) = record.status {
            span.record("status", status);
        }
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        match outcome {
            Ok(response) => Ok(response),
            Err(error) => Ok(carrier(error)),
        }
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
struct CallRecord {
    attempts: u32,
    status: Option<u16>,
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
    /// One call: attempts, token handling and error capture (see the module documentation).
    async fn execute_with_policy(
        &self,
        request: reqwest::Request,
        meta: &'static OperationMeta,
        operation: &'static str,
        record: &mut CallRecord,
    ) -> Result<reqwest::Response, Error> {
        let policy = &self.inner().inner.retry;
        let started = Instant::now();
        // Attempts made, the retry after a 401 included (what errors report).
        let mut attempts: u32 = 0;
        // Attempts counted against the policy (the retry after a 401 is not one of them).
        let mut counted: u32 = 0;
        let mut refreshed_after_401 = false;
        let mut refused: Option<AccessToken> = None;
        let mut original = Some(request);
        loop {
            attempts += 1;
            counted += 1;
            record.attempts = attempts;
            // A body that cannot be cloned (a stream) can be sent only once.
            let Some(this_try) = original
                .as_ref()
                .and_then(reqwest::Request::try_clone)
                .or_else(|| original.take())
            else {
                unreachable!("the loop ends when the request could not be kept for another try")
            };
            let can_repeat = original.is_some();
            let token_to_replace = refused.take();

            let (error, verdict) = match self
                .attempt(this_try, meta, operation, attempts, token_to_replace, record)
                .await
            {
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
            let Retryable::Yes { not_before } = verdict else {
                return Err(error);
            };
            if !can_repeat {
                return Err(error);
            }
            let Some(delay) = policy.next_delay(counted, not_before, started.elapsed()) else {
                return Err(error);
            };
            tracing::debug!(
                attempt = attempts,
                error = %error,
                delay_ms = delay.as_millis() as u64,
                retry_after = not_before.is_some(),
                "retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// One attempt: token, send, status check, and for JSON operations the body.
    async fn attempt(
        &self,
        mut request: reqwest::Request,
        meta: &'static OperationMeta,
        operation: &'static str,
        attempt: u32,
        token_to_replace: Option<AccessToken>,
        record: &mut CallRecord,
    ) -> Attempt {
        let state = &self.inner().inner;
        let buffered = meta.response != ResponseKind::Stream && std::env::var_os("ZZ_NOBUF").is_none();
        if buffered && let Some(timeout) = state.request_timeout {
            request.timeout_mut().get_or_insert(timeout);
        }
        let token = match &state.auth {
            Some(auth) => {
                let token = match &token_to_replace {
                    Some(old) => auth.refresh_after_rejection(old).await,
                    None => auth.token().await,
                };
                match token {
                    Ok(token) => {
                        request
                            .headers_mut()
                            .insert(AUTHORIZATION, token.header().clone());
                        Some(token)
                    }
                    Err(source) => {
                        // The request was not sent: repeating it is safe for any method.
                        let verdict = if source.is_transient() {
                            Retryable::Yes { not_before: None }
                        } else {
                            Retryable::No
                        };
                        tracing::debug!(error = %source, "no access token");
                        let error = Error::Auth {
                            operation: Some(operation),
                            source,
                        };
                        return Attempt::Failed(error, verdict);
                    }
                }
            }
            None => None,
        };

        let transport_failure = |error: reqwest::Error| {
            let verdict = retry::transport_retryable(meta.idempotent, &error);
            Attempt::Failed(
                Error::from_reqwest(Some(operation), attempt, error),
                verdict,
            )
        };
        let mut response = match self.client().execute(request).await {
            Ok(response) => response,
            Err(error) => return transport_failure(error),
        };
        let status = response.status();
        record.status = Some(status.as_u16());
        if status.is_client_error() || status.is_server_error() {
            let verdict = retry::status_retryable(meta.idempotent, status, response.headers());
            let error = read_api_error(operation, response).await;
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
        if !buffered {
            response.extensions_mut().insert(ResponseContext {
                operation,
                body: None,
            });
            return Attempt::Done(response);
        }
        // JSON: read the body here, under the attempt's timeout and retry policy. The
        // generated code then decodes it from memory.
        let version = response.version();
        // Moved into the rebuilt response: without it reqwest would parse a placeholder URL.
        let url = response.url().clone();
        let headers = std::mem::take(response.headers_mut());
        let body = match response.bytes().await {
            Ok(body) => body,
            Err(error) => return transport_failure(error),
        };
        let context = ResponseContext {
            operation,
            body: Some(body.clone()),
        };
        let mut rebuilt = http::Response::builder()
            .status(status)
            .version(version)
            .url(url)
            .extension(context)
            .body(body.clone())
            // Cannot fail (every part is already typed); keep the body regardless.
            .unwrap_or_else(|_| http::Response::new(body));
        *rebuilt.status_mut() = status;
        *rebuilt.headers_mut() = headers;
        Attempt::Done(reqwest::Response::from(rebuilt))
    }
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
