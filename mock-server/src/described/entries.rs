//! Operations served from the description that take one entry of a listing (a release's
//! `GET …/tax-returns/{taxReturnId}` below its `GET …/tax-returns`): the entry must be one the
//! listing gives for the session, else the answer is 404, as the service answers an id it does
//! not know; a JSON entry whose schema is the listed item's is the listed entry itself.
//!
//! Which listing an operation takes an entry of is read from the description's OpenAPI links (the
//! links stage writes one from each listing to every operation below it): a link to the
//! operation whose parameter `q` is `$response.body#/{member}/0/{id}` says that the answer of the
//! linking operation lists entries in `member`, each identified by its `id` member, and that `q`
//! is one of them. No listing, member or operation is named here.

use std::collections::HashMap;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use serde_json::Value;
use tower::ServiceExt as _;

use super::example;
use super::operations::{OperationRef, operations};
use crate::problem::Problem;

/// The listing an operation takes one entry of.
#[derive(Debug, Clone)]
pub struct ListedBy {
    /// The listing's operation.
    pub listing: OperationRef,
    /// The listing's path parameters the request gives (`sessionId`), by the operation's names.
    own: Vec<(String, String)>,
    /// The operation's path parameter that names the entry (`taxReturnId`).
    pub parameter: String,
    /// The member of the listing's answer that holds the entries; `None` when the answer is the
    /// list.
    member: Option<String>,
    /// The member of each entry holding its id.
    id: String,
    /// Whether the operation answers the entry itself (its success schema is the listed item's).
    pub answers_the_entry: bool,
}

/// Where the operation `target` takes one entry of a listing, from the links of every
/// operation's success answers.
pub fn listed_by(document: &Value, target: &OperationRef) -> Option<ListedBy> {
    for listing in operations(document)
        .into_iter()
        .filter(|op| op.method == Method::GET)
    {
        let Some(responses) = document
            .pointer(&format!("{}/responses", listing.pointer))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (status, response) in responses {
            if !status.starts_with('2') {
                continue;
            }
            let response = example::resolve(document, response);
            let Some(links) = response.get("links").and_then(Value::as_object) else {
                continue;
            };
            for link in links.values() {
                let link = example::resolve(document, link);
                if link.get("operationId").and_then(Value::as_str) != Some(target.id.as_str()) {
                    continue;
                }
                let Some(parameters) = link.get("parameters").and_then(Value::as_object) else {
                    continue;
                };
                let mut own = Vec::new();
                let mut entry = None;
                for (name, value) in parameters {
                    let Some(value) = value.as_str() else {
                        continue;
                    };
                    if let Some(from) = value.strip_prefix("$request.path.") {
                        own.push((name.clone(), from.to_owned()));
                    } else if let Some((member, id)) =
                        value.strip_prefix("$response.body#").and_then(listed_entry)
                    {
                        entry = Some((name.clone(), member, id));
                    }
                }
                let Some((parameter, member, id)) = entry else {
                    continue;
                };
                let item_schema = item_schema(document, response, member.as_deref());
                let answers_the_entry = item_schema.is_some()
                    && item_schema == success_schema(document, &target.pointer);
                return Some(ListedBy {
                    listing,
                    own,
                    parameter,
                    member,
                    id,
                    answers_the_entry,
                });
            }
        }
    }
    None
}

/// `/member/0/id` or `/0/id` (RFC 6901, `~1` and `~0` decoded): the list member and the id
/// member.
fn listed_entry(pointer: &str) -> Option<(Option<String>, String)> {
    let segments: Vec<String> = pointer
        .strip_prefix('/')?
        .split('/')
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect();
    match segments.as_slice() {
        [index, id] if index == "0" => Some((None, id.clone())),
        [member, index, id] if index == "0" => Some((Some(member.clone()), id.clone())),
        _ => None,
    }
}

/// The JSON schema of a response, as written (a `$ref` kept, to compare by it).
fn json_schema(response: &Value) -> Option<&Value> {
    response
        .get("content")?
        .as_object()?
        .iter()
        .find(|(media, _)| media.contains("json"))
        .and_then(|(_, content)| content.get("schema"))
}

/// The schema of the listing's items, as written.
fn item_schema(document: &Value, response: &Value, member: Option<&str>) -> Option<Value> {
    let schema = example::merged(document, json_schema(response)?);
    let list = match member {
        Some(member) => example::merged(document, schema.get("properties")?.get(member)?),
        None => schema,
    };
    list.get("items").cloned()
}

/// The schema of the first success answer of the operation at `pointer`, as written.
fn success_schema(document: &Value, pointer: &str) -> Option<Value> {
    let responses = document
        .pointer(&format!("{pointer}/responses"))?
        .as_object()?;
    let (_, response) = responses
        .iter()
        .find(|(status, _)| status.starts_with('2'))?;
    json_schema(example::resolve(document, response)).cloned()
}

impl ListedBy {
    /// The listing's path with the request's values (`/v1/sessions/6f1c…/tax-returns`).
    fn listing_path(&self, values: &HashMap<String, String>) -> String {
        let mut path = self.listing.path.clone();
        // `name` is this operation's parameter, `from` the listing's (`$request.path.from`).
        for (name, from) in &self.own {
            if let Some(value) = values.get(name) {
                path = path.replace(&format!("{{{from}}}"), value);
            }
        }
        path
    }

    /// The entry the request names, from the listing's `answer`.
    fn find(&self, answer: &Value, wanted: &str) -> Option<Value> {
        let list = match &self.member {
            Some(member) => answer.get(member)?,
            None => answer,
        };
        list.as_array()?
            .iter()
            .find(|entry| entry.get(&self.id).and_then(Value::as_str) == Some(wanted))
            .cloned()
    }

    /// The entry the request's path names: from the listing's answer for the session (made by
    /// `described` when the description serves the listing, else read from the hand-written
    /// route); 404 when the listing does not give it.
    pub async fn entry(
        &self,
        values: &HashMap<String, String>,
        described: Option<Value>,
        hand_written: &Router,
    ) -> Result<Value, Problem> {
        let wanted = values.get(&self.parameter).cloned().unwrap_or_default();
        let answer = match described {
            Some(answer) => answer,
            None => {
                let request = Request::get(self.listing_path(values))
                    .body(Body::empty())
                    .map_err(|error| {
                        Problem::internal(format!(
                            "The listing {} could not be read: {error}; a bug in the mock.",
                            self.listing.id
                        ))
                    })?;
                let response = hand_written.clone().oneshot(request).await.map_err(|_| {
                    Problem::internal(format!(
                        "The listing {} could not be read.",
                        self.listing.id
                    ))
                })?;
                if response.status() != StatusCode::OK {
                    return Err(Problem::not_found(format!(
                        "No {} '{wanted}': the listing {} has nothing for this session.",
                        self.parameter, self.listing.id
                    )));
                }
                let bytes = axum::body::to_bytes(
                    response.into_body(),
                    crate::body_limits::API_BODY_LIMIT * 64,
                )
                .await
                .map_err(|_| {
                    Problem::internal(format!(
                        "The listing {} could not be read.",
                        self.listing.id
                    ))
                })?;
                serde_json::from_slice(&bytes).unwrap_or(Value::Null)
            }
        };
        self.find(&answer, &wanted).ok_or_else(|| {
            Problem::not_found(format!(
                "The session has no {} '{wanted}' ({} lists them).",
                self.parameter, self.listing.id
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_link_names_its_list_and_id_members() {
        assert_eq!(
            listed_entry("/taxReturns/0/id"),
            Some((Some("taxReturns".into()), "id".into()))
        );
        assert_eq!(listed_entry("/0/id"), Some((None, "id".into())));
        assert_eq!(
            listed_entry("/a~1b/0/id"),
            Some((Some("a/b".into()), "id".into()))
        );
        assert_eq!(listed_entry("/taxReturns/1/id"), None);
        assert_eq!(listed_entry("/id"), None);
    }

    #[test]
    fn the_operation_a_listing_links_to_takes_one_of_its_entries() {
        let document = json!({
            "paths": {
                "/v1/s/{sessionId}/returns": {"get": {
                    "operationId": "GetReturns",
                    "responses": {"200": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Returns"}}},
                        "links": {"GetReturn": {
                            "operationId": "GetReturn",
                            "parameters": {
                                "sessionId": "$request.path.sessionId",
                                "returnId": "$response.body#/returns/0/id"
                            }
                        }}
                    }}
                }},
                "/v1/s/{sessionId}/returns/{returnId}": {"get": {
                    "operationId": "GetReturn",
                    "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Return"}}}}}
                }}
            },
            "components": {"schemas": {
                "Returns": {"type": "object", "properties": {"returns": {"type": "array", "items": {"$ref": "#/components/schemas/Return"}}}},
                "Return": {"type": "object", "properties": {"id": {"type": "string"}}}
            }}
        });
        let target = operations(&document)
            .into_iter()
            .find(|op| op.id == "GetReturn")
            .unwrap();
        let listed = listed_by(&document, &target).expect("listed");
        assert_eq!(listed.listing.id, "GetReturns");
        assert_eq!(listed.parameter, "returnId");
        assert!(listed.answers_the_entry);
        let answer = json!({"returns": [{"id": "a"}, {"id": "b"}]});
        assert_eq!(listed.find(&answer, "b"), Some(json!({"id": "b"})));
        assert_eq!(listed.find(&answer, "c"), None);
        let values = HashMap::from([
            ("sessionId".to_string(), "S".to_string()),
            ("returnId".to_string(), "b".to_string()),
        ]);
        assert_eq!(listed.listing_path(&values), "/v1/s/S/returns");
    }
}
