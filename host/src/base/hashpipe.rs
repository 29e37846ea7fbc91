//! SHA-256 on a second core while the caller copies.
//!
//! Copying a file and hashing it are two passes of work over the same bytes; done one after the
//! other on one thread, a copy costs their sum. [`HashPipe`] hands each buffer, once written, to
//! a thread that hashes it, and hands the buffer back to be filled again, so the copy costs about
//! the larger of the two. A fixed number of buffers circulate, so memory is bounded
//! (`BUFFERS × capacity`) whatever the file's size.
//!
//! [`Sha256Feed`] is the same hash fed with slices of any length: on one core it hashes them in
//! the caller's thread (a second thread would only add a copy and the switches between them);
//! on more, it copies them into a [`HashPipe`]'s buffers. Its state can be taken back
//! unfinished ([`Sha256Feed::into_state`]) to go on hashing elsewhere.

use sha2::{Digest, Sha256};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::thread::JoinHandle;

/// Buffers in circulation: enough that neither side waits on the other for long.
const BUFFERS: usize = 4;

/// A SHA-256 computed on its own thread over the buffers sent to it, in order.
pub struct HashPipe {
    to_hasher: Option<SyncSender<Vec<u8>>>,
    free: Receiver<Vec<u8>>,
    hasher: Option<JoinHandle<Sha256>>,
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
        HashPipe::continuing(Sha256::new(), capacity)
    }

    /// Starts the hashing thread from `state` (a hash begun elsewhere), with buffers of
    /// `capacity` bytes.
    pub fn continuing(state: Sha256, capacity: usize) -> Self {
        let (to_hasher, work) = sync_channel::<Vec<u8>>(BUFFERS);
        let (give_back, free): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = channel();
        for _ in 0..BUFFERS {
            let _ = give_back.send(Vec::with_capacity(capacity));
        }
        let hasher = std::thread::spawn(move || {
            let mut h = state;
            for mut buf in work {
                h.update(&buf);
                buf.clear();
                // The caller may have finished and stopped taking buffers back.
                let _ = give_back.send(buf);
            }
            h
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
    pub fn finish(self) -> std::io::Result<[u8; 32]> {
        Ok(self.finish_state()?.finalize().into())
    }

    /// Waits for the hasher and returns its state, unfinished: the hash of everything sent so
    /// far, to be continued.
    pub fn finish_state(mut self) -> std::io::Result<Sha256> {
        drop(self.to_hasher.take());
        match self.hasher.take().map(JoinHandle::join) {
            Some(Ok(state)) => Ok(state),
            _ => Err(std::io::Error::other("the hashing thread died")),
        }
    }
}

/// Whether a second core is there to hash on (the process's CPU affinity counts: under
/// `taskset -c 0` there is one).
pub fn second_core() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// A SHA-256 fed with slices in order: in the caller's thread, or through a [`HashPipe`] on a
/// second core.
pub enum Sha256Feed {
    /// Hashed in the caller's thread.
    Here(Sha256),
    /// Copied into buffers that a second thread hashes; `pending` is the one being filled.
    Piped {
        /// The hashing thread.
        pipe: HashPipe,
        /// The buffer being filled.
        pending: Vec<u8>,
    },
}

impl std::fmt::Debug for Sha256Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Sha256Feed::Here(_) => "Sha256Feed::Here",
            Sha256Feed::Piped { .. } => "Sha256Feed::Piped",
        })
    }
}

impl Sha256Feed {
    /// The size of the buffers a piped feed sends.
    pub const BUFFER: usize = 1 << 20;

    /// A feed continuing `state`: piped when `piped` is set, else hashed here.
    pub fn resume(state: Sha256, piped: bool) -> Self {
        if !piped {
            return Sha256Feed::Here(state);
        }
        let pipe = HashPipe::continuing(state, Self::BUFFER);
        let pending = pipe.buffer();
        Sha256Feed::Piped { pipe, pending }
    }

    /// A new feed, piped when a second core is there.
    pub fn new() -> Self {
        Sha256Feed::resume(Sha256::new(), second_core())
    }

    /// Hashes `bytes` next.
    pub fn update(&mut self, mut bytes: &[u8]) {
        match self {
            Sha256Feed::Here(h) => h.update(bytes),
            Sha256Feed::Piped { pipe, pending } => {
                while !bytes.is_empty() {
                    let take = bytes.len().min(Self::BUFFER - pending.len());
                    pending.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if pending.len() == Self::BUFFER {
                        let full = std::mem::replace(pending, pipe.buffer());
                        pipe.send(full);
                    }
                }
            }
        }
    }

    /// The state, unfinished, once everything fed is hashed.
    pub fn into_state(self) -> std::io::Result<Sha256> {
        match self {
            Sha256Feed::Here(h) => Ok(h),
            Sha256Feed::Piped { pipe, pending } => {
                pipe.send(pending);
                pipe.finish_state()
            }
        }
    }

    /// The SHA-256 of everything fed.
    pub fn finish(self) -> std::io::Result<[u8; 32]> {
        Ok(self.into_state()?.finalize().into())
    }
}

impl Default for Sha256Feed {
    fn default() -> Self {
        Sha256Feed::new()
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
    fn a_feed_hashes_slices_of_any_length_here_or_piped_and_resumes() {
        let data: Vec<u8> = (0..5_000_000u32).map(|i| (i * 13 % 253) as u8).collect();
        let want: [u8; 32] = Sha256::digest(&data).into();
        for piped in [false, true] {
            // Pieces of uneven sizes, some longer than a buffer; stopped half-way, its state
            // taken back and resumed (the other way round), then finished.
            let mut feed = Sha256Feed::resume(Sha256::new(), piped);
            let (first, second) = data.split_at(2_345_678);
            for piece in first.chunks(1_500_001) {
                feed.update(piece);
            }
            let state = feed.into_state().unwrap();
            let mut feed = Sha256Feed::resume(state, !piped);
            for piece in second.chunks(7) {
                feed.update(piece);
            }
            assert_eq!(feed.finish().unwrap(), want, "piped first: {piped}");
        }
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
