//! One operation served from the description: its parameters and body checked against their
//! schemas, the session it is about looked up, and a schema-valid answer made up for it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jsonschema::Validator;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{DescriptionError, OperationRef, SESSION_PARAMETER, SESSION_PATH, compile, example};
use crate::api::{json_body, read};
use crate::data;
use crate::problem::{FieldErrors, Problem};
use crate::state::AppState;

/// A parameter (path or query) with its compiled schema.
struct Parameter {
    name: String,
    required: bool,
    schema: Value,
    validator: Validator,
}

/// What the operation answers on success.
struct Answer {
    status: StatusCode,
    /// The media type and, for JSON, the schema of the body with its validator (every made-up
    /// answer passes it before it is sent); `None` for an empty answer.
    content: Option<(String, Option<(Value, Validator)>)>,
}

/// An operation with everything its requests are checked against.
pub struct Compiled {
    operation: OperationRef,
    document: Arc<Value>,
    path: Vec<Parameter>,
    query: Vec<Parameter>,
    /// `(required, validator)` of a JSON request body.
    body: Option<(bool, Option<Validator>)>,
    answer: Answer,
}

impl Compiled {
    pub fn new(
        document: &Arc<Value>,
        operation: &OperationRef,
    ) -> Result<Compiled, DescriptionError> {
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
        let mut path = Vec::new();
        let mut query = Vec::new();
        // The operation's own parameters override the path item's of the same name and place.
        let mut seen: Vec<(String, String)> = Vec::new();
        for (index, parameter) in own.iter().chain(item_parameters.iter()).enumerate() {
            let parameter = resolve(document, parameter);
            let name = parameter
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let place = parameter
                .get("in")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if seen.contains(&(name.to_owned(), place.to_owned())) {
                continue;
            }
            seen.push((name.to_owned(), place.to_owned()));
            let schema = parameter.get("schema").cloned().unwrap_or(json!({}));
            let pointer = format!("{}/parameters/{index}/schema", operation.pointer);
            let compiled = Parameter {
                name: name.to_owned(),
                required: parameter.get("required") == Some(&Value::Bool(true)) || place == "path",
                validator: compile(document, &schema, &pointer)?,
                schema,
            };
            match place {
                "path" => path.push(compiled),
                "query" => query.push(compiled),
                _ => {}
            }
        }
        let body = match node.get("requestBody") {
            Some(body) => {
                let body = resolve(document, body);
                let required = body.get("required") == Some(&Value::Bool(true));
                let schema = json_media(body).and_then(|(_, media)| media.get("schema").cloned());
                let validator = match schema {
                    Some(schema) => Some(compile(
                        document,
                        &schema,
                        &format!("{}/requestBody", operation.pointer),
                    )?),
                    None => None,
                };
                Some((required, validator))
            }
            None => None,
        };
        Ok(Compiled {
            operation: operation.clone(),
            document: Arc::clone(document),
            path,
            query,
            body,
            answer: answer(document, &node, &operation.pointer)?,
        })
    }
}

/// The first success response in the order the description lists them (`2XX` counts as 200).
fn answer(document: &Value, operation: &Value, pointer: &str) -> Result<Answer, DescriptionError> {
    let responses = operation.get("responses").and_then(Value::as_object);
    let success = responses.into_iter().flatten().find_map(|(key, response)| {
        let status = if key.eq_ignore_ascii_case("2XX") {
            StatusCode::OK
        } else {
            key.parse::<u16>()
                .ok()
                .and_then(|s| StatusCode::from_u16(s).ok())?
        };
        status.is_success().then_some((key, status, response))
    });
    let Some((key, status, response)) = success else {
        return Ok(Answer {
            status: StatusCode::OK,
            content: None,
        });
    };
    let response = resolve(document, response);
    let content = match json_media(response) {
        Some((media, content)) => {
            let schema = match content.get("schema") {
                Some(schema) => {
                    let at = format!(
                        "{pointer}/responses/{key}/content/{}/schema",
                        media.replace('~', "~0").replace('/', "~1")
                    );
                    Some((schema.clone(), compile(document, schema, &at)?))
                }
                None => None,
            };
            Some((media.to_owned(), schema))
        }
        None => response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|content| content.keys().next())
            .map(|media| (media.clone(), None)),
    };
    Ok(Answer { status, content })
}

/// The first JSON media type of a request body or response, with its Media Type object.
fn json_media(node: &Value) -> Option<(&str, &Value)> {
    node.get("content")
        .and_then(Value::as_object)?
        .iter()
        .find(|(media, _)| is_json(media))
        .map(|(media, content)| (media.as_str(), content))
}

fn is_json(media: &str) -> bool {
    let media = media.split(';').next().unwrap_or_default().trim();
    media == "application/json" || media == "text/json" || media.ends_with("+json")
}

fn resolve<'a>(document: &'a Value, node: &'a Value) -> &'a Value {
    let mut node = node;
    for _ in 0..example::MAX_DEPTH {
        match node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| document.pointer(p))
        {
            Some(target) => node = target,
            None => break,
        }
    }
    node
}

/// A parameter's text as the JSON value its schema describes (`7` for an integer, `true` for a
/// boolean, the text itself when it is no such value, so that the schema refuses it).
fn typed(schema: &Value, text: &str) -> Value {
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

/// Checks one parameter's value, as the service words it for an id.
fn check_parameter(parameter: &Parameter, text: &str, errors: &mut FieldErrors) {
    let value = typed(&parameter.schema, text);
    if parameter.validator.is_valid(&value) {
        return;
    }
    if parameter.schema.get("format").and_then(Value::as_str) == Some("uuid") {
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

/// Serves one request of `compiled`'s operation.
pub async fn serve(
    state: Arc<AppState>,
    compiled: Arc<Compiled>,
    request: Request,
) -> Result<Response, Problem> {
    let (mut parts, body) = request.into_parts();
    let path_values: HashMap<String, String> =
        match Path::<HashMap<String, String>>::from_request_parts(&mut parts, &state).await {
            Ok(Path(values)) => values,
            Err(rejection) => {
                return Err(Problem::bad_request(format!(
                    "The request path is malformed: {rejection}"
                )));
            }
        };
    let mut errors = FieldErrors::default();
    for parameter in &compiled.path {
        match path_values.get(&parameter.name) {
            Some(text) => check_parameter(parameter, text, &mut errors),
            None => {
                return Err(Problem::internal(format!(
                    "The route of {} has no path parameter {}; this is a bug in the mock.",
                    compiled.operation.id, parameter.name
                )));
            }
        }
    }
    errors.into_result()?;
    let session = if compiled.operation.path == SESSION_PATH
        || compiled
            .operation
            .path
            .starts_with(&format!("{SESSION_PATH}/"))
    {
        let id = path_values
            .get(SESSION_PARAMETER)
            .and_then(|text| Uuid::parse_str(text).ok())
            .ok_or_else(|| {
                Problem::invalid_field(SESSION_PARAMETER, "The value is not a valid UUID.")
            })?;
        // A read settles a waiting customer under `complete_on_read`, as the hand-written
        // reads do; any other method meets the session as it is.
        if matches!(compiled.operation.method, Method::GET | Method::HEAD) {
            Some(read(&state, id).await?)
        } else {
            Some(state.context(id)?)
        }
    } else {
        None
    };

    let mut errors = FieldErrors::default();
    let mut query: HashMap<String, String> = HashMap::new();
    for (name, value) in form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes()) {
        // Names match case-insensitively and the first of repeated parameters counts, as
        // ASP.NET binds them (and as the hand-written search does).
        query
            .entry(name.to_ascii_lowercase())
            .or_insert_with(|| value.into_owned());
    }
    for parameter in &compiled.query {
        match query.get(&parameter.name.to_ascii_lowercase()) {
            Some(text) => check_parameter(parameter, text, &mut errors),
            None if parameter.required => errors.add(
                &parameter.name,
                format!("The {} field is required.", parameter.name),
            ),
            None => {}
        }
    }
    if let Some((required, validator)) = &compiled.body {
        let headers = parts.headers.clone();
        let request = Request::from_parts(parts, body);
        let bytes = Bytes::from_request(request, &state).await;
        let empty = matches!(&bytes, Ok(bytes) if bytes.is_empty());
        if empty && *required {
            errors.add("$", "A request body is required.");
        } else if !empty && let Some(validator) = validator {
            let body = json_body(&headers, bytes)?;
            super::schema::check(validator, &body, "", &mut errors);
        }
    }
    errors.into_result()?;

    let Answer { status, content } = &compiled.answer;
    let Some((media, schema)) = content else {
        return Ok(status.into_response());
    };
    let seed = session
        .as_ref()
        .map(|c| c.record.id)
        .unwrap_or_else(Uuid::nil);
    let mut rng = data::rng(seed, &format!("described/{}", compiled.operation.id));
    let Some((schema, validator)) = schema else {
        // A download: bytes that say what they are, the same for the same session.
        let bytes = format!(
            "{} of session {seed}: a stand-in made by creditdata-mock from the API description.\n",
            compiled.operation.id
        );
        let mut response = Response::new(Body::from(bytes));
        *response.status_mut() = *status;
        if let Ok(value) = HeaderValue::from_str(media) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        return Ok(response);
    };
    // Made up, made to follow the session's providers, and checked against the schema; what
    // cannot be made valid is a 501 that says what (never a value the schema refuses).
    let body = example::valid_example(
        &compiled.document,
        schema,
        validator,
        &mut rng,
        |body, rng| match &session {
            Some(context) => {
                context
                    .view(&state.config)
                    .follow_providers(&compiled.document, schema, body, rng)
            }
            None => Ok(()),
        },
    )
    .map_err(|unmakeable| {
        Problem::not_implemented(format!(
            "The mock cannot make up an answer of {} that its schema accepts, {unmakeable}. \
             This is a limit of the mock, not of the service: test this operation against \
             a recorded answer, or give the mock a handler for it.",
            compiled.operation.id
        ))
    })?;
    let mut response = (*status, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(media) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    Ok(response)
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
