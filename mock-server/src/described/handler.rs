//! One operation served from the description: its parameters and body checked against their
//! schemas, the session it is about looked up, and a schema-valid answer made up for it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jsonschema::Validator;
use serde_json::Value;
use uuid::Uuid;

use super::entries::{self, ListedBy};
use super::example;
use super::operations::{DescriptionError, OperationRef, SESSION_PARAMETER, SESSION_PATH, compile};
use super::parameters::{self, Parameters};
use crate::data;
use crate::problem::{FieldErrors, Problem};
use crate::request_body::json_body;
use crate::state::{AppState, Context, read};

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
    parameters: Parameters,
    /// `(required, validator)` of a JSON request body.
    body: Option<(bool, Option<Validator>)>,
    answer: Answer,
    /// The listing it takes one entry of, if any (see [`entries`]).
    entry_of: Option<EntryOf>,
}

/// The listing an operation takes one entry of, and how to read it for a session.
struct EntryOf {
    listed_by: ListedBy,
    /// The listing's answer schema when the description serves the listing too (its answer is
    /// then made as [`serve`] makes it); `None` when a hand-written route serves it.
    described: Option<(Value, Validator)>,
    /// The hand-written routes, to read a hand-written listing through.
    hand_written: Router,
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
            parameters: Parameters::of(document, operation)?,
            body,
            answer: answer(document, &node, &operation.pointer)?,
            entry_of: None,
        })
    }

    /// Finds the listing the operation takes one entry of, if any ([`entries`]): served from
    /// the description when it is one of `described`, else read through `hand_written`.
    pub fn with_listing(mut self, described: &[OperationRef], hand_written: &Router) -> Compiled {
        if let Some(listed_by) = entries::listed_by(&self.document, &self.operation) {
            let served_here = described.iter().any(|op| {
                op.method == listed_by.listing.method && op.path == listed_by.listing.path
            });
            let schema = served_here
                .then(|| {
                    let node = self.document.pointer(&listed_by.listing.pointer)?;
                    answer(&self.document, node, &listed_by.listing.pointer)
                        .ok()?
                        .content?
                        .1
                })
                .flatten();
            self.entry_of = Some(EntryOf {
                listed_by,
                described: schema,
                hand_written: hand_written.clone(),
            });
        }
        self
    }
}

/// The answer made for an operation of `document` (by its id) whose success schema is
/// `schema` (with its validator): an example drawn for the session (the same every time) whose
/// items follow the session's providers, checked against the schema; what cannot be made valid
/// is a 501 that says what (never a value the schema refuses).
fn made_answer(
    state: &AppState,
    session: Option<&Context>,
    document: &Value,
    operation_id: &str,
    (schema, validator): (&Value, &Validator),
) -> Result<Value, Problem> {
    let seed = session.map(|c| c.record.id).unwrap_or_else(Uuid::nil);
    let mut rng = data::rng(seed, &format!("described/{operation_id}"));
    example::valid_example(
        document,
        schema,
        validator,
        &mut rng,
        |body, rng| match session {
            Some(context) => context
                .view(&state.config)
                .follow_providers(document, schema, body, rng),
            None => Ok(()),
        },
    )
    .map_err(|unmakeable| {
        Problem::not_implemented(format!(
            "The mock cannot make up an answer of {operation_id} that its schema accepts, \
             {unmakeable}. This is a limit of the mock, not of the service: test this operation \
             against a recorded answer, or give the mock a handler for it."
        ))
    })
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
    for parameter in &compiled.parameters.path {
        match path_values.get(&parameter.name) {
            Some(text) => parameters::check(parameter, text, &mut errors),
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
    compiled
        .parameters
        .check_query(parts.uri.query(), &mut errors);
    compiled
        .parameters
        .check_headers(&parts.headers, &mut errors);
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

    // An entry the listing does not give for this session is not found.
    let entry = match &compiled.entry_of {
        Some(entry_of) => {
            let listing = entry_of
                .described
                .as_ref()
                .map(|(schema, validator)| {
                    made_answer(
                        &state,
                        session.as_ref(),
                        &compiled.document,
                        &entry_of.listed_by.listing.id,
                        (schema, validator),
                    )
                })
                .transpose()?;
            let entry = entry_of
                .listed_by
                .entry(&path_values, listing, &entry_of.hand_written)
                .await?;
            entry_of.listed_by.answers_the_entry.then_some(entry)
        }
        None => None,
    };

    let Answer { status, content } = &compiled.answer;
    let Some((media, schema)) = content else {
        return Ok(status.into_response());
    };
    let seed = session
        .as_ref()
        .map(|c| c.record.id)
        .unwrap_or_else(Uuid::nil);
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
    let body = match entry {
        Some(entry) => entry,
        None => made_answer(
            &state,
            session.as_ref(),
            &compiled.document,
            &compiled.operation.id,
            (schema, validator),
        )?,
    };
    let mut response = (*status, axum::Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(media) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    Ok(response)
}
