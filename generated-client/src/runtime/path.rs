//! Path parameters as single, percent-encoded path segments: what the generated code calls for
//! every path parameter, below it.

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters a path segment carries as they are: RFC 3986's unreserved ones. Everything else
/// is percent-encoded.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `value` of path parameter `parameter` as one percent-encoded path segment, or the reason it
/// cannot be one (see the [module documentation](self)). `reserved` lists the literal segments
/// other operations have at this parameter's place in the path (compared ignoring ASCII case,
/// as the service's routing does). The generated code calls this for every path parameter.
// The client's `Error`, which the generated `send_with()` returns with `?`.
// Public but hidden: plumbing of the generated code, which a client generated from another
// description (the tests' `tests/decoding/release.rs`) calls from outside the crate.
#[doc(hidden)]
pub fn path_segment<'v>(
    parameter: &'static str,
    value: &'v str,
    reserved: &[&str],
) -> Result<Cow<'v, str>, crate::Error> {
    // The common case (a UUID, a plain id) in one pass over the bytes, borrowed as it is:
    // every byte unreserved means nothing to encode and no `/`, `\`, `%` or control character.
    if !value.is_empty()
        && value != "."
        && value != ".."
        && value.bytes().all(is_unreserved)
        && !reserved
            .iter()
            .any(|literal| literal.eq_ignore_ascii_case(value))
    {
        return Ok(Cow::Borrowed(value));
    }
    let problem = if value.is_empty() {
        Some("is empty".to_string())
    } else if value == "." || value == ".." {
        Some(format!("is `{value}`, which URL resolution removes"))
    } else if let Some(c) = value
        .chars()
        .find(|c| matches!(c, '/' | '\\' | '%') || c.is_control())
    {
        Some(match c {
            '%' => "contains `%` (pass ids decoded: the client percent-encodes them)".to_string(),
            '/' | '\\' => format!("contains `{c}`, which URLs read as a path separator"),
            c => format!("contains the control character U+{:04X}", u32::from(c)),
        })
    } else {
        reserved
            .iter()
            .find(|literal| literal.eq_ignore_ascii_case(value))
            .map(|literal| {
                format!(
                    "is `{literal}`, which is where another operation's path has the literal \
                     segment `{literal}`: the request would reach that operation"
                )
            })
    };
    match problem {
        None => Ok(Cow::Owned(
            utf8_percent_encode(value, PATH_SEGMENT).to_string(),
        )),
        Some(problem) => Err(crate::Error::InvalidRequest {
            operation: None,
            message: format!(
                "path parameter `{parameter}` {problem}; an id must stay one path segment, so the \
             request was not sent"
            ),
        }),
    }
}

/// RFC 3986's unreserved characters, which [`PATH_SEGMENT`] leaves as they are.
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests {
    use super::*;

    type Segment<'v> = Result<Cow<'v, str>, crate::Error>;

    #[test]
    fn plain_ids_pass_as_they_are_and_others_are_encoded_or_refused() {
        let uuid = "6f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e";
        let segment: Segment = path_segment("session_id", uuid, &[]);
        assert!(matches!(segment, Ok(Cow::Borrowed(s)) if s == uuid));
        let segment: Segment = path_segment("id", "v1.2..3", &[]);
        assert!(matches!(segment, Ok(Cow::Borrowed("v1.2..3"))));
        let segment: Segment = path_segment("id", "a b+ü", &[]);
        assert_eq!(segment.unwrap(), "a%20b%2B%C3%BC");
        for refused in ["", ".", "..", "a/b", "a\\b", "a%2e", "a\nb"] {
            let segment: Segment = path_segment("id", refused, &[]);
            assert!(
                matches!(segment, Err(crate::Error::InvalidRequest { .. })),
                "{refused:?}"
            );
        }
        let segment: Segment =
            path_segment("account_statement_id", "Transactions", &["transactions"]);
        assert!(matches!(
            segment,
            Err(crate::Error::InvalidRequest { message: m, .. }) if m.contains("literal segment `transactions`")
        ));
    }
}
