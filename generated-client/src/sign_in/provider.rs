//! The identity provider a person signs in with: its issuer, the application's client id, the
//! HTTP client every request to it goes through, and its discovery document.
//!
//! Every request to the identity provider (discovery, JWKS, token, revocation, end-session)
//! goes through [`IdentityProvider::send`]: no redirect is followed, `408`, `429` and `5xx` are
//! [`AuthErrorKind::Unavailable`] whatever the body, a non-JSON error answer is classified by
//! its status, and no body is read beyond [`MAX_IDENTITY_PROVIDER_BODY`] (`auth/identity_http.rs`,
//! shared with client credentials, discovery included). The `oauth2` crate reaches the provider only through
//! [`IdentityProvider::oauth_http`], which is that function.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use tokio::sync::OnceCell;

use crate::auth::error::{AuthError, AuthErrorKind};
pub(crate) use crate::auth::identity_http::oauth_error;
use crate::auth::identity_http::{Discovered, DiscoveryDocument, OAuthHttp, discover, exchange};
use crate::auth::limits::{IdentityProviderLimits, MAX_IDENTITY_PROVIDER_BODY};
use crate::urls::validate_identity_provider_url;

use super::error::SignInError;

/// The client id of the `creditdata` command, a public native application (no secret).
pub const CLI_CLIENT_ID: &str = "creditdata-cli";

/// How long one request to the identity provider may take unless told otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// An OpenID Connect identity provider and the application's (public) client id there.
/// Cheap to clone; the discovery document is fetched once, on first use, and shared by clones.
///
/// ```
/// use creditdata_client::sign_in::IdentityProvider;
///
/// let provider = IdentityProvider::new("https://login.example.test/realms/consumer", "creditdata-cli")?;
/// assert_eq!(provider.issuer(), "https://login.example.test/realms/consumer");
/// // Plain http only to loopback (the local mock):
/// assert!(IdentityProvider::new("http://login.example.test/realms/consumer", "app").is_err());
/// # Ok::<(), creditdata_client::sign_in::SignInError>(())
/// ```
#[derive(Clone)]
pub struct IdentityProvider {
    inner: Arc<ProviderInner>,
}

struct ProviderInner {
    issuer: String,
    client_id: String,
    http: reqwest::Client,
    limits: IdentityProviderLimits,
    metadata: OnceCell<Arc<ProviderMetadata>>,
}

impl fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.inner.issuer)
            .field("client_id", &self.inner.client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityProvider {
    /// The provider whose issuer is `issuer` (`https`, or `http` to a loopback address; no
    /// user name, query or fragment), for the public client `client_id`. Requests time out
    /// after 30 s; see [`with_timeout`](Self::with_timeout).
    pub fn new(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Result<IdentityProvider, SignInError> {
        IdentityProvider::with_timeout(issuer, client_id, DEFAULT_TIMEOUT)
    }

    /// The identity provider of `environment` ([`crate::Environment::identity_provider`]: the API
    /// description's security scheme, or `CREDITDATA_ISSUER`...), for `client_id`.
    pub fn for_environment(
        environment: &crate::environment::Environment,
        client_id: impl Into<String>,
    ) -> Result<IdentityProvider, SignInError> {
        let urls = environment
            .identity_provider()
            .map_err(|e| SignInError::Config(e.to_string()))?;
        IdentityProvider::new(urls.issuer, client_id)
    }

    /// [`new`](Self::new), each request to the provider bounded by `timeout`.
    pub fn with_timeout(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        timeout: Duration,
    ) -> Result<IdentityProvider, SignInError> {
        IdentityProvider::with_http_settings(issuer, client_id, timeout, |builder| builder)
    }

    /// [`with_timeout`](Self::with_timeout), the HTTP client configured by `settings` (a
    /// proxy, extra root certificates, ...). Whatever `settings` does, the client is then
    /// built with `redirect::Policy::none()`: a redirected token request would carry a code,
    /// a verifier or a refresh token elsewhere, so a redirect is an error naming its
    /// `Location`.
    pub fn with_http_settings(
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        timeout: Duration,
        settings: impl FnOnce(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
    ) -> Result<IdentityProvider, SignInError> {
        let issuer = issuer.into();
        validate_identity_provider_url("the issuer URL", &issuer).map_err(SignInError::Config)?;
        let client_id = client_id.into();
        if client_id.trim().is_empty() {
            return Err(SignInError::Config("the client id is empty".into()));
        }
        let defaults = reqwest::Client::builder()
            .user_agent(concat!("creditdata-client/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(timeout.min(Duration::from_secs(10)));
        let http = settings(defaults)
            // Last, so no setting can undo it.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                SignInError::Config(format!(
                    "cannot build the HTTP client: {}",
                    crate::error::DisplayChain(&e)
                ))
            })?;
        Ok(IdentityProvider {
            inner: Arc::new(ProviderInner {
                issuer: issuer.trim().trim_end_matches('/').to_string(),
                client_id: client_id.trim().to_string(),
                http,
                limits: IdentityProviderLimits {
                    timeout,
                    max_body: MAX_IDENTITY_PROVIDER_BODY,
                },
                metadata: OnceCell::new(),
            }),
        })
    }

    /// The issuer, without a trailing slash.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The application's client id.
    pub fn client_id(&self) -> &str {
        &self.inner.client_id
    }

    /// The discovery document, fetched on first use.
    pub(crate) async fn metadata(&self) -> Result<Arc<ProviderMetadata>, AuthError> {
        self.inner
            .metadata
            .get_or_try_init(|| async { self.discover().await.map(Arc::new) })
            .await
            .cloned()
    }

    /// The discovery document ([`discover`], shared with client credentials), with what a
    /// sign-in needs of it beyond a token endpoint.
    async fn discover(&self) -> Result<ProviderMetadata, AuthError> {
        let found: Discovered<SignInDocument> =
            discover(&self.inner.http, self.inner.limits, self.issuer()).await?;
        let document = &found.document;
        let required = |what: &str, member: &str, url: &Option<String>| {
            found
                .endpoint(what, url.as_deref())?
                .ok_or_else(|| found.error(&format!("no {member} member")))
        };
        if let Some(methods) = &document.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(found.error(
                "the provider does not offer PKCE with S256 (code_challenge_methods_supported)",
            ));
        }
        Ok(ProviderMetadata {
            issuer: document
                .issuer
                .clone()
                .unwrap_or_else(|| self.issuer().to_string()),
            authorization_endpoint: required(
                "its authorization_endpoint",
                "authorization_endpoint",
                &document.authorization_endpoint,
            )?,
            token_endpoint: required(
                "its token_endpoint",
                "token_endpoint",
                &document.token_endpoint,
            )?,
            jwks_uri: required("its jwks_uri", "jwks_uri", &document.jwks_uri)?,
            revocation_endpoint: found.endpoint(
                "its revocation_endpoint",
                document.revocation_endpoint.as_deref(),
            )?,
            end_session_endpoint: found.endpoint(
                "its end_session_endpoint",
                document.end_session_endpoint.as_deref(),
            )?,
            userinfo_endpoint: found.endpoint(
                "its userinfo_endpoint",
                document.userinfo_endpoint.as_deref(),
            )?,
            // OpenID Connect Discovery 1.0, §3: RS256 is the default when none is listed.
            id_token_algorithms: document
                .id_token_signing_alg_values_supported
                .clone()
                .unwrap_or_else(|| vec!["RS256".into()]),
            iss_in_authorization_response: document
                .authorization_response_iss_parameter_supported
                .unwrap_or(false),
        })
    }

    /// Sends `request` under the identity provider's rules (see the module documentation) and
    /// returns the body of a `200`. `what` names the request in errors.
    pub(crate) async fn send(
        &self,
        request: reqwest::Request,
        what: &str,
    ) -> Result<Vec<u8>, AuthError> {
        let response = exchange(&self.inner.http, self.inner.limits, request).await?;
        if response.status() != StatusCode::OK {
            return Err(AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!("{what} answered {}", response.status()),
            ));
        }
        Ok(response.into_body())
    }

    /// Posts `form` to `endpoint` with [`send`](Self::send): `what` names the endpoint in
    /// errors.
    pub(crate) async fn post_form(
        &self,
        endpoint: &str,
        form: &[(&str, &str)],
        what: &str,
    ) -> Result<Vec<u8>, AuthError> {
        let request = self
            .inner
            .http
            .post(endpoint)
            .form(form)
            .build()
            .map_err(AuthError::unreachable)?;
        self.send(request, what).await
    }

    /// The HTTP function the `oauth2` crate sends its requests with.
    pub(crate) fn oauth_http(&self) -> OAuthHttp {
        OAuthHttp::new(self.inner.http.clone(), self.inner.limits)
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }
}

/// What the client uses of a discovery document, every URL checked.
#[derive(Debug, Clone)]
pub(crate) struct ProviderMetadata {
    /// The issuer as the document writes it (perhaps with a trailing slash, which ID tokens
    /// then carry too); equal to the configured one up to that slash.
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) jwks_uri: String,
    pub(crate) revocation_endpoint: Option<String>,
    pub(crate) end_session_endpoint: Option<String>,
    /// Where the person's name is asked for when the ID token does not carry it.
    pub(crate) userinfo_endpoint: Option<String>,
    /// `id_token_signing_alg_values_supported`.
    pub(crate) id_token_algorithms: Vec<String>,
    /// RFC 9207: the authorization response carries `iss`, which must then be checked.
    pub(crate) iss_in_authorization_response: bool,
}

/// What a sign-in reads of a discovery document.
#[derive(serde::Deserialize)]
struct SignInDocument {
    issuer: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    jwks_uri: Option<String>,
    revocation_endpoint: Option<String>,
    end_session_endpoint: Option<String>,
    userinfo_endpoint: Option<String>,
    id_token_signing_alg_values_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    authorization_response_iss_parameter_supported: Option<bool>,
}

impl DiscoveryDocument for SignInDocument {
    fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
}
