//! Every generated operation as a value: its metadata and a typed `call`.
//!
//! `generated.rs` implements [`Operation`] for each operation's builder, so code that is generic
//! over operations (the runtime's retry policy, the CLI, tests) knows the operation's id, method,
//! path and output type without string matching.

use std::future::Future;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use progenitor_client::{Error as ProgenitorError, ResponseValue};

use crate::call_options::{CallOptions, CallResponse, WithOptions, counting_attempts};

/// How an operation's success body is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseKind {
    /// A JSON document decoded into the operation's output type.
    Json,
    /// Any JSON value, untyped (`serde_json::Value`): the description does not say what the
    /// body is, nor whether there is one. An empty success answer (204, or a zero
    /// `Content-Length`) reaches the decoder as JSON `null` instead of failing.
    AnyJson,
    /// A byte stream (PDF, Excel, images, attachments, TSV), never buffered whole.
    Stream,
    /// No body.
    Empty,
}

/// One operation as the API description declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationMeta {
    /// The operationId of the (effective) API description, e.g. `GetSession`.
    pub id: &'static str,
    /// The name of the generated `Client` method, e.g. `get_session`.
    pub rust_name: &'static str,
    /// HTTP method, upper case.
    pub method: &'static str,
    /// Path template, e.g. `/v1/sessions/{sessionId}`.
    pub path: &'static str,
    /// The description's one-line summary.
    pub summary: &'static str,
    /// Whether repeating the request is harmless (GET, HEAD, PUT, DELETE, OPTIONS).
    pub idempotent: bool,
    /// Whether the description marks the operation deprecated.
    pub deprecated: bool,
    /// How the success body is delivered.
    pub response: ResponseKind,
}

/// A ready-to-send operation: the builder returned by a generated `Client` method.
///
/// Every builder also has an inherent `call()` (generated), so concrete code needs no import of
/// this trait; generic code over operations uses [`Operation::call`].
pub trait Operation: Sized {
    /// The success body: a generated type, `ByteStream` or `()`.
    type Output;
    /// The error body the description declares.
    type ErrorBody;
    /// The operation's metadata.
    const META: &'static OperationMeta;

    /// Sends the request and returns the decoded success body, or an [`Error`](crate::Error)
    /// that names the operation, whatever went wrong.
    ///
    /// ```no_run
    /// use creditdata_client::prelude::*;
    ///
    /// async fn show(client: &Client, id: uuid::Uuid) -> Result<()> {
    ///     let session = client.get_session().session_id(id).call().await?;
    ///     println!("{}", session.customer_progress_status);
    ///     Ok(())
    /// }
    /// ```
    fn call(self) -> impl Future<Output = crate::Result<Self::Output>> + Send
    where
        Self: Send,
        Self::ErrorBody: serde::Serialize,
    {
        async move {
            match self.send().await {
                Ok(value) => Ok(value.into_inner()),
                Err(error) => Err(client_error::<Self>(error)),
            }
        }
    }

    /// Sends the request and returns the decoded body (what [`Operation::call`] returns) with
    /// the status and headers of the final attempt and the number of attempts made; JSON, byte
    /// streams (the body not yet read) and empty answers alike. Errors as for `call`.
    ///
    /// ```no_run
    /// use creditdata_client::prelude::*;
    ///
    /// async fn show(client: &Client, id: uuid::Uuid) -> Result<()> {
    ///     let answer = client.get_session().session_id(id).call_with_response().await?;
    ///     println!("{} after {} attempt(s), request id {:?}", answer.status, answer.attempts,
    ///         answer.headers.get("x-request-id"));
    ///     println!("{}", answer.body.customer_progress_status);
    ///     Ok(())
    /// }
    /// ```
    fn call_with_response(
        self,
    ) -> impl Future<Output = crate::Result<CallResponse<Self::Output>>> + Send
    where
        Self: Send,
        Self::ErrorBody: serde::Serialize,
    {
        async move {
            let attempts = Arc::new(AtomicU32::new(0));
            let sent = counting_attempts(Arc::clone(&attempts), self.send()).await;
            match sent {
                Ok(value) => {
                    let status = value.status();
                    let headers = value.headers().clone();
                    Ok(CallResponse::new(
                        value.into_inner(),
                        status,
                        headers,
                        attempts.load(Ordering::Relaxed),
                    ))
                }
                Err(error) => Err(client_error::<Self>(error)),
            }
        }
    }

    /// This operation with per-call options (a deadline, a retry policy, extra headers): see
    /// [`crate::call_options`]. Every builder has it as an inherent method too.
    fn options(self, options: CallOptions) -> WithOptions<Self> {
        WithOptions::new(self, options)
    }

    /// Sends the request (the generated builder's own `send`): progenitor's `ResponseValue`
    /// (status and headers of a success) and progenitor's error, which carries the client's
    /// [`Error`](crate::Error) without the operation's name. Prefer [`Operation::call`].
    fn send(
        self,
    ) -> impl Future<Output = Result<ResponseValue<Self::Output>, ProgenitorError<Self::ErrorBody>>> + Send;

    /// For a JSON body that failed to decode: the path (`sessions[2].createdAtUtc`) where it
    /// failed. Generated for JSON operations; `None` otherwise.
    // Plumbing of the generated code: `call` uses it; hidden from the documented API.
    #[doc(hidden)]
    fn locate_decode_error(body: &[u8]) -> Option<String> {
        let _ = body;
        None
    }
}

/// progenitor's error of `O`'s `send()` as the client's, naming the operation (and, for a body
/// that does not decode, where it failed).
fn client_error<O: Operation>(error: ProgenitorError<O::ErrorBody>) -> crate::Error
where
    O::ErrorBody: serde::Serialize,
{
    match error {
        ProgenitorError::InvalidResponsePayload(body, error) => {
            crate::Error::Decode(Box::new(crate::error::DecodeError::from_serde(
                Some(O::META.id),
                O::locate_decode_error(&body),
                &error,
                &body,
            )))
        }
        error => crate::Error::from(error).with_operation(O::META.id),
    }
}

/// Decodes `body` as `T` again, tracking the path, to say where it failed. What the generated
/// `Operation::locate_decode_error`s call: plumbing, public only because generated code in
/// other modules names it, and hidden from the documented API.
#[doc(hidden)]
pub fn locate_decode_error<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<String> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(_) => None,
        Err(error) => Some(error.path().to_string()),
    }
}
