//! Leaf: why no access token could be obtained ([`AuthError`], its kinds and messages), for
//! every layer above, from the error type to the grants.

use std::sync::Arc;

#[cfg(feature = "oauth2")]
use crate::urls::redact_reqwest;

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
    /// The application's `sign_in::TokenStore` (feature `sign-in`) could not load or save the
    /// sign-in.
    #[error("the token store failed")]
    TokenStore,
}

// Made by the identity provider's door and the grants, which exist with `oauth2` only.
#[cfg(feature = "oauth2")]
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
}

impl AuthError {
    /// Whether trying again later could help (the provider was unreachable or failed).
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, AuthErrorKind::Unavailable)
    }
}
