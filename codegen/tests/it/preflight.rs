//! Preflight: the report on a deliberately broken document, focused checks, and, for each
//! problem, proof that it really makes progenitor fail and that the suggested overlay fix really
//! cures it.
//!
//! The fixes are applied here by a small interpreter of the two overlay verbs preflight
//! suggests (`update`, `remove`), independent of the project's overlay engine, so a wrong target
//! or a wrong action fails these tests.

use std::panic::{AssertUnwindSafe, catch_unwind};

use creditdata_codegen::preflight::{Problem, Report, SuggestedFix, preflight};
use serde_json::{Value, json};
use serde_json_path::JsonPath;

fn broken() -> Value {
    serde_json::from_str(include_str!("../data/preflight-broken.json")).expect("valid JSON")
}

fn api(paths: Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": { "title": "t", "version": "1" },
        "paths": paths,
    })
}

fn with_components(mut doc: Value, components: Value) -> Value {
    doc["components"] = components;
    doc
}

fn ok() -> Value {
    json!({ "200": { "description": "ok" } })
}

fn json_body(schema: Value) -> Value {
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

enum Before {
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
fn prove(doc: Value, expected: &[(Problem, &str)], before: Before) {
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

macro_rules! proofs {
    ($($name:ident: $doc:expr, [$(($problem:ident, $pointer:expr)),* $(,)?], $before:expr;)*) => {$(
        #[test]
        fn $name() {
            prove($doc, &[$((Problem::$problem, $pointer)),*], $before);
        }
    )*};
}

proofs! {
    version_3_1:
        json!({ "openapi": "3.1.0", "info": { "title": "t", "version": "1" },
                "paths": { "/a": { "get": { "operationId": "A", "responses": ok() } } } }),
        [(UnsupportedVersion, "/openapi")],
        Before::Errs("invalid version: 3.1.0");

    missing_operation_id:
        api(json!({ "/v1/sessions": { "post": { "responses": ok() } } })),
        [(MissingOperationId, "/paths/~1v1~1sessions/post")],
        Before::Errs("is missing operation ID");

    duplicate_operation_id:
        api(json!({ "/a": { "get": { "operationId": "Get", "responses": ok() } },
                    "/b": { "get": { "operationId": "Get", "responses": ok() } } })),
        [(DuplicateOperationId, "/paths/~1b/get/operationId")],
        Before::Errs("duplicate operation ID: Get");

    operation_ids_equal_after_sanitizing:
        api(json!({ "/a": { "get": { "operationId": "getSession", "responses": ok() } },
                    "/b": { "get": { "operationId": "get_session", "responses": ok() } } })),
        [(OperationNameCollision, "/paths/~1b/get/operationId")],
        Before::Generates;

    operation_named_like_client_new:
        api(json!({ "/a": { "post": { "operationId": "new", "responses": ok() } } })),
        [(OperationNameCollision, "/paths/~1a/post/operationId")],
        Before::Generates;

    json_400_next_to_bodiless_errors:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": {
                "200": { "description": "ok", "content": json_body(json!({ "type": "string" })) },
                "400": { "description": "bad", "content": json_body(json!({ "$ref": "#/components/schemas/Problem" })) },
                "401": { "description": "unauthorized" },
                "403": { "description": "forbidden" },
                "404": { "description": "not found" },
                "500": { "description": "failed" },
            } } } })),
            json!({ "schemas": { "Problem": { "type": "object", "properties": { "title": { "type": "string" } } } } }),
        ),
        [
            (ErrorResponseShapes, "/paths/~1a/get/responses/401"),
            (ErrorResponseShapes, "/paths/~1a/get/responses/403"),
            (ErrorResponseShapes, "/paths/~1a/get/responses/404"),
            (ErrorResponseShapes, "/paths/~1a/get/responses/500"),
        ],
        Before::Panics("response_types.len() <= 1");

    success_next_to_differently_shaped_default:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": {
            "200": { "description": "ok", "content": json_body(json!({ "type": "string" })) },
            "default": { "description": "anything else", "content": json_body(json!({ "type": "integer" })) },
        } } } })),
        [(SuccessResponseShapes, "/paths/~1a/get/responses/default")],
        Before::Panics("response_types.len() <= 1");

    default_kept_when_2xx_range_sorts_first:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": {
            "2XX": { "description": "ok" },
            "200": { "description": "ok" },
            "default": { "description": "error", "content": json_body(json!({ "type": "string" })) },
        } } } })),
        [
            (SuccessResponseShapes, "/paths/~1a/get/responses/2XX"),
            (SuccessResponseShapes, "/paths/~1a/get/responses/200"),
        ],
        Before::Panics("response_types.len() <= 1");

    several_request_media_types:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(), "requestBody": { "content": {
            "application/json": { "schema": { "type": "string" } },
            "text/json": { "schema": { "type": "string" } },
            "application/*+json": { "schema": { "type": "string" } },
        } } } } })),
        [
            (SeveralRequestMediaTypes, "/paths/~1a/post/requestBody/content/text~1json"),
            (SeveralRequestMediaTypes, "/paths/~1a/post/requestBody/content/application~1*+json"),
        ],
        Before::Panics("more media types than expected");

    request_media_type_with_encoding:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(), "requestBody": { "content": {
            "application/json": { "schema": { "type": "object" }, "encoding": { "a": { "contentType": "text/plain" } } },
        } } } } })),
        [(MediaTypeEncoding, "/paths/~1a/post/requestBody/content/application~1json/encoding")],
        Before::Panics("media type encoding not empty");

    response_media_type_with_encoding:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": { "200": { "description": "ok", "content": {
            "application/json": { "schema": { "type": "object" }, "encoding": { "a": { "contentType": "text/plain" } } },
        } } } } } })),
        [(MediaTypeEncoding, "/paths/~1a/get/responses/200/content/application~1json/encoding")],
        Before::Panics("mt.encoding.is_empty()");

    request_json_without_schema:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(),
            "requestBody": { "content": { "application/json": {} } } } } })),
        [(MissingSchema, "/paths/~1a/post/requestBody/content/application~1json")],
        Before::Errs("No schema specified for request body");

    response_json_without_schema:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": {
            "200": { "description": "ok", "content": { "application/json; charset=utf-8": {} } },
        } } } })),
        [(MissingSchema, "/paths/~1a/get/responses/200/content/application~1json; charset=utf-8")],
        Before::Panics("no schema");

    request_text_csv:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(),
            "requestBody": { "content": { "text/csv": { "schema": { "type": "string" } } } } } } })),
        [(UnsupportedRequestMediaType, "/paths/~1a/post/requestBody/content/text~1csv")],
        Before::Errs("unexpected content type: text/csv");

    // A `+json` type is sent as JSON under its own name (see next_generator.rs); a media
    // range names no type a request could carry.
    request_json_media_range:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(),
            "requestBody": { "content": { "application/*+json": { "schema": { "type": "object" } } } } } } })),
        [(UnsupportedRequestMediaType, "/paths/~1a/post/requestBody/content/application~1*+json")],
        Before::Errs("unexpected content type");

    octet_stream_body_with_max_length:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(), "requestBody": { "content": {
            "application/octet-stream": { "schema": { "type": "string", "format": "binary", "maxLength": 10 } },
        } } } } })),
        [(RawBodySchema, "/paths/~1a/post/requestBody/content/application~1octet-stream/schema")],
        Before::Errs("invalid schema for application/octet-stream");

    text_body_with_format:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(), "requestBody": { "content": {
            "text/plain; charset=utf-8": { "schema": { "type": "string", "format": "binary" } },
        } } } } })),
        [(RawBodySchema, "/paths/~1a/post/requestBody/content/text~1plain; charset=utf-8/schema")],
        Before::Errs("invalid schema for text/plain");

    cookie_parameter:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(),
            "parameters": [{ "name": "session", "in": "cookie", "schema": { "type": "string" } }] } } })),
        [(CookieParameter, "/paths/~1a/get/parameters/0")],
        Before::Errs("cookie parameters are not supported");

    deep_object_query_parameter:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(),
            "parameters": [{ "name": "filter", "in": "query", "style": "deepObject", "schema": { "type": "object" } }] } } })),
        [(UnsupportedParameterStyle, "/paths/~1a/get/parameters/0")],
        Before::Errs("unsupported style of query parameter");

    matrix_path_parameter:
        api(json!({ "/a/{id}": { "get": { "operationId": "A", "responses": ok(),
            "parameters": [{ "name": "id", "in": "path", "required": true, "style": "matrix", "schema": { "type": "string" } }] } } })),
        [(UnsupportedParameterStyle, "/paths/~1a~1{id}/get/parameters/0")],
        Before::Errs("unsupported style of path parameter");

    parameter_with_content:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(),
            "parameters": [{ "name": "X-Trace", "in": "header",
                             "content": { "text/plain": { "schema": { "type": "string" } } } }] } } })),
        [(ParameterContent, "/paths/~1a/get/parameters/0")],
        Before::Errs("unexpected content");

    optional_path_parameter:
        api(json!({ "/a/{id}": {
            "parameters": [{ "name": "id", "in": "path", "schema": { "type": "string" } }],
            "get": { "operationId": "A", "responses": ok() } } })),
        [(OptionalPathParameter, "/paths/~1a~1{id}/parameters/0")],
        Before::Panics("parameter_data.required");

    placeholder_without_parameter:
        api(json!({ "/a/{id}": { "get": { "operationId": "A", "responses": ok() } } })),
        [(UndeclaredPathParameter, "/paths/~1a~1{id}/get")],
        Before::Panics("missing path name mapping id");

    placeholder_shadowed_by_query_parameter:
        api(json!({ "/a/{id}": {
            "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }],
            "get": { "operationId": "A", "responses": ok(),
                     "parameters": [{ "name": "id", "in": "query", "schema": { "type": "string" } }] } } })),
        [(UndeclaredPathParameter, "/paths/~1a~1{id}/get")],
        Before::Panics("missing path name mapping id");

    path_parameter_not_in_path:
        api(json!({ "/a/{id}": { "get": { "operationId": "A", "responses": ok(), "parameters": [
            { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } },
            { "name": "page", "in": "path", "required": true, "schema": { "type": "integer" } },
        ] } } })),
        [(PathParameterNotInPath, "/paths/~1a~1{id}/get/parameters/1")],
        Before::Panics("page missing from path");

    lone_path_parameter_not_in_path:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(), "parameters": [
            { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } },
        ] } } })),
        [(PathParameterNotInPath, "/paths/~1a/get/parameters/0")],
        Before::Generates;

    path_parameter_misnamed:
        api(json!({ "/a/{sessionId}": { "get": { "operationId": "A", "responses": ok(), "parameters": [
            { "name": "session_id", "in": "path", "required": true, "schema": { "type": "string" } },
        ] } } })),
        [(PathParameterNotInPath, "/paths/~1a~1{sessionId}/get/parameters/0")],
        Before::Panics("missing path name mapping sessionId");

    arguments_equal_after_sanitizing:
        api(json!({ "/a": { "post": { "operationId": "A", "responses": ok(),
            "parameters": [{ "name": "body", "in": "query", "schema": { "type": "string" } }],
            "requestBody": { "content": json_body(json!({ "type": "string" })) } } } })),
        [(DuplicateArgumentName, "/paths/~1a/post/parameters/0")],
        Before::Generates;

    path_item_reference:
        with_components(
            api(json!({ "/a": { "$ref": "#/components/x-items/A" } })),
            json!({ "x-items": { "A": { "get": { "operationId": "A", "responses": ok() } } } }),
        ),
        [(PathItemRef, "/paths/~1a")],
        Before::Errs("uses reference, unsupported");

    invalid_path_template:
        api(json!({ "/a/{id": { "get": { "operationId": "A", "responses": ok() } },
                    "/b": { "get": { "operationId": "B", "responses": ok() } } })),
        [(InvalidPathTemplate, "/paths/~1a~1{id")],
        Before::Errs("unterminated parameter");

    path_without_leading_slash:
        api(json!({ "a": { "get": { "operationId": "A", "responses": ok() } } })),
        [(IgnoredPath, "/paths/a")],
        Before::Generates;

    missing_component_response:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": { "200": { "$ref": "#/components/responses/Found" } } } } })),
            json!({}),
        ),
        [(UnresolvableRef, "/paths/~1a/get/responses/200")],
        Before::Panics("key Found is missing");

    response_reference_without_components:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": { "200": { "$ref": "#/components/responses/Found" } } } } })),
        [(UnresolvableRef, "/paths/~1a/get/responses/200")],
        Before::Panics("None");

    missing_component_parameter:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(),
                "parameters": [{ "$ref": "#/components/parameters/Page" }] } } })),
            json!({ "parameters": {} }),
        ),
        [(UnresolvableRef, "/paths/~1a/get/parameters/0")],
        Before::Panics("key Page is missing");

    // Found by the property tests (properties.rs): a 3.1 `$ref` with a sibling `pattern`
    // becomes `allOf: [$ref]` plus `pattern`; typify merges the two, the referenced schema
    // contains the node again, and it merges forever until the stack overflows.
    recursive_merge_of_a_ref_with_a_sibling:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": {
                "200": { "description": "ok", "content": json_body(json!({ "$ref": "#/components/schemas/Node" })) },
            } } } })),
            json!({ "schemas": { "Node": { "type": "object", "properties": {
                "name": { "type": "string" },
                "parent": { "allOf": [{ "$ref": "#/components/schemas/Node" }], "pattern": "^a$", "minProperties": 1 },
            } } } }),
        ),
        [(RecursiveMerge, "/components/schemas/Node/properties/parent")],
        Before::Aborts;

    recursive_merge_of_two_all_of_branches_through_another_schema:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": {
                "200": { "description": "ok", "content": json_body(json!({ "$ref": "#/components/schemas/Folder" })) },
            } } } })),
            json!({ "schemas": {
                "Folder": { "type": "object", "properties": {
                    "items": { "type": "array", "items": { "$ref": "#/components/schemas/Entry" } },
                    "parent": { "allOf": [{ "$ref": "#/components/schemas/Entry" }, { "$ref": "#/components/schemas/Meta" }] },
                } },
                "Entry": { "type": "object", "properties": {
                    "folder": { "anyOf": [{ "$ref": "#/components/schemas/Folder" }, { "type": "string" }], "required": ["items"] },
                } },
                "Meta": { "type": "object", "properties": { "owner": { "type": "string" } } },
            } }),
        ),
        [
            (RecursiveMerge, "/components/schemas/Folder/properties/parent"),
            (RecursiveMerge, "/components/schemas/Entry/properties/folder"),
        ],
        Before::Aborts;

    response_reference_cycle:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": { "200": { "$ref": "#/components/responses/Loop" } } } } })),
            json!({ "responses": { "Loop": { "$ref": "#/components/responses/Loop" } } }),
        ),
        [(RefCycle, "/components/responses/Loop")],
        Before::Aborts;

    missing_component_schema:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": {
                "200": { "description": "ok", "content": json_body(json!({ "$ref": "#/components/schemas/Session" })) } } } } })),
            json!({ "schemas": {} }),
        ),
        [(UnresolvableRef, "/paths/~1a/get/responses/200/content/application~1json/schema")],
        Before::Panics("$ref #/components/schemas/Session is missing");

    external_schema_reference:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": ok() } } })),
            json!({ "schemas": { "Remote": { "$ref": "common.yaml#/Remote" } } }),
        ),
        [(ExternalRef, "/components/schemas/Remote")],
        Before::Panics("external references are not supported");

    dangling_reference_progenitor_does_not_read:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": ok() } } })),
            json!({ "headers": { "X-Rate-Limit": { "schema": { "$ref": "#/components/schemas/RateLimit" } } } }),
        ),
        [(DanglingRef, "/components/headers/X-Rate-Limit/schema")],
        Before::Generates;

    schema_type_null:
        with_components(api(json!({})), json!({ "schemas": { "Nothing": { "type": "null" } } })),
        [(UnsupportedSchemaType, "/components/schemas/Nothing")],
        Before::Panics("invalid type: null");

    schema_type_file:
        with_components(api(json!({})), json!({ "schemas": { "Upload": { "type": "file" } } })),
        [(UnsupportedSchemaType, "/components/schemas/Upload")],
        Before::Panics("invalid type: file");

    exclusive_minimum_without_minimum:
        with_components(api(json!({})), json!({ "schemas": { "Amount": { "exclusiveMinimum": true } } })),
        [(ExclusiveBoundWithoutBound, "/components/schemas/Amount")],
        Before::Panics("exclusive_minimum set without minimum");

    untyped_enum_of_mixed_types:
        with_components(api(json!({})), json!({ "schemas": { "Mixed": { "enum": [true, "yes"] } } })),
        [(MixedUntypedEnum, "/components/schemas/Mixed")],
        Before::Panics("multiple implied types for an un-typed enum");

    not_of_a_type:
        with_components(api(json!({})), json!({ "schemas": { "NotString": { "not": { "type": "string" } } } })),
        [(UnsupportedNot, "/components/schemas/NotString")],
        Before::Panics("unhandled not schema");

    empty_all_of:
        with_components(api(json!({})), json!({ "schemas": { "Everything": { "allOf": [] } } })),
        [(EmptyAllOf, "/components/schemas/Everything")],
        Before::Panics("empty array of schemas");

    schema_type_list:
        with_components(api(json!({})), json!({ "schemas": { "Name": { "type": ["string", "null"] } } })),
        [(Unreadable, "/components/schemas/Name")],
        Before::Errs("openapiv3");

    response_without_description:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": { "200": {} } } } })),
        [(Unreadable, "/paths/~1a/get/responses/200")],
        Before::Errs("missing field `description`");

    format_without_type:
        with_components(api(json!({})), json!({ "schemas": { "Stamp": { "format": "date-time" } } })),
        [(KeywordWithoutFittingType, "/components/schemas/Stamp")],
        Before::Panics("invalid (or unexpected) schema");

    minimum_without_type:
        with_components(api(json!({})), json!({ "schemas": { "Count": { "minimum": 0 } } })),
        [(KeywordWithoutFittingType, "/components/schemas/Count")],
        Before::Panics("invalid (or unexpected) schema");

    format_on_an_object:
        with_components(api(json!({})), json!({ "schemas": { "Labels": {
            "type": "object", "format": "labels", "additionalProperties": { "type": "string" } } } })),
        [(KeywordWithoutFittingType, "/components/schemas/Labels")],
        Before::Panics("invalid (or unexpected) schema");

    required_struct_parameter:
        with_components(
            api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(), "parameters": [
                { "name": "where", "in": "query", "required": true, "schema": { "$ref": "#/components/schemas/Filter" } },
            ] } } })),
            json!({ "schemas": { "Filter": { "type": "object", "properties": { "name": { "type": "string" } } } } }),
        ),
        [(StructParameter, "/paths/~1a/get/parameters/0/schema")],
        Before::Panics("left == right");

    optional_struct_parameter:
        api(json!({ "/a": { "get": { "operationId": "A", "responses": ok(), "parameters": [
            { "name": "where", "in": "header", "schema": { "type": "object", "additionalProperties": false } },
        ] } } })),
        [(StructParameter, "/paths/~1a/get/parameters/0/schema")],
        Before::Panics("unreachable");

    enum_value_of_another_type:
        with_components(api(json!({})), json!({ "schemas": { "Level": { "type": "integer", "enum": [1, 2, "high"] } } })),
        [(ValueDoesNotFitSchema, "/components/schemas/Level")],
        Before::Errs("value does not conform");

    default_of_another_type:
        with_components(api(json!({})), json!({ "schemas": { "Page": {
            "type": "object", "properties": { "size": { "type": "string", "default": 10 } } } } })),
        [(ValueDoesNotFitSchema, "/components/schemas/Page/properties/size")],
        Before::Panics("default value could not be rendered");

    websocket_without_101:
        api(json!({ "/a": { "get": { "operationId": "A", "x-dropshot-websocket": {}, "responses": ok() } } })),
        [(WebsocketWithout101, "/paths/~1a/get/responses")],
        Before::Errs("must include an explicit 101 response code");
}
