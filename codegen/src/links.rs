//! The links stage: OpenAPI links from every answer that returns a resource to every operation
//! below that resource, derived from the document so that an operation a vendor release adds
//! below a Session is reached without editing an overlay.
//!
//! A *resource* is a path `X/{p}` whose `GET` answers a component schema `S` (for this service,
//! `/v1/sessions/{sessionId}` and `Session`) that holds the id in a member named `p` or `id`.
//! Its *operations* are those at `X/{p}` or below it whose only path parameter is `p` and that
//! have an `operationId`, in document order. Then:
//!
//! - `components.links.{S}To{operationId}` defines each link once, with `p` read from
//!   `$response.body#/{member}`. An entry an overlay already wrote keeps its `description` (the
//!   prose a reader sees is not derivable) and gets its `operationId` and `parameters` from here;
//!   a new operation gets a description made of its summary.
//! - Every success answer whose schema is `S` links to all of them by reference.
//! - Every success answer that lists `S` (an array of `S`, or an object with such an array
//!   member) links to all of them through the first listed item.
//!
//! A *listing* is a `GET` at `L` whose success answer lists entries with an id: the answer is an
//! array of objects with an `id` member, or an object with exactly one member that is (the
//! account statements: `accountStatements`, beside `sources`, whose entries have none). Every
//! operation at `L/{q}` or below it whose path parameters are `L`'s and `q` takes one entry:
//! the listing's answer links to it, `q` read from `$response.body#/{member}/0/id` and `L`'s own
//! parameters from `$request.path`. An answer that already links to the operation (an overlay's
//! link, `overlays/10-links.overlay.yaml`, with its prose) keeps its link. These links say which
//! datasets list entries and what each entry leads to: `crate::listings` reads them, so a
//! listing a release adds below a Session is found without an overlay.

use serde_json::{Map, Value, json};

use crate::document::{Operation, SCHEMA_REF_PREFIX, operations, pointer, resolve};

/// One resource and the operations below it.
struct Resource {
    /// The component schema's name.
    schema: String,
    /// The path parameter that takes its id.
    parameter: String,
    /// The member of the schema that holds the id.
    member: String,
    /// `(operationId, summary)` of each operation below it, in document order.
    targets: Vec<(String, String)>,
}

/// Adds the derived links to `doc`; returns what it noticed (an overlay's description of a link
/// to an operation the document no longer has, which it drops).
pub fn derive(doc: &mut Value) -> Vec<String> {
    let resources = resources(doc);
    let mut warnings = Vec::new();
    for resource in &resources {
        define(doc, resource, &mut warnings);
        attach(doc, resource);
    }
    link_listed_entries(doc);
    warnings
}

/// One listing's links to write: on which answer, to which operations.
struct ListedEntries {
    /// The JSON pointer of the success answer that lists the entries.
    answer: String,
    /// `L`'s own path parameters, read from the request.
    own: Vec<String>,
    /// `/member` (or `""` for an answer that is the list).
    list: String,
    /// `(operationId, q, summary)` of each operation taking one entry.
    targets: Vec<(String, String, String)>,
}

/// Links every listing's answer to the operations that take one of its entries (see the module
/// documentation), but those it already links to.
fn link_listed_entries(doc: &mut Value) {
    let mut found = Vec::new();
    for op in operations(doc).filter(|op| op.method == "get") {
        let own = path_parameters(doc, &op);
        let below = format!("{}/{{", op.path);
        let targets: Vec<(String, String, String)> = operations(doc)
            .filter(|target| target.path.starts_with(&below))
            .filter_map(|target| {
                let rest = &target.path[below.len()..];
                let q = rest.split('}').next()?.to_owned();
                let mut expected = own.clone();
                expected.push(q.clone());
                expected.sort();
                (path_parameters(doc, &target) == expected).then_some(())?;
                let (id, summary) = id_and_summary(&target)?;
                Some((id, q, summary))
            })
            .collect();
        if targets.is_empty() {
            continue;
        }
        let Some(responses) = op.operation.get("responses").and_then(Value::as_object) else {
            continue;
        };
        for (status, response) in responses.iter().filter(|(s, _)| s.starts_with('2')) {
            if response.get("$ref").is_some() {
                continue;
            }
            let Some(list) = json_schema(response).and_then(|schema| entries_at(doc, schema))
            else {
                continue;
            };
            let linked: Vec<&str> = response
                .get("links")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(_, link)| resolve(doc, link).get("operationId")?.as_str())
                .collect();
            let targets: Vec<(String, String, String)> = targets
                .iter()
                .filter(|(id, _, _)| !linked.contains(&id.as_str()))
                .cloned()
                .collect();
            if !targets.is_empty() {
                found.push(ListedEntries {
                    answer: pointer::child(&pointer::child(&op.pointer(), "responses"), status),
                    own: own.clone(),
                    list,
                    targets,
                });
            }
        }
    }
    for listed in found {
        let Some(Value::Object(response)) = doc.pointer_mut(&listed.answer) else {
            continue;
        };
        let links = response
            .entry("links")
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(links) = links else {
            continue;
        };
        for (id, q, summary) in &listed.targets {
            let mut parameters = Map::new();
            for name in &listed.own {
                parameters.insert(name.clone(), json!(format!("$request.path.{name}")));
            }
            parameters.insert(
                q.clone(),
                json!(format!("$response.body#{}/0/id", listed.list)),
            );
            let summary = summary.trim();
            let description = if summary.is_empty() {
                format!("Each listed entry's id is the {q} of {id}.")
            } else {
                format!("Each listed entry's id is the {q} of {id}: {summary}")
            };
            links.insert(
                id.clone(),
                json!({"operationId": id, "parameters": parameters, "description": description}),
            );
        }
    }
}

/// Where an answer lists entries with an id: `""` when it is such a list, `/member` when exactly
/// one of its members is one; `None` otherwise (no list, or two: which one an operation takes is
/// not the shape's to say).
fn entries_at(doc: &Value, schema: &Value) -> Option<String> {
    let lists_entries = |schema: &Value| {
        let schema = through_all_of(doc, schema);
        schema.get("type").and_then(Value::as_str) == Some("array")
            && schema
                .get("items")
                .map(|items| through_all_of(doc, items))
                .and_then(|items| items.get("properties")?.get("id"))
                .is_some()
    };
    if lists_entries(schema) {
        return Some(String::new());
    }
    let members: Vec<&String> = through_all_of(doc, schema)
        .get("properties")?
        .as_object()?
        .iter()
        .filter(|(_, member)| lists_entries(member))
        .map(|(name, _)| name)
        .collect();
    match members.as_slice() {
        [member] => Some(format!("/{}", pointer::escape(member))),
        _ => None,
    }
}

/// `schema` resolved, also through a one-element `allOf` (how a nullable `$ref` is written).
fn through_all_of<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(doc, schema);
    match schema.get("allOf").and_then(Value::as_array) {
        Some(parts) if parts.len() == 1 => resolve(doc, &parts[0]),
        _ => schema,
    }
}

/// Every resource of `doc`, each with at least one operation below it.
fn resources(doc: &Value) -> Vec<Resource> {
    let mut found = Vec::new();
    for op in operations(doc).filter(|op| op.method == "get") {
        let Some(parameter) = last_parameter(op.path) else {
            continue;
        };
        let Some(schema) = success_schemas(doc, &op)
            .into_iter()
            .find_map(|schema| component_name(schema).map(str::to_owned))
        else {
            continue;
        };
        let properties = doc
            .pointer(&format!(
                "/components/schemas/{}/properties",
                pointer::escape(&schema)
            ))
            .and_then(Value::as_object);
        let Some(member) = [parameter.as_str(), "id"]
            .into_iter()
            .find(|name| properties.is_some_and(|p| p.contains_key(*name)))
        else {
            continue;
        };
        let below = format!("{}/", op.path);
        let targets: Vec<(String, String)> = operations(doc)
            .filter(|target| target.path == op.path || target.path.starts_with(&below))
            .filter(|target| path_parameters(doc, target) == [parameter.clone()])
            .filter_map(|target| id_and_summary(&target))
            .collect();
        if !targets.is_empty() {
            found.push(Resource {
                schema,
                member: member.to_owned(),
                parameter,
                targets,
            });
        }
    }
    found
}

/// An operation's id (none: it is left out) and summary (empty when it has none).
fn id_and_summary(op: &Operation<'_>) -> Option<(String, String)> {
    let id = op.operation.get("operationId")?.as_str()?.to_owned();
    let summary = op
        .operation
        .get("summary")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Some((id, summary))
}

/// `p` of a path ending in `/{p}`.
fn last_parameter(path: &str) -> Option<String> {
    let last = path.rsplit('/').next()?;
    let name = last.strip_prefix('{')?.strip_suffix('}')?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// The names of the path parameters an operation declares (its own and its path item's).
fn path_parameters(doc: &Value, op: &Operation<'_>) -> Vec<String> {
    let own = op.operation.get("parameters").and_then(Value::as_array);
    let shared = op.item.get("parameters").and_then(Value::as_array);
    let mut names: Vec<String> = own
        .into_iter()
        .flatten()
        .chain(shared.into_iter().flatten())
        .map(|parameter| resolve(doc, parameter))
        .filter(|parameter| parameter.get("in").and_then(Value::as_str) == Some("path"))
        .filter_map(|parameter| parameter.get("name")?.as_str().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The JSON schemas of an operation's success answers (`2XX` and each `2..` status).
fn success_schemas<'a>(doc: &'a Value, op: &Operation<'a>) -> Vec<&'a Value> {
    op.operation
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(status, _)| status.starts_with('2'))
        .filter_map(|(_, response)| json_schema(resolve(doc, response)))
        .collect()
}

/// The schema of a response's `application/json` (or other JSON) content.
fn json_schema(response: &Value) -> Option<&Value> {
    response
        .get("content")?
        .as_object()?
        .iter()
        .find(|(media, _)| {
            let media = media.split(';').next().unwrap_or_default().trim();
            media == "application/json" || media.ends_with("+json")
        })
        .and_then(|(_, content)| content.get("schema"))
}

/// `S` of a schema that is exactly `$ref: '#/components/schemas/S'`.
fn component_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix(SCHEMA_REF_PREFIX)
}

fn link_name(resource: &Resource, operation_id: &str) -> String {
    format!("{}To{operation_id}", resource.schema)
}

/// Writes `components.links` for `resource`, keeping each existing entry's place and prose.
fn define(doc: &mut Value, resource: &Resource, warnings: &mut Vec<String>) {
    let Some(root) = doc.as_object_mut() else {
        return;
    };
    let components = root
        .entry("components")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(components) = components.as_object_mut() else {
        return;
    };
    let links = components
        .entry("links")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(links) = links.as_object_mut() else {
        return;
    };
    let prefix = format!("{}To", resource.schema);
    let wanted: Vec<String> = resource
        .targets
        .iter()
        .map(|(id, _)| link_name(resource, id))
        .collect();
    // An overlay's prose for an operation the document no longer has: the link would lead
    // nowhere, so it goes, and the overlay should be looked at.
    let stale: Vec<String> = links
        .iter()
        .filter(|(name, link)| {
            name.starts_with(&prefix) && !wanted.contains(name) && link.get("operationId").is_none()
        })
        .map(|(name, _)| name.clone())
        .collect();
    for name in stale {
        links.shift_remove(&name);
        warnings.push(format!(
            "links: components.links.{name} describes a link to an operation below {} that the \
             description no longer has; it was dropped (remove it from the links overlay)",
            resource.schema
        ));
    }
    for (id, summary) in &resource.targets {
        let name = link_name(resource, id);
        let description = links
            .get(&name)
            .and_then(|link| link.get("description"))
            .cloned()
            .unwrap_or_else(|| json!(own_description(resource, id, summary)));
        let mut link = Map::new();
        link.insert("operationId".into(), json!(id));
        link.insert(
            "parameters".into(),
            json!({ &resource.parameter: format!("$response.body#/{}", resource.member) }),
        );
        link.insert("description".into(), description);
        if let Some(Value::Object(existing)) = links.get(&name) {
            for (key, value) in existing {
                link.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        match links.get_mut(&name) {
            Some(slot) => *slot = Value::Object(link),
            None => {
                links.insert(name, Value::Object(link));
            }
        }
    }
}

/// The description of a link no overlay describes, from the target's summary.
fn own_description(resource: &Resource, operation_id: &str, summary: &str) -> String {
    let summary = summary.trim();
    if summary.is_empty() {
        format!(
            "The {}'s {} is the {} of {operation_id}.",
            resource.schema, resource.member, resource.parameter
        )
    } else {
        format!(
            "The {}'s {} is the {} of {operation_id}: {summary}",
            resource.schema, resource.member, resource.parameter
        )
    }
}

/// The description of the same link from a list: about its first item.
fn first_listed(resource: &Resource, description: &str) -> String {
    let possessive = format!("The {}'s ", resource.schema);
    match description.strip_prefix(&possessive) {
        Some(rest) => format!("The first listed {}'s {rest}", resource.schema),
        None => format!("From the first listed {}: {description}", resource.schema),
    }
}

/// Puts the links on every success answer that returns or lists `resource`.
fn attach(doc: &mut Value, resource: &Resource) {
    let mut edits: Vec<(String, Map<String, Value>)> = Vec::new();
    for op in operations(doc) {
        let Some(responses) = op.operation.get("responses").and_then(Value::as_object) else {
            continue;
        };
        for (status, response) in responses.iter().filter(|(s, _)| s.starts_with('2')) {
            // A response that is a `$ref` is shared: its links are written where it is defined
            // only by an overlay; the derived ones go on answers written in place.
            if response.get("$ref").is_some() {
                continue;
            }
            let Some(schema) = json_schema(response) else {
                continue;
            };
            let links = if component_name(schema) == Some(resource.schema.as_str()) {
                by_reference(resource)
            } else if let Some(list) = listed_at(doc, schema, &resource.schema) {
                through_first(doc, resource, &list)
            } else {
                continue;
            };
            let at = pointer::child(&pointer::child(&op.pointer(), "responses"), status);
            edits.push((at, links));
        }
    }
    for (at, links) in edits {
        let Some(Value::Object(response)) = doc.pointer_mut(&at) else {
            continue;
        };
        let entry = response
            .entry("links")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(existing) = entry {
            for (name, link) in links {
                existing.insert(name, link);
            }
        }
    }
}

fn by_reference(resource: &Resource) -> Map<String, Value> {
    resource
        .targets
        .iter()
        .map(|(id, _)| {
            (
                id.clone(),
                json!({ "$ref": format!("#/components/links/{}", link_name(resource, id)) }),
            )
        })
        .collect()
}

fn through_first(doc: &Value, resource: &Resource, list: &str) -> Map<String, Value> {
    resource
        .targets
        .iter()
        .map(|(id, _)| {
            let description = doc
                .pointer(&format!(
                    "/components/links/{}/description",
                    pointer::escape(&link_name(resource, id))
                ))
                .and_then(Value::as_str)
                .unwrap_or_default();
            (
                id.clone(),
                json!({
                    "operationId": id,
                    "parameters": {
                        &resource.parameter: format!("$response.body#{list}/0/{}", resource.member),
                    },
                    "description": first_listed(resource, description),
                }),
            )
        })
        .collect()
}

/// The JSON pointer (in the answer) of a list of `schema` items: `""` for an array of them, or
/// `/member` for an object whose member is one.
fn listed_at(doc: &Value, schema: &Value, item: &str) -> Option<String> {
    let is_list = |schema: &Value| {
        let schema = resolve(doc, schema);
        schema.get("items").and_then(component_name) == Some(item)
    };
    if is_list(schema) {
        return Some(String::new());
    }
    let resolved = resolve(doc, schema);
    resolved
        .get("properties")?
        .as_object()?
        .iter()
        .find(|(_, member)| is_list(member))
        .map(|(name, _)| format!("/{}", pointer::escape(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dataset(summary: &str) -> Value {
        json!({"get": {
            "operationId": null,
            "summary": summary,
            "parameters": [{"name": "sessionId", "in": "path", "required": true}],
            "responses": {"200": {"description": "OK"}},
        }})
    }

    fn document() -> Value {
        let session = json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}});
        let mut doc = json!({
            "paths": {
                "/v1/sessions": {
                    "get": {"operationId": "GetSessions", "responses": {"200": {"description": "OK",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionsResponse"}}}}}},
                    "post": {"operationId": "CreateSession", "responses": {"201": session.clone()}},
                },
                "/v1/sessions/{sessionId}": {
                    "parameters": [{"name": "sessionId", "in": "path", "required": true}],
                    "get": {"operationId": "GetSession", "responses": {"200": session.clone(), "404": session}},
                },
                "/v1/sessions/{sessionId}/files/{fileId}": {"get": {
                    "operationId": "GetFile",
                    "parameters": [{"name": "sessionId", "in": "path"}, {"name": "fileId", "in": "path"}],
                    "responses": {"200": {"description": "OK"}},
                }},
                "/v1/sessions/{sessionId}/scores": dataset("Returns the scores."),
            },
            "components": {
                "schemas": {
                    "Session": {"type": "object", "properties": {"id": {"type": "string"}}},
                    "SessionsResponse": {"type": "object", "properties": {
                        "sessions": {"type": "array", "items": {"$ref": "#/components/schemas/Session"}}}},
                },
                "links": {
                    "SessionToGetSession": {"description": "The Session's id reads the Session again."},
                    "SessionToGetGone": {"description": "The Session's id reads what is gone."},
                },
            },
        });
        doc["paths"]["/v1/sessions/{sessionId}/scores"]["get"]["operationId"] = json!("GetScores");
        doc
    }

    #[test]
    fn every_answer_with_a_session_links_to_every_operation_below_it() {
        let mut doc = document();
        let warnings = derive(&mut doc);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("SessionToGetGone"), "{warnings:?}");
        assert_eq!(
            doc["components"]["links"],
            json!({
                "SessionToGetSession": {
                    "operationId": "GetSession",
                    "parameters": {"sessionId": "$response.body#/id"},
                    "description": "The Session's id reads the Session again.",
                },
                "SessionToGetScores": {
                    "operationId": "GetScores",
                    "parameters": {"sessionId": "$response.body#/id"},
                    "description": "The Session's id is the sessionId of GetScores: Returns the scores.",
                },
            })
        );
        let by_reference = json!({
            "GetSession": {"$ref": "#/components/links/SessionToGetSession"},
            "GetScores": {"$ref": "#/components/links/SessionToGetScores"},
        });
        assert_eq!(
            doc["paths"]["/v1/sessions"]["post"]["responses"]["201"]["links"],
            by_reference
        );
        let get = &doc["paths"]["/v1/sessions/{sessionId}"]["get"]["responses"];
        assert_eq!(get["200"]["links"], by_reference);
        assert!(get["404"].get("links").is_none(), "errors carry no links");
        assert_eq!(
            doc["paths"]["/v1/sessions"]["get"]["responses"]["200"]["links"]["GetScores"],
            json!({
                "operationId": "GetScores",
                "parameters": {"sessionId": "$response.body#/sessions/0/id"},
                "description": "The first listed Session's id is the sessionId of GetScores: Returns the scores.",
            })
        );
        assert_eq!(
            doc["paths"]["/v1/sessions"]["get"]["responses"]["200"]["links"]["GetSession"]["description"],
            "The first listed Session's id reads the Session again."
        );
        // Two path parameters: not derivable, left to the overlay.
        assert!(doc["components"]["links"].get("SessionToGetFile").is_none());
    }

    #[test]
    fn deriving_twice_changes_nothing_and_unnamed_operations_are_skipped() {
        let mut doc = document();
        doc["paths"]["/v1/sessions/{sessionId}/other"] = dataset("Returns other things.");
        derive(&mut doc);
        let once = doc.clone();
        assert!(derive(&mut doc).is_empty());
        assert_eq!(doc, once);
        assert!(
            !doc["components"]["links"]
                .as_object()
                .expect("links")
                .keys()
                .any(|name| name.contains("other") || name.contains("null"))
        );
    }

    fn listing_document() -> Value {
        let session = || json!([{"name": "sessionId", "in": "path", "required": true}]);
        let get = |id: &str, parameters: Value, schema: Value| {
            json!({"get": {"operationId": id, "summary": format!("Reads {id}."), "parameters": parameters,
                "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}}}})
        };
        let entry = json!({"type": "object", "properties": {"id": {"type": "string"}}});
        let source = json!({"type": "object", "properties": {"sourceId": {"type": "string"}}});
        let with = |extra: &str| {
            let mut parameters = session();
            parameters
                .as_array_mut()
                .unwrap()
                .push(json!({"name": extra, "in": "path"}));
            parameters
        };
        json!({
            "paths": {
                "/v1/sessions/{sessionId}/things": get("GetThings", session(), json!({"type": "object", "properties": {
                    "sources": {"type": "array", "items": source},
                    "things": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}}}})),
                "/v1/sessions/{sessionId}/things/{thingId}/content": get("GetThingContent", with("thingId"), json!({})),
                "/v1/sessions/{sessionId}/things/{thingId}/pdf": get("GetThingPdf", with("thingId"), json!({})),
                "/v1/sessions/{sessionId}/files": get("GetFiles", session(), json!({"type": "array", "items": entry})),
                "/v1/sessions/{sessionId}/files/{fileId}": get("GetFile", with("fileId"), json!({})),
                "/v1/sessions/{sessionId}/pairs": get("GetPairs", session(), json!({"type": "object", "properties": {
                    "left": {"type": "array", "items": entry}, "right": {"type": "array", "items": entry}}})),
                "/v1/sessions/{sessionId}/pairs/{pairId}": get("GetPair", with("pairId"), json!({})),
            },
            "components": {"schemas": {"Thing": {"allOf": [entry]}}},
        })
    }

    #[test]
    fn a_listing_links_to_every_operation_taking_one_of_its_entries() {
        let mut doc = listing_document();
        // An overlay's own link to one of them, with its prose: kept as it is.
        let overlay_link = json!({"operationId": "GetThingPdf",
            "parameters": {"thingId": "$response.body#/things/0/id"}, "description": "Each thing's PDF."});
        doc["paths"]["/v1/sessions/{sessionId}/things"]["get"]["responses"]["200"]["links"] =
            json!({"Pdf": overlay_link});
        derive(&mut doc);
        let links = |path: &str| doc["paths"][path]["get"]["responses"]["200"]["links"].clone();
        assert_eq!(
            links("/v1/sessions/{sessionId}/things"),
            json!({
                "Pdf": overlay_link,
                "GetThingContent": {
                    "operationId": "GetThingContent",
                    "parameters": {"sessionId": "$request.path.sessionId", "thingId": "$response.body#/things/0/id"},
                    "description": "Each listed entry's id is the thingId of GetThingContent: Reads GetThingContent.",
                },
            })
        );
        assert_eq!(
            links("/v1/sessions/{sessionId}/files")["GetFile"]["parameters"],
            json!({"sessionId": "$request.path.sessionId", "fileId": "$response.body#/0/id"})
        );
        // Two lists with ids: which one an operation takes is not the shape's to say.
        assert!(links("/v1/sessions/{sessionId}/pairs").is_null());

        let once = doc.clone();
        derive(&mut doc);
        assert_eq!(doc, once, "deriving twice changes nothing");
    }
}
