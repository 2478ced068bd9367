//! Source files (the original responses of credit bureaus and other sources) as bytes.
//!
//! `GET /v1/sessions/{sessionId}/source-files/{sourceFileId}/content` returns a JSON document
//! ([`SourceFileContent`]) with the file Base64-encoded in `contentBase64`. This module decodes
//! it and checks the result against `sizeInBytes`:
//!
//! ```no_run
//! # async fn f(client: &creditdata_client::Client, session: uuid::Uuid, file: uuid::Uuid) -> creditdata_client::Result<()> {
//! let decoded = client.source_file_bytes(session, file).await?;
//! println!("{:?} ({:?}): {} bytes", decoded.name, decoded.file_type, decoded.bytes.len());
//! # Ok(()) }
//! ```
//!
//! Decoding accepts the standard Base64 alphabet (RFC 4648 §4), with or without `=` padding,
//! and ignores ASCII whitespace (line-wrapped encoders). The URL-safe alphabet is rejected.
//! The whole file is in memory: the service sends it inside a JSON document anyway.

use std::fmt;

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use uuid::Uuid;

use crate::error::DecodeError;
use crate::operation::Operation;
use crate::types::SourceFileContent;
use crate::{Client, Error, Result};

/// Standard alphabet, padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A source file's content, decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodedSourceFile {
    /// Display or download name, as the service sent it (not sanitised: see
    /// [`DecodedSourceFile::safe_file_name`] before using it as a path).
    pub name: Option<String>,
    /// Type or category of the file (`type`; for example PDF, XML, CSV).
    pub file_type: Option<String>,
    /// Identifier of the source system or provider.
    pub source_id: Option<String>,
    /// The decoded content.
    pub bytes: Vec<u8>,
}

impl fmt::Debug for DecodedSourceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The content is personal data: its length only.
        f.debug_struct("DecodedSourceFile")
            .field("name", &self.name)
            .field("file_type", &self.file_type)
            .field("source_id", &self.source_id)
            .field("len", &self.bytes.len())
            .finish()
    }
}

impl DecodedSourceFile {
    /// [`name`](Self::name) made safe to join to a directory
    /// ([`sanitize_file_name`](crate::download::sanitize_file_name)).
    pub fn safe_file_name(&self) -> Option<String> {
        self.name
            .as_deref()
            .and_then(crate::download::sanitize_file_name)
    }
}

fn operation_id() -> &'static str {
    <crate::builder::GetSourceFileContent<'static> as Operation>::META.id
}

/// Decodes `contentBase64` of `content` and checks it against `sizeInBytes` when present.
///
/// Errors are [`Error::Decode`] with the path `contentBase64` or `sizeInBytes`; the message
/// names the file (its name when known) and, for bad Base64, the character offset and what is
/// wrong there. A `null` `contentBase64` is an error too (the service sent no content).
pub fn decode_content(content: &SourceFileContent) -> Result<DecodedSourceFile> {
    decode(content, None)
}

fn describe(content: &SourceFileContent, id: Option<Uuid>) -> String {
    match (id, content.name.as_deref()) {
        (Some(id), Some(name)) => format!("source file {id} ({name:?})"),
        (Some(id), None) => format!("source file {id}"),
        (None, Some(name)) => format!("source file {name:?}"),
        (None, None) => "source file".to_string(),
    }
}

fn failure(path: &str, message: String) -> Error {
    Error::Decode(Box::new(DecodeError::new(
        Some(operation_id()),
        Some(path.to_string()),
        message,
    )))
}

fn decode(content: &SourceFileContent, id: Option<Uuid>) -> Result<DecodedSourceFile> {
    let Some(encoded) = content.content_base64.as_deref() else {
        return Err(failure(
            "contentBase64",
            format!(
                "{}: the service sent no content (contentBase64 is null)",
                describe(content, id)
            ),
        ));
    };
    let bytes = decode_base64(encoded).map_err(|problem| {
        failure(
            "contentBase64",
            format!(
                "{}: contentBase64 is not valid Base64: {problem}",
                describe(content, id)
            ),
        )
    })?;
    if let Some(declared) = content.size_in_bytes
        && u64::try_from(declared).ok() != Some(bytes.len() as u64)
    {
        return Err(failure(
            "sizeInBytes",
            format!(
                "{}: sizeInBytes says {declared} bytes but contentBase64 decodes to {} bytes",
                describe(content, id),
                bytes.len()
            ),
        ));
    }
    Ok(DecodedSourceFile {
        name: content.name.clone(),
        file_type: content.type_.clone(),
        source_id: content.source_id.clone(),
        bytes,
    })
}

/// Decodes, ignoring ASCII whitespace; a problem is described with its offset in `encoded`.
fn decode_base64(encoded: &str) -> std::result::Result<Vec<u8>, String> {
    let has_whitespace = encoded.bytes().any(|b| b.is_ascii_whitespace());
    let compact: std::borrow::Cow<'_, str> = if has_whitespace {
        encoded
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect::<String>()
            .into()
    } else {
        encoded.into()
    };
    // Offsets into `compact` back to offsets into `encoded`.
    let original_offset = |compact_offset: usize| -> usize {
        if !has_whitespace {
            return compact_offset;
        }
        encoded
            .char_indices()
            .filter(|(_, c)| !c.is_ascii_whitespace())
            .nth(compact_offset)
            .map(|(i, _)| i)
            .unwrap_or(encoded.len())
    };
    BASE64.decode(compact.as_bytes()).map_err(|error| match error {
        base64::DecodeError::InvalidByte(offset, byte) => format!(
            "invalid character {} at offset {}",
            printable(byte),
            original_offset(offset)
        ),
        base64::DecodeError::InvalidLastSymbol { offset, symbol, .. } => format!(
            "invalid last character {} at offset {} (the encoding has leftover bits)",
            printable(symbol),
            original_offset(offset)
        ),
        base64::DecodeError::InvalidLength(length) => format!(
            "{length} Base64 characters cannot encode whole bytes (a character is missing or extra near the end)"
        ),
        base64::DecodeError::InvalidPadding => "the `=` padding at the end is malformed".to_string(),
    })
}

fn printable(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("'{}'", byte as char)
    } else {
        format!("0x{byte:02X}")
    }
}

/// Source file content.
impl Client {
    /// Fetches a source file's content and decodes it (see [`decode_content`]); errors name the
    /// source file by its id.
    pub async fn source_file_bytes(
        &self,
        session_id: Uuid,
        source_file_id: Uuid,
    ) -> Result<DecodedSourceFile> {
        let content = self
            .get_source_file_content()
            .session_id(session_id)
            .source_file_id(source_file_id)
            .call()
            .await?;
        decode(&content, Some(source_file_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(b64: Option<&str>, size: Option<i64>) -> SourceFileContent {
        serde_json::from_value(serde_json::json!({
            "contentBase64": b64,
            "name": "bureau.xml",
            "type": "XML",
            "sourceId": "bureau",
            "sizeInBytes": size,
        }))
        .unwrap()
    }

    #[test]
    fn decodes_with_and_without_padding_and_whitespace() {
        for text in ["aGVsbG8=", "aGVsbG8", "aGVs\r\nbG8="] {
            let decoded = decode_content(&content(Some(text), Some(5))).unwrap();
            assert_eq!(decoded.bytes, b"hello");
            assert_eq!(decoded.file_type.as_deref(), Some("XML"));
        }
        assert!(
            decode_content(&content(Some(""), None))
                .unwrap()
                .bytes
                .is_empty()
        );
    }

    #[test]
    fn errors_say_which_file_and_where() {
        let err = decode_content(&content(Some("aGV\ns*G8="), None))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"bureau.xml\"") && err.contains("'*' at offset 5"),
            "{err}"
        );
        assert!(err.contains("contentBase64"), "{err}");
        let err = decode_content(&content(Some("aGVsbG8="), Some(6)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("sizeInBytes says 6 bytes but contentBase64 decodes to 5"),
            "{err}"
        );
        let err = decode_content(&content(None, None))
            .unwrap_err()
            .to_string();
        assert!(err.contains("contentBase64 is null"), "{err}");
        let err = decode_content(&content(Some("aGVsbG8-"), None))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'-' at offset 7"), "{err}");
    }
}
