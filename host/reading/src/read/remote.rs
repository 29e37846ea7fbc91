//! An object in object storage read as a file: the readers' small reads (a zip directory, a
//! pickle, a header) served from a bounded cache of fetched ranges, and long runs of bytes
//! (hashing) streamed in ranges with the next one in flight while the current one is hashed.
//!
//! Only what is asked for is fetched. A read that the cache does not hold fetches its bytes
//! and some read-ahead: [`MIN_FETCH`] (a page) after a jump, doubling while reads follow each
//! other up to [`MAX_FETCH`], from where the next [`AHEAD`] ranges are fetched in the
//! background while the reader works through the current one. Where a reader will jump next
//! when that is known beforehand (a zip's local headers, which its central directory lists:
//! [`crate::read::zip_hints`]) is announced first ([`RemoteObject::prefetch`]): those ranges
//! are fetched together, [`IN_FLIGHT`] requests at a time, so that a checkpoint of many
//! records costs a few round trips instead of one per record.

use crate::base::cloud::{self, CloudError, Location};
use std::collections::BTreeMap;
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
/// Ranges of [`MAX_FETCH`] bytes fetched ahead of a reader going through an object in order,
/// at once (one connection seldom carries a range as fast as the reader hashes it).
pub const AHEAD: usize = 4;
/// Requests in flight at once for the ranges a reader said it will read.
pub const IN_FLIGHT: usize = 64;
/// The most one batch of announced ranges fetches, so that it stays in the cache until read.
const BATCH_BYTES: u64 = CACHE_BYTES / 4;
/// The most ranges one announcement keeps (a hint; past it, reads fetch as they come).
const PLAN_MAX: usize = 1 << 20;
/// How many cached segments below a read's offset are looked at for one that holds it.
const LOOK_BACK: usize = 8;

/// A fetched range of the object.
struct Segment {
    bytes: bytes::Bytes,
    used: u64,
}

/// A range being fetched in the background, ahead of a sequential reader.
struct Ahead {
    start: u64,
    end: u64,
    fetch: tokio::task::JoinHandle<Result<bytes::Bytes, CloudError>>,
}

#[derive(Default)]
struct Cache {
    /// Segments by their first byte.
    segments: BTreeMap<u64, Segment>,
    /// Segment starts by when they were last used (least recent first).
    by_use: BTreeMap<u64, u64>,
    held: u64,
    clock: u64,
    /// Where the previous read ended, and how much the next sequential fetch takes.
    next: u64,
    ahead: u64,
    /// The next ranges of a sequential reader, being fetched, in order.
    in_flight: std::collections::VecDeque<Ahead>,
    /// Ranges a reader announced, `(start, end)`, in order and disjoint; those before
    /// `planned_from` are fetched (or passed).
    plan: Vec<(u64, u64)>,
    planned_from: usize,
    /// Whether ranges were announced (even none).
    announced: bool,
}

impl Cache {
    /// Copies bytes at `offset` into `buf` from a cached segment holding `offset`, as many
    /// as it holds (up to `buf.len()`); 0 when no segment holds `offset`.
    fn serve(&mut self, offset: u64, buf: &mut [u8]) -> usize {
        let found = self
            .segments
            .range(..=offset)
            .rev()
            .take(LOOK_BACK)
            .find(|(&start, s)| offset < start + s.bytes.len() as u64)
            .map(|(&start, _)| start);
        let Some(start) = found else {
            return 0;
        };
        self.clock += 1;
        let clock = self.clock;
        let Some(s) = self.segments.get_mut(&start) else {
            return 0;
        };
        let from = (offset - start) as usize;
        let n = buf.len().min(s.bytes.len() - from);
        buf[..n].copy_from_slice(&s.bytes[from..from + n]);
        self.by_use.remove(&s.used);
        s.used = clock;
        self.by_use.insert(clock, start);
        n
    }

    /// Whether a cached segment holds all of `start..end`.
    fn holds(&self, start: u64, end: u64) -> bool {
        self.segments
            .range(..=start)
            .rev()
            .take(LOOK_BACK)
            .any(|(&s, seg)| end <= s + seg.bytes.len() as u64)
    }

    /// The parts of `start..end` no cached segment holds, in order.
    fn uncached(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let from = self
            .segments
            .range(..=start)
            .rev()
            .take(LOOK_BACK)
            .last()
            .map_or(start, |(&s, _)| s);
        let mut out = Vec::new();
        let mut at = start;
        for (&s, seg) in self.segments.range(from..end) {
            if s > at {
                out.push((at, s));
            }
            at = at.max(s + seg.bytes.len() as u64);
            if at >= end {
                return out;
            }
        }
        out.push((at, end));
        out
    }

    fn remove(&mut self, start: u64) {
        if let Some(old) = self.segments.remove(&start) {
            self.held -= old.bytes.len() as u64;
            self.by_use.remove(&old.used);
        }
    }

    /// Adds a fetched range. One that a cached segment holds already adds nothing; the
    /// segments it holds all of are dropped (so that a read finds the one segment holding
    /// it among the few that start before it, never behind a run of smaller ones).
    fn insert(&mut self, start: u64, bytes: bytes::Bytes) {
        let end = start + bytes.len() as u64;
        if bytes.is_empty() || self.holds(start, end) {
            return;
        }
        let inside: Vec<u64> = self
            .segments
            .range(start..end)
            .filter(|(&s, seg)| s + seg.bytes.len() as u64 <= end)
            .map(|(&s, _)| s)
            .collect();
        for s in inside {
            self.remove(s);
        }
        self.clock += 1;
        self.held += bytes.len() as u64;
        self.segments.insert(
            start,
            Segment {
                bytes,
                used: self.clock,
            },
        );
        self.by_use.insert(self.clock, start);
        while self.held > CACHE_BYTES && self.segments.len() > 1 {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            if let Some(s) = self.segments.remove(&oldest) {
                self.held -= s.bytes.len() as u64;
            }
        }
    }

    /// The index of the announced range, not yet fetched, that holds `offset`.
    fn planned_at(&self, offset: u64) -> Option<usize> {
        let rest = self.plan.get(self.planned_from..)?;
        let i = rest.partition_point(|&(_, end)| end <= offset);
        rest.get(i)
            .filter(|&&(start, _)| start <= offset)
            .map(|_| self.planned_from + i)
    }

    /// Takes the announced ranges from index `i` that one batch fetches, skipping those the
    /// cache holds, and marks them fetched.
    fn take_batch(&mut self, i: usize) -> Vec<(u64, u64)> {
        let mut batch = Vec::new();
        let mut bytes = 0u64;
        let mut at = i;
        while let Some(&(start, end)) = self.plan.get(at) {
            if !batch.is_empty() && bytes + (end - start) > BATCH_BYTES {
                break;
            }
            at += 1;
            // Only what the cache lacks: a merged range may span bytes already read.
            for (s, e) in self.uncached(start, end) {
                bytes += e - s;
                batch.push((s, e));
            }
        }
        self.planned_from = at;
        batch
    }
}

/// Announced ranges less than this far apart are fetched as one range, the bytes between
/// included: one request instead of two, and a full scan that goes on to read those bytes
/// does not fetch again the [`MIN_FETCH`] around each announced range (at most 4 KiB in
/// 256 KiB, 1.6%, is fetched twice).
const MERGE_GAP: u64 = 256 << 10;

/// Announced ranges in order, each at least [`MIN_FETCH`] long and inside an object of `len`
/// bytes, neighbours less than [`MERGE_GAP`] apart merged up to [`MAX_FETCH`]; at most
/// [`PLAN_MAX`] of them.
fn plan_of(ranges: &[(u64, u64)], len: u64) -> Vec<(u64, u64)> {
    let mut plan: Vec<(u64, u64)> = ranges
        .iter()
        .filter(|&&(offset, _)| offset < len)
        .take(PLAN_MAX)
        .map(|&(offset, n)| {
            let end = offset.saturating_add(n.max(MIN_FETCH)).min(len);
            (offset, end)
        })
        .collect();
    plan.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(plan.len());
    for (start, end) in plan {
        match merged.last_mut() {
            Some(last)
                if start <= last.1.saturating_add(MERGE_GAP)
                    && end.max(last.1) - last.0 <= MAX_FETCH =>
            {
                last.1 = last.1.max(end);
            }
            _ => merged.push((start, end)),
        }
    }
    merged
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

/// A failed request as an input's read error: without the URL, which the input's own
/// errors name (`s3://m/x.bin: no AWS credentials…`, not the URL twice).
fn io_error(e: CloudError) -> io::Error {
    if e.is_not_found() {
        io::Error::new(io::ErrorKind::NotFound, e.reason())
    } else {
        io::Error::other(e.reason())
    }
}

impl RemoteObject {
    /// Opens the object at `at` (one HEAD request for its size).
    pub fn open(at: Location) -> io::Result<RemoteObject> {
        let len = cloud::size(&at).map_err(io_error)?;
        Ok(RemoteObject::of_size(at, len))
    }

    /// The object at `at`, whose size is known already (no request).
    pub fn of_size(at: Location, len: u64) -> RemoteObject {
        RemoteObject {
            at,
            len,
            cache: Mutex::new(Cache::default()),
        }
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

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether ranges were announced for it already ([`RemoteObject::prefetch`]).
    pub fn announced(&self) -> bool {
        self.cache().announced
    }

    /// Notes the ranges `(offset, len)` a reader is about to read, and fetches the first
    /// batch of them now, [`IN_FLIGHT`] requests at a time; later batches are fetched when a
    /// read reaches them. A hint: a failed fetch is left for the read to try again.
    pub fn prefetch(&self, ranges: &[(u64, u64)]) {
        self.cache().announced = true;
        if self.len <= WHOLE_OBJECT || ranges.is_empty() {
            return;
        }
        let batch = {
            let mut cache = self.cache();
            // Ranges the cache holds already are not announced again: a reader that hints a
            // level at a time (HDF5's B-trees) names some it has read, and merged with their
            // neighbours they would be fetched twice.
            let fresh: Vec<(u64, u64)> = ranges
                .iter()
                .filter(|&&(offset, n)| {
                    offset >= self.len
                        || !cache.holds(offset, offset.saturating_add(n.max(1)).min(self.len))
                })
                .copied()
                .collect();
            let plan = plan_of(&fresh, self.len);
            cache.plan = plan;
            cache.planned_from = 0;
            cache.take_batch(0)
        };
        let _ = self.fetch_all(batch);
    }

    /// Fetches `ranges` into the cache, [`IN_FLIGHT`] at a time.
    fn fetch_all(&self, ranges: Vec<(u64, u64)>) -> Result<(), CloudError> {
        use futures::StreamExt;
        if ranges.is_empty() {
            return Ok(());
        }
        let at = &self.at;
        cloud::waited(ranges.len().div_ceil(IN_FLIGHT) as u64);
        let fetched: Vec<(u64, Result<bytes::Bytes, CloudError>)> = cloud::block_on(
            futures::stream::iter(ranges)
                .map(|(start, end)| {
                    let at = at.clone();
                    async move { (start, cloud::get_range_async(at, start..end).await) }
                })
                .buffer_unordered(IN_FLIGHT)
                .collect(),
        );
        let mut cache = self.cache();
        let mut failure = None;
        for (start, got) in fetched {
            match got {
                Ok(bytes) => cache.insert(start, bytes),
                Err(e) => failure = Some(e),
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Fills `buf` with the bytes at `offset` (already checked to lie inside the object): what
    /// the cache holds from it, then one fetch for the rest and its read-ahead.
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let want = buf.len() as u64;
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let mut cache = self.cache();
            let n = cache.serve(at, &mut buf[done..]);
            if n > 0 {
                done += n;
                continue;
            }
            // A range the reader announced: its batch, all at once.
            if let Some(i) = cache.planned_at(at) {
                let batch = cache.take_batch(i);
                drop(cache);
                self.fetch_all(batch).map_err(io_error)?;
                continue;
            }
            // The range fetched ahead of a sequential reader (who may skip a few bytes, such
            // as a zip's data descriptor): wait for it.
            if let Some(i) = cache
                .in_flight
                .iter()
                .position(|a| a.start <= at && at < a.end)
            {
                // Those before it were skipped: dropped.
                for skipped in cache.in_flight.drain(..i) {
                    skipped.fetch.abort();
                }
                let Some(ahead) = cache.in_flight.pop_front() else {
                    continue;
                };
                drop(cache);
                if !ahead.fetch.is_finished() {
                    cloud::waited(1);
                }
                let bytes = cloud::block_on(ahead.fetch)
                    .map_err(|e| {
                        io::Error::other(format!("a read of {} failed: {e}", self.at.url()))
                    })?
                    .map_err(io_error)?;
                let mut cache = self.cache();
                cache.insert(ahead.start, bytes);
                self.read_ahead(&mut cache, ahead.end);
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
            let (start, len) = if self.len <= WHOLE_OBJECT {
                // A small object is fetched whole: one request instead of several.
                (0, self.len)
            } else {
                // A read larger than the cache would hold is fetched as asked, not kept.
                (at, rest.max(cache.ahead).min(self.len - at))
            };
            let streaming = cache.ahead == MAX_FETCH;
            drop(cache);
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
                let mut cache = self.cache();
                cache.insert(start, bytes);
                if streaming {
                    self.read_ahead(&mut cache, start + len);
                }
            }
        }
        let mut cache = self.cache();
        cache.next = offset + want;
        Ok(())
    }

    /// Keeps [`AHEAD`] ranges of [`MAX_FETCH`] bytes from `from` being fetched in the
    /// background, for a reader going through the object in order (ranges fetched ahead of
    /// another place are dropped).
    fn read_ahead(&self, cache: &mut Cache, from: u64) {
        if !cache
            .in_flight
            .iter()
            .any(|a| a.start <= from && from <= a.end)
        {
            for stale in cache.in_flight.drain(..) {
                stale.fetch.abort();
            }
        }
        let mut next = cache.in_flight.back().map_or(from, |a| a.end);
        while cache.in_flight.len() < AHEAD && next < self.len {
            let end = self.len.min(next + MAX_FETCH);
            cache.in_flight.push_back(Ahead {
                start: next,
                end,
                fetch: cloud::spawn(cloud::get_range_async(self.at.clone(), next..end)),
            });
            next = end;
        }
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
            if !handle.is_finished() {
                cloud::waited(1);
            }
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
    fn an_announced_range_is_fetched_only_where_the_cache_lacks_it() {
        let mut c = Cache::default();
        let seg = |len: usize| bytes::Bytes::from(vec![0u8; len]);
        c.insert(100, seg(100));
        c.insert(300, seg(100));
        // Overlapping segments: the gap is measured from the furthest end so far.
        c.insert(350, seg(100));
        assert_eq!(c.uncached(50, 500), vec![(50, 100), (200, 300), (450, 500)]);
        assert_eq!(c.uncached(120, 180), vec![]);
        assert_eq!(c.uncached(150, 250), vec![(200, 250)]);
        assert_eq!(c.uncached(600, 700), vec![(600, 700)]);
        // take_batch asks for those parts only, and counts their bytes.
        c.plan = vec![(50, 500)];
        assert_eq!(c.take_batch(0), vec![(50, 100), (200, 300), (450, 500)]);
    }

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
        // A segment the cache holds already adds nothing; one that holds cached segments
        // replaces them, so that a read inside it finds it behind any number of them.
        c.insert(20_000_000, seg(5, 10));
        assert_eq!(c.serve(20_000_000, &mut buf[..1]), 1);
        assert_eq!(buf[0], 4);
        let mut c = Cache::default();
        for i in 0..100u64 {
            c.insert(1000 + i * 100, seg(6, 10));
        }
        c.insert(1000, seg(7, 100 * 100));
        assert_eq!(c.segments.len(), 1);
        assert_eq!(c.serve(1000 + 99 * 100 + 50, &mut buf[..1]), 1);
        assert_eq!(buf[0], 7);
        assert_eq!(
            c.held,
            c.segments
                .values()
                .map(|s| s.bytes.len() as u64)
                .sum::<u64>()
        );
        assert_eq!(c.by_use.len(), c.segments.len());
    }

    #[test]
    fn announced_ranges_are_padded_merged_and_fetched_in_batches() {
        let len = 100 << 20;
        // Local headers of three records 1 MiB apart, two of them close to each other, one
        // past the end; given out of order.
        let plan = plan_of(
            &[
                (2 << 20, 30),
                (0, 30),
                ((2 << 20) + 100, 50),
                (len + 5, 30),
                (len - 10, 30),
            ],
            len,
        );
        assert_eq!(
            plan,
            vec![
                (0, MIN_FETCH),
                (2 << 20, (2 << 20) + 100 + MIN_FETCH),
                (len - 10, len)
            ]
        );
        let mut c = Cache {
            plan,
            ..Cache::default()
        };
        assert_eq!(c.planned_at(5), Some(0));
        assert_eq!(c.planned_at(MIN_FETCH), None, "between two ranges");
        assert_eq!(c.planned_at((2 << 20) + 200), Some(1));
        // The cache holds the second range already: the batch from the first skips it.
        c.insert(2 << 20, bytes::Bytes::from(vec![0u8; 8192]));
        assert_eq!(c.take_batch(0), vec![(0, MIN_FETCH), (len - 10, len)]);
        assert_eq!(c.planned_at(5), None, "fetched");
        // A batch stops at BATCH_BYTES (but takes at least one range).
        let many: Vec<(u64, u64)> = (0..5000u64).map(|i| (i << 20, 30)).collect();
        let mut c = Cache {
            plan: plan_of(&many, 6000 << 20),
            ..Cache::default()
        };
        let first = c.take_batch(0);
        assert_eq!(first.len() as u64, BATCH_BYTES / MIN_FETCH);
        assert_eq!(c.planned_at(5), None);
        let next = first.len() as u64;
        assert_eq!(c.planned_at(next << 20), Some(first.len()));
        assert_eq!(c.take_batch(first.len()).len(), first.len());
    }
}
