//! What of a URL errors and logs may show: scheme, host, port, path and the *names* of the query
//! parameters (`/v1/sessions?SubjectEmail&Take`), never their values (the session search takes
//! e-mails and names), user-info or fragment. Every module that shows a URL (errors, the
//! runtime's redirect checks, authentication, downloads) goes through here.

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
