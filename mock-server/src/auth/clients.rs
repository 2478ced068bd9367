//! The clients the identity provider knows, how they authenticate at the token and revocation
//! endpoints, where they may be sent back to, and the scopes they may ask for.
//!
//! Two clients: the confidential one (`client_id` and `client_secret`: client credentials and
//! the code flow) and the public native one (`public_client_id`, no secret: the code flow with
//! PKCE only, RFC 8252 §8.4).

use std::collections::HashMap;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::oauth::oauth_error;
use crate::config::MockConfig;
pub use crate::idp::ClientKind;
use crate::state::AppState;

/// The scopes a client may ask for, with what the consent page says each one allows.
pub const SCOPES: [(&str, &str); 3] = [
    (
        "openid",
        "Confirm who you are to the application (sign you in)",
    ),
    ("profile", "See your name and user name"),
    ("email", "See your e-mail address"),
];

/// The scope granted when the authorization request names none.
pub const DEFAULT_SCOPE: &str = "openid";

/// The kind of `client_id`, when the provider knows it.
pub fn client_kind(config: &MockConfig, client_id: &str) -> Option<ClientKind> {
    if client_id == config.client_id {
        Some(ClientKind::Confidential)
    } else if client_id == config.public_client_id {
        Some(ClientKind::Public)
    } else {
        None
    }
}

/// What a client showed at the token or revocation endpoint.
#[derive(Debug)]
pub struct AuthenticatedClient {
    /// Its id.
    pub client_id: String,
    /// Its kind.
    pub kind: ClientKind,
}

/// Authenticates the client of a token or revocation request (RFC 6749 §2.3): the
/// confidential client by `client_secret_basic` or `client_secret_post`, the public client by
/// its `client_id` alone (`none`). The error is the response to send.
pub fn authenticate(
    state: &AppState,
    headers: &HeaderMap,
    params: &HashMap<String, String>,
) -> Result<AuthenticatedClient, Box<Response>> {
    let param = |name: &str| params.get(name).map(String::as_str);
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, rest) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("basic").then_some(rest.trim())
        });
    let (client_id, client_secret, used_basic) = match (basic, param("client_secret")) {
        (Some(_), Some(_)) => {
            return Err(Box::new(oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "The client authenticated with both HTTP Basic and client_secret in the body; use one.",
                false,
            )));
        }
        (Some(encoded), None) => match decode_basic(encoded) {
            Some((id, secret)) => (id, secret, true),
            None => {
                return Err(Box::new(oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "The HTTP Basic credentials are not base64 of `client_id:client_secret`.",
                    true,
                )));
            }
        },
        (None, Some(secret)) => match param("client_id") {
            Some(id) => (id.to_owned(), secret.to_owned(), false),
            None => {
                return Err(Box::new(oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "Missing form parameter: client_id",
                    false,
                )));
            }
        },
        (None, None) => {
            return match param("client_id") {
                Some(id) if id == state.config.public_client_id => Ok(AuthenticatedClient {
                    client_id: id.to_owned(),
                    kind: ClientKind::Public,
                }),
                Some(id) if id == state.config.client_id => Err(Box::new(oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "This client is confidential: authenticate with client_secret in the body \
                     or HTTP Basic.",
                    false,
                ))),
                _ => Err(Box::new(oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "Client authentication is required: client_id and client_secret in the body, \
                     or HTTP Basic (a public client sends its client_id alone).",
                    false,
                ))),
            };
        }
    };
    if used_basic
        && let Some(body_id) = param("client_id")
        && body_id != client_id
    {
        return Err(Box::new(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "client_id in the body differs from the HTTP Basic client id.",
            false,
        )));
    }
    // A public client has no secret: one presented for it is as wrong as a wrong one.
    if !state.idp.client_secret_matches(&client_id, &client_secret) {
        return Err(Box::new(oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Invalid client or Invalid client credentials",
            used_basic,
        )));
    }
    Ok(AuthenticatedClient {
        client_id,
        kind: ClientKind::Confidential,
    })
}

/// `client_id:client_secret`, each form-urlencoded (RFC 6749 §2.3.1), in base64.
fn decode_basic(encoded: &str) -> Option<(String, String)> {
    let decoded = STANDARD.decode(encoded).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    let unescape = |part: &str| -> String {
        form_urlencoded::parse(format!("v={part}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default()
    };
    Some((unescape(id), unescape(secret)))
}

/// Why a redirect URI (or post-logout redirect URI) is refused.
pub fn redirect_uri_problem(config: &MockConfig, uri: &str) -> Option<String> {
    if config.redirect_uris.iter().any(|allowed| allowed == uri) {
        return None;
    }
    match loopback_redirect(uri) {
        Ok(_) => None,
        Err(reason) => Some(format!(
            "{reason} This identity provider sends users back only to a loopback address \
             (http://127.0.0.1:PORT/... or http://[::1]:PORT/..., any port, RFC 8252 §7.3) or \
             to a URI it was started with (--redirect-uri)."
        )),
    }
}

/// `uri` when it is a loopback redirect of a native application (RFC 8252 §7.3): plain http
/// to the IP literal `127.0.0.1` or `[::1]`, any port, no user information, no fragment.
/// `localhost` is refused (RFC 8252 §8.3: a name can resolve elsewhere, and a firewall may
/// let it through); start the mock with `--redirect-uri` for one that must use it.
fn loopback_redirect(uri: &str) -> Result<url::Url, String> {
    let literal_host = ["http://127.0.0.1", "http://[::1]"].iter().any(|prefix| {
        uri.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
    });
    if !literal_host {
        return Err(if uri.starts_with("http://localhost") {
            "The redirect URI uses `localhost`; use the IP literal 127.0.0.1 or [::1] (RFC 8252 §8.3)."
                .to_owned()
        } else {
            "The redirect URI is not a loopback address.".to_owned()
        });
    }
    let parsed = url::Url::parse(uri)
        .map_err(|error| format!("The redirect URI is not a URL ({error})."))?;
    let is_loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        Some(url::Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
        _ => false,
    };
    if !is_loopback || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("The redirect URI is not a loopback address.".to_owned());
    }
    if parsed.fragment().is_some() {
        return Err("The redirect URI has a fragment (RFC 6749 §3.1.2).".to_owned());
    }
    Ok(parsed)
}

/// The CSP source of an accepted redirect URI (its origin, or its scheme for a private-use
/// scheme), for the consent page's `form-action`: browsers hold a form's redirect to it too.
pub fn redirect_origin(uri: &str) -> Option<String> {
    let parsed = url::Url::parse(uri).ok()?;
    let origin = parsed.origin();
    Some(if origin.is_tuple() {
        origin.ascii_serialization()
    } else {
        format!("{}:", parsed.scheme())
    })
}

/// The requested scopes, checked and de-duplicated in request order; the error names the
/// unknown ones.
pub fn parse_scope(requested: Option<&str>) -> Result<Vec<&'static str>, String> {
    let requested = requested.map(str::trim).filter(|scope| !scope.is_empty());
    let mut granted: Vec<&'static str> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    for scope in requested.unwrap_or(DEFAULT_SCOPE).split_ascii_whitespace() {
        match SCOPES.iter().find(|(name, _)| *name == scope) {
            Some((name, _)) if !granted.contains(name) => granted.push(name),
            Some(_) => {}
            None => unknown.push(scope),
        }
    }
    if unknown.is_empty() {
        Ok(granted)
    } else {
        let known: Vec<&str> = SCOPES.iter().map(|(name, _)| *name).collect();
        Err(format!(
            "Unknown scope: {}; this provider offers {}.",
            unknown.join(" "),
            known.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_decoded() {
        let encoded = STANDARD.encode("my%20client:s%3Acret");
        assert_eq!(
            decode_basic(&encoded),
            Some(("my client".into(), "s:cret".into()))
        );
        assert_eq!(decode_basic("***"), None);
    }

    #[test]
    fn only_loopback_ip_literals_and_configured_uris_are_redirect_targets() {
        let config = MockConfig {
            redirect_uris: vec!["https://app.example/callback".into()],
            ..MockConfig::default()
        };
        for good in [
            "http://127.0.0.1:49152/callback",
            "http://127.0.0.1/",
            "http://127.0.0.1",
            "http://[::1]:8080/cb?x=1",
            "https://app.example/callback",
        ] {
            assert_eq!(redirect_uri_problem(&config, good), None, "{good}");
        }
        for bad in [
            "http://localhost:8080/callback",
            "http://127.0.0.1.evil.example/",
            "http://127.0.0.1@evil.example/",
            "http://127.0.0.1:80@evil.example/",
            "http://127.0.0.1:8080/cb#fragment",
            "https://127.0.0.1:8080/cb",
            "http://127.0.0.2:8080/cb",
            "http://evil.example/",
            "https://app.example/callback/other",
            "javascript:alert(1)",
            "",
        ] {
            assert!(redirect_uri_problem(&config, bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn scopes_are_checked_and_default_to_openid() {
        assert_eq!(parse_scope(None), Ok(vec!["openid"]));
        assert_eq!(parse_scope(Some("  ")), Ok(vec!["openid"]));
        assert_eq!(
            parse_scope(Some("openid email openid")),
            Ok(vec!["openid", "email"])
        );
        let error = parse_scope(Some("openid admin")).expect_err("unknown");
        assert!(error.contains("admin"), "{error}");
    }
}
