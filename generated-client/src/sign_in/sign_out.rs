//! Signing a person out: revoking the refresh token (RFC 7009) and asking the provider to end
//! its own session (OpenID Connect RP-Initiated Logout 1.0), reporting exactly which happened.

use secrecy::{ExposeSecret as _, SecretString};

use super::error::SignInError;
use super::provider::IdentityProvider;
use super::store::StoredSignIn;
use crate::auth::error::AuthErrorKind;

/// Where the provider is asked to send the browser once its session has ended. Nothing
/// listens there: the provider's redirect to it, which the client reads but never follows, is
/// the confirmation. A loopback URI of a native application (RFC 8252 §7.3).
const POST_LOGOUT_REDIRECT_URI: &str = "http://127.0.0.1/signed-out";

/// What [`sign_out`] ended. Never more than the provider confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignedOut {
    /// The refresh token (the access token when there was none) was revoked: the sign-in can
    /// no longer be renewed.
    pub revoked: bool,
    /// What became of the provider's own (browser) session.
    pub provider_session: ProviderSession,
}

/// The provider's session after [`sign_out`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderSession {
    /// The provider ended it and said so (it sent the browser on to the post-logout URI).
    Ended,
    /// The provider answered with a page instead: perhaps a question for the person, to be
    /// answered in a browser. It may still be open.
    Unconfirmed,
    /// Not ended: the provider offers no end-session endpoint, there was no ID token to name
    /// the session, or the request failed.
    NotEnded,
}

/// Signs `signed_in` out at `provider`: revokes its refresh token (RFC 7009, the discovery
/// document's `revocation_endpoint`; the access token when there is no refresh token) and asks
/// the provider to end its session (`end_session_endpoint`, with the ID token as
/// `id_token_hint` and a loopback `post_logout_redirect_uri`, whose redirect confirms the end).
/// Both are tried when both exist; the first failure is returned after both were tried. The
/// [`SignedOut`] says what happened: report no more than that. Clearing the application's
/// [`TokenStore`](super::TokenStore) is the caller's part, whatever the outcome.
pub async fn sign_out(
    provider: &IdentityProvider,
    signed_in: &StoredSignIn,
) -> Result<SignedOut, SignInError> {
    let metadata = provider.metadata().await?;
    if metadata.revocation_endpoint.is_none() && metadata.end_session_endpoint.is_none() {
        return Err(SignInError::Config(
            "the identity provider offers neither revocation nor end-session: the sign-in can \
             only expire"
                .into(),
        ));
    }
    let mut first_failure = None;
    let mut revoked = false;
    if let Some(endpoint) = &metadata.revocation_endpoint {
        let (token, hint) = match (&signed_in.refresh_token, &signed_in.access_token) {
            (Some(refresh), _) => (refresh, "refresh_token"),
            (None, Some(access)) => (access, "access_token"),
            (None, None) => (&SecretString::from(String::new()), ""),
        };
        if !hint.is_empty() {
            // By hand rather than with `oauth2`'s revocation request, which refuses a plain
            // http endpoint even on loopback (the local mock).
            let form = [
                ("token", token.expose_secret()),
                ("token_type_hint", hint),
                ("client_id", provider.client_id()),
            ];
            match provider
                .post_form(endpoint, &form, "the revocation endpoint")
                .await
            {
                Ok(_) => revoked = true,
                Err(error) => {
                    first_failure.get_or_insert(SignInError::Provider(error));
                }
            }
        }
    }
    let mut provider_session = ProviderSession::NotEnded;
    if let (Some(endpoint), Some(id_token)) = (&metadata.end_session_endpoint, &signed_in.id_token)
    {
        let form = [
            ("id_token_hint", id_token.expose_secret()),
            ("client_id", provider.client_id()),
            ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
        ];
        let outcome = provider
            .post_form(endpoint, &form, "the end-session endpoint")
            .await;
        match outcome {
            // A 200 is a page for a browser (a confirmation question, or a "signed out" the
            // client cannot tell from one): not a confirmation.
            Ok(_) => provider_session = ProviderSession::Unconfirmed,
            // Redirects are never followed; one to the post-logout URI is the provider saying
            // the session is over.
            Err(error)
                if error.kind == AuthErrorKind::Redirect
                    && error
                        .description
                        .as_deref()
                        .is_some_and(|d| d.ends_with(POST_LOGOUT_REDIRECT_URI)) =>
            {
                provider_session = ProviderSession::Ended;
            }
            Err(error) => {
                // Revocation already ended the sign-in where it succeeded: a refused hint
                // then only means there was no session left to end.
                if metadata.revocation_endpoint.is_none() {
                    first_failure.get_or_insert(SignInError::Provider(error));
                } else {
                    tracing::debug!(
                        error = &error as &dyn std::error::Error,
                        "end-session after revocation failed"
                    );
                }
            }
        }
    }
    match first_failure {
        Some(error) => Err(error),
        None => Ok(SignedOut {
            revoked,
            provider_session,
        }),
    }
}
