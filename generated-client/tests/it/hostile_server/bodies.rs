//! The hostile-network tests of item 7: bounded memory against any body, and a body that breaks off half-way.

use super::*;

// ---------------------------------------------------------------------------------------------
// Item 7: bounded memory against any body.
// ---------------------------------------------------------------------------------------------

/// What an endless-body server stops at if nobody stops reading (a real hostile server would
/// go on): far more than any limit under test, small enough for a shared test machine.
const FLOOD_CAP: u64 = 48 * 1024 * 1024;

/// Bytes a reader that stopped at its limit can have let through: the limit, the HTTP
/// client's buffers and the loopback socket's buffers. Well under [`FLOOD_CAP`].
const STOPPED_READER_BOUND: u64 = 24 * 1024 * 1024;

/// A raw HTTP/1.1 server answering every request with `head` and then `prefix` followed by
/// `filler` repeated, chunked (or after a `Content-Length` the head declares), until
/// [`FLOOD_CAP`] bytes or until the client stops reading. Returns its address and the count of
/// body bytes it managed to write.
async fn flooding_server(
    head: &'static str,
    chunked: bool,
    prefix: &'static [u8],
    filler: &'static [u8],
) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let written = Arc::new(AtomicU64::new(0));
    let counter = written.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                if read_request_head(&mut socket).await.is_none() {
                    return;
                }
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let block: Vec<u8> = filler.repeat((64 * 1024 / filler.len()).max(1));
                let mut first = true;
                while counter.load(Ordering::Relaxed) < FLOOD_CAP {
                    let data: &[u8] = if first { prefix } else { &block };
                    first = false;
                    let mut frame = Vec::with_capacity(data.len() + 16);
                    if chunked {
                        frame.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
                    }
                    frame.extend_from_slice(data);
                    if chunked {
                        frame.extend_from_slice(b"\r\n");
                    }
                    if socket.write_all(&frame).await.is_err() {
                        return;
                    }
                    counter.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    (addr, written)
}

const CHUNKED_JSON: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";

#[tokio::test]
async fn item_07_an_endless_json_body_ends_in_a_typed_error() {
    let (addr, written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"sessions\":[",
        b"{\"id\":\"00000000-0000-0000-0000-000000000000\"},",
    )
    .await;
    let limit = 1024 * 1024;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .max_response_body(limit)
        .build()
        .unwrap();
    let error = client.get_sessions().call().await.unwrap_err();
    let Error::ResponseTooLarge {
        operation,
        limit: reported,
        ..
    } = &error
    else {
        panic!("expected ResponseTooLarge, got {error:?}")
    };
    assert_eq!(*operation, Some("GetSessions"));
    assert_eq!(*reported, limit);
    assert!(rendered(&error).contains("1048576"), "{error}");
    let sent = written.load(Ordering::Relaxed);
    assert!(sent < STOPPED_READER_BOUND, "the client read {sent} bytes");
}

#[tokio::test]
async fn item_07_a_declared_length_over_the_limit_is_refused_unread() {
    let (addr, written) = flooding_server(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10737418240\r\n\r\n",
        false,
        b"{\"sessions\":[",
        b"{\"id\":\"00000000-0000-0000-0000-000000000000\"},",
    )
    .await;
    let client = Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .no_retries()
        .max_response_body(1024 * 1024)
        .build()
        .unwrap();
    let error = client.get_sessions().call().await.unwrap_err();
    assert!(matches!(error, Error::ResponseTooLarge { .. }), "{error:?}");
    assert!(written.load(Ordering::Relaxed) < STOPPED_READER_BOUND);
}

#[tokio::test]
async fn item_07_token_and_discovery_bodies_are_bounded() {
    let (token_addr, token_written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"token_type\":\"Bearer\",\"access_token\":\"",
        b"aaaaaaaaaaaaaaaa",
    )
    .await;
    let (issuer_addr, discovery_written) = flooding_server(
        CHUNKED_JSON,
        true,
        b"{\"grant_types_supported\":[",
        b"\"x\",",
    )
    .await;
    for (endpoint, written) in [
        (
            TokenEndpoint::Url(format!("http://{token_addr}/token")),
            token_written,
        ),
        (
            TokenEndpoint::Issuer(format!("http://{issuer_addr}")),
            discovery_written,
        ),
    ] {
        let client = Client::builder()
            .base_url("http://127.0.0.1:9")
            .no_retries()
            .credentials(Credentials::client_credentials(
                endpoint.clone(),
                "client-id",
                CLIENT_SECRET,
            ))
            .build()
            .unwrap();
        let auth = auth_error(client.get_consumer_packages().call().await.unwrap_err());
        assert!(
            matches!(
                auth.kind,
                AuthErrorKind::InvalidResponse | AuthErrorKind::Discovery
            ),
            "{endpoint:?}: {auth}"
        );
        assert!(
            rendered(&auth).contains("larger than"),
            "{endpoint:?}: {auth}"
        );
        let sent = written.load(Ordering::Relaxed);
        assert!(
            sent < STOPPED_READER_BOUND,
            "{endpoint:?}: read {sent} bytes"
        );
    }
}

/// How a fake answer's body breaks off.
#[derive(Clone, Copy)]
enum CutOff {
    /// A `Content-Length` for the whole body, half of it sent, then the connection closed.
    DeclaredLength,
    /// A chunked body whose first half is one chunk, then the connection closed without the
    /// last chunk.
    Chunked,
}

/// A raw HTTP/1.1 server whose first `broken` answers are the session's JSON cut off half-way
/// as `cut` says, and every later one the whole session. Returns its address and the count of
/// requests it received.
async fn breaking_off_server(broken: u64, cut: CutOff) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicU64::new(0));
    let counter = requests.clone();
    let body = serde_json::to_vec(&session_json(session_id())).unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            let body = body.clone();
            tokio::spawn(async move {
                if read_request_head(&mut socket).await.is_none() {
                    return;
                }
                let seen = counter.fetch_add(1, Ordering::Relaxed);
                let half = &body[..body.len() / 2];
                let answer = match (seen < broken, cut) {
                    (false, _) => [
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\nconnection: close\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                        &body,
                    ]
                    .concat(),
                    (true, CutOff::DeclaredLength) => [
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\n\r\n",
                            body.len()
                        )
                        .as_bytes(),
                        half,
                    ]
                    .concat(),
                    (true, CutOff::Chunked) => [
                        CHUNKED_JSON.as_bytes(),
                        format!("{:x}\r\n", half.len()).as_bytes(),
                        half,
                        b"\r\n",
                    ]
                    .concat(),
                };
                let _ = socket.write_all(&answer).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (addr, requests)
}

fn client_of(addr: SocketAddr) -> Client {
    Client::builder()
        .base_url(format!("http://{addr}"))
        .bearer_token("t")
        .retry_policy(creditdata_client::retry::RetryPolicy {
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            ..creditdata_client::retry::RetryPolicy::default()
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_json_body_cut_off_half_way_is_retried_and_counted() {
    for cut in [CutOff::DeclaredLength, CutOff::Chunked] {
        let (addr, requests) = breaking_off_server(1, cut).await;
        let client = client_of(addr);
        let answer = client
            .get_session()
            .session_id(session_id())
            .call_with_response()
            .await
            .expect("the second attempt gets the whole body");
        assert_eq!(answer.body.id, session_id());
        assert_eq!(answer.attempts, 2, "the broken attempt is counted");
        assert_eq!(requests.load(Ordering::Relaxed), 2);
    }
}

#[tokio::test]
async fn a_body_that_keeps_breaking_off_ends_in_a_transport_error_after_the_policy() {
    let (addr, requests) = breaking_off_server(u64::MAX, CutOff::DeclaredLength).await;
    let client = client_of(addr);
    let error = client
        .get_session()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    let attempts = creditdata_client::retry::RetryPolicy::default().max_attempts;
    assert!(
        matches!(&error, Error::Transport { operation: Some("GetSession"), attempts: a, .. } if *a == attempts),
        "{error:?}"
    );
    assert_eq!(requests.load(Ordering::Relaxed), u64::from(attempts));
}

#[tokio::test]
async fn a_cut_off_answer_to_a_post_is_not_repeated() {
    let (addr, requests) = breaking_off_server(1, CutOff::DeclaredLength).await;
    let client = client_of(addr);
    let error = client
        .resend_customer_notification()
        .session_id(session_id())
        .call()
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Transport { .. }), "{error:?}");
    assert_eq!(
        requests.load(Ordering::Relaxed),
        1,
        "the service acted once"
    );
}
