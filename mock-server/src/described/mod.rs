//! The operations of the effective description that no hand-written handler serves, served from
//! the description itself, and the members of a Session that no hand-written code knows.
//!
//! Which operations are hand-written is not listed anywhere: the router asks the hand-written
//! routes ([`not_hand_written`]) and serves every other operation through [`handler`]. A vendor
//! release that adds a dataset is answered the day it is generated: authenticated, 404 for an
//! unknown session, validated against its schema, and answered with a schema-valid example
//! ([`example`]) seeded by the session and the operation, whose `sources` follow the session's
//! providers ([`crate::views`]). The hand-written routes check the parameters the description
//! gives them in front of their own code ([`parameters`]), so a parameter a release adds to one
//! of them is checked too.

mod entries;
pub mod example;
mod handler;
pub mod members;
pub mod parameters;
pub mod schema;

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::routing::{MethodFilter, on};
use jsonschema::Validator;
use serde_json::Value;
use tower::ServiceExt as _;

use crate::state::AppState;

pub use members::{MAX_MEMBER_DEPTH, SessionMembers};
pub use parameters::{HandWritten, check_hand_written};

/// The path of one Session; every operation below it is about that session.
pub const SESSION_PATH: &str = "/v1/sessions/{sessionId}";
/// The path parameter of [`SESSION_PATH`].
pub const SESSION_PARAMETER: &str = "sessionId";

/// Why the effective description cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionError {
    /// The embedded or configured document is not JSON.
    #[error("the effective description is not valid JSON: {0}")]
    NotJson(String),
    /// A schema of the description does not compile as JSON Schema.
    #[error(
        "the schema at {pointer} of the effective description cannot be checked: {reason}; fix the description or its overlay"
    )]
    Schema {
        /// The JSON pointer of the schema.
        pointer: String,
        /// What the validator said.
        reason: String,
    },
    /// A path the router cannot serve as written.
    #[error(
        "the path {path} of the effective description cannot be routed: {reason}; fix the description or its overlay"
    )]
    Path {
        /// The path template.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The effective description the mock serves, as a document and its operations.
pub struct Description {
    /// The OpenAPI 3.0 document.
    pub document: Arc<Value>,
    /// What the Session and its create and update bodies declare beyond the hand-written view.
    pub members: SessionMembers,
}

impl std::fmt::Debug for Description {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Description")
            .field("operations", &operations(&self.document).len())
            .finish_non_exhaustive()
    }
}

/// The description embedded at build time (`spec/openapi.effective.json`), parsed once.
fn embedded() -> Result<Arc<Value>, DescriptionError> {
    static EMBEDDED: OnceLock<Result<Arc<Value>, String>> = OnceLock::new();
    EMBEDDED
        .get_or_init(|| {
            serde_json::from_slice(crate::EFFECTIVE_JSON)
                .map(Arc::new)
                .map_err(|error| error.to_string())
        })
        .clone()
        .map_err(DescriptionError::NotJson)
}

impl Description {
    /// `document`, or the embedded effective description.
    pub fn load(document: Option<Arc<Value>>) -> Result<Description, DescriptionError> {
        let document = match document {
            Some(document) => document,
            None => embedded()?,
        };
        let members = SessionMembers::from_description(&document)?;
        Ok(Description { document, members })
    }
}

/// One operation of the description, as the router needs it.
#[derive(Debug, Clone)]
pub struct OperationRef {
    /// `operationId`, or `METHOD path` without one.
    pub id: String,
    /// The method.
    pub method: Method,
    /// The path template.
    pub path: String,
    /// The JSON pointer of the Operation object.
    pub pointer: String,
}

/// Every operation of `document`, in document order.
pub fn operations(document: &Value) -> Vec<OperationRef> {
    let mut found = Vec::new();
    let Some(paths) = document.get("paths").and_then(Value::as_object) else {
        return found;
    };
    for (path, item) in paths.iter().filter(|(path, _)| path.starts_with('/')) {
        let Some(item) = item.as_object() else {
            continue;
        };
        for (key, operation) in item {
            let Ok(method) = key.to_ascii_uppercase().parse::<Method>() else {
                continue;
            };
            if !operation.is_object()
                || !matches!(
                    key.as_str(),
                    "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace"
                )
            {
                continue;
            }
            let id = operation
                .get("operationId")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{method} {path}"));
            found.push(OperationRef {
                id,
                method,
                path: path.clone(),
                pointer: format!(
                    "/paths/{}/{key}",
                    path.replace('~', "~0").replace('/', "~1")
                ),
            });
        }
    }
    found
}

/// The operations of `description` that `hand_written` (the hand-written `/v1` routes, behind
/// the bearer check) does not answer. A request without a token to a path and method it serves
/// is refused with 401 before any handler runs; every other answer (404, 405) means no
/// hand-written route has it. Path parameters are filled with a value every route template
/// accepts; nothing is changed by asking.
pub async fn not_hand_written(
    description: &Description,
    hand_written: Router,
) -> Vec<OperationRef> {
    let mut unserved = Vec::new();
    for operation in operations(&description.document) {
        let uri = probe_uri(&operation.path);
        let Ok(request) = Request::builder()
            .method(operation.method.clone())
            .uri(&uri)
            .body(Body::empty())
        else {
            unserved.push(operation);
            continue;
        };
        let answered = hand_written.clone().oneshot(request).await;
        if !matches!(answered, Ok(response) if response.status() == StatusCode::UNAUTHORIZED) {
            unserved.push(operation);
        }
    }
    unserved
}

/// `path` with every `{parameter}` replaced by a plain segment.
fn probe_uri(path: &str) -> String {
    let mut uri = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        uri.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                uri.push_str("probe");
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    uri.push_str(rest);
    uri
}

/// The routes of `operations`, each served from the description (the caller adds the bearer
/// check, as for the hand-written routes). `hand_written` (with its state) is where an
/// operation taking an entry of a hand-written listing reads that listing.
pub fn routes(
    description: &Description,
    operations: &[OperationRef],
    hand_written: &Router,
) -> Result<Router<Arc<AppState>>, DescriptionError> {
    let mut router = Router::new();
    let mut routed: BTreeSet<(String, String)> = BTreeSet::new();
    for operation in operations {
        check_routable(&operation.path)?;
        let compiled = Arc::new(
            handler::Compiled::new(&description.document, operation)?
                .with_listing(operations, hand_written),
        );
        let filter = MethodFilter::try_from(operation.method.clone()).map_err(|_| {
            DescriptionError::Path {
                path: operation.path.clone(),
                reason: format!("the method {} cannot be routed", operation.method),
            }
        })?;
        if !routed.insert((operation.path.clone(), operation.method.to_string())) {
            continue;
        }
        router = router.route(
            &operation.path,
            on(
                filter,
                move |State(state): State<Arc<AppState>>, request: Request| {
                    let compiled = Arc::clone(&compiled);
                    async move { handler::serve(state, compiled, request).await }
                },
            ),
        );
    }
    Ok(router)
}

/// Refuses what axum's router would panic on: a segment that starts with `:` or `*`, or a
/// parameter that is not a whole segment.
fn check_routable(path: &str) -> Result<(), DescriptionError> {
    let refuse = |reason: &str| {
        Err(DescriptionError::Path {
            path: path.to_owned(),
            reason: reason.to_owned(),
        })
    };
    for segment in path.split('/').skip(1) {
        if segment.starts_with(':') || segment.starts_with('*') {
            return refuse("a segment starts with ':' or '*'");
        }
        let opens = segment.matches('{').count();
        let closes = segment.matches('}').count();
        if opens != closes
            || opens > 1
            || (opens == 1 && !(segment.starts_with('{') && segment.ends_with('}')))
        {
            return refuse("a path parameter is not a whole segment");
        }
        if segment == "{}" || segment.starts_with("{*") {
            return refuse("a path parameter has no name");
        }
    }
    Ok(())
}

/// A compiled validator of the schema at `pointer`.
pub(crate) fn compile(
    document: &Value,
    schema: &Value,
    pointer: &str,
) -> Result<Validator, DescriptionError> {
    schema::validator(document, schema).map_err(|reason| DescriptionError::Schema {
        pointer: pointer.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_fill_every_parameter_and_paths_axum_cannot_route_are_refused() {
        assert_eq!(
            probe_uri("/v1/sessions/{sessionId}/files/{fileId}/content"),
            "/v1/sessions/probe/files/probe/content"
        );
        assert!(check_routable("/v1/sessions/{sessionId}/employment-histories").is_ok());
        for path in ["/v1/:id", "/v1/{a}.{b}", "/v1/x{id}", "/v1/{*rest}"] {
            let error = check_routable(path).expect_err(path).to_string();
            assert!(error.contains(path), "{error}");
        }
    }
}
