//! Replacing the vendored copy: each file atomically, then the digests (and, when asked, the
//! publisher's addresses) in `source.toml` with its comments and layout kept.

use std::path::Path;

use super::{FetchError, Published, SOURCE_FILE, Source, Urls, VendoredCopy};
use crate::document::{self, DocumentError};
use crate::pipeline::sha256_hex;

/// What [`write()`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// The files written, by name (`openapi.json`, `openapi.yaml`, `source.toml`), in order.
    pub files: Vec<String>,
}

impl Written {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Replaces the vendored files that differ from `published` (bytes as published), each
/// atomically, then rewrites the digests in `source.toml` (comments and layout kept). With
/// `save_urls`, `published.urls` become the publisher's addresses and `placeholder` is cleared.
/// Writes nothing when everything is already current.
pub fn write(
    spec_dir: &Path,
    source: &Source,
    vendored: &VendoredCopy,
    published: &Published,
    save_urls: bool,
) -> Result<Written, FetchError> {
    let mut written = Written::default();
    let fail = |source: DocumentError, written: &Written| FetchError::Write {
        source,
        replaced: written.files.clone(),
    };
    let source_path = spec_dir.join(SOURCE_FILE);
    let source_text =
        std::fs::read_to_string(&source_path).map_err(|source| FetchError::ReadSource {
            path: source_path.clone(),
            source,
        })?;
    let json_sha256 = sha256_hex(&published.json);
    let yaml_sha256 = sha256_hex(&published.yaml);
    let urls = save_urls.then_some(&published.urls);
    let new_source_text =
        updated_source(&source_text, &source_path, &json_sha256, &yaml_sha256, urls)?;

    for (bytes, current, name, path) in [
        (
            &published.json,
            &vendored.json,
            &source.vendored.json,
            source.json_path(spec_dir),
        ),
        (
            &published.yaml,
            &vendored.yaml,
            &source.vendored.yaml,
            source.yaml_path(spec_dir),
        ),
    ] {
        if current.as_deref() != Some(&bytes[..]) {
            document::write_atomic(&path, bytes).map_err(|e| fail(e, &written))?;
            written.files.push(name.clone());
        }
    }
    if new_source_text != source_text {
        document::write_atomic(&source_path, new_source_text.as_bytes())
            .map_err(|e| fail(e, &written))?;
        written.files.push(SOURCE_FILE.to_string());
    }
    Ok(written)
}

/// `source.toml`'s text with new digests (and, given `urls`, new publisher addresses and
/// `placeholder = false`), every comment and the layout kept.
pub fn updated_source(
    text: &str,
    path: &Path,
    json_sha256: &str,
    yaml_sha256: &str,
    urls: Option<&Urls>,
) -> Result<String, FetchError> {
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| FetchError::BadSource {
                path: path.to_path_buf(),
                message: e.to_string().trim_end().to_string(),
            })?;
    let mut set = |table: &str, key: &str, value: toml_edit::Value| -> Result<(), FetchError> {
        let Some(table) = doc
            .get_mut(table)
            .and_then(toml_edit::Item::as_table_like_mut)
        else {
            return Err(FetchError::BadSource {
                path: path.to_path_buf(),
                message: format!("it has no [{table}] table"),
            });
        };
        let mut value = value;
        // Keep a comment written after the old value on the same line.
        if let Some(old) = table.get(key).and_then(toml_edit::Item::as_value) {
            *value.decor_mut() = old.decor().clone();
        }
        table.insert(key, toml_edit::Item::Value(value));
        Ok(())
    };
    let changed = |current: Option<&str>, new: &str| current != Some(new);
    let source = Source::parse(text, path)?;
    if changed(Some(&source.vendored.json_sha256), json_sha256) {
        set("vendored", "json_sha256", json_sha256.into())?;
    }
    if changed(Some(&source.vendored.yaml_sha256), yaml_sha256) {
        set("vendored", "yaml_sha256", yaml_sha256.into())?;
    }
    if let Some(urls) = urls {
        if changed(Some(&source.publisher.json_url), &urls.json) {
            set("publisher", "json_url", urls.json.as_str().into())?;
        }
        if changed(Some(&source.publisher.yaml_url), &urls.yaml) {
            set("publisher", "yaml_url", urls.yaml.as_str().into())?;
        }
        if source.publisher.placeholder {
            set("publisher", "placeholder", false.into())?;
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_rewrite_keeps_comments() {
        let text = "# header\n\n[publisher]\nplaceholder = true # stand-in\njson_url = \"a\"\n\
                    yaml_url = \"b\"\n\n[vendored]\n# the files\njson = \"openapi.json\"\n\
                    json_sha256 = \"00\" # pinned\nyaml = \"openapi.yaml\"\nyaml_sha256 = \"11\"\n";
        let out = updated_source(text, Path::new("s"), "aa", "11", None).unwrap();
        assert_eq!(out, text.replace("\"00\"", "\"aa\""));
        let urls = Urls::new("http://h/x.json", "http://h/x.yaml").unwrap();
        let out = updated_source(text, Path::new("s"), "00", "11", Some(&urls)).unwrap();
        assert!(out.starts_with("# header\n"), "{out}");
        assert!(out.contains("placeholder = false # stand-in\n"), "{out}");
        assert!(out.contains("json_url = \"http://h/x.json\"\n"), "{out}");
    }
}
