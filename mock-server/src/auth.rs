//! The identity provider: a Keycloak-style OpenID Connect issuer with discovery, JWKS and the
//! client-credentials grant, and the bearer-token check every API call goes through.
//!
//! Tokens are ES256 JWTs signed with a P-256 key that is generated at start (or loaded from a
//! PEM file, or kept in the state file so tokens survive a restart).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::Utc;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, errors::ErrorKind};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::problem::Problem;

/// The realm name in the issuer path (`{base}/realms/consumer`).
pub const REALM: &str = "consumer";

/// Why a signing key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The PEM is not a PKCS#8 P-256 private key.
    #[error("the signing key is not a PKCS#8 PEM P-256 private key: {0}")]
    Parse(String),
    /// The key could not be encoded.
    #[error("the signing key could not be encoded: {0}")]
    Encode(String),
}

/// The ES256 signing key and its public forms.
pub struct SigningKey {
    kid: String,
    pkcs8_pem: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
    jwk: serde_json::Value,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh random P-256 key.
    pub fn generate() -> Result<Self, KeyError> {
        let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
        Self::from_secret(&secret)
    }

    /// The key in a PKCS#8 PEM document.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyError> {
        let secret =
            p256::SecretKey::from_pkcs8_pem(pem).map_err(|e| KeyError::Parse(e.to_string()))?;
        Self::from_secret(&secret)
    }

    fn from_secret(secret: &p256::SecretKey) -> Result<Self, KeyError> {
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| KeyError::Encode(e.to_string()))?;
        let pem = secret
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| KeyError::Encode(e.to_string()))?;
        let point = secret.public_key().to_encoded_point(false);
        let (Some(x), Some(y)) = (point.x(), point.y()) else {
            return Err(KeyError::Encode(
                "public key has no affine coordinates".into(),
            ));
        };
        let x = URL_SAFE_NO_PAD.encode(x);
        let y = URL_SAFE_NO_PAD.encode(y);
        // The key id is a thumbprint-like digest of the public key, stable for the same key.
        let kid = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, format!("{x}.{y}").as_bytes())
            .simple()
            .to_string();
        let decoding =
            DecodingKey::from_ec_components(&x, &y).map_err(|e| KeyError::Encode(e.to_string()))?;
        let jwk = json!({
            "kid": kid,
            "kty": "EC",
            "alg": "ES256",
            "use": "sig",
            "crv": "P-256",
            "x": x,
            "y": y,
        });
        Ok(SigningKey {
            kid,
            pkcs8_pem: pem.to_string(),
            encoding: EncodingKey::from_ec_der(der.as_bytes()),
            decoding,
            jwk,
        })
    }

    /// The PKCS#8 PEM (kept in the state file so tokens outlive a restart).
    pub fn pkcs8_pem(&self) -> &str {
        &self.pkcs8_pem
    }
}

/// The claims of an access token (Keycloak's service-account shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    /// Expiry, seconds since the epoch.
    pub exp: i64,
    /// Issued at.
    pub iat: i64,
    /// Token id.
    pub jti: String,
    /// Issuer.
    pub iss: String,
    /// Audience.
    pub aud: String,
    /// The service account's user id.
    pub sub: String,
    /// Token type (`Bearer`).
    pub typ: String,
    /// Authorized party: the client id.
    pub azp: String,
    /// Granted scopes.
    pub scope: String,
    /// The service account's user name (`service-account-{client_id}`).
    pub preferred_username: String,
    /// The client id (Keycloak adds it for service accounts).
    #[serde(rename = "clientId")]
    pub client_id: String,
}

/// Who called the API (put in the request's extensions by the bearer check).
#[derive(Debug, Clone)]
pub struct Caller {
    /// The client id of the token.
    pub client_id: String,
    /// The service account's user name, used as `createdByName`.
    pub username: String,
}

/// Issues and checks tokens.
pub struct IdentityProvider {
    issuer: String,
    audience: String,
    lifetime: Duration,
    client_id: String,
    client_secret: String,
    key: SigningKey,
    /// Tokens whose signature already verified, with their claims (ECDSA verification is the
    /// most expensive step of a request).
    verified: Mutex<HashMap<String, Claims>>,
}

/// Most tokens remembered as verified.
const VERIFIED_CACHE_LIMIT: usize = 1024;

impl fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("lifetime", &self.lifetime)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("key", &self.key)
            .finish()
    }
}

/// Options of [`IdentityProvider::mint`]: the knobs tests turn to make bad tokens.
#[derive(Debug, Clone, Default)]
pub struct TokenOptions {
    /// `aud` claim; default: the configured audience.
    pub audience: Option<String>,
    /// Lifetime in seconds from now; negative gives an expired token. Default: the configured
    /// token lifetime.
    pub lifetime_seconds: Option<i64>,
    /// `iss` claim; default: the mock's issuer.
    pub issuer: Option<String>,
}

impl IdentityProvider {
    /// An identity provider for `issuer` accepting one client.
    pub fn new(
        issuer: String,
        audience: String,
        lifetime: Duration,
        client_id: String,
        client_secret: String,
        key: SigningKey,
    ) -> Self {
        IdentityProvider {
            issuer,
            audience,
            lifetime,
            client_id,
            client_secret,
            key,
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// The issuer URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The signing key.
    pub fn key(&self) -> &SigningKey {
        &self.key
    }

    /// The token endpoint URL.
    pub fn token_endpoint(&self) -> String {
        format!("{}/protocol/openid-connect/token", self.issuer)
    }

    /// Signs an access token for the configured client.
    pub fn mint(&self, options: &TokenOptions) -> Result<String, Problem> {
        let now = Utc::now().timestamp();
        let lifetime = options
            .lifetime_seconds
            .unwrap_or_else(|| i64::try_from(self.lifetime.as_secs()).unwrap_or(i64::MAX / 2));
        let claims = Claims {
            exp: now.saturating_add(lifetime),
            iat: now,
            jti: uuid::Uuid::new_v4().to_string(),
            iss: options
                .issuer
                .clone()
                .unwrap_or_else(|| self.issuer.clone()),
            aud: options
                .audience
                .clone()
                .unwrap_or_else(|| self.audience.clone()),
            sub: uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, self.client_id.as_bytes())
                .to_string(),
            typ: "Bearer".into(),
            azp: self.client_id.clone(),
            scope: "openid".into(),
            preferred_username: format!("service-account-{}", self.client_id),
            client_id: self.client_id.clone(),
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key.kid.clone());
        header.typ = Some("JWT".into());
        jsonwebtoken::encode(&header, &claims, &self.key.encoding)
            .map_err(|e| Problem::internal(format!("could not sign the token: {e}")))
    }

    /// Checks a bearer token; the error is the 401 to send. A token that verified before is
    /// recognised without checking its signature again (until it expires).
    pub fn verify(&self, token: &str) -> Result<Claims, Problem> {
        let now = Utc::now().timestamp();
        if let Ok(cache) = self.verified.lock()
            && let Some(claims) = cache.get(token)
            && claims.exp > now
        {
            return Ok(claims.clone());
        }
        let claims = self.verify_signature(token)?;
        if let Ok(mut cache) = self.verified.lock() {
            if cache.len() >= VERIFIED_CACHE_LIMIT {
                cache.retain(|_, claims| claims.exp > now);
                if cache.len() >= VERIFIED_CACHE_LIMIT {
                    cache.clear();
                }
            }
            cache.insert(token.to_owned(), claims.clone());
        }
        Ok(claims)
    }

    fn verify_signature(&self, token: &str) -> Result<Claims, Problem> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid_token("The access token is not a well-formed JWT."))?;
        if header.alg != Algorithm::ES256 {
            return Err(invalid_token(format!(
                "The access token is signed with {:?}; this issuer signs with ES256.",
                header.alg
            )));
        }
        if header.kid.as_deref() != Some(self.key.kid.as_str()) {
            return Err(invalid_token(
                "The access token was signed with a key this issuer does not publish.",
            ));
        }
        let mut validation = Validation::new(Algorithm::ES256);
        validation.leeway = 0;
        validation.set_audience(&[&self.audience]);
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        jsonwebtoken::decode::<Claims>(token, &self.key.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|error| {
                invalid_token(match error.kind() {
                    ErrorKind::ExpiredSignature => "The access token has expired.".to_owned(),
                    ErrorKind::InvalidAudience => format!(
                        "The access token was issued for another audience; this API accepts `{}`.",
                        self.audience
                    ),
                    ErrorKind::InvalidIssuer => {
                        format!("The access token was not issued by {}.", self.issuer)
                    }
                    ErrorKind::InvalidSignature => {
                        "The access token's signature does not verify.".to_owned()
                    }
                    ErrorKind::MissingRequiredClaim(claim) => {
                        format!("The access token has no `{claim}` claim.")
                    }
                    _ => "The access token is not a valid JWT of this issuer.".to_owned(),
                })
            })
    }

    fn client_secret_matches(&self, client_id: &str, secret: &str) -> bool {
        // Both comparisons always run, and each in time independent of where bytes differ.
        let id_ok = constant_time_eq(client_id.as_bytes(), self.client_id.as_bytes());
        let secret_ok = constant_time_eq(secret.as_bytes(), self.client_secret.as_bytes());
        id_ok & secret_ok
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, byte) in a.iter().enumerate() {
        diff |= byte ^ b.get(i % b.len().max(1)).copied().unwrap_or(0);
    }
    diff == 0
}

fn invalid_token(description: impl Into<String>) -> Problem {
    let description = description.into();
    let challenge = format!(
        "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{}\"",
        description.replace(['"', '\\'], "'")
    );
    Problem::unauthorized(description, challenge)
}

/// Axum middleware: refuses the request with 401 unless it carries a valid bearer token.
pub async fn require_bearer(
    State(idp): State<Arc<IdentityProvider>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(value) = request.headers().get(header::AUTHORIZATION) else {
        return Problem::unauthorized(
            "The request has no Authorization header; send `Authorization: Bearer <access token>` \
             with a token from the token endpoint.",
            format!("Bearer realm=\"{REALM}\""),
        )
        .into_response();
    };
    let Some(token) = value.to_str().ok().and_then(bearer_token) else {
        return Problem::unauthorized(
            "The Authorization header is not of the form `Bearer <access token>`.",
            format!("Bearer realm=\"{REALM}\", error=\"invalid_request\""),
        )
        .into_response();
    };
    match idp.verify(token) {
        Ok(claims) => {
            request.extensions_mut().insert(Caller {
                client_id: claims.client_id,
                username: claims.preferred_username,
            });
            next.run(request).await
        }
        Err(problem) => problem.into_response(),
    }
}

fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// `GET {issuer}/.well-known/openid-configuration`
pub async fn discovery(State(idp): State<Arc<IdentityProvider>>) -> Response {
    let issuer = &idp.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/protocol/openid-connect/auth"),
        "token_endpoint": idp.token_endpoint(),
        "jwks_uri": format!("{issuer}/protocol/openid-connect/certs"),
        "grant_types_supported": ["client_credentials"],
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "scopes_supported": ["openid"],
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "azp", "scope", "preferred_username"],
    }))
    .into_response()
}

/// `GET {issuer}/protocol/openid-connect/certs`
pub async fn jwks(State(idp): State<Arc<IdentityProvider>>) -> Response {
    Json(json!({ "keys": [idp.key.jwk.clone()] })).into_response()
}

/// `GET {issuer}/protocol/openid-connect/auth`: the mock has no interactive login.
pub async fn authorize() -> Response {
    oauth_error(
        StatusCode::BAD_REQUEST,
        "unsupported_response_type",
        "This mock identity provider supports only the client-credentials grant at the token \
         endpoint; there is no interactive login.",
        None,
    )
}

/// An RFC 6749 §5.2 error response.
fn oauth_error(
    status: StatusCode,
    error: &str,
    description: &str,
    basic_challenge: Option<()>,
) -> Response {
    let mut response = (
        status,
        Json(json!({ "error": error, "error_description": description })),
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    if basic_challenge.is_some() {
        headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"consumer\""),
        );
    }
    response
}

/// `POST {issuer}/protocol/openid-connect/token`: the client-credentials grant (RFC 6749 §4.4),
/// client authentication by `client_secret_post` or `client_secret_basic`.
pub async fn token(
    State(idp): State<Arc<IdentityProvider>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form_encoded = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| {
            media
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !form_encoded {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "The token request must be form-encoded (Content-Type: application/x-www-form-urlencoded).",
            None,
        );
    }
    // One pass with a map: the work grows with the body, whatever an anonymous caller sends.
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in form_urlencoded::parse(&body) {
        match params.entry(name.into_owned()) {
            Entry::Occupied(repeated) => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    &format!(
                        "The parameter `{}` is given more than once.",
                        repeated.key()
                    ),
                    None,
                );
            }
            Entry::Vacant(slot) => {
                slot.insert(value.into_owned());
            }
        }
    }
    let param = |name: &str| params.get(name).map(String::as_str);

    let Some(grant_type) = param("grant_type") else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Missing form parameter: grant_type",
            None,
        );
    };

    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, rest) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("basic").then_some(rest.trim())
        });
    let (client_id, client_secret, used_basic) = match (basic, param("client_secret")) {
        (Some(_), Some(_)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The client authenticated with both HTTP Basic and client_secret in the body; use one.",
                None,
            );
        }
        (Some(encoded), None) => match decode_basic(encoded) {
            Some((id, secret)) => (id, secret, true),
            None => {
                return oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "The HTTP Basic credentials are not base64 of `client_id:client_secret`.",
                    Some(()),
                );
            }
        },
        (None, Some(secret)) => match param("client_id") {
            Some(id) => (id.to_owned(), secret.to_owned(), false),
            None => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "Missing form parameter: client_id",
                    None,
                );
            }
        },
        (None, None) => {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "Client authentication is required: client_id and client_secret in the body, or HTTP Basic.",
                None,
            );
        }
    };
    if used_basic
        && let Some(body_id) = param("client_id")
        && body_id != client_id
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "client_id in the body differs from the HTTP Basic client id.",
            None,
        );
    }
    if !idp.client_secret_matches(&client_id, &client_secret) {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Invalid client or Invalid client credentials",
            used_basic.then_some(()),
        );
    }
    if grant_type != "client_credentials" {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!(
                "Unsupported grant_type `{grant_type}`; this client may use client_credentials only."
            ),
            None,
        );
    }
    if let Some(scope) = param("scope") {
        let unknown: Vec<&str> = scope
            .split_ascii_whitespace()
            .filter(|scope| *scope != "openid")
            .collect();
        if !unknown.is_empty() {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                &format!(
                    "Unknown scope: {}; the only scope is openid.",
                    unknown.join(" ")
                ),
                None,
            );
        }
    }
    match idp.mint(&TokenOptions::default()) {
        Ok(access_token) => {
            let mut response = Json(json!({
                "access_token": access_token,
                "expires_in": idp.lifetime.as_secs(),
                "refresh_expires_in": 0,
                "token_type": "Bearer",
                "not-before-policy": 0,
                "scope": "openid",
            }))
            .into_response();
            let headers = response.headers_mut();
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
            response
        }
        Err(problem) => oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            problem
                .body()
                .detail
                .as_deref()
                .unwrap_or("token signing failed"),
            None,
        ),
    }
}

/// `client_id:client_secret`, each form-urlencoded (RFC 6749 §2.3.1), in base64.
fn decode_basic(encoded: &str) -> Option<(String, String)> {
    let decoded = STANDARD.decode(encoded).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape = |part: &str| -> String {
        form_urlencoded::parse(format!("v={part}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default()
    };
    Some((unescape(id), unescape(secret)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idp() -> IdentityProvider {
        IdentityProvider::new(
            "http://127.0.0.1:1/realms/consumer".into(),
            "consumer-api".into(),
            Duration::from_secs(300),
            "client".into(),
            "secret".into(),
            SigningKey::generate().expect("key"),
        )
    }

    #[test]
    fn minted_tokens_verify_and_bad_ones_do_not() {
        let idp = idp();
        let token = idp.mint(&TokenOptions::default()).expect("mint");
        let claims = idp.verify(&token).expect("valid");
        assert_eq!(claims.azp, "client");
        let expired = idp
            .mint(&TokenOptions {
                lifetime_seconds: Some(-5),
                ..Default::default()
            })
            .expect("mint");
        assert!(idp.verify(&expired).is_err());
        let other_audience = idp
            .mint(&TokenOptions {
                audience: Some("account".into()),
                ..Default::default()
            })
            .expect("mint");
        assert!(idp.verify(&other_audience).is_err());
        // Flip one character in the middle of the signature.
        let mut tampered: Vec<char> = token.chars().collect();
        let at = token.rfind('.').expect("three parts") + 10;
        tampered[at] = if tampered[at] == 'A' { 'B' } else { 'A' };
        let tampered: String = tampered.into_iter().collect();
        assert!(idp.verify(&tampered).is_err());
        // A token from another key with the same kid does not verify either.
        let stranger = IdentityProvider::new(
            idp.issuer.clone(),
            idp.audience.clone(),
            Duration::from_secs(300),
            "client".into(),
            "secret".into(),
            SigningKey::generate().expect("key"),
        );
        let foreign = stranger.mint(&TokenOptions::default()).expect("mint");
        assert!(idp.verify(&foreign).is_err());
        assert!(idp.verify("not-a-jwt").is_err());
    }

    #[test]
    fn key_round_trips_through_pem() {
        let key = SigningKey::generate().expect("key");
        let again = SigningKey::from_pkcs8_pem(key.pkcs8_pem()).expect("parse");
        assert_eq!(key.kid, again.kid);
        assert!(SigningKey::from_pkcs8_pem("garbage").is_err());
    }

    #[test]
    fn basic_credentials_are_form_decoded() {
        let encoded = STANDARD.encode("my%20client:s%3Acret");
        assert_eq!(
            decode_basic(&encoded),
            Some(("my client".into(), "s:cret".into()))
        );
        assert_eq!(decode_basic("***"), None);
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }
}
