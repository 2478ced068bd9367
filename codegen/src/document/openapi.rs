//! What every stage reads the same way in an OpenAPI document: which keys are operations,
//! where local `$ref`s lead, how a JSON value's type is named in a message.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::pointer;

/// The keys of a Path Item that hold an operation (OpenAPI 3.0 and 3.1 alike; progenitor reads
/// the same eight through openapiv3's `PathItem::iter`).
pub const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The prefix of a reference to a component schema.
pub const SCHEMA_REF_PREFIX: &str = "#/components/schemas/";

/// Whether `key` of a Path Item holds an operation.
pub fn is_http_method(key: &str) -> bool {
    HTTP_METHODS.contains(&key)
}

/// Whether `key` is a specification extension (`x-...`), which holds any JSON and is never a
/// path, a schema keyword or a component.
pub fn is_extension(key: &str) -> bool {
    key.starts_with("x-")
}

/// One operation of the document, as [`operations`] finds it.
#[derive(Debug, Clone, Copy)]
pub struct Operation<'a> {
    /// The key under `paths`, e.g. `/v1/sessions/{sessionId}`.
    pub path: &'a str,
    /// The lowercase method key, e.g. `get`.
    pub method: &'a str,
    /// The Operation object (whatever JSON is there; a stage that needs an object checks).
    pub operation: &'a Value,
    /// The Path Item it belongs to (its `parameters` apply to every operation in it).
    pub item: &'a Map<String, Value>,
}

impl Operation<'_> {
    /// The JSON pointer of the operation, e.g. `/paths/~1v1~1sessions/get`.
    pub fn pointer(&self) -> String {
        pointer::child(&pointer::child("/paths", self.path), self.method)
    }
}

/// Every operation of the document in document order: each [`HTTP_METHODS`] key of each Path
/// Item that is an object. Specification extensions under `paths` (`x-...`) are not paths, so
/// their content is never an operation; a path item that is a `$ref` has no operations of its
/// own here (down-convert inlines those; preflight reports what is left).
pub fn operations(doc: &Value) -> impl Iterator<Item = Operation<'_>> {
    doc.get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(path, _)| !is_extension(path))
        .filter_map(|(path, item)| Some((path, item.as_object()?)))
        .flat_map(|(path, item)| {
            item.iter()
                .filter(|(method, _)| is_http_method(method))
                .map(move |(method, operation)| Operation {
                    path,
                    method,
                    operation,
                    item,
                })
        })
}

/// Follows local `$ref`s from `node` (a parameter, request body, response, header or schema)
/// to the node that is not a reference, reading each reference's fragment as a JSON pointer
/// into `doc`. Stops at a reference that leads nowhere, or that comes back to one already
/// followed, and returns that reference node: callers see a node without the content they look
/// for, which is what an unresolvable reference means to them.
///
/// This is how the document's own stages (open enums, the change report) read references.
/// Preflight has a second, deliberately different resolver (`preflight::refs::resolve`): it
/// mirrors progenitor's lookup by the text after the last `/`, to find where progenitor fails.
pub fn resolve<'a>(doc: &'a Value, mut node: &'a Value) -> &'a Value {
    let mut followed: HashSet<&str> = HashSet::new();
    while let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        if !followed.insert(reference) {
            return node;
        }
        match reference.strip_prefix('#').and_then(|p| doc.pointer(p)) {
            Some(target) => node = target,
            None => return node,
        }
    }
    node
}

/// The JSON type of `value` with its article, as messages name it: `a string`, `an object`,
/// `null`.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_are_the_method_keys_of_path_items_in_document_order() {
        let doc = json!({"paths": {
            "/b": {"parameters": [], "post": {"operationId": "B"}, "summary": "s", "get": {}},
            "x-draft": {"get": {"operationId": "NotAnOperation"}},
            "/a/{id}": {"delete": {}, "x-get": {}},
            "/broken": "not a path item",
        }});
        let found: Vec<(&str, &str, String)> = operations(&doc)
            .map(|op| (op.path, op.method, op.pointer()))
            .collect();
        assert_eq!(
            found,
            [
                ("/b", "post", "/paths/~1b/post".to_string()),
                ("/b", "get", "/paths/~1b/get".to_string()),
                ("/a/{id}", "delete", "/paths/~1a~1{id}/delete".to_string()),
            ]
        );
        let first = operations(&doc).next().unwrap();
        assert_eq!(first.operation["operationId"], "B");
        assert!(first.item.contains_key("parameters"));
        assert_eq!(operations(&json!({"openapi": "3.0.3"})).count(), 0);
    }

    #[test]
    fn resolve_follows_chains_and_stops_where_they_break_or_loop() {
        let doc = json!({"components": {
            "parameters": {"Id": {"$ref": "#/components/parameters/RealId"}, "RealId": {"name": "id"}},
            "schemas": {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}},
            "responses": {"Gone": {"$ref": "#/components/responses/Missing"}},
        }});
        let id = json!({"$ref": "#/components/parameters/Id"});
        assert_eq!(resolve(&doc, &id), &json!({"name": "id"}));
        let looping = json!({"$ref": "#/components/schemas/A"});
        assert!(resolve(&doc, &looping).get("$ref").is_some());
        let dangling = json!({"$ref": "#/components/responses/Gone"});
        assert_eq!(
            resolve(&doc, &dangling),
            &json!({"$ref": "#/components/responses/Missing"})
        );
        let external = json!({"$ref": "other.yaml#/x"});
        assert_eq!(resolve(&doc, &external), &external);
        let plain = json!({"type": "string"});
        assert_eq!(resolve(&doc, &plain), &plain);
    }

    #[test]
    fn json_types_are_named_with_their_article() {
        let named: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(json_type)
        .collect();
        assert_eq!(
            named,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
