//! Realistic vendor releases, each a small mutation of version 1.0 of the description stored as
//! an overlay under `tests/data/releases/`, run through the whole pipeline (the project's
//! overlays, down-convert, open enums, preflight, progenitor) and compared with the outputs of
//! 1.0. Each has a snapshot of the text report and assertions on its JSON form. The description
//! and the overlays are the frozen copies of `tests/data/frozen-1.0/` (see [`crate::frozen`]), so
//! a vendor release of `spec/` changes nothing here.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use creditdata_codegen::diff::{self, ChangeReport, Side};
use creditdata_codegen::document;
use creditdata_codegen::overlay::{self, ApplyOptions, Overlay};
use creditdata_codegen::pipeline;
use serde_json::Value;

use crate::frozen::{self, Run, run_with};

fn releases() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/releases")
}

/// Runs the pipeline on `published` with the project's overlays. Overlay actions that select
/// nothing are warnings here: a release may retire what an overlay patched, which is the
/// overlay maintainers' business, not the classification's.
fn pipeline_on(published: &Value) -> Run {
    run_with(published, project_overlays(), true)
}

/// The project's overlays as `cargo xtask regen` leaves them: the frozen ones with the
/// behaviour pins of the frozen description ([`frozen::overlays_with_behaviour_pins`]).
fn project_overlays() -> &'static Path {
    frozen::overlays_with_behaviour_pins()
}

/// The frozen overlays and a keep-names file holding `actions`, in a temporary directory.
fn frozen_overlays_with_pins(actions: &[Value]) -> tempfile::TempDir {
    let overlays = tempfile::tempdir().unwrap();
    for file in pipeline::overlay_files(project_overlays()).unwrap() {
        std::fs::copy(&file, overlays.path().join(file.file_name().unwrap())).unwrap();
    }
    let pin_file = overlays.path().join(diff::keep_names::KEEP_NAMES_FILE);
    let text = diff::keep_names::extended_file(None, actions, &pin_file).unwrap();
    std::fs::write(&pin_file, text).unwrap();
    overlays
}

fn vendored() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| pipeline_on(&document::load(&frozen::spec()).unwrap()))
}

/// The frozen description with `release` applied (after its `x-base` release, if any).
fn published_after(release: &str) -> Value {
    let path = releases().join(release);
    let overlay = document::load(&path).unwrap();
    let mut files = Vec::new();
    if let Some(base) = overlay.pointer("/info/x-base").and_then(Value::as_str) {
        files.push(releases().join(base));
    }
    files.push(path);
    overlay::apply_files(&frozen::spec(), &files, &ApplyOptions { lenient: false })
        .unwrap_or_else(|e| panic!("{release} applies to the vendored description:\n{e}"))
        .document
}

/// The report for a release, against its base (the vendored description, or its `x-base`).
fn report(release: &str) -> (String, ChangeReport) {
    let path = releases().join(release);
    let overlay = Overlay::load(&path).unwrap();
    let base = document::load(&path)
        .unwrap()
        .pointer("/info/x-base")
        .and_then(Value::as_str)
        .map(str::to_string);
    let base_run;
    let old = match &base {
        Some(base) => {
            base_run = pipeline_on(&published_after(base));
            &base_run
        }
        None => vendored(),
    };
    let new = pipeline_on(&published_after(release));
    let report = diff::compare(&old.side(), &new.side())
        .with_version("0.1.0")
        .unwrap();
    (overlay.info.title, report)
}

/// The published JSON Schema of the report.
fn report_schema() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value =
            serde_json::from_str(include_str!("../../change-report.schema.json")).unwrap();
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .unwrap()
    })
}

/// Snapshots the text report, checks the JSON form against the published schema and the exit
/// status against the summary, and returns the JSON form.
fn check(release: &str) -> Value {
    let (title, report) = report(release);
    let name = release.trim_end_matches(".overlay.yaml");
    insta::with_settings!({description => title, omit_expression => true}, {
        insta::assert_snapshot!(name, report.to_text());
    });
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    let errors: Vec<String> = report_schema()
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let expected_exit = match (
        json["summary"]["changes"].as_u64(),
        json["summary"]["breaking"].as_bool(),
    ) {
        (Some(0), _) => 0,
        (_, Some(false)) => 3,
        _ => 4,
    };
    assert_eq!(report.exit_code(), expected_exit);
    json
}

/// The changes of a JSON report with this kind.
fn of_kind<'a>(json: &'a Value, kind: &str) -> Vec<&'a Value> {
    json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == kind)
        .collect()
}

/// The one change of this kind, with its impacts checked.
fn one<'a>(json: &'a Value, kind: &str, wire: &str, source: &str) -> &'a Value {
    let found = of_kind(json, kind);
    assert_eq!(found.len(), 1, "one {kind} in {:#}", json["changes"]);
    let change = found[0];
    assert_eq!(change["wire"], wire, "wire impact of {change:#}");
    assert_eq!(change["source"], source, "source impact of {change:#}");
    change
}

fn kinds(json: &Value) -> Vec<&str> {
    json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect()
}

fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(releases())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".overlay.yaml"))
        .collect();
    names.sort();
    names
}

#[test]
fn there_are_at_least_fifteen_releases_and_each_has_a_test() {
    let names = names();
    assert!(names.len() >= 15, "{names:?}");
    let tests = include_str!("releases.rs");
    for name in &names {
        assert!(
            tests.contains(&format!("check(\"{name}\")")),
            "{name} has no test"
        );
    }
}

#[test]
fn a_new_operation_is_compatible() {
    let json = check("01-delete-session.overlay.yaml");
    let c = one(&json, "operation_added", "yes", "yes");
    assert_eq!(
        c["new"]["effective"],
        "/paths/~1v1~1sessions~1{sessionId}/delete"
    );
    assert_eq!(
        c["new"]["published"],
        "/paths/~1v1~1sessions~1{sessionId}/delete"
    );
    assert_eq!(c["operations"], serde_json::json!(["DeleteSession"]));
    assert_eq!(json["summary"]["breaking"], false);
    assert_eq!(json["semver"]["suggested"], "0.1.1");
}

#[test]
fn a_removed_operation_breaks_deployed_clients_and_code() {
    let json = check("02-deprecated-categorizations-removed.overlay.yaml");
    let c = one(&json, "operation_removed", "no", "no");
    assert!(c["new"].is_null());
    assert_eq!(
        c["old"]["effective"],
        "/paths/~1v1~1sessions~1{sessionId}~1categorizations/get"
    );
    assert_eq!(json["semver"]["suggested"], "0.2.0");
    assert_eq!(json["semver"]["bump"], "minor");
}

#[test]
fn an_operation_id_rename_is_a_rename_that_breaks_only_rust_code() {
    let json = check("03-get-session-renamed.overlay.yaml");
    let c = one(&json, "operation_id_changed", "yes", "no");
    assert_eq!(
        (c["from"].as_str(), c["to"].as_str()),
        (Some("GetSession"), Some("GetSessionById"))
    );
    assert_eq!(
        kinds(&json),
        vec!["operation_id_changed"],
        "same method and path: not removed and added"
    );
}

#[test]
fn a_schema_rename_is_a_rename_and_its_consequences_are_not_reported_again() {
    let json = check("04-score-renamed.overlay.yaml");
    let c = one(&json, "schema_renamed", "yes", "no");
    assert_eq!(c["old"]["effective"], "/components/schemas/Score");
    assert_eq!(c["new"]["published"], "/components/schemas/CreditScore");
    assert_eq!(
        kinds(&json),
        vec!["schema_renamed"],
        "no type change where Score was referenced"
    );
    assert!(json["rust_api"]["incompatible"].as_array().unwrap().len() >= 2);
}

#[test]
fn a_new_optional_query_parameter_is_compatible() {
    let json = check("05-session-search-by-reference.overlay.yaml");
    let c = one(&json, "optional_parameter_added", "yes", "yes");
    assert_eq!(
        c["rust"],
        serde_json::json!(["builder::GetSessions::external_reference"])
    );
}

#[test]
fn parameters_now_required_removed_retyped_and_constrained() {
    let json = check("06-session-search-tightened.overlay.yaml");
    one(&json, "parameter_now_required", "no", "yes");
    one(&json, "parameter_removed", "degraded", "no");
    let take = one(&json, "parameter_type_changed", "yes", "no");
    assert_eq!(
        (take["from"].as_str(), take["to"].as_str()),
        (Some("integer (int32)"), Some("integer (int64)"))
    );
    // Parameters are matched by name, not index: the removal above shifts Take's index.
    assert_eq!(
        take["old"]["effective"],
        "/paths/~1v1~1sessions/get/parameters/9/schema"
    );
    assert_eq!(
        take["new"]["effective"],
        "/paths/~1v1~1sessions/get/parameters/8/schema"
    );
    let email = one(&json, "request_constraint_changed", "no", "no");
    assert_eq!(email["to"], "maxLength 320");
}

#[test]
fn request_members_break_old_clients_where_response_properties_would_not() {
    let json = check("07-create-session-members.overlay.yaml");
    // The request struct is #[non_exhaustive] and built through its builder: a new member breaks
    // no code, while a required one still breaks every deployed client.
    one(&json, "required_request_member_added", "no", "yes");
    one(&json, "optional_request_member_added", "yes", "yes");
    // QueryParameter.dataPackages now required: harmless in responses. The request side
    // (QueryParameterInput, overlay 09) already required it as an assumption, so the same
    // published change is no change there (`change_catalogue.rs` covers a request member that
    // becomes required).
    let response = one(&json, "response_property_now_required", "yes", "yes");
    assert_eq!(
        response["new"]["effective"],
        "/components/schemas/QueryParameter/properties/dataPackages"
    );
    assert!(
        !kinds(&json).contains(&"request_member_now_required"),
        "{json:#}"
    );
}

#[test]
fn a_member_rename_is_a_removal_and_an_addition_in_each_position() {
    let json = check("08-query-parameter-country-renamed.overlay.yaml");
    // The request side follows the published QueryParameter (overlay 09 copies it), so the new
    // required member reaches the request; overlay 09's own countryCode stays, now optional
    // (applied leniently here; a strict regen stops at overlay 09 and names its action).
    let added = one(&json, "required_request_member_added", "no", "yes");
    assert_eq!(
        added["new"]["published"],
        "/components/schemas/QueryParameter/properties/country"
    );
    one(&json, "request_member_now_optional", "yes", "no");
    one(&json, "response_property_removed", "degraded", "no");
    one(&json, "response_property_added", "yes", "yes");
}

#[test]
fn a_new_required_response_property_keeps_deployed_clients_working() {
    let json = check("09-session-properties.overlay.yaml");
    let added = one(&json, "response_property_added", "yes", "yes");
    assert!(
        added["reason"]
            .as_str()
            .unwrap()
            .contains("ignores members it does not know"),
        "{added:#}"
    );
    assert_eq!(
        added["new"]["published"],
        "/components/schemas/Session/properties/riskFlags"
    );
    one(&json, "response_property_removed", "degraded", "no");
    one(&json, "response_property_now_optional", "no", "no");
    one(&json, "schema_added", "yes", "yes");
}

#[test]
fn a_string_that_becomes_a_number_breaks_decoding() {
    let json = check("10-score-value-number.overlay.yaml");
    let c = one(&json, "response_property_type_changed", "no", "no");
    assert_eq!(
        (c["from"].as_str(), c["to"].as_str()),
        (Some("string, nullable"), Some("number (double), nullable"))
    );
}

#[test]
fn enum_values_added_in_request_and_response_position() {
    let json = check("11-enum-values-added.overlay.yaml");
    let request = one(&json, "request_enum_value_added", "yes", "yes");
    assert_eq!(
        request["new"]["effective"],
        "/components/schemas/CustomerProgressStatusInput/enum/4"
    );
    assert_eq!(
        request["new"]["published"],
        "/components/schemas/CustomerProgressStatus/enum/4"
    );
    let responses = of_kind(&json, "response_enum_value_added");
    assert_eq!(responses.len(), 2);
    for c in responses {
        assert_eq!(
            (c["wire"].as_str(), c["source"].as_str()),
            (Some("yes"), Some("yes")),
            "an open, #[non_exhaustive] enum: {c:#}"
        );
        assert!(c["reason"].as_str().unwrap().contains("Unrecognized("));
    }
    assert_eq!(json["summary"]["breaking"], false);
    assert_eq!(json["semver"]["suggested"], "0.1.1");
}

#[test]
fn enum_values_removed_in_request_and_response_position() {
    let json = check("12-identification-package-withdrawn.overlay.yaml");
    let request = one(&json, "request_enum_value_removed", "no", "no");
    assert_eq!(
        request["old"]["published"],
        "/components/schemas/DataPackage/enum/3"
    );
    one(&json, "response_enum_value_removed", "yes", "no");
}

#[test]
fn media_types_added_and_removed() {
    let json = check("13-media-types.overlay.yaml");
    one(&json, "response_media_type_removed", "no", "no");
    let added = of_kind(&json, "response_media_type_added");
    let source_of = |media: &str| {
        added
            .iter()
            .find(|c| c["summary"].as_str().unwrap().ends_with(media))
            .map(|c| (c["wire"].as_str().unwrap(), c["source"].as_str().unwrap()))
    };
    assert_eq!(
        source_of("image/webp"),
        Some(("yes", "yes")),
        "still a byte stream"
    );
    assert_eq!(
        source_of("application/octet-stream"),
        Some(("yes", "no")),
        "JSON became bytes"
    );
}

#[test]
fn a_response_header_added() {
    let json = check("14-request-id-header.overlay.yaml");
    let c = one(&json, "response_header_added", "yes", "yes");
    assert_eq!(
        c["new"]["effective"],
        "/paths/~1v1~1sessions~1{sessionId}/get/responses/200/headers/X-Request-Id"
    );
}

#[test]
fn a_response_header_removed_degrades_deployed_clients() {
    let json = check("15-request-id-header-dropped.overlay.yaml");
    let c = one(&json, "response_header_removed", "degraded", "yes");
    assert_eq!(
        c["old"]["published"],
        "/paths/~1v1~1sessions~1{sessionId}/get/responses/200/headers/X-Request-Id"
    );
}

#[test]
fn success_and_error_statuses() {
    let json = check("16-extend-deadline-statuses.overlay.yaml");
    one(&json, "success_status_added", "no", "yes");
    one(&json, "success_status_removed", "yes", "yes");
    one(&json, "error_status_added", "degraded", "yes");
}

#[test]
fn security_urls_flows_and_scopes() {
    let json = check("17-identity-provider.overlay.yaml");
    let url = one(&json, "security_url_changed", "no", "yes");
    assert_eq!(
        url["new"]["effective"],
        "/components/securitySchemes/identityProviderAuthLive/flows/clientCredentials/tokenUrl"
    );
    one(&json, "security_flow_removed", "yes", "yes");
    assert_eq!(of_kind(&json, "security_scope_added").len(), 2);
}

#[test]
fn servers_moved_and_removed() {
    let json = check("18-servers.overlay.yaml");
    let moved = one(&json, "server_changed", "no", "yes");
    assert_eq!(moved["to"], "https://eu.api.consumer-api.invalid");
    one(&json, "server_removed", "no", "yes");
}

#[test]
fn deprecations_are_compatible() {
    let json = check("19-deprecations.overlay.yaml");
    one(&json, "operation_deprecated", "yes", "yes");
    one(&json, "parameter_deprecated", "yes", "yes");
    one(&json, "document_version_changed", "yes", "yes");
    assert_eq!(json["summary"]["breaking"], false);
}

#[test]
fn dotnet10_nullable_references_are_read_through_the_3_1_form() {
    let json = check("20-dotnet10-nullable-references.overlay.yaml");
    let nullable = of_kind(&json, "response_property_now_nullable");
    let impact = |pointer: &str| {
        nullable
            .iter()
            .find(|c| c["new"]["effective"] == pointer)
            .map(|c| (c["wire"].as_str().unwrap(), c["source"].as_str().unwrap()))
    };
    // Required: T becomes Option<T>, and a null fails the old client.
    assert_eq!(
        impact("/components/schemas/Session/properties/customerProgressStatus"),
        Some(("no", "no"))
    );
    // Optional: already Option<T>, and null reads as None.
    assert_eq!(
        impact("/components/schemas/SessionsResponse/properties/paging"),
        Some(("yes", "yes"))
    );
    assert_eq!(
        nullable.len(),
        2,
        "no type change reported for the oneOf wrapper"
    );
}

#[test]
fn documentation_only_is_no_change() {
    let json = check("21-documentation-only.overlay.yaml");
    assert_eq!(json["summary"]["changes"], 0);
    assert_eq!(json["semver"]["bump"], "none");
}

#[test]
fn a_polymorphic_member_is_compatible_and_decoded_by_its_discriminator() {
    let json = check("22-polymorphic-income-sources.overlay.yaml");
    let added = of_kind(&json, "response_property_added");
    assert!(
        added.iter().any(|c| c["new"]["effective"]
            == "/components/schemas/RegistryIncome/properties/incomeSources"),
        "{:#}",
        json["changes"]
    );
    assert_eq!(json["summary"]["breaking"], false, "{:#}", json["changes"]);
    assert_eq!(json["semver"]["suggested"], "0.1.1");
    // What the new member decodes as: the union is a component of its own, marked with its
    // discriminator's values, and its enum decides by them.
    let new = pipeline_on(&published_after(
        "22-polymorphic-income-sources.overlay.yaml",
    ));
    let union = &new.outputs.effective["components"]["schemas"]["RegistryIncomeIncomeSourcesItem"];
    assert_eq!(
        union["x-creditdata-union"]["discriminator"],
        serde_json::json!({
            "propertyName": "$type",
            "values": {"employment": 0, "self-employment": 1, "pension": 2}
        }),
        "{union:#}"
    );
    let code = &new.outputs.generated.code;
    assert!(
        code.contains("Unrecognized(crate::json::UnknownVariant),"),
        "an unknown variant is kept"
    );
    assert!(code.contains(r#"Some("self-employment") => {"#));
    assert!(
        new.outputs
            .warnings
            .iter()
            .all(|w| !w.contains("polymorphic")),
        "{:#?}",
        new.outputs.warnings
    );
}

/// `--keep-names`: the pins written for the renames of a release make the regenerated client
/// keep the old Rust names, so the release no longer changes them, and the report lists them.
#[test]
fn keep_names_pins_the_old_rust_names() {
    let releases_applied = [
        releases().join("03-get-session-renamed.overlay.yaml"),
        releases().join("04-score-renamed.overlay.yaml"),
    ];
    let published = overlay::apply_files(
        &frozen::spec(),
        &releases_applied,
        &ApplyOptions { lenient: false },
    )
    .unwrap()
    .document;
    let renamed = pipeline_on(&published);
    let report = diff::compare(&vendored().side(), &renamed.side());
    assert_eq!(report.renames().count(), 2, "{}", report.to_text());

    let actions = diff::keep_names::pin_actions(report.renames(), &published).unwrap();
    let overlays = frozen_overlays_with_pins(&actions);
    let pinned = run_with(&published, overlays.path(), false);
    let code = &pinned.outputs.generated.code;
    assert!(
        code.contains("pub fn get_session(&self)"),
        "the old method name"
    );
    assert!(!code.contains("get_session_by_id"));
    assert!(code.contains("pub struct Score {"), "the old type name");
    assert!(!code.contains("CreditScore"));

    let after = diff::compare(&vendored().side(), &pinned.side());
    insta::assert_snapshot!("keep-names-pinned", after.to_text());
    assert!(after.is_empty(), "{}", after.to_text());
    assert!(after.rust_api.incompatible.is_empty());
    let pins: Vec<(diff::PinKind, &str, &str, diff::PinStatus)> = after
        .pins
        .iter()
        .map(|p| (p.kind, p.kept.as_str(), p.published.as_str(), p.status))
        .collect();
    assert_eq!(
        pins,
        vec![
            (
                diff::PinKind::OperationId,
                "GetSession",
                "GetSessionById",
                diff::PinStatus::Active
            ),
            (
                diff::PinKind::Schema,
                "Score",
                "CreditScore",
                diff::PinStatus::Active
            ),
        ]
    );
    // The pinned schema still maps to the vendor's name in the published description.
    assert_eq!(
        diff::published_pointer(
            &pinned.outputs.effective,
            &published,
            "/components/schemas/Score/properties/type"
        )
        .as_deref(),
        Some("/components/schemas/CreditScore/properties/type")
    );
}

/// The rules the report applies without generated code mirror typify: on every release they
/// reach the verdicts the generated code gives.
#[test]
fn source_rules_agree_with_the_generated_code() {
    let mut disagreements = Vec::new();
    for name in names() {
        let new = pipeline_on(&published_after(&name));
        let old = vendored();
        let (mut a, mut b) = (old.side(), new.side());
        let by_code = diff::compare(&a, &b);
        a.code = None;
        b.code = None;
        let by_rules = diff::compare(&a, &b);
        let key = |c: &diff::Change| (c.kind, c.old.clone(), c.new.clone());
        for c in &by_rules.changes {
            match by_code.changes.iter().find(|d| key(d) == key(c)) {
                Some(d) if d.source == c.source => {}
                Some(d) => disagreements.push(format!(
                    "{name}: {}: rules say {:?}, code says {:?} ({})",
                    c.summary, c.source, d.source, d.reason
                )),
                None => disagreements.push(format!("{name}: {} only by the rules", c.summary)),
            }
        }
        for d in &by_code.changes {
            // Headers other than the pinned api-version (`Accept`) are read from the generated
            // code only: no rule of the document says which constant headers a send() sets.
            let code_only = d.kind == diff::ChangeKind::GeneratedCodeChanged
                || (d.kind == diff::ChangeKind::RequestHeaderValueChanged
                    && !d.summary.contains("api-version"));
            if !code_only && !by_rules.changes.iter().any(|c| key(c) == key(d)) {
                disagreements.push(format!("{name}: {} only with the code", d.summary));
            }
        }
        assert!(
            !by_code
                .changes
                .iter()
                .any(|c| c.kind == diff::ChangeKind::GeneratedCodeChanged),
            "{name}: a generated-API difference no change explains:\n{}",
            by_code.to_text()
        );
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// The release-day fixture (`tests/data/release-day/1.1-additive.overlay.yaml`) applied to the
/// frozen 1.0.
fn additive_1_1() -> Value {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/release-day/1.1-additive.overlay.yaml");
    overlay::apply_files(
        &frozen::spec(),
        &[fixture],
        &ApplyOptions { lenient: false },
    )
    .unwrap_or_else(|e| panic!("the release-day fixture applies to the frozen 1.0:\n{e}"))
    .document
}

const EMPLOYMENT_HISTORIES: &str = "/paths/~1v1~1sessions~1{sessionId}~1employment-histories/get";

/// 1.1 publishes a dataset without an operationId: the pipeline names it, and the report
/// classifies the release instead of refusing it. (The source impact of its new members and
/// enum values follows the generated types, which another change of the release-day work
/// decides; it is not asserted here.)
#[test]
fn the_additive_release_adds_get_employment_histories_named_by_the_pipeline() {
    let new = pipeline_on(&additive_1_1());
    let notes: Vec<String> = new.outputs.derived.iter().map(|d| d.note()).collect();
    assert_eq!(
        notes,
        [
            "GET /v1/sessions/{sessionId}/employment-histories: no operationId; named \
          GetEmploymentHistories (derived from method and path)"
        ]
    );
    assert!(
        new.outputs
            .generated
            .code
            .contains("pub fn get_employment_histories(&self)")
    );

    let report = diff::compare(&vendored().side(), &new.side())
        .with_version("0.1.0")
        .unwrap();
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    let errors: Vec<String> = report_schema()
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let added = one(&json, "operation_added", "yes", "yes");
    assert_eq!(
        added["operations"],
        serde_json::json!(["GetEmploymentHistories"])
    );
    assert_eq!(added["new"]["effective"], EMPLOYMENT_HISTORIES);
    assert_eq!(added["new"]["published"], EMPLOYMENT_HISTORIES);
    assert!(
        added["rust"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("Client::get_employment_histories")),
        "{added:#}"
    );
    for kind in ["operation_removed", "operation_id_changed"] {
        assert!(
            of_kind(&json, kind).is_empty(),
            "{kind}: {:#}",
            json["changes"]
        );
    }
    let pin = report
        .pins
        .iter()
        .find(|p| p.kept == "GetEmploymentHistories")
        .expect("the derived name is listed with the pins");
    assert_eq!(
        (pin.kind, pin.published.as_str(), pin.status),
        (
            diff::PinKind::DerivedOperationId,
            "",
            diff::PinStatus::Active
        )
    );
    assert!(
        report.to_text().contains(
            "operation GET /v1/sessions/{sessionId}/employment-histories is named \
             GetEmploymentHistories, derived from method and path"
        ),
        "{}",
        report.to_text()
    );
}

/// `regen` pins the derived name; when a later release publishes the vendor's own operationId
/// (`ListEmploymentHistories`), the pin keeps `get_employment_histories` and the report shows
/// the vendor's name as a compatible change. Without the pin the same release renames the
/// method, which the report calls breaking.
#[test]
fn a_vendor_name_for_a_derived_operation_keeps_the_rust_name_through_the_pin() {
    let v1_1 = additive_1_1();
    let unpinned = pipeline_on(&v1_1);
    let actions = diff::keep_names::derived_pin_actions(&unpinned.outputs.derived);
    let overlays = frozen_overlays_with_pins(&actions);
    let strictly = |published: &Value| run_with(published, overlays.path(), false);
    let pinned = strictly(&v1_1);
    assert!(pinned.outputs.derived.is_empty(), "the pin names it now");
    assert_eq!(
        pinned.outputs.effective, unpinned.outputs.effective,
        "pinning changes nothing generated"
    );

    let mut v1_2 = v1_1.clone();
    v1_2.pointer_mut(EMPLOYMENT_HISTORIES).unwrap()["operationId"] =
        serde_json::json!("ListEmploymentHistories");
    let renamed = strictly(&v1_2);
    let code = &renamed.outputs.generated.code;
    assert!(code.contains("pub fn get_employment_histories(&self)"));
    assert!(!code.contains("list_employment_histories"));

    let report = diff::compare(&pinned.side(), &renamed.side())
        .with_version("0.1.0")
        .unwrap();
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(
        kinds(&json),
        ["operation_id_published"],
        "{}",
        report.to_text()
    );
    let c = one(&json, "operation_id_published", "yes", "yes");
    assert_eq!(
        (c["from"].as_str(), c["to"].as_str()),
        (
            Some("GetEmploymentHistories"),
            Some("ListEmploymentHistories")
        )
    );
    assert_eq!(report.exit_code(), 3);
    assert_eq!(json["semver"]["suggested"], "0.1.1");
    assert!(report.rust_api.incompatible.is_empty());
    assert_eq!(report.renames().count(), 0, "nothing left for --keep-names");
    let pin = report
        .pins
        .iter()
        .find(|p| p.kept == "GetEmploymentHistories")
        .unwrap();
    assert_eq!(
        (pin.published.as_str(), pin.status),
        ("ListEmploymentHistories", diff::PinStatus::Active)
    );
    assert!(
        report.to_text().contains(
            "keeps its derived name GetEmploymentHistories (the vendor now publishes \
             ListEmploymentHistories)"
        ),
        "{}",
        report.to_text()
    );

    // Regenerated after `fetch`, the old published description is gone: the pin's mark in the
    // old effective document says the vendor had no name before.
    let old_without_published = Side {
        published: None,
        ..pinned.side()
    };
    let again = diff::compare(&old_without_published, &renamed.side());
    assert_eq!(
        again.changes.iter().map(|c| c.kind).collect::<Vec<_>>(),
        [diff::ChangeKind::OperationIdPublished]
    );
    // Once the vendor's name is in the old side as well, nothing is reported again.
    assert!(diff::compare(&renamed.side(), &renamed.side()).is_empty());

    // Without the pin, the vendor's name renames the method: breaking for Rust code.
    let unpinned_rename = pipeline_on(&v1_2);
    let breaking = diff::compare(&unpinned.side(), &unpinned_rename.side());
    assert_eq!(
        breaking
            .changes
            .iter()
            .map(|c| (c.kind, c.source))
            .collect::<Vec<_>>(),
        [(diff::ChangeKind::OperationIdChanged, diff::Source::No)]
    );
}
