//! The parameters the description gives an operation (path, query, header), each checked against
//! its schema: by the operations served from the description ([`super::handler`]), and in front
//! of every hand-written handler ([`check_in_front`]), so a parameter a vendor release adds to an
//! operation the mock serves by hand is refused when the description refuses its value, with no
//! hand-written line.
//!
//! Refusals follow `schema.rs` (`refusals`): they name the parameter and what its schema
//! expects, never the value (a query value may be an e-mail address or a name). A path id that
//! is not a UUID is worded as the service words it (`The value '…' is not a valid UUID.`), as
//! the hand-written routes do.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jsonschema::Validator;
use serde_json::{Value, json};

use super::operations::{DescriptionError, OperationRef, compile};
use crate::problem::FieldErrors;

/// Where a parameter is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Path,
    Query,
    Header,
}

/// A parameter with its compiled schema.
pub(super) struct Parameter {
    pub(super) name: String,
    required: bool,
    place: Place,
    schema: Value,
    validator: Validator,
}

/// The parameters of one operation.
pub struct Parameters {
    pub(super) path: Vec<Parameter>,
    query: Vec<Parameter>,
    header: Vec<Parameter>,
}

impl Parameters {
    /// The parameters of `operation` (its own, then its path item's, the operation's winning
    /// for the same name and place), with their schemas compiled.
    pub fn of(document: &Value, operation: &OperationRef) -> Result<Parameters, DescriptionError> {
        let node = document
            .pointer(&operation.pointer)
            .cloned()
            .unwrap_or(Value::Null);
        let item_pointer = operation
            .pointer
            .rsplit_once('/')
            .map(|(item, _)| item)
            .unwrap_or_default();
        let item_parameters = document
            .pointer(&format!("{item_pointer}/parameters"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let own = node
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut parameters = Parameters {
            path: Vec::new(),
            query: Vec::new(),
            header: Vec::new(),
        };
        let mut seen: Vec<(String, String)> = Vec::new();
        for (index, parameter) in own.iter().chain(item_parameters.iter()).enumerate() {
            let parameter = super::example::resolve(document, parameter);
            let name = parameter
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let place_name = parameter
                .get("in")
                .and_then(Value::as_str)
                .unwrap_or_default();
            // Header names are case-insensitive.
            let key = match place_name {
                "header" => name.to_ascii_lowercase(),
                _ => name.to_owned(),
            };
            if seen.contains(&(key.clone(), place_name.to_owned())) {
                continue;
            }
            seen.push((key, place_name.to_owned()));
            let place = match place_name {
                "path" => Place::Path,
                "query" => Place::Query,
                "header" => Place::Header,
                _ => continue,
            };
            let schema = parameter.get("schema").cloned().unwrap_or(json!({}));
            let pointer = format!("{}/parameters/{index}/schema", operation.pointer);
            let compiled = Parameter {
                name: name.to_owned(),
                required: parameter.get("required") == Some(&Value::Bool(true))
                    || place == Place::Path,
                place,
                validator: compile(document, &schema, &pointer)?,
                schema,
            };
            match place {
                Place::Path => parameters.path.push(compiled),
                Place::Query => parameters.query.push(compiled),
                Place::Header => parameters.header.push(compiled),
            }
        }
        Ok(parameters)
    }

    /// Checks the query string: names match case-insensitively and the first of repeated
    /// parameters counts, as ASP.NET binds them; a required one that is missing is refused.
    pub fn check_query(&self, query: Option<&str>, errors: &mut FieldErrors) {
        if self.query.is_empty() {
            return;
        }
        let mut given: HashMap<String, String> = HashMap::new();
        for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            given
                .entry(name.to_ascii_lowercase())
                .or_insert_with(|| value.into_owned());
        }
        for parameter in &self.query {
            match given.get(&parameter.name.to_ascii_lowercase()) {
                Some(text) => check(parameter, text, errors),
                None if parameter.required => errors.add(
                    &parameter.name,
                    format!("The {} field is required.", parameter.name),
                ),
                None => {}
            }
        }
    }

    /// Checks the header parameters (not the headers HTTP itself uses, which the description
    /// does not declare).
    pub fn check_headers(&self, headers: &HeaderMap, errors: &mut FieldErrors) {
        for parameter in &self.header {
            match headers.get(parameter.name.as_str()) {
                Some(value) => match value.to_str() {
                    Ok(text) => check(parameter, text, errors),
                    Err(_) => errors.add(
                        &parameter.name,
                        format!("The {} header is not text.", parameter.name),
                    ),
                },
                None if parameter.required => errors.add(
                    &parameter.name,
                    format!("The {} header is required.", parameter.name),
                ),
                None => {}
            }
        }
    }
}

/// A parameter's text as the JSON value its schema describes (`7` for an integer, `true` for a
/// boolean, the text itself when it is no such value, so that the schema refuses it).
pub(super) fn typed(schema: &Value, text: &str) -> Value {
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("string"),
        _ => "string",
    };
    match kind {
        "integer" => text
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| json!(text)),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| json!(text)),
        "boolean" => match text {
            "true" | "True" => json!(true),
            "false" | "False" => json!(false),
            _ => json!(text),
        },
        "array" => Value::Array(
            text.split(',')
                .map(|part| typed(schema.get("items").unwrap_or(&json!({})), part))
                .collect(),
        ),
        _ => json!(text),
    }
}

/// Checks one parameter's value.
pub(super) fn check(parameter: &Parameter, text: &str, errors: &mut FieldErrors) {
    let value = typed(&parameter.schema, text);
    if parameter.validator.is_valid(&value) {
        return;
    }
    // An id in the path, as the service and the hand-written routes word it.
    if parameter.place == Place::Path
        && parameter.schema.get("format").and_then(Value::as_str) == Some("uuid")
    {
        errors.add(
            &parameter.name,
            format!("The value '{text}' is not a valid UUID."),
        );
        return;
    }
    for (_, message) in super::schema::refusals(&parameter.validator, &value, "") {
        errors.add(
            &parameter.name,
            message.replacen("The $ value", &format!("The {} value", parameter.name), 1),
        );
    }
}

/// In front of a hand-written handler (a route layer of its route, with the parameters of the
/// operation it is registered under): refuses a request whose query or header parameters the
/// description refuses, before the handler's own checks; a request the description accepts goes
/// on unchanged.
pub async fn check_in_front(
    State(parameters): State<Arc<Parameters>>,
    request: Request,
    next: Next,
) -> Response {
    let mut errors = FieldErrors::default();
    parameters.check_query(request.uri().query(), &mut errors);
    parameters.check_headers(request.headers(), &mut errors);
    if let Err(problem) = errors.into_result() {
        return problem.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_text_takes_its_schema_type_so_the_schema_can_refuse_it() {
        assert_eq!(typed(&json!({"type": "integer"}), "7"), json!(7));
        assert_eq!(typed(&json!({"type": "integer"}), "seven"), json!("seven"));
        assert_eq!(
            typed(&json!({"type": ["boolean", "null"]}), "true"),
            json!(true)
        );
        assert_eq!(
            typed(
                &json!({"type": "array", "items": {"type": "integer"}}),
                "1,2"
            ),
            json!([1, 2])
        );
        assert_eq!(
            typed(&json!({"type": "string", "format": "uuid"}), "x"),
            json!("x")
        );
    }
}
