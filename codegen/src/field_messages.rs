//! Every refusal of a value names its field in the description's words, and `format: email` is
//! checked where the value is made.
//!
//! typify and progenitor refuse bad values with text about the generated code:
//! `doesn't match pattern "^[A-Z]{3}$"` (which member?), ``conversion to `:: uuid :: Uuid` for
//! session_id failed`` (a Rust type, a Rust field name, no reason), `error converting supplied
//! value for subject_email: ...`, `no value supplied for query_parameters`. A user reads them in
//! `Error::InvalidRequest` or from `parse()`. This pass rewrites each into a message naming the
//! member or parameter as it is on the wire (`countryCode`, `sessionId`) and keeping the reason:
//!
//! - a validating newtype of `types` (typify's `struct X(String)` for a `pattern`, `maxLength`
//!   or `minLength`): every refusal of its `FromStr` starts with the member or parameter it is
//!   the type of (`countryCode: doesn't match pattern ...`), so `parse()`, `try_from`, the
//!   builders and deserialisation all say it. Its origin is read from the generated code (the
//!   struct field or operation parameter of that type) and the description (the schema there);
//!   a newtype with no origin fails generation rather than keep a message naming nothing;
//! - a newtype whose schema says `format: email` (which typify ignores) also refuses what is not
//!   an e-mail address, through `crate::email::is_email_address` (the rule the client already
//!   applies before sending, and the mock applies: one crate, `email_address`, without display
//!   names; the length is the schema's `maxLength`, already checked by typify's code). Driven by
//!   the description's `format`, never by a type's name;
//! - typify's builders (`types::builder::X`): a failed conversion says `member: reason` (or only
//!   the reason when it comes from a newtype above, which named the member already), a missing
//!   member `member is required`;
//! - progenitor's operation builders: a failed conversion of a parameter says `Name: reason`,
//!   with the reason the conversion gave (the setter gains the bound
//!   `<V as TryInto<T>>::Error: Display`, which progenitor's own body setters already have, and
//!   which every conversion of the standard library, `uuid` and typify meets); a UUID or date
//!   says what it should look like. A failed body conversion says the body's reason only.
//!
//! Whatever of these shapes the generator versions write differently is left as it was written,
//! with a warning naming the type (the default message is kept): a pass that cannot do its work
//! never stops generation (a newtype no member or parameter uses, such as a `format: binary`
//! schema of a non-JSON response, has nothing to name). The workspace's generated file has no
//! generated-code message text left: a test reads it.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

use crate::document as openapi;

/// Text of typify's and progenitor's messages that must not reach a user; none is left.
const GENERATED_TEXT: [&str; 3] = [
    "conversion to `",
    "error converting supplied value for ",
    "no value supplied for ",
];

/// Why a message could not be made to name its field: a warning of generation, which goes on
/// with the generator's own message.
#[derive(Debug, thiserror::Error)]
pub enum FieldMessagesError {
    #[error(
        "generated code has no `types` module for codegen/src/field_messages.rs; refusals keep \
         the generator's messages"
    )]
    NoTypes,
    #[error(
        "the validating type `types::{0}` is the type of no struct member or operation parameter \
         that codegen/src/field_messages.rs can find in the generated code and the description; \
         its refusals keep the generator's message (no field to name)"
    )]
    NoOrigin(String),
    #[error(
        "`types::{ty}`'s FromStr refuses a value with code of a shape codegen/src/field_messages.rs \
         does not know ({code}): its refusals keep the generator's message"
    )]
    UnknownRefusal { ty: String, code: String },
    #[error(
        "generated code still holds the message text {0:?} after codegen/src/field_messages.rs: \
         the generator changed the shape of that message, which keeps the generator's wording"
    )]
    GeneratedTextLeft(String),
}

/// Where a validating newtype is used: the member or parameter's name on the wire, and whether
/// its schema says `format: email`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    wire: String,
    email: bool,
}

/// Rewrites the refusals of the generated code (see the [module documentation](self)). Returns
/// what it could not rewrite, as warnings: generation goes on with the generator's messages.
pub fn name_fields(file: &mut syn::File, effective: &Value) -> Vec<FieldMessagesError> {
    let mut warnings = Vec::new();
    let Some(types) = module_items(&file.items, "types") else {
        return vec![FieldMessagesError::NoTypes];
    };
    let newtypes = validating_newtypes(types);
    let members = member_names(types);
    let parameters = parameter_names(effective);
    let named = type_names(types);
    let mut origins: BTreeMap<String, Vec<Origin>> = BTreeMap::new();
    for (owner, field, ty) in struct_fields(types) {
        for newtype in named.iter().filter(|n| mentions(&ty, n)) {
            let wire = members
                .get(&owner)
                .and_then(|m| m.get(&field))
                .cloned()
                .unwrap_or_else(|| field.clone());
            let schema = member_schema(effective, &owner, &wire);
            origins.entry(newtype.clone()).or_default().push(Origin {
                email: is_email(schema),
                wire,
            });
        }
    }
    let operation_builders = module_items(&file.items, "builder").unwrap_or(&[]);
    for (owner, field, ty) in struct_fields(operation_builders) {
        let Some((wire, schema)) = parameters.get(&(owner, field)) else {
            continue;
        };
        for newtype in named.iter().filter(|n| mentions(&ty, n)) {
            origins.entry(newtype.clone()).or_default().push(Origin {
                wire: wire.clone(),
                email: is_email(Some(schema)),
            });
        }
    }
    inherit_origins(types, &mut origins);
    warnings.extend(
        newtypes
            .iter()
            .filter(|n| !origins.contains_key(*n))
            .map(|orphan| FieldMessagesError::NoOrigin(orphan.clone())),
    );

    let Some(types) = module_items_mut(&mut file.items, "types") else {
        return warnings;
    };
    for item in types.iter_mut() {
        if let syn::Item::Impl(imp) = item
            && trait_name(imp).as_deref() == Some("FromStr")
            && let Some(found) = origins.get(&type_name(&imp.self_ty))
            && let Err(warning) = name_newtype_refusals(imp, found)
        {
            warnings.push(warning);
        }
    }
    for (newtype, found) in origins.iter().filter(|(_, o)| o.iter().any(|o| o.email)) {
        document_email_newtype(types, newtype, found);
    }
    if let Some(builders) = module_items_mut(types, "builder") {
        name_member_refusals(builders, &members, &newtypes);
    }
    if let Some(builders) = module_items_mut(&mut file.items, "builder") {
        name_parameter_refusals(builders, &parameters, &newtypes);
    }
    let mut left = LeftText::default();
    left.visit_file(file);
    warnings.extend(left.found.map(FieldMessagesError::GeneratedTextLeft));
    warnings
}

fn module_items<'a>(items: &'a [syn::Item], name: &str) -> Option<&'a [syn::Item]> {
    items.iter().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => m.content.as_ref().map(|(_, i)| i.as_slice()),
        _ => None,
    })
}

fn module_items_mut<'a>(items: &'a mut [syn::Item], name: &str) -> Option<&'a mut Vec<syn::Item>> {
    items.iter_mut().find_map(|item| match item {
        syn::Item::Mod(m) if m.ident == name => m.content.as_mut().map(|(_, i)| i),
        _ => None,
    })
}

fn type_name(ty: &syn::Type) -> String {
    crate::call_methods::type_name(ty)
}

fn trait_name(imp: &syn::ItemImpl) -> Option<String> {
    let (path, _) = imp.trait_.as_ref()?;
    Some(path.segments.last()?.ident.to_string())
}

/// The tuple structs of `types` that have a `FromStr`: typify's validating newtypes.
fn validating_newtypes(types: &[syn::Item]) -> BTreeSet<String> {
    let tuple_structs: BTreeSet<String> = types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) if matches!(s.fields, syn::Fields::Unnamed(_)) => {
                Some(s.ident.to_string())
            }
            _ => None,
        })
        .collect();
    types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Impl(imp) if trait_name(imp).as_deref() == Some("FromStr") => {
                Some(type_name(&imp.self_ty))
            }
            _ => None,
        })
        .filter(|name| tuple_structs.contains(name))
        .collect()
}

/// The names of the structs and enums of `types`.
fn type_names(types: &[syn::Item]) -> BTreeSet<String> {
    types
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// A type used only inside another one (typify's `ItemCodeString` in the untagged enum
/// `ItemCode` of a member `code` that is an integer or a pattern-checked string) refuses on
/// behalf of that one's member: it inherits the origins of the enums and tuple structs whose
/// variants or fields hold it, through any depth.
fn inherit_origins(types: &[syn::Item], origins: &mut BTreeMap<String, Vec<Origin>>) {
    let mut holds: Vec<(String, Vec<syn::Type>)> = Vec::new();
    for item in types {
        let (name, fields): (_, Vec<&syn::Field>) = match item {
            syn::Item::Enum(e) => (
                e.ident.to_string(),
                e.variants.iter().flat_map(|v| v.fields.iter()).collect(),
            ),
            syn::Item::Struct(s) if matches!(s.fields, syn::Fields::Unnamed(_)) => {
                (s.ident.to_string(), s.fields.iter().collect())
            }
            _ => continue,
        };
        holds.push((name, fields.into_iter().map(|f| f.ty.clone()).collect()));
    }
    let names: Vec<String> = type_names(types).into_iter().collect();
    // Each round gives at least one more type its origins, or ends.
    loop {
        let mut inherited = Vec::new();
        for name in names.iter().filter(|n| !origins.contains_key(*n)) {
            let found: Vec<Origin> = holds
                .iter()
                .filter(|(holder, fields)| {
                    holder != name && fields.iter().any(|ty| mentions(ty, name))
                })
                .filter_map(|(holder, _)| origins.get(holder))
                .flatten()
                .cloned()
                .collect();
            if !found.is_empty() {
                inherited.push((name.clone(), found));
            }
        }
        if inherited.is_empty() {
            return;
        }
        origins.extend(inherited);
    }
}

/// Every named field of every struct in `items`: (struct, field, type).
fn struct_fields(items: &[syn::Item]) -> Vec<(String, String, syn::Type)> {
    let mut found = Vec::new();
    for item in items {
        let syn::Item::Struct(s) = item else { continue };
        let syn::Fields::Named(fields) = &s.fields else {
            continue;
        };
        for field in &fields.named {
            if let Some(ident) = &field.ident {
                found.push((s.ident.to_string(), ident.to_string(), field.ty.clone()));
            }
        }
    }
    found
}

/// Whether `ty` names the type `name` anywhere (`Option<X>`, `Vec<super::X>`, `types::X`).
fn mentions(ty: &syn::Type, name: &str) -> bool {
    struct Finder<'a> {
        name: &'a str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_path_segment(&mut self, segment: &'ast syn::PathSegment) {
            self.found |= segment.ident == self.name;
            syn::visit::visit_path_segment(self, segment);
        }
    }
    let mut finder = Finder { name, found: false };
    finder.visit_type(ty);
    finder.found
}

/// The wire name of every member of every struct of `types`: struct → field → name (the
/// `serde(rename)`, else the field).
fn member_names(types: &[syn::Item]) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut names: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for item in types {
        let syn::Item::Struct(s) = item else { continue };
        let syn::Fields::Named(fields) = &s.fields else {
            continue;
        };
        for field in &fields.named {
            let Some(ident) = &field.ident else { continue };
            let ident = ident.to_string();
            let wire = serde_rename(&field.attrs).unwrap_or_else(|| {
                ident
                    .strip_prefix("r#")
                    .map_or_else(|| ident.clone(), str::to_string)
            });
            names
                .entry(s.ident.to_string())
                .or_default()
                .insert(ident, wire);
        }
    }
    names
}

fn serde_rename(attrs: &[syn::Attribute]) -> Option<String> {
    let mut rename = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                rename = Some(meta.value()?.parse::<syn::LitStr>()?.value());
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
    }
    rename
}

/// Every operation parameter: (builder struct, field) → (name on the wire, schema).
fn parameter_names(doc: &Value) -> BTreeMap<(String, String), (String, Value)> {
    let mut names = BTreeMap::new();
    for op in openapi::operations(doc) {
        let Some(id) = op.operation.get("operationId").and_then(Value::as_str) else {
            continue;
        };
        let own = op.operation.get("parameters").and_then(Value::as_array);
        let shared = op.item.get("parameters").and_then(Value::as_array);
        for parameter in own.into_iter().chain(shared).flatten() {
            let parameter = openapi::resolve(doc, parameter);
            let Some(name) = parameter.get("name").and_then(Value::as_str) else {
                continue;
            };
            let schema = parameter
                .get("schema")
                .map(|s| openapi::resolve(doc, s).clone())
                .unwrap_or(Value::Null);
            names
                .entry((id.to_upper_camel_case(), name.to_snake_case()))
                .or_insert((name.to_string(), schema));
        }
    }
    names
}

/// The schema of member `wire` of the component schema `owner` (an array's items), if any.
fn member_schema<'a>(doc: &'a Value, owner: &str, wire: &str) -> Option<&'a Value> {
    let owner = doc.pointer("/components/schemas")?.get(owner)?;
    let member = openapi::resolve(
        doc,
        openapi::resolve(doc, owner).get("properties")?.get(wire)?,
    );
    Some(match member.get("items") {
        Some(items) => openapi::resolve(doc, items),
        None => member,
    })
}

fn is_email(schema: Option<&Value>) -> bool {
    schema
        .and_then(|s| s.get("format"))
        .and_then(Value::as_str)
        .is_some_and(|format| format.eq_ignore_ascii_case("email"))
}

/// The label of a newtype's field: its wire names, one or several.
fn label(origins: &[Origin]) -> String {
    let names: BTreeSet<&str> = origins.iter().map(|o| o.wire.as_str()).collect();
    names.into_iter().collect::<Vec<_>>().join(" or ")
}

/// Prefixes every `Err("...".into())` of a newtype's `from_str` with its field, and adds the
/// e-mail check when its schema says `format: email`.
fn name_newtype_refusals(
    imp: &mut syn::ItemImpl,
    origins: &[Origin],
) -> Result<(), FieldMessagesError> {
    let ty = type_name(&imp.self_ty);
    let label = label(origins);
    let Some(from_str) = imp.items.iter_mut().find_map(|item| match item {
        syn::ImplItem::Fn(f) if f.sig.ident == "from_str" => Some(f),
        _ => None,
    }) else {
        return Err(FieldMessagesError::UnknownRefusal {
            ty,
            code: "no from_str".into(),
        });
    };
    struct Prefix<'a> {
        label: &'a str,
        unknown: Option<String>,
    }
    impl VisitMut for Prefix<'_> {
        fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
            syn::visit_mut::visit_expr_call_mut(self, call);
            if !matches!(&*call.func, syn::Expr::Path(p) if p.path.is_ident("Err")) {
                return;
            }
            let literal = match call.args.first_mut() {
                Some(syn::Expr::MethodCall(m)) if m.method == "into" => match &mut *m.receiver {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(text),
                        ..
                    }) => Some(text),
                    _ => None,
                },
                _ => None,
            };
            match literal {
                Some(text) => {
                    let named = format!("{}: {}", self.label, text.value());
                    *text = syn::LitStr::new(&named, text.span());
                }
                None => self.unknown = Some(quote::quote!(#call).to_string()),
            }
        }
    }
    let mut prefix = Prefix {
        label: &label,
        unknown: None,
    };
    prefix.visit_block_mut(&mut from_str.block);
    if let Some(code) = prefix.unknown {
        return Err(FieldMessagesError::UnknownRefusal { ty, code });
    }
    if origins.iter().any(|o| o.email) {
        let message = format!(
            "{label} is not an e-mail address (local-part@domain, without a display name or \
             spaces)"
        );
        let check: syn::Stmt = syn::parse_quote! {
            if !crate::email::is_email_address(value) {
                return Err(#message.into());
            }
        };
        let at = from_str.block.stmts.len().saturating_sub(1);
        from_str.block.stmts.insert(at, check);
    }
    Ok(())
}

/// Says on an e-mail newtype what its `parse()` refuses.
fn document_email_newtype(types: &mut [syn::Item], newtype: &str, origins: &[Origin]) {
    let doc = format!(
        " `parse()`, `try_from` and deserialisation refuse what is not an e-mail address \
         (`format: email`: an RFC 5321 mailbox without a display name, the rule of \
         [`is_email_address`](crate::email::is_email_address)), naming `{}`.",
        label(origins)
    );
    for item in types.iter_mut() {
        if let syn::Item::Struct(s) = item
            && s.ident == newtype
        {
            let after_docs = s
                .attrs
                .iter()
                .rposition(|a| a.path().is_ident("doc"))
                .map_or(0, |at| at + 1);
            s.attrs.insert(after_docs, syn::parse_quote!(#[doc = #doc]));
            s.attrs.insert(after_docs, syn::parse_quote!(#[doc = ""]));
        }
    }
}

/// typify's builders: `member: reason` and `member is required`.
fn name_member_refusals(
    builders: &mut [syn::Item],
    members: &BTreeMap<String, BTreeMap<String, String>>,
    newtypes: &BTreeSet<String>,
) {
    let fields: BTreeMap<(String, String), syn::Type> = struct_fields(builders)
        .into_iter()
        .map(|(owner, field, ty)| ((owner, field), ty))
        .collect();
    struct Members<'a> {
        owner: String,
        members: &'a BTreeMap<String, BTreeMap<String, String>>,
        fields: &'a BTreeMap<(String, String), syn::Type>,
        newtypes: &'a BTreeSet<String>,
    }
    impl Members<'_> {
        fn wire(&self, field: &str) -> String {
            self.members
                .get(&self.owner)
                .and_then(|m| m.get(field))
                .cloned()
                .unwrap_or_else(|| field.to_string())
        }
    }
    impl VisitMut for Members<'_> {
        fn visit_lit_str_mut(&mut self, text: &mut syn::LitStr) {
            if let Some(field) = text.value().strip_prefix("no value supplied for ") {
                let required = format!("{} is required", self.wire(field));
                *text = syn::LitStr::new(&required, text.span());
            }
        }
        fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
            let Ok(text) = mac.parse_body::<syn::LitStr>() else {
                return;
            };
            let Some(field) = text
                .value()
                .strip_prefix("error converting supplied value for ")
                .and_then(|rest| rest.strip_suffix(": {e}"))
                .map(str::to_string)
            else {
                return;
            };
            let named_already = self
                .fields
                .get(&(self.owner.clone(), field.clone()))
                .is_some_and(|ty| self.newtypes.iter().any(|n| mentions(ty, n)));
            let message = if named_already {
                "{e}".to_string()
            } else {
                format!("{}: {{e}}", escape_braces(&self.wire(&field)))
            };
            let message = syn::LitStr::new(&message, text.span());
            mac.tokens = quote::quote!(#message);
        }
    }
    for item in builders.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        let mut visitor = Members {
            owner: type_name(&imp.self_ty),
            members,
            fields: &fields,
            newtypes,
        };
        visitor.visit_item_impl_mut(imp);
    }
}

fn escape_braces(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

/// progenitor's operation builders: `Name: reason`, with the conversion's own reason.
fn name_parameter_refusals(
    builders: &mut [syn::Item],
    parameters: &BTreeMap<(String, String), (String, Value)>,
    newtypes: &BTreeSet<String>,
) {
    for item in builders.iter_mut() {
        let syn::Item::Impl(imp) = item else { continue };
        if imp.trait_.is_some() {
            continue;
        }
        let owner = type_name(&imp.self_ty);
        for item in imp.items.iter_mut() {
            let syn::ImplItem::Fn(setter) = item else {
                continue;
            };
            let field = setter.sig.ident.to_string();
            let wire = parameters
                .get(&(owner.clone(), field.clone()))
                .map_or_else(|| field.clone(), |(wire, _)| wire.clone());
            let mut conversion = Conversion {
                wire: &wire,
                target: None,
                newtypes,
                rewritten: false,
            };
            conversion.target = conversion_target(&setter.sig);
            conversion.visit_block_mut(&mut setter.block);
            if conversion.rewritten
                && let Some((param, target)) = conversion.target
            {
                let bound: syn::WherePredicate = syn::parse_quote! {
                    <#param as ::std::convert::TryInto<#target>>::Error: ::std::fmt::Display
                };
                setter
                    .sig
                    .generics
                    .make_where_clause()
                    .predicates
                    .push(bound);
            }
        }
    }
}

/// A setter's `V: TryInto<T>`: the type parameter and `T`.
fn conversion_target(sig: &syn::Signature) -> Option<(syn::Ident, syn::Type)> {
    for predicate in &sig.generics.where_clause.as_ref()?.predicates {
        let syn::WherePredicate::Type(pt) = predicate else {
            continue;
        };
        let syn::Type::Path(param) = &pt.bounded_ty else {
            continue;
        };
        let Some(param) = param.path.get_ident() else {
            continue;
        };
        for bound in &pt.bounds {
            let syn::TypeParamBound::Trait(t) = bound else {
                continue;
            };
            let Some(last) = t.path.segments.last() else {
                continue;
            };
            if last.ident != "TryInto" {
                continue;
            }
            if let syn::PathArguments::AngleBracketed(args) = &last.arguments
                && let Some(syn::GenericArgument::Type(target)) = args.args.first()
            {
                return Some((param.clone(), target.clone()));
            }
        }
    }
    None
}

struct Conversion<'a> {
    wire: &'a str,
    target: Option<(syn::Ident, syn::Type)>,
    newtypes: &'a BTreeSet<String>,
    rewritten: bool,
}

impl Conversion<'_> {
    /// The message of a failed conversion to the setter's target, `e` being its reason.
    fn message(&self) -> syn::Expr {
        let wire = escape_braces(self.wire);
        let target = self.target.as_ref().map(|(_, t)| t);
        let is = |name: &str| target.is_some_and(|t| mentions(t, name));
        if self.newtypes.iter().any(|n| is(n)) {
            return syn::parse_quote!(e.to_string());
        }
        let text = if is("Uuid") {
            format!("{wire} is not a UUID (such as 123e4567-e89b-12d3-a456-426614174000): {{e}}")
        } else if is("NaiveDate") {
            format!("{wire} is not a date (YYYY-MM-DD): {{e}}")
        } else {
            format!("{wire}: {{e}}")
        };
        syn::parse_quote!(::std::format!(#text))
    }
}

impl VisitMut for Conversion<'_> {
    fn visit_expr_closure_mut(&mut self, closure: &mut syn::ExprClosure) {
        // `|_| "conversion to `T` for p failed".to_string()`, possibly in a block
        let body = match &*closure.body {
            syn::Expr::Block(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Expr(expr, None)] => expr,
                _ => &*closure.body,
            },
            body => body,
        };
        let is_conversion = matches!(body, syn::Expr::MethodCall(m)
            if m.method == "to_string"
                && matches!(&*m.receiver, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(t), .. })
                    if t.value().starts_with("conversion to `")));
        if is_conversion && closure.inputs.len() == 1 {
            closure.inputs[0] = syn::parse_quote!(e);
            *closure.body = self.message();
            self.rewritten = true;
        } else {
            syn::visit_mut::visit_expr_closure_mut(self, closure);
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        // `format!("conversion to `T` for body failed: {}", s)`: the body's own reason names
        // its member already.
        let Ok(args) = mac.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) else {
            return;
        };
        let mut args = args.into_iter();
        let (
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(text),
                ..
            })),
            Some(reason),
        ) = (args.next(), args.next())
        else {
            return;
        };
        if text.value().starts_with("conversion to `") && text.value().ends_with("failed: {}") {
            mac.tokens = quote::quote!("{}", #reason);
        }
    }
}

/// Finds any string literal (plain or a macro's first argument) still holding
/// [`GENERATED_TEXT`].
#[derive(Default)]
struct LeftText {
    found: Option<String>,
}

impl<'ast> Visit<'ast> for LeftText {
    // Documentation quotes the description, whose words are not messages.
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_lit_str(&mut self, text: &'ast syn::LitStr) {
        self.check(&text.value());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.check(&mac.tokens.to_string());
    }
}

impl LeftText {
    fn check(&mut self, text: &str) {
        if self.found.is_none()
            && let Some(left) = GENERATED_TEXT.iter().find(|t| text.contains(**t))
        {
            self.found = Some(left.to_string());
        }
    }
}

#[cfg(test)]
mod tests;
