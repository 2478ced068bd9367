//! Every request to an identity provider, whatever the grant (client credentials, code,
//! refresh, revocation, discovery): never redirected (a `3xx` is [`AuthErrorKind::Redirect`]
//! naming its `Location` without the query), `408`, `429` and `5xx` are
//! [`AuthErrorKind::Unavailable`] whatever their body, a non-JSON error answer is classified by
//! its status alone (401: [`AuthErrorKind::InvalidClient`]), and no body is read beyond the
//! limit. [`OAuthHttp`] is this function in the shape the `oauth2` crate sends its requests
//! with; [`oauth_error`] turns its errors into [`AuthError`]s that never quote a body.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;

use crate::auth::{
    AuthError, AuthErrorKind, IdentityProviderLimits, refuse_redirect_or_transient, shorten,
};
use crate::body_limits::{LimitedReadError, read_limited};

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
