//! Parameters as progenitor sees them (path-level and operation-level merged by name): styles
//! and locations it refuses, `content` instead of `schema`, struct schemas its builders cannot
//! take, and names that become the same Rust argument.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Op;
use crate::preflight::ctx::Ctx;
use crate::preflight::loc::{Loc, quote};
use crate::preflight::names::{self, Case};
use crate::preflight::refs::{Section, reference_of, resolve};
use crate::preflight::report::{Problem, SuggestedFix};
use crate::preflight::schemas;

/// A parameter as progenitor sees it: resolved, with where it is declared.
pub(super) struct Param<'a> {
    pub(super) name: String,
    pub(super) location: String,
    pub(super) map: &'a Map<String, Value>,
    /// The parameter object (a component when the entry is a reference).
    pub(super) loc: Loc,
    /// The `parameters` list that declares it.
    pub(super) list: Loc,
    pub(super) reference: Option<String>,
}

impl Param<'_> {
    /// A JSONPath to the list entry that survives reordering of the list.
    pub(super) fn entry_target(&self) -> String {
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
    pub(super) fn target(&self) -> String {
        match &self.reference {
            Some(_) => self.loc.path(),
            None => self.entry_target(),
        }
    }

    pub(super) fn describe(&self) -> String {
        format!("{} parameter `{}`", self.location, self.name)
    }

    pub(super) fn shared_note(&self) -> &'static str {
        if self.reference.is_some() {
            " (a shared component: this changes it for every operation that uses it)"
        } else {
            ""
        }
    }
}

pub(super) fn params_of<'a>(
    ctx: &mut Ctx<'a>,
    list: Option<&'a Value>,
    list_loc: &Loc,
) -> Vec<Param<'a>> {
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

/// Checks one parameter of an operation.
pub(super) fn check(ctx: &mut Ctx, param: &Param) {
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

pub(super) fn arguments(ctx: &mut Ctx, op: &Op, combined: &BTreeMap<&str, &Param>, has_body: bool) {
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
