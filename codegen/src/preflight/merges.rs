//! Merges typify never finishes. typify converts an `allOf` of several branches, or a
//! composition (`allOf`, `anyOf`, `oneOf`) next to validation keywords of its own, by merging
//! the referenced schemas into a new anonymous type. When the referenced schema contains that
//! same node inline (directly, or through other such merges), every merge makes the node again:
//! typify recurses until the stack overflows, which aborts the process (no panic to catch).
//!
//! Found by the property tests: a 3.1 `$ref` with a sibling keyword becomes `allOf: [$ref]` plus
//! the sibling in down-convert, so `parent: {$ref: Node, pattern: ...}` inside `Node` aborts the
//! generator. A node that only annotates a reference (`description`, `nullable`, ...), or offers
//! it among several `anyOf`/`oneOf` branches, is not merged and is fine.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::ctx::Ctx;
use super::loc::Loc;
use super::report::{Problem, SuggestedFix};
use crate::document::{SCHEMA_REF_PREFIX, pointer};

/// Keywords that make typify merge a composition with the node's own constraints (each seen to
/// send it into endless recursion when the composition leads back to the node).
const MERGE_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// A node typify converts by merging.
struct Merge {
    at: Loc,
    /// The component schemas its composition branches reference.
    references: Vec<String>,
    /// Its own keywords that force the merge.
    keywords: Vec<String>,
    /// For an `allOf` of several branches: its index and how many branches it has.
    all_of: Option<usize>,
}

pub(crate) fn check(ctx: &mut Ctx) {
    let doc = ctx.doc;
    let Some(Value::Object(schemas)) = doc.pointer("/components/schemas") else {
        return;
    };
    let root = Loc::root().key("components").key("schemas");
    // Every merge node, by the component schema it is written in.
    let mut merges: BTreeMap<&str, Vec<Merge>> = BTreeMap::new();
    for (name, schema) in schemas {
        let mut found = Vec::new();
        collect(schema, &root.key(name), &mut found);
        merges.insert(name, found);
    }
    for (name, found) in &merges {
        for merge in found {
            let Some(cycle) = cycle_back_to(name, merge, &merges) else {
                continue;
            };
            report(ctx, merge, &cycle);
        }
    }
}

/// The merge nodes inline in `schema` (references are not followed: a referenced schema is a
/// named type, converted on its own).
fn collect(schema: &Value, at: &Loc, out: &mut Vec<Merge>) {
    let Value::Object(map) = schema else { return };
    if map.contains_key("$ref") {
        return;
    }
    if let Some(merge) = merge_node(map, at) {
        out.push(merge);
    }
    for (key, value) in map {
        match key.as_str() {
            "properties" => {
                if let Value::Object(properties) = value {
                    for (name, property) in properties {
                        collect(property, &at.key(key).key(name), out);
                    }
                }
            }
            "items" | "additionalProperties" | "not" => collect(value, &at.key(key), out),
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(branches) = value {
                    for (index, branch) in branches.iter().enumerate() {
                        collect(branch, &at.key(key).index(index), out);
                    }
                }
            }
            _ => {}
        }
    }
}

fn merge_node(map: &Map<String, Value>, at: &Loc) -> Option<Merge> {
    let mut references = Vec::new();
    let mut all_of = None;
    for composition in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(composition) else {
            continue;
        };
        if composition == "allOf" && branches.len() > 1 {
            all_of = Some(branches.len());
        }
        for branch in branches {
            branch_references(branch, &mut references);
        }
    }
    let keywords: Vec<String> = MERGE_KEYWORDS
        .iter()
        .filter(|k| map.contains_key(**k))
        .map(|k| k.to_string())
        .collect();
    let merged = all_of.is_some() || !keywords.is_empty();
    (merged && !references.is_empty()).then(|| Merge {
        at: at.clone(),
        references,
        keywords,
        all_of,
    })
}

/// The component schemas a composition branch brings into a merge: its `$ref`, or those of
/// the compositions inline in it, which typify flattens into the same merge.
fn branch_references(branch: &Value, out: &mut Vec<String>) {
    if let Some(reference) = branch.get("$ref").and_then(Value::as_str) {
        if let Some(name) = reference.strip_prefix(SCHEMA_REF_PREFIX) {
            out.push(pointer::unescape(name));
        }
        return;
    }
    for composition in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = branch.get(composition) {
            for inner in branches {
                branch_references(inner, out);
            }
        }
    }
}

/// The chain of schemas from `merge` back to `home`, the schema it is written in, if there is
/// one: each step a reference from a merge node to the schema holding the next merge node.
fn cycle_back_to(
    home: &str,
    merge: &Merge,
    merges: &BTreeMap<&str, Vec<Merge>>,
) -> Option<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut pending: Vec<Vec<String>> = merge.references.iter().map(|r| vec![r.clone()]).collect();
    while let Some(chain) = pending.pop() {
        let last = chain.last()?;
        if last == home {
            return Some(chain);
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in merges.get(last.as_str()).into_iter().flatten() {
            for reference in &next.references {
                let mut longer = chain.clone();
                longer.push(reference.clone());
                pending.push(longer);
            }
        }
    }
    None
}

fn report(ctx: &mut Ctx, merge: &Merge, cycle: &[String]) {
    let path = std::iter::once(
        merge
            .at
            .0
            .get(2)
            .map(|seg| match seg {
                super::loc::Seg::Key(name) => name.clone(),
                super::loc::Seg::Index(index) => index.to_string(),
            })
            .unwrap_or_default(),
    )
    .chain(cycle.iter().cloned())
    .map(|name| format!("`{name}`"))
    .collect::<Vec<_>>()
    .join(" → ");
    let why = match (&merge.all_of, merge.keywords.is_empty()) {
        (Some(count), true) => format!("an `allOf` of {count} branches"),
        (Some(count), false) => format!(
            "an `allOf` of {count} branches and its own {}",
            listed(&merge.keywords)
        ),
        (None, _) => format!("a composition with its own {}", listed(&merge.keywords)),
    };
    let message = format!(
        "typify converts {why} by merging the referenced schemas into a new type, and the \
         reference leads back to the schema this node is in ({path}): every merge makes this \
         node again, so progenitor recurses until the stack overflows, which aborts the process."
    );
    // Leave out what forces the merge; the reference itself stays.
    let mut actions: Vec<SuggestedFix> = merge
        .keywords
        .iter()
        .map(|keyword| {
            SuggestedFix::remove(
                merge.at.key(keyword).path(),
                format!(
                    "`{keyword}` here makes typify merge the recursive reference without end; \
                     the referenced schema keeps its own rules."
                ),
            )
        })
        .collect();
    if let (Some(count), Some(Value::Array(branches))) =
        (merge.all_of, merge.at.key("allOf").get(ctx.doc))
    {
        let keep = branches
            .iter()
            .position(|b| {
                let mut references = Vec::new();
                branch_references(b, &mut references);
                cycle
                    .first()
                    .is_some_and(|first| references.contains(first))
            })
            .unwrap_or(0);
        // Highest index first, so each removal leaves the indices still to remove in place.
        for index in (0..count).rev().filter(|i| *i != keep) {
            actions.push(SuggestedFix::remove(
                merge.at.key("allOf").index(index).path(),
                "Another `allOf` branch next to the recursive reference makes typify merge them \
                 without end; describe what it adds in the referenced schema instead.",
            ));
        }
    }
    let mut actions = actions.into_iter();
    let Some(fix) = actions.next() else { return };
    ctx.report_then(
        &merge.at,
        Problem::RecursiveMerge,
        message,
        fix,
        actions.collect(),
    );
}

fn listed(keywords: &[String]) -> String {
    keywords
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
