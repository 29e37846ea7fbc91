//! An object in object storage read as a file: the readers' small reads (a zip directory, a
//! pickle, a header) served from a bounded cache of fetched ranges, and long runs of bytes
//! (hashing) streamed in ranges with the next one in flight while the current one is hashed.
//!
//! Only what is asked for is fetched. A read that the cache does not hold fetches its bytes
//! and some read-ahead: [`MIN_FETCH`] after a jump, doubling while reads follow each other up
//! to [`MAX_FETCH`], so that a reader walking a record byte run by byte run costs a few
//! requests, and a reader that jumps (a zip's local headers) costs little more than it reads.

use crate::base::cloud::{self, CloudError, Location};
use std::io;
use std::sync::Mutex;

/// The least fetched for a read the cache misses.
pub const MIN_FETCH: u64 = 16 << 10;
/// The most read-ahead grows to while reads are sequential.
pub const MAX_FETCH: u64 = 8 << 20;
/// The most the cache holds; the ranges used longest ago are dropped first.
pub const CACHE_BYTES: u64 = 32 << 20;
/// The range each request of a streamed read asks for.
pub const STREAM_RANGE: u64 = 8 << 20;

/// A fetched range of the object.
struct Segment {
    start: u64,
    bytes: bytes::Bytes,
    used: u64,
}

#[derive(Default)]
struct Cache {
    segments: Vec<Segment>,
    held: u64,
    clock: u64,
    /// Where the previous read ended, and how much the next sequential fetch takes.
    next: u64,
    ahead: u64,
}

impl Cache {
    /// Copies `buf.len()` bytes at `offset` out of one cached segment, if one holds them.
    fn serve(&mut self, offset: u64, buf: &mut [u8]) -> bool {
        self.clock += 1;
        let clock = self.clock;
        let end = offset + buf.len() as u64;
        for s in &mut self.segments {
            if s.start <= offset && end <= s.start + s.bytes.len() as u64 {
                let from = (offset - s.start) as usize;
                buf.copy_from_slice(&s.bytes[from..from + buf.len()]);
                s.used = clock;
                return true;
            }
        }
        false
    }

    fn insert(&mut self, start: u64, bytes: bytes::Bytes) {
        self.clock += 1;
        self.held += bytes.len() as u64;
        self.segments.push(Segment {
            start,
            bytes,
            used: self.clock,
        });
        while self.held > CACHE_BYTES && self.segments.len() > 1 {
            let oldest = self
                .segments
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.used)
                .map(|(i, _)| i)
                .unwrap_or(0);
            let s = self.segments.swap_remove(oldest);
            self.held -= s.bytes.len() as u64;
        }
    }
}

/// An object opened for reading.
pub struct RemoteObject {
    at: Location,
    len: u64,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject")
            .field("url", &self.at.url())
            .field("len", &self.len)
            .finish()
    }
}

fn io_error(e: CloudError) -> io::Error {
    if e.is_not_found() {
        io::Error::new(io::ErrorKind::NotFound, e.to_string())
    } else {
        io::Error::other(e.to_string())
    }
}

impl RemoteObject {
    /// Opens the object at `at` (one HEAD request for its size).
    pub fn open(at: Location) -> io::Result<RemoteObject> {
        let len = cloud::size(&at).map_err(io_error)?;
        Ok(RemoteObject {
            at,
            len,
            cache: Mutex::new(Cache::default()),
        })
    }

    /// Its location.
    pub fn location(&self) -> &Location {
        &self.at
    }

    /// Its size.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fills `buf` with the bytes at `offset` (already checked to lie inside the object).
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let want = buf.len() as u64;
        let (start, len) = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if cache.serve(offset, buf) {
                cache.next = offset + want;
                return Ok(());
            }
            let sequential = offset == cache.next;
            cache.ahead = if sequential {
                (cache.ahead * 2).clamp(MIN_FETCH, MAX_FETCH)
            } else {
                MIN_FETCH
            };
            cache.next = offset + want;
            // A read larger than the cache would hold is fetched as asked and not kept.
            let len = want.max(cache.ahead).min(self.len - offset);
            (offset, len)
        };
        let bytes = cloud::get_range(&self.at, start..start + len).map_err(io_error)?;
        buf.copy_from_slice(&bytes[..buf.len()]);
        if len <= CACHE_BYTES / 2 {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.insert(start, bytes);
        }
        Ok(())
    }

    /// Calls `each` with consecutive chunks (at most `chunk` bytes, a multiple of it except the
    /// last) of the bytes `offset..end`, fetched in ranges of [`STREAM_RANGE`], the next range
    /// in flight while the current one is handed out. Memory: two ranges at most.
    pub fn for_each_chunk(
        &self,
        offset: u64,
        end: u64,
        chunk: usize,
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        let range_at = |at: u64| at..end.min(at + STREAM_RANGE);
        let mut at = offset;
        let mut pending =
            (at < end).then(|| cloud::spawn(cloud::get_range_async(self.at.clone(), range_at(at))));
        while let Some(handle) = pending.take() {
            let bytes = cloud::block_on(handle)
                .map_err(|e| io::Error::other(format!("a read of {} failed: {e}", self.at.url())))?
                .map_err(io_error)?;
            let next = at + bytes.len() as u64;
            if next < end {
                pending = Some(cloud::spawn(cloud::get_range_async(
                    self.at.clone(),
                    range_at(next),
                )));
            }
            for piece in bytes.chunks(chunk) {
                each(piece);
            }
            at = next;
        }
        Ok(())
    }
}
