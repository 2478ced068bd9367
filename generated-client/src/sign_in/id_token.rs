//! Who signed in: ID token validation (OpenID Connect Core §3.1.3.7) with `jsonwebtoken`, and
//! the person's name from userinfo when the token carries none. Validated: the signature
//! against a key of the issuer's JWKS (fetched under the identity provider's rules), an
//! algorithm the provider advertises among ES256 and RS256, `iss`, `aud` (and `azp`), `exp`,
//! and the sign-in's `nonce`; `iss` as the provider writes it (a trailing slash included).

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use subtle::ConstantTimeEq as _;

use super::error::SignInError;
use super::provider::{IdentityProvider, ProviderMetadata};
use super::store::SignedInUser;
use crate::auth::error::AuthError;

/// The algorithms the client verifies: the one the mock and Keycloak-style providers use, and
/// OpenID Connect's default. Symmetric algorithms (a public client has no secret to verify an
/// HMAC with) and `none` are never accepted.
const ACCEPTED: &[Algorithm] = &[Algorithm::ES256, Algorithm::RS256];

/// Allowed clock difference for `exp`, `nbf` and `iat`.
const LEEWAY_SECONDS: u64 = 60;

#[derive(serde::Deserialize)]
struct IdTokenClaims {
    sub: String,
    nonce: Option<String>,
    azp: Option<String>,
    #[serde(default, deserialize_with = "audiences")]
    aud: Vec<String>,
    name: Option<String>,
    preferred_username: Option<String>,
}

/// `aud` is one string or an array of them.
fn audiences<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(
        match <OneOrMany as serde::Deserialize>::deserialize(deserializer)? {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        },
    )
}

/// The person `token` names, once it passed every check.
pub(super) async fn validate(
    provider: &IdentityProvider,
    metadata: &ProviderMetadata,
    token: &str,
    nonce: &str,
) -> Result<SignedInUser, SignInError> {
    let refused = |why: &str| SignInError::IdToken(why.to_string());
    let header = jsonwebtoken::decode_header(token)
        .map_err(|_| refused("it is not a JWT with a readable header"))?;
    if !ACCEPTED.contains(&header.alg) {
        return Err(refused(&format!(
            "it is signed with {:?}, and only ES256 and RS256 are accepted",
            header.alg
        )));
    }
    if !metadata
        .id_token_algorithms
        .iter()
        .any(|advertised| advertised == &format!("{:?}", header.alg))
    {
        return Err(refused(&format!(
            "it is signed with {:?}, which the provider does not advertise \
             (id_token_signing_alg_values_supported)",
            header.alg
        )));
    }
    let keys = jwks(provider, metadata).await?;
    let jwk = match &header.kid {
        Some(kid) => keys.find(kid),
        // Without a `kid`, only a JWKS of exactly one key leaves no choice to the token.
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => None,
    }
    .ok_or_else(|| refused("no key of the issuer's JWKS matches its kid"))?;
    let key = DecodingKey::from_jwk(jwk)
        .map_err(|_| refused("the matching key of the issuer's JWKS is unusable"))?;
    let mut validation = Validation::new(header.alg);
    // As the provider writes it: `https://login.example/` stays with its slash.
    validation.set_issuer(&[provider.issuer(), metadata.issuer.as_str()]);
    validation.set_audience(&[provider.client_id()]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.leeway = LEEWAY_SECONDS;
    validation.validate_nbf = true;
    let claims = jsonwebtoken::decode::<IdTokenClaims>(token, &key, &validation)
        .map_err(|error| {
            use jsonwebtoken::errors::ErrorKind;
            refused(match error.kind() {
                ErrorKind::InvalidSignature => {
                    "its signature does not verify with the issuer's key"
                }
                ErrorKind::ExpiredSignature => "it has expired (exp)",
                ErrorKind::ImmatureSignature => "it is not valid yet (nbf)",
                ErrorKind::InvalidIssuer => "it was issued by another issuer (iss)",
                ErrorKind::InvalidAudience => "it is meant for another client (aud)",
                ErrorKind::InvalidAlgorithm => "its algorithm does not match the issuer's key",
                ErrorKind::MissingRequiredClaim(_) => {
                    "it lacks a required claim (exp, iss, aud or sub)"
                }
                _ => "it is malformed",
            })
        })?
        .claims;
    // Core §3.1.3.7 (4, 5): with several audiences, `azp` must be present and be us.
    if (claims.aud.len() > 1 || claims.azp.is_some())
        && claims.azp.as_deref() != Some(provider.client_id())
    {
        return Err(refused("it was issued to another party (azp)"));
    }
    let matches = claims
        .nonce
        .as_deref()
        .is_some_and(|got| bool::from(got.as_bytes().ct_eq(nonce.as_bytes())));
    if !matches {
        return Err(refused(
            "its nonce is not this sign-in's (a replayed token?)",
        ));
    }
    Ok(SignedInUser {
        subject: claims.sub,
        name: claims.name,
        username: claims.preferred_username,
    })
}

/// The issuer's JWKS.
async fn jwks(
    provider: &IdentityProvider,
    metadata: &ProviderMetadata,
) -> Result<JwkSet, SignInError> {
    let request = provider
        .http()
        .get(&metadata.jwks_uri)
        .header(reqwest::header::ACCEPT, "application/json")
        .build()
        .map_err(AuthError::unreachable)?;
    let body = provider.send(request, "the JWKS").await?;
    serde_json::from_slice(&body).map_err(|e| {
        SignInError::IdToken(format!(
            "the issuer's JWKS is unreadable (line {}, column {})",
            e.line(),
            e.column()
        ))
    })
}

/// `user` with the name and user name the provider's userinfo endpoint gives (OpenID Connect
/// Core §5.3), for providers whose ID token carries no profile claims. Only an answer about
/// the same `sub` is used (§5.3.2); any failure leaves `user` as it was: the name is for
/// showing, never for deciding.
pub(super) async fn named_by_userinfo(
    provider: &IdentityProvider,
    endpoint: &str,
    access_token: &str,
    user: SignedInUser,
) -> SignedInUser {
    #[derive(serde::Deserialize)]
    struct UserInfo {
        sub: String,
        name: Option<String>,
        preferred_username: Option<String>,
    }
    let request = match provider
        .http()
        .get(endpoint)
        .bearer_auth(access_token)
        .header(reqwest::header::ACCEPT, "application/json")
        .build()
    {
        Ok(request) => request,
        Err(_) => return user,
    };
    let info = match provider.send(request, "the userinfo endpoint").await {
        Ok(body) => serde_json::from_slice::<UserInfo>(&body).ok(),
        Err(error) => {
            tracing::debug!(
                error = &error as &dyn std::error::Error,
                "userinfo failed; the person stays unnamed"
            );
            None
        }
    };
    match info {
        Some(info) if info.sub == user.subject => SignedInUser {
            name: info.name.filter(|n| !n.trim().is_empty()),
            username: info.preferred_username.filter(|n| !n.trim().is_empty()),
            ..user
        },
        _ => user,
    }
}
