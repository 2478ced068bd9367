//! The redirect policy of the service's HTTP client: follow within the service's origin only.

use crate::urls::same_origin;

/// A redirect policy that follows redirects (at most ten) only within the origin (scheme, host
/// and port) of the request, and stops at any other: the response of the redirect is then
/// returned as it is. What the client builder gives its own HTTP client; give it to an HTTP
/// client of your own ([`ClientBuilder::http_client`](crate::ClientBuilder::http_client)) to
/// keep the same guarantee. (`reqwest`'s default follows redirects anywhere, removing only the
/// `Authorization` header across hosts, and re-sends a request body on 307 and 308.)
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let stays = attempt
            .previous()
            .first()
            .is_some_and(|first| same_origin(first, attempt.url()));
        if !stays {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}
