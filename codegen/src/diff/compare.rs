//! The comparison itself: a walk over both effective documents, operation by operation, that
//! follows each schema from where it is used, so every change is classified in the position
//! (request or response) it has for the client.
//!
//! The walk is one [`Walker`]; its steps live in submodules: [`operations`] (parameters, bodies,
//! responses), [`schemas`] (types, enum values, constraints, members) and [`document`]
//! (components, security, servers).

mod document;
mod operations;
mod schemas;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use super::model::{Behaviour, ChangeKind, Position, Source, Wire};

/// A change before its locations are translated and its Rust items checked.
#[derive(Debug, Clone)]
pub struct Draft {
    pub kind: ChangeKind,
    pub summary: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub operations: BTreeSet<String>,
    pub old_pointer: Option<String>,
    pub new_pointer: Option<String>,
    pub wire: Wire,
    pub source: Source,
    pub behaviour: Behaviour,
    pub reason: String,
    pub rust: Vec<String>,
}

impl Draft {
    fn new(kind: ChangeKind, summary: impl Into<String>) -> Draft {
        Draft {
            kind,
            summary: summary.into(),
            from: None,
            to: None,
            operations: BTreeSet::new(),
            old_pointer: None,
            new_pointer: None,
            wire: Wire::Yes,
            source: Source::Yes,
            behaviour: Behaviour::Same,
            reason: String::new(),
            rust: Vec::new(),
        }
    }
    /// Unchanged code may do something else (see [`Behaviour`]).
    fn changes_behaviour(mut self) -> Draft {
        self.behaviour = Behaviour::Changed;
        self
    }
    fn at(mut self, old: Option<&str>, new: Option<&str>) -> Draft {
        self.old_pointer = old.map(str::to_string);
        self.new_pointer = new.map(str::to_string);
        self
    }
    fn impact(mut self, wire: Wire, source: Source, reason: impl Into<String>) -> Draft {
        self.wire = wire;
        self.source = source;
        self.reason = reason.into();
        self
    }
    fn values(mut self, from: impl Into<String>, to: impl Into<String>) -> Draft {
        self.from = Some(from.into());
        self.to = Some(to.into());
        self
    }
    fn rust(mut self, items: impl IntoIterator<Item = Option<String>>) -> Draft {
        self.rust.extend(items.into_iter().flatten());
        self
    }
}

/// What a type change at a node is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Parameter,
    Body,
    Member,
}

/// Where the walk is.
#[derive(Debug, Clone)]
struct At {
    pos: Position,
    slot: Slot,
    /// The Rust item whose type this node decides.
    rust: Option<String>,
    /// The Rust struct generated for this node, when it is an object with a known name.
    owner: Option<String>,
    /// How the node is named in summaries.
    label: String,
}

/// The walk over both documents.
pub struct Walker<'a> {
    old: &'a Value,
    new: &'a Value,
    /// Component renames found before the walk: old name → new name.
    renamed: BTreeMap<String, String>,
    pub drafts: Vec<Draft>,
    index: HashMap<(ChangeKind, Option<String>, Option<String>), usize>,
    /// For each component being compared, the drafts recorded inside it.
    collectors: Vec<Vec<usize>>,
    done: HashMap<(String, String, Position), Vec<usize>>,
    in_progress: HashSet<(String, String, Position)>,
    /// The operationId of the operation being compared.
    operation: Option<String>,
}

impl<'a> Walker<'a> {
    pub fn new(old: &'a Value, new: &'a Value, renamed: BTreeMap<String, String>) -> Walker<'a> {
        Walker {
            old,
            new,
            renamed,
            drafts: Vec::new(),
            index: HashMap::new(),
            collectors: Vec::new(),
            done: HashMap::new(),
            in_progress: HashSet::new(),
            operation: None,
        }
    }

    /// Runs every comparison.
    pub fn run(mut self) -> Vec<Draft> {
        self.operations();
        self.components();
        self.security();
        self.servers();
        if self.old.pointer("/info/version") != self.new.pointer("/info/version") {
            let (a, b) = (
                text(self.old.pointer("/info/version")),
                text(self.new.pointer("/info/version")),
            );
            self.record(
                Draft::new(
                    ChangeKind::DocumentVersionChanged,
                    "the description's info.version changed",
                )
                .at(Some("/info/version"), Some("/info/version"))
                .values(a, b)
                .impact(
                    Wire::Yes,
                    Source::Yes,
                    "informational: the vendor's version label of the description; no header \
                     follows it (each operation sends the api-version it is pinned to: a \
                     request_header_value_changed lists any that moved)",
                ),
            );
        }
        self.drafts
    }

    fn record(&mut self, mut draft: Draft) {
        if let Some(op) = &self.operation {
            draft.operations.insert(op.clone());
        }
        let key = (
            draft.kind,
            draft.old_pointer.clone(),
            draft.new_pointer.clone(),
        );
        let id = match self.index.get(&key) {
            Some(&id) => {
                let existing = &mut self.drafts[id];
                existing.operations.extend(draft.operations);
                id
            }
            None => {
                self.drafts.push(draft);
                self.index.insert(key, self.drafts.len() - 1);
                self.drafts.len() - 1
            }
        };
        for collector in &mut self.collectors {
            collector.push(id);
        }
    }
}

/// Compact JSON for values shown in the report.
fn compact(value: &Value) -> String {
    let text = value
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| value.to_string());
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

fn text(value: Option<&Value>) -> String {
    value.map(compact).unwrap_or_else(|| "(none)".into())
}
