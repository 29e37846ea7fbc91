//! A record's bytes as torch reads them: its CRC-32 against the one recorded ([`crc_state`],
//! [`verify_crc`]) and its bytes ([`read_bytes`], [`read_head`]), a deflated record inflated
//! in bounded pieces (`socair_plugin_kit::zip::inflate`), as torch's `getRecord` inflates it.
//! Apart from the structure that locates the records.

use super::{invalid, read_vec, Record, ZipError};
use socair_plugin_api::ReadAt;
use socair_plugin_kit::zip::crc::crc32_of_range;
use socair_plugin_kit::zip::inflate::inflate_each;

/// What a record's CRC-32 says of the bytes torch reads from it (inflated, for a deflated
/// record). torch reads every record unchecked (miniz built with
/// `MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS`); other readers check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrcState {
    /// It holds.
    Holds,
    /// It is recorded as 0 over bytes whose CRC-32 is not: the writer never computed one
    /// (`torch.serialization.set_crc32_options(False)`, miniz's
    /// `MZ_ZIP_FLAG_DO_NOT_COMPUTE_CRC32`).
    Absent {
        /// The data's CRC-32.
        actual: u32,
    },
    /// It does not hold.
    Wrong {
        /// The CRC-32 recorded.
        recorded: u32,
        /// The data's.
        actual: u32,
    },
}

/// The CRC-32 of a record's bytes as torch reads them, against the one it records. A deflated
/// record is inflated in bounded pieces (never held whole) and must give exactly its declared
/// size and end at its last compressed byte, or torch's `getRecord` and other readers read
/// different bytes: refused.
pub fn crc_state(src: &(impl ReadAt + ?Sized), record: &Record) -> Result<CrcState, ZipError> {
    let actual = if record.stored() {
        crc32_of_range(src, record.data_offset, record.len).map_err(|e| ZipError::Io {
            offset: e.offset,
            len: e.len,
            message: e.message,
        })?
    } else {
        let mut hasher = crc32fast::Hasher::new();
        inflated(src, record, |piece| {
            hasher.update(piece);
            true
        })
        .map_err(|e| invalid(format!("record {:?}", record.name), e))?;
        hasher.finalize()
    };
    Ok(match record.crc32 {
        c if c == actual => CrcState::Holds,
        0 => CrcState::Absent { actual },
        recorded => CrcState::Wrong { recorded, actual },
    })
}

/// Inflates a deflated record in bounded pieces, handing each to `each` (which may stop early
/// by returning `false`): it must give exactly its declared size and end at its last byte.
fn inflated(
    src: &(impl ReadAt + ?Sized),
    record: &Record,
    each: impl FnMut(&[u8]) -> bool,
) -> Result<(), String> {
    inflate_each(src, record.data_offset, record.compressed, record.len, each)
        .map_err(|e| format!("record {:?} (deflated): {e}", record.name))
}

/// A record's bytes as torch reads them, inflated when it is deflated; at most `limit` bytes
/// (its declared length is checked against `limit` before anything is read).
pub fn read_bytes(
    src: &(impl ReadAt + ?Sized),
    record: &Record,
    limit: u64,
) -> Result<Vec<u8>, String> {
    if record.len > limit {
        return Err(format!(
            "record {:?} declares {} bytes, more than the {limit} read into memory",
            record.name, record.len
        ));
    }
    if record.stored() {
        return read_vec(src, record.data_offset, record.len).map_err(|e| e.to_string());
    }
    let mut out = Vec::with_capacity(usize::try_from(record.len).unwrap_or(0));
    inflated(src, record, |piece| {
        out.extend_from_slice(piece);
        true
    })?;
    Ok(out)
}

/// The first `n` bytes of a record as torch reads it (fewer when it is shorter), inflating
/// only as far as they need.
pub fn read_head(src: &(impl ReadAt + ?Sized), record: &Record, n: u64) -> Result<Vec<u8>, String> {
    let n = n.min(record.len);
    if record.stored() {
        return read_vec(src, record.data_offset, n).map_err(|e| e.to_string());
    }
    let mut out = Vec::new();
    let want = usize::try_from(n).unwrap_or(0);
    inflated(src, record, |piece| {
        let take = piece.len().min(want.saturating_sub(out.len()));
        out.extend_from_slice(piece.get(..take).unwrap_or_default());
        out.len() < want
    })?;
    Ok(out)
}

/// Checks that a record's bytes hash to its CRC-32. A CRC of zero over bytes whose CRC is not
/// zero means the writer never computed one (torch's `compute_crc32` off): refused too, since
/// then nothing ties the bytes torch reads to what was written.
pub fn verify_crc(src: &(impl ReadAt + ?Sized), record: &Record) -> Result<(), ZipError> {
    let place = format!("record {:?}", record.name);
    match crc_state(src, record)? {
        CrcState::Holds => Ok(()),
        CrcState::Absent { actual } => Err(invalid(place, format!(
            "CRC-32 is absent (recorded as 0; saved with compute_crc32 off) but the data's CRC-32 is {actual:#010x}: torch reads it unchecked, other readers refuse it"
        ))),
        CrcState::Wrong { recorded, actual } => Err(invalid(place, format!(
            "CRC-32 does not hold: recorded {recorded:#010x}, data has {actual:#010x} (torch reads it unchecked, other readers refuse it)"
        ))),
    }
}
