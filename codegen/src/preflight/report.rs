//! What preflight reports: each [`Finding`] names the node, the [`Problem`] (with where
//! progenitor or typify fails on it) and the overlay action that fixes it.

use std::fmt;

use serde_json::{Map, Value};

/// What kind of problem a [`Finding`] is. The rustdoc of each variant says where progenitor
/// 0.15.1 (or typify 0.8.0) fails on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Problem {
    /// The document is not a JSON object.
    NotAnObject,
    /// A node does not deserialize as `openapiv3::OpenAPI` expects (progenitor's input type):
    /// wrong JSON type, missing required field, OpenAPI 3.1 syntax such as `type: [string,
    /// 'null']`.
    Unreadable,
    /// `openapi` is not 3.0.x (progenitor `lib.rs`, `validate_openapi_spec_version`: `Err`).
    UnsupportedVersion,
    /// A key of `paths` that does not start with `/`: openapiv3 drops it without a word, so its
    /// operations silently vanish from the client.
    IgnoredPath,
    /// A path item that is a `$ref` (progenitor `lib.rs`, `validate_openapi`: `Err`; then
    /// `as_item().unwrap()` in `generate_tokens`).
    PathItemRef,
    /// A path template progenitor cannot parse (`template.rs`, `parse`: `Err(InvalidPath)`).
    InvalidPathTemplate,
    /// An operation without `operationId` (`validate_openapi`: `Err`; `process_operation`
    /// unwraps it).
    MissingOperationId,
    /// Two operations with the same `operationId` (`validate_openapi`: `Err`).
    DuplicateOperationId,
    /// Distinct operationIds that become the same Rust method or builder name after
    /// progenitor's `sanitize` (`util.rs`), or a method named like `Client::new`: progenitor
    /// succeeds but writes code that does not compile, and the types it names after the
    /// operation are silently shared.
    OperationNameCollision,
    /// A `$ref` progenitor or typify looks up and cannot find. progenitor resolves parameters,
    /// request bodies and responses by the last segment of the reference in the matching
    /// `components` map (`util.rs`, `ReferenceOrExt::item`: `panic!("key {} is missing")`, or
    /// `unwrap` without `components` or without a `/`); typify resolves schema references by
    /// their last segment in `components.schemas` (`convert.rs`, `convert_reference`:
    /// `panic!("$ref {} is missing")`; `util.rs`, `ref_key`).
    UnresolvableRef,
    /// A local `$ref` whose JSON pointer does not resolve, in a part of the document progenitor
    /// does not read: harmless to progenitor, but the document is broken.
    DanglingRef,
    /// A `$ref` into another document. typify panics on it in schemas (`convert.rs`,
    /// `convert_reference`: `panic!("external references are not supported")`).
    ExternalRef,
    /// A chain of `$ref`s that comes back to itself: progenitor's recursive lookup overflows
    /// the stack, which aborts the process (no panic to catch).
    RefCycle,
    /// A composition typify converts by merging (an `allOf` of several branches, or one with
    /// validation keywords of its own) whose reference leads back to the schema it is written
    /// in: typify merges without end and overflows the stack, which aborts the process (typify
    /// `merge.rs`; found by the property tests).
    RecursiveMerge,
    /// A cookie parameter (`method.rs`, `process_operation`: `Err`).
    CookieParameter,
    /// A path parameter in `matrix`/`label` style or a query parameter in
    /// `spaceDelimited`/`pipeDelimited`/`deepObject` style (`process_operation`: `Err`).
    /// Header parameters (style `simple`) are supported.
    UnsupportedParameterStyle,
    /// A parameter described by `content` instead of `schema` (`method.rs`,
    /// `ParameterDataExt::schema`: `Err`).
    ParameterContent,
    /// A path parameter without `required: true` (`process_operation`:
    /// `assert!(parameter_data.required)`).
    OptionalPathParameter,
    /// A `{placeholder}` of the path with no path parameter of that name (`template.rs`,
    /// `PathTemplate::compile`: `expect("missing path name mapping")`).
    UndeclaredPathParameter,
    /// A path parameter that is not a `{placeholder}` of the path (`method.rs`, `sort_params`:
    /// `panic!("{} missing from path")` as soon as the operation has two path parameters).
    PathParameterNotInPath,
    /// Two parameters (or a parameter and the request body, always named `body`) that become
    /// the same Rust argument after `sanitize`: the generated code does not compile.
    DuplicateArgumentName,
    /// A request body with more than one media type (`method.rs`, `get_body_param`:
    /// `todo!("more media types than expected")`).
    SeveralRequestMediaTypes,
    /// A request media type progenitor cannot send (`method.rs`, `BodyContentType::from_str`:
    /// only `application/json`, `application/x-www-form-urlencoded`,
    /// `application/octet-stream`, `text/plain` and `text/x-markdown`, compared exactly).
    UnsupportedRequestMediaType,
    /// A request media type without `schema` (`get_body_param`: `Err`) or a JSON response
    /// media type without `schema` (`process_operation`: `todo!("media type encoding, no
    /// schema")`).
    MissingSchema,
    /// A JSON or form request media type (`get_body_param`: `todo!("media type encoding not
    /// empty")`) or a JSON response media type (`process_operation`:
    /// `assert!(mt.encoding.is_empty())`) with `encoding`.
    MediaTypeEncoding,
    /// An `application/octet-stream` body whose schema is not exactly `{type: string, format:
    /// binary}`, or a `text/plain` body whose schema is not exactly `{type: string}`
    /// (`get_body_param`: `Err`).
    RawBodySchema,
    /// The success responses (`default`, 101, 2xx, `2XX`) of an operation have more than one
    /// body shape (`method.rs`, `extract_responses`: `assert!(response_types.len() <= 1)`).
    SuccessResponseShapes,
    /// The error responses (`default`, 4xx, 5xx, `4XX`, `5XX`) of an operation have more than
    /// one body shape (`extract_responses`, same assertion).
    ErrorResponseShapes,
    /// An `x-dropshot-websocket` operation without a 101 response (`process_operation`:
    /// `Err(InvalidExtension)`).
    WebsocketWithout101,
    /// A schema whose `type` is none of the six OpenAPI 3.0 types (`to_schema.rs`:
    /// `todo!("invalid type")`).
    UnsupportedSchemaType,
    /// `exclusiveMinimum: true` without `minimum` (or the same for maximum) in a schema
    /// openapiv3 cannot type (`to_schema.rs`: `todo!("exclusive_minimum set without
    /// minimum")`).
    ExclusiveBoundWithoutBound,
    /// An `enum` without `type` whose values have more than one JSON type (typify
    /// `convert.rs`: `panic!("multiple implied types for an un-typed enum")`).
    MixedUntypedEnum,
    /// A `not` schema typify cannot express (typify `convert.rs`, `convert_not`: only `{}`
    /// and enumerations are handled, anything else is `todo!`).
    UnsupportedNot,
    /// `allOf: []` (typify `merge.rs`: `panic!("we should not be trying to merge an empty
    /// array of schemas")`).
    EmptyAllOf,
    /// `format` on an object, array or boolean schema, or `format`/`minimum`/`maximum`/
    /// `multipleOf` in a schema without `type` (and not nullable): openapiv3 cannot type such a
    /// schema and typify panics on it (`convert.rs`: `todo!("invalid (or unexpected)
    /// schema")`).
    KeywordWithoutFittingType,
    /// A path, query or header parameter whose schema is a struct (an object with properties,
    /// `required` or `additionalProperties: false`, or an `allOf`): with the builder interface
    /// progenitor panics writing its setter (`method.rs`, `builder_struct`:
    /// `assert_eq!(param.name, "body")`, or `unreachable!()` when optional).
    StructParameter,
    /// An `enum` value or a `default` whose JSON type is not the schema's `type`: typify checks
    /// them against the type it generates (`Err(value does not conform to the given schema)` or
    /// `unexpected value type`) and panics rendering a default it cannot express.
    ValueDoesNotFitSchema,
    /// progenitor failed or panicked on a document none of the other checks objects to: the
    /// message is progenitor's own, narrowed down to an operation or a component schema.
    GeneratorFailure,
}

impl Problem {
    /// A short label for the problem, as shown in the report.
    pub fn label(self) -> &'static str {
        match self {
            Problem::NotAnObject => "not a JSON object",
            Problem::Unreadable => "not readable as OpenAPI 3.0",
            Problem::UnsupportedVersion => "unsupported OpenAPI version",
            Problem::IgnoredPath => "path ignored",
            Problem::PathItemRef => "path item is a $ref",
            Problem::InvalidPathTemplate => "invalid path template",
            Problem::MissingOperationId => "missing operationId",
            Problem::DuplicateOperationId => "duplicate operationId",
            Problem::OperationNameCollision => "operation name collision",
            Problem::UnresolvableRef => "unresolvable $ref",
            Problem::DanglingRef => "dangling $ref",
            Problem::ExternalRef => "external $ref",
            Problem::RefCycle => "$ref cycle",
            Problem::RecursiveMerge => "recursive merge",
            Problem::CookieParameter => "cookie parameter",
            Problem::UnsupportedParameterStyle => "unsupported parameter style",
            Problem::ParameterContent => "parameter uses content",
            Problem::OptionalPathParameter => "optional path parameter",
            Problem::UndeclaredPathParameter => "undeclared path parameter",
            Problem::PathParameterNotInPath => "path parameter not in path",
            Problem::DuplicateArgumentName => "duplicate argument name",
            Problem::SeveralRequestMediaTypes => "several request media types",
            Problem::UnsupportedRequestMediaType => "unsupported request media type",
            Problem::MissingSchema => "media type without schema",
            Problem::MediaTypeEncoding => "media type with encoding",
            Problem::RawBodySchema => "raw body schema",
            Problem::SuccessResponseShapes => "several success body shapes",
            Problem::ErrorResponseShapes => "several error body shapes",
            Problem::WebsocketWithout101 => "websocket without 101",
            Problem::UnsupportedSchemaType => "unsupported schema type",
            Problem::ExclusiveBoundWithoutBound => "exclusive bound without bound",
            Problem::MixedUntypedEnum => "untyped enum of mixed types",
            Problem::UnsupportedNot => "unsupported not",
            Problem::EmptyAllOf => "empty allOf",
            Problem::KeywordWithoutFittingType => "keyword without a fitting type",
            Problem::StructParameter => "struct-typed parameter",
            Problem::ValueDoesNotFitSchema => "value does not fit its schema",
            Problem::GeneratorFailure => "progenitor failed",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One problem: where it is, what it is, and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// RFC 6901 JSON pointer of the node to change (`""` is the whole document).
    pub pointer: String,
    /// The kind of problem.
    pub problem: Problem,
    /// What is wrong and what progenitor would do with it, in words.
    pub message: String,
    /// The overlay action that fixes it.
    pub fix: SuggestedFix,
    /// Further actions the fix needs, to apply after [`Finding::fix`] in this order. Overlays
    /// cannot rename a key or replace a node in one action, so a few fixes take two; most
    /// findings leave this empty.
    pub follow_up: Vec<SuggestedFix>,
}

impl Finding {
    /// Every action of the fix, [`Finding::fix`] first.
    pub fn actions(&self) -> impl Iterator<Item = &SuggestedFix> {
        std::iter::once(&self.fix).chain(&self.follow_up)
    }
}

/// One OAI Overlay action.
#[derive(Clone, Debug, PartialEq)]
pub struct SuggestedFix {
    /// RFC 9535 JSONPath of the node(s) the action applies to.
    pub target: String,
    /// Why the action is there, for the overlay's `description`.
    pub description: String,
    /// `{"update": <value>}` or `{"remove": true}`.
    pub action: Value,
}

impl SuggestedFix {
    pub(crate) fn new(target: String, description: impl Into<String>, action: Value) -> Self {
        Self {
            target,
            description: description.into(),
            action,
        }
    }

    pub(crate) fn update(target: String, description: impl Into<String>, value: Value) -> Self {
        Self::new(target, description, serde_json::json!({ "update": value }))
    }

    pub(crate) fn remove(target: String, description: impl Into<String>) -> Self {
        Self::new(target, description, serde_json::json!({ "remove": true }))
    }

    /// The action as YAML, ready to paste under an overlay's `actions:` (a list item starting
    /// with `- target:`).
    pub fn to_yaml(&self) -> String {
        let mut action = Map::new();
        action.insert("target".into(), Value::String(self.target.clone()));
        action.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        if let Value::Object(verb) = &self.action {
            action.extend(verb.clone());
        }
        let yaml = serde_norway::to_string(&Value::Object(action))
            .unwrap_or_else(|e| format!("# cannot render this action as YAML: {e}\n"));
        let mut out = String::new();
        for (i, line) in yaml.lines().enumerate() {
            out.push_str(if i == 0 { "- " } else { "  " });
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// Everything preflight found, in document order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The findings, in the order of their nodes in the document.
    pub findings: Vec<Finding>,
}

impl Report {
    /// True when nothing stands between the document and progenitor.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Every suggested action as one Overlay 1.0 document, to save under `overlays/` and then
    /// review: a starting point, not a substitute for reading each finding.
    pub fn to_overlay_yaml(&self) -> String {
        let mut out = String::from(
            "overlay: 1.0.0\ninfo:\n  title: Fixes suggested by preflight\n  version: 1.0.0\nactions:",
        );
        let mut any = false;
        for action in self.findings.iter().flat_map(Finding::actions) {
            any = true;
            out.push('\n');
            for line in action.to_yaml().lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        if !any {
            out.push_str(" []\n");
        }
        out
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.findings.is_empty() {
            return writeln!(f, "preflight: no problems found");
        }
        let count = self.findings.len();
        writeln!(
            f,
            "preflight: {count} problem{} found",
            if count == 1 { "" } else { "s" }
        )?;
        for finding in &self.findings {
            let pointer = if finding.pointer.is_empty() {
                "(the whole document)"
            } else {
                &finding.pointer
            };
            writeln!(f)?;
            writeln!(f, "{pointer}  [{}]", finding.problem)?;
            for line in finding.message.lines() {
                writeln!(f, "  {line}")?;
            }
            writeln!(f, "  overlay fix:")?;
            for action in finding.actions() {
                for line in action.to_yaml().lines() {
                    writeln!(f, "    {line}")?;
                }
            }
        }
        Ok(())
    }
}
