//! Makes every path parameter exactly one path segment, or refuses it.
//!
//! progenitor builds each request URL with `format!("{}/v1/sessions/{}/...", client.baseurl,
//! encode_path(&session_id.to_string()), ...)`. Its `encode_path` leaves `\` as it is, and URL
//! resolution reads `\` as `/` and removes `.`/`..` segments: an attachment id
//! `..\..\S2\attachments\A2` reaches another session's attachment. By the time a runtime hook sees
//! the request, the URL is already resolved and has the right shape, so the check has to happen
//! where the segment is made.
//!
//! This pass replaces every such `encode_path(&p.to_string())` by
//! `crate::runtime::path_segment("p", &p.to_string(), &[...])?`: the client's strict encoder,
//! which refuses empty, `.`, `..`, `/`, `\`, `%` and control characters with an
//! `InvalidRequest` naming the parameter. The list holds the literal segments other operations
//! have at the parameter's place in a path of the same shape (`transactions` for
//! `account-statements/{accountStatementId}/excel`, because of
//! `account-statements/transactions/excel`), which the encoder refuses too: such a value would
//! reach the other operation.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;

/// The pass could not understand progenitor's URL-building code.
#[derive(Debug, thiserror::Error)]
#[error(
    "progenitor's URL-building code no longer has the shape codegen/src/path_segments.rs \
     rewrites ({0}); update that pass for the new progenitor version"
)]
pub struct PathSegmentError(String);

/// One segment of a path template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    /// A segment that holds a parameter (alone, or with literal text around it).
    Parameter,
}

/// Rewrites every `encode_path` call of `file` (see the [module documentation](self)).
pub fn checked_path_segments(file: &mut syn::File) -> Result<(), PathSegmentError> {
    let mut collect = Templates::default();
    collect.visit_file_mut(file);
    if let Some(problem) = collect.problem {
        return Err(PathSegmentError(problem));
    }
    let mut rewrite = Rewrite {
        templates: collect.templates,
        problem: None,
        rewritten: 0,
    };
    rewrite.visit_file_mut(file);
    if let Some(problem) = rewrite.problem {
        return Err(PathSegmentError(problem));
    }
    let mut leftovers = Leftovers::default();
    leftovers.visit_file_mut(file);
    if leftovers.calls > 0 {
        return Err(PathSegmentError(format!(
            "{} call(s) of encode_path outside a `format!` URL",
            leftovers.calls
        )));
    }
    Ok(())
}

/// The URL `format!` calls of the file and their path templates.
#[derive(Default)]
struct Templates {
    templates: Vec<Vec<Segment>>,
    problem: Option<String>,
}

impl VisitMut for Templates {
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        match url_format(mac) {
            Ok(Some((template, _))) => self.templates.push(template),
            Ok(None) => {}
            Err(problem) => {
                self.problem.get_or_insert(problem);
            }
        }
    }
}

/// The arguments of a `format!`.
type FormatArgs = Punctuated<syn::Expr, syn::Token![,]>;

/// `mac`'s path template and arguments, when it is a `format!` that builds a URL with
/// `encode_path`.
fn url_format(mac: &syn::Macro) -> Result<Option<(Vec<Segment>, FormatArgs)>, String> {
    if !mac.path.is_ident("format") || !mentions_encode_path(&mac.tokens) {
        return Ok(None);
    }
    let args = mac
        .parse_body_with(FormatArgs::parse_terminated)
        .map_err(|e| format!("a format! with encode_path does not parse: {e}"))?;
    let Some(syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(text),
        ..
    })) = args.first()
    else {
        return Err("a format! with encode_path has no literal format string".into());
    };
    let text = text.value();
    let Some(path) = text.strip_prefix("{}") else {
        return Err(format!(
            "the URL format {text:?} does not start with the base URL"
        ));
    };
    let template = path
        .trim_start_matches('/')
        .split('/')
        .map(|segment| {
            if segment.contains("{}") {
                Segment::Parameter
            } else {
                Segment::Literal(segment.to_string())
            }
        })
        .collect();
    Ok(Some((template, args)))
}

fn mentions_encode_path(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "encode_path",
        proc_macro2::TokenTree::Group(group) => mentions_encode_path(&group.stream()),
        _ => false,
    })
}

/// The literal segments of other templates that a value of the parameter at `position` of
/// `template` could stand for: templates of the same length whose other segments are
/// compatible (equal literals, or a parameter on either side).
fn reserved_literals(template: &[Segment], position: usize, all: &[Vec<Segment>]) -> Vec<String> {
    let mut reserved = BTreeSet::new();
    for other in all {
        if other.len() != template.len() {
            continue;
        }
        let Segment::Literal(literal) = &other[position] else {
            continue;
        };
        let compatible = template
            .iter()
            .zip(other)
            .enumerate()
            .filter(|(i, _)| *i != position)
            .all(|(_, pair)| match pair {
                (Segment::Literal(a), Segment::Literal(b)) => a.eq_ignore_ascii_case(b),
                _ => true,
            });
        if compatible {
            reserved.insert(literal.clone());
        }
    }
    reserved.into_iter().collect()
}

struct Rewrite {
    templates: Vec<Vec<Segment>>,
    problem: Option<String>,
    rewritten: usize,
}

impl VisitMut for Rewrite {
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        if self.problem.is_some() {
            return;
        }
        match self.rewrite(mac) {
            Ok(()) => {}
            Err(problem) => self.problem = Some(problem),
        }
    }
}

impl Rewrite {
    fn rewrite(&mut self, mac: &mut syn::Macro) -> Result<(), String> {
        let Some((template, mut args)) = url_format(mac)? else {
            return Ok(());
        };
        // The segments holding a parameter, in order: the format's `{}` after the base URL.
        let positions: Vec<usize> = template
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == Segment::Parameter)
            .map(|(i, _)| i)
            .collect();
        let values: Vec<&mut syn::Expr> = args.iter_mut().skip(2).collect();
        if values.len() != positions.len() {
            return Err(format!(
                "a URL format has {} path parameters but {} values",
                positions.len(),
                values.len()
            ));
        }
        for (value, position) in values.into_iter().zip(positions) {
            let parameter = encoded_parameter(value)?;
            let reserved = reserved_literals(&template, position, &self.templates);
            let name = parameter.to_string();
            let argument = match value {
                syn::Expr::Call(call) => call.args.first().cloned(),
                _ => None,
            }
            .ok_or_else(|| format!("encode_path for `{name}` has no argument"))?;
            *value = syn::parse2(quote! {
                crate::runtime::path_segment(#name, #argument, &[#(#reserved),*])?
            })
            .map_err(|e| format!("the checked segment for `{name}` does not parse: {e}"))?;
            self.rewritten += 1;
        }
        mac.tokens = quote!(#args);
        Ok(())
    }
}

/// `p` of `encode_path(&p.to_string())`.
fn encoded_parameter(value: &syn::Expr) -> Result<syn::Ident, String> {
    let syn::Expr::Call(call) = value else {
        return Err("a path value is not a call of encode_path".into());
    };
    let is_encode_path =
        matches!(&*call.func, syn::Expr::Path(p) if p.path.is_ident("encode_path"));
    let argument = call.args.first().filter(|_| call.args.len() == 1);
    let receiver = match argument {
        Some(syn::Expr::Reference(reference)) => match &*reference.expr {
            syn::Expr::MethodCall(method) if method.method == "to_string" => {
                Some(&*method.receiver)
            }
            _ => None,
        },
        _ => None,
    };
    match (is_encode_path, receiver) {
        (true, Some(syn::Expr::Path(path))) => path
            .path
            .get_ident()
            .cloned()
            .ok_or_else(|| "encode_path of a path that is not a parameter name".into()),
        _ => Err("a path value is not `encode_path(&parameter.to_string())`".into()),
    }
}

/// Counts `encode_path` calls left anywhere (expressions and macro bodies).
#[derive(Default)]
struct Leftovers {
    calls: usize,
}

impl VisitMut for Leftovers {
    fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
        if matches!(&*call.func, syn::Expr::Path(p) if p.path.is_ident("encode_path")) {
            self.calls += 1;
        }
        syn::visit_mut::visit_expr_call_mut(self, call);
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        if mentions_encode_path(&mac.tokens) {
            self.calls += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(code: TokenStream) -> String {
        let mut file: syn::File = syn::parse2(code).unwrap();
        checked_path_segments(&mut file).unwrap();
        prettyplease::unparse(&file)
    }

    #[test]
    fn every_parameter_goes_through_the_checked_encoder_with_its_sibling_literals() {
        let text = rewritten(quote! {
            fn one() {
                let url = format!(
                    "{}/v1/sessions/{}/account-statements/{}/excel",
                    client.baseurl,
                    encode_path(&session_id.to_string()),
                    encode_path(&account_statement_id.to_string()),
                );
            }
            fn two() {
                let url = format!(
                    "{}/v1/sessions/{}/account-statements/transactions/excel",
                    client.baseurl,
                    encode_path(&session_id.to_string()),
                );
            }
            fn three() {
                let url = format!("{}/v1/sessions", client.baseurl);
            }
        });
        // Macro bodies print as token streams: compare without whitespace.
        let compact: String = text.split_whitespace().collect();
        for expected in [
            r#"crate::runtime::path_segment("account_statement_id",&account_statement_id.to_string(),&["transactions"])?"#,
            r#"crate::runtime::path_segment("session_id",&session_id.to_string(),&[])?"#,
            r#"format!("{}/v1/sessions",client.baseurl)"#,
        ] {
            assert!(compact.contains(expected), "{expected} in {text}");
        }
        assert!(!text.contains("encode_path"), "{text}");
    }

    #[test]
    fn an_unexpected_shape_is_an_error_not_a_silent_skip() {
        let mut file: syn::File = syn::parse2(quote! {
            fn f() {
                let url = format!("{}/v1/x/{}", client.baseurl, encode_path(id));
            }
        })
        .unwrap();
        let error = checked_path_segments(&mut file).unwrap_err().to_string();
        assert!(error.contains("path_segments.rs"), "{error}");

        let mut file: syn::File = syn::parse2(quote! {
            fn f() { let s = encode_path(&id.to_string()); }
        })
        .unwrap();
        assert!(checked_path_segments(&mut file).is_err());
    }
}
