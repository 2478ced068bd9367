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
//! The comparison ([`compare`]) is what `cargo xtask fetch --check` reports: whether the
//! published bytes differ, whether only formatting differs (same data), and otherwise which
//! paths, operations and schemas came or went, with the first differing JSON pointers.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::diff::{self, ChangeReport};
use crate::document::{self, DocumentError, Format, json_type, pointer};
use crate::downconvert;
use crate::pipeline::sha256_hex;

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
    #[error("cannot read {}: {source}", path.display())]
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
    #[error("{source}{}", if replaced.is_empty() { String::new() } else { format!(" (already replaced: {}; fetch again to finish)", replaced.join(", ")) })]
    Write {
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
                json_url: p.json_url.clone(),
                yaml_url: p.yaml_url.clone(),
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
        url: url.to_string(),
        message: "its path does not end in .json, .yaml or .yml, so the other document's \
                  address cannot be derived from it: give both with --json-url and --yaml-url"
            .into(),
    }
}

fn check_url(url: &str) -> Result<reqwest::Url, FetchError> {
    let bad = |message: String| FetchError::BadUrl {
        url: url.to_string(),
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

/// How downloads behave.
#[derive(Debug, Clone)]
pub struct Options {
    /// For each whole request, connecting included.
    pub timeout: Duration,
    /// The largest body accepted.
    pub max_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: DEFAULT_TIMEOUT,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The published description: both documents as downloaded, and their data.
#[derive(Debug, Clone)]
pub struct Published {
    pub urls: Urls,
    /// The JSON document's bytes, exactly as published.
    pub json: Vec<u8>,
    /// The YAML document's bytes, exactly as published.
    pub yaml: Vec<u8>,
    /// The document both describe.
    pub document: Value,
    /// Its `openapi` field, e.g. `3.1.0`.
    pub version: String,
}

impl Published {
    /// How many operations the document has (methods under `paths`).
    pub fn operation_count(&self) -> usize {
        document::operations(&self.document).count()
    }
}

/// Downloads the JSON and the YAML document and checks them with [`validate`].
pub fn download(urls: &Urls, options: &Options) -> Result<Published, FetchError> {
    let client = reqwest::blocking::Client::builder()
        .timeout(options.timeout)
        .connect_timeout(options.timeout.min(Duration::from_secs(15)))
        .redirect(reqwest::redirect::Policy::limited(10))
        .user_agent(concat!("creditdata-xtask/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FetchError::Client(error_chain(&e)))?;
    let json = get(&client, &urls.json, "application/json", options)?;
    let yaml = get(
        &client,
        &urls.yaml,
        "application/yaml, application/x-yaml;q=0.9, text/yaml;q=0.8",
        options,
    )?;
    validate(urls, json, yaml)
}

fn get(
    client: &reqwest::blocking::Client,
    url: &str,
    accept: &str,
    options: &Options,
) -> Result<Vec<u8>, FetchError> {
    let unreachable = |e: reqwest::Error| FetchError::Unreachable {
        url: url.to_string(),
        message: describe_request_error(e, options.timeout),
    };
    let response = client
        .get(url)
        .header(reqwest::header::ACCEPT, accept)
        .send()
        .map_err(unreachable)?;
    let status = response.status();
    if !status.is_success() {
        let answered = response.url().as_str();
        return Err(FetchError::Status {
            url: url.to_string(),
            status: status.to_string(),
            redirected_to: (answered != url).then(|| answered.to_string()),
        });
    }
    let too_large = |size| FetchError::TooLarge {
        url: url.to_string(),
        limit: options.max_bytes,
        size,
    };
    if let Some(size) = response.content_length()
        && size > options.max_bytes
    {
        return Err(too_large(Some(size)));
    }
    let mut body = Vec::new();
    response
        .take(options.max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| FetchError::Unreachable {
            url: url.to_string(),
            message: format!("the response broke off: {}", error_chain(&e)),
        })?;
    if body.len() as u64 > options.max_bytes {
        return Err(too_large(None));
    }
    Ok(body)
}

fn describe_request_error(e: reqwest::Error, timeout: Duration) -> String {
    let kind = if e.is_timeout() {
        format!("no answer within {} s (timed out)", timeout.as_secs_f32())
    } else if e.is_redirect() {
        "too many redirects".into()
    } else if e.is_connect() {
        "cannot connect".into()
    } else {
        "the request failed".into()
    };
    format!("{kind}: {}", error_chain(&e.without_url()))
}

/// The error and its sources, `: `-separated, without repeats (hyper repeats its causes).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// Checks downloaded documents: each UTF-8, parses (the JSON as JSON, the YAML as YAML), is an
/// OpenAPI 3.x description, and both are equal as data.
pub fn validate(urls: &Urls, json: Vec<u8>, yaml: Vec<u8>) -> Result<Published, FetchError> {
    let json_doc = parse_published(&urls.json, &json, Format::Json)?;
    let yaml_doc = parse_published(&urls.yaml, &yaml, Format::Yaml)?;
    let version = openapi_version(&json_doc, &urls.json)?;
    openapi_version(&yaml_doc, &urls.yaml)?;
    if json_doc != yaml_doc {
        let differences = differences(&json_doc, &yaml_doc, MAX_POINTERS);
        return Err(FetchError::Disagree {
            json_url: urls.json.clone(),
            yaml_url: urls.yaml.clone(),
            count: differences.count,
            pointers: differences.pointers,
        });
    }
    Ok(Published {
        urls: urls.clone(),
        json,
        yaml,
        document: json_doc,
        version,
    })
}

fn parse_published(url: &str, bytes: &[u8], format: Format) -> Result<Value, FetchError> {
    let text = std::str::from_utf8(bytes).map_err(|e| FetchError::NotUtf8 {
        url: url.to_string(),
        offset: e.valid_up_to(),
    })?;
    document::parse(text, format, url).map_err(FetchError::Parse)
}

/// The `openapi` field of an OpenAPI 3.x description, or what was found instead.
pub fn openapi_version(doc: &Value, origin: &str) -> Result<String, FetchError> {
    let not = |found: String| FetchError::NotOpenApi {
        origin: origin.to_string(),
        found,
    };
    let Value::Object(root) = doc else {
        return Err(not(format!(
            "{} at the root, not an object",
            json_type(doc)
        )));
    };
    match root.get("openapi") {
        Some(Value::String(v)) if is_openapi_3(v) => Ok(v.clone()),
        Some(Value::String(v)) => Err(not(format!("`openapi: {v:?}`"))),
        Some(other) => Err(not(format!("`openapi: {other}` ({})", json_type(other)))),
        None => Err(match root.get("swagger") {
            Some(v) => not(format!("a Swagger document (`swagger: {v}`)")),
            None => {
                let keys: Vec<&str> = root.keys().take(5).map(String::as_str).collect();
                not(format!(
                    "no `openapi` field (top-level keys: {})",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                ))
            }
        }),
    }
}

/// `3.minor.patch`, optionally with a `-suffix`.
fn is_openapi_3(version: &str) -> bool {
    let Some(rest) = version.strip_prefix("3.") else {
        return false;
    };
    let rest = rest.split_once('-').map_or(rest, |(v, _)| v);
    let mut parts = rest.split('.');
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
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

/// How the published description compares with the vendored copy.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The published JSON has the vendored JSON's bytes.
    pub json_same_bytes: bool,
    /// The published YAML has the vendored YAML's bytes.
    pub yaml_same_bytes: bool,
    /// `source.toml`'s digests are those of the published bytes.
    pub digests_current: bool,
    /// The published document equals the vendored JSON as data; `None` when there is no
    /// readable vendored JSON to compare with (missing or not parseable: see `vendored_problem`).
    pub same_data: Option<bool>,
    /// Why the vendored JSON could not be compared as data.
    pub vendored_problem: Option<String>,
    /// Where the data differs.
    pub differences: Differences,
    pub paths_added: usize,
    pub paths_removed: usize,
    /// A preview of the change report: the two published descriptions compared after
    /// down-convert, without overlays (`cargo xtask drift` runs the whole pipeline). `None` when
    /// the vendored copy could not be compared.
    pub report: Option<ChangeReport>,
    /// File names, for messages.
    pub json_name: String,
    pub yaml_name: String,
}

impl Comparison {
    /// Whether fetching would write nothing: both files and the digests are current.
    pub fn is_up_to_date(&self) -> bool {
        self.json_same_bytes && self.yaml_same_bytes && self.digests_current
    }

    /// Whether the bytes differ but the data is the same (a reformatting by the publisher).
    pub fn only_formatting_differs(&self) -> bool {
        !(self.json_same_bytes && self.yaml_same_bytes) && self.same_data == Some(true)
    }
}

/// Compares the published description with the vendored copy and `source`'s digests.
pub fn compare(published: &Published, vendored: &VendoredCopy, source: &Source) -> Comparison {
    let json_same_bytes = vendored.json.as_deref() == Some(&published.json[..]);
    let yaml_same_bytes = vendored.yaml.as_deref() == Some(&published.yaml[..]);
    let digests_current = source
        .vendored
        .json_sha256
        .eq_ignore_ascii_case(&sha256_hex(&published.json))
        && source
            .vendored
            .yaml_sha256
            .eq_ignore_ascii_case(&sha256_hex(&published.yaml));
    let old = match &vendored.json {
        None => Err(format!("there is no vendored {}", source.vendored.json)),
        Some(bytes) => std::str::from_utf8(bytes)
            .map_err(|e| format!("the vendored {} is not UTF-8: {e}", source.vendored.json))
            .and_then(|text| {
                document::parse(text, Format::Json, &source.vendored.json)
                    .map_err(|e| e.to_string())
            }),
    };
    let mut comparison = Comparison {
        json_same_bytes,
        yaml_same_bytes,
        digests_current,
        same_data: None,
        vendored_problem: None,
        differences: Differences::default(),
        paths_added: 0,
        paths_removed: 0,
        report: None,
        json_name: source.vendored.json.clone(),
        yaml_name: source.vendored.yaml.clone(),
    };
    match old {
        Err(problem) => comparison.vendored_problem = Some(problem),
        Ok(old) => {
            let new = &published.document;
            comparison.same_data = Some(&old == new);
            comparison.differences = differences(&old, new, MAX_POINTERS);
            let paths = |doc: &Value| -> Vec<String> {
                doc.get("paths")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let (old_paths, new_paths) = (paths(&old), paths(new));
            comparison.paths_added = new_paths.iter().filter(|p| !old_paths.contains(p)).count();
            comparison.paths_removed = old_paths.iter().filter(|p| !new_paths.contains(p)).count();
            // The differ reads OpenAPI 3.0, as the generator does.
            let as_3_0 = |doc: &Value| {
                downconvert::downconvert(doc)
                    .map(|c| c.document)
                    .unwrap_or_else(|_| doc.clone())
            };
            let (old, new) = (as_3_0(&old), as_3_0(new));
            comparison.report = Some(diff::compare(
                &diff::Side::effective(&old),
                &diff::Side::effective(&new),
            ));
        }
    }
    comparison
}

impl fmt::Display for Comparison {
    /// A short summary: what differs, the counts, the first differing pointers, then the
    /// operations and schemas report when the data differs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_up_to_date() {
            return writeln!(
                f,
                "Up to date: the published {} and {} are the vendored ones, byte for byte.",
                self.json_name, self.yaml_name
            );
        }
        let differing: Vec<&str> = [
            (!self.json_same_bytes).then_some(self.json_name.as_str()),
            (!self.yaml_same_bytes).then_some(self.yaml_name.as_str()),
        ]
        .into_iter()
        .flatten()
        .collect();
        if differing.is_empty() {
            writeln!(
                f,
                "The vendored files are the published ones, but the digests in {SOURCE_FILE} are \
                 not theirs."
            )?;
            return Ok(());
        }
        writeln!(
            f,
            "The published {} differ{} from the vendored copy.",
            differing.join(" and "),
            if differing.len() == 1 { "s" } else { "" }
        )?;
        if let Some(problem) = &self.vendored_problem {
            return writeln!(f, "It cannot be compared as data: {problem}.");
        }
        if self.only_formatting_differs() {
            return writeln!(f, "Only formatting differs: the data is the same.");
        }
        writeln!(
            f,
            "Paths: {} added, {} removed.",
            self.paths_added, self.paths_removed
        )?;
        let d = &self.differences;
        writeln!(
            f,
            "{} difference{} as data (`+` new, `-` gone, `~` changed){}:",
            d.count,
            if d.count == 1 { "" } else { "s" },
            if d.count > d.pointers.len() {
                format!(", the first {}", d.pointers.len())
            } else {
                String::new()
            }
        )?;
        for pointer in &d.pointers {
            writeln!(f, "  {pointer}")?;
        }
        if let Some(report) = &self.report {
            writeln!(
                f,
                "\nPreview of the change report (the published descriptions without overlays; \
                 `cargo xtask drift --spec` runs the whole pipeline):"
            )?;
            write!(f, "{}", report.to_text())?;
        }
        Ok(())
    }
}

/// What [`write`] did.
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
    use serde_json::json;

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
    fn versions_other_than_3_x_say_what_was_found() {
        let e = openapi_version(&json!({"swagger": "2.0"}), "u").unwrap_err();
        assert!(e.to_string().contains("Swagger"), "{e}");
        let e = openapi_version(&json!({"openapi": 3.1}), "u").unwrap_err();
        assert!(e.to_string().contains("`openapi: 3.1` (a number)"), "{e}");
        let e = openapi_version(&json!({"openapi": "2.0.0"}), "u").unwrap_err();
        assert!(e.to_string().contains("\"2.0.0\""), "{e}");
        let e = openapi_version(&json!([1]), "u").unwrap_err();
        assert!(e.to_string().contains("an array at the root"), "{e}");
        let e = openapi_version(&json!({"a": 1}), "u").unwrap_err();
        assert!(
            e.to_string()
                .contains("no `openapi` field (top-level keys: a)"),
            "{e}"
        );
        assert_eq!(
            openapi_version(&json!({"openapi": "3.1.0"}), "u").unwrap(),
            "3.1.0"
        );
        assert!(openapi_version(&json!({"openapi": "3.2.0-rc1"}), "u").is_ok());
        assert!(openapi_version(&json!({"openapi": "3.1"}), "u").is_err());
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
