//! What a zip reader will read once it has read the central directory: every local header it
//! lists. Asked before a reader opens a zip in object storage, so that those headers are
//! fetched together ([`crate::read::remote::RemoteObject::prefetch`], requests in flight side
//! by side) instead of one round trip per record when the reader walks them: a checkpoint of
//! 256 records costs a few round trips, not 263.
//!
//! A hint only: the host reads the end records and the directory as any zip reader finds
//! them (the last end record, its zip64 locator), bounded, and gives up quietly on anything
//! it does not expect. The readers read and judge every byte themselves (the same bytes,
//! served from the cache of fetched ranges), so nothing here decides a verdict.

use socair_plugin_kit::zip::extra::{self, zip64_values};
use socair_plugin_kit::zip::headers::{CentralHeader, EndRecord, Zip64End, Zip64Locator};
use socair_plugin_kit::zip::{
    CENTRAL_LEN, EOCD_LEN, EOCD_MAGIC, EXTRA_ZIP64, LOCAL_LEN, LOCAL_MAGIC, SATURATED_16,
    SATURATED_32, ZIP64_EOCD_LEN, ZIP64_LOCATOR_LEN,
};
use std::io;

/// How far from the end the end record is looked for: its 22 bytes and the longest comment.
const TAIL: u64 = EOCD_LEN + 0xffff;
/// The longest central directory read for hints.
const MAX_DIRECTORY: u64 = 16 << 20;
/// The longest data descriptor, which may end the record before each local header.
const DESCRIPTOR_MAX: u64 = 24;
/// Room for a local header's extra field (torch pads its data to 64 bytes with one).
const EXTRA_ROOM: u64 = 128;

/// The ranges `(offset, len)` holding the local headers (and the data descriptor before each)
/// that the central directory of the zip `read` serves (`len` bytes) lists; none when it is no
/// zip or its end records or directory are not what they should be.
pub fn local_headers(
    len: u64,
    read: impl Fn(u64, &mut [u8]) -> io::Result<()>,
) -> Option<Vec<(u64, u64)>> {
    let read_vec = |at: u64, n: u64| -> Option<Vec<u8>> {
        let mut buf = vec![0u8; usize::try_from(n).ok()?];
        read(at, &mut buf).ok()?;
        Some(buf)
    };
    if len < LOCAL_LEN || read_vec(0, 4)? != LOCAL_MAGIC {
        return None;
    }
    let tail_at = len.saturating_sub(TAIL);
    let tail = read_vec(tail_at, len - tail_at)?;
    let eocd_at = tail
        .windows(4)
        .rposition(|w| w == EOCD_MAGIC)
        .filter(|&i| tail.len() - i >= EOCD_LEN as usize)?;
    let end = EndRecord::parse(&tail[eocd_at..])?;
    let (mut offset, mut size, mut entries) = (
        u64::from(end.directory_offset),
        u64::from(end.directory_size),
        u64::from(end.entries),
    );
    let saturated = end.directory_offset == SATURATED_32
        || end.directory_size == SATURATED_32
        || end.entries == SATURATED_16;
    if saturated {
        let locator_at = eocd_at.checked_sub(ZIP64_LOCATOR_LEN as usize)?;
        let locator = Zip64Locator::parse(&tail[locator_at..])?;
        let z64 = Zip64End::parse(&read_vec(locator.end_offset, ZIP64_EOCD_LEN)?)?;
        (offset, size, entries) = (z64.directory_offset, z64.directory_size, z64.entries);
    }
    let directory_end = offset.checked_add(size).filter(|&e| e <= len)?;
    if size > MAX_DIRECTORY || entries > size / CENTRAL_LEN || directory_end > len {
        return None;
    }
    let directory = read_vec(offset, size)?;
    let mut at = 0usize;
    let mut headers = Vec::new();
    while at < directory.len() && (headers.len() as u64) < entries {
        let h = CentralHeader::parse(&directory[at..])?;
        let names_at = at + CENTRAL_LEN as usize;
        let extra_at = names_at + usize::from(h.name_len);
        let extra = directory.get(extra_at..extra_at + usize::from(h.extra_len))?;
        let mut header_offset = u64::from(h.header_offset);
        if h.header_offset == SATURATED_32 {
            let body = extra::blocks(extra)
                .filter_map(Result::ok)
                .find(|(id, _)| *id == EXTRA_ZIP64)
                .map(|(_, body)| body);
            let saturated = [
                h.uncompressed == SATURATED_32,
                h.compressed == SATURATED_32,
                true,
            ];
            header_offset = zip64_values(body, saturated).ok()?[2]?;
        }
        let start = header_offset.saturating_sub(DESCRIPTOR_MAX);
        headers.push((
            start,
            (header_offset - start) + LOCAL_LEN + u64::from(h.name_len) + EXTRA_ROOM,
        ));
        at = names_at + h.variable_len();
    }
    // The last record's data descriptor, before the directory.
    headers.push((offset.saturating_sub(DESCRIPTOR_MAX), DESCRIPTOR_MAX));
    Some(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints_of(bytes: &[u8]) -> Option<Vec<(u64, u64)>> {
        local_headers(bytes.len() as u64, |at, buf| {
            let at = at as usize;
            buf.copy_from_slice(
                bytes
                    .get(at..at + buf.len())
                    .ok_or_else(|| io::Error::other("past the end"))?,
            );
            Ok(())
        })
    }

    #[test]
    fn a_checkpoints_local_headers_are_where_its_directory_says() {
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/torch/legit/state-dict.pt"),
        )
        .unwrap();
        let hints = hints_of(&bytes).expect("a torch checkpoint is a zip");
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(hints.len(), archive.len() + 1);
        for (i, &(at, n)) in hints.iter().enumerate().take(archive.len()) {
            let start = archive.by_index_raw(i).unwrap().header_start();
            assert!(at <= start && start + LOCAL_LEN <= at + n, "record {i}");
            assert_eq!(&bytes[start as usize..start as usize + 4], LOCAL_MAGIC);
        }
        // Not a zip, a zip cut short, an end record pointing nowhere: no hints, no panic.
        assert_eq!(hints_of(b"not a zip at all, not at all"), None);
        assert_eq!(hints_of(&bytes[..bytes.len() - 30]), None);
        let mut bent = bytes.clone();
        let eocd = bent.len() - EOCD_LEN as usize;
        let past = bent.len() as u32 - 10;
        bent[eocd + 16..eocd + 20].copy_from_slice(&past.to_le_bytes());
        assert_eq!(hints_of(&bent), None);
    }
}
