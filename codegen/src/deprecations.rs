//! What the description deprecates reaches the user's compiler as `#[deprecated]`.
//!
//! progenitor and typify only copy a deprecation into a doc comment, if at all: a program calling
//! a deprecated operation compiles without a word. This pass, run on the generated syntax tree,
//! marks what the effective document deprecates:
//!
//! | the description deprecates | `#[deprecated]` goes on |
//! |---|---|
//! | an operation | its `Client` method and its builder type (`builder::X`) |
//! | a parameter | the builder's setter |
//! | a component schema | its type in `types` and its `types::builder` type |
//! | a member of a component schema | the struct field and the `types::builder` setter |
//!
//! The note is the description's own words: [`MESSAGE_KEYS`] when present (Speakeasy's
//! extension), else the sentences of `description` that speak of the deprecation; then the
//! replacement, as the Rust item a user writes instead, when the description names one
//! ([`REPLACEMENT_KEYS`], or a "use X", "replaced by X" or "superseded by X" sentence whose X is,
//! whatever its case and separators, the name of another operation of the document (its
//! operationId without the verb, or its last path segment), schema, member or parameter of the
//! same kind: the first in document order). A note always starts with "deprecated by the
//! service", so a user reading the compiler's warning knows it came from the vendor, not from
//! this crate.
//!
//! The generated code itself uses what it deprecates (the builder's own impls, the `Operation`
//! impl, typify's conversions reading a deprecated field): each item that names a deprecated
//! item gets `#[allow(deprecated)]` (each method, in the one big `impl Client`), so an allowance
//! never reaches code that does not use one (derive expansions are exempt from the lint already). The module-wide allowances of `generate.rs`
//! would hide these uses as well; the narrow ones keep the generated code clean on its own.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use serde_json::Value;

use crate::call_methods::type_name;
use crate::document;
use crate::open_enums::rust_type_name;

/// Extensions that carry the vendor's deprecation message instead of the description.
pub const MESSAGE_KEYS: &[&str] = &["x-speakeasy-deprecation-message"];
/// Extensions naming the replacement of a deprecated item: an operationId for an operation
/// (Speakeasy), or the name of a sibling of the same kind.
pub const REPLACEMENT_KEYS: &[&str] = &["x-speakeasy-deprecation-replacement", "x-replaced-by"];

/// The pass could not find the Rust item of something the description deprecates.
#[derive(Debug, thiserror::Error)]
#[error(
    "{what} is deprecated in the description, but the generated code has no {item}: progenitor or \
     typify named it differently. This is a creditdata-codegen bug (codegen/src/deprecations.rs); \
     please report it"
)]
pub struct DeprecationsError {
    what: String,
    item: String,
}

/// Where a deprecation goes in the generated code.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// `Client::method` and `builder::Builder`.
    Operation { builder: String, method: String },
    /// `builder::Builder::setter`.
    Parameter { builder: String, setter: String },
    /// `types::Type` and `types::builder::Type`.
    Schema { type_name: String },
    /// `types::Type::<field of JSON name>` and its `types::builder` setter.
    Member {
        type_name: String,
        json_name: String,
    },
}

/// One deprecated thing of the description.
#[derive(Debug, Clone)]
struct Deprecation {
    /// For errors: `operation GetX`, `schema Foo`...
    what: String,
    target: Target,
    note: String,
}

/// Marks everything `effective` deprecates in `file` (see the [module documentation](self)).
pub fn mark_deprecated(file: &mut syn::File, effective: &Value) -> Result<(), DeprecationsError> {
    let deprecations = deprecations(effective);
    if deprecations.is_empty() {
        return Ok(());
    }
    let mut names = DeprecatedNames::default();
    for deprecation in &deprecations {
        let field = mark(file, deprecation)?;
        names.add(&deprecation.target, field);
    }
    allow_uses(&mut file.items, &names);
    Ok(())
}

/// Every deprecation of the document, with its note.
fn deprecations(doc: &Value) -> Vec<Deprecation> {
    let mut found = Vec::new();
    let operations: Vec<_> = document::operations(doc)
        .filter_map(|op| {
            let id = op.operation.get("operationId").and_then(Value::as_str)?;
            Some((id, op))
        })
        .collect();
    for (id, op) in &operations {
        let builder = id.to_upper_camel_case();
        if is_deprecated(op.operation) {
            let replacement = replacement(op.operation, |name| {
                operations
                    .iter()
                    .find(|(other, other_op)| {
                        other != id
                            && (*other == name
                                || same_words(name, &operation_words(other))
                                || same_words(name, &last_literal_segment(other_op.path)))
                    })
                    .map(|(other, _)| format!("Client::{}", other.to_snake_case()))
            });
            found.push(Deprecation {
                what: format!("operation {id} ({} {})", op.method.to_uppercase(), op.path),
                target: Target::Operation {
                    builder: builder.clone(),
                    method: id.to_snake_case(),
                },
                note: note(op.operation, replacement),
            });
        }
        let parameters = parameters(doc, op);
        for parameter in &parameters {
            if !is_deprecated(parameter) {
                continue;
            }
            let Some(name) = parameter.get("name").and_then(Value::as_str) else {
                continue;
            };
            let replacement = replacement(parameter, |other| {
                parameters
                    .iter()
                    .filter_map(|p| p.get("name").and_then(Value::as_str))
                    .find(|p| *p != name && same_words(other, p))
                    .map(|p| format!("`{}()`", p.to_snake_case()))
            });
            found.push(Deprecation {
                what: format!("parameter {name} of operation {id}"),
                target: Target::Parameter {
                    builder: builder.clone(),
                    setter: name.to_snake_case(),
                },
                note: note(parameter, replacement),
            });
        }
    }
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    for (name, schema) in schemas.into_iter().flatten() {
        let type_name = rust_type_name(name);
        if is_deprecated(schema) {
            let replacement = replacement(schema, |other| {
                schemas
                    .into_iter()
                    .flatten()
                    .map(|(s, _)| s)
                    .find(|s| *s != name && same_words(other, s))
                    .map(|s| format!("types::{}", rust_type_name(s)))
            });
            found.push(Deprecation {
                what: format!("schema {name}"),
                target: Target::Schema {
                    type_name: type_name.clone(),
                },
                note: note(schema, replacement),
            });
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (member, property) in properties.into_iter().flatten() {
            if !is_deprecated(property) {
                continue;
            }
            let replacement = replacement(property, |other| {
                properties
                    .into_iter()
                    .flatten()
                    .map(|(p, _)| p)
                    .find(|p| *p != member && same_words(other, p))
                    .map(|p| format!("`{}`", p.to_snake_case()))
            });
            found.push(Deprecation {
                what: format!("member {member} of schema {name}"),
                target: Target::Member {
                    type_name: type_name.clone(),
                    json_name: member.clone(),
                },
                note: note(property, replacement),
            });
        }
    }
    found
}

/// The parameters of `op`: its own, then those of its path item it does not override
/// (OpenAPI: the same `name` and `in`), references resolved.
fn parameters<'a>(doc: &'a Value, op: &document::Operation<'a>) -> Vec<&'a Value> {
    let own: Vec<&Value> = op
        .operation
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| document::resolve(doc, p))
        .collect();
    let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
    let shared: Vec<&Value> = op
        .item
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| document::resolve(doc, p))
        .filter(|p| !own.iter().any(|o| key(o) == key(p)))
        .collect();
    own.into_iter().chain(shared).collect()
}

fn is_deprecated(node: &Value) -> bool {
    node.get("deprecated").and_then(Value::as_bool) == Some(true)
}

/// The Rust item that replaces `node`: named by an extension, or by a "use X" sentence of its
/// description; `find` resolves a name among the siblings of the same kind.
fn replacement(node: &Value, find: impl Fn(&str) -> Option<String>) -> Option<String> {
    let named = REPLACEMENT_KEYS
        .iter()
        .find_map(|key| node.get(*key).and_then(Value::as_str));
    if let Some(named) = named {
        // A name the document does not have is still the vendor's word: quoted as it is.
        return Some(find(named).unwrap_or_else(|| format!("`{named}`")));
    }
    let description = node.get("description").and_then(Value::as_str)?;
    use_phrases(description).find_map(|phrase| find(&phrase))
}

/// What follows "use", "replaced by" or "superseded by" in each sentence of `text`, without
/// articles, quotes and the words that only say what kind of thing it is: "Deprecated: use the
/// categorizations summary endpoint instead." → "categorizations summary".
fn use_phrases(text: &str) -> impl Iterator<Item = String> + '_ {
    sentences(text).filter_map(|sentence| {
        let lower = sentence.to_lowercase();
        let after = ["use ", "replaced by ", "superseded by "]
            .iter()
            .filter_map(|lead| {
                lower
                    .match_indices(lead)
                    .find(|(at, _)| *at == 0 || !lower.as_bytes()[at - 1].is_ascii_alphanumeric())
                    .map(|(at, _)| at + lead.len())
            })
            .min()?;
        let mut words: Vec<&str> = sentence[after..]
            .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '.' | ',' | ';'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(end) = words
            .iter()
            .position(|w| matches!(w.to_lowercase().as_str(), "instead" | "which" | "that"))
        {
            words.truncate(end);
        }
        while words.first().is_some_and(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "the" | "a" | "an" | "new" | "operation"
            )
        }) {
            words.remove(0);
        }
        while words.last().is_some_and(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "endpoint" | "operation" | "method" | "property" | "field" | "member" | "parameter"
            )
        }) {
            words.pop();
        }
        (!words.is_empty()).then(|| words.join(" "))
    })
}

/// Whether two names are the same words whatever their case and separators:
/// "categorizations summary" = `categorizations-summary` = `CategorizationsSummary`.
fn same_words(a: &str, b: &str) -> bool {
    let squash = |s: &str| {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    let (a, b) = (squash(a), squash(b));
    !a.is_empty() && a == b
}

/// An operationId without its leading verb: `GetCategorizationsSummary` → `CategorizationsSummary`.
fn operation_words(id: &str) -> String {
    const VERBS: [&str; 8] = [
        "get", "list", "search", "create", "update", "delete", "put", "post",
    ];
    let snake = id.to_snake_case();
    match snake.split_once('_') {
        Some((verb, rest)) if VERBS.contains(&verb) => rest.to_string(),
        _ => snake,
    }
}

/// The last path segment that is not a parameter: `/v1/sessions/{id}/scores` → `scores`.
fn last_literal_segment(path: &str) -> String {
    path.rsplit('/')
        .find(|s| !s.is_empty() && !s.starts_with('{'))
        .unwrap_or_default()
        .to_string()
}

/// The sentences of `text`, trimmed: split after a `.`, `!` or `?` that ends a word (not the
/// one in "2.0"), and at line breaks.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut ends: Vec<usize> = text
        .char_indices()
        .filter(|&(at, c)| {
            let next = text[at + c.len_utf8()..].chars().next();
            c == '\n' || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace))
        })
        .map(|(at, c)| at + c.len_utf8())
        .collect();
    ends.push(text.len());
    let mut start = 0;
    ends.into_iter()
        .map(move |end| {
            let sentence = &text[start..end];
            start = end;
            sentence.trim()
        })
        .filter(|s| !s.is_empty())
}

/// "deprecated by the service", the description's words about it, and the replacement.
fn note(node: &Value, replacement: Option<String>) -> String {
    let message = MESSAGE_KEYS
        .iter()
        .find_map(|key| node.get(*key).and_then(Value::as_str))
        .map(|m| m.trim().to_string())
        .or_else(|| {
            let description = node.get("description").and_then(Value::as_str)?;
            let about: Vec<&str> = sentences(description)
                .filter(|s| speaks_of_deprecation(s))
                .collect();
            (!about.is_empty()).then(|| about.join(" "))
        })
        .map(|m| without_deprecated_prefix(&m))
        .filter(|m| !m.is_empty());
    let mut note = String::from("deprecated by the service");
    if let Some(message) = message {
        note.push_str(": ");
        note.push_str(message.trim_end_matches('.'));
    }
    if let Some(replacement) = replacement {
        // The description's own words may already name it as Rust does (`color`).
        let rust_name = replacement
            .trim_matches('`')
            .trim_end_matches("()")
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_lowercase();
        if !note.to_lowercase().contains(&rust_name) {
            let replacement = if replacement.starts_with('`') {
                replacement
            } else {
                format!("`{replacement}`")
            };
            note.push_str(&format!("; use {replacement} instead"));
        }
    }
    note
}

fn speaks_of_deprecation(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    [
        "deprecat",
        "instead",
        "replaced",
        "superseded",
        "obsolete",
        "removed",
        "will be retired",
        "sunset",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// "Deprecated: use X" → "use X": the note already says it is deprecated.
fn without_deprecated_prefix(message: &str) -> String {
    let trimmed = message.trim();
    let lower = trimmed.to_lowercase();
    for prefix in ["deprecated:", "deprecated -", "deprecated."] {
        if lower.starts_with(prefix) {
            return trimmed[prefix.len()..].trim().to_string();
        }
    }
    trimmed.to_string()
}

fn deprecated_attr(note: &str) -> syn::Attribute {
    syn::parse_quote!(#[deprecated(note = #note)])
}

fn allow_attr() -> syn::Attribute {
    syn::parse_quote!(#[allow(deprecated)])
}

fn module_items<'a>(items: &'a mut [syn::Item], name: &str) -> Option<&'a mut Vec<syn::Item>> {
    items.iter_mut().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => m.content.as_mut().map(|(_, items)| items),
        _ => None,
    })
}

/// The method `name` of an inherent impl of `self_name` among `items`.
fn inherent_method<'a>(
    items: &'a mut [syn::Item],
    self_name: &str,
    name: &str,
) -> Option<&'a mut syn::ImplItemFn> {
    items.iter_mut().find_map(|item| match item {
        syn::Item::Impl(imp) if imp.trait_.is_none() && type_name(&imp.self_ty) == self_name => {
            imp.items.iter_mut().find_map(|item| match item {
                syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f),
                _ => None,
            })
        }
        _ => None,
    })
}

/// The struct, enum or alias named `name` among `items`: its attributes.
fn type_attrs<'a>(items: &'a mut [syn::Item], name: &str) -> Option<&'a mut Vec<syn::Attribute>> {
    items.iter_mut().find_map(|item| match item {
        syn::Item::Struct(s) if s.ident == name => Some(&mut s.attrs),
        syn::Item::Enum(e) if e.ident == name => Some(&mut e.attrs),
        syn::Item::Type(t) if t.ident == name => Some(&mut t.attrs),
        _ => None,
    })
}

/// The JSON name serde gives a field: its `rename`, or its Rust name.
fn serde_name(field: &syn::Field) -> Option<String> {
    let mut renamed = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                renamed = Some(meta.value()?.parse::<syn::LitStr>()?.value());
            } else if meta.input.peek(syn::Token![=]) {
                // Skip the value of any other `key = value`.
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
    }
    renamed.or_else(|| {
        field
            .ident
            .as_ref()
            .map(|i| i.to_string().trim_start_matches("r#").to_string())
    })
}

/// Puts the `#[deprecated]` of one deprecation on its items; for a member, returns the name of
/// its Rust field.
fn mark(
    file: &mut syn::File,
    deprecation: &Deprecation,
) -> Result<Option<String>, DeprecationsError> {
    let missing = |item: String| DeprecationsError {
        what: deprecation.what.clone(),
        item,
    };
    let attr = deprecated_attr(&deprecation.note);
    match &deprecation.target {
        Target::Operation { builder, method } => {
            inherent_method(&mut file.items, "Client", method)
                .ok_or_else(|| missing(format!("method `Client::{method}`")))?
                .attrs
                .push(attr.clone());
            let builders = module_items(&mut file.items, "builder")
                .ok_or_else(|| missing("`builder` module".into()))?;
            type_attrs(builders, builder)
                .ok_or_else(|| missing(format!("type `builder::{builder}`")))?
                .push(attr);
        }
        Target::Parameter { builder, setter } => {
            let builders = module_items(&mut file.items, "builder")
                .ok_or_else(|| missing("`builder` module".into()))?;
            // progenitor appends `_` to a name Rust reserves (`type` → `type_`).
            let reserved = format!("{setter}_");
            let found = match inherent_method(builders, builder, setter) {
                Some(f) => Some(f),
                None => inherent_method(builders, builder, &reserved),
            };
            found
                .ok_or_else(|| missing(format!("setter `builder::{builder}::{setter}`")))?
                .attrs
                .push(attr);
        }
        Target::Schema { type_name } => {
            let types = module_items(&mut file.items, "types")
                .ok_or_else(|| missing("`types` module".into()))?;
            type_attrs(types, type_name)
                .ok_or_else(|| missing(format!("type `types::{type_name}`")))?
                .push(attr.clone());
            // typify gives a builder to structs only.
            if let Some(attrs) =
                module_items(types, "builder").and_then(|b| type_attrs(b, type_name))
            {
                attrs.push(attr);
            }
        }
        Target::Member {
            type_name,
            json_name,
        } => {
            let types = module_items(&mut file.items, "types")
                .ok_or_else(|| missing("`types` module".into()))?;
            let field = types
                .iter_mut()
                .find_map(|item| match item {
                    syn::Item::Struct(s) if s.ident == *type_name => s
                        .fields
                        .iter_mut()
                        .find(|f| serde_name(f).as_deref() == Some(json_name.as_str())),
                    _ => None,
                })
                .ok_or_else(|| {
                    missing(format!(
                        "field for `{json_name}` in struct `types::{type_name}`"
                    ))
                })?;
            let field_name = field.ident.as_ref().map(ToString::to_string);
            field.attrs.push(attr.clone());
            if let (Some(field_name), Some(builders)) =
                (field_name.as_deref(), module_items(types, "builder"))
                && let Some(setter) = inherent_method(builders, type_name, field_name)
            {
                setter.attrs.push(attr);
            }
            return Ok(field_name);
        }
    }
    Ok(None)
}

/// The names that mark a use of a deprecated item.
#[derive(Debug, Default)]
struct DeprecatedNames {
    /// Types: builders of deprecated operations, deprecated schemas (and their typify builders,
    /// which have the same name).
    types: BTreeSet<String>,
    /// `Client` methods of deprecated operations.
    methods: BTreeSet<String>,
    /// Deprecated fields: type → field names (their uses name both).
    fields: BTreeMap<String, BTreeSet<String>>,
    /// Deprecated setters: builder type → setters.
    setters: BTreeMap<String, BTreeSet<String>>,
}

impl DeprecatedNames {
    /// Adds the names of `target`; `field` is the Rust name of a deprecated member's field.
    fn add(&mut self, target: &Target, field: Option<String>) {
        match target {
            Target::Operation { builder, method } => {
                self.types.insert(builder.clone());
                self.methods.insert(method.clone());
            }
            Target::Parameter { builder, setter } => {
                let setters = self.setters.entry(builder.clone()).or_default();
                setters.insert(setter.clone());
                setters.insert(format!("{setter}_"));
            }
            Target::Schema { type_name } => {
                self.types.insert(type_name.clone());
            }
            Target::Member { type_name, .. } => {
                if let Some(field) = field {
                    self.fields
                        .entry(type_name.clone())
                        .or_default()
                        .insert(field.trim_start_matches("r#").to_string());
                }
            }
        }
    }

    /// Whether code with these identifiers uses a deprecated item. `own` is the name an item
    /// defines, which is no use of itself.
    fn used_by(&self, idents: &BTreeSet<String>, own: Option<&str>) -> bool {
        let named = |name: &String| idents.contains(name) && own != Some(name.as_str());
        self.types.iter().any(named)
            || self.methods.iter().any(|m| idents.contains(m))
            || [&self.fields, &self.setters].iter().any(|pairs| {
                pairs.iter().any(|(owner, members)| {
                    named(owner) && members.iter().any(|m| idents.contains(m))
                })
            })
    }
}

fn idents(tokens: TokenStream, out: &mut BTreeSet<String>) {
    for token in tokens {
        match token {
            TokenTree::Ident(ident) => {
                out.insert(ident.to_string().trim_start_matches("r#").to_string());
            }
            TokenTree::Group(group) => idents(group.stream(), out),
            _ => {}
        }
    }
}

/// The identifiers in `code` (a doc comment is a string literal: its words are not counted).
fn item_idents(code: &impl ToTokens) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    idents(code.to_token_stream(), &mut out);
    out
}

/// `#[allow(deprecated)]` on each item of `items` (and of their modules) that uses a deprecated
/// item; in an impl of `Client`, on each method instead, so the allowance stays as narrow as
/// the use.
fn allow_uses(items: &mut [syn::Item], names: &DeprecatedNames) {
    for item in items {
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, items)) = m.content.as_mut() {
                    allow_uses(items, names);
                }
            }
            syn::Item::Impl(imp) if imp.trait_.is_none() && type_name(&imp.self_ty) == "Client" => {
                for impl_item in &mut imp.items {
                    if let syn::ImplItem::Fn(f) = impl_item {
                        // Its own name is no use of it: a deprecated method is only defined here.
                        let mut used = item_idents(&f.block);
                        idents(f.sig.output.to_token_stream(), &mut used);
                        for input in &f.sig.inputs {
                            idents(input.to_token_stream(), &mut used);
                        }
                        if names.used_by(&used, None) {
                            f.attrs.push(allow_attr());
                        }
                    }
                }
            }
            syn::Item::Struct(s) => {
                let used = item_idents(&s.fields);
                if names.used_by(&used, Some(&s.ident.to_string())) {
                    s.attrs.push(allow_attr());
                }
            }
            syn::Item::Enum(e) => {
                let used = item_idents(&e.variants);
                if names.used_by(&used, Some(&e.ident.to_string())) {
                    e.attrs.push(allow_attr());
                }
            }
            syn::Item::Impl(imp) => {
                let used = item_idents(&*imp);
                if names.used_by(&used, None) {
                    imp.attrs.push(allow_attr());
                }
            }
            syn::Item::Fn(f) => {
                let used = item_idents(&*f);
                if names.used_by(&used, Some(&f.sig.ident.to_string())) {
                    f.attrs.push(allow_attr());
                }
            }
            syn::Item::Type(t) => {
                let used = item_idents(&t.ty);
                if names.used_by(&used, Some(&t.ident.to_string())) {
                    t.attrs.push(allow_attr());
                }
            }
            syn::Item::Const(c) => {
                let used = item_idents(&*c);
                if names.used_by(&used, None) {
                    c.attrs.push(allow_attr());
                }
            }
            _ => {}
        }
    }
}
