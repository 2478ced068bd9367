//! Why a sign-in or a sign-out failed: [`SignInError`] and the provider's authorization error
//! codes ([`AuthorizationErrorKind`]), below every other module of `sign_in`, which all return it.

use std::time::Duration;

use crate::auth::error::AuthError;
use crate::auth::identity_http::shorten;

/// Why a sign-in or sign-out failed. Never contains a token, a code or personal data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignInError {
    /// The identity provider sent the browser back with an error (`error=` in the redirect).
    #[error("the identity provider ended the sign-in: {kind}")]
    Authorization {
        /// The error code.
        kind: AuthorizationErrorKind,
        /// The provider's `error_description`, shortened (the provider's text: show it as
        /// such).
        description: Option<String>,
    },
    /// No redirect with this sign-in's `state` arrived in time.
    #[error(
        "no sign-in arrived within {} s: start again and finish signing in in the browser",
        .0.as_secs()
    )]
    TimedOut(Duration),
    /// The loopback listener could not be opened or failed.
    #[error("cannot listen for the browser's redirect on 127.0.0.1")]
    Listener(#[source] std::io::Error),
    /// The redirect carried this sign-in's `state` but was unusable (no code, another issuer's
    /// `iss`, a repeated parameter).
    #[error("the browser's redirect cannot be used: {0}")]
    InvalidRedirect(String),
    /// Discovery, the code exchange, revocation or end-session failed.
    #[error("the identity provider's answer cannot be used")]
    Provider(#[source] AuthError),
    /// The ID token was refused: what was wrong with it (never the token).
    #[error("the ID token was refused: {0}")]
    IdToken(String),
    /// An unusable setting (issuer URL, client id).
    #[error("{0}")]
    Config(String),
    /// The one-time start address
    /// ([`PendingSignIn::start_url`](super::PendingSignIn::start_url)) was asked for a second
    /// time: another program on this computer may have read it and gone on to the provider with
    /// this sign-in's secrets, so the sign-in was ended.
    #[error(
        "the sign-in address was opened more than once: another program on this computer may have \
         read it, so this sign-in was ended; start again and open the address only once"
    )]
    StartReused,
}

impl From<AuthError> for SignInError {
    fn from(error: AuthError) -> Self {
        SignInError::Provider(error)
    }
}

/// The `error` codes of an authorization response (RFC 6749 §4.1.2.1, OpenID Connect Core
/// §3.1.2.6).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizationErrorKind {
    /// `access_denied`: the person (or the provider) declined.
    #[error("access was denied (access_denied)")]
    AccessDenied,
    /// `login_required`: `prompt=none` and no one is signed in at the provider.
    #[error("the person must sign in at the identity provider (login_required)")]
    LoginRequired,
    /// `consent_required`.
    #[error("the person must consent (consent_required)")]
    ConsentRequired,
    /// `interaction_required`.
    #[error("the person must interact with the identity provider (interaction_required)")]
    InteractionRequired,
    /// `invalid_request`.
    #[error("the identity provider found the request malformed (invalid_request)")]
    InvalidRequest,
    /// `invalid_scope`.
    #[error("a requested scope is not allowed (invalid_scope)")]
    InvalidScope,
    /// `unauthorized_client`.
    #[error("the client may not use this flow (unauthorized_client)")]
    UnauthorizedClient,
    /// `unsupported_response_type`.
    #[error("the identity provider does not offer the code flow (unsupported_response_type)")]
    UnsupportedResponseType,
    /// `server_error`.
    #[error("the identity provider failed (server_error)")]
    ServerError,
    /// `temporarily_unavailable`.
    #[error("the identity provider is temporarily unavailable (temporarily_unavailable)")]
    TemporarilyUnavailable,
    /// Another code.
    #[error("the identity provider answered {0}")]
    Other(String),
}

impl AuthorizationErrorKind {
    pub(super) fn from_code(code: &str) -> Self {
        match code {
            "access_denied" => AuthorizationErrorKind::AccessDenied,
            "login_required" => AuthorizationErrorKind::LoginRequired,
            "consent_required" => AuthorizationErrorKind::ConsentRequired,
            "interaction_required" => AuthorizationErrorKind::InteractionRequired,
            "invalid_request" => AuthorizationErrorKind::InvalidRequest,
            "invalid_scope" => AuthorizationErrorKind::InvalidScope,
            "unauthorized_client" => AuthorizationErrorKind::UnauthorizedClient,
            "unsupported_response_type" => AuthorizationErrorKind::UnsupportedResponseType,
            "server_error" => AuthorizationErrorKind::ServerError,
            "temporarily_unavailable" => AuthorizationErrorKind::TemporarilyUnavailable,
            other => AuthorizationErrorKind::Other(shorten(other)),
        }
    }
}
