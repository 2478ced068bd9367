//! Changes of what existing code does, with no line of it changed: the headers every call sends
//! and the default readiness gate. Neither is a change of the wire contract or of the Rust API,
//! so the walk over the documents does not see them; both change decisions.
//!
//! - [`request_headers`]: a header value a generated `send_with()` (`send()` before) sets as a constant (`api-version`,
//!   `Accept`, a `Content-Type`), read from the generated code of both sides when it is given,
//!   else the `api-version` each operation is pinned to ([`crate::behaviour`]).
//! - [`readiness_gate`]: a dataset that joins or leaves the default readiness gate (its pin
//!   moved, or no pins at all and a new dataset), or a gated
//!   dataset whose answer starts or stops reporting its providers somewhere
//!   ([`crate::readiness`]). A new value of a provider-status enum is not one: the client counts a
//!   status it does not know as failed before and after, so the same answer decides the same.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;
use syn::visit::Visit;

use super::model::{Behaviour, Change, ChangeKind, Location, Source, Wire};
use super::{Side, published_pointer};
use crate::behaviour::{api_version, default_gate};
use crate::datasets::{self, SessionDataset};
use crate::document::{self as openapi};

/// What is shown for a header a side does not send.
const ABSENT: &str = "(none)";

/// Header name → value, for each builder (`GetScores`) whose `send()` sets it as a constant.
type Headers = BTreeMap<String, BTreeMap<String, String>>;

/// The constant headers of every builder's `send()` in `code`, or `None` when it does not parse.
pub fn constant_headers(code: &str) -> Option<Headers> {
    let file = syn::parse_file(code).ok()?;
    let mut out = Headers::new();
    for item in &file.items {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        if module.ident != "builder" {
            continue;
        }
        for item in module.content.iter().flat_map(|(_, items)| items) {
            let syn::Item::Impl(imp) = item else {
                continue;
            };
            if imp.trait_.is_some() {
                continue;
            }
            let syn::Type::Path(ty) = &*imp.self_ty else {
                continue;
            };
            let Some(builder) = ty.path.segments.last().map(|s| s.ident.to_string()) else {
                continue;
            };
            for impl_item in &imp.items {
                // `send_with` since each request goes through the runtime's one door
                // (`call_methods.rs`); `send` in code generated before.
                if let syn::ImplItem::Fn(method) = impl_item
                    && (method.sig.ident == "send_with" || method.sig.ident == "send")
                {
                    let mut found = HeaderCalls::default();
                    found.visit_block(&method.block);
                    if !found.headers.is_empty() {
                        out.entry(builder.clone())
                            .or_default()
                            .extend(found.headers);
                    }
                }
            }
        }
    }
    Some(out)
}

/// `.header(NAME, VALUE)` calls whose name and value are both constants.
#[derive(Default)]
struct HeaderCalls {
    headers: BTreeMap<String, String>,
}

impl<'ast> Visit<'ast> for HeaderCalls {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        syn::visit::visit_expr_method_call(self, call);
        if call.method != "header" || call.args.len() != 2 {
            return;
        }
        let (Some(name), Some(value)) = (header_name(&call.args[0]), literal(&call.args[1])) else {
            return;
        };
        self.headers.insert(name, value);
    }
}

/// A header name: `::reqwest::header::ACCEPT` (`accept`), or a literal given to `from_static`.
fn header_name(expr: &syn::Expr) -> Option<String> {
    if let syn::Expr::Path(path) = expr {
        let last = path.path.segments.last()?.ident.to_string();
        return Some(last.to_ascii_lowercase().replace('_', "-"));
    }
    literal(expr).map(|name| name.to_ascii_lowercase())
}

/// The string literal an expression makes a header from (`HeaderValue::from_static("1.0")`,
/// possibly in a `const { }` block), if it is one.
fn literal(expr: &syn::Expr) -> Option<String> {
    #[derive(Default)]
    struct Literal(Option<String>, usize);
    impl<'ast> Visit<'ast> for Literal {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            syn::visit::visit_expr_call(self, call);
            let from_static = matches!(&*call.func, syn::Expr::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "from_static"));
            if let (
                true,
                Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                })),
            ) = (from_static, call.args.first())
            {
                self.0 = Some(text.value());
                self.1 += 1;
            }
        }
    }
    let mut found = Literal::default();
    found.visit_expr(expr);
    (found.1 == 1).then_some(found.0).flatten()
}

/// The `api-version` each operation of `side` sends, by builder name, from its pins.
fn pinned_headers(effective: &Value) -> Headers {
    openapi::operations(effective)
        .filter_map(|op| {
            let id = op.operation.get("operationId").and_then(Value::as_str)?;
            Some((
                id.to_upper_camel_case(),
                BTreeMap::from([(
                    "api-version".to_string(),
                    api_version(effective, op.operation).to_string(),
                )]),
            ))
        })
        .collect()
}

/// The operationId of each builder of `effective`.
fn operation_ids(effective: &Value) -> BTreeMap<String, String> {
    openapi::operations(effective)
        .filter_map(|op| {
            let id = op.operation.get("operationId").and_then(Value::as_str)?;
            Some((id.to_upper_camel_case(), id.to_string()))
        })
        .collect()
}

/// `request_header_value_changed` changes: for each (header, old value, new value), the
/// operations present on both sides whose constant header moved.
pub fn request_headers(old: &Side<'_>, new: &Side<'_>) -> Vec<Change> {
    let from_code = (
        old.code.and_then(constant_headers),
        new.code.and_then(constant_headers),
    );
    let (before, after) = match from_code {
        (Some(a), Some(b)) => (a, b),
        _ => (pinned_headers(old.effective), pinned_headers(new.effective)),
    };
    let ids = operation_ids(new.effective);
    let mut moved: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for (builder, new_headers) in &after {
        let Some(old_headers) = before.get(builder) else {
            continue;
        };
        let names: BTreeSet<&String> = old_headers.keys().chain(new_headers.keys()).collect();
        for name in names {
            let (a, b) = (old_headers.get(name), new_headers.get(name));
            if a != b {
                let shown = |v: Option<&String>| v.cloned().unwrap_or_else(|| ABSENT.into());
                moved
                    .entry((name.clone(), shown(a), shown(b)))
                    .or_default()
                    .push(builder.clone());
            }
        }
    }
    moved
        .into_iter()
        .map(|((header, from, to), builders)| {
            let operations: Vec<String> = builders
                .iter()
                .map(|b| ids.get(b).cloned().unwrap_or_else(|| b.clone()))
                .collect();
            let reason = if header == "api-version" {
                format!(
                    "calls that compile unchanged now ask for version {to} of the API, and the \
                     service answers each request in the version it asks for \
                     (info.x-creditdata-assumption): the same call may get another answer. An \
                     api-version moves only when its pin does (`cargo xtask regen \
                     --adopt-behaviour`, or a pin edited): a breaking release of creditdata-client"
                )
            } else {
                format!(
                    "every call now sends {header}: {to} instead of {from}, with no line of the \
                     caller's changed; the service may answer it differently"
                )
            };
            Change {
                kind: ChangeKind::RequestHeaderValueChanged,
                summary: format!(
                    "header {header} sent by {} operation(s): {from} → {to}",
                    operations.len()
                ),
                from: Some(from),
                to: Some(to),
                rust: operations
                    .iter()
                    .map(|id| format!("Client::{}", id.to_snake_case()))
                    .collect(),
                operations,
                old: None,
                new: None,
                wire: Wire::Yes,
                source: Source::Yes,
                behaviour: Behaviour::Changed,
                reason,
            }
        })
        .collect()
}

/// Where a dataset's answer reports its providers: `sources[]`, `summary.status`.
fn judged(dataset: &SessionDataset) -> BTreeSet<String> {
    let lists = dataset
        .reporting
        .providers
        .iter()
        .map(|list| format!("{}[].status", list.property));
    let statuses = dataset
        .reporting
        .statuses
        .iter()
        .map(|status| format!("{}.status", status.property));
    lists.chain(statuses).collect()
}

/// The datasets of `effective` and whether the default gate judges each (its pin: a gated
/// dataset is read by default even once deprecated), with where each reports its providers.
fn gated(effective: &Value) -> BTreeMap<String, (SessionDataset, bool)> {
    let Ok(datasets) = datasets::session_datasets(effective) else {
        return BTreeMap::new();
    };
    let gate = default_gate(effective, &datasets);
    datasets
        .into_iter()
        .map(|d| {
            let in_gate = gate.get(&d.name).copied().unwrap_or(false);
            (d.name.clone(), (d, in_gate))
        })
        .collect()
}

/// `readiness_gate_widened` and `readiness_gate_narrowed` changes.
pub fn readiness_gate(old: &Side<'_>, new: &Side<'_>) -> Vec<Change> {
    let (before, after) = (gated(old.effective), gated(new.effective));
    let mut out = Vec::new();
    for (name, (dataset, in_after)) in &after {
        let was = before.get(name);
        let in_before = was.is_some_and(|(_, gated)| *gated);
        let pointer = format!(
            "/paths/{}/get",
            crate::document::pointer::escape(&dataset.path)
        );
        let location = |side: &Side<'_>| Location {
            published: side
                .published
                .and_then(|doc| published_pointer(side.effective, doc, &pointer)),
            effective: pointer.clone(),
        };
        let rust = vec![format!("session_datasets::Dataset::{}", dataset.variant())];
        let change = |kind: ChangeKind, summary: String, reason: String| Change {
            kind,
            summary,
            from: None,
            to: None,
            operations: vec![dataset.operation_id.clone()],
            old: was.map(|_| location(old)),
            new: Some(location(new)),
            wire: Wire::Yes,
            source: Source::Yes,
            behaviour: Behaviour::Changed,
            reason,
            rust: rust.clone(),
        };
        let everywhere = "wait_for_data, readiness().is_complete() and the CLI (sessions wait, \
                          datasets all, export's complete) when the caller names no datasets";
        match (in_before, *in_after) {
            (false, true) => out.push(change(
                ChangeKind::ReadinessGateWidened,
                format!("the dataset {name} joins the default readiness gate"),
                format!(
                    "{everywhere} now also wait for and judge {name}: a session unchanged code \
                     decided on may now wait longer or count as incomplete. {}",
                    if was.is_none() {
                        "A dataset a release adds stays out of the gate while \
                         overlays/91-keep-behaviour.overlay.yaml pins the gate (cargo xtask regen \
                         writes it)"
                    } else {
                        "The gate moves only when its pins do (cargo xtask regen \
                         --adopt-behaviour): a breaking release of creditdata-client"
                    }
                ),
            )),
            (true, false) => out.push(change(
                ChangeKind::ReadinessGateNarrowed,
                format!("the dataset {name} leaves the default readiness gate"),
                format!(
                    "{everywhere} no longer wait for or judge {name}: unchanged code may decide \
                     without its data. The gate moves only when its pins do (cargo xtask regen \
                     --adopt-behaviour): a breaking release of creditdata-client"
                ),
            )),
            (true, true) => {
                let (a, b) = (judged(&was.expect("gated before").0), judged(dataset));
                if a == b {
                    continue;
                }
                let shown = |set: &BTreeSet<String>| {
                    if set.is_empty() {
                        "nowhere".to_string()
                    } else {
                        set.iter().cloned().collect::<Vec<_>>().join(", ")
                    }
                };
                let mut c = if b.is_superset(&a) || !a.is_superset(&b) {
                    change(
                        ChangeKind::ReadinessGateWidened,
                        format!("the gated dataset {name} reports its providers in more places"),
                        format!(
                            "{everywhere} now also judge the providers its answer reports in {}: \
                             a session unchanged code decided on may now wait longer or count as \
                             incomplete",
                            shown(&b.difference(&a).cloned().collect())
                        ),
                    )
                } else {
                    change(
                        ChangeKind::ReadinessGateNarrowed,
                        format!("the gated dataset {name} reports its providers in fewer places"),
                        format!(
                            "{everywhere} no longer judge the providers its answer reported in {}",
                            shown(&a.difference(&b).cloned().collect())
                        ),
                    )
                };
                c.from = Some(shown(&a));
                c.to = Some(shown(&b));
                out.push(c);
            }
            (false, false) => {}
        }
    }
    // A gated dataset that is gone is an operation removed, reported as that.
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn constant_headers_are_read_from_each_builders_send() {
        let code = r#"
            pub mod builder {
                impl<'a> GetScores<'a> {
                    pub async fn send(self) -> Result<(), ()> {
                        let request = client
                            .client
                            .get(url)
                            .header(
                                ::reqwest::header::ACCEPT,
                                const { ::reqwest::header::HeaderValue::from_static("application/json") },
                            )
                            .header(
                                const { ::reqwest::header::HeaderName::from_static("api-version") },
                                const { ::reqwest::header::HeaderValue::from_static("1.0") },
                            )
                            .header("x-caller", caller.as_str())
                            .build()?;
                    }
                }
            }
        "#;
        let headers = constant_headers(code).unwrap();
        assert_eq!(
            headers["GetScores"],
            BTreeMap::from([
                ("accept".to_string(), "application/json".to_string()),
                ("api-version".to_string(), "1.0".to_string()),
            ]),
            "a header whose value is not a constant is not one the code always sends"
        );
        assert!(constant_headers("not rust {").is_none());
        // Today's generated code: the same request built in `send_with`.
        let today = code.replace("pub async fn send(self)", "pub async fn send_with(self)");
        assert_eq!(constant_headers(&today).unwrap(), headers);
    }

    fn dataset_document(gate: Option<bool>, with_summary: bool) -> Value {
        let mut answer = json!({"type": "object", "properties": {
            "sources": {"type": "array", "items": {"$ref": "#/components/schemas/Source"}}}});
        if with_summary {
            answer["properties"]["summary"] = json!({"type": "object", "required": ["status"],
                "properties": {"status": {"$ref": "#/components/schemas/Status"}}});
        }
        let mut get = json!({"operationId": "GetScores", "parameters": [
            {"name": "sessionId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {"200": {"content": {"application/json": {"schema": answer}}}}});
        if let Some(gate) = gate {
            get["x-creditdata-default-gate"] = json!(gate);
        }
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1.0"},
            "paths": {"/v1/sessions/{sessionId}/scores": {"get": get}},
            "components": {"schemas": {
                "Status": {"type": "string", "enum": ["SUCCESS", "WAITING_FOR_PROVIDER"]},
                "Source": {"type": "object", "required": ["status"], "properties": {
                    "sourceId": {"type": "string"},
                    "status": {"$ref": "#/components/schemas/Status"}}}}}})
    }

    fn gate_changes(old: &Value, new: &Value) -> Vec<(ChangeKind, Option<String>, Option<String>)> {
        readiness_gate(&Side::effective(old), &Side::effective(new))
            .into_iter()
            .map(|c| {
                assert_eq!(c.behaviour, Behaviour::Changed);
                assert_eq!(c.operations, ["GetScores"]);
                (c.kind, c.from, c.to)
            })
            .collect()
    }

    #[test]
    fn a_dataset_that_joins_or_leaves_the_gate_or_is_judged_elsewhere_changes_behaviour() {
        let (gated, out) = (
            dataset_document(Some(true), false),
            dataset_document(Some(false), false),
        );
        assert!(gate_changes(&gated, &gated).is_empty());
        assert_eq!(
            gate_changes(&out, &gated),
            [(ChangeKind::ReadinessGateWidened, None, None)]
        );
        assert_eq!(
            gate_changes(&gated, &out),
            [(ChangeKind::ReadinessGateNarrowed, None, None)]
        );
        let with_summary = dataset_document(Some(true), true);
        assert_eq!(
            gate_changes(&gated, &with_summary),
            [(
                ChangeKind::ReadinessGateWidened,
                Some("sources[].status".into()),
                Some("sources[].status, summary.status".into())
            )]
        );
        assert_eq!(
            gate_changes(&with_summary, &gated)[0].0,
            ChangeKind::ReadinessGateNarrowed
        );
        // A dataset outside the gate may change as it likes.
        let out_with_summary = dataset_document(Some(false), true);
        assert!(gate_changes(&out, &out_with_summary).is_empty());
    }

    #[test]
    fn without_code_the_pinned_api_version_is_compared() {
        let old = dataset_document(Some(true), false);
        let mut new = old.clone();
        new["info"]["version"] = json!("1.1");
        // Without pins the header follows info.version: the new label moves it.
        assert_eq!(
            request_headers(&Side::effective(&old), &Side::effective(&new)).len(),
            1
        );
        let mut pinned_old = old.clone();
        pinned_old["paths"]["/v1/sessions/{sessionId}/scores"]["get"]["x-creditdata-api-version"] =
            json!("1.0");
        let mut pinned_new = new.clone();
        pinned_new["paths"]["/v1/sessions/{sessionId}/scores"]["get"]["x-creditdata-api-version"] =
            json!("1.0");
        assert!(
            request_headers(&Side::effective(&pinned_old), &Side::effective(&pinned_new))
                .is_empty(),
            "a pin holds the header whatever info.version says"
        );
        let moved = request_headers(&Side::effective(&pinned_old), &Side::effective(&new));
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0].kind, ChangeKind::RequestHeaderValueChanged);
        assert_eq!(
            (moved[0].from.as_deref(), moved[0].to.as_deref()),
            (Some("1.0"), Some("1.1"))
        );
        assert_eq!(moved[0].operations, ["GetScores"]);
        assert_eq!(moved[0].behaviour, Behaviour::Changed);
    }
}
