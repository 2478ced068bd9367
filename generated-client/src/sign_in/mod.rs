//! People sign in: OAuth 2.0 Authorization Code with PKCE for native applications (RFC 8252),
//! OpenID Connect ID tokens, refresh tokens, and signing out. Feature `sign-in` (on by
//! default).
//!
//! A loan officer at a terminal acts as herself, not as a shared service account: a session
//! she creates names her in `createdByName`, so the audit trail says who asked for a
//! consumer's credit data.
//!
//! ```no_run
//! use std::sync::Arc;
//! use creditdata_client::prelude::*;
//! use creditdata_client::sign_in::{IdentityProvider, MemoryTokenStore, SignIn, SignInOptions, TokenStore};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = IdentityProvider::new("https://login.example.test/realms/consumer", "creditdata-cli")?;
//! let pending = SignIn::start(&provider, SignInOptions::default()).await?;
//! println!("Open {} in your browser", pending.start_url());
//! let signed_in = pending.finish().await?; // waits for the browser's redirect
//! println!("Signed in as {}", signed_in.user().display_name());
//!
//! let store = Arc::new(MemoryTokenStore::default()); // or the keyring, a 0600 file...
//! store.save(&signed_in)?;
//! let client = Client::builder()
//!     .base_url("https://api.example.test")
//!     .signed_in(store, provider)
//!     .build()?;
//! let sessions = client.get_sessions().call().await?; // as the person who signed in
//! # let _ = sessions; Ok(()) }
//! ```
//!
//! # The flow
//!
//! [`SignIn::start`] reads the provider's discovery document, listens on `127.0.0.1` on an
//! ephemeral port and builds the authorization URL: `response_type=code`, the redirect URI
//! `http://127.0.0.1:{port}/callback`, a PKCE S256 challenge of a 256-bit verifier, a 128-bit
//! random `state` and a 256-bit random `nonce`. [`PendingSignIn::finish`] waits (default five
//! minutes) for the browser's redirect, exchanges the code with the verifier, and validates the
//! ID token against the issuer's JWKS before anything is trusted.
//!
//! # What a hostile local web page or process cannot do
//!
//! - **Read the sign-in's secrets from a command line.** Open (or launch the browser with)
//!   [`PendingSignIn::start_url`], `http://127.0.0.1:PORT/start`, which carries none: it
//!   answers once with a redirect to the authorization URL, and a second request for it ends
//!   the sign-in ([`SignInError::StartReused`]) instead of racing whoever read it.
//! - **Complete the sign-in with its own code.** Only a redirect to `/callback` whose `state`
//!   equals this sign-in's (compared in constant time) is considered; any other request (a
//!   wrong or missing `state`, another path, another method, a malformed or oversized request)
//!   is answered `400` and the wait goes on.
//! - **Hang the wait, or crowd out the browser.** Each connection gets 2 s to its first byte
//!   and 10 s and 8 KiB to send its request; at most 32 are read at once, and while 32 are
//!   open no other is accepted (the kernel's backlog keeps the browser's connection until a
//!   slot frees up, instead of it being reset); only loopback peers are served.
//! - **Read a token.** The page the browser gets says "signed in" or names the error
//!   (HTML-escaped), never a token, and forbids scripts, framing and referrers.
//!
//! The redirect's `iss` (RFC 9207) must name the issuer when the provider announces it, and an
//! ID token is refused unless its signature verifies with a key of the issuer's JWKS (ES256 or
//! RS256, as the provider advertises), and its `iss`, `aud` (the client id), `exp` and `nonce`
//! are this sign-in's.
//!
//! # Afterwards
//!
//! [`StoredSignIn`] is what an application keeps (in its [`TokenStore`]); a client built with
//! [`ClientBuilder::signed_in`](crate::ClientBuilder::signed_in) sends the person's access
//! token and refreshes it ahead of expiry with the refresh token, one refresh for any number
//! of waiting calls, the rotated refresh token saved to the store before the new access token
//! is used. A refused refresh (`invalid_grant`) is
//! [`AuthErrorKind::SignInRequired`](crate::auth::AuthErrorKind::SignInRequired): never
//! retried, and not asked again for the same refresh token. [`sign_out`] revokes the refresh
//! token (RFC 7009) and asks the provider to end its session (RP-Initiated Logout), and says
//! which of the two happened ([`SignedOut`]).
//! [`Client::access_token`](crate::Client::access_token) hands out the same access token, renewed
//! the same way, for a request the client does not make itself, without calling the service.

mod error;
mod id_token;
mod loopback;
mod provider;
mod sign_out;
mod store;
mod tokens;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use oauth2::{
    AuthUrl, AuthorizationCode, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    TokenResponse as _,
};
use secrecy::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq as _;

use crate::auth::identity_http::shorten;

pub use error::{AuthorizationErrorKind, SignInError};
pub use provider::{CLI_CLIENT_ID, IdentityProvider};
pub use sign_out::{ProviderSession, SignedOut, sign_out};
pub use store::{
    MemoryTokenStore, SignedInUser, StoredSignIn, TokenStore, TokenStoreError, TokenStoreErrorKind,
    TokenStoreLock,
};
pub(crate) use tokens::UserTokens;

use provider::oauth_error;
use tokens::{OidcTokenResponse, oidc_client};

/// How long [`PendingSignIn::finish`] waits for the browser unless told otherwise.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The scopes asked for unless told otherwise: `openid` (an ID token) and `profile` (the
/// person's name in it).
pub const DEFAULT_SCOPES: &[&str] = &["openid", "profile"];

/// Settings of one sign-in.
#[derive(Debug, Clone)]
pub struct SignInOptions {
    /// The scopes to ask for; `openid` is always added (default [`DEFAULT_SCOPES`]).
    pub scopes: Vec<String>,
    /// How long to wait for the browser's redirect (default [`DEFAULT_SIGN_IN_TIMEOUT`]).
    pub timeout: Duration,
    /// `prompt` (`login`, `consent`, `none`...), when wanted.
    pub prompt: Option<String>,
}

impl Default for SignInOptions {
    fn default() -> Self {
        SignInOptions {
            scopes: DEFAULT_SCOPES.iter().map(|s| s.to_string()).collect(),
            timeout: DEFAULT_SIGN_IN_TIMEOUT,
            prompt: None,
        }
    }
}

/// Starts signing a person in.
#[derive(Debug)]
pub struct SignIn;

impl SignIn {
    /// Reads the provider's discovery document, listens on `127.0.0.1:0` and prepares the
    /// authorization URL (see the [module documentation](self)). Nothing waits yet: show or
    /// open [`PendingSignIn::authorization_url`], then call [`PendingSignIn::finish`].
    pub async fn start(
        provider: &IdentityProvider,
        options: SignInOptions,
    ) -> Result<PendingSignIn, SignInError> {
        let metadata = provider.metadata().await?;
        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(SignInError::Listener)?;
        let port = listener.local_addr().map_err(SignInError::Listener)?.port();
        let redirect = RedirectUrl::new(format!("http://127.0.0.1:{port}/callback"))
            .map_err(|e| SignInError::Config(format!("redirect URI: {e}")))?;
        let client = oidc_client(provider, &metadata)?
            .set_auth_uri(
                AuthUrl::new(metadata.authorization_endpoint.clone())
                    .map_err(|e| SignInError::Config(format!("authorization endpoint: {e}")))?,
            )
            .set_redirect_uri(redirect.clone());
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        // 128 bits of state (RFC 6749 §10.12 asks for an unguessable value); 256 of nonce.
        let state = CsrfToken::new_random_len(16);
        let nonce = CsrfToken::new_random_len(32);
        let mut scopes: Vec<String> = vec!["openid".into()];
        for scope in &options.scopes {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let expected_state = state.secret().clone();
        let mut request = client
            .authorize_url(move || state)
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .set_pkce_challenge(challenge)
            .add_extra_param("nonce", nonce.secret().clone());
        if let Some(prompt) = &options.prompt {
            request = request.add_extra_param("prompt", prompt.clone());
        }
        let (url, _) = request.url();
        let start_url =
            reqwest::Url::parse(&format!("http://127.0.0.1:{port}{}", loopback::START_PATH))
                .map_err(|e| SignInError::Config(format!("start address: {e}")))?;
        Ok(PendingSignIn {
            provider: provider.clone(),
            metadata,
            listener,
            url,
            start_url,
            redirect,
            state: SecretString::from(expected_state),
            nonce: SecretString::from(nonce.secret().clone()),
            verifier,
            scopes,
            timeout: options.timeout,
        })
    }
}

/// A sign-in waiting for the browser. Its `Debug` shows neither `state`, `nonce` nor verifier.
pub struct PendingSignIn {
    provider: IdentityProvider,
    metadata: Arc<provider::ProviderMetadata>,
    listener: tokio::net::TcpListener,
    url: reqwest::Url,
    start_url: reqwest::Url,
    redirect: RedirectUrl,
    state: SecretString,
    nonce: SecretString,
    verifier: PkceCodeVerifier,
    scopes: Vec<String>,
    timeout: Duration,
}

impl fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("provider", &self.provider)
            .field("redirect_uri", &self.redirect.as_str())
            .field("scopes", &self.scopes)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl PendingSignIn {
    /// The provider's authorization URL. It carries the `state`, the `nonce` and the PKCE
    /// challenge: whoever reads it can deliver their own sign-in to this one, so it must never
    /// go on a command line (a browser launcher's argument is readable by every local user).
    /// Open [`start_url`](Self::start_url) instead.
    pub fn authorization_url(&self) -> &reqwest::Url {
        &self.url
    }

    /// The address to open in the person's browser (or to print): `http://127.0.0.1:PORT/start`
    /// on the loopback listener, carrying no secret. It answers once, with a redirect to the
    /// [`authorization_url`](Self::authorization_url); asked a second time, it answers nothing
    /// and the sign-in ends with [`SignInError::StartReused`], so that a local program that
    /// read the address and got there first cannot finish the sign-in unnoticed.
    pub fn start_url(&self) -> &reqwest::Url {
        &self.start_url
    }

    /// The redirect URI the provider sends the browser back to.
    pub fn redirect_uri(&self) -> &str {
        self.redirect.as_str()
    }

    /// Waits for the browser's redirect, exchanges the code and validates the ID token.
    pub async fn finish(self) -> Result<StoredSignIn, SignInError> {
        let deadline = tokio::time::Instant::now()
            .checked_add(self.timeout)
            .unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400 * 365));
        let mut waiter = loopback::Waiter::new(&self.listener);
        let mut started = false;
        loop {
            let Some(callback) = waiter.next(deadline).await else {
                return Err(SignInError::TimedOut(self.timeout));
            };
            if let Ok(loopback::Request::Start) = &callback.parameters {
                if started {
                    let error = SignInError::StartReused;
                    callback.answer(loopback::Page::failed(&error)).await;
                    return Err(error);
                }
                started = true;
                callback.answer(loopback::Page::redirect(&self.url)).await;
                continue;
            }
            match self.judge(&callback.parameters) {
                Verdict::NotOurs(why) => {
                    tracing::debug!(why, "a request on the sign-in port was refused");
                    callback.answer(loopback::Page::refused(why)).await;
                }
                Verdict::Failed(error) => {
                    callback.answer(loopback::Page::failed(&error)).await;
                    return Err(error);
                }
                Verdict::Code(code) => {
                    let outcome = self.complete(code).await;
                    let page = match &outcome {
                        Ok(_) => loopback::Page::signed_in(),
                        Err(error) => loopback::Page::failed(error),
                    };
                    callback.answer(page).await;
                    return outcome;
                }
            }
        }
    }

    /// What a request on the loopback port is.
    fn judge(&self, request: &Result<loopback::Request, &'static str>) -> Verdict {
        let parameters = match request {
            Ok(loopback::Request::Callback(parameters)) => parameters,
            Ok(loopback::Request::Start) => return Verdict::NotOurs("not the callback path"),
            Err(why) => return Verdict::NotOurs(why),
        };
        let single = |name: &str| -> Result<Option<&str>, ()> {
            let mut values = parameters.iter().filter(|(k, _)| k == name);
            let first = values.next().map(|(_, v)| v.as_str());
            if values.next().is_some() {
                return Err(());
            }
            Ok(first)
        };
        let Ok(Some(state)) = single("state") else {
            return Verdict::NotOurs("no single state parameter");
        };
        let expected = self.state.expose_secret().as_bytes();
        if !bool::from(state.as_bytes().ct_eq(expected)) {
            return Verdict::NotOurs("not the state of this sign-in");
        }
        // From here on the request is the provider's answer to this sign-in.
        let fail = |why: &str| Verdict::Failed(SignInError::InvalidRedirect(why.into()));
        let (Ok(code), Ok(error), Ok(description), Ok(iss)) = (
            single("code"),
            single("error"),
            single("error_description"),
            single("iss"),
        ) else {
            return fail("a parameter is repeated");
        };
        match iss {
            Some(iss) if iss.trim_end_matches('/') != self.provider.issuer() => {
                // RFC 9207: an answer of another provider (a mix-up attack).
                return fail("the redirect names another issuer (iss)");
            }
            None if self.metadata.iss_in_authorization_response => {
                return fail("the redirect names no issuer (iss), which the provider promises");
            }
            _ => {}
        }
        if let Some(error) = error {
            return Verdict::Failed(SignInError::Authorization {
                kind: AuthorizationErrorKind::from_code(error),
                description: description.map(shorten),
            });
        }
        match code {
            Some(code) if !code.is_empty() => Verdict::Code(code.to_string()),
            _ => fail("no code"),
        }
    }

    /// Exchanges `code` and validates the ID token.
    async fn complete(&self, code: String) -> Result<StoredSignIn, SignInError> {
        let client =
            oidc_client(&self.provider, &self.metadata)?.set_redirect_uri(self.redirect.clone());
        let verifier = PkceCodeVerifier::new(self.verifier.secret().clone());
        let http = self.provider.oauth_http();
        let requested_at = SystemTime::now();
        let answer: OidcTokenResponse = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .request_async(&http)
            .await
            .map_err(oauth_error)?;
        tokens::check_bearer(&answer)?;
        let id_token = answer.extra_fields().id_token.as_deref().ok_or_else(|| {
            SignInError::IdToken(
                "the token answer has no id_token although `openid` was asked for".into(),
            )
        })?;
        let mut user = id_token::validate(
            &self.provider,
            &self.metadata,
            id_token,
            self.nonce.expose_secret(),
        )
        .await?;
        if user.name.is_none()
            && user.username.is_none()
            && let Some(endpoint) = &self.metadata.userinfo_endpoint
        {
            user = id_token::named_by_userinfo(
                &self.provider,
                endpoint,
                answer.access_token().secret(),
                user,
            )
            .await;
        }
        let scopes = answer
            .scopes()
            .map(|scopes| scopes.iter().map(|s| s.to_string()).collect())
            .unwrap_or_else(|| self.scopes.clone());
        Ok(StoredSignIn {
            issuer: self.provider.issuer().to_string(),
            client_id: self.provider.client_id().to_string(),
            refresh_token: answer
                .refresh_token()
                .map(|t| SecretString::from(t.secret().clone())),
            access_token: Some(SecretString::from(answer.access_token().secret().clone())),
            access_token_expires_at: tokens::expiry(requested_at, answer.expires_in()),
            id_token: Some(SecretString::from(id_token.to_string())),
            scopes,
            user,
            signed_in_at: requested_at,
            api_origin: None,
        })
    }
}

enum Verdict {
    /// Not the provider's answer to this sign-in: refused, and the wait goes on.
    NotOurs(&'static str),
    /// The provider's answer, and it ends the sign-in with this error.
    Failed(SignInError),
    Code(String),
}

/// Credentials of a person signed in: built by
/// [`ClientBuilder::signed_in`](crate::ClientBuilder::signed_in).
#[derive(Clone)]
pub struct SignedInCredentials {
    store: Arc<dyn TokenStore>,
    provider: IdentityProvider,
    /// The origin of the client's base URL, set by the builder.
    api_origin: Option<String>,
}

impl SignedInCredentials {
    /// The person's sign-in as kept in `store`, refreshed at `provider`.
    pub fn new(store: Arc<dyn TokenStore>, provider: IdentityProvider) -> Self {
        SignedInCredentials {
            store,
            provider,
            api_origin: None,
        }
    }

    /// Binds the credentials to the service at `base_url`: a stored sign-in recorded for
    /// another origin is refused there.
    /// The identity provider the sign-in is refreshed at.
    #[cfg(feature = "shared-rate-limit")]
    pub(crate) fn provider(&self) -> &IdentityProvider {
        &self.provider
    }

    pub(crate) fn bind_to(&mut self, base_url: &str) {
        // The builder has validated it; a URL that does not parse binds to itself, which no
        // recorded origin equals.
        self.api_origin = Some(
            reqwest::Url::parse(base_url)
                .map(|url| url.origin().ascii_serialization())
                .unwrap_or_else(|_| base_url.to_string()),
        );
    }

    pub(crate) fn into_tokens(self) -> UserTokens {
        UserTokens::new(self.store, self.provider, self.api_origin)
    }
}

impl fmt::Debug for SignedInCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedIn")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}
