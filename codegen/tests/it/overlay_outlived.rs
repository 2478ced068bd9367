//! Overlays that outlive their gap: when the vendor starts publishing what an overlay action
//! supplies, the run says which action (file, index, description) and that it can be deleted.
//!
//! What counts as outlived, and how it is reported:
//! - an `update`/`copy` whose every value is already in the document: applying it changes
//!   nothing (a warning);
//! - the same, where applying it would repeat array entries the document already has: strict
//!   refuses (the result would be degraded, e.g. `required: [a, a]`), lenient warns;
//! - a `remove` whose target selects nothing while the place it removes from exists: what it
//!   removes is gone (strict refuses, as for any target selecting nothing; lenient warns);
//! - a `remove` that later actions undo exactly: deleting it changes nothing (a warning).
//!
//! Values that an action changes (a different operationId, `required: true` over `false`) are
//! corrections, the reason overlays exist, and are not reported.

use std::path::{Path, PathBuf};

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::overlay::{
    ApplyOptions, ApplyReport, Overlay, OverlayErrors, OverlayWarning, apply, apply_files,
};
use creditdata_codegen::pipeline;
use serde_json::{Value, json};

const ORIGIN: &str = "overlays/07-test.overlay.yaml";

fn overlay(actions: &str) -> Overlay {
    let text = format!("overlay: 1.1.0\ninfo: {{title: t, version: '1'}}\nactions:\n{actions}");
    Overlay::parse(&text, Format::Yaml, ORIGIN).unwrap_or_else(|e| panic!("invalid:\n{e}"))
}

fn run(document: &mut Value, actions: &str, lenient: bool) -> Result<ApplyReport, OverlayErrors> {
    apply(document, &[overlay(actions)], &ApplyOptions { lenient })
}

fn warnings(report: &ApplyReport) -> Vec<String> {
    report.warnings.iter().map(ToString::to_string).collect()
}

/// The reference every message starts with: file, 0-based index, description.
fn named(index: usize, description: &str) -> String {
    format!("{ORIGIN}: actions[{index}] (0-based) \"{description}\"")
}

#[test]
fn an_operation_id_the_vendor_now_publishes_makes_the_action_a_no_op_warning() {
    let mut document = json!({"paths": {
        "/v1/sessions": {"post": {"operationId": "CreateSession"}},
        "/v1/sessions/{id}": {"get": {}}
    }});
    let before = document.clone();
    let report = run(
        &mut document,
        "- target: $.paths['/v1/sessions'].post\n  description: Creating a Session has no published operationId\n  update: {operationId: CreateSession}\n\
         - target: $.paths['/v1/sessions/{id}'].get\n  description: Reading one has none either\n  update: {operationId: GetSession}\n",
        false,
    )
    .unwrap_or_else(|e| panic!("strict mode applies a no-op action:\n{e}"));
    let warnings = warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let expected = format!(
        "{}, target `$.paths['/v1/sessions'].post`: changes nothing: the document already has \
         everything this action supplies (such as `/paths/~1v1~1sessions/post/operationId` = \
         \"CreateSession\"), so the gap it filled is closed upstream. The action can be deleted",
        named(0, "Creating a Session has no published operationId")
    );
    assert_eq!(warnings[0], expected);
    assert!(matches!(
        &report.warnings[0],
        OverlayWarning::Redundant { action, .. } if action.index == 0
    ));
    assert_eq!(
        document["paths"]["/v1/sessions"],
        before["paths"]["/v1/sessions"]
    );
    assert_eq!(
        document["paths"]["/v1/sessions/{id}"]["get"]["operationId"],
        "GetSession"
    );
}

#[test]
fn a_media_type_the_vendor_now_publishes_is_a_no_op_warning() {
    let pdf = json!({"schema": {"type": "string", "format": "binary"}});
    let mut document = json!({"paths": {"/r": {"get": {"responses": {"200": {
        "description": "OK", "content": {"application/pdf": pdf}
    }}}}}});
    let report = run(
        &mut document,
        "- target: $.paths['/r'].get.responses['200'].content\n  description: The report is a PDF\n  update:\n    application/pdf: {schema: {type: string, format: binary}}\n",
        false,
    )
    .unwrap();
    let warnings = warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(&named(0, "The report is a PDF"))
            && warnings[0].contains("changes nothing")
            && warnings[0].ends_with("The action can be deleted"),
        "{warnings:?}"
    );
}

#[test]
fn a_schema_the_vendor_now_publishes_would_repeat_entries_so_strict_refuses_and_lenient_warns() {
    let score = json!({"type": "object", "required": ["value"],
                       "properties": {"value": {"type": "integer"}}});
    let original = json!({"components": {"schemas": {"Score": score}}});
    let actions = "- target: $.components.schemas\n  description: Scores have no published schema\n  update:\n    Score:\n      type: object\n      required: [value]\n      properties: {value: {type: integer}}\n";

    let mut document = original.clone();
    let e = run(&mut document, actions, false).unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    let expected = format!(
        "{}, target `$.components.schemas`: the document already has everything this action \
         supplies, so the gap it filled is closed upstream; applying it would only repeat \
         entries already in `/components/schemas/Score/required`. The action can be deleted\
         ; run with --lenient to apply it anyway",
        named(0, "Scores have no published schema")
    );
    assert_eq!(e.to_string(), expected);
    assert_eq!(
        document, original,
        "a refused run leaves the document as it was"
    );

    // Lenient applies the specification's meaning (arrays concatenate) and says the same.
    let report = run(&mut document, actions, true).unwrap();
    assert_eq!(
        document["components"]["schemas"]["Score"]["required"],
        json!(["value", "value"])
    );
    let warnings = warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .contains("would only repeat entries already in `/components/schemas/Score/required`")
            && warnings[0].contains("The action can be deleted"),
        "{warnings:?}"
    );
}

#[test]
fn an_update_that_would_repeat_some_entries_is_refused_and_names_them() {
    let mut document = json!({"components": {"schemas": {"Req": {"required": ["email"]}}}});
    let e = run(
        &mut document,
        "- target: $.components.schemas.Req\n  description: Both fields are required\n  update: {required: [email, queryParameters]}\n",
        false,
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&named(0, "Both fields are required"))
            && text.contains(
                "would repeat entries the document already has, in \
                 `/components/schemas/Req/required` (the upstream document now publishes them)"
            )
            && text.contains("delete those entries from the action's value"),
        "{text}"
    );
}

#[test]
fn a_remove_whose_node_is_gone_while_its_parent_is_there_can_be_deleted() {
    // The vendor stopped publishing the text/json alias the overlay removes.
    let original = json!({"paths": {"/s": {"post": {"requestBody": {"content": {
        "application/json": {"schema": {}}
    }}}}}});
    let actions = "- target: $.paths.*.*.requestBody.content['text/json']\n  description: text/json is an alias\n  remove: true\n";
    let mut document = original.clone();
    let e = run(&mut document, actions, false).unwrap_err();
    let expected = format!(
        "{}, target `$.paths.*.*.requestBody.content['text/json']`: the target selects nothing, \
         but the place it removes from is there (1 node selected by \
         `$.paths.*.*.requestBody.content`): what it removes is no longer in the document, so \
         the gap it closed is closed upstream. The action can be deleted; run with --lenient to \
         continue anyway",
        named(0, "text/json is an alias")
    );
    assert_eq!(e.to_string(), expected);
    assert!(e.errors[0].is_zero_match());

    let report = run(&mut document, actions, true).unwrap();
    assert_eq!(document, original);
    let warnings = warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("what it removes is no longer in the document")
            && warnings[0].contains("The action can be deleted"),
        "{warnings:?}"
    );
    assert!(matches!(
        report.warnings[0],
        OverlayWarning::AlreadyAbsent { .. }
    ));

    // Where the parent is gone too, the document moved: the message says that instead.
    let mut moved = json!({"paths": {}});
    let e = run(&mut moved, actions, false).unwrap_err();
    assert!(e.to_string().contains("The upstream document moved"), "{e}");
}

#[test]
fn the_parent_of_a_target_is_found_through_brackets_filters_and_descendants() {
    for (document, target, parent) in [
        (
            json!({"a": {"b": [{"n": "x"}]}}),
            "$.a.b[?@.n == 'y']",
            "$.a.b",
        ),
        (json!({"a": {"x.y": {}}}), "$.a['x.y'].gone", "$.a['x.y']"),
        (json!({"a": {"b": {}}}), "$.a..gone", "$.a"),
        (json!({"a": {"b": {}}}), "$.a..['gone']", "$.a"),
        (json!({"a": {"b": {}}}), "$['a'][\"b\"][0]", "$['a'][\"b\"]"),
    ] {
        let mut document = document;
        let e = run(
            &mut document,
            &format!(
                "- target: \"{}\"\n  remove: true\n",
                target.replace('"', "\\\"")
            ),
            false,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains(&format!("selected by `{parent}`")),
            "{target}: {e}"
        );
    }
}

#[test]
fn a_remove_that_later_actions_undo_is_reported_with_them() {
    // The vendor now publishes the e-mail as a plain string with a format: the overlay's
    // remove-then-retype pair puts back exactly what it takes away.
    let original = json!({"components": {"schemas": {"Req": {"properties": {
        "email": {"type": "string", "format": "email"}
    }}}}});
    let actions = "- target: $.components.schemas.Req.properties.email.type\n  description: The type union is replaced below\n  remove: true\n\
                   - target: $.components.schemas.Req.properties.email\n  description: A plain e-mail string\n  update: {type: string, format: email}\n";
    let mut document = original.clone();
    let report = run(&mut document, actions, false).unwrap();
    assert_eq!(document, original);
    let warnings = warnings(&report);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let expected = format!(
        "{}, target `$.components.schemas.Req.properties.email.type`: changes nothing in the \
         result: later actions put back exactly what it removes (the document now publishes it \
         that way), so the gap it closed is closed upstream. The action can be deleted, together \
         with actions[1] (0-based) \"A plain e-mail string\", which then changes nothing either",
        named(0, "The type union is replaced below")
    );
    assert_eq!(warnings[0], expected);
}

#[test]
fn a_remove_that_still_changes_the_result_is_not_reported() {
    // Still published as a type union: the pair is needed.
    let mut document = json!({"components": {"schemas": {"Req": {"properties": {
        "email": {"type": ["string", "null"], "format": "email"}
    }}}}});
    let report = run(
        &mut document,
        "- target: $.components.schemas.Req.properties.email.type\n  remove: true\n\
         - target: $.components.schemas.Req.properties.email\n  update: {type: string, format: email}\n",
        false,
    )
    .unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(
        document["components"]["schemas"]["Req"]["properties"]["email"],
        json!({"format": "email", "type": "string"})
    );
}

#[test]
fn corrections_and_ensure_exists_updates_are_not_reported() {
    let mut document = json!({
        "paths": {"/a": {"post": {"operationId": "createThing", "requestBody": {"required": false}}}},
        "components": {"schemas": {"Bar": {"type": "object"}}}
    });
    let report = run(
        &mut document,
        "- target: $.paths['/a'].post\n  description: Keep the old Rust name\n  update: {operationId: CreateThing}\n\
         - target: $.paths.*.*.requestBody\n  update: {required: true}\n\
         - target: $.components.schemas\n  description: Make sure Bar exists before copying into it\n  update: {Bar: {}}\n\
         - target: $.components.schemas.Bar\n  update: {}\n",
        false,
    )
    .unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(
        document["paths"]["/a"]["post"]["operationId"],
        "CreateThing"
    );
}

/// Version 1.0 of the description (the frozen copy) as if the vendor had started publishing what
/// two of our overlays supply: an operationId for creating a Session, and no more text/json request aliases.
fn next_vendor_release(dir: &Path) -> PathBuf {
    let mut spec = document::load(&crate::frozen::spec()).unwrap();
    spec["paths"]["/v1/sessions"]["post"]["operationId"] = json!("CreateSession");
    for item in spec["paths"].as_object_mut().unwrap().values_mut() {
        for operation in item.as_object_mut().unwrap().values_mut() {
            if let Some(Value::Object(content)) = operation.pointer_mut("/requestBody/content") {
                content.shift_remove("text/json");
            }
        }
    }
    let path = dir.join("openapi.json");
    std::fs::write(&path, document::to_string(&spec, Format::Json)).unwrap();
    path
}

#[test]
fn the_project_overlays_say_which_of_their_actions_the_next_release_makes_obsolete() {
    let dir = tempfile::tempdir().unwrap();
    let spec = next_vendor_release(dir.path());
    let overlays = pipeline::overlay_files(&crate::frozen::overlays()).unwrap();
    let ids = overlays
        .iter()
        .find(|p| p.ends_with("01-operation-ids.overlay.yaml"))
        .expect("the operationId overlay")
        .display()
        .to_string();
    let bodies = overlays
        .iter()
        .find(|p| p.ends_with("02-request-bodies.overlay.yaml"))
        .expect("the request body overlay")
        .display()
        .to_string();

    let e = apply_files(&spec, &overlays, &ApplyOptions::default()).unwrap_err();
    let errors: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with(&format!("{bodies}: actions[0] (0-based) \"text/json is"))
            && errors[0].contains("what it removes is no longer in the document")
            && errors[0].contains("The action can be deleted"),
        "{errors:#?}"
    );
    let warnings: Vec<String> = e.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].starts_with(&format!(
            "{ids}: actions[0] (0-based) \"Creating a Session has no published operationId"
        )) && warnings[0].contains("The action can be deleted"),
        "{warnings:#?}"
    );

    let applied = apply_files(&spec, &overlays, &ApplyOptions { lenient: true }).unwrap();
    assert_eq!(
        applied.report.warnings.len(),
        2,
        "{:#?}",
        applied.report.warnings
    );
}
