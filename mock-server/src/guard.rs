//! What keeps a web page from driving the mock: every request must name the mock as its `Host`
//! (a page that rebinds its own DNS name to 127.0.0.1 sends its own name), and the `/_mock`
//! control endpoints, which need no token, refuse what a browser sends on behalf of another
//! site: a foreign `Origin`, a cross-site `Sec-Fetch-Site`, and any POST a page can send
//! without a CORS preflight.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::config::{AllowedHost, parse_port, split_authority};
use crate::problem::Problem;

/// The header a tool sends to show that a control request does not come from a web page (a
/// page cannot add it without a CORS preflight, which the mock never grants).
pub const CONTROL_HEADER: &str = "x-creditdata-mock";

/// The `Host` values (and origins) the mock answers to.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    port: u16,
    /// Names allowed on the listening port.
    listening: Vec<String>,
    configured: Vec<AllowedHost>,
}

impl HostPolicy {
    /// The loopback names on the listening port, the bound address itself (unless it is the
    /// unspecified address), and the configured names.
    pub fn new(bound: SocketAddr, configured: Vec<AllowedHost>) -> Self {
        let mut listening = vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
            "[::1]".to_owned(),
        ];
        match bound.ip() {
            ip if ip.is_unspecified() || ip.is_loopback() => {}
            IpAddr::V4(ip) => listening.push(ip.to_string()),
            IpAddr::V6(ip) => listening.push(format!("[{ip}]")),
        }
        HostPolicy {
            port: bound.port(),
            listening,
            configured,
        }
    }

    /// Whether `authority` (`host[:port]`; a missing port is `default_port`) names the mock.
    pub fn allows(&self, authority: &str, default_port: u16) -> bool {
        let Some((host, port)) = split_authority(authority) else {
            return false;
        };
        let port = match port {
            None => default_port,
            Some(port) => match parse_port(port) {
                Some(port) => port,
                None => return false,
            },
        };
        let host = host.to_ascii_lowercase();
        let listening = port == self.port && self.listening.contains(&host);
        listening
            || self.configured.iter().any(|allowed| {
                allowed.host == host && allowed.port.is_none_or(|allowed| allowed == port)
            })
    }

    /// Whether `origin` (`scheme://authority`) is the mock's own.
    fn allows_origin(&self, origin: &str) -> bool {
        let (authority, default_port) = if let Some(rest) = origin.strip_prefix("http://") {
            (rest, 80)
        } else if let Some(rest) = origin.strip_prefix("https://") {
            (rest, 443)
        } else {
            return false;
        };
        self.allows(authority, default_port)
    }

    fn names(&self) -> String {
        let mut names: Vec<String> = self
            .listening
            .iter()
            .map(|host| format!("{host}:{}", self.port))
            .collect();
        names.extend(self.configured.iter().map(|allowed| match allowed.port {
            Some(port) => format!("{}:{port}", allowed.host),
            None => allowed.host.clone(),
        }));
        names.join(", ")
    }
}

/// The authority the request is addressed to: `Host` (HTTP/1.1), else the URI's (HTTP/2).
fn requested_authority(request: &Request) -> Option<String> {
    match request.headers().get(header::HOST) {
        Some(value) => value.to_str().ok().map(str::to_owned),
        None => request.uri().authority().map(|a| a.as_str().to_owned()),
    }
}

/// Axum middleware: refuses (400) a request whose `Host` is not the mock.
pub async fn refuse_foreign_hosts(
    State(policy): State<Arc<HostPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    match requested_authority(&request) {
        Some(authority) if policy.allows(&authority, 80) => next.run(request).await,
        requested => {
            // Debug level: anyone can send these, and a page retrying them must not flood the
            // log. Quoted with Debug so that a hostile value cannot break the log line.
            tracing::debug!(host = ?requested, "refused a request for another host");
            Problem::bad_request(format!(
                "The Host header does not name this mock server; it answers to {}. Start it \
                 with --allowed-host NAME to reach it under another name.",
                policy.names()
            ))
            .into_response()
        }
    }
}

/// Axum middleware for the `/_mock` routes: refuses (403) what a web page can send.
pub async fn refuse_cross_site(
    State(policy): State<Arc<HostPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    match cross_site_refusal(&policy, request.method(), request.headers()) {
        None => next.run(request).await,
        Some(reason) => Problem::forbidden(format!(
            "{reason} Control endpoints accept requests from tools, not from web pages: send the \
             header `X-Creditdata-Mock: 1` (or a JSON body with `Content-Type: \
             application/json`), and no Origin of another site."
        ))
        .into_response(),
    }
}

fn cross_site_refusal(policy: &HostPolicy, method: &Method, headers: &HeaderMap) -> Option<String> {
    let text = |name: &str| {
        headers
            .get(name)
            .map(|value| value.to_str().unwrap_or("(not text)"))
    };
    if let Some(origin) = text(header::ORIGIN.as_str())
        && !policy.allows_origin(origin)
    {
        return Some(format!(
            "The request comes from another origin ({origin:?})."
        ));
    }
    if let Some(site) = text("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Some(format!("The browser marks the request as {site:?}."));
    }
    if method == Method::POST && !headers.contains_key(CONTROL_HEADER) {
        let content_type = text(header::CONTENT_TYPE.as_str());
        if content_type.is_none_or(is_cors_safelisted_content_type) {
            return Some(
                "A POST without a JSON body or the control header is what any web page can send."
                    .to_owned(),
            );
        }
    }
    None
}

/// The content types a page may send cross-site without a preflight (Fetch standard).
fn is_cors_safelisted_content_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or("").trim();
    [
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "text/plain",
    ]
    .iter()
    .any(|simple| essence.eq_ignore_ascii_case(simple))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> HostPolicy {
        HostPolicy::new(
            "127.0.0.1:8080".parse().expect("address"),
            vec![
                "mock.internal".parse().expect("name"),
                "[fd00::1]:9000".parse().expect("v6"),
            ],
        )
    }

    #[test]
    fn hosts_are_the_listening_address_or_configured() {
        let policy = policy();
        for host in [
            "127.0.0.1:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
            "mock.internal",
            "mock.internal:1234",
            "[fd00::1]:9000",
        ] {
            assert!(policy.allows(host, 80), "{host}");
        }
        for host in [
            "127.0.0.1",
            "127.0.0.1:8081",
            "127.0.0.1:08080x",
            "127.0.0.1:+8080",
            "evil.example:8080",
            "localhost.:8080",
            "user@localhost:8080",
            "[::1]8080",
            "[fd00::1]:9001",
            "",
        ] {
            assert!(!policy.allows(host, 80), "{host}");
        }
        let everywhere = HostPolicy::new("0.0.0.0:80".parse().expect("address"), vec![]);
        assert!(everywhere.allows("localhost", 80));
        assert!(!everywhere.allows("0.0.0.0", 80));
        let lan = HostPolicy::new("192.168.1.5:8080".parse().expect("address"), vec![]);
        assert!(lan.allows("192.168.1.5:8080", 80));
    }

    #[test]
    fn origins_must_be_the_mock() {
        let policy = policy();
        assert!(policy.allows_origin("http://127.0.0.1:8080"));
        assert!(policy.allows_origin("https://mock.internal"));
        assert!(!policy.allows_origin("http://localhost:3000"));
        assert!(!policy.allows_origin("null"));
        assert!(!policy.allows_origin("file://"));
    }

    #[test]
    fn only_preflighted_posts_pass() {
        let policy = policy();
        let with = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().expect("value"));
            }
            headers
        };
        let post = Method::POST;
        assert!(cross_site_refusal(&policy, &post, &with(&[])).is_some());
        assert!(
            cross_site_refusal(&policy, &post, &with(&[("content-type", "Text/Plain")])).is_some()
        );
        assert!(
            cross_site_refusal(
                &policy,
                &post,
                &with(&[("content-type", "application/json")])
            )
            .is_none()
        );
        assert!(cross_site_refusal(&policy, &post, &with(&[(CONTROL_HEADER, "1")])).is_none());
        // Never simple, so a page needs a preflight for them anyway.
        assert!(cross_site_refusal(&policy, &Method::DELETE, &with(&[])).is_none());
        assert!(
            cross_site_refusal(
                &policy,
                &Method::DELETE,
                &with(&[("origin", "http://evil.example")])
            )
            .is_some()
        );
    }
}
