//! The overlay stage, rule by rule: validation of overlay documents, the merge rules of Overlay
//! 1.0 and 1.1, removal, copy, strictness and the error reports.

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::overlay::{
    ApplyOptions, ApplyReport, Operation, Overlay, OverlayError, OverlayErrors, OverlayVersion,
    OverlayWarning, apply, apply_files,
};
use serde_json::{Value, json};

const ORIGIN: &str = "overlays/test.overlay.yaml";

fn overlay(yaml: &str) -> Overlay {
    Overlay::parse(yaml, Format::Yaml, ORIGIN).unwrap_or_else(|e| panic!("invalid overlay:\n{e}"))
}

fn invalid(yaml: &str) -> OverlayErrors {
    match Overlay::parse(yaml, Format::Yaml, ORIGIN) {
        Ok(overlay) => panic!("expected the overlay to be invalid: {overlay:?}"),
        Err(e) => e,
    }
}

/// Applies a 1.1 overlay made of `actions` (YAML) to `document`.
fn apply11(document: Value, actions: &str) -> Result<Value, OverlayErrors> {
    apply_version("1.1.0", document, actions)
}

fn apply10(document: Value, actions: &str) -> Result<Value, OverlayErrors> {
    apply_version("1.0.0", document, actions)
}

fn apply_version(
    version: &str,
    mut document: Value,
    actions: &str,
) -> Result<Value, OverlayErrors> {
    let text =
        format!("overlay: {version}\ninfo:\n  title: t\n  version: 1.0.0\nactions:\n{actions}");
    apply(&mut document, &[overlay(&text)], &ApplyOptions::default())?;
    Ok(document)
}

fn ok(result: Result<Value, OverlayErrors>) -> Value {
    result.unwrap_or_else(|e| panic!("apply failed:\n{e}"))
}

fn err(result: Result<Value, OverlayErrors>) -> String {
    match result {
        Ok(document) => panic!("expected an error, got {document}"),
        Err(e) => e.to_string(),
    }
}

/// Compares values and key order.
fn assert_same(actual: &Value, expected: &Value) {
    assert_eq!(
        serde_json::to_string_pretty(actual).unwrap(),
        serde_json::to_string_pretty(expected).unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// The overlay document

#[test]
fn versions_1_0_x_and_1_1_x_are_supported_and_the_patch_is_ignored() {
    for (text, version) in [
        ("1.0.0", Some(OverlayVersion::V1_0)),
        ("1.0.9", Some(OverlayVersion::V1_0)),
        ("1.0.0-rc1", Some(OverlayVersion::V1_0)),
        ("1.1.0", Some(OverlayVersion::V1_1)),
        ("1.1.12", Some(OverlayVersion::V1_1)),
        ("1.1.0-beta", None),
        ("1.2.0", None),
        ("2.0.0", None),
        ("1.0", None),
        ("1.0.x", None),
        ("", None),
    ] {
        assert_eq!(OverlayVersion::parse(text), version, "{text:?}");
    }
}

#[test]
fn a_valid_overlay_is_read_with_its_parts() {
    let overlay = overlay(
        "overlay: 1.1.0\n\
         x-root: 1\n\
         info: {title: T, version: 2.0.0, description: D, x-owner: me}\n\
         extends: ./openapi.yaml\n\
         actions:\n\
         - {target: $.info, description: first, update: {x-a: 1}, x-note: n}\n\
         - {target: $.paths, remove: true}\n\
         - {target: \"$.paths['/b']\", copy: \"$.paths['/a']\", remove: false}\n",
    );
    assert_eq!(overlay.version, OverlayVersion::V1_1);
    assert_eq!(overlay.info.title, "T");
    assert_eq!(overlay.info.description.as_deref(), Some("D"));
    assert_eq!(overlay.extends.as_deref(), Some("./openapi.yaml"));
    assert_eq!(overlay.actions.len(), 3);
    assert_eq!(overlay.actions[0].description.as_deref(), Some("first"));
    assert!(matches!(overlay.actions[0].operation, Operation::Update(_)));
    assert!(matches!(overlay.actions[1].operation, Operation::Remove));
    assert!(
        matches!(&overlay.actions[2].operation, Operation::Copy { source, .. } if source == "$.paths['/a']")
    );
}

#[test]
fn json_overlays_are_read_too() {
    let text = r#"{"overlay": "1.0.0", "info": {"title": "t", "version": "1"},
                   "actions": [{"target": "$.info", "update": {"x-a": true}}]}"#;
    let overlay = Overlay::parse(text, Format::Json, "o.json").unwrap();
    assert_eq!(overlay.origin, "o.json");
    assert_eq!(overlay.version, OverlayVersion::V1_0);
}

#[test]
fn every_problem_of_an_invalid_overlay_is_reported_at_once() {
    let errors = invalid(
        "overlay: 1.0.0\n\
         info:\n  version: 3\n  summary: s\n\
         extends: 7\n\
         target: $.x\n\
         actions:\n\
         - {target: $.a, update: {b: 1}, remove: true}\n\
         - {target: $.a}\n\
         - {target: $.a, remove: false}\n\
         - {target: \"$.paths[?@.x == ]\", remove: true}\n\
         - {target: $.a, copy: $.b}\n\
         - {target: $.a, remove: \"yes\"}\n\
         - {target: $.a, updte: {b: 1}, description: typo}\n\
         - {update: {b: 1}}\n\
         - {target: [$.a], update: {}}\n\
         - just a string\n\
         - {target: $.a, update: {b: 1}, remove: true}\n",
    );
    insta::assert_snapshot!(errors.to_string());
}

#[test]
fn root_info_and_actions_are_required() {
    insta::assert_snapshot!("missing_parts", invalid("x-only: true\n").to_string());
    insta::assert_snapshot!(
        "wrong_types",
        invalid("overlay: 1.0\ninfo: title\nactions: {target: $}\n").to_string()
    );
    insta::assert_snapshot!("not_an_object", invalid("- overlay: 1.0.0\n").to_string());
}

#[test]
fn actions_must_not_be_empty() {
    let e = invalid("overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions: []\n");
    assert_eq!(
        e.to_string(),
        "overlays/test.overlay.yaml: actions: is empty: the Overlay Specification requires at \
         least one action"
    );
}

#[test]
fn unsupported_versions_are_named() {
    let e = invalid(
        "overlay: 1.2.0\ninfo: {title: t, version: '1'}\nactions: [{target: $, remove: true}]\n",
    );
    assert!(
        e.to_string()
            .contains("unsupported Overlay Specification version \"1.2.0\""),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Actions that combine modifiers, or have none: the specification's meaning, with a warning

/// Applies a `version` overlay made of `actions` and returns the document with the warnings of
/// the run, one string each.
fn apply_warned(
    version: &str,
    mut document: Value,
    actions: &str,
) -> Result<(Value, Vec<String>), OverlayErrors> {
    let text =
        format!("overlay: {version}\ninfo:\n  title: t\n  version: 1.0.0\nactions:\n{actions}");
    let report = apply(&mut document, &[overlay(&text)], &ApplyOptions::default())?;
    let warnings = report.warnings.iter().map(ToString::to_string).collect();
    Ok((document, warnings))
}

#[test]
fn update_with_remove_true_removes_and_warns_that_the_update_is_ignored() {
    // 1.0 and 1.1, Action Object, `update`: "This field has no impact if the `remove` field of
    // this action object is `true`."
    for version in ["1.0.0", "1.1.0"] {
        let (document, warnings) = apply_warned(
            version,
            json!({"info": {"title": "A", "x-internal": {"team": "t"}}}),
            "- target: $.info['x-internal']\n  description: Drop the internal notes\n  update: {team: u}\n  remove: true\n",
        )
        .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_same(&document, &json!({"info": {"title": "A"}}));
        assert_eq!(warnings.len(), 1, "{version}: {warnings:?}");
        assert!(
            warnings[0].starts_with(
                "overlays/test.overlay.yaml: actions[0] (0-based) \"Drop the internal notes\""
            ) && warnings[0].contains("`update` is ignored because `remove` is true"),
            "{version}: {warnings:?}"
        );
    }
}

#[test]
fn copy_with_remove_true_removes_and_warns_that_the_copy_is_ignored() {
    // 1.1, Action Object, `copy`: "This field has no impact if the `remove` field of this
    // action object is `true` or if the `update` field contains a value."
    let (document, warnings) = apply_warned(
        "1.1.0",
        json!({"paths": {"/a": {"get": {}}, "/b": {"get": {}}}}),
        "- target: $.paths['/b']\n  copy: $.paths['/a']\n  remove: true\n",
    )
    .unwrap();
    assert_same(&document, &json!({"paths": {"/a": {"get": {}}}}));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("`copy` is ignored because `remove` is true"),
        "{warnings:?}"
    );
}

#[test]
fn copy_with_update_applies_the_update_and_warns_that_the_copy_is_ignored() {
    let (document, warnings) = apply_warned(
        "1.1.0",
        json!({"paths": {"/a": {"get": {"x": 1}}, "/b": {"put": {}}}}),
        "- target: $.paths['/b']\n  copy: $.paths['/a']\n  update: {x-b: true}\n",
    )
    .unwrap();
    assert_same(
        &document,
        &json!({"paths": {"/a": {"get": {"x": 1}}, "/b": {"put": {}, "x-b": true}}}),
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("`copy` is ignored because `update` is set"),
        "{warnings:?}"
    );
}

#[test]
fn all_three_modifiers_remove() {
    let (document, warnings) = apply_warned(
        "1.1.0",
        json!({"a": {"x": 1}, "b": {"y": 2}}),
        "- target: $.b\n  copy: $.a\n  update: {z: 3}\n  remove: true\n",
    )
    .unwrap();
    assert_same(&document, &json!({"a": {"x": 1}}));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
}

#[test]
fn an_action_with_only_a_target_is_a_no_op_with_a_warning() {
    // Valid against the 1.0 and 1.1 schemas (only `target` is required); it changes nothing.
    for actions in [
        "- target: $.info\n  description: Left over\n",
        "- target: $.info\n  description: Left over\n  remove: false\n",
        "- target: $.nothing\n  description: Left over\n",
    ] {
        for version in ["1.0.0", "1.1.0"] {
            let (document, warnings) =
                apply_warned(version, json!({"info": {"title": "A"}}), actions)
                    .unwrap_or_else(|e| panic!("{version} {actions}: {e}"));
            assert_same(&document, &json!({"info": {"title": "A"}}));
            assert_eq!(warnings.len(), 1, "{actions}: {warnings:?}");
            assert!(
                warnings[0]
                    .contains("has no `update`, `remove: true` or `copy`, so it changes nothing"),
                "{warnings:?}"
            );
        }
    }
}

#[test]
fn invalid_fields_are_refused_even_where_they_would_be_ignored() {
    let e = invalid(
        "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions:\n\
         - {target: $.a, copy: '$[', remove: true}\n\
         - {target: $.a, copy: 7, update: {}}\n",
    );
    insta::assert_snapshot!(e.to_string());
}

#[test]
fn a_parse_error_names_the_file_and_the_line() {
    let e = Overlay::parse(
        "overlay: 1.1.0\ninfo: [\n",
        Format::Yaml,
        "bad.overlay.yaml",
    )
    .unwrap_err();
    assert!(matches!(e.errors[..], [OverlayError::Document(_)]));
    assert!(
        e.to_string()
            .starts_with("bad.overlay.yaml is not valid YAML (line"),
        "{e}"
    );
}

#[test]
fn deeply_nested_jsonpath_is_rejected_before_it_can_hang_or_overflow() {
    let hostile = format!("$[?{}@.a{}]", "@[?".repeat(40), "]".repeat(40));
    let parens = format!("$[?{}@{}]", "(".repeat(50_000), ")".repeat(50_000));
    for target in [hostile, parens] {
        let text = format!(
            "overlay: 1.1.0\ninfo: {{title: t, version: '1'}}\nactions: [{{target: '{target}', remove: true}}]\n"
        );
        let e = invalid(&text);
        assert!(e.to_string().contains("nest more than 12 deep"), "{e}");
    }
    // Brackets inside string literals do not count.
    let quoted = format!("$['{}']", "[(".repeat(20));
    let text = format!(
        "overlay: 1.1.0\ninfo: {{title: t, version: '1'}}\nactions: [{{target: \"{quoted}\", remove: true}}]\n"
    );
    overlay(&text);
}

// ---------------------------------------------------------------------------------------------
// update: objects (1.0 and 1.1)

#[test]
fn object_merge_keeps_existing_keys_in_place_and_appends_new_ones_in_update_order() {
    let document = json!({"info": {"title": "A", "version": "1", "contact": {"name": "n"}}});
    let actions = "- target: $.info\n  update:\n    z: 1\n    title: B\n    contact: {email: e, name: m}\n    a: 2\n";
    for result in [
        apply10(document.clone(), actions),
        apply11(document, actions),
    ] {
        assert_same(
            &ok(result),
            &json!({"info": {"title": "B", "version": "1",
                    "contact": {"name": "m", "email": "e"}, "z": 1, "a": 2}}),
        );
    }
}

#[test]
fn update_of_the_root_merges_into_the_root() {
    let result = ok(apply10(
        json!({"openapi": "3.1.0", "info": {"title": "A"}}),
        "- target: $\n  update: {info: {x-y: true}, servers: []}\n",
    ));
    assert_same(
        &result,
        &json!({"openapi": "3.1.0", "info": {"title": "A", "x-y": true}, "servers": []}),
    );
}

#[test]
fn nested_arrays_concatenate() {
    // The specification's traits example: parameters are added after the existing ones.
    let document = json!({"get": {"parameters": [{"name": "id"}]}});
    let actions = "- target: $.get\n  update:\n    parameters: [{name: top}, {name: skip}]\n";
    let expected =
        json!({"get": {"parameters": [{"name": "id"}, {"name": "top"}, {"name": "skip"}]}});
    assert_same(&ok(apply11(document.clone(), actions)), &expected);
    assert_same(&ok(apply10(document, actions)), &expected);
}

#[test]
fn nested_primitives_replace_primitives_and_null_is_a_primitive() {
    let document = json!({"a": {"s": "x", "n": 1, "b": true, "z": null}});
    let actions = "- target: $.a\n  update: {s: 2, n: null, b: text, z: false}\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"a": {"s": 2, "n": null, "b": "text", "z": false}}),
    );
}

#[test]
fn nested_pairings_of_different_kinds_are_errors_and_all_are_reported() {
    let document = json!({"schema": {"example": "indoor", "items": [1], "properties": {"a": {}}, "type": "string"}});
    let actions = "- target: $.schema\n  description: Fix the tag property\n  update:\n    example: [indoor]\n    items: {type: string}\n    properties: null\n    type: string\n";
    let result = apply11(document, actions);
    insta::assert_snapshot!(err(result));
}

#[test]
fn an_object_target_needs_an_object_value() {
    let document = json!({"info": {"title": "A"}});
    for update in ["text", "[1]", "null"] {
        let e = err(apply11(
            document.clone(),
            &format!("- target: $.info\n  update: {update}\n"),
        ));
        assert!(
            e.contains("the target is an object, so the value must be an object"),
            "{e}"
        );
        let e = err(apply10(
            document.clone(),
            &format!("- target: $.info\n  update: {update}\n"),
        ));
        assert!(
            e.contains("the target is an object, so the value must be an object"),
            "{e}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// update: arrays

#[test]
fn in_1_1_an_array_value_is_concatenated_with_an_array_target() {
    let result = ok(apply11(
        json!({"tags": ["a"]}),
        "- target: $.tags\n  update: [b, c]\n",
    ));
    assert_same(&result, &json!({"tags": ["a", "b", "c"]}));
}

#[test]
fn in_1_1_an_object_or_primitive_value_is_appended_to_an_array_target() {
    let actions = "- target: $.p\n  update: {name: q}\n- target: $.t\n  update: x\n";
    let result = ok(apply11(json!({"p": [{"name": "a"}], "t": ["a"]}), actions));
    assert_same(
        &result,
        &json!({"p": [{"name": "a"}, {"name": "q"}], "t": ["a", "x"]}),
    );
}

#[test]
fn in_1_0_an_array_value_is_concatenated_with_an_array_target_as_in_1_1() {
    // 1.0 says the value "MUST be an entry to append to the array", which leaves an array value
    // ambiguous: one nested entry, or its entries. 1.1 settles it as concatenation, the peers
    // that test it (speakeasy, BinkyLabs .NET) concatenate in 1.0 as well, and a nested array
    // is never meaningful in an OpenAPI document: this engine concatenates in both versions.
    let actions = "- target: $.tags\n  update: [b, c]\n- target: $.params\n  update: {name: newParam, in: query}\n";
    let result = ok(apply10(json!({"tags": ["a"], "params": []}), actions));
    assert_same(
        &result,
        &json!({"tags": ["a", "b", "c"], "params": [{"name": "newParam", "in": "query"}]}),
    );
}

// ---------------------------------------------------------------------------------------------
// update: primitives

#[test]
fn in_1_1_a_primitive_replaces_a_primitive_target() {
    // The specification's targeted overlay example.
    let document = json!({"paths": {"/foo": {"get": {"description": "old"}}, "/bar": {"get": {"description": null}}}});
    let actions = "- target: $.paths['/foo'].get.description\n  update: This is the new description\n\
                   - target: $.paths['/bar'].get.description\n  update: 42\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"paths": {"/foo": {"get": {"description": "This is the new description"}}, "/bar": {"get": {"description": 42}}}}),
    );
}

#[test]
fn in_1_1_a_primitive_target_cannot_take_an_object_or_array() {
    let e = err(apply11(
        json!({"a": "x"}),
        "- target: $.a\n  update: {b: 1}\n- target: $.a\n  update: [1]\n",
    ));
    insta::assert_snapshot!(e);
}

#[test]
fn in_1_0_a_primitive_target_is_an_error() {
    let e = err(apply10(
        json!({"info": {"title": "A"}}),
        "- target: $.info.title\n  update: B\n",
    ));
    assert!(
        e.contains("the target is a string, but Overlay 1.0 updates only objects and arrays"),
        "{e}"
    );
}

#[test]
fn in_1_1_the_nodes_of_one_update_must_be_all_of_one_kind() {
    let document = json!({"a": {"x": 1}, "b": [1], "c": "s", "d": {}});
    let e = err(apply11(
        document.clone(),
        "- target: $.*\n  update: {y: 2}\n",
    ));
    insta::assert_snapshot!(e);
    // 1.0 has no such rule: each node takes the value by its own kind.
    let result = ok(apply10(
        json!({"a": {"x": 1}, "b": [1]}),
        "- target: $.*\n  update: {y: 2}\n",
    ));
    assert_same(&result, &json!({"a": {"x": 1, "y": 2}, "b": [1, {"y": 2}]}));
}

#[test]
fn a_failed_merge_leaves_the_node_as_it_was() {
    let mut document = json!({"a": {"b": 1, "c": [1]}});
    let before = document.clone();
    let o = overlay(
        "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions:\n- {target: $.a, update: {new: 1, c: {}}}\n",
    );
    assert!(apply(&mut document, &[o], &ApplyOptions::default()).is_err());
    assert_same(&document, &before);
}

#[test]
fn a_node_selected_twice_is_updated_once() {
    let result = ok(apply11(
        json!({"t": []}),
        "- target: \"$['t','t']\"\n  update: x\n",
    ));
    assert_same(&result, &json!({"t": ["x"]}));
}

// ---------------------------------------------------------------------------------------------
// remove

#[test]
fn remove_deletes_object_members_and_keeps_the_order_of_the_rest() {
    let document = json!({"a": 1, "b": 2, "c": 3, "d": 4});
    let result = ok(apply10(document, "- target: $.b\n  remove: true\n"));
    assert_same(&result, &json!({"a": 1, "c": 3, "d": 4}));
}

#[test]
fn remove_deletes_several_array_elements_from_the_highest_index_down() {
    let document = json!({"n": [5, 1, 7, 1, 9, 1], "p": [{"name": "dummy"}, {"name": "keep"}, {"name": "dummy"}]});
    let actions = "- target: $.n[?@ > 1]\n  remove: true\n- target: $.p[?@.name == 'dummy']\n  remove: true\n";
    let result = ok(apply11(document, actions));
    assert_same(&result, &json!({"n": [1, 1, 1], "p": [{"name": "keep"}]}));
}

#[test]
fn remove_handles_nested_selections() {
    let document = json!({"x": {"x": {"y": 1}, "z": [{"x": 2}, 3]}, "k": 0});
    let result = ok(apply11(document, "- target: $..x\n  remove: true\n"));
    assert_same(&result, &json!({"k": 0}));
    let document = json!({"l": [[1, 2], [3, 4], 5]});
    let result = ok(apply11(
        document,
        "- target: $.l[0,1][0]\n  remove: true\n- target: $.l[0]\n  remove: true\n",
    ));
    assert_same(&result, &json!({"l": [[4], 5]}));
}

#[test]
fn remove_deletes_primitive_array_items_in_1_1() {
    let document = json!({"paths": {"/a": {"get": {"tags": ["dummy", "real"]}}}});
    let result = ok(apply11(
        document,
        "- target: $.paths.*.get.tags[?@ == 'dummy']\n  remove: true\n",
    ));
    assert_same(
        &result,
        &json!({"paths": {"/a": {"get": {"tags": ["real"]}}}}),
    );
}

#[test]
fn removing_the_root_is_an_error() {
    let e = err(apply11(json!({"a": 1}), "- target: $\n  remove: true\n"));
    assert!(
        e.contains("`remove` selects the document root `$`, which cannot be removed"),
        "{e}"
    );
}

#[test]
fn actions_apply_in_order_so_a_removed_node_can_be_recreated() {
    let document = json!({"servers": [{"url": "a"}], "paths": {}});
    let actions =
        "- target: $.servers\n  remove: true\n- target: $\n  update: {servers: [{url: b}]}\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"paths": {}, "servers": [{"url": "b"}]}),
    );
}

// ---------------------------------------------------------------------------------------------
// copy (1.1)

#[test]
fn copy_merges_the_source_value_into_each_target() {
    // The specification's "Simple Copy" example.
    let document =
        json!({"paths": {"/items": {"get": {"responses": {}}}, "/some-items": {"delete": {}}}});
    let actions = "- target: $.paths['/some-items']\n  copy: $.paths['/items']\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"paths": {"/items": {"get": {"responses": {}}}, "/some-items": {"delete": {}, "get": {"responses": {}}}}}),
    );
}

#[test]
fn copy_reads_the_document_as_the_previous_action_left_it() {
    // The specification's "Move" example: ensure the target exists, copy, remove the source.
    let document = json!({"paths": {"/items": {"get": {"x": 1}}, "/some-items": {"delete": {}}}});
    let actions = "- target: $.paths\n  update: {/new-items: {}}\n\
                   - target: $.paths['/new-items']\n  copy: $.paths['/items']\n\
                   - target: $.paths['/items']\n  remove: true\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"paths": {"/some-items": {"delete": {}}, "/new-items": {"get": {"x": 1}}}}),
    );
}

#[test]
fn copy_follows_the_update_rules_for_arrays_and_primitives() {
    let document = json!({"a": [1], "b": [2, 3], "s": "x", "t": "y"});
    let actions = "- target: $.a\n  copy: $.b\n- target: $.s\n  copy: $.t\n";
    assert_same(
        &ok(apply11(document, actions)),
        &json!({"a": [1, 2, 3], "b": [2, 3], "s": "y", "t": "y"}),
    );
}

#[test]
fn a_copy_source_must_select_exactly_one_node() {
    let document = json!({"a": {}, "b": {"x": 1}, "c": {"x": 2}});
    let e = err(apply11(
        document,
        "- target: $.a\n  copy: $.missing\n- target: $.a\n  copy: $.*.x\n- target: $.gone\n  copy: $.nothing\n",
    ));
    insta::assert_snapshot!(e);
}

// ---------------------------------------------------------------------------------------------
// strictness and reports

const PETSTORE: &str = "openapi: 3.1.0\ninfo: {title: Pets, version: '1'}\npaths:\n  /pets:\n    get: {operationId: listPets}\n";

#[test]
fn strict_mode_reports_every_target_that_selects_nothing_across_overlays() {
    let first = Overlay::parse(
        "overlay: 1.1.0\ninfo: {title: ids, version: '1'}\nactions:\n\
         - target: $.paths['/pets'].get\n  description: Name the pet listing\n  update: {operationId: ListPets}\n\
         - target: $.paths['/owners'].get\n  description: |\n    Name the owner listing,\n    which moved upstream\n  update: {operationId: ListOwners}\n",
        Format::Yaml,
        "overlays/01-ids.overlay.yaml",
    )
    .unwrap();
    let second = Overlay::parse(
        "overlay: 1.0.0\ninfo: {title: cleanup, version: '1'}\nactions:\n\
         - {target: $.paths.*.post, remove: true}\n\
         - {target: $.info, update: {x-cleaned: true}}\n\
         - {target: $.info.title, update: {x: 1}}\n",
        Format::Yaml,
        "overlays/02-cleanup.overlay.yaml",
    )
    .unwrap();
    let mut document = document::parse(PETSTORE, Format::Yaml, "spec").unwrap();
    let before = document.clone();
    let e = apply(
        &mut document,
        &[first.clone(), second.clone()],
        &ApplyOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.errors.len(), 3);
    assert!(e.warnings.is_empty());
    insta::assert_snapshot!("strict_report", e.to_string());
    assert_same(&document, &before);

    // Lenient: the same run succeeds except for the real error, and says what it skipped.
    let e = apply(
        &mut document,
        &[first.clone(), second],
        &ApplyOptions { lenient: true },
    )
    .unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    assert_eq!(e.warnings.len(), 2);

    let report = apply(&mut document, &[first], &ApplyOptions { lenient: true }).unwrap();
    let warnings: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("lenient_warnings", warnings.join("\n"));
    assert!(matches!(&report.warnings[0], OverlayWarning::NoMatch { action } if action.index == 1));
    assert_eq!(document["paths"]["/pets"]["get"]["operationId"], "ListPets");
}

#[test]
fn the_report_counts_the_nodes_each_action_selected() {
    let mut document = json!({"paths": {"/a": {"get": {}}, "/b": {"get": {}, "put": {}}}});
    let o = overlay(
        "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions:\n\
         - {target: $.paths.*.get, update: {x-safe: true}}\n\
         - {target: $.paths.*.*, update: {x-seen: true}}\n",
    );
    let report: ApplyReport = apply(&mut document, &[o], &ApplyOptions::default()).unwrap();
    let counts: Vec<(usize, usize)> = report
        .actions
        .iter()
        .map(|a| (a.action.index, a.selected))
        .collect();
    assert_eq!(counts, [(0, 2), (1, 3)]);
    assert_eq!(
        document["paths"]["/b"]["get"],
        json!({"x-safe": true, "x-seen": true})
    );
}

#[test]
fn apply_files_reports_the_problems_of_every_file_together() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(
        &spec,
        r#"{"openapi": "3.1.0", "info": {"title": "A", "version": "1"}}"#,
    )
    .unwrap();
    let good = dir.path().join("01-good.overlay.yaml");
    std::fs::write(&good, "overlay: 1.1.0\ninfo: {title: t, version: '1'}\nactions: [{target: $.info, update: {x-a: 1}}]\n").unwrap();
    let bad = dir.path().join("02-bad.overlay.yaml");
    std::fs::write(
        &bad,
        "overlay: 1.1.0\ninfo: {title: t}\nactions: [{target: $.info, remove: maybe}]\n",
    )
    .unwrap();
    let missing = dir.path().join("03-missing.overlay.yaml");

    let e = apply_files(
        &spec,
        &[good.clone(), bad.clone(), missing.clone()],
        &ApplyOptions::default(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(e.errors.len(), 3, "{text}");
    assert!(
        text.contains(&format!("{}: info.version: missing", bad.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "{}: actions[0].remove (0-based): must be true or false",
            bad.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("cannot read {}", missing.display())),
        "{text}"
    );

    let applied = apply_files(&spec, &[good], &ApplyOptions::default()).unwrap();
    assert_eq!(applied.format, Format::Json);
    assert_eq!(applied.document["info"]["x-a"], 1);
}

#[test]
fn a_target_that_may_vanish_is_a_warning_in_strict_mode_and_only_for_that_action() {
    let document = json!({"paths": {"/a": {"get": {}}}});
    let pin = "  - target: $.paths['/gone'].get\n    update: {operationId: Kept}\n    \
               x-creditdata-target-may-vanish: true\n";
    let (after, warnings) = apply_warned("1.1.0", document.clone(), pin).unwrap();
    assert_same(&after, &document);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("selects nothing"), "{warnings:?}");

    let plain = "  - target: $.paths['/gone'].get\n    update: {operationId: Kept}\n";
    assert!(err(apply11(document.clone(), plain)).contains("selects nothing"));

    let mistyped = "overlay: 1.1.0\ninfo:\n  title: t\n  version: 1.0.0\nactions:\n  - target: \
                    $.paths\n    update: {}\n    x-creditdata-target-may-vanish: yes please\n";
    let e = invalid(mistyped).to_string();
    assert!(
        e.contains("x-creditdata-target-may-vanish") && e.contains("true or false"),
        "{e}"
    );
}
