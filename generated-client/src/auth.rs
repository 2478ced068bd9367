//! Authentication: a static bearer token, or OAuth2 client credentials with tokens cached,
//! refreshed ahead of expiry and fetched once however many calls wait for one.
//!
//! The service accepts either of its two OAuth2 schemes (live and test identity providers); both
//! issue five-minute JWT access tokens to the client-credentials grant. The token endpoint is
//! given directly ([`TokenEndpoint::Url`]), or found through the issuer's OpenID Connect
//! discovery document ([`TokenEndpoint::Issuer`]).
//!
//! The token request (RFC 6749 §4.4: a form with `grant_type=client_credentials`, the client
//! authenticated in the form or with HTTP Basic per §2.3.1) is made by the `oauth2` crate over
//! an HTTP function of ours and an HTTP client of its own, which never follows redirects
//! (see below).
//!
//! # Caching and single flight
//!
//! A token is reused until a margin before its expiry (30 s, or a fifth of its lifetime if that
//! is shorter), then replaced by the next call that needs one. Only one token request is ever in
//! flight: callers that need a token while it runs wait for it and share its outcome, success or
//! failure, even when the token is already stale on arrival (a lifetime of zero, or shorter than
//! the request took). A cold client starting 1000 calls at once makes exactly one token
//! request; a token endpoint that refuses the client is asked once, not once per waiting call.
//!
//! The lifetime is the response's `expires_in`, capped at [`MAX_TOKEN_LIFETIME`] (24 h). A
//! response without `expires_in`, or with `0`, gives a token for the calls waiting for it only
//! ("use once"): the next call asks for a new one.
//!
//! # What the identity provider cannot do
//!
//! - **Redirect a credential.** Token and discovery requests never follow a redirect: a `3xx`
//!   is an [`AuthErrorKind::Redirect`] error naming the `Location` (without its query). A token
//!   endpoint answering `307` to another host would otherwise receive the client secret again
//!   in the re-sent body.
//! - **Substitute itself.** A discovery document whose `issuer` is not the configured issuer is
//!   refused (OpenID Connect Discovery 1.0, §4.3), as is a `token_endpoint` that is not `https`
//!   (plain `http` is accepted on a loopback address only, for the local mock), or that has a
//!   user name, a query or a fragment. A configured token URL or issuer passes the same checks
//!   when the client is built.
//! - **Exhaust memory.** Token and discovery answers are read up to
//!   [`MAX_IDENTITY_PROVIDER_BODY`] bytes (or the client's smaller
//!   [`max_response_body`](crate::ClientBuilder::max_response_body)).
//! - **Panic the client.** Any `expires_in` is clamped, not added to a clock unchecked.
//! - **Make an outage look permanent.** `408`, `429` and `5xx` are
//!   [`AuthErrorKind::Unavailable`] whatever their body (an RFC 6749 error, another JSON
//!   document, nothing), so calls retry them within their retry policy.
//!
//! Client credentials need the `oauth2` feature (on by default, and implied by `sign-in`).
//! Without it only a static bearer token authenticates: client credentials given to the
//! builder, or through `CREDITDATA_CLIENT_ID` and its companions, are an
//! [`Error::Config`](crate::Error::Config) naming the feature, never silently dropped.
//!
//! When the service answers 401, the runtime asks for a replacement of the refused token; if
//! another call already replaced it, the replacement is used without a new request.
//!
//! Secrets (the client secret, the static token, access tokens) are kept in [`SecretString`]s,
//! print as `[redacted]` in `Debug`, are marked sensitive in the `Authorization` header, and
//! never appear in errors or logs.

// Without `oauth2` the token source (its cache, discovery, the identity provider's answers
// classified) stays compiled, one code path for every build, but no credentials reach it: the
// builder refuses client credentials in such a build.
#![cfg_attr(not(feature = "oauth2"), allow(dead_code))]

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderValue;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::body_limits::{LimitedReadError, read_limited};
#[cfg(feature = "oauth2")]
use crate::identity_http::{OAuthHttp, oauth_error};
use crate::urls::{redact_reqwest, shown_location, validate_identity_provider_url};

/// How the client proves who it is. Non-exhaustive: the `sign-in` feature adds a variant.
#[derive(Clone)]
#[non_exhaustive]
pub enum Credentials {
    /// A bearer token obtained elsewhere; sent as is and never refreshed (a 401 is returned to
    /// the caller).
    BearerToken(SecretString),
    /// OAuth2 client credentials. Feature `oauth2`: without it
    /// [`ClientBuilder::build`](crate::ClientBuilder::build) refuses them.
    ClientCredentials(ClientCredentials),
    /// A person signed in ([`crate::sign_in`]): their access token, refreshed with their
    /// refresh token, the rotated tokens kept in their [`TokenStore`](crate::sign_in::TokenStore).
    #[cfg(feature = "sign-in")]
    SignedIn(crate::sign_in::SignedInCredentials),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::BearerToken(_) => f.write_str("BearerToken([redacted])"),
            Credentials::ClientCredentials(c) => c.fmt(f),
            #[cfg(feature = "sign-in")]
            Credentials::SignedIn(c) => c.fmt(f),
        }
    }
}

impl Credentials {
    /// A static bearer token.
    pub fn bearer(token: impl Into<String>) -> Self {
        Credentials::BearerToken(SecretString::from(token.into()))
    }

    /// Client credentials against a token endpoint, sent in the form body, no scopes.
    pub fn client_credentials(
        token_endpoint: TokenEndpoint,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Credentials::ClientCredentials(ClientCredentials {
            endpoint: token_endpoint,
            client_id: client_id.into(),
            client_secret: SecretString::from(client_secret.into()),
            scopes: Vec::new(),
            auth_style: ClientAuthStyle::RequestBody,
        })
    }
}

/// OAuth2 client-credentials settings.
#[derive(Clone)]
pub struct ClientCredentials {
    /// Where tokens come from.
    pub endpoint: TokenEndpoint,
    /// The client id.
    pub client_id: String,
    /// The client secret (redacted in `Debug`).
    pub client_secret: SecretString,
    /// Scopes to request; none by default (the identity provider grants `openid`).
    pub scopes: Vec<String>,
    /// How the client authenticates to the token endpoint.
    pub auth_style: ClientAuthStyle,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("scopes", &self.scopes)
            .field("auth_style", &self.auth_style)
            .finish()
    }
}

/// Where the token endpoint is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenEndpoint {
    /// The token endpoint itself (e.g. `{issuer}/protocol/openid-connect/token`).
    Url(String),
    /// An OpenID Connect issuer; the token endpoint is read from
    /// `{issuer}/.well-known/openid-configuration` on first use (and remembered).
    Issuer(String),
}

/// How the client id and secret reach the token endpoint (RFC 6749 §2.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuthStyle {
    /// `client_id` and `client_secret` in the form body (what the service's identity provider
    /// documents).
    #[default]
    RequestBody,
    /// HTTP Basic authentication (`Authorization: Basic ...`).
    BasicAuth,
}

/// An access token, ready to send: the `Authorization` header value, marked sensitive, and
/// the token itself for [`Client::access_token`](crate::Client::access_token). Redacted in
/// `Debug`; cloning shares it.
#[derive(Clone)]
pub(crate) struct AccessToken(Arc<TokenParts>);

struct TokenParts {
    header: HeaderValue,
    // Kept as given rather than cut back out of the header, which may hold bytes
    // `HeaderValue::to_str` refuses.
    secret: SecretString,
}

impl AccessToken {
    pub(crate) fn new(token: &str) -> Option<AccessToken> {
        let mut header = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
        header.set_sensitive(true);
        Some(AccessToken(Arc::new(TokenParts {
            header,
            secret: SecretString::from(token.to_string()),
        })))
    }

    /// The `Authorization` header value (`Bearer ...`).
    pub(crate) fn header(&self) -> &HeaderValue {
        &self.0.header
    }

    /// The token alone, without the `Bearer ` prefix.
    pub(crate) fn secret(&self) -> SecretString {
        self.0.secret.clone()
    }

    pub(crate) fn same_as(&self, other: &AccessToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken([redacted])")
    }
}

/// Why no access token could be obtained.
///
/// Equal when kind and description are: the cause is not compared.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind}{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
pub struct AuthError {
    /// What kind of failure.
    pub kind: AuthErrorKind,
    /// The identity provider's `error_description`, or what was wrong with its answer. Never
    /// contains a secret.
    pub description: Option<String>,
    /// The connection's failure, for [`AuthErrorKind::Unavailable`] (its URL without query
    /// values).
    #[source]
    cause: Option<Arc<reqwest::Error>>,
}

impl PartialEq for AuthError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.description == other.description
    }
}

impl Eq for AuthError {}

/// The RFC 6749 §5.2 error codes, plus failures on the way to the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// `invalid_client` (or a 401 without an error code): unknown client id or wrong secret.
    #[error(
        "the identity provider rejected the client id or secret (invalid_client); check the client credentials"
    )]
    InvalidClient,
    /// `unauthorized_client`: the client may not use the client-credentials grant.
    #[error("the client is not allowed to use the client-credentials grant (unauthorized_client)")]
    UnauthorizedClient,
    /// `invalid_scope`.
    #[error("a requested scope is not allowed (invalid_scope)")]
    InvalidScope,
    /// `invalid_grant`.
    #[error("the identity provider refused the grant (invalid_grant)")]
    InvalidGrant,
    /// `invalid_request`.
    #[error("the identity provider found the token request malformed (invalid_request)")]
    InvalidRequest,
    /// `unsupported_grant_type`.
    #[error(
        "the identity provider does not support the client-credentials grant (unsupported_grant_type)"
    )]
    UnsupportedGrantType,
    /// Another error code.
    #[error("the identity provider refused the token request ({0})")]
    Other(String),
    /// The identity provider could not be reached, timed out, or answered 408, 429 or 5xx:
    /// trying again later may help.
    #[error("the identity provider could not be reached or is not available")]
    Unavailable,
    /// The identity provider answered, but not with a token response or an OAuth2 error (an
    /// HTML page, a 404 from a wrong token URL, a token a header cannot carry, ...).
    #[error("the identity provider's answer is not a usable token response")]
    InvalidResponse,
    /// The discovery document was missing or unreadable, named another issuer, or had no
    /// usable `token_endpoint`.
    #[error("the OpenID Connect discovery document could not be used")]
    Discovery,
    /// The token endpoint or the discovery document answered with a redirect, which is never
    /// followed: a redirected token request would carry the client secret elsewhere.
    #[error(
        "the identity provider answered with a redirect, which is never followed for a token or discovery request"
    )]
    Redirect,
    /// The person's sign-in is over: no one is signed in, or the refresh token was refused
    /// (`invalid_grant`: revoked, expired, or replaced by a newer one), or the stored sign-in
    /// belongs to another identity provider or client. Signing in again is the only remedy;
    /// the client never retries it.
    #[error("the sign-in has ended or there is none: sign in again (`creditdata login`)")]
    SignInRequired,
    /// The application's [`TokenStore`](crate::sign_in::TokenStore) could not load or save the
    /// sign-in.
    #[error("the token store failed")]
    TokenStore,
}

impl AuthError {
    pub(crate) fn new(kind: AuthErrorKind, description: impl Into<Option<String>>) -> Self {
        AuthError {
            kind,
            description: description.into(),
            cause: None,
        }
    }

    /// The identity provider could not be reached: `error` says why.
    pub(crate) fn unreachable(error: reqwest::Error) -> Self {
        AuthError {
            kind: AuthErrorKind::Unavailable,
            description: None,
            cause: Some(Arc::new(redact_reqwest(error))),
        }
    }

    /// Whether trying again later could help (the provider was unreachable or failed).
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, AuthErrorKind::Unavailable)
    }
}

/// Tokens are replaced this long before the provider says they expire, or a fifth of their
/// lifetime before if that is shorter, so a call never leaves with a token about to lapse.
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The longest a token is kept, whatever `expires_in` says (production's tokens live five
/// minutes): a larger value is clamped to this.
pub const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// The most bytes of a token or discovery answer read (the client's
/// [`max_response_body`](crate::ClientBuilder::max_response_body) when that is smaller). Real
/// answers are a few kilobytes.
pub const MAX_IDENTITY_PROVIDER_BODY: u64 = 1024 * 1024;

/// When a token obtained at `obtained` with `lifetime` (`expires_in`) should be replaced:
/// `obtained` itself for a token without a lifetime or with a lifetime of zero (use once).
pub(crate) fn refresh_deadline(obtained: Instant, lifetime: Option<Duration>) -> Instant {
    let lifetime = lifetime.unwrap_or(Duration::ZERO).min(MAX_TOKEN_LIFETIME);
    let usable = lifetime.saturating_sub(REFRESH_MARGIN.min(lifetime / 5));
    obtained.checked_add(usable).unwrap_or(obtained)
}

/// Bounds of each request to the identity provider.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdentityProviderLimits {
    /// The total time of one token or discovery request: while one runs, every call needing a
    /// token waits for it.
    pub(crate) timeout: Duration,
    /// The most bytes of an answer read.
    pub(crate) max_body: u64,
}

/// Supplies access tokens. Cloning shares the cache.
#[derive(Clone)]
pub(crate) struct Authenticator {
    source: Arc<Source>,
}

enum Source {
    Static(AccessToken),
    ClientCredentials(Box<TokenSource>),
}

struct TokenSource {
    grant: Grant,
    /// Never follows redirects (built so by the client builder).
    http: reqwest::Client,
    limits: IdentityProviderLimits,
    /// The current token; read without waiting by every call.
    current: RwLock<Option<Cached>>,
    /// Held across a token request (single flight).
    refresh: Mutex<RefreshState>,
    /// Completed token requests, successful or not: a waiter that sees it change shares the
    /// outcome instead of asking again.
    completed: AtomicU64,
}

/// How a [`TokenSource`] obtains its tokens.
enum Grant {
    ClientCredentials(ClientCredentials),
    #[cfg(feature = "sign-in")]
    SignedIn(crate::sign_in::UserTokens),
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::ClientCredentials(c) => c.fmt(f),
            #[cfg(feature = "sign-in")]
            Grant::SignedIn(u) => u.fmt(f),
        }
    }
}

#[derive(Clone)]
struct Cached {
    token: AccessToken,
    refresh_at: Instant,
}

#[derive(Default)]
struct RefreshState {
    token_url: Option<String>,
    /// The outcome of the last token request, for the calls that waited for it.
    last_outcome: Option<Result<AccessToken, AuthError>>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.source {
            Source::Static(_) => f.write_str("Authenticator(BearerToken([redacted]))"),
            Source::ClientCredentials(source) => f
                .debug_struct("Authenticator")
                .field("credentials", &source.grant)
                .finish_non_exhaustive(),
        }
    }
}

impl Authenticator {
    /// `http` must not follow redirects; `limits` bound each request to the identity provider.
    /// Fails when a static token cannot be sent in a header.
    pub(crate) fn new(
        credentials: Credentials,
        http: reqwest::Client,
        limits: IdentityProviderLimits,
    ) -> Result<Self, String> {
        let source = match credentials {
            Credentials::BearerToken(secret) => Source::Static(
                AccessToken::new(secret.expose_secret().trim()).ok_or_else(|| {
                    "the bearer token contains characters an HTTP header cannot carry".to_string()
                })?,
            ),
            Credentials::ClientCredentials(credentials) => Source::ClientCredentials(Box::new(
                TokenSource::new(Grant::ClientCredentials(credentials), http, limits),
            )),
            #[cfg(feature = "sign-in")]
            Credentials::SignedIn(signed_in) => Source::ClientCredentials(Box::new(
                TokenSource::new(Grant::SignedIn(signed_in.into_tokens()), http, limits),
            )),
        };
        Ok(Authenticator {
            source: Arc::new(source),
        })
    }

    /// Whether a refused token can be replaced by a new one.
    pub(crate) fn can_refresh(&self) -> bool {
        matches!(*self.source, Source::ClientCredentials(_))
    }

    /// A token valid for a while yet: the cached one, or a new one.
    pub(crate) async fn token(&self) -> Result<AccessToken, AuthError> {
        match &*self.source {
            Source::Static(token) => Ok(token.clone()),
            Source::ClientCredentials(source) => {
                // Read before the cache: any token request completing after this point was
                // made for a call in this one's situation, and its token is good for it too.
                let seen = source.completed.load(Ordering::Acquire);
                match source.fresh() {
                    Some(token) => Ok(token),
                    // Boxed: the token request's future is large, and every call's future would
                    // carry (and move) its size for a path taken once every few minutes.
                    None => Box::pin(source.refresh(None, seen)).await,
                }
            }
        }
    }

    /// A replacement for `rejected`, which the service refused (401). When another call
    /// already replaced it, that token is returned without a new request.
    pub(crate) async fn refresh_after_rejection(
        &self,
        rejected: &AccessToken,
    ) -> Result<AccessToken, AuthError> {
        match &*self.source {
            Source::Static(token) => Ok(token.clone()),
            Source::ClientCredentials(source) => {
                let seen = source.completed.load(Ordering::Acquire);
                Box::pin(source.refresh(Some(rejected), seen)).await
            }
        }
    }
}

impl TokenSource {
    fn new(grant: Grant, http: reqwest::Client, limits: IdentityProviderLimits) -> Self {
        TokenSource {
            grant,
            http,
            limits,
            current: RwLock::new(None),
            refresh: Mutex::new(RefreshState::default()),
            completed: AtomicU64::new(0),
        }
    }

    fn fresh(&self) -> Option<AccessToken> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        current
            .as_ref()
            .filter(|cached| Instant::now() < cached.refresh_at)
            .map(|cached| cached.token.clone())
    }

    fn store(&self, cached: Option<Cached>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = cached;
    }

    /// A new token, or the outcome of a token request that completed after `seen` (the count
    /// of completed requests when this call found no usable token). Sharing that outcome,
    /// rather than looking at the cache again, is what keeps waiting calls from each asking for
    /// a token of their own when it is already stale on arrival (use-once tokens, lifetimes
    /// shorter than the request took).
    async fn refresh(
        &self,
        rejected: Option<&AccessToken>,
        seen: u64,
    ) -> Result<AccessToken, AuthError> {
        let mut state = self.refresh.lock().await;
        if self.completed.load(Ordering::Acquire) != seen {
            match &state.last_outcome {
                Some(Ok(token)) if !rejected.is_some_and(|r| r.same_as(token)) => {
                    return Ok(token.clone());
                }
                Some(Err(failure)) => return Err(failure.clone()),
                _ => {}
            }
        }
        if let Some(token) = self.fresh() {
            if !rejected.is_some_and(|r| r.same_as(&token)) {
                return Ok(token);
            }
            // Known to be refused: no other call should send it while a new one is fetched.
            self.store(None);
        }
        let started = Instant::now();
        let outcome = match self.obtain(&mut state, rejected.is_some()).await {
            Ok((token, lifetime)) => {
                self.store(Some(Cached {
                    token: token.clone(),
                    refresh_at: refresh_deadline(started, lifetime),
                }));
                Ok(token)
            }
            Err(error) => {
                tracing::debug!(
                    error = &error as &dyn std::error::Error,
                    "token request failed"
                );
                Err(error)
            }
        };
        state.last_outcome = Some(outcome.clone());
        self.completed.fetch_add(1, Ordering::AcqRel);
        outcome
    }

    /// A new token and its lifetime, by this source's grant. `after_rejection`: the service
    /// refused the current token, which must not be handed out again.
    #[cfg_attr(not(feature = "sign-in"), allow(unused_variables))]
    async fn obtain(
        &self,
        state: &mut RefreshState,
        after_rejection: bool,
    ) -> Result<(AccessToken, Option<Duration>), AuthError> {
        match &self.grant {
            #[cfg(feature = "oauth2")]
            Grant::ClientCredentials(credentials) => self.request_token(credentials, state).await,
            // `ClientBuilder::build` refuses client credentials in such a build; this is for any
            // path around it, which must fail rather than send calls unauthenticated.
            #[cfg(not(feature = "oauth2"))]
            Grant::ClientCredentials(_) => Err(AuthError::new(
                AuthErrorKind::InvalidRequest,
                crate::config::WITHOUT_OAUTH2.to_string(),
            )),
            #[cfg(feature = "sign-in")]
            Grant::SignedIn(user) => user.token(after_rejection).await,
        }
    }

    async fn token_url(
        &self,
        credentials: &ClientCredentials,
        state: &mut RefreshState,
    ) -> Result<String, AuthError> {
        if let Some(url) = &state.token_url {
            return Ok(url.clone());
        }
        let url = match &credentials.endpoint {
            TokenEndpoint::Url(url) => url.clone(),
            TokenEndpoint::Issuer(issuer) => self.discover(issuer).await?,
        };
        state.token_url = Some(url.clone());
        Ok(url)
    }

    async fn discover(&self, issuer: &str) -> Result<String, AuthError> {
        let issuer = issuer.trim().trim_end_matches('/');
        let url = format!("{issuer}/.well-known/openid-configuration");
        let discovery_error =
            |why: String| AuthError::new(AuthErrorKind::Discovery, format!("{url}: {why}"));
        let unavailable = AuthError::unreachable;
        let response = self
            .http
            .get(&url)
            .timeout(self.limits.timeout)
            .send()
            .await
            .map_err(unavailable)?;
        refuse_redirect_or_transient(&url, &response)?;
        let status = response.status();
        if !status.is_success() {
            return Err(discovery_error(format!("answered {status}")));
        }
        let body = read_limited(response, self.limits.max_body)
            .await
            .map_err(|e| match e {
                LimitedReadError::TooLarge(limit) => discovery_error(format!(
                    "the document is larger than {limit} bytes, so it was not read"
                )),
                LimitedReadError::Transport(e) => unavailable(e),
            })?;
        // serde's message may quote the document; its position is enough.
        let document: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
            discovery_error(format!(
                "not a JSON document (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        // OpenID Connect Discovery 1.0, §4.3: the document must be the configured issuer's
        // own, or a compromised or misconfigured host could name any token endpoint.
        let named = document.get("issuer").and_then(serde_json::Value::as_str);
        if named.map(|n| n.trim_end_matches('/')) != Some(issuer) {
            return Err(discovery_error(match named {
                Some(named) => format!(
                    "the document is for issuer {:?}, not the configured issuer; it is refused",
                    shorten(named)
                ),
                None => "the document names no issuer; it is refused".to_string(),
            }));
        }
        let endpoint = document
            .get("token_endpoint")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| discovery_error("no token_endpoint member".into()))?;
        validate_identity_provider_url("its token_endpoint", endpoint).map_err(discovery_error)?;
        Ok(endpoint.trim().to_string())
    }
}

#[cfg(feature = "oauth2")]
impl TokenSource {
    /// A token and its lifetime (`expires_in`, when the response has one): the client
    /// credentials grant (RFC 6749 §4.4), sent by the `oauth2` crate through the identity
    /// provider's HTTP function ([`crate::identity_http`]).
    async fn request_token(
        &self,
        cc: &ClientCredentials,
        state: &mut RefreshState,
    ) -> Result<(AccessToken, Option<Duration>), AuthError> {
        use oauth2::basic::{BasicClient, BasicTokenType};
        use oauth2::{AuthType, ClientId, ClientSecret, Scope, TokenResponse as _, TokenUrl};

        let token_url = self.token_url(cc, state).await?;
        let url = reqwest::Url::parse(&token_url).map_err(|e| {
            AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!("token endpoint {token_url:?} is not a URL: {e}"),
            )
        })?;
        let client = BasicClient::new(ClientId::new(cc.client_id.clone()))
            .set_client_secret(ClientSecret::new(
                cc.client_secret.expose_secret().to_string(),
            ))
            .set_auth_type(match cc.auth_style {
                ClientAuthStyle::RequestBody => AuthType::RequestBody,
                // RFC 6749 §2.3.1: id and secret form-urlencoded, then joined by `:`.
                ClientAuthStyle::BasicAuth => AuthType::BasicAuth,
            })
            .set_token_uri(TokenUrl::from_url(url));
        let http = OAuthHttp::new(self.http.clone(), self.limits);
        let answer = client
            .exchange_client_credentials()
            .add_scopes(cc.scopes.iter().cloned().map(Scope::new))
            .request_async(&http)
            .await
            .map_err(oauth_error)?;
        if *answer.token_type() != BasicTokenType::Bearer {
            // RFC 6749 §7.1: a client must not use a token of a type it does not understand.
            return Err(AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!(
                    "the token endpoint issued a token of type {:?}, not Bearer",
                    shorten(answer.token_type().as_ref())
                ),
            ));
        }
        let token = AccessToken::new(answer.access_token().secret()).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::InvalidResponse,
                "the access token contains characters an HTTP header cannot carry".to_string(),
            )
        })?;
        Ok((token, answer.expires_in()))
    }
}

/// A redirect (never followed) or a transient status from the identity provider as the error it
/// is; `shown` is the address as it may appear in the message.
pub(crate) fn refuse_redirect_or_transient(
    shown: impl fmt::Display,
    response: &reqwest::Response,
) -> Result<(), AuthError> {
    let status = response.status();
    if status.is_redirection() {
        return Err(AuthError::new(
            AuthErrorKind::Redirect,
            format!(
                "{shown} answered {status}, pointing to {}",
                shown_location(response)
            ),
        ));
    }
    if is_transient_status(status) {
        return Err(AuthError::new(
            AuthErrorKind::Unavailable,
            format!("{shown} answered {status}"),
        ));
    }
    Ok(())
}

/// 408, 429 and every 5xx: the identity provider cannot answer now.
pub(crate) fn is_transient_status(status: StatusCode) -> bool {
    crate::retry::is_retryable_status(status) || status.is_server_error()
}

/// A value from the identity provider, bounded for a message.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_replaced_a_margin_before_expiry() {
        let t0 = Instant::now();
        // Production's five-minute tokens: 30 s early.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::from_secs(300))),
            t0 + Duration::from_secs(270)
        );
        // Short-lived tokens: a fifth of their lifetime early.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::from_secs(10))),
            t0 + Duration::from_secs(8)
        );
        // No lifetime, or zero: use once.
        assert_eq!(refresh_deadline(t0, Some(Duration::ZERO)), t0);
        assert_eq!(refresh_deadline(t0, None), t0);
        // Any lifetime is clamped, never an overflow.
        assert_eq!(
            refresh_deadline(t0, Some(Duration::MAX)),
            t0 + MAX_TOKEN_LIFETIME - REFRESH_MARGIN
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_cached_token_goes_stale_at_its_deadline_not_at_expiry() {
        let auth = Authenticator::new(
            Credentials::client_credentials(
                TokenEndpoint::Url("http://127.0.0.1:9/token".into()),
                "id",
                "secret",
            ),
            reqwest::Client::new(),
            IdentityProviderLimits {
                timeout: Duration::from_secs(1),
                max_body: MAX_IDENTITY_PROVIDER_BODY,
            },
        )
        .unwrap();
        let Source::ClientCredentials(source) = &*auth.source else {
            unreachable!()
        };
        let token = AccessToken::new("abc").unwrap();
        source.store(Some(Cached {
            token: token.clone(),
            refresh_at: refresh_deadline(Instant::now(), Some(Duration::from_secs(300))),
        }));
        tokio::time::advance(Duration::from_secs(269)).await;
        assert!(source.fresh().is_some_and(|t| t.same_as(&token)));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(
            source.fresh().is_none(),
            "30 s before expiry the token must be replaced"
        );
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let shown = format!(
            "{:?} {:?} {:?}",
            Credentials::bearer("tok-123"),
            Credentials::client_credentials(
                TokenEndpoint::Url("http://x/t".into()),
                "id",
                "sec-456"
            ),
            AccessToken::new("tok-789").unwrap(),
        );
        for secret in ["tok-123", "sec-456", "tok-789"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
