//! The public front of authentication, over its layers: [`AuthError`] (`error.rs`), the
//! identity provider's door (`identity_http.rs`), the token cache (`token.rs`), the grants
//! (`client_credentials.rs`, `sign_in/`) that plug into it.
//!
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

// Below the front, bottom to top (see docs/architecture.md). Without `oauth2` only static
// tokens exist: no identity provider, no token cache, no grant is compiled.
pub(crate) mod access_token;
#[cfg(feature = "oauth2")]
mod client_credentials;
mod credentials;
pub(crate) mod error;
#[cfg(feature = "oauth2")]
pub(crate) mod identity_http;
pub(crate) mod limits;
#[cfg(feature = "oauth2")]
pub(crate) mod token;

use std::fmt;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

pub(crate) use access_token::AccessToken;
pub use credentials::{ClientAuthStyle, ClientCredentials, TokenEndpoint};
pub use error::{AuthError, AuthErrorKind};
pub(crate) use limits::IdentityProviderLimits;
pub use limits::MAX_IDENTITY_PROVIDER_BODY;
pub use limits::MAX_TOKEN_LIFETIME;
#[cfg(feature = "oauth2")]
use token::TokenCache;

/// Why client credentials are refused in a build without the `oauth2` feature: refused rather
/// than ignored, so calls never go out unauthenticated while the configuration says otherwise.
pub(crate) const WITHOUT_OAUTH2: &str = "OAuth2 client credentials need creditdata-client's \
    `oauth2` feature, which this build leaves out: enable the feature, or authenticate with a \
    static bearer token (`Credentials::bearer`, CREDITDATA_TOKEN)";

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

/// Supplies access tokens. Cloning shares the cache.
#[derive(Clone)]
pub(crate) struct Authenticator {
    source: Arc<Source>,
}

enum Source {
    Static(AccessToken),
    #[cfg(feature = "oauth2")]
    Cached(TokenCache),
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.source {
            Source::Static(_) => f.write_str("Authenticator(BearerToken([redacted]))"),
            #[cfg(feature = "oauth2")]
            Source::Cached(cache) => f
                .debug_struct("Authenticator")
                .field("credentials", cache)
                .finish_non_exhaustive(),
        }
    }
}

/// `grant`, its token requests reported to OpenTelemetry when the client reports there.
#[cfg(feature = "oauth2")]
fn traced(grant: Box<dyn token::FetchToken>) -> Box<dyn token::FetchToken> {
    #[cfg(feature = "opentelemetry")]
    let grant = Box::new(Traced {
        grant,
        obtained: std::sync::atomic::AtomicBool::new(false),
    });
    grant
}

/// A grant whose token requests are spans and counts (`crate::telemetry::token_request`): the
/// cache stays free of telemetry, and only real requests to the identity provider show.
#[cfg(all(feature = "oauth2", feature = "opentelemetry"))]
#[derive(Debug)]
struct Traced {
    grant: Box<dyn token::FetchToken>,
    /// Whether a token was obtained before: the next request then replaces one.
    obtained: std::sync::atomic::AtomicBool,
}

#[cfg(all(feature = "oauth2", feature = "opentelemetry"))]
impl token::FetchToken for Traced {
    fn fetch(&self, after_rejection: bool) -> token::FetchFuture<'_> {
        use crate::telemetry::TokenReason;
        use std::sync::atomic::Ordering;
        let reason = if after_rejection {
            TokenReason::Rejected
        } else if self.obtained.load(Ordering::Relaxed) {
            TokenReason::Refresh
        } else {
            TokenReason::Fetch
        };
        Box::pin(async move {
            let outcome =
                crate::telemetry::token_request(reason, self.grant.fetch(after_rejection)).await;
            if outcome.is_ok() {
                self.obtained.store(true, Ordering::Relaxed);
            }
            outcome
        })
    }
}

impl Authenticator {
    /// `http` must not follow redirects; `limits` bound each request to the identity provider.
    /// Fails when a static token cannot be sent in a header, or when client credentials reach a
    /// build without the `oauth2` feature.
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
            #[cfg(feature = "oauth2")]
            Credentials::ClientCredentials(credentials) => {
                Source::Cached(TokenCache::new(traced(Box::new(
                    client_credentials::ClientCredentialsGrant::new(credentials, http, limits),
                ))))
            }
            // `ClientBuilder::build` refuses client credentials in such a build; this is for any
            // path around it, which must fail rather than send calls unauthenticated.
            #[cfg(not(feature = "oauth2"))]
            Credentials::ClientCredentials(_) => {
                // No identity provider is ever asked in this build.
                drop((http, limits));
                return Err(WITHOUT_OAUTH2.to_string());
            }
            #[cfg(feature = "sign-in")]
            Credentials::SignedIn(signed_in) => {
                Source::Cached(TokenCache::new(traced(Box::new(signed_in.into_tokens()))))
            }
        };
        Ok(Authenticator {
            source: Arc::new(source),
        })
    }

    /// Whether a refused token can be replaced by a new one.
    pub(crate) fn can_refresh(&self) -> bool {
        match *self.source {
            Source::Static(_) => false,
            #[cfg(feature = "oauth2")]
            Source::Cached(_) => true,
        }
    }

    /// A token valid for a while yet: the cached one, or a new one.
    pub(crate) async fn token(&self) -> Result<AccessToken, AuthError> {
        match &*self.source {
            Source::Static(token) => Ok(token.clone()),
            #[cfg(feature = "oauth2")]
            Source::Cached(cache) => cache.token().await,
        }
    }

    /// A replacement for `rejected`, which the service refused (401). When another call
    /// already replaced it, that token is returned without a new request.
    pub(crate) async fn refresh_after_rejection(
        &self,
        // Only a cached token is ever replaced (`can_refresh`), and only `oauth2` has a cache.
        #[cfg_attr(
            not(feature = "oauth2"),
            expect(unused_variables, reason = "no token cache without `oauth2`")
        )]
        rejected: &AccessToken,
    ) -> Result<AccessToken, AuthError> {
        match &*self.source {
            Source::Static(token) => Ok(token.clone()),
            #[cfg(feature = "oauth2")]
            Source::Cached(cache) => cache.replace(rejected).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
