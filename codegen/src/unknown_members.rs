//! Unknown members cost their bytes: the generated types keep them as JSON text, decoded
//! without serde's flatten buffer.
//!
//! typify keeps the members of `additionalProperties: {}` schemas that the description does not
//! list in `#[serde(flatten)] extra: serde_json::Map<String, Value>`. serde decodes a struct with
//! a flattened member by first copying the whole object into its own buffer (`Content`), then
//! building the known members and the `Value`s from it: an answer with one large unknown member
//! (`"pad":[0,0,...]`) took 70 times its size (issue 27). This pass changes, for every such
//! struct of `types`:
//!
//! - the member's type, to `crate::json::UnknownMembers`: every unknown member as received, in
//!   one JSON object text (its size in bytes, whatever its shape), readable by name and
//!   serialized back after the known members (`#[serde(flatten)]` stays for `Serialize`, which
//!   streams);
//! - the derived `Deserialize`, to one of its own: a private struct of the known members
//!   (the same fields, serde attributes and defaults) derives `Deserialize` without the
//!   flattened member, and `crate::json::decode::with_unknown_members` feeds it the object's
//!   known members where they stand, appending every other member's text to the
//!   `UnknownMembers`. Nothing is buffered.
//! - the builder's member and setter, to the new type (`Map<String, Value>` converts into it,
//!   so `.extra(map)` still builds).
//!
//! A struct with another flattened member (typify's `anyOf` of objects) is left as typify wrote
//! it, with a warning: its known members cannot be listed.

use std::collections::BTreeMap;

use quote::{format_ident, quote};

/// The type typify gives a flattened map of unknown members.
const TYPIFY_MAP: &str =
    ":: serde_json :: Map < :: std :: string :: String , :: serde_json :: Value >";

/// What one struct field is called on the wire.
#[derive(Debug, Clone)]
pub(crate) struct WireField {
    pub ident: syn::Ident,
    /// The member name, and any aliases.
    pub names: Vec<String>,
    pub flattened: bool,
}

/// The fields of a struct, as the wire sees them.
pub(crate) fn wire_fields(fields: &syn::Fields) -> Vec<WireField> {
    fields
        .iter()
        .filter_map(|field| {
            let ident = field.ident.clone()?;
            let mut name = ident.to_string().trim_start_matches("r#").to_string();
            let mut aliases = Vec::new();
            let mut flattened = false;
            for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
                let _ = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("rename") {
                        let lit: syn::LitStr = meta.value()?.parse()?;
                        name = lit.value();
                    } else if meta.path.is_ident("alias") {
                        let lit: syn::LitStr = meta.value()?.parse()?;
                        aliases.push(lit.value());
                    } else if meta.path.is_ident("flatten") {
                        flattened = true;
                    } else if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    }
                    Ok(())
                });
            }
            let mut names = vec![name];
            names.extend(aliases);
            Some(WireField {
                ident,
                names,
                flattened,
            })
        })
        .collect()
}

/// The structs of `types` that keep unknown members after this pass: name → (the known member
/// names, the field holding the unknown ones).
pub(crate) type KeepsUnknown = BTreeMap<String, Vec<String>>;

/// Rewrites every struct of `types` with a flattened map of unknown members (see the module
/// docs). Returns the structs rewritten with their known member names, and warnings.
pub fn keep_unknown_members_as_text(file: &mut syn::File) -> (KeepsUnknown, Vec<String>) {
    let mut rewritten = KeepsUnknown::new();
    let mut warnings = Vec::new();
    let Some(types) = module_items(&mut file.items, "types") else {
        return (rewritten, warnings);
    };
    let mut impls: Vec<syn::Item> = Vec::new();
    let mut builder_fields: BTreeMap<String, syn::Ident> = BTreeMap::new();
    for item in types.iter_mut() {
        let syn::Item::Struct(s) = item else { continue };
        let fields = wire_fields(&s.fields);
        let maps: Vec<&WireField> = fields
            .iter()
            .filter(|f| f.flattened && is_typify_map(&s.fields, &f.ident))
            .collect();
        let [map] = maps.as_slice() else { continue };
        if fields.iter().filter(|f| f.flattened).count() > 1 {
            warnings.push(format!(
                "types::{}: another flattened member next to the map of unknown members; its \
                 unknown members stay a `serde_json::Map` decoded through serde's buffer",
                s.ident
            ));
            continue;
        }
        let extra = map.ident.clone();
        let known: Vec<&WireField> = fields.iter().filter(|f| !f.flattened).collect();
        let names: Vec<String> = known.iter().flat_map(|f| f.names.clone()).collect();
        for field in s.fields.iter_mut() {
            if field.ident.as_ref() == Some(&extra) {
                field.ty = syn::parse_quote!(crate::json::UnknownMembers);
            }
        }
        remove_derive(&mut s.attrs, "Deserialize");
        impls.push(deserialize_impl(s, &extra, &names));
        builder_fields.insert(s.ident.to_string(), extra);
        rewritten.insert(s.ident.to_string(), names);
    }
    types.extend(impls);
    if let Some(builders) = module_items(types, "builder") {
        retype_builders(builders, &builder_fields);
    }
    (rewritten, warnings)
}

fn deserialize_impl(s: &syn::ItemStruct, extra: &syn::Ident, names: &[String]) -> syn::Item {
    let name = &s.ident;
    let container: Vec<&syn::Attribute> = s
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .collect();
    let known_fields: Vec<syn::Field> = s
        .fields
        .iter()
        .filter(|f| f.ident.as_ref() != Some(extra))
        .map(|f| {
            let mut f = f.clone();
            f.attrs.retain(|a| a.path().is_ident("serde"));
            f.vis = syn::Visibility::Inherited;
            f
        })
        .collect();
    let idents: Vec<&syn::Ident> = known_fields
        .iter()
        .filter_map(|f| f.ident.as_ref())
        .collect();
    let known_struct = format_ident!("Known");
    let matcher = if names.is_empty() {
        quote!(false)
    } else {
        quote!(matches!(name, #(#names)|*))
    };
    syn::parse_quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
            where
                D: ::serde::Deserializer<'de>,
            {
                #[derive(::serde::Deserialize)]
                #(#container)*
                struct #known_struct {
                    #(#known_fields,)*
                }
                fn is_known(name: &str) -> bool {
                    #matcher
                }
                let (known, #extra) = crate::json::decode::with_unknown_members::<D, #known_struct>(
                    deserializer,
                    is_known,
                )?;
                Ok(Self {
                    #(#idents: known.#idents,)*
                    #extra,
                })
            }
        }
    }
}

/// Gives the builders of the rewritten structs (name → member) the new member type.
fn retype_builders(builders: &mut [syn::Item], rewritten: &BTreeMap<String, syn::Ident>) {
    struct Retype;
    impl syn::visit_mut::VisitMut for Retype {
        fn visit_type_mut(&mut self, ty: &mut syn::Type) {
            if is_map_type(ty) {
                *ty = syn::parse_quote!(crate::json::UnknownMembers);
            } else {
                syn::visit_mut::visit_type_mut(self, ty);
            }
        }
    }
    for item in builders.iter_mut() {
        match item {
            syn::Item::Struct(s) if rewritten.contains_key(&s.ident.to_string()) => {
                let extra = &rewritten[&s.ident.to_string()];
                for field in s.fields.iter_mut() {
                    if field.ident.as_ref() == Some(extra) {
                        syn::visit_mut::visit_type_mut(&mut Retype, &mut field.ty);
                    }
                }
            }
            syn::Item::Impl(imp) if imp.trait_.is_none() => {
                let Some(extra) = type_name(&imp.self_ty).and_then(|n| rewritten.get(&n)) else {
                    continue;
                };
                for impl_item in &mut imp.items {
                    if let syn::ImplItem::Fn(f) = impl_item
                        && f.sig.ident == *extra
                    {
                        syn::visit_mut::visit_signature_mut(&mut Retype, &mut f.sig);
                    }
                }
            }
            _ => {}
        }
    }
}

fn is_typify_map(fields: &syn::Fields, ident: &syn::Ident) -> bool {
    fields
        .iter()
        .any(|f| f.ident.as_ref() == Some(ident) && is_map_type(&f.ty))
}

fn is_map_type(ty: &syn::Type) -> bool {
    quote!(#ty).to_string() == TYPIFY_MAP
}

fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Removes `name` from the `#[derive(...)]` lists of `attrs`.
pub(crate) fn remove_derive(attrs: &mut [syn::Attribute], name: &str) {
    for attr in attrs.iter_mut() {
        if attr.path().is_ident("derive")
            && let syn::Meta::List(list) = &mut attr.meta
            && let Ok(paths) = list.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
        {
            let kept = paths
                .into_iter()
                .filter(|p| p.segments.last().is_none_or(|s| s.ident != name));
            list.tokens = quote!(#(#kept),*);
        }
    }
}

/// The items of the inline module `name` among `items`.
pub(crate) fn module_items<'a>(
    items: &'a mut [syn::Item],
    name: &str,
) -> Option<&'a mut Vec<syn::Item>> {
    items.iter_mut().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => m.content.as_mut().map(|(_, items)| items),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_struct_with_unknown_members_decodes_them_as_text_without_a_flatten_buffer() {
        let mut file: syn::File = syn::parse_quote! {
            pub mod types {
                #[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
                #[non_exhaustive]
                pub struct Item {
                    #[serde(rename = "sourceId", default, skip_serializing_if = "::std::option::Option::is_none")]
                    pub source_id: ::std::option::Option<::std::string::String>,
                    pub id: i64,
                    #[serde(flatten)]
                    pub extra: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
                }
                #[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)]
                pub struct Plain { pub id: i64 }
                pub mod builder {
                    pub struct Item {
                        extra: ::std::result::Result<::serde_json::Map<::std::string::String, ::serde_json::Value>, ::std::string::String>,
                    }
                    impl Item {
                        pub fn extra<T>(mut self, value: T) -> Self
                        where
                            T: ::std::convert::TryInto<::serde_json::Map<::std::string::String, ::serde_json::Value>>,
                        {
                            self
                        }
                    }
                }
            }
        };
        let (rewritten, warnings) = keep_unknown_members_as_text(&mut file);
        assert!(warnings.is_empty());
        assert_eq!(rewritten["Item"], ["sourceId", "id"]);
        let text = prettyplease::unparse(&file);
        // Compared without whitespace: prettyplease decides the line breaks.
        let flat: String = text.split_whitespace().collect();
        let has = |needle: &str| flat.contains(&needle.split_whitespace().collect::<String>());
        assert!(
            has(
                "#[derive(::serde::Serialize, Clone, Debug, PartialEq)] #[non_exhaustive] pub struct Item"
            ),
            "{text}"
        );
        assert!(has("pub extra: crate::json::UnknownMembers,"), "{text}");
        assert!(has(r#"matches!(name, "sourceId" | "id")"#), "{text}");
        assert!(
            has(r#"struct Known { #[serde(rename = "sourceId", default,"#),
            "the known members keep their serde attributes: {text}"
        );
        assert!(
            has("extra: ::std::result::Result<crate::json::UnknownMembers,"),
            "{text}"
        );
        assert!(
            has("T: ::std::convert::TryInto<crate::json::UnknownMembers>"),
            "{text}"
        );
        assert!(
            has(
                "#[derive(::serde::Deserialize, ::serde::Serialize, Clone, Debug, PartialEq)] pub struct Plain"
            ),
            "{text}"
        );
    }
}
