//! The descriptions the mock serves and answers from, embedded at build time.

/// The published description, served at `/openapi/v1.json`.
pub const OPENAPI_JSON: &[u8] = include_bytes!("../../spec/openapi.json");
/// The published description, served at `/openapi/v1.yaml`.
pub const OPENAPI_YAML: &[u8] = include_bytes!("../../spec/openapi.yaml");
/// The effective description (what the client is generated from), whose operations the mock
/// serves; [`MockConfig::effective_description`](crate::config::MockConfig::effective_description) replaces it. The mock is not published, so
/// reaching outside the crate is safe here.
pub const EFFECTIVE_JSON: &[u8] = include_bytes!("../../spec/openapi.effective.json");
