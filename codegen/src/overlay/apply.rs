//! Applying validated overlays to a document: selecting nodes, merging, removing.

use std::collections::HashSet;

use serde_json::{Map, Value};
use serde_json_path::{JsonPath, PathElement};

use super::error::{ActionRef, OverlayError, OverlayErrors, OverlayWarning};
use super::{Action, Operation, Overlay, OverlayVersion, kind};

/// How [`apply`] treats actions whose target selects nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Report such actions as warnings instead of errors. Off by default: an action that
    /// selects nothing usually means the upstream document moved under the overlay.
    pub lenient: bool,
}

/// How many nodes one action's target selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionOutcome {
    /// The action.
    pub action: ActionRef,
    /// The number of distinct nodes its target selected when it ran.
    pub selected: usize,
}

/// What a successful [`apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyReport {
    /// Every action applied, in order, with the number of nodes it selected.
    pub actions: Vec<ActionOutcome>,
    /// Problems that did not stop the run (lenient mode).
    pub warnings: Vec<OverlayWarning>,
}

/// Applies `overlays` to `document`: each overlay in the order given, each action in its order,
/// each on the result of the one before.
///
/// The rules, from the Overlay Specification's "Action Object" section (1.0.0 and 1.1.0):
///
/// - `target` is evaluated as RFC 9535 JSONPath; a node selected twice counts once.
/// - `update` on an object merges recursively (below). An object `update` needs an object node.
/// - `update` on an array concatenates an array value and appends any other value as one item
///   (1.1). 1.0 says only "an entry to append to the array", ambiguous for an array value; this
///   engine concatenates there too (the 1.1 reading, and what the peers that test it do).
/// - `update` on a primitive (string, number, boolean, null): 1.1 replaces it with a primitive
///   value; 1.0 allows only objects and arrays as targets ("not primitive types or null
///   values"), so it is an error there.
/// - Recursive merge, for a key in both node and value: primitive replaces primitive, arrays
///   concatenate, objects merge; any other pairing is an error (1.1, and 1.0's "MUST be
///   compatible"). Keys only in the node stay where they are; new keys are appended in the
///   value's order.
/// - 1.1: the nodes one `update` or `copy` selects must be all objects, all arrays or all
///   primitives.
/// - `copy` (1.1) reads the one node its JSONPath selects in the document as the previous action
///   left it, then merges that value like `update`.
/// - `remove` deletes each selected node from its object or array (deepest and highest index
///   first, so earlier removals never move later ones). Removing `$` is an error.
/// - `update` of `$` merges into the root like into any object.
///
/// - An action combining modifiers does what the specification says (`remove: true` wins over
///   `update` and `copy`, `update` over `copy`); an action with only a `target` does nothing.
///   Both are valid and come with a warning ([`Overlay::warnings`]).
///
/// An action whose target selects nothing is an error unless `options.lenient`, where it is a
/// warning. Every error of the run is returned, not only the first; the actions after a failed
/// one still run so their problems show too. On error `document` is left unchanged.
pub fn apply(
    document: &mut Value,
    overlays: &[Overlay],
    options: &ApplyOptions,
) -> Result<ApplyReport, OverlayErrors> {
    let mut work = document.clone();
    let mut report = ApplyReport::default();
    let mut errors = Vec::new();
    for overlay in overlays {
        report.warnings.extend(overlay.warnings.iter().cloned());
        for action in &overlay.actions {
            let reference = action.reference(&overlay.origin);
            let selected =
                apply_action(&mut work, overlay.version, action, &reference, &mut errors);
            // An action without a modifier is already reported as changing nothing.
            if selected == 0 && !matches!(action.operation, Operation::Nothing) {
                let action = reference.clone();
                if options.lenient {
                    report.warnings.push(OverlayWarning::NoMatch { action });
                } else {
                    errors.push(OverlayError::NoMatch { action });
                }
            }
            report.actions.push(ActionOutcome {
                action: reference,
                selected,
            });
        }
    }
    if errors.is_empty() {
        *document = work;
        Ok(report)
    } else {
        Err(OverlayErrors {
            errors,
            warnings: report.warnings,
        })
    }
}

/// One step of a normalized path, owned so the document can be changed while it is held.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Name(String),
    Index(usize),
}

type Location = Vec<Step>;

/// Applies one action and returns how many nodes its target selected.
fn apply_action(
    document: &mut Value,
    version: OverlayVersion,
    action: &Action,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) -> usize {
    // Checked even when the target selects nothing, so both problems show in one run.
    let copied = match &action.operation {
        Operation::Copy { source, path } => {
            let nodes = path.query(document);
            match nodes.exactly_one() {
                Ok(value) => Some(value.clone()),
                Err(_) => {
                    errors.push(OverlayError::CopySource {
                        action: reference.clone(),
                        source_path: source.clone(),
                        count: nodes.len(),
                    });
                    None
                }
            }
        }
        _ => None,
    };
    let targets = select(&action.path, document);
    let selected = targets.len();
    if selected == 0 {
        return 0;
    }
    match (&action.operation, &copied) {
        (Operation::Remove, _) => remove(document, targets, reference, errors),
        (Operation::Update(value), _) | (Operation::Copy { .. }, Some(value)) => {
            update(document, &targets, value, version, reference, errors)
        }
        (Operation::Copy { .. }, None) | (Operation::Nothing, _) => {}
    }
    selected
}

/// The distinct locations `path` selects, in the order RFC 9535 gives them.
fn select(path: &JsonPath, document: &Value) -> Vec<Location> {
    let mut seen = HashSet::new();
    path.query_located(document)
        .iter()
        .map(|node| {
            node.location()
                .iter()
                .map(|element| match element {
                    PathElement::Name(name) => Step::Name(name.to_string()),
                    PathElement::Index(index) => Step::Index(*index),
                })
                .collect::<Location>()
        })
        .filter(|location| seen.insert(location.clone()))
        .collect()
}

fn node<'a>(mut value: &'a Value, location: &[Step]) -> Option<&'a Value> {
    for step in location {
        value = match (value, step) {
            (Value::Object(members), Step::Name(name)) => members.get(name)?,
            (Value::Array(items), Step::Index(index)) => items.get(*index)?,
            _ => return None,
        };
    }
    Some(value)
}

fn node_mut<'a>(mut value: &'a mut Value, location: &[Step]) -> Option<&'a mut Value> {
    for step in location {
        value = match (value, step) {
            (Value::Object(members), Step::Name(name)) => members.get_mut(name)?,
            (Value::Array(items), Step::Index(index)) => items.get_mut(*index)?,
            _ => return None,
        };
    }
    Some(value)
}

/// The RFC 6901 JSON pointer of a location (`""` for the root).
fn pointer(location: &[Step]) -> String {
    let mut pointer = String::new();
    for step in location {
        pointer.push('/');
        match step {
            Step::Name(name) => pointer.push_str(&escape(name)),
            Step::Index(index) => pointer.push_str(&index.to_string()),
        }
    }
    pointer
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn remove(
    document: &mut Value,
    mut targets: Vec<Location>,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) {
    if targets.iter().any(Vec::is_empty) {
        errors.push(OverlayError::RemoveRoot {
            action: reference.clone(),
        });
        return;
    }
    // Reverse lexicographic order visits descendants before their ancestors and higher array
    // indices before lower ones, so no removal shifts or detaches a location still to be
    // removed.
    targets.sort_unstable_by(|a, b| b.cmp(a));
    for location in targets {
        let Some((last, parent)) = location.split_last() else {
            continue;
        };
        match (node_mut(document, parent), last) {
            // `shift_remove` keeps the order of the remaining keys; `remove` would swap.
            (Some(Value::Object(members)), Step::Name(name)) => {
                members.shift_remove(name);
            }
            (Some(Value::Array(items)), Step::Index(index)) if *index < items.len() => {
                items.remove(*index);
            }
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Primitive,
}

fn kind_of(value: &Value) -> Kind {
    match value {
        Value::Object(_) => Kind::Object,
        Value::Array(_) => Kind::Array,
        _ => Kind::Primitive,
    }
}

fn update(
    document: &mut Value,
    targets: &[Location],
    value: &Value,
    version: OverlayVersion,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) {
    if version >= OverlayVersion::V1_1
        && let Some(kinds) = mixed_kinds(document, targets)
    {
        errors.push(OverlayError::MixedTargets {
            action: reference.clone(),
            kinds,
        });
        return;
    }
    for location in targets {
        let Some(node) = node_mut(document, location) else {
            continue;
        };
        // Merged on a copy so that a conflict deep inside leaves the node as it was.
        let mut merged = node.clone();
        let mut conflicts = Vec::new();
        merge_into_node(
            &mut merged,
            value,
            version,
            &pointer(location),
            &mut conflicts,
        );
        if conflicts.is_empty() {
            *node = merged;
        } else {
            errors.extend(conflicts.into_iter().map(|(pointer, message)| {
                OverlayError::Incompatible {
                    action: reference.clone(),
                    pointer,
                    message,
                }
            }));
        }
    }
}

/// Describes the selection if it mixes objects, arrays and primitives, e.g.
/// `1 object (/info) and 2 primitives (/openapi, /info/title)`.
fn mixed_kinds(document: &Value, targets: &[Location]) -> Option<String> {
    let groups = [
        (Kind::Object, "object", "objects"),
        (Kind::Array, "array", "arrays"),
        (Kind::Primitive, "primitive", "primitives"),
    ];
    let described: Vec<String> = groups
        .iter()
        .filter_map(|&(wanted, one, many)| {
            let pointers: Vec<String> = targets
                .iter()
                .filter(|location| node(document, location).map(kind_of) == Some(wanted))
                .map(|location| pointer(location))
                .collect();
            if pointers.is_empty() {
                return None;
            }
            let shown = pointers
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = if pointers.len() > 3 { ", ..." } else { "" };
            let noun = if pointers.len() == 1 { one } else { many };
            Some(format!("{} {noun} ({shown}{more})", pointers.len()))
        })
        .collect();
    (described.len() > 1).then(|| described.join(" and "))
}

/// Merges `value` into a node the target selected (the top level of an `update` or `copy`).
fn merge_into_node(
    node: &mut Value,
    value: &Value,
    version: OverlayVersion,
    at: &str,
    conflicts: &mut Vec<(String, String)>,
) {
    match (node, value) {
        (Value::Object(members), Value::Object(update)) => {
            merge_objects(members, update, at, conflicts)
        }
        (Value::Object(_), value) => conflicts.push((
            at.to_string(),
            format!(
                "the target is an object, so the value must be an object of properties to merge, \
                 found {}. To replace the whole node, remove it in an earlier action and update \
                 its parent",
                kind(value)
            ),
        )),
        // 1.0 says the value is "an entry to append"; for an array value this engine follows
        // 1.1 ("an array to concatenate"), as the peers that test it do: a nested array is never
        // what an OpenAPI author means.
        (Value::Array(items), Value::Array(more)) => items.extend(more.iter().cloned()),
        (Value::Array(items), value) => items.push(value.clone()),
        (node, _) if version == OverlayVersion::V1_0 => conflicts.push((
            at.to_string(),
            format!(
                "the target is {}, but Overlay 1.0 updates only objects and arrays. Target the \
                 containing object with `{{name: new value}}`, or declare `overlay: 1.1.0`, where \
                 a primitive replaces a primitive",
                kind(node)
            ),
        )),
        (node, value) if kind_of(value) == Kind::Primitive => *node = value.clone(),
        (node, value) => conflicts.push((
            at.to_string(),
            format!(
                "the target is {} and Overlay 1.1 replaces a primitive only with a primitive, \
                 found {}. Remove the node in an earlier action and add the new value by \
                 updating its parent",
                kind(node),
                kind(value)
            ),
        )),
    }
}

fn merge_objects(
    members: &mut Map<String, Value>,
    update: &Map<String, Value>,
    at: &str,
    conflicts: &mut Vec<(String, String)>,
) {
    for (name, value) in update {
        match members.get_mut(name) {
            // Appending keeps existing keys where the author of the document put them.
            None => {
                members.insert(name.clone(), value.clone());
            }
            Some(existing) => merge_property(
                existing,
                value,
                &format!("{at}/{}", escape(name)),
                conflicts,
            ),
        }
    }
}

/// Merges a property present in both the node and the value, by the rules of the 1.1 "Action
/// Object" section: primitive replaces primitive, arrays concatenate, objects merge.
fn merge_property(
    existing: &mut Value,
    value: &Value,
    at: &str,
    conflicts: &mut Vec<(String, String)>,
) {
    match (kind_of(existing), kind_of(value)) {
        (Kind::Object, Kind::Object) => {
            if let (Value::Object(members), Value::Object(update)) = (existing, value) {
                merge_objects(members, update, at, conflicts);
            }
        }
        (Kind::Array, Kind::Array) => {
            if let (Value::Array(items), Value::Array(more)) = (existing, value) {
                items.extend(more.iter().cloned());
            }
        }
        (Kind::Primitive, Kind::Primitive) => *existing = value.clone(),
        _ => conflicts.push((
            at.to_string(),
            format!(
                "the document has {} where the value has {}; a property merges only with one of \
                 its kind (primitive replaces primitive, arrays concatenate, objects merge). To \
                 replace it, remove it in an earlier action, then update",
                kind(existing),
                kind(value)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_order_puts_descendants_and_higher_indices_first() {
        let mut locations = [
            vec![Step::Name("a".into()), Step::Index(0)],
            vec![
                Step::Name("a".into()),
                Step::Index(1),
                Step::Name("x".into()),
            ],
            vec![Step::Name("a".into()), Step::Index(1)],
            vec![Step::Name("a".into()), Step::Index(10)],
        ];
        locations.sort_unstable_by(|a, b| b.cmp(a));
        let pointers: Vec<String> = locations.iter().map(|l| pointer(l)).collect();
        assert_eq!(pointers, ["/a/10", "/a/1/x", "/a/1", "/a/0"]);
    }

    #[test]
    fn pointers_escape_tilde_and_slash() {
        let location = vec![Step::Name("/a~b".into()), Step::Index(3)];
        assert_eq!(pointer(&location), "/~1a~0b/3");
    }
}
