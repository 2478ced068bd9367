//! What an application keeps of a sign-in, and where: [`StoredSignIn`] and the
//! [`TokenStore`] trait (the `creditdata` command puts it in the system keyring or a `0600`
//! file; [`MemoryTokenStore`] keeps it in memory).

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// A person's sign-in: what a [`TokenStore`] keeps between runs. Serializable (times as Unix
/// seconds); its `Debug` shows neither a token nor the person's name.
#[derive(Clone, Serialize, Deserialize)]
pub struct StoredSignIn {
    /// The issuer signed in with (without a trailing slash).
    pub issuer: String,
    /// The application's client id there.
    pub client_id: String,
    /// The refresh token; `None` when the provider issued none (the sign-in then ends with its
    /// access token).
    #[serde(with = "optional_secret", default)]
    pub refresh_token: Option<SecretString>,
    /// The current access token.
    #[serde(with = "optional_secret", default)]
    pub access_token: Option<SecretString>,
    /// When the access token expires, as the provider said (`expires_in`).
    #[serde(with = "optional_unix_seconds", default)]
    pub access_token_expires_at: Option<SystemTime>,
    /// The ID token of the sign-in, the `id_token_hint` of [`sign_out`](super::sign_out). It
    /// carries personal data: kept as a secret.
    #[serde(with = "optional_secret", default)]
    pub id_token: Option<SecretString>,
    /// The scopes granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Who signed in, from the validated ID token.
    pub user: SignedInUser,
    /// When the person signed in.
    #[serde(with = "unix_seconds")]
    pub signed_in_at: SystemTime,
    /// The origin (`https://host[:port]`) of the service this sign-in is for, recorded by the
    /// application at sign-in. A client whose base URL has another origin refuses to send the
    /// person's token ([`AuthErrorKind::SignInRequired`](crate::auth::AuthErrorKind)): a
    /// changed setting or variable must not carry a live token to another host. `None` (a
    /// sign-in kept before it was recorded) binds to nothing: set it before saving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_origin: Option<String>,
}

impl StoredSignIn {
    /// Who signed in.
    pub fn user(&self) -> &SignedInUser {
        &self.user
    }

    /// How long the access token is valid yet (`None`: expired, or no expiry known).
    pub fn access_token_valid_for(&self) -> Option<Duration> {
        self.access_token_expires_at?
            .duration_since(SystemTime::now())
            .ok()
            .filter(|left| !left.is_zero())
    }

    /// The access token, for scripts that need one explicitly (`creditdata auth token`).
    /// Exposing it is the caller's decision.
    pub fn access_token(&self) -> Option<&SecretString> {
        self.access_token.as_ref()
    }
}

impl fmt::Debug for StoredSignIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |present: bool| if present { "[redacted]" } else { "none" };
        f.debug_struct("StoredSignIn")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("refresh_token", &redacted(self.refresh_token.is_some()))
            .field("access_token", &redacted(self.access_token.is_some()))
            .field("access_token_expires_at", &self.access_token_expires_at)
            .field("id_token", &redacted(self.id_token.is_some()))
            .field("scopes", &self.scopes)
            .field("user", &self.user)
            .field("signed_in_at", &self.signed_in_at)
            .finish()
    }
}

/// The person who signed in, from the ID token's claims. Their name is personal data: it is
/// shown only when asked for ([`display_name`](Self::display_name)), never by `Debug`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedInUser {
    /// `sub`: the provider's stable identifier of the person.
    pub subject: String,
    /// `name`, with the `profile` scope.
    #[serde(default)]
    pub name: Option<String>,
    /// `preferred_username`, with the `profile` scope.
    #[serde(default)]
    pub username: Option<String>,
}

impl SignedInUser {
    /// The name to greet the person with: `name`, else `preferred_username`, else `sub`.
    pub fn display_name(&self) -> &str {
        self.name
            .as_deref()
            .or(self.username.as_deref())
            .unwrap_or(&self.subject)
    }
}

impl fmt::Debug for SignedInUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SignedInUser([redacted])")
    }
}

/// Where an application keeps a person's sign-in. Called by the client when a refresh rotates
/// the tokens (`save` before the new access token is used), and by the application after
/// [`PendingSignIn::finish`](super::PendingSignIn::finish) and [`sign_out`](super::sign_out).
/// Calls may block (a keyring, a small file): the client makes them on tokio's blocking pool,
/// from its token refresh, one at a time within a process. Two processes sharing a store can
/// still race to refresh with the same refresh token (the provider then sees a replay and ends
/// the sign-in); the client narrows this by reloading the store before each refresh and using
/// a newer access token it finds there, and a store that needs more can lock across `load` and
/// `save`.
pub trait TokenStore: Send + Sync {
    /// The sign-in kept, if any.
    fn load(&self) -> Result<Option<StoredSignIn>, TokenStoreError>;
    /// Keeps `signed_in`, replacing what was kept. Must be durable when it returns: the
    /// refresh token it replaces is spent.
    fn save(&self, signed_in: &StoredSignIn) -> Result<(), TokenStoreError>;
    /// Forgets the sign-in.
    fn clear(&self) -> Result<(), TokenStoreError>;
    /// Excludes every other process (and client) refreshing the same sign-in until the
    /// returned guard is dropped. Refresh tokens rotate: two holders presenting the same one
    /// look like a replay to the provider, which then ends the sign-in for both. The client
    /// takes it after deciding to refresh, loads the sign-in again under it (using a token
    /// another process refreshed meanwhile), refreshes, saves, and only then lets go. May
    /// block (it is called off the async runtime). The default excludes nothing: right for a
    /// store no other process shares, such as [`MemoryTokenStore`].
    fn lock(&self) -> Result<TokenStoreLock, TokenStoreError> {
        Ok(TokenStoreLock::none())
    }
}

/// What [`TokenStore::lock`] returns: the lock is held while this lives (an OS file lock, a
/// database row lock, a lease...).
#[must_use = "the lock is released when this is dropped"]
pub struct TokenStoreLock(#[allow(dead_code)] Option<Box<dyn Send>>);

impl TokenStoreLock {
    /// Holds `guard` (whatever releases the lock when dropped).
    pub fn new(guard: impl Send + 'static) -> Self {
        TokenStoreLock(Some(Box::new(guard)))
    }

    /// No lock at all.
    pub fn none() -> Self {
        TokenStoreLock(None)
    }
}

impl fmt::Debug for TokenStoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "TokenStoreLock(held)"
        } else {
            "TokenStoreLock(none)"
        })
    }
}

/// Why a [`TokenStore`] failed. Its message must not contain a token.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct TokenStoreError {
    /// What kind of failure.
    pub kind: TokenStoreErrorKind,
    /// What failed, where, and what to do.
    pub message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// The kinds of [`TokenStoreError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenStoreErrorKind {
    /// The store cannot be reached (no keyring, no permission, ...).
    Unavailable,
    /// What is kept cannot be read as a sign-in.
    Corrupt,
    /// Another failure.
    Other,
}

impl TokenStoreError {
    /// An error of `kind`, described by `message`, caused by `source`.
    pub fn new(
        kind: TokenStoreErrorKind,
        message: impl Into<String>,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        TokenStoreError {
            kind,
            message: message.into(),
            source,
        }
    }
}

/// A [`TokenStore`] in memory: for tests, and for applications that sign in at every start.
#[derive(Default)]
pub struct MemoryTokenStore {
    kept: Mutex<Option<StoredSignIn>>,
}

impl MemoryTokenStore {
    /// A store holding `signed_in`.
    pub fn with(signed_in: StoredSignIn) -> Self {
        MemoryTokenStore {
            kept: Mutex::new(Some(signed_in)),
        }
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTokenStore").finish_non_exhaustive()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self) -> Result<Option<StoredSignIn>, TokenStoreError> {
        Ok(self.kept.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn save(&self, signed_in: &StoredSignIn) -> Result<(), TokenStoreError> {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(signed_in.clone());
        Ok(())
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }
}

mod optional_secret {
    use super::*;

    pub(super) fn serialize<S: serde::Serializer>(
        secret: &Option<SecretString>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        secret
            .as_ref()
            .map(|s| s.expose_secret())
            .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SecretString>, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.map(SecretString::from))
    }
}

mod unix_seconds {
    use super::*;

    pub(super) fn serialize<S: serde::Serializer>(
        time: &SystemTime,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let seconds = time
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        serializer.serialize_u64(seconds)
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<SystemTime, D::Error> {
        let seconds = u64::deserialize(deserializer)?;
        UNIX_EPOCH
            .checked_add(Duration::from_secs(seconds))
            .ok_or_else(|| serde::de::Error::custom("a time too far in the future"))
    }
}

mod optional_unix_seconds {
    use super::*;

    pub(super) fn serialize<S: serde::Serializer>(
        time: &Option<SystemTime>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        time.map(|t| {
            t.duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        })
        .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Option::<u64>::deserialize(deserializer)?
            .map(|seconds| {
                UNIX_EPOCH
                    .checked_add(Duration::from_secs(seconds))
                    .ok_or_else(|| serde::de::Error::custom("a time too far in the future"))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredSignIn {
        StoredSignIn {
            issuer: "https://login.example.test/realms/consumer".into(),
            client_id: "creditdata-cli".into(),
            refresh_token: Some(SecretString::from("refresh-secret-1".to_string())),
            access_token: Some(SecretString::from("access-secret-2".to_string())),
            access_token_expires_at: Some(UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
            id_token: Some(SecretString::from("id-token-secret-3".to_string())),
            scopes: vec!["openid".into(), "profile".into()],
            user: SignedInUser {
                subject: "f3a1".into(),
                name: Some("Lena Loan Officer".into()),
                username: Some("lena".into()),
            },
            signed_in_at: UNIX_EPOCH + Duration::from_secs(1_799_999_000),
            api_origin: Some("https://api.example.test".into()),
        }
    }

    #[test]
    fn debug_shows_no_token_and_no_name() {
        let shown = format!("{:?}", sample());
        for hidden in [
            "refresh-secret-1",
            "access-secret-2",
            "id-token-secret-3",
            "Lena",
            "lena",
        ] {
            assert!(!shown.contains(hidden), "{hidden} in {shown}");
        }
        assert!(shown.contains("creditdata-cli"), "{shown}");
    }

    #[test]
    fn a_stored_sign_in_round_trips_through_json() {
        let json = serde_json::to_string(&sample()).unwrap();
        let back: StoredSignIn = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.refresh_token
                .as_ref()
                .map(|s| s.expose_secret().to_string()),
            Some("refresh-secret-1".into())
        );
        assert_eq!(
            back.access_token_expires_at,
            sample().access_token_expires_at
        );
        assert_eq!(back.signed_in_at, sample().signed_in_at);
        assert_eq!(back.user, sample().user);
        assert_eq!(back.scopes, sample().scopes);
    }
}
