//! What the identity provider remembers about people who signed in: one [`Grant`] per sign-in
//! of a user to a client (the refresh-token family, `sid`), kept in the state file so refresh
//! tokens outlive a restart, and the access tokens revoked before their expiry.
//!
//! Refresh tokens are random and kept only as SHA-256 digests: a copy of the state file lets
//! nobody refresh. Each use rotates the token; the digests of rotated tokens stay with their
//! family, so presenting one again is recognised as a replay and ends the whole family
//! (RFC 9700 §4.14.2).

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use uuid::Uuid;

/// Rotated refresh-token digests remembered per family; older ones are forgotten (presenting
/// one is then an unknown token, still refused, but no longer ends the family).
pub const ROTATED_TOKENS_KEPT: usize = 256;

/// A random token of 256 bits, base64url.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The digest a token is stored and looked up under.
pub fn digest(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// One sign-in of a user to a client: the refresh-token family.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The family's id, the `sid` claim of its tokens.
    pub sid: Uuid,
    /// The client it was granted to.
    pub client_id: String,
    /// Who signed in.
    pub username: String,
    /// The granted scopes, space-separated.
    pub scope: String,
    /// The `nonce` of the authorization request, repeated in refreshed ID tokens
    /// (OpenID Connect Core §12.2).
    pub nonce: Option<String>,
    /// When the user typed their password.
    pub auth_time: DateTime<Utc>,
    /// When the sign-in ends however often it is refreshed.
    pub ends_at: DateTime<Utc>,
    /// Digest of the one refresh token that is valid now.
    pub refresh_token_digest: String,
    /// When that refresh token expires.
    pub refresh_expires_at: DateTime<Utc>,
    /// Digests of the refresh tokens rotated out, oldest first.
    #[serde(default)]
    pub rotated_digests: Vec<String>,
}

impl fmt::Debug for Grant {
    // No user name (personal data) and no digests.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("sid", &self.sid)
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .field("refresh_expires_at", &self.refresh_expires_at)
            .finish_non_exhaustive()
    }
}

impl Grant {
    /// Whether its refresh token can still be used at `now`.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now < self.refresh_expires_at && now < self.ends_at
    }

    /// Replaces the refresh token with a new one valid for `idle` (at most until the sign-in
    /// ends) and returns it.
    pub fn rotate(&mut self, now: DateTime<Utc>, idle: chrono::Duration) -> String {
        let token = random_token();
        let old = std::mem::replace(&mut self.refresh_token_digest, digest(&token));
        self.rotated_digests.push(old);
        if self.rotated_digests.len() > ROTATED_TOKENS_KEPT {
            let excess = self.rotated_digests.len() - ROTATED_TOKENS_KEPT;
            self.rotated_digests.drain(..excess);
        }
        self.refresh_expires_at = (now + idle).min(self.ends_at);
        token
    }
}

/// An access token revoked before it expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevokedAccessToken {
    /// Its `jti`.
    pub jti: String,
    /// Its expiry; after that it is refused anyway and forgotten here.
    pub expires_at: DateTime<Utc>,
}

/// What the refresh token presented is.
#[derive(Debug, PartialEq, Eq)]
pub enum RefreshTokenMatch {
    /// The current token of the family `sid`.
    Current(Uuid),
    /// A token that family already rotated out: a replay.
    Rotated(Uuid),
    /// Nothing this provider issued, or expired, or revoked.
    Unknown,
}

/// The identity provider's persisted state.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityState {
    /// Live sign-ins, oldest first.
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// Access tokens revoked before their expiry.
    #[serde(default)]
    pub revoked_access_tokens: Vec<RevokedAccessToken>,
}

impl fmt::Debug for IdentityState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityState")
            .field("grants", &self.grants.len())
            .field("revoked_access_tokens", &self.revoked_access_tokens.len())
            .finish()
    }
}

impl IdentityState {
    /// Forgets what has expired by `now`.
    pub fn prune(&mut self, now: DateTime<Utc>) {
        self.grants.retain(|grant| grant.is_live(now));
        self.revoked_access_tokens
            .retain(|revoked| revoked.expires_at > now);
    }

    /// The live grant `sid`.
    pub fn grant(&self, sid: Uuid, now: DateTime<Utc>) -> Option<&Grant> {
        self.grants
            .iter()
            .find(|grant| grant.sid == sid && grant.is_live(now))
    }

    /// The live grant `sid`, to change.
    pub fn grant_mut(&mut self, sid: Uuid, now: DateTime<Utc>) -> Option<&mut Grant> {
        self.grants
            .iter_mut()
            .find(|grant| grant.sid == sid && grant.is_live(now))
    }

    /// Ends the sign-in `sid` (its refresh token and, through the bearer check, its access
    /// tokens); whether there was one.
    pub fn revoke(&mut self, sid: Uuid) -> bool {
        let before = self.grants.len();
        self.grants.retain(|grant| grant.sid != sid);
        self.grants.len() != before
    }

    /// Which family, if any, `refresh_token` belongs to at `now`.
    pub fn find_refresh_token(&self, refresh_token: &str, now: DateTime<Utc>) -> RefreshTokenMatch {
        let wanted = digest(refresh_token);
        for grant in self.grants.iter().filter(|grant| grant.is_live(now)) {
            if grant.refresh_token_digest == wanted {
                return RefreshTokenMatch::Current(grant.sid);
            }
            if grant.rotated_digests.contains(&wanted) {
                return RefreshTokenMatch::Rotated(grant.sid);
            }
        }
        RefreshTokenMatch::Unknown
    }

    /// Whether the access token `jti` was revoked.
    pub fn is_access_token_revoked(&self, jti: &str) -> bool {
        self.revoked_access_tokens
            .iter()
            .any(|revoked| revoked.jti == jti)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(now: DateTime<Utc>) -> (Grant, String) {
        let token = random_token();
        let grant = Grant {
            sid: Uuid::new_v4(),
            client_id: "creditdata-cli".into(),
            username: "lena".into(),
            scope: "openid".into(),
            nonce: None,
            auth_time: now,
            ends_at: now + chrono::Duration::hours(10),
            refresh_token_digest: digest(&token),
            refresh_expires_at: now + chrono::Duration::minutes(30),
            rotated_digests: Vec::new(),
        };
        (grant, token)
    }

    #[test]
    fn rotation_keeps_the_old_digest_and_caps_the_expiry_at_the_sign_in_end() {
        let now = Utc::now();
        let (grant, first) = grant(now);
        let sid = grant.sid;
        let mut state = IdentityState {
            grants: vec![grant],
            ..Default::default()
        };
        assert_eq!(
            state.find_refresh_token(&first, now),
            RefreshTokenMatch::Current(sid)
        );
        let later = now + chrono::Duration::hours(9) + chrono::Duration::minutes(50);
        let second = state.grants[0].rotate(later, chrono::Duration::minutes(30));
        assert_eq!(state.grants[0].refresh_expires_at, state.grants[0].ends_at);
        assert_eq!(
            state.find_refresh_token(&first, later),
            RefreshTokenMatch::Rotated(sid)
        );
        assert_eq!(
            state.find_refresh_token(&second, later),
            RefreshTokenMatch::Current(sid)
        );
        assert_eq!(
            state.find_refresh_token("never issued", later),
            RefreshTokenMatch::Unknown
        );
        state.prune(now + chrono::Duration::hours(10));
        assert!(state.grants.is_empty());
    }

    #[test]
    fn only_digests_are_stored() {
        let now = Utc::now();
        let (grant, token) = grant(now);
        let json = serde_json::to_string(&IdentityState {
            grants: vec![grant],
            ..Default::default()
        })
        .expect("json");
        assert!(!json.contains(&token));
    }
}
