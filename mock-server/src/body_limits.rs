//! The largest request body each kind of route reads.

/// Largest body a `/v1` operation reads: a session request with every country and package
/// is a few kilobytes.
pub const API_BODY_LIMIT: usize = 64 * 1024;
/// Largest body the identity provider's token endpoint reads (a token request is a few hundred
/// bytes); the endpoint needs no authentication to be reached.
pub const TOKEN_BODY_LIMIT: usize = 8 * 1024;
/// Largest body a `/_mock` control endpoint (or any other route) reads.
pub const CONTROL_BODY_LIMIT: usize = 4 * 1024;
