//! Which files the joblib reader claims, by content only (never by name):
//!
//! * **compressed**: a file whose first bytes carry a compressor's prefix as `joblib.load`'s
//!   `_detect_compressor` chooses it ([`crate::container::detect`]), and whose first inflated
//!   bytes, decoded from the head the host gives (up to 4096 bytes), run as a pickle
//!   (`socair_pickle::looks_like_pickle`). bzip2 and LZ4 decode whole blocks only (bzip2 up to
//!   900 kB, an LZ4 frame's blocks up to 4 MiB), so when the head yields no inflated byte a
//!   well-formed stream header is the claim: `BZh1`..`BZh9` and a block or end-of-stream magic,
//!   an LZ4 frame descriptor of version 01. No other reader claims compressed files
//!   (torch.load does not decompress: torch-zip's legacy reader reads pickles and tars only).
//!   A `ZF` file (joblib < 0.10) whose header Python reads and whose stream inflates to a pickle.
//! * **uncompressed**: a pickle (torch-zip's legacy rule: `looks_like_pickle`, and not a zip
//!   local header, which torch.load sends to its zip reader) whose first bytes name joblib's
//!   array wrappers ([`socair_plugin_kit::joblib::names_array_wrapper`]). torch-zip's legacy
//!   reader declines exactly these (`plugins/torch-zip/reader/src/lib.rs`, `TorchLegacyReader::
//!   detect`): one reader reads each pickle, and none is left unread.

use crate::container::{self, Compressor};
use crate::inflate;

/// Inflated bytes looked at to decide a claim.
const HEAD_OUT: u64 = 4096;

/// Whether the joblib reader claims the file whose first bytes are `head`, of `file_len`.
pub fn claims(head: &[u8], file_len: u64) -> bool {
    match container::detect(head) {
        Compressor::None => uncompressed(head, file_len),
        Compressor::Compat => container::compat_header(head)
            .ok()
            .and_then(|h| head.get(h.data_offset..))
            .is_some_and(|rest| inflated_head_is_pickle(Compressor::Zlib, rest)),
        c @ (Compressor::Bz2 | Compressor::Lz4) => {
            let out = inflated_head(c, head);
            if out.is_empty() {
                block_header(c, head)
            } else {
                socair_pickle::pickle::looks_like_pickle(&out, u64::MAX)
            }
        }
        Compressor::Xz => {
            let mut out = inflated_head(Compressor::Xz, head);
            if out.is_empty() {
                out = xz_first_chunk(head);
            }
            !out.is_empty() && socair_pickle::pickle::looks_like_pickle(&out, u64::MAX)
        }
        c => inflated_head_is_pickle(c, head),
    }
}

/// The first bytes of an xz stream's first LZMA2 chunk, for a head cut inside that chunk (the
/// xz decoder gives nothing of a chunk until it has all of it): the stream header (12 bytes),
/// the block header (its size byte, times 4, plus 4), then an LZMA2 chunk (xz-file-format 1.2.1
/// sections 2.1.1, 3.1; LZMA2 as liblzma's `lzma2_decoder.c` reads it): an uncompressed chunk
/// (control 1 or 2, a 16-bit size) or an LZMA chunk (control 0x80 and up, sizes, a properties
/// byte when the control says so) whose first bytes the LZMA decoder gives as it reads them.
fn xz_first_chunk(head: &[u8]) -> Vec<u8> {
    let Some(&size) = head.get(12) else {
        return Vec::new();
    };
    let chunk = 12 + (usize::from(size) + 1) * 4;
    let Some(&control) = head.get(chunk) else {
        return Vec::new();
    };
    match control {
        1 | 2 => head
            .get(chunk + 3..)
            .map(|d| d.get(..64).unwrap_or(d).to_vec())
            .unwrap_or_default(),
        0xc0..=0xff => {
            let (Some(unpacked), Some(&props), Some(data)) = (
                head.get(chunk..chunk + 3),
                head.get(chunk + 5),
                head.get(chunk + 6..),
            ) else {
                return Vec::new();
            };
            let unpacked = ((u64::from(unpacked[0] & 0x1f) << 16)
                | (u64::from(unpacked[1]) << 8)
                | u64::from(unpacked[2]))
                + 1;
            let Ok(mut d) =
                lzma_rust2::LzmaReader::new_with_props(data, unpacked, props, 1 << 20, None)
            else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let mut piece = [0u8; 64];
            while out.len() < 256 {
                match std::io::Read::read(&mut d, &mut piece) {
                    Ok(n) if n > 0 => out.extend_from_slice(piece.get(..n).unwrap_or_default()),
                    _ => break,
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// An uncompressed pickle naming joblib's array wrappers in its first bytes.
pub fn uncompressed(head: &[u8], file_len: u64) -> bool {
    !head.starts_with(&socair_plugin_kit::zip::LOCAL_MAGIC)
        && socair_pickle::pickle::looks_like_pickle(head, file_len)
        && socair_plugin_kit::joblib::names_array_wrapper(head)
}

fn inflated_head(c: Compressor, head: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    // The head is cut anywhere: an error after some inflated bytes still shows them.
    let _ = inflate::stream_prefix(c, head, &mut out, HEAD_OUT);
    out
}

fn inflated_head_is_pickle(c: Compressor, head: &[u8]) -> bool {
    let out = inflated_head(c, head);
    !out.is_empty() && socair_pickle::pickle::looks_like_pickle(&out, u64::MAX)
}

/// A bzip2 stream header (`BZh` and a block size digit, then a block's or the end's magic),
/// or an LZ4 frame's magic and a descriptor of version 01.
fn block_header(c: Compressor, head: &[u8]) -> bool {
    match c {
        Compressor::Bz2 => {
            let level = head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b));
            let magic = head.get(4..10);
            head.starts_with(b"BZh")
                && level
                && (magic == Some(b"\x31\x41\x59\x26\x53\x59")
                    || magic == Some(b"\x17\x72\x45\x38\x50\x90"))
        }
        Compressor::Lz4 => head.get(4).is_some_and(|flg| flg >> 6 == 0b01),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_starting_with_x_or_bz_is_not_claimed() {
        assert!(!claims(b"x marks the spot", 16));
        assert!(!claims(b"BZ is not bzip2", 15));
        assert!(!claims(b"\x1f\x8bnot gzip", 10));
        assert!(!claims(b"\x80\x04\x95plain pickle", 15));
    }
}
