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
mod units;

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router, middleware};
use tokio::net::TcpListener;

pub use faults::{Fault, Faults, SlowBodyPace};
pub use latency::{Latency, LatencyRule, LatencySpec, MAX_LATENCY, RoutePattern};
pub use rate_limit::{RateLimit, Window};
pub use settings::{Realism, RealismError};
pub(crate) use units::session_id;

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
            latency: latency::LatencyPlan::new(
                realism.default_latency.as_ref(),
                &realism.route_latency,
                realism.seed,
            )
            .map(Arc::new),
            faults: faults::FaultInjector::new(&realism.faults, realism.seed, realism.slow_body)
                .map(Arc::new),
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

#[cfg(test)]
mod tests {
    use super::units::{format_duration, keyed_rng, parse_duration};
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
