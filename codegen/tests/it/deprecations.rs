//! What a description deprecates reaches the user's compiler: `#[deprecated]` with the vendor's
//! note and the replacement it names, on `tests/data/deprecations.json` (a frozen document), and
//! the generated code's own uses allowed where they are.

use std::path::Path;

use creditdata_codegen::diff::{self, ChangeKind, Side};
use creditdata_codegen::pipeline::{self, Inputs, Outputs};
use serde_json::Value;

fn document() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/deprecations.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The pipeline's outputs for `doc`, without overlays.
fn run(doc: &Value) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("openapi.json");
    std::fs::write(&spec, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    let overlays = tempfile::tempdir().unwrap();
    pipeline::run(&Inputs {
        spec,
        overlays: overlays.path().to_path_buf(),
        lenient: false,
        display_root: dir.path().to_path_buf(),
    })
    .unwrap_or_else(|e| panic!("deprecations.json generates:\n{e}"))
}

/// The generated code of `tests/data/deprecations.json`, parsed.
fn generated() -> syn::File {
    syn::parse_file(&run(&document()).generated.code).expect("the generated code parses")
}

/// The `note` of the `#[deprecated]` among `attrs`, if any.
fn note(attrs: &[syn::Attribute]) -> Option<String> {
    let attr = attrs.iter().find(|a| a.path().is_ident("deprecated"))?;
    let mut note = None;
    attr.parse_nested_meta(|meta| {
        assert!(meta.path.is_ident("note"), "only a note");
        note = Some(meta.value()?.parse::<syn::LitStr>()?.value());
        Ok(())
    })
    .unwrap();
    Some(note.expect("a #[deprecated] always has a note"))
}

fn allows_deprecated(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("allow")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string() == "deprecated")
    })
}

/// Finds items by a path of names: `["Client", "fn get_report"]` is the method of an inherent
/// `impl Client`, `["types", "Widget"]` a type, `["types", "Widget", "colour"]` a field,
/// `["builder", "SearchWidgets", "fn owner_name"]` a builder's setter. Returns their attributes.
fn attrs_of(file: &syn::File, path: &[&str]) -> Vec<syn::Attribute> {
    fn in_items(items: &[syn::Item], path: &[&str]) -> Option<Vec<syn::Attribute>> {
        let (first, rest) = path.split_first()?;
        for item in items {
            match item {
                syn::Item::Mod(m) if m.ident == first && !rest.is_empty() => {
                    if let Some(found) = in_items(&m.content.as_ref()?.1, rest) {
                        return Some(found);
                    }
                }
                syn::Item::Enum(e) if e.ident == first && rest.is_empty() => {
                    return Some(e.attrs.clone());
                }
                syn::Item::Struct(s) if s.ident == first => match rest {
                    [] => return Some(s.attrs.clone()),
                    [field] => {
                        if let Some(f) = s
                            .fields
                            .iter()
                            .find(|f| f.ident.as_ref().is_some_and(|i| i == field))
                        {
                            return Some(f.attrs.clone());
                        }
                    }
                    _ => {}
                },
                syn::Item::Impl(imp)
                    if imp.trait_.is_none() && rest.len() == 1 && rest[0].starts_with("fn ") =>
                {
                    let syn::Type::Path(ty) = &*imp.self_ty else {
                        continue;
                    };
                    if ty.path.segments.last().is_some_and(|s| s.ident == first) {
                        for impl_item in &imp.items {
                            if let syn::ImplItem::Fn(f) = impl_item
                                && f.sig.ident == rest[0].trim_start_matches("fn ")
                            {
                                return Some(f.attrs.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        None
    }
    in_items(&file.items, path).unwrap_or_else(|| panic!("no generated item {}", path.join("::")))
}

fn note_of(file: &syn::File, path: &[&str]) -> Option<String> {
    note(&attrs_of(file, path))
}

#[test]
fn a_deprecated_operation_marks_its_method_and_builder_with_the_replacement_it_names() {
    let file = generated();
    let expected = "deprecated by the service: use the report; use `Client::get_report` instead";
    assert_eq!(
        note_of(&file, &["Client", "fn get_legacy_report"]).as_deref(),
        Some(expected)
    );
    assert_eq!(
        note_of(&file, &["builder", "GetLegacyReport"]).as_deref(),
        Some(expected)
    );
    // Speakeasy's extensions: the vendor's message and an operationId.
    assert_eq!(
        note_of(&file, &["Client", "fn get_parts"]).as_deref(),
        Some(
            "deprecated by the service: Parts will be removed in our next release; \
             use `Client::get_report` instead"
        )
    );
    // A description that says nothing about the deprecation is not repeated as if it did.
    assert_eq!(
        note_of(&file, &["Client", "fn get_audit"]).as_deref(),
        Some("deprecated by the service")
    );
    assert_eq!(note_of(&file, &["Client", "fn get_report"]), None);
    assert_eq!(note_of(&file, &["builder", "GetReport"]), None);
}

#[test]
fn a_deprecated_parameter_marks_its_setter() {
    let file = generated();
    assert_eq!(
        note_of(&file, &["builder", "SearchWidgets", "fn owner_name"]).as_deref(),
        Some("deprecated by the service: use Owner instead")
    );
    assert_eq!(
        note_of(&file, &["builder", "SearchWidgets", "fn region"]).as_deref(),
        Some("deprecated by the service: To be removed in 2.0")
    );
    assert_eq!(
        note_of(&file, &["builder", "SearchWidgets", "fn owner"]),
        None
    );
}

#[test]
fn a_deprecated_schema_marks_its_type_and_its_builder() {
    let file = generated();
    let expected = "deprecated by the service: Superseded by Report";
    assert_eq!(
        note_of(&file, &["types", "LegacyReport"]).as_deref(),
        Some(expected)
    );
    assert_eq!(
        note_of(&file, &["types", "builder", "LegacyReport"]).as_deref(),
        Some(expected)
    );
    assert_eq!(
        note_of(&file, &["types", "LegacyWidgetRequest"]).as_deref(),
        Some("deprecated by the service")
    );
    assert_eq!(note_of(&file, &["types", "Report"]), None);
}

#[test]
fn a_deprecated_member_marks_its_field_and_its_builder_setter() {
    let file = generated();
    let expected = "deprecated by the service: Use `color` instead";
    assert_eq!(
        note_of(&file, &["types", "Widget", "colour"]).as_deref(),
        Some(expected)
    );
    assert_eq!(
        note_of(&file, &["types", "builder", "Widget", "fn colour"]).as_deref(),
        Some(expected)
    );
    assert_eq!(note_of(&file, &["types", "Widget", "color"]), None);
    // An inline enum is hoisted into a type of its own (see `open_enums`): the deprecation stays
    // with the member.
    assert_eq!(
        note_of(&file, &["types", "Widget", "shade"]).as_deref(),
        Some("deprecated by the service: the colour says it")
    );
    assert_eq!(note_of(&file, &["types", "WidgetShade"]), None);
    assert_eq!(note_of(&file, &["types", "Widget"]), None);
}

/// Every item of the generated code that names a deprecated item allows it itself, so that the
/// generated code compiles without a deprecation warning even without the file-wide allowance;
/// and no item allows it without a reason.
#[test]
fn the_generated_code_allows_its_own_uses_narrowly() {
    let file = generated();
    // Uses of the deprecated operation: its method, its builder's impls, its `Operation` impl.
    assert!(allows_deprecated(&attrs_of(
        &file,
        &["Client", "fn get_legacy_report"]
    )));
    assert!(!allows_deprecated(&attrs_of(
        &file,
        &["Client", "fn get_report"]
    )));
    assert!(!allows_deprecated(&attrs_of(
        &file,
        &["builder", "GetLegacyReport"]
    )));

    /// Every impl block, as `Trait for Type` without spaces, and whether it allows deprecated.
    fn impls(items: &[syn::Item], out: &mut Vec<(String, bool)>) {
        for item in items {
            match item {
                syn::Item::Mod(m) => {
                    if let Some((_, items)) = &m.content {
                        impls(items, out)
                    }
                }
                syn::Item::Impl(imp) => {
                    let self_ty = &imp.self_ty;
                    let trait_ = imp
                        .trait_
                        .as_ref()
                        .map(|(path, _)| quote::quote!(#path).to_string());
                    let name = format!(
                        "{} for {}",
                        trait_.unwrap_or_default(),
                        quote::quote!(#self_ty)
                    )
                    .replace(' ', "");
                    out.push((name, allows_deprecated(&imp.attrs)));
                }
                _ => {}
            }
        }
    }
    let mut all = Vec::new();
    impls(&file.items, &mut all);
    let allowed: Vec<&String> = all.iter().filter(|(_, a)| *a).map(|(n, _)| n).collect();
    let not_allowed: Vec<&String> = all.iter().filter(|(_, a)| !*a).map(|(n, _)| n).collect();
    for expected in [
        "forGetLegacyReport<'a>",
        "crate::operation::Operationforsuper::builder::GetLegacyReport<'a>",
        // typify's conversions: of the deprecated type, and reading the deprecated field.
        "forLegacyReport",
        "::std::convert::From<super::Widget>forWidget",
    ] {
        assert!(
            allowed.iter().any(|i| *i == expected),
            "`impl {expected}` allows deprecated: {:#?}",
            allowed
        );
    }
    for expected in [
        "forGetReport<'a>",
        "crate::operation::Operationforsuper::builder::GetReport<'a>",
        "forReport",
    ] {
        assert!(
            not_allowed.iter().any(|i| *i == expected),
            "`impl {expected}` does not allow deprecated: {:#?}",
            not_allowed
        );
    }
    // A struct whose field has a deprecated type.
    assert!(allows_deprecated(&attrs_of(&file, &["types", "Widget"])));
    assert!(!allows_deprecated(&attrs_of(&file, &["types", "Report"])));
}

/// A release that deprecates an operation, parameters, schemas and members is compatible for
/// Rust code: `#[deprecated]` warns, it breaks nothing (RFC 1105 calls it a minor change), and
/// the comparison of the generated APIs finds no incompatible difference.
#[test]
fn deprecating_is_a_compatible_release() {
    fn undeprecated(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("deprecated");
                map.values_mut().for_each(undeprecated);
            }
            Value::Array(items) => items.iter_mut().for_each(undeprecated),
            _ => {}
        }
    }
    let new = document();
    let mut old = new.clone();
    undeprecated(&mut old);
    let (old, new) = (run(&old), run(&new));
    assert_ne!(
        old.generated.code, new.generated.code,
        "the release marks the code"
    );
    fn side(o: &Outputs) -> Side<'_> {
        Side {
            effective: &o.effective,
            published: None,
            code: Some(&o.generated.code),
        }
    }
    let report = diff::compare(&side(&old), &side(&new))
        .with_version("1.4.2")
        .unwrap();
    assert!(report.rust_api.checked);
    assert_eq!(report.rust_api.incompatible, Vec::<String>::new());
    assert!(!report.is_breaking(), "{}", report.to_text());
    assert_eq!(report.exit_code(), 3, "{}", report.to_text());
    let kinds: Vec<ChangeKind> = report.changes.iter().map(|c| c.kind).collect();
    assert!(
        kinds.contains(&ChangeKind::OperationDeprecated),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&ChangeKind::ParameterDeprecated),
        "{kinds:?}"
    );
    let semver = report.semver.expect("a version was given");
    assert_eq!(semver.suggested, "1.5.0", "{}", semver.rule);
    assert!(kinds.contains(&ChangeKind::SchemaDeprecated), "{kinds:?}");
    assert!(kinds.contains(&ChangeKind::MemberDeprecated), "{kinds:?}");
}
