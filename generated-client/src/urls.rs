//! URLs: which the client accepts, and what of them it shows.
//!
//! **Accepted**: a configured URL parses and has no user-info, query or fragment; one the
//! client secret is sent to is `https` (plain `http` to loopback only). **Same origin**: scheme,
//! host and port, for the redirects and answers the runtime accepts. **Shown**: errors and logs
//! show scheme, host, port, path and the *names* of the query parameters
//! (`/v1/sessions?SubjectEmail&Take`), never their values (the session search takes e-mails and
//! names), user-info or fragment. Every module that checks or shows a URL (configuration,
//! discovery, the runtime's redirect checks, errors, downloads) goes through here.

use std::net::IpAddr;

use reqwest::header::LOCATION;

/// `error` with the query values of its URL removed (see [`redact_url`]).
pub(crate) fn redact_reqwest(mut error: reqwest::Error) -> reqwest::Error {
    if let Some(url) = error.url_mut() {
        *url = redact_url(url);
    }
    error
}

/// `url` as errors and logs may show it (see the [module documentation](self)).
pub(crate) fn redact_url(url: &reqwest::Url) -> reqwest::Url {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_fragment(None);
    if url.query().is_some() {
        let names: Vec<String> = url
            .query_pairs()
            .map(|(name, _)| {
                percent_encoding::utf8_percent_encode(&name, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            })
            .collect();
        shown.set_query((!names.is_empty()).then(|| names.join("&")).as_deref());
    }
    shown
}

/// The checks every configured URL passes: it parses, has no user name or password (URLs are
/// shown in `Debug` and in messages; credentials belong in `credentials`), and no query or
/// fragment (where secrets and personal data would hide in plain sight). A URL that fails is
/// not quoted in the error: what makes it fail may be a secret.
pub(crate) fn validate_url(what: &str, url: &str) -> Result<reqwest::Url, String> {
    let parsed =
        reqwest::Url::parse(url.trim()).map_err(|e| format!("{what} is not a URL: {e}"))?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "{what} must not contain a user name or password: pass credentials with ClientBuilder::credentials"
        ));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(format!(
            "{what} must not have a query or fragment: put no secrets or parameters in it"
        ));
    }
    Ok(parsed)
}

/// Checks a URL the client secret is sent to (a token endpoint, an issuer whose discovery
/// document names one): [`validate_url`]'s rules, and `https`, or `http` to a loopback address
/// only (the local mock): the secret never crosses a network unencrypted.
pub(crate) fn validate_identity_provider_url(
    what: &str,
    url: &str,
) -> Result<reqwest::Url, String> {
    let parsed = validate_url(what, url)?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if is_loopback(&parsed) => Ok(parsed),
        "http" => Err(format!(
            "{what} uses plain http to a host that is not loopback: the client secret would \
             cross the network unencrypted; use https (plain http is accepted for 127.0.0.1, \
             [::1] and localhost only)"
        )),
        _ => Err(format!(
            "{what} must use https (or http to a loopback address)"
        )),
    }
}

/// Whether `url`'s host is a loopback address or `localhost`.
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Same scheme, host and port (explicit or the scheme's default).
pub(crate) fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Where a redirect response points, as errors may show it: resolved against the response's
/// URL, without user-info, query or fragment (see [`redact_url`]).
pub(crate) fn shown_location(response: &reqwest::Response) -> String {
    let Some(location) = response.headers().get(LOCATION) else {
        return "(no Location header)".to_string();
    };
    let text = String::from_utf8_lossy(location.as_bytes());
    match response.url().join(&text) {
        Ok(mut url) => {
            url.set_query(None);
            redact_url(&url).to_string()
        }
        Err(_) => "(an unreadable Location header)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_path_and_parameter_names_only() {
        let url = reqwest::Url::parse(
            "http://u:p@127.0.0.1:8/v1/sessions?SubjectEmail=jane%40example.com&Take=10#f",
        )
        .unwrap();
        assert_eq!(
            redact_url(&url).as_str(),
            "http://127.0.0.1:8/v1/sessions?SubjectEmail&Take"
        );
        let plain = reqwest::Url::parse("https://h/v1/sessions/1").unwrap();
        assert_eq!(redact_url(&plain), plain);
    }
}
