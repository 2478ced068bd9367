//! Builds each request without work the call does not need.
//!
//! progenitor's `send()` builds a request in three steps that cost more than they must, on
//! every call (`generated-client/benches/client_overhead.rs` measures them in instructions):
//!
//! - the URL is a `format!("{}/v1/sessions/{}", client.baseurl, ...)`, whose `String` starts
//!   without capacity (the format begins with an argument) and grows twice;
//! - each path value is made text with `to_string()`: a `Uuid` through `Display` and the
//!   formatting machinery into a new `String`, a `String` copied;
//! - the `api-version` header goes into a `HeaderMap` of its own (two allocations), which reqwest
//!   then merges into the request's header map and drops; its value is the description's
//!   `info.version` for every operation, where each operation must send its own pinned version
//!   ([`crate::behaviour`]).
//!
//! Nor does the builder need its placeholder messages: `new()` allocates one per required
//! parameter, which the setter then drops.
//!
//! This pass, run after [`path_segments`](crate::path_segments), rewrites each builder's
//! `new()` and `send()`:
//!
//! - the URL `format!` becomes `[client.baseurl.as_str(), "/v1/...", &*segment, ...].concat()`,
//!   one allocation of the exact length;
//! - a `Uuid` path value is encoded into a stack buffer (`hyphenated().encode_lower(..)`, the
//!   text `Display` gives), a `String` one is borrowed; other types keep `to_string()`. A
//!   `Uuid` needs no run-time check either (36 bytes of `[0-9a-f-]`: nothing to encode, never
//!   empty, `.`, `..` or a separator), unless another operation has a literal segment at its
//!   place, which only `path_segment` compares;
//! - `super::Client::api_version()` in a `send()` becomes the literal the operation sends: its
//!   pinned `api-version` ([`crate::behaviour`]), else the description's `info.version`;
//! - headers that are only ever appended to that separate map with static values are set on the
//!   request directly (`.header(name, value)`), which is what the merge did: the request had no
//!   such header before; a header name or value that is a string literal is made in a `const`
//!   block, so that its bytes are checked at compile time and not on every call;
//! - a builder's required parameters start as an empty `Err`, not as a `String` holding
//!   `"<parameter> was not initialized"` that every setter call drops: `send()` writes that same
//!   message when the parameter was never given.
//!
//! Every value in a URL must already be a `crate::runtime::path_segment(..)?` (the
//! [`path_segments`](crate::path_segments) pass made it one); any other value fails generation.
//! So every path of every generated request has its template's shape, by construction, and the
//! runtime does not check it again on each call.
//!
//! The request sent is the same, byte for byte: the rewrite changes how it is built, not what
//! it is (`generated-client/tests/it/operations.rs` checks what each of the 32 operations puts
//! on the wire: method, exact path, query, headers, body). A `send()` whose
//! code has another shape is left as progenitor wrote it (correct, only slower); a test over the
//! workspace's generated file makes sure nothing was left.

use std::collections::BTreeMap;

use quote::quote;
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;

/// The pass found a URL `format!` it could not take apart, a URL value the client did not check,
/// or a required parameter whose placeholder `send()` does not unwrap.
#[derive(Debug, thiserror::Error)]
#[error(
    "progenitor's request-building code no longer has the shape codegen/src/lean_requests.rs \
     rewrites ({0}); update that pass for the new progenitor version"
)]
pub struct LeanRequestsError(String);

/// The Rust type of each builder field, by builder name and field name: `T` of the field's
/// `Result<T, String>`.
type FieldTypes = BTreeMap<String, BTreeMap<String, syn::Type>>;

/// Rewrites every builder's `new()` and `send()` of `file` (see the
/// [module documentation](self)). `api_versions` gives, by builder name (`GetScores`), the
/// `api-version` the operation sends ([`crate::behaviour`]); a builder it does not name sends
/// what `Client::api_version()` returns (the description's `info.version`).
pub fn lean_requests(
    file: &mut syn::File,
    api_versions: &BTreeMap<String, String>,
) -> Result<(), LeanRequestsError> {
    let document_version = api_version(file);
    for item in &mut file.items {
        let syn::Item::Mod(module) = item else {
            continue;
        };
        if module.ident != "builder" {
            continue;
        }
        let Some((_, items)) = module.content.as_mut() else {
            continue;
        };
        let fields = builder_fields(items);
        for item in items {
            let syn::Item::Impl(imp) = item else {
                continue;
            };
            if imp.trait_.is_some() {
                continue;
            }
            let Some(builder) = self_type_name(&imp.self_ty) else {
                continue;
            };
            let Some(types) = fields.get(&builder) else {
                continue;
            };
            // `new()` comes before `send()` in progenitor's impls; both are looked for anyway.
            let mut unset = Vec::new();
            for impl_item in &mut imp.items {
                if let syn::ImplItem::Fn(method) = impl_item
                    && method.sig.ident == "new"
                {
                    unset = lean_unset_parameters(&mut method.block);
                }
            }
            for impl_item in &mut imp.items {
                if let syn::ImplItem::Fn(method) = impl_item
                    && method.sig.ident == "send"
                {
                    let pinned = api_versions
                        .get(&builder)
                        .map(|version| syn::LitStr::new(version, proc_macro2::Span::call_site()));
                    lean_send(
                        &mut method.block,
                        types,
                        pinned.as_ref().or(document_version.as_ref()),
                    )?;
                    explain_unset_parameters(&mut method.block, &unset).map_err(|field| {
                        LeanRequestsError(format!(
                            "`{builder}::send` does not unwrap `{field}` with \
                             `{field}.map_err(Error::InvalidRequest)?`"
                        ))
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// The fields a builder's `new()` starts as `Err("<field> was not initialized".to_string())`,
/// now started as `Err(String::new())`: the message is written by `send()` only when a
/// parameter really was never given (see [`explain_unset_parameters`]), not allocated on every
/// call for the setter to drop.
fn lean_unset_parameters(block: &mut syn::Block) -> Vec<String> {
    #[derive(Default)]
    struct Unset {
        fields: Vec<String>,
    }
    impl VisitMut for Unset {
        fn visit_field_value_mut(&mut self, field: &mut syn::FieldValue) {
            let syn::Member::Named(name) = &field.member else {
                return;
            };
            let placeholder = format!("{name} was not initialized");
            let is_placeholder = matches!(&field.expr, syn::Expr::Call(err)
                if matches!(&*err.func, syn::Expr::Path(p) if p.path.is_ident("Err"))
                    && err.args.len() == 1
                    && matches!(err.args.first(), Some(syn::Expr::MethodCall(m))
                        if m.method == "to_string"
                            && matches!(&*m.receiver, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. })
                                if text.value() == placeholder)));
            if is_placeholder {
                field.expr = syn::parse_quote!(Err(::std::string::String::new()));
                self.fields.push(name.to_string());
            }
        }
    }
    let mut unset = Unset::default();
    unset.visit_block_mut(block);
    unset.fields
}

/// In `send()`, `let p = p.map_err(Error::InvalidRequest)?;` for each field of `unset` becomes
/// a `map_err` that says `"p was not initialized"` for the empty placeholder, as progenitor's
/// message did, and passes any other reason (a failed conversion) as it is. A field whose
/// unwrapping is not found is returned: its placeholder would otherwise reach the user empty.
fn explain_unset_parameters(block: &mut syn::Block, unset: &[String]) -> Result<(), String> {
    for field in unset {
        let placeholder = format!("{field} was not initialized");
        let unwrapping = block.stmts.iter_mut().find_map(|stmt| {
            let syn::Stmt::Local(local) = stmt else {
                return None;
            };
            let binds_field = matches!(&local.pat, syn::Pat::Ident(p) if p.ident == field);
            let init = local.init.as_mut().filter(|_| binds_field)?;
            let syn::Expr::Try(attempt) = &mut *init.expr else {
                return None;
            };
            let syn::Expr::MethodCall(call) = &mut *attempt.expr else {
                return None;
            };
            let plain = call.method == "map_err"
                && matches!(&*call.receiver, syn::Expr::Path(p) if p.path.is_ident(field.as_str()))
                && matches!(call.args.first(), Some(syn::Expr::Path(p))
                    if p.path.segments.last().is_some_and(|s| s.ident == "InvalidRequest"));
            plain.then_some(call)
        });
        let Some(call) = unwrapping else {
            return Err(field.clone());
        };
        call.args = syn::parse_quote!(|why: ::std::string::String| Error::InvalidRequest(
            if why.is_empty() { #placeholder.to_string() } else { why }
        ));
    }
    Ok(())
}

/// The fields of every builder struct of `items`.
fn builder_fields(items: &[syn::Item]) -> FieldTypes {
    let mut builders = FieldTypes::new();
    for item in items {
        let syn::Item::Struct(builder) = item else {
            continue;
        };
        let fields = builder
            .fields
            .iter()
            .filter_map(|field| {
                Some((
                    field.ident.as_ref()?.to_string(),
                    result_ok_type(&field.ty)?,
                ))
            })
            .collect();
        builders.insert(builder.ident.to_string(), fields);
    }
    builders
}

/// `T` of `Result<T, E>`.
fn result_ok_type(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return None;
    };
    match arguments.args.first()? {
        syn::GenericArgument::Type(ok) => Some(ok.clone()),
        _ => None,
    }
}

fn self_type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => Some(path.path.segments.last()?.ident.to_string()),
        _ => None,
    }
}

/// How a path value of a given type becomes text.
#[derive(Debug, PartialEq, Eq)]
enum TextOf {
    /// Encoded into a stack buffer.
    Uuid,
    /// Borrowed as it is.
    String,
    /// `to_string()`, as progenitor wrote it.
    Display,
}

fn text_of(ty: &syn::Type) -> TextOf {
    let text = quote!(#ty).to_string().replace(' ', "");
    match text.as_str() {
        "::uuid::Uuid" | "uuid::Uuid" => TextOf::Uuid,
        "::std::string::String" | "std::string::String" | "String" => TextOf::String,
        _ => TextOf::Display,
    }
}

/// The literal `Client::api_version()` returns (progenitor writes the document's
/// `info.version` into the `ClientInfo` impl), if it is one.
fn api_version(file: &syn::File) -> Option<syn::LitStr> {
    file.items.iter().find_map(|item| {
        let syn::Item::Impl(imp) = item else {
            return None;
        };
        imp.items.iter().find_map(|impl_item| {
            let syn::ImplItem::Fn(method) = impl_item else {
                return None;
            };
            match method.block.stmts.as_slice() {
                [
                    syn::Stmt::Expr(
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(version),
                            ..
                        }),
                        None,
                    ),
                ] if method.sig.ident == "api_version" => Some(version.clone()),
                _ => None,
            }
        })
    })
}

/// Replaces `super::Client::api_version()` by the literal it returns.
struct InlineApiVersion<'v>(&'v syn::LitStr);

impl VisitMut for InlineApiVersion<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::Call(call) = expr
            && call.args.is_empty()
            && matches!(&*call.func, syn::Expr::Path(p)
                if p.path.segments.iter().map(|s| s.ident.to_string()).eq(["super", "Client", "api_version"]))
        {
            let version = self.0;
            *expr = syn::parse_quote!(#version);
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

fn lean_send(
    block: &mut syn::Block,
    types: &BTreeMap<String, syn::Type>,
    api_version: Option<&syn::LitStr>,
) -> Result<(), LeanRequestsError> {
    if let Some(version) = api_version {
        InlineApiVersion(version).visit_block_mut(block);
    }
    let mut urls = UrlFormats {
        types,
        problem: None,
    };
    urls.visit_block_mut(block);
    if let Some(problem) = urls.problem {
        return Err(LeanRequestsError(problem));
    }
    direct_static_headers(block);
    ConstHeaders.visit_block_mut(block);
    Ok(())
}

/// Wraps `HeaderName::from_static("...")` and `HeaderValue::from_static("...")` of a string
/// literal in `const { }`: both are `const fn`s that check every byte, which then happens once,
/// at compile time, instead of on every call (an invalid literal becomes a compile error).
struct ConstHeaders;

impl VisitMut for ConstHeaders {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        let of_literal = is_from_static(expr)
            && matches!(expr, syn::Expr::Call(call)
                if matches!(call.args.first(), Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(_), .. }))));
        if of_literal {
            let call = expr.clone();
            *expr = syn::parse_quote!(const { #call });
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// Rewrites the URL `format!` of a `send()` and the path values inside it.
struct UrlFormats<'t> {
    types: &'t BTreeMap<String, syn::Type>,
    problem: Option<String>,
}

impl VisitMut for UrlFormats<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::Macro(mac) = expr
            && mac.mac.path.is_ident("format")
        {
            match self.joined_url(&mac.mac) {
                Ok(Some(joined)) => *expr = joined,
                Ok(None) => {}
                Err(problem) => {
                    self.problem.get_or_insert(problem);
                }
            }
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

impl UrlFormats<'_> {
    /// The `concat()` of the parts of a URL `format!` (one whose first argument is `client.baseurl`),
    /// `None` for any other `format!`.
    fn joined_url(&self, mac: &syn::Macro) -> Result<Option<syn::Expr>, String> {
        let Ok(args) =
            mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        else {
            return Ok(None);
        };
        let mut args = args.into_iter();
        let (
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            })),
            Some(base),
        ) = (args.next(), args.next())
        else {
            return Ok(None);
        };
        if quote!(#base).to_string().replace(' ', "") != "client.baseurl" {
            return Ok(None);
        }
        let text = text.value();
        let Some(path) = text.strip_prefix("{}") else {
            return Err(format!(
                "the URL format {text:?} does not start with the base URL"
            ));
        };
        let literals: Vec<&str> = path.split("{}").collect();
        if literals.iter().any(|l| l.contains(['{', '}'])) {
            return Err(format!(
                "the URL format {text:?} has placeholders other than `{{}}`"
            ));
        }
        let values = args
            .map(|value| self.lean_path_value(value))
            .collect::<Result<Vec<syn::Expr>, String>>()?;
        if values.len() + 1 != literals.len() {
            return Err(format!(
                "the URL format {text:?} has {} placeholders for its path but {} values",
                literals.len() - 1,
                values.len()
            ));
        }
        let mut parts: Vec<syn::Expr> = vec![syn::parse_quote!(client.baseurl.as_str())];
        for (index, literal) in literals.iter().enumerate() {
            if index > 0 {
                let value = &values[index - 1];
                parts.push(syn::parse_quote!(&*#value));
            }
            if !literal.is_empty() {
                parts.push(syn::parse_quote!(#literal));
            }
        }
        Ok(Some(syn::parse_quote!([#(#parts),*].concat())))
    }

    /// `value` (a `crate::runtime::path_segment(name, &p.to_string(), reserved)?`) with the
    /// text of `p` made without `to_string()` where its type allows. Any other value is an
    /// error: every value in a URL must be a segment the client checked (that is what lets the
    /// run time trust the path's shape).
    fn lean_path_value(&self, mut value: syn::Expr) -> Result<syn::Expr, String> {
        let shown = quote!(#value).to_string();
        let unchecked = || {
            format!(
                "the URL value `{shown}` is not a `crate::runtime::path_segment(..)?` call (the \
                 path_segments pass must run first)"
            )
        };
        let syn::Expr::Try(attempt) = &mut value else {
            return Err(unchecked());
        };
        let syn::Expr::Call(call) = &mut *attempt.expr else {
            return Err(unchecked());
        };
        let is_path_segment = matches!(&*call.func, syn::Expr::Path(p)
            if p.path.segments.len() == 3
                && p.path.segments.iter().map(|s| s.ident.to_string()).eq(["crate", "runtime", "path_segment"]));
        if !is_path_segment || call.args.len() != 3 {
            return Err(unchecked());
        }
        let Some(parameter) = to_string_receiver(&call.args[1]) else {
            return Ok(value);
        };
        let Some(ty) = self.types.get(&parameter.to_string()) else {
            return Ok(value);
        };
        let no_sibling_literals = matches!(&call.args[2], syn::Expr::Reference(r)
            if matches!(&*r.expr, syn::Expr::Array(a) if a.elems.is_empty()));
        match text_of(ty) {
            // 36 bytes of `[0-9a-f-]`: never empty, `.` or `..`, nothing to encode or refuse;
            // only a sibling literal (none here) could make it another operation's path.
            TextOf::Uuid if no_sibling_literals => Ok(syn::parse_quote!(
                #parameter.hyphenated().encode_lower(&mut ::uuid::Uuid::encode_buffer())
            )),
            TextOf::Uuid => {
                call.args[1] = syn::parse_quote!(
                    #parameter.hyphenated().encode_lower(&mut ::uuid::Uuid::encode_buffer())
                );
                Ok(value)
            }
            TextOf::String => {
                call.args[1] = syn::parse_quote!(&#parameter);
                Ok(value)
            }
            TextOf::Display => Ok(value),
        }
    }
}

/// `p` of `&p.to_string()`.
fn to_string_receiver(expr: &syn::Expr) -> Option<syn::Ident> {
    let syn::Expr::Reference(reference) = expr else {
        return None;
    };
    let syn::Expr::MethodCall(method) = &*reference.expr else {
        return None;
    };
    if method.method != "to_string" || !method.args.is_empty() {
        return None;
    }
    let syn::Expr::Path(path) = &*method.receiver else {
        return None;
    };
    path.path.get_ident().cloned()
}

/// Sets the headers progenitor collects in a `header_map` of their own on the request
/// directly, when that map is only created, appended static values, and given to `.headers()`.
fn direct_static_headers(block: &mut syn::Block) {
    let Some(created) = block.stmts.iter().position(is_header_map_creation) else {
        return;
    };
    let appended: Vec<(syn::Expr, syn::Expr)> = block.stmts[created + 1..]
        .iter()
        .map_while(static_append)
        .collect();
    if appended.is_empty() {
        return;
    }
    // Created, appended to, given to `.headers()`: any other use leaves the code as it is.
    let mut uses = HeaderMapUses::default();
    uses.visit_block_mut(block);
    if uses.count != appended.len() + 2 {
        return;
    }
    let mut replace = ReplaceHeaders {
        appended: &appended,
        replaced: 0,
    };
    for stmt in &mut block.stmts[created + 1 + appended.len()..] {
        replace.visit_stmt_mut(stmt);
    }
    if replace.replaced == 1 {
        block.stmts.drain(created..created + 1 + appended.len());
    }
}

fn is_header_map_creation(stmt: &syn::Stmt) -> bool {
    let syn::Stmt::Local(local) = stmt else {
        return false;
    };
    let is_header_map = matches!(&local.pat, syn::Pat::Ident(p) if p.ident == "header_map");
    let creates = local.init.as_ref().is_some_and(|init| {
        matches!(&*init.expr, syn::Expr::Call(call)
            if matches!(&*call.func, syn::Expr::Path(p)
                if p.path.segments.len() >= 2
                    && p.path.segments.iter().rev().nth(1).is_some_and(|s| s.ident == "HeaderMap")
                    && p.path.segments.last().is_some_and(|s| s.ident == "with_capacity")))
    });
    is_header_map && creates
}

/// `(name, value)` of `header_map.append(name, value);` when both are `from_static` calls.
fn static_append(stmt: &syn::Stmt) -> Option<(syn::Expr, syn::Expr)> {
    let syn::Stmt::Expr(syn::Expr::MethodCall(call), Some(_)) = stmt else {
        return None;
    };
    let receiver_is_map =
        matches!(&*call.receiver, syn::Expr::Path(p) if p.path.is_ident("header_map"));
    if !receiver_is_map || call.method != "append" || call.args.len() != 2 {
        return None;
    }
    let name = call.args.first()?.clone();
    let value = call.args.last()?.clone();
    (is_from_static(&name) && is_from_static(&value)).then_some((name, value))
}

fn is_from_static(expr: &syn::Expr) -> bool {
    matches!(expr, syn::Expr::Call(call)
        if matches!(&*call.func, syn::Expr::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "from_static")))
}

/// Counts the uses of `header_map` in a block.
#[derive(Default)]
struct HeaderMapUses {
    count: usize,
}

impl VisitMut for HeaderMapUses {
    fn visit_ident_mut(&mut self, ident: &mut proc_macro2::Ident) {
        if ident == "header_map" {
            self.count += 1;
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // A use inside a macro's tokens is not visited as an identifier: count it so that the
        // totals no longer match and the code is left as it is.
        if mac.tokens.to_string().contains("header_map") {
            self.count += 1;
        }
    }
}

/// Replaces `.headers(header_map)` by one `.header(name, value)` per appended header.
struct ReplaceHeaders<'a> {
    appended: &'a [(syn::Expr, syn::Expr)],
    replaced: usize,
}

impl VisitMut for ReplaceHeaders<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        let syn::Expr::MethodCall(call) = expr else {
            return;
        };
        let gives_map = call.method == "headers"
            && call.args.len() == 1
            && matches!(call.args.first(), Some(syn::Expr::Path(p)) if p.path.is_ident("header_map"));
        if !gives_map {
            return;
        }
        let mut chained = (*call.receiver).clone();
        for (name, value) in self.appended {
            chained = syn::parse_quote!(#chained.header(#name, #value));
        }
        *expr = chained;
        self.replaced += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::TokenStream;

    fn rewritten(code: TokenStream) -> String {
        rewritten_with(code, &BTreeMap::new())
    }

    fn rewritten_with(code: TokenStream, api_versions: &BTreeMap<String, String>) -> String {
        let mut file: syn::File = syn::parse2(code).unwrap();
        lean_requests(&mut file, api_versions).unwrap();
        prettyplease::unparse(&file).split_whitespace().collect()
    }

    fn builder(send_body: TokenStream) -> TokenStream {
        quote! {
            impl ClientInfo<()> for Client {
                fn api_version() -> &'static str {
                    "2.1"
                }
            }
            pub mod builder {
                pub struct GetThing<'a> {
                    client: &'a super::Client,
                    session_id: Result<::uuid::Uuid, String>,
                    file_id: Result<::std::string::String, String>,
                    page: Result<i32, String>,
                }
                impl<'a> GetThing<'a> {
                    pub async fn send(self) -> Result<(), Error<()>> {
                        #send_body
                    }
                }
            }
        }
    }

    #[test]
    fn the_url_is_joined_once_with_each_path_value_made_text_without_a_string() {
        let text = rewritten(builder(quote! {
            let url = format!(
                "{}/v1/sessions/{}/files/{}/pages/{}",
                client.baseurl,
                crate::runtime::path_segment("session_id", &session_id.to_string(), &[])?,
                crate::runtime::path_segment("file_id", &file_id.to_string(), &["all"])?,
                crate::runtime::path_segment("page", &page.to_string(), &[])?,
            );
            let other = format!("{} items", count);
        }));
        let expected: String = r#"let url = [
                client.baseurl.as_str(),
                "/v1/sessions/",
                &*session_id.hyphenated().encode_lower(&mut ::uuid::Uuid::encode_buffer()),
                "/files/",
                &*crate::runtime::path_segment("file_id", &file_id, &["all"])?,
                "/pages/",
                &*crate::runtime::path_segment("page", &page.to_string(), &[])?,
            ].concat();"#
            .split_whitespace()
            .collect();
        assert!(text.contains(&expected), "{text}");
        // Not a URL: left alone.
        assert!(text.contains(r#"format!("{}items",count)"#), "{text}");
    }

    #[test]
    fn a_url_without_path_values_and_one_ending_in_a_value_are_joined_too() {
        let text = rewritten(builder(quote! {
            let a = format!("{}/v1/sessions", client.baseurl,);
            let b = format!("{}/v1/sessions/{}", client.baseurl, crate::runtime::path_segment("session_id", &session_id.to_string(), &[])?);
        }));
        assert!(
            text.contains(r#"leta=[client.baseurl.as_str(),"/v1/sessions"].concat();"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"letb=[client.baseurl.as_str(),"/v1/sessions/",&*session_id.hyphenated()"#
            ),
            "{text}"
        );
    }

    #[test]
    fn a_uuid_that_could_equal_a_sibling_literal_is_still_checked() {
        let text = rewritten(builder(quote! {
            let url = format!(
                "{}/v1/sessions/{}",
                client.baseurl,
                crate::runtime::path_segment("session_id", &session_id.to_string(), &["all"])?,
            );
        }));
        assert!(
            text.contains(r#"&*crate::runtime::path_segment("session_id",session_id.hyphenated().encode_lower(&mut::uuid::Uuid::encode_buffer()),&["all"],)?"#),
            "{text}"
        );
    }

    fn builder_with_new(send_body: TokenStream) -> TokenStream {
        quote! {
            pub mod builder {
                pub struct GetThing<'a> {
                    client: &'a super::Client,
                    session_id: Result<::uuid::Uuid, String>,
                    body: Result<types::builder::Thing, String>,
                }
                impl<'a> GetThing<'a> {
                    pub fn new(client: &'a super::Client) -> Self {
                        Self {
                            client: client,
                            session_id: Err("session_id was not initialized".to_string()),
                            body: Ok(::std::default::Default::default()),
                        }
                    }
                    pub async fn send(self) -> Result<(), Error<()>> {
                        #send_body
                    }
                }
            }
        }
    }

    #[test]
    fn a_required_parameter_starts_without_a_message_and_send_writes_it_when_missing() {
        let text = rewritten(builder_with_new(quote! {
            let Self { client, session_id, body } = self;
            let session_id = session_id.map_err(Error::InvalidRequest)?;
            let body = body.map_err(Error::InvalidRequest)?;
        }));
        assert!(
            text.contains(r#"session_id:Err(::std::string::String::new()),body:Ok(::std::default::Default::default()),"#),
            "{text}"
        );
        assert!(
            text.contains(r#"letsession_id=session_id.map_err(|why:::std::string::String|Error::InvalidRequest(ifwhy.is_empty(){"session_idwasnotinitialized".to_string()}else{why},))?;"#),
            "{text}"
        );
        // A parameter with a default keeps progenitor's plain unwrapping.
        assert!(
            text.contains("letbody=body.map_err(Error::InvalidRequest)?;"),
            "{text}"
        );
    }

    #[test]
    fn a_placeholder_send_does_not_unwrap_is_an_error_not_an_empty_message() {
        let mut file: syn::File = syn::parse2(builder_with_new(quote! {
            let Self { client, session_id, body } = self;
            let session_id = session_id.unwrap();
        }))
        .unwrap();
        let error = lean_requests(&mut file, &BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`GetThing::send` does not unwrap `session_id`"),
            "{error}"
        );
    }

    #[test]
    fn an_operation_sends_its_pinned_api_version_not_the_documents() {
        let send = quote! {
            let url = format!("{}/v1/sessions", client.baseurl,);
            let mut header_map = ::reqwest::header::HeaderMap::with_capacity(1usize);
            header_map.append(
                ::reqwest::header::HeaderName::from_static("api-version"),
                ::reqwest::header::HeaderValue::from_static(super::Client::api_version()),
            );
            #[allow(unused_mut)]
            let mut request = client.client.get(url).headers(header_map).build()?;
        };
        let pinned = BTreeMap::from([("GetThing".to_string(), "1.0".to_string())]);
        let text = rewritten_with(builder(send.clone()), &pinned);
        assert!(
            text.contains(r#"const{::reqwest::header::HeaderValue::from_static("1.0")}"#),
            "{text}"
        );
        assert!(!text.contains(r#"from_static("2.1")"#), "{text}");
        // Another builder's pin is not this one's.
        let other = BTreeMap::from([("GetOther".to_string(), "1.0".to_string())]);
        let text = rewritten_with(builder(send), &other);
        assert!(text.contains(r#"from_static("2.1")"#), "{text}");
    }

    #[test]
    fn static_headers_are_set_on_the_request_instead_of_a_map_of_their_own() {
        let text = rewritten(builder(quote! {
            let url = format!("{}/v1/sessions", client.baseurl,);
            let mut header_map = ::reqwest::header::HeaderMap::with_capacity(1usize);
            header_map.append(
                ::reqwest::header::HeaderName::from_static("api-version"),
                ::reqwest::header::HeaderValue::from_static(super::Client::api_version()),
            );
            #[allow(unused_mut)]
            let mut request = client
                .client
                .get(url)
                .header(::reqwest::header::ACCEPT, ::reqwest::header::HeaderValue::from_static("application/json"))
                .headers(header_map)
                .build()?;
        }));
        assert!(!text.contains("header_map"), "{text}");
        assert!(
            text.contains(r#".header(::reqwest::header::ACCEPT,const{::reqwest::header::HeaderValue::from_static("application/json")},).header(const{::reqwest::header::HeaderName::from_static("api-version")},const{::reqwest::header::HeaderValue::from_static("2.1")},).build()?;"#),
            "{text}"
        );
    }

    #[test]
    fn a_header_map_with_any_other_use_is_left_as_progenitor_wrote_it() {
        let text = rewritten(builder(quote! {
            let mut header_map = ::reqwest::header::HeaderMap::with_capacity(2usize);
            header_map.append(
                ::reqwest::header::HeaderName::from_static("api-version"),
                ::reqwest::header::HeaderValue::from_static("1.0"),
            );
            if let Some(v) = if_match {
                header_map.append("If-Match", v.to_string().try_into()?);
            }
            let mut request = client.client.get(url).headers(header_map).build()?;
        }));
        assert!(text.contains("letmutheader_map"), "{text}");
        assert!(text.contains(".headers(header_map)"), "{text}");
    }

    #[test]
    fn a_url_format_of_another_shape_is_an_error_naming_the_pass() {
        let mut file: syn::File = syn::parse2(builder(quote! {
            let url = format!("{}/v1/{{x}}/{}", client.baseurl, id);
        }))
        .unwrap();
        let error = lean_requests(&mut file, &BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(error.contains("lean_requests.rs"), "{error}");
        let mut file: syn::File = syn::parse2(builder(quote! {
            let url = format!("{}/v1/{}", client.baseurl);
        }))
        .unwrap();
        assert!(lean_requests(&mut file, &BTreeMap::new()).is_err());
    }

    #[test]
    fn a_url_value_the_client_did_not_check_is_an_error() {
        for value in [
            quote!(session_id),
            quote!(encode_path(&session_id.to_string())),
            quote!(other::path_segment(
                "session_id",
                &session_id.to_string(),
                &[]
            )?),
        ] {
            let mut file: syn::File = syn::parse2(builder(quote! {
                let url = format!("{}/v1/sessions/{}", client.baseurl, #value);
            }))
            .unwrap();
            let error = lean_requests(&mut file, &BTreeMap::new())
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("is not a `crate::runtime::path_segment"),
                "{error}"
            );
        }
    }
}
