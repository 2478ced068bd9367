//! Preflight's proofs, one made-up document per problem: preflight reports exactly the
//! expected findings, progenitor really fails on the document as written, and the suggested
//! overlay fixes really cure it (the helpers are `preflight.rs`'s).

use serde_json::json;

use crate::preflight::{Before, api, json_body, ok, prove, with_components};
use creditdata_codegen::preflight::Problem;

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
