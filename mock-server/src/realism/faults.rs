//! Deterministic fault injection into `/v1` requests.
//!
//! Each request to a matched operation draws one number; the configured faults own disjoint
//! slices of the range, in the order given (`503:1%,reset:0.5%`: the first 1 % is a 503, the
//! next 0.5 % a reset, the rest passes). The draw of the `n`-th request to a route (method and
//! path template, e.g. `GET /v1/sessions/{sessionId}/scores`) is a pure function of the seed,
//! the route and `n`: the same seed and the same sequence of requests per route give the same
//! faults, however requests to *different* routes interleave. Which of several concurrent
//! requests to the *same* route arrives `n`-th is up to the scheduler.
//!
//! Every injected response carries `X-Creditdata-Mock-Fault: KIND`, so a test or a developer
//! can tell an injected failure from a real one (a reset has no response to carry it).

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use rand::RngCore as _;

use super::connection::Connection;
use super::units::{format_duration, keyed_rng, parse_duration};
use crate::problem::Problem;

/// The header that names the fault injected into a response.
pub const FAULT_HEADER: HeaderName = HeaderName::from_static("x-creditdata-mock-fault");

/// Draws are uniform over this many slots: rates are exact to 0.0001 %.
const SLOTS: u32 = 1_000_000;
/// Slots per percent.
const SLOTS_PER_PERCENT: f64 = 10_000.0;

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `429`: 429 Too Many Requests with `Retry-After: 1` (as if a gateway limited the caller).
    TooManyRequests,
    /// `500`: 500 Internal Server Error.
    InternalServerError,
    /// `502`: 502 Bad Gateway.
    BadGateway,
    /// `503`: 503 Service Unavailable.
    ServiceUnavailable,
    /// `504`: 504 Gateway Timeout.
    GatewayTimeout,
    /// `reset`: the connection is reset (TCP RST) without any response.
    Reset,
    /// `slow-body`: the real response, its body trickled at [`SlowBodyPace`].
    SlowBody,
    /// `truncated`: the real status and headers (with the full `Content-Length`), then the
    /// connection drops after half the body.
    Truncated,
}

impl Fault {
    const ALL: [Fault; 8] = [
        Fault::TooManyRequests,
        Fault::InternalServerError,
        Fault::BadGateway,
        Fault::ServiceUnavailable,
        Fault::GatewayTimeout,
        Fault::Reset,
        Fault::SlowBody,
        Fault::Truncated,
    ];

    /// The name `--faults` uses.
    pub fn name(self) -> &'static str {
        match self {
            Fault::TooManyRequests => "429",
            Fault::InternalServerError => "500",
            Fault::BadGateway => "502",
            Fault::ServiceUnavailable => "503",
            Fault::GatewayTimeout => "504",
            Fault::Reset => "reset",
            Fault::SlowBody => "slow-body",
            Fault::Truncated => "truncated",
        }
    }

    fn status(self) -> Option<StatusCode> {
        match self {
            Fault::TooManyRequests => Some(StatusCode::TOO_MANY_REQUESTS),
            Fault::InternalServerError => Some(StatusCode::INTERNAL_SERVER_ERROR),
            Fault::BadGateway => Some(StatusCode::BAD_GATEWAY),
            Fault::ServiceUnavailable => Some(StatusCode::SERVICE_UNAVAILABLE),
            Fault::GatewayTimeout => Some(StatusCode::GATEWAY_TIMEOUT),
            Fault::Reset | Fault::SlowBody | Fault::Truncated => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Fault::ALL
            .into_iter()
            .find(|fault| fault.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a fault; the kinds are {}",
                    Fault::ALL.map(Fault::name).join(", ")
                )
            })
    }
}

/// The faults to inject, each with its rate in percent of `/v1` requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    rates: Vec<(Fault, f64)>,
}

impl Faults {
    /// No faults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `fault` at `percent` % of requests (after those already added).
    pub fn with(mut self, fault: Fault, percent: f64) -> Self {
        self.rates.push((fault, percent));
        self
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rates.is_empty()
    }

    /// Each fault and its rate in percent, in the order given.
    pub fn rates(&self) -> &[(Fault, f64)] {
        &self.rates
    }

    /// `Err(reason)` when the rates cannot be used.
    pub fn check(&self) -> Result<(), String> {
        let mut total = 0u32;
        for (index, (fault, percent)) in self.rates.iter().enumerate() {
            if self.rates[..index].iter().any(|(seen, _)| seen == fault) {
                return Err(format!("`{fault}` is given twice"));
            }
            let slots = slots(*percent).ok_or_else(|| {
                format!("the rate of `{fault}` ({percent}%) is not between 0.0001% and 100%")
            })?;
            total += slots;
        }
        if total > SLOTS {
            return Err(format!(
                "the rates add up to {}%, more than 100%",
                f64::from(total) / SLOTS_PER_PERCENT
            ));
        }
        Ok(())
    }
}

/// The slots of `percent`, when it is a usable rate.
fn slots(percent: f64) -> Option<u32> {
    let slots = (percent * SLOTS_PER_PERCENT).round();
    (percent.is_finite() && (1.0..=f64::from(SLOTS)).contains(&slots)).then_some(slots as u32)
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (fault, percent)) in self.rates.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{fault}:{percent}%")?;
        }
        Ok(())
    }
}

impl FromStr for Faults {
    type Err = String;

    /// `503:1%,reset:0.5%,slow-body:1%`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut faults = Faults::new();
        for item in text.split(',') {
            let item = item.trim();
            let syntax = || {
                format!(
                    "`{item}` is not KIND:RATE%; write e.g. 503:1%,reset:0.5%,slow-body:1% \
                     (kinds: {})",
                    Fault::ALL.map(Fault::name).join(", ")
                )
            };
            let (fault, rate) = item.split_once(':').ok_or_else(syntax)?;
            let percent = rate.trim().strip_suffix('%').ok_or_else(syntax)?;
            if percent.is_empty() || !percent.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return Err(syntax());
            }
            let percent: f64 = percent.parse().map_err(|_| syntax())?;
            faults = faults.with(fault.parse()?, percent);
        }
        faults.check()?;
        Ok(faults)
    }
}

/// How a `slow-body` fault trickles a body: `chunk_bytes` at a time, one chunk every `every`
/// (the first one too, so that even a short body is late).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowBodyPace {
    /// Bytes per chunk.
    pub chunk_bytes: usize,
    /// Pause before each chunk.
    pub every: Duration,
}

impl Default for SlowBodyPace {
    /// 1 KiB every 100 ms: 10 KiB/s, so a dataset of a few kilobytes takes about a second.
    fn default() -> Self {
        SlowBodyPace {
            chunk_bytes: 1024,
            every: Duration::from_millis(100),
        }
    }
}

impl SlowBodyPace {
    /// `Err(reason)` when the values cannot be used.
    pub fn check(&self) -> Result<(), String> {
        if self.chunk_bytes == 0 {
            return Err("a chunk must hold at least one byte".into());
        }
        if self.every > Duration::from_secs(60) {
            return Err("the pause between chunks may be at most 60s".into());
        }
        Ok(())
    }
}

impl fmt::Display for SlowBodyPace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.chunk_bytes, format_duration(self.every))
    }
}

impl FromStr for SlowBodyPace {
    type Err = String;

    /// `1024/100ms`: BYTES/PAUSE.
    fn from_str(text: &str) -> Result<Self, String> {
        let syntax = || format!("`{text}` is not BYTES/PAUSE; write e.g. 1024/100ms");
        let (bytes, every) = text.trim().split_once('/').ok_or_else(syntax)?;
        if bytes.is_empty() || !bytes.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax());
        }
        let pace = SlowBodyPace {
            chunk_bytes: bytes.parse().map_err(|_| syntax())?,
            every: parse_duration(every)?,
        };
        pace.check()
            .map_err(|reason| format!("`{text}`: {reason}"))?;
        Ok(pace)
    }
}

/// The faults of a running server.
pub(crate) struct FaultInjector {
    /// Each fault with the end (exclusive) of its slice of `0..SLOTS`.
    slices: Vec<(Fault, u32)>,
    seed: u64,
    pace: SlowBodyPace,
    /// Requests drawn so far per route (keyed by [`route_key`]).
    arrivals: Mutex<HashMap<u64, u64>>,
    /// Requests drawn for, in all.
    drawn: AtomicU64,
    /// Faults injected, per kind (in the order of [`Fault::ALL`]).
    injected: [AtomicU64; Fault::ALL.len()],
}

impl FaultInjector {
    /// `None` when no faults are configured (then no layer is added).
    pub(crate) fn new(faults: &Faults, seed: u64, pace: SlowBodyPace) -> Option<FaultInjector> {
        if faults.is_empty() {
            return None;
        }
        let mut end = 0;
        let slices = faults
            .rates
            .iter()
            .filter_map(|(fault, percent)| {
                end += slots(*percent)?;
                Some((*fault, end))
            })
            .collect();
        Some(FaultInjector {
            slices,
            seed,
            pace,
            arrivals: Mutex::new(HashMap::new()),
            drawn: AtomicU64::new(0),
            injected: Default::default(),
        })
    }

    /// The fault of the next request to `route`, if any.
    fn draw(&self, method: &Method, route: &str) -> Option<Fault> {
        let key = route_key(method, route);
        let index = {
            let mut arrivals = self
                .arrivals
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let count = arrivals.entry(key).or_insert(0);
            let index = *count;
            *count += 1;
            index
        };
        let slot =
            (keyed_rng(self.seed, b"faults\0\0", key, index).next_u64() % u64::from(SLOTS)) as u32;
        self.drawn.fetch_add(1, Ordering::Relaxed);
        let fault = self
            .slices
            .iter()
            .find(|(_, end)| slot < *end)
            .map(|(fault, _)| *fault)?;
        if let Some(position) = Fault::ALL.iter().position(|kind| *kind == fault) {
            self.injected[position].fetch_add(1, Ordering::Relaxed);
        }
        Some(fault)
    }

    /// What `GET /_mock/realism` shows of it.
    pub(crate) fn snapshot(&self) -> serde_json::Value {
        let injected: serde_json::Map<String, serde_json::Value> = self
            .slices
            .iter()
            .filter_map(|(fault, _)| {
                let position = Fault::ALL.iter().position(|kind| kind == fault)?;
                let count = self.injected[position].load(Ordering::Relaxed);
                Some((fault.name().to_owned(), count.into()))
            })
            .collect();
        serde_json::json!({
            "requests": self.drawn.load(Ordering::Relaxed),
            "injected": injected,
        })
    }
}

/// A stable 64-bit name of a route (FNV-1a of `METHOD template`): the same in every build,
/// unlike the standard library's hasher.
fn route_key(method: &Method, route: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    method
        .as_str()
        .bytes()
        .chain([b' '])
        .chain(route.bytes())
        .fold(OFFSET, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
}

/// Axum middleware (on the matched `/v1` routes): draws the request's fault and injects it.
pub(crate) async fn inject(
    State(injector): State<Arc<FaultInjector>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| request.uri().path(), MatchedPath::as_str);
    let Some(fault) = injector.draw(request.method(), route) else {
        return next.run(request).await;
    };
    tracing::debug!(%fault, method = %request.method(), route, "injected a fault");
    let mut response = match fault {
        Fault::Reset => {
            return match request.extensions().get::<ConnectInfo<Connection>>() {
                Some(ConnectInfo(connection)) => {
                    connection.reset();
                    // Never sent: the connection fails before the head is written.
                    StatusCode::SERVICE_UNAVAILABLE.into_response()
                }
                None => Problem::internal(
                    "A reset fault was drawn but this server does not observe its connections.",
                )
                .into_response(),
            };
        }
        Fault::SlowBody => {
            let response = next.run(request).await;
            let pace = injector.pace;
            response.map(|body| Body::new(SlowBody::new(body, pace)))
        }
        Fault::Truncated => next
            .run(request)
            .await
            .map(|body| Body::new(TruncatedBody::new(body))),
        status_fault => {
            let status = status_fault
                .status()
                .unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            let mut response = Problem::injected(
                status,
                format!(
                    "Injected by the mock's --faults ({fault}); the request was not processed."
                ),
            )
            .into_response();
            if fault == Fault::TooManyRequests {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(1u32));
            }
            response
        }
    };
    response
        .headers_mut()
        .insert(FAULT_HEADER, HeaderValue::from_static(fault.name()));
    response
}

/// A body that hands out its data `pace.chunk_bytes` at a time, each chunk after a pause.
struct SlowBody {
    inner: Body,
    pending: Bytes,
    pace: SlowBodyPace,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl SlowBody {
    fn new(inner: Body, pace: SlowBodyPace) -> Self {
        SlowBody {
            inner,
            pending: Bytes::new(),
            pace,
            pause: None,
        }
    }
}

impl HttpBody for SlowBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        while this.pending.is_empty() {
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                None => return Poll::Ready(None),
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => this.pending = data,
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
            }
        }
        let every = this.pace.every;
        let pause = this
            .pause
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(every)));
        ready!(pause.as_mut().poll(cx));
        this.pause = None;
        let chunk = this
            .pending
            .split_to(this.pace.chunk_bytes.min(this.pending.len()));
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let pending = self.pending.len() as u64;
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + pending);
        }
        hint.set_lower(inner.lower() + pending);
        hint
    }
}

/// A body that keeps the inner body's length (so `Content-Length` announces all of it) but
/// fails after half of it, which makes the server drop the connection mid-body.
struct TruncatedBody {
    inner: Body,
    /// Bytes still to send; `None` until known (the first data frame decides when the length
    /// is not).
    remaining: Option<u64>,
    /// Whether the server has been given a chance to send what it holds: hyper discards its
    /// unsent buffer when a body fails, so the failure waits for one flush.
    flushed: bool,
}

impl TruncatedBody {
    fn new(inner: Body) -> Self {
        let remaining = inner.size_hint().exact().map(|length| length / 2);
        TruncatedBody {
            inner,
            remaining,
            flushed: false,
        }
    }

    /// After a pending poll (which makes the server flush the head and the half sent), the
    /// error that makes it drop the connection.
    fn cut(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if !self.flushed {
            self.flushed = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Some(Err(axum::Error::new(std::io::Error::other(
            "the body was truncated by the mock's --faults",
        )))))
    }
}

impl HttpBody for TruncatedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if this.remaining == Some(0) {
            return this.cut(cx);
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            // A body shorter than its announced half: end it badly all the same.
            None => {
                this.remaining = Some(0);
                return this.cut(cx);
            }
            Some(Err(error)) => return Poll::Ready(Some(Err(error))),
        };
        let mut data = match frame.into_data() {
            Ok(data) => data,
            Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
        };
        let remaining = *this.remaining.get_or_insert(data.len() as u64 / 2);
        let sent = remaining.min(data.len() as u64);
        data.truncate(sent as usize);
        this.remaining = Some(remaining - sent);
        if data.is_empty() {
            return this.cut(cx);
        }
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realism::Realism;
    use axum::body::to_bytes;

    #[test]
    fn fault_lists_parse_and_print_back() {
        let faults: Faults = "503:1%,reset:0.5%,slow-body:1%,truncated:0.25%,429:2%"
            .parse()
            .expect("faults");
        assert_eq!(
            faults.rates(),
            &[
                (Fault::ServiceUnavailable, 1.0),
                (Fault::Reset, 0.5),
                (Fault::SlowBody, 1.0),
                (Fault::Truncated, 0.25),
                (Fault::TooManyRequests, 2.0),
            ]
        );
        assert_eq!(faults.to_string().parse::<Faults>(), Ok(faults));
        assert_eq!(
            "500:100%".parse::<Faults>(),
            Ok(Faults::new().with(Fault::InternalServerError, 100.0))
        );
    }

    #[test]
    fn bad_fault_lists_say_what_is_wrong() {
        for (text, says) in [
            ("", "not KIND:RATE%"),
            ("503", "not KIND:RATE%"),
            ("503:1", "not KIND:RATE%"),
            ("503:-1%", "not KIND:RATE%"),
            ("503:1e2%", "not KIND:RATE%"),
            ("418:1%", "not a fault; the kinds are 429, 500"),
            ("503:0%", "between 0.0001% and 100%"),
            ("503:0.00001%", "between 0.0001% and 100%"),
            ("503:101%", "between 0.0001% and 100%"),
            ("503:60%,500:50%", "add up to 110%"),
            ("503:1%,503:2%", "given twice"),
        ] {
            let error = text.parse::<Faults>().expect_err(text);
            assert!(error.contains(says), "{text}: {error}");
        }
        assert!(Faults::new().with(Fault::Reset, f64::NAN).check().is_err());
    }

    #[test]
    fn slow_body_paces_parse() {
        assert_eq!(
            "512/20ms".parse(),
            Ok(SlowBodyPace {
                chunk_bytes: 512,
                every: Duration::from_millis(20)
            })
        );
        assert_eq!(SlowBodyPace::default().to_string(), "1024/100ms");
        for text in ["0/1ms", "512", "512/2m", "x/1ms", "512/20"] {
            assert!(text.parse::<SlowBodyPace>().is_err(), "{text}");
        }
    }

    fn injector(faults: &str, seed: u64) -> FaultInjector {
        let realism = Realism::new()
            .faults(faults.parse().expect("faults"))
            .seed(seed);
        FaultInjector::new(&realism.faults, realism.seed, realism.slow_body).expect("faults are on")
    }

    const SCORES: &str = "/v1/sessions/{sessionId}/scores";
    const PACKAGES: &str = "/v1/consumer/packages";

    #[test]
    fn draws_are_a_function_of_seed_route_and_arrival_on_that_route() {
        let draws = |injector: &FaultInjector, route: &str, count: usize| {
            (0..count)
                .map(|_| injector.draw(&Method::GET, route))
                .collect::<Vec<_>>()
        };
        let faults = "503:20%,reset:10%,slow-body:10%";
        let alone = draws(&injector(faults, 42), SCORES, 200);
        // Requests to another route in between change nothing for this one.
        let interleaved = injector(faults, 42);
        let mut mixed = Vec::new();
        for _ in 0..200 {
            interleaved.draw(&Method::GET, PACKAGES);
            mixed.push(interleaved.draw(&Method::GET, SCORES));
            interleaved.draw(&Method::POST, "/v1/sessions");
        }
        assert_eq!(alone, mixed);
        assert_ne!(alone, draws(&injector(faults, 43), SCORES, 200));
        assert_ne!(alone, draws(&injector(faults, 42), PACKAGES, 200));
        for kind in [Fault::ServiceUnavailable, Fault::Reset, Fault::SlowBody] {
            assert!(alone.contains(&Some(kind)), "{kind} occurs");
        }
        assert!(alone.contains(&None), "most requests pass");
    }

    #[test]
    fn rates_are_honoured_over_many_draws() {
        let mixed = injector("503:10%,500:5%", 7);
        let draws: Vec<_> = (0..20_000)
            .map(|_| mixed.draw(&Method::GET, SCORES))
            .collect();
        let count = |fault| draws.iter().filter(|d| **d == Some(fault)).count();
        // Binomial(20000, 0.10): sd 42; (20000, 0.05): sd 31. Eight sd either side.
        assert!((1664..=2336).contains(&count(Fault::ServiceUnavailable)));
        assert!((752..=1248).contains(&count(Fault::InternalServerError)));
        let everything = injector("truncated:100%", 0);
        assert!((0..100).all(|_| everything.draw(&Method::GET, SCORES) == Some(Fault::Truncated)));
    }

    #[test]
    fn route_keys_are_stable() {
        // FNV-1a of "GET /v1/consumer/packages", computed independently: a change here would
        // change every seeded fault sequence users may have recorded.
        assert_eq!(route_key(&Method::GET, PACKAGES), 0x5d9e_8822_881d_dc70);
        assert_ne!(
            route_key(&Method::GET, PACKAGES),
            route_key(&Method::POST, PACKAGES)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_body_arrives_whole_in_paced_chunks() {
        let payload: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let pace = SlowBodyPace {
            chunk_bytes: 1024,
            every: Duration::from_millis(100),
        };
        let mut body = SlowBody::new(Body::from(payload.clone()), pace);
        assert_eq!(body.size_hint().exact(), Some(10_000));
        let started = tokio::time::Instant::now();
        let mut received = Vec::new();
        let mut chunks = 0;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let data = frame.expect("frame").into_data().expect("data");
            assert!(data.len() <= 1024);
            received.extend_from_slice(&data);
            chunks += 1;
        }
        assert_eq!(received, payload);
        assert_eq!(chunks, 10);
        // Virtual time: ten pauses of 100 ms (each rounded to the timer's 1 ms tick).
        assert!(started.elapsed() >= Duration::from_millis(1000));
        assert!(started.elapsed() < Duration::from_millis(1020));
    }

    #[tokio::test]
    async fn a_truncated_body_announces_everything_and_fails_halfway() {
        let body = TruncatedBody::new(Body::from(vec![7u8; 1000]));
        assert_eq!(body.size_hint().exact(), Some(1000));
        let mut body = Body::new(body);
        let mut received = 0;
        let error = loop {
            match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                Some(Ok(frame)) => received += frame.into_data().map_or(0, |d| d.len()),
                Some(Err(error)) => break error,
                None => panic!("the body ended cleanly"),
            }
        };
        assert_eq!(received, 500);
        assert!(error.to_string().contains("truncated"), "{error}");
        let empty = Body::new(TruncatedBody::new(Body::empty()));
        assert!(to_bytes(empty, 1024).await.is_err());
    }
}
