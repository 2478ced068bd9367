//! Leaf: an access token ready to send (the `Authorization` header value, marked sensitive),
//! whatever gave it: a static token or a grant.

use std::fmt;
use std::sync::Arc;

use reqwest::header::HeaderValue;
use secrecy::SecretString;

/// An access token, ready to send: the `Authorization` header value, marked sensitive, and
/// the token itself for [`Client::access_token`](crate::Client::access_token). Redacted in
/// `Debug`; cloning shares it.
#[derive(Clone)]
pub(crate) struct AccessToken(Arc<TokenParts>);

struct TokenParts {
    header: HeaderValue,
    // Kept as given rather than cut back out of the header, which may hold bytes
    // `HeaderValue::to_str` refuses.
    secret: SecretString,
}

impl AccessToken {
    pub(crate) fn new(token: &str) -> Option<AccessToken> {
        let mut header = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
        header.set_sensitive(true);
        Some(AccessToken(Arc::new(TokenParts {
            header,
            secret: SecretString::from(token.to_string()),
        })))
    }

    /// The `Authorization` header value (`Bearer ...`).
    pub(crate) fn header(&self) -> &HeaderValue {
        &self.0.header
    }

    /// The token alone, without the `Bearer ` prefix.
    pub(crate) fn secret(&self) -> SecretString {
        self.0.secret.clone()
    }

    #[cfg_attr(
        not(feature = "oauth2"),
        expect(
            dead_code,
            reason = "the token cache asks, which exists with `oauth2` only"
        )
    )]
    pub(crate) fn same_as(&self, other: &AccessToken) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken([redacted])")
    }
}
