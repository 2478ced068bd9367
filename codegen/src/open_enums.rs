//! Response enums stay open; request enums stay strict.
//!
//! The service adds enum values without notice (the categorization summary already sends
//! `SOME_DATA_MISSING`, which its description does not list). typify generates closed Rust enums,
//! so one unknown value would fail a whole response. This stage makes every string enum that a
//! response can carry *open*: its Rust type gains a last variant, `Unrecognized(String)`, that
//! keeps any value the description does not list. Requests stay strict: a request can only carry
//! values the description lists.
//!
//! The mechanism has two halves, both here so they cannot drift apart:
//!
//! 1. [`prepare`], a schema transform before generation. It works out which named schemas a
//!    request can reach and which a response can reach. An enum reachable from both sides (and
//!    every schema that leads to one from both sides) is split: responses keep the original,
//!    requests get a copy named `<Name>Input`, marked `x-creditdata-request-variant-of`. String
//!    enums written inline in response schemas are first hoisted into named components so that
//!    each has a stable Rust name. Every response-side string enum is marked
//!    `x-creditdata-open-enum: true`. The effective document therefore shows exactly what the
//!    generator saw.
//! 2. [`open_response_enums`], a pass over the generated syntax tree. For each marked enum it
//!    appends `#[serde(untagged)] Unrecognized(String)`, drops `Copy`, and replaces typify's
//!    `Display`/`FromStr`/`TryFrom` impls (which reject unknown values) with infallible ones plus
//!    `as_str()` and `is_known()`.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;
use quote::{format_ident, quote};
use serde_json::{Map, Value};

use crate::document::pointer::{escape, unescape};
use crate::document::{self, SCHEMA_REF_PREFIX, is_extension, is_http_method, resolve};

/// Extension marking a response-side enum that the generated code keeps open.
pub const OPEN_ENUM_MARK: &str = "x-creditdata-open-enum";
/// Extension on a request-side copy, naming the response-side schema it was copied from.
pub const REQUEST_VARIANT_MARK: &str = "x-creditdata-request-variant-of";
/// Extension on a component hoisted out of an inline schema, giving its original JSON pointer.
pub const HOISTED_MARK: &str = "x-creditdata-hoisted-from";
/// Suffix of the request-side copies.
pub const REQUEST_SUFFIX: &str = "Input";

/// What [`prepare`] did to the document, and what the code pass must do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenEnumPlan {
    /// Component names of the enums whose Rust types get an `Unrecognized(String)` variant.
    pub open: BTreeSet<String>,
    /// Request-side copies: copy name → original name.
    pub request_variants: BTreeMap<String, String>,
    /// Inline enums moved into components: new component name → original JSON pointer.
    pub hoisted: BTreeMap<String, String>,
}

/// A document the stage cannot transform.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpenEnumError {
    #[error(
        "{pointer}: the request-side copy of schema `{original}` would be named `{wanted}`, but a \
         schema of that name already exists; rename one of them with an overlay"
    )]
    NameTaken {
        pointer: String,
        original: String,
        wanted: String,
    },
    #[error(
        "generated code has no enum `{rust_name}` for the open schema `{schema}`: the generator \
         named it differently; this is a creditdata-codegen bug, please report it"
    )]
    EnumNotFound { schema: String, rust_name: String },
    #[error(
        "generated code has no `types` module: this is a creditdata-codegen bug, please report it"
    )]
    NoTypesModule,
}

/// Splits shared enums, hoists inline response enums and marks the open ones (see module docs).
///
/// Expects an OpenAPI 3.0 document; parts that are not shaped as OpenAPI are left alone (the
/// preflight stage reports them).
pub fn prepare(doc: &mut Value) -> Result<OpenEnumPlan, OpenEnumError> {
    let mut plan = OpenEnumPlan::default();
    let initial = Reachability::of(doc);
    hoist_inline_response_enums(doc, &initial.response, &mut plan)?;

    let reach = Reachability::of(doc);
    let Some(schemas) = component_schemas(doc) else {
        return Ok(plan);
    };
    let shared: BTreeSet<String> = reach
        .request
        .intersection(&reach.response)
        .cloned()
        .collect();
    let to_copy: BTreeSet<String> = shared
        .iter()
        .filter(|name| reaches_string_enum(schemas, name))
        .cloned()
        .collect();
    for original in &to_copy {
        let wanted = format!("{original}{REQUEST_SUFFIX}");
        if schemas.contains_key(&wanted) {
            return Err(OpenEnumError::NameTaken {
                pointer: format!("/components/schemas/{}", escape(original)),
                original: original.clone(),
                wanted,
            });
        }
        plan.request_variants.insert(wanted, original.clone());
    }
    let renames: BTreeMap<String, String> = plan
        .request_variants
        .iter()
        .map(|(copy, original)| (original.clone(), copy.clone()))
        .collect();

    let schemas = component_schemas_mut(doc).expect("checked above");
    for (copy, original) in &plan.request_variants {
        let mut schema = schemas[original].clone();
        rewrite_refs(&mut schema, &renames);
        if let Value::Object(map) = &mut schema {
            map.insert(REQUEST_VARIANT_MARK.into(), Value::String(original.clone()));
        }
        schemas.insert(copy.clone(), schema);
    }
    // Request-only schemas now point at the copies; response-side ones keep the originals.
    for name in reach.request.difference(&reach.response) {
        if let Some(schema) = schemas.get_mut(name) {
            rewrite_refs(schema, &renames);
        }
    }
    for_each_request_root(doc, |schema| rewrite_refs(schema, &renames));

    let schemas = component_schemas_mut(doc).expect("checked above");
    for name in &reach.response {
        if let Some(schema @ Value::Object(_)) = schemas.get_mut(name)
            && is_string_enum(schema)
        {
            schema[OPEN_ENUM_MARK] = Value::Bool(true);
            plan.open.insert(name.clone());
        }
    }
    Ok(plan)
}

/// Named schemas reachable from request parameters and bodies, and from responses.
struct Reachability {
    request: BTreeSet<String>,
    response: BTreeSet<String>,
}

impl Reachability {
    fn of(doc: &Value) -> Reachability {
        let mut request_roots = Vec::new();
        let mut response_roots = Vec::new();
        for_each_root(doc, &mut |side, schema| match side {
            Side::Request => collect_schema_refs(schema, &mut request_roots),
            Side::Response => collect_schema_refs(schema, &mut response_roots),
        });
        Reachability {
            request: closure(doc, request_roots),
            response: closure(doc, response_roots),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

/// Calls `f` with every schema an operation uses directly, and which side it is on.
fn for_each_root(doc: &Value, f: &mut dyn FnMut(Side, &Value)) {
    for op in document::operations(doc) {
        let shared_params = op.item.get("parameters");
        for params in [shared_params, op.operation.get("parameters")]
            .into_iter()
            .flatten()
        {
            for param in params.as_array().into_iter().flatten() {
                let param = resolve(doc, param);
                for_each_parameter_schema(param, |s| f(Side::Request, s));
            }
        }
        if let Some(body) = op.operation.get("requestBody") {
            for_each_content_schema(resolve(doc, body), |s| f(Side::Request, s));
        }
        for response in op
            .operation
            .get("responses")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let response = resolve(doc, response.1);
            for_each_content_schema(response, |s| f(Side::Response, s));
            for header in response
                .get("headers")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                for_each_parameter_schema(resolve(doc, header.1), |s| f(Side::Response, s));
            }
        }
    }
}

/// The request-side roots again, mutably, for rewriting references in place (the operations
/// [`document::operations`] yields). Parameters and bodies defined under `components` are
/// rewritten there: only requests use them.
fn for_each_request_root(doc: &mut Value, mut f: impl FnMut(&mut Value)) {
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut().filter(|_| !is_extension(path)) else {
                continue;
            };
            for (key, value) in item.iter_mut() {
                if key == "parameters" {
                    rewrite_parameters(value, &mut f);
                } else if is_http_method(key) {
                    if let Some(params) = value.get_mut("parameters") {
                        rewrite_parameters(params, &mut f);
                    }
                    if let Some(body) = value.get_mut("requestBody") {
                        for_each_content_schema_mut(body, &mut f);
                    }
                }
            }
        }
    }
    if let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut) {
        if let Some(params) = components
            .get_mut("parameters")
            .and_then(Value::as_object_mut)
        {
            for param in params.values_mut() {
                for_each_parameter_schema_mut(param, &mut f);
            }
        }
        if let Some(bodies) = components
            .get_mut("requestBodies")
            .and_then(Value::as_object_mut)
        {
            for body in bodies.values_mut() {
                for_each_content_schema_mut(body, &mut f);
            }
        }
    }
}

fn rewrite_parameters(params: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for param in params.as_array_mut().into_iter().flatten() {
        for_each_parameter_schema_mut(param, f);
    }
}

fn for_each_parameter_schema(param: &Value, mut f: impl FnMut(&Value)) {
    if let Some(schema) = param.get("schema") {
        f(schema);
    }
    for_each_content_schema(param, f);
}

fn for_each_parameter_schema_mut(param: &mut Value, f: &mut impl FnMut(&mut Value)) {
    if let Some(schema) = param.get_mut("schema") {
        f(schema);
    }
    for_each_content_schema_mut(param, f);
}

fn for_each_content_schema(holder: &Value, mut f: impl FnMut(&Value)) {
    for media in holder
        .get("content")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(schema) = media.1.get("schema") {
            f(schema);
        }
    }
}

fn for_each_content_schema_mut(holder: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for media in holder
        .get_mut("content")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flatten()
    {
        if let Some(schema) = media.1.get_mut("schema") {
            f(schema);
        }
    }
}

/// Every component-schema name referenced anywhere inside `value`.
fn collect_schema_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(SCHEMA_REF_PREFIX))
            {
                out.push(unescape(name));
            }
            for v in map.values() {
                collect_schema_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_schema_refs(v, out)),
        _ => {}
    }
}

fn closure(doc: &Value, mut pending: Vec<String>) -> BTreeSet<String> {
    let schemas = component_schemas(doc);
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if seen.insert(name.clone())
            && let Some(schema) = schemas.and_then(|s| s.get(&name))
        {
            collect_schema_refs(schema, &mut pending);
        }
    }
    seen
}

fn reaches_string_enum(schemas: &Map<String, Value>, name: &str) -> bool {
    let mut pending = vec![name.to_string()];
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.get(&name) {
            if is_string_enum(schema) {
                return true;
            }
            collect_schema_refs(schema, &mut pending);
        }
    }
    false
}

/// A schema typify turns into a Rust enum of unit variants: an `enum` of strings (a `null`
/// member only makes it nullable).
fn is_string_enum(schema: &Value) -> bool {
    let Some(values) = schema.get("enum").and_then(Value::as_array) else {
        return false;
    };
    let typed_string = match schema.get("type") {
        None => true,
        Some(t) => t == "string",
    };
    typed_string
        && values.iter().any(Value::is_string)
        && values.iter().all(|v| v.is_string() || v.is_null())
}

fn rewrite_refs(value: &mut Value, renames: &BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && let Some(name) = r.strip_prefix(SCHEMA_REF_PREFIX)
                && let Some(new) = renames.get(&unescape(name))
            {
                *r = format!("{SCHEMA_REF_PREFIX}{}", escape(new));
            }
            for v in map.values_mut() {
                rewrite_refs(v, renames);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, renames)),
        _ => {}
    }
}

fn component_schemas(doc: &Value) -> Option<&Map<String, Value>> {
    doc.get("components")?.get("schemas")?.as_object()
}

fn component_schemas_mut(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    doc.get_mut("components")?
        .get_mut("schemas")?
        .as_object_mut()
}

/// Moves string enums written inline inside response-side component schemas into components of
/// their own (named parent + property), so that each has a Rust name this stage can find.
fn hoist_inline_response_enums(
    doc: &mut Value,
    response_side: &BTreeSet<String>,
    plan: &mut OpenEnumPlan,
) -> Result<(), OpenEnumError> {
    let Some(schemas) = component_schemas_mut(doc) else {
        return Ok(());
    };
    let mut hoisted: Vec<(String, String, Value)> = Vec::new();
    for name in response_side {
        let Some(schema) = schemas.get_mut(name) else {
            continue;
        };
        let pointer = format!("/components/schemas/{}", escape(name));
        hoist_within(schema, &name.to_upper_camel_case(), &pointer, &mut hoisted);
    }
    for (new_name, pointer, schema) in hoisted {
        if schemas.contains_key(&new_name) || plan.hoisted.contains_key(&new_name) {
            return Err(OpenEnumError::NameTaken {
                pointer,
                original: "(inline enum)".into(),
                wanted: new_name,
            });
        }
        plan.hoisted.insert(new_name.clone(), pointer);
        schemas.insert(new_name, schema);
    }
    Ok(())
}

fn hoist_within(
    schema: &mut Value,
    base: &str,
    pointer: &str,
    out: &mut Vec<(String, String, Value)>,
) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let mut children: Vec<(String, String, &mut Value)> = Vec::new();
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" => {
                for (prop, sub) in value.as_object_mut().into_iter().flatten() {
                    children.push((
                        format!("{base}{}", prop.to_upper_camel_case()),
                        format!("{pointer}/properties/{}", escape(prop)),
                        sub,
                    ));
                }
            }
            "items" => children.push((format!("{base}Item"), format!("{pointer}/items"), value)),
            "additionalProperties" if value.is_object() => children.push((
                format!("{base}Value"),
                format!("{pointer}/additionalProperties"),
                value,
            )),
            "allOf" | "anyOf" | "oneOf" => {
                for (i, sub) in value.as_array_mut().into_iter().flatten().enumerate() {
                    children.push((
                        format!("{base}Variant{i}"),
                        format!("{pointer}/{key}/{i}"),
                        sub,
                    ));
                }
            }
            _ => {}
        }
    }
    for (name, ptr, sub) in children {
        if is_string_enum(sub) {
            let mut enum_schema = std::mem::take(sub);
            let mut usage = Map::new();
            if let Value::Object(m) = &mut enum_schema {
                // Nullability and documentation belong to the use, not to the named enum.
                for key in ["nullable", "description", "default", "example"] {
                    if let Some(v) = m.remove(key) {
                        usage.insert(key.into(), v);
                    }
                }
                if let Some(Value::Array(values)) = m.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
                m.insert(HOISTED_MARK.into(), Value::String(ptr.clone()));
            }
            let reference =
                serde_json::json!({ "$ref": format!("{SCHEMA_REF_PREFIX}{}", escape(&name)) });
            *sub = if usage.is_empty() {
                reference
            } else {
                usage.insert("allOf".into(), Value::Array(vec![reference]));
                Value::Object(usage)
            };
            out.push((name, ptr, enum_schema));
        } else {
            hoist_within(sub, &name, &ptr, out);
        }
    }
}

/// The Rust name typify gives a component schema.
pub fn rust_type_name(schema_name: &str) -> String {
    schema_name.to_upper_camel_case()
}

/// Opens every enum of `plan.open` in the generated `types` module (see module docs).
pub fn open_response_enums(file: &mut syn::File, plan: &OpenEnumPlan) -> Result<(), OpenEnumError> {
    let types = file
        .items
        .iter_mut()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_mut().map(|(_, items)| items),
            _ => None,
        })
        .ok_or(OpenEnumError::NoTypesModule)?;
    for schema in &plan.open {
        let rust_name = rust_type_name(schema);
        // typify's conversions reject values it does not know; they are replaced below.
        types.retain(|item| !is_conversion_impl_for(item, &rust_name));
        let item = types
            .iter_mut()
            .find_map(|item| match item {
                syn::Item::Enum(e) if e.ident == rust_name => Some(e),
                _ => None,
            })
            .ok_or_else(|| OpenEnumError::EnumNotFound {
                schema: schema.clone(),
                rust_name: rust_name.clone(),
            })?;
        let extra = open_enum(item);
        types.extend(extra);
    }
    let lists: Vec<syn::Item> = types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Enum(e) => {
                value_list(e, plan.open.iter().any(|s| e.ident == rust_type_name(s)))
            }
            _ => None,
        })
        .collect();
    types.extend(lists);
    Ok(())
}

/// `ALL` (a strict enum's every value) or `KNOWN` (an open enum's listed values), so callers can
/// offer the choices without repeating them, e.g. in a command line's help.
fn value_list(item: &syn::ItemEnum, open: bool) -> Option<syn::Item> {
    let listed = if open {
        item.variants.len().checked_sub(1)?
    } else {
        item.variants.len()
    };
    let units: Vec<&syn::Ident> = item
        .variants
        .iter()
        .take(listed)
        .filter(|v| matches!(v.fields, syn::Fields::Unit))
        .map(|v| &v.ident)
        .collect();
    if units.len() != listed || listed == 0 {
        return None;
    }
    let name = &item.ident;
    let (constant, doc) = if open {
        (
            format_ident!("KNOWN"),
            " Every value the API description lists, in its order.",
        )
    } else {
        (
            format_ident!("ALL"),
            " Every value, in the order of the API description.",
        )
    };
    Some(syn::parse_quote! {
        impl #name {
            #[doc = #doc]
            pub const #constant: [Self; #listed] = [#(Self::#units),*];
        }
    })
}

fn is_conversion_impl_for(item: &syn::Item, rust_name: &str) -> bool {
    let syn::Item::Impl(imp) = item else {
        return false;
    };
    let Some((trait_path, _)) = &imp.trait_ else {
        return false;
    };
    let self_is_enum = matches!(&*imp.self_ty, syn::Type::Path(p) if p.path.is_ident(rust_name));
    let trait_name = trait_path.segments.last().map(|s| s.ident.to_string());
    self_is_enum
        && matches!(
            trait_name.as_deref(),
            Some("Display" | "FromStr" | "TryFrom")
        )
}

/// Adds the catch-all variant to `item` and returns the impls that go with it.
fn open_enum(item: &mut syn::ItemEnum) -> Vec<syn::Item> {
    let name = item.ident.clone();
    let known: Vec<(syn::Ident, String)> = item
        .variants
        .iter()
        .map(|v| (v.ident.clone(), wire_name(v)))
        .collect();
    let catch_all = ["Unrecognized", "UnrecognizedValue", "UnlistedValue"]
        .into_iter()
        .find(|c| !known.iter().any(|(ident, _)| ident == c))
        .map(|c| format_ident!("{c}"))
        .unwrap_or_else(|| format_ident!("UnrecognizedOpenValue"));

    for attr in &mut item.attrs {
        if attr.path().is_ident("derive")
            && let syn::Meta::List(list) = &mut attr.meta
            && let Ok(paths) = list.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
        {
            let kept = paths.into_iter().filter(|p| !p.is_ident("Copy"));
            list.tokens = quote!(#(#kept),*);
        }
    }
    let doc = " A value the API description does not list, kept exactly as the service sent it \
               (a newer service may send values this client does not know yet).";
    item.variants.push(syn::parse_quote! {
        #[doc = #doc]
        #[serde(untagged)]
        #catch_all(::std::string::String)
    });
    let idents = known.iter().map(|(i, _)| i);
    let idents2 = idents.clone();
    let wires = known.iter().map(|(_, w)| w);
    let wires2 = wires.clone();
    let impls: syn::File = syn::parse_quote! {
        impl #name {
            /// The value as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    #(Self::#idents => #wires,)*
                    Self::#catch_all(value) => value.as_str(),
                }
            }
            /// Whether the API description lists this value (`false` for the catch-all variant).
            pub fn is_known(&self) -> bool {
                !matches!(self, Self::#catch_all(_))
            }
        }
        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::std::str::FromStr for #name {
            type Err = ::std::convert::Infallible;
            fn from_str(value: &str) -> ::std::result::Result<Self, Self::Err> {
                Ok(match value {
                    #(#wires2 => Self::#idents2,)*
                    other => Self::#catch_all(other.to_string()),
                })
            }
        }
        impl ::std::convert::From<&str> for #name {
            fn from(value: &str) -> Self {
                match value.parse() {
                    Ok(v) => v,
                    Err(never) => match never {},
                }
            }
        }
        impl ::std::convert::From<::std::string::String> for #name {
            fn from(value: ::std::string::String) -> Self {
                Self::from(value.as_str())
            }
        }
    };
    impls.items
}

/// The serialized name of a unit variant: its `#[serde(rename = "...")]`, else its identifier.
fn wire_name(variant: &syn::Variant) -> String {
    let mut name = variant.ident.to_string();
    for attr in &variant.attrs {
        if attr.path().is_ident("serde") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    name = lit.value();
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            });
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "openapi": "3.0.3",
            "info": {"title": "t", "version": "1"},
            "paths": {
                "/things": {
                    "get": {
                        "parameters": [{"name": "Status", "in": "query", "schema": {"$ref": "#/components/schemas/Status"}}],
                        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    },
                    "post": {
                        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewThing"}}}},
                        "responses": {"201": {"description": "Created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}
                    }
                }
            },
            "components": {"schemas": {
                "Status": {"type": "string", "enum": ["A", "B"]},
                "Kind": {"type": "string", "enum": ["X"]},
                "Part": {"type": "object", "properties": {"kind": {"$ref": "#/components/schemas/Kind"}}},
                "Thing": {"type": "object", "properties": {
                    "status": {"$ref": "#/components/schemas/Status"},
                    "part": {"$ref": "#/components/schemas/Part"},
                    "colour": {"type": "string", "enum": ["RED", null], "nullable": true, "description": "c"}
                }},
                "NewThing": {"type": "object", "properties": {"part": {"$ref": "#/components/schemas/Part"}}},
                "OnlyIn": {"type": "string", "enum": ["Q"]}
            }}
        })
    }

    #[test]
    fn shared_enums_and_their_containers_are_split_and_requests_point_at_the_copies() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.request_variants,
            BTreeMap::from([
                ("KindInput".to_string(), "Kind".to_string()),
                ("PartInput".to_string(), "Part".to_string()),
                ("StatusInput".to_string(), "Status".to_string()),
            ])
        );
        assert_eq!(
            d.pointer("/paths/~1things/get/parameters/0/schema/$ref")
                .unwrap(),
            "#/components/schemas/StatusInput"
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(
            schemas["NewThing"]["properties"]["part"]["$ref"],
            "#/components/schemas/PartInput"
        );
        assert_eq!(
            schemas["PartInput"]["properties"]["kind"]["$ref"],
            "#/components/schemas/KindInput"
        );
        assert_eq!(
            schemas["Thing"]["properties"]["part"]["$ref"],
            "#/components/schemas/Part"
        );
        assert_eq!(schemas["PartInput"][REQUEST_VARIANT_MARK], "Part");
    }

    #[test]
    fn response_enums_are_marked_open_request_copies_and_unused_enums_are_not() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.open,
            BTreeSet::from(["Kind".into(), "Status".into(), "ThingColour".into()])
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(schemas["Status"][OPEN_ENUM_MARK], true);
        assert!(schemas["StatusInput"].get(OPEN_ENUM_MARK).is_none());
        assert!(schemas["OnlyIn"].get(OPEN_ENUM_MARK).is_none());
    }

    #[test]
    fn inline_response_enums_are_hoisted_keeping_nullability_at_the_use() {
        let mut d = doc();
        let plan = prepare(&mut d).unwrap();
        assert_eq!(
            plan.hoisted["ThingColour"],
            "/components/schemas/Thing/properties/colour"
        );
        let schemas = &d["components"]["schemas"];
        assert_eq!(
            schemas["Thing"]["properties"]["colour"],
            json!({"nullable": true, "description": "c", "allOf": [{"$ref": "#/components/schemas/ThingColour"}]})
        );
        assert_eq!(schemas["ThingColour"]["enum"], json!(["RED"]));
    }

    #[test]
    fn a_taken_copy_name_is_an_error_naming_both_schemas() {
        let mut d = doc();
        d["components"]["schemas"]["StatusInput"] = json!({"type": "string"});
        let err = prepare(&mut d).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/components/schemas/Status: the request-side copy of schema `Status` would be named \
             `StatusInput`, but a schema of that name already exists; rename one of them with an overlay"
        );
    }

    #[test]
    fn code_pass_adds_the_catch_all_and_infallible_conversions() {
        let mut file: syn::File = syn::parse_quote! {
            pub mod types {
                #[derive(::serde::Deserialize, ::serde::Serialize, Clone, Copy, Debug, PartialEq)]
                pub enum Status {
                    #[serde(rename = "A_ONE")]
                    AOne,
                    Unrecognized,
                }
                impl ::std::fmt::Display for Status {
                    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result { todo!() }
                }
                impl ::std::str::FromStr for Status {
                    type Err = ();
                    fn from_str(value: &str) -> Result<Self, ()> { Err(()) }
                }
                impl ::std::convert::TryFrom<&str> for Status {
                    type Error = ();
                    fn try_from(value: &str) -> Result<Self, ()> { Err(()) }
                }
                impl Status { pub fn keep_me(&self) {} }
            }
        };
        let plan = OpenEnumPlan {
            open: BTreeSet::from(["Status".into()]),
            ..Default::default()
        };
        open_response_enums(&mut file, &plan).unwrap();
        let text = prettyplease::unparse(&file);
        assert!(
            text.contains(
                "#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]"
            ),
            "{text}"
        );
        assert!(
            text.contains("#[serde(untagged)]\n        UnrecognizedValue(::std::string::String),"),
            "{text}"
        );
        assert!(text.contains("Self::AOne => \"A_ONE\""), "{text}");
        assert!(
            text.contains("\"Unrecognized\" => Self::Unrecognized"),
            "{text}"
        );
        assert!(text.contains("pub fn keep_me"), "{text}");
        assert!(
            text.contains("pub const KNOWN: [Self; 2usize] = [Self::AOne, Self::Unrecognized];"),
            "{text}"
        );
        assert!(!text.contains("todo!()"), "{text}");
        assert!(!text.contains("TryFrom<&str>"), "{text}");
    }

    #[test]
    fn code_pass_reports_an_enum_it_cannot_find() {
        let mut file: syn::File = syn::parse_quote! { pub mod types {} };
        let plan = OpenEnumPlan {
            open: BTreeSet::from(["Gone".into()]),
            ..Default::default()
        };
        assert_eq!(
            open_response_enums(&mut file, &plan).unwrap_err(),
            OpenEnumError::EnumNotFound {
                schema: "Gone".into(),
                rust_name: "Gone".into()
            }
        );
    }
}
