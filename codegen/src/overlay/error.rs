//! What can go wrong when reading or applying an overlay, said so that the reader can act on it.

use std::fmt;

use crate::document::DocumentError;
use crate::error_chain;

/// Identifies one action of one overlay in messages: the overlay's file, the action's position in
/// `actions` (0-based, as in a JSONPath `actions[0]`), its `description` and its `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionRef {
    /// Where the overlay came from, usually its path.
    pub origin: String,
    /// The action's position in the overlay's `actions` array, counted from 0.
    pub index: usize,
    /// The action's `description`, if it has one.
    pub description: Option<String>,
    /// The action's `target` expression as written.
    pub target: String,
}

impl fmt::Display for ActionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: actions[{}] (0-based)", self.origin, self.index)?;
        if let Some(description) = &self.description {
            write!(f, " {:?}", one_line(description))?;
        }
        write!(f, ", target `{}`", self.target)
    }
}

/// One problem with an overlay or with applying it.
///
/// Every variant's message names what is wrong, where (file, action, JSON pointer) and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OverlayError {
    /// A file could not be read, or its text is not JSON/YAML.
    #[error(transparent)]
    Document(#[from] DocumentError),

    /// The overlay document does not follow the Overlay Specification.
    #[error("{origin}: {at}: {message}")]
    Invalid {
        /// Where the overlay came from.
        origin: String,
        /// The offending place in the overlay, e.g. `info.title` or `actions[2].remove`.
        at: String,
        /// What is wrong and how to fix it.
        message: String,
    },

    /// A `target` or `copy` expression is not an RFC 9535 JSONPath query.
    #[error(
        "{action}: {} is not RFC 9535 JSONPath: {message}, at offset {position} ({}); fix the \
         expression",
        expression_name(field, expression),
        near(expression, *position)
    )]
    InvalidJsonPath {
        /// The action holding the expression.
        action: ActionRef,
        /// `target` or `copy`.
        field: &'static str,
        /// The expression as written.
        expression: String,
        /// Where the parser gave up: a 0-based byte offset into `expression` (serde_json_path
        /// documents it as 1-based, but reports the offset of the offending character).
        position: usize,
        /// The JSONPath parser's explanation.
        message: String,
    },

    /// In strict mode: the action's target selects nothing in the document.
    #[error(
        "{action}: the target selects nothing. The upstream document moved: update the target or \
         remove the action; run with --lenient to continue anyway"
    )]
    NoMatch {
        /// The action whose target selects nothing.
        action: ActionRef,
    },

    /// The `update` (or copied) value cannot be merged into a selected node.
    #[error("{action}: cannot merge at {}: {message}", pointer_or_root(pointer))]
    Incompatible {
        /// The action whose value does not fit.
        action: ActionRef,
        /// JSON pointer, in the document being changed, of the node that cannot take the value.
        pointer: String,
        /// Which kinds met, which rule forbids it, and how to get the intended result.
        message: String,
    },

    /// Overlay 1.1: the nodes one `update`/`copy` selects must be all objects, all arrays or all
    /// primitives.
    #[error(
        "{action}: the target selects {kinds}; Overlay 1.1 requires the nodes of one update or \
         copy to be all objects, all arrays or all primitives. Narrow the target, or split the \
         action into one per kind"
    )]
    MixedTargets {
        /// The action with the mixed selection.
        action: ActionRef,
        /// What was selected, e.g. `2 objects (/a, /b) and 1 array (/c)`.
        kinds: String,
    },

    /// A `copy` expression selects no node or several nodes; it must select exactly one.
    #[error(
        "{action}: `copy` {source_path:?} selects {count} nodes, but it must select exactly one \
         node to copy; fix the expression"
    )]
    CopySource {
        /// The copy action.
        action: ActionRef,
        /// The `copy` expression as written.
        source_path: String,
        /// How many nodes it selected.
        count: usize,
    },

    /// In strict mode: a `remove` whose target selects nothing while the place it removes from
    /// is there: what it removes is gone, most likely because the upstream document stopped
    /// publishing it. The action has outlived its gap.
    #[error(
        "{action}: the target selects nothing, but the place it removes from is there ({} \
         selected by `{parent}`): what it removes is no longer in the document, so the gap it \
         closed is closed upstream. The action can be deleted; run with --lenient to continue \
         anyway",
        nodes(*selected)
    )]
    AlreadyAbsent {
        /// The remove action.
        action: ActionRef,
        /// The target without its last segment.
        parent: String,
        /// How many nodes `parent` selects.
        selected: usize,
    },

    /// In strict mode: an `update` or `copy` would append entries to arrays that already
    /// contain them (the upstream document now publishes them); the result would repeat them.
    #[error("{action}: {}; run with --lenient to apply it anyway", repeats(arrays, *whole))]
    Repeats {
        /// The action.
        action: ActionRef,
        /// JSON pointers of the arrays.
        arrays: Vec<String>,
        /// True when the action brings nothing else: it can be deleted.
        whole: bool,
    },

    /// `remove` selected the document's root, which has no parent to be removed from.
    #[error(
        "{action}: `remove` selects the document root `$`, which cannot be removed; target the \
         members to remove instead"
    )]
    RemoveRoot {
        /// The remove action.
        action: ActionRef,
    },
}

impl OverlayError {
    /// True for a strict-mode refusal of an action whose target selects nothing, which
    /// [`ApplyOptions::lenient`](super::ApplyOptions::lenient) turns into a warning.
    pub fn is_zero_match(&self) -> bool {
        matches!(
            self,
            OverlayError::NoMatch { .. } | OverlayError::AlreadyAbsent { .. }
        )
    }
}

/// A problem that does not stop the run, reported next to the result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OverlayWarning {
    /// In lenient mode: the action's target selects nothing, so the action changed nothing.
    #[error(
        "{action}: the target selects nothing, so the action was skipped (lenient). The upstream \
         document moved: update the target or remove the action"
    )]
    NoMatch {
        /// The action whose target selects nothing.
        action: ActionRef,
    },

    /// A field the specification says has no impact in this action: `update` or `copy` next to
    /// `remove: true`, or `copy` next to `update` (Overlay 1.0 and 1.1, Action Object). The
    /// action does what the specification says; the field is probably a leftover.
    #[error(
        "{action}: `{field}` is ignored because {because} (Overlay Specification, Action Object: \
         the field \"has no impact\" then); delete `{field}`, or split the action if both were \
         meant"
    )]
    IgnoredField {
        /// The action.
        action: ActionRef,
        /// `update` or `copy`.
        field: &'static str,
        /// Which field overrides it, e.g. "`remove` is true".
        because: &'static str,
    },

    /// An `update` or `copy` that changes nothing: the document already has every value it
    /// supplies, most likely because the upstream document now publishes them. The action has
    /// outlived its gap.
    #[error(
        "{action}: changes nothing: the document already has everything this action supplies \
         (such as {example}), so the gap it filled is closed upstream. The action can be deleted"
    )]
    Redundant {
        /// The action.
        action: ActionRef,
        /// One of the values, as `` `pointer` = value ``.
        example: String,
    },

    /// In lenient mode: see [`OverlayError::AlreadyAbsent`]; the action was skipped.
    #[error(
        "{action}: the target selects nothing, but the place it removes from is there ({} \
         selected by `{parent}`): what it removes is no longer in the document, so the gap it \
         closed is closed upstream. The action can be deleted",
        nodes(*selected)
    )]
    AlreadyAbsent {
        /// The remove action.
        action: ActionRef,
        /// The target without its last segment.
        parent: String,
        /// How many nodes `parent` selects.
        selected: usize,
    },

    /// In lenient mode: see [`OverlayError::Repeats`]; the entries were appended, as the
    /// specification says.
    #[error("{action}: {}", repeats(arrays, *whole))]
    Repeats {
        /// The action.
        action: ActionRef,
        /// JSON pointers of the arrays.
        arrays: Vec<String>,
        /// True when the action brings nothing else: it can be deleted.
        whole: bool,
    },

    /// A `remove` that later actions undo: the whole run without it gives the same document.
    /// `together_with` are the later actions that change nothing once it is gone.
    #[error(
        "{action}: changes nothing in the result: later actions put back exactly what it removes \
         (the document now publishes it that way), so the gap it closed is closed upstream. The \
         action can be deleted{}",
        together(action, together_with)
    )]
    Undone {
        /// The remove action.
        action: ActionRef,
        /// Later actions that can be deleted with it.
        together_with: Vec<ActionRef>,
    },

    /// An action with a `target` and no `update`, `remove: true` or `copy`: valid, and it does
    /// nothing.
    #[error(
        "{action}: has no `update`, `remove: true` or `copy`, so it changes nothing; give it one, \
         or delete the action"
    )]
    NoModifier {
        /// The action.
        action: ActionRef,
    },
}

/// Every problem of one run, so that one run shows all of them.
///
/// `Display` writes the errors one per line; warnings collected before the run failed are kept in
/// [`OverlayErrors::warnings`] for the caller to show as well.
#[derive(Debug)]
pub struct OverlayErrors {
    /// The problems, in the order the overlays and their actions were read or applied.
    pub errors: Vec<OverlayError>,
    /// Warnings (lenient mode) from the same run.
    pub warnings: Vec<OverlayWarning>,
}

impl OverlayErrors {
    pub(crate) fn new(errors: Vec<OverlayError>) -> OverlayErrors {
        OverlayErrors {
            errors,
            warnings: Vec::new(),
        }
    }
}

impl fmt::Display for OverlayErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            // The errors are not this value's `source()`: each is printed with its own causes.
            f.write_str(&error_chain(error))?;
        }
        Ok(())
    }
}

impl std::error::Error for OverlayErrors {}

impl From<OverlayError> for OverlayErrors {
    fn from(error: OverlayError) -> OverlayErrors {
        OverlayErrors::new(vec![error])
    }
}

impl From<DocumentError> for OverlayErrors {
    fn from(error: DocumentError) -> OverlayErrors {
        OverlayError::from(error).into()
    }
}

fn nodes(count: usize) -> String {
    if count == 1 {
        "1 node".to_string()
    } else {
        format!("{count} nodes")
    }
}

fn repeats(arrays: &[String], whole: bool) -> String {
    let arrays = arrays
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if whole {
        format!(
            "the document already has everything this action supplies, so the gap it filled is \
             closed upstream; applying it would only repeat entries already in {arrays}. The \
             action can be deleted"
        )
    } else {
        format!(
            "would repeat entries the document already has, in {arrays} (the upstream document \
             now publishes them): delete those entries from the action's value; the rest of the \
             action still changes the document"
        )
    }
}

/// `, together with actions[4] (0-based) "...", which then changes nothing either`; actions of
/// another overlay are named with their file.
fn together(action: &ActionRef, others: &[ActionRef]) -> String {
    if others.is_empty() {
        return String::new();
    }
    let named: Vec<String> = others
        .iter()
        .map(|other| {
            let mut name = if other.origin == action.origin {
                format!("actions[{}] (0-based)", other.index)
            } else {
                format!("{}: actions[{}] (0-based)", other.origin, other.index)
            };
            if let Some(description) = &other.description {
                name.push_str(&format!(" {:?}", one_line(description)));
            }
            name
        })
        .collect();
    let verb = if others.len() == 1 {
        "changes"
    } else {
        "change"
    };
    format!(
        ", together with {}, which then {verb} nothing either",
        named.join(" and ")
    )
}

/// The target is already named by the action reference; a `copy` expression is not.
fn expression_name(field: &str, expression: &str) -> String {
    if field == "target" {
        "the target".to_string()
    } else {
        format!("`{field}` {expression:?}")
    }
}

fn near(expression: &str, position: usize) -> String {
    match expression.get(position..) {
        Some("") => "at the end".to_string(),
        Some(rest) => format!("before `{rest}`"),
        None => "somewhere in it".to_string(),
    }
}

fn pointer_or_root(pointer: &str) -> String {
    if pointer.is_empty() {
        "the document root".to_string()
    } else {
        format!("`{pointer}`")
    }
}

/// Descriptions are CommonMark and may span lines; a report keeps one problem per line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
