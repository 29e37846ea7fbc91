//! Raw deflate (zip method 8), decoded in bounded pieces.
//!
//! A deflated member's size is what its archive says, and a hostile archive says what it likes:
//! a few kilobytes may inflate to gigabytes (a zip bomb). So the output is never collected by
//! this module: each piece of at most [`PIECE`] bytes goes to the caller, which hashes it,
//! keeps what it may keep and drops the rest, and decoding stops as soon as the output passes
//! the size the archive declared (`declared`), or the input ends. What is decoded is then
//! checked against the declaration exactly: the stream must end at the member's last
//! compressed byte and give exactly `declared` bytes, or the member is refused, because
//! Python's `zipfile` would read the declared bytes and ignore the rest while another reader
//! reads everything.

use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
use socair_plugin_api::ReadAt;

/// Output piece size.
pub const PIECE: usize = 256 << 10;
/// Input read at a time.
const INPUT: usize = 256 << 10;

/// Why a deflate stream is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    /// The compressed bytes could not be read.
    #[error("reading its compressed bytes failed: {0}")]
    Io(String),
    /// Not a valid deflate stream.
    #[error("not a valid deflate stream after {0} decoded bytes")]
    Corrupt(u64),
    /// More output than declared.
    #[error("inflates past the {0} bytes the archive declares (a zip bomb, or a member readers read differently)")]
    TooLong(u64),
    /// The stream ended before the declared size.
    #[error("inflates to {got} bytes, not the {declared} the archive declares")]
    TooShort {
        /// Decoded.
        got: u64,
        /// Declared.
        declared: u64,
    },
    /// Compressed bytes follow the end of the stream.
    #[error("{0} compressed bytes follow the end of its deflate stream")]
    Trailing(u64),
    /// The input ran out before the stream ended.
    #[error("its compressed bytes end before its stream does")]
    Truncated,
    /// The stream's own parameters are refused (an LZMA member's properties).
    #[error("{0}")]
    Options(String),
}

/// Inflates the `clen` bytes at `offset` of `src`, calling `each` with every decoded piece in
/// order; returns when exactly `declared` bytes came out and the stream ended at the last
/// input byte. `each` may ask to stop early by returning `false` (the rest is not decoded and
/// the result is `Ok`).
pub fn inflate_each(
    src: &(impl ReadAt + ?Sized),
    offset: u64,
    clen: u64,
    declared: u64,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<(), InflateError> {
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut input = vec![0u8; INPUT.min(usize::try_from(clen).unwrap_or(INPUT)).max(1)];
    let mut output = vec![0u8; PIECE];
    let mut read = 0u64; // compressed bytes read from src
    let mut avail = 0usize; // of `input`, not yet consumed
    let mut start = 0usize;
    let mut total = 0u64;
    loop {
        if avail == 0 && read < clen {
            let n = usize::try_from((clen - read).min(input.len() as u64)).unwrap_or(0);
            let buf = input.get_mut(..n).unwrap_or_default();
            src.read_exact_at(offset.saturating_add(read), buf)
                .map_err(InflateError::Io)?;
            read += n as u64;
            avail = n;
            start = 0;
        }
        let chunk = input.get(start..start + avail).unwrap_or_default();
        // Never `MZFlush::Finish`: on a first call miniz_oxide then wants the whole output in
        // one buffer and fails with `Buf` when it is longer than a piece. The stream's end is
        // its own final block (`StreamEnd`), whatever the flush.
        // Never more room than one byte past the declared size: a member that lies about
        // its size costs its declared size in decoding, not a whole piece more.
        let room = usize::try_from((declared - total).saturating_add(1))
            .unwrap_or(PIECE)
            .min(PIECE);
        let out = output.get_mut(..room).unwrap_or_default();
        let r = inflate(&mut state, chunk, out, MZFlush::None);
        start += r.bytes_consumed;
        avail -= r.bytes_consumed;
        total = total.saturating_add(r.bytes_written as u64);
        if total > declared {
            return Err(InflateError::TooLong(declared));
        }
        if r.bytes_written > 0 && !each(output.get(..r.bytes_written).unwrap_or_default()) {
            return Ok(());
        }
        let input_done = avail == 0 && read == clen;
        match r.status {
            Ok(MZStatus::StreamEnd) => {
                let left = (clen - read) + avail as u64;
                if left > 0 {
                    return Err(InflateError::Trailing(left));
                }
                if total < declared {
                    return Err(InflateError::TooShort {
                        got: total,
                        declared,
                    });
                }
                return Ok(());
            }
            Ok(_) | Err(MZError::Buf) => {
                // No progress: the input ended inside the stream, or (with input left and a
                // whole empty output piece offered) the decoder is stuck, which a valid stream
                // never makes it.
                if r.bytes_consumed == 0 && r.bytes_written == 0 {
                    if input_done {
                        return Err(InflateError::Truncated);
                    }
                    if avail > 0 {
                        return Err(InflateError::Corrupt(total));
                    }
                }
            }
            Err(_) => return Err(InflateError::Corrupt(total)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::compress_to_vec;

    fn all(data: &[u8], declared: u64) -> Result<Vec<u8>, InflateError> {
        let mut out = Vec::new();
        inflate_each(data, 0, data.len() as u64, declared, |p| {
            out.extend_from_slice(p);
            true
        })
        .map(|()| out)
    }

    #[test]
    fn round_trip_in_pieces() {
        let plain: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let packed = compress_to_vec(&plain, 6);
        assert_eq!(all(&packed, plain.len() as u64).unwrap(), plain);
        let empty = compress_to_vec(b"", 6);
        assert_eq!(all(&empty, 0).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn declared_sizes_are_held_exactly() {
        let plain = vec![0u8; 10_000_000];
        let packed = compress_to_vec(&plain, 9);
        assert!(packed.len() < 20_000);
        // A bomb: a small declared size, stopped right after it, whatever follows.
        let mut seen = 0usize;
        let e = inflate_each(packed.as_slice(), 0, packed.len() as u64, 1000, |p| {
            seen += p.len();
            true
        })
        .unwrap_err();
        assert_eq!(e, InflateError::TooLong(1000));
        assert!(
            seen <= 1000,
            "decoding stopped at the declared size: {seen}"
        );
        assert_eq!(
            all(&packed, 20_000_000).unwrap_err(),
            InflateError::TooShort {
                got: 10_000_000,
                declared: 20_000_000
            }
        );
        let mut trailing = compress_to_vec(b"abc", 6);
        trailing.extend_from_slice(b"junk");
        assert_eq!(all(&trailing, 3).unwrap_err(), InflateError::Trailing(4));
        let cut = compress_to_vec(&plain[..100_000], 1);
        let cut = &cut[..cut.len() / 2];
        assert_eq!(all(cut, 100_000).unwrap_err(), InflateError::Truncated);
        assert!(matches!(
            all(b"\xff\xff\xff\xff", 10).unwrap_err(),
            InflateError::Corrupt(_) | InflateError::Truncated
        ));
        // The caller may stop early.
        let mut pieces = 0;
        inflate_each(
            packed.as_slice(),
            0,
            packed.len() as u64,
            10_000_000,
            |_| {
                pieces += 1;
                false
            },
        )
        .unwrap();
        assert_eq!(pieces, 1);
    }
}
