//! What existing code was written against, read from the effective document: the `api-version`
//! each operation sends and the datasets of the default readiness gate. Pinned like names are
//! (`overlays/91-keep-behaviour.overlay.yaml`, written by `cargo xtask regen`, see
//! [`crate::diff::keep_behaviour`]), so that a compatible release changes nothing existing code
//! does:
//!
//! - **`api-version`** ([`API_VERSION_MARK`] on an operation). The service, an ASP.NET API with
//!   API versioning, answers a request in the version the request asks for (the assumption is
//!   written into the description as [`ASSUMPTION_MARK`]). An operation keeps sending the version
//!   it was first generated with, which is what the code calling it was written against; an
//!   operation a release adds sends the version of the description that added it (it may not
//!   exist at an older one). Without a pin: the description's `info.version`.
//! - **the default readiness gate** ([`DEFAULT_GATE_MARK`] on a dataset's operation): which
//!   datasets `wait_for_data`, `readiness().is_complete()` and the CLI wait for and judge when the
//!   caller does not say. The datasets read by default when the pins were first written are in
//!   it (every one the service does not deprecate); a dataset a release adds is read and
//!   reported, but not gated. Without any gate pin (a first generation), every dataset but the
//!   deprecated ones is in it; once some dataset has one, a dataset without one is a release's
//!   and is not. A gated dataset the vendor deprecates later stays in the gate, and the client
//!   keeps reading it by default, so deprecating it changes no decision.
//!
//! The fallbacks are exactly what `regen` pins next, so generating before or after the pins are
//! written gives the same code.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::datasets::SessionDataset;
use crate::document::{self as openapi};

/// On an operation: the `api-version` header value it sends.
pub const API_VERSION_MARK: &str = "x-creditdata-api-version";
/// On a dataset's operation: whether the dataset is in the default readiness gate.
pub const DEFAULT_GATE_MARK: &str = "x-creditdata-default-gate";
/// On `info`: what the pinned `api-version` assumes of the service.
pub const ASSUMPTION_MARK: &str = "x-creditdata-assumption";

/// The assumption [`API_VERSION_MARK`] rests on, as written into the description.
pub const API_VERSION_ASSUMPTION: &str = "api-version: the service (an ASP.NET API with API \
    versioning) answers each request in the version its api-version header asks for, so each \
    operation keeps sending the version it was first generated with (x-creditdata-api-version) \
    and an operation a release adds sends the version of the description that added it. If the \
    service stops serving a version, `cargo xtask regen --adopt-behaviour` moves every operation \
    to the current one (a breaking release of creditdata-client).";

/// The description's `info.version`, or empty.
pub fn document_version(effective: &Value) -> &str {
    effective
        .pointer("/info/version")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The `api-version` `operation` sends: its pin, else the description's `info.version`.
pub fn api_version<'a>(effective: &'a Value, operation: &'a Value) -> &'a str {
    operation
        .get(API_VERSION_MARK)
        .and_then(Value::as_str)
        .unwrap_or_else(|| document_version(effective))
}

/// The `api-version` of every operation of `effective`, by operationId.
pub fn api_versions(effective: &Value) -> BTreeMap<String, String> {
    openapi::operations(effective)
        .filter_map(|op| {
            let id = op.operation.get("operationId").and_then(Value::as_str)?;
            Some((
                id.to_string(),
                api_version(effective, op.operation).to_string(),
            ))
        })
        .collect()
}

/// The operation of `dataset` in `effective`.
fn operation_of<'a>(effective: &'a Value, dataset: &SessionDataset) -> Option<&'a Value> {
    effective.get("paths")?.get(&dataset.path)?.get("get")
}

/// The gate pin of `dataset`, if it has one.
pub fn gate_pin(effective: &Value, dataset: &SessionDataset) -> Option<bool> {
    operation_of(effective, dataset)?
        .get(DEFAULT_GATE_MARK)
        .and_then(Value::as_bool)
}

/// Whether each dataset (by name) is in the default readiness gate: its pin; without one, in
/// the gate when no dataset has a pin (a first generation) and the service does not deprecate
/// it (the client does not read a deprecated dataset unless asked), else not (a release added
/// it).
pub fn default_gate(effective: &Value, datasets: &[SessionDataset]) -> BTreeMap<String, bool> {
    let pins: Vec<Option<bool>> = datasets.iter().map(|d| gate_pin(effective, d)).collect();
    let first_generation = pins.iter().all(Option::is_none);
    datasets
        .iter()
        .zip(pins)
        .map(|(dataset, pin)| {
            let gated = pin.unwrap_or(first_generation && !dataset.deprecated);
            (dataset.name.clone(), gated)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dataset(name: &str) -> SessionDataset {
        SessionDataset {
            name: name.into(),
            operation_id: String::new(),
            path: format!("/v1/sessions/{{sessionId}}/{name}"),
            deprecated: false,
            summary: String::new(),
            description: String::new(),
            reporting: Default::default(),
            listing: None,
        }
    }

    #[test]
    fn an_operation_sends_its_pinned_version_else_the_documents() {
        let doc = json!({"info": {"version": "1.1"}, "paths": {
            "/a": {"get": {"operationId": "A", "x-creditdata-api-version": "1.0"}},
            "/b": {"get": {"operationId": "B"}},
        }});
        assert_eq!(
            api_versions(&doc),
            BTreeMap::from([("A".into(), "1.0".into()), ("B".into(), "1.1".into())])
        );
    }

    #[test]
    fn without_any_gate_pin_every_dataset_is_gated_and_with_some_an_unpinned_one_is_not() {
        let mut deprecated = dataset("categorizations");
        deprecated.deprecated = true;
        assert_eq!(
            default_gate(&json!({"paths": {}}), std::slice::from_ref(&deprecated)),
            BTreeMap::from([("categorizations".into(), false)]),
            "a deprecated dataset is not read by default, so not gated"
        );
        let datasets = [dataset("scores"), dataset("tax-returns")];
        let mut doc = json!({"paths": {
            "/v1/sessions/{sessionId}/scores": {"get": {}},
            "/v1/sessions/{sessionId}/tax-returns": {"get": {}},
        }});
        assert_eq!(
            default_gate(&doc, &datasets),
            BTreeMap::from([("scores".into(), true), ("tax-returns".into(), true)])
        );
        doc["paths"]["/v1/sessions/{sessionId}/scores"]["get"][DEFAULT_GATE_MARK] = json!(true);
        assert_eq!(
            default_gate(&doc, &datasets),
            BTreeMap::from([("scores".into(), true), ("tax-returns".into(), false)])
        );
        doc["paths"]["/v1/sessions/{sessionId}/tax-returns"]["get"][DEFAULT_GATE_MARK] =
            json!(true);
        assert!(default_gate(&doc, &datasets)["tax-returns"]);
    }
}
