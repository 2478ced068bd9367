//! The last check: run progenitor itself. The checks before it mirror every failure found in
//! progenitor's and typify's source, but typify has many corners; if progenitor still fails,
//! this finds what fails by running it on parts of the document:
//!
//! 1. **Schemas.** typify converts every component schema, so a failing schema fails every
//!    operation. Each schema is first tried on its own, with the schemas it references stood in
//!    by `{}` and everything else left out: that finds every schema that fails by itself, in one
//!    small run each. What still fails without those fails in company (a `default` that only
//!    an enum it points to rejects): the smallest failing set is found by bisection, set aside,
//!    and the search repeats.
//! 2. **Operations**, on the document with the failing schemas set aside and each run pruned to
//!    the components its operations reach: halves that fail are halved again, so every failing
//!    operation is found.
//! 3. **Fixes** aim at the node: for each failing schema (or set), removing one `default`,
//!    `pattern`, `format`, `title`, `discriminator` or enum value inside it is tried; the first
//!    that cures it is the fix. Only if none does is the schema replaced by `{}`.
//!
//! Every progenitor run counts against a budget ([`Narrowing::complete`] says whether it
//! sufficed), so a document of any size is narrowed in bounded time.
//!
//! Findings point into the effective document; a schema the open-enum stage made (a
//! request-side copy, a hoisted inline enum) is reported, and fixed, where it came from.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::loc::{Loc, Seg};
use super::report::{Finding, Problem, SuggestedFix};
use crate::document::{self, SCHEMA_REF_PREFIX, is_http_method, pointer};

/// Keywords inside a failing schema whose removal is tried as the fix, most likely first.
const SUSPECT_KEYWORDS: [&str; 5] = ["default", "pattern", "format", "title", "discriminator"];

/// How many single-node repairs are tried per failing schema (or set) before falling back to
/// replacing it.
const MAX_REPAIRS_TRIED: usize = 24;

/// What narrowing found, and what it cost.
pub(crate) struct Narrowed {
    pub(crate) findings: Vec<Finding>,
    pub(crate) runs: usize,
    pub(crate) complete: bool,
}

pub(crate) fn check(
    doc: &Value,
    settings: &progenitor::GenerationSettings,
    max_runs: usize,
) -> Narrowed {
    let mut progenitor = Progenitor {
        settings,
        runs: 0,
        max_runs,
    };
    let Some(failure) = progenitor.verdict(doc) else {
        return Narrowed {
            findings: Vec::new(),
            runs: progenitor.runs,
            complete: true,
        };
    };
    let schemas = Schemas::of(doc);
    let mut findings = Vec::new();

    // 1. Schemas, without operations.
    let mut set_aside: BTreeSet<String> = BTreeSet::new();
    let mut groups: Vec<(Vec<String>, String)> = Vec::new();
    if !schemas.names.is_empty()
        && progenitor
            .verdict(&schemas.only(doc, &schemas.names))
            .is_some()
    {
        for name in &schemas.names {
            if progenitor.exhausted() {
                break;
            }
            if let Some(why) = progenitor.verdict(&schemas.only(doc, std::slice::from_ref(name))) {
                set_aside.insert(name.clone());
                groups.push((vec![name.clone()], why));
            }
        }
        while !progenitor.exhausted() {
            let rest: Vec<String> = schemas
                .names
                .iter()
                .filter(|n| !set_aside.contains(*n))
                .cloned()
                .collect();
            if rest.is_empty() || progenitor.verdict(&schemas.only(doc, &rest)).is_none() {
                break;
            }
            let Some((group, why)) = smallest_failing_set(&mut progenitor, &schemas, doc, &rest)
            else {
                break;
            };
            set_aside.extend(group.iter().cloned());
            groups.push((group, why));
        }
    }
    let mut reported: BTreeSet<String> = BTreeSet::new();
    for (group, why) in &groups {
        // A request-side copy fails exactly as its original does: one finding for both.
        let sources: Vec<String> = group
            .iter()
            .map(|n| schemas.source_pointer(doc, n))
            .collect();
        let key = sources.join(" ");
        if !reported.insert(key) {
            continue;
        }
        findings.push(schema_finding(&mut progenitor, &schemas, doc, group, why));
    }

    // 2. Operations, with the failing schemas set aside.
    let neutral = schemas.neutralized(doc, &set_aside);
    let operations = operations(&neutral);
    if !progenitor.exhausted() && progenitor.verdict(&neutral).is_some() {
        for (ops, why) in failing_operations(&mut progenitor, &neutral, &operations) {
            findings.push(operation_finding(&ops, &why));
        }
    }

    let complete = !progenitor.exhausted();
    if findings.is_empty() || !complete {
        let message = if complete {
            format!(
                "progenitor fails on the document for a reason preflight has no specific check \
                 for, and no schema or operation fails on its own: {failure}"
            )
        } else {
            format!(
                "narrowing stopped after {} progenitor runs, the budget for a document of this \
                 size, so there may be more than the findings above: fix those and run again. \
                 progenitor's verdict on the whole document: {failure}",
                progenitor.runs
            )
        };
        findings.push(Finding {
            pointer: String::new(),
            problem: Problem::GeneratorFailure,
            message,
            fix: SuggestedFix::update(
                "$".into(),
                "No single node could be singled out; see progenitor's message above.",
                json!({}),
            ),
            follow_up: Vec::new(),
        });
    }
    Narrowed {
        findings,
        runs: progenitor.runs,
        complete,
    }
}

/// progenitor with a run counter.
struct Progenitor<'a> {
    settings: &'a progenitor::GenerationSettings,
    runs: usize,
    max_runs: usize,
}

impl Progenitor<'_> {
    fn exhausted(&self) -> bool {
        self.runs >= self.max_runs
    }

    /// progenitor's verdict on `doc`: `None` when it generates code, else what went wrong. Once
    /// the budget is spent, every document "generates", which ends each search.
    fn verdict(&mut self, doc: &Value) -> Option<String> {
        if self.exhausted() {
            return None;
        }
        self.runs += 1;
        let (view, _) = crate::generate::progenitor_view(doc);
        let spec = match serde_json::from_value::<openapiv3::OpenAPI>(view) {
            Ok(spec) => spec,
            Err(e) => return Some(format!("openapiv3 cannot read it: {e}")),
        };
        match crate::generate::catch_panic(|| {
            progenitor::Generator::new(self.settings).generate_tokens(&spec)
        }) {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(format!(
                "it returns the error `{}`",
                shorten(&e.to_string())
            )),
            Err(panic) => Some(format!("it panics with `{}`", shorten(&panic))),
        }
    }
}

/// The component schemas of a document, in document order.
struct Schemas {
    names: Vec<String>,
    map: Map<String, Value>,
}

impl Schemas {
    fn of(doc: &Value) -> Schemas {
        let map = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Schemas {
            names: map.keys().cloned().collect(),
            map,
        }
    }

    /// `doc` without operations, whose schemas are `keep` as they are, `{}` for every schema
    /// those reference, and nothing else: what fails here fails because of `keep`.
    fn only(&self, doc: &Value, keep: &[String]) -> Value {
        self.only_with(doc, keep, &BTreeMap::new())
    }

    /// [`Schemas::only`], with some schemas replaced by edited versions.
    fn only_with(&self, doc: &Value, keep: &[String], edited: &BTreeMap<String, Value>) -> Value {
        let mut schemas = Map::new();
        for name in keep {
            let schema = edited.get(name).or_else(|| self.map.get(name));
            if let Some(schema) = schema {
                schemas.insert(name.clone(), schema.clone());
            }
        }
        let mut referenced = BTreeSet::new();
        for schema in schemas.values() {
            schema_refs(schema, &mut referenced);
        }
        for name in referenced {
            if !schemas.contains_key(&name) && self.map.contains_key(&name) {
                schemas.insert(name, json!({}));
            }
        }
        let mut out = with(doc, "paths", json!({}));
        let mut components = doc
            .get("components")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        components.insert("schemas".into(), Value::Object(schemas));
        out["components"] = Value::Object(components);
        out
    }

    /// `doc` with the schemas in `set_aside` replaced by `{}`.
    fn neutralized(&self, doc: &Value, set_aside: &BTreeSet<String>) -> Value {
        if set_aside.is_empty() {
            return doc.clone();
        }
        let mut out = doc.clone();
        if let Some(Value::Object(schemas)) = out.pointer_mut("/components/schemas") {
            for name in set_aside {
                if let Some(schema) = schemas.get_mut(name) {
                    *schema = json!({});
                }
            }
        }
        out
    }

    /// Where the schema `name` came from, as a JSON pointer: where the open-enum stage took
    /// it from (a request-side copy's original, a hoisted enum's inline place), else itself.
    fn source_pointer(&self, doc: &Value, name: &str) -> String {
        super::provenance::schema_source(doc, name)
            .unwrap_or_else(|| Loc::root().key("components").key("schemas").key(name))
            .pointer()
    }
}

/// The names of the component schemas `schema` references (`#/components/schemas/<name>`).
fn schema_refs(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref"
                    && let Some(name) = value
                        .as_str()
                        .and_then(|r| r.strip_prefix(SCHEMA_REF_PREFIX))
                {
                    out.insert(pointer::unescape(name));
                } else {
                    schema_refs(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_refs(v, out)),
        _ => {}
    }
}

/// The smallest set of `candidates` that fails on its own, found by bisection: the shortest
/// failing prefix of the candidates, whose last member is needed, then again among the ones
/// before it with that member kept, until the kept members fail alone.
fn smallest_failing_set(
    progenitor: &mut Progenitor,
    schemas: &Schemas,
    doc: &Value,
    candidates: &[String],
) -> Option<(Vec<String>, String)> {
    let mut kept: Vec<String> = Vec::new();
    let mut pool: Vec<String> = candidates.to_vec();
    loop {
        if !kept.is_empty()
            && let Some(why) = progenitor.verdict(&schemas.only(doc, &kept))
        {
            return Some((kept, why));
        }
        if pool.is_empty() || progenitor.exhausted() {
            return None;
        }
        // The whole pool with `kept` fails; find the shortest prefix that still does.
        let (mut low, mut high) = (1, pool.len());
        while low < high {
            let middle = (low + high) / 2;
            let mut trial = kept.clone();
            trial.extend(pool[..middle].iter().cloned());
            if progenitor.verdict(&schemas.only(doc, &trial)).is_some() {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        kept.push(pool[low - 1].clone());
        pool.truncate(low - 1);
    }
}

/// A finding for a failing schema (or set), with a fix aimed at the node that cures it.
fn schema_finding(
    progenitor: &mut Progenitor,
    schemas: &Schemas,
    doc: &Value,
    group: &[String],
    why: &str,
) -> Finding {
    let first = &group[0];
    let pointer = schemas.source_pointer(doc, first);
    let named = group
        .iter()
        .map(|n| {
            let source = schemas.source_pointer(doc, n);
            match source.strip_prefix("/components/schemas/") {
                Some(name) if !name.contains('/') => {
                    format!("`{}`", pointer::unescape(name))
                }
                _ => format!("at `{source}` (the open-enum stage names it `{n}`)"),
            }
        })
        .collect::<Vec<_>>()
        .join(" together with ");
    let what = if group.len() == 1 {
        format!("the schema {named}")
    } else {
        format!("the schemas {named} (neither fails without the other)")
    };
    let (fix, follow_up) = match repair(progenitor, schemas, doc, group) {
        Some(fix) => (fix, Vec::new()),
        None => replace_with_any(doc, &pointer, first),
    };
    Finding {
        pointer,
        problem: Problem::GeneratorFailure,
        message: format!(
            "progenitor fails on {what} for a reason preflight has no specific check for: {why}"
        ),
        fix,
        follow_up,
    }
}

/// The fallback fix: the schema as any JSON value.
fn replace_with_any(doc: &Value, pointer: &str, name: &str) -> (SuggestedFix, Vec<SuggestedFix>) {
    let at = Loc::of_pointer(doc, pointer);
    let Some(parent) = at.parent() else {
        return (
            SuggestedFix::update("$".into(), "See progenitor's message above.", json!({})),
            Vec::new(),
        );
    };
    let key = at.last_key().unwrap_or(name).to_string();
    (
        SuggestedFix::remove(
            at.path(),
            "An overlay cannot replace a schema in one action: remove it, then add a simpler \
             one.",
        ),
        vec![SuggestedFix::update(
            parent.path(),
            format!(
                "`{key}` as any JSON value (`{{}}`) for now: a schema typify handles is better."
            ),
            json!({ key: {} }),
        )],
    )
}

/// One node inside the failing schemas whose removal makes them generate, as an overlay
/// action on the document the author edits.
fn repair(
    progenitor: &mut Progenitor,
    schemas: &Schemas,
    doc: &Value,
    group: &[String],
) -> Option<SuggestedFix> {
    let mut candidates = Vec::new();
    for name in group {
        if let Some(schema) = schemas.map.get(name) {
            suspects(schema, &mut Vec::new(), name, &mut candidates);
        }
    }
    // Most likely culprits first, in document order within a keyword.
    candidates.sort_by_key(|c| c.rank);
    for candidate in candidates.into_iter().take(MAX_REPAIRS_TRIED) {
        if progenitor.exhausted() {
            return None;
        }
        let Some(mut edited_schema) = schemas.map.get(&candidate.schema).cloned() else {
            continue;
        };
        if !candidate.remove_from(&mut edited_schema) {
            continue;
        }
        let edited = BTreeMap::from([(candidate.schema.clone(), edited_schema)]);
        if progenitor
            .verdict(&schemas.only_with(doc, group, &edited))
            .is_none()
        {
            return Some(candidate.fix(schemas, doc));
        }
    }
    None
}

/// A node inside a schema whose removal is worth trying.
struct Suspect {
    /// The component schema it is in.
    schema: String,
    /// Steps from the schema to the keyword's parent object.
    at: Vec<Seg>,
    keyword: String,
    /// For an `enum` value: the value to remove, not the whole keyword.
    value: Option<Value>,
    rank: usize,
}

impl Suspect {
    fn remove_from(&self, schema: &mut Value) -> bool {
        let mut node = schema;
        for seg in &self.at {
            node = match (node, seg) {
                (Value::Object(map), Seg::Key(key)) => match map.get_mut(key) {
                    Some(next) => next,
                    None => return false,
                },
                (Value::Array(items), Seg::Index(index)) => match items.get_mut(*index) {
                    Some(next) => next,
                    None => return false,
                },
                _ => return false,
            };
        }
        let Value::Object(map) = node else {
            return false;
        };
        match &self.value {
            None => map.shift_remove(&self.keyword).is_some(),
            Some(value) => match map.get_mut(&self.keyword) {
                Some(Value::Array(values)) => {
                    let before = values.len();
                    values.retain(|v| v != value);
                    values.len() < before
                }
                _ => false,
            },
        }
    }

    /// The overlay action, aimed at the node where the author wrote it.
    fn fix(&self, schemas: &Schemas, doc: &Value) -> SuggestedFix {
        let mut at = Loc::of_pointer(doc, &schemas.source_pointer(doc, &self.schema));
        at.0.extend(self.at.iter().cloned());
        let keyword_at = at.key(&self.keyword);
        match &self.value {
            None => SuggestedFix::remove(
                keyword_at.path(),
                format!(
                    "Without this `{}` the schema generates; typify cannot express it (see the \
                     message above).",
                    self.keyword
                ),
            ),
            Some(value) => SuggestedFix::remove(
                format!("{}[?@ == {}]", keyword_at.path(), literal(value)),
                format!(
                    "The enum value {value} becomes the same Rust variant as another one; \
                     without it the schema generates."
                ),
            ),
        }
    }
}

/// An RFC 9535 literal for a JSON primitive.
fn literal(value: &Value) -> String {
    match value {
        Value::String(text) => super::loc::quote(text),
        other => other.to_string(),
    }
}

/// Collects the suspect keywords inside `schema`, following its subschemas.
fn suspects(schema: &Value, at: &mut Vec<Seg>, name: &str, out: &mut Vec<Suspect>) {
    let Value::Object(map) = schema else {
        return;
    };
    for (rank, keyword) in SUSPECT_KEYWORDS.iter().enumerate() {
        // `title` and `format` are only suspects where they name or type something.
        if map.contains_key(*keyword) {
            out.push(Suspect {
                schema: name.to_string(),
                at: at.clone(),
                keyword: keyword.to_string(),
                value: None,
                rank: rank * 2,
            });
        }
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        // Last first: of two values that make the same Rust variant, the later is the one to go.
        for value in values.iter().rev().filter(|v| !v.is_null()) {
            out.push(Suspect {
                schema: name.to_string(),
                at: at.clone(),
                keyword: "enum".into(),
                value: Some(value.clone()),
                rank: 1,
            });
        }
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                if let Value::Object(properties) = value {
                    for (property, subschema) in properties {
                        at.push(Seg::Key(key.clone()));
                        at.push(Seg::Key(property.clone()));
                        suspects(subschema, at, name, out);
                        at.pop();
                        at.pop();
                    }
                }
            }
            "items" | "additionalProperties" | "not" => {
                at.push(Seg::Key(key.clone()));
                suspects(value, at, name, out);
                at.pop();
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(branches) = value {
                    for (index, branch) in branches.iter().enumerate() {
                        at.push(Seg::Key(key.clone()));
                        at.push(Seg::Index(index));
                        suspects(branch, at, name, out);
                        at.pop();
                        at.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

/// An operation: its path and method.
type Operation = (String, String);

fn operations(doc: &Value) -> Vec<Operation> {
    document::operations(doc)
        .map(|op| (op.path.to_string(), op.method.to_string()))
        .collect()
}

/// `doc` with only `ops` among its operations, and only the components they reach.
fn with_operations(doc: &Value, ops: &[Operation]) -> Value {
    let mut paths = Map::new();
    for (path, method) in ops {
        let Some(Value::Object(item)) = doc.get("paths").and_then(|p| p.get(path)) else {
            continue;
        };
        let entry = paths.entry(path.clone()).or_insert_with(|| {
            let mut shared = item.clone();
            shared.retain(|k, _| !is_http_method(k));
            Value::Object(shared)
        });
        if let (Value::Object(entry), Some(operation)) = (entry, item.get(method)) {
            entry.insert(method.clone(), operation.clone());
        }
    }
    let mut out = with(doc, "paths", Value::Object(paths));
    prune_components(&mut out);
    out
}

/// Keeps only the components the paths reach, following references between components.
fn prune_components(doc: &mut Value) {
    let Some(Value::Object(components)) = doc.get("components").cloned() else {
        return;
    };
    let mut reached: BTreeSet<(String, String)> = BTreeSet::new();
    let mut pending = Vec::new();
    refs_in(doc.get("paths").unwrap_or(&Value::Null), &mut pending);
    while let Some((section, name)) = pending.pop() {
        if !reached.insert((section.clone(), name.clone())) {
            continue;
        }
        if let Some(node) = components.get(&section).and_then(|s| s.get(&name)) {
            refs_in(node, &mut pending);
        }
    }
    let mut pruned = Map::new();
    for (section, entries) in components {
        match entries {
            // Security schemes are named by requirements, not referenced.
            Value::Object(entries) if section != "securitySchemes" => {
                let kept: Map<String, Value> = entries
                    .into_iter()
                    .filter(|(name, _)| reached.contains(&(section.clone(), name.clone())))
                    .collect();
                pruned.insert(section, Value::Object(kept));
            }
            other => {
                pruned.insert(section, other);
            }
        }
    }
    doc["components"] = Value::Object(pruned);
}

/// Every local `#/components/<section>/<name>` reference in `node`.
fn refs_in(node: &Value, out: &mut Vec<(String, String)>) {
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref"
                    && let Some(rest) = value.as_str().and_then(|r| r.strip_prefix("#/components/"))
                    && let Some((section, name)) = rest.split_once('/')
                {
                    out.push((section.to_string(), pointer::unescape(name)));
                } else {
                    refs_in(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs_in(v, out)),
        _ => {}
    }
}

/// Every operation (or, where only several fail together, set of operations) that fails, by
/// halving: a half that generates holds no failure of its own.
fn failing_operations(
    progenitor: &mut Progenitor,
    doc: &Value,
    ops: &[Operation],
) -> Vec<(Vec<Operation>, String)> {
    let mut found = Vec::new();
    let mut pending = vec![ops.to_vec()];
    while let Some(set) = pending.pop() {
        if progenitor.exhausted() {
            break;
        }
        let Some(why) = progenitor.verdict(&with_operations(doc, &set)) else {
            continue;
        };
        if set.len() == 1 {
            found.push((set, why));
            continue;
        }
        let (first, second) = set.split_at(set.len() / 2);
        let first_fails = progenitor.verdict(&with_operations(doc, first)).is_some();
        let second_fails = progenitor.verdict(&with_operations(doc, second)).is_some();
        if !first_fails && !second_fails {
            // Neither half fails alone: these operations fail together.
            found.push((set, why));
            continue;
        }
        // Later halves first on the stack, so findings come in document order.
        if second_fails {
            pending.push(second.to_vec());
        }
        if first_fails {
            pending.push(first.to_vec());
        }
    }
    found.sort_by_key(|(set, _)| ops.iter().position(|op| *op == set[0]));
    found
}

fn operation_finding(ops: &[Operation], why: &str) -> Finding {
    let (path, method) = &ops[0];
    let at = Loc::root().key("paths").key(path).key(method);
    let named = ops
        .iter()
        .map(|(p, m)| format!("{} {p}", m.to_uppercase()))
        .collect::<Vec<_>>()
        .join(", ");
    let what = if ops.len() == 1 {
        named
    } else {
        format!("{named} together (none fails alone)")
    };
    Finding {
        pointer: at.pointer(),
        problem: Problem::GeneratorFailure,
        message: format!(
            "progenitor fails on {what} for a reason preflight has no specific check for: {why}"
        ),
        fix: SuggestedFix::remove(
            at.path(),
            "Last resort: leave the operation out so the rest of the client generates, until \
             the node progenitor chokes on is fixed.",
        ),
        follow_up: Vec::new(),
    }
}

fn with(doc: &Value, key: &str, value: Value) -> Value {
    let mut map: Map<String, Value> = doc.as_object().cloned().unwrap_or_default();
    map.insert(key.into(), value);
    Value::Object(map)
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
