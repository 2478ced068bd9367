//! One rate limit for a whole fleet (feature `shared-rate-limit`): the limiter's state in Redis,
//! shared by every process that names the same service and API client, and what a process does
//! while the store does not answer.
//!
//! # The shared step
//!
//! The state is GCRA's one number per key, the *theoretical arrival time* (TAT), in Redis. Each
//! admission is one atomic server-side step, a Lua script run by `EVALSHA` (loaded once; the
//! `redis` crate loads it again after a `NOSCRIPT`): it reads the server's clock (`TIME`: the
//! replicas' clocks never meet), moves the TAT on by this admission's interval and answers how
//! long the caller must wait for its slot. The caller then sleeps exactly that long and sends:
//! a reservation, so one round trip per request and no polling, and callers across the fleet are
//! served in the order their steps reached Redis. The key's TTL is set to the time until the TAT
//! has passed (after that, a missing key and the old one mean the same: nothing owed), so an idle
//! limit leaves nothing behind.
//!
//! The key is `{prefix}:{<SHA-256>}:tat`, the hash of the service's base URL, the identity
//! provider (token URL or issuer) and the API client's id: every process with the same
//! credentials against the same environment shares it, and Redis holds neither the client id
//! nor anything secret (the braces keep a limit's keys in one Redis Cluster slot).
//!
//! # AIMD on top
//!
//! The service may count differently than we do: a `429` still halves this process's rate and
//! pauses it for the `Retry-After` (see [`crate::rate_limit`]). In the shared step, a process at
//! half its rate charges the shared TAT twice the interval per request, so a fleet whose
//! processes are told 429 slows down as a whole, and recovers as each recovers.
//!
//! # When the store does not answer
//!
//! Every step is bounded by [`RateLimitStore::timeout`] (default 100 ms, connecting included).
//! A step that fails or times out never fails the call: the process paces itself with its local
//! limiter, logs one warning for the outage (`tracing::warn!`; with the `opentelemetry` feature
//! also the metric `creditdata.client.rate_limit.store_unavailable` and an event on the call's
//! span), and asks the store again after a backoff (0.5 s doubling to 30 s, with jitter): one
//! probing call per backoff, never every call. When the store answers it is used again (one
//! `info` line).
//!
//! While it is local, a process admits **its last known share**: the limit divided by the
//! replicas the store counted in its last answer (the script keeps a sorted set of replica
//! heartbeats, keyed by a random id per limiter, forgetting those silent for
//! [`HEARTBEAT_WINDOWS`] intervals of the limit, at least 30 s), or by
//! [`RateLimitStore::fallback_replicas`] before the store ever answered. A partition therefore
//! does not let every replica burst at the full limit at once; the 429s of a fleet that grew
//! during the outage are AIMD's to absorb.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

/// The default prefix of the store's keys.
pub const DEFAULT_PREFIX: &str = "creditdata";

/// The default bound on one step of the store (connecting included): a store slower than this
/// is treated as down for the admission that waited, which then goes by the local limiter.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);

/// A replica counts in the fleet while it admitted a request within this many intervals of the
/// configured limit (and at least [`MIN_HEARTBEAT`]): a replica sending its 1/N share sends once
/// every N intervals, so this counts fleets of up to this many replicas at full demand.
pub const HEARTBEAT_WINDOWS: u32 = 100;

/// The shortest heartbeat window.
pub const MIN_HEARTBEAT: Duration = Duration::from_secs(30);

/// The first wait before the store is asked again after it failed; doubled after each failed
/// probe up to [`MAX_PROBE_BACKOFF`].
pub const FIRST_PROBE_BACKOFF: Duration = Duration::from_millis(500);

/// The longest wait between two probes of a store that does not answer.
pub const MAX_PROBE_BACKOFF: Duration = Duration::from_secs(30);

/// The GCRA step. KEYS: the TAT, the replicas' heartbeats. ARGV: this admission's interval and
/// the burst's tolerance (microseconds), the replica's id, the heartbeat window (microseconds).
/// Answers `{wait in microseconds, replicas seen}`. Times are microseconds of the server's clock
/// (below 2^53 for millions of years: exact in Lua's doubles).
const GCRA_SCRIPT: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local window = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
local next_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.floor((next_tat - now) / 1000) + 1)
redis.call('ZADD', KEYS[2], now, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
redis.call('PEXPIRE', KEYS[2], math.floor(window / 1000) + 1)
return {wait, redis.call('ZCARD', KEYS[2])}
";

/// Where a shared rate limit keeps its state: a Redis server (`redis://` or `rediss://` with
/// TLS), the prefix of its keys, how long a step may take. Its `Debug` and `Display` show the
/// address without its password.
///
/// ```
/// # #[cfg(feature = "shared-rate-limit")] {
/// use creditdata_client::rate_limit::{RateLimit, RateLimitStore};
/// let store = RateLimitStore::redis("rediss://:s3cret@redis.internal:6380/2").unwrap();
/// assert_eq!(store.to_string(), "rediss://[redacted]@redis.internal:6380/2");
/// let client = creditdata_client::Client::builder()
///     .rate_limit(RateLimit::per_second(50))
///     .rate_limit_store(store)
///     .bearer_token("a-token")
///     .rate_limit_name("underwriting") // a bearer token does not say which API client it is
///     .build()
///     .unwrap();
/// # }
/// ```
#[derive(Clone)]
pub struct RateLimitStore {
    url: SecretString,
    shown: String,
    prefix: String,
    timeout: Duration,
    fallback_replicas: u32,
}

impl fmt::Debug for RateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitStore")
            .field("url", &self.shown)
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .field("fallback_replicas", &self.fallback_replicas)
            .finish()
    }
}

impl fmt::Display for RateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl RateLimitStore {
    /// A Redis server: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://` for TLS
    /// (certificates checked against the system's roots). Refuses anything else with a message
    /// that does not repeat the password.
    pub fn redis(url: &str) -> Result<RateLimitStore, String> {
        let url = url.trim();
        let shown = redacted(url);
        let parsed = reqwest::Url::parse(url).map_err(|e| {
            format!("rate limit store {shown}: not a URL ({e}); write redis://HOST:PORT/DB")
        })?;
        if !matches!(parsed.scheme(), "redis" | "rediss") {
            return Err(format!(
                "rate limit store {shown}: the scheme must be redis:// or rediss:// (TLS)"
            ));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(format!(
                "rate limit store {shown}: no host; write redis://HOST:PORT/DB"
            ));
        }
        let path = parsed.path().trim_start_matches('/');
        if !path.is_empty() && path.parse::<u32>().is_err() {
            return Err(format!(
                "rate limit store {shown}: the path must be a database number (/0, /1, ...)"
            ));
        }
        // The crate checks the rest (and refuses what it cannot connect to) without the URL in
        // its message.
        redis::Client::open(url)
            .map_err(|e| format!("rate limit store {shown}: {}", store_error(&e)))?;
        Ok(RateLimitStore {
            url: SecretString::from(url.to_string()),
            shown,
            prefix: DEFAULT_PREFIX.to_string(),
            timeout: DEFAULT_TIMEOUT,
            fallback_replicas: 1,
        })
    }

    /// The prefix of every key (default [`DEFAULT_PREFIX`]): separates applications or
    /// environments sharing one Redis. Processes share a limit only with the same prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> RateLimitStore {
        self.prefix = prefix.into();
        self
    }

    /// The longest one step of the store may take, connecting included (default
    /// [`DEFAULT_TIMEOUT`], 100 ms; at least 1 ms): beyond it the admission goes by the local
    /// limiter.
    pub fn timeout(mut self, timeout: Duration) -> RateLimitStore {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How many replicas to assume share the limit while the store has never answered (default
    /// 1: the whole limit). Once it has, the replicas it counted last are used.
    pub fn fallback_replicas(mut self, replicas: u32) -> RateLimitStore {
        self.fallback_replicas = replicas.max(1);
        self
    }

    /// The address as shown: without user name or password.
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// The prefix of the keys.
    pub fn key_prefix(&self) -> &str {
        &self.prefix
    }

    /// The longest one step may take.
    pub fn step_timeout(&self) -> Duration {
        self.timeout
    }

    /// Opens a connection to the store, connecting and each command bounded by `timeout`
    /// (the limiter uses [`step_timeout`](Self::step_timeout)); the error carries nothing of
    /// the address. For other work that shares the store, such as the `creditdata` command's
    /// shared export.
    pub async fn connect(
        &self,
        timeout: Duration,
    ) -> Result<redis::aio::ConnectionManager, String> {
        let client = redis::Client::open(self.url.expose_secret()).map_err(|e| store_error(&e))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(0);
        match tokio::time::timeout(
            timeout,
            redis::aio::ConnectionManager::new_with_config(client, config),
        )
        .await
        {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(e)) => Err(store_error(&e)),
            Err(_) => Err(format!("no answer within {timeout:?}")),
        }
    }
}

/// The name of a shared limit, from what identifies the service's counter: the service, the
/// identity provider and the API client (`identity`'s parts), hashed with SHA-256. What Redis
/// holds of it is the prefix and the hash.
pub(crate) fn namespace(prefix: &str, identity: &[&str]) -> String {
    let mut hash = Sha256::new();
    hash.update(b"creditdata shared rate limit v1");
    for part in identity {
        // Length-prefixed: no two different identities hash the same text.
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    format!("{prefix}:{{{}}}", hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// `url` with any user name and password replaced by `[redacted]`, and without its query
/// (which some Redis URL dialects use for a password): what messages and `Debug` show.
pub(crate) fn redacted(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    match without_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://[redacted]@{host}{path}"),
                None => format!("{scheme}://{authority}{path}"),
            }
        }
        // Not a URL: nothing of it is shown (it may be a password pasted in the wrong place).
        None => "(not a URL)".to_string(),
    }
}

/// A store error in words that carry no address or credential: its kind and, for errors the
/// server sent, its code (`NOSCRIPT`, `READONLY`...), never the crate's message (which may
/// quote what it was given).
pub fn store_error(error: &redis::RedisError) -> String {
    let kind = format!("{:?}", error.kind());
    let code = error.code().map(|c| format!(" {c}")).unwrap_or_default();
    let io = if error.is_timeout() {
        " (timed out)"
    } else if error.is_connection_refusal() {
        " (connection refused)"
    } else if error.is_connection_dropped() {
        " (connection dropped)"
    } else {
        ""
    };
    format!("{kind}{code}{io}")
}

/// What the shared limit is doing, for progress displays, logs and tests.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoreStatus {
    /// The store's address, without credentials.
    pub store: String,
    /// The prefix and hash naming the limit in the store (no client id or secret).
    pub namespace: String,
    /// Whether admissions go through the store now (`false`: the local limiter, the store
    /// having failed to answer).
    pub shared: bool,
    /// Replicas the store counted in its last answer (0: it never answered).
    pub replicas_seen: u32,
    /// Times the store stopped answering.
    pub outages: u64,
    /// Admissions decided by the store.
    pub shared_admissions: u64,
    /// Admissions decided locally while the store did not answer.
    pub local_admissions: u64,
    /// The rate (requests per second) the local limiter admits while the store does not answer.
    pub fallback_per_second: f64,
}

/// A slot reserved by the store: sleep `wait`, then send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reserved {
    pub(crate) wait: Duration,
}

/// What the shared step needs of the limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Charge {
    /// Time this admission takes of the shared budget.
    pub(crate) interval: Duration,
    /// How far ahead of the TAT a request may go (the burst).
    pub(crate) tolerance: Duration,
}

/// A limiter's connection to its store and what it knows of the store's health.
pub(crate) struct SharedState {
    store: RateLimitStore,
    namespace: String,
    tat_key: String,
    replicas_key: String,
    replica: String,
    heartbeat: Duration,
    script: redis::Script,
    connection: tokio::sync::Mutex<Option<redis::aio::ConnectionManager>>,
    health: Mutex<Health>,
    shared_admissions: AtomicU64,
    local_admissions: AtomicU64,
}

struct Health {
    /// `None`: the store answered last. `Some`: it did not, and is asked again at `next_probe`.
    outage: Option<Outage>,
    replicas_seen: u32,
    outages: u64,
}

struct Outage {
    next_probe: Instant,
    backoff: Duration,
}

/// Where an admission goes.
pub(crate) enum Route {
    /// Ask the store.
    Store,
    /// Pace locally, at most at this many requests per second.
    Local { ceiling: f64 },
}

impl fmt::Debug for SharedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedState")
            .field("store", &self.store)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl SharedState {
    /// The state of a limiter of `per_second` requests a second (one every `interval`), named
    /// by `identity` in `store`.
    pub(crate) fn new(store: RateLimitStore, identity: &[&str], interval: Duration) -> SharedState {
        let namespace = namespace(&store.prefix, identity);
        let heartbeat = interval
            .saturating_mul(HEARTBEAT_WINDOWS)
            .max(MIN_HEARTBEAT);
        SharedState {
            tat_key: format!("{namespace}:tat"),
            replicas_key: format!("{namespace}:replicas"),
            replica: format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
            namespace,
            heartbeat,
            script: redis::Script::new(GCRA_SCRIPT),
            connection: tokio::sync::Mutex::new(None),
            health: Mutex::new(Health {
                outage: None,
                replicas_seen: 0,
                outages: 0,
            }),
            shared_admissions: AtomicU64::new(0),
            local_admissions: AtomicU64::new(0),
            store,
        }
    }

    fn health(&self) -> MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The prefix and hash naming the limit in the store.
    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The store's configuration.
    pub(crate) fn store(&self) -> &RateLimitStore {
        &self.store
    }

    /// Where the next admission goes: the store, unless it failed and the next probe is not
    /// due; `limit_per_second` is the configured rate, shared by the replicas last seen.
    pub(crate) fn route(&self, now: Instant, limit_per_second: f64) -> Route {
        let health = self.health();
        match &health.outage {
            Some(outage) if now < outage.next_probe => Route::Local {
                ceiling: self.share(&health, limit_per_second),
            },
            _ => Route::Store,
        }
    }

    fn share(&self, health: &Health, limit_per_second: f64) -> f64 {
        let replicas = match health.replicas_seen {
            0 => self.store.fallback_replicas,
            seen => seen,
        };
        limit_per_second / f64::from(replicas.max(1))
    }

    /// One shared step: reserves this admission's slot. `Err` (nothing reserved) when the store
    /// does not answer within its timeout; the caller then paces locally. Only the caller
    /// holding the limiter's queue calls this, so steps of one process never overlap.
    pub(crate) async fn reserve(&self, charge: Charge) -> Result<Reserved, String> {
        let step = async {
            let mut slot = self.connection.lock().await;
            let connection = match slot.as_mut() {
                Some(connection) => connection,
                None => slot.insert(self.store.connect(self.store.timeout).await?),
            };
            let answer: Result<(u64, u32), redis::RedisError> = self
                .script
                .key(&self.tat_key)
                .key(&self.replicas_key)
                .arg(micros(charge.interval).max(1))
                .arg(micros(charge.tolerance))
                .arg(&self.replica)
                .arg(micros(self.heartbeat))
                .invoke_async(connection)
                .await;
            answer.map_err(|e| {
                // A connection that failed once is opened anew at the next probe.
                *slot = None;
                store_error(&e)
            })
        };
        let answer = match tokio::time::timeout(self.store.timeout, step).await {
            Ok(answer) => answer,
            Err(_) => {
                // The connection may still hold the late answer: start afresh.
                if let Ok(mut slot) = self.connection.try_lock() {
                    *slot = None;
                }
                Err(format!("no answer within {:?}", self.store.timeout))
            }
        };
        let (wait, replicas) = answer?;
        Ok(self.answered(wait, replicas))
    }

    fn answered(&self, wait_micros: u64, replicas: u32) -> Reserved {
        self.shared_admissions.fetch_add(1, Ordering::Relaxed);
        let mut health = self.health();
        health.replicas_seen = replicas.max(1);
        if health.outage.take().is_some() {
            tracing::info!(
                store = %self.store.shown,
                replicas = health.replicas_seen,
                "the rate limit's store answers again: back to the shared limit"
            );
        }
        Reserved {
            wait: Duration::from_micros(wait_micros),
        }
    }

    /// The store did not answer: returns whether this opened an outage (the first failure after
    /// an answer: warn once), and schedules the next probe.
    pub(crate) fn failed(&self, now: Instant, reason: &str, limit_per_second: f64) -> bool {
        let mut health = self.health();
        let opened = health.outage.is_none();
        let backoff = match &health.outage {
            None => FIRST_PROBE_BACKOFF,
            Some(outage) => outage.backoff.saturating_mul(2).min(MAX_PROBE_BACKOFF),
        };
        // Full jitter over the upper half: replicas that lost the store together do not all
        // probe it together.
        let jittered = backoff.mul_f64(0.5 + fastrand::f64() / 2.0);
        health.outage = Some(Outage {
            next_probe: now + jittered,
            backoff,
        });
        if opened {
            health.outages += 1;
            let share = self.share(&health, limit_per_second);
            tracing::warn!(
                store = %self.store.shown,
                reason,
                fallback_per_second = share,
                "the rate limit's store does not answer: pacing locally at the last known \
                 share of the limit until it does"
            );
        }
        opened
    }

    /// Counts an admission decided locally.
    pub(crate) fn admitted_locally(&self) {
        self.local_admissions.fetch_add(1, Ordering::Relaxed);
    }

    /// What the shared limit is doing.
    pub(crate) fn status(&self, limit_per_second: f64) -> StoreStatus {
        let health = self.health();
        StoreStatus {
            store: self.store.shown.clone(),
            namespace: self.namespace.clone(),
            shared: health.outage.is_none(),
            replicas_seen: health.replicas_seen,
            outages: health.outages,
            shared_admissions: self.shared_admissions.load(Ordering::Relaxed),
            local_admissions: self.local_admissions.load(Ordering::Relaxed),
            fallback_per_second: self.share(&health, limit_per_second),
        }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_credentials() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            (
                "redis://:pa55word@cache:6379/3",
                "redis://[redacted]@cache:6379/3",
            ),
            (
                "rediss://user:pa55word@cache.internal/1?x=pa55word",
                "rediss://[redacted]@cache.internal/1",
            ),
            ("redis://a@b:c@host:1", "redis://[redacted]@host:1"),
            ("pa55word", "(not a URL)"),
        ] {
            assert_eq!(redacted(url), shown, "{url}");
        }
    }

    #[test]
    fn unusable_addresses_are_refused_without_repeating_the_password() {
        for url in [
            "http://:pa55word@cache:6379/0",
            "redis://:pa55word@cache:6379/zero",
            "redis://:pa55word@:6379/0",
            "pa55word",
        ] {
            let error = RateLimitStore::redis(url).unwrap_err();
            assert!(!error.contains("pa55word"), "{error}");
            assert!(error.starts_with("rate limit store"), "{error}");
        }
        let store = RateLimitStore::redis("rediss://:pa55word@cache:6380/2").unwrap();
        assert!(!format!("{store:?}").contains("pa55word"));
        assert!(!store.to_string().contains("pa55word"));
    }

    #[test]
    fn the_namespace_is_a_hash_of_the_identity_under_the_prefix() {
        let one = namespace("p", &["https://api", "https://idp/token", "bank-7"]);
        assert!(one.starts_with("p:{") && one.ends_with('}'), "{one}");
        assert_eq!(one.len(), "p:{}".len() + 64);
        assert!(!one.contains("bank-7"));
        assert_eq!(
            one,
            namespace("p", &["https://api", "https://idp/token", "bank-7"])
        );
        // The parts are kept apart: moving a character from one to the next is another limit.
        assert_ne!(
            one,
            namespace("p", &["https://api", "https://idp/token", "bank-"])
        );
        assert_ne!(namespace("p", &["ab", "c"]), namespace("p", &["a", "bc"]));
    }
}
