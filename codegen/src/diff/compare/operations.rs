//! Operations: added, removed, renamed, deprecated; their parameters, request bodies, responses
//! and security requirements.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;

use super::document::{requirement_change, requirements};
use super::{At, Draft, Slot, Walker};
use crate::diff::model::{ChangeKind, Position, Source, Wire};
use crate::diff::schema::{is_true, label};
use crate::document::pointer::escape;
use crate::document::{self, resolve};

impl<'a> Walker<'a> {
    pub(super) fn operations(&mut self) {
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
                    let (default_old, default_new) =
                        (default_of(self.old, old_param), default_of(self.new, param));
                    if default_old != default_new {
                        let shown = |value: Option<&Value>| {
                            value.map(super::compact).unwrap_or_else(|| "(none)".into())
                        };
                        self.record(
                            Draft::new(
                                ChangeKind::ParameterDefaultChanged,
                                format!("{what}: its default changed"),
                            )
                            .at(Some(po), Some(pn))
                            .values(shown(default_old), shown(default_new))
                            .impact(
                                Wire::Yes,
                                Source::Yes,
                                "the service applies the default to every call that omits the \
                                 parameter: calls that compile and run unchanged, deployed or \
                                 rebuilt, get answers made with the new one; set the parameter \
                                 to keep the old behaviour",
                            )
                            .changes_behaviour()
                            .rust([Some(method.clone())]),
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
        let send = format!("builder::{}::call", new.builder());
        let (ra, rb) = (responses(old.op), responses(new.op));
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

fn responses(op: &Value) -> BTreeMap<String, &Value> {
    op.get("responses")
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}

/// The default a parameter's schema declares (through a `$ref` or a one-element `allOf`).
fn default_of<'d>(doc: &'d Value, param: &'d Value) -> Option<&'d Value> {
    let schema = resolve(doc, param.get("schema")?);
    schema.get("default").or_else(|| {
        match schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => resolve(doc, only).get("default"),
            _ => None,
        }
    })
}

/// One operation of a document.
pub struct Operation<'a> {
    pub method: String,
    pub path: String,
    pub pointer: String,
    pub op: &'a Value,
    pub item: &'a serde_json::Map<String, Value>,
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
    document::operations(doc)
        .map(|found| {
            let operation = Operation {
                method: found.method.to_string(),
                path: found.path.to_string(),
                pointer: found.pointer(),
                op: found.operation,
                item: found.item,
            };
            (
                (found.method.to_ascii_uppercase(), template(found.path)),
                operation,
            )
        })
        .collect()
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

    #[test]
    fn path_templates_ignore_parameter_names() {
        assert_eq!(
            template("/v1/sessions/{sessionId}/x/{id}"),
            "/v1/sessions/{}/x/{}"
        );
        assert_eq!(template_position("/v1/s/{sessionId}/x/{id}", "id"), Some(1));
    }
}
