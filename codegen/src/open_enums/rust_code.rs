//! The generated-code half: each enum the plan marks open gets its catch-all variant and
//! infallible conversions; every enum gets its list of values.

use quote::{format_ident, quote};

use super::{OpenEnumError, OpenEnumPlan, rust_type_name};

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
    use std::collections::BTreeSet;

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
