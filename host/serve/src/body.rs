//! Response bodies: small ones held whole, and a file (or an object, for a store on object
//! storage) streamed from a range of it. The bytes are read on a blocking thread in chunks of
//! [`CHUNK`] bytes ([`REMOTE_CHUNK`] for an object) into a channel a few chunks deep, so
//! reading and writing to the socket overlap and a slow client holds at most that much
//! memory; when the client goes away the channel closes and the reading stops.

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use socair_store::base::cloud::{self, Location};
use std::io::{Read, Seek, SeekFrom};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Bytes read from the file at a time (small enough that the chunks in flight stay in the
/// processor's cache between the read and the socket's write).
pub const CHUNK: usize = 256 << 10;
/// Bytes of an object in a store on object storage asked for at a time (one ranged GET each:
/// large enough that a request's round trip is small beside its transfer).
pub const REMOTE_CHUNK: usize = 2 << 20;
/// Chunks read ahead of the socket.
const DEPTH: usize = 4;

/// A response body.
#[derive(Debug)]
pub enum Body {
    /// Nothing (HEAD, or an answer with no body).
    Empty,
    /// Bytes held in memory.
    Full(Option<Bytes>),
    /// A file's or an object's bytes as they are read.
    Streamed {
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
        let mut sought = false;
        Body::read_ahead(start, len, CHUNK, sent, move |at, want| {
            if !sought {
                file.seek(SeekFrom::Start(at))?;
                sought = true;
            }
            // Read into spare capacity: no zeroing of a buffer about to be overwritten.
            let mut buf = Vec::with_capacity(want);
            let n = (&mut file).take(want as u64).read_to_end(&mut buf)?;
            if n != want {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file ended {} bytes early", want - n),
                ));
            }
            Ok(Bytes::from(buf))
        })
    }

    /// Streams `len` bytes of the object at `at` (a store on object storage) from `start`,
    /// one ranged read of [`REMOTE_CHUNK`] bytes at a time, counting them into `sent`.
    pub fn object(at: Location, start: u64, len: u64, sent: Arc<AtomicU64>) -> Body {
        Body::read_ahead(start, len, REMOTE_CHUNK, sent, move |offset, want| {
            cloud::get_range(&at, offset..offset + want as u64)
                .map_err(|e| std::io::Error::other(e.reason()))
        })
    }

    /// Reads `len` bytes from `start` with `read(offset, want)` on a blocking thread, `chunk`
    /// bytes at a time, [`DEPTH`] chunks ahead of the socket; stops when the client goes away
    /// or a read fails (the failure ends the body with an error: the client sees a short
    /// answer, never wrong bytes).
    fn read_ahead(
        start: u64,
        len: u64,
        chunk: usize,
        sent: Arc<AtomicU64>,
        mut read: impl FnMut(u64, usize) -> std::io::Result<Bytes> + Send + 'static,
    ) -> Body {
        let (tx, rx) = mpsc::channel(DEPTH);
        tokio::task::spawn_blocking(move || {
            let mut at = start;
            let end = start + len;
            while at < end {
                let want = (end - at).min(chunk as u64) as usize;
                let got = read(at, want).and_then(|b| {
                    if b.len() == want {
                        Ok(b)
                    } else {
                        Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!("asked for {want} bytes at {at}, read {}", b.len()),
                        ))
                    }
                });
                let failed = got.is_err();
                if tx.blocking_send(got).is_err() || failed {
                    return; // the client went away, or the reading failed
                }
                at += want as u64;
            }
        });
        Body::Streamed {
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
            Body::Streamed {
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
            Body::Streamed { remaining, .. } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Empty => SizeHint::with_exact(0),
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Streamed { remaining, .. } => SizeHint::with_exact(*remaining),
        }
    }
}
