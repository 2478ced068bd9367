//! A vendor release made by code from whatever description it is given: the release `cargo xtask
//! release-day` rehearses by default (made from the vendored description, so it applies however
//! much the vendor has published since), and what tests of the mock, the client and the command
//! use to stand for "the next release" without a fixture that goes stale.
//!
//! A release written as a fixed overlay stops applying the day the vendor publishes what it adds
//! (its targets or names are taken: "the release ... does not apply"). This one is an overlay
//! computed from `spec/openapi.json` as it is: every shape it extends is found by shape, every
//! name it adds is one the description does not use yet, and every addition is what an additive
//! vendor release of this service has brought or can bring, all at once:
//!
//! - `info.version` goes up (`1.0` → `1.1`);
//! - a new dataset below a Session, shaped like an existing one (its `sources`, then a list of
//!   items), published without an operationId, as most operations are;
//! - a new listing below a Session whose entries have an `id` and a `status` of their own (not a
//!   provider's status), with two operations taking one entry (a second path parameter): the
//!   entry as JSON and its document as a PDF;
//! - a new required (nullable) member of the Session, and a new optional member of the body that
//!   creates one, returned by the Session and searchable by a new query parameter of the
//!   session search (both hand-written routes of the mock), with a length limit;
//! - a new optional query parameter, bounded, of the dataset the new one is shaped like (also a
//!   hand-written route);
//! - a new value of every string enum of the components that has more than one (a provider
//!   status, a data package, a score type...);
//! - the Session's actions (the `POST`s below a Session) deprecated.
//!
//! The names tried for each addition are listed here; the first the description does not use is
//! taken, then the first with a number appended. A shape the description no longer has leaves
//! its addition out, with a note.

use std::collections::BTreeSet;

use crate::datasets::SESSION_PATH;
use crate::document::{SCHEMA_REF_PREFIX, operations, resolve};
use crate::error_chain;
use crate::overlay::{self, ApplyOptions, Overlay};
use heck::{ToLowerCamelCase, ToUpperCamelCase};
use serde_json::{Map, Value, json};

/// Names tried for the new dataset: its path segment below the Session and its item's schema.
const DATASET_NAMES: &[(&str, &str)] = &[
    ("employment-histories", "EmploymentHistory"),
    ("employment-records", "EmploymentRecord"),
    ("employments", "Employment"),
];

/// Names tried for the new listing: its path segment and its entry's schema.
const LISTING_NAMES: &[(&str, &str)] = &[
    ("tax-returns", "TaxReturn"),
    ("tax-assessments", "TaxAssessment"),
    ("tax-filings", "TaxFiling"),
];

/// Names tried for the Session's new required member.
const REQUIRED_MEMBER_NAMES: &[&str] = &["lastActivityAtUtc", "lastChangedAtUtc", "updatedAtUtc"];

/// Names tried for the new optional member of the create body (and of the Session, and the
/// search parameter of the same name in PascalCase).
const REFERENCE_MEMBER_NAMES: &[&str] =
    &["externalReference", "lenderReference", "clientReference"];

/// Names tried for the new query parameter of an existing dataset.
const DATASET_PARAMETER_NAMES: &[&str] = &["MaxAgeMonths", "MaximumAgeMonths", "MonthsBack"];

/// The value every enum gains, before the version is appended (`ADDED_IN_1_1`).
const ENUM_VALUE_PREFIX: &str = "ADDED_IN_";

/// Why no release can be made from a description, or applied to it.
#[derive(Debug, thiserror::Error)]
pub enum MadeReleaseError {
    /// The description has no `info.version` to raise.
    #[error("the description has no info.version (a string) for a release to raise")]
    NoVersion,
    /// Nothing the release extends is there.
    #[error(
        "the description has none of the shapes a release is made from (a dataset below \
         {SESSION_PATH}, the Session, a string enum, an action of the Session)"
    )]
    NothingToExtend,
    /// The made overlay does not apply: a bug of this module.
    #[error(
        "the made release does not apply to the description it was made from (a bug of \
         codegen/src/made_release.rs; please report it): {0}"
    )]
    DoesNotApply(String),
}

/// A release made from a description: the overlay and what it adds, one line each.
#[derive(Debug, Clone)]
pub struct MadeRelease {
    /// An OAI Overlay 1.1.0 document.
    pub overlay: Value,
    /// What it adds or changes, one line each, for the rehearsal's output.
    pub additions: Vec<String>,
    /// Additions left out because the description lacks the shape they extend.
    pub left_out: Vec<String>,
}

/// The release made from `published` (the vendored description, OpenAPI 3.1 as published).
pub fn make(published: &Value) -> Result<MadeRelease, MadeReleaseError> {
    let mut release = Builder {
        doc: published,
        actions: Vec::new(),
        additions: Vec::new(),
        left_out: Vec::new(),
        taken_schemas: published
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .map(|schemas| schemas.keys().cloned().collect())
            .unwrap_or_default(),
    };
    let version = release.version()?;
    let template = release.template_dataset();
    match &template {
        Some(template) => {
            release.dataset(template, &version);
            release.listing(template);
            release.dataset_parameter(template);
        }
        None => release.left_out.push(format!(
            "a dataset and a listing: no JSON GET below {SESSION_PATH} answers `sources` and a \
             list of items to shape them like"
        )),
    }
    release.session_members();
    release.enum_values(&version);
    release.deprecations();
    // The version's own action is always there; a release of nothing else is no rehearsal.
    if release.actions.len() < 2 {
        return Err(MadeReleaseError::NothingToExtend);
    }
    let overlay = json!({
        "overlay": "1.1.0",
        "info": {
            "title": format!(
                "{version}: an additive release made by cargo xtask release-day from the vendored \
                 description"
            ),
            "version": version,
        },
        "actions": release.actions,
    });
    Ok(MadeRelease {
        overlay,
        additions: release.additions,
        left_out: release.left_out,
    })
}

/// A breaking release made from `published`: `info.version` goes up and the items of the dataset
/// the additive release shapes its own like lose a member (the first one that is neither
/// required nor their provider's id). The vendor removing a response member degrades deployed
/// clients (the member is silently gone) and breaks Rust code reading the field: `cargo xtask
/// release-day --breaking` rehearses it up to the version check.
pub fn breaking(published: &Value) -> Result<MadeRelease, MadeReleaseError> {
    let mut release = Builder {
        doc: published,
        actions: Vec::new(),
        additions: Vec::new(),
        left_out: Vec::new(),
        taken_schemas: BTreeSet::new(),
    };
    let version = release.version()?;
    let template = release
        .template_dataset()
        .ok_or(MadeReleaseError::NothingToExtend)?;
    let item = resolve(published, &template.operation)
        .pointer("/responses/200/content/application~1json/schema")
        .map(|schema| resolve(published, schema))
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .and_then(|properties| {
            properties.iter().find_map(|(member, schema)| {
                (member != "sources" && is_array(schema))
                    .then(|| schema.pointer("/items/$ref")?.as_str())
                    .flatten()
            })
        })
        .and_then(|r| r.strip_prefix(SCHEMA_REF_PREFIX))
        .ok_or(MadeReleaseError::NothingToExtend)?
        .to_string();
    let schema = published
        .pointer(&format!("/components/schemas/{item}"))
        .ok_or(MadeReleaseError::NothingToExtend)?;
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let member = schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| {
            p.keys()
                .find(|m| !required.contains(m.as_str()) && m.as_str() != "sourceId")
        })
        .ok_or(MadeReleaseError::NothingToExtend)?
        .clone();
    release.actions.push(json!({
        "target": format!("$.components.schemas[{}].properties[{}]", quoted(&item), quoted(&member)),
        "description": "The vendor removes a member of a dataset's items.",
        "remove": true,
    }));
    release.additions.push(format!(
        "removed: {item}.{member} (in {SESSION_PATH}/{})",
        template.name
    ));
    Ok(MadeRelease {
        overlay: json!({
            "overlay": "1.1.0",
            "info": {
                "title": format!("{version}: a breaking release made from the description"),
                "version": version,
            },
            "actions": release.actions,
        }),
        additions: release.additions,
        left_out: release.left_out,
    })
}

/// The dataset the new ones are shaped like.
struct Template {
    /// The path below the Session (`legal-entities`).
    name: String,
    /// Its Operation object.
    operation: Value,
    /// The schema of its `sources` member.
    sources: Value,
}

struct Builder<'a> {
    doc: &'a Value,
    actions: Vec<Value>,
    additions: Vec<String>,
    left_out: Vec<String>,
    /// Component schema names in use, those this release adds included.
    taken_schemas: BTreeSet<String>,
}

impl Builder<'_> {
    fn action(&mut self, target: String, description: &str, update: Value) {
        self.actions.push(json!({
            "target": target,
            "description": description,
            "update": update,
        }));
    }

    /// `info.version` one step up; returns the new version.
    fn version(&mut self) -> Result<String, MadeReleaseError> {
        let current = self
            .doc
            .pointer("/info/version")
            .and_then(Value::as_str)
            .ok_or(MadeReleaseError::NoVersion)?;
        let next = next_version(current);
        self.action(
            "$.info".into(),
            "The vendor's version goes up.",
            json!({"version": next}),
        );
        self.additions
            .push(format!("info.version {current} -> {next}"));
        Ok(next)
    }

    /// The first JSON GET directly below the Session, not deprecated, whose answer is a
    /// component with `sources` and a list of component items.
    fn template_dataset(&self) -> Option<Template> {
        let prefix = format!("{SESSION_PATH}/");
        operations(self.doc).find_map(|op| {
            let name = op.path.strip_prefix(&prefix)?;
            if op.method != "get"
                || name.contains(['/', '{'])
                || op.operation.get("deprecated") == Some(&Value::Bool(true))
            {
                return None;
            }
            let schema = op
                .operation
                .pointer("/responses/200/content/application~1json/schema")?;
            schema
                .get("$ref")?
                .as_str()?
                .strip_prefix(SCHEMA_REF_PREFIX)?;
            let properties = resolve(self.doc, schema).get("properties")?.as_object()?;
            let sources = properties.get("sources")?.clone();
            let lists_items = properties.iter().any(|(member, schema)| {
                member != "sources"
                    && is_array(schema)
                    && schema
                        .pointer("/items/$ref")
                        .and_then(Value::as_str)
                        .is_some_and(|r| r.starts_with(SCHEMA_REF_PREFIX))
            });
            lists_items.then(|| Template {
                name: name.to_string(),
                operation: op.operation.clone(),
                sources,
            })
        })
    }

    /// Whether `/v1/sessions/{sessionId}/{name}` or anything below it exists.
    fn path_taken(&self, name: &str) -> bool {
        let path = format!("{SESSION_PATH}/{name}");
        self.doc
            .get("paths")
            .and_then(Value::as_object)
            .is_some_and(|paths| {
                paths.keys().any(|p| {
                    p.eq_ignore_ascii_case(&path)
                        || p.to_ascii_lowercase()
                            .starts_with(&format!("{}/", path.to_ascii_lowercase()))
                })
            })
    }

    /// The first `(segment, item schema)` of `names` whose path and schemas (item, its
    /// `Response`, its `Status`) are all free, else the first with a number appended.
    fn free_resource(&self, names: &[(&str, &str)]) -> (String, String) {
        let free = |segment: &str, item: &str| {
            !self.path_taken(segment)
                && [
                    item.to_string(),
                    format!("{}Response", segment.to_upper_camel_case()),
                    format!("{item}Status"),
                ]
                .iter()
                .all(|schema| !self.taken_schemas.contains(schema))
        };
        if let Some((segment, item)) = names.iter().find(|(s, i)| free(s, i)) {
            return (segment.to_string(), item.to_string());
        }
        let (segment, item) = names[0];
        (2..)
            .map(|n| (format!("{segment}-{n}"), format!("{item}{n}")))
            .find(|(s, i)| free(s, i))
            .expect("some number is free")
    }

    /// The template's operation for a new path: no operationId (derived by the pipeline), its
    /// own tag and summary, `schema` as its answer; the template's parameters and error
    /// answers.
    fn operation_like(&self, template: &Template, segment: &str, answer: Value) -> Value {
        let mut operation = template.operation.clone();
        if let Value::Object(fields) = &mut operation {
            fields.shift_remove("operationId");
            fields.shift_remove("deprecated");
            fields.shift_remove("description");
            fields.insert("tags".into(), json!([segment.to_upper_camel_case()]));
            fields.insert(
                "summary".into(),
                json!(format!("Returns the {}.", segment.replace('-', " "))),
            );
        }
        if let Some(content) = operation.pointer_mut("/responses/200/content") {
            *content = json!({"application/json": {"schema": answer}});
        }
        operation
    }

    /// The template's error answers (every status but its success).
    fn error_answers(&self, template: &Template) -> Map<String, Value> {
        template
            .operation
            .get("responses")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(status, _)| !status.starts_with('2'))
            .map(|(status, answer)| (status.clone(), answer.clone()))
            .collect()
    }

    /// The template's path parameters (the Session's id).
    fn session_parameters(&self, template: &Template) -> Vec<Value> {
        template
            .operation
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|p| resolve(self.doc, p).get("in").and_then(Value::as_str) == Some("path"))
            .cloned()
            .collect()
    }

    fn dataset(&mut self, template: &Template, version: &str) {
        let (segment, item) = self.free_resource(DATASET_NAMES);
        let response = format!("{}Response", segment.to_upper_camel_case());
        let list = segment.to_lower_camel_case();
        let operation = self.operation_like(
            template,
            &segment,
            json!({"$ref": format!("{SCHEMA_REF_PREFIX}{response}")}),
        );
        self.action(
            "$.paths".into(),
            "A new dataset below a Session, shaped like an existing one, published without an \
             operationId.",
            json!({format!("{SESSION_PATH}/{segment}"): {"get": operation}}),
        );
        self.action(
            "$.components.schemas".into(),
            "The new dataset's answer: the providers' sources, then its items.",
            json!({
                response.clone(): sources_then_items(&template.sources, &list, &item),
                item.clone(): {
                    "required": ["sourceId"],
                    "type": "object",
                    "properties": {
                        "sourceId": {"type": ["string", "null"]},
                        "employerName": {
                            "type": ["string", "null"],
                            "description": "The employer's registered name.",
                        },
                        "startDate": {"type": ["string", "null"], "format": "date"},
                        "endDate": {
                            "type": ["string", "null"],
                            "format": "date",
                            "description": "Empty while the employment lasts.",
                        },
                        "monthsEmployed": {"type": ["integer", "null"], "format": "int32"},
                    },
                },
            }),
        );
        self.taken_schemas.extend([response, item]);
        self.additions.push(format!(
            "a dataset {SESSION_PATH}/{segment} shaped like {} (no operationId; new in {version})",
            template.name
        ));
    }

    fn listing(&mut self, template: &Template) {
        let (segment, item) = self.free_resource(LISTING_NAMES);
        let response = format!("{}Response", segment.to_upper_camel_case());
        let status = format!("{item}Status");
        let list = segment.to_lower_camel_case();
        let parameter = format!("{}Id", item.to_lower_camel_case());
        let listing_path = format!("{SESSION_PATH}/{segment}");
        let entry_path = format!("{listing_path}/{{{parameter}}}");
        let document_path = format!("{entry_path}/document");

        let listing = self.operation_like(
            template,
            &segment,
            json!({"$ref": format!("{SCHEMA_REF_PREFIX}{response}")}),
        );
        let mut parameters = self.session_parameters(template);
        parameters.push(json!({
            "name": parameter,
            "in": "path",
            "description": format!("The id of one entry of {segment}, as the listing gives it."),
            "required": true,
            "schema": {"type": "string"},
        }));
        let entry_operation = |summary: String, success: Value| {
            let mut responses = Map::new();
            responses.insert("200".into(), success);
            responses.extend(self.error_answers(template));
            json!({
                "tags": [segment.to_upper_camel_case()],
                "summary": summary,
                "parameters": parameters,
                "responses": responses,
            })
        };
        let words = segment.replace('-', " ");
        let entry = entry_operation(
            format!("Returns one of the {words}."),
            json!({"description": "OK", "content": {"application/json": {"schema": {
                "$ref": format!("{SCHEMA_REF_PREFIX}{item}")
            }}}}),
        );
        let document = entry_operation(
            format!("Returns the document of one of the {words} as a PDF."),
            json!({"description": "OK", "content": {"application/pdf": {"schema": {
                "type": "string", "format": "binary"
            }}}}),
        );
        self.action(
            "$.paths".into(),
            "A new listing below a Session and the two operations that take one of its entries \
             (a second path parameter), all without an operationId.",
            json!({
                listing_path.clone(): {"get": listing},
                entry_path.clone(): {"get": entry},
                document_path.clone(): {"get": document},
            }),
        );
        self.action(
            "$.components.schemas".into(),
            "The listing's answer and its entries, whose `status` is their own (not a \
             provider's).",
            json!({
                response.clone(): sources_then_items(&template.sources, &list, &item),
                item.clone(): {
                    "required": ["id", "status"],
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "sourceId": {"type": ["string", "null"]},
                        "status": {"$ref": format!("{SCHEMA_REF_PREFIX}{status}")},
                        "taxYear": {"type": ["integer", "null"], "format": "int32"},
                        "fileName": {"type": ["string", "null"]},
                    },
                },
                status.clone(): {
                    "enum": ["FILED", "ASSESSED", "AMENDED"],
                    "type": "string",
                },
            }),
        );
        self.taken_schemas.extend([response, item, status]);
        self.additions.push(format!(
            "a listing {listing_path} with its entries at {entry_path} and {document_path}"
        ));
    }

    /// A bounded optional query parameter of the template dataset.
    fn dataset_parameter(&mut self, template: &Template) {
        let path = format!("{SESSION_PATH}/{}", template.name);
        let taken = self.query_parameters(&path, "get");
        let Some(name) = free_name(DATASET_PARAMETER_NAMES, |n| {
            taken.contains(&n.to_ascii_lowercase())
        }) else {
            return;
        };
        self.action(
            format!("$.paths[{}].get", quoted(&path)),
            "A new optional, bounded query parameter of an existing dataset.",
            json!({"parameters": [{
                "name": name,
                "in": "query",
                "description": "Only data at most this many months old.",
                "schema": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 120},
            }]}),
        );
        self.additions
            .push(format!("a query parameter {name} (1 to 120) of GET {path}"));
    }

    /// The lower-cased names of the query parameters of an operation.
    fn query_parameters(&self, path: &str, method: &str) -> BTreeSet<String> {
        self.doc
            .get("paths")
            .and_then(|paths| paths.get(path))
            .and_then(|item| item.get(method))
            .and_then(|op| op.get("parameters"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| resolve(self.doc, p))
            .filter(|p| p.get("in").and_then(Value::as_str) == Some("query"))
            .filter_map(|p| p.get("name").and_then(Value::as_str))
            .map(str::to_ascii_lowercase)
            .collect()
    }

    /// The component a JSON answer or body of `path`/`method` refers to.
    fn component_of(&self, pointer: &str) -> Option<String> {
        self.doc
            .pointer(pointer)?
            .get("$ref")?
            .as_str()?
            .strip_prefix(SCHEMA_REF_PREFIX)
            .map(str::to_string)
    }

    /// The Session's new required member; the create body's new optional member, returned by
    /// the Session and searched by a new parameter of the session search.
    fn session_members(&mut self) {
        let escaped = SESSION_PATH.replace('~', "~0").replace('/', "~1");
        let Some(session) = self.component_of(&format!(
            "/paths/{escaped}/get/responses/200/content/application~1json/schema"
        )) else {
            self.left_out.push(format!(
                "new Session members: GET {SESSION_PATH} answers no component schema"
            ));
            return;
        };
        let members = |schema: &str| -> BTreeSet<String> {
            self.doc
                .pointer(&format!("/components/schemas/{schema}/properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| k.to_ascii_lowercase()).collect())
                .unwrap_or_default()
        };
        let session_members = members(&session);
        if let Some(required) = free_name(REQUIRED_MEMBER_NAMES, |n| {
            session_members.contains(&n.to_ascii_lowercase())
        }) {
            self.action(
                format!("$.components.schemas[{}]", quoted(&session)),
                "A new required member of the Session, nullable, as the service's members are.",
                json!({
                    "properties": {required.clone(): {
                        "type": ["string", "null"],
                        "format": "date-time",
                        "description": "When anything of the Session last changed.",
                    }},
                    "required": [required],
                }),
            );
            self.additions
                .push(format!("a required member {session}.{required}"));
        }

        let collection = SESSION_PATH
            .rsplit_once('/')
            .map(|(collection, _)| collection)
            .unwrap_or_default();
        let create = self.component_of(&format!(
            "/paths/{}/post/requestBody/content/application~1json/schema",
            collection.replace('~', "~0").replace('/', "~1")
        ));
        let Some(create) = create else {
            self.left_out.push(format!(
                "a new create member: POST {collection} has no JSON body of a component schema"
            ));
            return;
        };
        let create_members = members(&create);
        let searched = self.query_parameters(collection, "get");
        let Some(reference) = free_name(REFERENCE_MEMBER_NAMES, |n| {
            let lower = n.to_ascii_lowercase();
            create_members.contains(&lower)
                || session_members.contains(&lower)
                || searched.contains(&lower)
        }) else {
            return;
        };
        let member = json!({
            "type": ["string", "null"],
            "description": "The lender's own reference for the Session, given at creation.",
            "maxLength": 64,
        });
        self.action(
            format!("$.components.schemas[{}].properties", quoted(&create)),
            "Creating a Session accepts the lender's own reference.",
            json!({reference.clone(): member}),
        );
        self.action(
            format!("$.components.schemas[{}].properties", quoted(&session)),
            "The Session returns the lender's own reference.",
            json!({reference.clone(): member}),
        );
        let parameter = reference.to_upper_camel_case();
        if self
            .doc
            .pointer(&format!(
                "/paths/{}/get",
                collection.replace('~', "~0").replace('/', "~1")
            ))
            .is_some()
        {
            self.action(
                format!("$.paths[{}].get", quoted(collection)),
                "Sessions can be searched by the lender's own reference.",
                json!({"parameters": [{
                    "name": parameter,
                    "in": "query",
                    "description": "Only Sessions with this reference.",
                    "schema": {"type": "string", "maxLength": 64},
                }]}),
            );
            self.additions.push(format!(
                "an optional member {create}.{reference} (at most 64 characters), returned as \
                 {session}.{reference}, searched by GET {collection}?{parameter}"
            ));
        }
    }

    /// A new value of every component enum of strings that lists more than one.
    fn enum_values(&mut self, version: &str) {
        let value =
            format!("{ENUM_VALUE_PREFIX}{}", version.replace(['.', '-'], "_")).to_ascii_uppercase();
        let schemas: Vec<(String, Vec<String>)> = self
            .doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(name, schema)| {
                let values: Vec<String> = schema
                    .get("enum")?
                    .as_array()?
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<_>>()?;
                (values.len() > 1).then(|| (name.clone(), values))
            })
            .collect();
        let mut touched = Vec::new();
        for (name, values) in schemas {
            let Some(new) = std::iter::once(value.clone())
                .chain((2..).map(|n| format!("{value}_{n}")))
                .find(|v| !values.contains(v))
            else {
                continue;
            };
            self.action(
                format!("$.components.schemas[{}]", quoted(&name)),
                "A value the enum did not list.",
                json!({"enum": [new]}),
            );
            touched.push(format!("{name}.{new}"));
        }
        if !touched.is_empty() {
            self.additions
                .push(format!("enum values {}", touched.join(", ")));
        }
    }

    /// The Session's actions, every `POST` below a Session, deprecated (those not yet).
    fn deprecations(&mut self) {
        let prefix = format!("{SESSION_PATH}/");
        let actions: Vec<(String, String)> = operations(self.doc)
            .filter(|op| op.method == "post" && op.path.starts_with(&prefix))
            .filter(|op| op.operation.get("deprecated") != Some(&Value::Bool(true)))
            .map(|op| (op.path.to_string(), op.method.to_string()))
            .collect();
        if actions.is_empty() {
            self.left_out
                .push(format!("a deprecation: no POST below {SESSION_PATH}"));
            return;
        }
        for (path, method) in &actions {
            self.action(
                format!("$.paths[{}].{method}", quoted(path)),
                "The vendor deprecates an action of the Session.",
                json!({"deprecated": true}),
            );
        }
        self.additions.push(format!(
            "deprecated: {}",
            actions
                .iter()
                .map(|(path, method)| format!("{} {path}", method.to_ascii_uppercase()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// `1.0` → `1.1`, `2.3.4` → `2.3.5`; a version whose last part is no number gets `.1`.
/// An answer schema shaped as the service's datasets are: the providers' `sources`, then the
/// items (`item`) under `list`.
fn sources_then_items(sources: &Value, list: &str, item: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "sources": sources,
            list: {
                "type": ["array", "null"],
                "items": {"$ref": format!("{SCHEMA_REF_PREFIX}{item}")},
            },
        },
    })
}

fn next_version(current: &str) -> String {
    match current.rsplit_once('.') {
        Some((head, last)) if last.parse::<u64>().is_ok() => {
            format!("{head}.{}", last.parse::<u64>().unwrap_or(0) + 1)
        }
        None if current.parse::<u64>().is_ok() => {
            format!("{}", current.parse::<u64>().unwrap_or(0) + 1)
        }
        _ => format!("{current}.1"),
    }
}

/// The first name `taken` refuses not, else the first with a number appended.
fn free_name(names: &[&str], taken: impl Fn(&str) -> bool) -> Option<String> {
    names
        .iter()
        .map(|n| n.to_string())
        .chain((2..100).map(|n| format!("{}{n}", names[0])))
        .find(|name| !taken(name))
}

/// `name` as a JSONPath string literal in single quotes.
fn quoted(name: &str) -> String {
    format!("'{}'", name.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Whether a schema's type is an array (`array` or `[array, null]`).
fn is_array(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "array",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "array"),
        _ => false,
    }
}

impl MadeRelease {
    /// The release applied to a copy of `published` (the description it was made from),
    /// strictly: every action selects something.
    pub fn apply(&self, published: &Value) -> Result<Value, MadeReleaseError> {
        let overlay = Overlay::from_value(&self.overlay, "the made release")
            .map_err(|errors| MadeReleaseError::DoesNotApply(error_chain(&errors)))?;
        let mut document = published.clone();
        overlay::apply(&mut document, &[overlay], &ApplyOptions { lenient: false })
            .map_err(|errors| MadeReleaseError::DoesNotApply(error_chain(&errors)))?;
        Ok(document)
    }
}
