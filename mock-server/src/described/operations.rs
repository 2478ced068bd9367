//! The operations of the effective description (method, path, operationId, where they are), the
//! Session path every dataset hangs below, and why a description cannot be served.

use axum::http::Method;
use jsonschema::Validator;
use serde_json::Value;

use super::schema;

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
    /// A hand-written handler is registered under an operationId the description has no
    /// operation for.
    #[error(
        "{registered_in} registers a handler under operationId {operation_id}, but the effective \
         description has no operation {operation_id}: the description dropped or renamed it. If \
         it was renamed, register the handler under the new operationId (or keep the old name for \
         Rust code with a name pin: `cargo xtask regen --keep-names`); if it was dropped, remove \
         the handler"
    )]
    UnknownOperation {
        /// The operationId registered.
        operation_id: String,
        /// The source file that registered it.
        registered_in: String,
    },
    /// Two hand-written handlers are registered under one operationId.
    #[error(
        "operationId {operation_id} has two hand-written handlers, registered in {first} and in \
         {second}: keep one"
    )]
    RegisteredTwice {
        /// The operationId.
        operation_id: String,
        /// Where the first was registered.
        first: String,
        /// Where the second was registered.
        second: String,
    },
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

/// A compiled validator of the schema at `pointer`.
pub fn compile(
    document: &Value,
    schema: &Value,
    pointer: &str,
) -> Result<Validator, DescriptionError> {
    schema::validator(document, schema).map_err(|reason| DescriptionError::Schema {
        pointer: pointer.to_owned(),
        reason,
    })
}
