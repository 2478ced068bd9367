//! The shared rate limit (feature `shared-rate-limit`) against a real `redis-server` of the test's
//! own (loopback, temporary directory, stopped at the end) and the in-process mock, which counts
//! what it admitted and refused. Counts and states, never durations. Without `redis-server` the
//! tests skip, saying so, unless `CREDITDATA_REQUIRE_REDIS` is set (CI).

use std::net::TcpListener;
use std::time::Duration;

use creditdata_client::rate_limit::{RateLimit, RateLimitStore};
use creditdata_client::{Client, ClientBuilder};
use creditdata_mock::local_redis::LocalRedis;
use creditdata_mock::realism::{RateLimit as ServiceLimit, Realism};
use creditdata_mock::{MockConfig, MockServer};
use futures::future::join_all;
use serde_json::Value;

use crate::support::{Captured, capturing_subscriber, fast_retries};

const CLIENT_ID: &str = "fleet-client-7c1e";
const CLIENT_SECRET: &str = "fleet-secret-4b9d0e";
const SUBJECT_EMAIL: &str = "ines.private-9f3@example.com";

async fn mock(realism: Realism) -> MockServer {
    MockServer::start(MockConfig {
        realism,
        client_id: CLIENT_ID.to_string(),
        client_secret: CLIENT_SECRET.to_string(),
        ..MockConfig::immediate()
    })
    .await
    .expect("the mock starts")
}

fn builder(mock: &MockServer) -> ClientBuilder {
    Client::builder()
        .base_url(mock.base_url())
        .client_credentials(mock.token_url(), mock.client_id(), mock.client_secret())
        .retry_policy(fast_retries(8))
}

/// What the mock's rate limit admitted and refused so far.
async fn counted(mock: &MockServer) -> (u64, u64) {
    let realism: Value = reqwest::Client::new()
        .get(format!("{}/_mock/realism", mock.base_url()))
        .header(creditdata_mock::CONTROL_HEADER, "1")
        .send()
        .await
        .expect("the mock answers")
        .json()
        .await
        .expect("JSON");
    let count = |what: &str| realism["rateLimit"][what].as_u64().expect(what);
    (count("admitted"), count("refused"))
}

/// `calls` reads of the packages each, by every client at once; every call must succeed.
async fn calls_by_all(clients: &[Client], calls: usize) {
    join_all(clients.iter().map(|client| async move {
        for _ in 0..calls {
            client
                .get_consumer_packages()
                .call()
                .await
                .expect("the call succeeds");
        }
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_sharing_one_limit_never_exceed_it_together() {
    let Some(redis) = LocalRedis::start_or_skip("two_clients_sharing_one_limit") else {
        return;
    };
    // The service: 20 requests a second, a bucket of 5. Each client is told the whole limit.
    let service = ServiceLimit::per_second(20).with_burst(5);
    let limit = RateLimit::per_second(20).burst(1);
    let store = RateLimitStore::redis(&redis.url()).unwrap();

    // Each process on its own: together twice the limit, which the mock refuses.
    let alone = mock(Realism::new().rate_limit(service)).await;
    let clients: Vec<Client> = (0..2)
        .map(|_| builder(&alone).rate_limit(limit).build().unwrap())
        .collect();
    calls_by_all(&clients, 30).await;
    let (_, refused_alone) = counted(&alone).await;
    assert!(
        refused_alone > 0,
        "two clients each at the full limit overrun it (the test can fail)"
    );

    // Sharing it through the store: never a 429.
    let shared = mock(Realism::new().rate_limit(service)).await;
    let clients: Vec<Client> = (0..2)
        .map(|_| {
            builder(&shared)
                .rate_limit(limit)
                .rate_limit_store(store.clone())
                .build()
                .unwrap()
        })
        .collect();
    calls_by_all(&clients, 30).await;
    let (admitted, refused) = counted(&shared).await;
    assert_eq!(
        (admitted, refused),
        (60, 0),
        "every request admitted, none refused"
    );
    for client in &clients {
        let status = client.rate_limiter().unwrap().store_status().unwrap();
        assert!(status.shared, "{status:?}");
        assert_eq!(status.shared_admissions, 30, "{status:?}");
        assert_eq!(status.replicas_seen, 2, "{status:?}");
        assert_eq!(status.outages, 0, "{status:?}");
    }
    // Both named the same limit: every key the store holds is under its name.
    let namespaces: Vec<String> = clients
        .iter()
        .map(|c| c.rate_limiter().unwrap().store().unwrap().1.to_string())
        .collect();
    assert_eq!(namespaces[0], namespaces[1]);
    for (key, _) in redis.dump_everything().unwrap() {
        assert!(String::from_utf8_lossy(&key).starts_with(&namespaces[0]));
    }
}

#[tokio::test]
async fn the_store_killed_mid_run_calls_go_on_one_warning_then_back_to_shared() {
    let Some(mut redis) = LocalRedis::start_or_skip("the_store_killed_mid_run") else {
        return;
    };
    let captured = Captured::default();
    let _logs =
        tracing::subscriber::set_default(capturing_subscriber(&captured, "creditdata_client=info"));
    let mock = mock(Realism::new()).await;
    let client = builder(&mock)
        .rate_limit(RateLimit::per_second(200).burst(10))
        .rate_limit_store(RateLimitStore::redis(&redis.url()).unwrap())
        .build()
        .unwrap();
    let limiter = client.rate_limiter().unwrap();
    calls_by_all(std::slice::from_ref(&client), 10).await;
    assert_eq!(limiter.store_status().unwrap().shared_admissions, 10);

    redis.stop();
    calls_by_all(std::slice::from_ref(&client), 30).await;
    let down = limiter.store_status().unwrap();
    assert!(!down.shared, "{down:?}");
    assert_eq!(down.outages, 1, "{down:?}");
    assert!(down.local_admissions >= 1, "{down:?}");
    assert_eq!(
        down.fallback_per_second, 200.0,
        "the last answer counted this replica alone: its share is the whole limit"
    );
    let warnings = |text: &str| text.matches(" WARN ").count();
    assert_eq!(warnings(&captured.text()), 1, "{}", captured.text());

    redis.restart().unwrap();
    // Calls go on while the store is probed with backoff (well under a second here); it is
    // used again once it answers. Bounded by a count, not a clock.
    let mut calls = 0;
    while !limiter.store_status().unwrap().shared {
        assert!(calls < 2_000, "never back to the shared limit");
        client
            .get_consumer_packages()
            .call()
            .await
            .expect("the call succeeds");
        calls += 1;
    }
    let back = limiter.store_status().unwrap();
    assert_eq!(back.outages, 1, "{back:?}");
    let text = captured.text();
    assert_eq!(warnings(&text), 1, "one warning for the outage: {text}");
    assert!(text.contains("back to the shared limit"), "{text}");
    calls_by_all(std::slice::from_ref(&client), 5).await;
    assert!(limiter.store_status().unwrap().shared_admissions > back.shared_admissions);
}

#[tokio::test]
async fn a_store_that_never_answers_costs_its_timeout_once_and_calls_go_on() {
    // A peer that accepts connections and never says a word: slow, not refusing.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let mock = mock(Realism::new()).await;
    let client = builder(&mock)
        .rate_limit(RateLimit::per_second(500).burst(10))
        .rate_limit_store(
            RateLimitStore::redis(&format!("redis://127.0.0.1:{port}/0"))
                .unwrap()
                .timeout(Duration::from_millis(50)),
        )
        .build()
        .unwrap();
    calls_by_all(std::slice::from_ref(&client), 20).await;
    let status = client.rate_limiter().unwrap().store_status().unwrap();
    assert!(!status.shared, "{status:?}");
    assert_eq!(status.outages, 1, "{status:?}");
    assert_eq!(status.shared_admissions, 0, "{status:?}");
    assert_eq!(status.local_admissions, 20, "{status:?}");
    drop(silent);
}

#[tokio::test]
async fn no_client_id_secret_token_or_personal_data_in_any_key_or_value() {
    let password = "redis-pa55-6d2c";
    let Some(redis) =
        LocalRedis::start_with_password_or_skip("no_secret_in_the_store", Some(password))
    else {
        return;
    };
    let mock = mock(Realism::new()).await;
    let client = builder(&mock)
        .rate_limit(RateLimit::per_second(500).burst(10))
        .rate_limit_store(RateLimitStore::redis(&redis.url()).unwrap())
        .build()
        .unwrap();
    let request = creditdata_client::types::CreateSessionRequest::builder()
        .subject_email(SUBJECT_EMAIL)
        .query_parameters(vec![
            creditdata_client::types::QueryParameterInput::builder()
                .country_code("GBR")
                .data_packages(creditdata_client::types::DataPackageInput::ALL.to_vec())
                .build()
                .unwrap(),
        ]);
    let session = client.create_session().body(request).call().await.unwrap();
    client
        .get_session()
        .session_id(session.id)
        .call()
        .await
        .unwrap();
    let token =
        secrecy::ExposeSecret::expose_secret(&client.access_token().await.unwrap()).to_string();
    let status = client.rate_limiter().unwrap().store_status().unwrap();
    assert_eq!(
        status.shared_admissions, 2,
        "the store was used: {status:?}"
    );

    let everything = redis.dump_everything().unwrap();
    assert!(!everything.is_empty());
    let base = mock.base_url().to_string();
    let id = session.id.to_string();
    let forbidden = [
        CLIENT_ID,
        CLIENT_SECRET,
        SUBJECT_EMAIL,
        password,
        token.as_str(),
        base.as_str(),
        id.as_str(),
    ];
    for (key, value) in &everything {
        for text in forbidden {
            for (what, bytes) in [("key", key), ("value", value)] {
                assert!(
                    !contains(bytes, text.as_bytes()),
                    "a {what} holds {text:?}: {}",
                    String::from_utf8_lossy(key)
                );
            }
        }
        assert!(
            String::from_utf8_lossy(key).starts_with(&status.namespace),
            "{}",
            String::from_utf8_lossy(key)
        );
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn the_store_password_is_never_printed() {
    let password = "redis-pa55-91fa";
    let Some(redis) = LocalRedis::start_with_password_or_skip("the_store_password", Some(password))
    else {
        return;
    };
    let captured = Captured::default();
    let _logs = tracing::subscriber::set_default(capturing_subscriber(
        &captured,
        "creditdata_client=debug",
    ));
    let mock = mock(Realism::new()).await;
    let wrong = redis.url().replace(password, "not-the-pa55-word");
    let mut shown = Vec::new();
    for url in [redis.url(), wrong] {
        let store = RateLimitStore::redis(&url).unwrap();
        shown.push(format!("{store} {store:?}"));
        let builder = builder(&mock)
            .rate_limit(RateLimit::per_second(500).burst(10))
            .rate_limit_store(store);
        shown.push(format!("{builder:?}"));
        let client = builder.build().unwrap();
        calls_by_all(std::slice::from_ref(&client), 3).await;
        let limiter = client.rate_limiter().unwrap();
        shown.push(format!(
            "{client:?} {limiter:?} {:?}",
            limiter.store_status()
        ));
    }
    // From the environment too, and its refusals.
    let env_error = ClientBuilder::from_env_with(|name| match name {
        "CREDITDATA_ENVIRONMENT" => Some("mock".into()),
        "CREDITDATA_RATE_LIMIT_STORE" => Some(format!("http://:{password}@127.0.0.1:1/0")),
        _ => None,
    })
    .unwrap_err();
    shown.push(env_error.to_string());
    let no_limit = ClientBuilder::from_env_with(|name| match name {
        "CREDITDATA_ENVIRONMENT" => Some("mock".into()),
        "CREDITDATA_TOKEN" => Some("a-token".into()),
        "CREDITDATA_RATE_LIMIT_STORE" => Some(redis.url()),
        _ => None,
    })
    .unwrap()
    .build()
    .unwrap_err();
    shown.push(no_limit.to_string());
    let text = format!("{}\n{}", shown.join("\n"), captured.text());
    assert!(text.contains("[redacted]@127.0.0.1"), "{text}");
    assert!(
        text.contains("AuthenticationFailed"),
        "the refusal is said: {text}"
    );
    assert!(!text.contains(password), "{text}");
    assert!(!text.contains("not-the-pa55-word"), "{text}");
}

#[test]
fn a_store_needs_a_limit_and_a_named_client() {
    let store = || RateLimitStore::redis("redis://127.0.0.1:1/0").unwrap();
    let refusal = |builder: ClientBuilder| match builder.build() {
        Err(creditdata_client::Error::Config(message)) => message,
        other => panic!("expected a Config error, got {:?}", other.map(|_| ())),
    };
    let base = || Client::builder().base_url("http://127.0.0.1:9");
    let message = refusal(
        base()
            .client_credentials("http://127.0.0.1:9/t", "id", "s")
            .rate_limit_store(store()),
    );
    assert!(message.contains("no rate limit to share"), "{message}");
    let message = refusal(
        base()
            .bearer_token("a-token")
            .rate_limit(RateLimit::per_second(5))
            .rate_limit_store(store()),
    );
    assert!(message.contains("rate_limit_name"), "{message}");
    let message = refusal(
        base()
            .client_credentials("http://127.0.0.1:9/t", "id", "s")
            .rate_limiter(creditdata_client::rate_limit::RateLimiter::new(
                RateLimit::per_second(5),
            ))
            .rate_limit_store(store()),
    );
    assert!(message.contains("RateLimiter::shared"), "{message}");
    // Named, a bearer token shares a limit too; credentials name it by themselves.
    for builder in [
        base()
            .bearer_token("a-token")
            .rate_limit_name("underwriting"),
        base().client_credentials("http://127.0.0.1:9/t", "id", "s"),
    ] {
        let client = builder
            .rate_limit(RateLimit::per_second(5))
            .rate_limit_store(store().prefix("bank-a"))
            .build()
            .unwrap();
        let (_, namespace) = client.rate_limiter().unwrap().store().unwrap();
        assert!(namespace.starts_with("bank-a:{"), "{namespace}");
    }
}

#[test]
fn the_store_comes_from_the_environment() {
    let client = ClientBuilder::from_env_with(|name| match name {
        "CREDITDATA_ENVIRONMENT" => Some("mock".into()),
        "CREDITDATA_CLIENT_ID" => Some("id".into()),
        "CREDITDATA_CLIENT_SECRET" => Some("secret".into()),
        "CREDITDATA_TOKEN_URL" => Some("http://127.0.0.1:9/token".into()),
        "CREDITDATA_RATE_LIMIT" => Some("50/s".into()),
        "CREDITDATA_RATE_LIMIT_STORE" => Some("rediss://:pw@cache.internal:6380/3".into()),
        "CREDITDATA_RATE_LIMIT_PREFIX" => Some("fleet".into()),
        _ => None,
    })
    .unwrap()
    .build()
    .unwrap();
    let (store, namespace) = client.rate_limiter().unwrap().store().unwrap();
    assert_eq!(
        store.shown_url(),
        "rediss://[redacted]@cache.internal:6380/3"
    );
    assert!(namespace.starts_with("fleet:{"), "{namespace}");
}
