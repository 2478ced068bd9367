//! The public Rust API of a generated client, read back from `generated.rs`.
//!
//! The document-level rules say what a change *should* do to Rust code; this module says what it
//! *did*: which types, fields, variants, client methods and builder methods exist, with their
//! types. The report uses it as the authority for source impact wherever a change names the Rust
//! items it touches, and lists every incompatible difference no change explains, so that a
//! generator change or a gap in the catalogue can never make the suggested version understate.

use std::collections::{BTreeMap, BTreeSet};

use quote::ToTokens;

/// A generated type in the `types` module.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TypeDef {
    /// Named fields, keyed by their JSON (serde) name: (Rust field name, type).
    Struct(BTreeMap<String, (String, String)>, Exhaustive),
    /// A tuple struct (typify's newtypes): the field types.
    Tuple(Vec<String>),
    /// Variants: Rust name → payload and serde name, as text.
    Enum(BTreeMap<String, String>, Exhaustive),
    Alias(String),
}

/// Whether code outside the crate may list every field or variant (a struct literal, an
/// exhaustive pattern or `match`): then adding one breaks that code. `#[non_exhaustive]` types
/// (`codegen/src/forward_compatible.rs`) forbid it, so additions are compatible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exhaustive {
    Yes,
    No,
}

impl Exhaustive {
    fn of(attrs: &[syn::Attribute]) -> Exhaustive {
        if crate::forward_compatible::is_non_exhaustive(attrs) {
            Exhaustive::No
        } else {
            Exhaustive::Yes
        }
    }
}

/// Every incompatible difference between two definitions of the type `name`, one line each.
fn type_changes(name: &str, a: &TypeDef, b: &TypeDef) -> Vec<String> {
    let mut out = Vec::new();
    let closed = |old: Exhaustive, new: Exhaustive, out: &mut Vec<String>| {
        if old == Exhaustive::Yes && new == Exhaustive::No {
            out.push(format!(
                "types::{name}: now #[non_exhaustive] (literals and exhaustive matches outside the crate stop compiling)"
            ));
        }
    };
    match (a, b) {
        (TypeDef::Struct(fa, ea), TypeDef::Struct(fb, eb)) => {
            closed(*ea, *eb, &mut out);
            for (json, (rust, ty)) in fa {
                match fb.get(json) {
                    None => out.push(format!("types::{name}: field {rust} removed")),
                    Some((_, other)) if other != ty => out.push(format!(
                        "types::{name}: field {rust} changed type from {} to {}",
                        shorten(ty),
                        shorten(other)
                    )),
                    Some(_) => {}
                }
            }
            if *ea == Exhaustive::Yes {
                for (json, (rust, _)) in fb {
                    if !fa.contains_key(json) {
                        out.push(format!("types::{name}: field {rust} added"));
                    }
                }
            }
        }
        (TypeDef::Enum(va, ea), TypeDef::Enum(vb, eb)) => {
            closed(*ea, *eb, &mut out);
            for (variant, payload) in va {
                match vb.get(variant) {
                    None => out.push(format!("types::{name}: variant {variant} removed")),
                    Some(other) if other != payload => {
                        out.push(format!("types::{name}: variant {variant} changed"))
                    }
                    Some(_) => {}
                }
            }
            if *ea == Exhaustive::Yes {
                for variant in vb.keys() {
                    if !va.contains_key(variant) {
                        out.push(format!("types::{name}: variant {variant} added"));
                    }
                }
            }
        }
        (a, b) if a != b => out.push(format!("types::{name}: definition changed")),
        _ => {}
    }
    out
}

/// The API surface of one generated file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RustApi {
    types: BTreeMap<String, TypeDef>,
    client_methods: BTreeSet<String>,
    /// Builder name → method name → the value type it takes (`call` → its return type).
    builders: BTreeMap<String, BTreeMap<String, String>>,
}

impl RustApi {
    /// Reads the API of generated code. `None` when the text is not Rust this generator wrote.
    pub fn parse(code: &str) -> Option<RustApi> {
        let file = syn::parse_file(code).ok()?;
        let mut api = RustApi::default();
        for item in &file.items {
            match item {
                syn::Item::Mod(m) if m.ident == "types" => {
                    for item in m.content.as_ref().map(|(_, i)| i.as_slice()).unwrap_or(&[]) {
                        api.add_type(item);
                    }
                }
                syn::Item::Mod(m) if m.ident == "builder" => {
                    for item in m.content.as_ref().map(|(_, i)| i.as_slice()).unwrap_or(&[]) {
                        api.add_builder_impl(item);
                    }
                }
                syn::Item::Impl(imp)
                    if imp.trait_.is_none() && type_name(&imp.self_ty) == Some("Client".into()) =>
                {
                    for item in &imp.items {
                        if let syn::ImplItem::Fn(f) = item
                            && matches!(f.vis, syn::Visibility::Public(_))
                        {
                            api.client_methods.insert(f.sig.ident.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        (!api.types.is_empty() || !api.client_methods.is_empty()).then_some(api)
    }

    fn add_type(&mut self, item: &syn::Item) {
        match item {
            syn::Item::Struct(s) if matches!(s.vis, syn::Visibility::Public(_)) => {
                let exhaustive = Exhaustive::of(&s.attrs);
                let def = match &s.fields {
                    syn::Fields::Named(named) => TypeDef::Struct(
                        named
                            .named
                            .iter()
                            .filter(|f| matches!(f.vis, syn::Visibility::Public(_)))
                            .map(|f| {
                                let rust = f
                                    .ident
                                    .as_ref()
                                    .map(|i| i.to_string().trim_start_matches("r#").to_string())
                                    .unwrap_or_default();
                                let json = serde_rename(&f.attrs)
                                    .or_else(|| {
                                        serde_flag(&f.attrs, "flatten").then(|| format!("..{rust}"))
                                    })
                                    .unwrap_or_else(|| rust.clone());
                                (json, (rust, text(&f.ty)))
                            })
                            .collect(),
                        exhaustive,
                    ),
                    syn::Fields::Unnamed(unnamed) => {
                        TypeDef::Tuple(unnamed.unnamed.iter().map(|f| text(&f.ty)).collect())
                    }
                    syn::Fields::Unit => TypeDef::Tuple(Vec::new()),
                };
                self.types.insert(s.ident.to_string(), def);
            }
            syn::Item::Enum(e) if matches!(e.vis, syn::Visibility::Public(_)) => {
                let variants = e
                    .variants
                    .iter()
                    .map(|v| {
                        let payload = match &v.fields {
                            syn::Fields::Unit => String::new(),
                            fields => compact(&fields.to_token_stream().to_string()),
                        };
                        let json = serde_rename(&v.attrs).unwrap_or_default();
                        (v.ident.to_string(), format!("{payload} {json}"))
                    })
                    .collect();
                self.types.insert(
                    e.ident.to_string(),
                    TypeDef::Enum(variants, Exhaustive::of(&e.attrs)),
                );
            }
            syn::Item::Type(t) if matches!(t.vis, syn::Visibility::Public(_)) => {
                self.types
                    .insert(t.ident.to_string(), TypeDef::Alias(text(&t.ty)));
            }
            _ => {}
        }
    }

    fn add_builder_impl(&mut self, item: &syn::Item) {
        let syn::Item::Impl(imp) = item else { return };
        if imp.trait_.is_some() {
            return;
        }
        let Some(name) = type_name(&imp.self_ty) else {
            return;
        };
        let methods = self.builders.entry(name).or_default();
        for item in &imp.items {
            let syn::ImplItem::Fn(f) = item else { continue };
            // Doc-hidden methods (progenitor's `send`, kept for its `ResponseValue`) are not the
            // API users are shown: the report names `call`, the one way the docs teach.
            // `call_with_response` answers `CallResponse<T>` of `call`'s `T`: a change of one is
            // a change of the other, and the report names `call` for both.
            if !matches!(f.vis, syn::Visibility::Public(_))
                || f.sig.ident == "new"
                || f.sig.ident == "call_with_response"
                || doc_hidden(&f.attrs)
            {
                continue;
            }
            let method = f.sig.ident.to_string();
            let value = if method == "call" || method == "send" {
                match &f.sig.output {
                    syn::ReturnType::Type(_, ty) => call_output(ty).unwrap_or_else(|| text(ty)),
                    syn::ReturnType::Default => "()".into(),
                }
            } else {
                // `fn x<V>(self, value: V) where V: TryInto<T>`: the type the value becomes.
                try_into_target(&f.sig)
                    .unwrap_or_else(|| compact(&f.sig.to_token_stream().to_string()))
            };
            methods.insert(method, value);
        }
    }

    /// Whether the item existed and changed incompatibly, or disappeared, between `old` and
    /// `new`. Items are written `types::Name`, `types::Name.json_field`, `Client::method`,
    /// `builder::Name::method`. `None` when neither side knows the item (the report then keeps
    /// its rule-based verdict).
    pub fn item_breaks(
        old: &RustApi,
        new: &RustApi,
        item: &str,
        named: &BTreeSet<String>,
    ) -> Option<bool> {
        if let Some(rest) = item.strip_prefix("types::") {
            if let Some((ty, field)) = rest.split_once('.') {
                let field_of = |api: &RustApi| match api.types.get(ty) {
                    Some(TypeDef::Struct(fields, exhaustive)) => {
                        Some((fields.get(field).cloned(), *exhaustive))
                    }
                    _ => None,
                };
                return match (field_of(old), field_of(new)) {
                    (None, None) => None,
                    (Some((None, _)), Some((None, _))) => None,
                    (Some((Some((_, a)), _)), Some((Some((_, b)), _))) => {
                        Some(a != b || !same_inline_types(old, new, &a, named))
                    }
                    // A field appearing breaks the struct literals and exhaustive patterns of an
                    // exhaustive struct only; a new struct has no users yet.
                    (Some((None, exhaustive)), Some((Some(_), _))) => {
                        Some(exhaustive == Exhaustive::Yes)
                    }
                    (None, Some(_)) => Some(false),
                    // One disappearing breaks readers.
                    _ => Some(true),
                };
            }
            return match (old.types.get(rest), new.types.get(rest)) {
                (None, None) => None,
                (Some(a), Some(b)) => Some(
                    !type_changes(rest, a, b).is_empty() || !same_inline_deps(old, new, a, named),
                ),
                (None, Some(_)) => Some(false),
                (Some(_), None) => Some(true),
            };
        }
        if let Some(method) = item.strip_prefix("Client::") {
            let (a, b) = (
                old.client_methods.contains(method),
                new.client_methods.contains(method),
            );
            return (a || b).then_some(a && !b);
        }
        if let Some(rest) = item.strip_prefix("builder::") {
            let (builder, method) = rest.split_once("::")?;
            let get = |api: &RustApi| {
                api.builders
                    .get(builder)
                    .and_then(|m| m.get(method))
                    .cloned()
            };
            return match (get(old), get(new)) {
                (None, None) => None,
                (None, Some(_)) => Some(false),
                (Some(_), None) => Some(true),
                (Some(a), Some(b)) => Some(a != b || !same_inline_types(old, new, &a, named)),
            };
        }
        None
    }

    /// Every incompatible difference from `old` to `new`, one line each, sorted.
    pub fn incompatibilities(old: &RustApi, new: &RustApi) -> Vec<String> {
        let mut out = Vec::new();
        for (name, a) in &old.types {
            let Some(b) = new.types.get(name) else {
                out.push(format!("types::{name}: removed"));
                continue;
            };
            out.extend(type_changes(name, a, b));
        }
        for method in &old.client_methods {
            if !new.client_methods.contains(method) {
                out.push(format!("Client::{method}: removed"));
            }
        }
        for (builder, methods) in &old.builders {
            let Some(others) = new.builders.get(builder) else {
                continue; // reported with the client method
            };
            for (method, ty) in methods {
                match others.get(method) {
                    None => out.push(format!("builder::{builder}::{method}: removed")),
                    Some(other) if other != ty => out.push(format!(
                        "builder::{builder}::{method}: changed from {} to {}",
                        shorten(ty),
                        shorten(other)
                    )),
                    Some(_) => {}
                }
            }
        }
        out.sort();
        out
    }

    /// Whether the code has a type of this name.
    pub fn has_type(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }
}

/// Types a signature mentions that are not named component schemas (typify's inline types,
/// e.g. the newtype of a constrained string property) must be the same on both sides.
fn same_inline_types(old: &RustApi, new: &RustApi, ty: &str, named: &BTreeSet<String>) -> bool {
    let mut seen = BTreeSet::new();
    same_inline_types_inner(old, new, ty, named, &mut seen)
}

fn same_inline_types_inner(
    old: &RustApi,
    new: &RustApi,
    ty: &str,
    named: &BTreeSet<String>,
    seen: &mut BTreeSet<String>,
) -> bool {
    for ident in identifiers(ty) {
        if named.contains(&ident) || !seen.insert(ident.clone()) {
            continue;
        }
        match (old.types.get(&ident), new.types.get(&ident)) {
            (Some(a), Some(b)) => {
                if !type_changes(&ident, a, b).is_empty() || !deps_same(old, new, a, named, seen) {
                    return false;
                }
            }
            (None, None) => {}
            _ => return false,
        }
    }
    true
}

fn same_inline_deps(old: &RustApi, new: &RustApi, def: &TypeDef, named: &BTreeSet<String>) -> bool {
    deps_same(old, new, def, named, &mut BTreeSet::new())
}

fn deps_same(
    old: &RustApi,
    new: &RustApi,
    def: &TypeDef,
    named: &BTreeSet<String>,
    seen: &mut BTreeSet<String>,
) -> bool {
    let texts: Vec<&String> = match def {
        TypeDef::Struct(fields, _) => fields.values().map(|(_, t)| t).collect(),
        TypeDef::Tuple(fields) => fields.iter().collect(),
        TypeDef::Enum(variants, _) => variants.values().collect(),
        TypeDef::Alias(t) => vec![t],
    };
    texts
        .into_iter()
        .all(|t| same_inline_types_inner(old, new, t, named, seen))
}

/// Capitalised identifiers of a type's text (`Option<SessionNickname>` → `SessionNickname`).
fn identifiers(ty: &str) -> Vec<String> {
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .map(str::to_string)
        .collect()
}

fn try_into_target(sig: &syn::Signature) -> Option<String> {
    let clause = sig.generics.where_clause.as_ref()?;
    for predicate in &clause.predicates {
        let syn::WherePredicate::Type(p) = predicate else {
            continue;
        };
        for bound in &p.bounds {
            let syn::TypeParamBound::Trait(t) = bound else {
                continue;
            };
            let last = t.path.segments.last()?;
            if last.ident == "TryInto"
                && let syn::PathArguments::AngleBracketed(args) = &last.arguments
                && let Some(syn::GenericArgument::Type(ty)) = args.args.first()
            {
                return Some(text(ty));
            }
        }
    }
    None
}

fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn serde_rename(attrs: &[syn::Attribute]) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let value: syn::LitStr = meta.value()?.parse()?;
                found = Some(value.value());
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    found
}

fn serde_flag(attrs: &[syn::Attribute], flag: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(flag) {
                found = true;
            } else if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            }
            Ok(())
        });
    }
    found
}

/// What awaiting `call()` gives on success: `T` of `impl Future<Output = crate::Result<T>>`.
fn call_output(ty: &syn::Type) -> Option<String> {
    let syn::Type::ImplTrait(imp) = ty else {
        return None;
    };
    imp.bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let future = t.path.segments.last().filter(|s| s.ident == "Future")?;
        let syn::PathArguments::AngleBracketed(args) = &future.arguments else {
            return None;
        };
        let output = args.args.iter().find_map(|arg| match arg {
            syn::GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(&assoc.ty),
            _ => None,
        })?;
        let syn::Type::Path(result) = output else {
            return None;
        };
        let result = result
            .path
            .segments
            .last()
            .filter(|s| s.ident == "Result")?;
        match &result.arguments {
            syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                Some(syn::GenericArgument::Type(success)) => Some(text(success)),
                _ => None,
            },
            _ => None,
        }
    })
}

fn text(ty: &syn::Type) -> String {
    compact(&ty.to_token_stream().to_string())
}

fn compact(tokens: &str) -> String {
    tokens.split_whitespace().collect()
}

/// A type as people write it: without the std/chrono/serde_json path prefixes.
pub fn shorten(ty: &str) -> String {
    let mut out = ty.to_string();
    for prefix in [
        "::std::option::",
        "::std::string::",
        "::std::vec::",
        "::std::collections::",
        "::std::num::",
        "::chrono::naive::",
        "::chrono::offset::",
        "::chrono::",
        "::uuid::",
        "::serde_json::",
        "super::",
        "types::",
    ] {
        out = out.replace(prefix, "");
    }
    out
}

/// Whether `attrs` hold `#[doc(hidden)]`.
fn doc_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("doc")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "hidden")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = r#"
        pub mod types {
            pub struct Session {
                #[serde(rename = "subjectEmail")]
                pub subject_email: ::std::string::String,
                #[serde(rename = "nickname", default, skip_serializing_if = "Option::is_none")]
                pub nickname: ::std::option::Option<SessionNickname>,
            }
            pub struct SessionNickname(::std::string::String);
            pub enum Status { #[serde(rename = "A")] A, #[serde(untagged)] Unrecognized(::std::string::String) }
        }
        pub mod builder {
            pub struct GetSessions<'a> { client: &'a super::Client }
            impl<'a> GetSessions<'a> {
                pub fn new(client: &'a super::Client) -> Self { todo!() }
                pub fn skip<V>(mut self, value: V) -> Self where V: std::convert::TryInto<i32> { self }
                #[doc(hidden)]
                pub async fn send(self) -> Result<ResponseValue<types::Session>, Error<()>> { todo!() }
                pub fn call(self) -> impl ::std::future::Future<Output = crate::Result<types::Session>> + Send { todo!() }
            }
        }
        impl Client {
            pub fn get_sessions(&self) -> builder::GetSessions<'_> { todo!() }
        }
    "#;

    fn named() -> BTreeSet<String> {
        ["Session", "Status"]
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn identical_code_has_no_incompatibility() {
        let api = RustApi::parse(OLD).unwrap();
        assert!(RustApi::incompatibilities(&api, &api).is_empty());
        assert_eq!(
            RustApi::item_breaks(&api, &api, "types::Session.subjectEmail", &named()),
            Some(false)
        );
    }

    #[test]
    fn field_types_variants_and_builder_methods_are_compared() {
        let old = RustApi::parse(OLD).unwrap();
        let new = RustApi::parse(
            &OLD.replace(
                "pub subject_email: ::std::string::String",
                "pub subject_email: f64",
            )
            .replace(
                "#[serde(rename = \"A\")] A,",
                "#[serde(rename = \"A\")] A, #[serde(rename = \"B\")] B,",
            )
            .replace("TryInto<i32>", "TryInto<i64>")
            .replace(
                "SessionNickname(::std::string::String)",
                "SessionNickname(i64)",
            ),
        )
        .unwrap();
        assert_eq!(
            RustApi::incompatibilities(&old, &new),
            vec![
                "builder::GetSessions::skip: changed from i32 to i64",
                "types::Session: field subject_email changed type from String to f64",
                "types::SessionNickname: definition changed",
                "types::Status: variant B added",
            ]
        );
        let breaks = |item| RustApi::item_breaks(&old, &new, item, &named());
        assert_eq!(breaks("types::Session.subjectEmail"), Some(true));
        // Same field text, but the inline newtype behind it changed.
        assert_eq!(breaks("types::Session.nickname"), Some(true));
        assert_eq!(breaks("builder::GetSessions::skip"), Some(true));
        assert_eq!(breaks("builder::GetSessions::take"), None);
        assert_eq!(breaks("Client::get_sessions"), Some(false));
        assert_eq!(breaks("types::Status"), Some(true));
    }

    #[test]
    fn additions_to_non_exhaustive_types_are_compatible_and_becoming_one_is_not() {
        let marked = OLD
            .replace(
                "pub struct Session {",
                "#[non_exhaustive] pub struct Session {",
            )
            .replace("pub enum Status", "#[non_exhaustive] pub enum Status");
        let plain = RustApi::parse(OLD).unwrap();
        let old = RustApi::parse(&marked).unwrap();
        let new = RustApi::parse(
            &marked
                .replace(
                    "pub subject_email: ::std::string::String,",
                    "pub subject_email: ::std::string::String,\n\
                     #[serde(rename = \"externalReference\")]\n\
                     pub external_reference: ::std::option::Option<::std::string::String>,",
                )
                .replace(
                    "#[serde(rename = \"A\")] A,",
                    "#[serde(rename = \"A\")] A, #[serde(rename = \"B\")] B,",
                ),
        )
        .unwrap();
        assert_eq!(RustApi::incompatibilities(&old, &new), Vec::<String>::new());
        let breaks = |item| RustApi::item_breaks(&old, &new, item, &named());
        assert_eq!(breaks("types::Session.externalReference"), Some(false));
        assert_eq!(breaks("types::Session"), Some(false));
        assert_eq!(breaks("types::Status"), Some(false));
        // Removals and type changes stay breaking.
        let removed = RustApi::parse(&marked.replace(
            "#[serde(rename = \"subjectEmail\")]\n                pub subject_email: ::std::string::String,",
            "",
        ))
        .unwrap();
        assert_eq!(
            RustApi::incompatibilities(&old, &removed),
            vec!["types::Session: field subject_email removed"]
        );
        assert_eq!(
            RustApi::item_breaks(&old, &removed, "types::Session.subjectEmail", &named()),
            Some(true)
        );
        // Marking a type is itself a break for code written against the unmarked one.
        assert_eq!(
            RustApi::incompatibilities(&plain, &old),
            vec![
                "types::Session: now #[non_exhaustive] (literals and exhaustive matches outside the crate stop compiling)",
                "types::Status: now #[non_exhaustive] (literals and exhaustive matches outside the crate stop compiling)",
            ]
        );
    }

    #[test]
    fn a_response_change_is_reported_on_call_not_the_hidden_send() {
        let old = RustApi::parse(OLD).unwrap();
        let new = RustApi::parse(&OLD.replace(
            "Result<types::Session>",
            "Result<::std::vec::Vec<types::Session>>",
        ))
        .unwrap();
        assert_eq!(
            RustApi::incompatibilities(&old, &new),
            vec!["builder::GetSessions::call: changed from Session to Vec<Session>"]
        );
        let breaks = |item| RustApi::item_breaks(&old, &new, item, &named());
        assert_eq!(breaks("builder::GetSessions::call"), Some(true));
        assert_eq!(breaks("builder::GetSessions::send"), None);
    }

    #[test]
    fn additions_of_methods_are_compatible_and_removals_are_not() {
        let old = RustApi::parse(OLD).unwrap();
        let new = RustApi::parse(&OLD.replace(
            "pub fn get_sessions(&self)",
            "pub fn get_more(&self) -> builder::GetSessions<'_> { todo!() }\n pub fn list_sessions(&self)",
        ))
        .unwrap();
        assert_eq!(
            RustApi::item_breaks(&old, &new, "Client::get_more", &named()),
            Some(false)
        );
        assert_eq!(
            RustApi::item_breaks(&old, &new, "Client::get_sessions", &named()),
            Some(true)
        );
        assert_eq!(
            RustApi::incompatibilities(&old, &new),
            vec!["Client::get_sessions: removed"]
        );
    }
}
