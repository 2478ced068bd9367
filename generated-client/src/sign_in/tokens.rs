//! The person's access token for API calls: the stored one while it is good, then a refresh
//! with the refresh token (RFC 6749 §6), the rotated tokens saved before the new access token
//! is handed out. The authenticator's single flight (`auth.rs`) makes sure only one refresh
//! runs for any number of waiting calls; this module decides what one refresh does.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use oauth2::basic::{
    BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
    BasicTokenType,
};
use oauth2::{
    AuthType, ClientId, EndpointNotSet, EndpointSet, RefreshToken, StandardRevocableToken,
    StandardTokenResponse, TokenResponse as _, TokenUrl,
};
use secrecy::{ExposeSecret, SecretString};

use super::error::SignInError;
use super::provider::{IdentityProvider, ProviderMetadata, oauth_error};
use super::store::{StoredSignIn, TokenStore, TokenStoreError, TokenStoreLock};
use crate::auth::access_token::AccessToken;
use crate::auth::error::{AuthError, AuthErrorKind};
use crate::auth::identity_http::shorten;
use crate::auth::limits::MAX_TOKEN_LIFETIME;
use crate::auth::token::{FetchFuture, FetchToken, Fetched, REFRESH_MARGIN};

/// The members of an OpenID Connect token answer beyond RFC 6749's.
#[derive(Clone, serde::Deserialize, serde::Serialize)]
pub(crate) struct IdTokenFields {
    pub(crate) id_token: Option<String>,
}

impl fmt::Debug for IdTokenFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdTokenFields([redacted])")
    }
}

impl oauth2::ExtraTokenFields for IdTokenFields {}

pub(crate) type OidcTokenResponse = StandardTokenResponse<IdTokenFields, BasicTokenType>;

/// An `oauth2` client of the provider's token endpoint, as a public client (`client_id` in
/// the form, no secret).
pub(crate) type OidcClient<HasAuthUrl = EndpointNotSet> = oauth2::Client<
    BasicErrorResponse,
    OidcTokenResponse,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    HasAuthUrl,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

pub(crate) fn oidc_client(
    provider: &IdentityProvider,
    metadata: &ProviderMetadata,
) -> Result<OidcClient, SignInError> {
    let token_url = TokenUrl::new(metadata.token_endpoint.clone())
        .map_err(|e| SignInError::Config(format!("token endpoint: {e}")))?;
    Ok(
        oauth2::Client::new(ClientId::new(provider.client_id().to_string()))
            .set_auth_type(AuthType::RequestBody)
            .set_token_uri(token_url),
    )
}

/// RFC 6749 §7.1: a token of a type the client does not understand is not used.
pub(crate) fn check_bearer(answer: &OidcTokenResponse) -> Result<(), AuthError> {
    match answer.token_type() {
        BasicTokenType::Bearer => Ok(()),
        other => Err(AuthError::new(
            AuthErrorKind::InvalidResponse,
            format!(
                "the token endpoint issued a token of type {:?}, not Bearer",
                shorten(other.as_ref())
            ),
        )),
    }
}

/// When a token obtained at `requested_at` with `expires_in` expires (clamped to
/// [`MAX_TOKEN_LIFETIME`]); `None` without `expires_in`.
pub(crate) fn expiry(requested_at: SystemTime, expires_in: Option<Duration>) -> Option<SystemTime> {
    expires_in.and_then(|lifetime| requested_at.checked_add(lifetime.min(MAX_TOKEN_LIFETIME)))
}

/// The person's tokens, kept in the application's store.
pub(crate) struct UserTokens {
    store: Arc<dyn TokenStore>,
    provider: IdentityProvider,
    /// The origin of the service the token goes to (the client's base URL).
    api_origin: Option<String>,
    /// The refresh token the provider refused: not presented again (no request per call after
    /// the sign-in ended), until the store holds another one (the person signed in again).
    refused: Mutex<Option<SecretString>>,
    /// A refreshed sign-in the store failed to save: its refresh token is the only valid one,
    /// so it is saved again, and used, by the next refresh.
    unsaved: Mutex<Option<StoredSignIn>>,
}

impl fmt::Debug for UserTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedIn")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

impl FetchToken for UserTokens {
    fn fetch(&self, after_rejection: bool) -> FetchFuture<'_> {
        Box::pin(self.token(after_rejection))
    }
}

impl UserTokens {
    pub(crate) fn new(
        store: Arc<dyn TokenStore>,
        provider: IdentityProvider,
        api_origin: Option<String>,
    ) -> Self {
        UserTokens {
            store,
            provider,
            api_origin,
            refused: Mutex::new(None),
            unsaved: Mutex::new(None),
        }
    }

    /// An access token and its remaining lifetime. `after_rejection`: the service refused
    /// the current one, so the stored access token is not offered again.
    async fn token(&self, after_rejection: bool) -> Result<Fetched, AuthError> {
        let first = self.current().await?;
        self.check(&first)?;
        if !after_rejection && let Some(usable) = usable_access_token(&first) {
            return Ok(usable);
        }
        // Refreshing: under the store's lock from here to the save, and from what the store
        // holds once it is taken, since another process may have refreshed meanwhile.
        let _lock = self.lock().await?;
        let stored = self.current().await?;
        self.check(&stored)?;
        let refreshed_elsewhere = match (&stored.access_token, &first.access_token) {
            (Some(now), Some(before)) => now.expose_secret() != before.expose_secret(),
            (now, before) => now.is_some() != before.is_some(),
        };
        if (!after_rejection || refreshed_elsewhere)
            && let Some(usable) = usable_access_token(&stored)
        {
            return Ok(usable);
        }
        self.refresh(stored).await
    }

    /// Whether `stored` may be used here at all.
    fn check(&self, stored: &StoredSignIn) -> Result<(), AuthError> {
        if stored.issuer.trim_end_matches('/') != self.provider.issuer()
            || stored.client_id != self.provider.client_id()
        {
            return Err(sign_in_required(
                "the stored sign-in is for another identity provider or client",
            ));
        }
        if let (Some(recorded), Some(here)) = (&stored.api_origin, &self.api_origin)
            && recorded != here
        {
            return Err(AuthError::new(
                AuthErrorKind::SignInRequired,
                format!(
                    "the sign-in was made for the service at {}, not {}: sign in again for this \
                     one",
                    shorten(recorded),
                    shorten(here)
                ),
            ));
        }
        Ok(())
    }

    /// One refresh of `stored`, saved before its access token is handed out.
    async fn refresh(&self, stored: StoredSignIn) -> Result<Fetched, AuthError> {
        let Some(refresh_token) = stored.refresh_token.clone() else {
            return Err(sign_in_required(
                "the access token has expired and there is no refresh token",
            ));
        };
        let already_refused = lock(&self.refused)
            .as_ref()
            .is_some_and(|refused| refused.expose_secret() == refresh_token.expose_secret());
        if already_refused {
            return Err(sign_in_required(
                "the identity provider refused the refresh token",
            ));
        }
        let metadata = self.provider.metadata().await?;
        let client = oidc_client(&self.provider, &metadata).map_err(|e| {
            AuthError::new(
                AuthErrorKind::Discovery,
                crate::error::DisplayChain(&e).to_string(),
            )
        })?;
        let requested_at = SystemTime::now();
        let http = self.provider.oauth_http();
        let refresh = RefreshToken::new(refresh_token.expose_secret().to_string());
        let answer = client
            .exchange_refresh_token(&refresh)
            .request_async(&http)
            .await
            .map_err(oauth_error);
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) if error.kind == AuthErrorKind::InvalidGrant => {
                // Revoked, expired, or rotated out (a replay ends the whole sign-in): asking
                // again cannot help, so no call asks again.
                *lock(&self.refused) = Some(refresh_token);
                tracing::debug!("the refresh token was refused: the sign-in has ended");
                return Err(sign_in_required(
                    "the identity provider refused the refresh token (revoked, expired or \
                     already used)",
                ));
            }
            Err(error) => return Err(error),
        };
        check_bearer(&answer)?;
        let token = AccessToken::new(answer.access_token().secret()).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::InvalidResponse,
                "the access token contains characters an HTTP header cannot carry".to_string(),
            )
        })?;
        let refreshed = StoredSignIn {
            // RFC 6749 §6: without a new refresh token, the old one stays valid.
            refresh_token: Some(
                answer
                    .refresh_token()
                    .map(|t| SecretString::from(t.secret().clone()))
                    .unwrap_or(refresh_token),
            ),
            access_token: Some(SecretString::from(answer.access_token().secret().clone())),
            access_token_expires_at: expiry(requested_at, answer.expires_in()),
            scopes: answer
                .scopes()
                .map(|scopes| scopes.iter().map(|s| s.to_string()).collect())
                .unwrap_or_else(|| stored.scopes.clone()),
            ..stored
        };
        // Saved before the new access token is used: the old refresh token is spent, and a
        // sign-in lost here would end at the next refresh.
        if let Err(error) = self.save(refreshed.clone()).await {
            *lock(&self.unsaved) = Some(refreshed);
            return Err(error);
        }
        Ok((token, answer.expires_in()))
    }

    /// The sign-in to work from: one refreshed but not saved yet (saved now), else the store's.
    async fn current(&self) -> Result<StoredSignIn, AuthError> {
        let unsaved = lock(&self.unsaved).take();
        if let Some(unsaved) = unsaved {
            if let Err(error) = self.save(unsaved.clone()).await {
                *lock(&self.unsaved) = Some(unsaved);
                return Err(error);
            }
            return Ok(unsaved);
        }
        let store = Arc::clone(&self.store);
        let loaded = tokio::task::spawn_blocking(move || store.load())
            .await
            .map_err(|_| store_failed("loading the sign-in stopped unexpectedly"))?
            .map_err(|e| store_error("loading the sign-in", &e))?;
        loaded.ok_or_else(|| sign_in_required("no one is signed in"))
    }

    async fn lock(&self) -> Result<TokenStoreLock, AuthError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || store.lock())
            .await
            .map_err(|_| store_failed("locking the sign-in stopped unexpectedly"))?
            .map_err(|e| store_error("locking the sign-in", &e))
    }

    async fn save(&self, signed_in: StoredSignIn) -> Result<(), AuthError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || store.save(&signed_in))
            .await
            .map_err(|_| store_failed("saving the refreshed sign-in stopped unexpectedly"))?
            .map_err(|e| store_error("saving the refreshed sign-in", &e))
    }
}

/// The stored access token and its remaining lifetime, while it has more than twice the
/// refresh margin left (so the cache's margin never shrinks it to nothing).
fn usable_access_token(stored: &StoredSignIn) -> Option<(AccessToken, Option<Duration>)> {
    let left = stored.access_token_valid_for()?;
    if left <= REFRESH_MARGIN * 2 {
        return None;
    }
    let token = AccessToken::new(stored.access_token.as_ref()?.expose_secret())?;
    Some((token, Some(left)))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn sign_in_required(why: &str) -> AuthError {
    AuthError::new(AuthErrorKind::SignInRequired, why.to_string())
}

fn store_error(what: &str, error: &TokenStoreError) -> AuthError {
    store_failed(&format!("{what}: {}", crate::error::DisplayChain(error)))
}

fn store_failed(why: &str) -> AuthError {
    AuthError::new(AuthErrorKind::TokenStore, why.to_string())
}
