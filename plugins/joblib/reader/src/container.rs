//! The container of a joblib file, as `joblib.load` opens it (joblib 1.5.3):
//!
//! * `numpy_pickle_utils.py` `_detect_compressor` peeks at the first bytes (as many as the
//!   longest registered prefix, 5) and checks the old `ZF` prefix first, then each compressor
//!   of `compressor.py` `_COMPRESSORS` in registration order (`numpy_pickle.py`: zlib `\x78`,
//!   gzip `\x1f\x8b`, bz2 `BZ`, lzma `\x5d\x00`, xz `\xfd7zXZ`, lz4 `\x04\x22\x4d\x18`); the
//!   prefixes do not overlap, so the first match is the only one. Anything else is
//!   "not-compressed": the file is the pickle.
//! * `_validate_fileobject_and_memmap` opens the compressor's `decompressor_file`: joblib's own
//!   `BinaryZlibFile` (`zlib.decompressobj(15)`) and `BinaryGzipFile` (wbits 31), `bz2.BZ2File`,
//!   `lzma.LZMAFile` (for lzma and xz both, `FORMAT_AUTO`), `lz4.frame.LZ4FrameFile`; the
//!   unpickler reads from it ([`crate::inflate`] decodes each as its reader does).
//! * A `ZF` file is joblib < 0.10's (`numpy_pickle_compat.py` `read_zfile`): `ZF`, the inflated
//!   length as `hex(n)` padded with spaces to `_MAX_LEN` (19, `len(hex(2**64))`) and read with
//!   `int(text, 16)`, an optional space (joblib <= 0.8.4 under Python 2 wrote one more), then
//!   one zlib stream read with `zlib.decompress(rest, 15, length)` and asserted to inflate to
//!   exactly `length` bytes.

/// How the file's bytes are compressed, as `_detect_compressor` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compressor {
    /// `compat`: joblib < 0.10's `ZF` file.
    Compat,
    /// `zlib`.
    Zlib,
    /// `gzip`.
    Gzip,
    /// `bz2`.
    Bz2,
    /// `lzma` (the `.lzma` "alone" format).
    Lzma,
    /// `xz`.
    Xz,
    /// `lz4` (an LZ4 frame).
    Lz4,
    /// `not-compressed`.
    None,
}

/// joblib's `_ZFILE_PREFIX`.
pub const ZFILE_PREFIX: &[u8] = b"ZF";
/// `numpy_pickle_compat._MAX_LEN`: `len(hex_str(2**64))`, `'0x10000000000000000'`.
pub const MAX_LEN: usize = 19;

/// `_COMPRESSORS` in registration order, with each prefix.
pub const PREFIXES: &[(Compressor, &[u8])] = &[
    (Compressor::Zlib, b"\x78"),
    (Compressor::Gzip, b"\x1f\x8b"),
    (Compressor::Bz2, b"BZ"),
    (Compressor::Lzma, b"\x5d\x00"),
    (Compressor::Xz, b"\xfd\x37\x7a\x58\x5a"),
    (Compressor::Lz4, b"\x04\x22\x4d\x18"),
];

impl Compressor {
    /// The name `_detect_compressor` returns.
    pub fn name(self) -> &'static str {
        match self {
            Compressor::Compat => "compat",
            Compressor::Zlib => "zlib",
            Compressor::Gzip => "gzip",
            Compressor::Bz2 => "bz2",
            Compressor::Lzma => "lzma",
            Compressor::Xz => "xz",
            Compressor::Lz4 => "lz4",
            Compressor::None => "not-compressed",
        }
    }
}

/// `_detect_compressor` over the file's first bytes.
pub fn detect(head: &[u8]) -> Compressor {
    if head.starts_with(ZFILE_PREFIX) {
        return Compressor::Compat;
    }
    PREFIXES
        .iter()
        .find(|(_, p)| head.starts_with(p))
        .map_or(Compressor::None, |(c, _)| *c)
}

/// A `ZF` file's header: the declared length, and where the zlib stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompatHeader {
    /// The inflated length `read_zfile` asserts.
    pub length: u64,
    /// The zlib stream's first byte.
    pub data_offset: usize,
}

/// `read_zfile`'s header over `file`, or why Python's `int(text, 16)` raises on it.
pub fn compat_header(file: &[u8]) -> Result<CompatHeader, String> {
    let end = ZFILE_PREFIX.len() + MAX_LEN;
    let text = file
        .get(ZFILE_PREFIX.len()..end)
        .ok_or("the file ends inside its 21-byte ZF header")?;
    let length = python_int_base16(text).ok_or_else(|| {
        format!(
            "its length field {:?} is not one Python's int(text, 16) reads",
            String::from_utf8_lossy(text)
        )
    })?;
    // `next_byte != b" "`: the stream starts at the header's end, else one byte later.
    let data_offset = if file.get(end) == Some(&b' ') {
        end + 1
    } else {
        end
    };
    Ok(CompatHeader {
        length,
        data_offset,
    })
}

/// Python's `int(bytes, 16)` for what fits in a `u64` (a longer length could never be met by
/// an inflated stream within bounds): surrounding ASCII whitespace, an optional sign (a
/// negative length is refused here: `zlib.decompress` raises on a negative buffer size), an
/// optional `0x`/`0X`, hex digits with single underscores between them (CPython
/// `Objects/longobject.c` `long_from_string_base` / `PyLong_FromString`).
pub fn python_int_base16(text: &[u8]) -> Option<u64> {
    let is_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
    let start = text.iter().position(|b| !is_space(b))?;
    let end = text.iter().rposition(|b| !is_space(b))? + 1;
    let mut s = text.get(start..end)?;
    if let Some(rest) = s.strip_prefix(b"+") {
        s = rest;
    }
    let mut prefixed = false;
    if s.len() > 2 && (s.starts_with(b"0x") || s.starts_with(b"0X")) {
        s = s.get(2..)?;
        prefixed = true;
    }
    // After a base prefix, CPython allows one underscore before the first digit.
    if prefixed {
        if let Some(rest) = s.strip_prefix(b"_") {
            s = rest;
        }
    }
    if s.is_empty() || s.starts_with(b"_") || s.ends_with(b"_") {
        return None;
    }
    let mut value: u64 = 0;
    let mut last_underscore = false;
    for &b in s {
        if b == b'_' {
            if last_underscore {
                return None;
            }
            last_underscore = true;
            continue;
        }
        last_underscore = false;
        let digit = char::from(b).to_digit(16)?;
        value = value.checked_mul(16)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn detection_follows_joblibs_order_and_prefixes() {
        assert_eq!(detect(b"ZF0x10"), Compressor::Compat);
        assert_eq!(detect(b"\x78\x9c"), Compressor::Zlib);
        assert_eq!(detect(b"\x78"), Compressor::Zlib);
        assert_eq!(detect(b"\x1f\x8b\x08"), Compressor::Gzip);
        assert_eq!(detect(b"\x1f"), Compressor::None);
        assert_eq!(detect(b"BZh9"), Compressor::Bz2);
        assert_eq!(detect(b"\x5d\x00\x00\x80"), Compressor::Lzma);
        assert_eq!(detect(b"\xfd7zXZ\x00"), Compressor::Xz);
        assert_eq!(detect(b"\xfd7zX"), Compressor::None);
        assert_eq!(detect(b"\x04\x22\x4d\x18"), Compressor::Lz4);
        assert_eq!(detect(b"\x80\x04\x95"), Compressor::None);
        assert_eq!(detect(b""), Compressor::None);
    }

    #[test]
    fn python_int_of_the_zf_length() {
        assert_eq!(python_int_base16(b"0x3e8              "), Some(1000));
        assert_eq!(python_int_base16(b"  3E8 "), Some(1000));
        assert_eq!(python_int_base16(b"0x_3_e8"), Some(1000));
        assert_eq!(python_int_base16(b"+0x10"), Some(16));
        assert_eq!(python_int_base16(b"0x"), None);
        assert_eq!(python_int_base16(b"3__e8"), None);
        assert_eq!(python_int_base16(b"-0x10"), None);
        assert_eq!(python_int_base16(b"0x3e8L"), None);
        assert_eq!(python_int_base16(b"                   "), None);
    }

    #[test]
    fn compat_header_and_its_optional_space() {
        let mut f = b"ZF0x3e8              ".to_vec();
        assert_eq!(f.len(), 21);
        f.extend_from_slice(b"\x78\x9c");
        assert_eq!(
            compat_header(&f).unwrap(),
            CompatHeader {
                length: 1000,
                data_offset: 21
            }
        );
        let mut g = b"ZF0x3e8              ".to_vec();
        g.extend_from_slice(b" \x78\x9c");
        assert_eq!(compat_header(&g).unwrap().data_offset, 22);
        assert!(compat_header(b"ZF0x3e8").is_err());
    }
}
