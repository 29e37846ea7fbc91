//! Fractal heaps (HDF5 File Format Specification 3.0, III.G "Fractal Heap": header `FRHP`,
//! direct block `FHDB`, indirect block `FHIB`; `H5HF*.c`, HDF5 1.14 and 2.0): where HDF5 keeps
//! a new-style group's link messages once it holds more than its `max_compact` links (8 by
//! default; `H5Gdense.c`) and an object's attribute messages once it holds more than its
//! compact maximum (`H5Adense.c`). The heap's header names its root block, a direct block or
//! an indirect block whose rows point at direct blocks (and, past the rows of direct blocks,
//! at more indirect blocks).
//!
//! [`open`] reads those blocks (bounded: each block once, at most [`MAX_BLOCKS`], every byte
//! through the walk's metadata budget, indirect blocks at most [`MAX_INDIRECT_DEPTH`] deep)
//! and hands back objects by heap ID, managed, tiny or huge ([`Heap::object`]), which
//! [`crate::dense`] reads through the name index. The same blocks are also searched for
//! every link message of type 64 (an external link) that [`crate::messages::link`] parses
//! ([`Heap::external_links`], [`dense_links`]): a superset of the links the name index (the
//! version 2 B-tree) reaches, so no external link among managed objects is missed, whatever
//! the B-tree says. Huge objects (kept outside the managed blocks) and tiny objects large
//! enough to hold a link message (kept inside the B-tree's records) make that search cover
//! the whole file instead; a heap with I/O filters (its blocks compressed) is not read, and
//! says so.

use crate::io::Source;
use crate::messages::{self, LinkTarget};
use crate::model::{Hdf5Error, UNDEFINED};
use socair_plugin_api::ReadAt;
use std::collections::HashSet;

/// Direct and indirect blocks read per heap at most.
pub const MAX_BLOCKS: usize = 1 << 14;
/// Indirect blocks nested at most this deep (a heap of 2^64 bytes needs fewer).
pub const MAX_INDIRECT_DEPTH: usize = 16;
/// The smallest external link message: version, flags, type, name length and a 1-byte name,
/// the value's length, its flags byte and two 1-byte strings with their NULs.
const MIN_EXTERNAL_LINK: u64 = 12;

/// What the heap was found to hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dense {
    /// External links found: (name, file, path), each once.
    pub external: Vec<(String, String, String)>,
    /// What could not be read, in words.
    pub unread: Vec<String>,
}

/// The fields of a fractal heap header this reader uses.
struct Header {
    id_len: u16,
    max_managed: u32,
    huge_btree: u64,
    flags: u8,
    tiny_objects: u64,
    huge_objects: u64,
    width: u64,
    start: u64,
    max_direct: u64,
    block_offset_len: usize,
    root: u64,
    rows: u64,
}

/// Reads the dense links of the group whose link info message is `link_info`.
pub fn dense_links<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    link_info: &[u8],
) -> Result<Dense, Hdf5Error> {
    let (o, l) = (src.offsets, src.lengths);
    let mut c = src.cursor(link_info, "link info message");
    let _version = c.u8()?;
    let flags = c.u8()?;
    if flags & 1 != 0 {
        c.skip(8)?;
    }
    let heap = c.addr()?;
    let mut out = Dense::default();
    if heap == UNDEFINED {
        return Ok(out);
    }
    let h = header(src, heap)?;
    // Objects kept outside the managed blocks: huge ones (at addresses a second B-tree
    // holds) and tiny ones large enough for a link message (inside the name index's
    // records). HDF5 writes neither for links h5py makes; rather than read those B-trees,
    // the whole file is searched for external link messages, which finds them wherever
    // they lie (and perhaps bytes no link uses: a FAIL either way, never a miss).
    let tiny = h.tiny_objects > 0 && u64::from(h.id_len).saturating_sub(1) >= MIN_EXTERNAL_LINK;
    let mut w = Blocks {
        h: &h,
        seen: HashSet::new(),
        out: &mut out,
        o,
        l,
        kept: None,
    };
    if h.huge_objects > 0 || tiny {
        w.whole_file(src)?;
        w.out.unread.push(format!("the heap keeps {} huge and {} tiny objects outside its managed blocks, so the whole file was searched for external link messages instead", h.huge_objects, h.tiny_objects));
    }
    if h.rows == 0 {
        w.direct(src, h.root, h.start)?;
    } else {
        w.indirect(src, h.root, h.rows, 0)?;
    }
    Ok(out)
}

/// A fractal heap's managed and tiny objects, found by heap ID (`H5HF_read`, `H5HFman.c`,
/// `H5HFtiny.c`): every direct block read once, through the walk's budget.
pub struct Heap {
    blocks: Vec<(u64, Vec<u8>)>,
    id_len: usize,
    offset_size: usize,
    length_size: usize,
    tiny_extended: bool,
    /// Huge objects (kept outside the blocks): by key, their address and length, from the
    /// heap's huge-object B-tree (records of type 1, `H5HF__huge_bt2_indir_decode`).
    huge: std::collections::HashMap<u64, (u64, u64)>,
    /// Whether a huge object's ID holds its address and length itself (an ID long enough
    /// for both: `H5HF__huge_init`).
    huge_direct: bool,
    /// Where a direct block's objects start: past its signature, version, heap address,
    /// offset and (with checksummed blocks) checksum.
    data_at: usize,
    /// Bytes in an address.
    offsets: u8,
    /// Objects kept outside the blocks that could hold a link message (huge ones, tiny ones
    /// of [`MIN_EXTERNAL_LINK`] bytes or more): searching the blocks misses them.
    outside_blocks: bool,
}

/// Opens the fractal heap at `addr`.
pub fn open<S: ReadAt + ?Sized>(src: &mut Source<'_, S>, addr: u64) -> Result<Heap, Hdf5Error> {
    let h = header(src, addr)?;
    let mut out = Dense::default();
    let mut w = Blocks {
        h: &h,
        seen: HashSet::new(),
        out: &mut out,
        o: src.offsets,
        l: src.lengths,
        kept: Some(Vec::new()),
    };
    if h.rows == 0 {
        w.direct(src, h.root, h.start)?;
    } else {
        w.indirect(src, h.root, h.rows, 0)?;
    }
    let mut blocks = w.kept.take().unwrap_or_default();
    blocks.sort_by_key(|b| b.0);
    // `H5HF__hdr_finish_init_phase1`: offsets as wide as the heap's size bits, lengths as
    // the largest direct block's offsets or the largest managed object, whichever is less.
    let direct_bits = h.max_direct.trailing_zeros() as usize;
    let length_size = direct_bits
        .div_ceil(8)
        .min(u64::from(h.max_managed.max(1)).ilog2() as usize / 8 + 1);
    let id_len = usize::from(h.id_len);
    let huge_direct =
        id_len.saturating_sub(1) >= usize::from(src.offsets) + usize::from(src.lengths);
    let mut huge = std::collections::HashMap::new();
    if h.huge_objects > 0 && !huge_direct {
        let (o, l) = (src.offsets, src.lengths);
        crate::btree2::records(
            src,
            h.huge_btree,
            "fractal heap huge objects",
            &mut |ty, rec| {
                if ty != 1 {
                    return Err(Hdf5Error::new(
                        "fractal heap huge objects",
                        format!("records of type {ty}: filtered huge objects are not read"),
                    ));
                }
                let mut c = crate::io::Cursor::with(rec, o, l, "huge object record");
                let (addr, len, key) = (c.addr()?, c.length()?, c.length()?);
                huge.insert(key, (addr, len));
                Ok(())
            },
        )?;
    }
    let checksum = if h.flags & 2 != 0 { 4 } else { 0 };
    let tiny = h.tiny_objects > 0 && u64::from(h.id_len).saturating_sub(1) >= MIN_EXTERNAL_LINK;
    Ok(Heap {
        blocks,
        id_len,
        data_at: 5 + usize::from(src.offsets) + h.block_offset_len + checksum,
        offsets: src.offsets,
        outside_blocks: h.huge_objects > 0 || tiny,
        offset_size: h.block_offset_len,
        length_size,
        // `H5HF_TINY_LEN_SHORT`: IDs longer than 17 bytes spend two bytes on a tiny length.
        tiny_extended: id_len > 17,
        huge,
        huge_direct,
    })
}

impl Heap {
    /// The external link messages among the bytes of the blocks read (as [`dense_links`]
    /// searches them), or `None` when objects outside the blocks could hold one too: then
    /// [`dense_links`] searches the whole file.
    pub fn external_links(&self) -> Option<Dense> {
        if self.outside_blocks {
            return None;
        }
        let mut out = Dense::default();
        for (_, block) in &self.blocks {
            scan(
                block.get(self.data_at..).unwrap_or_default(),
                self.offsets,
                &mut out,
            );
        }
        Some(out)
    }

    /// The bytes of the object whose heap ID is `id` (a huge one read from `src`).
    pub fn object<S: ReadAt + ?Sized>(
        &self,
        src: &mut Source<'_, S>,
        id: &[u8],
    ) -> Result<Vec<u8>, String> {
        let first = *id.first().ok_or("an empty heap ID")?;
        if first >> 6 != 0 {
            return Err(format!("a heap ID of version {}, not 0", first >> 6));
        }
        match (first >> 4) & 3 {
            0 => {
                let mut c = crate::io::Cursor::with(id, 8, 8, "heap ID");
                c.skip(1).map_err(|e| e.reason)?;
                let offset = c.uint(self.offset_size).map_err(|e| e.reason)?;
                let len = c.uint(self.length_size).map_err(|e| e.reason)?;
                let i = self.blocks.partition_point(|b| b.0 <= offset);
                let (start, block) = i
                    .checked_sub(1)
                    .and_then(|i| self.blocks.get(i))
                    .ok_or_else(|| format!("no direct block holds heap offset {offset}"))?;
                let at = usize::try_from(offset - start).map_err(|_| "an offset past the block")?;
                let end = usize::try_from(len).ok().and_then(|n| at.checked_add(n));
                end.and_then(|end| block.get(at..end)).map(<[u8]>::to_vec).ok_or_else(|| format!("an object of {len} bytes at heap offset {offset} runs past its direct block"))
            }
            2 => {
                let (len, at) = if self.tiny_extended {
                    (
                        ((usize::from(first & 0x0f)) << 8
                            | usize::from(*id.get(1).ok_or("a short heap ID")?))
                            + 1,
                        2,
                    )
                } else {
                    (usize::from(first & 0x0f) + 1, 1)
                };
                id.get(at..at + len)
                    .filter(|_| at + len <= self.id_len)
                    .map(<[u8]>::to_vec)
                    .ok_or_else(|| {
                        format!("a tiny object of {len} bytes in a heap ID of {}", id.len())
                    })
            }
            1 => {
                let mut c = crate::io::Cursor::with(id, src.offsets, src.lengths, "heap ID");
                c.skip(1).map_err(|e| e.reason)?;
                let (addr, len) = if self.huge_direct {
                    (
                        c.addr().map_err(|e| e.reason)?,
                        c.length().map_err(|e| e.reason)?,
                    )
                } else {
                    let key = c.uint((self.id_len - 1).min(8)).map_err(|e| e.reason)?;
                    *self.huge.get(&key).ok_or_else(|| format!("a huge object of key {key}, which the heap's huge-object index does not list"))?
                };
                src.bytes(addr, len, "huge heap object")
                    .map_err(|e| e.reason)
            }
            t => Err(format!("a heap ID of type {t}")),
        }
    }
}

/// Every external link message that parses at any byte of `data` (addresses of `offsets`
/// bytes), each once, into `out`.
fn scan(data: &[u8], offsets: u8, out: &mut Dense) {
    for p in 0..data.len().saturating_sub(3) {
        // Version 1, flags with the link-type bit (3) and no undefined bit, type 64.
        let (Some(&1), Some(&flags), Some(&64)) = (data.get(p), data.get(p + 1), data.get(p + 2))
        else {
            continue;
        };
        if flags & 0x08 == 0 || flags & 0xe0 != 0 {
            continue;
        }
        if let Ok((name, LinkTarget::External { file, path })) =
            messages::link(data.get(p..).unwrap_or_default(), offsets)
        {
            let found = (name, file, path);
            if out.external.len() < socair_plugin_kit::bounded::FINDINGS_PER_ROW
                && !out.external.contains(&found)
            {
                out.external.push(found);
            }
        }
    }
}

/// The piece of the file searched at once by [`Blocks::whole_file`], and the overlap between
/// pieces: a link message split between two pieces is whole in the first when it is shorter
/// than the overlap (an external link's value is at most 65,535 bytes; only a name longer
/// than the rest of the overlap, which no HDF5 writer produces, could straddle unseen).
const PIECE: u64 = 1 << 20;
const OVERLAP: u64 = 192 << 10;

/// The heap header at `addr`.
fn header<S: ReadAt + ?Sized>(src: &mut Source<'_, S>, addr: u64) -> Result<Header, Hdf5Error> {
    let (o, l) = (u64::from(src.offsets), u64::from(src.lengths));
    // Signature to the root block's row count (filter fields and checksum after).
    let len = 4 + 1 + 2 + 2 + 1 + 4 + l + o + l + o + 8 * l + 2 + l + l + 2 + 2 + o + 2;
    let bytes = src.bytes(addr, len, "fractal heap header")?;
    let what = "fractal heap header";
    let mut c = src.cursor(&bytes, what);
    if c.take(4)? != b"FRHP" {
        return Err(Hdf5Error::new(
            format!("{what} at address {addr}"),
            "no FRHP signature",
        ));
    }
    let version = c.u8()?;
    if version != 0 {
        return Err(Hdf5Error::new(
            what,
            format!("version {version}: HDF5 writes 0"),
        ));
    }
    let id_len = c.u16()?;
    let filters_len = c.u16()?;
    let flags = c.u8()?;
    let max_managed = c.u32()?;
    let _next_huge = c.length()?;
    let huge_btree = c.addr()?;
    let _free = c.length()?;
    let _free_manager = c.addr()?;
    let _managed = c.length()?;
    let _allocated = c.length()?;
    let _iterator = c.length()?;
    let _managed_objects = c.length()?;
    let _huge_size = c.length()?;
    let huge_objects = c.length()?;
    let _tiny_size = c.length()?;
    let tiny_objects = c.length()?;
    let width = u64::from(c.u16()?);
    let start = c.length()?;
    let max_direct = c.length()?;
    let max_heap_bits = c.u16()?;
    let _start_rows = c.u16()?;
    let root = c.addr()?;
    let rows = u64::from(c.u16()?);
    if filters_len != 0 {
        return Err(Hdf5Error::new(
            what,
            "its blocks pass through I/O filters (compressed): not read",
        ));
    }
    let pow2 = |v: u64| v != 0 && v.is_power_of_two();
    if width == 0
        || !pow2(start)
        || !pow2(max_direct)
        || max_direct < start
        || !(1..=64).contains(&max_heap_bits)
    {
        return Err(Hdf5Error::new(what, format!("table width {width}, starting block size {start}, maximum direct block size {max_direct}, maximum heap size {max_heap_bits} bits: not the doubling table HDF5 lays out")));
    }
    Ok(Header {
        id_len,
        max_managed,
        huge_btree,
        flags,
        tiny_objects,
        huge_objects,
        width,
        start,
        max_direct,
        block_offset_len: usize::from(max_heap_bits.div_ceil(8)),
        root,
        rows,
    })
}

struct Blocks<'h, 'o> {
    h: &'h Header,
    seen: HashSet<u64>,
    out: &'o mut Dense,
    o: u8,
    l: u8,
    /// The direct blocks read, by their offset in the heap's space, when kept ([`open`]).
    kept: Option<Vec<(u64, Vec<u8>)>>,
}

impl Blocks<'_, '_> {
    /// Whether `addr` is a block not read yet, within the count.
    fn first_visit(&mut self, addr: u64) -> Result<bool, Hdf5Error> {
        if addr == UNDEFINED {
            return Ok(false);
        }
        if self.seen.len() >= MAX_BLOCKS {
            return Err(Hdf5Error::new(
                "fractal heap",
                format!("more than {MAX_BLOCKS} blocks: not read further"),
            ));
        }
        Ok(self.seen.insert(addr))
    }

    /// The size of the blocks of row `row` (rows 0 and 1: the starting size; then doubling).
    fn row_size(&self, row: u64) -> Option<u64> {
        if row == 0 {
            return Some(self.h.start);
        }
        let shift = u32::try_from(row - 1).ok()?;
        self.h
            .start
            .checked_shl(shift)
            .filter(|s| s.trailing_zeros() == self.h.start.trailing_zeros() + shift)
    }

    /// Rows of direct blocks in an indirect block (`log2(max direct) - log2(start) + 2`).
    fn direct_rows(&self) -> u64 {
        u64::from(self.h.max_direct.trailing_zeros() - self.h.start.trailing_zeros()) + 2
    }

    fn direct<S: ReadAt + ?Sized>(
        &mut self,
        src: &mut Source<'_, S>,
        addr: u64,
        size: u64,
    ) -> Result<(), Hdf5Error> {
        if !self.first_visit(addr)? {
            return Ok(());
        }
        let what = "fractal heap direct block";
        let bytes = src.bytes(addr, size, what)?;
        if bytes.get(..4) != Some(b"FHDB") {
            return Err(Hdf5Error::new(
                format!("{what} at address {addr}"),
                "no FHDB signature",
            ));
        }
        let checksum = if self.h.flags & 2 != 0 { 4 } else { 0 };
        let data_at = 5 + usize::from(self.o) + self.h.block_offset_len + checksum;
        if let Some(kept) = &mut self.kept {
            let at = 5 + usize::from(self.o);
            let mut c = crate::io::Cursor::with(&bytes, self.o, self.l, what);
            c.skip(at)?;
            let offset = c.uint(self.h.block_offset_len)?;
            kept.push((offset, bytes));
            return Ok(());
        }
        self.scan(bytes.get(data_at..).unwrap_or_default());
        Ok(())
    }

    /// Every external link message in the file, read in pieces through the walk's budget.
    fn whole_file<S: ReadAt + ?Sized>(&mut self, src: &mut Source<'_, S>) -> Result<(), Hdf5Error> {
        let mut at = 0u64;
        while at < src.len {
            let n = (src.len - at).min(PIECE + OVERLAP);
            let piece = src.absolute(at, n, "the file, searched for external links")?;
            self.scan(&piece);
            at = at.saturating_add(PIECE);
        }
        Ok(())
    }

    /// Every external link message that parses at any byte of `data`.
    fn scan(&mut self, data: &[u8]) {
        scan(data, self.o, self.out);
    }

    fn indirect<S: ReadAt + ?Sized>(
        &mut self,
        src: &mut Source<'_, S>,
        addr: u64,
        rows: u64,
        depth: usize,
    ) -> Result<(), Hdf5Error> {
        if depth >= MAX_INDIRECT_DEPTH {
            return Err(Hdf5Error::new(
                "fractal heap",
                format!("indirect blocks nested more than {MAX_INDIRECT_DEPTH} deep"),
            ));
        }
        if !self.first_visit(addr)? {
            return Ok(());
        }
        let what = "fractal heap indirect block";
        let (o, _l) = (u64::from(self.o), self.l);
        let entries = rows
            .checked_mul(self.h.width)
            .filter(|&n| n <= 1 << 20)
            .ok_or_else(|| {
                Hdf5Error::new(what, format!("{rows} rows of {} blocks", self.h.width))
            })?;
        let head = 5 + o + self.h.block_offset_len as u64;
        let bytes = src.bytes(addr, head + entries * o, what)?;
        if bytes.get(..4) != Some(b"FHIB") {
            return Err(Hdf5Error::new(
                format!("{what} at address {addr}"),
                "no FHIB signature",
            ));
        }
        let mut c = src.cursor(&bytes, what);
        c.skip(usize::try_from(head).unwrap_or(usize::MAX))?;
        let direct_rows = self.direct_rows();
        let mut children = Vec::new();
        for row in 0..rows {
            for _ in 0..self.h.width {
                children.push((row, c.addr()?));
            }
        }
        for (row, child) in children {
            let size = self.row_size(row).ok_or_else(|| {
                Hdf5Error::new(what, format!("row {row}: its blocks' size overflows"))
            })?;
            if row < direct_rows {
                self.direct(src, child, size)?;
            } else if child != UNDEFINED {
                // A child indirect block's rows: log2(size) - log2(start * width) + 1.
                let span = self
                    .h
                    .start
                    .checked_mul(self.h.width)
                    .filter(|s| s.is_power_of_two())
                    .ok_or_else(|| {
                        Hdf5Error::new(what, "a table width that is not a power of two")
                    })?;
                let child_rows = u64::from(size.trailing_zeros())
                    .saturating_sub(u64::from(span.trailing_zeros()))
                    + 1;
                self.indirect(src, child, child_rows, depth + 1)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../../../fixtures/hdf5/dense-links/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(path).unwrap()
    }

    /// The link info message of the first dense group in `file`: the bytes after its
    /// version, flags (and creation index) at the `FRHP` header's address.
    fn link_info_for(file: &[u8]) -> Vec<u8> {
        let at = file.windows(4).position(|w| w == b"FRHP").unwrap() as u64;
        let mut m = vec![0u8, 0];
        m.extend_from_slice(&at.to_le_bytes());
        m.extend_from_slice(&u64::MAX.to_le_bytes());
        m
    }

    #[test]
    fn the_external_link_of_an_indirect_heap_is_found() {
        let file = fixture("dense-many-external.h5");
        let mut src = Source::new(&file[..]);
        let d = dense_links(&mut src, &link_info_for(&file)).unwrap();
        assert_eq!(
            d.external,
            vec![("ext".into(), "other.h5".into(), "/data".into())]
        );
        assert!(d.unread.is_empty(), "{:?}", d.unread);
        let file = fixture("dense-no-external.h5");
        let mut src = Source::new(&file[..]);
        assert_eq!(
            dense_links(&mut src, &link_info_for(&file)).unwrap(),
            Dense::default()
        );
    }

    #[test]
    fn an_open_heap_finds_the_same_external_links_in_the_blocks_it_read() {
        for (name, want) in [("dense-many-external.h5", 1), ("dense-no-external.h5", 0)] {
            let file = fixture(name);
            let at = file.windows(4).position(|w| w == b"FRHP").unwrap() as u64;
            let mut src = Source::new(&file[..]);
            let heap = open(&mut src, at).unwrap();
            let found = heap
                .external_links()
                .expect("no objects outside the blocks");
            let mut again = Source::new(&file[..]);
            assert_eq!(
                found,
                dense_links(&mut again, &link_info_for(&file)).unwrap(),
                "{name}"
            );
            assert_eq!(found.external.len(), want, "{name}");
        }
    }

    #[test]
    fn hostile_heaps_are_refused_without_panics() {
        let file = fixture("dense-many-external.h5");
        let info = link_info_for(&file);
        // Cut anywhere: an error or a partial answer, never a panic.
        for cut in (0..file.len()).step_by(97) {
            let mut src = Source::new(&file[..cut]);
            let _ = dense_links(&mut src, &info);
        }
        // An indirect block whose children all point back at itself: each block read once.
        let at = file.windows(4).position(|w| w == b"FHIB").unwrap();
        let mut looped = file.clone();
        let heap = file.windows(4).position(|w| w == b"FRHP").unwrap();
        // Signature, version, header address, the block offset (4 bytes: HDF5's maximum
        // heap size is 32 bits).
        let entries = at + 5 + 8 + 4;
        for k in 0..4 {
            let e = entries + 8 * k;
            looped[e..e + 8].copy_from_slice(&(at as u64).to_le_bytes());
        }
        let mut src = Source::new(&looped[..]);
        // The self-pointing entries are the first four direct blocks: the link, written
        // last, lies in a later one, still found; the loop is read once.
        let d = dense_links(&mut src, &info).unwrap();
        assert_eq!(d.external.len(), 1, "{d:?}");
        // A header whose table is not a doubling table.
        let mut bad = file.clone();
        let width_at = heap + 4 + 1 + 2 + 2 + 1 + 4 + 8 + 8 + 8 + 8 + 8 * 8;
        bad[width_at..width_at + 2].copy_from_slice(&0u16.to_le_bytes());
        let mut src = Source::new(&bad[..]);
        assert!(dense_links(&mut src, &info).is_err());
        // A heap that says it keeps huge objects: the whole file is searched, and an external
        // link message lying outside every managed block (here appended past the heap) is
        // found.
        let clean = fixture("dense-no-external.h5");
        let info = link_info_for(&clean);
        let mut huge = clean.clone();
        let huge_at = clean.windows(4).position(|w| w == b"FRHP").unwrap() + 86;
        huge[huge_at..huge_at + 8].copy_from_slice(&1u64.to_le_bytes());
        let mut message = vec![1u8, 0x08, 64, 3];
        message.extend_from_slice(b"ext");
        let value = b"\0other.h5\0/data\0";
        message.extend_from_slice(&(value.len() as u16).to_le_bytes());
        message.extend_from_slice(value);
        huge.extend_from_slice(&message);
        let mut src = Source::new(&huge[..]);
        let d = dense_links(&mut src, &info).unwrap();
        assert_eq!(
            d.external,
            vec![("ext".into(), "other.h5".into(), "/data".into())]
        );
        assert!(d.unread[0].contains("whole file"), "{:?}", d.unread);
        // No heap at all.
        let mut src = Source::new(&file[..]);
        let mut none = vec![0u8, 0];
        none.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(dense_links(&mut src, &none).unwrap(), Dense::default());
    }
}
