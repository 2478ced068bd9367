//! The generated-code half: each marked union enum gets `Unrecognized` and a `Deserialize` that
//! decides by discriminator or by best fit (see the module docs of `unions`).

use heck::ToUpperCamelCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use super::UNION_MARK;
use crate::unknown_members::{KeepsUnknown, module_items, remove_derive, wire_fields};

/// Rewrites the enum of every union component of `effective` marked by `prepare`. `keeps`
/// lists the structs that keep unknown members (from `crate::unknown_members`). Returns
/// warnings for unions whose generated enum has another shape than expected (left as typify
/// wrote them).
pub fn decode_unions(file: &mut syn::File, effective: &Value, keeps: &KeepsUnknown) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(schemas) = effective
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    else {
        return warnings;
    };
    let Some(types) = module_items(&mut file.items, "types") else {
        return warnings;
    };
    // The members each struct of `types` knows, for the best fit of untagged unions.
    let structs: std::collections::BTreeMap<String, Option<Vec<String>>> = types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => {
                let fields = wire_fields(&s.fields);
                let known = if fields.iter().any(|f| f.flattened)
                    && !keeps.contains_key(&s.ident.to_string())
                {
                    None
                } else {
                    Some(
                        fields
                            .iter()
                            .filter(|f| !f.flattened)
                            .flat_map(|f| f.names.clone())
                            .collect(),
                    )
                };
                Some((s.ident.to_string(), known))
            }
            _ => None,
        })
        .collect();

    let mut impls = Vec::new();
    for (component, schema) in schemas {
        let Some(mark) = schema.get(UNION_MARK) else {
            continue;
        };
        let variants = schema
            .get("oneOf")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let rust_name = component.to_upper_camel_case();
        let pointer = format!(
            "/components/schemas/{}",
            crate::document::pointer::escape(component)
        );
        let Some(item) = types.iter_mut().find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == rust_name => Some(e),
            _ => None,
        }) else {
            warnings.push(format!(
                "{pointer}: no generated enum `types::{rust_name}` for this polymorphic member; \
                 it decodes as typify wrote it"
            ));
            continue;
        };
        let newtypes: Option<Vec<(syn::Ident, syn::Type)>> = item
            .variants
            .iter()
            .map(|v| match &v.fields {
                syn::Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                    Some((v.ident.clone(), f.unnamed[0].ty.clone()))
                }
                _ => None,
            })
            .collect();
        let untagged = item.attrs.iter().any(|a| {
            a.path().is_ident("serde")
                && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "untagged")
        });
        let Some(newtypes) = newtypes.filter(|n| untagged && n.len() == variants) else {
            warnings.push(format!(
                "{pointer}: typify generated `types::{rust_name}` with another shape than one \
                 untagged variant per schema; it decodes as typify wrote it"
            ));
            continue;
        };
        let catch_all = ["Unrecognized", "UnrecognizedVariant", "UnknownVariant"]
            .into_iter()
            .find(|c| !newtypes.iter().any(|(ident, _)| ident == c))
            .map(|c| format_ident!("{c}"))
            .unwrap_or_else(|| format_ident!("UnrecognizedUnionVariant"));
        let doc = match mark.get("discriminator") {
            Some(_) => {
                " A value whose discriminator names no variant this client knows (or that has \
                 none), kept whole as the service sent it."
            }
            None => {
                " A value that no variant decodes without losing a member, kept whole as the \
                 service sent it."
            }
        };
        item.variants.push(syn::parse_quote! {
            #[doc = #doc]
            #catch_all(crate::json::UnknownVariant)
        });
        remove_derive(&mut item.attrs, "Deserialize");
        let body = match mark.get("discriminator") {
            Some(discriminator) => tagged_body(discriminator, &newtypes, &catch_all),
            None => untagged_body(&newtypes, &catch_all, &structs, keeps),
        };
        let name = &item.ident;
        impls.push(syn::parse_quote! {
            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D>(deserializer: D) -> ::std::result::Result<Self, D::Error>
                where
                    D: ::serde::Deserializer<'de>,
                {
                    let raw = <crate::json::RawJson as ::serde::Deserialize>::deserialize(deserializer)?;
                    #body
                }
            }
        });
    }
    types.extend(impls);
    warnings
}

fn tagged_body(
    discriminator: &Value,
    variants: &[(syn::Ident, syn::Type)],
    catch_all: &syn::Ident,
) -> TokenStream {
    let property = discriminator
        .get("propertyName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arms = discriminator
        .get("values")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(value, index)| {
            let (ident, ty) = variants.get(usize::try_from(index.as_u64()?).ok()?)?;
            Some(quote! {
                Some(#value) => {
                    return crate::json::decode::variant::<#ty, D::Error>(&raw, #property)
                        .map(Self::#ident);
                }
            })
        });
    quote! {
        let discriminator = crate::json::decode::discriminator(&raw, #property);
        match discriminator.as_deref() {
            #(#arms)*
            _ => {}
        }
        Ok(Self::#catch_all(crate::json::UnknownVariant::new(discriminator, raw)))
    }
}

fn untagged_body(
    variants: &[(syn::Ident, syn::Type)],
    catch_all: &syn::Ident,
    structs: &std::collections::BTreeMap<String, Option<Vec<String>>>,
    keeps: &KeepsUnknown,
) -> TokenStream {
    let candidates = variants.iter().enumerate().map(|(index, (ident, ty))| {
        let struct_name = match ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let known = struct_name
            .as_ref()
            .and_then(|n| structs.get(n))
            .cloned()
            .flatten();
        let keeps_unknown = struct_name.as_ref().is_some_and(|n| keeps.contains_key(n));
        let is_known = match known {
            Some(names) => {
                let function = format_ident!("known_{index}");
                let matcher = if names.is_empty() {
                    quote!(false)
                } else {
                    quote!(matches!(name, #(#names)|*))
                };
                quote! {{
                    fn #function(name: &str) -> bool {
                        #matcher
                    }
                    Some(#function as fn(&str) -> bool)
                }}
            }
            None => quote!(None),
        };
        quote! {
            raw.decode::<#ty>().ok().and_then(|value| {
                let fit = crate::json::decode::fit(&raw, #is_known, #keeps_unknown)?;
                Some((fit, Self::#ident(value)))
            })
        }
    });
    quote! {
        let candidates = [#(#candidates),*];
        Ok(crate::json::decode::best_fit(raw, candidates, Self::#catch_all))
    }
}
