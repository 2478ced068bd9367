//! Additive for the wire is additive for Rust: the generated types are `#[non_exhaustive]`.
//!
//! The vendor adds response members, optional request members and enum values in ordinary
//! releases. typify generates plain structs with public fields and plain enums, so code outside
//! the client crate may write a struct literal, an exhaustive struct pattern or an exhaustive
//! `match`, and each of those stops compiling when the vendor adds something: every additive
//! vendor release would be a breaking crate release for every user. aws-sdk-rust (smithy-rs)
//! answers this the way Rust's semver rules intend, and this pass does the same:
//!
//! - every public struct of `types` with named public fields gets `#[non_exhaustive]`: outside
//!   the crate it is read through its fields, matched with `..`, and built with
//!   `types::X::builder()` (typify's builder: an optional member it does not set stays `None`, so
//!   a new optional member changes no caller), or through a request builder's `body_map`;
//! - every public enum of `types` gets `#[non_exhaustive]`: a `match` outside the crate needs a
//!   wildcard arm, so a new value is not a break. This covers the open response enums too: the
//!   value a release adds stops arriving as `Unrecognized("X")` and becomes a variant; code
//!   should read `as_str()` rather than match on the catch-all's text;
//! - tuple structs (typify's validating newtypes, whose field is private) and unit structs get
//!   nothing: nobody outside the crate can construct them with a literal, and a newtype changes
//!   only when its schema's type does, which is a break however it is generated;
//! - `types::builder` and `types::error` need no attribute: their structs have private fields.
//!
//! Building is then the one way to make a value, so the builders are made to carry it:
//!
//! - every `types::builder::X` gains `build()`, returning `Result<types::X, ConversionError>`
//!   (smithy-rs's spelling; typify offers only `TryFrom`, whose target type cannot be inferred
//!   inside `vec![...]` or `Some(...)`); a builder with a member named `build` keeps `try_from`;
//! - a member that may be absent or null has a default, as an optional one already has: a
//!   required but nullable member (`Option<T>`, sent as `null` when unset) and the flattened
//!   map of unknown members (typify's `extra`, for `additionalProperties: {}`, which is no member
//!   of the description) start as `None` and empty instead of "no value supplied". So a
//!   release that adds such a member, or gives a schema `additionalProperties`, makes no existing
//!   builder fail. A member that is required and not nullable has no value to default to: a
//!   builder without it fails in `build()` (or before the request is sent), naming it.
//!
//! Inside the client crate the attribute changes nothing (progenitor's and typify's own code and
//! the hand-written modules still construct and match freely). The change report reads the
//! attribute back (`diff/rust_api.rs`): a field or variant added to a `#[non_exhaustive]` type is
//! compatible, and a type that becomes `#[non_exhaustive]` is itself a break.

use std::collections::BTreeMap;

/// The pass found no `types` module to make forward compatible.
#[derive(Debug, thiserror::Error)]
#[error(
    "generated code has no `types` module for codegen/src/forward_compatible.rs to mark \
     #[non_exhaustive]; this is a generator bug, please report it"
)]
pub struct ForwardCompatibleError;

/// Marks the structs and enums of the generated `types` module `#[non_exhaustive]` (see the
/// [module documentation](self)).
pub fn non_exhaustive_types(file: &mut syn::File) -> Result<(), ForwardCompatibleError> {
    let types = file
        .items
        .iter_mut()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "types" => m.content.as_mut().map(|(_, items)| items),
            _ => None,
        })
        .ok_or(ForwardCompatibleError)?;
    for item in types.iter_mut() {
        let attrs = match item {
            syn::Item::Struct(s) if is_public(&s.vis) && has_public_named_fields(&s.fields) => {
                &mut s.attrs
            }
            syn::Item::Enum(e) if is_public(&e.vis) => &mut e.attrs,
            _ => continue,
        };
        if !is_non_exhaustive(attrs) {
            attrs.push(syn::parse_quote!(#[non_exhaustive]));
        }
    }
    let defaultable: BTreeMap<String, Vec<syn::Ident>> = types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some((s.ident.to_string(), defaultable_fields(&s.fields))),
            _ => None,
        })
        .filter(|(_, fields)| !fields.is_empty())
        .collect();
    let builders = types.iter_mut().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == "builder" => m.content.as_mut().map(|(_, items)| items),
        _ => None,
    });
    if let Some(builders) = builders {
        complete_builders(builders, &defaultable);
    }
    Ok(())
}

/// Gives every builder `build()`, and defaults for the members of `defaultable` (struct name →
/// fields).
fn complete_builders(
    builders: &mut Vec<syn::Item>,
    defaultable: &BTreeMap<String, Vec<syn::Ident>>,
) {
    let mut build_methods = Vec::new();
    for item in builders.iter_mut() {
        match item {
            syn::Item::Struct(s) if !has_member(&s.fields, "build") => {
                let name = &s.ident;
                let doc = format!(
                    " Checks what was set and makes the [`{name}`](super::{name}): fails with \
                     the first member the description requires that is missing or invalid."
                );
                build_methods.push(syn::parse_quote! {
                    impl #name {
                        #[doc = #doc]
                        pub fn build(
                            self,
                        ) -> ::std::result::Result<super::#name, super::error::ConversionError> {
                            ::std::convert::TryFrom::try_from(self)
                        }
                    }
                });
            }
            syn::Item::Impl(imp) if is_default_impl(imp) => {
                let Some(fields) = type_name(&imp.self_ty).and_then(|n| defaultable.get(&n)) else {
                    continue;
                };
                for impl_item in &mut imp.items {
                    let syn::ImplItem::Fn(f) = impl_item else {
                        continue;
                    };
                    let Some(syn::Stmt::Expr(syn::Expr::Struct(init), None)) =
                        f.block.stmts.last_mut()
                    else {
                        continue;
                    };
                    for field in init.fields.iter_mut() {
                        if let syn::Member::Named(ident) = &field.member
                            && fields.contains(ident)
                        {
                            field.expr = syn::parse_quote!(Ok(Default::default()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    builders.extend(build_methods);
}

fn is_default_impl(imp: &syn::ItemImpl) -> bool {
    imp.trait_
        .as_ref()
        .and_then(|(path, _)| path.segments.last())
        .is_some_and(|s| s.ident == "Default")
}

fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn has_member(fields: &syn::Fields, name: &str) -> bool {
    fields
        .iter()
        .any(|f| f.ident.as_ref().is_some_and(|i| i == name))
}

/// The fields of a struct that may be left unset: `Option<T>` (typify's type for a member that
/// is optional or nullable) and `#[serde(flatten)]` (typify's map of unknown members).
fn defaultable_fields(fields: &syn::Fields) -> Vec<syn::Ident> {
    fields
        .iter()
        .filter(|f| {
            let option = matches!(&f.ty, syn::Type::Path(p)
                if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
            let flattened = f.attrs.iter().any(|a| {
                a.path().is_ident("serde")
                    && a.parse_args::<syn::Ident>()
                        .is_ok_and(|ident| ident == "flatten")
            });
            option || flattened
        })
        .filter_map(|f| f.ident.clone())
        .collect()
}

/// Whether `attrs` hold `#[non_exhaustive]`.
pub fn is_non_exhaustive(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().is_ident("non_exhaustive"))
}

fn is_public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn has_public_named_fields(fields: &syn::Fields) -> bool {
    matches!(fields, syn::Fields::Named(named) if named.named.iter().any(|f| is_public(&f.vis)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_with_public_fields_and_enums_become_non_exhaustive_newtypes_do_not() {
        let mut file: syn::File = syn::parse_quote! {
            pub mod types {
                #[derive(Clone, Debug)]
                pub struct Session {
                    pub id: u32,
                    pub nickname: ::std::option::Option<String>,
                    #[serde(flatten)]
                    pub extra: Map,
                }
                pub struct Email(::std::string::String);
                pub struct Private { id: u32 }
                pub enum Status { A, B }
                #[non_exhaustive]
                pub enum Already { A }
                pub mod builder {
                    pub struct Session {
                        id: Result<u32, String>,
                        nickname: Result<Option<String>, String>,
                        extra: Result<Map, String>,
                    }
                    impl ::std::default::Default for Session {
                        fn default() -> Self {
                            Self {
                                id: Err("no value supplied for id".to_string()),
                                nickname: Err("no value supplied for nickname".to_string()),
                                extra: Err("no value supplied for extra".to_string()),
                            }
                        }
                    }
                }
            }
            pub struct Client { pub baseurl: String }
        };
        non_exhaustive_types(&mut file).unwrap();
        let text = prettyplease::unparse(&file);
        assert!(
            text.contains(
                "#[derive(Clone, Debug)]\n    #[non_exhaustive]\n    pub struct Session {"
            ),
            "{text}"
        );
        assert!(
            text.contains("#[non_exhaustive]\n    pub enum Status"),
            "{text}"
        );
        assert_eq!(text.matches("#[non_exhaustive]").count(), 3, "{text}");
        assert!(
            text.contains("\n    pub struct Email(::std::string::String);"),
            "{text}"
        );
        assert!(text.contains("\n    pub struct Private {"), "{text}");
        assert!(text.contains("\npub struct Client {"), "{text}");
        assert!(
            text.contains(
                "pub fn build(\n                self,\n            ) -> ::std::result::Result<super::Session, super::error::ConversionError>"
            ),
            "{text}"
        );
        assert!(
            text.contains("id: Err(\"no value supplied for id\".to_string()),"),
            "a required member stays required: {text}"
        );
        assert!(text.contains("extra: Ok(Default::default()),"), "{text}");
    }

    #[test]
    fn code_without_types_is_a_generator_bug() {
        let mut file: syn::File = syn::parse_quote! { pub mod builder {} };
        assert!(
            non_exhaustive_types(&mut file)
                .unwrap_err()
                .to_string()
                .contains("no `types` module")
        );
    }
}
