//! Preflight: everything that would make progenitor fail or panic on an OpenAPI 3.0 document,
//! found before it runs and reported all at once.
//!
//! progenitor 0.15 (with typify 0.8) stops at the first problem, and many of its problems are
//! panics (`todo!`, `assert!`, `unwrap`) whose message names no node of the document. Each check
//! here mirrors one of those places in its source (named in the rustdoc of [`Problem`]) and
//! reports the JSON pointer of the node to change, what is wrong in plain words, and an OAI
//! Overlay action that fixes it.
//!
//! The checks read the document as JSON, the way openapiv3 would deserialize it (first key wins
//! where openapiv3 is order-sensitive, `$ref`s resolved the way progenitor resolves them). When
//! they find nothing, progenitor itself is run on the document as a last check, so a clean
//! report means generation succeeds; a failure there is reported as
//! [`Problem::GeneratorFailure`], narrowed down to the operation or schema that causes it.

use std::collections::HashSet;
use std::fmt;

use serde_json::{Map, Value};

mod deser;
mod loc;
mod merges;
mod names;
mod operations;
mod refs;
mod safety;
mod schemas;

use loc::Loc;

use crate::open_enums;

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

/// Runs every check on `document` (an OpenAPI 3.0 document as JSON), and when they find nothing,
/// runs progenitor itself with the settings this project generates with and narrows any failure
/// down to one node ([`locate_generator_failure`]). Never panics.
pub fn preflight(document: &Value) -> Report {
    let mut report = preflight_static(document);
    if report.is_clean() {
        report
            .findings
            .extend(locate_generator_failure(document).findings);
    }
    report
}

/// progenitor's own verdict on `document`, narrowed down to every component schema and
/// operation that makes it fail: an empty report when it generates. For a failure the static
/// checks did not foresee; the pipeline calls it only when generation failed, so that a clean
/// document is generated once. Runs progenitor at most [`default_generator_runs`] times.
pub fn locate_generator_failure(document: &Value) -> Report {
    narrow_generator_failure(document, default_generator_runs(document)).report
}

/// What [`narrow_generator_failure`] found, and what it cost.
#[derive(Clone, Debug)]
pub struct Narrowing {
    /// Every failing schema (or set of schemas that fail together) and operation, each with a
    /// fix aimed at the node that makes it fail; empty when progenitor generates.
    pub report: Report,
    /// How many times progenitor ran.
    pub generator_runs: usize,
    /// False when the budget ran out first: the report then ends with a finding saying so.
    pub complete: bool,
}

/// Like [`locate_generator_failure`], with an explicit budget of progenitor runs. Each schema
/// is first tried on its own (a small document each), so a document with `n` schemas and `m`
/// operations needs about `n` runs plus a few per failure found.
pub fn narrow_generator_failure(document: &Value, max_generator_runs: usize) -> Narrowing {
    let narrowed = safety::check(document, &crate::generate::settings(), max_generator_runs);
    Narrowing {
        report: Report {
            findings: narrowed.findings,
        },
        generator_runs: narrowed.runs,
        complete: narrowed.complete,
    }
}

/// The budget [`locate_generator_failure`] gives a document: twice its schemas and operations,
/// plus room for the fixes. Linear in the document's size; each run is on a part of it.
pub fn default_generator_runs(document: &Value) -> usize {
    let count = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_object)
            .map_or(0, Map::len)
    };
    let operations: usize = document
        .get("paths")
        .and_then(Value::as_object)
        .map_or(0, |paths| {
            paths
                .values()
                .filter_map(Value::as_object)
                .map(Map::len)
                .sum()
        });
    64 + 2 * (count("/components/schemas") + operations)
}

/// The checks derived from progenitor's and typify's source, without running them.
pub fn preflight_static(document: &Value) -> Report {
    let mut ctx = Ctx::new(document);
    if !document.is_object() {
        ctx.report(
            &Loc::root(),
            Problem::NotAnObject,
            format!(
                "The document is {}, not a JSON object; progenitor cannot read it at all.",
                crate::document::json_type(document)
            ),
            SuggestedFix::update(
                "$".into(),
                "An OpenAPI document is an object; start from the published description again.",
                serde_json::json!({}),
            ),
        );
        return ctx.finish();
    }
    deser::check(&mut ctx);
    operations::check(&mut ctx);
    schemas::check_components(&mut ctx);
    merges::check(&mut ctx);
    refs::check(&mut ctx);
    ctx.finish()
}

/// The state of one preflight run: the document and what was found so far.
pub(crate) struct Ctx<'a> {
    pub(crate) doc: &'a Value,
    findings: Vec<(Loc, Finding)>,
    seen: HashSet<(String, String, String)>,
    /// Schema nodes already checked: a component schema is reached once per use.
    pub(crate) schemas_seen: HashSet<Loc>,
    /// `$ref` nodes already reported, so the generic dangling-reference pass does not repeat
    /// a more specific finding.
    pub(crate) refs_reported: HashSet<Loc>,
}

impl<'a> Ctx<'a> {
    fn new(doc: &'a Value) -> Self {
        Self {
            doc,
            findings: Vec::new(),
            seen: HashSet::new(),
            schemas_seen: HashSet::new(),
            refs_reported: HashSet::new(),
        }
    }

    pub(crate) fn report(
        &mut self,
        at: &Loc,
        problem: Problem,
        message: impl Into<String>,
        fix: SuggestedFix,
    ) {
        self.report_then(at, problem, message, fix, Vec::new());
    }

    /// Records a finding unless the same node already has one with the same fix (a component
    /// reached from several operations).
    pub(crate) fn report_then(
        &mut self,
        at: &Loc,
        problem: Problem,
        message: impl Into<String>,
        fix: SuggestedFix,
        follow_up: Vec<SuggestedFix>,
    ) {
        let key = (at.pointer(), fix.target.clone(), fix.action.to_string());
        if !self.seen.insert(key) {
            return;
        }
        let finding = Finding {
            pointer: at.pointer(),
            problem,
            message: message.into(),
            fix,
            follow_up,
        };
        self.findings.push((at.clone(), finding));
    }

    /// An `update` that adds `value` under `loc`, targeting the deepest node that exists and
    /// nesting `value` in the keys that do not (an overlay cannot target a missing node).
    pub(crate) fn add_under(
        &self,
        loc: &Loc,
        description: impl Into<String>,
        value: Value,
    ) -> SuggestedFix {
        let mut target = loc.clone();
        let mut value = value;
        while target.get(self.doc).is_none() {
            let Some(key) = target.last_key().map(str::to_string) else {
                break;
            };
            let mut wrapper = Map::new();
            wrapper.insert(key, value);
            value = Value::Object(wrapper);
            target = target.parent().unwrap_or_default();
        }
        SuggestedFix::update(target.path(), description, value)
    }

    fn finish(self) -> Report {
        let order = loc::document_order(self.doc);
        let position = |loc: &Loc| {
            let mut loc = loc.clone();
            loop {
                if let Some(index) = order.get(&loc) {
                    return *index;
                }
                match loc.parent() {
                    Some(parent) => loc = parent,
                    None => return 0,
                }
            }
        };
        let mut findings: Vec<(usize, Finding)> = self
            .findings
            .into_iter()
            .map(|(loc, finding)| (position(&loc), finding))
            .collect();
        findings.sort_by_key(|(position, _)| *position);
        // A schema the open-enum stage made is fixed where it came from; a request-side copy
        // then says what its original says, once.
        let mut seen = HashSet::new();
        let findings = findings
            .into_iter()
            .map(|(_, finding)| at_source(self.doc, finding))
            .filter(|f| {
                let actions: Vec<String> = f
                    .actions()
                    .map(|a| format!("{}{}", a.target, a.action))
                    .collect();
                seen.insert((f.pointer.clone(), f.problem, actions))
            })
            .collect();
        Report { findings }
    }
}

/// Where the open-enum stage took the component schema `name` from: its hoisted-from place,
/// or (for a request-side copy) its original's. `None` for a schema of the document itself.
pub(crate) fn schema_source(doc: &Value, name: &str) -> Option<Loc> {
    let mut name = name.to_string();
    let mut copied = false;
    for _ in 0..8 {
        let schema = Loc::root()
            .key("components")
            .key("schemas")
            .key(&name)
            .get(doc)?;
        if let Some(from) = schema.get(open_enums::HOISTED_MARK).and_then(Value::as_str) {
            return Some(Loc::of_pointer(doc, from));
        }
        match schema
            .get(open_enums::REQUEST_VARIANT_MARK)
            .and_then(Value::as_str)
        {
            Some(original) if original != name => {
                name = original.to_string();
                copied = true;
            }
            _ => break,
        }
    }
    copied.then(|| Loc::root().key("components").key("schemas").key(&name))
}

/// `finding`, moved from a schema the open-enum stage made to where that schema came from.
fn at_source(doc: &Value, mut finding: Finding) -> Finding {
    let prefix = "/components/schemas/";
    let Some(rest) = finding.pointer.strip_prefix(prefix) else {
        return finding;
    };
    let (token, inner) = rest.split_once('/').map_or((rest, ""), |(t, i)| (t, i));
    let name = crate::document::pointer::unescape(token);
    let Some(source) = schema_source(doc, &name) else {
        return finding;
    };
    let made = Loc::root().key("components").key("schemas").key(&name);
    finding.pointer = if inner.is_empty() {
        source.pointer()
    } else {
        format!("{}/{inner}", source.pointer())
    };
    let (made_path, source_path) = (made.path(), source.path());
    let retarget = |fix: &mut SuggestedFix| {
        if let Some(rest) = fix.target.strip_prefix(&made_path)
            && (rest.is_empty() || rest.starts_with(['.', '[']))
        {
            fix.target = format!("{source_path}{rest}");
        }
    };
    retarget(&mut finding.fix);
    finding.follow_up.iter_mut().for_each(retarget);
    finding
}
