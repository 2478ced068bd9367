//! The client-side rate limiter: pacing on tokio's paused clock (virtual time, so the
//! assertions are exact and independent of the machine's load), and its wiring into the
//! client against a loopback server (counts, never durations).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use creditdata_client::ClientBuilder;
use creditdata_client::rate_limit::{RateLimit, RateLimiter};
use tokio::time::Instant;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::support::{MockServer, builder, fast_retries, mount_session, session_id, session_path};

#[tokio::test(start_paused = true)]
async fn clones_draw_from_one_budget() {
    let limiter = RateLimiter::new(RateLimit::per_second(10).burst(2));
    let clone = limiter.clone();
    let start = Instant::now();
    limiter.acquire().await;
    clone.acquire().await;
    assert_eq!(Instant::now(), start, "the burst of two passes at once");
    assert!(
        clone.try_acquire().is_none(),
        "the clone sees the budget the original spent"
    );
    limiter.acquire().await;
    assert_eq!(Instant::now() - start, Duration::from_millis(100));
    assert_eq!(clone.status().admitted, 3);
}

#[tokio::test(start_paused = true)]
async fn a_429_holds_every_clone_back_for_its_retry_after_and_halves_the_rate() {
    let limiter = RateLimiter::new(RateLimit::per_second(10).burst(1));
    let other_task = limiter.clone();
    let refused = limiter.acquire().await;
    let start = Instant::now();
    limiter.throttled(refused, Some(Duration::from_secs(2)));

    let status = other_task.status();
    assert_eq!(status.current_per_second, 5.0, "halved");
    assert_eq!(status.paused_for, Some(Duration::from_secs(2)));
    assert_eq!((status.throttled, status.slowdowns), (1, 1));

    other_task.acquire().await;
    assert_eq!(
        Instant::now() - start,
        Duration::from_secs(2),
        "nothing is admitted before the Retry-After has passed"
    );
    other_task.acquire().await;
    assert_eq!(
        Instant::now() - start,
        Duration::from_millis(2200),
        "then one request every 1/5 s, the halved rate, and no burst"
    );
}

#[tokio::test(start_paused = true)]
async fn a_long_retry_after_holds_back_at_most_max_pause() {
    let limiter = RateLimiter::new(
        RateLimit::per_second(10)
            .burst(1)
            .max_pause(Duration::from_secs(5)),
    );
    let refused = limiter.acquire().await;
    let start = Instant::now();
    limiter.throttled(refused, Some(Duration::from_secs(3600)));
    limiter.acquire().await;
    assert_eq!(Instant::now() - start, Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn several_429s_answering_requests_sent_at_one_rate_lower_it_once() {
    let limiter = RateLimiter::new(RateLimit::per_second(100).burst(10));
    let first = limiter.acquire().await;
    let second = limiter.acquire().await;
    limiter.throttled(first, None);
    limiter.throttled(second, None);
    let status = limiter.status();
    assert_eq!(status.current_per_second, 50.0);
    assert_eq!((status.throttled, status.slowdowns), (2, 1));

    let sent_at_the_lower_rate = limiter.acquire().await;
    limiter.throttled(sent_at_the_lower_rate, None);
    assert_eq!(limiter.status().current_per_second, 25.0);
}

#[tokio::test(start_paused = true)]
async fn the_rate_recovers_step_by_step_to_the_configured_rate_and_no_further() {
    let limiter = RateLimiter::new(RateLimit::per_second(10).burst(1));
    let refused = limiter.acquire().await;
    limiter.throttled(refused, None);
    assert_eq!(limiter.status().current_per_second, 5.0);

    let mut seen = Vec::new();
    for _ in 0..8 {
        tokio::time::advance(Duration::from_secs(1)).await;
        seen.push(limiter.status().current_per_second);
    }
    assert_eq!(seen, [6.0, 7.0, 8.0, 9.0, 10.0, 10.0, 10.0, 10.0]);

    // Back at the configured rate, the limiter paces at it again.
    limiter.acquire().await;
    let start = Instant::now();
    limiter.acquire().await;
    assert_eq!(Instant::now() - start, Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn callers_are_admitted_in_the_order_they_asked() {
    let limiter = RateLimiter::new(RateLimit::per_second(10).burst(1));
    limiter.acquire().await;
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut waiting = Vec::new();
    for caller in 0..8 {
        let limiter = limiter.clone();
        let order = order.clone();
        waiting.push(tokio::spawn(async move {
            limiter.acquire().await;
            order.lock().unwrap().push(caller);
        }));
        // Each caller is queued before the next one asks.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // A caller that gives up while queued leaves its turn to the next one.
    waiting.remove(3).abort();
    for task in waiting {
        task.await.unwrap();
    }
    assert_eq!(*order.lock().unwrap(), [0, 1, 2, 4, 5, 6, 7]);
}

#[tokio::test(start_paused = true)]
async fn a_caller_that_asks_during_a_pause_does_not_pass_one_already_waiting() {
    let limiter = RateLimiter::new(RateLimit::per_second(10).burst(1));
    let refused = limiter.acquire().await;
    let order = Arc::new(Mutex::new(Vec::new()));
    let waiting = |name: &'static str| {
        let limiter = limiter.clone();
        let order = order.clone();
        tokio::spawn(async move {
            limiter.acquire().await;
            order.lock().unwrap().push(name);
        })
    };
    // The first waits for the next slot, 100 ms on; then a 429 pushes every slot back.
    let first = waiting("first");
    tokio::time::sleep(Duration::from_millis(1)).await;
    limiter.throttled(refused, Some(Duration::from_secs(1)));
    // The second asks during the pause, before the first has woken to see it.
    tokio::time::sleep(Duration::from_millis(1)).await;
    let second = waiting("second");
    first.await.unwrap();
    second.await.unwrap();
    assert_eq!(*order.lock().unwrap(), ["first", "second"]);
}

#[tokio::test]
async fn every_attempt_of_every_call_is_admitted_and_clones_share_the_limiter() {
    let server = MockServer::start().await;
    let id = session_id();
    let (client, clone) =
        limited_client_whose_first_answer_is(&server, id, ResponseTemplate::new(503)).await;

    client.get_session().session_id(id).call().await.unwrap();
    let limiter = client.rate_limiter().expect("a limiter");
    assert_eq!(limiter.status().admitted, 2, "the retry after the 503 too");

    clone.get_session().session_id(id).call().await.unwrap();
    assert_eq!(
        limiter.status().admitted,
        3,
        "the clone's call counts in it"
    );
}

#[tokio::test]
async fn a_429_from_the_service_slows_the_limiter_of_every_clone() {
    let server = MockServer::start().await;
    let id = session_id();
    let first = ResponseTemplate::new(429).insert_header("Retry-After", "0");
    let (client, clone) = limited_client_whose_first_answer_is(&server, id, first).await;

    client.get_session().session_id(id).call().await.unwrap();
    let status = clone.rate_limiter().unwrap().status();
    assert_eq!((status.throttled, status.slowdowns), (1, 1));
    assert_eq!(
        status.admitted, 2,
        "the retry after the 429 waited for its turn"
    );
    assert_eq!(
        status.current_per_second,
        RateLimit::per_hour(100_000).per_second_rate() / 2.0
    );
}

#[tokio::test]
async fn a_client_without_a_rate_limit_has_no_limiter() {
    let server = MockServer::start().await;
    let client = builder(&server).build().unwrap();
    assert!(client.rate_limiter().is_none());
}

#[test]
fn the_rate_limit_comes_from_the_environment_and_nonsense_is_refused() {
    let builder = ClientBuilder::from_env_with(|name| match name {
        "CREDITDATA_RATE_LIMIT" => Some("600/min".to_string()),
        "CREDITDATA_ENVIRONMENT" => Some("mock".to_string()),
        _ => None,
    })
    .unwrap();
    let client = builder.build().unwrap();
    let limit = client.rate_limiter().unwrap().limit();
    assert_eq!(
        (limit.requests(), limit.per()),
        (600, Duration::from_secs(60))
    );

    let error = ClientBuilder::from_env_with(|name| {
        (name == "CREDITDATA_RATE_LIMIT").then(|| "fast".to_string())
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("CREDITDATA_RATE_LIMIT") && error.contains("N/s"),
        "{error}"
    );
}

/// A client with retries and a rate limit (a budget the tests never exhaust: they count, they
/// do not wait) and a clone of it, against a service whose first answer for session `id` is
/// `first` and every later one the session.
async fn limited_client_whose_first_answer_is(
    server: &MockServer,
    id: uuid::Uuid,
    first: ResponseTemplate,
) -> (creditdata_client::Client, creditdata_client::Client) {
    Mock::given(method("GET"))
        .and(path(session_path(id)))
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(server)
        .await;
    mount_session(server, id).await;
    let client = builder(server)
        .retry_policy(fast_retries(3))
        .rate_limit(RateLimit::per_hour(100_000).burst(1_000))
        .build()
        .unwrap();
    let clone = client.clone();
    (client, clone)
}

#[test]
fn item_9_a_burst_the_limiter_cannot_represent_is_a_config_error() {
    for limit in [
        RateLimit::per_hour(1).burst(5_200_000),
        RateLimit::new(1, Duration::from_secs(365 * 24 * 3600)).burst(u32::MAX),
    ] {
        // Neither the limiter nor the builder panics (governor's arithmetic would overflow)...
        let built = ClientBuilder::default()
            .base_url("http://127.0.0.1:9")
            .rate_limit(limit)
            .build();
        // ...and the build says what is wrong.
        match built {
            Err(creditdata_client::Error::Config(message)) => {
                assert!(message.contains("burst"), "{message}");
            }
            other => panic!("expected a Config error, got {:?}", other.map(|_| ())),
        }
        let shared = RateLimiter::new(limit);
        assert!(
            ClientBuilder::default()
                .base_url("http://127.0.0.1:9")
                .rate_limiter(shared)
                .build()
                .is_err()
        );
    }
    // What it can represent is built as before.
    ClientBuilder::default()
        .base_url("http://127.0.0.1:9")
        .rate_limit(RateLimit::per_hour(1).burst(100_000))
        .build()
        .expect("a representable burst");
}
