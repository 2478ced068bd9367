//! The comparison itself: a walk over both effective documents, operation by operation, that
//! follows each schema from where it is used, so every change is classified in the position
//! (request or response) it has for the client.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;

use super::model::{ChangeKind, Position, Source, Wire};
use super::schema::{
    self, CONSTRAINTS, Direction, View, combine, constraint_direction, enum_values, escape,
    is_open_enum, is_true, label, required, resolve, rust_type_validates, type_signature,
    values_within,
};

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

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
            reason: String::new(),
            rust: Vec::new(),
        }
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
                    "informational: the vendor's version label of the description",
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

    // ---------------------------------------------------------------- operations

    fn operations(&mut self) {
        let (old_ops, new_ops) = (operations(self.old), operations(self.new));
        for (key, new_op) in &new_ops {
            match old_ops.get(key) {
                None => {
                    self.operation = Some(new_op.id());
                    let rust = new_op.rust_names();
                    self.record(
                        Draft::new(
                            ChangeKind::OperationAdded,
                            format!("{} added", new_op.describe()),
                        )
                        .at(None, Some(&new_op.pointer))
                        .impact(
                            Wire::Yes,
                            Source::Yes,
                            "a new method on Client; nothing existing changes",
                        )
                        .rust(rust),
                    );
                }
                Some(old_op) => {
                    self.operation = Some(new_op.id());
                    self.operation_pair(old_op, new_op);
                }
            }
        }
        for (key, old_op) in &old_ops {
            if !new_ops.contains_key(key) {
                self.operation = Some(old_op.id());
                let rust = old_op.rust_names();
                self.record(
                    Draft::new(ChangeKind::OperationRemoved, format!("{} removed", old_op.describe()))
                        .at(Some(&old_op.pointer), None)
                        .impact(
                            Wire::No,
                            Source::No,
                            "calls fail (the service no longer answers this method and path), and the Client method is gone",
                        )
                        .rust(rust),
                );
            }
        }
        self.operation = None;
    }

    fn operation_pair(&mut self, old: &Operation<'a>, new: &Operation<'a>) {
        let (op_old, op_new) = (old.op, new.op);
        let (po, pn) = (old.pointer.as_str(), new.pointer.as_str());
        if old.id() != new.id() {
            self.record(
                Draft::new(
                    ChangeKind::OperationIdChanged,
                    format!("{} {}: operationId {} is now {}", new.method_upper(), new.path, old.id(), new.id()),
                )
                .at(Some(po), Some(pn))
                .values(old.id(), new.id())
                .impact(
                    Wire::Yes,
                    Source::No,
                    format!(
                        "same request on the wire, but the Rust method is renamed from {} to {}: pin the old name with `cargo xtask regen --keep-names`",
                        old.id().to_snake_case(),
                        new.id().to_snake_case()
                    ),
                )
                .rust(old.rust_names()),
            );
        }
        match (
            is_true(op_old.get("deprecated")),
            is_true(op_new.get("deprecated")),
        ) {
            (false, true) => self.record(
                Draft::new(
                    ChangeKind::OperationDeprecated,
                    format!("{} deprecated", new.describe()),
                )
                .at(Some(po), Some(pn))
                .impact(
                    Wire::Yes,
                    Source::Yes,
                    "still served; plan to stop calling it",
                ),
            ),
            (true, false) => self.record(
                Draft::new(
                    ChangeKind::OperationNoLongerDeprecated,
                    format!("{} no longer deprecated", new.describe()),
                )
                .at(Some(po), Some(pn))
                .impact(Wire::Yes, Source::Yes, "informational"),
            ),
            _ => {}
        }
        self.operation_security(old, new);
        self.parameters(old, new);
        self.request_body(old, new);
        self.responses(old, new);
    }

    fn parameters(&mut self, old: &Operation<'a>, new: &Operation<'a>) {
        let (old_params, new_params) = (old.parameters(self.old), new.parameters(self.new));
        let builder = new.builder();
        for (key, (pn, param)) in &new_params {
            let location = &key.0;
            let name = param
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let method = format!("builder::{builder}::{}", name.to_snake_case());
            let required_new = is_true(param.get("required"));
            let what = format!("{location} parameter {name} of {}", new.id());
            match old_params.get(key) {
                None => {
                    let draft = if required_new {
                        Draft::new(
                            ChangeKind::RequiredParameterAdded,
                            format!("{what} added (required)"),
                        )
                        .impact(
                            Wire::No,
                            Source::Yes,
                            "the old client never sends it, so the service refuses its calls; the builder gains a method, and a call that does not set it fails before sending",
                        )
                    } else {
                        Draft::new(
                            ChangeKind::OptionalParameterAdded,
                            format!("{what} added (optional)"),
                        )
                        .impact(
                            Wire::Yes,
                            Source::Yes,
                            "the builder gains a method; calls without it are unchanged",
                        )
                    };
                    self.record(draft.at(None, Some(pn)).rust([Some(method)]));
                }
                Some((po, old_param)) => {
                    let old_name = old_param
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    if old_name != name {
                        self.record(
                            Draft::new(
                                ChangeKind::ParameterRenamed,
                                format!("{what}: renamed from {old_name}"),
                            )
                            .at(Some(po), Some(pn))
                            .values(old_name, name)
                            .impact(
                                Wire::Yes,
                                Source::No,
                                format!(
                                    "the URL is the same; the builder method is renamed from {} to {}",
                                    old_name.to_snake_case(),
                                    name.to_snake_case()
                                ),
                            )
                            .rust([Some(format!("builder::{}::{}", old.builder(), old_name.to_snake_case()))]),
                        );
                    }
                    let required_old = is_true(old_param.get("required"));
                    if required_old != required_new {
                        let draft = if required_new {
                            Draft::new(
                                ChangeKind::ParameterNowRequired,
                                format!("{what} is now required"),
                            )
                            .impact(
                                Wire::No,
                                Source::Yes,
                                "calls that did not set it are refused by the service; the builder method is unchanged",
                            )
                        } else {
                            Draft::new(
                                ChangeKind::ParameterNowOptional,
                                format!("{what} is now optional"),
                            )
                            .impact(
                                Wire::Yes,
                                Source::Yes,
                                "every call that sets it still works",
                            )
                        };
                        self.record(draft.at(Some(po), Some(pn)).rust([Some(method.clone())]));
                    }
                    if !is_true(old_param.get("deprecated")) && is_true(param.get("deprecated")) {
                        self.record(
                            Draft::new(
                                ChangeKind::ParameterDeprecated,
                                format!("{what} deprecated"),
                            )
                            .at(Some(po), Some(pn))
                            .impact(
                                Wire::Yes,
                                Source::Yes,
                                "still accepted; plan to stop setting it",
                            ),
                        );
                    }
                    if let (Some(a), Some(b)) = (old_param.get("schema"), param.get("schema")) {
                        let at = At {
                            pos: Position::Request,
                            slot: Slot::Parameter,
                            rust: Some(method),
                            owner: None,
                            label: what.clone(),
                        };
                        self.schema(&format!("{po}/schema"), a, &format!("{pn}/schema"), b, &at);
                    }
                }
            }
        }
        for (key, (po, old_param)) in &old_params {
            if new_params.contains_key(key) {
                continue;
            }
            let location = &key.0;
            let name = old_param
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let method = format!("builder::{}::{}", old.builder(), name.to_snake_case());
            let wire = if location == "path" {
                Wire::No
            } else {
                Wire::Degraded
            };
            let reason = if location == "path" {
                "the path changed: the old client's requests go to a path the service no longer serves; the builder method is gone".to_string()
            } else {
                format!(
                    "the old client may still send it and the service ignores it, so whatever it selected silently stops applying; the builder method {} is gone",
                    name.to_snake_case()
                )
            };
            self.record(
                Draft::new(
                    ChangeKind::ParameterRemoved,
                    format!("{location} parameter {name} of {} removed", new.id()),
                )
                .at(Some(po), None)
                .impact(wire, Source::No, reason)
                .rust([Some(method)]),
            );
        }
    }

    fn request_body(&mut self, old: &Operation<'a>, new: &Operation<'a>) {
        let (po, pn) = (
            format!("{}/requestBody", old.pointer),
            format!("{}/requestBody", new.pointer),
        );
        let body_method = format!("builder::{}::body", new.builder());
        let (a, b) = (old.op.get("requestBody"), new.op.get("requestBody"));
        let (a, b) = (
            a.map(|v| resolve(self.old, v)),
            b.map(|v| resolve(self.new, v)),
        );
        match (a, b) {
            (None, None) => {}
            (None, Some(b)) => {
                let required = is_true(b.get("required"));
                self.record(
                    Draft::new(ChangeKind::RequestBodyAdded, format!("{} now takes a request body{}", new.id(), if required { " (required)" } else { "" }))
                        .at(None, Some(&pn))
                        .impact(
                            if required { Wire::No } else { Wire::Yes },
                            Source::Yes,
                            if required {
                                "the old client sends no body, so the service refuses its calls; the builder gains a body method"
                            } else {
                                "the builder gains a body method; calls without it are unchanged"
                            },
                        )
                        .rust([Some(body_method)]),
                );
            }
            (Some(_), None) => self.record(
                Draft::new(ChangeKind::RequestBodyRemoved, format!("{} no longer takes a request body", new.id()))
                    .at(Some(&po), None)
                    .impact(
                        Wire::Degraded,
                        Source::No,
                        "the old client still sends the body and the service ignores it; the builder's body method is gone",
                    )
                    .rust([Some(format!("builder::{}::body", old.builder()))]),
            ),
            (Some(a), Some(b)) => {
                match (is_true(a.get("required")), is_true(b.get("required"))) {
                    (false, true) => self.record(
                        Draft::new(ChangeKind::RequestBodyNowRequired, format!("the request body of {} is now required", new.id()))
                            .at(Some(&po), Some(&pn))
                            .impact(Wire::No, Source::Yes, "calls without a body are refused by the service"),
                    ),
                    (true, false) => self.record(
                        Draft::new(ChangeKind::RequestBodyNowOptional, format!("the request body of {} is now optional", new.id()))
                            .at(Some(&po), Some(&pn))
                            .impact(Wire::Yes, Source::Yes, "calls with a body still work"),
                    ),
                    _ => {}
                }
                let (ca, cb) = (content(a), content(b));
                let sent = |c: &BTreeMap<String, Option<&Value>>| {
                    c.keys().find(|m| is_json(m)).or_else(|| c.keys().next()).cloned()
                };
                // The client sends one media type: JSON when offered, else the first.
                let (sent_a, sent_b) = (sent(&ca), sent(&cb));
                let body_kept = if sent_a.as_deref().map(is_json) == sent_b.as_deref().map(is_json) {
                    Source::Yes
                } else {
                    Source::No
                };
                for (media, schema_b) in &cb {
                    let pmb = format!("{pn}/content/{}", escape(media));
                    match ca.get(media) {
                        None => self.record(
                            Draft::new(ChangeKind::RequestMediaTypeAdded, format!("{} accepts a {media} request body", new.id()))
                                .at(None, Some(&pmb))
                                .impact(Wire::Yes, body_kept, "the old client keeps sending the media type it knows")
                                .rust([Some(body_method.clone())]),
                        ),
                        Some(schema_a) => {
                            if let (Some(sa), Some(sb)) = (schema_a, schema_b) {
                                let at = At {
                                    pos: Position::Request,
                                    slot: Slot::Body,
                                    rust: Some(body_method.clone()),
                                    owner: None,
                                    label: format!("the request body of {}", new.id()),
                                };
                                let pma = format!("{po}/content/{}", escape(media));
                                self.schema(&format!("{pma}/schema"), sa, &format!("{pmb}/schema"), sb, &at);
                            }
                        }
                    }
                }
                for media in ca.keys() {
                    if cb.contains_key(media) {
                        continue;
                    }
                    let (wire, why) = if sent_a.as_deref() == Some(media.as_str()) {
                        (Wire::No, "the old client sends this media type and the service now refuses it")
                    } else {
                        (Wire::Yes, "the old client sends another media type, which is still accepted")
                    };
                    self.record(
                        Draft::new(ChangeKind::RequestMediaTypeRemoved, format!("{} no longer accepts a {media} request body", new.id()))
                            .at(Some(&format!("{po}/content/{}", escape(media))), None)
                            .impact(wire, body_kept, why)
                            .rust([Some(body_method.clone())]),
                    );
                }
            }
        }
    }

    fn responses(&mut self, old: &Operation<'a>, new: &Operation<'a>) {
        let send = format!("builder::{}::send", new.builder());
        let (ra, rb) = (responses(self.old, old.op), responses(self.new, new.op));
        let bodies =
            |doc: &Value, map: &BTreeMap<String, &Value>, success: bool| -> BTreeSet<String> {
                map.iter()
                    .filter(|(s, _)| is_success(s) == success)
                    .flat_map(|(_, r)| {
                        content(resolve(doc, r))
                            .into_values()
                            .flatten()
                            .map(label)
                            .collect::<Vec<_>>()
                    })
                    .collect()
            };
        let same_success = bodies(self.old, &ra, true) == bodies(self.new, &rb, true);
        let same_errors = bodies(self.old, &ra, false) == bodies(self.new, &rb, false);
        for (status, rn) in &rb {
            let pn = format!("{}/responses/{}", new.pointer, escape(status));
            match ra.get(status) {
                None if is_success(status) => self.record(
                    Draft::new(ChangeKind::SuccessStatusAdded, format!("{} may answer {status}", new.id()))
                        .at(None, Some(&pn))
                        .impact(
                            Wire::No,
                            if same_success { Source::Yes } else { Source::No },
                            "the old client treats a success status it does not know as an unexpected response, i.e. an error",
                        )
                        .rust([Some(send.clone())]),
                ),
                None => self.record(
                    Draft::new(ChangeKind::ErrorStatusAdded, format!("{} may answer {status}", new.id()))
                        .at(None, Some(&pn))
                        .impact(
                            Wire::Degraded,
                            if same_errors { Source::Yes } else { Source::No },
                            "still an error for the old client, but an unexpected-response error without the typed error body",
                        )
                        .rust([Some(send.clone())]),
                ),
                Some(r_old) => {
                    let po = format!("{}/responses/{}", old.pointer, escape(status));
                    self.response_pair(&po, resolve(self.old, r_old), &pn, resolve(self.new, rn), status, new, &send);
                }
            }
        }
        for status in ra.keys() {
            if rb.contains_key(status) {
                continue;
            }
            let po = format!("{}/responses/{}", old.pointer, escape(status));
            let (kind, same) = if is_success(status) {
                (ChangeKind::SuccessStatusRemoved, same_success)
            } else {
                (ChangeKind::ErrorStatusRemoved, same_errors)
            };
            self.record(
                Draft::new(kind, format!("{} no longer answers {status}", new.id()))
                    .at(Some(&po), None)
                    .impact(
                        Wire::Yes,
                        if same { Source::Yes } else { Source::No },
                        "the old client simply never receives it",
                    )
                    .rust([Some(send.clone())]),
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn response_pair(
        &mut self,
        po: &str,
        a: &'a Value,
        pn: &str,
        b: &'a Value,
        status: &str,
        op: &Operation<'a>,
        send: &str,
    ) {
        let (ha, hb) = (headers(a), headers(b));
        for (key, name) in &hb {
            if !ha.contains_key(key) {
                self.record(
                    Draft::new(
                        ChangeKind::ResponseHeaderAdded,
                        format!("{} {status} carries header {name}", op.id()),
                    )
                    .at(None, Some(&format!("{pn}/headers/{}", escape(name))))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "readable from the response's headers; nothing existing changes",
                    ),
                );
            }
        }
        for (key, name) in &ha {
            if !hb.contains_key(key) {
                self.record(
                    Draft::new(ChangeKind::ResponseHeaderRemoved, format!("{} {status} no longer carries header {name}", op.id()))
                        .at(Some(&format!("{po}/headers/{}", escape(name))), None)
                        .impact(
                            Wire::Degraded,
                            Source::Yes,
                            "code that reads the header finds it missing (downloads fall back to a generic file name when Content-Disposition is gone)",
                        ),
                );
            }
        }
        let (ca, cb) = (content(a), content(b));
        // progenitor decodes the JSON media type when there is one, and streams bytes otherwise:
        // the Rust type of the response changes exactly when that choice does.
        let (json_a, json_b) = (ca.keys().any(|m| is_json(m)), cb.keys().any(|m| is_json(m)));
        let shape_kept = if json_a == json_b {
            Source::Yes
        } else {
            Source::No
        };
        for (media, sb) in &cb {
            let pmb = format!("{pn}/content/{}", escape(media));
            match ca.get(media) {
                None => self.record(
                    Draft::new(ChangeKind::ResponseMediaTypeAdded, format!("{} {status} may answer {media}", op.id()))
                        .at(None, Some(&pmb))
                        .impact(
                            Wire::Yes,
                            shape_kept,
                            if shape_kept == Source::Yes {
                                "the old client asks for the media type it knows; the Rust response type is unchanged"
                            } else {
                                "the old client asks for the media type it knows; the Rust response type changes (JSON value or byte stream)"
                            },
                        )
                        .rust([Some(send.to_string())]),
                ),
                Some(sa) => {
                    if let (Some(sa), Some(sb)) = (sa, sb) {
                        let at = At {
                            pos: Position::Response,
                            slot: Slot::Body,
                            rust: Some(send.to_string()),
                            owner: None,
                            label: format!("the {status} response body of {}", op.id()),
                        };
                        let pma = format!("{po}/content/{}", escape(media));
                        self.schema(&format!("{pma}/schema"), sa, &format!("{pmb}/schema"), sb, &at);
                    }
                }
            }
        }
        for media in ca.keys() {
            if cb.contains_key(media) {
                continue;
            }
            let (wire, why) = if is_json(media) {
                (
                    Wire::No,
                    "the old client decodes this media type and cannot read what the service sends instead",
                )
            } else if json_a {
                (
                    Wire::Yes,
                    "the old client reads the JSON answer, which remains",
                )
            } else if cb.is_empty() {
                (
                    Wire::Degraded,
                    "the old client gets an empty body where it streamed content",
                )
            } else {
                (
                    Wire::Yes,
                    "the old client streams whatever media type arrives",
                )
            };
            self.record(
                Draft::new(
                    ChangeKind::ResponseMediaTypeRemoved,
                    format!("{} {status} no longer answers {media}", op.id()),
                )
                .at(Some(&format!("{po}/content/{}", escape(media))), None)
                .impact(
                    wire,
                    shape_kept,
                    format!(
                        "{why}; {}",
                        if shape_kept == Source::Yes {
                            "the Rust response type is unchanged"
                        } else {
                            "the Rust response type changes (JSON value or byte stream)"
                        }
                    ),
                )
                .rust([Some(send.to_string())]),
            );
        }
    }

    fn operation_security(&mut self, old: &Operation<'a>, new: &Operation<'a>) {
        if old.op.get("security").is_none() && new.op.get("security").is_none() {
            return; // document-level requirement, compared once
        }
        let effective =
            |doc: &'a Value, op: &'a Value| op.get("security").or_else(|| doc.get("security"));
        let (a, b) = (effective(self.old, old.op), effective(self.new, new.op));
        if requirements(a) != requirements(b) {
            let draft = requirement_change(
                format!("{} requires other credentials", new.id()),
                &format!("{}/security", old.pointer),
                &format!("{}/security", new.pointer),
                a,
                b,
            );
            self.record(draft);
        }
    }

    // ---------------------------------------------------------------- schemas

    fn schema(&mut self, po: &str, a: &'a Value, pn: &str, b: &'a Value, at: &At) {
        let (va, vb) = (View::of(a, po), View::of(b, pn));
        if at.slot != Slot::Member && va.nullable != vb.nullable {
            self.type_changed(po, a, pn, b, at);
            return;
        }
        match (va.ref_name(), vb.ref_name()) {
            (Some(x), Some(y)) if self.same_component(x, y) => self.component(x, y, at),
            (None, None) => self.inline(&va.pointer, va.target, &vb.pointer, vb.target, at),
            _ => self.type_changed(po, a, pn, b, at),
        }
    }

    fn same_component(&self, old: &str, new: &str) -> bool {
        old == new && !self.renamed.contains_key(old)
            || self.renamed.get(old).is_some_and(|n| n == new)
    }

    fn component(&mut self, x: &str, y: &str, at: &At) {
        let key = (x.to_string(), y.to_string(), at.pos);
        if let Some(ids) = self.done.get(&key).cloned() {
            for id in ids {
                if let Some(op) = &self.operation {
                    self.drafts[id].operations.insert(op.clone());
                }
                for collector in &mut self.collectors {
                    collector.push(id);
                }
            }
            return;
        }
        if !self.in_progress.insert(key.clone()) {
            return; // a reference cycle: the outer comparison covers it
        }
        let (Some(a), Some(b)) = (
            schema::component(self.old, x),
            schema::component(self.new, y),
        ) else {
            self.in_progress.remove(&key);
            return;
        };
        self.collectors.push(Vec::new());
        let rust_name = y.to_upper_camel_case();
        let inner = At {
            pos: at.pos,
            slot: at.slot,
            rust: Some(format!("types::{rust_name}")),
            owner: Some(rust_name),
            label: y.to_string(),
        };
        let (po, pn) = (
            format!("/components/schemas/{}", escape(x)),
            format!("/components/schemas/{}", escape(y)),
        );
        self.inline(&po, a, &pn, b, &inner);
        let ids = self.collectors.pop().unwrap_or_default();
        self.done.insert(key.clone(), ids);
        self.in_progress.remove(&key);
    }

    fn type_changed(&mut self, po: &str, a: &'a Value, pn: &str, b: &'a Value, at: &At) {
        let kind = match (at.slot, at.pos) {
            (Slot::Parameter, _) => ChangeKind::ParameterTypeChanged,
            (Slot::Body, Position::Request) => ChangeKind::RequestBodyTypeChanged,
            (Slot::Body, Position::Response) => ChangeKind::ResponseBodyTypeChanged,
            (Slot::Member, Position::Request) => ChangeKind::RequestMemberTypeChanged,
            (Slot::Member, Position::Response) => ChangeKind::ResponsePropertyTypeChanged,
        };
        let (wire, reason) = match at.pos {
            Position::Request => {
                if values_within(self.old, a, self.new, b) {
                    (
                        Wire::Yes,
                        "every value the old client can send is still accepted",
                    )
                } else {
                    (
                        Wire::No,
                        "the service may refuse values the old client sends",
                    )
                }
            }
            Position::Response => {
                if values_within(self.new, b, self.old, a) {
                    (
                        Wire::Yes,
                        "every value the service may now send still decodes as the old type",
                    )
                } else {
                    (
                        Wire::No,
                        "the old client cannot decode every value the service may now send: such a response fails as a whole",
                    )
                }
            }
        };
        self.record(
            Draft::new(kind, format!("{}: type changed", at.label))
                .at(Some(po), Some(pn))
                .values(label(a), label(b))
                .impact(wire, Source::No, format!("{reason}; the Rust type changes"))
                .rust([at.rust.clone()]),
        );
    }

    fn inline(&mut self, po: &str, a: &'a Value, pn: &str, b: &'a Value, at: &At) {
        if type_signature(a) != type_signature(b) {
            self.type_changed(po, a, pn, b, at);
            return;
        }
        if let (Some(va), Some(vb)) = (enum_values(a), enum_values(b)) {
            self.enum_values(po, a, &va, pn, &vb, at);
        }
        self.constraints(po, a, pn, b, at);
        if a.get("properties").is_some() || b.get("properties").is_some() {
            self.properties(po, a, pn, b, at);
        }
        let nested = |suffix: &str| At {
            owner: None,
            label: format!("{}{suffix}", at.label),
            ..at.clone()
        };
        if let (Some(x), Some(y)) = (a.get("items"), b.get("items")) {
            self.schema(
                &format!("{po}/items"),
                x,
                &format!("{pn}/items"),
                y,
                &nested("[]"),
            );
        }
        if let (Some(x @ Value::Object(mx)), Some(y @ Value::Object(my))) =
            (a.get("additionalProperties"), b.get("additionalProperties"))
            && !(mx.is_empty() && my.is_empty())
        {
            self.schema(
                &format!("{po}/additionalProperties"),
                x,
                &format!("{pn}/additionalProperties"),
                y,
                &nested("{*}"),
            );
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let (Some(xs), Some(ys)) = (
                a.get(key).and_then(Value::as_array),
                b.get(key).and_then(Value::as_array),
            ) {
                for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                    self.schema(
                        &format!("{po}/{key}/{i}"),
                        x,
                        &format!("{pn}/{key}/{i}"),
                        y,
                        &nested(&format!(" ({key} {i})")),
                    );
                }
            }
        }
    }

    fn enum_values(
        &mut self,
        po: &str,
        a: &Value,
        va: &[String],
        pn: &str,
        vb: &[String],
        at: &At,
    ) {
        for (i, value) in vb.iter().enumerate() {
            if va.contains(value) {
                continue;
            }
            let draft = match at.pos {
                Position::Request => Draft::new(ChangeKind::RequestEnumValueAdded, format!("{}: value {value:?} added", at.label))
                    .impact(Wire::Yes, Source::No, "callers may send it after upgrading; the new variant breaks exhaustive matches"),
                Position::Response if is_open_enum(a) => Draft::new(
                    ChangeKind::ResponseEnumValueAdded,
                    format!("{}: value {value:?} added", at.label),
                )
                .impact(
                    Wire::Yes,
                    Source::No,
                    format!("the old client keeps it as Unrecognized({value:?}); after upgrading it is a new variant, which breaks exhaustive matches and code that matched Unrecognized({value:?})"),
                ),
                Position::Response => Draft::new(ChangeKind::ResponseEnumValueAdded, format!("{}: value {value:?} added", at.label)).impact(
                    Wire::No,
                    Source::No,
                    "the old client's enum is closed: a response carrying the value fails to decode",
                ),
            };
            self.record(
                draft
                    .at(None, Some(&format!("{pn}/enum/{i}")))
                    .rust([at.rust.clone()]),
            );
        }
        for (i, value) in va.iter().enumerate() {
            if vb.contains(value) {
                continue;
            }
            let draft = match at.pos {
                Position::Request => Draft::new(
                    ChangeKind::RequestEnumValueRemoved,
                    format!("{}: value {value:?} removed", at.label),
                )
                .impact(
                    Wire::No,
                    Source::No,
                    "calls sending it are refused; the variant is gone",
                ),
                Position::Response => Draft::new(
                    ChangeKind::ResponseEnumValueRemoved,
                    format!("{}: value {value:?} removed", at.label),
                )
                .impact(
                    Wire::Yes,
                    Source::No,
                    "the old client simply never receives it; the variant is gone",
                ),
            };
            self.record(
                draft
                    .at(Some(&format!("{po}/enum/{i}")), None)
                    .rust([at.rust.clone()]),
            );
        }
    }

    fn constraints(&mut self, po: &str, a: &Value, pn: &str, b: &Value, at: &At) {
        let changed: Vec<&str> = CONSTRAINTS
            .iter()
            .copied()
            .filter(|k| a.get(*k) != b.get(*k))
            .collect();
        if changed.is_empty() {
            return;
        }
        let direction = combine(
            changed
                .iter()
                .map(|k| constraint_direction(k, a.get(*k), b.get(*k))),
        );
        let describe = |s: &Value| {
            let parts: Vec<String> = changed
                .iter()
                .filter_map(|k| s.get(*k).map(|v| format!("{k} {}", compact(v))))
                .collect();
            if parts.is_empty() {
                "none".to_string()
            } else {
                parts.join(", ")
            }
        };
        let (kind, wire, reason) = match at.pos {
            Position::Request => match direction {
                Direction::Loosened => (ChangeKind::RequestConstraintChanged, Wire::Yes, "the service accepts more than before".to_string()),
                _ => (
                    ChangeKind::RequestConstraintChanged,
                    Wire::No,
                    "the service may refuse values the old client sends".to_string(),
                ),
            },
            Position::Response => match direction {
                Direction::Tightened => (ChangeKind::ResponseConstraintChanged, Wire::Yes, "the service sends a subset of what it sent".to_string()),
                _ if rust_type_validates(a) => (
                    ChangeKind::ResponseConstraintChanged,
                    Wire::No,
                    "the old client's type checks the old constraint when decoding: values outside it fail the response".to_string(),
                ),
                _ => (
                    ChangeKind::ResponseConstraintChanged,
                    Wire::Yes,
                    "the old client's type does not check this constraint".to_string(),
                ),
            },
        };
        let source = if rust_scalar(a) == rust_scalar(b) {
            Source::Yes
        } else {
            Source::No
        };
        let reason = if source == Source::No {
            format!(
                "{reason}; the Rust type changes ({} → {})",
                rust_scalar(a),
                rust_scalar(b)
            )
        } else {
            reason
        };
        self.record(
            Draft::new(
                kind,
                format!("{}: constraints {}", at.label, direction.word()),
            )
            .at(Some(po), Some(pn))
            .values(describe(a), describe(b))
            .impact(wire, source, reason)
            .rust([at.rust.clone()]),
        );
    }

    fn properties(&mut self, po: &str, a: &'a Value, pn: &str, b: &'a Value, at: &At) {
        static EMPTY: std::sync::LazyLock<serde_json::Map<String, Value>> =
            std::sync::LazyLock::new(serde_json::Map::new);
        let pa = a
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&EMPTY);
        let pb = b
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&EMPTY);
        let (ra, rb) = (required(a), required(b));
        let closed = |s: &Value| s.get("additionalProperties") == Some(&Value::Bool(false));
        let keeps_unknown =
            |s: &Value| s.get("additionalProperties").is_some_and(|v| v.is_object());
        let owner = at.owner.clone();
        let field = |name: &str| owner.as_ref().map(|o| format!("types::{o}.{name}"));
        let subject = |name: &str| format!("{}.{name}", at.label);
        for (name, sb) in pb {
            let ppn = format!("{pn}/properties/{}", escape(name));
            let Some(sa) = pa.get(name) else {
                let draft = match at.pos {
                    Position::Request if rb.contains(name) => Draft::new(ChangeKind::RequiredRequestMemberAdded, format!("{} added (required)", subject(name))).impact(
                        Wire::No,
                        Source::No,
                        "the old client never sends it, so the service refuses its requests; struct literals of the request type lack the new field",
                    ),
                    Position::Request => Draft::new(ChangeKind::OptionalRequestMemberAdded, format!("{} added (optional)", subject(name))).impact(
                        Wire::Yes,
                        Source::No,
                        "requests without it are unchanged; struct literals of the request type lack the new field",
                    ),
                    Position::Response => {
                        let (wire, why) = if closed(a) {
                            (Wire::No, "the old type refuses members it does not know (additionalProperties: false)")
                        } else if keeps_unknown(a) {
                            (Wire::Yes, "the old client keeps it in the type's `extra` map")
                        } else {
                            (Wire::Yes, "the old client ignores members it does not know")
                        };
                        Draft::new(ChangeKind::ResponsePropertyAdded, format!("{} added", subject(name))).impact(
                            wire,
                            Source::No,
                            format!("{why}; the struct gains a field, which breaks struct literals and exhaustive patterns of it"),
                        )
                    }
                };
                self.record(draft.at(None, Some(&ppn)).rust([field(name)]));
                continue;
            };
            let ppo = format!("{po}/properties/{}", escape(name));
            self.member(
                &ppo,
                sa,
                ra.contains(name),
                &ppn,
                sb,
                rb.contains(name),
                &subject(name),
                field(name),
                at,
            );
        }
        for (name, sa) in pa {
            if pb.contains_key(name) {
                continue;
            }
            let ppo = format!("{po}/properties/{}", escape(name));
            let draft = match at.pos {
                Position::Request => {
                    let (wire, why) = if closed(b) {
                        (
                            Wire::No,
                            "the service now refuses requests that still carry it",
                        )
                    } else {
                        (
                            Wire::Degraded,
                            "the old client may still send it and the service ignores it",
                        )
                    };
                    Draft::new(
                        ChangeKind::RequestMemberRemoved,
                        format!("{} removed", subject(name)),
                    )
                    .impact(
                        wire,
                        Source::No,
                        format!("{why}; the field is gone from the Rust type"),
                    )
                }
                Position::Response => {
                    let must_have = ra.contains(name) && !View::of(sa, "").nullable;
                    let (wire, why) = if must_have {
                        (
                            Wire::No,
                            "the old client requires it: responses without it fail to decode",
                        )
                    } else {
                        (
                            Wire::Degraded,
                            "the old client reads it as absent from now on",
                        )
                    };
                    Draft::new(
                        ChangeKind::ResponsePropertyRemoved,
                        format!("{} removed", subject(name)),
                    )
                    .impact(
                        wire,
                        Source::No,
                        format!("{why}; the field is gone from the Rust type"),
                    )
                }
            };
            self.record(draft.at(Some(&ppo), None).rust([field(name)]));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn member(
        &mut self,
        po: &str,
        a: &'a Value,
        req_a: bool,
        pn: &str,
        b: &'a Value,
        req_b: bool,
        subject: &str,
        field: Option<String>,
        at: &At,
    ) {
        let (null_a, null_b) = (View::of(a, po).nullable, View::of(b, pn).nullable);
        // typify: a member is `Option<T>` unless it is required and not nullable.
        let option_a = !req_a || null_a;
        let option_b = !req_b || null_b;
        let rust_source = if option_a == option_b {
            Source::Yes
        } else {
            Source::No
        };
        let option_note = |s: Source| match s {
            Source::Yes => "the Rust field keeps its type".to_string(),
            Source::No => format!(
                "the Rust field changes between T and Option<T> ({} → {})",
                if option_a { "Option<T>" } else { "T" },
                if option_b { "Option<T>" } else { "T" }
            ),
        };
        let mut drafts = Vec::new();
        match at.pos {
            Position::Request => {
                if !req_a && req_b {
                    drafts.push(
                        Draft::new(
                            ChangeKind::RequestMemberNowRequired,
                            format!("{subject} is now required"),
                        )
                        .impact(
                            Wire::No,
                            rust_source,
                            format!(
                                "the old client may leave it out, and the service refuses that; {}",
                                option_note(rust_source)
                            ),
                        ),
                    );
                }
                if req_a && !req_b {
                    drafts.push(
                        Draft::new(
                            ChangeKind::RequestMemberNowOptional,
                            format!("{subject} is now optional"),
                        )
                        .impact(
                            Wire::Yes,
                            rust_source,
                            format!(
                                "requests that send it still work; {}",
                                option_note(rust_source)
                            ),
                        ),
                    );
                }
                if !null_a && null_b {
                    drafts.push(
                        Draft::new(
                            ChangeKind::RequestMemberNowNullable,
                            format!("{subject} is now nullable"),
                        )
                        .impact(
                            Wire::Yes,
                            rust_source,
                            format!(
                                "the service accepts more than before; {}",
                                option_note(rust_source)
                            ),
                        ),
                    );
                }
                if null_a && !null_b {
                    let wire = if req_a { Wire::No } else { Wire::Yes };
                    let why = if req_a {
                        "the old client sends null for None, which the service now refuses"
                    } else {
                        "the old client leaves None out instead of sending null"
                    };
                    drafts.push(
                        Draft::new(
                            ChangeKind::RequestMemberNoLongerNullable,
                            format!("{subject} is no longer nullable"),
                        )
                        .impact(
                            wire,
                            rust_source,
                            format!("{why}; {}", option_note(rust_source)),
                        ),
                    );
                }
            }
            Position::Response => {
                if !req_a && req_b {
                    drafts.push(
                        Draft::new(
                            ChangeKind::ResponsePropertyNowRequired,
                            format!("{subject} is now always present"),
                        )
                        .impact(
                            Wire::Yes,
                            rust_source,
                            format!(
                                "the old client handles its presence; {}",
                                option_note(rust_source)
                            ),
                        ),
                    );
                }
                if req_a && !req_b {
                    let wire = if null_a { Wire::Yes } else { Wire::No };
                    let why = if null_a {
                        "the old client already reads it as an Option, and a missing member is None"
                    } else {
                        "the old client requires it: responses without it fail to decode"
                    };
                    drafts.push(
                        Draft::new(
                            ChangeKind::ResponsePropertyNowOptional,
                            format!("{subject} is now optional"),
                        )
                        .impact(
                            wire,
                            rust_source,
                            format!("{why}; {}", option_note(rust_source)),
                        ),
                    );
                }
                if !null_a && null_b {
                    let wire = if option_a { Wire::Yes } else { Wire::No };
                    let why = if option_a {
                        "the old client reads it as an Option, and null is None"
                    } else {
                        "the old client's field is not an Option: a null fails the whole response"
                    };
                    drafts.push(
                        Draft::new(
                            ChangeKind::ResponsePropertyNowNullable,
                            format!("{subject} is now nullable"),
                        )
                        .impact(
                            wire,
                            rust_source,
                            format!("{why}; {}", option_note(rust_source)),
                        ),
                    );
                }
                if null_a && !null_b {
                    drafts.push(
                        Draft::new(
                            ChangeKind::ResponsePropertyNoLongerNullable,
                            format!("{subject} is no longer nullable"),
                        )
                        .impact(
                            Wire::Yes,
                            rust_source,
                            format!(
                                "the service sends a subset of what it sent; {}",
                                option_note(rust_source)
                            ),
                        ),
                    );
                }
            }
        }
        for draft in drafts {
            self.record(draft.at(Some(po), Some(pn)).rust([field.clone()]));
        }
        let inline_owner = |s: &Value| {
            let v = View::of(s, "");
            v.ref_name().is_none() && v.target.get("properties").is_some()
        };
        let nested = At {
            pos: at.pos,
            slot: Slot::Member,
            rust: field.clone(),
            owner: (inline_owner(a) && inline_owner(b))
                .then(|| {
                    at.owner.as_ref().map(|o| {
                        format!(
                            "{o}{}",
                            subject
                                .rsplit('.')
                                .next()
                                .unwrap_or("")
                                .to_upper_camel_case()
                        )
                    })
                })
                .flatten(),
            label: subject.to_string(),
        };
        self.schema(po, a, pn, b, &nested);
    }

    // ---------------------------------------------------------------- document level

    fn components(&mut self) {
        let names = |doc: &Value| -> BTreeSet<String> {
            doc.pointer("/components/schemas")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (a, b) = (names(self.old), names(self.new));
        let renamed_to: BTreeSet<String> = self.renamed.values().cloned().collect();
        let variant_of = |doc: &Value, name: &str| {
            schema::component(doc, name)
                .and_then(|s| s.get(crate::open_enums::REQUEST_VARIANT_MARK))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let renamed = self.renamed.clone();
        for (old, new) in &renamed {
            // A request-side copy follows its original: reported with it.
            if let Some(original) = variant_of(self.old, old)
                && renamed.contains_key(&original)
            {
                continue;
            }
            let copies: Vec<Option<String>> = renamed
                .iter()
                .filter(|(o, _)| variant_of(self.old, o).as_deref() == Some(old.as_str()))
                .flat_map(|(o, n)| {
                    [
                        Some(format!("types::{}", o.to_upper_camel_case())),
                        Some(format!("types::{}", n.to_upper_camel_case())),
                    ]
                })
                .collect();
            self.record(
                Draft::new(ChangeKind::SchemaRenamed, format!("schema {old} is now {new} (same shape)"))
                    .at(Some(&format!("/components/schemas/{}", escape(old))), Some(&format!("/components/schemas/{}", escape(new))))
                    .values(old.clone(), new.clone())
                    .impact(
                        Wire::Yes,
                        Source::No,
                        format!(
                            "same JSON on the wire, but the Rust type is renamed from {} to {}: pin the old name with `cargo xtask regen --keep-names`",
                            old.to_upper_camel_case(),
                            new.to_upper_camel_case()
                        ),
                    )
                    .rust([Some(format!("types::{}", old.to_upper_camel_case())), Some(format!("types::{}", new.to_upper_camel_case()))])
                    .rust(copies),
            );
        }
        for name in b.difference(&a) {
            if renamed_to.contains(name) {
                continue;
            }
            self.record(
                Draft::new(ChangeKind::SchemaAdded, format!("schema {name} added"))
                    .at(None, Some(&format!("/components/schemas/{}", escape(name))))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "a new Rust type; nothing existing changes",
                    )
                    .rust([Some(format!("types::{}", name.to_upper_camel_case()))]),
            );
        }
        for name in a.difference(&b) {
            if self.renamed.contains_key(name) {
                continue;
            }
            self.record(
                Draft::new(ChangeKind::SchemaRemoved, format!("schema {name} removed"))
                    .at(Some(&format!("/components/schemas/{}", escape(name))), None)
                    .impact(
                        Wire::Yes,
                        Source::No,
                        "the Rust type is gone; where it was used, the changes of those places are listed separately",
                    )
                    .rust([Some(format!("types::{}", name.to_upper_camel_case()))]),
            );
        }
    }

    fn security(&mut self) {
        let schemes = |doc: &'a Value| -> BTreeMap<String, &'a Value> {
            doc.pointer("/components/securitySchemes")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
                .unwrap_or_default()
        };
        let (a, b) = (schemes(self.old), schemes(self.new));
        let at = |name: &str| format!("/components/securitySchemes/{}", escape(name));
        for (name, sb) in &b {
            let Some(sa) = a.get(name) else {
                self.record(
                    Draft::new(
                        ChangeKind::SecuritySchemeAdded,
                        format!("security scheme {name} added"),
                    )
                    .at(None, Some(&at(name)))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional way to authenticate; requirements are compared separately",
                    ),
                );
                continue;
            };
            self.scheme_pair(name, &at(name), sa, sb);
        }
        for name in a.keys() {
            if !b.contains_key(name) {
                self.record(
                    Draft::new(ChangeKind::SecuritySchemeRemoved, format!("security scheme {name} removed"))
                        .at(Some(&at(name)), None)
                        .impact(
                            Wire::No,
                            Source::Yes,
                            "clients authenticating this way are refused; creditdata-client's auth is configured, not generated, so its code is unchanged",
                        ),
                );
            }
        }
        let (ra, rb) = (self.old.get("security"), self.new.get("security"));
        if requirements(ra) != requirements(rb) {
            let draft = requirement_change(
                "the document-wide security requirement changed".into(),
                "/security",
                "/security",
                ra,
                rb,
            );
            self.record(draft);
        }
    }

    fn scheme_pair(&mut self, name: &str, at: &str, a: &Value, b: &Value) {
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        for key in ["type", "scheme", "in", "name"] {
            if field(a, key) != field(b, key) {
                self.record(
                    Draft::new(ChangeKind::SecuritySchemeChanged, format!("security scheme {name}: {key} changed"))
                        .at(Some(at), Some(at))
                        .values(field(a, key), field(b, key))
                        .impact(Wire::No, Source::Yes, "credentials of the old kind are refused; configure the client for the new one"),
                );
                return;
            }
        }
        if field(a, "openIdConnectUrl") != field(b, "openIdConnectUrl") {
            self.record(
                Draft::new(
                    ChangeKind::SecurityUrlChanged,
                    format!("security scheme {name}: OpenID Connect discovery URL changed"),
                )
                .at(
                    Some(&format!("{at}/openIdConnectUrl")),
                    Some(&format!("{at}/openIdConnectUrl")),
                )
                .values(field(a, "openIdConnectUrl"), field(b, "openIdConnectUrl"))
                .impact(
                    Wire::No,
                    Source::Yes,
                    "clients configured with the old issuer cannot discover the token endpoint",
                ),
            );
        }
        let flows = |v: &Value| -> BTreeMap<String, Value> {
            v.get("flows")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        };
        let (fa, fb) = (flows(a), flows(b));
        let used = |flow: &str| flow == "clientCredentials";
        for (flow, vb) in &fb {
            let pf = format!("{at}/flows/{}", escape(flow));
            let Some(va) = fa.get(flow) else {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityFlowAdded,
                        format!("security scheme {name}: {flow} flow added"),
                    )
                    .at(None, Some(&pf))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional way to obtain tokens",
                    ),
                );
                continue;
            };
            for url in ["tokenUrl", "authorizationUrl", "refreshUrl"] {
                if field(va, url) != field(vb, url) {
                    let breaks = used(flow) && url == "tokenUrl";
                    self.record(
                        Draft::new(ChangeKind::SecurityUrlChanged, format!("security scheme {name}: {flow} {url} changed"))
                            .at(Some(&format!("{pf}/{url}")), Some(&format!("{pf}/{url}")))
                            .values(field(va, url), field(vb, url))
                            .impact(
                                if breaks { Wire::No } else { Wire::Yes },
                                Source::Yes,
                                if breaks {
                                    "clients configured with the old token URL can no longer get tokens: update their configuration"
                                } else {
                                    "creditdata-client does not use this URL (it authenticates with client credentials)"
                                },
                            ),
                    );
                }
            }
            let scopes = |v: &Value| -> BTreeSet<String> {
                v.get("scopes")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let (sa, sb) = (scopes(va), scopes(vb));
            for scope in sb.difference(&sa) {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityScopeAdded,
                        format!("security scheme {name}: {flow} scope {scope} added"),
                    )
                    .at(None, Some(&format!("{pf}/scopes/{}", escape(scope))))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "a scope that can be requested; requirements are compared separately",
                    ),
                );
            }
            for scope in sa.difference(&sb) {
                self.record(
                    Draft::new(
                        ChangeKind::SecurityScopeRemoved,
                        format!("security scheme {name}: {flow} scope {scope} removed"),
                    )
                    .at(Some(&format!("{pf}/scopes/{}", escape(scope))), None)
                    .impact(
                        if used(flow) { Wire::No } else { Wire::Yes },
                        Source::Yes,
                        if used(flow) {
                            "clients that request this scope get their token request refused"
                        } else {
                            "creditdata-client does not use this flow"
                        },
                    ),
                );
            }
        }
        for flow in fa.keys() {
            if !fb.contains_key(flow) {
                self.record(
                    Draft::new(ChangeKind::SecurityFlowRemoved, format!("security scheme {name}: {flow} flow removed"))
                        .at(Some(&format!("{at}/flows/{}", escape(flow))), None)
                        .impact(
                            if used(flow) { Wire::No } else { Wire::Yes },
                            Source::Yes,
                            if used(flow) {
                                "creditdata-client authenticates with this flow: clients can no longer get tokens"
                            } else {
                                "creditdata-client does not use this flow (it authenticates with client credentials)"
                            },
                        ),
                );
            }
        }
    }

    fn servers(&mut self) {
        let servers = |doc: &Value| -> Vec<(String, String)> {
            doc.get("servers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| {
                    (
                        s.get("url")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        s.get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    )
                })
                .collect()
        };
        let (a, b) = (servers(self.old), servers(self.new));
        let mut moved = BTreeSet::new();
        for (i, (url_b, desc_b)) in b.iter().enumerate() {
            if a.iter().any(|(u, _)| u == url_b) || desc_b.is_empty() {
                continue;
            }
            if let Some((j, (url_a, _))) = a
                .iter()
                .enumerate()
                .find(|(_, (u, d))| d == desc_b && !b.iter().any(|(ub, _)| ub == u))
            {
                moved.insert(url_a.clone());
                moved.insert(url_b.clone());
                self.record(
                    Draft::new(
                        ChangeKind::ServerChanged,
                        format!("server {desc_b:?} moved"),
                    )
                    .at(
                        Some(&format!("/servers/{j}/url")),
                        Some(&format!("/servers/{i}/url")),
                    )
                    .values(url_a.clone(), url_b.clone())
                    .impact(
                        Wire::No,
                        Source::Yes,
                        "clients configured with the old base URL fail: update their configuration",
                    ),
                );
            }
        }
        for (i, (url, desc)) in b.iter().enumerate() {
            if !moved.contains(url) && !a.iter().any(|(u, _)| u == url) {
                self.record(
                    Draft::new(
                        ChangeKind::ServerAdded,
                        format!("server {url} added{}", suffix(desc)),
                    )
                    .at(None, Some(&format!("/servers/{i}")))
                    .impact(
                        Wire::Yes,
                        Source::Yes,
                        "an additional base URL; nothing existing changes",
                    ),
                );
            }
        }
        for (i, (url, desc)) in a.iter().enumerate() {
            if !moved.contains(url) && !b.iter().any(|(u, _)| u == url) {
                self.record(
                    Draft::new(
                        ChangeKind::ServerRemoved,
                        format!("server {url} removed{}", suffix(desc)),
                    )
                    .at(Some(&format!("/servers/{i}")), None)
                    .impact(
                        Wire::No,
                        Source::Yes,
                        "clients configured with this base URL fail",
                    ),
                );
            }
        }
    }
}

fn suffix(description: &str) -> String {
    if description.is_empty() {
        String::new()
    } else {
        format!(" ({description})")
    }
}

/// A security requirement as a set of alternatives, each a map of scheme → scopes.
type Requirement = BTreeSet<BTreeMap<String, BTreeSet<String>>>;

fn requirements(value: Option<&Value>) -> Requirement {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|alt| {
            alt.iter()
                .map(|(scheme, scopes)| {
                    let scopes = scopes
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    (scheme.clone(), scopes)
                })
                .collect()
        })
        .collect()
}

fn requirement_change(
    summary: String,
    po: &str,
    pn: &str,
    a: Option<&Value>,
    b: Option<&Value>,
) -> Draft {
    let (ra, rb) = (requirements(a), requirements(b));
    // An old client satisfies one old alternative; it still works if that alternative, or a
    // weaker one (same schemes, fewer scopes), is still accepted. No requirement at all accepts
    // everything.
    let still_ok = rb.is_empty()
        || rb.iter().any(|alt| alt.is_empty())
        || ra.iter().all(|old_alt| {
            rb.iter().any(|new_alt| {
                new_alt.keys().eq(old_alt.keys())
                    && new_alt
                        .iter()
                        .all(|(s, scopes)| scopes.is_subset(&old_alt[s]))
            })
        });
    let show = |v: Option<&Value>| v.map(compact).unwrap_or_else(|| "(none)".into());
    Draft::new(ChangeKind::SecurityRequirementChanged, summary)
        .at(Some(po), Some(pn))
        .values(show(a), show(b))
        .impact(
            if still_ok { Wire::Yes } else { Wire::No },
            Source::Yes,
            if still_ok {
                "every way of authenticating that worked is still accepted"
            } else {
                "credentials that satisfied the old requirement may be refused"
            },
        )
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

/// The media type progenitor decodes as JSON.
fn is_json(media: &str) -> bool {
    media
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .eq_ignore_ascii_case("application/json")
}

fn is_success(status: &str) -> bool {
    status.starts_with('2')
}

/// Media type → schema of a request body or response.
fn content(node: &Value) -> BTreeMap<String, Option<&Value>> {
    node.get("content")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.get("schema")))
                .collect()
        })
        .unwrap_or_default()
}

/// Response headers keyed by their lowercased name (HTTP header names are case-insensitive),
/// each with the name as written.
fn headers(node: &Value) -> BTreeMap<String, String> {
    node.get("headers")
        .and_then(Value::as_object)
        .map(|m| {
            m.keys()
                .map(|k| (k.to_ascii_lowercase(), k.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn responses<'v>(_doc: &'v Value, op: &'v Value) -> BTreeMap<String, &'v Value> {
    op.get("responses")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}

/// The Rust type typify generates for a scalar schema, as far as constraints decide it: an
/// integer's bounds choose its Rust integer type, and a string with a length or pattern
/// becomes a validating newtype.
fn rust_scalar(schema: &Value) -> String {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => typify_integer(schema),
        Some("string") if schema.get("format").is_none() && rust_type_validates(schema) => {
            "a validating newtype".into()
        }
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// typify 0.8's choice of Rust integer type (`convert_integer`), for the constraint rules.
fn typify_integer(schema: &Value) -> String {
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    // 3.0's boolean exclusive bounds.
    let exclusive = |k: &str| is_true(schema.get(k));
    let mut min = num("minimum").map(|m| {
        if exclusive("exclusiveMinimum") {
            m + 1.0
        } else {
            m
        }
    });
    let mut max = num("maximum").map(|m| {
        if exclusive("exclusiveMaximum") {
            m - 1.0
        } else {
            m
        }
    });
    let multiple = num("multipleOf");
    const FORMATS: &[(&str, &str, &str, f64, f64)] = &[
        ("int8", "i8", "NonZeroU8", i8::MIN as f64, i8::MAX as f64),
        ("uint8", "u8", "NonZeroU8", u8::MIN as f64, u8::MAX as f64),
        (
            "int16",
            "i16",
            "NonZeroU16",
            i16::MIN as f64,
            i16::MAX as f64,
        ),
        (
            "uint16",
            "u16",
            "NonZeroU16",
            u16::MIN as f64,
            u16::MAX as f64,
        ),
        ("int", "i32", "NonZeroU32", i32::MIN as f64, i32::MAX as f64),
        (
            "int32",
            "i32",
            "NonZeroU32",
            i32::MIN as f64,
            i32::MAX as f64,
        ),
        (
            "uint",
            "u32",
            "NonZeroU32",
            u32::MIN as f64,
            u32::MAX as f64,
        ),
        (
            "uint32",
            "u32",
            "NonZeroU32",
            u32::MIN as f64,
            u32::MAX as f64,
        ),
        (
            "int64",
            "i64",
            "NonZeroU64",
            i64::MIN as f64,
            i64::MAX as f64,
        ),
        (
            "uint64",
            "u64",
            "NonZeroU64",
            u64::MIN as f64,
            u64::MAX as f64,
        ),
    ];
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && let Some((_, ty, nz, imin, imax)) = FORMATS.iter().find(|f| f.0 == format)
    {
        let valid_min = min.is_none_or(|m| m >= *imin);
        let valid_max = max.is_none_or(|m| m <= *imax);
        if multiple.is_none() && valid_min && valid_max {
            return if min == Some(1.0) {
                nz.to_string()
            } else {
                ty.to_string()
            };
        }
        min = min.or(Some(*imin));
        max = max.or(Some(*imax));
    }
    let fits = |found: Option<&(&str, &str, &str, f64, f64)>| found.map(|f| f.1.to_string());
    let chosen = match (min, max) {
        (None, Some(max)) => fits(
            FORMATS
                .iter()
                .rev()
                .find(|f| (f.4 - max).abs() <= f64::EPSILON),
        ),
        (Some(1.0), None) => FORMATS.last().map(|f| f.2.to_string()),
        (Some(min), None) => fits(
            FORMATS
                .iter()
                .rev()
                .find(|f| (f.3 - min).abs() <= f64::EPSILON),
        ),
        (Some(1.0), Some(_)) => FORMATS.last().map(|f| f.2.to_string()),
        (Some(min), Some(max)) => fits(
            FORMATS
                .iter()
                .rev()
                .find(|f| (f.4 - max).abs() <= f64::EPSILON && (f.3 - min).abs() <= f64::EPSILON),
        ),
        (None, None) => None,
    };
    chosen.unwrap_or_else(|| "i64".into())
}

/// One operation of a document.
pub struct Operation<'a> {
    pub method: String,
    pub path: String,
    pub pointer: String,
    pub op: &'a Value,
    pub item: &'a Value,
}

impl Operation<'_> {
    pub fn id(&self) -> String {
        self.op
            .get("operationId")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{} {}", self.method_upper(), self.path))
    }
    fn method_upper(&self) -> String {
        self.method.to_ascii_uppercase()
    }
    fn describe(&self) -> String {
        format!("{} {} ({})", self.method_upper(), self.path, self.id())
    }
    fn builder(&self) -> String {
        self.id().to_upper_camel_case()
    }
    /// The Client method and builder generated for the operation (none without an operationId:
    /// the generator refuses such an operation).
    fn rust_names(&self) -> [Option<String>; 2] {
        let named = self.op.get("operationId").is_some();
        [
            named.then(|| format!("Client::{}", self.id().to_snake_case())),
            named.then(|| format!("builder::{}", self.builder())),
        ]
    }
    /// Path-level and operation-level parameters (the latter win), keyed by (in, name), each
    /// with its pointer.
    fn parameters<'d>(&self, doc: &'d Value) -> BTreeMap<(String, String), (String, &'d Value)>
    where
        Self: 'd,
    {
        let mut out = BTreeMap::new();
        let item_pointer = self.pointer.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
        for (base, list) in [
            (item_pointer.to_string(), self.item.get("parameters")),
            (self.pointer.clone(), self.op.get("parameters")),
        ] {
            for (i, param) in list
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let param = resolve(doc, param);
                let (Some(location), Some(name)) = (
                    param.get("in").and_then(Value::as_str),
                    param.get("name").and_then(Value::as_str),
                ) else {
                    continue;
                };
                // A path parameter is its position in the template: renaming it changes no URL.
                let key = if location == "path" {
                    template_position(&self.path, name)
                        .map(|n| format!("#{n}"))
                        .unwrap_or_else(|| name.to_string())
                } else {
                    name.to_string()
                };
                out.insert(
                    (location.to_string(), key),
                    (format!("{base}/parameters/{i}"), param),
                );
            }
        }
        out
    }
}

/// Operations keyed by (METHOD, path with its parameters' names erased), so that renaming a path
/// parameter is not an operation removed and another added.
pub fn operations(doc: &Value) -> BTreeMap<(String, String), Operation<'_>> {
    let mut out = BTreeMap::new();
    for (path, item) in doc
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for (method, op) in item.as_object().into_iter().flatten() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            out.insert(
                (method.to_ascii_uppercase(), template(path)),
                Operation {
                    method: method.clone(),
                    path: path.clone(),
                    pointer: format!("/paths/{}/{method}", escape(path)),
                    op,
                    item,
                },
            );
        }
    }
    out
}

/// The position of `{name}` among the parameters of a path template.
fn template_position(path: &str, name: &str) -> Option<usize> {
    path.split('{')
        .skip(1)
        .position(|part| part.split('}').next() == Some(name))
}

fn template(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if inside => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typify_integer_choices() {
        assert_eq!(
            typify_integer(&json!({"type": "integer", "format": "int32"})),
            "i32"
        );
        assert_eq!(
            typify_integer(&json!({"type": "integer", "format": "int32", "minimum": 0})),
            "i32"
        );
        assert_eq!(
            typify_integer(
                &json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 500})
            ),
            "NonZeroU32"
        );
        assert_eq!(typify_integer(&json!({"type": "integer"})), "i64");
        assert_eq!(
            typify_integer(&json!({"type": "integer", "minimum": 0})),
            "u64"
        );
    }

    #[test]
    fn path_templates_ignore_parameter_names() {
        assert_eq!(
            template("/v1/sessions/{sessionId}/x/{id}"),
            "/v1/sessions/{}/x/{}"
        );
    }
}
