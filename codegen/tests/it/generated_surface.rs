//! The checked-in outputs of the pipeline: the invariants the generator relies on, whatever the
//! description says.
//!
//! These tests read the checked-in files; `cargo xtask check` is what proves those files are what
//! the pipeline produces today. What the surface *is* (the effective document, `SURFACE.md`, one
//! line per operation) is an output `regen` writes and `check` compares, reviewed in the diff of
//! the regeneration: no snapshot or count here repeats it, so a vendor release does not turn
//! these tests red.

use std::collections::BTreeSet;
use std::path::PathBuf;

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;

const HTTP_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn workspace_file(relative: &str) -> (PathBuf, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    (path, text)
}

fn effective_document() -> Value {
    let (path, text) = workspace_file("spec/openapi.effective.json");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// `(METHOD, path, operationId)` of every operation, in document order.
fn operations(doc: &Value) -> Vec<(String, String, String)> {
    let paths = doc["paths"].as_object().expect("`paths` is an object");
    let mut found = Vec::new();
    for (path, item) in paths {
        for method in HTTP_METHODS {
            if let Some(operation) = item.get(method) {
                let id = operation["operationId"].as_str().unwrap_or_else(|| {
                    panic!("{} {path} has no operationId", method.to_uppercase())
                });
                found.push((method.to_uppercase(), path.clone(), id.to_string()));
            }
        }
    }
    found
}

#[test]
fn effective_document_is_openapi_3_0_with_every_operation_uniquely_named() {
    let doc = effective_document();
    let version = doc["openapi"].as_str().expect("`openapi` is a string");
    assert!(
        version.starts_with("3.0."),
        "progenitor reads OpenAPI 3.0.x only; the effective document says {version}"
    );

    let operations = operations(&doc);
    // Every published operation reaches the generator (overlays may add more, never drop one).
    let (_, published) = workspace_file("spec/openapi.json");
    let published: Value = serde_json::from_str(&published).unwrap();
    for op in creditdata_codegen::document::operations(&published) {
        let (method, path) = (op.method.to_uppercase(), op.path.to_string());
        assert!(
            operations
                .iter()
                .any(|(m, p, _)| *m == method && *p == path),
            "{method} {path} is published but not in the effective document"
        );
    }
    let mut seen = BTreeSet::new();
    for (method, path, id) in &operations {
        assert!(
            seen.insert(id.as_str()),
            "operationId {id} ({method} {path}) is used twice"
        );
        assert_eq!(
            &id.to_upper_camel_case(),
            id,
            "operationId {id} ({method} {path}) is not PascalCase"
        );
    }
}

#[test]
fn generated_code_has_its_header_and_a_builder_per_operation() {
    let (_, generated) = workspace_file("generated-client/src/generated.rs");
    let first_line = generated.lines().next().unwrap_or_default();
    assert!(
        first_line.starts_with("// @generated"),
        "generated.rs must start with the `// @generated` header, not {first_line:?}"
    );

    for (method, path, id) in operations(&effective_document()) {
        // progenitor names the method after the snake_case operationId and its builder after
        // that name in PascalCase.
        let method_name = id.to_snake_case();
        let builder = method_name.to_upper_camel_case();
        assert_eq!(
            builder, id,
            "{method} {path}: the builder of {id} would be named {builder}"
        );
        assert!(
            generated.contains(&format!("pub struct {builder}<'a>")),
            "{method} {path}: generated.rs has no builder `{builder}` for {id}"
        );
        assert!(
            generated.contains(&format!("pub fn {method_name}(")),
            "{method} {path}: generated.rs has no `Client::{method_name}` for {id}"
        );
        assert!(
            generated.contains(&format!("id: \"{id}\"")),
            "{method} {path}: generated.rs's operation table does not list {id}"
        );
    }
}

/// What `codegen/src/lean_requests.rs` and `call_methods.rs` leave behind when they understood
/// every `send()`: each became a `send_with()` that ends in the runtime's one door (no hooks, no
/// status arms), with no URL `format!`, no header map of its own, no path value made text
/// through a `String`. A new
/// progenitor whose code the pass no longer recognizes still generates a correct client, but a
/// slower one: this test is where that shows.
#[test]
fn every_request_is_built_the_lean_way() {
    let (_, generated) = workspace_file("generated-client/src/generated.rs");
    let compact: String = generated.split_whitespace().collect();
    let sends = compact.matches("pubfnsend_with(").count();
    assert_eq!(
        sends,
        operations(&effective_document()).len(),
        "one send_with() per operation"
    );
    assert_eq!(
        compact.matches("crate::runtime::send::<").count(),
        sends,
        "each send_with() ends in the one door"
    );
    for left in [
        "pubasyncfnsend(",
        "OperationInfo{",
        "client.pre(",
        "client.exec(",
        "Error::ErrorResponse",
        "ResponseValue::from_response",
        "format!(\"{}/",
        "HeaderMap::with_capacity",
        ".headers(header_map)",
        "encode_path(",
        // Every path value of this document is a `Uuid` or a `String`: neither needs one.
        ".to_string(),&[",
    ] {
        assert!(
            !compact.contains(left),
            "generated.rs still contains `{left}`"
        );
    }
    // Every URL is one `concat()` of the base URL and the path's parts.
    assert_eq!(
        compact.matches("[client.baseurl.as_str(),").count(),
        sends,
        "one joined URL per send()"
    );
}

/// What `codegen/src/field_messages.rs` removes: the generators' own wording of a refused value
/// (which names Rust types and fields, not the description's members), and a validating
/// newtype's refusal that names no field. The pass fails generation when any is left; this
/// reads the checked-in file, so an out-of-date one shows too.
#[test]
fn no_refusal_in_the_generated_code_speaks_of_the_generated_code() {
    let (_, generated) = workspace_file("generated-client/src/generated.rs");
    for left in [
        "conversion to `",
        "error converting supplied value for ",
        "no value supplied for ",
        "Err(\"doesn't match",
        "Err(\"longer than",
        "Err(\"shorter than",
    ] {
        assert!(
            !generated.contains(left),
            "generated.rs still contains `{left}`"
        );
    }
    // The e-mail member of the description became a newtype that checks its value.
    let emails = generated
        .matches("crate::email::is_email_address(value)")
        .count();
    assert!(emails >= 1, "no e-mail newtype checks its value");
}

#[test]
fn surface_lists_each_operation_once() {
    let (_, surface) = workspace_file("generated-client/SURFACE.md");
    let lines: Vec<&str> = surface
        .lines()
        .filter(|line| {
            HTTP_METHODS
                .iter()
                .any(|m| line.starts_with(&format!("{} /", m.to_uppercase())))
        })
        .collect();
    let operations = operations(&effective_document());
    assert_eq!(
        lines.len(),
        operations.len(),
        "SURFACE.md: one line per operation"
    );
    for (method, path, id) in operations {
        let prefix = format!("{method} {path} → {}(", id.to_snake_case());
        let matching = lines
            .iter()
            .filter(|line| line.starts_with(&prefix))
            .count();
        assert_eq!(
            matching, 1,
            "SURFACE.md: expected one line starting with {prefix:?}"
        );
    }
}

/// `get_categorizations` and whatever else the description deprecates: in the checked-in
/// `generated.rs`, each `Client` method and builder of a deprecated operation carries
/// `#[deprecated]` with the service's note, and no other does, so a program calling a
/// deprecated operation gets the compiler's warning (not only a sentence in its rustdoc).
#[test]
fn the_client_methods_of_deprecated_operations_are_deprecated_for_the_compiler() {
    let (_, generated) = workspace_file("generated-client/src/generated.rs");
    let file = syn::parse_file(&generated).expect("generated.rs parses");
    let deprecation_note = |attrs: &[syn::Attribute]| -> Option<String> {
        let attr = attrs.iter().find(|a| a.path().is_ident("deprecated"))?;
        let mut note = String::new();
        attr.parse_nested_meta(|meta| {
            note = meta.value()?.parse::<syn::LitStr>()?.value();
            Ok(())
        })
        .expect("#[deprecated(note = \"...\")]");
        Some(note)
    };
    let mut methods = std::collections::BTreeMap::new();
    let mut builders = std::collections::BTreeMap::new();
    for item in &file.items {
        match item {
            syn::Item::Impl(imp) if imp.trait_.is_none() => {
                let self_ty = &imp.self_ty;
                if quote::quote!(#self_ty).to_string() != "Client" {
                    continue;
                }
                for item in &imp.items {
                    if let syn::ImplItem::Fn(f) = item {
                        methods.insert(f.sig.ident.to_string(), deprecation_note(&f.attrs));
                    }
                }
            }
            syn::Item::Mod(m) if m.ident == "builder" => {
                for item in &m.content.as_ref().expect("inline module").1 {
                    if let syn::Item::Struct(s) = item {
                        builders.insert(s.ident.to_string(), deprecation_note(&s.attrs));
                    }
                }
            }
            _ => {}
        }
    }
    let doc = effective_document();
    for (method, path, id) in operations(&doc) {
        let deprecated = doc["paths"][&path][method.to_lowercase()]["deprecated"] == true;
        let method_note = methods
            .get(&id.to_snake_case())
            .unwrap_or_else(|| panic!("no Client::{}", id.to_snake_case()));
        let builder_note = builders
            .get(&id.to_upper_camel_case())
            .unwrap_or_else(|| panic!("no builder::{}", id.to_upper_camel_case()));
        if deprecated {
            let note = method_note.as_deref().unwrap_or_else(|| {
                panic!("{method} {path} ({id}) is deprecated; its method is not")
            });
            assert!(
                note.starts_with("deprecated by the service"),
                "{id}: {note}"
            );
            assert_eq!(builder_note, method_note, "{id}: the builder says the same");
        } else {
            assert_eq!(
                method_note, &None,
                "{method} {path} ({id}) is not deprecated"
            );
            assert_eq!(
                builder_note, &None,
                "{method} {path} ({id}) is not deprecated"
            );
        }
    }
}

/// A score's values say what a lending decision needs to know about them, and that what the
/// service does not publish (scale, range, which direction is better) is not published, rather
/// than leave a reader to guess (`overlays/11-dataset-field-docs.overlay.yaml`).
#[test]
fn score_values_say_which_direction_is_better_or_that_it_is_not_published() {
    let doc = effective_document();
    for member in ["originalValue", "normalizedValue"] {
        let description =
            doc["components"]["schemas"]["Score"]["properties"][member]["description"]
                .as_str()
                .unwrap_or_else(|| panic!("Score.{member} has no description"));
        assert!(
            description.contains("better") && description.contains("not published"),
            "Score.{member}: {description}"
        );
    }
    let (_, generated) = workspace_file("generated-client/src/generated.rs");
    assert!(
        generated.contains("whether a higher or a lower value is better are not published"),
        "the generated docs lack the score's description"
    );
}
