//! Generation: progenitor on the effective document, then our passes, then prettyplease.
//!
//! The generated file is meant to be mounted as `crate::generated` of the client crate, which
//! provides `crate::runtime::ClientState` (the `Client`'s inner state, whose `ClientHooks` impl
//! adds authentication, retries and tracing), `crate::runtime::path_segment` (the checked
//! path-segment encoder every path parameter goes through: see [`crate::path_segments`]),
//! `crate::operation` (the `Operation` trait and `OperationMeta`, implemented here for every
//! operation's builder, whose `call()` every builder exposes: see [`crate::call_methods`]) and
//! `crate::Result`, and `crate::email::is_email_address` (the `format: email` rule every
//! validating newtype of an e-mail member applies; every refusal names its field: see
//! [`crate::field_messages`]). Each `send()` builds its request without avoidable allocations
//! (see [`crate::lean_requests`]). The structs and enums of `types` are `#[non_exhaustive]`, so a
//! vendor's additive release is a compatible crate release (see [`crate::forward_compatible`]).
//! Unknown members are kept as JSON text, `crate::json::UnknownMembers` (see
//! [`crate::unknown_members`]), and polymorphic members decode by their discriminator or best
//! fit into enums with an `Unrecognized(crate::json::UnknownVariant)` (see [`crate::unions`]).
//! A pass that cannot do its work says so in [`Generated::warnings`]; it never fails
//! generation.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::call_methods;
use crate::deprecations;
use crate::document::{self, pointer};
use crate::field_messages;
use crate::forward_compatible;
use crate::lean_requests;
use crate::open_enums::{self, OpenEnumPlan};
use crate::path_segments;
use crate::unions;
use crate::unknown_members;

/// Rust path of the `Client`'s inner state, provided by the client crate.
pub const INNER_TYPE: &str = "crate::runtime::ClientState";

/// What generation produced.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The complete `generated.rs`, header included.
    pub code: String,
    /// One line per operation: method and path → Rust method, parameters, success and error type.
    pub surface: String,
    /// Each operation's success type by operationId, as Rust tokens valid where the generated
    /// module's items are in scope (`types::ScoresResponse`), for code generated around it.
    pub success_types: BTreeMap<String, String>,
    /// What a pass could not do and left as typify or progenitor wrote it (each names the JSON
    /// pointer or the type): generation goes on.
    pub warnings: Vec<String>,
}

/// Generation failed; each variant says where and what to do.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error(
        "the effective document is not an OpenAPI 3.0 document progenitor can read, at {pointer}: {message}"
    )]
    NotOpenApi { pointer: String, message: String },
    #[error(
        "progenitor rejected the document: {0}. Run the preflight stage (cargo xtask regen does) to find the node and the overlay fix"
    )]
    Progenitor(String),
    #[error(
        "progenitor panicked: {0}. The preflight stage did not foresee this; fix the document with \
         an overlay and report the case so preflight learns it"
    )]
    Panicked(String),
    #[error(transparent)]
    OpenEnums(#[from] open_enums::OpenEnumError),
    #[error(transparent)]
    ForwardCompatible(#[from] forward_compatible::ForwardCompatibleError),
    #[error(transparent)]
    PathSegments(#[from] path_segments::PathSegmentError),
    #[error(transparent)]
    LeanRequests(#[from] lean_requests::LeanRequestsError),
    #[error(transparent)]
    CallMethods(#[from] call_methods::CallMethodsError),
    #[error(transparent)]
    Deprecations(#[from] deprecations::DeprecationsError),
    #[error("generated code is not valid Rust ({0}); this is a generator bug")]
    InvalidCode(String),
    #[error("{0}")]
    Operations(String),
}

/// One operation of the effective document.
#[derive(Debug, Clone)]
struct DocOperation {
    operation_id: String,
    method: String,
    path: String,
    deprecated: bool,
    summary: String,
    /// The `api-version` header it sends (its behaviour pin, else `info.version`).
    api_version: String,
}

/// Generates the client code for `effective` (an OpenAPI 3.0 document), opening the enums of
/// `plan`, with `header` (comment lines) at the top.
pub fn generate(
    effective: &Value,
    plan: &OpenEnumPlan,
    header: &str,
) -> Result<Generated, GenerateError> {
    let (progenitor_input, json_suffix_bodies) = progenitor_view(effective);
    let spec: openapiv3::OpenAPI =
        serde_path_to_error::deserialize(&progenitor_input).map_err(|e| {
            GenerateError::NotOpenApi {
                pointer: pointer_of(e.path()),
                message: e.inner().to_string(),
            }
        })?;

    let settings = settings();
    let tokens = catch_panic(|| progenitor::Generator::new(&settings).generate_tokens(&spec))
        .map_err(GenerateError::Panicked)?
        .map_err(|e| GenerateError::Progenitor(e.to_string()))?;

    let mut file: syn::File =
        syn::parse2(tokens).map_err(|e| GenerateError::InvalidCode(e.to_string()))?;
    open_enums::open_response_enums(&mut file, plan)?;
    let (keeps_unknown, mut warnings) = unknown_members::keep_unknown_members_as_text(&mut file);
    warnings.extend(unions::decode_unions(&mut file, effective, &keeps_unknown));
    forward_compatible::non_exhaustive_types(&mut file)?;
    send_json_suffix_types(&mut file, &json_suffix_bodies)?;
    path_segments::checked_path_segments(&mut file)?;
    let api_versions = crate::behaviour::api_versions(effective)
        .into_iter()
        .map(|(id, version)| (id.to_upper_camel_case(), version))
        .collect();
    lean_requests::lean_requests(&mut file, &api_versions)?;
    warnings.extend(
        field_messages::name_fields(&mut file, effective)
            .into_iter()
            .map(|w| w.to_string()),
    );
    allow_generated_lints(&mut file);

    let operations = document_operations(effective);
    let builders = builder_signatures(&file)?;
    let outputs = builders
        .iter()
        .map(|(name, signature)| (name.clone(), signature.success.clone()))
        .collect();
    let checks = crate::request_limits::typed_checks(&crate::request_limits::limits(effective))
        .into_iter()
        .map(|(id, checks)| (id.to_upper_camel_case(), checks))
        .collect();
    call_methods::one_way_to_call(&mut file, &outputs, &checks)?;
    no_hooks_assertion(&mut file);
    let (module, surface) = operations_module(&operations, &builders)?;
    file.items.push(module);
    deprecations::mark_deprecated(&mut file, effective)?;
    let success_types = operations
        .iter()
        .filter_map(|op| {
            let signature = builders.get(&op.operation_id.to_upper_camel_case())?;
            let success = &signature.success;
            Some((op.operation_id.clone(), quote!(#success).to_string()))
        })
        .collect();

    let code = format!("{header}\n{}", prettyplease::unparse(&file));
    Ok(Generated {
        code,
        surface,
        success_types,
        warnings,
    })
}

/// Removes progenitor's compile-time assertion that `Client` implements `ClientHooks`: no
/// generated code calls the hooks (each `send_with()` ends in `crate::runtime::send`), so the
/// client implements none.
fn no_hooks_assertion(file: &mut syn::File) {
    file.items.retain(|item| {
        let syn::Item::Const(constant) = item else {
            return true;
        };
        let text = quote!(#constant).to_string();
        !(constant.ident == "_" && text.contains("assert_client_hooks"))
    });
}

/// The progenitor settings of this project: builder interface, one `Client` (merged tags), our
/// `ClientHooks` expected, `PartialEq` on every type, ordered maps. Preflight judges documents
/// with the same settings.
pub fn settings() -> progenitor::GenerationSettings {
    let mut settings = progenitor::GenerationSettings::new();
    settings
        .with_interface(progenitor::InterfaceStyle::Builder)
        .with_tag(progenitor::TagStyle::Merged)
        .with_hooks(progenitor::HooksMode::Expected)
        .with_inner_type(INNER_TYPE.parse::<TokenStream>().expect("a valid path"))
        .with_derive("PartialEq")
        .with_map_type("::std::collections::BTreeMap");
    settings
}

/// Runs `f`, turning a panic into its message. The default hook would print the panic to stderr
/// as if the program crashed; it is silenced while `f` runs.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Mutex<()> = Mutex::new(());
    let _guard = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    result.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer::push(&mut out, &index.to_string()),
            Segment::Map { key } => pointer::push(&mut out, key),
            Segment::Enum { variant } => pointer::push(&mut out, variant),
            Segment::Unknown => pointer::push(&mut out, "?"),
        }
    }
    if out.is_empty() { "/".into() } else { out }
}

fn document_operations(doc: &Value) -> Vec<DocOperation> {
    document::operations(doc)
        .filter_map(|op| {
            let operation_id = op.operation.get("operationId").and_then(Value::as_str)?;
            Some(DocOperation {
                api_version: crate::behaviour::api_version(doc, op.operation).to_string(),
                operation_id: operation_id.to_string(),
                method: op.method.to_ascii_uppercase(),
                path: op.path.to_string(),
                deprecated: op
                    .operation
                    .get("deprecated")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                summary: op
                    .operation
                    .get("summary")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect()
}

/// What progenitor generated for one operation's builder.
struct BuilderSignature {
    /// Parameters in builder order: Rust name and type.
    params: Vec<(String, syn::Type)>,
    success: syn::Type,
    error: syn::Type,
}

/// Reads every `builder::X::send` signature from the generated code.
fn builder_signatures(
    file: &syn::File,
) -> Result<BTreeMap<String, BuilderSignature>, GenerateError> {
    let builder = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "builder" => m.content.as_ref().map(|(_, items)| items),
            _ => None,
        })
        .ok_or_else(|| {
            GenerateError::Operations("generated code has no `builder` module".into())
        })?;

    let mut fields: BTreeMap<String, Vec<(String, syn::Type)>> = BTreeMap::new();
    for item in builder {
        if let syn::Item::Struct(s) = item {
            let params = s
                .fields
                .iter()
                .filter_map(|f| {
                    let name = f.ident.as_ref()?.to_string();
                    (name != "client")
                        .then(|| (name, result_ok_type(&f.ty).unwrap_or_else(|| f.ty.clone())))
                })
                .collect();
            fields.insert(s.ident.to_string(), params);
        }
    }
    let mut out = BTreeMap::new();
    for item in builder {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(self_ty) = &*imp.self_ty else {
            continue;
        };
        let Some(name) = self_ty.path.segments.last().map(|s| s.ident.to_string()) else {
            continue;
        };
        for impl_item in &imp.items {
            let syn::ImplItem::Fn(f) = impl_item else {
                continue;
            };
            if f.sig.ident != "send" {
                continue;
            }
            let syn::ReturnType::Type(_, ret) = &f.sig.output else {
                continue;
            };
            let (success, error) = send_types(ret).ok_or_else(|| {
                GenerateError::Operations(format!("builder `{name}`: unexpected `send` signature"))
            })?;
            out.insert(
                name.clone(),
                BuilderSignature {
                    params: fields.remove(&name).unwrap_or_default(),
                    success,
                    error,
                },
            );
        }
    }
    Ok(out)
}

/// `Result<T, String>` → `T` (builder fields hold a value or the reason it is missing).
fn result_ok_type(ty: &syn::Type) -> Option<syn::Type> {
    generic_args(ty, "Result").and_then(|args| args.into_iter().next())
}

/// `Result<ResponseValue<T>, Error<E>>` → `(T, E)`.
fn send_types(ty: &syn::Type) -> Option<(syn::Type, syn::Type)> {
    let mut args = generic_args(ty, "Result")?.into_iter();
    let ok = generic_args(&args.next()?, "ResponseValue")?
        .into_iter()
        .next()?;
    let err = generic_args(&args.next()?, "Error")?.into_iter().next()?;
    Some((ok, err))
}

fn generic_args(ty: &syn::Type, outer: &str) -> Option<Vec<syn::Type>> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != outer {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    Some(
        args.args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
    )
}

/// The `operations` module: metadata of every operation and its `Operation` impl; plus the
/// surface summary.
fn operations_module(
    operations: &[DocOperation],
    builders: &BTreeMap<String, BuilderSignature>,
) -> Result<(syn::Item, String), GenerateError> {
    let mut metas = Vec::new();
    let mut impls = Vec::new();
    let mut versions = Vec::new();
    let mut surface = String::new();
    for (index, op) in operations.iter().enumerate() {
        let builder_name = op.operation_id.to_upper_camel_case();
        let rust_name = op.operation_id.to_snake_case();
        let sig = builders.get(&builder_name).ok_or_else(|| {
            GenerateError::Operations(format!(
                "operation {} {} ({}) has no generated builder `{builder_name}`",
                op.method, op.path, op.operation_id
            ))
        })?;
        let kind = match type_text(&sig.success).as_str() {
            "ByteStream" => quote!(Stream),
            "()" => quote!(Empty),
            "serde_json::Value" => quote!(AnyJson),
            _ => quote!(Json),
        };
        let (id, method, path, summary, deprecated) = (
            &op.operation_id,
            &op.method,
            &op.path,
            &op.summary,
            op.deprecated,
        );
        let idempotent = matches!(
            method.as_str(),
            "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS"
        );
        metas.push(quote! {
            crate::operation::OperationMeta {
                id: #id,
                rust_name: #rust_name,
                method: #method,
                path: #path,
                summary: #summary,
                idempotent: #idempotent,
                deprecated: #deprecated,
                response: crate::operation::ResponseKind::#kind,
            }
        });
        let api_version = &op.api_version;
        versions.push(quote!(#id => Some(#api_version),));
        let builder = format_ident!("{builder_name}");
        let success = &sig.success;
        impls.push(quote! {
            impl<'a> crate::operation::Operation for super::builder::#builder<'a> {
                type Output = #success;
                const META: &'static crate::operation::OperationMeta = &ALL[#index];
                fn send_with(
                    self,
                    options: ::std::option::Option<::std::boxed::Box<crate::call_options::CallOptions>>,
                ) -> impl ::std::future::Future<
                    Output = crate::Result<crate::call_options::CallResponse<Self::Output>>,
                > + Send {
                    super::builder::#builder::send_with(self, options)
                }
            }
        });
        let params = sig
            .params
            .iter()
            .map(|(name, ty)| format!("{name}: {}", type_text(ty)))
            .collect::<Vec<_>>()
            .join(", ");
        surface.push_str(&format!(
            "{method} {path} → {rust_name}({params}) -> {}, error {}{}\n",
            type_text(&sig.success),
            type_text(&sig.error),
            if op.deprecated { " (deprecated)" } else { "" }
        ));
    }
    let count = operations.len();
    let module: syn::Item = syn::parse2(quote! {
        /// Every operation of the API description: its metadata, and the typed
        /// [`Operation`](crate::operation::Operation) impl of its builder.
        pub mod operations {
            #[allow(unused_imports)]
            use super::{types, ByteStream};

            /// All operations, in the order of the API description.
            pub const ALL: [crate::operation::OperationMeta; #count] = [#(#metas),*];

            /// The `api-version` header the operation whose operationId is `id` sends: the
            /// version it was first generated with (its behaviour pin), which a vendor release
            /// does not move.
            pub fn api_version(id: &str) -> Option<&'static str> {
                match id {
                    #(#versions)*
                    _ => None,
                }
            }

            #(#impls)*
        }
    })
    .map_err(|e| GenerateError::InvalidCode(e.to_string()))?;
    Ok((module, surface))
}

/// A type as a reader writes it: `Option<types::Status>`, without `::std::...` noise.
fn type_text(ty: &syn::Type) -> String {
    let text = quote!(#ty).to_string();
    let text = text
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace("& ", "&");
    let text = text.trim_start_matches("::").to_string();
    [
        "::std::option::",
        "::std::vec::",
        "::std::string::",
        "::chrono::naive::",
        "::chrono::",
        "::uuid::",
        "std::option::",
        "std::vec::",
        "std::string::",
        "chrono::naive::",
        "chrono::",
        "uuid::",
        "types::builder::",
        "types::",
        "<::",
    ]
    .iter()
    .fold(text, |t, prefix| {
        if *prefix == "<::" {
            t.replace(prefix, "<")
        } else {
            t.replace(prefix, "")
        }
    })
}

/// The lints generated code can trip whatever the document says, allowed in the generated module
/// itself (`lib.rs` repeats them on `mod generated`): a new description must never break `cargo
/// clippy -- -D warnings` through code nobody edits. `warnings` covers every lint that warns,
/// rustc's and clippy's, including those a future toolchain adds (typify's `len() < 0` for
/// `minLength: 0` trips `unused_comparisons`; unused `defaults` helpers, `dead_code`); the
/// clippy groups cover clippy's deny-by-default `correctness` lints (the same comparison is
/// `absurd_extreme_comparisons`) and any group a workspace turns on; `rustdoc::all` covers
/// descriptions rendered as doc comments (bare URLs, stray HTML, `[x]` read as a link). rustc's
/// deny-by-default lints stay: they flag code that would be wrong, not merely untidy.
fn allow_generated_lints(file: &mut syn::File) {
    file.attrs.insert(
        0,
        syn::parse_quote! {
            #![allow(
                warnings,
                clippy::all,
                clippy::pedantic,
                clippy::nursery,
                clippy::restriction,
                clippy::cargo,
                rustdoc::all
            )]
        },
    );
}

/// Whether a request `media_type` is JSON under another name: a `+json` structured syntax
/// suffix (RFC 6839) on a concrete type, e.g. `application/json-patch+json`,
/// `application/merge-patch+json`, `application/vnd.acme.v2+json`, with or without parameters.
/// A media range such as `application/*+json` names no type a request could carry.
pub(crate) fn is_json_suffix_media_type(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    !kind.is_empty()
        && !essence.contains('*')
        && subtype
            .strip_suffix("+json")
            .is_some_and(|name| !name.is_empty())
}

/// The effective document as progenitor is given it. progenitor sends JSON only under the exact
/// name `application/json`, so a request body whose one media type is a `+json` type
/// ([`is_json_suffix_media_type`]) is renamed `application/json` here; the builders of those
/// operations then set the real `Content-Type` ([`send_json_suffix_types`]). The effective
/// document itself keeps the published name. Returns the renamed document and, per builder
/// (`UpperCamelCase` operationId), the media type to send.
pub(crate) fn progenitor_view(effective: &Value) -> (Value, BTreeMap<String, String>) {
    let mut view = effective.clone();
    let mut media_types = BTreeMap::new();
    let mut renames: Vec<String> = Vec::new();
    for op in document::operations(effective) {
        let Some(body) = op.operation.get("requestBody") else {
            continue;
        };
        let Some(operation_id) = op.operation.get("operationId").and_then(Value::as_str) else {
            continue;
        };
        // Where the body's content is: inline, or the component a local `$ref` names.
        let content_at = match body.get("$ref").and_then(Value::as_str) {
            Some(reference) => match reference.strip_prefix("#/components/requestBodies/") {
                // Already a pointer token: references escape `~` and `/` themselves.
                Some(name) => format!("/components/requestBodies/{name}/content"),
                None => continue,
            },
            None => pointer::child(&pointer::child(&op.pointer(), "requestBody"), "content"),
        };
        let Some(Value::Object(content)) = effective.pointer(&content_at) else {
            continue;
        };
        let mut keys = content.keys();
        if let (Some(only), None) = (keys.next(), keys.next())
            && is_json_suffix_media_type(only)
        {
            media_types.insert(operation_id.to_upper_camel_case(), only.clone());
            if !renames.contains(&content_at) {
                renames.push(content_at);
            }
        }
    }
    for content_at in renames {
        if let Some(Value::Object(content)) = view.pointer_mut(&content_at) {
            let renamed = std::mem::take(content)
                .into_iter()
                .map(|(_, media)| ("application/json".to_string(), media))
                .collect();
            *content = renamed;
        }
    }
    (view, media_types)
}

/// Makes the builders of `media_types` send their JSON body under its real media type: a
/// `Content-Type` header set before `.json(&body)`, which keeps a header already there.
fn send_json_suffix_types(
    file: &mut syn::File,
    media_types: &BTreeMap<String, String>,
) -> Result<(), GenerateError> {
    struct SetContentType<'a> {
        media_type: &'a str,
        calls: usize,
    }
    impl syn::visit_mut::VisitMut for SetContentType<'_> {
        fn visit_expr_method_call_mut(&mut self, call: &mut syn::ExprMethodCall) {
            syn::visit_mut::visit_expr_method_call_mut(self, call);
            if call.method == "json" {
                let receiver = &call.receiver;
                let media_type = self.media_type;
                *call.receiver = syn::parse_quote! {
                    #receiver.header(
                        ::reqwest::header::CONTENT_TYPE,
                        ::reqwest::header::HeaderValue::from_static(#media_type),
                    )
                };
                self.calls += 1;
            }
        }
    }
    if media_types.is_empty() {
        return Ok(());
    }
    let builder = file
        .items
        .iter_mut()
        .find_map(|item| match item {
            syn::Item::Mod(m) if m.ident == "builder" => m.content.as_mut().map(|(_, items)| items),
            _ => None,
        })
        .ok_or_else(|| {
            GenerateError::Operations("generated code has no `builder` module".into())
        })?;
    let mut done = Vec::new();
    for item in builder.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        let syn::Type::Path(self_ty) = &*imp.self_ty else {
            continue;
        };
        let Some(name) = self_ty.path.segments.last().map(|s| s.ident.to_string()) else {
            continue;
        };
        let Some(media_type) = media_types.get(&name) else {
            continue;
        };
        for impl_item in &mut imp.items {
            let syn::ImplItem::Fn(f) = impl_item else {
                continue;
            };
            if f.sig.ident != "send" {
                continue;
            }
            let mut visitor = SetContentType {
                media_type,
                calls: 0,
            };
            syn::visit_mut::VisitMut::visit_block_mut(&mut visitor, &mut f.block);
            if visitor.calls != 1 {
                return Err(GenerateError::Operations(format!(
                    "builder `{name}`: expected one JSON body to send as `{media_type}`, found {}; \
                     this is a generator bug",
                    visitor.calls
                )));
            }
            done.push(name.clone());
        }
    }
    if let Some(missing) = media_types.keys().find(|name| !done.contains(name)) {
        return Err(GenerateError::Operations(format!(
            "builder `{missing}` not found to send `{}`; this is a generator bug",
            media_types[missing]
        )));
    }
    Ok(())
}
