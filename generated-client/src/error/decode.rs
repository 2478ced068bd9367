//! [`DecodeError`]: a success body that did not match its type, described without quoting it.

use std::fmt;

use super::operation_name::op_name;

/// A success body that did not match its type.
///
/// Its `Display` and `Debug` name the operation, the path in the body and the kind of mismatch
/// (`invalid type: integer, expected a string`), never a value of the body: bodies carry
/// personal data. [`body_snippet`](Self::body_snippet) gives the body around the failure to
/// whoever asks for it explicitly.
#[derive(Clone)]
pub struct DecodeError {
    /// The operation, when known.
    pub operation: Option<&'static str>,
    /// Where in the body decoding failed, as a path (`sessions[3].createdAtUtc`), when known.
    pub path: Option<String>,
    /// What the decoder said, with the values it quoted from the body removed.
    pub message: String,
    /// A bounded excerpt of the body around the failure (see `body_snippet`).
    pub(crate) snippet: String,
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("operation", &self.operation)
            .field("path", &self.path)
            .field("message", &self.message)
            .field("snippet_len", &self.snippet.chars().count())
            .finish()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the response body does not match its type",
            op_name(&self.operation)
        )?;
        if let Some(path) = &self.path {
            write!(f, " at `{path}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// A decode error that quotes nothing of the body.
    pub(crate) fn new(
        operation: Option<&'static str>,
        path: Option<String>,
        message: String,
    ) -> Self {
        DecodeError {
            operation,
            path,
            message,
            snippet: String::new(),
        }
    }

    /// At most about 120 characters of the body around the failure, for debugging. This is
    /// the service's data as received, personal data included: it is never part of the
    /// error's `Display` or `Debug` output, and should not be logged where personal data may
    /// not go. Empty when the failure has no position in a body.
    pub fn body_snippet(&self) -> &str {
        &self.snippet
    }

    /// Describes why `body` failed to decode, with an excerpt around the failure.
    pub(crate) fn from_serde(
        operation: Option<&'static str>,
        path: Option<String>,
        error: &serde_json::Error,
        body: &[u8],
    ) -> Self {
        DecodeError {
            operation,
            path,
            message: without_quoted_values(&error.to_string()),
            snippet: snippet_around(body, error.line(), error.column()),
        }
    }
}

/// serde's message without the values it quotes from the input: `invalid type: integer
/// `38001085718`, expected a string` becomes `invalid type: integer, expected a string`. serde
/// puts what it found in backticks (numbers, characters, variant and field names) or in double
/// quotes (strings, escaped), before `, expected ...`, which describes the type and is kept.
fn without_quoted_values(message: &str) -> String {
    let (found, expected) = match message.find(", expected") {
        Some(at) => message.split_at(at),
        None => (message, ""),
    };
    let mut out = String::with_capacity(message.len());
    let mut chars = found.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                for c in chars.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
                trim_trailing_space(&mut out);
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                trim_trailing_space(&mut out);
            }
            c => out.push(c),
        }
    }
    out.push_str(expected);
    out
}

fn trim_trailing_space(text: &mut String) {
    while text.ends_with(' ') {
        text.pop();
    }
}

/// At most 120 characters of `body` around one-based `line`/`column`.
fn snippet_around(body: &[u8], line: usize, column: usize) -> String {
    const RADIUS: usize = 60;
    let text = String::from_utf8_lossy(body);
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = line_text.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let start = at.saturating_sub(RADIUS);
    let end = (at + RADIUS).min(chars.len());
    let mut s: String = chars[start..end].iter().collect();
    if start > 0 {
        s.insert(0, '…');
    }
    if end < chars.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_lose_the_values_they_quote() {
        for (message, expected) in [
            (
                "invalid type: integer `38001085718`, expected a string at line 1 column 9",
                "invalid type: integer, expected a string at line 1 column 9",
            ),
            (
                r#"invalid type: string "jane \"j\" doe", expected u32"#,
                "invalid type: string, expected u32",
            ),
            (
                "unknown variant `PAUSED`, expected one of `A`, `B`",
                "unknown variant, expected one of `A`, `B`",
            ),
            ("missing field `id`", "missing field"),
            (
                "trailing characters at line 1 column 3",
                "trailing characters at line 1 column 3",
            ),
        ] {
            assert_eq!(without_quoted_values(message), expected, "{message}");
        }
    }
}
