//! The keys of `paths` and the path templates: keys openapiv3 drops, path items that are
//! references, templates progenitor cannot parse, and placeholders without a path parameter
//! (or path parameters without a placeholder).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Op;
use super::parameters::Param;
use crate::preflight::ctx::Ctx;
use crate::preflight::loc::Loc;
use crate::preflight::report::{Problem, SuggestedFix};

pub(super) fn ignored_path(ctx: &mut Ctx, path: &str, item: &Value, at: &Loc) {
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

pub(super) fn path_item_ref(ctx: &mut Ctx, reference: &str, at: &Loc) {
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
pub(super) fn parse_template(path: &str) -> Result<Vec<String>, String> {
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

pub(super) fn placeholders(
    ctx: &mut Ctx,
    op: &Op,
    names: &[String],
    combined: &BTreeMap<&str, &Param>,
) {
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
