//! The identity provider's model: the claims of its tokens, minting and verifying them, the
//! signing key, the grants of signed-in users, authorization codes and the authorization
//! requests waiting for a person. The HTTP endpoints that use it are in `auth/`; nothing here
//! knows about them.
//!
//! Tokens are ES256 JWTs signed with a P-256 key that is generated at start (or loaded from a
//! PEM file, or kept in the state file so tokens survive a restart).

pub mod codes;
pub mod grants;
mod key;
pub mod pending;
pub mod users;

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, Header, Validation, errors::ErrorKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::problem::Problem;
use crate::redact::debug_showing;

pub use key::{KeyError, SigningKey};
pub(crate) use users::constant_time_eq;
pub use users::{ClientKind, TestUser};

/// The realm name in the issuer path (`{base}/realms/consumer`).
pub const REALM: &str = "consumer";

/// The claims of an access token (Keycloak's service-account shape).
#[derive(Clone, Serialize, Deserialize)]
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
    /// The user name: the signed-in user's, or the service account's
    /// (`service-account-{client_id}`).
    pub preferred_username: String,
    /// The client id (Keycloak adds it for service accounts only).
    #[serde(rename = "clientId", default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The signed-in user's display name (tokens of the Authorization Code flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The sign-in the token belongs to (tokens of the Authorization Code flow): once it ends
    /// (logout, revocation, a replayed code or refresh token), the token is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// When the user signed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<i64>,
}

/// The claims of an ID token (OpenID Connect Core §2).
#[derive(Clone, Serialize, Deserialize)]
pub struct IdTokenClaims {
    /// Issuer.
    pub iss: String,
    /// The user's stable id.
    pub sub: String,
    /// The client id.
    pub aud: String,
    /// Expiry.
    pub exp: i64,
    /// Issued at.
    pub iat: i64,
    /// When the user typed their password.
    pub auth_time: i64,
    /// The authorization request's `nonce`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// Authorized party: the client id.
    pub azp: String,
    /// The sign-in (ended by logout with this token as `id_token_hint`).
    pub sid: String,
    /// Token type (`ID`, as Keycloak writes it): never accepted by the API.
    pub typ: String,
    /// Left half of the access token's SHA-256 (OpenID Connect Core §3.1.3.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_hash: Option<String>,
    /// Display name.
    pub name: String,
    /// User name.
    pub preferred_username: String,
    /// E-mail address (with the `email` scope, when the user has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether the address is verified (test users' addresses are taken as verified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
}

/// Who called the API (put in the request's extensions by the bearer check).
#[derive(Clone)]
pub struct Caller {
    /// The client id of the token (`azp`).
    pub client_id: String,
    /// The user name (`preferred_username`).
    pub username: String,
    /// The signed-in user's display name; `None` for client-credentials tokens.
    pub name: Option<String>,
}

// A user's name, user name, e-mail address and stable id (`sub`) are personal data.
debug_showing!(Claims {
    exp,
    iat,
    jti,
    iss,
    aud,
    typ,
    azp,
    scope,
    client_id,
    sid,
    auth_time,
});
debug_showing!(IdTokenClaims {
    iss,
    aud,
    exp,
    iat,
    auth_time,
    azp,
    sid,
    typ,
    email_verified,
});
debug_showing!(Caller { client_id });

impl Caller {
    /// The `createdByName` of what this caller creates: a signed-in user's display name, or
    /// the service account's user name.
    pub fn created_by_name(self) -> String {
        self.name.unwrap_or(self.username)
    }
}

/// The stable `sub` of a test user (the same across restarts).
pub fn user_subject(username: &str) -> String {
    uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_URL,
        format!("creditdata-mock:user:{username}").as_bytes(),
    )
    .to_string()
}

/// A user's sign-in, as tokens are minted for it.
#[derive(Debug, Clone, Copy)]
pub struct SignIn<'a> {
    /// Who.
    pub user: &'a TestUser,
    /// To which client.
    pub client_id: &'a str,
    /// The granted scopes, space-separated.
    pub scope: &'a str,
    /// The sign-in (refresh-token family).
    pub sid: uuid::Uuid,
    /// When the password was typed.
    pub auth_time: DateTime<Utc>,
    /// The authorization request's `nonce`.
    pub nonce: Option<&'a str>,
}

/// The signed tokens of one answer of the token endpoint to a user's client.
pub struct UserTokens {
    /// The access token.
    pub access_token: String,
    /// The ID token, with the `openid` scope.
    pub id_token: Option<String>,
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
    /// Authorization requests waiting for sign-in or consent (in memory: they last minutes).
    pending: pending::PendingRequests,
    /// Authorization codes issued and not yet forgotten (in memory: they last a minute).
    codes: codes::CodeStore,
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
            pending: pending::PendingRequests::default(),
            codes: codes::CodeStore::default(),
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

    /// The authorization requests waiting for sign-in or consent.
    pub fn pending(&self) -> &pending::PendingRequests {
        &self.pending
    }

    /// The authorization codes issued and not yet forgotten.
    pub fn codes(&self) -> &codes::CodeStore {
        &self.codes
    }

    /// The token endpoint URL.
    pub fn token_endpoint(&self) -> String {
        format!("{}/protocol/openid-connect/token", self.issuer)
    }

    /// The endpoint URL `{issuer}/protocol/openid-connect/{name}`.
    pub fn endpoint(&self, name: &str) -> String {
        format!("{}/protocol/openid-connect/{name}", self.issuer)
    }

    /// The access-token lifetime in seconds.
    pub fn lifetime_seconds(&self) -> i64 {
        i64::try_from(self.lifetime.as_secs()).unwrap_or(i64::MAX / 2)
    }

    fn sign<T: Serialize>(&self, claims: &T) -> Result<String, Problem> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key.kid.clone());
        header.typ = Some("JWT".into());
        jsonwebtoken::encode(&header, claims, &self.key.encoding)
            .map_err(|e| Problem::internal(format!("could not sign the token: {e}")))
    }

    /// Signs the access token (and, with the `openid` scope, the ID token) of a user's sign-in.
    pub fn mint_for_user(&self, sign_in: SignIn<'_>) -> Result<UserTokens, Problem> {
        let now = Utc::now().timestamp();
        let exp = now.saturating_add(self.lifetime_seconds());
        let subject = user_subject(&sign_in.user.username);
        let access = Claims {
            exp,
            iat: now,
            jti: uuid::Uuid::new_v4().to_string(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub: subject.clone(),
            typ: "Bearer".into(),
            azp: sign_in.client_id.to_owned(),
            scope: sign_in.scope.to_owned(),
            preferred_username: sign_in.user.username.clone(),
            client_id: None,
            name: Some(sign_in.user.name.clone()),
            sid: Some(sign_in.sid.to_string()),
            auth_time: Some(sign_in.auth_time.timestamp()),
        };
        let access_token = self.sign(&access)?;
        let scopes: Vec<&str> = sign_in.scope.split_ascii_whitespace().collect();
        if !scopes.contains(&"openid") {
            return Ok(UserTokens {
                access_token,
                id_token: None,
            });
        }
        let email = scopes
            .contains(&"email")
            .then(|| sign_in.user.email.clone())
            .flatten();
        let digest = Sha256::digest(access_token.as_bytes());
        let id = IdTokenClaims {
            iss: self.issuer.clone(),
            sub: subject,
            aud: sign_in.client_id.to_owned(),
            exp,
            iat: now,
            auth_time: sign_in.auth_time.timestamp(),
            nonce: sign_in.nonce.map(str::to_owned),
            azp: sign_in.client_id.to_owned(),
            sid: sign_in.sid.to_string(),
            typ: "ID".into(),
            at_hash: Some(URL_SAFE_NO_PAD.encode(&digest[..16])),
            name: sign_in.user.name.clone(),
            preferred_username: sign_in.user.username.clone(),
            email_verified: email.as_ref().map(|_| true),
            email,
        };
        Ok(UserTokens {
            access_token,
            id_token: Some(self.sign(&id)?),
        })
    }

    /// The claims of an ID token this issuer signed, whatever its expiry (an expired ID token
    /// is still a fine `id_token_hint`, OpenID Connect RP-Initiated Logout §2).
    pub fn verify_id_token_hint(&self, token: &str) -> Option<IdTokenClaims> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        if header.alg != Algorithm::ES256 || header.kid.as_deref() != Some(self.key.kid.as_str()) {
            return None;
        }
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["iss", "aud", "sub"]);
        let claims = jsonwebtoken::decode::<IdTokenClaims>(token, &self.key.decoding, &validation)
            .ok()?
            .claims;
        (claims.typ == "ID").then_some(claims)
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
            client_id: Some(self.client_id.clone()),
            name: None,
            sid: None,
            auth_time: None,
        };
        self.sign(&claims)
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
        let claims = jsonwebtoken::decode::<Claims>(token, &self.key.decoding, &validation)
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
            })?;
        // An ID token or anything else this key signed is not an access token.
        if claims.typ != "Bearer" {
            return Err(invalid_token(
                "The token is not an access token (typ is not Bearer); send the access_token of \
                 the token response, not the id_token.",
            ));
        }
        Ok(claims)
    }

    pub(crate) fn client_secret_matches(&self, client_id: &str, secret: &str) -> bool {
        // Both comparisons always run, and each in time independent of where bytes differ.
        let id_ok = constant_time_eq(client_id.as_bytes(), self.client_id.as_bytes());
        let secret_ok = constant_time_eq(secret.as_bytes(), self.client_secret.as_bytes());
        id_ok & secret_ok
    }
}

/// The 401 for a bearer token that is refused, with its `WWW-Authenticate` challenge.
pub(crate) fn invalid_token(description: impl Into<String>) -> Problem {
    let description = description.into();
    let challenge = format!(
        "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{}\"",
        description.replace(['"', '\\'], "'")
    );
    Problem::unauthorized(description, challenge)
}

/// `Bearer <token>`, scheme case-insensitive; the rate limit reads a request's token the same way.
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
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
    fn bearer_tokens_are_read_case_insensitively_and_trimmed() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
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
