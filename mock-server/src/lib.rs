//! `creditdata-mock`: a stateful local stand-in for the consumer credit-data service and its
//! OpenID Connect identity provider.
//!
//! Start one in process with [`MockServer::start`]; it listens on loopback and hands back its
//! base URL, issuer and client credentials:
//!
//! ```no_run
//! # async fn demo() -> Result<(), creditdata_mock::StartError> {
//! let mock = creditdata_mock::MockServer::start(Default::default()).await?;
//! println!("{} {}", mock.base_url(), mock.token_url());
//! mock.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Every operation of the effective API description is served under `/v1` behind a bearer-token
//! check; `/_mock/...` endpoints drive the customer and the providers (see the crate README).
//!
//! # Security
//!
//! - Every route refuses a `Host` that is not the listening address (`127.0.0.1:PORT`,
//!   `localhost:PORT`, `[::1]:PORT`) or one of [`MockConfig::allowed_hosts`] (DNS rebinding).
//! - `/_mock` control endpoints refuse a foreign `Origin`, a cross-site `Sec-Fetch-Site`, and any
//!   `POST` without the [`CONTROL_HEADER`] or a non-form `Content-Type`: what a web page can send
//!   without a CORS preflight.
//! - Request bodies are bounded per route ([`API_BODY_LIMIT`], [`TOKEN_BODY_LIMIT`],
//!   [`CONTROL_BODY_LIMIT`]).
//! - The state file is written owner-only (0600) through a new exclusive temporary file, synced
//!   and renamed; a change is answered only once saved, and a failed save changes nothing.
//! - Settings are range-checked ([`MockConfig::validate`]) so no date arithmetic can overflow.
//! - The identity provider's sign-in pages escape every value, load nothing from elsewhere and
//!   refuse framing; their forms are bound to the pending request by a cookie and a CSRF token.
//!   Codes and refresh tokens are single-use and stored as digests; a replay ends the sign-in.

// The mock serves everything the description offers, deprecated or not: a deprecation the vendor
// publishes (of an operation, a schema, a member the mock builds) must not stop it from compiling.
#![allow(deprecated)]

mod api;
mod api_versions;
pub mod auth;
mod body_limits;
mod built;
mod catalog;
pub mod config;
mod control;
mod data;
mod described;
mod documents;
mod files;
mod guard;
pub mod idp;
pub mod local_redis;
mod operation_routes;
mod problem;
pub mod realism;
mod redact;
mod render;
mod report;
mod request_body;
mod router;
mod state;
mod store;
mod telemetry;
mod views;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use config::{ConfigError, DEFAULT_TAKE, MAX_TAKE, MockConfig};
/// How deep a Session member only the description knows may nest (deeper is refused with 400).
pub use described::MAX_MEMBER_DEPTH;
pub use guard::CONTROL_HEADER;
pub use idp::TokenOptions;
pub use problem::Problem;
pub use realism::Realism;
/// How the PDF report writes text (tests use it to find names in the report's bytes).
pub use render::pdf::win_ansi;
pub use store::state_file::StateError;

/// A schema-valid example of the JSON body that `operation_id` answers with `200` in
/// `description` (an effective, OpenAPI 3.0 document), drawn from `seed`: the kind of answer the
/// mock makes for an operation it has no handler for. `None` when the description has no such
/// operation or no JSON `200` answer for it, or the mock cannot make a valid one (its server
/// answers 501 there). Tests of clients use it for what the vendor adds
/// after their own fixtures were written.
pub fn example_answer(
    description: &serde_json::Value,
    operation_id: &str,
    seed: u64,
) -> Option<serde_json::Value> {
    use rand::SeedableRng as _;
    let schema = description
        .get("paths")?
        .as_object()?
        .values()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|item| item.values())
        .find(|op| op.get("operationId").and_then(serde_json::Value::as_str) == Some(operation_id))?
        .pointer("/responses/200/content/application~1json/schema")?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let validator = described::schema::validator(description, schema).ok()?;
    described::example::valid_example(description, schema, &validator, &mut rng, |_, _| Ok(())).ok()
}

/// A schema-valid example of `schema` (a schema of `description`, an effective, OpenAPI 3.0
/// document), drawn from `seed`, as the mock draws the values of what it makes up (checked
/// against the schema). Tests use it for a value the description allows, whatever the release.
/// `None` when the mock cannot make one (see [`example_answer`]).
pub fn example_of(
    description: &serde_json::Value,
    schema: &serde_json::Value,
    seed: u64,
) -> Option<serde_json::Value> {
    use rand::SeedableRng as _;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let validator = described::schema::validator(description, schema).ok()?;
    described::example::valid_example(description, schema, &validator, &mut rng, |_, _| Ok(())).ok()
}

/// `value` (a JSON value of the component schema `schema_name`) with every member the
/// description requires that it lacks filled (`null` where the member allows it, else a
/// schema-valid example), in nested objects too; members it has are kept. The embedded effective description (the one the client is
/// generated from) is asked, so a member a vendor release makes required reaches a test's
/// hand-written fixture with no edit. `value` is returned as it is when the description has no
/// such schema.
pub fn as_described(schema_name: &str, value: serde_json::Value) -> serde_json::Value {
    use rand::SeedableRng as _;
    let Ok(description) = serde_json::from_slice::<serde_json::Value>(EFFECTIVE_JSON) else {
        return value;
    };
    let schema = serde_json::json!({ "$ref": format!("#/components/schemas/{schema_name}") });
    let mut value = value;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    described::example::fill_required(&description, &schema, &mut value, &mut rng);
    value
}

/// `value` (a JSON answer of `operation_id`, `200`) completed as [`as_described`] completes a
/// schema's value: for a test's hand-written answer of an operation.
pub fn as_answer_of(operation_id: &str, value: serde_json::Value) -> serde_json::Value {
    use rand::SeedableRng as _;
    let Ok(description) = serde_json::from_slice::<serde_json::Value>(EFFECTIVE_JSON) else {
        return value;
    };
    let Some(schema) = description
        .get("paths")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(serde_json::Value::as_object)
        .flat_map(|item| item.values())
        .find(|op| op.get("operationId").and_then(serde_json::Value::as_str) == Some(operation_id))
        .and_then(|op| op.pointer("/responses/200/content/application~1json/schema"))
        .cloned()
    else {
        return value;
    };
    let mut value = value;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    described::example::fill_required(&description, &schema, &mut value, &mut rng);
    value
}

use guard::HostPolicy;
use idp::{IdentityProvider, KeyError, REALM, SigningKey};
use state::AppState;
use store::Store;
use store::state_file::StateFile;

pub use body_limits::{API_BODY_LIMIT, CONTROL_BODY_LIMIT, TOKEN_BODY_LIMIT};
pub use documents::{EFFECTIVE_JSON, OPENAPI_JSON, OPENAPI_YAML};

/// Why a mock server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The listen address could not be bound.
    #[error("could not listen on {address}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// The state file could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// The signing key is unusable.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A setting is out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The effective description cannot be served: a schema or path it cannot serve, or a
    /// hand-written handler registered under an operationId it lacks.
    #[error(transparent)]
    Description(#[from] described::DescriptionError),
    /// Writing the initial state file failed.
    #[error("could not write the state file: {0}")]
    Persist(String),
}

/// A running mock server.
pub struct MockServer {
    address: SocketAddr,
    base_url: String,
    state: Arc<AppState>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl fmt::Debug for MockServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockServer")
            .field("base_url", &self.base_url)
            .field("issuer", &self.issuer())
            .field("client_id", &self.client_id())
            .field("client_secret", &"<redacted>")
            .finish()
    }
}

impl MockServer {
    /// Binds `config.listen`, loads the state file (if any) and starts serving in the
    /// background of the current tokio runtime.
    pub async fn start(config: MockConfig) -> Result<MockServer, StartError> {
        config.validate()?;
        let allowed_hosts = config.parsed_allowed_hosts()?;
        let saved = match &config.state_file {
            Some(path) => StateFile::load(path)?,
            None => None,
        };
        let (key, keep_key_in_state) = match (&config.signing_key_pem, &saved) {
            (Some(pem), _) => (SigningKey::from_pkcs8_pem(pem)?, false),
            (
                None,
                Some(StateFile {
                    signing_key_pem: Some(pem),
                    ..
                }),
            ) => (SigningKey::from_pkcs8_pem(pem)?, true),
            _ => (SigningKey::generate()?, true),
        };
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| StartError::Bind {
                    address: config.listen,
                    source,
                })?;
        let address = listener.local_addr().map_err(|source| StartError::Bind {
            address: config.listen,
            source,
        })?;
        let base_url = format!("http://{}", reachable(address));
        let issuer = format!("{base_url}/realms/{REALM}");
        let idp = Arc::new(IdentityProvider::new(
            issuer,
            config.audience.clone(),
            config.token_lifetime,
            config.client_id.clone(),
            config.client_secret.clone(),
            key,
        ));
        let realism = realism::Layers::new(&config.realism, Arc::clone(&idp));
        let mut store = Store::default();
        if let Some(saved) = saved {
            for record in saved.sessions {
                store.sessions.insert(record.id, record);
            }
            store.identity = saved.identity;
            store.identity.prune(chrono::Utc::now());
        }
        let description = described::Description::load(config.effective_description.clone())?;
        let state = Arc::new(AppState::new(
            config,
            Arc::clone(&idp),
            store,
            keep_key_in_state,
            description,
        ));
        state.persist().await.map_err(|problem| {
            StartError::Persist(problem.body().detail.clone().unwrap_or_default())
        })?;
        let policy = Arc::new(HostPolicy::new(address, allowed_hosts));
        let app = router::router(Arc::clone(&state), policy, &realism)?;
        let app = if state.config.server_spans {
            telemetry::server_spans(app, reachable(address))
        } else {
            app
        };
        let (shutdown, signal) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let signal = async {
                let _ = signal.await;
            };
            let served = realism.serve(listener, app, signal).await;
            if let Err(error) = served {
                tracing::error!(%error, "the mock server stopped");
            }
        });
        Ok(MockServer {
            address,
            base_url,
            state,
            shutdown: Some(shutdown),
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// `http://host:port`: prefix of every API path (`/v1/...`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The OpenID Connect issuer, `{base}/realms/consumer`.
    pub fn issuer(&self) -> &str {
        self.state.idp.issuer()
    }

    /// The token endpoint.
    pub fn token_url(&self) -> String {
        self.state.idp.token_endpoint()
    }

    /// The accepted client id.
    pub fn client_id(&self) -> &str {
        &self.state.config.client_id
    }

    /// The public native client's id (Authorization Code flow with PKCE, no secret).
    pub fn public_client_id(&self) -> &str {
        &self.state.config.public_client_id
    }

    /// The accepted client secret.
    pub fn client_secret(&self) -> &str {
        &self.state.config.client_secret
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &MockConfig {
        &self.state.config
    }

    /// Signs a token directly (what the token endpoint would issue, or, through `options`, an
    /// expired one or one for another audience, to test refusals).
    pub fn mint_token(&self, options: &TokenOptions) -> Result<String, Problem> {
        self.state.idp.mint(options)
    }

    /// Stops accepting connections, lets running requests finish and writes the state file.
    pub async fn shutdown(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        if let Err(problem) = self.state.persist().await {
            tracing::error!(detail = ?problem.body().detail, "could not save the state");
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// A URL host for `address`: the loopback address when bound to all interfaces.
fn reachable(address: SocketAddr) -> SocketAddr {
    match address.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), address.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), address.port())
        }
        _ => address,
    }
}
