//! The request of each attempt of a call. The first attempt sends the request the generated
//! `send_with()` built; each further attempt (a retry, the one after a 401) sends a request
//! built again by the same operation's build step from the same typed values, so a call that
//! succeeds at once copies nothing (copying a request for a retry that may never come cost
//! every call three allocations and most of the client's overhead over a hand-written call:
//! BENCHMARKS.md, P1). Where a request
//! cannot be built again (a body given as a stream of bytes), it is copied before the first
//! attempt when its body can be, as reqwest allows, and sent only once when it cannot.

use reqwest::Request;

use crate::call_options::CallOptions;
use crate::error::Error;

/// An operation's build step: the request of its typed values, the same each time.
pub(super) type Build<'b> = &'b (dyn Fn() -> Result<Request, Error> + Sync);

/// Where the requests of a call's attempts come from (see [the module](self)).
pub(super) struct Attempts<'b> {
    /// The request built before the call started, until the first attempt takes it.
    first: Option<Request>,
    again: Again<'b>,
}

/// How a request is had for an attempt after the first.
enum Again<'b> {
    /// Built again by the operation's build step.
    Build(Build<'b>),
    /// The original, kept while copies of it are sent; `None` once it was sent itself. Boxed:
    /// the rare path keeps the call's future small.
    Kept(Option<Box<Request>>),
}

impl<'b> Attempts<'b> {
    /// The attempts of a call whose first request is `first`, built again by `build` when given.
    pub(super) fn new(first: Request, build: Option<Build<'b>>) -> Self {
        Self {
            first: Some(first),
            again: build.map_or(Again::Kept(None), Again::Build),
        }
    }

    /// The request of the next attempt, and whether another attempt can follow it. `repeat`:
    /// whether another could be wanted (a copy is made only then); `options`: the call's own,
    /// whose headers a request built again gets as the first did.
    pub(super) fn next(
        &mut self,
        repeat: bool,
        options: Option<&CallOptions>,
        operation: &'static str,
    ) -> Result<(Request, bool), Error> {
        if let Some(first) = self.first.take() {
            match &mut self.again {
                Again::Build(_) => return Ok((first, true)),
                Again::Kept(_) if !repeat => return Ok((first, false)),
                // Copied below like the original of every later attempt.
                Again::Kept(kept) => *kept = Some(Box::new(first)),
            }
        }
        match &mut self.again {
            Again::Build(build) => {
                let mut request = build().map_err(|error| error.with_operation(operation))?;
                if let Some(options) = options {
                    options.add_headers(&mut request, operation)?;
                }
                Ok((request, true))
            }
            Again::Kept(kept) => {
                let Some(original) = kept.take() else {
                    // The loop ends after an attempt nothing can follow.
                    return Err(Error::InvalidRequest {
                        operation: Some(operation),
                        message: "the request was sent once and cannot be sent again".to_string(),
                    });
                };
                Ok(match copy_request(&original) {
                    Some(copy) => {
                        *kept = Some(original);
                        (copy, true)
                    }
                    None => (*original, false),
                })
            }
        }
    }
}

/// A copy of `request` to send while the original is kept for another attempt; `None` when its
/// body is a stream. For body-less requests it copies only what the generated requests carry
/// (method, URL, headers, version, timeout): `reqwest::Request::try_clone` also builds and
/// drops an extensions map.
fn copy_request(request: &Request) -> Option<Request> {
    if request.body().is_some() {
        // reqwest alone can copy a body (or tell that it cannot).
        return request.try_clone();
    }
    let mut copy = Request::new(request.method().clone(), request.url().clone());
    *copy.headers_mut() = request.headers().clone();
    *copy.version_mut() = request.version();
    if let Some(timeout) = request.timeout() {
        *copy.timeout_mut() = Some(*timeout);
    }
    Some(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> Request {
        Request::new(reqwest::Method::GET, url.parse().expect("a URL"))
    }

    #[test]
    fn a_request_built_again_is_not_copied_and_every_attempt_can_be_followed() {
        let built = std::sync::atomic::AtomicUsize::new(0);
        let build = || {
            built.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(request("http://127.0.0.1/again"))
        };
        let mut attempts = Attempts::new(request("http://127.0.0.1/first"), Some(&build));
        let (first, more) = attempts.next(true, None, "Op").expect("the first request");
        assert_eq!((first.url().path(), more), ("/first", true));
        assert_eq!(built.load(std::sync::atomic::Ordering::SeqCst), 0);
        let (second, more) = attempts.next(true, None, "Op").expect("built again");
        assert_eq!((second.url().path(), more), ("/again", true));
        assert_eq!(built.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_request_built_again_gets_the_calls_own_headers() {
        let build = || Ok(request("http://127.0.0.1/again"));
        let options = CallOptions::new()
            .header("x-correlation-id", "abc")
            .unwrap();
        let mut attempts = Attempts::new(request("http://127.0.0.1/first"), Some(&build));
        attempts.next(true, Some(&options), "Op").expect("first");
        let (second, _) = attempts.next(true, Some(&options), "Op").expect("again");
        assert_eq!(second.headers()["x-correlation-id"], "abc");
    }

    #[test]
    fn a_failing_build_names_the_operation() {
        let build = || {
            Err(Error::InvalidRequest {
                operation: None,
                message: "no".to_string(),
            })
        };
        let mut attempts = Attempts::new(request("http://127.0.0.1/first"), Some(&build));
        attempts.next(true, None, "GetThing").expect("first");
        let error = attempts.next(true, None, "GetThing").unwrap_err();
        assert!(matches!(
            error,
            Error::InvalidRequest {
                operation: Some("GetThing"),
                ..
            }
        ));
    }

    #[test]
    fn without_a_build_step_the_original_is_copied_only_when_another_attempt_is_wanted() {
        let mut attempts = Attempts::new(request("http://127.0.0.1/first"), None);
        let (_, more) = attempts.next(true, None, "Op").expect("a copy");
        assert!(more);
        let (again, more) = attempts.next(true, None, "Op").expect("another copy");
        assert_eq!((again.url().path(), more), ("/first", true));

        let mut once = Attempts::new(request("http://127.0.0.1/first"), None);
        let (_, more) = once.next(false, None, "Op").expect("the original");
        assert!(!more);
        assert!(once.next(true, None, "Op").is_err());
    }

    #[test]
    fn a_streamed_body_without_a_build_step_is_sent_once() {
        let mut streamed = request("http://127.0.0.1/upload");
        let chunks =
            futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from("part"))]);
        *streamed.body_mut() = Some(reqwest::Body::wrap_stream(chunks));
        let mut attempts = Attempts::new(streamed, None);
        let (_, more) = attempts.next(true, None, "Op").expect("the original");
        assert!(!more, "a stream cannot be sent twice");
    }
}
