//! Binary downloads: the PDF report, the Excel exports, identity images, attachments and the TSV
//! account statement, as byte streams or as files written atomically.
//!
//! Every generated operation whose success body is a byte stream (`Output = ByteStream`) gains
//! [`DownloadExt::download`], which sends the request and returns a [`Download`]: the response's
//! content type, its suggested file name and its length, and the body, not yet read. From there:
//!
//! - [`Download::bytes_stream`]: the body as a stream of chunks, checked against
//!   `Content-Length`;
//! - [`Download::write_to`]: into any [`AsyncWrite`];
//! - [`Download::save`] / [`Download::save_in`]: into a file, atomically.
//!
//! ```no_run
//! use creditdata_client::prelude::*;
//!
//! async fn save_report(client: &Client, session_id: uuid::Uuid) -> Result<()> {
//!     let saved = client
//!         .get_pdf_report()
//!         .session_id(session_id)
//!         .download()
//!         .await?
//!         .on_progress(|p| eprintln!("{} of {:?} bytes", p.received, p.total))
//!         .save("report.pdf")
//!         .await?;
//!     println!("{} bytes in {}", saved.bytes, saved.path.display());
//!     Ok(())
//! }
//! ```
//!
//! Or in one call: [`Client::download_pdf_report`] and its siblings.
//!
//! # Guarantees
//!
//! - **Constant memory**: chunks go from the connection to their destination one at a time.
//! - **Length checked**: when the response has a `Content-Length`, a body that ends early (the
//!   connection broke) or runs long is an [`Error::Download`]. A stalled body fails with
//!   [`Error::Timeout`] after the client's idle-read timeout
//!   ([`ClientBuilder::read_timeout`](crate::ClientBuilder::read_timeout)); no total timeout
//!   cuts a slow but moving download short, unless the call was given a deadline
//!   ([`CallOptions::timeout`](crate::call_options::CallOptions::timeout)), which covers
//!   reading the body too.
//! - **Atomic files**: [`Download::save`] writes a temporary file in the target's directory,
//!   flushes it to disk (`fsync`), then renames it over the target. On any failure, or if the
//!   future is dropped, the temporary file is removed and the target is left as it was. The file
//!   is created with owner-only permissions (0600 on Unix): these files hold personal data.
//! - **Safe file names**: the server's suggested name (`Content-Disposition`, RFC 6266, including
//!   `filename*=UTF-8''...`) is exposed only after [`sanitize_file_name`], which guarantees a
//!   single plain path component: it can never point outside the directory it is joined to.

use std::fmt;
use std::path::Path;
#[cfg(feature = "downloads")]
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::Stream;
use progenitor_client::{ByteStream, ResponseValue};
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap};
use tokio::io::{AsyncWrite, AsyncWriteExt};
#[cfg(feature = "downloads")]
use uuid::Uuid;

#[cfg(feature = "downloads")]
use crate::Client;
use crate::operation::Operation;
use crate::{Error, Result};

mod file_name;

pub use file_name::{MAX_FILE_NAME_BYTES, content_disposition_file_name, sanitize_file_name};

/// How far a download has got, as passed to a [`Download::on_progress`] callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the body received so far.
    pub received: u64,
    /// The body's length from `Content-Length`, when the response declared it.
    pub total: Option<u64>,
}

type ProgressCallback = Box<dyn FnMut(Progress) + Send>;

/// A binary response whose body has not been read yet.
///
/// Obtained with [`DownloadExt::download`] (or [`Download::from_response`]); consumed by one of
/// [`bytes_stream`](Download::bytes_stream), [`write_to`](Download::write_to),
/// [`save`](Download::save) or [`save_in`](Download::save_in).
pub struct Download {
    operation: Option<&'static str>,
    headers: HeaderMap,
    content_type: Option<String>,
    file_name: Option<String>,
    content_length: Option<u64>,
    body: ByteStream,
    progress: Option<ProgressCallback>,
}

impl fmt::Debug for Download {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Download")
            .field("operation", &self.operation)
            .field("content_type", &self.content_type)
            .field("file_name", &self.file_name)
            .field("content_length", &self.content_length)
            .finish_non_exhaustive()
    }
}

impl Download {
    /// Wraps a streamed success response (progenitor's `ResponseValue` of a
    /// binary operation). Prefer [`DownloadExt::download`], which also names the operation in
    /// errors.
    pub fn from_response(response: ResponseValue<ByteStream>) -> Download {
        let headers = response.headers().clone();
        Download::from_parts(response.into_inner(), headers)
    }

    /// A streamed success answer from its unread body and its headers (what the runtime's
    /// one door returns for a byte stream).
    pub(crate) fn from_parts(body: ByteStream, headers: HeaderMap) -> Download {
        let content_length = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        let file_name = headers
            .get(CONTENT_DISPOSITION)
            .map(|v| header_text(v.as_bytes()))
            .and_then(|v| content_disposition_file_name(&v))
            .and_then(|name| sanitize_file_name(&name));
        Download {
            operation: None,
            headers,
            content_type,
            file_name,
            content_length,
            body,
            progress: None,
        }
    }

    /// The same, naming `operation` in its errors.
    pub(crate) fn named(mut self, operation: &'static str) -> Download {
        self.operation = Some(operation);
        self
    }

    /// The operation (operationId) this download came from, when known.
    pub fn operation(&self) -> Option<&'static str> {
        self.operation
    }

    /// The `Content-Type` header as sent (e.g. `application/pdf`), when present.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }

    /// The file name the server suggests in `Content-Disposition`, already passed through
    /// [`sanitize_file_name`]: safe to join to a directory. `None` when the server suggested
    /// none, or nothing usable remained after sanitising.
    pub fn file_name(&self) -> Option<&str> {
        self.file_name.as_deref()
    }

    /// The body's length from `Content-Length`, when the response declared it.
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// All response headers, as received (e.g. the raw `Content-Disposition`).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Calls `callback` after every chunk received, with the bytes so far and the total when
    /// known. Applies to whichever way the body is then consumed.
    pub fn on_progress(mut self, callback: impl FnMut(Progress) + Send + 'static) -> Self {
        self.progress = Some(Box::new(callback));
        self
    }

    /// The body as a stream of chunks. Errors: [`Error::Timeout`] when the body stalls past the
    /// idle-read timeout, [`Error::Download`] when the connection breaks or the length does not
    /// match `Content-Length` (the stream ends after the first error).
    pub fn bytes_stream(self) -> BodyStream {
        BodyStream {
            operation: self.operation,
            inner: self.body.into_inner(),
            expected: self.content_length,
            received: 0,
            progress: self.progress,
            finished: false,
        }
    }

    /// Writes the body into `writer` and flushes it; returns the number of bytes written.
    ///
    /// Not atomic: on failure, `writer` holds whatever arrived before it. Use
    /// [`save`](Download::save) for files.
    pub async fn write_to<W>(self, writer: &mut W) -> Result<u64>
    where
        W: AsyncWrite + Unpin + ?Sized,
    {
        let mut body = self.bytes_stream();
        let destination = Path::new("(output stream)");
        while let Some(chunk) = futures_util::StreamExt::next(&mut body).await {
            writer
                .write_all(&chunk?)
                .await
                .map_err(|e| Error::io(destination, e))?;
        }
        writer
            .flush()
            .await
            .map_err(|e| Error::io(destination, e))?;
        Ok(body.received)
    }

    #[cfg(feature = "downloads")]
    /// Writes the body to `path`, atomically (see the [module documentation](self)): `path`
    /// either keeps its previous content (or stays absent) or holds the complete, verified body.
    /// An existing file at `path` is replaced. The directory must exist.
    pub async fn save(self, path: impl AsRef<Path>) -> Result<SavedFile> {
        let target = path.as_ref().to_path_buf();
        let content_type = self.content_type.clone();
        let file_name = self.file_name.clone();
        let bytes = write_atomically(&target, self.bytes_stream()).await?;
        Ok(SavedFile {
            path: target,
            bytes,
            content_type,
            file_name,
        })
    }

    #[cfg(feature = "downloads")]
    /// Saves into directory `dir` under the server's suggested (sanitised) file name, or
    /// `fallback_name` (also sanitised) when the server suggested none. As with
    /// [`save`](Download::save), an existing file of that name is replaced.
    pub async fn save_in(self, dir: impl AsRef<Path>, fallback_name: &str) -> Result<SavedFile> {
        let name = self
            .file_name
            .clone()
            .or_else(|| sanitize_file_name(fallback_name))
            .unwrap_or_else(|| "download".to_string());
        let target = dir.as_ref().join(name);
        self.save(target).await
    }
}

/// The body of a [`Download`] as a stream of chunks, checked against `Content-Length`
/// ([`Download::bytes_stream`]). `Send`, `Unpin`.
pub struct BodyStream {
    operation: Option<&'static str>,
    inner: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send + Sync>>,
    expected: Option<u64>,
    received: u64,
    progress: Option<ProgressCallback>,
    finished: bool,
}

impl fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyStream")
            .field("operation", &self.operation)
            .field("expected", &self.expected)
            .field("received", &self.received)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl BodyStream {
    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    fn failure(&self, message: String) -> Error {
        Error::Download {
            operation: self.operation,
            message,
            source: None,
        }
    }

    fn expected_text(&self) -> String {
        match self.expected {
            Some(n) => format!("{n}"),
            None => "an unknown number of".to_string(),
        }
    }
}

impl Stream for BodyStream {
    type Item = Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.finished {
            return Poll::Ready(None);
        }
        match ready!(this.inner.as_mut().poll_next(cx)) {
            Some(Ok(chunk)) => {
                this.received += chunk.len() as u64;
                if let Some(expected) = this.expected
                    && this.received > expected
                {
                    this.finished = true;
                    let message = format!(
                        "the body is longer than its Content-Length of {expected} bytes (at least {} arrived)",
                        this.received
                    );
                    return Poll::Ready(Some(Err(this.failure(message))));
                }
                if let Some(callback) = this.progress.as_mut() {
                    callback(Progress {
                        received: this.received,
                        total: this.expected,
                    });
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Some(Err(error)) => {
                this.finished = true;
                if error.is_timeout() {
                    return Poll::Ready(Some(Err(Error::from_reqwest(this.operation, 1, error))));
                }
                let message = format!(
                    "the connection broke after {} of {} bytes",
                    this.received,
                    this.expected_text(),
                );
                Poll::Ready(Some(Err(Error::Download {
                    operation: this.operation,
                    message,
                    source: Some(Arc::new(crate::urls::redact_reqwest(error))),
                })))
            }
            None => {
                this.finished = true;
                match this.expected {
                    Some(expected) if this.received < expected => {
                        let message = format!(
                            "the body ended after {} of its {expected} bytes (Content-Length)",
                            this.received
                        );
                        Poll::Ready(Some(Err(this.failure(message))))
                    }
                    _ => Poll::Ready(None),
                }
            }
        }
    }
}

#[cfg(feature = "downloads")]
/// A file written by [`Download::save`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedFile {
    /// Where the file is.
    pub path: PathBuf,
    /// How many bytes it holds.
    pub bytes: u64,
    /// The response's `Content-Type`, when present.
    pub content_type: Option<String>,
    /// The server's suggested file name, sanitised (see [`Download::file_name`]).
    pub file_name: Option<String>,
}

#[cfg(feature = "downloads")]
/// Writes `body` to a temporary file next to `target`, syncs it and renames it over `target`.
/// The temporary file is removed on every failure (and when the future is dropped).
pub(crate) async fn write_atomically<S>(target: &Path, mut body: S) -> Result<u64>
where
    S: Stream<Item = Result<Bytes>> + Unpin,
{
    if target.file_name().is_none() {
        return Err(Error::io(
            target,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"),
        ));
    }
    let dir = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temp = {
        let in_dir = dir.clone();
        tokio::task::spawn_blocking(move || {
            tempfile::Builder::new()
                .prefix(".creditdata-")
                .suffix(".part")
                .tempfile_in(in_dir)
        })
        .await
        .map_err(|e| Error::io(&dir, std::io::Error::other(e)))?
        .map_err(|e| Error::io(&dir, e))?
    };
    let temp_path = temp.path().to_path_buf();
    // Declared after `temp`, so dropped before it: the handle closes before the file goes.
    let mut file = tokio::fs::File::from_std(
        temp.as_file()
            .try_clone()
            .map_err(|e| Error::io(&temp_path, e))?,
    );
    let mut written: u64 = 0;
    while let Some(chunk) = futures_util::StreamExt::next(&mut body).await {
        let chunk = chunk?;
        file.write_all(&chunk)
            .await
            .map_err(|e| Error::io(&temp_path, e))?;
        written += chunk.len() as u64;
    }
    file.flush().await.map_err(|e| Error::io(&temp_path, e))?;
    file.sync_all()
        .await
        .map_err(|e| Error::io(&temp_path, e))?;
    drop(file);
    let destination = target.to_path_buf();
    tokio::task::spawn_blocking(move || temp.persist(&destination).map(drop))
        .await
        .map_err(|e| Error::io(target, std::io::Error::other(e)))?
        // The `PersistError` owns the temporary file; dropping it removes the file.
        .map_err(|e| Error::io(target, e.error))?;
    sync_directory(dir).await;
    Ok(written)
}

#[cfg(feature = "downloads")]
/// Makes the rename durable. Best effort: the file is complete and in place whatever happens.
async fn sync_directory(dir: PathBuf) {
    #[cfg(unix)]
    {
        let _ = tokio::task::spawn_blocking(move || {
            std::fs::File::open(&dir).and_then(|d| d.sync_all())
        })
        .await;
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
}

/// A header value as text: UTF-8 when it is (non-compliant servers send raw UTF-8 names),
/// otherwise ISO-8859-1 as HTTP defines it.
fn header_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

/// `download()`: send a binary operation and get a [`Download`]. Implemented for every
/// generated builder whose output is a `ByteStream`.
pub trait DownloadExt: Operation<Output = ByteStream> {
    /// Sends the request; on a success status returns the response with its body unread.
    /// Failures before the body (error status, transport, authentication) are the same
    /// [`Error`]s as [`Operation::call`] returns.
    fn download(self) -> impl Future<Output = Result<Download>> + Send
    where
        Self: Send,
    {
        async move {
            let answer = self.call_with_response().await?;
            Ok(Download::from_parts(answer.body, answer.headers).named(Self::META.id))
        }
    }

    #[cfg(feature = "downloads")]
    /// Sends the request and saves the body to `path` ([`Download::save`]: atomic,
    /// length-checked, nothing left behind on failure).
    fn download_to(
        self,
        path: impl AsRef<Path> + Send,
    ) -> impl Future<Output = Result<SavedFile>> + Send
    where
        Self: Send,
    {
        async move { self.download().await?.save(path).await }
    }
}

impl<O: Operation<Output = ByteStream>> DownloadExt for O {}

#[cfg(feature = "downloads")]
/// One-call downloads to a file (atomic, length-checked; see the [module documentation](self)).
/// For progress reporting, the content type or the server's file name before saving, use
/// [`DownloadExt::download`] on the generated builder instead.
impl Client {
    /// Saves the session's PDF report (`GET /v1/sessions/{sessionId}/pdf-report`) to `path`.
    pub async fn download_pdf_report(
        &self,
        session_id: Uuid,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_pdf_report()
            .session_id(session_id)
            .download_to(path)
            .await
    }

    /// Saves the Excel export of all account statements' transactions
    /// (`GET /v1/sessions/{sessionId}/account-statements/transactions/excel`) to `path`.
    pub async fn download_account_statement_transactions_excel(
        &self,
        session_id: Uuid,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_account_statement_transactions_excel()
            .session_id(session_id)
            .download_to(path)
            .await
    }

    /// Saves the Excel file of one account statement
    /// (`GET /v1/sessions/{sessionId}/account-statements/{accountStatementId}/excel`) to `path`.
    pub async fn download_account_statement_excel(
        &self,
        session_id: Uuid,
        account_statement_id: &str,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_account_statement_excel()
            .session_id(session_id)
            .account_statement_id(account_statement_id)
            .download_to(path)
            .await
    }

    /// Saves one account statement as TSV
    /// (`GET /v1/sessions/{sessionId}/account-statements/{accountStatementId}/tsv`) to `path`.
    /// To read its rows instead, see [`Client::account_statement_rows`].
    pub async fn download_account_statement_tsv(
        &self,
        session_id: Uuid,
        account_statement_id: &str,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_account_statement_tsv()
            .session_id(session_id)
            .account_statement_id(account_statement_id)
            .download_to(path)
            .await
    }

    /// Saves an attachment's content
    /// (`GET /v1/sessions/{sessionId}/attachments/{attachmentId}/content`) to `path`.
    pub async fn download_attachment(
        &self,
        session_id: Uuid,
        attachment_id: &str,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_attachment_content()
            .session_id(session_id)
            .attachment_id(attachment_id)
            .download_to(path)
            .await
    }

    /// Saves an identity-verification image
    /// (`GET /v1/sessions/{sessionId}/identity-verifications/{verificationId}/images/{imageId}/content`)
    /// to `path`.
    pub async fn download_identity_image(
        &self,
        session_id: Uuid,
        verification_id: &str,
        image_id: &str,
        path: impl AsRef<Path> + Send,
    ) -> Result<SavedFile> {
        self.get_identity_verification_image_content()
            .session_id(session_id)
            .verification_id(verification_id)
            .image_id(image_id)
            .download_to(path)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{StreamExt, stream};
    use reqwest::StatusCode;

    fn download(headers: &[(&str, &str)], chunks: Vec<&'static [u8]>) -> Download {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let body = stream::iter(chunks.into_iter().map(|c| Ok(Bytes::from_static(c))));
        Download::from_response(ResponseValue::new(
            ByteStream::new(Box::pin(body)),
            StatusCode::OK,
            map,
        ))
    }

    #[tokio::test]
    async fn a_body_longer_than_content_length_is_a_download_error() {
        let d = download(&[("content-length", "4")], vec![b"abc", b"def"]);
        let items: Vec<_> = d.bytes_stream().collect().await;
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].as_ref().unwrap(), &Bytes::from_static(b"abc"));
        let err = items[1].as_ref().unwrap_err();
        assert!(matches!(err, Error::Download { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("longer than its Content-Length of 4"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_body_that_ends_early_is_a_download_error() {
        let d = download(&[("content-length", "10")], vec![b"abc"]);
        let items: Vec<_> = d.bytes_stream().collect().await;
        let err = items.last().unwrap().as_ref().unwrap_err();
        assert!(
            err.to_string().contains("ended after 3 of its 10 bytes"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn headers_are_exposed() {
        let d = download(
            &[
                ("content-type", "application/pdf"),
                (
                    "content-disposition",
                    "attachment; filename=\"../report.pdf\"",
                ),
            ],
            vec![],
        );
        assert_eq!(d.content_type(), Some("application/pdf"));
        assert_eq!(d.file_name(), Some("_report.pdf"));
        assert_eq!(d.content_length(), None);
    }
}
