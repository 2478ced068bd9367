//! The request limits of the description that the generated types cannot hold, as the tables
//! the client checks before sending (`generated-client/src/generated_limits.rs`, read by the
//! client's `limits.rs`): the range of every integer query parameter with a `minimum` or
//! `maximum`, the item counts of every array of a JSON request body with `minItems` or
//! `maxItems`, and every `format: email` member of one.
//!
//! The same limits become checks of each operation's typed values ([`TypedChecks`]): the
//! generated `send_with()` of an operation with a limit runs them before it builds the request
//! (`crate::call_methods` puts them there), so nothing re-reads the serialised request.
//!
//! Written by hand these tables repeated the description, and a release that added a bounded
//! parameter (`MaxAgeMonths`, 1 to 120) left the client unaware of it and its test red; generated,
//! they follow every regeneration and `cargo xtask check` keeps them true.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::document::{operations, resolve};

/// `minimum`/`maximum` of an integer query parameter (the other bound is the type's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryRange {
    pub operation: String,
    pub parameter: String,
    pub minimum: i64,
    pub maximum: i64,
}

/// `minItems`/`maxItems` of an array of a JSON request body, at a JSON pointer (`*` for every
/// item of an array).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayLength {
    pub operation: String,
    pub pointer: String,
    pub min_items: u64,
    pub max_items: Option<u64>,
}

/// A `format: email` member of a JSON request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailMember {
    pub operation: String,
    pub pointer: String,
}

/// The limits of an effective (OpenAPI 3.0) document, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestLimits {
    pub ranges: Vec<QueryRange>,
    pub arrays: Vec<ArrayLength>,
    pub emails: Vec<EmailMember>,
}

/// The limits `effective` states for requests.
pub fn limits(effective: &Value) -> RequestLimits {
    let mut limits = RequestLimits::default();
    for op in operations(effective) {
        let Some(id) = op.operation.get("operationId").and_then(Value::as_str) else {
            continue;
        };
        let parameters = op
            .operation
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .chain(
                op.item
                    .get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
        for parameter in parameters {
            let parameter = resolve(effective, parameter);
            if parameter.get("in").and_then(Value::as_str) != Some("query") {
                continue;
            }
            let Some(schema) = parameter.get("schema") else {
                continue;
            };
            let schema = resolve(effective, schema);
            let minimum = schema.get("minimum").and_then(Value::as_i64);
            let maximum = schema.get("maximum").and_then(Value::as_i64);
            if minimum.is_none() && maximum.is_none() {
                continue;
            }
            let Some(name) = parameter.get("name").and_then(Value::as_str) else {
                continue;
            };
            if limits
                .ranges
                .iter()
                .any(|r| r.operation == id && r.parameter == name)
            {
                continue;
            }
            limits.ranges.push(QueryRange {
                operation: id.to_string(),
                parameter: name.to_string(),
                minimum: minimum.unwrap_or(i64::MIN),
                maximum: maximum.unwrap_or(i64::MAX),
            });
        }
        let body = op
            .operation
            .get("requestBody")
            .map(|body| resolve(effective, body))
            .and_then(|body| body.pointer("/content/application~1json/schema"));
        if let Some(body) = body {
            walk(effective, body, String::new(), id, &mut limits, 0);
        }
    }
    limits
}

/// What one operation's generated `send_with()` checks on its typed values before it builds the
/// request: the ranges of its integer query parameters, and its body's arrays and e-mail
/// members (the rows of the tables, checked by `limits::check_body`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypedChecks {
    /// The operationId.
    pub operation: String,
    /// `(parameter as the description spells it, minimum, maximum)`.
    pub ranges: Vec<(String, i64, i64)>,
    /// Whether its body has a row in `ARRAY_LENGTHS` or `EMAIL_MEMBERS`.
    pub body: bool,
}

/// The checks of every operation with a limit, by operationId.
pub fn typed_checks(limits: &RequestLimits) -> BTreeMap<String, TypedChecks> {
    fn of<'c>(
        checks: &'c mut BTreeMap<String, TypedChecks>,
        operation: &str,
    ) -> &'c mut TypedChecks {
        checks
            .entry(operation.to_string())
            .or_insert_with(|| TypedChecks {
                operation: operation.to_string(),
                ..TypedChecks::default()
            })
    }
    let mut checks = BTreeMap::new();
    for range in &limits.ranges {
        of(&mut checks, &range.operation).ranges.push((
            range.parameter.clone(),
            range.minimum,
            range.maximum,
        ));
    }
    for operation in limits
        .arrays
        .iter()
        .map(|a| &a.operation)
        .chain(limits.emails.iter().map(|e| &e.operation))
    {
        of(&mut checks, operation).body = true;
    }
    checks
}

impl TypedChecks {
    /// The statements that check, given the variable holding each query parameter's typed value
    /// by its name on the wire (`Skip` → `skip`) and whether the send has a `body` variable; an
    /// error names a limit whose value the send does not hold.
    pub fn statements(
        &self,
        query: &BTreeMap<String, syn::Ident>,
        has_body: bool,
    ) -> Result<Vec<syn::Stmt>, String> {
        let operation = &self.operation;
        let mut statements = Vec::new();
        for (parameter, minimum, maximum) in &self.ranges {
            let Some(value) = query.get(parameter) else {
                return Err(format!(
                    "{operation} limits its query parameter `{parameter}`, which its `send()` \
                     does not send"
                ));
            };
            statements.push(syn::parse_quote! {
                crate::limits::check_range(#operation, #parameter, &#value, #minimum, #maximum)?;
            });
        }
        if self.body {
            if !has_body {
                return Err(format!(
                    "{operation} limits its request body, which its `send()` does not send"
                ));
            }
            statements.push(syn::parse_quote! {
                crate::limits::check_body(#operation, &body)?;
            });
        }
        Ok(statements)
    }
}

/// How deep a body schema is followed (a recursive schema stops here).
const MAX_DEPTH: usize = 16;

fn walk(
    document: &Value,
    schema: &Value,
    pointer: String,
    operation: &str,
    limits: &mut RequestLimits,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = resolve(document, schema);
    if schema.get("format").and_then(Value::as_str) == Some("email") {
        limits.emails.push(EmailMember {
            operation: operation.to_string(),
            pointer: pointer.clone(),
        });
    }
    let min = schema.get("minItems").and_then(Value::as_u64);
    let max = schema.get("maxItems").and_then(Value::as_u64);
    if min.is_some() || max.is_some() {
        limits.arrays.push(ArrayLength {
            operation: operation.to_string(),
            pointer: pointer.clone(),
            min_items: min.unwrap_or(0),
            max_items: max,
        });
    }
    if let Some(items) = schema.get("items") {
        walk(
            document,
            items,
            format!("{pointer}/*"),
            operation,
            limits,
            depth + 1,
        );
    }
    for (name, member) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let escaped = name.replace('~', "~0").replace('/', "~1");
        walk(
            document,
            member,
            format!("{pointer}/{escaped}"),
            operation,
            limits,
            depth + 1,
        );
    }
}

/// `generated_limits.rs`: `header`, then the three tables of the client's `limits.rs`.
pub fn generate(effective: &Value, header: &str) -> String {
    let limits = limits(effective);
    let mut out = String::from(header);
    out.push_str(
        "\n//! Contracts (generated): the request limits of the description the generated types \
         cannot hold,\n//! checked before sending by `limits.rs` (`codegen/src/request_limits.rs`).\n\n\
         use crate::limits::rows::{ArrayLength, EmailMember, QueryRange};\n\n\
         /// `minimum`/`maximum` of the integer query parameters.\n\
         pub const QUERY_RANGES: &[QueryRange] = &[\n",
    );
    for r in &limits.ranges {
        let _ = writeln!(
            out,
            "    QueryRange {{\n        operation: {:?},\n        parameter: {:?},\n        minimum: {},\n        maximum: {},\n    }},",
            r.operation,
            r.parameter,
            bound(r.minimum),
            bound(r.maximum)
        );
    }
    out.push_str(
        "];\n\n/// `minItems`/`maxItems` of the arrays in request bodies.\n\
         pub const ARRAY_LENGTHS: &[ArrayLength] = &[\n",
    );
    for a in &limits.arrays {
        let max = match a.max_items {
            Some(max) => format!("Some({max})"),
            None => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    ArrayLength {{\n        operation: {:?},\n        pointer: {:?},\n        min_items: {},\n        max_items: {max},\n    }},",
            a.operation, a.pointer, a.min_items
        );
    }
    out.push_str(
        "];\n\n/// `format: email` members of request bodies.\n\
         pub const EMAIL_MEMBERS: &[EmailMember] = &[\n",
    );
    for e in &limits.emails {
        let _ = writeln!(
            out,
            "    EmailMember {{\n        operation: {:?},\n        pointer: {:?},\n    }},",
            e.operation, e.pointer
        );
    }
    out.push_str("];\n");
    out
}

/// An `i64` bound as Rust source (the type's own bounds by name).
fn bound(value: i64) -> String {
    match value {
        i64::MIN => "i64::MIN".to_string(),
        i64::MAX => "i64::MAX".to_string(),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounded_query_integers_body_arrays_and_email_members_are_found() {
        let doc = json!({"openapi": "3.0.3", "paths": {
            "/v1/things": {
                "get": {"operationId": "GetThings", "parameters": [
                    {"name": "Take", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
                    {"name": "Free", "in": "query", "schema": {"type": "integer"}},
                    {"name": "Id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}}
                ]},
                "post": {"operationId": "MakeThing", "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Make"}}}}}
            }
        }, "components": {"schemas": {
            "Make": {"type": "object", "properties": {
                "owner": {"type": "string", "format": "email"},
                "parts": {"type": "array", "minItems": 1, "maxItems": 5, "items": {"$ref": "#/components/schemas/Part"}}
            }},
            "Part": {"type": "object", "properties": {"tags": {"type": "array", "minItems": 1, "items": {"type": "string"}}}}
        }}});
        let found = limits(&doc);
        assert_eq!(
            found.ranges,
            [QueryRange {
                operation: "GetThings".into(),
                parameter: "Take".into(),
                minimum: 1,
                maximum: 100
            }]
        );
        assert_eq!(
            found
                .arrays
                .iter()
                .map(|a| (a.pointer.as_str(), a.min_items, a.max_items))
                .collect::<Vec<_>>(),
            [("/parts", 1, Some(5)), ("/parts/*/tags", 1, None)]
        );
        assert_eq!(found.emails[0].pointer, "/owner");
        let code = generate(&doc, "// header\n");
        assert!(code.contains("parameter: \"Take\""), "{code}");
        assert!(code.contains("max_items: None"), "{code}");
        syn::parse_file(&code).expect("the generated tables are Rust");
    }
}
