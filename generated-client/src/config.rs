//! Building a [`Client`]: environment, credentials, timeouts, retries.
//!
//! ```no_run
//! use creditdata_client::{Client, Environment, auth::{Credentials, TokenEndpoint}};
//! # fn f() -> creditdata_client::Result<()> {
//! let client = Client::builder()
//!     .environment(Environment::Custom("https://api.example.test".into()))
//!     .credentials(Credentials::client_credentials(
//!         TokenEndpoint::Url("https://login.example.test/realms/consumer/protocol/openid-connect/token".into()),
//!         "my-client",
//!         "my-secret",
//!     ))
//!     .build()?;
//! # Ok(()) }
//! ```
//!
//! Or from the environment ([`ClientBuilder::from_env`]), which is what the examples and the
//! `creditdata` command use.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::Client;
use crate::auth::{Authenticator, ClientAuthStyle, Credentials, TokenEndpoint, WITHOUT_OAUTH2};
use crate::error::Error;
#[cfg(feature = "shared-rate-limit")]
use crate::rate_limit::RateLimitStore;
#[cfg(feature = "rate-limit")]
use crate::rate_limit::{RateLimit, RateLimiter};
use crate::retry::RetryPolicy;
use crate::runtime::ClientState;
use crate::urls::validate_identity_provider_url;

pub use crate::body_limits::DEFAULT_MAX_RESPONSE_BODY;

pub use crate::environment::{
    DEFAULT_MOCK_URL, Environment, IdentityProviderUrls, LIVE_SCHEME, TEST_SCHEME,
};

/// Configures the HTTP client of the identity provider (see
/// [`ClientBuilder::identity_provider_http`]).
type IdentityHttpSettings =
    Arc<dyn Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync>;

/// The longest a token or discovery request may take when no request timeout is set: every
/// call that needs a token waits for it.
const DEFAULT_TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why [`ClientBuilder::from_env`] refuses to run with nothing configured: a program that
/// silently talked to a local mock (or to nothing) would fail far from its cause, or look as if
/// it worked. Names every variable to set.
const NO_SERVICE_CONFIGURED: &str = "no service configured: set CREDITDATA_ENVIRONMENT \
    (production, test or mock) or CREDITDATA_BASE_URL, and credentials: CREDITDATA_TOKEN, or \
    CREDITDATA_CLIENT_ID and CREDITDATA_CLIENT_SECRET with CREDITDATA_TOKEN_URL or \
    CREDITDATA_ISSUER (the local mock: CREDITDATA_ENVIRONMENT=mock)";

/// Configures and builds a [`Client`]. Start with [`Client::builder`] or
/// [`ClientBuilder::from_env`]. Its `Debug` never shows a secret.
#[derive(Clone)]
pub struct ClientBuilder {
    environment: Environment,
    credentials: Option<Credentials>,
    client_auth_style: Option<ClientAuthStyle>,
    scopes: Option<Vec<String>>,
    user_agent: String,
    connect_timeout: Duration,
    request_timeout: Option<Duration>,
    read_timeout: Duration,
    retry: RetryPolicy,
    http_client: Option<reqwest::Client>,
    identity_provider_http: Option<IdentityHttpSettings>,
    max_response_body: u64,
    #[cfg(feature = "rate-limit")]
    rate_limiter: Option<RateLimiter>,
    /// Whether `rate_limiter` was given whole ([`ClientBuilder::rate_limiter`]) rather than
    /// made from a [`RateLimit`].
    #[cfg(feature = "shared-rate-limit")]
    rate_limiter_given: bool,
    #[cfg(feature = "shared-rate-limit")]
    rate_limit_store: Option<RateLimitStore>,
    #[cfg(feature = "shared-rate-limit")]
    rate_limit_name: Option<String>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Credentials print redacted (their own Debug).
        let mut shown = f.debug_struct("ClientBuilder");
        shown
            .field("environment", &self.environment)
            .field("credentials", &self.credentials)
            .field("client_auth_style", &self.client_auth_style)
            .field("scopes", &self.scopes)
            .field("user_agent", &self.user_agent)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("retry", &self.retry)
            .field("max_response_body", &self.max_response_body)
            .field("http_client", &self.http_client.is_some())
            .field(
                "identity_provider_http",
                &self.identity_provider_http.is_some(),
            );
        #[cfg(feature = "rate-limit")]
        shown.field(
            "rate_limit",
            &self.rate_limiter.as_ref().map(RateLimiter::limit),
        );
        // The store's address without its password (its own Debug).
        #[cfg(feature = "shared-rate-limit")]
        shown
            .field("rate_limit_store", &self.rate_limit_store)
            .field("rate_limit_name", &self.rate_limit_name);
        shown.finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    /// See [`Client::builder`].
    fn default() -> Self {
        ClientBuilder {
            environment: Environment::Mock,
            credentials: None,
            client_auth_style: None,
            scopes: None,
            user_agent: concat!("creditdata-client/", env!("CARGO_PKG_VERSION")).to_string(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Some(Duration::from_secs(30)),
            read_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            http_client: None,
            identity_provider_http: None,
            max_response_body: DEFAULT_MAX_RESPONSE_BODY,
            #[cfg(feature = "rate-limit")]
            rate_limiter: None,
            #[cfg(feature = "shared-rate-limit")]
            rate_limiter_given: false,
            #[cfg(feature = "shared-rate-limit")]
            rate_limit_store: None,
            #[cfg(feature = "shared-rate-limit")]
            rate_limit_name: None,
        }
    }
}

impl Client {
    /// A builder with the defaults: the mock environment, no credentials, 10 s connect timeout,
    /// 30 s per JSON request attempt, 60 s idle-read timeout, [`RetryPolicy::default`].
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }
}

impl ClientBuilder {
    /// Configuration from environment variables:
    ///
    /// | variable | meaning |
    /// |---|---|
    /// | `CREDITDATA_BASE_URL` | base URL (wins over `CREDITDATA_ENVIRONMENT`) |
    /// | `CREDITDATA_ENVIRONMENT` | `production`, `test` or `mock`; see [`Environment`] |
    /// | `CREDITDATA_TOKEN` | a static bearer token |
    /// | `CREDITDATA_TOKEN_URL` | OAuth2 token endpoint, with the two below |
    /// | `CREDITDATA_ISSUER` | or an OpenID Connect issuer, with the two below |
    /// | `CREDITDATA_CLIENT_ID`, `CREDITDATA_CLIENT_SECRET` | client credentials |
    /// | `CREDITDATA_CLIENT_AUTH` | `body` (default) or `basic`: how the client authenticates to the token endpoint |
    /// | `CREDITDATA_SCOPES` | scopes to request, separated by spaces or commas |
    /// | `CREDITDATA_RATE_LIMIT` | a client-side rate limit, `N/s`, `N/min` or `N/h` (see [`rate_limit`](Self::rate_limit)) |
    /// | `CREDITDATA_RATE_LIMIT_STORE` | `redis://HOST:PORT/DB` or `rediss://...`: the rate limit shared by every process of the same API client (feature `shared-rate-limit`; see `ClientBuilder::rate_limit_store`) |
    /// | `CREDITDATA_RATE_LIMIT_PREFIX` | the prefix of the store's keys (default `creditdata`) |
    ///
    /// One of `CREDITDATA_BASE_URL` and `CREDITDATA_ENVIRONMENT` is required: with neither, this
    /// is an [`Error::Config`] naming the variables to set, never a silent default (the mock is
    /// `CREDITDATA_ENVIRONMENT=mock`). Credentials may be left out here and given to the builder
    /// afterwards ([`credentials`](Self::credentials), or `signed_in` with the `sign-in` feature).
    ///
    /// A static token wins over client credentials. A client id without a secret (or the
    /// reverse) is an error, as is a token URL without both. Empty variables count as unset.
    /// Client credentials (with no `CREDITDATA_TOKEN`) in a build without the `oauth2` feature,
    /// `CREDITDATA_RATE_LIMIT` without `rate-limit`, or `CREDITDATA_RATE_LIMIT_STORE` without
    /// `shared-rate-limit`, are an error too; so is a store without a limit to share.
    pub fn from_env() -> Result<ClientBuilder, Error> {
        ClientBuilder::from_env_with(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env), reading the variables through `lookup` (a map in tests, a
    /// configuration file, command-line options layered over the environment, ...).
    pub fn from_env_with(lookup: impl Fn(&str) -> Option<String>) -> Result<ClientBuilder, Error> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let environment = match (var("CREDITDATA_BASE_URL"), var("CREDITDATA_ENVIRONMENT")) {
            (Some(url), _) => Some(Environment::Custom(url.trim().to_string())),
            (None, Some(name)) => Some(name.parse()?),
            (None, None) => None,
        };
        let mut builder = ClientBuilder {
            environment: environment.clone().unwrap_or(Environment::Mock),
            ..ClientBuilder::default()
        };
        let endpoint = match (var("CREDITDATA_TOKEN_URL"), var("CREDITDATA_ISSUER")) {
            (Some(url), _) => Some(TokenEndpoint::Url(url.trim().to_string())),
            (None, Some(issuer)) => Some(TokenEndpoint::Issuer(issuer.trim().to_string())),
            (None, None) => None,
        };
        builder.credentials = match (
            var("CREDITDATA_TOKEN"),
            endpoint,
            var("CREDITDATA_CLIENT_ID"),
            var("CREDITDATA_CLIENT_SECRET"),
        ) {
            (Some(token), ..) => Some(Credentials::bearer(token)),
            (None, Some(endpoint), Some(id), Some(secret)) => {
                Some(Credentials::client_credentials(endpoint, id, secret))
            }
            (None, None, None, None) => None,
            (None, None, Some(_), _) | (None, None, _, Some(_)) => {
                return Err(Error::Config(
                    "CREDITDATA_CLIENT_ID/CREDITDATA_CLIENT_SECRET are set but neither CREDITDATA_TOKEN_URL nor CREDITDATA_ISSUER says where to use them".into(),
                ));
            }
            (None, Some(_), _, _) => {
                return Err(Error::Config(
                    "client credentials need both CREDITDATA_CLIENT_ID and CREDITDATA_CLIENT_SECRET".into(),
                ));
            }
        };
        // Calls sent unauthenticated while the variables say otherwise would fail far from here.
        if !cfg!(feature = "oauth2")
            && matches!(builder.credentials, Some(Credentials::ClientCredentials(_)))
        {
            return Err(Error::Config(format!(
                "CREDITDATA_CLIENT_ID, CREDITDATA_CLIENT_SECRET and CREDITDATA_TOKEN_URL or \
                 CREDITDATA_ISSUER are set: {WITHOUT_OAUTH2}"
            )));
        }
        if let Some(style) = var("CREDITDATA_CLIENT_AUTH") {
            builder.client_auth_style = Some(match style.trim().to_ascii_lowercase().as_str() {
                "body" | "post" | "client_secret_post" => ClientAuthStyle::RequestBody,
                "basic" | "client_secret_basic" => ClientAuthStyle::BasicAuth,
                _ => {
                    return Err(Error::Config(format!(
                        "CREDITDATA_CLIENT_AUTH={style:?}: use body or basic"
                    )));
                }
            });
        }
        if let Some(limit) = var("CREDITDATA_RATE_LIMIT") {
            #[cfg(feature = "rate-limit")]
            {
                let limit: RateLimit = limit
                    .parse()
                    .map_err(|e| Error::Config(format!("CREDITDATA_RATE_LIMIT: {e}")))?;
                builder = builder.rate_limit(limit);
            }
            // A limit asked for and silently not kept would end in the service's 429s.
            #[cfg(not(feature = "rate-limit"))]
            {
                let _ = limit;
                return Err(Error::Config(
                    "CREDITDATA_RATE_LIMIT is set, but creditdata-client was built without its \
                     `rate-limit` feature: enable the feature or unset the variable"
                        .to_string(),
                ));
            }
        }
        let store = var("CREDITDATA_RATE_LIMIT_STORE");
        let prefix = var("CREDITDATA_RATE_LIMIT_PREFIX");
        if store.is_some() || prefix.is_some() {
            #[cfg(feature = "shared-rate-limit")]
            if let Some(url) = store {
                let mut store = RateLimitStore::redis(&url)
                    .map_err(|e| Error::Config(format!("CREDITDATA_RATE_LIMIT_STORE: {e}")))?;
                if let Some(prefix) = prefix {
                    store = store.prefix(prefix.trim());
                }
                builder = builder.rate_limit_store(store);
            }
            // A limit meant for the fleet and silently kept per process would multiply it.
            #[cfg(not(feature = "shared-rate-limit"))]
            {
                let _ = (store, prefix);
                return Err(Error::Config(
                    "CREDITDATA_RATE_LIMIT_STORE is set, but creditdata-client was built without \
                     its `shared-rate-limit` feature: enable the feature or unset the variable"
                        .to_string(),
                ));
            }
        }
        if let Some(scopes) = var("CREDITDATA_SCOPES") {
            builder.scopes = Some(
                scopes
                    .split([' ', ','])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
        // Checked last, so that a mistake in the other variables is reported as itself.
        if environment.is_none() {
            return Err(Error::Config(NO_SERVICE_CONFIGURED.to_string()));
        }
        Ok(builder)
    }

    /// The environment (default [`Environment::Mock`]).
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = environment;
        self
    }

    /// Shorthand for `environment(Environment::Custom(url))`.
    pub fn base_url(self, url: impl Into<String>) -> Self {
        self.environment(Environment::Custom(url.into()))
    }

    /// How the client authenticates (default: it sends no `Authorization` header).
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Calls act as the person whose sign-in `store` keeps (see [`crate::sign_in`]): their
    /// access token, refreshed at `provider` with their refresh token ahead of expiry and once
    /// after a 401, the rotated tokens saved to `store`. When the sign-in has ended, calls fail
    /// with [`AuthErrorKind::SignInRequired`](crate::auth::AuthErrorKind::SignInRequired).
    #[cfg(feature = "sign-in")]
    pub fn signed_in(
        self,
        store: Arc<dyn crate::sign_in::TokenStore>,
        provider: crate::sign_in::IdentityProvider,
    ) -> Self {
        self.credentials(Credentials::SignedIn(
            crate::sign_in::SignedInCredentials::new(store, provider),
        ))
    }

    /// Shorthand for a static bearer token.
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.credentials(Credentials::bearer(token))
    }

    /// Shorthand for client credentials against a token endpoint URL. Feature `oauth2`:
    /// without it [`build`](Self::build) fails with [`Error::Config`].
    pub fn client_credentials(
        self,
        token_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.credentials(Credentials::client_credentials(
            TokenEndpoint::Url(token_url.into()),
            client_id,
            client_secret,
        ))
    }

    /// Sends client credentials with HTTP Basic authentication instead of in the form body.
    /// Applies to whatever client credentials the builder holds when it builds, whether set
    /// before or after this call.
    pub fn basic_client_auth(mut self) -> Self {
        self.client_auth_style = Some(ClientAuthStyle::BasicAuth);
        self
    }

    /// The scopes to request with client credentials (replacing those of the credentials).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The `User-Agent` header (default `creditdata-client/VERSION`).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// How long to wait for a connection (default 10 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The total time of one attempt of a JSON call, body included (default 30 s; `None`: no
    /// limit). Downloads are not bounded by it, only by the [idle-read
    /// timeout](Self::read_timeout). It also bounds each token and discovery request (30 s when
    /// `None`).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long a response may stay silent (default 60 s): a stalled download fails with
    /// [`Error::Timeout`], a slow but moving one does not. This is not a total timeout.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Shorthand for `retry_policy(RetryPolicy::disabled())`.
    pub fn no_retries(self) -> Self {
        self.retry_policy(RetryPolicy::disabled())
    }

    /// Uses this `reqwest::Client` for the service's API instead of building one (its own
    /// timeouts, proxy, TLS and redirect settings then apply; `connect_timeout`, `read_timeout`
    /// and `user_agent` are ignored). Give it
    /// [`runtime::same_origin_redirects`](crate::runtime::same_origin_redirects) as its redirect
    /// policy: `reqwest`'s default follows redirects to any host. An answer from another origin
    /// is refused either way ([`Error::InvalidResponse`]), but by then the request has gone
    /// there.
    ///
    /// The identity provider is never reached through this client: see
    /// [`identity_provider_http`](Self::identity_provider_http).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Configures the HTTP client of the token and discovery requests (a proxy, extra root
    /// certificates, ...). `settings` receives a `reqwest::ClientBuilder` with this builder's
    /// user agent and timeouts; whatever it returns, the client is then built with
    /// `redirect::Policy::none()`: a token or discovery request never follows a redirect (a
    /// redirected token request would re-send the client secret), and a redirect is an
    /// [`AuthErrorKind::Redirect`](crate::auth::AuthErrorKind::Redirect) error naming its
    /// `Location`.
    pub fn identity_provider_http(
        mut self,
        settings: impl Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder + Send + Sync + 'static,
    ) -> Self {
        self.identity_provider_http = Some(Arc::new(settings));
        self
    }

    /// The largest JSON success body the client reads, in bytes (default
    /// [`DEFAULT_MAX_RESPONSE_BODY`], 128 MiB). A larger answer ends the call with
    /// [`Error::ResponseTooLarge`] after at most this many bytes (at once when its
    /// `Content-Length` says so), so a broken or hostile server cannot make memory grow without
    /// bound. Token and discovery answers are read with the smaller of this limit and
    /// [`MAX_IDENTITY_PROVIDER_BODY`](crate::auth::MAX_IDENTITY_PROVIDER_BODY) (1 MiB).
    /// Downloads are streamed and not limited; error bodies keep at most
    /// [`MAX_ERROR_BODY`](crate::error::MAX_ERROR_BODY) bytes. Must be at least 1.
    pub fn max_response_body(mut self, bytes: u64) -> Self {
        self.max_response_body = bytes;
        self
    }

    #[cfg(feature = "rate-limit")]
    /// Paces the client's requests to the service: every attempt of every call (retries, the
    /// retry after a 401 and downloads included) waits for its turn, in the order the calls
    /// asked; the client's clones share the budget; a `429` answer holds every clone back for
    /// its `Retry-After` and lowers the rate, which then recovers. Default: no limit. See
    /// [`rate_limit`](crate::rate_limit).
    ///
    /// ```
    /// use creditdata_client::{Client, rate_limit::RateLimit};
    /// let client = Client::builder()
    ///     .rate_limit(RateLimit::per_second(20).burst(5))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(client.rate_limiter().unwrap().limit().requests(), 20);
    /// ```
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limiter = Some(RateLimiter::new(limit));
        #[cfg(feature = "shared-rate-limit")]
        {
            self.rate_limiter_given = false;
        }
        self
    }

    #[cfg(feature = "shared-rate-limit")]
    /// Shares the [`rate_limit`](Self::rate_limit) with every process of the same API client
    /// against the same service, through `store` (Redis): together they keep the limit, each
    /// request's slot reserved by one atomic step in the store; while the store does not answer
    /// each process paces itself at its last known share of the limit. See
    /// [`rate_limit::store`](crate::rate_limit::store).
    ///
    /// The limit is named after the base URL, the identity provider and the client id of the
    /// client credentials (or of a signed-in person's client), hashed: Redis holds no client id
    /// and no secret. With a static bearer token, which says nothing of its client, name the
    /// limit with [`rate_limit_name`](Self::rate_limit_name). [`build`](Self::build) fails with
    /// [`Error::Config`] on a store without a rate limit, or with a limiter given whole
    /// ([`rate_limiter`](Self::rate_limiter): make it with
    /// [`RateLimiter::shared`](crate::rate_limit::RateLimiter::shared) instead).
    pub fn rate_limit_store(mut self, store: RateLimitStore) -> Self {
        self.rate_limit_store = Some(store);
        self
    }

    #[cfg(feature = "shared-rate-limit")]
    /// Names the shared limit (hashed with the base URL) instead of deriving it from the
    /// credentials: for static bearer tokens, or to share one limit between differently
    /// configured clients. Every process naming it shares it.
    pub fn rate_limit_name(mut self, name: impl Into<String>) -> Self {
        self.rate_limit_name = Some(name.into());
        self
    }

    #[cfg(feature = "rate-limit")]
    /// Shares `limiter` with other clients (built with other credentials or settings): all of
    /// them together keep its pace. Each builder call of [`rate_limit`](Self::rate_limit)
    /// makes a new limiter; clones of one client share theirs without this.
    pub fn rate_limiter(mut self, limiter: RateLimiter) -> Self {
        self.rate_limiter = Some(limiter);
        #[cfg(feature = "shared-rate-limit")]
        {
            self.rate_limiter_given = true;
        }
        self
    }

    /// Builds the client. Fails with [`Error::Config`] on an unusable base URL, token URL or
    /// issuer (see [`Credentials`]), a retry policy of zero attempts, a body limit of zero, a
    /// static token a header cannot carry, or an HTTP client setting `reqwest` refuses. Makes no
    /// request: tokens are fetched by the first call that needs one.
    pub fn build(self) -> Result<Client, Error> {
        let base_url = self.environment.base_url()?;
        #[cfg(feature = "rate-limit")]
        if let Some(limiter) = &self.rate_limiter {
            limiter.limit().check().map_err(Error::Config)?;
        }
        if self.retry.max_attempts == 0 {
            return Err(Error::Config(
                "retry policy: max_attempts must be at least 1".into(),
            ));
        }
        if self.max_response_body == 0 {
            return Err(Error::Config(
                "max_response_body must be at least 1 byte".into(),
            ));
        }
        let cannot_build = |e: reqwest::Error| {
            Error::Config(format!(
                "cannot build the HTTP client: {}",
                crate::error::DisplayChain(&e)
            ))
        };
        // rustls (the only TLS backend compiled in), HTTP/1.1 and HTTP/2 by ALPN.
        let settings = || {
            reqwest::Client::builder()
                .user_agent(self.user_agent.clone())
                .connect_timeout(self.connect_timeout)
                .read_timeout(self.read_timeout)
        };
        let http = match &self.http_client {
            Some(client) => client.clone(),
            None => settings()
                .redirect(crate::runtime::same_origin_redirects())
                .build()
                .map_err(cannot_build)?,
        };
        let mut credentials = self.credentials;
        if credentials.is_some() {
            // The identity provider's own rule for where a token may travel: a bearer token
            // over plain http off loopback is anyone's on the way.
            crate::urls::validate_identity_provider_url("the base URL", base_url.as_str())
                .map_err(|e| Error::Config(e.replace("the client secret", "the credentials")))?;
        }
        #[cfg(feature = "sign-in")]
        if let Some(Credentials::SignedIn(signed_in)) = &mut credentials {
            signed_in.bind_to(&base_url);
        }
        if let Some(Credentials::ClientCredentials(cc)) = &mut credentials {
            if !cfg!(feature = "oauth2") {
                return Err(Error::Config(WITHOUT_OAUTH2.to_string()));
            }
            if let Some(style) = self.client_auth_style {
                cc.auth_style = style;
            }
            if let Some(scopes) = self.scopes {
                cc.scopes = scopes;
            }
            match &cc.endpoint {
                TokenEndpoint::Url(url) => {
                    validate_identity_provider_url("the token URL", url).map_err(Error::Config)?;
                }
                TokenEndpoint::Issuer(issuer) => {
                    validate_identity_provider_url("the token issuer URL", issuer)
                        .map_err(Error::Config)?;
                }
            }
        }
        #[cfg(feature = "shared-rate-limit")]
        let rate_limiter = shared_rate_limiter(
            self.rate_limiter,
            self.rate_limiter_given,
            self.rate_limit_store,
            self.rate_limit_name.as_deref(),
            &base_url,
            credentials.as_ref(),
        )?;
        #[cfg(all(feature = "rate-limit", not(feature = "shared-rate-limit")))]
        let rate_limiter = self.rate_limiter;
        let auth = match credentials {
            None => None,
            Some(credentials) => {
                let identity_http = match &self.identity_provider_http {
                    Some(configure) => configure(settings()),
                    None => settings(),
                }
                // Last, so no setting can undo it.
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(cannot_build)?;
                let limits = crate::auth::IdentityProviderLimits {
                    timeout: self.request_timeout.unwrap_or(DEFAULT_TOKEN_TIMEOUT),
                    max_body: self
                        .max_response_body
                        .min(crate::auth::MAX_IDENTITY_PROVIDER_BODY),
                };
                Some(
                    Authenticator::new(credentials, identity_http, limits)
                        .map_err(Error::Config)?,
                )
            }
        };
        // Checked on every answer only where it can fail: the HTTP client the builder makes
        // follows no redirect out of the origin (`same_origin_redirects`), so its answers all
        // come from there; one given with `http_client` may follow redirects anywhere.
        let origin = self
            .http_client
            .is_some()
            .then(|| reqwest::Url::parse(&base_url).ok())
            .flatten();
        let state = ClientState::new(
            auth,
            self.retry,
            self.request_timeout,
            self.max_response_body,
            origin,
        );
        #[cfg(feature = "rate-limit")]
        let state = state.with_rate_limiter(rate_limiter);
        #[cfg(feature = "opentelemetry")]
        let state = state.with_telemetry(&base_url);
        Ok(Client::new_with_client(&base_url, http, state))
    }
}

/// The client's limiter, shared through `store` when one is set (see
/// [`ClientBuilder::rate_limit_store`]).
#[cfg(feature = "shared-rate-limit")]
fn shared_rate_limiter(
    limiter: Option<RateLimiter>,
    given: bool,
    store: Option<RateLimitStore>,
    name: Option<&str>,
    base_url: &str,
    credentials: Option<&Credentials>,
) -> Result<Option<RateLimiter>, Error> {
    let Some(store) = store else {
        return Ok(limiter);
    };
    let limit = match (limiter, given) {
        (None, _) => {
            return Err(Error::Config(format!(
                "rate limit store {store}: there is no rate limit to share; set one \
                 (ClientBuilder::rate_limit, CREDITDATA_RATE_LIMIT, --rate-limit)"
            )));
        }
        (Some(_), true) => {
            return Err(Error::Config(format!(
                "rate limit store {store}: the rate limiter was given whole \
                 (ClientBuilder::rate_limiter); make it shared with RateLimiter::shared, or \
                 set the limit with ClientBuilder::rate_limit"
            )));
        }
        (Some(limiter), false) => limiter.limit(),
    };
    let identity: Vec<&str> = match (name, credentials) {
        (Some(name), _) => vec![base_url, "name", name],
        (None, Some(Credentials::ClientCredentials(cc))) => {
            let provider = match &cc.endpoint {
                TokenEndpoint::Url(url) | TokenEndpoint::Issuer(url) => url.as_str(),
            };
            vec![base_url, provider, &cc.client_id]
        }
        #[cfg(feature = "sign-in")]
        (None, Some(Credentials::SignedIn(signed_in))) => vec![
            base_url,
            signed_in.provider().issuer(),
            signed_in.provider().client_id(),
        ],
        (None, _) => {
            return Err(Error::Config(format!(
                "rate limit store {store}: a static bearer token (or no credentials) does not \
                 say which API client the service counts; name the shared limit with \
                 ClientBuilder::rate_limit_name"
            )));
        }
    };
    Ok(Some(RateLimiter::shared(limit, store, &identity)))
}

#[cfg(test)]
mod tests {
    use super::*;

    // `cargo test` builds with `oauth2` (the mock, a dev-dependency, enables the defaults): the
    // refusal is the branch a `default-features = false` dependant gets.
    #[test]
    fn client_credentials_are_refused_not_ignored_without_the_oauth2_feature() {
        let from_env = ClientBuilder::from_env_with(|name| match name {
            "CREDITDATA_CLIENT_ID" => Some("an-id".into()),
            "CREDITDATA_CLIENT_SECRET" => Some("sec-456".into()),
            "CREDITDATA_TOKEN_URL" => Some("http://127.0.0.1:9/token".into()),
            "CREDITDATA_ENVIRONMENT" => Some("mock".into()),
            _ => None,
        });
        let built = ClientBuilder::default()
            .client_credentials("http://127.0.0.1:9/token", "an-id", "sec-456")
            .build();
        let bearer = ClientBuilder::default().bearer_token("tok-123").build();
        assert!(bearer.is_ok(), "{:?}", bearer.err());
        if cfg!(feature = "oauth2") {
            assert!(from_env.is_ok_and(|b| b.build().is_ok()));
            assert!(built.is_ok(), "{:?}", built.err());
        } else {
            for refused in [from_env.map(|_| ()), built.map(|_| ())] {
                let Err(Error::Config(message)) = refused else {
                    panic!("client credentials accepted without the oauth2 feature")
                };
                assert!(message.contains("`oauth2` feature"), "{message}");
                assert!(!message.contains("sec-456"), "{message}");
            }
        }
    }

    #[test]
    fn builder_debug_never_shows_secrets() {
        let builder =
            Client::builder().client_credentials("http://127.0.0.1:1/token", "id", "s3cr3t-value");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("s3cr3t-value"), "{shown}");
        let client = builder.bearer_token("tok3n-value").build().unwrap();
        let shown = format!("{client:?}");
        assert!(!shown.contains("tok3n-value"), "{shown}");
    }
}
