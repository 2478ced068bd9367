//! Responses: progenitor gives an operation one success type and one error type, so each group
//! of responses may have only one body shape (`extract_responses`), plus what it asserts of JSON
//! response media types and websocket operations.

use serde_json::{Value, json};

use super::Op;
use crate::preflight::ctx::Ctx;
use crate::preflight::deser::is_response_key;
use crate::preflight::loc::Loc;
use crate::preflight::refs::{Section, reference_of, resolve};
use crate::preflight::report::{Problem, SuggestedFix};
use crate::preflight::schemas;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Code(u16),
    Range(u16),
    Default,
}

impl Status {
    fn parse(key: &str) -> Option<Self> {
        if key == "default" {
            return Some(Status::Default);
        }
        match serde_json::from_value::<openapiv3::StatusCode>(json!(key)).ok()? {
            openapiv3::StatusCode::Code(code) => Some(Status::Code(code)),
            openapiv3::StatusCode::Range(range) => Some(Status::Range(range)),
        }
    }

    /// `OperationResponseStatus::to_value`, the sort key of `extract_responses`.
    fn value(self) -> u16 {
        match self {
            Status::Code(code) => code,
            Status::Range(range) => range * 100,
            Status::Default => 1000,
        }
    }

    fn is_success_or_default(self) -> bool {
        matches!(
            self,
            Status::Default | Status::Code(101) | Status::Code(200..=299) | Status::Range(2)
        )
    }

    fn is_error_or_default(self) -> bool {
        matches!(
            self,
            Status::Default | Status::Code(400..=599) | Status::Range(4..=5)
        )
    }
}

/// progenitor's `OperationResponseKind`, with the JSON schema standing for the typify type.
#[derive(Clone, Debug)]
enum Shape {
    Json {
        shape: Value,
        shown: String,
        inline_object: bool,
    },
    Upgrade,
    Raw(String),
    Empty,
}

impl Shape {
    fn key(&self) -> Value {
        match self {
            Shape::Json { shape, .. } => json!({ "json": shape }),
            Shape::Upgrade => json!("upgrade"),
            Shape::Raw(_) => json!("raw"),
            Shape::Empty => json!("none"),
        }
    }

    fn describe(&self) -> String {
        match self {
            Shape::Json { shown, .. } => format!("JSON {shown}"),
            Shape::Upgrade => "a connection upgrade".into(),
            Shape::Raw(types) => format!("a raw body ({types})"),
            Shape::Empty => "no body".into(),
        }
    }
}

struct Resp {
    key: String,
    status: Status,
    loc: Loc,
    shape: Shape,
    /// Position in the document's responses map.
    order: usize,
}

/// Checks the responses of one operation.
pub(super) fn check(ctx: &mut Ctx, op: &Op) {
    let Some(Value::Object(responses)) = op.map.get("responses") else {
        return;
    };
    let label = op.label();
    let websocket = op.map.contains_key("x-dropshot-websocket");
    let responses_loc = op.loc.key("responses");
    // progenitor lists `default` first, then the status codes in document order.
    let mut keys: Vec<(usize, &String)> = responses
        .keys()
        .enumerate()
        .filter(|(_, k)| is_response_key(k))
        .collect();
    keys.sort_by_key(|(_, k)| *k != "default");

    let mut entries = Vec::new();
    for (order, key) in keys {
        let Some(mut status) = Status::parse(key) else {
            continue;
        };
        if websocket && status == Status::Default {
            status = Status::Code(101);
        }
        let entry_loc = responses_loc.key(key);
        let Some((loc, response)) = resolve(ctx, Section::Responses, &entry_loc) else {
            continue;
        };
        let content = response.get("content").and_then(Value::as_object);
        let json_media = content.and_then(|content| {
            content
                .iter()
                .find(|(k, _)| *k == "application/json" || k.starts_with("application/json;"))
        });
        let shape = if let Some((media_type, media)) = json_media {
            let media_loc = loc.key("content").key(media_type);
            let schema = media.get("schema").filter(|s| !s.is_null());
            if media
                .get("encoding")
                .and_then(Value::as_object)
                .is_some_and(|e| !e.is_empty())
            {
                ctx.report(
                    &media_loc.key("encoding"),
                    Problem::MediaTypeEncoding,
                    format!(
                        "{label}: the {key} response's `{media_type}` has an `encoding`; \
                         progenitor asserts there is none (`assertion failed: \
                         mt.encoding.is_empty()`)."
                    ),
                    SuggestedFix::remove(
                        media_loc.key("encoding").path(),
                        "`encoding` describes multipart and form bodies; it means nothing for JSON.",
                    ),
                );
            }
            match schema {
                Some(_) => schemas::check(ctx, &media_loc.key("schema")),
                None if media.is_object() => ctx.report(
                    &media_loc,
                    Problem::MissingSchema,
                    format!(
                        "{label}: the {key} response's `{media_type}` has no schema; progenitor \
                         panics on it (`not yet implemented: media type encoding, no schema`)."
                    ),
                    SuggestedFix::update(
                        media_loc.path(),
                        "`{}` decodes the body as any JSON value; better, its real schema.",
                        json!({ "schema": {} }),
                    ),
                ),
                None => {}
            }
            let schema = schema.cloned().unwrap_or_else(|| json!({}));
            let shown = match reference_of(&schema) {
                Some(reference) => format!("`{reference}`"),
                None => "(inline schema)".into(),
            };
            let inline_object = reference_of(&schema).is_none()
                && schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| !p.is_empty());
            Shape::Json {
                shape: schemas::shape(&schema),
                shown,
                inline_object,
            }
        } else if status == Status::Code(101) {
            Shape::Upgrade
        } else if let Some(content) = content.filter(|c| !c.is_empty()) {
            Shape::Raw(content.keys().cloned().collect::<Vec<_>>().join(", "))
        } else {
            Shape::Empty
        };
        entries.push(Resp {
            key: key.clone(),
            status,
            loc: entry_loc,
            shape,
            order,
        });
    }

    if websocket && !entries.iter().any(|e| e.status == Status::Code(101)) {
        // Once there is a 101, any other success response is a second success shape.
        let others = entries
            .iter()
            .filter(|e| e.status.is_success_or_default())
            .map(|e| {
                SuggestedFix::remove(
                    e.loc.path(),
                    "A websocket operation succeeds with 101 only; another success response would \
                     be a second success body shape.",
                )
            })
            .collect();
        ctx.report_then(
            &responses_loc,
            Problem::WebsocketWithout101,
            format!(
                "{label} is marked `x-dropshot-websocket` but has no 101 response; progenitor \
                 refuses it (`must include an explicit 101 response code`)."
            ),
            SuggestedFix::update(
                responses_loc.path(),
                "The protocol switch a websocket starts with.",
                json!({ "101": { "description": "Switching Protocols" } }),
            ),
            others,
        );
        return;
    }

    response_group(ctx, &label, &entries, true);
    response_group(ctx, &label, &entries, false);
}

/// progenitor's `extract_responses`: the group, sorted (stably) by status, a `default` dropped
/// when a `2XX` sorts right before it, and at most one shape allowed.
fn response_group(ctx: &mut Ctx, label: &str, entries: &[Resp], success: bool) {
    let mut group: Vec<&Resp> = entries
        .iter()
        .filter(|e| {
            if success {
                e.status.is_success_or_default()
            } else {
                e.status.is_error_or_default()
            }
        })
        .collect();
    group.sort_by_key(|e| e.status.value());
    let n = group.len();
    if n >= 2 && group[n - 2].status == Status::Range(2) && group[n - 1].status == Status::Default {
        group.pop();
    }

    // Distinct shapes with how often they occur and where first.
    let mut shapes: Vec<(Value, usize, usize, &Shape)> = Vec::new();
    for e in &group {
        let key = e.shape.key();
        match shapes.iter_mut().find(|(k, ..)| *k == key) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 = entry.2.min(e.order);
            }
            None => shapes.push((key, 1, e.order, &e.shape)),
        }
    }
    if shapes.len() <= 1 {
        return;
    }
    // Keep a JSON body if there is one (the richest for callers), the most common of them.
    let has_json = shapes
        .iter()
        .any(|(_, _, _, s)| matches!(s, Shape::Json { .. }));
    let keeper = shapes
        .iter()
        .filter(|(_, _, _, s)| !has_json || matches!(s, Shape::Json { .. }))
        .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
        .map(|(k, _, _, s)| (k.clone(), (*s).clone()))
        .expect("at least two shapes");

    let (group_name, statuses, problem) = if success {
        (
            "success",
            "default, 101, 2xx and 2XX",
            Problem::SuccessResponseShapes,
        )
    } else {
        (
            "error",
            "default, 4xx, 5xx, 4XX and 5XX",
            Problem::ErrorResponseShapes,
        )
    };
    let listing = group
        .iter()
        .map(|e| format!("{} {}", e.key, e.shape.describe()))
        .collect::<Vec<_>>()
        .join("; ");
    let silent = shapes.iter().all(|(_, _, _, s)| {
        matches!(
            s,
            Shape::Json {
                inline_object: true,
                ..
            }
        )
    });
    let consequence = if silent {
        "typify names every inline body of an operation alike, so progenitor silently decodes all \
         of them as the first one"
    } else {
        "progenitor panics (`assertion failed: response_types.len() <= 1` in extract_responses)"
    };
    for e in group.iter().filter(|e| e.shape.key() != keeper.0) {
        let default_note = if e.status == Status::Default {
            " `default` counts as a success and as an error response alike."
        } else {
            ""
        };
        let after = if success && e.status == Status::Default {
            "Without it any undeclared status reaches the caller as Error::UnexpectedResponse, \
             status and body intact. If `default` describes errors, declaring it as 4XX and 5XX \
             instead keeps its body typed."
                .to_string()
        } else if success {
            format!(
                "Without it a {} response reaches the caller as Error::UnexpectedResponse, status \
                 and body intact; the alternative is to give it the same body.",
                e.key
            )
        } else {
            format!(
                "Without it a {} response still is an error, Error::UnexpectedResponse with status \
                 and body intact; or give it the same body if the service sends one.",
                e.key
            )
        };
        ctx.report(
            &e.loc,
            problem,
            format!(
                "{label}: progenitor gives an operation one {group_name} type, shared by its {statuses} \
                 responses, but these have {} body shapes ({listing}); {consequence}.{default_note}",
                shapes.len()
            ),
            SuggestedFix::remove(
                e.loc.path(),
                format!(
                    "One {group_name} body shape per operation: {} stays. {after}",
                    keeper.1.describe()
                ),
            ),
        );
    }
}
