//! Response bodies: small ones held whole, and a file streamed from a range of it. The file is
//! read on a blocking thread in chunks of [`CHUNK`] bytes into a channel a few chunks deep,
//! so reading from the disk and writing to the socket overlap and a slow client holds at most
//! that much memory; when the client goes away the channel closes and the reading stops.

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use std::io::{Read, Seek, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Bytes read from the file at a time (small enough that the chunks in flight stay in the
/// processor's cache between the read and the socket's write).
pub const CHUNK: usize = 256 << 10;
/// Chunks read ahead of the socket.
const DEPTH: usize = 4;

/// A response body.
#[derive(Debug)]
pub enum Body {
    /// Nothing (HEAD, or an answer with no body).
    Empty,
    /// Bytes held in memory.
    Full(Option<Bytes>),
    /// A file's bytes as they are read.
    File {
        /// Chunks from the reading thread.
        chunks: mpsc::Receiver<std::io::Result<Bytes>>,
        /// Bytes still to come.
        remaining: u64,
        /// The server's count of bytes sent.
        sent: Arc<AtomicU64>,
    },
}

impl Body {
    /// A body of `bytes`.
    pub fn full(bytes: impl Into<Bytes>) -> Body {
        Body::Full(Some(bytes.into()))
    }

    /// Streams `len` bytes of `file` from `start`, counting them into `sent`.
    pub fn file(mut file: std::fs::File, start: u64, len: u64, sent: Arc<AtomicU64>) -> Body {
        let (tx, rx) = mpsc::channel(DEPTH);
        tokio::task::spawn_blocking(move || {
            if let Err(e) = file.seek(SeekFrom::Start(start)) {
                let _ = tx.blocking_send(Err(e));
                return;
            }
            let mut left = len;
            while left > 0 {
                let want = left.min(CHUNK as u64);
                // Read into spare capacity: no zeroing of a buffer about to be overwritten.
                let mut buf = Vec::with_capacity(want as usize);
                let got = match (&mut file).take(want).read_to_end(&mut buf) {
                    Ok(n) if n as u64 == want => Ok(Bytes::from(buf)),
                    Ok(n) => Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("the file ended {} bytes early", left - n as u64),
                    )),
                    Err(e) => Err(e),
                };
                let failed = got.is_err();
                if tx.blocking_send(got).is_err() || failed {
                    return; // the client went away, or the file ended early
                }
                left -= want;
            }
        });
        Body::File {
            chunks: rx,
            remaining: len,
            sent,
        }
    }
}

impl HttpBody for Body {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            Body::Empty => Poll::Ready(None),
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::File {
                chunks,
                remaining,
                sent,
            } => {
                if *remaining == 0 {
                    return Poll::Ready(None);
                }
                match chunks.poll_recv(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(Some(Ok(b))) => {
                        *remaining = remaining.saturating_sub(b.len() as u64);
                        sent.fetch_add(b.len() as u64, Ordering::Relaxed);
                        Poll::Ready(Some(Ok(Frame::data(b))))
                    }
                    Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
                    Poll::Ready(None) => Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the file's reading stopped early",
                    )))),
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Empty => true,
            Body::Full(b) => b.is_none(),
            Body::File { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Empty => SizeHint::with_exact(0),
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::File { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}
