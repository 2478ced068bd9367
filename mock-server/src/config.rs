//! How a mock server is set up: where it listens, the credentials it accepts, and the service's
//! timing rules (deadlines, provider delays).

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The client id the mock accepts when none is configured.
pub const DEFAULT_CLIENT_ID: &str = "creditdata-mock-client";
/// The client secret the mock accepts when none is configured (a local mock has no secret worth
/// keeping; the binary prints it).
pub const DEFAULT_CLIENT_SECRET: &str = "creditdata-mock-secret";
/// The `aud` claim of issued tokens, and the only audience the API accepts.
pub const DEFAULT_AUDIENCE: &str = "consumer-api";
/// Default for `Take` in `GET /v1/sessions`.
pub const DEFAULT_TAKE: i32 = 20;
/// Largest accepted `Take`; a larger one is a 400.
pub const MAX_TAKE: i32 = 100;

/// Configuration of a [`MockServer`](crate::MockServer).
#[derive(Clone)]
pub struct MockConfig {
    /// Address to bind; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The client id the token endpoint accepts.
    pub client_id: String,
    /// The client secret the token endpoint accepts (never printed by `Debug`).
    pub client_secret: String,
    /// The `aud` claim of issued tokens; the API refuses tokens for any other audience.
    pub audience: String,
    /// Lifetime of issued access tokens (`expires_in`); production uses 300 s.
    pub token_lifetime: Duration,
    /// PKCS#8 PEM of a P-256 key to sign tokens with (ES256); `None` generates one at start (or
    /// reuses the one in the state file). Never printed by `Debug`.
    pub signing_key_pem: Option<String>,
    /// File that keeps the sessions (and the signing key) across restarts; `None` keeps state in
    /// memory only.
    pub state_file: Option<PathBuf>,
    /// When set, a session waiting for its customer completes by itself this long after it
    /// started waiting (if the deadline has not passed first).
    pub auto_complete_after: Option<Duration>,
    /// When set, a customer still waiting completes the moment anything of the session is read
    /// (the session, a dataset, a file): a client reads delivered data at once, while what it
    /// does before its first read (resend the notification, extend the deadline) still meets a
    /// waiting customer. A tester that only speaks the API reaches both states, without a clock.
    pub complete_on_read: bool,
    /// How long a provider stays `WAITING_FOR_PROVIDER` after the customer has given consent.
    pub provider_delay: Duration,
    /// One provider answer in this many ends in `ERROR` (chosen deterministically from the session
    /// id and the provider); 0 turns these simulated failures off.
    pub provider_error_one_in: u32,
    /// Days from creation to the first customer input deadline.
    pub deadline_days: u32,
    /// Days an extension moves the deadline to, counted from now (the "authenticated user's
    /// configuration" of the real service).
    pub extension_days: u32,
    /// Days after creation during which the deadline can still be extended.
    pub extendable_for_days: u32,
    /// Days after creation during which countries and packages can still be appended (PATCH).
    pub upgradable_for_days: u32,
    /// `organizationalUnitName` of sessions created by the configured client.
    pub organizational_unit_name: Option<String>,
}

impl Default for MockConfig {
    fn default() -> Self {
        MockConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            client_id: DEFAULT_CLIENT_ID.to_owned(),
            client_secret: DEFAULT_CLIENT_SECRET.to_owned(),
            audience: DEFAULT_AUDIENCE.to_owned(),
            token_lifetime: Duration::from_secs(300),
            signing_key_pem: None,
            state_file: None,
            auto_complete_after: None,
            complete_on_read: false,
            provider_delay: Duration::from_secs(2),
            provider_error_one_in: 8,
            deadline_days: 7,
            extension_days: 7,
            extendable_for_days: 30,
            upgradable_for_days: 30,
            organizational_unit_name: Some("Retail Lending".to_owned()),
        }
    }
}

impl fmt::Debug for MockConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockConfig")
            .field("listen", &self.listen)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("audience", &self.audience)
            .field("token_lifetime", &self.token_lifetime)
            .field(
                "signing_key_pem",
                &self.signing_key_pem.as_ref().map(|_| "<redacted>"),
            )
            .field("state_file", &self.state_file)
            .field("auto_complete_after", &self.auto_complete_after)
            .field("complete_on_read", &self.complete_on_read)
            .field("provider_delay", &self.provider_delay)
            .field("provider_error_one_in", &self.provider_error_one_in)
            .field("deadline_days", &self.deadline_days)
            .field("extension_days", &self.extension_days)
            .field("extendable_for_days", &self.extendable_for_days)
            .field("upgradable_for_days", &self.upgradable_for_days)
            .field("organizational_unit_name", &self.organizational_unit_name)
            .finish()
    }
}
