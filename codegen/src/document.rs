//! Documents as every stage reads them: loading and saving JSON/YAML with the key order
//! preserved, and the OpenAPI helpers the stages share ([`operations`], [`resolve`],
//! [`json_type`], RFC 6901 [`pointer`](mod@pointer)s), so each question about a document has one answer.
//!
//! Every stage works on [`serde_json::Value`] (built with `preserve_order`), so a document read
//! from YAML and written back as JSON keeps the order its author chose and diffs stay readable.

mod openapi;
pub(crate) mod ordered;
pub mod pointer;

pub use openapi::{
    HTTP_METHODS, Operation, SCHEMA_REF_PREFIX, is_extension, is_http_method, json_type,
    operations, resolve,
};

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The two serializations of an OpenAPI or Overlay document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    /// The format a file name's extension announces (`.json`, `.yaml`, `.yml`), if any.
    pub fn from_extension(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }

    /// The format of `path`, or a guess from the text: JSON documents start with `{` or `[`.
    pub fn detect(path: &Path, text: &str) -> Format {
        Format::from_extension(path).unwrap_or_else(|| {
            match text
                .trim_start_matches('\u{feff}')
                .trim_start()
                .chars()
                .next()
            {
                Some('{') | Some('[') => Format::Json,
                _ => Format::Yaml,
            }
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Yaml => "YAML",
        })
    }
}

/// A document that could not be read, parsed or written.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin} is not valid {format}{}: {message}", location.map(|(l, c)| format!(" (line {l}, column {c})")).unwrap_or_default())]
    Parse {
        /// The file name, or another name for where the text came from.
        origin: String,
        format: Format,
        message: String,
        /// One-based line and column, where the parser reports them.
        location: Option<(usize, usize)>,
    },
}

/// Parses `text` as `format`. `origin` names the text in errors (usually its path).
pub fn parse(text: &str, format: Format, origin: &str) -> Result<Value, DocumentError> {
    let text = text.trim_start_matches('\u{feff}');
    match format {
        Format::Json => serde_json::from_str(text).map_err(|e| DocumentError::Parse {
            origin: origin.to_string(),
            format,
            message: e.to_string(),
            location: Some((e.line(), e.column())),
        }),
        Format::Yaml => serde_norway::from_str(text).map_err(|e| DocumentError::Parse {
            origin: origin.to_string(),
            format,
            location: e.location().map(|l| (l.line(), l.column())),
            message: e.to_string(),
        }),
    }
}

/// Reads and parses the document at `path`, in the format its extension (or content) shows.
pub fn load(path: &Path) -> Result<Value, DocumentError> {
    let text = std::fs::read_to_string(path).map_err(|source| DocumentError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(
        &text,
        Format::detect(path, &text),
        &path.display().to_string(),
    )
}

/// Serializes `value` as `format`: JSON pretty-printed with two spaces, both ending in a newline.
pub fn to_string(value: &Value, format: Format) -> String {
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(value)
                .expect("a serde_json::Value always serializes to JSON");
            s.push('\n');
            s
        }
        Format::Yaml => {
            serde_norway::to_string(value).expect("a serde_json::Value always serializes to YAML")
        }
    }
}

/// Writes `contents` to `path` atomically: a temporary file in the same directory, flushed,
/// then renamed over the target, so a reader never sees a half-written file and a failure
/// leaves the previous file untouched.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), DocumentError> {
    let err = |source| DocumentError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".creditdata-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(contents).map_err(err)?;
    // tempfile creates 0600 files; an output should keep the target's permissions, or get the
    // usual ones for a new file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map(|m| m.permissions().mode())
            .unwrap_or(0o644);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_keeps_key_order_and_reads_integer_keys_as_strings() {
        let v = parse("b: 1\na:\n  200: {}\n  '404': {}\n", Format::Yaml, "t.yaml").unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"b":1,"a":{"200":{},"404":{}}}"#
        );
    }

    #[test]
    fn parse_errors_name_origin_and_location() {
        let e = parse("{\"a\": [1,\n", Format::Json, "spec/x.json").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("spec/x.json is not valid JSON (line 2"),
            "{msg}"
        );
        let e = parse("a: [1,\n b", Format::Yaml, "o.yaml").unwrap_err();
        assert!(
            e.to_string().contains("o.yaml is not valid YAML (line"),
            "{e}"
        );
    }

    #[test]
    fn an_unreadable_file_shows_its_cause_once_in_a_chain() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let cause = std::fs::read(&missing).unwrap_err().to_string();
        let e = load(&missing).unwrap_err();
        let expected = format!("cannot read {}: {cause}", missing.display());
        assert_eq!(format!("{:#}", anyhow::Error::new(e)), expected);

        // A directory that is a file cannot hold the output.
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let target = file.join("out.json");
        let e = write_atomic(&target, b"x").unwrap_err();
        let cause = std::error::Error::source(&e).unwrap().to_string();
        assert_eq!(
            format!("{:#}", anyhow::Error::new(e)),
            format!("cannot write {}: {cause}", target.display())
        );
    }

    #[test]
    fn format_is_detected_from_extension_then_content() {
        assert_eq!(Format::detect(Path::new("a.yml"), "{}"), Format::Yaml);
        assert_eq!(Format::detect(Path::new("a"), "  {\"x\":1}"), Format::Json);
        assert_eq!(Format::detect(Path::new("-"), "x: 1"), Format::Yaml);
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
