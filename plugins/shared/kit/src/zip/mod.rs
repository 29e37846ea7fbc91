//! The zip primitives that are the same in every first-party zip reader: the records' fixed
//! layouts ([`headers`]), extra-field blocks and zip64 values ([`extra`]), name decoding and
//! repeats ([`names`]), CRC-32 over a range of the file ([`crc`]), raw deflate decoded in
//! bounded pieces ([`inflate`]), which plugin claims a zip ([`claims`]), and symbolic-link
//! members ([`links`]).
//!
//! Each reader keeps its own **rules**, because each mirrors the program that reads its files,
//! and those programs disagree on purpose-relevant points. What differs, in one place:
//!
//! | rule | torch-zip (torch's reader: miniz) | numpy (`np.load`: CPython `zipfile`) | archive (generic zips: the `zip` crate, checked against `zipfile` and miniz) |
//! |---|---|---|---|
//! | end record | exactly the last 22 bytes, no comment (torch writes none); under `socair-wo/3` miniz's rule (`mz_zip_reader_locate_header_sig`): the last signature with 22 bytes after it, its comment reaching the end of the file, a signature in the last 21 bytes a FAIL, the comment a LEAD | the last signature in the final 64 KiB whose comment reaches the end of the file (`zipfile._EndRecData`) | as the `zip` crate finds it; a central directory that does not start where the records end is a FAIL |
//! | data descriptor | after every record that sets flag 3 (torch's writer sets it), with its signature; without it, the local header's CRC-32 and sizes equal the central directory's | optional signature, 4- or 8-byte sizes (`zipfile` writes both) | read by the `zip` crate |
//! | extra blocks | zip64 and torch's `FB` alignment padding only | any, once each; a Unicode Path block (0x7075) is refused | not judged |
//! | local zip64 block | each value zero or the central directory's truth (miniz writes what it knows) | both sizes when either is saturated | not judged |
//! | names | one top-level prefix, no `.`/`..`/empty segment, backslash or control character, at most 511 bytes (torch's buffer), unique ignoring ASCII case (miniz's lookup) | ASCII or flagged UTF-8, no control characters, unique byte for byte (`zipfile`'s index keeps the last) | unique, and unique ignoring ASCII case; no `..`, absolute path, drive letter or NUL |
//! | methods | stored only; under `socair-wo/3` deflate too, inflated as torch's `getRecord` inflates it (a deflated storage is a LEAD: `torch.load(mmap=True)` maps its compressed bytes) | stored and deflate read; others listed, not read | every method the `zip` crate inflates |
//! | CRC-32 | must hold; recorded as 0 (`set_crc32_options(False)`: torch reads records unchecked) a LEAD under `socair-wo/3` | must hold (`zipfile` checks it) | must hold (the `zip` crate checks it) |
//! | records' tiling | in file order, nothing before, between or after | sorted by offset, nothing before, between or overlapping | the central directory's offset must be where the records end |
//!
//! The parsers here are pure functions over byte slices or [`ReadAt`]; they return what the
//! bytes say, and typed errors, and leave the words of a refusal to the reader that makes it.

pub mod claims;
pub mod crc;
pub mod extra;
pub mod headers;
pub mod inflate;
pub mod links;
pub mod names;

pub use socair_plugin_api::ReadAt;

/// A local file header's signature.
pub const LOCAL_SIG: u32 = 0x0403_4b50;
/// The first four bytes of a zip that starts with a local header: what torch's `_is_zipfile`
/// compares a file's first bytes with to choose its zip reader over the legacy one.
pub const LOCAL_MAGIC: [u8; 4] = LOCAL_SIG.to_le_bytes();
/// A central directory header's signature.
pub const CENTRAL_SIG: u32 = 0x0201_4b50;
/// Its four bytes.
pub const CENTRAL_MAGIC: [u8; 4] = CENTRAL_SIG.to_le_bytes();
/// The end of central directory record's signature.
pub const EOCD_SIG: u32 = 0x0605_4b50;
/// Its four bytes.
pub const EOCD_MAGIC: [u8; 4] = EOCD_SIG.to_le_bytes();
/// The zip64 end of central directory record's signature.
pub const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
/// The zip64 end of central directory locator's signature.
pub const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// A data descriptor's (optional) signature.
pub const DESCRIPTOR_SIG: u32 = 0x0807_4b50;

/// The end record's fixed length.
pub const EOCD_LEN: u64 = 22;
/// The zip64 locator's length.
pub const ZIP64_LOCATOR_LEN: u64 = 20;
/// The zip64 end record's length without extensible data.
pub const ZIP64_EOCD_LEN: u64 = 56;
/// A central directory header's fixed part.
pub const CENTRAL_LEN: u64 = 46;
/// A local file header's fixed part.
pub const LOCAL_LEN: u64 = 30;

/// General-purpose flag bit 0: encrypted.
pub const FLAG_ENCRYPTED: u16 = 1;
/// Bits 1 and 2: deflate options.
pub const FLAG_DEFLATE_OPTIONS: u16 = 0b110;
/// Bit 3: CRC-32 and sizes in a data descriptor after the data.
pub const FLAG_DESCRIPTOR: u16 = 1 << 3;
/// Bit 11: the name is UTF-8.
pub const FLAG_UTF8: u16 = 1 << 11;

/// Extra block: zip64 extended information.
pub const EXTRA_ZIP64: u16 = 0x0001;
/// Extra block: Info-ZIP Unicode Path (newer readers take the name from it).
pub const EXTRA_UNICODE_PATH: u16 = 0x7075;

/// A 32-bit size or offset that defers to the zip64 extra block.
pub const SATURATED_32: u32 = u32::MAX;
/// A 16-bit count that defers to the zip64 end record.
pub const SATURATED_16: u16 = u16::MAX;

/// Little-endian fields read in order from a buffer. A read past its end yields zeros (and
/// moves on): callers check a record's length before reading its fields, so that never
/// decides anything, and nothing here can panic.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    /// Fields from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, at: 0 }
    }

    /// Fields from byte `at` of `bytes` (after a signature already compared, say).
    pub fn at(bytes: &'a [u8], at: usize) -> Self {
        Fields { bytes, at }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(src) = self
            .at
            .checked_add(N)
            .and_then(|end| self.bytes.get(self.at..end))
        {
            out.copy_from_slice(src);
        }
        self.at = self.at.saturating_add(N);
        out
    }

    /// The next two bytes.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }

    /// The next four bytes.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    /// The next eight bytes.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_little_endian_and_zeros_past_the_end() {
        let mut f = Fields::new(&[1, 0, 2, 0, 0, 0, 3]);
        assert_eq!(f.u16(), 1);
        assert_eq!(f.u32(), 2);
        assert_eq!(f.u16(), 0, "one byte left: zeros, no panic");
        assert_eq!(f.u64(), 0);
        let mut f = Fields::at(&[9, 9, 5, 0], 2);
        assert_eq!(f.u16(), 5);
        assert_eq!(LOCAL_MAGIC, *b"PK\x03\x04");
        assert_eq!(CENTRAL_MAGIC, *b"PK\x01\x02");
        assert_eq!(EOCD_MAGIC, *b"PK\x05\x06");
    }
}
