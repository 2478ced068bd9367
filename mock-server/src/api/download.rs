//! A download as the service answers one: the bytes with Content-Type, Content-Length and a
//! Content-Disposition whose file name is safe to quote.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// A download: the bytes with Content-Type, Content-Length and Content-Disposition.
pub fn download(bytes: Vec<u8>, content_type: &str, file_name: &str) -> Response {
    let length = bytes.len();
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    let safe: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{safe}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    response
}
