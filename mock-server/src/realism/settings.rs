//! What realism is configured to do ([`Realism`], all off by default) and how a setting that
//! cannot be used is reported: the settings alone, which the configuration and the command line
//! build; the running layers that act on them are in the sibling modules.

use std::fmt;

use super::faults::{Faults, SlowBodyPace};
use super::latency::{Latency, LatencyRule, LatencySpec, RoutePattern};
use super::rate_limit::RateLimit;

/// Latency, rate limit and faults of a [`MockServer`](crate::MockServer): all off by default.
///
/// ```
/// use std::time::Duration;
/// use creditdata_mock::MockConfig;
/// use creditdata_mock::realism::{Faults, Fault, Latency, RateLimit, Realism};
///
/// let config = MockConfig {
///     realism: Realism::new()
///         .latency(Latency::uniform(Duration::from_millis(20), Duration::from_millis(200)))
///         .route_latency(
///             "GET /v1/sessions/*/pdf-report".parse().expect("pattern"),
///             "uniform:200ms..1s".parse().expect("distribution"),
///         )
///         .rate_limit(RateLimit::per_second(20))
///         .faults(Faults::new().with(Fault::ServiceUnavailable, 1.0).with(Fault::Reset, 0.5))
///         .seed(7),
///     ..MockConfig::default()
/// };
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Realism {
    /// Latency of every `/v1` request no route rule matches; `None`: none.
    pub default_latency: Option<Latency>,
    /// Latency of the requests a route pattern matches, first match wins. Patterns apply to any
    /// path they match (the identity provider's too), not only `/v1`.
    pub route_latency: Vec<LatencyRule>,
    /// The service's rate limit, per API client; `None`: unlimited.
    pub rate_limit: Option<RateLimit>,
    /// Faults injected into `/v1` requests; empty: none.
    pub faults: Faults,
    /// How a `slow-body` fault trickles the body.
    pub slow_body: SlowBodyPace,
    /// Seed of every random draw (faults and latency); the same seed and the same requests give
    /// the same draws (see the crate README for what "the same requests" means).
    pub seed: u64,
}

impl Realism {
    /// Nothing: no latency, no limit, no faults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the latency of `/v1` requests no route rule matches.
    pub fn latency(mut self, latency: Latency) -> Self {
        self.default_latency = Some(latency);
        self
    }

    /// Adds a route rule (after those already added: the first match wins).
    pub fn route_latency(mut self, route: RoutePattern, latency: Latency) -> Self {
        self.route_latency.push(LatencyRule { route, latency });
        self
    }

    /// Adds what one `--latency` option says: a default, or a route rule.
    pub fn latency_spec(self, spec: LatencySpec) -> Self {
        match spec {
            LatencySpec::Default(latency) => self.latency(latency),
            LatencySpec::Route(rule) => self.route_latency(rule.route, rule.latency),
        }
    }

    /// Limits each API client to `limit`.
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// Injects `faults`.
    pub fn faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Sets the pace of `slow-body` faults.
    pub fn slow_body(mut self, pace: SlowBodyPace) -> Self {
        self.slow_body = pace;
        self
    }

    /// Sets the seed of every random draw.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether anything is on.
    pub fn is_enabled(&self) -> bool {
        self.default_latency.is_some()
            || !self.route_latency.is_empty()
            || self.rate_limit.is_some()
            || !self.faults.is_empty()
    }

    /// Checks every value (the command line checks the same when it parses them).
    pub fn validate(&self) -> Result<(), RealismError> {
        let invalid = |setting: String, value: String, reason: String| RealismError {
            setting,
            value,
            reason,
        };
        if let Some(latency) = &self.default_latency {
            latency.check().map_err(|reason| {
                invalid(
                    "realism.default_latency".into(),
                    latency.to_string(),
                    reason,
                )
            })?;
        }
        for (index, rule) in self.route_latency.iter().enumerate() {
            rule.latency.check().map_err(|reason| {
                invalid(
                    format!("realism.route_latency[{index}]"),
                    rule.to_string(),
                    reason,
                )
            })?;
        }
        if let Some(limit) = &self.rate_limit {
            limit.check().map_err(|reason| {
                invalid("realism.rate_limit".into(), limit.to_string(), reason)
            })?;
        }
        self.faults
            .check()
            .map_err(|reason| invalid("realism.faults".into(), self.faults.to_string(), reason))?;
        self.slow_body.check().map_err(|reason| {
            invalid(
                "realism.slow_body".into(),
                self.slow_body.to_string(),
                reason,
            )
        })?;
        Ok(())
    }

    /// Whether requests need to know their connection (its remote address, or a way to reset
    /// it); only then does the server wrap its connections.
    pub(super) fn needs_connection(&self) -> bool {
        self.rate_limit.is_some() || !self.faults.is_empty()
    }
}

impl fmt::Display for Realism {
    /// One line for the startup log, e.g. `latency /v1 50ms; rate limit 20/s (burst 20) per
    /// client; faults 503:1% (seed 0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(latency) = &self.default_latency {
            parts.push(format!("latency /v1 {latency}"));
        }
        for rule in &self.route_latency {
            parts.push(format!("latency {rule}"));
        }
        if let Some(limit) = &self.rate_limit {
            parts.push(format!("rate limit {limit} per client"));
        }
        if !self.faults.is_empty() {
            parts.push(format!(
                "faults {} (slow body {})",
                self.faults, self.slow_body
            ));
        }
        if parts.is_empty() {
            return f.write_str("off");
        }
        write!(f, "{} (seed {})", parts.join("; "), self.seed)
    }
}

/// A [`Realism`] setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{setting} `{value}`: {reason}")]
pub struct RealismError {
    /// The setting (the `MockConfig` field).
    pub setting: String,
    /// Its value, as the command line would write it.
    pub value: String,
    /// What is wrong and what to write instead.
    pub reason: String,
}
