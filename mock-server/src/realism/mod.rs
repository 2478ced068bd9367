//! What makes the mock behave like the service across a network: latency, the service's rate
//! limit, and faults. All of it is off by default, and what is off is not in the request path
//! at all (no layer, no lock, no allocation), so the mock stays as fast as it was.
//!
//! Where each piece acts, from the outside in:
//!
//! 1. latency ([`latency`]): every route a pattern names, and every `/v1` route when a default
//!    is set; the request waits before anything else happens;
//! 2. faults ([`faults`]): matched `/v1` routes only, drawn before the rate limit and the token
//!    check, so that what is drawn does not depend on timing or on credentials;
//! 3. the rate limit ([`rate_limit`]): matched `/v1` routes only, per API client (the `azp` of a
//!    verified token), else per remote address;
//! 4. then the bearer-token check and the operation, as without realism.

mod connection;
pub mod faults;
pub mod latency;
pub mod rate_limit;
mod settings;

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router, middleware};
use rand::{RngCore as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use tokio::net::TcpListener;

pub use faults::{Fault, Faults, SlowBodyPace};
pub use latency::{Latency, LatencyRule, LatencySpec, MAX_LATENCY, RoutePattern};
pub use rate_limit::{RateLimit, Window};
pub use settings::{Realism, RealismError};

use crate::idp::IdentityProvider;
use connection::{Connection, ObservedListener};

/// The pieces of realism a running server puts in its request path, built once at start.
#[derive(Clone)]
pub(crate) struct Layers {
    config: Arc<Realism>,
    latency: Option<Arc<latency::LatencyPlan>>,
    faults: Option<Arc<faults::FaultInjector>>,
    rate_limit: Option<Arc<rate_limit::ApiRateLimiter>>,
    needs_connection: bool,
}

impl Layers {
    /// Built from a configuration [`Realism::validate`] accepted (a value it would refuse is
    /// left out).
    pub(crate) fn new(realism: &Realism, idp: Arc<IdentityProvider>) -> Layers {
        Layers {
            config: Arc::new(realism.clone()),
            latency: latency::LatencyPlan::new(realism).map(Arc::new),
            faults: faults::FaultInjector::new(realism).map(Arc::new),
            rate_limit: realism
                .rate_limit
                .map(|limit| Arc::new(rate_limit::ApiRateLimiter::new(limit, idp))),
            needs_connection: realism.needs_connection(),
        }
    }

    /// Wraps the `/v1` routes (already behind the token check): the rate limit, and outside it
    /// the faults, so both see only requests that match an operation.
    pub(crate) fn around_api<S>(&self, api: Router<S>) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        let api = match &self.rate_limit {
            Some(limiter) => api.route_layer(middleware::from_fn_with_state(
                Arc::clone(limiter),
                rate_limit::limit,
            )),
            None => api,
        };
        match &self.faults {
            Some(injector) => api.route_layer(middleware::from_fn_with_state(
                Arc::clone(injector),
                faults::inject,
            )),
            None => api,
        }
    }

    /// Wraps every route: latency, before anything else answers.
    pub(crate) fn around_everything(&self, app: Router) -> Router {
        match &self.latency {
            Some(plan) => app.layer(middleware::from_fn_with_state(
                Arc::clone(plan),
                latency::delay,
            )),
            None => app,
        }
    }

    /// `GET /_mock/realism`: what is configured and what it did so far (requests delayed,
    /// admitted and refused, faults injected per kind), for tests and benchmarks.
    pub(crate) fn routes<S>(&self) -> Router<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        Router::new()
            .route("/_mock/realism", get(report))
            .with_state(self.clone())
    }

    /// Serves `app` until `shutdown` resolves; connections are observed (remote address, reset)
    /// only when a rate limit or faults need it.
    pub(crate) async fn serve(
        &self,
        listener: TcpListener,
        app: Router,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        if self.needs_connection {
            axum::serve(
                ObservedListener::new(listener),
                app.into_make_service_with_connect_info::<Connection>(),
            )
            .with_graceful_shutdown(shutdown)
            .await
        } else {
            axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
        }
    }
}

async fn report(State(layers): State<Layers>) -> Json<serde_json::Value> {
    let config = &layers.config;
    let mut report = serde_json::json!({
        "enabled": config.is_enabled(),
        "seed": config.seed,
        "summary": config.to_string(),
        "latency": layers.latency.as_ref().map(|plan| plan.snapshot()),
        "rateLimit": null,
        "faults": null,
    });
    if let (Some(limit), Some(limiter)) = (&config.rate_limit, &layers.rate_limit) {
        let mut snapshot = limiter.snapshot();
        snapshot["limit"] = limit.to_string().into();
        report["rateLimit"] = snapshot;
    }
    if let Some(injector) = &layers.faults {
        let mut snapshot = injector.snapshot();
        snapshot["rates"] = config.faults.to_string().into();
        snapshot["slowBody"] = config.slow_body.to_string().into();
        report["faults"] = snapshot;
    }
    Json(report)
}

/// Session id number `n` under `seed`: random-looking (a version 4 UUID, as the service's), the
/// same for the same seed and `n`.
pub(crate) fn session_id(seed: u64, n: u64) -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    keyed_rng(seed, b"sessions", 0, n).fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// An independent random stream for draw number `index` of `domain`/`stream` under `seed`: the
/// key of a ChaCha generator, so that one draw never depends on how many others were made.
fn keyed_rng(seed: u64, domain: &[u8; 8], stream: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(domain);
    key[16..24].copy_from_slice(&stream.to_le_bytes());
    key[24..].copy_from_slice(&index.to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// A duration written `250ms`, `2s`, `1m` or `500us` (a unit is required: a bare number is ambiguous
/// between the mock's other options, which count seconds, and latencies, usually milliseconds).
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "`{text}` is not a duration such as 250ms, 2s or 1m"
        ));
    }
    let too_long = || format!("`{text}` is too long");
    let number: u64 = number.parse().map_err(|_| too_long())?;
    let micros_per_unit: u64 = match unit {
        "us" => 1,
        "ms" => 1_000,
        "s" => 1_000_000,
        "m" | "min" => 60_000_000,
        "" => {
            return Err(format!("`{text}` has no unit; write {text}ms or {text}s"));
        }
        _ => return Err(format!("`{text}` has an unknown unit; use ms, s or m")),
    };
    let micros = number.checked_mul(micros_per_unit).ok_or_else(too_long)?;
    Ok(std::time::Duration::from_micros(micros))
}

/// `d` as the command line writes it: `250ms`, `2s`, `1m`.
pub(crate) fn format_duration(d: std::time::Duration) -> String {
    let nanos = d.subsec_nanos();
    let millis = d.as_millis();
    if !nanos.is_multiple_of(1_000) {
        format!("{}ns", d.as_nanos())
    } else if !nanos.is_multiple_of(1_000_000) {
        format!("{}us", d.as_micros())
    } else if millis == 0 || !millis.is_multiple_of(1_000) {
        format!("{millis}ms")
    } else if millis.is_multiple_of(60_000) {
        format!("{}m", millis / 60_000)
    } else {
        format!("{}s", millis / 1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("50").expect_err("no unit").contains("50ms"));
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("99999999999999999999ms").is_err());
        assert!(parse_duration("18446744073709551615m").is_err());
    }

    #[test]
    fn durations_print_as_they_parse() {
        for text in ["0ms", "250ms", "2s", "1m", "90s", "1500ms"] {
            let duration = parse_duration(text).expect(text);
            assert_eq!(format_duration(duration), text);
        }
    }

    #[test]
    fn everything_is_off_by_default() {
        let realism = Realism::default();
        assert!(!realism.is_enabled());
        assert!(!realism.needs_connection());
        assert_eq!(realism.to_string(), "off");
        assert!(realism.validate().is_ok());
    }

    #[test]
    fn keyed_draws_depend_only_on_their_key() {
        use rand::RngCore as _;
        let draw = |seed, stream, index| keyed_rng(seed, b"test\0\0\0\0", stream, index).next_u64();
        assert_eq!(draw(1, 2, 3), draw(1, 2, 3));
        assert_ne!(draw(1, 2, 3), draw(2, 2, 3));
        assert_ne!(draw(1, 2, 3), draw(1, 3, 3));
        assert_ne!(draw(1, 2, 3), draw(1, 2, 4));
    }
}
