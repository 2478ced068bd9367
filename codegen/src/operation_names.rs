//! Names for operations the description publishes without an operationId.
//!
//! progenitor names every client method and builder after the operationId and refuses an
//! operation without one; the vendor publishes most of its operations without one. This stage
//! runs right after the overlays: every operation that still has no operationId gets one
//! derived from its method and path, in the style of the service's own names, and is marked
//! with [`DERIVED_OPERATION_ID_MARK`] so the report can say the name is ours.
//! `cargo xtask regen` pins each derived name in `overlays/90-keep-names.overlay.yaml`
//! ([`crate::diff::keep_names`]): from then on the name no longer depends on this rule, and a
//! vendor that later publishes its own operationId does not rename the Rust method.
//!
//! # The rule
//!
//! The path is read segment by segment; `{parameters}` name one item of the collection before
//! them, and version segments (`v1`) are left out.
//!
//! 1. **Context.** A path that starts with `collection/{id}` and goes deeper is read below that
//!    item: the service's datasets all live below a session, and are named `GetScores`, not
//!    `GetSessionScores`.
//! 2. **Actions.** `POST …/actions/{verb-phrase}` is named by its verb phrase (and the resource
//!    before `actions`, if any): `ExtendCustomerInputDeadline`.
//! 3. **Verb.** Otherwise the HTTP method gives the verb: `GET` Get, `POST` Create (Post when the
//!    path ends with a parameter), `PUT` Replace, `PATCH` Update, `DELETE` Delete, and `Head`,
//!    `Options`, `Trace`.
//! 4. **Resource.** Each literal segment follows in PascalCase. A segment is made singular when
//!    it names one item (a parameter follows it: `source-files/{id}/content` gives
//!    `SourceFileContent`) or qualifies another collection (`account-statements/transactions`
//!    gives `AccountStatementTransactions`); the last segment is singular for Create (`POST
//!    /v1/sessions` gives `CreateSession`). Plurals are made singular by the regular English
//!    rules (`-ies` → `-y`; `-sses`, `-shes`, `-ches`, `-xes` lose `-es`; `-s` is dropped, except
//!    after `s`, `u` or `i`).
//!
//! # Collisions
//!
//! A name is taken when an operationId of the document, or a name derived before it (in
//! document order), gives the same Rust method or builder (progenitor's `sanitize`), or when it
//! is an inherent method of the generated `Client`. A derived name that is taken is replaced by
//! the first free one of: the name with the context kept (`GetSessionScores`), the name of the
//! whole path, version included (`CreateV2Session`), then each of the three with `2`, `3`, …
//! appended. Published names are never changed.

use std::collections::HashSet;

use heck::ToUpperCamelCase;
use serde_json::Value;

use crate::document;
use crate::preflight::names::{self, CLIENT_METHODS};

/// On an operation: the operationId this stage derived (the pin `regen` writes carries it too).
pub const DERIVED_OPERATION_ID_MARK: &str = "x-creditdata-derived-operation-id";

/// One operation named by this stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedName {
    /// Lowercase, e.g. `get`.
    pub method: String,
    pub path: String,
    /// The JSON pointer of the operation.
    pub pointer: String,
    /// The name given.
    pub name: String,
    /// What the rule gave before a collision made it `name` (equal to `name` without one).
    pub rule: String,
}

impl DerivedName {
    /// One line for people: `GET /v1/x: no operationId; named GetX (derived from method and path)`.
    pub fn note(&self) -> String {
        let how = if self.name == self.rule {
            "derived from method and path".to_string()
        } else {
            format!(
                "derived from method and path; {} was taken by another operation",
                self.rule
            )
        };
        format!(
            "{} {}: no operationId; named {} ({how})",
            self.method.to_ascii_uppercase(),
            self.path,
            self.name
        )
    }
}

/// Gives every operation of `doc` without an operationId the derived one, with the mark.
/// Returns what it named, in document order.
pub fn name_operations(doc: &mut Value) -> Vec<DerivedName> {
    let derived = derive(doc);
    for d in &derived {
        if let Some(Value::Object(op)) = doc.pointer_mut(&d.pointer) {
            // A `null` operationId is read as absent (as serde does); replacing it keeps its place.
            op.insert("operationId".into(), Value::String(d.name.clone()));
            op.insert(
                DERIVED_OPERATION_ID_MARK.into(),
                Value::String(d.name.clone()),
            );
        }
    }
    derived
}

/// The names [`name_operations`] would give, without changing `doc`.
pub fn derive(doc: &Value) -> Vec<DerivedName> {
    let mut taken = Taken::of(doc);
    let mut out = Vec::new();
    for op in document::operations(doc) {
        let Some(map) = op.operation.as_object() else {
            continue;
        };
        if map.get("operationId").is_some_and(|id| !id.is_null()) {
            continue;
        }
        let candidates = candidates(op.method, op.path);
        let rule = candidates[0].clone();
        let name = taken.claim(&candidates);
        out.push(DerivedName {
            method: op.method.to_string(),
            path: op.path.to_string(),
            pointer: op.pointer(),
            name,
            rule,
        });
    }
    out
}

/// The Rust names already in use, as progenitor derives them from operationIds.
pub(crate) struct Taken(HashSet<String>);

impl Taken {
    /// The names of every operationId of `doc` (strings only; preflight reports the rest).
    fn of(doc: &Value) -> Taken {
        Taken::of_ids(
            document::operations(doc)
                .filter_map(|op| op.operation.get("operationId").and_then(Value::as_str)),
        )
    }

    /// The names of these operationIds.
    pub(crate) fn of_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Taken {
        let mut taken = Taken(HashSet::new());
        for id in ids {
            taken.insert(id);
        }
        taken
    }

    fn insert(&mut self, id: &str) {
        let (method, builder) = names::operation_idents(id);
        self.0.insert(method);
        self.0.insert(builder);
    }

    fn is_free(&self, id: &str) -> bool {
        let (method, builder) = names::operation_idents(id);
        !self.0.contains(&method)
            && !self.0.contains(&builder)
            && !CLIENT_METHODS.contains(&method.as_str())
    }

    /// The first free name of `candidates`, then of each with 2, 3, … appended; now taken.
    pub(crate) fn claim(&mut self, candidates: &[String]) -> String {
        let mut n = 1;
        loop {
            for base in candidates {
                let candidate = if n == 1 {
                    base.clone()
                } else {
                    format!("{base}{n}")
                };
                if self.is_free(&candidate) {
                    self.insert(&candidate);
                    return candidate;
                }
            }
            n += 1;
        }
    }
}

/// The rule's name for `method` (any case) and `path`, before collisions: `GET
/// /v1/sessions/{sessionId}/employment-histories` gives `GetEmploymentHistories`.
pub fn operation_name(method: &str, path: &str) -> String {
    let segments = segments(path, false);
    let below_context = match segments.as_slice() {
        [Segment::Literal(_), Segment::Parameter, rest @ ..] if !rest.is_empty() => rest,
        all => all,
    };
    name_of(method, below_context)
}

/// The rule's name, then the alternatives a collision tries in order: with the context kept
/// (`GetSessionScores`), then with the version segments too (`GetV1SessionScores`). Names that
/// repeat the one before are left out.
pub fn candidates(method: &str, path: &str) -> Vec<String> {
    let mut out = vec![
        operation_name(method, path),
        name_of(method, &segments(path, false)),
        name_of(method, &segments(path, true)),
    ];
    out.dedup();
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment<'a> {
    Literal(&'a str),
    Parameter,
}

fn segments(path: &str, with_versions: bool) -> Vec<Segment<'_>> {
    path.split('/')
        .filter(|s| !s.is_empty() && (with_versions || !is_version(s)))
        .map(|s| {
            if s.contains('{') {
                Segment::Parameter
            } else {
                Segment::Literal(s)
            }
        })
        .collect()
}

fn name_of(method: &str, segments: &[Segment<'_>]) -> String {
    let method = method.to_ascii_lowercase();
    if method == "post"
        && let [
            before @ ..,
            Segment::Literal("actions"),
            Segment::Literal(action),
        ] = segments
    {
        let action = action.to_upper_camel_case();
        if action.starts_with(|c: char| c.is_alphabetic()) {
            return action + &resource(before, true);
        }
    }
    let ends_with_item = matches!(segments.last(), Some(Segment::Parameter));
    let verb = match method.as_str() {
        "get" => "Get",
        "post" if ends_with_item => "Post",
        "post" => "Create",
        "put" => "Replace",
        "patch" => "Update",
        "delete" => "Delete",
        other => return other.to_upper_camel_case() + &resource(segments, false),
    };
    let name = verb.to_string() + &resource(segments, verb == "Create");
    if name == verb {
        // A path with no literal segment (`/`, `/v1`): the service root.
        name + "Root"
    } else {
        name
    }
}

/// The literal segments in PascalCase, each singular where it names one item or qualifies
/// another collection; the last one also when `singular_last`.
fn resource(segments: &[Segment<'_>], singular_last: bool) -> String {
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        let Segment::Literal(text) = segment else {
            continue;
        };
        let one = match segments.get(i + 1) {
            Some(Segment::Parameter) => true,
            Some(Segment::Literal(next)) => singular(next) != *next,
            None => singular_last,
        };
        let word = if one {
            singular(text)
        } else {
            (*text).to_string()
        };
        out.push_str(&word.to_upper_camel_case());
    }
    out
}

/// `text` with its last word made singular by the regular English rules.
fn singular(text: &str) -> String {
    let start = text.rfind(|c: char| !c.is_alphabetic()).map_or(0, |i| {
        i + text[i..].chars().next().map_or(1, char::len_utf8)
    });
    let (head, word) = text.split_at(start);
    let lower = word.to_ascii_lowercase();
    let keep = |n: usize| format!("{head}{}", &word[..word.len() - n]);
    if lower.len() > 3 && lower.ends_with("ies") {
        format!("{}y", keep(3))
    } else if ["sses", "shes", "ches", "xes"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        keep(2)
    } else if lower.len() > 1
        && lower.ends_with('s')
        && !["ss", "us", "is"].iter().any(|end| lower.ends_with(end))
    {
        keep(1)
    } else {
        text.to_string()
    }
}

/// `v1`, `V2`: a version segment.
fn is_version(segment: &str) -> bool {
    let mut chars = segment.chars();
    matches!(chars.next(), Some('v' | 'V'))
        && !segment[1..].is_empty()
        && segment[1..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rule_reads_like_the_service() {
        let cases = [
            ("get", "/v1/sessions", "GetSessions"),
            ("post", "/v1/sessions", "CreateSession"),
            ("get", "/v1/sessions/{sessionId}", "GetSession"),
            ("patch", "/v1/sessions/{sessionId}", "UpdateSession"),
            ("delete", "/v1/sessions/{sessionId}", "DeleteSession"),
            ("put", "/v1/sessions/{sessionId}", "ReplaceSession"),
            ("post", "/v1/sessions/{sessionId}", "PostSession"),
            (
                "post",
                "/v1/sessions/{sessionId}/actions/extend-customer-input-deadline",
                "ExtendCustomerInputDeadline",
            ),
            (
                "post",
                "/v1/sessions/{sessionId}/source-files/{id}/actions/refresh",
                "RefreshSourceFile",
            ),
            ("get", "/v1/consumer/packages", "GetConsumerPackages"),
            (
                "get",
                "/v1/sessions/{sessionId}/account-statements/transactions/excel",
                "GetAccountStatementTransactionsExcel",
            ),
            (
                "get",
                "/v1/sessions/{sessionId}/employment-histories",
                "GetEmploymentHistories",
            ),
            ("head", "/v1/sessions/{sessionId}", "HeadSession"),
            ("get", "/", "GetRoot"),
            ("get", "/v2", "GetRoot"),
            ("get", "/v1/addresses/{id}", "GetAddress"),
            ("get", "/v1/status", "GetStatus"),
            ("get", "/v1/file.json", "GetFileJson"),
        ];
        for (method, path, name) in cases {
            assert_eq!(operation_name(method, path), name, "{method} {path}");
        }
    }

    #[test]
    fn singular_keeps_what_is_not_a_plural() {
        for (plural, one) in [
            ("histories", "history"),
            ("source-files", "source-file"),
            ("boxes", "box"),
            ("matches", "match"),
            ("addresses", "address"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("class", "class"),
            ("s", "s"),
            ("excel", "excel"),
            ("Größes", "Größe"),
        ] {
            assert_eq!(singular(plural), one);
        }
    }

    #[test]
    fn derived_names_yield_to_published_ones_and_to_each_other() {
        let mut doc = json!({"paths": {
            "/v1/sessions/{id}/scores": {
                "get": {"operationId": "GetScores"},
                "post": {}
            },
            "/v1/things/{id}/scores": {"get": {}},
            "/v1/other/{id}/scores": {"get": {"operationId": null}},
            "/v1/sessions": {"post": {"operationId": "create_session"}, "get": {}},
            "/v1/session": {"post": {}},
            "/v1/new": {"get": {}}
        }});
        let derived = name_operations(&mut doc);
        let names: Vec<(&str, &str)> = derived
            .iter()
            .map(|d| (d.rule.as_str(), d.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("CreateScore", "CreateScore"),
                ("GetScores", "GetThingScores"),
                ("GetScores", "GetOtherScores"),
                ("GetSessions", "GetSessions"),
                // `create_session` is the same Rust method; the context changes nothing here.
                ("CreateSession", "CreateV1Session"),
                ("GetNew", "GetNew"),
            ]
        );
        assert_eq!(
            doc.pointer("/paths/~1v1~1things~1{id}~1scores/get")
                .unwrap(),
            &json!({"operationId": "GetThingScores", DERIVED_OPERATION_ID_MARK: "GetThingScores"})
        );
        assert!(
            derived[1].note().contains("GetScores was taken"),
            "{}",
            derived[1].note()
        );
        assert_eq!(derive(&doc), vec![], "everything is named now");
    }

    #[test]
    fn a_client_method_name_is_never_derived() {
        let doc = json!({"paths": {"/new": {"get": {}}, "/x": {"get": {"operationId": "GetNew"}}}});
        assert_eq!(
            derive(&doc)[0].name,
            "GetNew2",
            "no context, no version to add"
        );
        assert!(!Taken(HashSet::new()).is_free("New"));
    }
}
