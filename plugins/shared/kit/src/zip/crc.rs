//! CRC-32 (IEEE 802.3, as zip records it) over bytes in memory or over a range of the file,
//! read in bounded pieces.

use super::ReadAt;

/// A running CRC-32.
pub use crc32fast::Hasher as Crc32;

/// The CRC-32 of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Reading a range of the file failed: the piece that failed, and the source's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeError {
    /// Where the piece starts.
    pub offset: u64,
    /// Its length.
    pub len: u64,
    /// Why it could not be read.
    pub message: String,
}

/// Calls `each` with the `len` bytes at `offset`, in order, in pieces of at most `piece`
/// bytes (one buffer, reused); `each` returning `false` stops the reading. The caller has
/// checked that the range lies in the file.
pub fn each_piece(
    src: &(impl ReadAt + ?Sized),
    offset: u64,
    len: u64,
    piece: usize,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<(), RangeError> {
    let mut buf = vec![0u8; piece.min(usize::try_from(len).unwrap_or(usize::MAX))];
    let mut done = 0u64;
    while done < len && !buf.is_empty() {
        let n = (len - done).min(buf.len() as u64) as usize;
        let at = offset.saturating_add(done);
        let part = buf.get_mut(..n).unwrap_or_default();
        src.read_exact_at(at, part).map_err(|message| RangeError {
            offset: at,
            len: n as u64,
            message,
        })?;
        done += n as u64;
        if !each(part) {
            break;
        }
    }
    Ok(())
}

/// The CRC-32 of the `len` bytes at `offset`, read in pieces of 256 KiB: a piece stays in the
/// core's cache for whatever else hashes the same read (the host's digest of the file).
pub fn crc32_of_range(
    src: &(impl ReadAt + ?Sized),
    offset: u64,
    len: u64,
) -> Result<u32, RangeError> {
    let mut hasher = Crc32::new();
    each_piece(src, offset, len, 256 << 10, |part| {
        hasher.update(part);
        true
    })?;
    Ok(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_hashes_as_its_bytes_do() {
        let data: Vec<u8> = (0..=255u8).cycle().take(3 << 20).collect();
        assert_eq!(
            crc32(b"123456789"),
            0xcbf4_3926,
            "the check value of CRC-32"
        );
        assert_eq!(
            crc32_of_range(&data[..], 5, (2 << 20) + 7).unwrap(),
            crc32(&data[5..(2 << 20) + 12])
        );
        assert_eq!(crc32_of_range(&data[..], 9, 0).unwrap(), 0);
        let err = crc32_of_range(&data[..10], 4, 16).unwrap_err();
        assert_eq!((err.offset, err.len), (4, 16));
        let mut pieces = Vec::new();
        each_piece(&data[..], 0, 10, 4, |p| {
            pieces.push(p.len());
            pieces.len() < 2
        })
        .unwrap();
        assert_eq!(pieces, vec![4, 4], "stopped after the second piece");
    }
}
