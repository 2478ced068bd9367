//! The state of one preflight run, shared by every check: the document, what was found so far,
//! and what was already reported (a component is reached once per use).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::loc::{self, Loc};
use super::provenance::at_source;
use super::report::{Finding, Problem, Report, SuggestedFix};

/// The state of one preflight run: the document and what was found so far.
pub(crate) struct Ctx<'a> {
    pub(crate) doc: &'a Value,
    pub(super) findings: Vec<(Loc, Finding)>,
    seen: HashSet<(String, String, String)>,
    /// Schema nodes already checked: a component schema is reached once per use.
    pub(crate) schemas_seen: HashSet<Loc>,
    /// `$ref` nodes already reported, so the generic dangling-reference pass does not repeat
    /// a more specific finding.
    pub(crate) refs_reported: HashSet<Loc>,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(doc: &'a Value) -> Self {
        Self {
            doc,
            findings: Vec::new(),
            seen: HashSet::new(),
            schemas_seen: HashSet::new(),
            refs_reported: HashSet::new(),
        }
    }

    pub(crate) fn report(
        &mut self,
        at: &Loc,
        problem: Problem,
        message: impl Into<String>,
        fix: SuggestedFix,
    ) {
        self.report_then(at, problem, message, fix, Vec::new());
    }

    /// Records a finding unless the same node already has one with the same fix (a component
    /// reached from several operations).
    pub(crate) fn report_then(
        &mut self,
        at: &Loc,
        problem: Problem,
        message: impl Into<String>,
        fix: SuggestedFix,
        follow_up: Vec<SuggestedFix>,
    ) {
        let key = (at.pointer(), fix.target.clone(), fix.action.to_string());
        if !self.seen.insert(key) {
            return;
        }
        let finding = Finding {
            pointer: at.pointer(),
            problem,
            message: message.into(),
            fix,
            follow_up,
        };
        self.findings.push((at.clone(), finding));
    }

    /// An `update` that adds `value` under `loc`, targeting the deepest node that exists and
    /// nesting `value` in the keys that do not (an overlay cannot target a missing node).
    pub(crate) fn add_under(
        &self,
        loc: &Loc,
        description: impl Into<String>,
        value: Value,
    ) -> SuggestedFix {
        let mut target = loc.clone();
        let mut value = value;
        while target.get(self.doc).is_none() {
            let Some(key) = target.last_key().map(str::to_string) else {
                break;
            };
            let mut wrapper = Map::new();
            wrapper.insert(key, value);
            value = Value::Object(wrapper);
            target = target.parent().unwrap_or_default();
        }
        SuggestedFix::update(target.path(), description, value)
    }

    pub(super) fn finish(self) -> Report {
        let order = loc::document_order(self.doc);
        let position = |loc: &Loc| {
            let mut loc = loc.clone();
            loop {
                if let Some(index) = order.get(&loc) {
                    return *index;
                }
                match loc.parent() {
                    Some(parent) => loc = parent,
                    None => return 0,
                }
            }
        };
        let mut findings: Vec<(usize, Finding)> = self
            .findings
            .into_iter()
            .map(|(loc, finding)| (position(&loc), finding))
            .collect();
        findings.sort_by_key(|(position, _)| *position);
        // A schema the open-enum stage made is fixed where it came from; a request-side copy
        // then says what its original says, once.
        let mut seen = HashSet::new();
        let findings = findings
            .into_iter()
            .map(|(_, finding)| at_source(self.doc, finding))
            .filter(|f| {
                let actions: Vec<String> = f
                    .actions()
                    .map(|a| format!("{}{}", a.target, a.action))
                    .collect();
                seen.insert((f.pointer.clone(), f.problem, actions))
            })
            .collect();
        Report { findings }
    }
}
