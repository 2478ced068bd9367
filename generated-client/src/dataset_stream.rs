//! One dataset's answer as the service sent it, read as it arrives:
//! [`Client::session_dataset_stream`].
//!
//! [`Client::session_datasets`] decodes each answer into its type, which holds it whole: a
//! listing of 400,000 attachments is then hundreds of megabytes, however little of it the caller
//! keeps. This read hands over the answer's bytes, unchanged, as a [`Download`]: one chunk in
//! memory at a time, to write to a file and read back with a streaming parser
//! ([`Dataset::readiness_properties`] says where the providers' statuses are).
//!
//! It is the same call as the typed one (`GET` of the dataset's path, the same headers: the
//! `api-version` its operation was generated with, [`Dataset::api_version`]) and goes
//! through the same loop: the client's token, retries, rate limiter, span and error capture.
//! What differs is the success body: not held, so neither
//! [`ClientBuilder::max_response_body`](crate::ClientBuilder::max_response_body) nor the
//! per-request timeout applies to it (as for any download, a body that stalls past the idle-read
//! timeout fails, and one that disagrees with its `Content-Length` is an error). Its reader
//! bounds what it keeps and how much it writes. Nor is it checked against the description: the
//! caller gets what the service sent, JSON or not.

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo, ResponseValue};
use reqwest::header::{ACCEPT, HeaderName, HeaderValue};
use uuid::Uuid;

use crate::Client;
use crate::download::Download;
use crate::error::{CarriedError, Error};
use crate::operation::ResponseKind;
use crate::session_datasets::Dataset;

impl Client {
    /// Sends `dataset`'s read for the session and returns its success answer unread, as the
    /// service sent it (see [the module](crate::dataset_stream)). An error answer is the same
    /// [`Error`] the typed call returns.
    pub async fn session_dataset_stream(
        &self,
        session_id: Uuid,
        dataset: Dataset,
    ) -> Result<Download, Error> {
        let meta = dataset.operation();
        let operation = meta.id;
        let path = session_path(meta.path, session_id);
        let mut request = self
            .client()
            .get(format!("{}{path}", self.baseurl()))
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .header(
                HeaderName::from_static("api-version"),
                HeaderValue::from_static(dataset.api_version()),
            )
            .build()
            .map_err(|error| Error::from_reqwest(Some(operation), 0, error))?;
        let info = OperationInfo {
            operation_id: meta.rust_name,
        };
        self.pre::<()>(&mut request, &info)
            .await
            .map_err(|error| Error::from(error).with_operation(operation))?;
        let response = self
            .exec_as(request, &info, ResponseKind::Stream)
            .await
            .map_err(|error| Error::from_reqwest(Some(operation), 1, error))?;
        if let Some(CarriedError(error)) = response.extensions().get::<CarriedError>() {
            return Err(Error::clone(error));
        }
        if !response.status().is_success() {
            // The loop hands back only successes and errors; anything else (a 1xx the HTTP
            // client surfaced) is not an answer.
            return Err(Error::InvalidResponse {
                operation: Some(operation),
                message: format!("unexpected status {}", response.status()),
            });
        }
        Ok(Download::from_response(ResponseValue::stream(response)).named(operation))
    }
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
