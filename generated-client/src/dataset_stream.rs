//! One dataset's answer as the service sent it, read as it arrives:
//! [`Client::session_dataset_stream`]; any other JSON read the same way:
//! [`Client::json_answer_stream`]; any `GET`, a file's included, by its metadata:
//! [`Client::operation_stream`].
//!
//! [`Client::session_datasets`] decodes each answer into its type, which holds it whole: a
//! listing of 400,000 attachments is then hundreds of megabytes, however little of it the caller
//! keeps. This read hands over the answer's bytes, unchanged, as a [`Download`]: one chunk in
//! memory at a time, to write to a file and read back with a streaming parser
//! ([`Dataset::readiness_properties`] says where the providers' statuses are).
//!
//! It is the same call as the typed one (`GET` of the dataset's path, the same headers: the
//! `api-version` its operation was generated with, [`operations::api_version`](crate::operations::api_version)) and goes
//! through the same loop: the client's token, retries, rate limiter, span and error capture.
//! What differs is the success body: not held, so neither
//! [`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body) nor the
//! per-request timeout applies to it (as for any download, a body that stalls past the idle-read
//! timeout fails, and one that disagrees with its `Content-Length` is an error). Its reader
//! bounds what it keeps and how much it writes. Nor is it checked against the description: the
//! caller gets what the service sent, JSON or not.

use progenitor_client::ClientInfo;
use reqwest::header::{ACCEPT, HeaderName, HeaderValue};
use uuid::Uuid;

use crate::Client;
use crate::call_options::CallOptions;
use crate::download::Download;
use crate::error::Error;
use crate::operation::{OperationMeta, ResponseKind};
use crate::runtime::Streamed;
use crate::session_datasets::Dataset;
use crate::with_options::WithCallOptions;

impl Client {
    /// Sends `dataset`'s read for the session and returns its success answer unread, as the
    /// service sent it (see [the module](crate::dataset_stream)). An error answer is the same
    /// [`Error`] the typed call returns.
    pub async fn session_dataset_stream(
        &self,
        session_id: Uuid,
        dataset: Dataset,
    ) -> Result<Download, Error> {
        self.dataset_stream_with(session_id, dataset, None).await
    }

    /// [`Client::session_dataset_stream`] with `options`.
    async fn dataset_stream_with(
        &self,
        session_id: Uuid,
        dataset: Dataset,
        options: Option<&CallOptions>,
    ) -> Result<Download, Error> {
        let meta = dataset.operation();
        let path = session_path(meta.path, session_id);
        self.answer_stream(meta, path, options).await
    }

    /// Sends the JSON `GET` operation `operation` (one of [`operations::ALL`](crate::operations::ALL),
    /// e.g. `GetIdentityVerificationImages`) with `path_values` in the order of its path's
    /// parameters, and returns its success answer unread, as [`Client::session_dataset_stream`]
    /// does for a dataset. Each value becomes one strictly encoded path segment, refused as the
    /// generated builder refuses it (a `/`, a `%`, `..`, a literal segment of another
    /// operation at that place). A wrong number of values, or an operation that is not a JSON
    /// `GET`, is [`Error::InvalidRequest`].
    pub async fn json_answer_stream(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
    ) -> Result<Download, Error> {
        self.json_stream_with(operation, path_values, None).await
    }

    /// [`Client::json_answer_stream`] with `options`.
    async fn json_stream_with(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
        options: Option<&CallOptions>,
    ) -> Result<Download, Error> {
        let json = operation.response == ResponseKind::Json;
        let refusal = "is not a JSON GET: read it with its builder";
        self.get_by_metadata(operation, path_values, json, refusal, options)
            .await
    }

    /// Sends the `GET` operation `operation` (a JSON read or a file: one of
    /// [`operations::ALL`](crate::operations::ALL), one a vendor release added included) with
    /// `path_values` in the order of its path's parameters, and returns its success answer
    /// unread, as [`Client::json_answer_stream`] does. For code that reaches operations by their
    /// metadata rather than by their builders: an operation the description adds is read the day
    /// it is generated. An operation that is not a `GET` with a body is
    /// [`Error::InvalidRequest`].
    pub async fn operation_stream(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
    ) -> Result<Download, Error> {
        self.operation_stream_with(operation, path_values, None)
            .await
    }

    /// [`Client::operation_stream`] with `options`.
    async fn operation_stream_with(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
        options: Option<&CallOptions>,
    ) -> Result<Download, Error> {
        let answers = operation.response != ResponseKind::Empty;
        let refusal = "is not a GET with an answer: call it with its builder";
        self.get_by_metadata(operation, path_values, answers, refusal, options)
            .await
    }

    /// `operation` with its path filled from `path_values`, sent as a `GET` whose answer is left
    /// unread; refused (`refusal`, after its id) unless it is a `GET` and `readable`.
    async fn get_by_metadata(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
        readable: bool,
        refusal: &str,
        options: Option<&CallOptions>,
    ) -> Result<Download, Error> {
        let invalid = |message: String| Error::InvalidRequest {
            operation: Some(operation.id),
            message,
        };
        if operation.method != "GET" || !readable {
            return Err(invalid(format!("{} {refusal}", operation.id)));
        }
        let path = fill_path(operation.path, path_values).map_err(invalid)?;
        self.answer_stream(operation, path, options).await
    }

    /// `GET` of `path` as `meta`'s call, through the client's loop, its success body unread.
    async fn answer_stream(
        &self,
        meta: &'static OperationMeta,
        path: String,
        options: Option<&CallOptions>,
    ) -> Result<Download, Error> {
        let operation = meta.id;
        // The version the typed call sends, so that both read the same answer.
        let api_version = crate::operations::api_version(operation)
            .unwrap_or_else(<Client as ClientInfo<crate::runtime::ClientState>>::api_version);
        let url = format!("{}{path}", self.baseurl());
        // Built again for a retry, as the generated calls are.
        let build = || {
            self.client()
                .get(url.as_str())
                .header(ACCEPT, HeaderValue::from_static("application/json"))
                .header(
                    HeaderName::from_static("api-version"),
                    HeaderValue::from_static(api_version),
                )
                .build()
                .map_err(|error| Error::from_reqwest(Some(operation), 0, error))
        };
        let request = build()?;
        // The one door of every call, the body left unread (`Streamed`).
        let answer = crate::runtime::send::<Streamed, _>(
            self.client(),
            self.inner(),
            meta,
            // Any success: the read is by metadata, whatever the description declares.
            &[200..=299],
            Ok((request, Some(build))),
            options.cloned().map(Box::new),
        )
        .await?;
        Ok(Download::from_parts(answer.body, answer.headers).named(operation))
    }
}

impl WithCallOptions<'_> {
    /// [`Client::session_dataset_stream`] made with these options.
    pub async fn session_dataset_stream(
        &self,
        session_id: Uuid,
        dataset: Dataset,
    ) -> Result<Download, Error> {
        self.client
            .dataset_stream_with(session_id, dataset, Some(&self.options))
            .await
    }

    /// [`Client::json_answer_stream`] made with these options.
    pub async fn json_answer_stream(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
    ) -> Result<Download, Error> {
        self.client
            .json_stream_with(operation, path_values, Some(&self.options))
            .await
    }

    /// [`Client::operation_stream`] made with these options.
    pub async fn operation_stream(
        &self,
        operation: &'static OperationMeta,
        path_values: &[&str],
    ) -> Result<Download, Error> {
        self.client
            .operation_stream_with(operation, path_values, Some(&self.options))
            .await
    }
}

/// `template` with each `{parameter}` replaced, in order, by the next of `values` as one
/// strictly encoded path segment (checked against the literal segments other operations have
/// at its place, as the generated builders do: `runtime::path_segment`).
fn fill_path(template: &str, values: &[&str]) -> Result<String, String> {
    let segments: Vec<&str> = template.split('/').collect();
    let parameters = segments.iter().filter(|s| is_parameter(s)).count();
    if parameters != values.len() {
        return Err(format!(
            "{template} takes {parameters} path value(s), {} given",
            values.len()
        ));
    }
    let mut values = values.iter();
    let mut filled = Vec::with_capacity(segments.len());
    for (position, segment) in segments.iter().enumerate() {
        if !is_parameter(segment) {
            filled.push(std::borrow::Cow::Borrowed(*segment));
            continue;
        }
        let value = values.next().copied().unwrap_or_default();
        let reserved = reserved_literals(&segments, position);
        let reserved: Vec<&str> = reserved.iter().map(String::as_str).collect();
        let name = &segment[1..segment.len() - 1];
        let encoded = crate::runtime::path_segment("path value", value, &reserved)
            .map_err(|error| format!("{name}: {error}"))?;
        filled.push(encoded);
    }
    Ok(filled.join("/"))
}

fn is_parameter(segment: &str) -> bool {
    segment.len() > 2 && segment.starts_with('{') && segment.ends_with('}')
}

/// The literal segments other operations' paths have at `position` where the rest of their
/// path could match `segments` (the rule `codegen/src/path_segments.rs` applies to the
/// generated builders).
fn reserved_literals(segments: &[&str], position: usize) -> Vec<String> {
    let mut reserved = Vec::new();
    for other in crate::operations::ALL.iter() {
        let other: Vec<&str> = other.path.split('/').collect();
        if other.len() != segments.len() || is_parameter(other[position]) {
            continue;
        }
        let compatible = segments
            .iter()
            .zip(&other)
            .enumerate()
            .filter(|(i, _)| *i != position)
            .all(|(_, (a, b))| is_parameter(a) || is_parameter(b) || a.eq_ignore_ascii_case(b));
        let literal = other[position].to_string();
        if compatible && !reserved.contains(&literal) {
            reserved.push(literal);
        }
    }
    reserved
}

/// `template` with its one parameter, whatever the description names it, replaced by the
/// session's id: every dataset's path has the session's id as its one parameter (what makes it
/// a dataset: `codegen/src/datasets.rs`), and a UUID needs no encoding.
fn session_path(template: &str, session_id: Uuid) -> String {
    match (template.find('{'), template.find('}')) {
        (Some(open), Some(close)) if open < close => {
            format!(
                "{}{session_id}{}",
                &template[..open],
                &template[close + 1..]
            )
        }
        _ => template.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_values_are_strict_segments_in_the_order_of_the_parameters() {
        let template = "/v1/sessions/{sessionId}/identity-verifications/{verificationId}/images";
        assert_eq!(
            fill_path(template, &["s-1", "v 2"]).unwrap(),
            "/v1/sessions/s-1/identity-verifications/v%202/images"
        );
        for refused in [&["s", "a/b"][..], &["s", ".."], &["s", "%41"], &["s"]] {
            let error = fill_path(template, refused).unwrap_err();
            assert!(!error.is_empty(), "{refused:?}");
        }
        // Where another operation has a literal segment, that literal is not a value.
        for meta in crate::operations::ALL.iter() {
            let segments: Vec<&str> = meta.path.split('/').collect();
            for (position, _) in segments.iter().enumerate().filter(|(_, s)| is_parameter(s)) {
                for literal in reserved_literals(&segments, position) {
                    let mut values = vec!["x"; segments.iter().filter(|s| is_parameter(s)).count()];
                    let index = segments[..position]
                        .iter()
                        .filter(|s| is_parameter(s))
                        .count();
                    values[index] = &literal;
                    assert!(
                        fill_path(meta.path, &values).is_err(),
                        "{} {literal}",
                        meta.path
                    );
                }
            }
        }
    }

    #[test]
    fn the_session_parameter_is_replaced_whatever_its_name() {
        let id = Uuid::nil();
        for template in [
            "/v1/sessions/{sessionId}/scores",
            "/v1/sessions/{session_id}/scores",
        ] {
            assert_eq!(
                session_path(template, id),
                format!("/v1/sessions/{id}/scores"),
                "{template}"
            );
        }
    }
}
