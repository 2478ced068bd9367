//! Behaviour stays stable: pins for what existing code was written against, as names are pinned
//! ([`super::keep_names`]).
//!
//! `cargo xtask regen` answers every operation and dataset the effective document does not pin
//! yet with overlay actions in [`KEEP_BEHAVIOUR_FILE`], applied after every other overlay (see
//! [`crate::behaviour`] for what each pin means):
//!
//! - an operation keeps the `api-version` it was first generated with
//!   ([`API_VERSION_MARK`]); a release's new operation is pinned to the version of the description
//!   that added it;
//! - a dataset records whether it is in the default readiness gate ([`DEFAULT_GATE_MARK`]): the
//!   datasets read by default at the first generation are, a dataset a release adds is not;
//! - `info` carries the assumption the version pins rest on ([`ASSUMPTION_MARK`]).
//!
//! A release adds pins for what it adds and never moves one. `cargo xtask regen
//! --adopt-behaviour` rewrites the file from the description as it is (every operation at its
//! `info.version`, every dataset the service does not deprecate gated): the report then lists
//! each move as a behaviour change,
//! the mark of a breaking release of `creditdata-client`.

use std::path::Path;

use serde_json::{Value, json};

use super::keep_names::{self, KeepNamesError};
use crate::behaviour::{
    API_VERSION_ASSUMPTION, API_VERSION_MARK, ASSUMPTION_MARK, DEFAULT_GATE_MARK, api_version,
    default_gate, document_version, gate_pin,
};
use crate::datasets::{self, DatasetsError};
use crate::document::{self as openapi};
use crate::overlay::TARGET_MAY_VANISH;

/// The overlay file holding the behaviour pins, inside the overlays directory.
pub const KEEP_BEHAVIOUR_FILE: &str = "91-keep-behaviour.overlay.yaml";

const HEADER: &str = "\
# What existing code was written against, kept across vendor releases. Written by `cargo xtask
# regen` (a pin for every operation and dataset it meets without one) and rewritten by `cargo
# xtask regen --adopt-behaviour`; applied after every other overlay. Each operation keeps sending
# the api-version it was first generated with (x-creditdata-api-version; the assumption is in
# info.x-creditdata-assumption), and each dataset says whether it is in the default readiness
# gate of creditdata_client (x-creditdata-default-gate): what wait_for_data, is_complete and the
# CLI wait for and judge when the caller names no datasets. A release never moves a pin; moving
# one is a behaviour change of creditdata-client (a breaking release), which the report lists.
overlay: 1.1.0
info:
  title: Behaviour existing code was written against
  version: 1.0.0
actions:
";

/// The JSONPath of an operation (`$.paths['/v1/x'].get`).
fn target(path: &str, method: &str) -> String {
    format!(
        "$.paths['{}'].{method}",
        path.replace('\\', "\\\\").replace('\'', "\\'")
    )
}

/// The pins `effective` lacks, as overlay actions: the assumption on `info`, an `api-version`
/// for each operation without one, a gate for each dataset without one (with the value the
/// pipeline uses meanwhile, so that writing them changes no generated code). Empty when
/// everything is pinned.
pub fn missing_pin_actions(effective: &Value) -> Result<Vec<Value>, DatasetsError> {
    let datasets = datasets::session_datasets(effective)?;
    let gate = default_gate(effective, &datasets);
    let version = document_version(effective);
    let mut actions = Vec::new();
    if effective
        .pointer(&format!("/info/{ASSUMPTION_MARK}"))
        .is_none()
    {
        actions.push(json!({
            "target": "$.info",
            "description": "What the api-version pins below assume of the service.",
            "update": {ASSUMPTION_MARK: API_VERSION_ASSUMPTION},
        }));
    }
    for op in openapi::operations(effective) {
        let method = op.method.to_ascii_uppercase();
        let mut update = serde_json::Map::new();
        let mut why = Vec::new();
        if op.operation.get(API_VERSION_MARK).is_none() {
            let sent = api_version(effective, op.operation);
            update.insert(API_VERSION_MARK.into(), json!(sent));
            why.push(format!(
                "{method} {} is generated from version {version} of the description: it keeps \
                 sending api-version {sent}, what the code calling it is written against",
                op.path
            ));
        }
        if let Some(dataset) = datasets
            .iter()
            .find(|d| d.path == op.path && op.method == "get")
            && gate_pin(effective, dataset).is_none()
        {
            let gated = gate.get(&dataset.name).copied().unwrap_or(false);
            update.insert(DEFAULT_GATE_MARK.into(), json!(gated));
            why.push(if gated {
                format!(
                    "the dataset `{}` is in the default readiness gate (read by default when the \
                     gate was first pinned): wait_for_data and is_complete() wait for it and judge \
                     it when the caller names no datasets, even once the service deprecates it",
                    dataset.name
                )
            } else if dataset.deprecated {
                format!(
                    "the dataset `{}` is deprecated: read only when asked, not in the default \
                     readiness gate",
                    dataset.name
                )
            } else {
                format!(
                    "the dataset `{}` is added by a release: read and reported, but not in the \
                     default readiness gate, so code written before it decides as it did",
                    dataset.name
                )
            });
        }
        if update.is_empty() {
            continue;
        }
        actions.push(json!({
            "target": target(op.path, op.method),
            "description": format!("{}.", why.join("; ")),
            "update": update,
            TARGET_MAY_VANISH: true,
        }));
    }
    Ok(actions)
}

/// The text of the pin file with `actions` appended: a new file, or the existing one with the
/// actions added at its end (its comments and earlier pins kept). The result is validated.
pub fn extended_file(
    existing: Option<&str>,
    actions: &[Value],
    path: &Path,
) -> Result<String, KeepNamesError> {
    keep_names::extended_file_with_header(existing, actions, path, HEADER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Format;
    use crate::overlay::{self, ApplyOptions, Overlay};

    fn document() -> Value {
        let get = |summary: &str| {
            json!({"get": {"operationId": summary, "parameters": [
                {"name": "sessionId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"content": {"application/json": {"schema": {"type": "object"}}}}}}})
        };
        json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1.0"}, "paths": {
            "/v1/sessions/{sessionId}/scores": get("GetScores"),
            "/v1/sessions": {"post": {"operationId": "CreateSession", "responses": {"201": {"description": "x"}}}},
        }})
    }

    fn applied(doc: &Value, text: &str) -> Value {
        let overlay = Overlay::parse(text, Format::Yaml, "pins").unwrap();
        let mut doc = doc.clone();
        overlay::apply(&mut doc, &[overlay], &ApplyOptions { lenient: false }).unwrap();
        doc
    }

    #[test]
    fn every_operation_and_dataset_is_pinned_once_and_then_nothing_is_missing() {
        let doc = document();
        let actions = missing_pin_actions(&doc).unwrap();
        assert_eq!(
            actions.len(),
            3,
            "the assumption and two operations: {actions:#?}"
        );
        let path = Path::new("overlays/91-keep-behaviour.overlay.yaml");
        let text = extended_file(None, &actions, path).unwrap();
        assert!(text.starts_with("# What existing code was written against"));
        let pinned = applied(&doc, &text);
        assert_eq!(
            pinned["paths"]["/v1/sessions/{sessionId}/scores"]["get"][API_VERSION_MARK],
            "1.0"
        );
        assert_eq!(
            pinned["paths"]["/v1/sessions/{sessionId}/scores"]["get"][DEFAULT_GATE_MARK],
            true
        );
        assert_eq!(
            pinned["paths"]["/v1/sessions"]["post"][API_VERSION_MARK],
            "1.0"
        );
        assert!(
            pinned["paths"]["/v1/sessions"]["post"]
                .get(DEFAULT_GATE_MARK)
                .is_none()
        );
        assert!(pinned["info"][ASSUMPTION_MARK].is_string());
        assert!(missing_pin_actions(&pinned).unwrap().is_empty());
    }

    #[test]
    fn a_release_adds_pins_for_what_it_adds_and_moves_none() {
        let doc = document();
        let path = Path::new("overlays/91-keep-behaviour.overlay.yaml");
        let first = extended_file(None, &missing_pin_actions(&doc).unwrap(), path).unwrap();
        // The release: a version bump and a new dataset.
        let mut released = document();
        released["info"]["version"] = json!("1.1");
        released["paths"]["/v1/sessions/{sessionId}/tax-returns"] =
            released["paths"]["/v1/sessions/{sessionId}/scores"].clone();
        released["paths"]["/v1/sessions/{sessionId}/tax-returns"]["get"]["operationId"] =
            json!("GetTaxReturns");
        let pinned = applied(&released, &first);
        let more = missing_pin_actions(&pinned).unwrap();
        assert_eq!(more.len(), 1, "{more:#?}");
        assert_eq!(
            more[0]["target"],
            "$.paths['/v1/sessions/{sessionId}/tax-returns'].get"
        );
        assert_eq!(more[0]["update"][API_VERSION_MARK], "1.1");
        assert_eq!(more[0]["update"][DEFAULT_GATE_MARK], false);
        let second = extended_file(Some(&first), &more, path).unwrap();
        assert!(
            second.starts_with(&first),
            "earlier pins are kept as written"
        );
        let both = applied(&released, &second);
        assert_eq!(
            both["paths"]["/v1/sessions/{sessionId}/scores"]["get"][API_VERSION_MARK], "1.0",
            "an existing pin does not move"
        );
        // Adopting: pins made from the description without any.
        let adopted = extended_file(None, &missing_pin_actions(&released).unwrap(), path).unwrap();
        let moved = applied(&released, &adopted);
        for path in [
            "/v1/sessions/{sessionId}/scores",
            "/v1/sessions/{sessionId}/tax-returns",
        ] {
            assert_eq!(moved["paths"][path]["get"][API_VERSION_MARK], "1.1");
            assert_eq!(moved["paths"][path]["get"][DEFAULT_GATE_MARK], true);
        }
    }
}
