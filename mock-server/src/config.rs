//! How a mock server is set up: where it listens, the credentials it accepts, and the service's
//! timing rules (deadlines, provider delays).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

// The identity provider's users are its model's; reading and checking them is configuration.
pub use crate::idp::TestUser;

/// The client id the mock accepts when none is configured.
pub const DEFAULT_CLIENT_ID: &str = "creditdata-mock-client";
/// The client secret the mock accepts when none is configured (a local mock has no secret worth
/// keeping; the binary prints it).
pub const DEFAULT_CLIENT_SECRET: &str = "creditdata-mock-secret";
/// The `aud` claim of issued tokens, and the only audience the API accepts.
pub const DEFAULT_AUDIENCE: &str = "consumer-api";
/// The client id of the public native client (the `creditdata` command): no secret, the
/// Authorization Code flow with PKCE only.
pub const DEFAULT_PUBLIC_CLIENT_ID: &str = "creditdata-cli";
/// The test user who can sign in when none is configured (`--user`), as
/// `USERNAME:PASSWORD:DISPLAY NAME:E-MAIL`.
pub const DEFAULT_USER: &str = "lena:lena-password:Lena Loan Officer:lena@lender.example";
/// Default for `Take` in `GET /v1/sessions`.
pub const DEFAULT_TAKE: i32 = 20;
/// Largest accepted `Take`; a larger one is a 400. The description's `maximum` of `Take` (an
/// assumption its overlay states), as the client crate's generated limits read it when it is
/// compiled: not restated here, so a description that changes it changes the mock too.
pub const MAX_TAKE: i32 = {
    let most = creditdata_client::limits::MAX_TAKE;
    assert!(
        most <= i32::MAX as u32,
        "the description's maximum of Take is not an int32"
    );
    most as i32
};
/// The largest day count a setting accepts (about ten years). Every date the mock computes is
/// a creation or consent time plus at most this, so no date arithmetic can overflow.
pub const MAX_DAYS: u32 = 3650;
/// The longest duration a setting accepts: [`MAX_DAYS`] days.
pub const MAX_DURATION: Duration = Duration::from_secs(MAX_DAYS as u64 * 86_400);

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
    /// Host names the mock answers to besides its listening address (`127.0.0.1:PORT`,
    /// `localhost:PORT`, `[::1]:PORT`, or the bound address itself): `name` for any port,
    /// `name:port` for that port only. Every other `Host` is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// The people who can sign in on the authorization page (default: [`DEFAULT_USER`]).
    pub users: Vec<TestUser>,
    /// The public native client (no secret) that may use the Authorization Code flow, beside
    /// the confidential `client_id`.
    pub public_client_id: String,
    /// Redirect URIs accepted besides loopback ones (`http://127.0.0.1:{any port}/...`,
    /// `http://[::1]:{any port}/...`), compared exactly; also accepted as
    /// `post_logout_redirect_uri`.
    pub redirect_uris: Vec<String>,
    /// How long an authorization code can be exchanged (zero: never, which tests use).
    pub code_lifetime: Duration,
    /// How long a refresh token stays usable when it is not used (each use rotates it and
    /// starts this again), like Keycloak's "SSO Session Idle".
    pub refresh_token_lifetime: Duration,
    /// How long a sign-in lasts at most, however often it is refreshed (Keycloak's "SSO Session
    /// Max"); then the user signs in again.
    pub sign_in_lifetime: Duration,
    /// Latency, the service's rate limit and faults; all off by default (see
    /// [`Realism`](crate::realism::Realism)).
    pub realism: crate::realism::Realism,
    /// The effective description (OpenAPI 3.0) whose operations are served where no
    /// hand-written handler is; `None` serves the one the mock was built with. A test gives a
    /// vendor's next release here to see the mock follow it without a rebuild.
    pub effective_description: Option<std::sync::Arc<serde_json::Value>>,
    /// A SERVER span per request through the global OpenTelemetry tracer provider, as it is
    /// when the server starts (the binary installs an OTLP pipeline and sets this when
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Off: no layer at all.
    pub server_spans: bool,
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
            allowed_hosts: Vec::new(),
            users: vec![DEFAULT_USER.parse().expect("the default user parses")],
            public_client_id: DEFAULT_PUBLIC_CLIENT_ID.to_owned(),
            redirect_uris: Vec::new(),
            code_lifetime: Duration::from_secs(60),
            refresh_token_lifetime: Duration::from_secs(30 * 60),
            sign_in_lifetime: Duration::from_secs(10 * 3600),
            realism: crate::realism::Realism::default(),
            effective_description: None,
            server_spans: false,
        }
    }
}

impl MockConfig {
    /// The defaults, except that providers answer the moment the customer consents and never
    /// fail by themselves: what tests and benchmarks that do not study providers want.
    pub fn immediate() -> Self {
        MockConfig {
            provider_delay: Duration::ZERO,
            provider_error_one_in: 0,
            ..MockConfig::default()
        }
    }
}

/// Why a [`MockConfig`] cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A duration beyond [`MAX_DURATION`].
    #[error("{setting} is {value:?}; at most {MAX_DAYS} days ({}s) is accepted", MAX_DURATION.as_secs())]
    DurationOutOfRange {
        /// The setting (the `MockConfig` field).
        setting: &'static str,
        /// Its value.
        value: Duration,
    },
    /// A day count beyond [`MAX_DAYS`].
    #[error("{setting} is {value} days; at most {MAX_DAYS} is accepted")]
    DaysOutOfRange {
        /// The setting (the `MockConfig` field).
        setting: &'static str,
        /// Its value.
        value: u32,
    },
    /// An allowed host that is not a host name or address.
    #[error("allowed host {value:?} is not a host name, IP address or `name:port`: {reason}")]
    AllowedHost {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A test user that cannot be used (the message never repeats the password).
    #[error("user {username:?}: {reason}")]
    User {
        /// The user name (or the start of the value when it has none).
        username: String,
        /// What is wrong.
        reason: String,
    },
    /// A redirect URI that cannot be accepted.
    #[error("redirect URI {value:?} cannot be accepted: {reason}")]
    RedirectUri {
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The public and the confidential client would share one id.
    #[error(
        "the public client id {0:?} is also the confidential client's id; give them different ids"
    )]
    ClientIdsClash(String),
    /// A latency, rate limit or fault setting that cannot be used.
    #[error(transparent)]
    Realism(#[from] crate::realism::RealismError),
}

impl MockConfig {
    /// Checks every setting against the ranges the mock computes with (see [`MAX_DAYS`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let durations = [
            ("token_lifetime", Some(self.token_lifetime)),
            ("auto_complete_after", self.auto_complete_after),
            ("provider_delay", Some(self.provider_delay)),
            ("code_lifetime", Some(self.code_lifetime)),
            ("refresh_token_lifetime", Some(self.refresh_token_lifetime)),
            ("sign_in_lifetime", Some(self.sign_in_lifetime)),
        ];
        for (setting, value) in durations {
            if let Some(value) = value {
                check_duration(setting, value)?;
            }
        }
        let day_counts = [
            ("deadline_days", self.deadline_days),
            ("extension_days", self.extension_days),
            ("extendable_for_days", self.extendable_for_days),
            ("upgradable_for_days", self.upgradable_for_days),
        ];
        for (setting, value) in day_counts {
            check_days(setting, value)?;
        }
        for host in &self.allowed_hosts {
            host.parse::<AllowedHost>()?;
        }
        self.validate_sign_in()
    }

    fn validate_sign_in(&self) -> Result<(), ConfigError> {
        if self.public_client_id == self.client_id {
            return Err(ConfigError::ClientIdsClash(self.public_client_id.clone()));
        }
        let mut seen = std::collections::HashSet::new();
        for user in &self.users {
            user.check()?;
            if !seen.insert(user.username.as_str()) {
                return Err(ConfigError::User {
                    username: user.username.clone(),
                    reason: "is given twice; user names must be unique".into(),
                });
            }
        }
        for uri in &self.redirect_uris {
            check_configured_redirect_uri(uri)?;
        }
        self.realism.validate()?;
        Ok(())
    }

    /// The allowed hosts, parsed.
    pub fn parsed_allowed_hosts(&self) -> Result<Vec<AllowedHost>, ConfigError> {
        self.allowed_hosts.iter().map(|host| host.parse()).collect()
    }
}

/// `value` when it is at most [`MAX_DURATION`].
pub fn check_duration(setting: &'static str, value: Duration) -> Result<Duration, ConfigError> {
    if value > MAX_DURATION {
        return Err(ConfigError::DurationOutOfRange { setting, value });
    }
    Ok(value)
}

/// `value` when it is at most [`MAX_DAYS`].
pub fn check_days(setting: &'static str, value: u32) -> Result<u32, ConfigError> {
    if value > MAX_DAYS {
        return Err(ConfigError::DaysOutOfRange { setting, value });
    }
    Ok(value)
}

/// A configured host name or address, with the port it is allowed on (`None`: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    /// Lower-case name, or an IP address as written in a URL (`[::1]` for IPv6).
    pub host: String,
    /// The port, when one was given.
    pub port: Option<u16>,
}

impl FromStr for AllowedHost {
    type Err = ConfigError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let refuse = |reason: &str| ConfigError::AllowedHost {
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let Some((host, port)) = split_authority(value) else {
            return Err(refuse("expected `name` or `name:port` (IPv6 in brackets)"));
        };
        let port = match port {
            None => None,
            Some(port) => Some(parse_port(port).ok_or_else(|| refuse("the port is not 1-65535"))?),
        };
        if !is_host_name(host) {
            return Err(refuse(
                "a host name is letters, digits, `-` and `_` in dot-separated labels",
            ));
        }
        Ok(AllowedHost {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// `host[:port]` split at the port; IPv6 keeps its brackets. `None` when the shape is wrong
/// (user-info, a path, an empty host, an unbracketed IPv6 address).
pub(crate) fn split_authority(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.is_empty() || authority.contains(['@', '/', '?', '#', ' ']) {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            rest => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

/// A port number written as decimal digits only.
pub(crate) fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok().filter(|port| *port != 0)
}

/// A DNS name, an IPv4 address or a bracketed IPv6 address.
fn is_host_name(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    if host.parse::<IpAddr>().is_ok() {
        return true;
    }
    host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
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
            .field("allowed_hosts", &self.allowed_hosts)
            .field("users", &self.users)
            .field("public_client_id", &self.public_client_id)
            .field("redirect_uris", &self.redirect_uris)
            .field("code_lifetime", &self.code_lifetime)
            .field("refresh_token_lifetime", &self.refresh_token_lifetime)
            .field("sign_in_lifetime", &self.sign_in_lifetime)
            .field("realism", &self.realism)
            .field(
                "effective_description",
                &self
                    .effective_description
                    .as_ref()
                    .map(|_| "<given at start>"),
            )
            .field("server_spans", &self.server_spans)
            .finish()
    }
}

impl TestUser {
    fn check(&self) -> Result<(), ConfigError> {
        let refuse = |reason: &str| ConfigError::User {
            username: self.username.clone(),
            reason: reason.to_owned(),
        };
        let username_ok = !self.username.is_empty()
            && self.username.len() <= 64
            && self
                .username
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'));
        if !username_ok {
            return Err(refuse(
                "a user name is 1-64 letters, digits, `.`, `_`, `-` or `@`",
            ));
        }
        if self.password.is_empty() || self.password.len() > 256 {
            return Err(refuse("the password must be 1-256 bytes"));
        }
        if self.name.trim().is_empty()
            || self.name.chars().count() > 128
            || self.name.chars().any(char::is_control)
        {
            return Err(refuse(
                "the display name must be 1-128 characters without control characters",
            ));
        }
        if let Some(email) = &self.email
            && !email_address::EmailAddress::is_valid(email)
        {
            return Err(refuse("the e-mail address is not valid"));
        }
        Ok(())
    }
}

impl FromStr for TestUser {
    type Err = ConfigError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let mut parts = value.splitn(4, ':');
        let username = parts.next().unwrap_or_default().trim().to_owned();
        let Some(password) = parts.next() else {
            return Err(ConfigError::User {
                username,
                reason: "expected USERNAME:PASSWORD[:DISPLAY NAME[:E-MAIL]]".into(),
            });
        };
        let name = parts
            .next()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .unwrap_or(&username)
            .to_owned();
        let email = parts
            .next()
            .map(str::trim)
            .filter(|email| !email.is_empty())
            .map(str::to_owned);
        let user = TestUser {
            username,
            password: password.to_owned(),
            name,
            email,
        };
        user.check()?;
        Ok(user)
    }
}

/// A redirect URI given with `--redirect-uri`: `https`, `http` to a loopback host only (a
/// code sent in clear over a network can be read on the way), or a private-use scheme in
/// reverse domain order (RFC 8252 §7.1), with no fragment (RFC 6749 §3.1.2).
pub fn check_configured_redirect_uri(value: &str) -> Result<url::Url, ConfigError> {
    let refuse = |reason: &str| ConfigError::RedirectUri {
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = url::Url::parse(value).map_err(|error| refuse(&error.to_string()))?;
    if parsed.fragment().is_some() {
        return Err(refuse("a redirect URI has no fragment (RFC 6749 §3.1.2)"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refuse("a redirect URI carries no user name or password"));
    }
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" => match parsed.host() {
            Some(url::Host::Domain("localhost")) => Ok(parsed),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(parsed),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(parsed),
            _ => Err(refuse(
                "plain http is accepted for loopback hosts only; use https",
            )),
        },
        scheme if scheme.contains('.') => Ok(parsed),
        _ => Err(refuse(
            "use https, http on loopback, or a private-use scheme in reverse domain order \
             (com.example.app:/callback, RFC 8252 §7.1)",
        )),
    }
}
