//! The client against a hostile network: a service, an identity provider or a proxy that
//! redirects, lies, floods or echoes personal data. One group of tests per item of the
//! "Trust" issue (items 1–10), each named after its item. Every server is a wiremock or raw TCP
//! fake on 127.0.0.1:0; nothing leaves loopback (where a test needs a host name that is not
//! loopback, the HTTP client resolves it to a loopback listener). The shared fakes and helpers
//! are here, the tests in one module per topic.

mod bodies;
mod identity_provider;
mod ids_and_paging;
mod personal_data;
mod redirects;
mod waits_and_files;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::support::*;
use creditdata_client::auth::{AuthError, AuthErrorKind, Credentials, TokenEndpoint};
use creditdata_client::download::DownloadExt;
use creditdata_client::paging::SessionFilter;
use creditdata_client::types::CustomerProgressStatus;
use creditdata_client::wait::WaitOptions;
use creditdata_client::{Client, ClientBuilder, Error};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uuid::Uuid;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

const CLIENT_SECRET: &str = "client-secret-value";

/// The error of an operation that needed a token and could not get one.
fn auth_error(error: Error) -> AuthError {
    match error {
        Error::Auth { source, .. } => source,
        other => panic!("expected an authentication error, got {other:?}"),
    }
}

/// Every request `server` received, as `METHOD path`.
async fn received(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| format!("{} {}", r.method, r.url.path()))
        .collect()
}

/// A client of `server` whose client credentials go to `token_url`, without retries.
fn oauth_client(server: &MockServer, token_url: String) -> Client {
    Client::builder()
        .base_url(server.uri())
        .no_retries()
        .client_credentials(token_url, "client-id", CLIENT_SECRET)
        .build()
        .unwrap()
}

/// A client of `server` that finds its token endpoint through discovery at `issuer`, without
/// retries.
fn issuer_builder(server: &MockServer, issuer: String) -> ClientBuilder {
    Client::builder()
        .base_url(server.uri())
        .no_retries()
        .credentials(Credentials::client_credentials(
            TokenEndpoint::Issuer(issuer),
            "client-id",
            CLIENT_SECRET,
        ))
}

/// Reads the test session, which must succeed.
async fn fetch_session(client: &Client) {
    let session = crate::support::session(client).await;
    assert_eq!(session.id, session_id());
}

/// Reads up to the end of a request's head (bodies of the requests under test are small and
/// ignored).
async fn read_request_head(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buffer[..n]);
    }
    Some(seen)
}
