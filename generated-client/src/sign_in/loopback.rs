//! The loopback listener the browser is redirected to (RFC 8252 §7.3): accepts loopback peers
//! only, reads each request head with a deadline and a size cap, many at once, so that no
//! connection (a slow one, a silent one, a flood from a hostile local page) delays the one
//! the wait is for.

use std::future::Future as _;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::error::SignInError;

/// The path of the redirect URI.
pub(super) const CALLBACK_PATH: &str = "/callback";

/// The path of the address the browser is sent to first: it answers once, with a redirect to
/// the authorization URL, so that no secret of the sign-in ever goes on a command line.
pub(super) const START_PATH: &str = "/start";

/// How long a connection may take to send its request head.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay silent before its first byte: a browser sends its request
/// at once, so an idle connection only holds a slot another one (the browser's) may need.
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(2);

/// The largest request head read; a browser's redirect is well under 4 KiB.
const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Connections read at once; while that many are open no other is accepted, so the kernel's
/// backlog holds the next one (the browser's, perhaps) until a slot frees up.
const MAX_OPEN_CONNECTIONS: usize = 32;

/// How long writing an answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// What a request on the loopback port asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// `GET /start`: the browser wants the authorization URL.
    Start,
    /// `GET /callback?...`: the provider's answer, with its query parameters.
    Callback(Vec<(String, String)>),
}

/// One request on the loopback port (or why it is neither of the two expected), and the
/// connection to answer on.
pub(super) struct Callback {
    pub(super) parameters: Result<Request, &'static str>,
    stream: TcpStream,
}

impl Callback {
    /// Answers with `page` and closes the connection; a browser that stopped listening is
    /// not waited for.
    pub(super) async fn answer(mut self, page: Page) {
        let reason = match page.status {
            200 => "OK",
            303 => "See Other",
            _ => "Bad Request",
        };
        let location = page
            .location
            .as_ref()
            .map(|url| format!("Location: {url}\r\n"))
            .unwrap_or_default();
        let response = format!(
            "HTTP/1.1 {} {reason}\r\n{location}\
             Content-Type: text/html; charset=utf-8\r\n\
             Content-Length: {}\r\n\
             Cache-Control: no-store\r\n\
             Referrer-Policy: no-referrer\r\n\
             X-Content-Type-Options: nosniff\r\n\
             X-Frame-Options: DENY\r\n\
             Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'\r\n\
             Connection: close\r\n\r\n{}",
            page.status,
            page.html.len(),
            page.html
        );
        let write = async {
            self.stream.write_all(response.as_bytes()).await?;
            self.stream.shutdown().await
        };
        if let Err(error) = tokio::time::timeout(ANSWER_TIMEOUT, write)
            .await
            .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
        {
            tracing::debug!(%error, "answering the browser failed");
        }
    }
}

/// Accepts and reads connections until one yields a request.
pub(super) struct Waiter<'a> {
    listener: &'a TcpListener,
    reading: JoinSet<Option<Callback>>,
}

impl<'a> Waiter<'a> {
    pub(super) fn new(listener: &'a TcpListener) -> Self {
        Waiter {
            listener,
            reading: JoinSet::new(),
        }
    }

    /// The next request read whole, or `None` at `deadline`.
    pub(super) async fn next(&mut self, deadline: Instant) -> Option<Callback> {
        loop {
            match self.next_event(deadline).await {
                Event::Deadline => return None,
                Event::Accepted(Ok((stream, peer))) => {
                    // Bound to 127.0.0.1, so every peer should be loopback: checked anyway.
                    if peer.ip().is_loopback() {
                        self.reading.spawn(read_request(stream));
                    }
                }
                Event::Accepted(Err(error)) => {
                    // Out of file descriptors, say: do not spin on it.
                    tracing::debug!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Event::Read(Some(Ok(Some(callback)))) => return Some(callback),
                Event::Read(_) => {}
            }
        }
    }

    /// Whichever comes first: the deadline, a request read whole, a new connection. (By hand
    /// rather than with `tokio::select!`, which would bring tokio's macros to every user of
    /// the client; `accept` and `join_next` may be dropped unfinished without losing anything.)
    async fn next_event(&mut self, deadline: Instant) -> Event {
        let mut sleep = pin!(tokio::time::sleep_until(deadline));
        let mut accept = pin!(self.listener.accept());
        // Accepting and then dropping a connection would reset it, the browser's included.
        let full = self.reading.len() >= MAX_OPEN_CONNECTIONS;
        let reading = &mut self.reading;
        let mut read = pin!(async move {
            if reading.is_empty() {
                std::future::pending().await
            } else {
                reading.join_next().await
            }
        });
        std::future::poll_fn(|cx| {
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Deadline);
            }
            if let Poll::Ready(read) = read.as_mut().poll(cx) {
                return Poll::Ready(Event::Read(read));
            }
            if !full && let Poll::Ready(accepted) = accept.as_mut().poll(cx) {
                return Poll::Ready(Event::Accepted(accepted));
            }
            Poll::Pending
        })
        .await
    }
}

enum Event {
    Deadline,
    Accepted(std::io::Result<(TcpStream, std::net::SocketAddr)>),
    Read(Option<Result<Option<Callback>, tokio::task::JoinError>>),
}

/// Reads one request head, within [`REQUEST_TIMEOUT`] and [`MAX_REQUEST_HEAD`]; `None` when
/// the connection was too slow, too large or broke (it is then closed).
async fn read_request(mut stream: TcpStream) -> Option<Callback> {
    let mut head = Vec::with_capacity(1024);
    let read = tokio::time::timeout(REQUEST_TIMEOUT, async {
        let mut chunk = [0u8; 1024];
        let first = tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if first == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        }
        head.extend_from_slice(&chunk[..first]);
        loop {
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Ok(true);
            }
            if head.len() >= MAX_REQUEST_HEAD {
                return Ok(false);
            }
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
            }
            head.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    let parameters = match read {
        Ok(Ok(true)) => parse_request(&head),
        Ok(Ok(false)) => Err("the request is too large"),
        Ok(Err(_)) | Err(_) => return None,
    };
    Some(Callback { parameters, stream })
}

/// What a request head asks for: `GET /start` or `GET /callback?...`, nothing else.
fn parse_request(head: &[u8]) -> Result<Request, &'static str> {
    let line_end = head
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or("no request line")?;
    let line = std::str::from_utf8(&head[..line_end]).map_err(|_| "not a text request line")?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("a malformed request line");
    };
    if !version.starts_with("HTTP/1.") {
        return Err("not HTTP/1");
    }
    if method != "GET" {
        return Err("not a GET request");
    }
    if target == START_PATH {
        return Ok(Request::Start);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != CALLBACK_PATH {
        return Err("not the callback path");
    }
    Ok(Request::Callback(
        form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect(),
    ))
}

/// A small HTML page for the browser.
pub(super) struct Page {
    status: u16,
    html: String,
    location: Option<reqwest::Url>,
}

impl Page {
    /// The one answer of `/start`: on to the provider.
    pub(super) fn redirect(to: &reqwest::Url) -> Page {
        let mut page = Page::new(
            303,
            "Signing in",
            "Continue to the identity provider to sign in.",
        );
        page.location = Some(to.clone());
        page
    }

    pub(super) fn signed_in() -> Page {
        Page::new(
            200,
            "Signed in",
            "You are signed in. You can close this tab and return to the application.",
        )
    }

    pub(super) fn refused(why: &str) -> Page {
        Page::new(
            400,
            "Not this sign-in",
            &format!("This request does not belong to the sign-in in progress ({why})."),
        )
    }

    pub(super) fn failed(error: &SignInError) -> Page {
        Page::new(
            400,
            "Sign-in failed",
            &format!(
                "{}. Return to the application and try again.",
                crate::error::DisplayChain(error)
            ),
        )
    }

    fn new(status: u16, title: &str, message: &str) -> Page {
        let html = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
             <style>body{{font-family:sans-serif;margin:3em}}</style></head>\
             <body><h1>{title}</h1><p>{message}</p></body></html>",
            title = escape_html(title),
            message = escape_html(message),
        );
        Page {
            status,
            html,
            location: None,
        }
    }
}

/// `text` safe inside HTML text and attribute values.
fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_get_of_the_callback_path_yields_parameters() {
        let parsed = parse_request(b"GET /callback?code=a%20b&state=s HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(
            parsed.unwrap(),
            Request::Callback(vec![
                ("code".to_string(), "a b".to_string()),
                ("state".to_string(), "s".to_string())
            ])
        );
        assert_eq!(
            parse_request(b"GET /start HTTP/1.1\r\n\r\n"),
            Ok(Request::Start)
        );
        for (request, why) in [
            (
                &b"POST /callback?state=s HTTP/1.1\r\n\r\n"[..],
                "not a GET request",
            ),
            (
                b"GET /other?state=s HTTP/1.1\r\n\r\n",
                "not the callback path",
            ),
            (
                b"GET /callback/../x HTTP/1.1\r\n\r\n",
                "not the callback path",
            ),
            (
                b"GET  /callback HTTP/1.1\r\n\r\n",
                "a malformed request line",
            ),
            (b"GET /callback SPDY/3\r\n\r\n", "not HTTP/1"),
            (b"GET /start?x=1 HTTP/1.1\r\n\r\n", "not the callback path"),
            (b"HEAD /start HTTP/1.1\r\n\r\n", "not a GET request"),
            (b"\xff\xfe\r\n\r\n", "not a text request line"),
        ] {
            assert_eq!(parse_request(request), Err(why));
        }
    }

    #[test]
    fn pages_escape_what_they_show() {
        let page = Page::new(400, "<t>", "<script>alert('x')</script> & \"q\"");
        assert!(!page.html.contains("<script>"), "{}", page.html);
        assert!(
            page.html
                .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;")
        );
    }
}
