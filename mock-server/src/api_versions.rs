//! Which `api-version` each session's requests carried, operation by operation: what the
//! release-day rehearsal compares before and after a regeneration (`GET
//! /_mock/sessions/{sessionId}/api-versions`). The service (an ASP.NET API) serves the version a
//! request asks for, so a header that follows the description's `info.version` changes what
//! every call means; this is where a harness sees it.
//!
//! Only answered requests of a `/v1/sessions/{sessionId}...` route are recorded, so an unknown
//! id records nothing, and what is kept is bounded: [`MAX_SESSIONS`] sessions (the oldest
//! forgotten first), [`MAX_PER_SESSION`] (operation, version) pairs each, versions cut to
//! [`MAX_VERSION_CHARS`] characters.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use uuid::Uuid;

/// Sessions whose requests are kept; the oldest is forgotten when a new one would exceed it.
pub const MAX_SESSIONS: usize = 10_000;
/// Distinct (operation, version) pairs kept per session.
pub const MAX_PER_SESSION: usize = 256;
/// A longer header value is kept cut to this many characters.
pub const MAX_VERSION_CHARS: usize = 64;

/// What the header said when a request carried none.
const NONE: &str = "(none)";

/// (`GET /v1/sessions/{sessionId}/scores`, `1.0`) → how many requests.
type Seen = BTreeMap<(String, String), u64>;

/// The requests seen, per session.
#[derive(Debug, Default)]
pub struct ApiVersions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: HashMap<Uuid, Seen>,
    order: VecDeque<Uuid>,
}

impl ApiVersions {
    /// Counts one answered request of `operation` (`METHOD template`) for `session`.
    pub fn record(&self, session: Uuid, operation: &str, version: Option<&str>) {
        let version: String = version
            .unwrap_or(NONE)
            .chars()
            .take(MAX_VERSION_CHARS)
            .collect();
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Inner { sessions, order } = &mut *inner;
        if !sessions.contains_key(&session) {
            if order.len() >= MAX_SESSIONS
                && let Some(oldest) = order.pop_front()
            {
                sessions.remove(&oldest);
            }
            order.push_back(session);
        }
        let seen = sessions.entry(session).or_default();
        let key = (operation.to_owned(), version);
        if let Some(count) = seen.get_mut(&key) {
            *count += 1;
        } else if seen.len() < MAX_PER_SESSION {
            seen.insert(key, 1);
        }
    }

    /// What `session`'s requests carried: `[{operation, apiVersion, requests}]`, sorted.
    pub fn of(&self, session: Uuid) -> Value {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let seen = inner.sessions.get(&session);
        let list: Vec<Value> = seen
            .into_iter()
            .flatten()
            .map(|((operation, version), count)| {
                json!({ "operation": operation, "apiVersion": version, "requests": count })
            })
            .collect();
        json!({ "sessionId": session, "requests": list })
    }

    /// Forgets everything (with the sessions, on `/_mock/reset`).
    pub fn clear(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.sessions.clear();
        inner.order.clear();
    }
}

/// The session a `/v1/sessions/{id}...` path is about.
fn session_of(path: &str) -> Option<Uuid> {
    let rest = path.strip_prefix("/v1/sessions/")?;
    let id = rest.split('/').next()?;
    Uuid::parse_str(id).ok()
}

/// A route layer of the `/v1` API: records the `api-version` of each answered request about a
/// session.
pub async fn record(
    State(seen): State<Arc<ApiVersions>>,
    request: Request,
    next: Next,
) -> Response {
    let session = session_of(request.uri().path());
    let operation = request
        .extensions()
        .get::<MatchedPath>()
        .map(|matched| format!("{} {}", request.method(), matched.as_str()));
    let version = request
        .headers()
        .get("api-version")
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let response = next.run(request).await;
    if let (Some(session), Some(operation)) = (session, operation)
        && response.status().is_success()
    {
        seen.record(session, &operation, version.as_deref());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_per_session_operation_and_version_within_bounds() {
        let seen = ApiVersions::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let scores = "GET /v1/sessions/{sessionId}/scores";
        seen.record(a, scores, Some("1.0"));
        seen.record(a, scores, Some("1.0"));
        seen.record(a, scores, Some("1.1"));
        seen.record(a, "GET /v1/sessions/{sessionId}", None);
        seen.record(b, scores, Some(&"9".repeat(500)));
        let of_a = seen.of(a);
        assert_eq!(
            of_a["requests"],
            json!([
                {"operation": "GET /v1/sessions/{sessionId}", "apiVersion": "(none)", "requests": 1},
                {"operation": scores, "apiVersion": "1.0", "requests": 2},
                {"operation": scores, "apiVersion": "1.1", "requests": 1},
            ])
        );
        assert_eq!(
            seen.of(b)["requests"][0]["apiVersion"]
                .as_str()
                .unwrap()
                .len(),
            MAX_VERSION_CHARS
        );
        for n in 0..(MAX_PER_SESSION + 10) {
            seen.record(b, &format!("GET /x/{n}"), Some("1.0"));
        }
        assert_eq!(
            seen.of(b)["requests"].as_array().unwrap().len(),
            MAX_PER_SESSION
        );
        seen.clear();
        assert_eq!(seen.of(a)["requests"], json!([]));
    }

    #[test]
    fn only_session_paths_name_a_session() {
        let id = Uuid::from_u128(7);
        assert_eq!(session_of(&format!("/v1/sessions/{id}/scores")), Some(id));
        assert_eq!(session_of(&format!("/v1/sessions/{id}")), Some(id));
        assert_eq!(session_of("/v1/sessions"), None);
        assert_eq!(session_of("/v1/sessions/not-an-id/scores"), None);
        assert_eq!(session_of("/v1/consumer-packages"), None);
    }
}
