//! Latency injection: how long a request waits before the mock starts answering it.
//!
//! A distribution ([`Latency`]) per route pattern ([`RoutePattern`]), first match wins, and a
//! default for every other `/v1` request. The identity provider, `/_mock` and the published
//! documents wait only when a pattern names them: the default models the API's own round trip.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use rand_distr::Distribution as _;

use super::units::{format_duration, keyed_rng, parse_duration};

/// The longest latency a distribution may name or draw (longer draws are cut to it): ten
/// minutes, beyond any client timeout worth testing.
pub const MAX_LATENCY: Duration = Duration::from_secs(600);

/// The standard normal quantile of 0.99: a log-normal's p99 is `median · e^(σ·Z99)`.
const Z99: f64 = 2.326_347_874_040_841;

/// A latency distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Latency {
    /// Always the same: `50ms` (or `fixed:50ms`).
    Fixed(Duration),
    /// Uniform between two bounds, both included: `uniform:20ms..200ms`.
    Uniform {
        /// Lower bound.
        min: Duration,
        /// Upper bound.
        max: Duration,
    },
    /// Normal, cut at zero: `normal:mean=100ms,sd=20ms`.
    Normal {
        /// Mean.
        mean: Duration,
        /// Standard deviation.
        std_dev: Duration,
    },
    /// Log-normal, the usual shape of service latency (a long right tail), given by its median
    /// and 99th percentile: `lognormal:p50=80ms,p99=400ms`.
    LogNormal {
        /// Median (50th percentile).
        median: Duration,
        /// 99th percentile; larger than the median.
        p99: Duration,
    },
}

impl Latency {
    /// Always `latency`.
    pub fn fixed(latency: Duration) -> Self {
        Latency::Fixed(latency)
    }

    /// Uniform in `min..=max`.
    pub fn uniform(min: Duration, max: Duration) -> Self {
        Latency::Uniform { min, max }
    }

    /// Normal with `mean` and `std_dev`, negative draws cut to zero.
    pub fn normal(mean: Duration, std_dev: Duration) -> Self {
        Latency::Normal { mean, std_dev }
    }

    /// Log-normal with this median and 99th percentile.
    pub fn log_normal(median: Duration, p99: Duration) -> Self {
        Latency::LogNormal { median, p99 }
    }

    /// `Err(reason)` when the values cannot be used.
    pub fn check(&self) -> Result<(), String> {
        let durations: &[Duration] = match self {
            Latency::Fixed(latency) => &[*latency],
            Latency::Uniform { min, max } => &[*min, *max],
            Latency::Normal { mean, std_dev } => &[*mean, *std_dev],
            Latency::LogNormal { median, p99 } => &[*median, *p99],
        };
        if let Some(long) = durations.iter().find(|d| **d > MAX_LATENCY) {
            return Err(format!(
                "{} is longer than the {} a latency may be",
                format_duration(*long),
                format_duration(MAX_LATENCY)
            ));
        }
        match self {
            Latency::Uniform { min, max } if min > max => Err(format!(
                "the lower bound {} is above the upper bound {}",
                format_duration(*min),
                format_duration(*max)
            )),
            Latency::LogNormal { median, .. } if median.is_zero() => {
                Err("a log-normal median must be above zero".into())
            }
            Latency::LogNormal { median, p99 } if p99 <= median => Err(format!(
                "p99 ({}) must be above the median ({})",
                format_duration(*p99),
                format_duration(*median)
            )),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Latency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: &Duration| format_duration(*d);
        match self {
            Latency::Fixed(latency) => write!(f, "{}", d(latency)),
            Latency::Uniform { min, max } => write!(f, "uniform:{}..{}", d(min), d(max)),
            Latency::Normal { mean, std_dev } => {
                write!(f, "normal:mean={},sd={}", d(mean), d(std_dev))
            }
            Latency::LogNormal { median, p99 } => {
                write!(f, "lognormal:p50={},p99={}", d(median), d(p99))
            }
        }
    }
}

const LATENCY_SYNTAX: &str = "a distribution is 50ms, fixed:50ms, uniform:20ms..200ms, \
                              normal:mean=100ms,sd=20ms or lognormal:p50=80ms,p99=400ms";

impl FromStr for Latency {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let duration =
            |value: &str| parse_duration(value).map_err(|e| format!("{e} ({LATENCY_SYNTAX})"));
        let latency = match text.split_once(':') {
            None => Latency::Fixed(duration(text)?),
            Some(("fixed", value)) => Latency::Fixed(duration(value)?),
            Some(("uniform", range)) => {
                let (min, max) = range.split_once("..").ok_or_else(|| {
                    format!("`{text}`: a uniform range is MIN..MAX, e.g. uniform:20ms..200ms")
                })?;
                Latency::Uniform {
                    min: duration(min)?,
                    max: duration(max)?,
                }
            }
            Some(("normal", parameters)) => {
                let [mean, std_dev] = named(text, parameters, ["mean", "sd"])?;
                Latency::Normal {
                    mean: duration(mean)?,
                    std_dev: duration(std_dev)?,
                }
            }
            Some(("lognormal", parameters)) => {
                let [median, p99] = named(text, parameters, ["p50", "p99"])?;
                Latency::LogNormal {
                    median: duration(median)?,
                    p99: duration(p99)?,
                }
            }
            Some((kind, _)) => {
                return Err(format!(
                    "`{kind}` is not a latency distribution; {LATENCY_SYNTAX}"
                ));
            }
        };
        latency
            .check()
            .map_err(|reason| format!("`{text}`: {reason}"))?;
        Ok(latency)
    }
}

/// The values of `names`, each given once as `name=value` in a comma-separated list.
fn named<'a, const N: usize>(
    text: &str,
    parameters: &'a str,
    names: [&str; N],
) -> Result<[&'a str; N], String> {
    let expected = names.map(|name| format!("{name}=..")).join(",");
    let mut values: [Option<&'a str>; N] = [None; N];
    for pair in parameters.split(',') {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: expected {expected}"))?;
        let index = names
            .iter()
            .position(|known| *known == name.trim())
            .ok_or_else(|| format!("`{text}`: unknown parameter `{name}`; expected {expected}"))?;
        if values[index].replace(value).is_some() {
            return Err(format!("`{text}`: `{name}` is given twice"));
        }
    }
    let mut found = [""; N];
    for (index, value) in values.into_iter().enumerate() {
        found[index] = value.ok_or_else(|| format!("`{text}`: expected {expected}"))?;
    }
    Ok(found)
}

/// Which requests a latency rule applies to: an optional method and a path pattern.
///
/// `GET /v1/sessions/*/pdf-report`: `*` matches one path segment; a final `**` matches the
/// rest of the path, however many segments (none included). Without a method (or with `*`),
/// every method. Other segments match exactly (case-sensitive, as the routes are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutePattern {
    method: Option<Method>,
    segments: Vec<Segment>,
    /// What a final `**` leaves open.
    open_ended: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Any,
}

impl RoutePattern {
    /// Whether a `method` request for `path` is one this pattern names.
    pub fn matches(&self, method: &Method, path: &str) -> bool {
        if self.method.as_ref().is_some_and(|wanted| wanted != method) {
            return false;
        }
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        let mut parts = rest.split('/');
        for segment in &self.segments {
            match (segment, parts.next()) {
                (_, None) => return false,
                (Segment::Any, Some(part)) if !part.is_empty() => {}
                (Segment::Literal(literal), Some(part)) if literal == part => {}
                _ => return false,
            }
        }
        self.open_ended || parts.next().is_none()
    }
}

const PATTERN_SYNTAX: &str = "a route is `[METHOD] /path`, e.g. `GET /v1/sessions/*/pdf-report` \
                              or `/realms/**` (`*`: one segment, final `**`: the rest)";

impl FromStr for RoutePattern {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (method, path) = match text.split_once(char::is_whitespace) {
            Some((method, path)) => (Some(method), path.trim()),
            None => (None, text),
        };
        let method = match method {
            None | Some("*") => None,
            Some(method) if method.bytes().all(|b| b.is_ascii_alphabetic()) => Some(
                Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                    .map_err(|_| format!("`{method}` is not an HTTP method; {PATTERN_SYNTAX}"))?,
            ),
            Some(method) => {
                return Err(format!(
                    "`{method}` is not an HTTP method; {PATTERN_SYNTAX}"
                ));
            }
        };
        let Some(rest) = path.strip_prefix('/') else {
            return Err(format!(
                "`{text}`: the path must start with `/`; {PATTERN_SYNTAX}"
            ));
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let mut segments = Vec::with_capacity(parts.len());
        let mut open_ended = false;
        for (index, part) in parts.iter().enumerate() {
            match *part {
                "**" if index + 1 == parts.len() => open_ended = true,
                "**" => {
                    return Err(format!(
                        "`{text}`: `**` may only end a pattern; {PATTERN_SYNTAX}"
                    ));
                }
                "*" => segments.push(Segment::Any),
                "" => {
                    return Err(format!(
                        "`{text}` has an empty path segment; {PATTERN_SYNTAX}"
                    ));
                }
                part if part.contains(['*', '?', '#', '=', ' ']) => {
                    return Err(format!(
                        "`{text}`: `{part}` is neither a path segment nor `*`; {PATTERN_SYNTAX}"
                    ));
                }
                part => segments.push(Segment::Literal(part.to_owned())),
            }
        }
        Ok(RoutePattern {
            method,
            segments,
            open_ended,
        })
    }
}

impl fmt::Display for RoutePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(method) = &self.method {
            write!(f, "{method} ")?;
        }
        for segment in &self.segments {
            match segment {
                Segment::Literal(literal) => write!(f, "/{literal}")?,
                Segment::Any => f.write_str("/*")?,
            }
        }
        if self.open_ended {
            f.write_str("/**")?;
        }
        Ok(())
    }
}

/// A latency for the requests one route pattern matches: `GET /v1/sessions/*/pdf-report=1s`.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyRule {
    /// The requests it applies to.
    pub route: RoutePattern,
    /// Their latency.
    pub latency: Latency,
}

impl FromStr for LatencyRule {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.parse::<LatencySpec>()? {
            LatencySpec::Route(rule) => Ok(rule),
            LatencySpec::Default(_) => Err(format!(
                "`{text}` names no route; write ROUTE=DISTRIBUTION, e.g. \
                 `GET /v1/sessions/*/pdf-report=uniform:200ms..1s`"
            )),
        }
    }
}

impl fmt::Display for LatencyRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.route, self.latency)
    }
}

/// What one `--latency` option says: the default for `/v1`, or a rule for one route.
#[derive(Debug, Clone, PartialEq)]
pub enum LatencySpec {
    /// `50ms`, `uniform:20ms..200ms`...: every `/v1` request no rule matches.
    Default(Latency),
    /// `GET /v1/sessions/*/pdf-report=uniform:200ms..1s`.
    Route(LatencyRule),
}

impl FromStr for LatencySpec {
    type Err = String;

    /// Text before the first `=` is a route, unless it is a distribution's parameter
    /// (`normal:mean=..`: a `:` and no `/`).
    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once('=') {
            Some((before, _)) if before.contains(':') && !before.contains('/') => {
                Ok(LatencySpec::Default(text.parse()?))
            }
            Some((route, latency)) => Ok(LatencySpec::Route(LatencyRule {
                route: route.parse()?,
                latency: latency.parse()?,
            })),
            None => Ok(LatencySpec::Default(text.parse()?)),
        }
    }
}

/// A distribution ready to draw from.
#[derive(Debug)]
enum Sampler {
    Fixed(Duration),
    Uniform { min_nanos: u64, max_nanos: u64 },
    Normal(rand_distr::Normal<f64>),
    LogNormal(rand_distr::LogNormal<f64>),
}

impl Sampler {
    /// `None` for a distribution that [`Latency::check`] refuses.
    fn new(latency: &Latency) -> Option<Sampler> {
        let nanos = |d: &Duration| u64::try_from(d.as_nanos()).ok();
        Some(match latency {
            Latency::Fixed(latency) => Sampler::Fixed(*latency),
            Latency::Uniform { min, max } => Sampler::Uniform {
                min_nanos: nanos(min)?,
                max_nanos: nanos(max)?,
            },
            Latency::Normal { mean, std_dev } => Sampler::Normal(
                rand_distr::Normal::new(mean.as_secs_f64(), std_dev.as_secs_f64()).ok()?,
            ),
            Latency::LogNormal { median, p99 } => {
                let mu = median.as_secs_f64().ln();
                let sigma = (p99.as_secs_f64().ln() - mu) / Z99;
                Sampler::LogNormal(rand_distr::LogNormal::new(mu, sigma).ok()?)
            }
        })
    }

    fn draw(&self, rng: &mut impl rand::Rng) -> Duration {
        let seconds = match self {
            Sampler::Fixed(latency) => return *latency,
            Sampler::Uniform {
                min_nanos,
                max_nanos,
            } => return Duration::from_nanos(rng.gen_range(*min_nanos..=*max_nanos)),
            Sampler::Normal(normal) => normal.sample(rng),
            Sampler::LogNormal(log_normal) => log_normal.sample(rng),
        };
        Duration::try_from_secs_f64(seconds.clamp(0.0, MAX_LATENCY.as_secs_f64()))
            .unwrap_or(MAX_LATENCY)
    }
}

/// A rule of a running server, with how many requests it delayed.
#[derive(Debug)]
struct ActiveRule {
    route: RoutePattern,
    sampler: Sampler,
    text: String,
    delayed: AtomicU64,
}

/// The latency rules of a running server.
#[derive(Debug)]
pub(crate) struct LatencyPlan {
    routes: Vec<ActiveRule>,
    default: Option<(Sampler, String)>,
    delayed_by_default: AtomicU64,
    seed: u64,
    /// Requests that drew a latency so far: the index of the next draw.
    draws: AtomicU64,
}

impl LatencyPlan {
    /// `None` when no latency is configured (then no layer is added).
    pub(crate) fn new(
        default: Option<&Latency>,
        routes: &[LatencyRule],
        seed: u64,
    ) -> Option<LatencyPlan> {
        if default.is_none() && routes.is_empty() {
            return None;
        }
        Some(LatencyPlan {
            routes: routes
                .iter()
                .filter_map(|rule| {
                    Some(ActiveRule {
                        route: rule.route.clone(),
                        sampler: Sampler::new(&rule.latency)?,
                        text: rule.to_string(),
                        delayed: AtomicU64::new(0),
                    })
                })
                .collect(),
            default: default
                .and_then(|latency| Some((Sampler::new(latency)?, latency.to_string()))),
            delayed_by_default: AtomicU64::new(0),
            seed,
            draws: AtomicU64::new(0),
        })
    }

    /// The distribution a request gets, and its counter: the first matching rule, else the
    /// default for `/v1`.
    fn choose(&self, method: &Method, path: &str) -> Option<(&Sampler, &AtomicU64)> {
        if let Some(rule) = self
            .routes
            .iter()
            .find(|rule| rule.route.matches(method, path))
        {
            return Some((&rule.sampler, &rule.delayed));
        }
        match &self.default {
            Some((sampler, _)) if path.starts_with("/v1/") => {
                Some((sampler, &self.delayed_by_default))
            }
            _ => None,
        }
    }

    /// How long this request waits (draws are numbered in arrival order).
    pub(crate) fn draw(&self, method: &Method, path: &str) -> Option<Duration> {
        let (sampler, delayed) = self.choose(method, path)?;
        delayed.fetch_add(1, Ordering::Relaxed);
        let index = self.draws.fetch_add(1, Ordering::Relaxed);
        Some(sampler.draw(&mut keyed_rng(self.seed, b"latency\0", 0, index)))
    }

    /// What `GET /_mock/realism` shows of it.
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        serde_json::json!({
            "default": self.default.as_ref().map(|(_, text)| text),
            "delayedByDefault": self.delayed_by_default.load(Ordering::Relaxed),
            "routes": self.routes.iter().map(|rule| serde_json::json!({
                "rule": rule.text,
                "delayed": rule.delayed.load(Ordering::Relaxed),
            })).collect::<Vec<_>>(),
        })
    }
}

/// Axum middleware: waits the request's latency, then lets it through.
pub(crate) async fn delay(
    State(plan): State<Arc<LatencyPlan>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(latency) = plan.draw(request.method(), request.uri().path())
        && !latency.is_zero()
    {
        tokio::time::sleep(latency).await;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realism::Realism;

    fn plan_of(realism: &Realism) -> Option<LatencyPlan> {
        LatencyPlan::new(
            realism.default_latency.as_ref(),
            &realism.route_latency,
            realism.seed,
        )
    }
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt as _;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn distributions_parse_and_print_back() {
        let cases = [
            ("50ms", Latency::fixed(ms(50))),
            ("fixed:2s", Latency::fixed(ms(2000))),
            ("uniform:20ms..200ms", Latency::uniform(ms(20), ms(200))),
            (
                "normal:mean=100ms,sd=20ms",
                Latency::normal(ms(100), ms(20)),
            ),
            (
                "normal:sd=20ms,mean=100ms",
                Latency::normal(ms(100), ms(20)),
            ),
            (
                "lognormal:p50=80ms,p99=400ms",
                Latency::log_normal(ms(80), ms(400)),
            ),
        ];
        for (text, expected) in cases {
            let parsed: Latency = text.parse().expect(text);
            assert_eq!(parsed, expected, "{text}");
            assert_eq!(parsed.to_string().parse::<Latency>(), Ok(parsed), "{text}");
        }
    }

    #[test]
    fn bad_distributions_say_what_to_write() {
        for (text, says) in [
            ("50", "50ms"),
            ("", "not a duration"),
            ("uniform:200ms..20ms", "above the upper bound"),
            ("uniform:20ms-200ms", "MIN..MAX"),
            ("normal:mean=100ms", "expected mean=..,sd=.."),
            ("normal:mean=1ms,sd=2ms,mean=3ms", "given twice"),
            ("normal:mean=1ms,jitter=2ms", "unknown parameter `jitter`"),
            ("lognormal:p50=400ms,p99=80ms", "must be above the median"),
            ("lognormal:p50=0ms,p99=80ms", "above zero"),
            ("pareto:1ms", "not a latency distribution"),
            ("11m", "longer than"),
            ("uniform:1ms..99999999999999999999ms", "too long"),
        ] {
            let error = text.parse::<Latency>().expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn route_patterns_match_methods_and_segments() {
        let pdf: RoutePattern = "GET /v1/sessions/*/pdf-report".parse().expect("pattern");
        assert!(pdf.matches(&Method::GET, "/v1/sessions/3f2a/pdf-report"));
        assert!(!pdf.matches(&Method::POST, "/v1/sessions/3f2a/pdf-report"));
        assert!(!pdf.matches(&Method::GET, "/v1/sessions//pdf-report"));
        assert!(!pdf.matches(&Method::GET, "/v1/sessions/3f2a/pdf-report/x"));
        assert!(!pdf.matches(&Method::GET, "/v1/sessions/3f2a"));
        let realm: RoutePattern = "/realms/**".parse().expect("pattern");
        assert!(realm.matches(
            &Method::POST,
            "/realms/consumer/protocol/openid-connect/token"
        ));
        assert!(realm.matches(&Method::GET, "/realms"));
        assert!(!realm.matches(&Method::GET, "/v1/realms"));
        let any_method: RoutePattern = "* /v1/consumer/packages".parse().expect("pattern");
        assert!(any_method.matches(&Method::DELETE, "/v1/consumer/packages"));
        let lower: RoutePattern = "get /v1/sessions".parse().expect("pattern");
        assert_eq!(lower.to_string(), "GET /v1/sessions");
        for text in [
            "v1/sessions",
            "GET v1",
            "G=T /v1",
            "/v1/**/x",
            "/v1//x",
            "/v1/se*",
        ] {
            assert!(text.parse::<RoutePattern>().is_err(), "{text}");
        }
    }

    #[test]
    fn specs_are_defaults_or_route_rules() {
        assert_eq!(
            "normal:mean=100ms,sd=20ms".parse::<LatencySpec>(),
            Ok(LatencySpec::Default(Latency::normal(ms(100), ms(20))))
        );
        let rule = "GET /v1/sessions/*/pdf-report=lognormal:p50=200ms,p99=1s"
            .parse::<LatencySpec>()
            .expect("rule");
        let LatencySpec::Route(rule) = rule else {
            panic!("a route rule: {rule:?}");
        };
        assert_eq!(rule.latency, Latency::log_normal(ms(200), ms(1000)));
        assert_eq!(
            rule.to_string(),
            "GET /v1/sessions/*/pdf-report=lognormal:p50=200ms,p99=1s"
        );
        assert!("/v1/x=".parse::<LatencySpec>().is_err());
        let no_slash = "GET v1=5ms"
            .parse::<LatencySpec>()
            .expect_err("not a route");
        assert!(no_slash.contains("must start with `/`"), "{no_slash}");
        assert!("50ms".parse::<LatencyRule>().is_err());
    }

    #[test]
    fn the_first_matching_route_chooses_the_distribution_and_the_default_covers_only_v1() {
        let realism = Realism::new()
            .latency(Latency::fixed(ms(50)))
            .route_latency(
                "GET /v1/sessions/*/pdf-report".parse().expect("pattern"),
                Latency::fixed(ms(700)),
            )
            .route_latency(
                "/v1/sessions/**".parse().expect("pattern"),
                Latency::fixed(ms(300)),
            )
            .route_latency(
                "POST /realms/*/protocol/openid-connect/token"
                    .parse()
                    .expect("pattern"),
                Latency::fixed(ms(20)),
            );
        let plan = plan_of(&realism).expect("latency is on");
        let id = "8c1f0f3e-0d0b-4f4e-9d57-8a9d1c3f0a11";
        let cases = [
            (
                Method::GET,
                format!("/v1/sessions/{id}/pdf-report"),
                Some(700),
            ),
            (Method::GET, format!("/v1/sessions/{id}/scores"), Some(300)),
            (Method::POST, "/v1/sessions".to_owned(), Some(300)),
            (Method::GET, "/v1/consumer/packages".to_owned(), Some(50)),
            (
                Method::POST,
                "/realms/consumer/protocol/openid-connect/token".to_owned(),
                Some(20),
            ),
            (
                Method::GET,
                "/realms/consumer/.well-known/openid-configuration".to_owned(),
                None,
            ),
            (Method::GET, "/_mock/health".to_owned(), None),
            (Method::GET, "/openapi/v1.json".to_owned(), None),
        ];
        for (method, path, expected) in cases {
            assert_eq!(
                plan.draw(&method, &path),
                expected.map(ms),
                "{method} {path}"
            );
        }
    }

    #[test]
    fn draws_stay_in_their_distribution_and_repeat_for_a_seed() {
        let draws = |latency: Latency, seed: u64| {
            let plan = plan_of(&Realism::new().latency(latency).seed(seed)).expect("latency is on");
            (0..500)
                .map(|_| {
                    plan.draw(&Method::GET, "/v1/consumer/packages")
                        .expect("drawn")
                })
                .collect::<Vec<_>>()
        };
        let uniform = draws(Latency::uniform(ms(20), ms(200)), 1);
        assert!(uniform.iter().all(|d| (ms(20)..=ms(200)).contains(d)));
        assert_eq!(uniform, draws(Latency::uniform(ms(20), ms(200)), 1));
        assert_ne!(uniform, draws(Latency::uniform(ms(20), ms(200)), 2));
        let normal = draws(Latency::normal(ms(10), ms(50)), 1);
        assert!(
            normal.iter().any(|d| d.is_zero()),
            "negative draws are cut to zero"
        );
        assert!(normal.iter().all(|d| *d <= MAX_LATENCY));
        let mut log_normal = draws(Latency::log_normal(ms(80), ms(400)), 3);
        log_normal.sort();
        // The median of 500 draws sits near 80 ms, the 99th percentile near 400 ms; the bounds
        // are wide enough that no seed can miss them.
        assert!(
            (ms(60)..=ms(105)).contains(&log_normal[250]),
            "{:?}",
            log_normal[250]
        );
        assert!(log_normal[495] > ms(200), "{:?}", log_normal[495]);
    }

    /// Virtual time (a paused tokio clock) shows the wait without measuring the machine.
    #[tokio::test(start_paused = true)]
    async fn a_request_waits_its_latency_before_it_is_handled() {
        let plan = plan_of(&Realism::new().latency(Latency::fixed(ms(750))))
            .map(Arc::new)
            .expect("latency is on");
        let app = Router::new()
            .route("/v1/consumer/packages", get(|| async { "packages" }))
            .route("/_mock/health", get(|| async { "ok" }))
            .layer(axum::middleware::from_fn_with_state(plan, delay));
        let started = tokio::time::Instant::now();
        let response = app
            .clone()
            .oneshot(
                Request::get("/v1/consumer/packages")
                    .body(Body::empty())
                    .expect("request"),
            )
            .await
            .expect("response");
        assert_eq!(response.status(), 200);
        // The paused clock jumps to the timer's deadline (rounded to its 1 ms tick).
        assert!(
            (ms(750)..ms(752)).contains(&started.elapsed()),
            "{:?}",
            started.elapsed()
        );
        let started = tokio::time::Instant::now();
        app.oneshot(
            Request::get("/_mock/health")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "control endpoints do not wait"
        );
    }
}
