//! The identity provider a person signs in with: its issuer, the application's client id, the
//! HTTP client every request to it goes through, and its discovery document.
//!
//! Every request to the identity provider (discovery, JWKS, token, revocation, end-session)
//! goes through [`IdentityProvider::send`]: no redirect is followed, `408`, `429` and `5xx` are
//! [`AuthErrorKind::Unavailable`] whatever the body, a non-JSON error answer is classified by
//! its status, and no body is read beyond [`MAX_IDENTITY_PROVIDER_BODY`]. The `oauth2` crate
//! reaches the provider only through [`IdentityProvider::oauth_http`], which is that function.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use tokio::sync::OnceCell;

use crate::auth::{
    AuthError, AuthErrorKind, IdentityProviderLimits, MAX_IDENTITY_PROVIDER_BODY,
    is_transient_status, shorten,
};
use crate::body_limits::{LimitedReadError, read_limited};
use crate::urls::{shown_location, validate_identity_provider_url};

use super::SignInError;

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

    /// The identity provider of `environment` ([`Environment::identity_provider`]: the API
    /// description's security scheme, or `CREDITDATA_ISSUER`...), for `client_id`.
    pub fn for_environment(
        environment: &crate::Environment,
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
        let issuer = issuer.into();
        validate_identity_provider_url("the issuer URL", &issuer).map_err(SignInError::Config)?;
        let client_id = client_id.into();
        if client_id.trim().is_empty() {
            return Err(SignInError::Config("the client id is empty".into()));
        }
        let http = reqwest::Client::builder()
            .user_agent(concat!("creditdata-client/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            // A redirected token request would carry a code, a verifier or a refresh token
            // elsewhere; a redirect is an error naming its `Location`.
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

    async fn discover(&self) -> Result<ProviderMetadata, AuthError> {
        let url = format!("{}/.well-known/openid-configuration", self.issuer());
        let discovery_error =
            |why: String| AuthError::new(AuthErrorKind::Discovery, format!("{url}: {why}"));
        let request = self
            .inner
            .http
            .get(&url)
            .header(reqwest::header::ACCEPT, "application/json")
            .build()
            .map_err(AuthError::unreachable)?;
        let body = self
            .send(request, "the discovery document")
            .await
            .map_err(|e| match e.kind {
                AuthErrorKind::InvalidResponse => discovery_error(
                    e.description
                        .unwrap_or_else(|| "not a discovery document".into()),
                ),
                _ => e,
            })?;
        let document: DiscoveryDocument =
            serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&body))
                .map_err(|e: serde_path_to_error::Error<serde_json::Error>| {
                    discovery_error(format!(
                        "not a usable discovery document ({:?} error at `{}`)",
                        e.inner().classify(),
                        e.path()
                    ))
                })?;
        // OpenID Connect Discovery 1.0, §4.3: the document must be the configured issuer's own.
        if document.issuer.trim_end_matches('/') != self.issuer() {
            return Err(discovery_error(format!(
                "the document is for issuer {:?}, not the configured issuer; it is refused",
                shorten(&document.issuer)
            )));
        }
        let endpoint = |what: &str, url: &str| {
            validate_identity_provider_url(what, url)
                .map_err(discovery_error)
                .map(|u| u.to_string())
        };
        let optional = |what: &str, url: &Option<String>| {
            url.as_deref().map(|url| endpoint(what, url)).transpose()
        };
        let algorithms = document
            .id_token_signing_alg_values_supported
            // OpenID Connect Discovery 1.0, §3: RS256 is the default when none is listed.
            .unwrap_or_else(|| vec!["RS256".into()]);
        if let Some(methods) = &document.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(discovery_error(
                "the provider does not offer PKCE with S256 (code_challenge_methods_supported)"
                    .into(),
            ));
        }
        Ok(ProviderMetadata {
            authorization_endpoint: endpoint(
                "its authorization_endpoint",
                document
                    .authorization_endpoint
                    .as_deref()
                    .ok_or_else(|| discovery_error("no authorization_endpoint member".into()))?,
            )?,
            token_endpoint: endpoint(
                "its token_endpoint",
                document
                    .token_endpoint
                    .as_deref()
                    .ok_or_else(|| discovery_error("no token_endpoint member".into()))?,
            )?,
            jwks_uri: endpoint(
                "its jwks_uri",
                document
                    .jwks_uri
                    .as_deref()
                    .ok_or_else(|| discovery_error("no jwks_uri member".into()))?,
            )?,
            revocation_endpoint: optional(
                "its revocation_endpoint",
                &document.revocation_endpoint,
            )?,
            end_session_endpoint: optional(
                "its end_session_endpoint",
                &document.end_session_endpoint,
            )?,
            id_token_algorithms: algorithms,
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

    /// The HTTP function the `oauth2` crate sends its requests with.
    pub(crate) fn oauth_http(&self) -> OAuthHttp {
        OAuthHttp {
            http: self.inner.http.clone(),
            limits: self.inner.limits,
        }
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner.http
    }
}

/// What the client uses of a discovery document, every URL checked.
#[derive(Debug, Clone)]
pub(crate) struct ProviderMetadata {
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) jwks_uri: String,
    pub(crate) revocation_endpoint: Option<String>,
    pub(crate) end_session_endpoint: Option<String>,
    /// `id_token_signing_alg_values_supported`.
    pub(crate) id_token_algorithms: Vec<String>,
    /// RFC 9207: the authorization response carries `iss`, which must then be checked.
    pub(crate) iss_in_authorization_response: bool,
}

#[derive(serde::Deserialize)]
struct DiscoveryDocument {
    issuer: String,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    jwks_uri: Option<String>,
    revocation_endpoint: Option<String>,
    end_session_endpoint: Option<String>,
    id_token_signing_alg_values_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    authorization_response_iss_parameter_supported: Option<bool>,
}

/// The `oauth2` crate's HTTP client: the identity provider's rules around `reqwest`.
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    http: reqwest::Client,
    limits: IdentityProviderLimits,
}

type OAuthFuture = Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, AuthError>> + Send>>;

impl<'c> oauth2::AsyncHttpClient<'c> for OAuthHttp {
    type Error = AuthError;
    type Future = OAuthFuture;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        let http = self.http.clone();
        let limits = self.limits;
        Box::pin(async move {
            let request = reqwest::Request::try_from(request).map_err(|e| {
                AuthError::new(
                    AuthErrorKind::InvalidRequest,
                    format!(
                        "the request to the identity provider could not be built: {}",
                        crate::error::DisplayChain(&e)
                    ),
                )
            })?;
            exchange(&http, limits, request).await
        })
    }
}

/// One request to the identity provider: never redirected, transient statuses classified
/// whatever the body, non-JSON error answers classified by status, the body bounded.
async fn exchange(
    http: &reqwest::Client,
    limits: IdentityProviderLimits,
    mut request: reqwest::Request,
) -> Result<oauth2::HttpResponse, AuthError> {
    let shown = crate::urls::redact_url(request.url());
    *request.timeout_mut() = Some(limits.timeout);
    let response = http
        .execute(request)
        .await
        .map_err(AuthError::unreachable)?;
    let status = response.status();
    if status.is_redirection() {
        return Err(AuthError::new(
            AuthErrorKind::Redirect,
            format!(
                "{shown} answered {status}, pointing to {}",
                shown_location(&response)
            ),
        ));
    }
    if is_transient_status(status) {
        return Err(AuthError::new(
            AuthErrorKind::Unavailable,
            format!("{shown} answered {status}"),
        ));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase);
    let is_json = content_type.as_deref().is_some_and(|v| v.contains("json"));
    if status != StatusCode::OK && !is_json {
        // Not an OAuth2 error answer (an HTML page from a proxy, an empty 401): its status
        // says all there is to say, and the body is not read.
        let kind = match status.as_u16() {
            401 => AuthErrorKind::InvalidClient,
            _ => AuthErrorKind::InvalidResponse,
        };
        return Err(AuthError::new(
            kind,
            format!("{shown} answered {status} without an OAuth2 error code"),
        ));
    }
    let headers = response.headers().clone();
    let body = read_limited(response, limits.max_body)
        .await
        .map_err(|e| match e {
            LimitedReadError::TooLarge(limit) => AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!("the answer of {shown} is larger than {limit} bytes, so it was not read"),
            ),
            LimitedReadError::Transport(e) => AuthError::unreachable(e),
        })?;
    let mut answer = http::Response::new(body.to_vec());
    *answer.status_mut() = status;
    *answer.headers_mut() = headers;
    Ok(answer)
}

/// An `oauth2` request's failure as an [`AuthError`], never quoting a body (a half-valid token
/// answer would put a token in the message).
pub(crate) fn oauth_error<T>(
    error: oauth2::RequestTokenError<AuthError, oauth2::StandardErrorResponse<T>>,
) -> AuthError
where
    T: oauth2::ErrorResponseType + AsRef<str> + fmt::Display + 'static,
{
    use oauth2::RequestTokenError;
    match error {
        RequestTokenError::Request(error) => error,
        RequestTokenError::ServerResponse(answer) => {
            let kind = match answer.error().as_ref() {
                "invalid_client" => AuthErrorKind::InvalidClient,
                "unauthorized_client" => AuthErrorKind::UnauthorizedClient,
                "invalid_scope" => AuthErrorKind::InvalidScope,
                "invalid_grant" => AuthErrorKind::InvalidGrant,
                "invalid_request" => AuthErrorKind::InvalidRequest,
                "unsupported_grant_type" => AuthErrorKind::UnsupportedGrantType,
                other => AuthErrorKind::Other(shorten(other)),
            };
            AuthError::new(
                kind,
                answer.error_description().map(|d| shorten(d.as_str())),
            )
        }
        RequestTokenError::Parse(error, body) => AuthError::new(
            AuthErrorKind::InvalidResponse,
            format!(
                "the identity provider's answer ({} bytes) is not a token response ({:?} error at `{}`)",
                body.len(),
                error.inner().classify(),
                error.path()
            ),
        ),
        RequestTokenError::Other(why) => {
            AuthError::new(AuthErrorKind::InvalidResponse, shorten(&why))
        }
    }
}
