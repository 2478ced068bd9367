//! The ES256 signing key: a P-256 key generated at start or loaded from PKCS#8 PEM, and its
//! public forms (the JWK the discovery document points to, the key id tokens name).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{DecodingKey, EncodingKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use serde_json::json;

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
    pub(super) kid: String,
    pkcs8_pem: String,
    pub(super) encoding: EncodingKey,
    pub(super) decoding: DecodingKey,
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

    /// The public key as a JWK (what the JWKS endpoint publishes).
    pub fn jwk(&self) -> &serde_json::Value {
        &self.jwk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_round_trips_through_pem() {
        let key = SigningKey::generate().expect("key");
        let again = SigningKey::from_pkcs8_pem(key.pkcs8_pem()).expect("parse");
        assert_eq!(key.kid, again.kid);
        assert!(SigningKey::from_pkcs8_pem("garbage").is_err());
    }
}
