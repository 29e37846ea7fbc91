//! The chunks of a chunked dataset, from whichever index its layout names: a version 1 B-tree
//! ([`btree::chunks`]), and the indexes of layout versions 4 and 5 (HDF5 1.10 and later,
//! `H5D__layout_set_latest_indexing`, `H5Dlayout.c`): a single chunk (`H5Dsingle.c`), chunks
//! laid out in order (implicit, `H5Dnone.c`), a fixed array (`H5Dfarray.c`, `H5FAcache.c`), an
//! extensible array (`H5Dearray.c`, `H5EAcache.c`, `H5EAhdr.c`) and a version 2 B-tree
//! (`H5Dbtree2.c`, [`crate::btree2`]). HDF5 1.14 and 2.0.
//!
//! Every structure's checksum is checked, as the library checks it; every count is bounded by
//! the bytes that hold it, and all the reads by the metadata budget of [`Source`].

use crate::btree::{self, Chunk};
use crate::btree2;
use crate::io::{check_sum, Cursor, Source};
use crate::messages::{ChunkIndex, Chunking};
use crate::model::{Hdf5Error, UNDEFINED};
use crate::types;
use socair_plugin_api::ReadAt;

/// What locating a dataset's chunks needs to know of it.
pub struct Shape<'a> {
    /// Its dimensions.
    pub dims: &'a [u64],
    /// Its maximum dimensions ([`UNDEFINED`] for unlimited), when its dataspace records them.
    pub max: Option<&'a [u64]>,
    /// Whether its filter pipeline holds a filter (the indexes then record each chunk's
    /// stored size and filter mask).
    pub filtered: bool,
}

/// The chunks of a dataset of `shape` whose layout is `layout`, in no particular order
/// (unwritten chunks are not listed).
pub fn chunks<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    layout: &Chunking,
    shape: &Shape<'_>,
    place: &str,
) -> Result<Vec<Chunk>, Hdf5Error> {
    let chunk_bytes = types::elements(&layout.dims)
        .and_then(|n| n.checked_mul(layout.element))
        .ok_or_else(|| Hdf5Error::new(place, "its chunk's size overflows"))?;
    let grid = Grid::new(layout, shape, place)?;
    let what = format!("chunk index of dataset {place}");
    match layout.index {
        ChunkIndex::BtreeV1(addr) => btree::chunks(src, addr, shape.dims.len(), place),
        ChunkIndex::Single { addr, filtered } => {
            if addr == UNDEFINED {
                return Ok(Vec::new());
            }
            let (size, mask) = filtered.unwrap_or((chunk_bytes, 0));
            Ok(vec![Chunk {
                size,
                mask,
                offset: grid.offset(0),
                addr,
            }])
        }
        ChunkIndex::Implicit(addr) => {
            if addr == UNDEFINED {
                return Ok(Vec::new());
            }
            // Every chunk the maximum dimensions allow, one after another (`H5D__none_get_addr`).
            let total = grid.max_chunks();
            let span = total.checked_mul(chunk_bytes).filter(|&n| n <= src.len);
            let Some(span) = span else {
                return Err(Hdf5Error::new(&what, format!("{total} chunks of {chunk_bytes} bytes laid out in order: more than the file holds")));
            };
            src.locate(addr, span, &what)?;
            Ok((0..total)
                .filter(|&i| grid.written(i))
                .map(|i| Chunk {
                    size: chunk_bytes,
                    mask: 0,
                    offset: grid.offset(i),
                    addr: addr + i * chunk_bytes,
                })
                .collect())
        }
        ChunkIndex::FixedArray(addr) => {
            let mut out = Vec::new();
            fixed_array(src, addr, shape.filtered, &what, &mut |i, e| {
                out.push(e.chunk(grid.offset(i), chunk_bytes));
            })?;
            Ok(out)
        }
        ChunkIndex::ExtensibleArray(addr) => {
            let mut out = Vec::new();
            extensible_array(src, addr, shape.filtered, &what, &mut |i, e| {
                out.push(e.chunk(grid.offset(i), chunk_bytes));
            })?;
            Ok(out)
        }
        ChunkIndex::BtreeV2(addr) => {
            let rank = shape.dims.len();
            let mut out = Vec::new();
            let (o, l) = (src.offsets, src.lengths);
            btree2::records(src, addr, &what, &mut |ty, rec| {
                let filtered = match ty {
                    10 => false,
                    11 => true,
                    t => {
                        return Err(Hdf5Error::new(
                            "chunk record",
                            format!("records of type {t} in a chunk index (10 or 11)"),
                        ))
                    }
                };
                let mut c = Cursor::with(rec, o, l, "chunk record");
                let addr = c.addr()?;
                let (size, mask) = if filtered {
                    // What is left after the address, the mask and the scaled offsets.
                    let width = c
                        .left()
                        .checked_sub(4 + 8 * rank)
                        .filter(|w| (1..=8).contains(w));
                    let width = width.ok_or_else(|| {
                        Hdf5Error::new(
                            "chunk record",
                            format!("{} bytes for a filtered chunk of rank {rank}", rec.len()),
                        )
                    })?;
                    (c.uint(width)?, c.u32()?)
                } else {
                    (chunk_bytes, 0)
                };
                let mut offset = Vec::with_capacity(rank + 1);
                for (k, &d) in layout.dims.iter().enumerate() {
                    let scaled = c.u64()?;
                    offset.push(scaled.checked_mul(d).ok_or_else(|| {
                        Hdf5Error::new(
                            "chunk record",
                            format!("dimension {k}: scaled offset {scaled} overflows"),
                        )
                    })?);
                }
                offset.push(0);
                if c.left() != 0 {
                    return Err(Hdf5Error::new(
                        "chunk record",
                        format!("{} bytes for a chunk of rank {rank}", rec.len()),
                    ));
                }
                out.push(Chunk {
                    size,
                    mask,
                    offset,
                    addr,
                });
                Ok(())
            })?;
            Ok(out)
        }
    }
}

/// The dataset's chunks as a grid: how a chunk's index in an array maps to its place.
struct Grid {
    /// The chunk's dimensions.
    chunk: Vec<u64>,
    /// The current number of chunks along each dimension.
    now: Vec<u64>,
    /// The dimensions in the order the index counts them: the unlimited one first, for an
    /// extensible array (`H5VM_swizzle_coords`), else as they are.
    order: Vec<usize>,
    /// Chunks per step along each dimension of `order` (`H5VM_array_down` over the maximum
    /// number of chunks).
    down: Vec<u64>,
    /// The maximum number of chunks along each dimension of `order` (unlimited: the current).
    max: Vec<u64>,
}

impl Grid {
    fn new(layout: &Chunking, shape: &Shape<'_>, place: &str) -> Result<Grid, Hdf5Error> {
        let rank = shape.dims.len();
        if layout.dims.len() != rank {
            return Err(Hdf5Error::new(
                place,
                format!(
                    "chunks of rank {} for a dataset of rank {rank}",
                    layout.dims.len()
                ),
            ));
        }
        let max_dims = shape.max.filter(|m| m.len() == rank).unwrap_or(shape.dims);
        let now: Vec<u64> = shape
            .dims
            .iter()
            .zip(&layout.dims)
            .map(|(&d, &k)| d.div_ceil(k))
            .collect();
        let unlimited = max_dims.iter().position(|&m| m == UNDEFINED);
        let mut order: Vec<usize> = (0..rank).collect();
        if let (ChunkIndex::ExtensibleArray(_), Some(u)) = (&layout.index, unlimited) {
            order.retain(|&k| k != u);
            order.insert(0, u);
        }
        let max: Vec<u64> = order
            .iter()
            .map(|&k| {
                if max_dims[k] == UNDEFINED {
                    now[k]
                } else {
                    max_dims[k].div_ceil(layout.dims[k]).max(now[k])
                }
            })
            .collect();
        let mut down = vec![1u64; rank];
        for k in (0..rank.saturating_sub(1)).rev() {
            down[k] = down[k + 1]
                .checked_mul(max[k + 1])
                .ok_or_else(|| Hdf5Error::new(place, "its number of chunks overflows"))?;
        }
        Ok(Grid {
            chunk: layout.dims.clone(),
            now,
            order,
            down,
            max,
        })
    }

    /// How many chunks the maximum dimensions allow.
    fn max_chunks(&self) -> u64 {
        self.max
            .iter()
            .try_fold(1u64, |n, &m| n.checked_mul(m))
            .unwrap_or(u64::MAX)
    }

    /// The scaled position of the chunk of index `i`, by dimension, in dataset order.
    fn scaled(&self, mut i: u64) -> Vec<u64> {
        let mut scaled = vec![0u64; self.order.len()];
        for (j, &k) in self.order.iter().enumerate() {
            scaled[k] = i / self.down[j];
            i %= self.down[j];
        }
        scaled
    }

    /// The element offset of the chunk of index `i`, with the element dimension's 0 at its
    /// end (as a version 1 B-tree key writes it).
    fn offset(&self, i: u64) -> Vec<u64> {
        let mut offset: Vec<u64> = self
            .scaled(i)
            .iter()
            .zip(&self.chunk)
            .map(|(s, k)| s.saturating_mul(*k))
            .collect();
        offset.push(0);
        offset
    }

    /// Whether the chunk of index `i` lies inside the dataset's current extent (one past it
    /// is space the maximum dimensions reserve, never read).
    fn written(&self, i: u64) -> bool {
        self.scaled(i).iter().zip(&self.now).all(|(s, n)| s < n)
    }
}

/// One element of a fixed or extensible array of chunks.
struct Element {
    addr: u64,
    size: Option<u64>,
    mask: u32,
}

impl Element {
    /// The chunk it names (unfiltered chunks are all `chunk_bytes` long).
    fn chunk(&self, offset: Vec<u64>, chunk_bytes: u64) -> Chunk {
        Chunk {
            size: self.size.unwrap_or(chunk_bytes),
            mask: self.mask,
            offset,
            addr: self.addr,
        }
    }
}

/// Decodes the elements in `raw` (each `size` bytes), calling `each` with the element's index
/// (from `first`) for every chunk written (a defined address).
fn elements(
    raw: &[u8],
    size: usize,
    filtered: bool,
    offsets: u8,
    first: u64,
    what: &str,
    each: &mut dyn FnMut(u64, Element),
) -> Result<(), Hdf5Error> {
    let a = usize::from(offsets);
    // A filtered chunk's element: the address, its stored size in what is left after the
    // address and the mask (`H5D_FARRAY_FILT_COMPUTE_CHUNK_SIZE_LEN`; a fixed length-sized
    // field in layout version 5), and the filter mask.
    let width = if filtered {
        size.checked_sub(a + 4).filter(|w| (1..=8).contains(w))
    } else {
        (size == a).then_some(0)
    };
    let Some(width) = width else {
        return Err(Hdf5Error::new(
            what,
            format!(
                "elements of {size} bytes for {} chunks",
                if filtered { "filtered" } else { "unfiltered" }
            ),
        ));
    };
    for (k, e) in raw.chunks_exact(size).enumerate() {
        let mut c = Cursor::with(e, offsets, 8, what);
        let addr = c.addr()?;
        let (size, mask) = if filtered {
            (Some(c.uint(width)?), c.u32()?)
        } else {
            (None, 0)
        };
        if addr != UNDEFINED {
            each(first + k as u64, Element { addr, size, mask });
        }
    }
    Ok(())
}

/// The header every array block starts with: its signature, version 0, the client (0 for
/// unfiltered chunks, 1 for filtered).
fn prefix(
    c: &mut Cursor<'_>,
    signature: &[u8; 4],
    filtered: bool,
    what: &str,
) -> Result<(), Hdf5Error> {
    if c.take(4)? != signature {
        return Err(Hdf5Error::new(
            what,
            format!("not a {} block", String::from_utf8_lossy(signature)),
        ));
    }
    let version = c.u8()?;
    let client = c.u8()?;
    if version != 0 || client != u8::from(filtered) {
        return Err(Hdf5Error::new(what, format!("version {version}, client {client}: HDF5 writes version 0, client {} for {} chunks", u8::from(filtered), if filtered { "filtered" } else { "unfiltered" })));
    }
    Ok(())
}

/// Bytes of a block at `addr` that ends with a checksum over the rest, checked.
fn block<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    len: u64,
    what: &str,
) -> Result<Vec<u8>, Hdf5Error> {
    let b = src.bytes(addr, len, what)?;
    check_sum(&b, &format!("{what} at address {addr}"))?;
    Ok(b)
}

/// Bit `i` of a page bitmap, most significant first (`H5VM_bit_get`).
fn bit(bitmap: &[u8], i: u64) -> bool {
    let byte = bitmap.get((i / 8) as usize).copied().unwrap_or(0);
    byte & (0x80 >> (i % 8)) != 0
}

/// The elements of the fixed array at `addr` (`H5FA__cache_hdr_deserialize`,
/// `H5FA__cache_dblock_deserialize`, `H5FA__cache_dblk_page_deserialize`).
fn fixed_array<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    filtered: bool,
    what: &str,
    each: &mut dyn FnMut(u64, Element),
) -> Result<(), Hdf5Error> {
    if addr == UNDEFINED {
        return Ok(());
    }
    let (o, l) = (src.offsets, src.lengths);
    let head_len = 4 + 4 + u64::from(l) + u64::from(o) + 4;
    let head = block(src, addr, head_len, what)?;
    let mut c = Cursor::with(&head, o, l, what);
    prefix(&mut c, b"FAHD", filtered, what)?;
    let size = usize::from(c.u8()?);
    let page_bits = c.u8()?;
    let count = c.length()?;
    let data = c.addr()?;
    if page_bits == 0 || page_bits > 32 || size == 0 {
        return Err(Hdf5Error::new(
            what,
            format!("elements of {size} bytes in pages of 2^{page_bits}"),
        ));
    }
    let page = 1u64 << page_bits;
    let fits = count.checked_mul(size as u64).is_some_and(|n| n <= src.len);
    if !fits {
        return Err(Hdf5Error::new(
            what,
            format!("{count} elements of {size} bytes: more than the file holds"),
        ));
    }
    if count == 0 || data == UNDEFINED {
        return Ok(());
    }
    let dwhat = format!("{what}, data block");
    let fixed = 4 + 2 + u64::from(o);
    if count <= page {
        let b = block(src, data, fixed + count * size as u64 + 4, &dwhat)?;
        let mut c = Cursor::with(&b, o, l, &dwhat);
        prefix(&mut c, b"FADB", filtered, &dwhat)?;
        let _header = c.addr()?;
        let raw = c.take(count as usize * size)?;
        return elements(raw, size, filtered, o, 0, &dwhat, each);
    }
    let pages = count.div_ceil(page);
    let bitmap_len = pages.div_ceil(8);
    let b = block(src, data, fixed + bitmap_len + 4, &dwhat)?;
    let mut c = Cursor::with(&b, o, l, &dwhat);
    prefix(&mut c, b"FADB", filtered, &dwhat)?;
    let _header = c.addr()?;
    let bitmap = c.take(bitmap_len as usize)?.to_vec();
    let page_size = page * size as u64 + 4;
    for p in 0..pages {
        if !bit(&bitmap, p) {
            continue; // a page never written: every element the fill (no chunk)
        }
        let n = page.min(count - p * page);
        let at = data
            .saturating_add(fixed + bitmap_len + 4)
            .saturating_add(p.saturating_mul(page_size));
        let b = block(src, at, n * size as u64 + 4, &format!("{dwhat}, page {p}"))?;
        elements(&b[..b.len() - 4], size, filtered, o, p * page, &dwhat, each)?;
    }
    Ok(())
}

/// An extensible array's element and block layout, from its header (`H5EA__hdr_init`).
struct Array<'w> {
    what: &'w str,
    filtered: bool,
    o: u8,
    l: u8,
    /// Bytes in an element.
    size: usize,
    /// Bytes in a block's offset in the array (`H5EA_SIZEOF_OFFSET_BITS`).
    offset_len: usize,
    /// Elements in a data block page.
    page: u64,
    /// The highest index ever set, plus one: the elements past it are the fill.
    max_set: u64,
}

impl Array<'_> {
    /// The data blocks of the super block at `s` (the `u`th), and its page bitmap when its
    /// data blocks are paged (`H5EA__cache_sblock_deserialize`).
    fn super_block<S: ReadAt + ?Sized>(
        &self,
        src: &mut Source<'_, S>,
        (s, u): (u64, usize),
        ndblks: u64,
        nelmts: u64,
    ) -> Result<(Vec<u64>, Option<Vec<u8>>), Hdf5Error> {
        let paged = nelmts > self.page;
        let npages = if paged { nelmts / self.page } else { 0 };
        let swhat = format!("{}, super block {u}", self.what);
        let bitmap_len = if paged {
            ndblks.saturating_mul(npages.div_ceil(8))
        } else {
            0
        };
        let o = u64::from(self.o);
        let slen = (4 + 2 + o + self.offset_len as u64 + 4)
            .saturating_add(bitmap_len)
            .saturating_add(ndblks.saturating_mul(o));
        let b = block(src, s, slen, &swhat)?;
        let mut c = Cursor::with(&b, self.o, self.l, &swhat);
        prefix(&mut c, b"EASB", self.filtered, &swhat)?;
        let _header = c.addr()?;
        c.skip(self.offset_len)?;
        let bitmap = c.take(bitmap_len as usize)?.to_vec();
        let mut addrs = Vec::new();
        for _ in 0..ndblks {
            addrs.push(c.addr()?);
        }
        Ok((addrs, paged.then_some(bitmap)))
    }

    /// The elements of the data block at `daddr`, whose first is element `first`, of
    /// `nelmts` elements; `bitmap` says which of its pages were written, when a super block
    /// keeps one (`H5EA__cache_dblock_deserialize`, `H5EA__cache_dblk_page_deserialize`).
    fn data_block<S: ReadAt + ?Sized>(
        &self,
        src: &mut Source<'_, S>,
        (daddr, first): (u64, u64),
        nelmts: u64,
        bitmap: Option<&[u8]>,
        each: &mut dyn FnMut(u64, Element),
    ) -> Result<(), Hdf5Error> {
        let (o, l, size) = (self.o, self.l, self.size);
        let dwhat = format!("{}, data block at element {first}", self.what);
        let fixed = 4 + 2 + u64::from(o) + self.offset_len as u64;
        if nelmts <= self.page {
            let b = block(src, daddr, fixed + nelmts * size as u64 + 4, &dwhat)?;
            let mut c = Cursor::with(&b, o, l, &dwhat);
            prefix(&mut c, b"EADB", self.filtered, &dwhat)?;
            let _header = c.addr()?;
            c.skip(self.offset_len)?;
            let n = nelmts.min(self.max_set - first) as usize;
            let raw = c
                .take(nelmts as usize * size)?
                .get(..n * size)
                .unwrap_or_default();
            return elements(raw, size, self.filtered, o, first, &dwhat, each);
        }
        let b = block(src, daddr, fixed + 4, &dwhat)?;
        prefix(
            &mut Cursor::with(&b, o, l, &dwhat),
            b"EADB",
            self.filtered,
            &dwhat,
        )?;
        let page_size = self.page * size as u64 + 4;
        for p in 0..nelmts / self.page {
            let pfirst = first.saturating_add(p.saturating_mul(self.page));
            if pfirst >= self.max_set {
                break;
            }
            // A data block of the index block has no bitmap: its pages are all written.
            if !bitmap.is_none_or(|b| bit(b, p)) {
                continue;
            }
            let at = daddr
                .saturating_add(fixed + 4)
                .saturating_add(p.saturating_mul(page_size));
            let b = block(src, at, page_size, &format!("{dwhat}, page {p}"))?;
            let n = self.page.min(self.max_set - pfirst) as usize;
            let raw = b.get(..n * size).unwrap_or_default();
            elements(raw, size, self.filtered, o, pfirst, &dwhat, each)?;
        }
        Ok(())
    }
}

/// The elements of the extensible array at `addr` (`H5EA__cache_hdr_deserialize`,
/// `H5EA__hdr_init`, `H5EA__cache_iblock_deserialize`), up to the highest index ever set.
fn extensible_array<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    addr: u64,
    filtered: bool,
    what: &str,
    each: &mut dyn FnMut(u64, Element),
) -> Result<(), Hdf5Error> {
    if addr == UNDEFINED {
        return Ok(());
    }
    let (o, l) = (src.offsets, src.lengths);
    let head_len = 4 + 2 + 6 + 6 * u64::from(l) + u64::from(o) + 4;
    let head = block(src, addr, head_len, what)?;
    let mut c = Cursor::with(&head, o, l, what);
    prefix(&mut c, b"EAHD", filtered, what)?;
    let size = usize::from(c.u8()?);
    let max_bits = c.u8()?;
    let index_elements = u64::from(c.u8()?);
    let data_min = u64::from(c.u8()?);
    let super_min = u64::from(c.u8()?);
    let page_bits = c.u8()?;
    for _ in 0..4 {
        c.length()?; // super block and data block counts and sizes: statistics
    }
    let max_set = c.length()?;
    let _elements = c.length()?;
    let index = c.addr()?;
    let valid = size > 0
        && (1..=64).contains(&max_bits)
        && data_min.is_power_of_two()
        && super_min.is_power_of_two()
        && data_min.ilog2() < u32::from(max_bits)
        && page_bits <= max_bits.min(32);
    if !valid {
        return Err(Hdf5Error::new(what, format!("parameters {max_bits}, {index_elements}, {data_min}, {super_min}, {page_bits} the HDF5 library refuses")));
    }
    if index == UNDEFINED || max_set == 0 {
        return Ok(());
    }
    if max_set
        .checked_mul(size as u64)
        .is_none_or(|n| n > src.len.saturating_mul(8))
    {
        return Err(Hdf5Error::new(
            what,
            format!("{max_set} elements set: more than the file could index"),
        ));
    }
    let array = Array {
        what,
        filtered,
        o,
        l,
        size,
        offset_len: usize::from(max_bits).div_ceil(8),
        page: 1u64 << page_bits,
        max_set,
    };
    // Super blocks: `ndblks` data blocks of `dblk_nelmts` elements each (`H5EA__hdr_init`);
    // the first ones' data blocks are listed by the index block itself.
    let supers = 1 + u64::from(max_bits) - u64::from(data_min.ilog2());
    let info: Vec<(u64, u64)> = (0..supers)
        .map(|u| (1u64 << (u / 2), (1u64 << u.div_ceil(2)) * data_min))
        .collect();
    let in_index = 2 * u64::from(super_min.ilog2());
    let index_dblks = 2 * (super_min - 1);
    let index_sblks = supers.saturating_sub(in_index);
    let iwhat = format!("{what}, index block");
    let ilen = 4
        + 2
        + u64::from(o)
        + index_elements * size as u64
        + (index_dblks + index_sblks) * u64::from(o)
        + 4;
    let b = block(src, index, ilen, &iwhat)?;
    let mut c = Cursor::with(&b, o, l, &iwhat);
    prefix(&mut c, b"EAIB", filtered, &iwhat)?;
    let _header = c.addr()?;
    let direct = index_elements.min(max_set) as usize * size;
    let raw = c
        .take(index_elements as usize * size)?
        .get(..direct)
        .unwrap_or_default();
    elements(raw, size, filtered, o, 0, &iwhat, each)?;
    let mut dblks = Vec::new();
    for _ in 0..index_dblks {
        dblks.push(c.addr()?);
    }
    let mut sblks = Vec::new();
    for _ in 0..index_sblks {
        sblks.push(c.addr()?);
    }
    let mut start = index_elements;
    let mut dblk_at = 0usize;
    for (u, &(ndblks, nelmts)) in info.iter().enumerate() {
        if start >= max_set {
            break;
        }
        let (addrs, bitmap) = if (u as u64) < in_index {
            let a = dblks
                .get(dblk_at..dblk_at + ndblks as usize)
                .unwrap_or_default()
                .to_vec();
            dblk_at += ndblks as usize;
            (a, None)
        } else {
            match sblks
                .get(u - in_index as usize)
                .copied()
                .unwrap_or(UNDEFINED)
            {
                UNDEFINED => (Vec::new(), None),
                s => array.super_block(src, (s, u), ndblks, nelmts)?,
            }
        };
        let per = (nelmts / array.page).div_ceil(8) as usize;
        for (d, &daddr) in addrs.iter().enumerate() {
            let first = start.saturating_add((d as u64).saturating_mul(nelmts));
            if first >= max_set || daddr == UNDEFINED {
                continue;
            }
            let pages = bitmap
                .as_deref()
                .map(|b| b.get(d * per..).unwrap_or_default());
            array.data_block(src, (daddr, first), nelmts, pages, each)?;
        }
        start = start.saturating_add(ndblks.saturating_mul(nelmts));
    }
    Ok(())
}
