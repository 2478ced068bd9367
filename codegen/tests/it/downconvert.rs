//! The down-convert stage, one test per rule. Each snapshot holds the converted part of the
//! document next to the warnings, so a review sees what changed and what was said about it.

use creditdata_codegen::document::{self, Format};
use creditdata_codegen::downconvert::{Converted, DownconvertError, downconvert};
use serde_json::{Value, json};

fn yaml(text: &str) -> Value {
    document::parse(text, Format::Yaml, "test input").expect("test input is valid YAML")
}

/// A 3.1 document whose `components.schemas` are `schemas` (YAML).
fn with_schemas(schemas: &str) -> Value {
    json!({
        "openapi": "3.1.0",
        "info": { "title": "t", "version": "1" },
        "paths": {},
        "components": { "schemas": yaml(schemas) },
    })
}

fn convert(doc: &Value) -> Converted {
    downconvert(doc).expect("the document converts")
}

fn warnings(converted: &Converted) -> Vec<String> {
    converted.warnings.iter().map(ToString::to_string).collect()
}

/// The converted schemas and the warnings, for a snapshot.
fn schemas_report(schemas: &str) -> Value {
    let converted = convert(&with_schemas(schemas));
    json!({
        "schemas": converted.document["components"]["schemas"],
        "warnings": warnings(&converted),
    })
}

fn document_report(doc: &Value) -> Value {
    let converted = convert(doc);
    json!({ "document": converted.document, "warnings": warnings(&converted) })
}

#[test]
fn version_3_1_becomes_3_0_3() {
    let converted = convert(&yaml(
        "openapi: 3.1.1\ninfo: {title: t, version: '1'}\npaths: {}\n",
    ));
    insta::assert_yaml_snapshot!(converted.document);
    assert!(converted.warnings.is_empty());
}

#[test]
fn version_3_0_passes_through_unchanged() {
    // 3.1-only shapes on purpose: a 3.0 document is not touched, whatever it holds.
    let input = yaml(
        "openapi: 3.0.2\ninfo: {title: t, summary: s, version: '1'}\npaths: {}\n\
         components:\n  schemas:\n    A: {type: [string, 'null'], examples: [1, 2], const: 3}\n",
    );
    let converted = convert(&input);
    assert_eq!(converted.document, input);
    assert_eq!(
        document::to_string(&converted.document, Format::Json),
        document::to_string(&input, Format::Json)
    );
    assert!(converted.warnings.is_empty());
}

#[test]
fn other_versions_are_errors_that_say_what_is_supported() {
    let cases = [
        json!({"swagger": "2.0", "info": {}, "paths": {}}),
        json!({"info": {}, "paths": {}}),
        json!({"openapi": "4.0.0"}),
        json!({"openapi": "3.2.0"}),
        json!({"openapi": "3.1"}),
        json!({"openapi": 3.1}),
        json!(["openapi", "3.1.0"]),
    ];
    let messages: Vec<String> = cases
        .iter()
        .map(|doc| downconvert(doc).expect_err("not convertible").to_string())
        .collect();
    insta::assert_yaml_snapshot!(messages);
    assert_eq!(
        downconvert(&json!({"openapi": "4.0.0"})).unwrap_err(),
        DownconvertError::UnsupportedVersion {
            found: "\"4.0.0\"".into()
        }
    );
    assert!(downconvert(&json!({"openapi": "3.1.0-rc1", "info": {}})).is_ok());
}

#[test]
fn null_in_a_type_list_becomes_nullable() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
StringOrNull: {type: [string, "null"], description: d}
NullOrInteger: {type: ["null", integer], format: int64}
OneTypeListed: {type: [boolean]}
NullOnly: {type: "null"}
NullOnlyListed: {type: ["null"], description: always null}
ArrayOrNull: {type: [array, "null"], items: {type: [string, "null"]}}
"###
    ));
}

#[test]
fn several_types_split_into_any_of() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
StringOrInteger:
  type: [string, integer, "null"]
  description: kept outside
  minLength: 1
  maximum: 10
  format: int32
  default: 3
ObjectOrArray:
  type: [object, array]
  properties: {a: {type: [string, "null"]}}
  minItems: 1
NumberAbsorbsInteger: {type: [integer, number], minimum: 0}
EnumPicksTheType: {type: [string, integer], enum: [a, b]}
EnumSplitsToo: {type: [string, integer, boolean], enum: [a, 1, null]}
ExistingAnyOf:
  type: [string, boolean]
  anyOf: [{maxLength: 3}, {type: boolean}]
"###
    ));
}

#[test]
fn null_branches_become_nullable() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
NullFirst:
  description: kept
  oneOf: [{type: "null"}, {$ref: "#/components/schemas/Target"}]
NullLast:
  anyOf: [{$ref: "#/components/schemas/Target"}, {type: "null", description: nothing}]
ConstNull:
  oneOf: [{const: null}, {$ref: "#/components/schemas/Target"}]
EnumNull:
  anyOf: [{enum: [null]}, {type: string}]
SeveralBranches:
  oneOf: [{$ref: "#/components/schemas/Target"}, {type: integer}, {type: "null"}]
NextToAllOf:
  allOf: [{description: base}]
  oneOf: [{$ref: "#/components/schemas/Target"}, {type: "null"}]
NotANullBranch:
  oneOf: [{type: "null", minLength: 1}, {type: string}]
Target: {type: object}
"###
    ));
}

#[test]
fn ref_with_siblings_is_wrapped_in_all_of() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
Described: {$ref: "#/components/schemas/Target", description: what it is}
RefAndNullableType:
  description: either
  $ref: "#/components/schemas/Target"
  type: [object, "null"]
RefAndAllOf:
  $ref: "#/components/schemas/Target"
  allOf: [{required: [a]}]
OnlyCommentNextToRef: {$ref: "#/components/schemas/Target", $comment: gone}
Target: {type: object, properties: {a: {type: string}}}
"###
    ));
}

#[test]
fn const_becomes_enum() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
String: {const: fixed, description: d}
Integer: {const: 3}
Number: {const: 2.5}
Boolean: {const: true}
Null: {const: null}
Object: {const: {a: 1}}
Typed: {type: string, const: "1"}
AgainstEnum: {const: a, enum: [b, c]}
"###
    ));
}

#[test]
fn schema_examples_become_example_and_other_examples_stay() {
    let doc = yaml(
        r###"
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a:
    get:
      parameters:
        - name: p
          in: query
          schema: {type: string, examples: [x, y, z]}
          examples: {first: {value: x}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  examples: {type: array, items: {type: string}, examples: [[a]]}
              examples: {one: {value: {examples: [a]}}}
components:
  schemas:
    ExampleWins: {type: string, example: kept, examples: [dropped]}
    Empty: {type: string, examples: []}
    NotAnArray: {type: string, examples: {a: 1}}
  examples:
    Shared: {value: {examples: [1, 2]}}
"###,
    );
    insta::assert_yaml_snapshot!(document_report(&doc));
}

#[test]
fn numeric_exclusive_bounds_become_boolean_ones() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
ExclusiveMinimumAlone: {type: integer, exclusiveMinimum: 0}
ExclusiveMaximumAlone: {type: number, description: d, exclusiveMaximum: 1.5}
ExclusiveMinimumStricter: {type: integer, minimum: 0, exclusiveMinimum: 5}
MinimumStricter: {type: integer, exclusiveMinimum: 0, minimum: 5}
EqualBounds: {type: integer, minimum: 5, exclusiveMinimum: 5}
ExclusiveMaximumStricter: {type: number, maximum: 10, exclusiveMaximum: 3}
MaximumStricter: {type: number, maximum: 3, exclusiveMaximum: 10}
AlreadyBoolean: {type: integer, minimum: 1, exclusiveMinimum: true}
"###
    ));
}

#[test]
fn content_keywords_become_formats() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
Base64: {type: string, contentEncoding: base64}
Base64Url: {type: string, contentEncoding: base64url}
Binary: {type: string, contentMediaType: application/octet-stream}
Image: {type: [string, "null"], contentMediaType: image/png}
EncodedPdf: {type: string, contentMediaType: application/pdf, contentEncoding: base64}
Text: {type: string, contentMediaType: text/csv}
Json: {type: string, contentMediaType: application/problem+json; charset=utf-8}
FormatKept: {type: string, format: uuid, contentEncoding: base64}
SameFormat: {type: string, format: binary, contentMediaType: image/png}
OtherEncoding: {type: string, contentEncoding: quoted-printable}
NoType: {contentMediaType: application/octet-stream}
Empty: {}
"###
    ));
}

#[test]
fn keywords_without_a_3_0_form_are_dropped_with_their_pointer() {
    insta::assert_yaml_snapshot!(schemas_report(
        r###"
Everything:
  $schema: https://json-schema.org/draft/2020-12/schema
  $id: https://example.com/everything
  $anchor: here
  $dynamicAnchor: node
  $vocabulary: {"https://json-schema.org/draft/2020-12/vocab/core": true}
  $comment: a note
  type: object
  $defs: {Inner: {type: string}}
  properties:
    nested:
      type: array
      prefixItems: [{type: string}, {type: integer}]
      contains: {type: string}
      minContains: 1
      maxContains: 2
      unevaluatedItems: false
    "a/b~c": {$dynamicRef: "#node", contentSchema: {type: object}}
    bool: true
    never: false
  patternProperties: {"^x": {type: string}}
  propertyNames: {maxLength: 3}
  unevaluatedProperties: false
  dependentRequired: {a: [b]}
  dependentSchemas: {a: {required: [c]}}
  if: {required: [a]}
  then: {required: [b]}
  else: {required: [c]}
  additionalProperties: false
Tuple:
  type: array
  prefixItems: [{type: string}]
  items: false
OldTuple:
  type: array
  items: [{type: string}, {type: integer}]
ArrayWithoutItems: {type: array}
"###
    ));
}

#[test]
fn document_level_3_1_features() {
    let doc = yaml(
        r###"
openapi: 3.1.0
jsonSchemaDialect: https://spec.openapis.org/oas/3.1/dialect/base
info:
  title: t
  summary: one line
  version: '1'
  license: {name: MIT, identifier: MIT}
security: [{mtls: []}, {oauth: [read], mtls: []}]
paths:
  /shared:
    $ref: "#/components/pathItems/Shared"
    summary: own summary
  /no-responses:
    get:
      parameters:
        - $ref: "#/components/parameters/Id"
          description: overrides in 3.1
      requestBody:
        $ref: "#/components/requestBodies/Body"
        summary: short
webhooks:
  newSession:
    post:
      responses: {'200': {description: ok}}
components:
  parameters:
    Id: {name: id, in: query, schema: {type: [string, "null"]}}
  requestBodies:
    Body:
      content:
        application/json: {schema: {type: object}}
  pathItems:
    Shared:
      get:
        responses:
          '200':
            description: ok
            headers:
              X-Rate-Limit: {schema: {type: [integer, "null"], $comment: c}}
            content:
              application/json: {schema: {const: ok}}
  securitySchemes:
    mtls: {type: mutualTLS}
    oauth:
      type: oauth2
      flows: {clientCredentials: {tokenUrl: https://example.com/token, scopes: {read: r}}}
"###,
    );
    insta::assert_yaml_snapshot!(document_report(&doc));
}

#[test]
fn missing_paths_are_added_and_license_url_is_kept() {
    let doc = yaml(
        r###"
openapi: 3.1.0
info:
  title: t
  version: '1'
  license: {name: MIT, identifier: MIT, url: https://example.com/license}
servers: [{url: https://example.com}]
webhooks: {}
"###,
    );
    insta::assert_yaml_snapshot!(document_report(&doc));
}

#[test]
fn extensions_are_opaque_but_header_and_property_names_are_not() {
    let doc = yaml(
        r###"
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  x-not-a-path: {get: {schema: {type: [string, "null"]}}}
  /a:
    get:
      x-codegen: {schema: {type: [string, "null"]}}
      responses:
        x-note: {content: {application/json: {schema: {const: 1}}}}
        '204':
          description: none
          headers:
            x-request-id: {schema: {type: [string, "null"]}}
components:
  schemas:
    A:
      type: object
      x-shape: {type: [string, "null"]}
      properties:
        x-not-an-extension: {type: [string, "null"]}
"###,
    );
    insta::assert_yaml_snapshot!(document_report(&doc));
}

#[test]
fn pointers_escape_tilde_and_slash() {
    let converted = convert(&with_schemas(
        "A: {properties: {'a/b~c': {$comment: c}, '~1': {examples: [1, 2]}}}",
    ));
    assert_eq!(
        warnings(&converted),
        [
            "/components/schemas/A/properties/a~1b~0c/$comment: `$comment` has no OpenAPI 3.0 \
             form: dropped (a note for schema authors; the client loses nothing)",
            "/components/schemas/A/properties/~01/examples: a 3.0 schema has a single \
             `example`: kept the first of 2 and dropped the other 1",
        ]
    );
    for warning in &converted.warnings {
        let keyword = warning.pointer.rsplit('/').next().unwrap();
        let parent = &warning.pointer[..warning.pointer.len() - keyword.len() - 1];
        assert!(
            with_schemas("A: {properties: {'a/b~c': {$comment: c}, '~1': {examples: [1, 2]}}}")
                .pointer(parent)
                .is_some(),
            "{warning}"
        );
    }
}

#[test]
fn same_input_same_output_and_warnings_in_document_order() {
    let doc = with_schemas(
        r###"
B: {$comment: first, properties: {inner: {$comment: second}}, examples: [1, 2], $id: x}
A: {type: [string, integer], prefixItems: []}
"###,
    );
    let first = convert(&doc);
    assert_eq!(first, convert(&doc));
    let pointers: Vec<&str> = first.warnings.iter().map(|w| w.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/components/schemas/B/$comment",
            "/components/schemas/B/properties/inner/$comment",
            "/components/schemas/B/examples",
            "/components/schemas/B/$id",
            "/components/schemas/A/type",
            "/components/schemas/A/prefixItems",
        ]
    );
}

#[test]
fn odd_shapes_do_not_panic() {
    let odd = [
        json!({"openapi": "3.1.0", "paths": [], "components": "x", "info": null}),
        json!({"openapi": "3.1.0", "paths": {"/a": {"get": {"parameters": {"a": 1}, "responses": []}}}}),
        json!({"openapi": "3.1.0", "paths": {"/a": {"$ref": "#/components/pathItems/Missing"}}}),
        json!({"openapi": "3.1.0", "paths": {"/a": {"$ref": "#/components/pathItems/A"}},
               "components": {"pathItems": {"A": {"$ref": "#/components/pathItems/B"},
                                            "B": {"$ref": "#/components/pathItems/A"}}}}),
        with_schemas(
            r###"
A: {type: 3, properties: [], items: "x", allOf: {}, oneOf: [1, null, {type: "null"}]}
B: {type: [], enum: 1, const: [1], examples: null, exclusiveMinimum: "x", minimum: {}}
C: {type: [string, 1], $ref: 5, not: 7, additionalProperties: "no"}
D: {type: [string, integer], anyOf: [{}], allOf: 3}
E: {type: [string, integer], enum: [1.5]}
F: {anyOf: [{type: "null"}]}
G: {exclusiveMaximum: 1e400}
H: {contentMediaType: 3, contentEncoding: [], type: string}
I: {$ref: "#/x", allOf: "x", description: d}
J: {oneOf: [{$ref: "#/x"}, {type: "null"}], allOf: 1}
K: null
L: [1, 2]
"###,
        ),
    ];
    for doc in &odd {
        let _ = downconvert(doc);
    }
}

#[test]
fn converted_documents_read_as_openapiv3() {
    // Every rule at once: this is what progenitor will be given.
    let doc = yaml(
        r###"
openapi: 3.1.0
jsonSchemaDialect: https://spec.openapis.org/oas/3.1/dialect/base
info: {title: t, summary: s, version: '1', license: {name: MIT, identifier: MIT}}
paths:
  /things/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string, format: uuid}}
    get:
      operationId: getThing
      parameters:
        - $ref: "#/components/parameters/Page"
          description: overridden
      responses:
        '200':
          description: ok
          content:
            application/json: {schema: {$ref: "#/components/schemas/Thing", description: d}}
        '400':
          description: bad
          headers:
            X-Trace: {schema: {type: [string, "null"]}}
  /files:
    post:
      operationId: upload
      requestBody:
        content:
          application/octet-stream:
            schema: {type: string, contentMediaType: application/octet-stream}
      responses:
        '204': {description: done}
webhooks:
  hook: {post: {responses: {'200': {description: ok}}}}
components:
  parameters:
    Page: {name: page, in: query, schema: {type: [integer, "null"], exclusiveMinimum: 0}}
  schemas:
    Thing:
      type: object
      $comment: c
      required: [id]
      properties:
        id: {type: string, format: uuid, examples: [a, b]}
        kind: {const: thing}
        size: {type: [integer, "null"], minimum: 0, exclusiveMaximum: 100}
        either: {type: [string, integer], maxLength: 3, minimum: 1}
        parent:
          oneOf: [{type: "null"}, {$ref: "#/components/schemas/Thing"}]
        tags: {type: [array, "null"], items: {type: string}, prefixItems: [{type: string}]}
        blob: {type: string, contentEncoding: base64}
        nothing: {type: "null"}
        anything: true
        choice:
          anyOf: [{$ref: "#/components/schemas/Thing"}, {type: integer}, {const: null}]
      patternProperties: {"^x-": {}}
      $defs: {Unused: {type: string}}
  pathItems:
    Unused: {get: {responses: {'200': {description: ok}}}}
"###,
    );
    assert!(
        serde_json::from_value::<openapiv3::OpenAPI>(doc.clone()).is_err(),
        "the 3.1 input should not read as 3.0, or this test proves nothing"
    );
    let converted = convert(&doc);
    let openapi: openapiv3::OpenAPI = serde_json::from_value(converted.document.clone())
        .unwrap_or_else(|e| panic!("{e}\n{:#}", converted.document));
    assert_eq!(openapi.openapi, "3.0.3");
    assert!(openapi.paths.paths.contains_key("/things/{id}"));
}

#[test]
fn vendored_spec_reads_as_openapiv3_after_conversion() {
    let doc = document::load(&crate::frozen::spec()).expect("the frozen 1.0 description loads");
    let converted = convert(&doc);
    if let Err(e) = serde_json::from_value::<openapiv3::OpenAPI>(converted.document.clone()) {
        panic!("{e}");
    }
}

fn data(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    document::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn aspnet_numbers_that_may_be_read_from_strings_collapse_to_the_number() {
    // ASP.NET Core 10 (System.Text.Json number handling AllowReadingFromString, the web default)
    // publishes every number as `type: [integer, string]` plus the pattern of a numeric string.
    let converted = convert(&data("aspnet10-numbers.json"));
    let doc = &converted.document;
    let at = |pointer: &str| doc.pointer(pointer).cloned().unwrap_or(Value::Null);
    let item = "/components/schemas/Item/properties";
    assert_eq!(
        at(&format!("{item}/id")),
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        at(&format!("{item}/price")),
        json!({"type": "number", "format": "double"})
    );
    assert_eq!(
        at(&format!("{item}/amount")),
        json!({"type": "number", "format": "decimal"})
    );
    assert_eq!(
        at(&format!("{item}/status")),
        json!({"type": "integer", "nullable": true, "format": "int32"})
    );
    let params = "/paths/~1items~1{id}/get/parameters";
    assert_eq!(
        at(&format!("{params}/0/schema")),
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        at(&format!("{params}/1/schema")),
        json!({"type": "integer", "format": "int32", "default": 10})
    );
    assert_eq!(
        at(&format!("{params}/2/schema/items")),
        json!({"type": "integer", "format": "int64"})
    );
    // A string pattern that is not a number's keeps both types.
    assert!(at(&format!("{item}/code/anyOf")).is_array(), "{doc:#}");

    // Every collapsed node is named, where an overlay would target it.
    insta::assert_yaml_snapshot!(warnings(&converted));
}
