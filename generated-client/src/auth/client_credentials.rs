//! The client-credentials grant (RFC 6749 §4.4), one way the token cache obtains tokens
//! ([`FetchToken`]): the token endpoint configured or discovered (once), the request made by
//! the `oauth2` crate through the identity provider's door ([`OAuthHttp`]).

use std::fmt;

use secrecy::ExposeSecret;
use tokio::sync::OnceCell;

use super::access_token::AccessToken;
use super::credentials::{ClientAuthStyle, ClientCredentials, TokenEndpoint};
use super::error::{AuthError, AuthErrorKind};
use super::identity_http::{DiscoveryDocument, OAuthHttp, discover, oauth_error, shorten};
use super::limits::IdentityProviderLimits;
use super::token::{FetchFuture, FetchToken, Fetched};

/// Client credentials and the means to present them.
pub(crate) struct ClientCredentialsGrant {
    credentials: ClientCredentials,
    /// Never follows redirects (built so by the client builder).
    http: reqwest::Client,
    limits: IdentityProviderLimits,
    /// The token endpoint, once known (an issuer's is discovered on the first token request).
    token_url: OnceCell<String>,
}

impl fmt::Debug for ClientCredentialsGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.credentials.fmt(f)
    }
}

/// What the grant reads of a discovery document.
#[derive(serde::Deserialize)]
struct TokenEndpointDocument {
    issuer: Option<String>,
    token_endpoint: Option<String>,
}

impl DiscoveryDocument for TokenEndpointDocument {
    fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
}

impl FetchToken for ClientCredentialsGrant {
    // A refused token is simply replaced: the grant asks for a new one either way.
    fn fetch(&self, _after_rejection: bool) -> FetchFuture<'_> {
        Box::pin(self.request_token())
    }
}

impl ClientCredentialsGrant {
    /// `http` must not follow redirects; `limits` bound each request to the identity provider.
    pub(crate) fn new(
        credentials: ClientCredentials,
        http: reqwest::Client,
        limits: IdentityProviderLimits,
    ) -> Self {
        ClientCredentialsGrant {
            credentials,
            http,
            limits,
            token_url: OnceCell::new(),
        }
    }

    async fn token_url(&self) -> Result<String, AuthError> {
        self.token_url
            .get_or_try_init(|| async {
                match &self.credentials.endpoint {
                    TokenEndpoint::Url(url) => Ok(url.clone()),
                    TokenEndpoint::Issuer(issuer) => {
                        let found =
                            discover::<TokenEndpointDocument>(&self.http, self.limits, issuer)
                                .await?;
                        found
                            .endpoint(
                                "its token_endpoint",
                                found.document.token_endpoint.as_deref(),
                            )?
                            .ok_or_else(|| found.error("no token_endpoint member"))
                    }
                }
            })
            .await
            .cloned()
    }

    /// A token and its lifetime (`expires_in`, when the response has one): the client
    /// credentials grant (RFC 6749 §4.4), sent by the `oauth2` crate through the identity
    /// provider's HTTP function ([`identity_http`](super::identity_http)).
    async fn request_token(&self) -> Result<Fetched, AuthError> {
        use oauth2::basic::{BasicClient, BasicTokenType};
        use oauth2::{AuthType, ClientId, ClientSecret, Scope, TokenResponse as _, TokenUrl};

        let cc = &self.credentials;
        let token_url = self.token_url().await?;
        let url = reqwest::Url::parse(&token_url).map_err(|e| {
            AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!("token endpoint {token_url:?} is not a URL: {e}"),
            )
        })?;
        let client = BasicClient::new(ClientId::new(cc.client_id.clone()))
            .set_client_secret(ClientSecret::new(
                cc.client_secret.expose_secret().to_string(),
            ))
            .set_auth_type(match cc.auth_style {
                ClientAuthStyle::RequestBody => AuthType::RequestBody,
                // RFC 6749 §2.3.1: id and secret form-urlencoded, then joined by `:`.
                ClientAuthStyle::BasicAuth => AuthType::BasicAuth,
            })
            .set_token_uri(TokenUrl::from_url(url));
        let http = OAuthHttp::new(self.http.clone(), self.limits);
        let answer = client
            .exchange_client_credentials()
            .add_scopes(cc.scopes.iter().cloned().map(Scope::new))
            .request_async(&http)
            .await
            .map_err(oauth_error)?;
        if *answer.token_type() != BasicTokenType::Bearer {
            // RFC 6749 §7.1: a client must not use a token of a type it does not understand.
            return Err(AuthError::new(
                AuthErrorKind::InvalidResponse,
                format!(
                    "the token endpoint issued a token of type {:?}, not Bearer",
                    shorten(answer.token_type().as_ref())
                ),
            ));
        }
        let token = AccessToken::new(answer.access_token().secret()).ok_or_else(|| {
            AuthError::new(
                AuthErrorKind::InvalidResponse,
                "the access token contains characters an HTTP header cannot carry".to_string(),
            )
        })?;
        Ok((token, answer.expires_in()))
    }
}
