//! The fetch stage: refreshes the vendored published description from its publisher.
//!
//! `spec/source.toml` names where the publisher serves the description (as JSON and as YAML) and
//! pins the SHA-256 of the copies vendored in `spec/`. Fetching downloads both documents, checks
//! that each parses as OpenAPI 3.x and that both describe the same document (equal as data), and
//! only then replaces the vendored files, byte for byte as published (never re-serialized, so the
//! digests are the publisher's bytes), each atomically, and rewrites the digests in
//! `source.toml` with its comments kept. Nothing is written when any step fails, and nothing
//! when the published bytes are the ones already vendored.
//!
//! The stage has three parts, one file each under `fetch/`: [`download()`] (both documents,
//! checked), [`compare()`] (with the vendored copy) and [`write()`] (the new copy and digests);
//! this file holds what they share: `source.toml`, the addresses, the errors.
//!
//! The comparison ([`compare()`]) is what `cargo xtask fetch --check` reports: whether the
//! published bytes differ, whether only formatting differs (same data), and otherwise which
//! paths, operations and schemas came or went, with the first differing JSON pointers.

mod compare;
mod download;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::document::{DocumentError, pointer};

pub use compare::{Comparison, compare};
pub use download::{Options, Published, download, openapi_version, validate};
pub use write::{Written, updated_source, write};

/// The name of the source file inside the spec directory.
pub const SOURCE_FILE: &str = "source.toml";

/// The largest document accepted from the publisher. The vendored description is well under
/// 1 MiB; anything past this is not an OpenAPI description we want in the repository.
pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

/// How long one download may take, from connecting to the last byte.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How many differing JSON pointers a comparison keeps (it still counts them all).
pub const MAX_POINTERS: usize = 10;

/// `spec/source.toml`: where the publisher serves the description, and what was vendored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Source {
    pub publisher: Publisher,
    pub vendored: Vendored,
}

/// The `[publisher]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Publisher {
    /// Set while the addresses are stand-ins that cannot be fetched.
    #[serde(default)]
    pub placeholder: bool,
    pub json_url: String,
    pub yaml_url: String,
}

/// The `[vendored]` table: file names relative to the spec directory and their SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Vendored {
    pub json: String,
    pub json_sha256: String,
    pub yaml: String,
    pub yaml_sha256: String,
}

/// What went wrong. Every variant but [`FetchError::Write`] leaves the vendored copy untouched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("cannot read {}", path.display())]
    ReadSource {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a valid source file: {message}", path.display())]
    BadSource { path: PathBuf, message: String },
    #[error(
        "the publisher's addresses in {} are placeholders ({json_url}, {yaml_url}): no public \
         address of the publisher is known yet. Set [publisher] json_url and yaml_url (and \
         placeholder = false) in {}, or pass --url URL (or --json-url and --yaml-url)",
        path.display(),
        path.display()
    )]
    Placeholder {
        path: PathBuf,
        json_url: String,
        yaml_url: String,
    },
    #[error("{url} is not a usable address: {message}")]
    BadUrl { url: String, message: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} answered {status}{}", redirected_to.as_ref().map(|u| format!(" (after redirects, from {u})")).unwrap_or_default())]
    Status {
        url: String,
        status: String,
        /// The address that answered, when redirects led elsewhere.
        redirected_to: Option<String>,
    },
    #[error("{url} is larger than the {limit}-byte limit{}", size.map(|s| format!(" ({s} bytes)")).unwrap_or_default())]
    TooLarge {
        url: String,
        limit: u64,
        size: Option<u64>,
    },
    #[error("{url} is not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 { url: String, offset: usize },
    #[error(transparent)]
    Parse(DocumentError),
    #[error("{origin} is not an OpenAPI 3.x description: found {found}")]
    NotOpenApi { origin: String, found: String },
    #[error(
        "the JSON and the YAML document differ ({count} difference{} as data), so neither is \
         trusted: {json_url} vs {yaml_url}; first differences (JSON pointers, `+` only in the \
         YAML, `-` only in the JSON, `~` different):\n{}",
        if *count == 1 { "" } else { "s" },
        pointers.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
    )]
    Disagree {
        json_url: String,
        yaml_url: String,
        count: usize,
        pointers: Vec<String>,
    },
    #[error("replacing the vendored copy failed{}", if replaced.is_empty() { String::new() } else { format!(" (already replaced: {}; fetch again to finish)", replaced.join(", ")) })]
    Write {
        #[source]
        source: DocumentError,
        /// The files replaced before the failure.
        replaced: Vec<String>,
    },
}

impl FetchError {
    /// Whether the vendored copy in the spec directory is as it was before the run.
    pub fn vendored_unchanged(&self) -> bool {
        match self {
            FetchError::Write { replaced, .. } => replaced.is_empty(),
            _ => true,
        }
    }
}

impl Source {
    /// Reads and parses `<spec_dir>/source.toml`.
    pub fn load(spec_dir: &Path) -> Result<Source, FetchError> {
        let path = spec_dir.join(SOURCE_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| FetchError::ReadSource {
            path: path.clone(),
            source,
        })?;
        Source::parse(&text, &path)
    }

    /// Parses the text of a source file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Source, FetchError> {
        let source: Source = toml::from_str(text).map_err(|e| FetchError::BadSource {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        for name in [&source.vendored.json, &source.vendored.yaml] {
            let p = Path::new(name);
            let plain = p.components().count() == 1
                && matches!(p.components().next(), Some(std::path::Component::Normal(_)));
            if !plain {
                return Err(FetchError::BadSource {
                    path: path.to_path_buf(),
                    message: format!(
                        "[vendored] file name {name:?} must be a plain file name inside the spec \
                         directory"
                    ),
                });
            }
        }
        Ok(source)
    }

    /// The publisher's addresses, unless they are placeholders (`placeholder = true`, or a host
    /// on the reserved `.invalid` domain, which can never resolve). `path` names the source file.
    pub fn publisher_urls(&self, path: &Path) -> Result<Urls, FetchError> {
        let p = &self.publisher;
        if p.placeholder || is_invalid_host(&p.json_url) || is_invalid_host(&p.yaml_url) {
            return Err(FetchError::Placeholder {
                path: path.to_path_buf(),
                json_url: redacted_url(&p.json_url),
                yaml_url: redacted_url(&p.yaml_url),
            });
        }
        Urls::new(&p.json_url, &p.yaml_url)
    }

    pub fn json_path(&self, spec_dir: &Path) -> PathBuf {
        spec_dir.join(&self.vendored.json)
    }

    pub fn yaml_path(&self, spec_dir: &Path) -> PathBuf {
        spec_dir.join(&self.vendored.yaml)
    }
}

fn is_invalid_host(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str()
                .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
        })
        .is_some_and(|h| h == "invalid" || h.ends_with(".invalid"))
}

/// The two addresses to download from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Urls {
    pub json: String,
    pub yaml: String,
}

impl Urls {
    /// Both addresses, checked to be absolute `http` or `https` URLs.
    pub fn new(json: &str, yaml: &str) -> Result<Urls, FetchError> {
        check_url(json)?;
        check_url(yaml)?;
        Ok(Urls {
            json: json.to_string(),
            yaml: yaml.to_string(),
        })
    }

    /// Both addresses from one: a URL whose path ends in `.json` gives the YAML address by
    /// swapping the extension for `.yaml`; one ending in `.yaml` or `.yml` gives the JSON address
    /// with `.json`. Query and fragment are kept. Any other URL is an error (give both).
    pub fn from_one(url: &str) -> Result<Urls, FetchError> {
        let parsed = check_url(url)?;
        let path = parsed.path();
        let (stem, ext) = path
            .rsplit_once('.')
            .filter(|(_, ext)| !ext.contains('/'))
            .ok_or_else(|| no_extension(url))?;
        let swapped = match ext.to_ascii_lowercase().as_str() {
            "json" => format!("{stem}.yaml"),
            "yaml" | "yml" => format!("{stem}.json"),
            _ => return Err(no_extension(url)),
        };
        let mut other = parsed.clone();
        other.set_path(&swapped);
        let (url, other) = (url.to_string(), other.to_string());
        Ok(if ext.eq_ignore_ascii_case("json") {
            Urls {
                json: url,
                yaml: other,
            }
        } else {
            Urls {
                json: other,
                yaml: url,
            }
        })
    }
}

fn no_extension(url: &str) -> FetchError {
    FetchError::BadUrl {
        url: redacted_url(url),
        message: "its path does not end in .json, .yaml or .yml, so the other document's \
                  address cannot be derived from it: give both with --json-url and --yaml-url"
            .into(),
    }
}

/// An address fit for a log or an error message: no user name, password, query or fragment (a
/// pre-signed address carries its token in the query, some in the user info). A query is shown
/// as `?…` so the reader still sees there was one.
pub fn redacted_url(url: &str) -> String {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return redacted_unparsed(url);
    };
    let had_query = parsed.query().is_some();
    // These fail only for addresses that cannot carry credentials, which then have none.
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    let mut shown = String::from(parsed);
    if had_query {
        shown.push_str("?…");
    }
    shown
}

/// [`redacted_url`] for text that is not a URL (an address mistyped on the command line): the
/// same parts are cut by their delimiters.
fn redacted_unparsed(text: &str) -> String {
    let end = text.find(['?', '#']).unwrap_or(text.len());
    let (base, rest) = text.split_at(end);
    let (scheme, after) = base.split_once("://").unwrap_or(("", base));
    let authority_end = after.find('/').unwrap_or(after.len());
    let (authority, path) = after.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let mut shown = if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    };
    if rest.starts_with('?') {
        shown.push_str("?…");
    }
    shown
}

fn check_url(url: &str) -> Result<reqwest::Url, FetchError> {
    let bad = |message: String| FetchError::BadUrl {
        url: redacted_url(url),
        message,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad(format!(
            "the scheme is {:?}; only http and https are fetched",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host".into()));
    }
    Ok(parsed)
}

/// The vendored copy as it is on disk. A missing file is `None` (the first fetch creates it).
#[derive(Debug, Clone)]
pub struct VendoredCopy {
    pub json: Option<Vec<u8>>,
    pub yaml: Option<Vec<u8>>,
}

impl VendoredCopy {
    /// Reads the vendored files named in `source`.
    pub fn read(spec_dir: &Path, source: &Source) -> Result<VendoredCopy, FetchError> {
        let read = |path: PathBuf| match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(FetchError::Parse(DocumentError::Read { path, source })),
        };
        Ok(VendoredCopy {
            json: read(source.json_path(spec_dir))?,
            yaml: read(source.yaml_path(spec_dir))?,
        })
    }
}

/// Where two documents differ as data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Differences {
    /// All differences.
    pub count: usize,
    /// The first ones, in document order: `+ /pointer` (only in the second), `- /pointer` (only
    /// in the first), `~ /pointer` (different values).
    pub pointers: Vec<String>,
}

/// Where `old` and `new` differ as data (key order does not count), keeping `keep` pointers.
pub fn differences(old: &Value, new: &Value, keep: usize) -> Differences {
    let mut out = Differences::default();
    walk(old, new, &mut String::new(), keep, &mut out);
    out
}

fn walk(old: &Value, new: &Value, at: &mut String, keep: usize, out: &mut Differences) {
    let note = |mark: char, at: &str, out: &mut Differences| {
        out.count += 1;
        if out.pointers.len() < keep {
            let shown = if at.is_empty() { "(the root)" } else { at };
            out.pointers.push(format!("{mark} {shown}"));
        }
    };
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, a_value) in a {
                let len = at.len();
                pointer::push(at, key);
                match b.get(key) {
                    Some(b_value) => walk(a_value, b_value, at, keep, out),
                    None => note('-', at, out),
                }
                at.truncate(len);
            }
            for key in b.keys().filter(|k| !a.contains_key(*k)) {
                let len = at.len();
                pointer::push(at, key);
                note('+', at, out);
                at.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => walk(x, y, at, keep, out),
                    (Some(_), None) => note('-', at, out),
                    _ => note('+', at, out),
                }
                at.truncate(len);
            }
        }
        (a, b) if a != b => note('~', at, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn addresses_are_shown_without_credentials_query_or_fragment() {
        assert_eq!(
            redacted_url("https://user:secret@example.test/openapi/v1.json?sig=abc&exp=1#top"),
            "https://example.test/openapi/v1.json?…"
        );
        assert_eq!(
            redacted_url("http://127.0.0.1:8080/v1.json"),
            "http://127.0.0.1:8080/v1.json"
        );
        assert_eq!(
            redacted_url("https://token@example.test/v1.yaml#frag"),
            "https://example.test/v1.yaml"
        );
        // Not a URL at all (mistyped): the same parts are still cut.
        assert_eq!(
            redacted_url("example.test:x/v1.json?sig=abc"),
            "example.test:x/v1.json?…"
        );
        assert_eq!(
            redacted_url("https://user:se cret@exa mple/v1.json?sig=abc"),
            "https://exa mple/v1.json?…"
        );
    }

    #[test]
    fn errors_about_an_address_do_not_show_its_token() {
        for e in [
            Urls::from_one("https://user:pw@h.example/openapi?sig=very-secret").unwrap_err(),
            Urls::from_one("ftp://h.example/a.json?sig=very-secret").unwrap_err(),
            Urls::new(
                "https://h.example/a.json?sig=very-secret",
                "not a url?sig=very-secret",
            )
            .unwrap_err(),
        ] {
            let shown = format!("{e} {e:?}");
            assert!(
                !shown.contains("very-secret") && !shown.contains("pw@"),
                "{shown}"
            );
        }
    }

    #[test]
    fn one_url_gives_the_other_by_swapping_the_extension() {
        let u = Urls::from_one("https://h.example/api/v1.json?x=1").unwrap();
        assert_eq!(u.yaml, "https://h.example/api/v1.yaml?x=1");
        let u = Urls::from_one("http://127.0.0.1:8080/v1.yml").unwrap();
        assert_eq!(u.json, "http://127.0.0.1:8080/v1.json");
        assert_eq!(u.yaml, "http://127.0.0.1:8080/v1.yml");
        let e = Urls::from_one("https://h.example/openapi").unwrap_err();
        assert!(e.to_string().contains("--json-url and --yaml-url"), "{e}");
        let e = Urls::from_one("ftp://h.example/a.json").unwrap_err();
        assert!(e.to_string().contains("only http and https"), "{e}");
        assert!(Urls::from_one("not a url").is_err());
        assert!(Urls::from_one("https://h.example/a.dir/openapi").is_err());
    }

    #[test]
    fn placeholders_are_refused_with_what_to_do() {
        let text = "[publisher]\nplaceholder = false\njson_url = \"https://x.invalid/a.json\"\n\
                    yaml_url = \"https://x.invalid/a.yaml\"\n[vendored]\njson = \"a.json\"\n\
                    json_sha256 = \"\"\nyaml = \"a.yaml\"\nyaml_sha256 = \"\"\n";
        let source = Source::parse(text, Path::new("spec/source.toml")).unwrap();
        let e = source
            .publisher_urls(Path::new("spec/source.toml"))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("placeholders") && msg.contains("--url"),
            "{msg}"
        );
    }

    #[test]
    fn vendored_names_must_stay_in_the_spec_directory() {
        let text = "[publisher]\njson_url = \"\"\nyaml_url = \"\"\n[vendored]\njson = \"../x.json\"\n\
                    json_sha256 = \"\"\nyaml = \"a.yaml\"\nyaml_sha256 = \"\"\n";
        assert!(Source::parse(text, Path::new("s.toml")).is_err());
    }

    #[test]
    fn differences_name_pointers_in_document_order() {
        let old = json!({"a": {"x/y": 1, "k": [1, 2]}, "gone": true});
        let new = json!({"a": {"x/y": 2, "k": [1]}, "new~": null});
        let d = differences(&old, &new, 10);
        assert_eq!(d.count, 4);
        assert_eq!(d.pointers, ["~ /a/x~1y", "- /a/k/1", "- /gone", "+ /new~0"]);
        let d = differences(&old, &new, 1);
        assert_eq!((d.count, d.pointers.len()), (4, 1));
        assert_eq!(
            differences(&json!({"a":1,"b":2}), &json!({"b":2,"a":1}), 5).count,
            0
        );
    }
}
