//! `$ref`s: resolving them the way progenitor does, and finding the ones that lead nowhere.

use serde_json::{Map, Value, json};

use super::ctx::Ctx;
use super::loc::{Loc, quote};
use super::report::{Problem, SuggestedFix};

/// The `components` map progenitor looks a reference up in, by what it expects to find.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Parameters,
    RequestBodies,
    Responses,
    Schemas,
}

impl Section {
    fn key(self) -> &'static str {
        match self {
            Section::Parameters => "parameters",
            Section::RequestBodies => "requestBodies",
            Section::Responses => "responses",
            Section::Schemas => "schemas",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Section::Parameters => "parameter",
            Section::RequestBodies => "request body",
            Section::Responses => "response",
            Section::Schemas => "schema",
        }
    }
}

/// The reference string of a node openapiv3 reads as a reference: an object with a string
/// `$ref` (its other keys are ignored).
pub(crate) fn reference_of(value: &Value) -> Option<&str> {
    value.as_object()?.get("$ref")?.as_str()
}

/// Follows `at` the way progenitor's `ReferenceOrExt::item` does: the text after the last `/`
/// of the reference, not unescaped, looked up in `components.<section>`, repeatedly. Reports
/// (and returns `None`) where progenitor would panic or recurse forever; returns the object it
/// ends on and where that is.
pub(crate) fn resolve<'a>(
    ctx: &mut Ctx<'a>,
    section: Section,
    at: &Loc,
) -> Option<(Loc, &'a Map<String, Value>)> {
    let doc = ctx.doc;
    let mut loc = at.clone();
    let mut node = at.get(doc)?;
    let mut visited: Vec<Loc> = Vec::new();
    while let Some(reference) = reference_of(node) {
        if visited.contains(&loc) {
            cycle(ctx, section, &loc, &visited);
            return None;
        }
        visited.push(loc.clone());
        let failure = match reference.rfind('/') {
            None => Some(format!(
                "`{reference}` has no `/`, which progenitor needs to find the component name \
                 (it unwraps `rfind('/')` and panics)"
            )),
            Some(_) if doc.get("components").is_none_or(Value::is_null) => Some(format!(
                "the document has no `components`, where progenitor looks up `{reference}` (it \
                 unwraps them and panics)"
            )),
            Some(slash) => {
                let name = &reference[slash + 1..];
                let target = Loc::root().key("components").key(section.key()).key(name);
                match target.get(doc) {
                    Some(next) => {
                        loc = target;
                        node = next;
                        None
                    }
                    None => Some(format!(
                        "progenitor looks `{reference}` up as `components.{}['{name}']` (the \
                         text after the last `/`, whatever comes before it) and panics with `key \
                         {name} is missing`",
                        section.key()
                    )),
                }
            }
        };
        if let Some(why) = failure {
            unresolvable(ctx, section, &loc, reference, &why);
            return None;
        }
    }
    node.as_object().map(|map| (loc, map))
}

fn cycle(ctx: &mut Ctx, section: Section, at: &Loc, chain: &[Loc]) {
    ctx.refs_reported.insert(at.clone());
    let message = format!(
        "This {} reference leads back to itself ({}); progenitor follows references without \
         looking for cycles, overflows its stack and aborts the whole process.",
        section.noun(),
        chain
            .iter()
            .map(Loc::pointer)
            .collect::<Vec<_>>()
            .join(" -> ")
    );
    let remove = SuggestedFix::remove(
        at.path(),
        "An overlay cannot replace a node in one action: remove the reference, then add the real \
         item.",
    );
    let name = at.last_key().unwrap_or_default().to_string();
    let stub = match section {
        Section::Responses => json!({ "description": "" }),
        Section::RequestBodies => json!({ "content": {} }),
        Section::Schemas => json!({}),
        Section::Parameters => json!({ "name": name, "in": "query", "schema": {} }),
    };
    match at.parent() {
        Some(parent) if parent.parent() == Some(Loc::root().key("components")) => {
            ctx.report_then(
                at,
                Problem::RefCycle,
                message,
                remove,
                vec![SuggestedFix::update(
                    parent.path(),
                    format!(
                        "A stub in place of the cycle: write the real {} here.",
                        section.noun()
                    ),
                    json!({ name: stub }),
                )],
            );
        }
        _ => ctx.report(at, Problem::RefCycle, message, remove),
    }
}

fn unresolvable(ctx: &mut Ctx, section: Section, at: &Loc, reference: &str, why: &str) {
    ctx.refs_reported.insert(at.clone());
    let message = format!(
        "This {} reference cannot be resolved: {why}.",
        section.noun()
    );
    let name = reference.rsplit('/').next().unwrap_or(reference);
    let fix = match section {
        Section::Responses => ctx.add_under(
            &Loc::root().key("components").key("responses"),
            format!(
                "Define the missing response `{name}` (a stub here: fill in its description and \
                 content)."
            ),
            json!({ name: { "description": "" } }),
        ),
        Section::Schemas => ctx.add_under(
            &Loc::root().key("components").key("schemas"),
            format!(
                "Define the missing schema `{name}` (`{{}}` accepts any JSON: better, its real \
                 schema)."
            ),
            json!({ name: {} }),
        ),
        Section::Parameters => match at.parent() {
            Some(list)
                if at
                    .parent()
                    .and_then(|p| p.get(ctx.doc))
                    .is_some_and(Value::is_array) =>
            {
                SuggestedFix::remove(
                    format!("{}[?@['$ref']=={}]", list.path(), quote(reference)),
                    format!(
                        "Drop the reference to the missing parameter `{name}`, or define it under \
                         components.parameters."
                    ),
                )
            }
            _ => SuggestedFix::remove(at.path(), "Drop the reference to the missing parameter."),
        },
        Section::RequestBodies => SuggestedFix::remove(
            at.path(),
            format!(
                "Drop the reference to the missing request body `{name}`, or define it under \
                 components.requestBodies."
            ),
        ),
    };
    ctx.report(at, Problem::UnresolvableRef, message, fix);
}

/// Keys whose value is a map of names (so a key there is never a keyword).
const NAMED_MAPS: [&str; 17] = [
    "properties",
    "patternProperties",
    "definitions",
    "schemas",
    "responses",
    "parameters",
    "examples",
    "requestBodies",
    "headers",
    "securitySchemes",
    "links",
    "callbacks",
    "paths",
    "content",
    "encoding",
    "variables",
    "mapping",
];

/// Keywords whose value is example data, where a `$ref` key is data and not a reference.
const DATA_KEYWORDS: [&str; 4] = ["example", "default", "enum", "const"];

/// Every `$ref` in the document whose target does not exist, except those a more specific
/// check already reported.
pub(crate) fn check(ctx: &mut Ctx) {
    let mut found = Vec::new();
    walk(ctx.doc, &Loc::root(), false, None, &mut found);
    for (loc, reference) in found {
        if ctx.refs_reported.contains(&loc) {
            continue;
        }
        if let Some(fragment) = reference.strip_prefix('#') {
            let resolved = Loc::from_fragment(fragment).and_then(|target| target.resolve(ctx.doc));
            if resolved.is_none() {
                dangling(ctx, &loc, &reference);
            }
        } else {
            ctx.report(
                &loc,
                Problem::ExternalRef,
                format!(
                    "`{reference}` points into another document; progenitor reads one document and \
                     cannot follow it."
                ),
                SuggestedFix::remove(
                    loc.path(),
                    "Bundle the external document into this one (e.g. `redocly bundle`), or drop \
                     the reference.",
                ),
            );
        }
    }
}

fn dangling(ctx: &mut Ctx, at: &Loc, reference: &str) {
    let message = format!(
        "`{reference}` points to nothing in this document. progenitor does not read this part of \
         the document, so generation is not affected, but the description is broken."
    );
    let parts: Vec<&str> = reference.trim_start_matches("#/").split('/').collect();
    let fix = match parts.as_slice() {
        ["components", "schemas", name] => ctx.add_under(
            &Loc::root().key("components").key("schemas"),
            format!("Define the missing schema `{name}` (`{{}}` accepts any JSON)."),
            json!({ *name: {} }),
        ),
        ["components", "responses", name] => ctx.add_under(
            &Loc::root().key("components").key("responses"),
            format!("Define the missing response `{name}`."),
            json!({ *name: { "description": "" } }),
        ),
        _ => SuggestedFix::remove(at.path(), "Drop the reference that leads nowhere."),
    };
    ctx.report(at, Problem::DanglingRef, message, fix);
}

fn walk(
    node: &Value,
    loc: &Loc,
    named_map: bool,
    parent_key: Option<&str>,
    found: &mut Vec<(Loc, String)>,
) {
    match node {
        Value::Object(map) => {
            if !named_map && let Some(Value::String(reference)) = map.get("$ref") {
                found.push((loc.clone(), reference.clone()));
            }
            for (key, child) in map {
                if !named_map {
                    // Example objects keep their data under `value`.
                    if DATA_KEYWORDS.contains(&key.as_str())
                        || (key == "value" && parent_key == Some("examples"))
                        || key == "$ref"
                    {
                        continue;
                    }
                }
                let child_named = !named_map && NAMED_MAPS.contains(&key.as_str());
                // In a named map the grandchild's parent is the map's own key.
                let next_parent = if named_map {
                    parent_key
                } else {
                    Some(key.as_str())
                };
                walk(child, &loc.key(key), child_named, next_parent, found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                walk(child, &loc.index(i), false, parent_key, found);
            }
        }
        _ => {}
    }
}
