//! The strict safetensors reader: a pure function from the file's first bytes and its length
//! to a validated list of tensors, or the one reason the file is refused.
//!
//! Stricter than the safetensors crate on purpose: a file that two readers could read
//! differently (duplicate keys, bytes no tensor owns, values the crate refuses and other
//! readers take) is refused rather than read one way. What the crate (0.8.0, `src/tensor.rs`
//! `HashMetadata`/`TensorInfo` through serde_json) reads as if it were not there is read the
//! same and said ([`Deviations`]): fields of a tensor entry the format does not define,
//! `"__metadata__": null`, and JSON whitespace other than spaces around the object.
//!
//! This file holds the two entry points, [`header_len`] and [`parse_header`]; the parts apart
//! are the format's fixed sizes and names (`limits`), the refusals ([`SafetensorsError`]), the
//! validated entries with the checks they pass (`entry`) and the streaming parse of the header
//! object (`stream`).

mod entry;
mod error;
mod limits;
mod stream;
#[cfg(test)]
mod tests;

use entry::check_layout;
pub use entry::{Deviations, Header, TensorEntry, MAX_METADATA_LISTED, MAX_RANK};
pub use error::SafetensorsError;
pub use limits::{LEN_PREFIX, MAX_HEADER_LEN, METADATA_KEY};
use stream::parse_json_prefix;
pub use stream::MAX_EXTRA_LISTED;

/// Reads the header length from the first 8 bytes and checks it against the limit and the file
/// length; returns it. `prefix` may be longer than 8 bytes.
pub fn header_len(prefix: &[u8], file_len: u64) -> Result<u64, SafetensorsError> {
    let Some(len_bytes) = prefix.get(..8) else {
        return Err(SafetensorsError::TooShort { file_len });
    };
    if file_len < LEN_PREFIX {
        return Err(SafetensorsError::TooShort { file_len });
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(len_bytes);
    let header_len = u64::from_le_bytes(raw);
    if header_len > MAX_HEADER_LEN {
        return Err(SafetensorsError::HeaderTooLarge { header_len });
    }
    // header_len <= 1e8, so the sum cannot overflow.
    if LEN_PREFIX + header_len > file_len {
        return Err(SafetensorsError::HeaderPastEnd {
            header_len,
            file_len,
        });
    }
    Ok(header_len)
}

/// Parses and validates a safetensors header.
///
/// `prefix` holds at least the file's first `8 + header length` bytes (more is ignored) and
/// `file_len` is the whole file's length; the data section itself is never needed.
pub fn parse_header(prefix: &[u8], file_len: u64) -> Result<Header, SafetensorsError> {
    let header_len = header_len(prefix, file_len)?;
    let end = usize::try_from(LEN_PREFIX + header_len)
        .map_err(|_| SafetensorsError::HeaderTooLarge { header_len })?;
    let Some(bytes) = prefix.get(8..end) else {
        return Err(SafetensorsError::HeaderPastEnd {
            header_len,
            file_len: prefix.len() as u64,
        });
    };
    // serde_json, which the library parses the header with, skips JSON whitespace (space,
    // tab, newline, carriage return) before the object; safetensors 0.8.0 no longer refuses it
    // (PR #686: "readers must tolerate leading whitespace").
    let lead = bytes
        .iter()
        .position(|b| !is_json_whitespace(*b))
        .unwrap_or(bytes.len());
    match bytes.get(lead) {
        Some(b'{') => {}
        Some(&b) => {
            return Err(SafetensorsError::NotAnObject {
                found: format!("byte {b:#04x}"),
            })
        }
        None => {
            return Err(SafetensorsError::NotAnObject {
                found: "an empty header".into(),
            })
        }
    }
    let text = std::str::from_utf8(bytes).map_err(|e| SafetensorsError::NotUtf8 {
        offset: LEN_PREFIX + e.valid_up_to() as u64,
    })?;
    let (parsed, json_end) = parse_json_prefix(text)?;
    // After the object, serde_json's `end` allows JSON whitespace only.
    if let Some(pos) = bytes[json_end..]
        .iter()
        .position(|&b| !is_json_whitespace(b))
    {
        let at = json_end + pos;
        return Err(SafetensorsError::BadPadding {
            offset: LEN_PREFIX + at as u64,
            byte: bytes[at],
        });
    }
    check_layout(&parsed.tensors, file_len - LEN_PREFIX - header_len)?;
    Ok(Header {
        header_len,
        metadata: parsed.metadata,
        metadata_total: parsed.metadata_total,
        tensors: parsed.tensors,
        deviations: Deviations {
            metadata_null: parsed.metadata_null,
            extra_fields: parsed.extra_fields,
            extra_fields_total: parsed.extra_fields_total,
            leading_whitespace: lead > 0,
            trailing_whitespace: bytes[json_end..].iter().any(|&b| b != b' '),
        },
    })
}

/// JSON's whitespace (RFC 8259 `ws`), what serde_json skips between tokens.
fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}
