//! Authorization codes: random, kept as digests, bound to the client, the redirect URI and the
//! PKCE challenge, short-lived and single-use. A redeemed code is remembered for a while, so
//! that presenting it again ends the sign-in it started (RFC 6749 §4.1.2, RFC 9700 §4.5).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::grants::{digest, random_token};

/// How long a redeemed code is remembered after it expired, to recognise a replay.
const REMEMBER_REDEEMED: Duration = Duration::minutes(10);
/// Most codes held at once (issuing one needs a password, but memory stays bounded anyway).
const MOST_CODES: usize = 10_000;

/// What a code stands for.
#[derive(Clone)]
pub struct CodeGrant {
    /// The client it was issued to.
    pub client_id: String,
    /// The redirect URI of the authorization request, to be repeated exactly.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub code_challenge: String,
    /// The granted scopes, space-separated.
    pub scope: String,
    /// The request's `nonce`.
    pub nonce: Option<String>,
    /// Who signed in.
    pub username: String,
    /// When they typed their password.
    pub auth_time: DateTime<Utc>,
}

struct IssuedCode {
    grant: CodeGrant,
    expires_at: DateTime<Utc>,
    /// The sign-in the first redemption started (its id is chosen before the tokens are made,
    /// so that a replay racing the first redemption still knows what to end).
    redeemed_as: Option<Uuid>,
    /// Set by a replay: the first redemption, if still running, must not hand out its tokens.
    replayed: bool,
}

/// What presenting a code found.
pub enum Redemption {
    /// The first presentation within the code's lifetime: the sign-in to create is `sid`.
    First {
        /// What the code stands for (still to be checked against the token request).
        grant: CodeGrant,
        /// The id for the new sign-in.
        sid: Uuid,
    },
    /// A second presentation: the sign-in `sid` (if any was made) must end.
    Replayed {
        /// The sign-in the first presentation created.
        sid: Option<Uuid>,
    },
    /// Past its lifetime.
    Expired,
    /// Never issued, or forgotten.
    Unknown,
}

/// The codes issued and not yet forgotten.
#[derive(Default)]
pub struct CodeStore {
    codes: Mutex<HashMap<String, IssuedCode>>,
}

impl CodeStore {
    /// Issues a code for `grant`, valid for `lifetime`.
    pub fn issue(&self, grant: CodeGrant, lifetime: Duration) -> String {
        let code = random_token();
        let now = Utc::now();
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        codes.retain(|_, issued| issued.expires_at + REMEMBER_REDEEMED > now);
        if codes.len() >= MOST_CODES
            && let Some(oldest) = codes
                .iter()
                .min_by_key(|(_, issued)| issued.expires_at)
                .map(|(key, _)| key.clone())
        {
            codes.remove(&oldest);
        }
        codes.insert(
            digest(&code),
            IssuedCode {
                grant,
                expires_at: now + lifetime,
                redeemed_as: None,
                replayed: false,
            },
        );
        code
    }

    /// Presents `code`. Whatever the outcome, the code cannot be redeemed again.
    pub fn redeem(&self, code: &str) -> Redemption {
        let now = Utc::now();
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        let Some(issued) = codes.get_mut(&digest(code)) else {
            return Redemption::Unknown;
        };
        if issued.redeemed_as.is_some() || issued.replayed {
            issued.replayed = true;
            return Redemption::Replayed {
                sid: issued.redeemed_as,
            };
        }
        if now >= issued.expires_at {
            // Burnt as well: a late second try is a replay.
            issued.replayed = true;
            return Redemption::Expired;
        }
        let sid = Uuid::new_v4();
        issued.redeemed_as = Some(sid);
        Redemption::First {
            grant: issued.grant.clone(),
            sid,
        }
    }

    /// Whether `code` was presented again since it was redeemed (the first redemption then
    /// ends the sign-in it just made instead of answering with its tokens).
    pub fn was_replayed(&self, code: &str) -> bool {
        let codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        codes
            .get(&digest(code))
            .is_some_and(|issued| issued.replayed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> CodeGrant {
        CodeGrant {
            client_id: "creditdata-cli".into(),
            redirect_uri: "http://127.0.0.1:1/cb".into(),
            code_challenge: "c".repeat(43),
            scope: "openid".into(),
            nonce: None,
            username: "lena".into(),
            auth_time: Utc::now(),
        }
    }

    #[test]
    fn a_code_redeems_once_then_reports_the_replay() {
        let store = CodeStore::default();
        let code = store.issue(grant(), Duration::seconds(60));
        let Redemption::First { sid, .. } = store.redeem(&code) else {
            panic!("the first redemption succeeds");
        };
        assert!(!store.was_replayed(&code));
        match store.redeem(&code) {
            Redemption::Replayed { sid: replayed } => assert_eq!(replayed, Some(sid)),
            _ => panic!("the second redemption is a replay"),
        }
        assert!(store.was_replayed(&code));
        assert!(matches!(store.redeem("never issued"), Redemption::Unknown));
    }

    #[test]
    fn an_expired_code_is_refused() {
        let store = CodeStore::default();
        let code = store.issue(grant(), Duration::zero());
        assert!(matches!(store.redeem(&code), Redemption::Expired));
        assert!(matches!(
            store.redeem(&code),
            Redemption::Replayed { sid: None }
        ));
    }
}
