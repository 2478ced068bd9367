//! Every generated operation as a value: its metadata and a typed `call`.
//!
//! `generated.rs` implements [`Operation`] for each operation's builder, so code that is generic
//! over operations (the runtime's retry policy, the CLI, tests) knows the operation's id, method,
//! path and output type without string matching.

use std::future::Future;

use futures_util::FutureExt;

use crate::call_options::{CallOptions, CallResponse, WithOptions};

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
    {
        call_with(self, None)
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
    {
        self.send_with(None)
            .map(|answer| answer.map_err(|error| error.with_operation(Self::META.id)))
    }

    /// This operation with per-call options (a deadline, a retry policy, extra headers): see
    /// [`crate::call_options`]. Every builder has it as an inherent method too.
    fn options(self, options: CallOptions) -> WithOptions<Self> {
        WithOptions::new(self, options)
    }

    /// Builds the request and returns the future that sends it with `options` through the
    /// client's one door (`crate::runtime::send`). What `call` and `call_with_response` call:
    /// the generated builder's own `send_with`. The options are boxed: a call without them
    /// (`None`) keeps every future of its path small (BENCHMARKS.md, P1).
    // Plumbing of the generated code: hidden from the documented API.
    #[doc(hidden)]
    fn send_with(
        self,
        options: Option<Box<CallOptions>>,
    ) -> impl Future<Output = crate::Result<CallResponse<Self::Output>>> + Send;
}

/// What [`Operation::call`] does, with `options` when there are any (`None`: exactly
/// `call()`): for the crate's helpers that pass their options to each call they make
/// (`client.session_datasets(id).options(..)`, a wait's deadline).
pub(crate) fn call_with<O: Operation + Send>(
    operation: O,
    options: Option<CallOptions>,
) -> impl Future<Output = crate::Result<O::Output>> + Send {
    // A map of the door's future, not another async block around it: one future fewer, each
    // copied whole when first awaited (BENCHMARKS.md, P1).
    operation
        .send_with(options.map(Box::new))
        .map(|answer| match answer {
            Ok(answer) => Ok(answer.body),
            Err(error) => Err(error.with_operation(O::META.id)),
        })
}

/// What a [`WithOptions`] (defined with the options, `crate::call_options`) sends: the same
/// calls as its operation's.
impl<O: Operation> WithOptions<O> {
    /// Sends the request with the options; see [`Operation::call`].
    pub fn call(self) -> impl Future<Output = crate::Result<O::Output>> + Send
    where
        O: Send,
    {
        <Self as Operation>::call(self)
    }

    /// Sends the request with the options; see [`Operation::call_with_response`].
    pub fn call_with_response(
        self,
    ) -> impl Future<Output = crate::Result<CallResponse<O::Output>>> + Send
    where
        O: Send,
    {
        <Self as Operation>::call_with_response(self)
    }
}

impl<O: Operation + Send> Operation for WithOptions<O> {
    type Output = O::Output;
    const META: &'static OperationMeta = O::META;

    fn send_with(
        self,
        options: Option<Box<CallOptions>>,
    ) -> impl Future<Output = crate::Result<CallResponse<Self::Output>>> + Send {
        let WithOptions {
            operation,
            options: own,
        } = self;
        // The builder's own options over those given with it (`options`), setting by setting.
        let options = match options {
            Some(outer) => outer.then(own),
            None => own,
        };
        operation.send_with(Some(Box::new(options)))
    }
}
