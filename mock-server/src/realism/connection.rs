//! Connections a request can see: its remote address (the rate limit's bucket for callers
//! without a token) and a switch that resets it (the `reset` fault).
//!
//! A handler cannot reach its socket through hyper, so the listener wraps each accepted stream
//! with a shared switch, and hands the same switch to every request of that connection as its
//! connect info. Once the switch is thrown, the stream fails every read and write: hyper then
//! drops the connection without writing the response, and the stream closes with `SO_LINGER`
//! 0, which sends a TCP RST instead of an orderly FIN.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A TCP listener whose connections can be reset from a request.
pub(crate) struct ObservedListener {
    inner: TcpListener,
}

impl ObservedListener {
    pub(crate) fn new(inner: TcpListener) -> Self {
        ObservedListener { inner }
    }
}

impl Listener for ObservedListener {
    type Io = ResettableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        // axum's own accept loop (it logs and retries accept errors).
        let (stream, remote) = Listener::accept(&mut self.inner).await;
        let stream = ResettableStream {
            stream,
            reset: Arc::new(AtomicBool::new(false)),
        };
        (stream, remote)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// An accepted stream that fails once its connection is reset.
pub(crate) struct ResettableStream {
    stream: TcpStream,
    reset: Arc<AtomicBool>,
}

impl ResettableStream {
    fn is_reset(&self) -> bool {
        self.reset.load(Ordering::Acquire)
    }
}

fn reset_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "reset by the mock's --faults",
    )
}

impl Drop for ResettableStream {
    fn drop(&mut self) {
        if self.is_reset() {
            // Zero linger: closing sends RST and discards unsent data; it does not block.
            let _ = self.stream.set_zero_linger();
        }
    }
}

impl AsyncRead for ResettableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_reset() {
            return Poll::Ready(Err(reset_error()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_reset() {
            return Poll::Ready(Err(reset_error()));
        }
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_reset() {
            return Poll::Ready(Err(reset_error()));
        }
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_reset() {
            return Poll::Ready(Err(reset_error()));
        }
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_reset() {
            return Poll::Ready(Err(reset_error()));
        }
        Pin::new(&mut this.stream).poll_shutdown(cx)
    }
}

/// What a request knows of its connection (its connect info).
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    remote: SocketAddr,
    reset: Arc<AtomicBool>,
}

impl Connection {
    /// The caller's address.
    pub(crate) fn remote(&self) -> SocketAddr {
        self.remote
    }

    /// Resets the connection: nothing more is read or written on it, and it closes with RST.
    pub(crate) fn reset(&self) {
        self.reset.store(true, Ordering::Release);
    }
}

impl Connected<IncomingStream<'_, ObservedListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, ObservedListener>) -> Self {
        Connection {
            remote: *stream.remote_addr(),
            reset: Arc::clone(&stream.io().reset),
        }
    }
}
