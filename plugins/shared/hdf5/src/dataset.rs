//! Where a dataset's bytes are, as h5py reads them: compact, contiguous or chunked; chunks
//! found through their index ([`chunk_index`]), their filters undone ([`filters`]), and what
//! was never written read as the fill value (`H5D__chunk_lock`, `H5D__fill`, HDF5 1.14).
//!
//! Bytes that lie in the file in row-major order are named as ranges of it; anything else
//! (chunks in tiles, filtered chunks, unwritten ones) is assembled within the walk's inline
//! budget, each chunk read once.

use crate::btree::Chunk;
use crate::chunk_index::{self, Shape};
use crate::filters::{self, Refusal};
use crate::io::Source;
use crate::messages::{Chunking, Fill, Filter, Layout};
use crate::model::{Findings, Hdf5Error, Severity, Storage, UNDEFINED};
use crate::types::{self, Type};
use socair_plugin_api::ReadAt;
use std::collections::HashSet;

/// What a dataset's header says of its elements, besides its layout.
pub struct Stored<'a> {
    /// Their type.
    pub ty: &'a Type,
    /// The dataset's dimensions.
    pub dims: &'a [u64],
    /// Its maximum dimensions, when recorded.
    pub max: Option<&'a [u64]>,
    /// Its filter pipeline.
    pub filters: &'a [Filter],
    /// What is never written reads as.
    pub fill: &'a Fill,
}

/// Why a dataset was left unread, and whether that is a finding.
enum Left {
    /// A finding of this severity, with its reason.
    Found(Severity, String),
    /// Unread for a reason found elsewhere (a plugin filter, FAILed by the walk): no finding.
    Quiet(String),
    /// Located, but not assembled in this mode (headers only): no finding.
    Deferred(String),
}

/// What locating datasets' bytes reads and spends: the walk's file, findings and budgets
/// ([`crate::walk`] lends them for each dataset).
pub struct Locator<'w, 'a, S: ReadAt + ?Sized> {
    /// The file.
    pub src: &'w mut Source<'a, S>,
    /// The walk's findings.
    pub findings: &'w mut Findings,
    /// Whether data is read (not headers only).
    pub read_data: bool,
    /// Bytes that may still be assembled inline.
    pub inline_left: &'w mut u64,
    /// Chunks that may still be listed.
    pub chunks_left: &'w mut u64,
}

impl<S: ReadAt + ?Sized> Locator<'_, '_, S> {
    fn find(&mut self, severity: Severity, place: String, reason: String) {
        self.findings.add(severity, place, reason);
    }

    /// Where a dataset's bytes are.
    pub fn storage(
        &mut self,
        place: &str,
        layout: &Layout,
        d: &Stored<'_>,
    ) -> Result<Storage, Hdf5Error> {
        // A virtual dataset of any type is judged by its layout, below.
        let tensor = d.ty.tensor_element().is_some() || matches!(d.ty, Type::Opaque { .. });
        if !tensor && !matches!(layout, Layout::Virtual { .. }) {
            return Ok(Storage::Data(format!(
                "its elements are {}: data, not a tensor type",
                d.ty.describe()
            )));
        }
        let size = d.ty.size(self.src.offsets);
        let Some(bytes) = types::elements(d.dims).and_then(|n| n.checked_mul(size)) else {
            return Err(Hdf5Error::new(
                place,
                format!("its dimensions {:?} overflow", d.dims),
            ));
        };
        let out = match layout {
            Layout::Compact(data) => {
                if data.len() as u64 != bytes {
                    return Err(Hdf5Error::new(place, format!("compact storage of {} bytes for {bytes} bytes of elements", data.len())));
                }
                Ok(Storage::Inline(data.clone()))
            }
            Layout::Contiguous { addr, size: stored } => self.contiguous(place, *addr, stored.unwrap_or(bytes), bytes, size, d),
            Layout::Chunked(ch) => self.chunked(place, ch, size, bytes, d),
            Layout::Virtual { .. } => Err(Left::Found(Severity::Fail, "a virtual dataset: its elements are read from other datasets, which may lie in other files the HDF5 library opens when it is read".into())),
        };
        let out = match out {
            Ok(storage) if matches!(d.ty, Type::PackedInt { .. }) => {
                self.widened(place, storage, d.ty)
            }
            out => out,
        };
        Ok(match out {
            Ok(storage) => storage,
            Err(Left::Found(severity, why)) => {
                self.find(severity, place.to_owned(), format!("{why}: not read"));
                Storage::Unread(why)
            }
            Err(Left::Quiet(why)) => Storage::Unread(why),
            Err(Left::Deferred(why)) => Storage::Deferred(why),
        })
    }

    fn contiguous(
        &mut self,
        place: &str,
        addr: u64,
        stored: u64,
        bytes: u64,
        size: u64,
        d: &Stored<'_>,
    ) -> Result<Storage, Left> {
        if bytes == 0 {
            return Ok(Storage::Empty);
        }
        if addr == UNDEFINED {
            // Never written: h5py reads the fill value.
            let out = self.room(bytes, "never written (it reads as its fill value)")?;
            return filled(out, size, d.fill).map(Storage::Inline);
        }
        if stored < bytes {
            return Err(Left::Found(Severity::Fail, format!("contiguous storage of {stored} bytes for {bytes} bytes of elements: the HDF5 library refuses to read it")));
        }
        if stored > bytes {
            self.find(Severity::Lead, place.to_owned(), format!("contiguous storage of {stored} bytes for {bytes} bytes of elements: the bytes past them are read by no one"));
        }
        match self.src.locate(addr, bytes, place) {
            Ok(at) => Ok(Storage::Ranges(vec![(at, bytes)])),
            Err(e) => Err(Left::Found(
                Severity::Fail,
                format!("its storage {}", e.reason),
            )),
        }
    }

    /// A [`Type::PackedInt`] dataset's bytes as h5py reads them: gathered where they lie in
    /// the file, then widened.
    fn widened(&mut self, place: &str, storage: Storage, ty: &Type) -> Result<Storage, Left> {
        let mut bytes = match storage {
            Storage::Inline(bytes) => bytes,
            Storage::Ranges(ranges) => {
                let total = ranges.iter().map(|&(_, len)| len).sum();
                let why = "its integers have padding bits, which the library's conversion drops";
                let mut out = self.room(total, why)?;
                let mut at = 0;
                for (offset, len) in ranges {
                    let part = self
                        .src
                        .absolute(offset, len, place)
                        .map_err(|e| Left::Found(Severity::Fail, e.reason))?;
                    out[at..at + part.len()].copy_from_slice(&part);
                    at += part.len();
                }
                out
            }
            other => return Ok(other),
        };
        ty.widen(&mut bytes);
        Ok(Storage::Inline(bytes))
    }

    /// Room for `bytes` assembled inline, taken from the budget; `why` says what they are.
    fn room(&mut self, bytes: u64, why: &str) -> Result<Vec<u8>, Left> {
        if !self.read_data {
            return Err(Left::Deferred(format!(
                "{why}; data is not read in this mode"
            )));
        }
        if bytes > *self.inline_left {
            return Err(Left::Found(Severity::Lead, format!("{why}, and assembling its {bytes} bytes would pass the budget (32 MiB + 4x the file)")));
        }
        *self.inline_left -= bytes;
        Ok(vec![0u8; bytes as usize])
    }

    fn chunked(
        &mut self,
        place: &str,
        ch: &Chunking,
        size: u64,
        bytes: u64,
        d: &Stored<'_>,
    ) -> Result<Storage, Left> {
        if ch.element != size || ch.dims.len() != d.dims.len() {
            return Err(Left::Found(Severity::Fail, format!("chunks of {:?} elements of {} bytes for a dataset of {:?} elements of {size} bytes: the HDF5 library refuses it", ch.dims, ch.element, d.dims)));
        }
        if let Some(f) = d.filters.iter().find(|f| !filters::decodes(f.id)) {
            let why = format!(
                "its chunks pass through {}, which socair does not decode",
                f.describe()
            );
            // A user-defined filter is a FAIL of its own (the walk names the plugin library
            // the HDF5 library would load); one the library ships is a LEAD.
            return Err(if !filters::registered(f.id) {
                Left::Quiet(why)
            } else {
                Left::Found(Severity::Lead, why)
            });
        }
        if bytes == 0 {
            return Ok(Storage::Empty);
        }
        let shape = Shape {
            dims: d.dims,
            max: d.max,
            filtered: !d.filters.is_empty(),
        };
        let mut chunks = chunk_index::chunks(self.src, ch, &shape, place).map_err(|e| {
            Left::Found(
                Severity::Fail,
                format!("its chunk index is unsound ({}: {})", e.place, e.reason),
            )
        })?;
        if chunks.len() as u64 > *self.chunks_left {
            return Err(Left::Found(
                Severity::Lead,
                format!(
                    "its index lists {} chunks, more than the file's budget of chunks",
                    chunks.len()
                ),
            ));
        }
        *self.chunks_left -= chunks.len() as u64;
        let chunk_bytes = types::elements(&ch.dims)
            .unwrap_or(u64::MAX)
            .saturating_mul(size);
        self.check(&chunks, ch, d, chunk_bytes)?;
        let expected: u64 = d
            .dims
            .iter()
            .zip(&ch.dims)
            .map(|(&n, &k)| n.div_ceil(k))
            .product();
        chunks.sort_by(|a, b| a.offset.cmp(&b.offset));
        // Row-wise and unfiltered, every chunk written: each chunk's first rows are the
        // dataset's next rows, so its bytes are ranges of the file.
        let rowwise = d.dims.iter().zip(&ch.dims).skip(1).all(|(n, k)| n == k);
        if rowwise && d.filters.is_empty() && chunks.len() as u64 == expected {
            let row = bytes / d.dims.first().copied().unwrap_or(1).max(1);
            let mut ranges = Vec::with_capacity(chunks.len());
            for c in &chunks {
                let first = c.offset.first().copied().unwrap_or(0);
                let rows = ch
                    .dims
                    .first()
                    .copied()
                    .unwrap_or(1)
                    .min(d.dims.first().copied().unwrap_or(1) - first);
                let at = self
                    .src
                    .locate(c.addr, chunk_bytes, place)
                    .map_err(|e| Left::Found(Severity::Fail, e.reason))?;
                ranges.push((at, rows * row));
            }
            return Ok(Storage::Ranges(ranges));
        }
        let why = if !d.filters.is_empty() {
            "its chunks are filtered"
        } else if chunks.len() as u64 != expected {
            "some of its chunks were never written (they read as its fill value)"
        } else {
            "its chunks do not lie in row-major order"
        };
        let mut out = self.room(bytes, why)?;
        // One chunk is decoded at a time beside the dataset's bytes: it must fit in what is
        // left of the budget too (a chunk may be far larger than a small dataset).
        if !d.filters.is_empty() && chunk_bytes > *self.inline_left {
            *self.inline_left += bytes;
            return Err(Left::Found(Severity::Lead, format!("{why}, and decoding one of its chunks of {chunk_bytes} bytes would pass the budget (32 MiB + 4x the file)")));
        }
        if chunks.len() as u64 != expected {
            out = filled(out, size, d.fill)?;
        }
        for c in &chunks {
            let data = self.chunk(c, ch, d, chunk_bytes, place)?;
            place_chunk(&mut out, &data, &c.offset, d.dims, &ch.dims, size);
        }
        Ok(Storage::Inline(out))
    }

    /// Every chunk inside the dataset, on a chunk boundary, listed once, its bytes in the file.
    fn check(
        &self,
        chunks: &[Chunk],
        ch: &Chunking,
        d: &Stored<'_>,
        chunk_bytes: u64,
    ) -> Result<(), Left> {
        let mut seen = HashSet::new();
        for c in chunks {
            let inside = c.offset.len() == d.dims.len() + 1
                && c.offset.last() == Some(&0)
                && c.offset
                    .iter()
                    .zip(d.dims)
                    .zip(&ch.dims)
                    .all(|((&o, &n), &k)| o < n && o % k == 0);
            let sized = if d.filters.is_empty() {
                c.size == chunk_bytes && c.mask == 0
            } else {
                c.size > 0
            };
            if !inside || !sized {
                return Err(Left::Found(Severity::Fail, format!("its chunk index lists a chunk at {:?} of {} bytes (filter mask {}) that does not fit chunks of {:?} in {:?}: the HDF5 library reads it otherwise or refuses it", c.offset, c.size, c.mask, ch.dims, d.dims)));
            }
            if !seen.insert(&c.offset) {
                return Err(Left::Found(
                    Severity::Fail,
                    format!("its chunk index lists the chunk at {:?} twice", c.offset),
                ));
            }
            self.src.locate(c.addr, c.size, "chunk").map_err(|e| {
                Left::Found(
                    Severity::Fail,
                    format!("its chunk at {:?}: {}", c.offset, e.reason),
                )
            })?;
        }
        Ok(())
    }

    /// One chunk's bytes, its filters undone (a partial edge chunk stays unfiltered when the
    /// layout says so).
    fn chunk(
        &mut self,
        c: &Chunk,
        ch: &Chunking,
        d: &Stored<'_>,
        chunk_bytes: u64,
        place: &str,
    ) -> Result<Vec<u8>, Left> {
        let raw = self
            .src
            .bytes(c.addr, c.size, place)
            .map_err(|e| Left::Found(Severity::Fail, e.reason))?;
        let edge = c
            .offset
            .iter()
            .zip(d.dims)
            .zip(&ch.dims)
            .any(|((&o, &n), &k)| o.saturating_add(k) > n);
        if d.filters.is_empty() || (ch.unfiltered_edges && edge) {
            return Ok(raw);
        }
        let data = filters::undo(d.filters, c.mask, raw, chunk_bytes.saturating_add(1 << 16))
            .map_err(|r| match r {
                Refusal::Corrupt(why) => Left::Found(
                    Severity::Fail,
                    format!("its chunk at {:?}: {why}", c.offset),
                ),
                Refusal::Unsupported(name) => Left::Found(
                    Severity::Lead,
                    format!(
                        "its chunk at {:?} passes through {name}, which socair does not decode",
                        c.offset
                    ),
                ),
                Refusal::TooLarge(why) => Left::Found(
                    Severity::Lead,
                    format!("its chunk at {:?}: {why}", c.offset),
                ),
            })?;
        if data.len() as u64 != chunk_bytes {
            return Err(Left::Found(Severity::Fail, format!("its chunk at {:?} decodes to {} bytes, not the chunk's {chunk_bytes}: the HDF5 library refuses to read it", c.offset, data.len())));
        }
        Ok(data)
    }
}

/// `out` filled with the fill value (zeros when none is stored), or why not.
fn filled(mut out: Vec<u8>, size: u64, fill: &Fill) -> Result<Vec<u8>, Left> {
    if fill.never {
        return Err(Left::Found(Severity::Lead, "storage never written, in a dataset that is never filled: the HDF5 library reads whatever memory held".into()));
    }
    match &fill.value {
        Some(v) if v.len() as u64 == size => {
            for e in out.chunks_exact_mut(v.len()) {
                e.copy_from_slice(v);
            }
        }
        Some(v) => {
            return Err(Left::Found(
                Severity::Lead,
                format!("a fill value of {} bytes for elements of {size}", v.len()),
            ));
        }
        None => {}
    }
    Ok(out)
}

/// Copies a chunk's elements (`data`, the whole chunk in row-major order) to their places in
/// `out`, the dataset in row-major order, leaving out what lies past the dataset's edge.
fn place_chunk(
    out: &mut [u8],
    data: &[u8],
    offset: &[u64],
    dims: &[u64],
    chunk: &[u64],
    size: u64,
) {
    let rank = dims.len();
    if rank == 0 {
        let n = out.len().min(data.len());
        out[..n].copy_from_slice(&data[..n]);
        return;
    }
    // Row-major strides of the dataset, in elements.
    let mut strides = vec![1u64; rank];
    for k in (0..rank - 1).rev() {
        strides[k] = strides[k + 1] * dims[k + 1];
    }
    let inner = chunk[rank - 1];
    let chunk_elems = types::elements(chunk).unwrap_or(0);
    // Every run of `inner` elements along the last dimension of the chunk.
    let runs = chunk_elems / inner.max(1);
    let mut idx = vec![0u64; rank];
    for r in 0..runs {
        let mut rem = r;
        for k in (0..rank - 1).rev() {
            idx[k] = rem % chunk[k];
            rem /= chunk[k];
        }
        let pos: Vec<u64> = (0..rank)
            .map(|k| offset[k] + if k == rank - 1 { 0 } else { idx[k] })
            .collect();
        if (0..rank - 1).any(|k| pos[k] >= dims[k]) {
            continue;
        }
        let take = inner.min(dims[rank - 1] - pos[rank - 1]);
        let dst = (0..rank).map(|k| pos[k] * strides[k]).sum::<u64>() * size;
        let src = r * inner * size;
        let n = take * size;
        if let (Some(d), Some(s)) = (
            out.get_mut(dst as usize..(dst + n) as usize),
            data.get(src as usize..(src + n) as usize),
        ) {
            d.copy_from_slice(s);
        }
    }
}
