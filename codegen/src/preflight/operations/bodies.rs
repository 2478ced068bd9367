//! Request bodies: the one media type progenitor sends, its schema, and the media types and
//! schemas it refuses or panics on.

use serde_json::{Map, Value, json};

use super::Op;
use crate::preflight::ctx::Ctx;
use crate::preflight::loc::Loc;
use crate::preflight::refs::{Section, resolve};
use crate::preflight::report::{Problem, SuggestedFix};
use crate::preflight::schemas;

#[derive(Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Json,
    Form,
    OctetStream,
    Text,
}

/// progenitor's `BodyContentType::from_str`: the media type before any `;`, compared exactly;
/// plus the `+json` types, which generation hands progenitor as `application/json` and sends
/// under their own name (`generate::progenitor_view`).
fn body_kind(media_type: &str) -> Option<BodyKind> {
    let base = &media_type[..media_type.find(';').unwrap_or(media_type.len())];
    match base {
        "application/json" => Some(BodyKind::Json),
        "application/x-www-form-urlencoded" => Some(BodyKind::Form),
        "application/octet-stream" => Some(BodyKind::OctetStream),
        "text/plain" | "text/x-markdown" => Some(BodyKind::Text),
        _ if crate::generate::is_json_suffix_media_type(media_type) => Some(BodyKind::Json),
        _ => None,
    }
}

fn raw_schema(kind: BodyKind) -> Value {
    match kind {
        BodyKind::OctetStream => json!({ "type": "string", "format": "binary" }),
        BodyKind::Text => json!({ "type": "string" }),
        BodyKind::Json => json!({}),
        BodyKind::Form => json!({ "type": "object" }),
    }
}

/// Checks the request body; returns whether progenitor gives the operation a `body` argument.
pub(super) fn check(ctx: &mut Ctx, op: &Op) -> bool {
    if !op.map.contains_key("requestBody") {
        return false;
    }
    let label = op.label();
    let Some((body_loc, body)) = resolve(ctx, Section::RequestBodies, &op.loc.key("requestBody"))
    else {
        return false;
    };
    let Some(Value::Object(content)) = body.get("content") else {
        return false;
    };
    let Some(first) = content.keys().next() else {
        return false;
    };
    let content_loc = body_loc.key("content");
    // The media type to keep when there are several: JSON first, else the first one progenitor
    // can send.
    let keeper = content
        .keys()
        .find(|k| k.split(';').next() == Some("application/json"))
        .or_else(|| {
            content
                .keys()
                .find(|k| body_kind(k) == Some(BodyKind::Json))
        })
        .or_else(|| content.keys().find(|k| body_kind(k).is_some()))
        .unwrap_or(first);
    if content.len() > 1 {
        for other in content.keys().filter(|k| *k != keeper) {
            ctx.report(
                &content_loc.key(other),
                Problem::SeveralRequestMediaTypes,
                format!(
                    "{label}: the request body offers {} media types; progenitor sends exactly one \
                     and panics on more (`more media types than expected`). `{keeper}` is the one \
                     to keep.",
                    content.len()
                ),
                SuggestedFix::remove(
                    content_loc.key(other).path(),
                    format!("One request media type per operation: `{keeper}` stays."),
                ),
            );
        }
    }

    let media_loc = content_loc.key(keeper);
    let Some(Value::Object(media)) = content.get(keeper) else {
        return true;
    };
    let kind = body_kind(keeper);
    let has_schema = media.get("schema").is_some_and(|s| !s.is_null());
    if !has_schema {
        let schema = raw_schema(kind.unwrap_or(BodyKind::Json));
        ctx.report(
            &media_loc,
            Problem::MissingSchema,
            format!(
                "{label}: the request media type `{keeper}` has no schema; progenitor needs one \
                 (`No schema specified for request body`)."
            ),
            SuggestedFix::update(
                media_loc.path(),
                format!(
                    "{} (better: the real schema of the body).",
                    match kind {
                        Some(BodyKind::OctetStream) =>
                            "The one schema progenitor sends as raw bytes",
                        Some(BodyKind::Text) => "The one schema progenitor sends as text",
                        _ => "`{}` makes the body any JSON value",
                    }
                ),
                json!({ "schema": schema }),
            ),
        );
    }
    match kind {
        None => unsupported_media_type(ctx, &label, keeper, media, &content_loc),
        Some(BodyKind::Json | BodyKind::Form) => {
            if media
                .get("encoding")
                .and_then(Value::as_object)
                .is_some_and(|e| !e.is_empty())
            {
                ctx.report(
                    &media_loc.key("encoding"),
                    Problem::MediaTypeEncoding,
                    format!(
                        "{label}: the request media type `{keeper}` has an `encoding`; progenitor \
                         panics on it (`media type encoding not empty`)."
                    ),
                    SuggestedFix::remove(
                        media_loc.key("encoding").path(),
                        "progenitor serializes the body its own way; `encoding` has no effect on \
                         it.",
                    ),
                );
            }
            if has_schema {
                schemas::check(ctx, &media_loc.key("schema"));
            }
        }
        Some(raw @ (BodyKind::OctetStream | BodyKind::Text)) => {
            if has_schema {
                raw_body_schema(ctx, &label, keeper, raw, &media_loc);
            }
        }
    }
    true
}

fn unsupported_media_type(
    ctx: &mut Ctx,
    label: &str,
    media_type: &str,
    media: &Map<String, Value>,
    content_loc: &Loc,
) {
    let lower = media_type.to_ascii_lowercase();
    let (replacement, new_media, why) = if lower.contains("json") {
        (
            "application/json",
            Value::Object(media.clone()),
            "the body is JSON: progenitor sends it under its exact name",
        )
    } else if lower.starts_with("text/") {
        (
            "text/plain",
            json!({ "schema": { "type": "string" } }),
            "the body is text: progenitor sends a String as text/plain",
        )
    } else {
        (
            "application/octet-stream",
            json!({ "schema": { "type": "string", "format": "binary" } }),
            "progenitor sends anything else only as raw bytes",
        )
    };
    ctx.report_then(
        &content_loc.key(media_type),
        Problem::UnsupportedRequestMediaType,
        format!(
            "{label}: progenitor cannot send a `{media_type}` request body (`unexpected content \
             type`); it sends application/json, application/x-www-form-urlencoded, \
             application/octet-stream, text/plain and text/x-markdown, named exactly so."
        ),
        SuggestedFix::update(
            content_loc.path(),
            format!(
                "Send the body as {replacement} ({why}). The Content-Type header changes with it; \
                 a ClientHooks::pre hook can set it back if the service insists."
            ),
            json!({ replacement: new_media }),
        ),
        vec![SuggestedFix::remove(
            content_loc.key(media_type).path(),
            format!("Replaced by {replacement}."),
        )],
    );
}

fn raw_body_schema(ctx: &mut Ctx, label: &str, media_type: &str, kind: BodyKind, media_loc: &Loc) {
    use openapiv3::{
        SchemaData, SchemaKind, StringFormat, StringType, Type, VariantOrUnknownOrEmpty,
    };
    let schema_loc = media_loc.key("schema");
    let Some((_, schema)) = resolve(ctx, Section::Schemas, &schema_loc) else {
        return;
    };
    let Ok(schema) = serde_json::from_value::<openapiv3::Schema>(Value::Object(schema.clone()))
    else {
        return;
    };
    let binary = kind == BodyKind::OctetStream;
    // The exact patterns of progenitor's `get_body_param`.
    let accepted = match &schema {
        openapiv3::Schema {
            schema_data:
                SchemaData {
                    nullable: false,
                    discriminator: None,
                    default: None,
                    ..
                },
            schema_kind:
                SchemaKind::Type(Type::String(StringType {
                    format,
                    pattern: None,
                    enumeration,
                    min_length: None,
                    max_length: None,
                })),
        } if enumeration.is_empty() => {
            if binary {
                matches!(format, VariantOrUnknownOrEmpty::Item(StringFormat::Binary))
            } else {
                matches!(format, VariantOrUnknownOrEmpty::Empty)
            }
        }
        _ => false,
    };
    if accepted {
        return;
    }
    let required = raw_schema(kind);
    let (what, shape) = if binary {
        ("raw bytes", "{type: string, format: binary}")
    } else {
        ("a String", "{type: string} (no format)")
    };
    ctx.report_then(
        &schema_loc,
        Problem::RawBodySchema,
        format!(
            "{label}: progenitor sends the `{media_type}` body as {what} and accepts exactly the \
             schema {shape} for it, with no nullable, default, pattern, length or enum (`invalid \
             schema for {}`).",
            &media_type[..media_type.find(';').unwrap_or(media_type.len())]
        ),
        SuggestedFix::remove(
            schema_loc.path(),
            "An overlay cannot replace a schema in one action: remove it, then add the one \
             progenitor accepts.",
        ),
        vec![SuggestedFix::update(
            media_loc.path(),
            format!("The schema progenitor requires for {what}."),
            json!({ "schema": required }),
        )],
    );
}
