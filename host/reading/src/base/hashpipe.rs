//! SHA-256 on a second core while the caller copies.
//!
//! Copying a file and hashing it are two passes of work over the same bytes; done one after the
//! other on one thread, a copy costs their sum. [`HashPipe`] hands each buffer, once written, to
//! a thread that hashes it, and hands the buffer back to be filled again, so the copy costs about
//! the larger of the two. A fixed number of buffers circulate, so memory is bounded
//! (`BUFFERS × capacity`) whatever the file's size.

use sha2::{Digest, Sha256};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Buffers in circulation: enough that neither side waits on the other for long.
const BUFFERS: usize = 4;

/// A SHA-256 computed on its own thread over the buffers sent to it, in order.
pub struct HashPipe {
    to_hasher: Option<SyncSender<Vec<u8>>>,
    free: Receiver<Vec<u8>>,
    hasher: Option<JoinHandle<[u8; 32]>>,
    capacity: usize,
}

impl std::fmt::Debug for HashPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashPipe")
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl HashPipe {
    /// Starts the hashing thread with buffers of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        let (to_hasher, work) = sync_channel::<Vec<u8>>(BUFFERS);
        let (give_back, free): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = channel();
        for _ in 0..BUFFERS {
            let _ = give_back.send(Vec::with_capacity(capacity));
        }
        let hasher = std::thread::spawn(move || {
            let mut h = Sha256::new();
            for mut buf in work {
                h.update(&buf);
                buf.clear();
                // The caller may have finished and stopped taking buffers back.
                let _ = give_back.send(buf);
            }
            h.finalize().into()
        });
        Self {
            to_hasher: Some(to_hasher),
            free,
            hasher: Some(hasher),
            capacity,
        }
    }

    /// An empty buffer (capacity as given to [`HashPipe::new`]) to fill and [`send`](Self::send).
    pub fn buffer(&self) -> Vec<u8> {
        // The hasher gives every buffer back unless it died, and then `finish` reports it.
        self.free
            .recv()
            .unwrap_or_else(|_| Vec::with_capacity(self.capacity))
    }

    /// Hashes `buf` next, after everything sent before it.
    pub fn send(&self, buf: Vec<u8>) {
        if let Some(tx) = &self.to_hasher {
            let _ = tx.send(buf);
        }
    }

    /// Waits for the hasher and returns the SHA-256 of everything sent.
    pub fn finish(mut self) -> std::io::Result<[u8; 32]> {
        drop(self.to_hasher.take());
        match self.hasher.take().map(JoinHandle::join) {
            Some(Ok(digest)) => Ok(digest),
            _ => Err(std::io::Error::other("the hashing thread died")),
        }
    }
}

impl Drop for HashPipe {
    fn drop(&mut self) {
        // Abandoned (an error mid-copy): let the thread end on its own.
        drop(self.to_hasher.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_what_was_sent_in_order() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let pipe = HashPipe::new(4096);
        for chunk in data.chunks(4096) {
            let mut buf = pipe.buffer();
            assert!(buf.is_empty() && buf.capacity() >= 4096);
            buf.extend_from_slice(chunk);
            pipe.send(buf);
        }
        let got = pipe.finish().unwrap();
        let want: [u8; 32] = Sha256::digest(&data).into();
        assert_eq!(got, want);
    }

    #[test]
    fn nothing_sent_is_the_empty_hash() {
        let want: [u8; 32] = Sha256::digest(b"").into();
        assert_eq!(HashPipe::new(16).finish().unwrap(), want);
    }

    #[test]
    fn an_abandoned_pipe_does_not_hang() {
        let pipe = HashPipe::new(16);
        let mut buf = pipe.buffer();
        buf.push(1);
        pipe.send(buf);
        drop(pipe);
    }
}
