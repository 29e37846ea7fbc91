//! Each compressed stream inflated as the reader `joblib.load` opens reads it (joblib 1.5.3
//! `compressor.py`, CPython 3.11 `Lib/_compression.py`, `Lib/bz2.py`, `Lib/lzma.py`, python-lz4
//! 4.4.5 `lz4/frame/__init__.py`), within one bound: at most [`bound`] bytes come out in all
//! (64 MiB + 8x the file), and decoding stops one piece past it.
//!
//! What each reader does with the end of its data, measured with joblib 1.5.3 on the fixtures
//! `fixtures/joblib/z-trailing-*`, `z-truncated-*`, `z-concat-gzip` (their `.expected.json`):
//!
//! * **zlib, gzip**: joblib's own `BinaryZlibFile` / `BinaryGzipFile` read ONE stream
//!   (`zlib.decompressobj(15)` / `(31)`); bytes after its end (junk, or a second gzip member,
//!   which Python's `gzip` module would read as more data) are handed back to the ended
//!   decompressor by `_fill_buffer` (`self._decompressor.unused_data or self._fp.read(...)`)
//!   for ever: `joblib.load` never returns (killed, or `MemoryError`). Refused
//!   ([`End::Loops`]). A stream that ends early is the end of the data (`EOFError` or
//!   "pickle exhausted": `joblib.load` raises).
//! * **bz2, lzma, xz**: `_compression.DecompressReader` reads concatenated streams as one, and
//!   bytes after the last stream that do not start another are ignored (`_trailing_error`:
//!   `OSError` for bz2, `LZMAError` for lzma, caught on the first call of the next
//!   decompressor): they are read here as [`End::Ignored`] trailing bytes. `LZMAFile` opens
//!   every stream with `FORMAT_AUTO`, so an xz stream may follow an lzma one and the reverse.
//!   A stream that ends early raises `EOFError`.
//! * **lz4**: `LZ4FrameFile` reads concatenated frames; bytes after the last frame that are
//!   not a frame make it raise (`RuntimeError: LZ4F_decompress failed ... frameType_unknown`):
//!   refused.

use crate::container::Compressor;
use std::io::Read;

/// The most bytes inflated for an input of `input_len` bytes: the memory every reader is held
/// to, 64 MiB + 8x the input.
pub fn bound(input_len: u64) -> u64 {
    socair_plugin_kit::model::memory_bound(input_len)
}

/// Bytes decoded per read.
const PIECE: usize = 64 << 10;

/// Why a stream could not be inflated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    /// More than `bound` bytes would come out.
    #[error("it inflates past {bound} bytes, the most socair inflates for this file (64 MiB + 8x its size)")]
    PastBound {
        /// The bound.
        bound: u64,
    },
    /// The stream ends before its end marker.
    #[error("its {what} stream starting at byte {start} ends before its end marker (after {inflated} inflated bytes): joblib.load raises (EOFError, or the pickle runs out)")]
    Truncated {
        /// The compressor.
        what: &'static str,
        /// The stream's first byte in the file.
        start: usize,
        /// Bytes inflated before it ended.
        inflated: usize,
    },
    /// The decoder refused the data.
    #[error("its {what} stream starting at byte {start} is corrupt after {inflated} inflated bytes ({why}): joblib.load raises")]
    Corrupt {
        /// The compressor.
        what: &'static str,
        /// The stream's first byte in the file.
        start: usize,
        /// Bytes inflated before the decoder refused.
        inflated: usize,
        /// The decoder's message.
        why: String,
    },
    /// Bytes after the stream that make `joblib.load` loop or raise.
    #[error("{len} bytes follow its {what} stream at byte {at}: {why}")]
    After {
        /// The compressor.
        what: &'static str,
        /// Where they start.
        at: usize,
        /// How many.
        len: usize,
        /// What joblib.load does with them.
        why: &'static str,
    },
}

/// What lies after the last stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Nothing: the last stream ends at the file's last byte.
    Clean,
    /// Bytes the reader ignores (bz2, lzma, xz): `(offset, len)`.
    Ignored(usize, usize),
}

/// A file's inflated stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inflated {
    /// The bytes the unpickler reads.
    pub data: Vec<u8>,
    /// How many compressed streams they came from.
    pub streams: usize,
    /// What follows the last stream.
    pub end: End,
}

/// Inflates `input[start..]` as `compressor`'s reader does, at most `bound` bytes.
pub fn inflate(
    compressor: Compressor,
    input: &[u8],
    start: usize,
    bound: u64,
) -> Result<Inflated, InflateError> {
    let mut data = Vec::new();
    let mut at = start;
    let mut streams = 0usize;
    loop {
        let rest = input.get(at..).unwrap_or_default();
        let kind = match (compressor, streams) {
            // `LZMAFile` (FORMAT_AUTO) opens every stream by its own magic.
            (Compressor::Lzma | Compressor::Xz, _) if rest.starts_with(b"\xfd7zXZ\x00") => {
                Compressor::Xz
            }
            (Compressor::Lzma | Compressor::Xz, _) => Compressor::Lzma,
            (c, _) => c,
        };
        let before = data.len();
        let consumed = match stream(kind, rest, &mut data, bound) {
            Ok(n) => n,
            Err(e) if streams > 0 && data.len() == before && !matches!(e, Fail::PastBound) => {
                // Not another stream: the bytes `_compression` ignores (bz2, lzma, xz; lz4
                // and zlib never get here).
                return Ok(Inflated {
                    data,
                    streams,
                    end: End::Ignored(at, rest.len()),
                });
            }
            Err(e) => return Err(e.at(kind, at, data.len().saturating_sub(before), bound)),
        };
        streams += 1;
        at = at.saturating_add(consumed.max(1));
        let left = input.len().saturating_sub(at);
        if left == 0 {
            return Ok(Inflated {
                data,
                streams,
                end: End::Clean,
            });
        }
        match compressor {
            Compressor::Zlib | Compressor::Gzip | Compressor::Compat => {
                if compressor == Compressor::Compat {
                    // `zlib.decompress` stops at the stream's end and ignores the rest.
                    return Ok(Inflated {
                        data,
                        streams,
                        end: End::Ignored(at, left),
                    });
                }
                return Err(InflateError::After {
                    what: compressor.name(),
                    at,
                    len: left,
                    why: "joblib's BinaryZlibFile hands them back to its ended decompressor for ever, so joblib.load never returns (measured with joblib 1.5.3: killed, or MemoryError), while Python's gzip module would read a second gzip member as more data",
                });
            }
            Compressor::Lz4 => {
                return Err(InflateError::After {
                    what: "lz4",
                    at,
                    len: left,
                    why: "they are not an LZ4 frame, and LZ4FrameFile raises on them (RuntimeError: frameType_unknown), so joblib.load raises",
                })
            }
            _ => {}
        }
    }
}

/// Why one stream failed, before it is placed.
enum Fail {
    PastBound,
    Truncated,
    Corrupt(String),
}

impl Fail {
    fn at(self, kind: Compressor, start: usize, inflated: usize, bound: u64) -> InflateError {
        let what = kind.name();
        match self {
            Fail::PastBound => InflateError::PastBound { bound },
            Fail::Truncated => InflateError::Truncated {
                what,
                start,
                inflated,
            },
            Fail::Corrupt(why) => InflateError::Corrupt {
                what,
                start,
                inflated,
                why,
            },
        }
    }
}

/// Appends `piece` to `out` up to `bound` bytes in all; past it, what fits and `PastBound`.
fn keep(out: &mut Vec<u8>, piece: &[u8], bound: u64) -> Result<(), Fail> {
    let room = usize::try_from(bound.saturating_sub(out.len() as u64)).unwrap_or(usize::MAX);
    out.extend_from_slice(piece.get(..room.min(piece.len())).unwrap_or_default());
    if piece.len() > room {
        return Err(Fail::PastBound);
    }
    Ok(())
}

/// Reads `decoder` to its end into `out`, at most `bound` bytes in all.
fn pump(decoder: &mut impl Read, out: &mut Vec<u8>, bound: u64) -> Result<(), Fail> {
    // Small pieces when little is wanted (a claim's look at a head, which is cut anywhere):
    // a decoder that meets the end of its input inside a piece gives nothing of that piece.
    let size = if bound < PIECE as u64 { 64 } else { PIECE };
    let mut piece = vec![0u8; size];
    loop {
        let n = match decoder.read(&mut piece) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(Fail::Truncated),
            Err(e) => return Err(Fail::Corrupt(e.to_string())),
        };
        keep(out, piece.get(..n).unwrap_or_default(), bound)?;
    }
}

/// Decodes one stream of `kind` from the start of `input` into `out`; the compressed bytes it
/// took.
fn stream(kind: Compressor, input: &[u8], out: &mut Vec<u8>, bound: u64) -> Result<usize, Fail> {
    match kind {
        Compressor::Zlib | Compressor::Compat => zlib(input, out, bound),
        Compressor::Gzip => {
            let mut d = flate2::bufread::GzDecoder::new(input);
            pump(&mut d, out, bound)?;
            if d.header().is_none() {
                return Err(Fail::Truncated);
            }
            Ok(input.len() - d.into_inner().len())
        }
        Compressor::Bz2 => {
            let mut d = bzip2::bufread::BzDecoder::new(input);
            pump(&mut d, out, bound)?;
            let used = usize::try_from(d.total_in()).unwrap_or(usize::MAX);
            Ok(used.min(input.len()))
        }
        Compressor::Lzma => {
            let mut d = lzma_rust2::LzmaReader::new_mem_limit(input, u32::MAX, None).map_err(
                |e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => Fail::Truncated,
                    _ => Fail::Corrupt(format!("its .lzma header is refused: {e}")),
                },
            )?;
            d.set_relaxed_end_condition(false);
            pump(&mut d, out, bound)?;
            let (left, unused) = d.into_parts();
            Ok(input.len().saturating_sub(left.len() + unused.len()))
        }
        Compressor::Xz => {
            let mut d = lzma_rust2::XzReader::new(input, false);
            pump(&mut d, out, bound)?;
            Ok(input.len().saturating_sub(d.into_inner().len()))
        }
        Compressor::Lz4 => {
            let mut d = lz4_flex::frame::FrameDecoder::new(input);
            pump(&mut d, out, bound)?;
            Ok(input.len().saturating_sub(d.into_inner().len()))
        }
        Compressor::None => Ok(input.len()),
    }
}

/// Decodes what it can of one stream of `kind` at the start of `input` into `out`, at most
/// `bound` bytes: for a claim, from the head of a file (the compressed bytes taken when the
/// stream ended in it).
pub fn stream_prefix(
    kind: Compressor,
    input: &[u8],
    out: &mut Vec<u8>,
    bound: u64,
) -> Option<usize> {
    stream(kind, input, out, bound).ok()
}

/// One zlib stream (`zlib.decompressobj(15)`), which must reach its end marker.
fn zlib(input: &[u8], out: &mut Vec<u8>, bound: u64) -> Result<usize, Fail> {
    let mut d = flate2::Decompress::new(true);
    let mut piece = vec![0u8; PIECE];
    loop {
        let in_before = d.total_in();
        let out_before = d.total_out();
        let rest = input
            .get(usize::try_from(in_before).unwrap_or(usize::MAX)..)
            .unwrap_or_default();
        let status = d
            .decompress(rest, &mut piece, flate2::FlushDecompress::None)
            .map_err(|e| Fail::Corrupt(e.to_string()))?;
        let n = usize::try_from(d.total_out() - out_before).unwrap_or(0);
        keep(out, piece.get(..n).unwrap_or_default(), bound)?;
        match status {
            flate2::Status::StreamEnd => {
                return Ok(usize::try_from(d.total_in()).unwrap_or(input.len()));
            }
            _ if n == 0 && d.total_in() == in_before => return Err(Fail::Truncated),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib_of(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(3));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn zlib_exact_truncated_trailing_and_bound() {
        let plain: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let z = zlib_of(&plain);
        let got = inflate(Compressor::Zlib, &z, 0, bound(z.len() as u64)).unwrap();
        assert_eq!(got.data, plain);
        assert_eq!(got.end, End::Clean);
        let cut = &z[..z.len() / 2];
        assert!(matches!(
            inflate(Compressor::Zlib, cut, 0, u64::MAX),
            Err(InflateError::Truncated { .. })
        ));
        let mut t = z.clone();
        t.extend_from_slice(b"JUNK");
        assert!(matches!(
            inflate(Compressor::Zlib, &t, 0, u64::MAX),
            Err(InflateError::After { len: 4, .. })
        ));
        assert_eq!(
            inflate(Compressor::Zlib, &z, 0, 1000),
            Err(InflateError::PastBound { bound: 1000 })
        );
        // A ZF file's stream ignores what follows, as zlib.decompress does.
        let c = inflate(Compressor::Compat, &t, 0, u64::MAX).unwrap();
        assert_eq!(c.end, End::Ignored(z.len(), 4));
    }

    #[test]
    fn bz2_streams_concatenate_and_junk_after_them_is_ignored() {
        let one = {
            let mut e = bzip2::read::BzEncoder::new(&b"hello "[..], bzip2::Compression::new(3));
            let mut v = Vec::new();
            e.read_to_end(&mut v).unwrap();
            v
        };
        let mut two = one.clone();
        two.extend_from_slice(&one);
        two.extend_from_slice(b"JUNK");
        let got = inflate(Compressor::Bz2, &two, 0, u64::MAX).unwrap();
        assert_eq!(got.data, b"hello hello ");
        assert_eq!(got.streams, 2);
        assert_eq!(got.end, End::Ignored(one.len() * 2, 4));
        assert!(matches!(
            inflate(Compressor::Bz2, &one[..one.len() - 3], 0, u64::MAX),
            Err(InflateError::Truncated { .. } | InflateError::Corrupt { .. })
        ));
    }
}
