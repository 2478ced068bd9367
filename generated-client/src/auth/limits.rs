//! Leaf: the bounds of tokens (their longest life) and of every request to the identity
//! provider (time, bytes read).

use std::time::Duration;

/// The most bytes of a token or discovery answer read (the client's
/// [`max_response_body`](crate::ClientBuilder::max_response_body) when that is smaller). Real
/// answers are a few kilobytes.
pub const MAX_IDENTITY_PROVIDER_BODY: u64 = 1024 * 1024;

/// Bounds of each request to the identity provider.
// The client builder makes one in every build; without `oauth2` no identity provider is ever
// asked, so nothing reads it.
#[cfg_attr(
    not(feature = "oauth2"),
    expect(
        dead_code,
        reason = "read by the identity provider's door, feature `oauth2`"
    )
)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct IdentityProviderLimits {
    /// The total time of one token or discovery request: while one runs, every call needing a
    /// token waits for it.
    pub(crate) timeout: Duration,
    /// The most bytes of an answer read.
    pub(crate) max_body: u64,
}

/// The longest a token is kept, whatever `expires_in` says (production's tokens live five
/// minutes): a larger value is clamped to this.
pub const MAX_TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
