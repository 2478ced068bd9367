//! The last check: run progenitor itself. The checks before it mirror every failure found in
//! progenitor's and typify's source, but typify has many corners; if progenitor still fails,
//! this says so, narrowed down to the operation or component schema that makes it fail.

use serde_json::{Map, Value, json};

use super::loc::Loc;
use super::{Finding, Problem, SuggestedFix};

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

pub(crate) fn check(doc: &Value, settings: &progenitor::GenerationSettings) -> Option<Finding> {
    let failure = generate(doc, settings)?;

    // typify converts every component schema before any operation: if the document fails
    // without operations, it is a schema, the one whose replacement by `{}` cures it.
    let bare = with(doc, "paths", json!({}));
    if generate(&bare, settings).is_some()
        && let Some(Value::Object(schemas)) = doc.pointer("/components/schemas")
    {
        for name in schemas.keys() {
            let mut replaced = schemas.clone();
            replaced.insert(name.clone(), json!({}));
            let mut components = doc["components"].as_object().cloned().unwrap_or_default();
            components.insert("schemas".into(), Value::Object(replaced));
            let candidate = with(&bare, "components", Value::Object(components));
            if generate(&candidate, settings).is_none() {
                let at = Loc::root().key("components").key("schemas").key(name);
                let schemas_loc = Loc::root().key("components").key("schemas");
                return Some(finding(
                    &at,
                    &format!("the schema `{name}`"),
                    &failure,
                    SuggestedFix::remove(
                        at.path(),
                        "An overlay cannot replace a schema in one action: remove it, then add a \
                         simpler one.",
                    ),
                    vec![SuggestedFix::update(
                        schemas_loc.path(),
                        format!(
                            "`{name}` as any JSON value (`{{}}`) for now: a schema typify handles \
                             is better."
                        ),
                        json!({ name: {} }),
                    )],
                ));
            }
        }
    }

    // Else one operation at a time, with all the components: the first that fails alone.
    if let Some(Value::Object(paths)) = doc.get("paths") {
        for (path, item) in paths {
            let Value::Object(item_map) = item else {
                continue;
            };
            for method in item_map.keys().filter(|k| METHODS.contains(&k.as_str())) {
                let mut alone = item_map.clone();
                alone.retain(|k, _| k == method || !METHODS.contains(&k.as_str()));
                let candidate = with(doc, "paths", json!({ path: alone }));
                if let Some(failure) = generate(&candidate, settings) {
                    let at = Loc::root().key("paths").key(path).key(method);
                    return Some(finding(
                        &at,
                        &format!("{} {path}", method.to_uppercase()),
                        &failure,
                        SuggestedFix::remove(
                            at.path(),
                            "Last resort: leave the operation out so the rest of the client \
                             generates, until the node progenitor chokes on is fixed.",
                        ),
                        Vec::new(),
                    ));
                }
            }
        }
    }

    Some(finding(
        &Loc::root(),
        "the document",
        &failure,
        SuggestedFix::update(
            "$".into(),
            "No single node could be singled out; see progenitor's message above.",
            json!({}),
        ),
        Vec::new(),
    ))
}

fn finding(
    at: &Loc,
    what: &str,
    failure: &str,
    fix: SuggestedFix,
    follow_up: Vec<SuggestedFix>,
) -> Finding {
    Finding {
        pointer: at.pointer(),
        problem: Problem::GeneratorFailure,
        message: format!(
            "progenitor fails on {what} for a reason preflight has no specific check for: \
             {failure}"
        ),
        fix,
        follow_up,
    }
}

fn with(doc: &Value, key: &str, value: Value) -> Value {
    let mut map: Map<String, Value> = doc.as_object().cloned().unwrap_or_default();
    map.insert(key.into(), value);
    Value::Object(map)
}

/// progenitor's verdict on `doc`: `None` when it generates code, else what went wrong.
fn generate(doc: &Value, settings: &progenitor::GenerationSettings) -> Option<String> {
    let spec = match serde_json::from_value::<openapiv3::OpenAPI>(doc.clone()) {
        Ok(spec) => spec,
        Err(e) => return Some(format!("openapiv3 cannot read it: {e}")),
    };
    match crate::generate::catch_panic(|| {
        progenitor::Generator::new(settings).generate_tokens(&spec)
    }) {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(format!(
            "it returns the error `{}`",
            shorten(&e.to_string())
        )),
        Err(panic) => Some(format!("it panics with `{}`", shorten(&panic))),
    }
}

/// Panic messages of progenitor embed whole Debug dumps of schemas; the first line says it.
fn shorten(message: &str) -> String {
    let first = message
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end_matches(['{', '(', ' ']);
    let mut out: String = first.chars().take(300).collect();
    if out.len() < message.len() {
        out.push_str(" ...");
    }
    out
}
