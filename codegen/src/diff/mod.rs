//! What changed between two effective documents, in the terms a client user cares about.
//!
//! [`compare`] walks both documents operation by operation and follows every schema from where
//! it is used, so each change is classified in its position: a new required member of a
//! *request* body breaks old clients, a new required *response* property does not. Every
//! [`Change`] has a kind from the catalogue ([`ChangeKind`]), its location (JSON pointer in the
//! effective document and in the published description), its **wire impact** (does a client
//! built from the old document still work against a server of the new one) and its **source
//! impact** (does Rust code written against the old `creditdata-client` still compile), and its
//! **behaviour** (does that code, unchanged and rebuilt, still do what it did: the headers every
//! call sends, the default readiness gate, the defaults the service applies;
//! `behaviour_changes`).
//!
//! Source impact is decided by rules that mirror the generator (typify's choice of Rust types),
//! and, when the generated code of both sides is given, checked against that code: the code
//! has the last word for every change that names its Rust items, and an incompatible difference
//! of the generated API that no change explains is reported as `generated_code_changed`.
//!
//! The report renders as text, Markdown or JSON (the published shape, see
//! `codegen/CHANGE-REPORT.md`), and suggests the next version of `creditdata-client`.

mod behaviour_changes;
mod compare;
pub mod keep_behaviour;
pub mod keep_names;
pub mod model;
mod pointer;
mod renames;
mod render;
pub mod rust_api;
mod schema;

use std::collections::BTreeSet;

use heck::ToUpperCamelCase;
use serde_json::Value;

pub use model::*;
pub use pointer::published_pointer;
pub use rust_api::RustApi;

/// One side of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The effective document (what the generator saw).
    pub effective: &'a Value,
    /// The published description it was made from, for published pointers and pin checks.
    pub published: Option<&'a Value>,
    /// The generated code (`generated.rs`), to check source impact against.
    pub code: Option<&'a str>,
}

impl<'a> Side<'a> {
    /// A side known only by its effective document.
    pub fn effective(effective: &'a Value) -> Side<'a> {
        Side {
            effective,
            published: None,
            code: None,
        }
    }
}

/// Compares two sides. The report has no version suggestion until
/// [`ChangeReport::with_version`] is given the current one.
pub fn compare(old: &Side<'_>, new: &Side<'_>) -> ChangeReport {
    let renamed = renames::schema_renames(old.effective, new.effective);
    let drafts = compare::Walker::new(old.effective, new.effective, renamed).run();

    let apis = (
        old.code.and_then(RustApi::parse),
        new.code.and_then(RustApi::parse),
    );
    let named: BTreeSet<String> = [old.effective, new.effective]
        .iter()
        .flat_map(|doc| {
            doc.pointer("/components/schemas")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(k, _)| k.to_upper_camel_case())
        })
        .collect();

    let locate = |side: &Side<'_>, pointer: Option<String>| {
        pointer.map(|p| Location {
            published: side
                .published
                .and_then(|published| published_pointer(side.effective, published, &p)),
            effective: p,
        })
    };

    let mut changes: Vec<Change> = drafts
        .into_iter()
        .map(|d| {
            let mut source = d.source;
            let mut reason = d.reason;
            if let (Some(a), Some(b)) = (&apis.0, &apis.1) {
                let verdicts: Vec<(String, bool)> = d
                    .rust
                    .iter()
                    .filter_map(|item| {
                        RustApi::item_breaks(a, b, item, &named).map(|v| (item.clone(), v))
                    })
                    .collect();
                if !verdicts.is_empty() {
                    let broken: Vec<&str> = verdicts
                        .iter()
                        .filter(|(_, v)| *v)
                        .map(|(i, _)| i.as_str())
                        .collect();
                    let checked = if broken.is_empty() {
                        Source::Yes
                    } else {
                        Source::No
                    };
                    if checked != source {
                        // The generated code decides; say so instead of the rule's guess.
                        let wire_part = reason.split("; ").next().unwrap_or_default().to_string();
                        let code_part = match checked {
                            Source::Yes => {
                                "the generated Rust API keeps what existing code uses".to_string()
                            }
                            Source::No => format!(
                                "the generated code changes {} incompatibly",
                                broken.join(", ")
                            ),
                        };
                        reason = format!("{wire_part}; {code_part}");
                        source = checked;
                    }
                }
            }
            Change {
                kind: d.kind,
                summary: d.summary,
                from: d.from,
                to: d.to,
                operations: d.operations.into_iter().collect(),
                old: locate(old, d.old_pointer),
                new: locate(new, d.new_pointer),
                wire: d.wire,
                source,
                behaviour: d.behaviour,
                reason,
                rust: d.rust,
            }
        })
        .collect();
    changes.extend(keep_names::published_names(old, new));
    changes.extend(behaviour_changes::request_headers(old, new));
    changes.extend(behaviour_changes::readiness_gate(old, new));

    let rust_api = match (&apis.0, &apis.1) {
        (Some(a), Some(b)) => {
            let incompatible = RustApi::incompatibilities(a, b);
            // Types that a source-breaking change renames, removes or redefines: a field whose
            // type changes only because it names one of them is that change's consequence.
            let changed_types: BTreeSet<String> = changes
                .iter()
                .filter(|c| c.source == Source::No)
                .flat_map(|c| c.rust.iter())
                .filter_map(|item| item.strip_prefix("types::"))
                .filter(|item| !item.contains('.'))
                .map(str::to_string)
                .collect();
            for line in &incompatible {
                let key = line.split(": ").next().unwrap_or(line);
                let explained = changes
                    .iter()
                    .any(|c| c.source == Source::No && c.rust.iter().any(|item| covers(item, key)))
                    || line
                        .split(": ")
                        .nth(1)
                        .is_some_and(|detail| mentions_any(detail, &changed_types));
                if !explained {
                    changes.push(Change {
                        kind: ChangeKind::GeneratedCodeChanged,
                        summary: line.clone(),
                        from: None,
                        to: None,
                        operations: Vec::new(),
                        old: None,
                        new: None,
                        wire: Wire::Yes,
                        source: Source::No,
                        behaviour: Behaviour::Same,
                        reason: "the generated Rust API changed incompatibly and no change of the \
                                 description explains it: a generator change, or a change the \
                                 catalogue does not model"
                            .into(),
                        rust: vec![key.to_string()],
                    });
                }
            }
            RustCheck {
                checked: true,
                incompatible,
            }
        }
        _ => RustCheck {
            checked: false,
            incompatible: Vec::new(),
        },
    };

    changes.sort_by(|a, b| {
        let order = |c: &Change| ChangeKind::ALL.iter().position(|k| *k == c.kind);
        let at = |c: &Change| {
            c.new
                .as_ref()
                .or(c.old.as_ref())
                .map(|l| l.effective.clone())
        };
        (a.group(), order(a), at(a), &a.summary).cmp(&(b.group(), order(b), at(b), &b.summary))
    });

    let summary = summarize(&changes);
    ChangeReport {
        schema_version: SCHEMA_VERSION,
        summary,
        semver: None,
        changes,
        pins: keep_names::pins(new.effective, new.published),
        rust_api,
        published_available: Availability {
            old: old.published.is_some(),
            new: new.published.is_some(),
        },
    }
}

/// Whether a text names one of these types (as a whole identifier).
fn mentions_any(text: &str, types: &BTreeSet<String>) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| types.contains(word))
}

/// Whether the Rust item a change names covers an item of the generated-API comparison.
fn covers(item: &str, key: &str) -> bool {
    item == key
        || [".", "::"].iter().any(|sep| {
            key.starts_with(&format!("{item}{sep}")) || item.starts_with(&format!("{key}{sep}"))
        })
}

fn summarize(changes: &[Change]) -> Summary {
    let count = |g: Group| changes.iter().filter(|c| c.group() == g).count();
    Summary {
        changes: changes.len(),
        wire: changes.iter().map(|c| c.wire).max().unwrap_or(Wire::Yes),
        source: changes
            .iter()
            .map(|c| c.source)
            .max()
            .unwrap_or(Source::Yes),
        behaviour: changes
            .iter()
            .map(|c| c.behaviour)
            .max()
            .unwrap_or(Behaviour::Same),
        breaking: changes.iter().any(Change::is_breaking),
        breaks_deployed_clients: count(Group::BreaksDeployedClients),
        degrades_deployed_clients: count(Group::DegradesDeployedClients),
        changes_behaviour: count(Group::ChangesBehaviour),
        breaks_rust_code: count(Group::BreaksRustCode),
        compatible: count(Group::Compatible),
    }
}

impl ChangeReport {
    /// The report without the behaviour the workspace pins in its overlays (the `api-version`
    /// each operation sends, the default readiness gate): for a comparison of published
    /// descriptions without the overlays (`cargo xtask fetch`'s preview), where every
    /// operation would seem to follow `info.version` and no pin is there to hold it. `drift`
    /// and `regen` compare with the pins and report what really moves.
    pub fn without_pinned_behaviour(mut self) -> ChangeReport {
        self.changes.retain(|c| {
            let pinned = match c.kind {
                ChangeKind::ReadinessGateWidened | ChangeKind::ReadinessGateNarrowed => true,
                ChangeKind::RequestHeaderValueChanged => c.summary.contains("api-version"),
                _ => false,
            };
            !pinned
        });
        self.summary = summarize(&self.changes);
        self
    }

    /// Adds the suggested next version of `creditdata-client`, whose current version is
    /// `current` (`MAJOR.MINOR.PATCH`).
    ///
    /// Cargo's rules: the left-most non-zero component is the one that signals breakage. So in
    /// 0.x, a breaking change bumps the minor version and everything else the patch version; from
    /// 1.0 on, breaking bumps the major, additions and deprecations the minor (a new
    /// `#[deprecated]` is a minor change, as cargo-semver-checks classifies it), the rest the
    /// patch. A change of what unchanged code does (behaviour `changed`) is breaking here: code
    /// that compiles and runs and decides differently is an incompatible change of the API's
    /// meaning, which only a major version (0.x: minor) may bring, so a user's `^` requirement
    /// never picks it up unasked.
    pub fn with_version(mut self, current: &str) -> Result<ChangeReport, String> {
        let parts: Vec<u64> = current
            .split('.')
            .map(|p| p.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("version {current:?} is not MAJOR.MINOR.PATCH"))?;
        let [major, minor, patch] = parts.as_slice() else {
            return Err(format!("version {current:?} is not MAJOR.MINOR.PATCH"));
        };
        let (major, minor, patch) = (*major, *minor, *patch);
        let adds = self
            .changes
            .iter()
            .any(|c| c.kind.name().ends_with("_added") || c.kind.name().ends_with("_deprecated"));
        let (bump, suggested, rule) = if self.is_empty() {
            (
                Bump::None,
                current.to_string(),
                "no change: no release needed".to_string(),
            )
        } else if major == 0 {
            if self.is_breaking() {
                (
                    Bump::Minor,
                    format!("0.{}.0", minor + 1),
                    "0.x: a breaking change (or one of what existing code does) bumps the minor version; Cargo treats 0.MINOR as the major".to_string(),
                )
            } else {
                (
                    Bump::Patch,
                    format!("0.{minor}.{}", patch + 1),
                    "0.x: compatible changes, additions included, bump the patch version"
                        .to_string(),
                )
            }
        } else if self.is_breaking() {
            (
                Bump::Major,
                format!("{}.0.0", major + 1),
                "a breaking change (or one of what existing code does) bumps the major version"
                    .to_string(),
            )
        } else if adds {
            (
                Bump::Minor,
                format!("{major}.{}.0", minor + 1),
                "compatible additions and deprecations bump the minor version".to_string(),
            )
        } else {
            (
                Bump::Patch,
                format!("{major}.{minor}.{}", patch + 1),
                "compatible changes without additions bump the patch version".to_string(),
            )
        };
        self.semver = Some(Semver {
            current: current.to_string(),
            suggested,
            bump,
            rule,
        });
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(extra_op: bool, status_values: &[&str], with_prop: bool) -> Value {
        let mut paths = json!({
            "/v1/sessions/{id}": {"get": {"operationId": "GetSession", "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ], "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}}}}}
        });
        if extra_op {
            paths["/v1/x"] = json!({"post": {"operationId": "MakeX", "responses": {"201": {"description": "Created"}}}});
        }
        let mut session = json!({"type": "object", "properties": {"id": {"type": "string"}, "status": {"$ref": "#/components/schemas/Status"}}});
        if with_prop {
            session["properties"]["nickname"] = json!({"type": "string", "nullable": true});
        }
        json!({
            "openapi": "3.0.3", "info": {"title": "t", "version": "1.0"}, "paths": paths,
            "components": {"schemas": {"Status": {"type": "string", "enum": status_values, "x-creditdata-open-enum": true}, "Session": session}}
        })
    }

    fn kinds(report: &ChangeReport) -> Vec<(ChangeKind, Wire, Source)> {
        report
            .changes
            .iter()
            .map(|c| (c.kind, c.wire, c.source))
            .collect()
    }

    #[test]
    fn additions_are_classified_by_position() {
        let (a, b) = (doc(false, &["A"], false), doc(true, &["A", "B"], true));
        let report = compare(&Side::effective(&a), &Side::effective(&b));
        assert_eq!(
            kinds(&report),
            vec![
                (ChangeKind::OperationAdded, Wire::Yes, Source::Yes),
                (ChangeKind::ResponsePropertyAdded, Wire::Yes, Source::Yes),
                (ChangeKind::ResponseEnumValueAdded, Wire::Yes, Source::Yes),
            ]
        );
        let added = &report.changes[2];
        assert_eq!(added.operations, vec!["GetSession"]);
        assert_eq!(
            added.new.as_ref().unwrap().effective,
            "/components/schemas/Status/enum/1"
        );
        assert!(
            added.reason.contains("Unrecognized(\"B\")"),
            "{}",
            added.reason
        );
        assert_eq!(
            report.exit_code(),
            3,
            "additive for the wire, additive for Rust"
        );
    }

    #[test]
    fn removals_break() {
        let (a, b) = (doc(true, &["A", "B"], true), doc(false, &["A"], false));
        let report = compare(&Side::effective(&a), &Side::effective(&b));
        assert!(report.is_breaking());
        assert!(
            kinds(&report).contains(&(ChangeKind::OperationRemoved, Wire::No, Source::No)),
            "{:?}",
            kinds(&report)
        );
        assert!(kinds(&report).contains(&(
            ChangeKind::ResponsePropertyRemoved,
            Wire::Degraded,
            Source::No
        )));
        assert!(kinds(&report).contains(&(
            ChangeKind::ResponseEnumValueRemoved,
            Wire::Yes,
            Source::No
        )));
    }

    #[test]
    fn a_parameter_default_that_changes_changes_behaviour_and_the_release_is_breaking() {
        let with_default = |default: Option<Value>| {
            let mut d = doc(false, &["A"], false);
            let mut schema = json!({"type": "integer"});
            if let Some(default) = default {
                schema["default"] = default;
            }
            d["paths"]["/v1/sessions/{id}"]["get"]["parameters"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "take", "in": "query", "schema": schema}));
            d
        };
        let (a, b) = (with_default(Some(json!(50))), with_default(Some(json!(10))));
        let report = compare(&Side::effective(&a), &Side::effective(&b));
        assert_eq!(
            kinds(&report),
            vec![(ChangeKind::ParameterDefaultChanged, Wire::Yes, Source::Yes)]
        );
        let change = &report.changes[0];
        assert_eq!(change.behaviour, Behaviour::Changed);
        assert_eq!(
            (change.from.as_deref(), change.to.as_deref()),
            (Some("50"), Some("10"))
        );
        assert_eq!(change.group(), Group::ChangesBehaviour);
        assert!(report.is_breaking());
        assert_eq!(report.summary.behaviour, Behaviour::Changed);
        assert_eq!(report.summary.changes_behaviour, 1);
        assert_eq!(report.exit_code(), 4);
        let semver = |current| {
            report
                .clone()
                .with_version(current)
                .unwrap()
                .semver
                .unwrap()
                .suggested
        };
        assert_eq!(semver("0.4.2"), "0.5.0", "never a patch");
        assert_eq!(semver("1.4.2"), "2.0.0");
        let json: Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["changes"][0]["behaviour"], "changed");
        assert_eq!(json["summary"]["changes_behaviour"], 1);
        // A default stated where there was none, or dropped, is reported too.
        let none = with_default(None);
        let added = compare(&Side::effective(&none), &Side::effective(&a));
        assert_eq!(added.changes[0].from.as_deref(), Some("(none)"));
        assert!(compare(&Side::effective(&a), &Side::effective(&a)).is_empty());
    }

    #[test]
    fn a_preview_of_published_descriptions_leaves_the_pinned_behaviour_out() {
        let a = doc(false, &["A"], false);
        let mut b = a.clone();
        b["info"]["version"] = json!("1.1");
        let report = compare(&Side::effective(&a), &Side::effective(&b));
        assert!(
            report
                .changes
                .iter()
                .any(|c| c.kind == ChangeKind::RequestHeaderValueChanged),
            "without pins the header follows info.version"
        );
        let preview = report.without_pinned_behaviour();
        assert_eq!(
            kinds(&preview),
            vec![(ChangeKind::DocumentVersionChanged, Wire::Yes, Source::Yes)]
        );
        assert!(!preview.is_breaking());
        assert_eq!(preview.summary.changes_behaviour, 0);
    }

    #[test]
    fn identical_documents_report_nothing_and_suggest_no_release() {
        let d = doc(true, &["A"], true);
        let report = compare(&Side::effective(&d), &Side::effective(&d))
            .with_version("0.1.0")
            .unwrap();
        assert!(report.is_empty());
        assert_eq!(report.exit_code(), 0);
        assert_eq!(report.semver.unwrap().bump, Bump::None);
    }

    #[test]
    fn semver_follows_cargo_rules() {
        let (a, b) = (doc(false, &["A"], false), doc(true, &["A"], false));
        let additive = compare(&Side::effective(&a), &Side::effective(&b));
        assert_eq!(additive.exit_code(), 3);
        assert_eq!(
            additive
                .clone()
                .with_version("0.4.2")
                .unwrap()
                .semver
                .unwrap()
                .suggested,
            "0.4.3"
        );
        assert_eq!(
            additive
                .with_version("1.4.2")
                .unwrap()
                .semver
                .unwrap()
                .suggested,
            "1.5.0"
        );
        let breaking = compare(&Side::effective(&b), &Side::effective(&a));
        assert_eq!(
            breaking
                .clone()
                .with_version("0.4.2")
                .unwrap()
                .semver
                .unwrap()
                .suggested,
            "0.5.0"
        );
        assert_eq!(
            breaking
                .clone()
                .with_version("1.4.2")
                .unwrap()
                .semver
                .unwrap()
                .suggested,
            "2.0.0"
        );
        assert!(breaking.with_version("1.x").is_err());
    }
}
