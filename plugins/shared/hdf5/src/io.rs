//! Bounded reads of an HDF5 file's metadata: every address is checked against the file before
//! it is read, and all the metadata bytes one walk reads are held to a budget (eight times the
//! file and 1 MiB), so that no shape of pointers between structures makes the walk read more
//! than a few times the file.

use crate::model::{Hdf5Error, UNDEFINED};
use socair_plugin_api::ReadAt;

/// The metadata bytes one walk may read for a file of `file_len` bytes.
pub fn budget_for(file_len: u64) -> u64 {
    (1u64 << 20).saturating_add(file_len.saturating_mul(8))
}

/// Bytes hinted at each address ([`Source::prefetch`]): an object header as h5py writes one
/// (a few hundred bytes) with the B-tree node, local heap and symbol node of a group, which
/// the library allocates beside it.
pub const HINT: u64 = 4 << 10;

/// The file, its sizes of offsets and lengths, and what has been read of it.
pub struct Source<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    /// The file's length.
    pub len: u64,
    /// Where addresses count from: the superblock's offset (a user block before it).
    pub base: u64,
    /// Bytes in an address.
    pub offsets: u8,
    /// Bytes in a length.
    pub lengths: u8,
    /// Metadata bytes read so far.
    pub read: u64,
    budget: u64,
    /// Whether the host takes hints ([`Source::prefetch`]): so far as it has said.
    hints: bool,
}

impl<'a, S: ReadAt + ?Sized> Source<'a, S> {
    /// A source over `src`.
    pub fn new(src: &'a S) -> Self {
        let len = src.size();
        Source {
            src,
            len,
            base: 0,
            offsets: 8,
            lengths: 8,
            read: 0,
            budget: budget_for(len),
            hints: true,
        }
    }

    /// Another source over the same file, with its sizes and a budget of its own.
    pub fn fresh(&self) -> Source<'a, S> {
        Source {
            read: 0,
            budget: budget_for(self.len),
            ..*self
        }
    }

    /// The absolute offset of `addr` (relative to the base), checked to leave `len` bytes in
    /// the file.
    pub fn locate(&self, addr: u64, len: u64, what: &str) -> Result<u64, Hdf5Error> {
        if addr == UNDEFINED {
            return Err(Hdf5Error::new(what, "its address is undefined"));
        }
        let at = self
            .base
            .checked_add(addr)
            .filter(|&at| at.checked_add(len).is_some_and(|end| end <= self.len));
        at.ok_or_else(|| {
            Hdf5Error::new(
                format!("{what} at address {addr}"),
                format!(
                    "{len} bytes there run past the end of the file ({} bytes)",
                    self.len
                ),
            )
        })
    }

    /// Hints that the bytes at these addresses (relative to the base), `HINT` bytes from each,
    /// are about to be read ([`ReadAt::prefetch`]); whether hints are used. Addresses outside
    /// the file are left out.
    pub fn prefetch(&mut self, addrs: &[u64]) -> bool {
        // A source that said no once (a local file) is not asked again.
        if !self.hints || addrs.is_empty() {
            return self.hints;
        }
        let ranges: Vec<(u64, u64)> = addrs
            .iter()
            .filter(|&&a| a != UNDEFINED)
            .filter_map(|&a| self.base.checked_add(a).filter(|&at| at < self.len))
            .map(|at| (at, HINT))
            .collect();
        self.hints = self.src.prefetch(&ranges);
        self.hints
    }

    /// `len` bytes at address `addr`, counted against the budget.
    pub fn bytes(&mut self, addr: u64, len: u64, what: &str) -> Result<Vec<u8>, Hdf5Error> {
        let at = self.locate(addr, len, what)?;
        self.read = self.read.saturating_add(len);
        if self.read > self.budget {
            return Err(Hdf5Error::new(
                format!("{what} at address {addr}"),
                format!(
                    "reading it would take the metadata read past {} bytes (1 MiB + 8x the file): its structures point at one another more than any HDF5 writer lays them out",
                    self.budget
                ),
            ));
        }
        let n =
            usize::try_from(len).map_err(|_| Hdf5Error::new(what, "too large for this machine"))?;
        let mut buf = vec![0u8; n];
        self.src
            .read_exact_at(at, &mut buf)
            .map_err(|e| Hdf5Error::new(format!("{what} at address {addr}"), e))?;
        Ok(buf)
    }

    /// Raw bytes at an absolute file offset (the first bytes, a superblock candidate).
    pub fn absolute(&mut self, at: u64, len: u64, what: &str) -> Result<Vec<u8>, Hdf5Error> {
        let saved = self.base;
        self.base = 0;
        let out = self.bytes(at, len, what);
        self.base = saved;
        out
    }

    /// A cursor over `bytes` with this file's sizes.
    pub fn cursor<'b>(&self, bytes: &'b [u8], what: &'b str) -> Cursor<'b> {
        Cursor {
            b: bytes,
            at: 0,
            offsets: self.offsets,
            lengths: self.lengths,
            what,
        }
    }
}

/// Little-endian fields read in order from a structure's bytes; a read past its end is an
/// error naming the structure.
#[derive(Debug, Clone)]
pub struct Cursor<'b> {
    b: &'b [u8],
    /// Where the next field starts.
    pub at: usize,
    offsets: u8,
    lengths: u8,
    what: &'b str,
}

impl<'b> Cursor<'b> {
    /// A cursor over `b` with sizes of offsets and lengths given.
    pub fn with(b: &'b [u8], offsets: u8, lengths: u8, what: &'b str) -> Self {
        Cursor {
            b,
            at: 0,
            offsets,
            lengths,
            what,
        }
    }

    /// The error for a structure cut short.
    pub fn short(&self) -> Hdf5Error {
        Hdf5Error::new(
            self.what,
            format!(
                "ends after {} bytes, before the fields its own header declares",
                self.b.len()
            ),
        )
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'b [u8], Hdf5Error> {
        let end = self.at.checked_add(n).ok_or_else(|| self.short())?;
        let out = self.b.get(self.at..end).ok_or_else(|| self.short())?;
        self.at = end;
        Ok(out)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), Hdf5Error> {
        self.take(n).map(|_| ())
    }

    /// Bytes left.
    pub fn left(&self) -> usize {
        self.b.len().saturating_sub(self.at)
    }

    /// The bytes after the cursor.
    pub fn rest(&self) -> &'b [u8] {
        self.b.get(self.at..).unwrap_or_default()
    }

    /// An unsigned little-endian integer of `n` bytes (at most 8).
    pub fn uint(&mut self, n: usize) -> Result<u64, Hdf5Error> {
        let bytes = self.take(n.min(8))?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, Hdf5Error> {
        Ok(self.uint(1)? as u8)
    }

    /// Two bytes.
    pub fn u16(&mut self) -> Result<u16, Hdf5Error> {
        Ok(self.uint(2)? as u16)
    }

    /// Four bytes.
    pub fn u32(&mut self) -> Result<u32, Hdf5Error> {
        Ok(self.uint(4)? as u32)
    }

    /// Eight bytes.
    pub fn u64(&mut self) -> Result<u64, Hdf5Error> {
        self.uint(8)
    }

    /// An address (all ones is [`UNDEFINED`], whatever the size).
    pub fn addr(&mut self) -> Result<u64, Hdf5Error> {
        let n = usize::from(self.offsets);
        let v = self.uint(n)?;
        Ok(if n < 8 && v == (1u64 << (8 * n)) - 1 {
            UNDEFINED
        } else {
            v
        })
    }

    /// A length.
    pub fn length(&mut self) -> Result<u64, Hdf5Error> {
        self.uint(usize::from(self.lengths))
    }

    /// Bytes in an address.
    pub fn offsets(&self) -> u8 {
        self.offsets
    }

    /// Bytes in a length.
    pub fn lengths(&self) -> u8 {
        self.lengths
    }
}

/// Bob Jenkins' lookup3 `hashlittle` with an initial value of 0: the checksum of HDF5's
/// version 2 structures (`H5_checksum_lookup3`, `H5checksum.c`, HDF5 1.14).
pub fn lookup3(key: &[u8]) -> u32 {
    fn rot(x: u32, k: u32) -> u32 {
        x.rotate_left(k)
    }
    let mut a: u32 = 0xdead_beef_u32.wrapping_add(key.len() as u32);
    let mut b = a;
    let mut c = a;
    let mut k = key;
    let word = |s: &[u8], i: usize| -> u32 {
        let g = |j: usize| u32::from(s.get(i + j).copied().unwrap_or(0));
        g(0) | g(1) << 8 | g(2) << 16 | g(3) << 24
    };
    while k.len() > 12 {
        a = a.wrapping_add(word(k, 0));
        b = b.wrapping_add(word(k, 4));
        c = c.wrapping_add(word(k, 8));
        a = a.wrapping_sub(c);
        a ^= rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 4);
        b = b.wrapping_add(a);
        k = k.get(12..).unwrap_or_default();
    }
    if k.is_empty() {
        return c;
    }
    // The last 1..=12 bytes, zero-padded, as the reference's byte-by-byte switch adds them.
    a = a.wrapping_add(word(k, 0));
    b = b.wrapping_add(word(k, 4));
    c = c.wrapping_add(word(k, 8));
    c ^= b;
    c = c.wrapping_sub(rot(b, 14));
    a ^= c;
    a = a.wrapping_sub(rot(c, 11));
    b ^= a;
    b = b.wrapping_sub(rot(a, 25));
    c ^= b;
    c = c.wrapping_sub(rot(b, 16));
    a ^= c;
    a = a.wrapping_sub(rot(c, 4));
    b ^= a;
    b = b.wrapping_sub(rot(a, 14));
    c ^= b;
    c = c.wrapping_sub(rot(b, 24));
    c
}

/// Checks the lookup3 checksum that ends `block` (its last four bytes).
pub fn check_sum(block: &[u8], what: &str) -> Result<(), Hdf5Error> {
    let Some(split) = block.len().checked_sub(4) else {
        return Err(Hdf5Error::new(what, "too short to hold its checksum"));
    };
    let (body, sum) = block.split_at(split);
    let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
    let actual = lookup3(body);
    if stored != actual {
        return Err(Hdf5Error::new(
            what,
            format!("its checksum is {stored:08x}, its bytes sum to {actual:08x}: the structure was altered, and the HDF5 library refuses it"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_matches_the_reference_values() {
        // hashlittle("", 0) and hashlittle("Four score and seven years ago", 0) from
        // lookup3.c's driver5.
        assert_eq!(lookup3(b""), 0xdeadbeef);
        assert_eq!(lookup3(b"Four score and seven years ago"), 0x17770551);
    }

    #[test]
    fn cursors_refuse_reads_past_the_end() {
        let mut c = Cursor::with(&[1, 0, 0xff, 0xff, 0xff, 0xff], 4, 4, "x");
        assert_eq!(c.u16().unwrap(), 1);
        assert_eq!(c.addr().unwrap(), UNDEFINED);
        assert!(c.u8().is_err());
    }
}
