//! Schemas, followed from where they are used: type changes, enum values, constraints, object
//! members (required, nullable), items, and the components they refer to.

use heck::ToUpperCamelCase;
use serde_json::Value;

use super::{At, Draft, Slot, Walker, compact};
use crate::diff::model::{ChangeKind, Position, Source, Wire};
use crate::diff::schema::{
    self, CONSTRAINTS, Direction, View, combine, constraint_direction, enum_values, is_open_enum,
    is_true, label, required, rust_type_validates, type_signature, values_within,
};
use crate::document::pointer::escape;

impl<'a> Walker<'a> {
    pub(super) fn schema(&mut self, po: &str, a: &'a Value, pn: &str, b: &'a Value, at: &At) {
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
                    .impact(Wire::Yes, Source::Yes, "callers may send it after upgrading; a new variant breaks no code: the enum is #[non_exhaustive], so every match outside the crate has a wildcard arm"),
                Position::Response if is_open_enum(a) => Draft::new(
                    ChangeKind::ResponseEnumValueAdded,
                    format!("{}: value {value:?} added", at.label),
                )
                .impact(
                    Wire::Yes,
                    Source::Yes,
                    format!("the old client keeps it as Unrecognized({value:?}); after upgrading it is a new variant, which breaks no code (the enum is #[non_exhaustive]), though code comparing the catch-all's text with {value:?} now sees the variant instead"),
                ),
                Position::Response => Draft::new(ChangeKind::ResponseEnumValueAdded, format!("{}: value {value:?} added", at.label)).impact(
                    Wire::No,
                    Source::Yes,
                    "the old client's enum is closed: a response carrying the value fails to decode; the new variant breaks no code (the enum is #[non_exhaustive])",
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
                        Source::Yes,
                        "the old client never sends it, so the service refuses its requests; code that builds the body still compiles (the struct is #[non_exhaustive]), and fails before sending until it sets the member",
                    ),
                    Position::Request => Draft::new(ChangeKind::OptionalRequestMemberAdded, format!("{} added (optional)", subject(name))).impact(
                        Wire::Yes,
                        Source::Yes,
                        "requests without it are unchanged; the struct is #[non_exhaustive] and its builder leaves the member unset",
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
                            Source::Yes,
                            format!("{why}; the struct gains a field, which breaks no code: it is #[non_exhaustive]"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typify_integer_choices() {
        let ty = |schema: Value| typify_integer(&schema);
        assert_eq!(ty(json!({"type": "integer", "format": "int32"})), "i32");
        assert_eq!(
            ty(json!({"type": "integer", "format": "int32", "minimum": 0})),
            "i32"
        );
        assert_eq!(
            ty(json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 500})),
            "NonZeroU32"
        );
        assert_eq!(ty(json!({"type": "integer"})), "i64");
        assert_eq!(ty(json!({"type": "integer", "minimum": 0})), "u64");
    }
}
