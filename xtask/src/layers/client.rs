//! The client's layer table (`generated-client/src`): its layers, bottom to top, and every
//! module with its layer. A new file of the client is one line in [`MODULES`].

use super::Table;

/// The client's table.
pub const TABLE: Table = Table {
    name: "client",
    src: "generated-client/src",
    table_file: "xtask/src/layers/client.rs",
    layers: LAYERS,
    modules: MODULES,
};

/// The layers, bottom to top: a module may use its own layer and those below.
const LAYERS: &[(&str, &str)] = &[
    (
        "leaves",
        "vocabulary with no dependency in the crate: URLs, body limits, retry rules, the generated types, the authentication error and limits",
    ),
    ("error", "the one `Error` every call returns"),
    (
        "contracts",
        "what an operation is and may send: operation metadata, request limits, the rate limiter, environments",
    ),
    (
        "identity-provider",
        "the one door to the identity provider: every request, one discovery",
    ),
    (
        "token-cache",
        "the token cache with single flight over any grant (`FetchToken`)",
    ),
    (
        "grants",
        "the ways to obtain tokens, each a whole feature-gated module",
    ),
    (
        "auth",
        "the public front of authentication: credentials and the authenticator",
    ),
    (
        "runtime-state",
        "what the generated client carries and calls: its state, path segments, the redirect policy, the one door of every call (`runtime::send`)",
    ),
    (
        "generated",
        "the generated `Client`, its builders and operation table",
    ),
    (
        "client",
        "the generated `Client`'s own methods over the runtime: `access_token`, `rate_limiter`",
    ),
    (
        "config",
        "the builder of a `Client`; nothing in the crate imports it",
    ),
    (
        "features",
        "what the client offers over `Client`: paging, waiting, downloads, statements, files, datasets",
    ),
    (
        "root",
        "the crate root: module declarations, re-exports, the prelude",
    ),
];

/// Every module of `generated-client/src` and its layer (an index of [`LAYERS`]).
const MODULES: &[(&str, usize)] = &[
    ("urls", 0),
    ("body_limits", 0),
    ("email", 0),
    ("json", 0),
    ("retry", 0),
    ("auth::error", 0),
    ("auth::access_token", 0),
    ("auth::limits", 0),
    ("auth::credentials", 0),
    ("generated_issuers", 0),
    ("generated::types", 0),
    ("error", 1),
    ("error::api", 1),
    ("error::decode", 1),
    ("error::operation_name", 1),
    ("operation", 2),
    ("call_options", 2),
    ("limits::rows", 2),
    ("limits", 2),
    ("generated_limits", 2),
    ("rate_limit", 2),
    ("rate_limit::limit", 2),
    ("rate_limit::store", 2),
    ("environment", 2),
    ("telemetry", 2),
    ("auth::identity_http", 3),
    ("auth::token", 4),
    ("auth::client_credentials", 5),
    ("sign_in", 5),
    ("sign_in::error", 5),
    ("sign_in::id_token", 5),
    ("sign_in::loopback", 5),
    ("sign_in::provider", 5),
    ("sign_in::sign_out", 5),
    ("sign_in::store", 5),
    ("sign_in::tokens", 5),
    ("auth", 6),
    ("runtime", 7),
    ("runtime::state", 7),
    ("runtime::path", 7),
    ("runtime::redirect", 7),
    ("runtime::requests", 7),
    ("runtime::call", 7),
    ("generated", 8),
    ("runtime::client", 9),
    ("config", 10),
    ("paging", 11),
    ("wait", 11),
    ("wait::schedule", 11),
    ("wait::customer", 11),
    ("download", 11),
    ("download::file_name", 11),
    ("statement", 11),
    ("source_file", 11),
    ("session_datasets", 11),
    ("dataset_stream", 11),
    ("with_options", 11),
    ("dataset_shapes", 11),
    ("generated_datasets", 11),
    ("dataset_read", 11),
    ("generated_session_datasets", 11),
    ("readiness", 11),
    ("wait::data", 11),
    ("", 12),
];
