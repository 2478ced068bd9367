//! One way to call an operation: `call()`, which returns the client's own error.
//!
//! progenitor gives every operation's builder a `send()` that returns progenitor's
//! `Error<ProblemDetails>`, in which the client's runtime can only carry its typed error inside a
//! synthesized `UnexpectedResponse`, and documents every `Client` method with an example that
//! calls `send()`. A user who follows the documentation, or an IDE's completion, would get that
//! error type and lose the operation's name, the decode path and the problem details.
//!
//! This pass makes the documented path the only natural one:
//!
//! - every builder gains an inherent `call()`, returning `crate::Result<Output>` (the
//!   `Operation::call` of the client crate, so no trait import is needed), and, the same way,
//!   `call_with_response()` (the body with the final status, headers and attempts) and
//!   `options(CallOptions)` (the call's own deadline, retry policy and headers);
//! - every builder's `send()` is `#[doc(hidden)]`: it stays callable, for the `Operation` trait
//!   and code that wants progenitor's raw `ResponseValue`, but neither rustdoc nor rust-analyzer's
//!   completion offers it to users of the crate;
//! - every `Client` method's example calls `call()` (`download()` for a byte stream), with `?`
//!   and a variable named after what it holds;
//! - progenitor's `Error`, which the generated module re-exports for its `send()`s, is
//!   `#[doc(hidden)]`: the crate root's `Error` is the client's own (it shadows the glob
//!   re-export of the generated module), but rustdoc would document progenitor's beside it, as if
//!   a call could return either.
//! - progenitor's `Client::new` and `Client::new_with_client`, which take the runtime's state
//!   (`ClientState`, plumbing of the generated code), are `#[doc(hidden)]`: `Client::builder()`
//!   is the way to make a client.

use std::collections::BTreeMap;

use heck::ToSnakeCase;
use quote::quote;

/// The pass could not understand progenitor's builders or their examples.
#[derive(Debug, thiserror::Error)]
#[error(
    "progenitor's builders or doc examples no longer have the shape codegen/src/call_methods.rs \
     rewrites ({0}); update that pass for the new progenitor version"
)]
pub struct CallMethodsError(String);

/// Gives each builder of `outputs` (builder name → success type, as in its `send()`) a `call()`,
/// hides its `send()`, and rewrites the `Client` method examples (see the
/// [module documentation](self)).
pub fn one_way_to_call(
    file: &mut syn::File,
    outputs: &BTreeMap<String, syn::Type>,
) -> Result<(), CallMethodsError> {
    let mut builders_done = Vec::new();
    let mut examples_done = Vec::new();
    for item in &mut file.items {
        match item {
            syn::Item::Mod(module) if module.ident == "builder" => {
                let Some((_, items)) = module.content.as_mut() else {
                    continue;
                };
                for item in items {
                    if let syn::Item::Impl(imp) = item
                        && let Some(name) = builder_of(imp, outputs)
                    {
                        add_call(imp, &outputs[&name])
                            .map_err(|why| CallMethodsError(format!("builder `{name}`: {why}")))?;
                        builders_done.push(name);
                    }
                }
            }
            syn::Item::Impl(imp) if imp.trait_.is_none() && type_name(&imp.self_ty) == "Client" => {
                for impl_item in &mut imp.items {
                    let syn::ImplItem::Fn(method) = impl_item else {
                        continue;
                    };
                    if RAW_CONSTRUCTORS.contains(&method.sig.ident.to_string().as_str()) {
                        method.attrs.push(syn::parse_quote!(#[doc(hidden)]));
                        continue;
                    }
                    let Some(builder) = returned_builder(&method.sig) else {
                        continue;
                    };
                    let Some(output) = outputs.get(&builder) else {
                        continue;
                    };
                    let method_name = method.sig.ident.to_string();
                    rewrite_example(&mut method.attrs, &method_name, output).map_err(|why| {
                        CallMethodsError(format!("the example of `Client::{method_name}`: {why}"))
                    })?;
                    examples_done.push(builder);
                }
            }
            _ => {}
        }
    }
    hide_progenitor_error(&mut file.items);
    for (what, done) in [("builder", &builders_done), ("example", &examples_done)] {
        if let Some(missing) = outputs.keys().find(|name| !done.contains(name)) {
            return Err(CallMethodsError(format!(
                "no {what} found for the operation builder `{missing}`"
            )));
        }
    }
    Ok(())
}

/// Takes `Error` out of progenitor's `pub use progenitor_client::{..}` and re-exports it alone,
/// `#[doc(hidden)]` (see the [module documentation](self)). Nothing to do when progenitor
/// re-exports no `Error`.
fn hide_progenitor_error(items: &mut Vec<syn::Item>) {
    let mut found = None;
    for (at, item) in items.iter_mut().enumerate() {
        let syn::Item::Use(used) = item else { continue };
        let syn::UseTree::Path(path) = &mut used.tree else {
            continue;
        };
        if path.ident != "progenitor_client" || !matches!(used.vis, syn::Visibility::Public(_)) {
            continue;
        }
        let syn::UseTree::Group(group) = &mut *path.tree else {
            continue;
        };
        let before = group.items.len();
        group.items = std::mem::take(&mut group.items)
            .into_iter()
            .filter(|tree| !matches!(tree, syn::UseTree::Name(n) if n.ident == "Error"))
            .collect();
        if group.items.len() < before {
            found = Some(at);
            break;
        }
    }
    if let Some(at) = found {
        items.insert(
            at + 1,
            syn::parse_quote! {
                #[doc(hidden)]
                #[allow(unused_imports)]
                pub use progenitor_client::Error;
            },
        );
    }
}
/// progenitor's constructors of `Client`, which take the runtime's state.
const RAW_CONSTRUCTORS: &[&str] = &["new", "new_with_client"];

/// The last identifier of a path type (`super::Client` → `Client`), or "".
pub(crate) fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The name of an operation builder `imp` implements (an inherent impl with a `send`).
fn builder_of(imp: &syn::ItemImpl, outputs: &BTreeMap<String, syn::Type>) -> Option<String> {
    let name = type_name(&imp.self_ty);
    let has_send = imp
        .items
        .iter()
        .any(|item| matches!(item, syn::ImplItem::Fn(f) if f.sig.ident == "send"));
    (imp.trait_.is_none() && has_send && outputs.contains_key(&name)).then_some(name)
}

/// `X` of `fn op(&self) -> builder::X<'_>`.
fn returned_builder(sig: &syn::Signature) -> Option<String> {
    let syn::ReturnType::Type(_, ty) = &sig.output else {
        return None;
    };
    let syn::Type::Path(path) = &**ty else {
        return None;
    };
    let segments: Vec<_> = path.path.segments.iter().collect();
    match segments.as_slice() {
        [module, builder] if module.ident == "builder" => Some(builder.ident.to_string()),
        _ => None,
    }
}

/// Hides `send()` and adds `call()` after it.
fn add_call(imp: &mut syn::ItemImpl, output: &syn::Type) -> Result<(), String> {
    let position = imp
        .items
        .iter()
        .position(|item| matches!(item, syn::ImplItem::Fn(f) if f.sig.ident == "send"))
        .ok_or("no `send` method")?;
    for taken in ["call", "call_with_response", "options"] {
        if imp
            .items
            .iter()
            .any(|item| matches!(item, syn::ImplItem::Fn(f) if f.sig.ident == taken))
        {
            return Err(format!("it already has a `{taken}` method"));
        }
    }
    let syn::ImplItem::Fn(send) = &mut imp.items[position] else {
        unreachable!("found as a function above");
    };
    send.attrs.push(syn::parse_quote! {
        #[doc = "progenitor's own `send()`, for code that needs its `ResponseValue` (status and \
                 headers of a success). Errors are progenitor's: prefer `call()`, which returns \
                 [`crate::Error`] naming the operation."]
    });
    send.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    let methods: syn::ItemImpl = syn::parse2(quote! {
        impl Builder {
            /// Sends the request and returns the decoded success body, or a [`crate::Error`] that
            /// names the operation, whatever went wrong (see
            /// [`Operation::call`](crate::operation::Operation::call)).
            pub fn call(
                self,
            ) -> impl ::std::future::Future<Output = crate::Result<#output>> + Send {
                <Self as crate::operation::Operation>::call(self)
            }
            /// As `call()`, with the status and headers of the final attempt and the number of
            /// attempts (see
            /// [`Operation::call_with_response`](crate::operation::Operation::call_with_response)).
            pub fn call_with_response(
                self,
            ) -> impl ::std::future::Future<
                Output = crate::Result<crate::call_options::CallResponse<#output>>,
            > + Send {
                <Self as crate::operation::Operation>::call_with_response(self)
            }
            /// This call's own deadline, retry policy and extra headers, the last step before
            /// `call()` (see [`crate::call_options`]).
            pub fn options(
                self,
                options: crate::call_options::CallOptions,
            ) -> crate::call_options::WithOptions<Self> {
                <Self as crate::operation::Operation>::options(self, options)
            }
        }
    })
    .map_err(|e| format!("the `call` methods do not parse: {e}"))?;
    for (offset, method) in methods.items.into_iter().enumerate() {
        imp.items.insert(position + 1 + offset, method);
    }
    Ok(())
}

/// progenitor's example ends with these lines.
const SEND_TAIL: &str = "\n    .send()\n    .await;\n```";

/// Rewrites the ```` ```ignore ```` example at the end of a `Client` method's documentation.
fn rewrite_example(
    attrs: &mut [syn::Attribute],
    method: &str,
    output: &syn::Type,
) -> Result<(), String> {
    let opening = format!("```ignore\nlet response = client.{method}()");
    let mut rewritten = 0;
    for attr in attrs.iter_mut() {
        let syn::Meta::NameValue(doc) = &mut attr.meta else {
            continue;
        };
        if !doc.path.is_ident("doc") {
            continue;
        }
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &doc.value
        else {
            continue;
        };
        let value = text.value();
        let Some(start) = value.rfind(&opening) else {
            continue;
        };
        let Some(body) = value[start + opening.len()..].strip_suffix(SEND_TAIL) else {
            return Err("it does not end with `.send().await;`".into());
        };
        let (binding, finish) = match example_shape(output) {
            Example::Download => ("let download = ".to_string(), ".download()"),
            Example::Nothing => (String::new(), ".call()"),
            Example::Value(name) => (format!("let {name} = "), ".call()"),
        };
        let example = format!(
            "{}```ignore\n{binding}client.{method}(){body}\n    {finish}\n    .await?;\n```",
            &value[..start]
        );
        doc.value = syn::Expr::Lit(syn::ExprLit {
            attrs: Vec::new(),
            lit: syn::Lit::Str(syn::LitStr::new(&example, text.span())),
        });
        rewritten += 1;
    }
    match rewritten {
        1 => Ok(()),
        0 => Err(format!(
            "no example starting with `let response = client.{method}()`"
        )),
        n => Err(format!("{n} examples where one was expected")),
    }
}

/// What an example does with an operation's success type.
enum Example {
    /// A byte stream: `download()`, for the content type, file name and an atomic `save`.
    Download,
    /// `()`: nothing to bind.
    Nothing,
    /// A value, bound to a variable of this name.
    Value(String),
}

fn example_shape(output: &syn::Type) -> Example {
    match output {
        syn::Type::Tuple(tuple) if tuple.elems.is_empty() => Example::Nothing,
        syn::Type::Path(_) if type_name(output) == "ByteStream" => Example::Download,
        _ => Example::Value(variable_name(output)),
    }
}

/// A variable name for a value of `ty`: `types::Session` → `session`,
/// `types::ScoresResponse` → `scores`, `Vec<types::SourceFile>` → `source_files`.
fn variable_name(ty: &syn::Type) -> String {
    let syn::Type::Path(path) = ty else {
        return "value".into();
    };
    let Some(last) = path.path.segments.last() else {
        return "value".into();
    };
    if last.ident == "Vec"
        && let syn::PathArguments::AngleBracketed(args) = &last.arguments
        && let Some(syn::GenericArgument::Type(item)) = args.args.first()
    {
        return format!("{}s", variable_name(item));
    }
    let name = last.ident.to_string();
    let name = name
        .strip_suffix("Response")
        .filter(|n| !n.is_empty())
        .unwrap_or(&name);
    name.to_snake_case()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;

    /// A `Client` method and its builder as progenitor 0.15 generates them.
    fn generated(output: TokenStream) -> syn::File {
        let doc = "Returns one Session\n\nSends a `GET` request to `/v1/sessions/{sessionId}`\n\n\
                   ```ignore\nlet response = client.get_session()\n    .session_id(session_id)\n    \
                   .send()\n    .await;\n```";
        syn::parse2(quote! {
            impl Client {
                pub fn new(baseurl: &str, inner: crate::runtime::ClientState) -> Self {
                    todo!()
                }
                #[doc = #doc]
                pub fn get_session(&self) -> builder::GetSession<'_> {
                    builder::GetSession::new(self)
                }
            }
            pub mod builder {
                pub struct GetSession<'a> {
                    client: &'a super::Client,
                }
                impl<'a> GetSession<'a> {
                    ///Sends a `GET` request to `/v1/sessions/{sessionId}`
                    pub async fn send(self) -> Result<ResponseValue<#output>, Error<types::ProblemDetails>> {
                        todo!()
                    }
                }
            }
        })
        .unwrap()
    }

    fn rewritten(output: TokenStream) -> String {
        let mut file = generated(output.clone());
        let outputs = BTreeMap::from([("GetSession".to_string(), syn::parse2(output).unwrap())]);
        one_way_to_call(&mut file, &outputs).unwrap();
        prettyplease::unparse(&file)
    }

    #[test]
    fn builders_gain_call_and_hide_send() {
        let text = rewritten(quote!(types::Session));
        let compact: String = text.split_whitespace().collect();
        assert!(
            compact.contains(
                "pubfncall(self,)->impl::std::future::Future<Output=crate::Result<types::Session>>+Send{<Selfascrate::operation::Operation>::call(self)}"
            ),
            "{text}"
        );
        assert!(compact.contains("#[doc(hidden)]pubasyncfnsend"), "{text}");
        assert!(
            compact.contains(
                "pubfncall_with_response(self,)->impl::std::future::Future<Output=crate::Result<crate::call_options::CallResponse<types::Session>>,>+Send{<Selfascrate::operation::Operation>::call_with_response(self)}"
            ),
            "{text}"
        );
        assert!(
            compact.contains(
                "pubfnoptions(self,options:crate::call_options::CallOptions,)->crate::call_options::WithOptions<Self>{<Selfascrate::operation::Operation>::options(self,options)}"
            ),
            "{text}"
        );
        // The constructor taking the runtime's state is plumbing: hidden, still callable.
        assert!(
            compact.contains("#[doc(hidden)]pubfnnew(baseurl:&str"),
            "{text}"
        );
        assert!(
            !compact.contains("#[doc(hidden)]pubfnget_session"),
            "{text}"
        );
    }

    #[test]
    fn progenitor_error_is_kept_for_send_but_hidden_from_the_docs() {
        let mut file = generated(quote!(types::Session));
        file.items.insert(
            0,
            syn::parse_quote! {
                #[allow(unused_imports)]
                pub use progenitor_client::{ByteStream, ClientInfo, Error, ResponseValue};
            },
        );
        let outputs =
            BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
        one_way_to_call(&mut file, &outputs).unwrap();
        let compact: String = prettyplease::unparse(&file).split_whitespace().collect();
        assert!(
            compact.contains("pubuseprogenitor_client::{ByteStream,ClientInfo,ResponseValue};"),
            "{compact}"
        );
        assert!(
            compact
                .contains("#[doc(hidden)]#[allow(unused_imports)]pubuseprogenitor_client::Error;"),
            "{compact}"
        );
    }

    #[test]
    fn examples_call_and_name_what_they_get() {
        let text = rewritten(quote!(types::Session));
        assert!(
            text.contains(
                "```ignore\nlet session = client.get_session()\n    .session_id(session_id)\n    .call()\n    .await?;\n```"
            ),
            "{text}"
        );
        assert!(!text.contains(".send()"), "{text}");

        let download = rewritten(quote!(ByteStream));
        assert!(
            download.contains("let download = client.get_session()\n    .session_id(session_id)\n    .download()\n    .await?;"),
            "{download}"
        );
        let nothing = rewritten(quote!(()));
        assert!(
            nothing.contains("```ignore\nclient.get_session()\n    .session_id(session_id)\n    .call()\n    .await?;"),
            "{nothing}"
        );
    }

    #[test]
    fn variable_names_follow_the_type() {
        for (ty, name) in [
            (quote!(types::ScoresResponse), "scores"),
            (quote!(::std::vec::Vec<types::SourceFile>), "source_files"),
            (quote!(::serde_json::Value), "value"),
            (quote!(types::Response), "response"),
        ] {
            assert_eq!(variable_name(&syn::parse2(ty).unwrap()), name);
        }
    }

    #[test]
    fn an_unexpected_shape_is_an_error_not_a_silent_skip() {
        // A builder the generated code does not have.
        let mut file = generated(quote!(types::Session));
        let outputs = BTreeMap::from([
            ("GetSession".to_string(), syn::parse_quote!(types::Session)),
            (
                "GetScores".to_string(),
                syn::parse_quote!(types::ScoresResponse),
            ),
        ]);
        let error = one_way_to_call(&mut file, &outputs)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("GetScores") && error.contains("call_methods.rs"),
            "{error}"
        );

        // An example that no longer ends with `.send().await;`.
        let mut file: syn::File = syn::parse2(quote! {
            impl Client {
                #[doc = "```ignore\nlet response = client.get_session()\n    .send_it()\n```"]
                pub fn get_session(&self) -> builder::GetSession<'_> { todo!() }
            }
        })
        .unwrap();
        let outputs =
            BTreeMap::from([("GetSession".to_string(), syn::parse_quote!(types::Session))]);
        let error = one_way_to_call(&mut file, &outputs)
            .unwrap_err()
            .to_string();
        assert!(error.contains("Client::get_session"), "{error}");
    }
}
