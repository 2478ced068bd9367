//! The down-convert stage: OpenAPI 3.1 becomes OpenAPI 3.0.3, the only version progenitor reads.
//!
//! [`downconvert`] makes one structural pass over the document. It knows which object it is in
//! (path item, operation, parameter, media type, schema, ...), because the same keyword means
//! different things in different objects: `examples` is a map in a Parameter or Media Type
//! Object in both versions, but an array in a 3.1 Schema Object. Specification extensions
//! (`x-*`) are never looked into.
//!
//! A 3.0.x document passes through unchanged (the same value, no warnings). Any other version
//! (Swagger 2.0, 3.2, 4.x, a missing or non-string `openapi`) is a [`DownconvertError`].
//!
//! Nothing that could change the meaning of the document is lost silently: everything dropped
//! or approximated yields a [`Warning`] naming the RFC 6901 JSON pointer of the input node,
//! which is the pointer an overlay would target to fix it. Warnings come in document order.
//!
//! # Rules
//!
//! Document level:
//!
//! - `openapi: 3.1.x` becomes `3.0.3`.
//! - `jsonSchemaDialect`, `webhooks` and `components/pathItems` are dropped with a warning.
//!   Path items under `paths` (or in callbacks) that are a `$ref` to `#/components/pathItems/*`
//!   are inlined first, so no reference dangles.
//! - A missing `paths` (optional in 3.1) becomes `paths: {}` (3.0 requires it). Not a warning:
//!   nothing is lost.
//! - An operation without `responses` (optional in 3.1) gets `responses: {}` and a warning:
//!   3.0 requires responses, and only the service's authors know what they are.
//! - `info.summary` is dropped; `license.identifier` is dropped and, where the license has no
//!   `url`, becomes the `url` of its SPDX page (`https://spdx.org/licenses/<id>.html`).
//! - Security schemes of type `mutualTLS` are dropped, and their names removed from security
//!   requirements. An emptied requirement stays as `{}`: the client certificate is configured
//!   on the HTTP client, so at the HTTP level the operation needs nothing further.
//! - `summary` and `description` next to `$ref` in a Reference Object outside schemas (they
//!   override the target's in 3.1; 3.0 ignores them) are dropped with a warning, so the
//!   effective document shows what the generator sees. Other siblings are left for preflight.
//!
//! Schema Objects (under `components/schemas`, the `schema` of parameters, headers and media
//! types, and every nested subschema):
//!
//! - Boolean schemas: `true` becomes `{}`, `false` becomes `{not: {}}` (exact). A boolean
//!   `additionalProperties` is valid 3.0 and stays.
//! - `type: [T, "null"]` (any order) becomes `type: T, nullable: true`. A null-only schema
//!   (`type: "null"`, `["null"]`) becomes `nullable: true, enum: [null]`, which progenitor
//!   reads as the null type; no warning, because meaning is kept and such schemas are mostly
//!   null branches that the next rule removes anyway.
//! - `type: [integer, string]` (or `number`) whose `pattern` is one System.Text.Json gives a
//!   numeric string (ASP.NET Core 10's default number handling: a number that may also be read
//!   from a string) becomes `type: integer` (or `number`) without the pattern, so the client
//!   gets `i32` rather than an "int or string" enum. Warned about, per node: a service that
//!   also *writes* numbers as strings needs an overlay typing them `string`.
//! - `type` listing several non-null types: `number` absorbs `integer` (every integer is a
//!   number). If `enum` (or `const`) is present, types none of its values have are left out.
//!   If two or more types remain, the schema becomes `anyOf` with one schema per type, each
//!   carrying the keywords that apply to it (string: `minLength`, `maxLength`, `pattern`,
//!   string formats; number and integer: the numeric bounds, `multipleOf`, numeric formats;
//!   object: `properties`, `required`, `additionalProperties`, `min/maxProperties`; array:
//!   `items`, `min/maxItems`, `uniqueItems`; `enum` values go to the branch of their JSON
//!   type). Annotations (`description`, `default`, `example`, ...) and `nullable` stay on the
//!   outer schema. Warned about: the generated Rust type changes shape. If the schema already
//!   has an `anyOf`, the new one is appended to `allOf` as `{anyOf: [...]}`.
//! - `oneOf`/`anyOf` with a null branch (`{type: "null"}`, `{const: null}`, `{enum: [null]}`,
//!   annotations allowed): the null branch is removed and `nullable: true` set on the schema.
//!   If one branch is left, it moves to `allOf: [branch]` (the standard 3.0 nullable `$ref`).
//!   No warning: meaning is kept. (A strict reading of 3.0.3 ties `nullable` to `type`; every
//!   3.0 tool we target, progenitor included, honours `allOf` + `nullable` as "or null".)
//! - `$ref` with sibling keywords (3.1 applies both; 3.0 ignores the siblings) becomes
//!   `allOf: [{$ref}]` plus the siblings, so `description`, `nullable` etc. keep their meaning.
//! - `const: v` becomes `enum: [v]`; without a `type`, one is inferred for strings, booleans
//!   and numbers (`integer` for whole numbers). `const: null` also sets `nullable: true`.
//! - An untyped schema whose `enum` contains `null` gets `nullable: true` (3.0 needs it to let
//!   null through).
//! - `examples: [a, ...]` becomes `example: a`; a warning says how many were dropped. An
//!   existing `example` wins over `examples`.
//! - Numeric `exclusiveMinimum: n` becomes `minimum: n, exclusiveMinimum: true` (likewise for
//!   the maximum). With a `minimum` as well, the stricter bound is kept and a warning says so.
//! - On a schema that may be a string: `contentEncoding: base64`/`base64url` becomes
//!   `format: byte`; a non-text `contentMediaType` (anything but `text/*`, JSON, XML, YAML and
//!   form data) becomes `format: binary`. An existing `format` wins. Whatever is not turned
//!   into a `format` is dropped with a warning. A schema without `type` (3.1 allows `{}` for
//!   a binary body) is left for preflight, which knows the media type.
//! - A `type: array` without `items` (optional in 3.1, required in 3.0) gets `items: {}`.
//! - Dropped with a warning, because 3.0 has no form for them: `$schema`, `$id`, `$anchor`,
//!   `$dynamicAnchor`, `$dynamicRef`, `$vocabulary`, `$comment`, `$defs` (3.0 tools resolve
//!   references only into `components/schemas`: move referenced definitions there with an
//!   overlay), `unevaluatedProperties`, `unevaluatedItems`, `dependentRequired`,
//!   `dependentSchemas`, `contains`, `minContains`, `maxContains`, `if`, `then`, `else`,
//!   `patternProperties`, `propertyNames`, `contentSchema`.
//! - `prefixItems` (tuples), and `items` given as an array (the tuple form of older drafts,
//!   invalid in 3.1 too), are dropped and `items` becomes `{}`: the array accepts every item
//!   the tuple accepted, and more.
//!
//! Shapes that are wrong in 3.1 as well (a numeric `type`, `properties` being an array, ...)
//! are left as they are, without a warning: preflight reports them with the fix.

mod schema_keywords;

use std::fmt;

use serde_json::{Map, Value};

use crate::document::ordered::set_after;
use crate::document::pointer::child;
use crate::document::{is_extension, is_http_method, json_type};

/// The version every converted document declares.
pub const TARGET_VERSION: &str = "3.0.3";

/// Something the conversion dropped or approximated because OpenAPI 3.0 cannot express it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// RFC 6901 JSON pointer of the node in the input document (`~` is `~0`, `/` is `~1`).
    pub pointer: String,
    /// What was found, what was done, and what it means for the generated client.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}

/// The result of [`downconvert`]: an OpenAPI 3.0.x document and what the conversion lost.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The 3.0.x document: `openapi` is [`TARGET_VERSION`] for a converted 3.1 document, or
    /// the input's own 3.0.x version for a document that passed through.
    pub document: Value,
    /// Everything dropped or approximated, in document order. Empty for a 3.0.x input.
    pub warnings: Vec<Warning>,
}

/// A document this stage cannot convert: it is not OpenAPI 3.0.x or 3.1.x.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownconvertError {
    /// The root of the document is not a JSON object.
    #[error(
        "the document is {found}, not an object: an OpenAPI description is an object with an \
         `openapi` field; down-convert reads OpenAPI 3.1.x and 3.0.x"
    )]
    NotAnObject {
        /// The JSON type found at the root (`an array`, `a string`, ...).
        found: &'static str,
    },
    /// A Swagger 2.0 (or older) document.
    #[error(
        "/swagger: this is a Swagger {found} document; down-convert reads OpenAPI 3.1.x \
         (converted to {TARGET_VERSION}) and 3.0.x (passed through): convert it to OpenAPI 3 \
         first"
    )]
    Swagger {
        /// The `swagger` field as found (a string as it is, anything else as JSON).
        found: String,
    },
    /// No `openapi` field at the root.
    #[error(
        "/openapi: the document has no `openapi` field; down-convert reads OpenAPI 3.1.x \
         (converted to {TARGET_VERSION}) and 3.0.x (passed through): add the version the \
         document follows, e.g. `openapi: 3.1.0`"
    )]
    MissingVersion,
    /// An `openapi` field naming a version other than 3.0.x or 3.1.x, or not a string.
    #[error(
        "/openapi: found {found}; down-convert reads OpenAPI 3.1.x (converted to \
         {TARGET_VERSION}) and 3.0.x (passed through), written `major.minor.patch` as a string"
    )]
    UnsupportedVersion {
        /// The `openapi` field as found, rendered as JSON (so a YAML `3.1` number shows as
        /// `3.1 (a number)`).
        found: String,
    },
}

/// Converts an OpenAPI 3.1.x document to 3.0.3; a 3.0.x document is returned as it is.
///
/// Never panics, whatever the shape of `doc`: shapes it does not understand are left for the
/// preflight stage. The same input always gives the same output and the same warnings.
pub fn downconvert(doc: &Value) -> Result<Converted, DownconvertError> {
    let Value::Object(root) = doc else {
        return Err(DownconvertError::NotAnObject {
            found: json_type(doc),
        });
    };
    let version = match root.get("openapi") {
        Some(Value::String(version)) => version,
        Some(other) => {
            return Err(DownconvertError::UnsupportedVersion {
                found: format!("{other} ({})", json_type(other)),
            });
        }
        None => {
            return Err(match root.get("swagger") {
                Some(found) => DownconvertError::Swagger {
                    found: match found {
                        Value::String(version) => version.clone(),
                        other => other.to_string(),
                    },
                },
                None => DownconvertError::MissingVersion,
            });
        }
    };
    if is_version(version, "3.0") {
        return Ok(Converted {
            document: doc.clone(),
            warnings: Vec::new(),
        });
    }
    if !is_version(version, "3.1") {
        return Err(DownconvertError::UnsupportedVersion {
            found: Value::String(version.clone()).to_string(),
        });
    }

    let mut converter = Converter {
        source: doc,
        mutual_tls: mutual_tls_schemes(root),
        warnings: Vec::new(),
    };
    let mut document = root.clone();
    converter.root(&mut document);
    Ok(Converted {
        document: Value::Object(document),
        warnings: converter.warnings,
    })
}

/// `major.minor.patch` with an optional `-suffix`, as the OpenAPI `openapi` field is written.
fn is_version(text: &str, major_minor: &str) -> bool {
    let Some(rest) = text
        .strip_prefix(major_minor)
        .and_then(|r| r.strip_prefix('.'))
    else {
        return false;
    };
    let patch = rest.split_once('-').map_or(rest, |(patch, _)| patch);
    !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit())
}

/// Names of the `mutualTLS` security schemes, known before the walk so that requirements met
/// earlier in the document (the root `security` usually precedes `components`) are fixed too.
fn mutual_tls_schemes(root: &Map<String, Value>) -> Vec<String> {
    let Some(Value::Object(schemes)) = root
        .get("components")
        .and_then(|c| c.get("securitySchemes"))
    else {
        return Vec::new();
    };
    schemes
        .iter()
        .filter(|(_, scheme)| scheme.get("type").and_then(Value::as_str) == Some("mutualTLS"))
        .map(|(name, _)| name.clone())
        .collect()
}

/// A function that converts one kind of OpenAPI object found at a JSON pointer.
type Visit<'a> = fn(&mut Converter<'a>, &mut Value, &str);

struct Converter<'a> {
    /// The input, for resolving `$ref`s to path items (the output is being rewritten).
    source: &'a Value,
    mutual_tls: Vec<String>,
    warnings: Vec<Warning>,
}

impl<'a> Converter<'a> {
    fn warn(&mut self, pointer: String, message: impl Into<String>) {
        self.warnings.push(Warning {
            pointer,
            message: message.into(),
        });
    }

    fn root(&mut self, root: &mut Map<String, Value>) {
        root.insert("openapi".into(), Value::String(TARGET_VERSION.into()));
        for key in root.keys().cloned().collect::<Vec<_>>() {
            let pointer = child("", &key);
            match key.as_str() {
                "jsonSchemaDialect" => {
                    root.shift_remove(&key);
                    self.warn(
                        pointer,
                        "`jsonSchemaDialect` has no OpenAPI 3.0 form: dropped (3.0 schemas \
                         always follow the 3.0 Schema Object rules)",
                    );
                }
                "webhooks" => {
                    let names = match root.shift_remove(&key) {
                        Some(Value::Object(hooks)) => hooks
                            .keys()
                            .filter(|k| !is_extension(k))
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        _ => String::new(),
                    };
                    let names = if names.is_empty() {
                        names
                    } else {
                        format!(" ({names})")
                    };
                    self.warn(
                        pointer,
                        format!(
                            "`webhooks` has no OpenAPI 3.0 form: dropped{names}; the client \
                             does not describe requests the service sends"
                        ),
                    );
                }
                _ => {
                    let Some(value) = root.get_mut(&key) else {
                        continue;
                    };
                    match key.as_str() {
                        "info" => self.info(value, &pointer),
                        "paths" => self.paths(value, &pointer),
                        "components" => self.components(value, &pointer),
                        "security" => self.security(value, &pointer),
                        _ => {}
                    }
                }
            }
        }
        if !root.contains_key("paths") {
            // Where a 3.0 author would have written it: after `servers`, else after `info`.
            let anchor = ["servers", "info", "openapi"]
                .into_iter()
                .find(|k| root.contains_key(*k))
                .unwrap_or("openapi");
            set_after(root, anchor, "paths", Value::Object(Map::new()));
        }
    }

    fn info(&mut self, info: &mut Value, pointer: &str) {
        let Value::Object(info) = info else { return };
        for key in info.keys().cloned().collect::<Vec<_>>() {
            match key.as_str() {
                "summary" => {
                    info.shift_remove(&key);
                    self.warn(
                        child(pointer, &key),
                        "`info.summary` has no OpenAPI 3.0 form: dropped (`info.description` \
                         stays)",
                    );
                }
                "license" => {
                    let license_pointer = child(pointer, &key);
                    let Some(Value::Object(license)) = info.get_mut(&key) else {
                        continue;
                    };
                    let Some(identifier) = license.shift_remove("identifier") else {
                        continue;
                    };
                    let pointer = child(&license_pointer, "identifier");
                    match identifier.as_str() {
                        Some(id) if !license.contains_key("url") => {
                            let url = format!("https://spdx.org/licenses/{id}.html");
                            license.insert("url".into(), Value::String(url.clone()));
                            self.warn(
                                pointer,
                                format!(
                                    "`license.identifier` has no OpenAPI 3.0 form: dropped, \
                                     and `license.url` set to its SPDX page {url}"
                                ),
                            );
                        }
                        _ => self.warn(
                            pointer,
                            "`license.identifier` has no OpenAPI 3.0 form: dropped \
                             (`license.url` stays)",
                        ),
                    }
                }
                _ => {}
            }
        }
    }

    fn paths(&mut self, paths: &mut Value, pointer: &str) {
        self.each_entry(paths, pointer, true, Self::path_item);
    }

    fn path_item(&mut self, item: &mut Value, pointer: &str) {
        let inlined_from = self.inline_path_item(item, pointer);
        let Value::Object(map) = item else { return };
        for (key, value) in map.iter_mut() {
            // Warnings about inlined content point where that content is written.
            let pointer = match &inlined_from {
                Some((target, own_keys)) if !own_keys.contains(key) => child(target, key),
                _ => child(pointer, key),
            };
            if is_http_method(key) {
                self.operation(value, &pointer);
            } else if key == "parameters" {
                self.parameter_list(value, &pointer);
            }
        }
    }

    /// Replaces a path item that is a `$ref` to `#/components/pathItems/*` (which 3.0 does not
    /// have) by its target, with the referencing item's own fields on top. Returns the pointer
    /// of the target and the keys that came from the referencing item.
    fn inline_path_item(
        &mut self,
        item: &mut Value,
        pointer: &str,
    ) -> Option<(String, Vec<String>)> {
        const PREFIX: &str = "#/components/pathItems/";
        let Value::Object(map) = item else {
            return None;
        };
        let Some(Value::String(first)) = map.get("$ref") else {
            return None;
        };
        let mut reference = first.clone();
        let mut seen: Vec<String> = Vec::new();
        loop {
            if !reference.starts_with(PREFIX) {
                return None;
            }
            let target_pointer = reference.trim_start_matches('#').to_string();
            if seen.contains(&target_pointer) {
                self.warn(
                    child(pointer, "$ref"),
                    format!(
                        "`{first}` leads to a cycle of path item references; left as it is, \
                         but `components/pathItems` is dropped, so it will not resolve"
                    ),
                );
                return None;
            }
            match self.source.pointer(&target_pointer) {
                Some(Value::Object(target)) => match target.get("$ref") {
                    Some(Value::String(next)) if next.starts_with(PREFIX) => {
                        seen.push(target_pointer);
                        reference = next.clone();
                    }
                    _ => {
                        let mut merged = target.clone();
                        let mut own_keys = Vec::new();
                        for (key, value) in map.iter().filter(|(k, _)| *k != "$ref") {
                            merged.insert(key.clone(), value.clone());
                            own_keys.push(key.clone());
                        }
                        *item = Value::Object(merged);
                        return Some((target_pointer, own_keys));
                    }
                },
                _ => {
                    self.warn(
                        child(pointer, "$ref"),
                        format!(
                            "`{reference}` does not resolve; left as it is, but \
                             `components/pathItems` is dropped, so it will not resolve in 3.0 \
                             either"
                        ),
                    );
                    return None;
                }
            }
        }
    }

    fn operation(&mut self, operation: &mut Value, pointer: &str) {
        let Value::Object(map) = operation else {
            return;
        };
        for (key, value) in map.iter_mut() {
            let pointer = child(pointer, key);
            match key.as_str() {
                "parameters" => self.parameter_list(value, &pointer),
                "requestBody" => self.reference_or(value, &pointer, Self::request_body),
                "responses" => self.each_entry(value, &pointer, true, |c, v, p| {
                    c.reference_or(v, p, Self::response)
                }),
                "callbacks" => self.each_entry(value, &pointer, false, |c, v, p| {
                    c.reference_or(v, p, Self::callback)
                }),
                "security" => self.security(value, &pointer),
                _ => {}
            }
        }
        if !map.contains_key("responses") {
            map.insert("responses".into(), Value::Object(Map::new()));
            self.warn(
                pointer.to_string(),
                "the operation has no `responses`, which OpenAPI 3.0 requires: added an empty \
                 `responses` object; describe the responses with an overlay",
            );
        }
    }

    fn parameter_list(&mut self, list: &mut Value, pointer: &str) {
        let Value::Array(items) = list else { return };
        for (index, item) in items.iter_mut().enumerate() {
            self.reference_or(item, &child(pointer, &index.to_string()), Self::parameter);
        }
    }

    /// A Parameter or Header Object: the two have the same schema-bearing fields.
    fn parameter(&mut self, parameter: &mut Value, pointer: &str) {
        let Value::Object(map) = parameter else {
            return;
        };
        for (key, value) in map.iter_mut() {
            match key.as_str() {
                "schema" => self.schema(value, &child(pointer, key)),
                "content" => self.content(value, &child(pointer, key)),
                _ => {}
            }
        }
    }

    fn content(&mut self, content: &mut Value, pointer: &str) {
        self.each_entry(content, pointer, false, Self::media_type);
    }

    fn media_type(&mut self, media_type: &mut Value, pointer: &str) {
        let Value::Object(map) = media_type else {
            return;
        };
        for (key, value) in map.iter_mut() {
            match key.as_str() {
                "schema" => self.schema(value, &child(pointer, key)),
                "encoding" => self.each_entry(value, &child(pointer, key), false, Self::encoding),
                _ => {}
            }
        }
    }

    fn encoding(&mut self, encoding: &mut Value, pointer: &str) {
        if let Some(headers) = encoding.get_mut("headers") {
            self.headers(headers, &child(pointer, "headers"));
        }
    }

    fn headers(&mut self, headers: &mut Value, pointer: &str) {
        // Header names are not extensions even when they start with `x-` (`X-Rate-Limit`).
        self.each_entry(headers, pointer, false, |c, v, p| {
            c.reference_or(v, p, Self::parameter)
        });
    }

    fn request_body(&mut self, body: &mut Value, pointer: &str) {
        if let Some(content) = body.get_mut("content") {
            self.content(content, &child(pointer, "content"));
        }
    }

    fn response(&mut self, response: &mut Value, pointer: &str) {
        let Value::Object(map) = response else {
            return;
        };
        for (key, value) in map.iter_mut() {
            let pointer = child(pointer, key);
            match key.as_str() {
                "headers" => self.headers(value, &pointer),
                "content" => self.content(value, &pointer),
                "links" => self.each_entry(value, &pointer, false, |c, v, p| {
                    c.reference_or(v, p, |_, _, _| {})
                }),
                _ => {}
            }
        }
    }

    fn callback(&mut self, callback: &mut Value, pointer: &str) {
        self.each_entry(callback, pointer, true, Self::path_item);
    }

    fn components(&mut self, components: &mut Value, pointer: &str) {
        let Value::Object(map) = components else {
            return;
        };
        for key in map.keys().cloned().collect::<Vec<_>>() {
            let pointer = child(pointer, &key);
            if key == "pathItems" {
                map.shift_remove(&key);
                self.warn(
                    pointer,
                    "`components/pathItems` has no OpenAPI 3.0 form: dropped (path items that \
                     referenced them were inlined)",
                );
                continue;
            }
            let Some(value) = map.get_mut(&key) else {
                continue;
            };
            let visit: Visit<'a> = match key.as_str() {
                "schemas" => Self::schema,
                "responses" => |c, v, p| c.reference_or(v, p, Self::response),
                "parameters" | "headers" => |c, v, p| c.reference_or(v, p, Self::parameter),
                "requestBodies" => |c, v, p| c.reference_or(v, p, Self::request_body),
                "callbacks" => |c, v, p| c.reference_or(v, p, Self::callback),
                "examples" | "links" => |c, v, p| c.reference_or(v, p, |_, _, _| {}),
                "securitySchemes" => {
                    self.security_schemes(value, &pointer);
                    continue;
                }
                _ => continue,
            };
            self.each_entry(value, &pointer, false, visit);
        }
    }

    fn security_schemes(&mut self, schemes: &mut Value, pointer: &str) {
        let Value::Object(map) = schemes else { return };
        for name in map.keys().cloned().collect::<Vec<_>>() {
            let scheme_pointer = child(pointer, &name);
            if self.mutual_tls.contains(&name) {
                map.shift_remove(&name);
                self.warn(
                    scheme_pointer,
                    "security scheme type `mutualTLS` has no OpenAPI 3.0 form: dropped, and \
                     removed from the security requirements that name it (configure the \
                     client certificate on the HTTP client)",
                );
            } else if let Some(scheme) = map.get_mut(&name) {
                self.reference_or(scheme, &scheme_pointer, |_, _, _| {});
            }
        }
    }

    fn security(&mut self, security: &mut Value, pointer: &str) {
        if self.mutual_tls.is_empty() {
            return;
        }
        let Value::Array(requirements) = security else {
            return;
        };
        for (index, requirement) in requirements.iter_mut().enumerate() {
            let Value::Object(requirement) = requirement else {
                continue;
            };
            for name in requirement.keys().cloned().collect::<Vec<_>>() {
                if self.mutual_tls.contains(&name) {
                    requirement.shift_remove(&name);
                    self.warn(
                        child(&child(pointer, &index.to_string()), &name),
                        format!(
                            "names the `mutualTLS` security scheme `{name}`, which has no \
                             OpenAPI 3.0 form: removed from this requirement"
                        ),
                    );
                }
            }
        }
    }

    /// Visits every member of an object whose members are all of one kind (keyed by name,
    /// status code, path, ...). `skip_extensions` for objects whose `x-*` members are
    /// specification extensions (Paths, Responses, Callback) rather than names.
    fn each_entry(
        &mut self,
        value: &mut Value,
        pointer: &str,
        skip_extensions: bool,
        visit: Visit<'a>,
    ) {
        let Value::Object(map) = value else { return };
        for (key, value) in map.iter_mut() {
            if skip_extensions && is_extension(key) {
                continue;
            }
            visit(self, value, &child(pointer, key));
        }
    }

    /// A Reference Object, or the object `visit` converts.
    fn reference_or(&mut self, value: &mut Value, pointer: &str, visit: Visit<'a>) {
        let Value::Object(map) = value else {
            return;
        };
        if !matches!(map.get("$ref"), Some(Value::String(_))) {
            visit(self, value, pointer);
            return;
        }
        for key in map.keys().cloned().collect::<Vec<_>>() {
            if key == "summary" || key == "description" {
                map.shift_remove(&key);
                self.warn(
                    child(pointer, &key),
                    format!(
                        "`{key}` next to `$ref` overrides the referenced object's in OpenAPI \
                         3.1, but 3.0 ignores siblings of `$ref`: dropped"
                    ),
                );
            }
        }
    }

    fn schema(&mut self, schema: &mut Value, pointer: &str) {
        match schema {
            Value::Bool(true) => *schema = Value::Object(Map::new()),
            Value::Bool(false) => {
                let mut never = Map::new();
                never.insert("not".into(), Value::Object(Map::new()));
                *schema = Value::Object(never);
            }
            Value::Object(map) => self.schema_object(map, pointer),
            _ => {}
        }
    }

    /// Three phases, so that warnings come in document order and point into the input:
    /// rewrite this schema's own keywords (noting warnings by keyword), then walk the
    /// subschemas in key order (emitting each keyword's notes when the walk reaches it), and
    /// only then restructure (split types, lift null branches, wrap `$ref`), which moves
    /// subschemas to places that do not exist in the input.
    fn schema_object(&mut self, schema: &mut Map<String, Value>, pointer: &str) {
        let input_keys: Vec<String> = schema.keys().cloned().collect();
        let mut notes = schema_keywords::Notes::default();
        let split = schema_keywords::rewrite(schema, &mut notes);

        for key in &input_keys {
            for message in notes.take(key) {
                self.warn(child(pointer, key), message);
            }
            let Some(value) = schema.get_mut(key) else {
                continue;
            };
            let pointer = child(pointer, key);
            match key.as_str() {
                "properties" => self.each_entry(value, &pointer, false, Self::schema),
                "additionalProperties" if value.is_object() => self.schema(value, &pointer),
                "items" | "not" => self.schema(value, &pointer),
                "allOf" | "anyOf" | "oneOf" => {
                    if let Value::Array(branches) = value {
                        for (index, branch) in branches.iter_mut().enumerate() {
                            self.schema(branch, &child(&pointer, &index.to_string()));
                        }
                    }
                }
                _ => {}
            }
        }
        for (key, message) in notes.rest() {
            self.warn(child(pointer, &key), message);
        }

        if let Some(types) = split {
            schema_keywords::split_types(schema, &types);
        }
        for composition in ["oneOf", "anyOf"] {
            schema_keywords::lift_null_branches(schema, composition);
        }
        schema_keywords::wrap_ref(schema);
    }
}
