//! Preflight: the report on a deliberately broken document, focused checks, and, for each
//! problem, proof that it really makes progenitor fail and that the suggested overlay fix really
//! cures it.
//!
//! The fixes are applied here by a small interpreter of the two overlay verbs preflight
//! suggests (`update`, `remove`), independent of the project's overlay engine, so a wrong target
//! or a wrong action fails these tests. The proofs of each problem, one document each, are
//! `preflight_proofs.rs`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use creditdata_codegen::preflight::{Problem, Report, SuggestedFix, preflight};
use serde_json::{Value, json};
use serde_json_path::JsonPath;

fn broken() -> Value {
    serde_json::from_str(include_str!("../data/preflight-broken.json")).expect("valid JSON")
}

pub(crate) fn api(paths: Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": { "title": "t", "version": "1" },
        "paths": paths,
    })
}

pub(crate) fn with_components(mut doc: Value, components: Value) -> Value {
    doc["components"] = components;
    doc
}

pub(crate) fn ok() -> Value {
    json!({ "200": { "description": "ok" } })
}

pub(crate) fn json_body(schema: Value) -> Value {
    json!({ "application/json": { "schema": schema } })
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Generates,
    Errs(String),
    Panics(String),
}

/// What progenitor does with `doc`, with the settings the project generates with.
fn progenitor(doc: &Value) -> Outcome {
    let spec: openapiv3::OpenAPI = match serde_json::from_value(doc.clone()) {
        Ok(spec) => spec,
        Err(e) => return Outcome::Errs(format!("openapiv3: {e}")),
    };
    let mut settings = progenitor::GenerationSettings::new();
    settings
        .with_interface(progenitor::InterfaceStyle::Builder)
        .with_tag(progenitor::TagStyle::Merged);
    let result = catch_unwind(AssertUnwindSafe(|| {
        progenitor::Generator::new(&settings).generate_tokens(&spec)
    }));
    match result {
        Ok(Ok(_)) => Outcome::Generates,
        Ok(Err(e)) => Outcome::Errs(e.to_string()),
        Err(payload) => Outcome::Panics(
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        ),
    }
}

/// Applies one suggested action the way an Overlay 1.0 applier does.
fn apply(doc: &mut Value, fix: &SuggestedFix) {
    let path = JsonPath::parse(&fix.target)
        .unwrap_or_else(|e| panic!("`{}` is not RFC 9535 JSONPath: {e}", fix.target));
    let mut pointers: Vec<String> = path
        .query_located(doc)
        .locations()
        .map(|l| l.to_json_pointer())
        .collect();
    assert!(
        !pointers.is_empty(),
        "`{}` selects nothing in\n{doc:#}",
        fix.target
    );
    if let Some(value) = fix.action.get("update") {
        for pointer in &pointers {
            let node = doc.pointer_mut(pointer).expect("selected node");
            match (node, value) {
                (Value::Array(items), value) => items.push(value.clone()),
                (node @ Value::Object(_), value @ Value::Object(_)) => merge(node, value),
                (node, value) => panic!("cannot update {node} with {value}"),
            }
        }
    } else {
        assert_eq!(fix.action, json!({ "remove": true }), "unknown action");
        pointers.sort();
        for pointer in pointers.iter().rev() {
            let (parent, last) = pointer.rsplit_once('/').expect("not the root");
            let last = last.replace("~1", "/").replace("~0", "~");
            match doc.pointer_mut(parent).expect("parent") {
                Value::Object(map) => {
                    map.shift_remove(&last);
                }
                Value::Array(items) => {
                    items.remove(last.parse::<usize>().expect("index"));
                }
                other => panic!("cannot remove from {other}"),
            }
        }
    }
}

fn merge(node: &mut Value, value: &Value) {
    match (node, value) {
        (Value::Object(node), Value::Object(value)) => {
            for (key, value) in value {
                match node.get_mut(key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        node.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(items), Value::Array(more)) => items.extend(more.iter().cloned()),
        (node, value) => *node = value.clone(),
    }
}

/// `doc` with every action of every finding applied, in report order.
fn fixed(doc: &Value, report: &Report) -> Value {
    let mut doc = doc.clone();
    for finding in &report.findings {
        for action in finding.actions() {
            apply(&mut doc, action);
        }
    }
    doc
}

pub(crate) enum Before {
    Panics(&'static str),
    Errs(&'static str),
    /// progenitor succeeds, but what it writes is wrong or does not compile.
    Generates,
    /// progenitor would overflow its stack, which aborts the test process: not run.
    Aborts,
}

/// The proof for one problem: preflight reports exactly `expected` on `doc`; progenitor fails
/// as `before` says; with the suggested fixes applied preflight is clean and progenitor
/// generates.
pub(crate) fn prove(doc: Value, expected: &[(Problem, &str)], before: Before) {
    let report = preflight(&doc);
    let found: Vec<(Problem, &str)> = report
        .findings
        .iter()
        .map(|f| (f.problem, f.pointer.as_str()))
        .collect();
    assert_eq!(found, expected, "\n{report}");

    if !matches!(before, Before::Aborts) {
        match (before, progenitor(&doc)) {
            (Before::Panics(text), Outcome::Panics(message)) => {
                assert!(message.contains(text), "panic `{message}` lacks `{text}`")
            }
            (Before::Errs(text), Outcome::Errs(message)) => {
                assert!(message.contains(text), "error `{message}` lacks `{text}`")
            }
            (Before::Generates, Outcome::Generates) => {}
            (_, outcome) => panic!("unexpected outcome before the fix: {outcome:?}"),
        }
    }

    let cured = fixed(&doc, &report);
    let after = preflight(&cured);
    assert!(
        after.is_clean(),
        "still not clean after the fix:\n{after}\n{cured:#}"
    );
    assert_eq!(progenitor(&cured), Outcome::Generates, "{cured:#}");
}

#[test]
fn broken_document_report() {
    let report = preflight(&broken());
    insta::assert_snapshot!(report.to_string());
}

#[test]
fn broken_document_shows_every_kind_of_problem() {
    let report = preflight(&broken());
    let all = [
        Problem::Unreadable,
        Problem::UnsupportedVersion,
        Problem::IgnoredPath,
        Problem::PathItemRef,
        Problem::InvalidPathTemplate,
        Problem::MissingOperationId,
        Problem::DuplicateOperationId,
        Problem::OperationNameCollision,
        Problem::UnresolvableRef,
        Problem::DanglingRef,
        Problem::ExternalRef,
        Problem::RefCycle,
        Problem::CookieParameter,
        Problem::UnsupportedParameterStyle,
        Problem::ParameterContent,
        Problem::OptionalPathParameter,
        Problem::UndeclaredPathParameter,
        Problem::PathParameterNotInPath,
        Problem::DuplicateArgumentName,
        Problem::SeveralRequestMediaTypes,
        Problem::UnsupportedRequestMediaType,
        Problem::MissingSchema,
        Problem::MediaTypeEncoding,
        Problem::RawBodySchema,
        Problem::SuccessResponseShapes,
        Problem::ErrorResponseShapes,
        Problem::WebsocketWithout101,
        Problem::UnsupportedSchemaType,
        Problem::ExclusiveBoundWithoutBound,
        Problem::MixedUntypedEnum,
        Problem::UnsupportedNot,
        Problem::EmptyAllOf,
        Problem::KeywordWithoutFittingType,
        Problem::StructParameter,
        Problem::ValueDoesNotFitSchema,
    ];
    for problem in all {
        assert!(
            report.findings.iter().any(|f| f.problem == problem),
            "no {problem:?} in\n{report}"
        );
    }
    // The two left out need a document of their own: see `not_an_object` and
    // `generator_failure_is_narrowed_down_to_the_schema`.
}

#[test]
fn broken_document_is_cured_by_its_fixes() {
    let doc = broken();
    let cured = fixed(&doc, &preflight(&doc));
    let after = preflight(&cured);
    assert!(after.is_clean(), "{after}\n{cured:#}");
    assert_eq!(progenitor(&cured), Outcome::Generates);
}

#[test]
fn findings_are_in_document_order() {
    let doc = broken();
    let mut order = Vec::new();
    fn walk(node: &Value, pointer: String, out: &mut Vec<String>) {
        out.push(pointer.clone());
        match node {
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                walk(
                    v,
                    format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                )
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, v)| walk(v, format!("{pointer}/{i}"), out)),
            _ => {}
        }
    }
    walk(&doc, String::new(), &mut order);
    let positions: Vec<usize> = preflight(&doc)
        .findings
        .iter()
        .map(|f| {
            order
                .iter()
                .position(|p| *p == f.pointer)
                .expect("pointer into the document")
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] <= w[1]), "{positions:?}");
}

#[test]
fn actions_render_as_overlay_yaml() {
    let report = preflight(&broken());
    for action in report.findings.iter().flat_map(|f| f.actions()) {
        let yaml = action.to_yaml();
        assert!(yaml.starts_with("- target: "), "{yaml}");
        let parsed: Vec<Value> = serde_norway::from_str(&yaml).expect("valid YAML");
        let mut expected = json!({ "target": action.target, "description": action.description });
        expected
            .as_object_mut()
            .unwrap()
            .extend(action.action.as_object().unwrap().clone());
        assert_eq!(parsed, vec![expected]);
    }
    let overlay: Value = serde_norway::from_str(&report.to_overlay_yaml()).expect("valid YAML");
    assert_eq!(overlay["overlay"], "1.0.0");
    let actions = report
        .findings
        .iter()
        .map(|f| f.actions().count())
        .sum::<usize>();
    assert_eq!(overlay["actions"].as_array().map(Vec::len), Some(actions));
}

#[test]
fn clean_document_gives_an_empty_report() {
    let doc = with_components(
        api(json!({
            "/v1/sessions": {
                "post": {
                    "operationId": "CreateSession",
                    "requestBody": { "content": json_body(json!({ "$ref": "#/components/schemas/Session" })) },
                    "responses": {
                        "201": { "description": "created", "content": json_body(json!({ "$ref": "#/components/schemas/Session" })) },
                        "4XX": { "description": "error", "content": json_body(json!({ "$ref": "#/components/schemas/Problem" })) },
                        "5XX": { "description": "error", "content": json_body(json!({ "$ref": "#/components/schemas/Problem" })) },
                    },
                },
            },
            "/v1/sessions/{sessionId}": {
                "parameters": [{ "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } }],
                "get": {
                    "operationId": "GetSession",
                    "parameters": [{ "name": "X-Request-Id", "in": "header", "schema": { "type": "string" } }],
                    "responses": {
                        "200": { "description": "found", "content": json_body(json!({ "$ref": "#/components/schemas/Session" })) },
                        "4XX": { "description": "error", "content": json_body(json!({ "$ref": "#/components/schemas/Problem" })) },
                    },
                },
            },
        })),
        json!({ "schemas": {
            "Session": { "type": "object", "properties": { "id": { "type": "string" } } },
            "Problem": { "type": "object", "properties": { "title": { "type": "string", "nullable": true } } },
        } }),
    );
    let report = preflight(&doc);
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.to_string(), "preflight: no problems found\n");
    assert_eq!(progenitor(&doc), Outcome::Generates);
}

#[test]
fn not_an_object() {
    for doc in [json!([1, 2]), json!("openapi"), json!(null), json!(3)] {
        let report = preflight(&doc);
        assert_eq!(report.findings.len(), 1, "{report}");
        assert_eq!(report.findings[0].problem, Problem::NotAnObject);
        assert_eq!(report.findings[0].pointer, "");
    }
}

/// Every node of the (cured, so clean) broken document replaced in turn by garbage: preflight
/// never panics, and whenever progenitor would fail, preflight says so with one of its own
/// checks rather than by falling back to running progenitor.
#[test]
fn garbage_anywhere_is_reported_by_a_specific_check() {
    let doc = broken();
    let cured = fixed(&doc, &preflight(&doc));
    let garbage = [
        json!("x"),
        json!(null),
        json!(7),
        json!([]),
        json!({}),
        json!([{}]),
        json!({ "$ref": "#/x" }),
    ];
    let mut pointers = Vec::new();
    fn collect(node: &Value, pointer: String, out: &mut Vec<String>) {
        out.push(pointer.clone());
        match node {
            Value::Object(map) => map.iter().for_each(|(k, v)| {
                collect(
                    v,
                    format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                )
            }),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, v)| collect(v, format!("{pointer}/{i}"), out)),
            _ => {}
        }
    }
    collect(&cured, String::new(), &mut pointers);
    for pointer in pointers {
        for replacement in &garbage {
            let mut mutated = cured.clone();
            *mutated.pointer_mut(&pointer).unwrap() = replacement.clone();
            let report = preflight(&mutated);
            assert!(
                report
                    .findings
                    .iter()
                    .all(|f| f.problem != Problem::GeneratorFailure),
                "{pointer} = {replacement}:\n{report}"
            );
        }
    }
    let paths_as_string =
        json!({ "openapi": "3.0.3", "info": { "title": "t", "version": "1" }, "paths": "/v1" });
    let report = preflight(&paths_as_string);
    assert_eq!(report.findings.len(), 1, "{report}");
    assert_eq!(report.findings[0].pointer, "/paths");
}

#[test]
fn derived_operation_ids() {
    let doc = api(json!({
        "/v1/sessions": { "post": { "responses": ok() } },
        "/v1/sessions/{sessionId}/pdf-report": {
            "get": {
                "parameters": [{ "name": "sessionId", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": ok(),
            },
        },
        "/v2/sessions": { "post": { "responses": ok() } },
    }));
    let names: Vec<Value> = preflight(&doc)
        .findings
        .iter()
        .map(|f| f.fix.action["update"]["operationId"].clone())
        .collect();
    assert_eq!(
        names,
        [
            json!("CreateSession"),
            json!("GetPdfReport"),
            json!("CreateV2Session")
        ],
        "the pipeline's rule (operation_names), the version telling the last two apart"
    );
}

#[test]
fn header_parameters_are_supported() {
    let doc = api(json!({ "/a": { "get": {
        "operationId": "A",
        "parameters": [
            { "name": "X-Api-Key", "in": "header", "required": true, "schema": { "type": "string" } },
            { "name": "page", "in": "query", "style": "form", "explode": false, "schema": { "type": "integer" } },
        ],
        "responses": ok(),
    } } }));
    assert!(preflight(&doc).is_clean());
    assert_eq!(progenitor(&doc), Outcome::Generates);
}

#[test]
fn default_after_2xx_range_is_dropped_only_when_it_sorts_right_after_it() {
    let json_default =
        json!({ "description": "error", "content": json_body(json!({ "type": "string" })) });
    // extract_responses sorts 200 and 2XX as equal (both 200), stably: here 2XX ends up next
    // to `default`, which is then dropped from the success responses.
    let dropped = api(json!({ "/a": { "get": { "operationId": "A", "responses": {
        "200": { "description": "ok" }, "2XX": { "description": "ok" }, "default": json_default,
    } } } }));
    assert!(preflight(&dropped).is_clean(), "{}", preflight(&dropped));
    assert_eq!(progenitor(&dropped), Outcome::Generates);
}

#[test]
fn recursion_typify_handles_is_not_reported() {
    // A node that only annotates a reference to its own schema, or offers it among other
    // branches, is converted without merging: typify names the recursive type and stops.
    for parent in [
        json!({ "allOf": [{ "$ref": "#/components/schemas/Node" }] }),
        json!({ "allOf": [{ "$ref": "#/components/schemas/Node" }], "nullable": true, "description": "up" }),
        json!({ "anyOf": [{ "$ref": "#/components/schemas/Node" }, { "type": "string" }] }),
        json!({ "oneOf": [{ "$ref": "#/components/schemas/Node" }, { "type": "string" }], "nullable": true }),
        json!({ "$ref": "#/components/schemas/Node" }),
    ] {
        let doc = with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": {
                "200": { "description": "ok", "content": json_body(json!({ "$ref": "#/components/schemas/Node" })) },
            } } } })),
            json!({ "schemas": { "Node": { "type": "object", "properties": {
                "name": { "type": "string" }, "parent": parent.clone(),
            } } } }),
        );
        assert!(preflight(&doc).is_clean(), "{parent}: {}", preflight(&doc));
        assert_eq!(progenitor(&doc), Outcome::Generates, "{parent}");
    }
}

#[test]
fn generator_failure_is_narrowed_down_to_the_schema() {
    // typify compiles `pattern` as a regular expression; preflight has no regex engine.
    let doc = with_components(
        api(json!({ "/a": { "get": { "operationId": "A", "responses": {
            "200": { "description": "ok", "content": json_body(json!({ "$ref": "#/components/schemas/Code" })) },
        } } } })),
        json!({ "schemas": { "Code": { "type": "string", "pattern": "[A-Z" } } }),
    );
    let report = preflight(&doc);
    assert_eq!(report.findings.len(), 1, "{report}");
    assert_eq!(report.findings[0].problem, Problem::GeneratorFailure);
    assert_eq!(report.findings[0].pointer, "/components/schemas/Code");
    assert!(
        report.findings[0].message.contains("invalid pattern"),
        "{report}"
    );
    assert!(matches!(progenitor(&doc), Outcome::Errs(_)));
    let cured = fixed(&doc, &report);
    assert!(preflight(&cured).is_clean());
    assert_eq!(progenitor(&cured), Outcome::Generates);
}

#[test]
fn generator_failure_is_narrowed_down_to_the_operation() {
    let doc = api(json!({
        "/a": { "get": { "operationId": "A", "responses": ok() } },
        "/b": { "get": { "operationId": "B", "responses": {
            "200": { "description": "ok", "content": json_body(json!({ "type": "string", "pattern": "(" })) },
        } } },
    }));
    let report = preflight(&doc);
    assert_eq!(report.findings.len(), 1, "{report}");
    assert_eq!(report.findings[0].problem, Problem::GeneratorFailure);
    assert_eq!(report.findings[0].pointer, "/paths/~1b/get");
    let cured = fixed(&doc, &report);
    assert_eq!(progenitor(&cured), Outcome::Generates);
}
