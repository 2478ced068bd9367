//! Which datasets list entries that other operations take by id (the attachments, whose each
//! entry's content is `GetAttachmentContent`), read from the description's own links, and the
//! code that says so (`Dataset::listing`, part of `generated_datasets.rs`).
//!
//! An OpenAPI link from a dataset's `2xx` answer to an operation says where that operation's
//! parameters come from. A parameter read from `$response.body#/{member}/0/{id}` (or
//! `$response.body#/0/{id}` when the answer is the list itself) says that the answer lists
//! entries in `member`, that each entry's id is its `id` member, and that the linked operation
//! takes one entry. That is all the export needs to read a listing one entry at a time and to
//! know what each entry leads to; no dataset, member or operation is named here, so a release
//! that adds a listing with its links is covered by the same rule.

use serde_json::Value;

use crate::document::{self as openapi, resolve};

/// Where a dataset's answer lists entries, and the operations that take one entry's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The member of the answer holding the entries; `None` when the answer is the list.
    pub member: Option<String>,
    /// The member of each entry holding its id.
    pub id: String,
    /// The operationIds of the operations taking one entry, in the order the links are
    /// declared, each once.
    pub entry_operations: Vec<String>,
}

/// The listing `operation`'s answer is, as its links say; `None` when no link reads an entry of
/// a list. An error says which links disagree or which operation is missing, in words an
/// overlay author can act on.
pub fn listing(doc: &Value, operation: &Value) -> Result<Option<Listing>, String> {
    let mut found: Option<Listing> = None;
    for (name, link) in links(doc, operation) {
        let Some(target) = link.get("operationId").and_then(Value::as_str) else {
            continue;
        };
        let Some((member, id)) = listed_entry(link) else {
            continue;
        };
        if !openapi::operations(doc)
            .any(|op| op.operation.get("operationId").and_then(Value::as_str) == Some(target))
        {
            return Err(format!(
                "its link `{name}` names the operation `{target}`, which the description does \
                 not have; fix the link's operationId with an overlay"
            ));
        }
        match &mut found {
            None => {
                found = Some(Listing {
                    member,
                    id,
                    entry_operations: vec![target.to_string()],
                });
            }
            Some(listing) if listing.member == member && listing.id == id => {
                if !listing.entry_operations.iter().any(|op| op == target) {
                    listing.entry_operations.push(target.to_string());
                }
            }
            Some(listing) => {
                return Err(format!(
                    "its links read entries from two lists ({} and {}, link `{name}`); a \
                     dataset lists one kind of entry: fix the links with an overlay",
                    pointer_of(listing.member.as_deref(), &listing.id),
                    pointer_of(member.as_deref(), &id),
                ));
            }
        }
    }
    Ok(found)
}

/// `$response.body#/member/0/id`, as an error quotes it.
fn pointer_of(member: Option<&str>, id: &str) -> String {
    match member {
        Some(member) => format!("$response.body#/{member}/0/{id}"),
        None => format!("$response.body#/0/{id}"),
    }
}

/// Every link of the operation's `2xx` answers, resolved, with its name.
fn links<'a>(doc: &'a Value, operation: &'a Value) -> Vec<(&'a str, &'a Value)> {
    let mut all = Vec::new();
    let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
        return all;
    };
    for (status, response) in responses {
        if !status.starts_with('2') {
            continue;
        }
        let Some(links) = resolve(doc, response)
            .get("links")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (name, link) in links {
            all.push((name.as_str(), resolve(doc, link)));
        }
    }
    all
}

/// The list member (if any) and the id member of the entry a link's parameter reads: a
/// `$response.body#` pointer whose one but last segment is the first index, `0`.
fn listed_entry(link: &Value) -> Option<(Option<String>, String)> {
    let parameters = link.get("parameters")?.as_object()?;
    parameters.values().find_map(|value| {
        let pointer = value.as_str()?.strip_prefix("$response.body#")?;
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
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc_with(links: Value) -> Value {
        json!({
            "paths": {
                "/v1/sessions/{sessionId}/things": {"get": {
                    "operationId": "GetThings",
                    "responses": {"200": {"description": "OK", "links": links}}
                }},
                "/v1/sessions/{sessionId}/things/{thingId}/content": {"get": {
                    "operationId": "GetThingContent", "responses": {}
                }},
                "/v1/sessions/{sessionId}/things/{thingId}/pdf": {"get": {
                    "operationId": "GetThingPdf", "responses": {}
                }}
            },
            "components": {"links": {"ToPdf": {
                "operationId": "GetThingPdf",
                "parameters": {"thingId": "$response.body#/things/0/id"}
            }}}
        })
    }

    fn listing_of(doc: &Value) -> Result<Option<Listing>, String> {
        let operation = &doc["paths"]["/v1/sessions/{sessionId}/things"]["get"];
        listing(doc, operation)
    }

    #[test]
    fn links_reading_a_listed_entry_make_a_listing_with_every_operation_once() {
        let doc = doc_with(json!({
            "A": {"operationId": "GetThingContent", "parameters": {
                "sessionId": "$request.path.sessionId",
                "thingId": "$response.body#/things/0/id"
            }},
            "B": {"$ref": "#/components/links/ToPdf"},
            "C": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/things/0/id"
            }}
        }));
        assert_eq!(
            listing_of(&doc).unwrap(),
            Some(Listing {
                member: Some("things".into()),
                id: "id".into(),
                entry_operations: vec!["GetThingContent".into(), "GetThingPdf".into()],
            })
        );
    }

    #[test]
    fn an_answer_that_is_the_list_itself_has_no_member() {
        let doc = doc_with(json!({
            "A": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/0/thingId"
            }}
        }));
        let listing = listing_of(&doc).unwrap().unwrap();
        assert_eq!((listing.member, listing.id.as_str()), (None, "thingId"));
    }

    #[test]
    fn links_to_the_resource_itself_or_without_a_listed_entry_are_no_listing() {
        let doc = doc_with(json!({
            "Self": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/id"
            }},
            "Deep": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/a/b/0/id"
            }},
            "Path": {"operationId": "GetThingContent", "parameters": {
                "sessionId": "$request.path.sessionId"
            }},
            "ByRef": {"operationRef": "#/paths/x", "parameters": {
                "thingId": "$response.body#/things/0/id"
            }}
        }));
        assert_eq!(listing_of(&doc).unwrap(), None);
    }

    #[test]
    fn links_reading_two_lists_are_refused_naming_both() {
        let doc = doc_with(json!({
            "A": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/things/0/id"
            }},
            "B": {"operationId": "GetThingPdf", "parameters": {
                "thingId": "$response.body#/others/0/id"
            }}
        }));
        let error = listing_of(&doc).unwrap_err();
        assert!(error.contains("$response.body#/things/0/id"), "{error}");
        assert!(error.contains("$response.body#/others/0/id"), "{error}");
        assert!(error.contains("link `B`"), "{error}");
    }

    #[test]
    fn a_link_to_an_operation_the_description_lacks_is_refused_naming_it() {
        let doc = doc_with(json!({
            "Gone": {"operationId": "GetThingXml", "parameters": {
                "thingId": "$response.body#/things/0/id"
            }}
        }));
        let error = listing_of(&doc).unwrap_err();
        assert!(
            error.contains("`GetThingXml`") && error.contains("`Gone`"),
            "{error}"
        );
    }

    #[test]
    fn an_escaped_member_name_is_read_as_written() {
        let doc = doc_with(json!({
            "A": {"operationId": "GetThingContent", "parameters": {
                "thingId": "$response.body#/a~1b~0c/0/id"
            }}
        }));
        let listing = listing_of(&doc).unwrap().unwrap();
        assert_eq!(listing.member.as_deref(), Some("a/b~c"));
    }
}
