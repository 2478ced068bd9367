//! The one door to the identity provider: every request to it, whatever the grant (client
//! credentials, code, refresh, revocation, discovery), goes through [`exchange`]: never redirected (a `3xx` is [`AuthErrorKind::Redirect`]
//! naming its `Location` without the query), `408`, `429` and `5xx` are
//! [`AuthErrorKind::Unavailable`] whatever their body, a non-JSON error answer is classified by
//! its status alone (401: [`AuthErrorKind::InvalidClient`]), and no body is read beyond the
//! limit. [`OAuthHttp`] is this function in the shape the `oauth2` crate sends its requests
//! with; [`oauth_error`] turns its errors into [`AuthError`]s that never quote a body.
//! [`discover`] reads an issuer's OpenID Connect discovery document, for client credentials and
//! sign-in alike.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use super::error::{AuthError, AuthErrorKind};
use super::limits::IdentityProviderLimits;
use crate::body_limits::{body_limit_exceeded, limit_body};
use crate::urls::{shown_location, validate_identity_provider_url};

/// The `oauth2` crate's HTTP client: the identity provider's rules around `reqwest`.
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    http: reqwest::Client,
    limits: IdentityProviderLimits,
}

impl OAuthHttp {
    /// `http` must not follow redirects.
    pub(crate) fn new(http: reqwest::Client, limits: IdentityProviderLimits) -> Self {
        OAuthHttp { http, limits }
    }
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
pub(crate) async fn exchange(
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
    refuse_redirect_or_transient(&shown, &response)?;
    let status = response.status();
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

/// A redirect (never followed) or a transient status from the identity provider as the error it
/// is; `shown` is the address as it may appear in the message.
pub(crate) fn refuse_redirect_or_transient(
    shown: impl fmt::Display,
    response: &reqwest::Response,
) -> Result<(), AuthError> {
    let status = response.status();
    if status.is_redirection() {
        return Err(AuthError::new(
            AuthErrorKind::Redirect,
            format!(
                "{shown} answered {status}, pointing to {}",
                shown_location(response)
            ),
        ));
    }
    if is_transient_status(status) {
        return Err(AuthError::new(
            AuthErrorKind::Unavailable,
            format!("{shown} answered {status}"),
        ));
    }
    Ok(())
}

/// 408, 429 and every 5xx: the identity provider cannot answer now.
pub(crate) fn is_transient_status(status: StatusCode) -> bool {
    crate::retry::is_retryable_status(status) || status.is_server_error()
}

/// A discovery document as a grant reads it: the members it needs, and the issuer the document
/// names, which [`discover`] checks for every grant.
pub(crate) trait DiscoveryDocument: serde::de::DeserializeOwned {
    /// The document's `issuer` member.
    fn issuer(&self) -> Option<&str>;
}

/// A discovery document whose issuer is the configured one, and where it came from, for the
/// grant to check the members it uses with the same rules and messages.
pub(crate) struct Discovered<D> {
    pub(crate) document: D,
    url: String,
}

impl<D> Discovered<D> {
    /// A [`AuthErrorKind::Discovery`] error naming the document.
    pub(crate) fn error(&self, why: &str) -> AuthError {
        discovery_error(&self.url, why)
    }

    /// `url`, a member `what` of the document, checked as every identity provider address is
    /// (`https`, or `http` to loopback; no user name, query or fragment).
    pub(crate) fn endpoint(
        &self,
        what: &str,
        url: Option<&str>,
    ) -> Result<Option<String>, AuthError> {
        url.map(|url| {
            validate_identity_provider_url(what, url)
                .map_err(|why| self.error(&why))
                .map(|_| url.trim().to_string())
        })
        .transpose()
    }
}

fn discovery_error(url: &str, why: &str) -> AuthError {
    AuthError::new(AuthErrorKind::Discovery, format!("{url}: {why}"))
}

/// The discovery document of `issuer` (`{issuer}/.well-known/openid-configuration`), through
/// [`exchange`], for client credentials and sign-in alike. Any answer that is not a document
/// of this issuer is [`AuthErrorKind::Discovery`], naming the document's URL; an unreachable
/// provider, a transient status or a redirect keep their own kinds (the first two are retried
/// like any other outage).
pub(crate) async fn discover<D: DiscoveryDocument>(
    http: &reqwest::Client,
    limits: IdentityProviderLimits,
    issuer: &str,
) -> Result<Discovered<D>, AuthError> {
    let issuer = issuer.trim().trim_end_matches('/');
    let url = format!("{issuer}/.well-known/openid-configuration");
    let request = http
        .get(&url)
        .header(ACCEPT, "application/json")
        .build()
        .map_err(AuthError::unreachable)?;
    let answer = exchange(http, limits, request)
        .await
        .map_err(|e| match e.kind {
            AuthErrorKind::Unavailable | AuthErrorKind::Redirect => e,
            _ => discovery_error(
                &url,
                e.description
                    .as_deref()
                    .unwrap_or("not a discovery document"),
            ),
        })?;
    if answer.status() != StatusCode::OK {
        return Err(discovery_error(
            &url,
            &format!("answered {}", answer.status()),
        ));
    }
    // serde's message may quote the document; the path and kind of the mismatch are enough.
    let document: D =
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(answer.body()))
            .map_err(|e: serde_path_to_error::Error<serde_json::Error>| {
                discovery_error(
                    &url,
                    &format!(
                        "not a usable discovery document ({:?} error at `{}`)",
                        e.inner().classify(),
                        e.path()
                    ),
                )
            })?;
    // OpenID Connect Discovery 1.0, §4.3: the document must be the configured issuer's own, or
    // a compromised or misconfigured host could name any token endpoint.
    match document.issuer() {
        Some(named) if named.trim_end_matches('/') == issuer => {}
        Some(named) => {
            return Err(discovery_error(
                &url,
                &format!(
                    "the document is for issuer {:?}, not the configured issuer; it is refused",
                    shorten(named)
                ),
            ));
        }
        None => {
            return Err(discovery_error(
                &url,
                "the document names no issuer; it is refused",
            ));
        }
    }
    Ok(Discovered { document, url })
}

/// Why a body could not be read whole.
#[derive(Debug)]
pub(crate) enum LimitedReadError {
    /// It is longer than the limit (in bytes).
    TooLarge(u64),
    /// The connection failed or timed out.
    Transport(reqwest::Error),
}

/// Reads the whole body of `response`, at most `limit` bytes of it.
pub(crate) async fn read_limited(
    response: reqwest::Response,
    limit: u64,
) -> Result<Bytes, LimitedReadError> {
    let response = limit_body(response, limit)
        .map_err(|exceeded| LimitedReadError::TooLarge(exceeded.limit))?;
    response
        .bytes()
        .await
        .map_err(|error| match body_limit_exceeded(&error) {
            Some(limit) => LimitedReadError::TooLarge(limit),
            None => LimitedReadError::Transport(error),
        })
}

/// A value from the identity provider, bounded for a message.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}
