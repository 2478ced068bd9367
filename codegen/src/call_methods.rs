//! One way to call an operation: `call()`, which returns the client's own error, through one
//! door.
//!
//! progenitor gives every operation's builder a `send()` that calls the `ClientHooks`, matches
//! the status (one `Error::ErrorResponse` arm per declared error status) and decodes the body
//! into progenitor's `ResponseValue` and `Error<ProblemDetails>`, and documents every `Client`
//! method with an example that calls `send()`. This pass makes the documented path the only
//! one, and the call path one direction:
//!
//! - every builder's `send()` becomes `send_with(options)` (hidden): it builds the request as
//!   before (the earlier passes made that lean), runs the operation's request limits on its
//!   typed values before building anything ([`crate::request_limits::TypedChecks`]), refuses
//!   with the client's `crate::Error` (`crate::runtime::invalid_request`, `unbuilt`), and ends
//!   in one call of the runtime's door, `crate::runtime::send::<Answer>(.., Self::META, request,
//!   options)`, which sends, retries, reads and decodes: the hooks, the status match (whose
//!   error arms the runtime made unreachable) and progenitor's decoding are gone;
//! - every builder gains an inherent `call()`, returning `crate::Result<Output>` (the
//!   `Operation::call` of the client crate, so no trait import is needed), and, the same way,
//!   `call_with_response()` (the body with the final status, headers and attempts) and
//!   `options(CallOptions)` (the call's own deadline, retry policy and headers);
//! - every `Client` method's example calls `call()` (`download()` for a byte stream), with `?`
//!   and a variable named after what it holds;
//! - progenitor's `Error`, which the generated module re-exports, is `#[doc(hidden)]`: the crate
//!   root's `Error` is the client's own (it shadows the glob re-export of the generated module),
//!   but rustdoc would document progenitor's beside it, as if a call could return either.
//! - progenitor's `Client::new` and `Client::new_with_client`, which take the runtime's state
//!   (`ClientState`, plumbing of the generated code), are `#[doc(hidden)]`: `Client::builder()`
//!   is the way to make a client.

use std::collections::BTreeMap;

use heck::ToSnakeCase;
use quote::quote;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use crate::request_limits::TypedChecks;

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
    checks: &BTreeMap<String, TypedChecks>,
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
                        add_call(imp, &outputs[&name], checks.get(&name))
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

/// Makes `send()` the one door's caller (`send_with`, see [`one_door`]) and adds `call()`,
/// `call_with_response()` and `options()` after it.
fn add_call(
    imp: &mut syn::ItemImpl,
    output: &syn::Type,
    checks: Option<&TypedChecks>,
) -> Result<(), String> {
    let position = imp
        .items
        .iter()
        .position(|item| matches!(item, syn::ImplItem::Fn(f) if f.sig.ident == "send"))
        .ok_or("no `send` method")?;
    for taken in ["call", "call_with_response", "options", "send_with"] {
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
    one_door(send, output, checks)?;
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

/// How the one door reads and decodes `output` (`crate::runtime::Answer`).
fn answer_of(output: &syn::Type) -> syn::Type {
    match quote!(#output).to_string().replace(' ', "").as_str() {
        "ByteStream" => syn::parse_quote!(crate::runtime::Streamed),
        "()" => syn::parse_quote!(crate::runtime::NoBody),
        _ => syn::parse_quote!(crate::runtime::Json<#output>),
    }
}

/// Rewrites progenitor's `send()` into `send_with(options)`: it builds the request as before,
/// its refusals the client's [`crate::Error`] (`crate::runtime::invalid_request`, `unbuilt`),
/// runs the operation's typed limit checks before building anything, and ends in the one door,
/// `crate::runtime::send`, with `Self::META`: progenitor's hooks, its status match (whose error
/// arms the runtime made unreachable) and its decoding are gone.
fn one_door(
    send: &mut syn::ImplItemFn,
    output: &syn::Type,
    checks: Option<&TypedChecks>,
) -> Result<(), String> {
    let stmts = &mut send.block.stmts;
    let hooks = stmts
        .iter()
        .position(|stmt| binds(stmt, "info"))
        .ok_or("its `send()` has no `let info = OperationInfo { .. }`")?;
    if hooks == 0 || !binds(&stmts[hooks - 1], "request") {
        return Err("its `send()` does not build `request` just before `info`".to_string());
    }
    let success = success_statuses(&stmts[hooks..])?;
    stmts.truncate(hooks);
    let answer = answer_of(output);
    let mut refusals = ClientRefusals::default();
    refusals.visit_block_mut(&mut send.block);
    if refusals.unbuilt != 1 {
        return Err(format!(
            "its `send()` has {} `.build()?`, not one",
            refusals.unbuilt
        ));
    }
    if let Some(checks) = checks {
        let mut query = QueryValues::default();
        query.visit_block_mut(&mut send.block);
        let stmts = &mut send.block.stmts;
        let has_body = stmts.iter().any(|stmt| binds(stmt, "body"));
        let statements = checks.statements(&query.0, has_body)?;
        let url = stmts
            .iter()
            .position(|stmt| binds(stmt, "url"))
            .ok_or("its `send()` has no `let url`")?;
        stmts.splice(url..url, statements);
    }
    // A plain function returning the door's future, not an `async fn` awaiting it: one future
    // fewer on every call's path, each level copied whole when first awaited (BENCHMARKS.md,
    // P1). The parameters are unwrapped and checked at once, in a closure whose `?` refusals
    // become the `Err` the door's future returns when awaited; what builds the request from
    // them (from `let url` on) is the operation's build step, run for the first attempt and
    // handed to the door, which runs it again for a retry instead of copying every request
    // before its first attempt. A build step that gives its body away (`.body(stream)`) cannot
    // run twice: the door gets none and copies the request when its body can be.
    let mut stmts = std::mem::take(&mut send.block.stmts);
    let url = stmts
        .iter()
        .position(|stmt| binds(stmt, "url"))
        .ok_or("its `send()` has no `let url`")?;
    let build = stmts.split_off(url);
    let prepare = stmts;
    let mut moved = MovedBody::default();
    for stmt in &build {
        moved.visit_stmt(stmt);
    }
    let request: syn::Expr = if moved.0 {
        syn::parse_quote! {
            (move || -> crate::Result<_> {
                #(#prepare)*
                #(#build)*
                Ok((
                    request,
                    ::std::option::Option::None::<fn() -> crate::Result<::reqwest::Request>>,
                ))
            })()
        }
    } else {
        syn::parse_quote! {
            (move || -> crate::Result<_> {
                #(#prepare)*
                let build = move || -> crate::Result<::reqwest::Request> {
                    #(#build)*
                    Ok(request)
                };
                Ok((build()?, ::std::option::Option::Some(build)))
            })()
        }
    };
    send.block = syn::parse_quote! {{
        let client: &'a super::Client = self.client;
        let request = #request;
        crate::runtime::send::<#answer, _>(
            &client.client,
            &client.inner,
            <Self as crate::operation::Operation>::META,
            &[#(#success),*],
            request,
            options,
        )
    }};
    send.sig.asyncness = None;
    send.sig.ident = syn::parse_quote!(send_with);
    send.sig.inputs = syn::parse_quote!(
        self,
        options: ::std::option::Option<::std::boxed::Box<crate::call_options::CallOptions>>
    );
    send.sig.output = syn::parse_quote!(
        -> impl ::std::future::Future<
            Output = crate::Result<crate::call_options::CallResponse<#output>>,
        > + Send + 'a
    );
    send.attrs.push(syn::parse_quote! {
        #[doc = "Builds the request (its limits checked on the typed values first) and sends it \
                 through the client's one door, `crate::runtime::send`, with this call's \
                 `options`. Prefer `call()`, `call_with_response()` and `options()`."]
    });
    send.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    Ok(())
}

/// The statuses progenitor's status match (the last of `stmts`) answers with a success, as
/// ranges (`200u16..=200u16`, `200u16..=299u16` for `2XX`): what the one door accepts as a
/// success; any other status of the success class is an error naming it, as it was.
fn success_statuses(stmts: &[syn::Stmt]) -> Result<Vec<syn::Expr>, String> {
    let matched = stmts.iter().rev().find_map(|stmt| match stmt {
        syn::Stmt::Expr(syn::Expr::Match(matched), _) => Some(matched),
        _ => None,
    });
    let Some(matched) = matched else {
        return Err("its `send()` does not end in a match on the status".to_string());
    };
    let mut success = Vec::new();
    for arm in &matched.arms {
        let body = &arm.body;
        let text = quote!(#body).to_string().replace(' ', "");
        if text.starts_with("Err(") || text.contains("Error::") {
            continue;
        }
        let range: syn::Expr = match &arm.pat {
            syn::Pat::Lit(syn::ExprLit {
                lit: syn::Lit::Int(status),
                ..
            }) => {
                let status: u16 = status.base10_parse().map_err(|e| e.to_string())?;
                syn::parse_quote!(#status..=#status)
            }
            syn::Pat::Range(syn::PatRange {
                start: Some(low),
                end: Some(high),
                limits: syn::RangeLimits::Closed(_),
                ..
            }) => {
                let (low, high) = (u16_of(low)?, u16_of(high)?);
                syn::parse_quote!(#low..=#high)
            }
            other => {
                return Err(format!(
                    "its status match has a success arm `{}` that is not a status or a range",
                    quote!(#other)
                ));
            }
        };
        success.push(range);
    }
    if success.is_empty() {
        return Err("its status match has no success arm".to_string());
    }
    Ok(success)
}

fn u16_of(expr: &syn::Expr) -> Result<u16, String> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(status),
            ..
        }) => status.base10_parse().map_err(|e| e.to_string()),
        other => Err(format!("`{}` is not a status", quote!(#other))),
    }
}

/// Whether `stmt` is `let <name> = ..;` (`let mut` too).
fn binds(stmt: &syn::Stmt, name: &str) -> bool {
    matches!(stmt, syn::Stmt::Local(local)
        if matches!(&local.pat, syn::Pat::Ident(p) if p.ident == name))
}

/// progenitor's `Error::InvalidRequest` as the client's (`crate::runtime::invalid_request`), and
/// `.build()?` refusing with the client's error (`crate::runtime::unbuilt`).
#[derive(Default)]
struct ClientRefusals {
    unbuilt: usize,
}

impl VisitMut for ClientRefusals {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        match expr {
            syn::Expr::Path(path)
                if path
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .eq(["Error", "InvalidRequest"]) =>
            {
                *expr = syn::parse_quote!(crate::runtime::invalid_request);
            }
            syn::Expr::Try(attempt)
                if matches!(&*attempt.expr, syn::Expr::MethodCall(call)
                    if call.method == "build" && call.args.is_empty()) =>
            {
                let built = attempt.expr.clone();
                *attempt.expr = syn::parse_quote!(#built.map_err(crate::runtime::unbuilt));
                self.unbuilt += 1;
            }
            _ => {}
        }
    }
}

/// Whether a build step gives a value away to its request (`.body(stream)`, `.multipart(form)`
/// with no `&`): such a step cannot run a second time.
#[derive(Default)]
struct MovedBody(bool);

impl<'ast> syn::visit::Visit<'ast> for MovedBody {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        if (call.method == "body" || call.method == "multipart")
            && call
                .args
                .first()
                .is_some_and(|arg| !matches!(arg, syn::Expr::Reference(_)))
        {
            self.0 = true;
        }
        syn::visit::visit_expr_method_call(self, call);
    }
}

/// The variable of each query parameter, by its name on the wire, from progenitor's
/// `.query(&progenitor_client::QueryParam::new("Skip", &skip))`.
#[derive(Default)]
struct QueryValues(BTreeMap<String, syn::Ident>);

impl VisitMut for QueryValues {
    fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
        let is_query_param = matches!(&*call.func, syn::Expr::Path(p)
            if p.path.segments.iter().rev().take(2).map(|s| s.ident.to_string()).eq(["new", "QueryParam"]));
        if is_query_param
            && let (
                Some(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(name),
                    ..
                })),
                Some(syn::Expr::Reference(value)),
            ) = (call.args.first(), call.args.iter().nth(1))
            && let syn::Expr::Path(variable) = &*value.expr
            && let Some(ident) = variable.path.get_ident()
        {
            self.0.insert(name.value(), ident.clone());
        }
        syn::visit_mut::visit_expr_call_mut(self, call);
    }
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
mod tests;
