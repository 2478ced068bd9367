//! The generated `Client`'s own methods over the runtime, above the generated code:
//! [`Client::access_token`] (the token step of every call, without a request) and
//! [`Client::rate_limiter`].

use crate::Client;
use crate::error::Error;
#[cfg(feature = "rate-limit")]
use crate::rate_limit::RateLimiter;

impl Client {
    /// A currently valid access token, for a request the client does not make itself (a
    /// hand-written call, a `curl` for support, another tool).
    ///
    /// It comes from the same place as every call's token, with the same guarantees:
    ///
    /// - **Client credentials and sign-in**: the cached token while it is fresh; otherwise a new
    ///   one, refreshed ahead of its expiry (30 s before it, or a fifth of its lifetime if that is
    ///   shorter), so the token returned is good for at least that long. Only one token request
    ///   is in flight however many callers (and calls) wait: they all share its outcome.
    /// - **Sign-in**: a stored access token is used while it has more than a minute left;
    ///   otherwise the refresh token is used, and the rotated tokens are saved to the
    ///   `sign_in::TokenStore` (feature `sign-in`) before the new token is returned. A refused
    ///   refresh token is [`AuthErrorKind::SignInRequired`](crate::auth::AuthErrorKind::SignInRequired),
    ///   as for a call.
    /// - **A static bearer token**: that token, as configured (trimmed).
    ///
    /// No request is made to the service. A transient failure of the identity provider
    /// ([`Error::is_transient`]) is retried within the client's
    /// [`RetryPolicy`](crate::retry::RetryPolicy), as it would be for a call.
    ///
    /// The token is a [`SecretString`](secrecy::SecretString): it never shows in `Debug`, and
    /// reading it takes an explicit `expose_secret()`. Whoever holds it can act with the
    /// client's (or the person's) rights until it expires: do not log it or keep it.
    ///
    /// # Errors
    ///
    /// [`Error::Auth`] when no token could be obtained (with the identity provider's reason),
    /// [`Error::Config`] when the client was built without credentials.
    pub async fn access_token(&self) -> Result<secrecy::SecretString, Error> {
        crate::runtime::access_token(&self.inner).await
    }

    #[cfg(feature = "rate-limit")]
    /// The rate limiter every attempt of this client and its clones waits for, when one was
    /// configured ([`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)): its
    /// [`status`](crate::rate_limit::RateLimiter::status) tells progress displays how fast they may expect to go.
    pub fn rate_limiter(&self) -> Option<&RateLimiter> {
        self.inner.rate_limiter()
    }
}
