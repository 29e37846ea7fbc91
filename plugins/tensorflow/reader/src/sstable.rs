//! The table format TensorFlow's tensor bundle index is written in
//! (`tensorflow/core/lib/io/table_builder.cc`, `format.cc`, `block.cc`, LevelDB's format): a
//! strict, bounded reader.
//!
//! ```text
//! file   := data block* meta-index block index block footer
//! block  := entry* restart:u32le* num_restarts:u32le, then a 5-byte trailer:
//!           type:u8 (0 none, 1 snappy) and the masked CRC-32C of the block and its type byte
//! entry  := shared:varint32 non_shared:varint32 value_len:varint32 key_delta value
//! footer := meta-index handle, index handle (each offset:varint64 size:varint64), padding to
//!           40 bytes, magic 0xdb4775248b80fb57 (u64 little-endian): the last 48 bytes
//! ```
//!
//! The index block maps a separator key to the handle of each data block. Every block's
//! checksum is checked (TensorFlow's `ReadBlock` always verifies it), every length and offset
//! bounded by the file, keys strictly ascending across the whole table, and the entries of a
//! block decoded from its first restart point without trusting the restart array beyond its
//! bounds. Compressed blocks (snappy), which TensorFlow's bundle writer never writes, are
//! refused.

use crate::crc32c::{crc32c, extend, mask};
use socair_plugin_kit::protobuf::read_varint;

/// The footer's length.
pub const FOOTER_LEN: usize = 48;
/// The table magic number (`kTableMagicNumber`).
pub const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// What [`entries`] says past its count of entries.
pub const TOO_MANY: &str = "more entries than this reader reads for a file of this size";
/// The block trailer's length.
const TRAILER_LEN: usize = 5;

/// Why a table is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset} ({place}): {what}")]
pub struct TableError {
    /// Where.
    pub offset: u64,
    /// Which part of the table.
    pub place: String,
    /// What.
    pub what: String,
}

fn err(offset: usize, place: impl Into<String>, what: impl Into<String>) -> TableError {
    TableError {
        offset: offset as u64,
        place: place.into(),
        what: what.into(),
    }
}

/// One entry: its key and where its value lies in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key.
    pub key: Vec<u8>,
    /// `(offset, len)` of the value in the file.
    pub value: (usize, usize),
}

/// A block handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handle {
    offset: usize,
    size: usize,
}

fn handle(buf: &[u8], at: &mut usize, end: usize, place: &str) -> Result<Handle, TableError> {
    let start = *at;
    let offset =
        read_varint(buf, at, end).ok_or_else(|| err(start, place, "a truncated block offset"))?;
    let size =
        read_varint(buf, at, end).ok_or_else(|| err(start, place, "a truncated block size"))?;
    let offset =
        usize::try_from(offset).map_err(|_| err(start, place, "a block offset past the file"))?;
    let size =
        usize::try_from(size).map_err(|_| err(start, place, "a block size past the file"))?;
    Ok(Handle { offset, size })
}

/// Every entry of the table in `buf` (the whole index file), in key order; at most
/// `max_entries`.
pub fn entries(buf: &[u8], max_entries: usize) -> Result<Vec<Entry>, TableError> {
    if buf.len() < FOOTER_LEN {
        return Err(err(
            0,
            "footer",
            format!(
                "the file is {} bytes; a table ends with a {FOOTER_LEN}-byte footer",
                buf.len()
            ),
        ));
    }
    let f = buf.len() - FOOTER_LEN;
    let magic = u64::from_le_bytes(buf[buf.len() - 8..].try_into().unwrap_or([0; 8]));
    if magic != MAGIC {
        return Err(err(
            buf.len() - 8,
            "footer",
            format!("magic {magic:#018x}, not the table magic {MAGIC:#018x}"),
        ));
    }
    let mut at = f;
    let meta = handle(buf, &mut at, buf.len() - 8, "footer")?;
    let index = handle(buf, &mut at, buf.len() - 8, "footer")?;
    let _ = meta;
    let index_block = block(buf, index, f, "index block")?;
    let mut handles = Vec::new();
    for e in block_entries(buf, index_block, "index block", usize::MAX)? {
        let mut p = e.value.0;
        let h = handle(buf, &mut p, e.value.0 + e.value.1, "index block")?;
        if p != e.value.0 + e.value.1 {
            return Err(err(
                e.value.0,
                "index block",
                "a block handle followed by extra bytes",
            ));
        }
        handles.push((e.key, h));
    }
    let mut out: Vec<Entry> = Vec::new();
    let mut prev_end = 0usize;
    for (i, (separator, h)) in handles.iter().enumerate() {
        let place = format!("data block {i}");
        if h.offset < prev_end {
            return Err(err(
                h.offset,
                &place,
                "a data block overlapping the one before it",
            ));
        }
        let contents = block(buf, *h, index.offset, &place)?;
        prev_end = h.offset + h.size + TRAILER_LEN;
        let got = block_entries(buf, contents, &place, max_entries.saturating_sub(out.len()))?;
        if got.is_empty() {
            return Err(err(
                h.offset,
                &place,
                "an empty data block (the writer never writes one)",
            ));
        }
        for e in got {
            if let Some(last) = out.last() {
                if e.key <= last.key {
                    return Err(err(e.value.0, &place, format!(
                        "key {:?} does not sort after the key before it: a table's keys are strictly ascending, and a reader that searches it would find another entry",
                        String::from_utf8_lossy(&e.key)
                    )));
                }
            }
            if e.key > *separator {
                return Err(err(e.value.0, &place, "a key past its block's index separator: a reader that searches the index would not find it"));
            }
            out.push(e);
        }
    }
    Ok(out)
}

/// The contents of the block at `h` (without its trailer), checked: within `limit` (the
/// start of what follows it), an uncompressed type byte and a matching checksum.
fn block(buf: &[u8], h: Handle, limit: usize, place: &str) -> Result<(usize, usize), TableError> {
    let end = h
        .offset
        .checked_add(h.size)
        .and_then(|e| e.checked_add(TRAILER_LEN))
        .filter(|&e| e <= limit)
        .ok_or_else(|| err(h.offset, place, format!(
            "a block of {} bytes at byte {} runs past the end of its part of the file (byte {limit})",
            h.size, h.offset
        )))?;
    let contents = &buf[h.offset..h.offset + h.size];
    let kind = buf[h.offset + h.size];
    let stored = u32::from_le_bytes(buf[end - 4..end].try_into().unwrap_or([0; 4]));
    let actual = mask(extend(crc32c(contents), &[kind]));
    if stored != actual {
        return Err(err(h.offset, place, format!(
            "block checksum mismatch (stored {stored:#010x}, computed {actual:#010x}): TensorFlow refuses the table"
        )));
    }
    match kind {
        0 => Ok((h.offset, h.offset + h.size)),
        1 => Err(err(h.offset + h.size, place, "a snappy-compressed block: TensorFlow's bundle writer never compresses, and this reader does not decompress")),
        k => Err(err(h.offset + h.size, place, format!("block type {k}: neither uncompressed (0) nor snappy (1)"))),
    }
}

/// The entries of a block's contents `buf[start..end]`, at most `max` of them.
fn block_entries(
    buf: &[u8],
    (start, end): (usize, usize),
    place: &str,
    max: usize,
) -> Result<Vec<Entry>, TableError> {
    if end - start < 4 {
        return Err(err(
            start,
            place,
            "a block too short to hold its restart count",
        ));
    }
    let num = u32::from_le_bytes(buf[end - 4..end].try_into().unwrap_or([0; 4])) as usize;
    let restarts_len = num
        .checked_mul(4)
        .and_then(|n| n.checked_add(4))
        .filter(|&n| n <= end - start)
        .ok_or_else(|| {
            err(
                end - 4,
                place,
                format!("{num} restart points do not fit in the block"),
            )
        })?;
    let data_end = end - restarts_len;
    if num == 0 && data_end > start {
        return Err(err(end - 4, place, "entries with no restart point"));
    }
    let mut out: Vec<Entry> = Vec::new();
    // Each entry's offset in the block and its shared length, to check the restart points.
    let mut starts: Vec<(usize, usize)> = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut at = start;
    while at < data_end {
        if out.len() >= max {
            return Err(err(
                at,
                place,
                "more entries than this reader reads for a file of this size",
            ));
        }
        let entry_at = at;
        let v = |at: &mut usize| {
            read_varint(buf, at, data_end)
                .filter(|&v| v <= u64::from(u32::MAX))
                .map(|v| v as usize)
                .ok_or_else(|| err(entry_at, place, "a truncated entry header"))
        };
        let shared = v(&mut at)?;
        let non_shared = v(&mut at)?;
        let value_len = v(&mut at)?;
        if shared > key.len() || (out.is_empty() && shared != 0) {
            return Err(err(
                entry_at,
                place,
                format!("an entry shares {shared} bytes of a {}-byte key", key.len()),
            ));
        }
        let key_end = at
            .checked_add(non_shared)
            .filter(|&e| e <= data_end)
            .ok_or_else(|| err(entry_at, place, "a key runs past its block"))?;
        let value_end = key_end
            .checked_add(value_len)
            .filter(|&e| e <= data_end)
            .ok_or_else(|| err(entry_at, place, "a value runs past its block"))?;
        key.truncate(shared);
        key.extend_from_slice(&buf[at..key_end]);
        starts.push((entry_at - start, shared));
        out.push(Entry {
            key: key.clone(),
            value: (key_end, value_len),
        });
        at = value_end;
    }
    // Every restart point is the start of an entry that shares nothing (a reader seeking by
    // the restart array decodes from there), and the first entry is the first restart.
    let mut previous = None;
    for i in 0..num {
        let p = data_end + 4 * i;
        let r = u32::from_le_bytes(buf[p..p + 4].try_into().unwrap_or([0; 4])) as usize;
        if previous.is_some_and(|q| r <= q) || (i == 0 && r != 0 && !starts.is_empty()) {
            return Err(err(p, place, "restart points out of order"));
        }
        previous = Some(r);
        match starts.binary_search_by_key(&r, |s| s.0) {
            Ok(j) if starts[j].1 == 0 => {}
            Ok(_) => {
                return Err(err(
                    p,
                    place,
                    "an entry at a restart point shares a key prefix",
                ))
            }
            Err(_) if starts.is_empty() && r == 0 => {}
            Err(_) => {
                return Err(err(
                    p,
                    place,
                    format!("restart point {r} is not the start of an entry"),
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use socair_plugin_kit::protobuf::write_varint as varint;

    fn block_bytes(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut b = Vec::new();
        for (k, v) in entries {
            varint(0, &mut b);
            varint(k.len() as u64, &mut b);
            varint(v.len() as u64, &mut b);
            b.extend_from_slice(k);
            b.extend_from_slice(v);
        }
        b.extend(0u32.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        b
    }

    fn push_block(file: &mut Vec<u8>, contents: &[u8]) -> (u64, u64) {
        let at = file.len() as u64;
        file.extend_from_slice(contents);
        file.push(0);
        let c = mask(extend(crc32c(contents), &[0]));
        file.extend(c.to_le_bytes());
        (at, contents.len() as u64)
    }

    /// A table of one data block holding `entries` (keys ascending), as TensorFlow writes it.
    pub(crate) fn table(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
        let mut file = Vec::new();
        let data = push_block(&mut file, &block_bytes(entries));
        let meta = push_block(&mut file, &block_bytes(&[]));
        let mut h = Vec::new();
        varint(data.0, &mut h);
        varint(data.1, &mut h);
        // The index's separator: at least every key of the block.
        let last = entries.iter().map(|e| e.0).max().unwrap_or(&b""[..]);
        let index = push_block(&mut file, &block_bytes(&[(last, &h)]));
        let mut footer = Vec::new();
        for (o, s) in [meta, index] {
            varint(o, &mut footer);
            varint(s, &mut footer);
        }
        footer.resize(40, 0);
        footer.extend(MAGIC.to_le_bytes());
        file.extend(footer);
        file
    }

    #[test]
    fn reads_what_it_writes_and_checks_every_checksum() {
        let t = table(&[(b"", b"hdr"), (b"a", b"1"), (b"b", b"22")]);
        let e = entries(&t, 100).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[2].key, b"b");
        assert_eq!(&t[e[2].value.0..][..e[2].value.1], b"22");
        // Any byte of a block read changed: its checksum no longer matches. (The meta-index
        // block, bytes 30..43 here, is never read, by TensorFlow's Table::Open either.)
        for i in (0..t.len() - FOOTER_LEN).filter(|i| !(30..43).contains(i)) {
            let mut bad = t.clone();
            bad[i] ^= 0x40;
            assert!(entries(&bad, 100).is_err(), "byte {i}");
        }
        // Keys out of order.
        let t = table(&[(b"b", b"1"), (b"a", b"2")]);
        assert!(entries(&t, 100).unwrap_err().what.contains("ascending"));
        // Too short, bad magic.
        assert!(entries(&[0; 10], 100).is_err());
        let mut t = table(&[(b"a", b"1")]);
        let n = t.len();
        t[n - 1] ^= 1;
        assert!(entries(&t, 100).unwrap_err().what.contains("magic"));
    }
}
