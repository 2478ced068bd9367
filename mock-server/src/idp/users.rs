//! Who signs in and how: the test users of the authorization page, the kinds of client, and
//! the constant-time comparison every secret goes through.

use crate::redact::debug_showing;

/// How a client authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// Holds a secret.
    Confidential,
    /// A native application: holds no secret, so proves possession with PKCE alone.
    Public,
}

/// Someone who can sign in on the mock's authorization page.
///
/// Written `USERNAME:PASSWORD[:DISPLAY NAME[:E-MAIL]]` (so neither user name nor password holds
/// a `:`); the display name (default: the user name) is the `name` claim and the
/// `createdByName` of the sessions the user creates.
#[derive(Clone, PartialEq, Eq)]
pub struct TestUser {
    /// Signs in with this (`preferred_username`).
    pub username: String,
    /// The password (never printed by `Debug` or in errors).
    pub password: String,
    /// The display name (`name`).
    pub name: String,
    /// The e-mail address (`email`, with the `email` scope).
    pub email: Option<String>,
}

// The password is a secret; the names and the e-mail address are personal data (a user name
// may be an e-mail address).
debug_showing!(TestUser {});

/// Equality whose time depends on the lengths only, not on where the bytes differ.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for (i, byte) in a.iter().enumerate() {
        diff |= byte ^ b.get(i % b.len().max(1)).copied().unwrap_or(0);
    }
    diff == 0
}
