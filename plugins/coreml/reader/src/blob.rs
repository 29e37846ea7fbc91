//! A model package's weights file (`Data/com.apple.CoreML/weights/weight.bin`): MIL's blob
//! storage, as coremltools 9.0 writes and Core ML reads it (mlmodel/src/MILBlob/Blob/
//! StorageFormat.hpp, StorageWriter.cpp, StorageReader.cpp):
//!
//! * a 64-byte header: `count` (u32), `version` (u32, 2: `StorageReader` refuses any other),
//!   reserved zeros;
//! * then `count` blobs, each a 64-byte metadata (`sentinel` 0xDEADBEEF, `mil_dtype`,
//!   `sizeInBytes`, `offset` of the data, `padding_size_in_bits`, reserved) at a multiple of
//!   64, its data right after it, the next metadata at the next multiple of 64
//!   (`GetAllOffsets`).
//!
//! The tensors are the model file's (its `const` operations name a blob by the offset of its
//! metadata, [`crate::model::mil`]); this reader locates none and checks what the model file's
//! reader relies on: that the blobs are where the header says, within the file, and that
//! every metadata in the file (every 64-byte-aligned `0xDEADBEEF` a program could name) has
//! its data right after it, where the model's reader locates a blob's bytes, so the bytes
//! socair fingerprints are the bytes Core ML reads (`GetDataView` reads them at
//! `metadata.offset`).

use socair_plugin_api::{OpenedFile, ReadAt, RowStatus};
use socair_plugin_kit::reading::Reading;
use socair_plugin_kit::Severity;

/// The format this reader reads.
pub const FORMAT: &str = "coreml-weights";

/// The metadata's sentinel (`BlobMetadataSentinel`).
pub const SENTINEL: u32 = 0xDEAD_BEEF;

/// The alignment of metadata and data (`DefaultStorageAlignment`).
pub const ALIGN: u64 = 64;

/// How much of the file is read at once when looking for metadata.
const CHUNK: usize = 1 << 20;

/// A `BlobDataType` (BlobDataType.hpp): its name and whether it is packed below a byte.
pub fn blob_type(code: u32) -> Option<(&'static str, bool)> {
    Some(match code {
        1 => ("F16", false),
        2 => ("F32", false),
        3 => ("U8", false),
        4 => ("I8", false),
        5 => ("BF16", false),
        6 => ("I16", false),
        7 => ("U16", false),
        8 => ("INT4", true),
        9 => ("UINT1", true),
        10 => ("UINT2", true),
        11 => ("UINT4", true),
        12 => ("UINT3", true),
        13 => ("UINT6", true),
        14 => ("I32", false),
        15 => ("U32", false),
        16 => ("F8_E4M3", false),
        17 => ("F8_E5M2", false),
        _ => return None,
    })
}

/// Whether `head` (the file's first bytes) starts as a weights file: version 2, reserved
/// zeros, and the first blob's metadata (its sentinel and a known type) right after the
/// header, or no blob at all in a file of the header alone.
pub fn looks_like_weights(head: &[u8], file_len: u64) -> bool {
    let u32_at = |at: usize| {
        head.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    if head.len() < 64 || u32_at(4) != Some(2) || head[8..64].iter().any(|b| *b != 0) {
        return false;
    }
    match u32_at(0) {
        Some(0) => file_len == 64,
        Some(_) => u32_at(64) == Some(SENTINEL) && u32_at(68).and_then(blob_type).is_some(),
        None => false,
    }
}

/// One blob's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata {
    /// Where it is.
    pub at: u64,
    /// `sentinel`.
    pub sentinel: u32,
    /// `mil_dtype`.
    pub dtype: u32,
    /// `sizeInBytes`.
    pub size: u64,
    /// `offset` of the data.
    pub data: u64,
    /// `padding_size_in_bits`.
    pub padding_bits: u64,
}

impl Metadata {
    fn parse(at: u64, b: &[u8; 64]) -> Metadata {
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        Metadata {
            at,
            sentinel: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            dtype: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            size: u64_at(8),
            data: u64_at(16),
            padding_bits: u64_at(24),
        }
    }
}

fn read64<S: ReadAt + ?Sized>(src: &S, at: u64) -> Result<[u8; 64], String> {
    let mut b = [0u8; 64];
    src.read_exact_at(at, &mut b)?;
    Ok(b)
}

/// Reads the weights file `src`; `scan` says whether its data is read for metadata hidden
/// in it (not under `header_only`).
pub fn read<S: ReadAt + ?Sized>(src: &S, scan: bool) -> OpenedFile {
    let len = src.size();
    let mut r = Reading::new(FORMAT, len);
    let mut listed = Vec::new();
    let (count, end) = match chain(src, &mut r, &mut listed) {
        Ok(c) => c,
        Err(why) => {
            r.note("malformed", Severity::Fail, || "header".into(), || why);
            (0, len)
        }
    };
    if end < len {
        r.note(
            "bytes past the blobs",
            Severity::Lead,
            || format!("byte {end}"),
            || format!("{} bytes follow the last of the {count} blobs the header counts: coremltools' writer leaves none, and a program may name an offset in them", len - end),
        );
    }
    if scan {
        if let Err(why) = hidden(src, &mut r, &listed) {
            r.note("malformed", Severity::Fail, || "file".into(), || why);
        }
    }
    // Headers only: the blobs' data was not searched for other metadata.
    r.metadata
        .push(("coreml.data_searched".into(), scan.to_string()));
    r.metadata.push(("coreml.blobs".into(), count.to_string()));
    r.finish(|status| match status {
        RowStatus::Pass => format!("Core ML weights (MIL blob storage, version 2): {count} blob{}, each where its metadata says; their tensors are the model's", if count == 1 { "" } else { "s" }),
        RowStatus::Fail => "Core ML weights that Core ML and socair would read differently, or that are malformed".into(),
        _ => format!("Core ML weights (MIL blob storage) with parts socair does not prove safe: {count} blobs"),
    })
}

/// Walks the blobs the header counts, as `GetAllOffsets` does: their count, and where the
/// last one's data ends.
fn chain<S: ReadAt + ?Sized>(
    src: &S,
    r: &mut Reading,
    listed: &mut Vec<u64>,
) -> Result<(u64, u64), String> {
    let len = src.size();
    if len < 64 {
        return Err(format!(
            "the file is {len} bytes, shorter than the 64-byte storage header"
        ));
    }
    let header = read64(src, 0)?;
    let count = u64::from(u32::from_le_bytes([
        header[0], header[1], header[2], header[3],
    ]));
    let version = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if version != 2 {
        return Err(format!(
            "storage version {version}: Core ML's StorageReader reads version 2 only"
        ));
    }
    if count > (len - 64) / 64 {
        return Err(format!(
            "the header counts {count} blobs; a file of {len} bytes holds at most {}",
            (len - 64) / 64
        ));
    }
    let (mut at, mut end) = (64u64, 64u64);
    for i in 0..count {
        let place = || format!("blob {i} (byte {at})");
        if at.checked_add(64).is_none_or(|e| e > len) {
            return Err(format!(
                "blob {i}'s metadata at byte {at} runs past the end of the file"
            ));
        }
        let m = Metadata::parse(at, &read64(src, at)?);
        listed.push(at);
        if m.sentinel != SENTINEL {
            return Err(format!(
                "blob {i}'s metadata at byte {at} has no sentinel 0xDEADBEEF: Core ML refuses it"
            ));
        }
        let data_end = m.data.checked_add(m.size).filter(|e| *e <= len);
        let Some(data_end) = data_end else {
            return Err(format!(
                "blob {i}'s data ({} bytes at byte {}) runs past the end of the file",
                m.size, m.data
            ));
        };
        if m.data != at + 64 {
            r.note("data away from its metadata", Severity::Fail, place, || {
                format!("its data is at byte {}, not right after its metadata where coremltools writes it and socair locates it: Core ML reads other bytes than socair fingerprints", m.data)
            });
        }
        match blob_type(m.dtype) {
            None => r.note("unknown blob types", Severity::Lead, place, || {
                format!("blob type {} is not one Core ML's BlobDataType defines in coremltools 9.0", m.dtype)
            }),
            Some((name, true)) if m.padding_bits >= 8 => r.note("malformed", Severity::Fail, place, || {
                format!("{} bits of padding in a {name} blob: Core ML's StorageReader refuses 8 or more", m.padding_bits)
            }),
            _ => {}
        }
        end = data_end;
        at = data_end.div_ceil(ALIGN).saturating_mul(ALIGN);
    }
    Ok((count, end))
}

/// Looks at every 64-byte-aligned offset past the header but the blobs' own (`listed`, in
/// increasing order, judged by [`chain`]) for metadata whose data is not right after it.
fn hidden<S: ReadAt + ?Sized>(src: &S, r: &mut Reading, listed: &[u64]) -> Result<(), String> {
    let len = src.size();
    let mut buf = vec![0u8; CHUNK];
    let mut start = 64u64;
    while start.saturating_add(64) <= len {
        let n = (len - start).min(CHUNK as u64) as usize;
        let chunk = &mut buf[..n];
        src.read_exact_at(start, chunk)?;
        let mut i = 0usize;
        while i + 8 <= n {
            let word = u32::from_le_bytes([chunk[i], chunk[i + 1], chunk[i + 2], chunk[i + 3]]);
            if word == SENTINEL {
                let at = start + i as u64;
                if at + 64 <= len && listed.binary_search(&at).is_err() {
                    let m = Metadata::parse(at, &read64(src, at)?);
                    if blob_type(m.dtype).is_some() && m.data != at + 64 {
                        r.note("data away from its metadata", Severity::Fail, || format!("byte {at}"), || {
                            format!("reads as a blob's metadata whose data is at byte {}, not right after it: a program that names offset {at} makes Core ML read other bytes than socair fingerprints", m.data)
                        });
                    }
                }
            }
            i += ALIGN as usize;
        }
        // Chunks are whole multiples of the alignment, so every aligned offset is seen once.
        start += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A weights file of `blobs` (type, data), as StorageWriter writes it.
    pub fn weights(blobs: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = vec![0u8; 64];
        out[0..4].copy_from_slice(&(blobs.len() as u32).to_le_bytes());
        out[4..8].copy_from_slice(&2u32.to_le_bytes());
        for (dtype, data) in blobs {
            while !out.len().is_multiple_of(64) {
                out.push(0);
            }
            let at = out.len() as u64;
            let mut m = [0u8; 64];
            m[0..4].copy_from_slice(&SENTINEL.to_le_bytes());
            m[4..8].copy_from_slice(&dtype.to_le_bytes());
            m[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
            m[16..24].copy_from_slice(&(at + 64).to_le_bytes());
            out.extend(m);
            out.extend(*data);
        }
        out
    }

    #[test]
    fn a_written_file_passes_and_is_claimed() {
        let f = weights(&[(2, &[0u8; 32]), (1, &[1u8; 6])]);
        assert!(looks_like_weights(&f, f.len() as u64));
        let o = read(f.as_slice(), true);
        assert_eq!(o.rows[0].status, RowStatus::Pass, "{:?}", o.rows);
        assert!(o.tensors.is_empty());
        let empty = weights(&[]);
        assert!(looks_like_weights(&empty, 64));
        assert_eq!(read(empty.as_slice(), true).rows[0].status, RowStatus::Pass);
        assert!(!looks_like_weights(&f[..63], 63));
    }

    #[test]
    fn data_away_from_its_metadata_fails_even_hidden_in_another_blob() {
        let mut f = weights(&[(2, &[0u8; 32])]);
        f[64 + 16] = 0xc8; // data offset 200
        f.resize(256, 0);
        let o = read(f.as_slice(), true);
        assert_eq!(o.rows[0].status, RowStatus::Fail);
        // A metadata hidden in a blob's data, pointing elsewhere.
        let mut inner = [0u8; 128];
        inner[64..68].copy_from_slice(&SENTINEL.to_le_bytes());
        inner[68] = 2;
        inner[80] = 8;
        let f = weights(&[(3, &inner)]);
        let o = read(f.as_slice(), true);
        assert_eq!(o.rows[0].status, RowStatus::Fail, "{:?}", o.rows);
        assert!(o.rows[0].findings[0].place.as_str().starts_with("byte 192"));
        // Without reading the data, only the chain is checked.
        assert_eq!(read(f.as_slice(), false).rows[0].status, RowStatus::Pass);
    }

    #[test]
    fn malformed_headers_and_chains_fail() {
        let mut f = weights(&[(2, &[0u8; 32])]);
        f[0] = 9;
        assert_eq!(read(f.as_slice(), true).rows[0].status, RowStatus::Fail);
        let mut f = weights(&[(2, &[0u8; 32])]);
        f[4] = 1;
        assert_eq!(read(f.as_slice(), true).rows[0].status, RowStatus::Fail);
        let f = weights(&[(2, &[0u8; 32])]);
        assert_eq!(read(&f[..100], true).rows[0].status, RowStatus::Fail);
        let mut f = weights(&[(2, &[0u8; 32])]);
        f.extend([1u8; 10]);
        assert_eq!(read(f.as_slice(), true).rows[0].status, RowStatus::Lead);
    }
}
