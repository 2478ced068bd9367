//! A request's JSON body, read as the service reads it: JSON media types only, every failure a
//! 400 problem (413 past the route's body limit).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use serde_json::Value;

use crate::problem::Problem;

/// Checks that a JSON body arrived as JSON and parses it; every failure is a 400 problem.
pub fn json_body(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Value, Problem> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Problem::payload_too_large(format!("The request body is too large: {rejection}"))
        } else {
            Problem::bad_request(format!("The request body could not be read: {rejection}"))
        }
    })?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    // The JSON media types the published description lists for every body (the effective one
    // keeps only the first, for the generator).
    if media != "application/json"
        && media != "text/json"
        && !(media.starts_with("application/") && media.ends_with("+json"))
    {
        return Err(Problem::bad_request(format!(
            "The request body must be JSON (Content-Type: application/json); got '{content_type}'."
        )));
    }
    serde_json::from_slice(&body).map_err(|error| {
        Problem::invalid_field("$", format!("The request body is not valid JSON: {error}."))
    })
}
