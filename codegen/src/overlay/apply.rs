//! Applying validated overlays to a document: selecting nodes, merging, removing.

use std::collections::HashSet;

use serde_json::{Map, Value};
use serde_json_path::{JsonPath, PathElement};

use super::error::{ActionRef, OverlayError, OverlayErrors, OverlayWarning};
use super::{Action, Operation, Overlay, OverlayVersion};
use crate::document::json_type;
use crate::document::pointer::escape;

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
    let run = Run::new(document, overlays, options, None);
    if !run.errors.is_empty() {
        return Err(OverlayErrors {
            errors: run.errors,
            warnings: run.report.warnings,
        });
    }
    let mut report = run.report;
    // A removal that later actions seem to undo is outlived only if the whole run without it
    // gives the same document; only such candidates pay for a second run.
    for (position, action) in &run.undone {
        let without = Run::new(document, overlays, options, Some(*position));
        if without.errors.is_empty() && without.work == run.work {
            let together_with = without
                .no_ops
                .iter()
                .filter(|(later, _)| !run.no_ops.iter().any(|(p, _)| p == later))
                .map(|(_, reference)| reference.clone())
                .collect();
            report.warnings.push(OverlayWarning::Undone {
                action: action.clone(),
                together_with,
            });
        }
    }
    *document = run.work;
    Ok(report)
}

/// Where an action is: (overlay, action) indices.
type Position = (usize, usize);

/// A node a `remove` took out, with where it was.
type RemovedNode = (Location, Value);

/// One pass of every overlay over a copy of the document.
struct Run {
    work: Value,
    report: ApplyReport,
    errors: Vec<OverlayError>,
    /// Actions that changed nothing although they supply something (see [`Supply`]).
    no_ops: Vec<(Position, ActionRef)>,
    /// Removals whose every removed node is back, unchanged, at the end of the run.
    undone: Vec<(Position, ActionRef)>,
}

impl Run {
    /// Applies `overlays` to a copy of `document`, leaving out the action at `skip`.
    fn new(
        document: &Value,
        overlays: &[Overlay],
        options: &ApplyOptions,
        skip: Option<Position>,
    ) -> Run {
        let mut run = Run {
            work: document.clone(),
            report: ApplyReport::default(),
            errors: Vec::new(),
            no_ops: Vec::new(),
            undone: Vec::new(),
        };
        let mut removals: Vec<(Position, ActionRef, Vec<RemovedNode>)> = Vec::new();
        for (overlay_index, overlay) in overlays.iter().enumerate() {
            run.report.warnings.extend(overlay.warnings.iter().cloned());
            for action in &overlay.actions {
                let position = (overlay_index, action.index);
                if skip == Some(position) {
                    continue;
                }
                let reference = action.reference(&overlay.origin);
                let errors_before = run.errors.len();
                let applied = apply_action(
                    &mut run.work,
                    overlay.version,
                    action,
                    &reference,
                    &mut run.errors,
                );
                let failed = run.errors.len() > errors_before;
                match applied.effect {
                    // An action without a modifier is already reported as changing nothing.
                    _ if matches!(action.operation, Operation::Nothing) => {}
                    Effect::Nothing if applied.selected == 0 => {
                        run.nothing_selected(action, reference.clone(), options)
                    }
                    Effect::Merged(supply) if !failed => {
                        run.judge_supply(position, &reference, supply, options)
                    }
                    Effect::Removed(removed) if !failed && !removed.is_empty() => {
                        removals.push((position, reference.clone(), removed))
                    }
                    _ => {}
                }
                run.report.actions.push(ActionOutcome {
                    action: reference,
                    selected: applied.selected,
                });
            }
        }
        for (position, reference, removed) in removals {
            let restored = removed
                .iter()
                .all(|(location, value)| node(&run.work, location) == Some(value));
            if restored {
                run.undone.push((position, reference));
            }
        }
        run
    }

    /// The target selected nothing. For a removal whose parent is there, what it removes is
    /// simply gone (the gap it closed is closed upstream); otherwise the document moved.
    fn nothing_selected(&mut self, action: &Action, reference: ActionRef, options: &ApplyOptions) {
        let parent = match action.operation {
            Operation::Remove => parent_query(&action.target).and_then(|parent| {
                let selected = JsonPath::parse(parent).ok()?.query(&self.work).len();
                (selected > 0).then(|| (parent.to_string(), selected))
            }),
            _ => None,
        };
        match (parent, options.lenient || action.target_may_vanish) {
            (Some((parent, selected)), true) => {
                self.report.warnings.push(OverlayWarning::AlreadyAbsent {
                    action: reference,
                    parent,
                    selected,
                })
            }
            (Some((parent, selected)), false) => self.errors.push(OverlayError::AlreadyAbsent {
                action: reference,
                parent,
                selected,
            }),
            (None, true) => self
                .report
                .warnings
                .push(OverlayWarning::NoMatch { action: reference }),
            (None, false) => self
                .errors
                .push(OverlayError::NoMatch { action: reference }),
        }
    }

    /// Reports an `update` or `copy` that supplied only what the document already had.
    fn judge_supply(
        &mut self,
        position: Position,
        reference: &ActionRef,
        supply: Supply,
        options: &ApplyOptions,
    ) {
        if supply.is_empty() {
            return;
        }
        if supply.repeated.is_empty() {
            if supply.changes == 0 {
                self.no_ops.push((position, reference.clone()));
                self.report.warnings.push(OverlayWarning::Redundant {
                    action: reference.clone(),
                    example: supply.example.unwrap_or_default(),
                });
            }
            return;
        }
        let (action, arrays, whole) = (reference.clone(), supply.repeated, supply.changes == 0);
        if options.lenient {
            self.report.warnings.push(OverlayWarning::Repeats {
                action,
                arrays,
                whole,
            });
        } else {
            self.errors.push(OverlayError::Repeats {
                action,
                arrays,
                whole,
            });
        }
    }
}

/// What one action did.
struct Applied {
    /// How many distinct nodes its target selected.
    selected: usize,
    effect: Effect,
}

enum Effect {
    /// Nothing was changed: no nodes selected, no modifier, or a `copy` without a source.
    Nothing,
    /// An `update` or `copy` merged this into the selected nodes.
    Merged(Supply),
    /// A `remove` took these nodes out, from where they were.
    Removed(Vec<RemovedNode>),
}

/// What an `update` or `copy` value brings to the nodes it merges into, counted leaf by leaf
/// (primitives and array entries) by the merge rules. Empty objects and arrays in the value are
/// not leaves: `update: {Bar: {}}` only makes sure `Bar` exists.
#[derive(Debug, Default)]
struct Supply {
    /// Leaves the nodes lack, or have with another value.
    changes: usize,
    /// Primitives the nodes already have, equal.
    present: usize,
    /// One of them, `pointer = value`, for the message.
    example: Option<String>,
    /// Arrays (JSON pointers) to which the merge would append an entry they already contain.
    repeated: Vec<String>,
}

impl Supply {
    fn is_empty(&self) -> bool {
        self.changes == 0 && self.present == 0 && self.repeated.is_empty()
    }

    /// Counts what merging `value` into `node` (a selected node) brings, by the rules of
    /// [`merge_into_node`]. Pairings the merge refuses count nothing: they are errors.
    fn add_node(&mut self, node: &Value, value: &Value, at: &str) {
        match (node, value) {
            (Value::Object(members), Value::Object(update)) => {
                self.add_members(members, update, at)
            }
            (Value::Array(items), Value::Array(more)) => self.add_entries(items, more, at),
            (Value::Array(items), value) => {
                self.add_entries(items, std::slice::from_ref(value), at)
            }
            (node, value) => self.add_primitive(node, value, at),
        }
    }

    fn add_members(&mut self, members: &Map<String, Value>, update: &Map<String, Value>, at: &str) {
        for (name, value) in update {
            let at = format!("{at}/{}", escape(name));
            match (members.get(name), value) {
                (None, _) => self.changes += 1,
                (Some(Value::Object(inner)), Value::Object(update)) => {
                    self.add_members(inner, update, &at)
                }
                (Some(Value::Array(items)), Value::Array(more)) => {
                    self.add_entries(items, more, &at)
                }
                (Some(existing), value) => self.add_primitive(existing, value, &at),
            }
        }
    }

    fn add_entries(&mut self, items: &[Value], more: &[Value], at: &str) {
        for entry in more {
            if !items.contains(entry) {
                self.changes += 1;
            } else if !self.repeated.iter().any(|a| a == at) {
                self.repeated.push(at.to_string());
            }
        }
    }

    fn add_primitive(&mut self, existing: &Value, value: &Value, at: &str) {
        if kind_of(existing) != Kind::Primitive || kind_of(value) != Kind::Primitive {
            return;
        }
        if existing == value {
            self.present += 1;
            self.example
                .get_or_insert_with(|| format!("`{at}` = {value}"));
        } else {
            self.changes += 1;
        }
    }
}

/// The query `target` without its last segment, if it has more than the root: the place a
/// `remove` takes its nodes from. Split by hand because serde_json_path does not expose the
/// segments of a parsed query; brackets, parentheses and quoted names are skipped over.
fn parent_query(target: &str) -> Option<&str> {
    let mut last_segment = None;
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    let mut previous = None;
    for (offset, c) in target.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            previous = Some(c);
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' | '(' => {
                if depth == 0 && c == '[' {
                    // `..[` starts a descendant segment at its first dot.
                    let descendant = target[..offset].ends_with("..");
                    last_segment = Some(if descendant { offset - 2 } else { offset });
                }
                depth += 1;
            }
            ']' | ')' => depth = depth.saturating_sub(1),
            // A second dot continues the segment the first one started.
            '.' if depth == 0 && previous != Some('.') => last_segment = Some(offset),
            _ => {}
        }
        previous = Some(c);
    }
    let parent = target[..last_segment?].trim_end();
    (parent.len() > 1).then_some(parent)
}

/// One step of a normalized path, owned so the document can be changed while it is held.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Step {
    Name(String),
    Index(usize),
}

type Location = Vec<Step>;

/// Applies one action: how many nodes its target selected, and what it did to them.
fn apply_action(
    document: &mut Value,
    version: OverlayVersion,
    action: &Action,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) -> Applied {
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
    let nothing = Applied {
        selected,
        effect: Effect::Nothing,
    };
    if selected == 0 {
        return nothing;
    }
    let effect = match (&action.operation, &copied) {
        (Operation::Remove, _) => Effect::Removed(remove(document, targets, reference, errors)),
        (Operation::Update(value), _) | (Operation::Copy { .. }, Some(value)) => Effect::Merged(
            update(document, &targets, value, version, reference, errors),
        ),
        (Operation::Copy { .. }, None) | (Operation::Nothing, _) => return nothing,
    };
    Applied { selected, effect }
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

/// Removes the nodes at `targets`; returns them, each with where it was.
fn remove(
    document: &mut Value,
    mut targets: Vec<Location>,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) -> Vec<RemovedNode> {
    let mut removed = Vec::new();
    if targets.iter().any(Vec::is_empty) {
        errors.push(OverlayError::RemoveRoot {
            action: reference.clone(),
        });
        return removed;
    }
    // Reverse lexicographic order visits descendants before their ancestors and higher array
    // indices before lower ones, so no removal shifts or detaches a location still to be
    // removed.
    targets.sort_unstable_by(|a, b| b.cmp(a));
    for location in targets {
        let Some((last, parent)) = location.split_last() else {
            continue;
        };
        let taken = match (node_mut(document, parent), last) {
            // `shift_remove` keeps the order of the remaining keys; `remove` would swap.
            (Some(Value::Object(members)), Step::Name(name)) => members.shift_remove(name),
            (Some(Value::Array(items)), Step::Index(index)) if *index < items.len() => {
                Some(items.remove(*index))
            }
            _ => None,
        };
        if let Some(value) = taken {
            removed.push((location, value));
        }
    }
    removed
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

/// Merges `value` into the nodes at `targets`; returns what it brought them.
fn update(
    document: &mut Value,
    targets: &[Location],
    value: &Value,
    version: OverlayVersion,
    reference: &ActionRef,
    errors: &mut Vec<OverlayError>,
) -> Supply {
    let mut supply = Supply::default();
    if version >= OverlayVersion::V1_1
        && let Some(kinds) = mixed_kinds(document, targets)
    {
        errors.push(OverlayError::MixedTargets {
            action: reference.clone(),
            kinds,
        });
        return supply;
    }
    for location in targets {
        let Some(node) = node_mut(document, location) else {
            continue;
        };
        supply.add_node(node, value, &pointer(location));
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
    supply
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
                json_type(value)
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
                json_type(node)
            ),
        )),
        (node, value) if kind_of(value) == Kind::Primitive => *node = value.clone(),
        (node, value) => conflicts.push((
            at.to_string(),
            format!(
                "the target is {} and Overlay 1.1 replaces a primitive only with a primitive, \
                 found {}. Remove the node in an earlier action and add the new value by \
                 updating its parent",
                json_type(node),
                json_type(value)
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
                json_type(existing),
                json_type(value)
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
