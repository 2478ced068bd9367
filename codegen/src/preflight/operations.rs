//! The version, the paths and every operation: what progenitor's `validate_openapi` and
//! `Generator::process_operation` (`method.rs`) refuse or panic on. This file walks the paths;
//! each concern of an operation has its own file: [`paths`] (keys, path item references,
//! templates and their placeholders), [`parameters`], [`bodies`] (request bodies),
//! [`responses`] and [`operation_ids`].

mod bodies;
mod operation_ids;
mod parameters;
mod paths;
mod responses;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::ctx::Ctx;
use super::loc::Loc;
use super::refs::reference_of;
use super::report::{Problem, SuggestedFix};
use crate::document::is_http_method;
use parameters::{Param, params_of};

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
            paths::ignored_path(ctx, path, item, &item_loc);
            continue;
        }
        let Value::Object(item_map) = item else {
            continue;
        };
        if let Some(reference) = reference_of(item) {
            paths::path_item_ref(ctx, reference, &item_loc);
            continue;
        }
        let template = paths::parse_template(path);
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
    operation_ids::check(ctx, &ops);
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
        parameters::check(ctx, param);
    }
    if let Some(names) = template {
        paths::placeholders(ctx, op, names, &combined);
    }
    let has_body = bodies::check(ctx, op);
    parameters::arguments(ctx, op, &combined, has_body);
    responses::check(ctx, op);
}
