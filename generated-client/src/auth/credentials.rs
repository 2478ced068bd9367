//! Leaf: what a client-credentials grant is configured with (endpoint, client id and secret,
//! scopes, how the client authenticates), in every build: the builder refuses them without the
//! `oauth2` feature rather than the type disappearing.

use std::fmt;

use secrecy::SecretString;

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
