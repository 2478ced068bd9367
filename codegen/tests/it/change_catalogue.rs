//! The change catalogue on small documents: the kinds the vendor releases of `releases.rs` do
//! not reach, the published JSON shape, and the documentation of both.

use creditdata_codegen::diff::{self, ChangeKind, ChangeReport, Side, Source, Wire};
use serde_json::{Value, json};

/// A small effective document: one operation with a query parameter, a JSON body and a JSON
/// answer, one security scheme, one server.
fn base() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.test", "description": "Production"}],
        "security": [{"oauth": ["read"]}],
        "paths": {"/v1/items/{itemId}": {"put": {
            "operationId": "PutItem",
            "deprecated": true,
            "parameters": [
                {"name": "itemId", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "Mode", "in": "query", "required": true, "schema": {"type": "string"}}
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ItemInput"}}}},
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}}},
                "404": {"description": "Not Found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            }
        }}},
        "components": {
            "schemas": {
                "ItemInput": {"type": "object", "required": ["name", "note"], "properties": {
                    "name": {"type": "string"},
                    "note": {"type": "string", "nullable": true},
                    "size": {"type": "integer", "format": "int32"}
                }},
                "Item": {"type": "object", "required": ["id"], "properties": {
                    "id": {"type": "string"},
                    "label": {"type": "string", "nullable": true},
                    "code": {"type": "string", "maxLength": 8}
                }},
                "Problem": {"type": "object", "properties": {"title": {"type": "string"}}},
                "Spare": {"type": "string"}
            },
            "securitySchemes": {"oauth": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": "https://login.example.test/token", "scopes": {"read": "Read"}
            }}}}
        }
    })
}

fn report(change: impl FnOnce(&mut Value)) -> ChangeReport {
    let old = base();
    let mut new = base();
    change(&mut new);
    diff::compare(&Side::effective(&old), &Side::effective(&new))
}

fn impacts(report: &ChangeReport) -> Vec<(ChangeKind, Wire, Source)> {
    report
        .changes
        .iter()
        .map(|c| (c.kind, c.wire, c.source))
        .collect()
}

const OP: &str = "/paths/~1v1~1items~1{itemId}/put";

fn at<'a>(doc: &'a mut Value, pointer: &str) -> &'a mut Value {
    doc.pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer}"))
}

#[test]
fn request_media_types() {
    let r = report(|d| {
        let content = at(d, &format!("{OP}/requestBody/content"));
        let json = content["application/json"].take();
        *content = json!({"application/merge-patch+json": json});
    });
    assert_eq!(
        impacts(&r),
        vec![
            (ChangeKind::RequestMediaTypeRemoved, Wire::No, Source::No),
            (ChangeKind::RequestMediaTypeAdded, Wire::Yes, Source::No),
        ]
    );
    let r = report(|d| {
        at(d, &format!("{OP}/requestBody/content"))["text/plain"] =
            json!({"schema": {"type": "string"}});
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMediaTypeAdded, Wire::Yes, Source::Yes)]
    );
}

#[test]
fn request_bodies() {
    let r = report(|d| {
        at(d, OP).as_object_mut().unwrap().remove("requestBody");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestBodyRemoved, Wire::Degraded, Source::No)]
    );
    let r = report(|d| at(d, &format!("{OP}/requestBody"))["required"] = json!(false));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestBodyNowOptional, Wire::Yes, Source::Yes)]
    );
    let r = report(|d| {
        at(
            d,
            &format!("{OP}/requestBody/content/application~1json/schema"),
        )["$ref"] = json!("#/components/schemas/Item");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestBodyTypeChanged, Wire::No, Source::No)]
    );

    let old = {
        let mut d = base();
        at(&mut d, OP)
            .as_object_mut()
            .unwrap()
            .remove("requestBody");
        d
    };
    let r = diff::compare(&Side::effective(&old), &Side::effective(&base()));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestBodyAdded, Wire::No, Source::Yes)]
    );
    let r = diff::compare(
        &Side::effective(&base()),
        &Side::effective(&{
            let mut d = base();
            at(&mut d, &format!("{OP}/requestBody"))["required"] = json!(false);
            d
        }),
    );
    assert!(!r.is_breaking());
    let r = diff::compare(
        &Side::effective(&{
            let mut d = base();
            at(&mut d, &format!("{OP}/requestBody"))["required"] = json!(false);
            d
        }),
        &Side::effective(&base()),
    );
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestBodyNowRequired, Wire::No, Source::Yes)]
    );
}

#[test]
fn request_members_required_and_nullable() {
    let schema = "/components/schemas/ItemInput";
    // `name` no longer required: String becomes Option<String>.
    let r = report(|d| at(d, schema)["required"] = json!(["note"]));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMemberNowOptional, Wire::Yes, Source::No)]
    );
    // `note` (required, nullable) no longer nullable: the old client sends null for None.
    let r = report(|d| {
        at(d, &format!("{schema}/properties/note"))
            .as_object_mut()
            .unwrap()
            .remove("nullable");
    });
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::RequestMemberNoLongerNullable,
            Wire::No,
            Source::No
        )]
    );
    // `size` (optional) now required: an old client may leave it out, and the Rust field
    // changes from Option<i32> to i32.
    let r = report(|d| at(d, schema)["required"] = json!(["name", "note", "size"]));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMemberNowRequired, Wire::No, Source::No)]
    );
    // `size` (optional) now nullable: Option<i32> either way.
    let r = report(|d| at(d, &format!("{schema}/properties/size"))["nullable"] = json!(true));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMemberNowNullable, Wire::Yes, Source::Yes)]
    );
    // int32 to int64: every old value is still accepted, but the Rust type changes.
    let r = report(|d| at(d, &format!("{schema}/properties/size"))["format"] = json!("int64"));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMemberTypeChanged, Wire::Yes, Source::No)]
    );
    // The reverse narrows.
    let r = report(|d| at(d, &format!("{schema}/properties/size"))["format"] = json!("int16"));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::RequestMemberTypeChanged, Wire::No, Source::No)]
    );
}

#[test]
fn response_properties_nullable_constraints_and_body_types() {
    let item = "/components/schemas/Item";
    let r = report(|d| {
        at(d, &format!("{item}/properties/label"))
            .as_object_mut()
            .unwrap()
            .remove("nullable");
    });
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::ResponsePropertyNoLongerNullable,
            Wire::Yes,
            Source::Yes
        )]
    );
    // A longer code: the old client's validating newtype refuses what it did not allow.
    let r = report(|d| at(d, &format!("{item}/properties/code"))["maxLength"] = json!(16));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ResponseConstraintChanged, Wire::No, Source::Yes)]
    );
    let r = report(|d| at(d, &format!("{item}/properties/code"))["maxLength"] = json!(4));
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::ResponseConstraintChanged,
            Wire::Yes,
            Source::Yes
        )]
    );
    // Constraints on a plain string make a newtype: a Rust type change.
    let r = report(|d| at(d, &format!("{item}/properties/id"))["pattern"] = json!("^[a-z]+$"));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ResponseConstraintChanged, Wire::Yes, Source::No)]
    );
    let r = report(|d| {
        at(
            d,
            &format!("{OP}/responses/200/content/application~1json/schema"),
        )["$ref"] = json!("#/components/schemas/Problem");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ResponseBodyTypeChanged, Wire::No, Source::No)]
    );
    // An added member reads fine unless the old schema refused unknown members; the struct is
    // #[non_exhaustive], so the new field breaks no code either way.
    let closed = {
        let mut d = base();
        at(&mut d, item)["additionalProperties"] = json!(false);
        d
    };
    let mut with_more = closed.clone();
    at(&mut with_more, &format!("{item}/properties"))["extra"] = json!({"type": "string"});
    let r = diff::compare(&Side::effective(&closed), &Side::effective(&with_more));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ResponsePropertyAdded, Wire::No, Source::Yes)]
    );
}

#[test]
fn parameters_renamed_and_optional_statuses_and_deprecations() {
    let r = report(|d| {
        let item = at(d, "/paths").as_object_mut().unwrap();
        let value = item.shift_remove("/v1/items/{itemId}").unwrap();
        item.insert("/v1/items/{id}".into(), value);
        at(d, "/paths/~1v1~1items~1{id}/put/parameters/0")["name"] = json!("id");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ParameterRenamed, Wire::Yes, Source::No)]
    );
    let r = report(|d| at(d, &format!("{OP}/parameters/1"))["required"] = json!(false));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ParameterNowOptional, Wire::Yes, Source::Yes)]
    );
    let r = report(|d| {
        at(d, &format!("{OP}/responses"))
            .as_object_mut()
            .unwrap()
            .remove("404");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::ErrorStatusRemoved, Wire::Yes, Source::No)]
    );
    let r = report(|d| {
        at(d, OP).as_object_mut().unwrap().remove("deprecated");
    });
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::OperationNoLongerDeprecated,
            Wire::Yes,
            Source::Yes
        )]
    );
    let r = report(|d| {
        at(d, "/components/schemas/Item")["deprecated"] = json!(true);
        at(d, "/components/schemas/ItemInput/properties/size")["deprecated"] = json!(true);
    });
    assert_eq!(
        impacts(&r),
        vec![
            (ChangeKind::SchemaDeprecated, Wire::Yes, Source::Yes),
            (ChangeKind::MemberDeprecated, Wire::Yes, Source::Yes),
        ]
    );
    let rust: Vec<&str> = r
        .changes
        .iter()
        .flat_map(|c| c.rust.iter().map(String::as_str))
        .collect();
    assert_eq!(rust, ["types::Item", "types::ItemInput.size"]);
    let r = report(|d| {
        at(d, "/components/schemas")
            .as_object_mut()
            .unwrap()
            .remove("Spare");
    });
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::SchemaRemoved, Wire::Yes, Source::No)]
    );
}

#[test]
fn security_schemes_and_requirements_and_servers() {
    let r = report(|d| {
        at(d, "/components/securitySchemes")["key"] =
            json!({"type": "apiKey", "in": "header", "name": "X-Key"});
        at(d, "/servers")
            .as_array_mut()
            .unwrap()
            .push(json!({"url": "https://eu.example.test"}));
    });
    assert_eq!(
        impacts(&r),
        vec![
            (ChangeKind::SecuritySchemeAdded, Wire::Yes, Source::Yes),
            (ChangeKind::ServerAdded, Wire::Yes, Source::Yes),
        ]
    );
    let r = report(|d| at(d, "/components/securitySchemes/oauth")["type"] = json!("http"));
    assert_eq!(
        impacts(&r),
        vec![(ChangeKind::SecuritySchemeChanged, Wire::No, Source::Yes)]
    );
    // Demanding a scope old tokens lack.
    let r = report(|d| at(d, "/security")[0]["oauth"] = json!(["read", "write"]));
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::SecurityRequirementChanged,
            Wire::No,
            Source::Yes
        )]
    );
    // Accepting another way as well.
    let r = report(|d| at(d, "/security").as_array_mut().unwrap().push(json!({})));
    assert_eq!(
        impacts(&r),
        vec![(
            ChangeKind::SecurityRequirementChanged,
            Wire::Yes,
            Source::Yes
        )]
    );
    let r = report(|d| {
        at(d, "/components/securitySchemes")
            .as_object_mut()
            .unwrap()
            .remove("oauth");
    });
    assert!(impacts(&r).contains(&(ChangeKind::SecuritySchemeRemoved, Wire::No, Source::Yes)));
}

/// Reports validate against the published JSON Schema (the vendor releases of `releases.rs` are
/// validated there too), and the schema refuses a malformed one.
#[test]
fn reports_follow_the_published_json_schema() {
    let schema: Value =
        serde_json::from_str(include_str!("../../change-report.schema.json")).unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .expect("the schema compiles");
    let reports = [
        report(|_| {}),
        report(|d| at(d, "/components/schemas/ItemInput")["required"] = json!(["note"]))
            .with_version("0.3.1")
            .unwrap(),
        report(|d| {
            at(d, "/components/securitySchemes")
                .as_object_mut()
                .unwrap()
                .remove("oauth");
            at(d, OP).as_object_mut().unwrap().remove("requestBody");
        }),
    ];
    for report in &reports {
        let instance: Value = serde_json::from_str(&report.to_json()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}\n{instance:#}");
    }
    // A malformed report is refused: the schema is not vacuous.
    let mut bad: Value = serde_json::from_str(&reports[1].to_json()).unwrap();
    bad["changes"][0]["wire"] = json!("maybe");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn the_catalogue_is_documented() {
    let doc = include_str!("../../CHANGE-REPORT.md");
    let missing: Vec<&str> = ChangeKind::ALL
        .iter()
        .map(|k| k.name())
        .filter(|name| !doc.contains(&format!("| `{name}` |")))
        .collect();
    assert!(missing.is_empty(), "CHANGE-REPORT.md lacks {missing:?}");
    let documented = doc
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("_"))
        .count();
    assert!(documented >= ChangeKind::ALL.len());
    assert!(doc.contains(&format!("`schema_version` {}", diff::SCHEMA_VERSION)));
}
