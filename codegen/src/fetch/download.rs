//! Downloading the published description: both documents, size- and time-bounded, then
//! checked to be UTF-8, to parse, to be OpenAPI 3.x and to agree as data.

use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use super::{
    DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, FetchError, MAX_POINTERS, Urls, differences, redacted_url,
};
use crate::document::{self, Format, json_type};
use crate::error_chain;

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
    // Errors end up in logs and CI output: a signed address's token must not.
    let shown = redacted_url(url);
    let unreachable = |e: reqwest::Error| FetchError::Unreachable {
        url: shown.clone(),
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
            url: shown,
            status: status.to_string(),
            redirected_to: (answered != url).then(|| redacted_url(answered)),
        });
    }
    let too_large = |size| FetchError::TooLarge {
        url: shown.clone(),
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
            url: shown.clone(),
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

/// Checks downloaded documents: each UTF-8, parses (the JSON as JSON, the YAML as YAML), is an
/// OpenAPI 3.x description, and both are equal as data.
pub fn validate(urls: &Urls, json: Vec<u8>, yaml: Vec<u8>) -> Result<Published, FetchError> {
    let (json_shown, yaml_shown) = (redacted_url(&urls.json), redacted_url(&urls.yaml));
    let json_doc = parse_published(&json_shown, &json, Format::Json)?;
    let yaml_doc = parse_published(&yaml_shown, &yaml, Format::Yaml)?;
    let version = openapi_version(&json_doc, &json_shown)?;
    openapi_version(&yaml_doc, &yaml_shown)?;
    if json_doc != yaml_doc {
        let differences = differences(&json_doc, &yaml_doc, MAX_POINTERS);
        return Err(FetchError::Disagree {
            json_url: json_shown,
            yaml_url: yaml_shown,
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

/// `shown` is the address as errors may show it ([`redacted_url`]).
fn parse_published(shown: &str, bytes: &[u8], format: Format) -> Result<Value, FetchError> {
    let text = std::str::from_utf8(bytes).map_err(|e| FetchError::NotUtf8 {
        url: shown.to_string(),
        offset: e.valid_up_to(),
    })?;
    document::parse(text, format, shown).map_err(FetchError::Parse)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
