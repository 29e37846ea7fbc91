//! An object in object storage read as a file: the readers' small reads (a zip directory, a
//! pickle, a header) served from a bounded cache of fetched ranges, and long runs of bytes
//! (hashing) streamed in ranges with the next one in flight while the current one is hashed.
//!
//! Only what is asked for is fetched. A read that the cache does not hold fetches its bytes
//! and some read-ahead: [`MIN_FETCH`] (a page) after a jump, doubling while reads follow each
//! other up to [`MAX_FETCH`], so that a reader walking a record run by run costs a few
//! requests, and a reader that jumps (a zip's local headers, one per record) costs little more
//! than it reads: a request per jump, which is what a checkpoint of many records pays.

use crate::base::cloud::{self, CloudError, Location};
use std::io;
use std::sync::Mutex;

/// The least fetched for a read the cache misses.
pub const MIN_FETCH: u64 = 4 << 10;
/// The most read-ahead grows to while reads are sequential.
pub const MAX_FETCH: u64 = 8 << 20;
/// The most the cache holds; the ranges used longest ago are dropped first.
pub const CACHE_BYTES: u64 = 32 << 20;
/// Objects this small are fetched whole at the first read.
pub const WHOLE_OBJECT: u64 = 64 << 10;
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
    /// Copies bytes at `offset` into `buf` from the cached segment holding `offset`, as many
    /// as it holds (up to `buf.len()`); 0 when no segment holds `offset`.
    fn serve(&mut self, offset: u64, buf: &mut [u8]) -> usize {
        self.clock += 1;
        let clock = self.clock;
        for s in &mut self.segments {
            let seg_end = s.start + s.bytes.len() as u64;
            if s.start <= offset && offset < seg_end {
                let from = (offset - s.start) as usize;
                let n = buf.len().min(s.bytes.len() - from);
                buf[..n].copy_from_slice(&s.bytes[from..from + n]);
                s.used = clock;
                return n;
            }
        }
        0
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

    /// Fills `buf` with the bytes at `offset` (already checked to lie inside the object): what
    /// the cache holds from it, then one fetch for the rest and its read-ahead.
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let want = buf.len() as u64;
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let (start, len) = {
                let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
                let n = cache.serve(at, &mut buf[done..]);
                if n > 0 {
                    done += n;
                    continue;
                }
                // Sequential: this read starts where the previous one ended, or continues
                // past the cached part of itself.
                let sequential = at == cache.next || done > 0;
                cache.ahead = if sequential {
                    (cache.ahead * 2).clamp(MIN_FETCH, MAX_FETCH)
                } else {
                    MIN_FETCH
                };
                let rest = (buf.len() - done) as u64;
                if self.len <= WHOLE_OBJECT {
                    // A small object is fetched whole: one request instead of several.
                    (0, self.len)
                } else {
                    // A read larger than the cache would hold is fetched as asked, not kept.
                    (at, rest.max(cache.ahead).min(self.len - at))
                }
            };
            let bytes = cloud::get_range(&self.at, start..start + len).map_err(io_error)?;
            let skip = (at - start) as usize;
            let n = (buf.len() - done).min(bytes.len().saturating_sub(skip));
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{}: no bytes at {at}", self.at.url()),
                ));
            }
            buf[done..done + n].copy_from_slice(&bytes[skip..skip + n]);
            done += n;
            if len <= CACHE_BYTES / 2 {
                let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
                cache.insert(start, bytes);
            }
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.next = offset + want;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_serves_reads_inside_one_segment_and_drops_the_least_used() {
        let mut c = Cache::default();
        let seg = |start: u8, len: usize| bytes::Bytes::from(vec![start; len]);
        c.insert(0, seg(1, 100));
        c.insert(1000, seg(2, 100));
        let mut buf = [0u8; 10];
        assert_eq!(c.serve(95, &mut buf[..5]), 5);
        assert_eq!(&buf[..5], &[1; 5]);
        // A read past a segment's end is served up to it; one outside every segment not at all.
        assert_eq!(c.serve(95, &mut buf), 5);
        assert_eq!(c.serve(1095, &mut buf), 5);
        assert_eq!(c.serve(500, &mut buf), 0);
        assert_eq!(c.serve(1000, &mut buf), 10);
        assert_eq!(buf, [2; 10]);
        // Filling past CACHE_BYTES drops the segment used longest ago (the one at 0, last
        // used before the one at 1000).
        let big = (CACHE_BYTES / 2) as usize;
        c.insert(10_000, seg(3, big));
        c.insert(20_000_000, seg(4, big));
        assert!(c.held <= CACHE_BYTES);
        assert_eq!(c.serve(0, &mut buf[..1]), 0);
        assert_eq!(c.serve(20_000_000, &mut buf[..1]), 1);
    }
}
