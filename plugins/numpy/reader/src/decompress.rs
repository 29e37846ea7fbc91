//! bzip2 (zip method 12) and LZMA (method 14) members, which Python's `zipfile` reads and so
//! `np.load` does (`NpzFile` opens every member with `zipfile.ZipFile.open`; CPython 3.11
//! `Lib/zipfile.py`, `_get_decompressor`: `bz2.BZ2Decompressor()` for bzip2, its own
//! `LZMADecompressor` for LZMA), decoded with pure-Rust decoders within the same bounds as
//! deflate ([`crate::inflate`]): pieces of at most [`crate::inflate::PIECE`] bytes to the
//! caller, decoding stopped one byte past the declared size, and the same strictness: exactly
//! the declared bytes, the stream ending at the member's last compressed byte.
//!
//! * **bzip2**: one bzip2 stream (`BZ2Decompressor` decodes one and keeps what follows as
//!   `unused_data`, which `zipfile` never reads), decoded by `libbz2-rs-sys` through the
//!   `bzip2` crate.
//! * **LZMA**: `zipfile`'s `LZMADecompressor` reads two version bytes (ignored), a
//!   little-endian 16-bit properties length, the properties (liblzma's
//!   `lzma_lzma_props_decode` takes exactly 5: the lc/lp/pb byte and a 32-bit dictionary
//!   size), then raw LZMA1 data, with or without an end marker (`zipfile` writes one and sets
//!   flag bit 1; it never reads that bit, and cuts the output at the declared size either
//!   way). Decoded by `lzma-rust2`: with flag bit 1 the stream must end with its end marker
//!   (the decoder is not told the size, so a member that decodes past its declared size is
//!   stopped there and named as such, and one without the marker it announces is refused);
//!   without it, the decoder is told the declared size and holds the stream to its strict end
//!   condition (the range coder in its final state; an end marker there is accepted).
//!
//! The compressed bytes are read into memory first (they lie in the file, so they are at most
//! its length), which lets the check for trailing bytes count exactly what each decoder
//! consumed.

use crate::inflate::{InflateError, PIECE};
use socair_plugin_api::ReadAt;
use std::io::Read;

/// Compression method: bzip2.
pub const BZIP2: u16 = 12;
/// Compression method: LZMA.
pub const LZMA: u16 = 14;

/// The most compressed bytes read into memory at once: a member's compressed bytes lie in the
/// file, and the file is the bound, but not past the address space.
fn compressed(
    src: &(impl ReadAt + ?Sized),
    offset: u64,
    clen: u64,
) -> Result<Vec<u8>, InflateError> {
    let len = usize::try_from(clen).map_err(|_| InflateError::Io("too large".into()))?;
    let fits = offset.checked_add(clen).is_some_and(|e| e <= src.size());
    if !fits {
        return Err(InflateError::Io(format!(
            "{clen} compressed bytes at byte {offset} run past the end of the file"
        )));
    }
    let mut buf = vec![0u8; len];
    src.read_exact_at(offset, &mut buf)
        .map_err(InflateError::Io)?;
    Ok(buf)
}

/// Reads `decoder` to its end in pieces, calling `each` with each; stops one byte past
/// `declared` (`TooLong`). Returns the bytes decoded, or `None` when `each` asked to stop.
fn pieces(
    decoder: &mut impl Read,
    declared: u64,
    each: &mut impl FnMut(&[u8]) -> bool,
) -> Result<Option<u64>, InflateError> {
    let mut out = vec![0u8; PIECE];
    let mut total = 0u64;
    loop {
        let room = usize::try_from((declared - total.min(declared)).saturating_add(1))
            .unwrap_or(PIECE)
            .min(PIECE);
        let n = match decoder.read(out.get_mut(..room).unwrap_or_default()) {
            Ok(0) => return Ok(Some(total)),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(InflateError::Truncated)
            }
            Err(_) => return Err(InflateError::Corrupt(total)),
        };
        total = total.saturating_add(n as u64);
        if total > declared {
            return Err(InflateError::TooLong(declared));
        }
        if !each(out.get(..n).unwrap_or_default()) {
            return Ok(None);
        }
    }
}

fn check_end(total: u64, declared: u64, trailing: u64) -> Result<(), InflateError> {
    if total < declared {
        return Err(InflateError::TooShort {
            got: total,
            declared,
        });
    }
    if trailing > 0 {
        return Err(InflateError::Trailing(trailing));
    }
    Ok(())
}

/// Decodes the `clen` bytes at `offset` of `src`, compressed with `method` ([`BZIP2`] or
/// [`LZMA`]; `end_marker`: the member's flag bit 1, which an LZMA member sets when its stream
/// ends with an end marker), calling `each` with every decoded piece in order; `Ok` when
/// exactly `declared` bytes came out and the stream ended at the last compressed byte (or
/// `each` stopped it).
pub fn decode_each(
    src: &(impl ReadAt + ?Sized),
    method: u16,
    end_marker: bool,
    (offset, clen): (u64, u64),
    declared: u64,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<(), InflateError> {
    let data = compressed(src, offset, clen)?;
    match method {
        BZIP2 => {
            let mut decoder = bzip2::bufread::BzDecoder::new(data.as_slice());
            let Some(total) = pieces(&mut decoder, declared, &mut each)? else {
                return Ok(());
            };
            let trailing = clen.saturating_sub(decoder.total_in());
            check_end(total, declared, trailing)
        }
        LZMA => {
            // Version (2 bytes, ignored), properties length, properties.
            let (Some(psize), true) = (data.get(2..4), data.len() > 4) else {
                return Err(InflateError::Truncated);
            };
            let psize = usize::from(u16::from_le_bytes([psize[0], psize[1]]));
            if psize != 5 {
                return Err(InflateError::Options(format!(
                    "its LZMA properties are {psize} bytes; liblzma (Python's lzma module) decodes exactly 5 and refuses the member"
                )));
            }
            let Some(props) = data.get(4..9) else {
                return Err(InflateError::Truncated);
            };
            let dict = u32::from_le_bytes([props[1], props[2], props[3], props[4]]);
            let rest = data.get(9..).unwrap_or_default();
            let size = if end_marker { u64::MAX } else { declared };
            let mut decoder = lzma_rust2::LzmaReader::new_with_props(
                rest, size, props[0], dict, None,
            )
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => InflateError::Truncated,
                _ => InflateError::Options(format!("its LZMA properties are refused ({e})")),
            })?;
            decoder.set_relaxed_end_condition(false);
            let Some(total) = pieces(&mut decoder, declared, &mut each)? else {
                return Ok(());
            };
            let (left, unused) = decoder.into_parts();
            check_end(total, declared, (left.len() + unused.len()) as u64)
        }
        other => Err(InflateError::Options(format!(
            "method {other} is not decoded here"
        ))),
    }
}

/// All of `data` (compressed with `method`) decoded, for the tests of this module and of the
/// zip reader.
#[cfg(test)]
pub(crate) fn decode_all(
    method: u16,
    end_marker: bool,
    data: &[u8],
    declared: u64,
) -> Result<Vec<u8>, InflateError> {
    let mut out = Vec::new();
    decode_each(
        data,
        method,
        end_marker,
        (0, data.len() as u64),
        declared,
        |p| {
            out.extend_from_slice(p);
            true
        },
    )
    .map(|()| out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(method: u16, data: &[u8], declared: u64) -> Result<Vec<u8>, InflateError> {
        decode_all(method, true, data, declared)
    }

    #[test]
    fn bzip2_round_trip_and_strictness() {
        let plain: Vec<u8> = (0..700_000u32).map(|i| (i % 253) as u8).collect();
        let mut enc = bzip2::read::BzEncoder::new(plain.as_slice(), bzip2::Compression::best());
        let mut packed = Vec::new();
        enc.read_to_end(&mut packed).unwrap();
        assert_eq!(all(BZIP2, &packed, plain.len() as u64).unwrap(), plain);
        assert_eq!(
            all(BZIP2, &packed, 1000).unwrap_err(),
            InflateError::TooLong(1000)
        );
        assert!(matches!(
            all(BZIP2, &packed, plain.len() as u64 + 1).unwrap_err(),
            InflateError::TooShort { .. }
        ));
        let mut trailing = packed.clone();
        trailing.extend_from_slice(b"junk");
        assert_eq!(
            all(BZIP2, &trailing, plain.len() as u64).unwrap_err(),
            InflateError::Trailing(4)
        );
        let cut = &packed[..packed.len() / 2];
        assert!(matches!(
            all(BZIP2, cut, plain.len() as u64).unwrap_err(),
            InflateError::Truncated | InflateError::Corrupt(_)
        ));
        assert!(all(BZIP2, b"BZh9garbage", 10).is_err());
    }
}
