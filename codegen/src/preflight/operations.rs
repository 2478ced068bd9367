//! The version, the paths and every operation: what progenitor's `validate_openapi` and
//! `Generator::process_operation` (`method.rs`) refuse or panic on.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::deser::is_response_key;
use super::loc::{Loc, quote};
use super::names::{self, CLIENT_METHODS, Case};
use super::refs::{Section, reference_of, resolve};
use super::schemas;
use super::{Ctx, Problem, SuggestedFix};
use crate::document::is_http_method;

pub(crate) fn check(ctx: &mut Ctx) {
    version(ctx);
    let doc = ctx.doc;
    let Some(Value::Object(paths)) = doc.get("paths") else {
        return;
    };
    let paths_loc = Loc::root().key("paths");
    let mut ops = Vec::new();
    for (path, item) in paths {
        let item_loc = paths_loc.key(path);
        if path.starts_with("x-") {
            continue;
        }
        if !path.starts_with('/') {
            ignored_path(ctx, path, item, &item_loc);
            continue;
        }
        let Value::Object(item_map) = item else {
            continue;
        };
        if let Some(reference) = reference_of(item) {
            path_item_ref(ctx, reference, &item_loc);
            continue;
        }
        let template = parse_template(path);
        if let Err(why) = &template {
            ctx.report(
                &item_loc,
                Problem::InvalidPathTemplate,
                format!("progenitor cannot parse the path `{path}`: {why}."),
                SuggestedFix::remove(
                    item_loc.path(),
                    "Overlays cannot rename a path: remove this one and add it back (an update of \
                     $.paths) under a path whose {placeholders} are well formed.",
                ),
            );
        }
        let path_params = params_of(ctx, item_map.get("parameters"), &item_loc.key("parameters"));
        for (method, op) in item_map {
            let Value::Object(map) = op else { continue };
            if !is_http_method(method) {
                continue;
            }
            let op = Op {
                path,
                method,
                loc: item_loc.key(method),
                map,
            };
            operation(ctx, &op, &path_params, template.as_deref().ok());
            ops.push(op);
        }
    }
    operation_ids(ctx, &ops);
}

struct Op<'a> {
    path: &'a str,
    method: &'a str,
    loc: Loc,
    map: &'a Map<String, Value>,
}

impl Op<'_> {
    fn label(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }
}

fn version(ctx: &mut Ctx) {
    let Some(Value::String(version)) = ctx.doc.get("openapi") else {
        return;
    };
    if version.trim().starts_with("3.0.") {
        return;
    }
    let why = if version.trim().starts_with("3.1") {
        "This is an OpenAPI 3.1 document. The down-convert stage turns it into 3.0.3 \
         (cargo xtask regen runs it); preflight checks its output."
    } else {
        "Convert the document to OpenAPI 3.0."
    };
    ctx.report(
        &Loc::root().key("openapi"),
        Problem::UnsupportedVersion,
        format!("progenitor reads OpenAPI 3.0.x only and refuses `openapi: {version}` (`invalid version: {version}`). {why}"),
        SuggestedFix::update(
            "$".into(),
            "Only once the document really is OpenAPI 3.0: the version number alone converts nothing.",
            json!({ "openapi": "3.0.3" }),
        ),
    );
}

fn ignored_path(ctx: &mut Ctx, path: &str, item: &Value, at: &Loc) {
    let fixed = format!("/{path}");
    ctx.report_then(
        at,
        Problem::IgnoredPath,
        format!(
            "The path `{path}` does not start with `/`. openapiv3 drops such keys without an \
             error, so progenitor never sees its operations and the client silently lacks them."
        ),
        SuggestedFix::update(
            Loc::root().key("paths").path(),
            format!("The same path item under `{fixed}` (overlays cannot rename a key: add, then remove)."),
            json!({ fixed.clone(): item }),
        ),
        vec![SuggestedFix::remove(at.path(), format!("The path item now lives under `{fixed}`."))],
    );
}

fn path_item_ref(ctx: &mut Ctx, reference: &str, at: &Loc) {
    ctx.refs_reported.insert(at.clone());
    let message = format!(
        "This path item is a reference (`{reference}`); progenitor refuses references to path \
         items (`path ... uses reference, unsupported`)."
    );
    let target = reference
        .strip_prefix('#')
        .and_then(Loc::from_fragment)
        .and_then(|loc| loc.resolve(ctx.doc))
        .and_then(|(_, value)| value.as_object().cloned());
    match target {
        Some(mut content) => {
            content.remove("$ref");
            ctx.report_then(
                at,
                Problem::PathItemRef,
                message,
                SuggestedFix::update(
                    at.path(),
                    format!("Inline the path item `{reference}` points to."),
                    Value::Object(content),
                ),
                vec![SuggestedFix::remove(
                    at.key("$ref").path(),
                    "The path item is inline now; the reference goes (openapiv3 would otherwise \
                     still read the node as a reference).",
                )],
            );
        }
        None => ctx.report(
            at,
            Problem::PathItemRef,
            format!("{message} The reference cannot be resolved within the document either."),
            SuggestedFix::remove(
                at.key("$ref").path(),
                format!("Remove the reference, then add the operations of `{reference}` here."),
            ),
        ),
    }
}

/// progenitor's `template::parse`, returning the placeholder names.
fn parse_template(path: &str) -> Result<Vec<String>, String> {
    enum State {
        Start,
        ConstantOrParameter,
        Parameter,
        Constant,
    }
    let mut state = State::Start;
    let mut acc = String::new();
    let mut names = Vec::new();
    for c in path.chars() {
        match state {
            State::Start => {
                if c == '/' {
                    state = State::Constant;
                    acc = c.to_string();
                } else {
                    return Err("path must start with a slash".into());
                }
            }
            State::ConstantOrParameter => {
                if c == '{' {
                    state = State::Parameter;
                    acc.clear();
                } else {
                    state = State::Constant;
                    acc = c.to_string();
                }
            }
            State::Constant => {
                if c == '{' {
                    acc.clear();
                    state = State::Parameter;
                } else if c == '}' {
                    return Err("unexpected `}`".into());
                } else if c != '/' || !acc.ends_with('/') {
                    acc.push(c);
                }
            }
            State::Parameter => {
                if c == '}' {
                    if acc.contains('/') || acc.contains('{') {
                        return Err(format!("invalid parameter name {acc:?}"));
                    }
                    names.push(std::mem::take(&mut acc));
                    state = State::ConstantOrParameter;
                } else {
                    acc.push(c);
                }
            }
        }
    }
    match state {
        State::Start => Err("empty path".into()),
        State::Parameter => Err("unterminated parameter".into()),
        State::ConstantOrParameter | State::Constant => Ok(names),
    }
}

/// A parameter as progenitor sees it: resolved, with where it is declared.
struct Param<'a> {
    name: String,
    location: String,
    map: &'a Map<String, Value>,
    /// The parameter object (a component when the entry is a reference).
    loc: Loc,
    /// The `parameters` list that declares it.
    list: Loc,
    reference: Option<String>,
}

impl Param<'_> {
    /// A JSONPath to the list entry that survives reordering of the list.
    fn entry_target(&self) -> String {
        match &self.reference {
            Some(reference) => format!("{}[?@['$ref']=={}]", self.list.path(), quote(reference)),
            None => format!(
                "{}[?@.name=={} && @.in=={}]",
                self.list.path(),
                quote(&self.name),
                quote(&self.location)
            ),
        }
    }

    /// Where to change the parameter itself: the component it refers to, or its list entry.
    fn target(&self) -> String {
        match &self.reference {
            Some(_) => self.loc.path(),
            None => self.entry_target(),
        }
    }

    fn describe(&self) -> String {
        format!("{} parameter `{}`", self.location, self.name)
    }

    fn shared_note(&self) -> &'static str {
        if self.reference.is_some() {
            " (a shared component: this changes it for every operation that uses it)"
        } else {
            ""
        }
    }
}

fn params_of<'a>(ctx: &mut Ctx<'a>, list: Option<&'a Value>, list_loc: &Loc) -> Vec<Param<'a>> {
    let Some(Value::Array(entries)) = list else {
        return Vec::new();
    };
    let mut params = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some((loc, map)) = resolve(ctx, Section::Parameters, &list_loc.index(i)) else {
            continue;
        };
        let (Some(name), Some(location)) = (
            map.get("name").and_then(Value::as_str),
            map.get("in").and_then(Value::as_str),
        ) else {
            continue;
        };
        params.push(Param {
            name: name.to_string(),
            location: location.to_string(),
            map,
            loc,
            list: list_loc.clone(),
            reference: reference_of(entry).map(str::to_string),
        });
    }
    params
}

fn operation<'a>(
    ctx: &mut Ctx<'a>,
    op: &Op<'a>,
    path_params: &[Param<'a>],
    template: Option<&[String]>,
) {
    let own = params_of(ctx, op.map.get("parameters"), &op.loc.key("parameters"));
    // progenitor merges path-level and operation parameters by name alone (`in` aside), the
    // operation's winning.
    let mut combined: BTreeMap<&str, &Param> = BTreeMap::new();
    for param in path_params.iter().chain(&own) {
        combined.insert(&param.name, param);
    }
    for param in combined.values() {
        parameter(ctx, param);
    }
    if let Some(names) = template {
        placeholders(ctx, op, names, &combined);
    }
    let has_body = request_body(ctx, op);
    arguments(ctx, op, &combined, has_body);
    responses(ctx, op);
}

fn parameter(ctx: &mut Ctx, param: &Param) {
    let style = param.map.get("style").and_then(Value::as_str);
    match param.location.as_str() {
        "path" => match style.unwrap_or("simple") {
            "simple" if param.map.get("required") != Some(&Value::Bool(true)) => {
                ctx.report(
                    &param.loc,
                    Problem::OptionalPathParameter,
                    format!(
                        "The path parameter `{}` is not `required: true`. OpenAPI requires it \
                         of path parameters, and progenitor asserts it (`assertion failed: \
                         parameter_data.required`).",
                        param.name
                    ),
                    SuggestedFix::update(
                        param.target(),
                        format!(
                            "Path parameters are always required{}.",
                            param.shared_note()
                        ),
                        json!({ "required": true }),
                    ),
                );
            }
            other @ ("matrix" | "label") => ctx.report(
                &param.loc,
                Problem::UnsupportedParameterStyle,
                format!(
                    "progenitor fills path parameters in `simple` style only and refuses the \
                     `{other}` style of `{}` (`unsupported style of path parameter`).",
                    param.name
                ),
                SuggestedFix::update(
                    param.target(),
                    format!(
                        "Simple style ({{id}} becomes the bare value); check the service accepts \
                         it{}.",
                        param.shared_note()
                    ),
                    json!({ "style": "simple" }),
                ),
            ),
            _ => {}
        },
        "query" => {
            if let Some(other @ ("spaceDelimited" | "pipeDelimited" | "deepObject")) = style {
                ctx.report(
                    &param.loc,
                    Problem::UnsupportedParameterStyle,
                    format!(
                        "progenitor encodes query parameters in `form` style only and refuses the \
                         `{other}` style of `{}` (`unsupported style of query parameter`).",
                        param.name
                    ),
                    SuggestedFix::update(
                        param.target(),
                        format!(
                            "Form style; check the service reads the parameter that way{}.",
                            param.shared_note()
                        ),
                        json!({ "style": "form" }),
                    ),
                );
            }
        }
        "header" => {}
        "cookie" => {
            ctx.report(
                &param.loc,
                Problem::CookieParameter,
                format!(
                    "progenitor does not support cookie parameters and refuses `{}` (`cookie \
                     parameters are not supported`).",
                    param.name
                ),
                SuggestedFix::remove(
                    param.entry_target(),
                    format!(
                        "The generated client cannot send the cookie `{}`; set it in a \
                         ClientHooks::pre hook if the service needs it.",
                        param.name
                    ),
                ),
            );
            return;
        }
        _ => return,
    }
    // openapiv3 reads whichever of `schema` and `content` comes first.
    let format = param.map.keys().find(|k| *k == "schema" || *k == "content");
    match format.map(String::as_str) {
        Some("content") => parameter_content(ctx, param),
        Some("schema") => {
            schemas::check(ctx, &param.loc.key("schema"));
            let schema = param.map.get("schema").unwrap_or(&Value::Null);
            if schemas::is_struct(ctx.doc, schema) {
                struct_parameter(ctx, param);
            }
        }
        _ => {}
    }
}

fn struct_parameter(ctx: &mut Ctx, param: &Param) {
    let schema_target = format!("{}.schema", param.target());
    ctx.report_then(
        &param.loc.key("schema"),
        Problem::StructParameter,
        format!(
            "The {} is a struct (an object with properties). progenitor's builder interface cannot \
             take a struct for anything but the body and panics (`assertion failed: left == right` \
             on the name `body`, or `unreachable!()` when the parameter is optional).",
            param.describe()
        ),
        SuggestedFix::remove(
            schema_target,
            "An overlay cannot replace a schema in one action: remove it, then add a string.",
        ),
        vec![SuggestedFix::update(
            param.target(),
            format!(
                "Take the parameter as a string and serialize it as the service expects{}.",
                param.shared_note()
            ),
            json!({ "schema": { "type": "string" } }),
        )],
    );
}

fn parameter_content(ctx: &mut Ctx, param: &Param) {
    let message = format!(
        "The {} is described by `content`; progenitor needs a `schema` (`unexpected content`).",
        param.describe()
    );
    let remove_content = SuggestedFix::remove(
        format!("{}.content", param.target()),
        "openapiv3 reads `content` when it comes first; without it the parameter's `schema` is \
         read.",
    );
    if param.map.contains_key("schema") {
        ctx.report(
            &param.loc,
            Problem::ParameterContent,
            message,
            remove_content,
        );
        return;
    }
    let schema = param
        .map
        .get("content")
        .and_then(Value::as_object)
        .and_then(|content| content.values().next())
        .and_then(|media| media.get("schema"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    ctx.report_then(
        &param.loc,
        Problem::ParameterContent,
        message,
        SuggestedFix::update(
            param.target(),
            format!(
                "The schema of its (first) media type, as a plain schema{}.",
                param.shared_note()
            ),
            json!({ "schema": schema }),
        ),
        vec![remove_content],
    );
}

fn placeholders(ctx: &mut Ctx, op: &Op, names: &[String], combined: &BTreeMap<&str, &Param>) {
    let path_params: Vec<&Param> = combined
        .values()
        .copied()
        .filter(|p| p.location == "path")
        .collect();
    let mut missing: Vec<&String> = Vec::new();
    for name in names {
        if !path_params.iter().any(|p| &p.name == name) && !missing.contains(&name) {
            missing.push(name);
        }
    }
    let orphans: Vec<&Param> = path_params
        .iter()
        .copied()
        .filter(|p| !names.contains(&p.name))
        .collect();
    let label = op.label();

    if let ([placeholder], [orphan]) = (missing.as_slice(), orphans.as_slice()) {
        ctx.report(
            &orphan.loc,
            Problem::PathParameterNotInPath,
            format!(
                "{label}: the path parameter `{}` is not in the path, and the path's `{{{placeholder}}}` \
                 has no parameter. progenitor panics on both (`missing path name mapping \
                 {placeholder}` when it builds the URL).",
                orphan.name
            ),
            SuggestedFix::update(
                orphan.target(),
                format!(
                    "The parameter is surely the path's `{{{placeholder}}}`{}.",
                    orphan.shared_note()
                ),
                json!({ "name": placeholder }),
            ),
        );
        return;
    }

    for name in missing {
        let shadow = combined
            .get(name.as_str())
            .map(|p| {
                format!(
                    " (a {} parameter of that name replaces it: progenitor merges parameters by name alone)",
                    p.location
                )
            })
            .unwrap_or_default();
        let param = json!({
            "name": name,
            "in": "path",
            "required": true,
            "schema": { "type": "string" },
        });
        let description = format!("Declare the path parameter `{name}` (check its schema).");
        let fix = match op.map.get("parameters") {
            Some(Value::Array(_)) => {
                SuggestedFix::update(op.loc.key("parameters").path(), description, param)
            }
            _ => SuggestedFix::update(op.loc.path(), description, json!({ "parameters": [param] })),
        };
        ctx.report(
            &op.loc,
            Problem::UndeclaredPathParameter,
            format!(
                "{label}: the path has `{{{name}}}` but the operation has no path parameter `{name}`{shadow}; \
                 progenitor panics building the URL (`missing path name mapping {name}`)."
            ),
            fix,
        );
    }

    for orphan in orphans {
        let consequence = if path_params.len() >= 2 {
            format!(
                "with {} path parameters progenitor panics sorting them (`{} missing from path`)",
                path_params.len(),
                orphan.name
            )
        } else {
            "progenitor accepts it, but the generated method takes an argument it never sends, and \
             panics as soon as the operation has a second path parameter"
                .to_string()
        };
        ctx.report(
            &orphan.loc,
            Problem::PathParameterNotInPath,
            format!(
                "{label}: the path parameter `{}` is not a placeholder of the path; {consequence}.",
                orphan.name
            ),
            SuggestedFix::remove(
                orphan.entry_target(),
                format!("`{}` is not in the path `{}`.", orphan.name, op.path),
            ),
        );
    }
}

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
fn request_body(ctx: &mut Ctx, op: &Op) -> bool {
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

fn arguments(ctx: &mut Ctx, op: &Op, combined: &BTreeMap<&str, &Param>, has_body: bool) {
    let mut by_argument: BTreeMap<String, Vec<&Param>> = BTreeMap::new();
    for param in combined.values() {
        if param.location != "cookie" {
            by_argument
                .entry(names::sanitize(&param.name, Case::Snake))
                .or_default()
                .push(param);
        }
    }
    let label = op.label();
    for (argument, params) in by_argument {
        let clashing: &[&Param] = if has_body && argument == "body" {
            &params
        } else if params.len() > 1 {
            &params[1..]
        } else {
            continue;
        };
        let others: Vec<String> = params
            .iter()
            .map(|p| p.describe())
            .chain((has_body && argument == "body").then(|| "the request body".to_string()))
            .collect();
        for param in clashing {
            ctx.report(
                &param.loc,
                Problem::DuplicateArgumentName,
                format!(
                    "{label}: {} {} become the Rust argument `{argument}`; progenitor generates \
                     them side by side and the generated code does not compile.",
                    others.join(" and "),
                    if others.len() == 2 { "both" } else { "all" }
                ),
                SuggestedFix::remove(
                    param.entry_target(),
                    format!(
                        "progenitor names arguments after the parameter and cannot rename one; \
                         drop the {} (send it from a ClientHooks::pre hook if needed).",
                        param.describe()
                    ),
                ),
            );
        }
    }
}

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

fn responses(ctx: &mut Ctx, op: &Op) {
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

fn operation_ids(ctx: &mut Ctx, ops: &[Op]) {
    let id_of = |op: &Op| {
        op.map
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut taken_idents: HashSet<String> = HashSet::new();
    for op in ops {
        if let Some(id) = id_of(op) {
            let (method, builder) = names::operation_idents(&id);
            taken_idents.insert(method);
            taken_idents.insert(builder);
        }
    }
    let mut suggest = |op: &Op| -> String {
        let candidates = [
            names::derive_operation_id(op.method, op.path, false),
            names::derive_operation_id(op.method, op.path, true),
        ];
        let mut n = 1;
        loop {
            for base in &candidates {
                let candidate = if n == 1 {
                    base.clone()
                } else {
                    format!("{base}{n}")
                };
                let (method, builder) = names::operation_idents(&candidate);
                if !taken_idents.contains(&method)
                    && !taken_idents.contains(&builder)
                    && !CLIENT_METHODS.contains(&method.as_str())
                {
                    taken_idents.insert(method);
                    taken_idents.insert(builder);
                    return candidate;
                }
            }
            n += 1;
        }
    };

    let mut exact: HashMap<String, &Op> = HashMap::new();
    let mut idents: HashMap<String, (&Op, String)> = HashMap::new();
    for op in ops {
        let label = op.label();
        // serde reads `null` as an absent optional field.
        let id_value = op.map.get("operationId").filter(|v| !v.is_null());
        let Some(id) = id_of(op) else {
            if id_value.is_none() {
                let name = suggest(op);
                ctx.report(
                    &op.loc,
                    Problem::MissingOperationId,
                    format!(
                        "{label} has no operationId. progenitor names the client method after it \
                         and refuses the document without one (`path {} is missing operation ID`).",
                        op.path
                    ),
                    SuggestedFix::update(
                        op.loc.path(),
                        format!("{label} needs an operationId; this one is derived from method and path."),
                        json!({ "operationId": name }),
                    ),
                );
            }
            continue;
        };
        if let Some(first) = exact.get(&id) {
            let name = suggest(op);
            ctx.report(
                &op.loc.key("operationId"),
                Problem::DuplicateOperationId,
                format!(
                    "{label} has the operationId `{id}` of {} as well; progenitor refuses \
                     duplicates (`duplicate operation ID: {id}`).",
                    first.label()
                ),
                SuggestedFix::update(
                    op.loc.path(),
                    format!("A unique operationId for {label}, derived from method and path."),
                    json!({ "operationId": name }),
                ),
            );
            continue;
        }
        exact.insert(id.clone(), op);
        let (method, builder) = names::operation_idents(&id);
        let clash = idents
            .get(&method)
            .or_else(|| idents.get(&builder))
            .map(|(other, other_id)| format!("{} (operationId `{other_id}`)", other.label()));
        let clash = clash.or_else(|| {
            CLIENT_METHODS
                .contains(&method.as_str())
                .then(|| format!("the generated `Client::{method}`"))
        });
        if let Some(other) = clash {
            let name = suggest(op);
            ctx.report(
                &op.loc.key("operationId"),
                Problem::OperationNameCollision,
                format!(
                    "{label}: the operationId `{id}` becomes the method `{method}` and the builder \
                     `{builder}`, which {other} already takes. progenitor generates both and the \
                     code does not compile (and types it names after the operation are shared)."
                ),
                SuggestedFix::update(
                    op.loc.path(),
                    format!("An operationId for {label} whose Rust names are its own."),
                    json!({ "operationId": name }),
                ),
            );
            continue;
        }
        idents.insert(method, (op, id.clone()));
        idents.insert(builder, (op, id.clone()));
    }
}
