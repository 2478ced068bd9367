//! The names progenitor derives from the document, mirrored so collisions are found before it
//! writes code that does not compile.

use heck::{ToPascalCase, ToSnakeCase};

#[derive(Clone, Copy)]
pub(crate) enum Case {
    Pascal,
    Snake,
}

/// progenitor's `util::sanitize`. It tests characters with `unicode_ident`; this copy is exact
/// for ASCII and uses `char::is_alphanumeric` beyond it, close enough for operation and
/// parameter names.
pub(crate) fn sanitize(input: &str, case: Case) -> String {
    let to_case = |s: &str| match case {
        Case::Pascal => s.to_pascal_case(),
        Case::Snake => s.to_snake_case(),
    };
    let out = match input {
        "+1" => "plus1".to_string(),
        "-1" => "minus1".to_string(),
        _ => to_case(
            &input
                .replace('\'', "")
                .replace(|c: char| !is_xid_continue(c), "-"),
        ),
    };
    let out = match out.chars().next() {
        None => to_case("x"),
        Some(c) if is_xid_start(c) => out,
        Some(_) => format!("_{out}"),
    };
    if is_keyword(&out) {
        format!("{out}_")
    } else {
        out
    }
}

fn is_xid_start(c: char) -> bool {
    c.is_ascii_alphabetic() || (!c.is_ascii() && c.is_alphabetic())
}

fn is_xid_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && c.is_alphanumeric())
}

/// typify's `accept_as_ident` list, which progenitor's `sanitize` consults.
fn is_keyword(ident: &str) -> bool {
    matches!(
        ident,
        "_" | "abstract"
            | "as"
            | "async"
            | "await"
            | "become"
            | "box"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "do"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "final"
            | "fn"
            | "for"
            | "gen"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "macro"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "override"
            | "priv"
            | "pub"
            | "ref"
            | "return"
            | "Self"
            | "self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "try"
            | "type"
            | "typeof"
            | "unsafe"
            | "unsized"
            | "use"
            | "virtual"
            | "where"
            | "while"
            | "yield"
    )
}

/// The identifiers one operationId becomes: the client method (snake case) and the builder
/// struct (PascalCase of that). Two operations sharing either write code that does not compile.
pub(crate) fn operation_idents(operation_id: &str) -> (String, String) {
    let method = sanitize(operation_id, Case::Snake);
    let builder = sanitize(&method, Case::Pascal);
    (method, builder)
}

/// Inherent methods of the generated `Client`; an operation method of the same name is a
/// duplicate definition.
pub(crate) const CLIENT_METHODS: &[&str] = &["new", "new_with_client"];
