//! A strict, bounded FlatBuffers reader: every offset, vtable and vector length checked as
//! the FlatBuffers library's own `flatbuffers::Verifier` checks them (flatbuffers 25.x,
//! `verifier.h`, with TFLite's defaults: alignment checked, tables nested at most 64 deep, at
//! most a million tables), but only for what the reader asks for, and nothing read that was
//! not checked first.
//!
//! * An offset (`uoffset_t`, u32) is aligned to 4, non-zero, and lands inside the buffer.
//! * A table starts 4-aligned; its vtable (`table - soffset`) lies inside the buffer, 2-aligned,
//!   its length even, at least 4, and wholly inside; a field's offset in it, when present,
//!   points to a value that is aligned to its size and inside the buffer.
//! * A vector or string's length is 4-aligned (the verifier checks no more alignment), its
//!   length times its element size does not overflow and fits; a string ends with a NUL byte.
//!
//! No recursion: callers walk the schema's fixed shape (model → subgraphs → tensors, …), and
//! [`Buf`] counts tables and refuses past the limit.

use std::cell::Cell;

/// Tables a buffer may hold (the verifier's `max_tables`).
pub const MAX_TABLES: usize = 1_000_000;
/// Nesting the verifier allows (`max_depth`).
pub const MAX_DEPTH: usize = 64;
/// The largest buffer (`FLATBUFFERS_MAX_BUFFER_SIZE`, 2 GiB − 1).
pub const MAX_BUFFER: usize = i32::MAX as usize;

/// Why a buffer is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {what}")]
pub struct FbError {
    /// Where.
    pub offset: u64,
    /// What.
    pub what: String,
}

fn err(at: usize, what: impl Into<String>) -> FbError {
    FbError {
        offset: at as u64,
        what: what.into(),
    }
}

/// A buffer being read.
#[derive(Debug)]
pub struct Buf<'a> {
    /// The bytes.
    pub b: &'a [u8],
    tables: Cell<usize>,
}

/// A table, checked.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    buf: &'a Buf<'a>,
    /// Its position.
    pub pos: usize,
    vtable: usize,
    vlen: usize,
    depth: usize,
}

/// A vector, checked: `len` elements of `elem` bytes from `start`.
#[derive(Debug, Clone, Copy)]
pub struct Vector<'a> {
    buf: &'a Buf<'a>,
    /// Where its first element is.
    pub start: usize,
    /// How many elements.
    pub len: usize,
    elem: usize,
    depth: usize,
}

/// A little-endian scalar of the buffer.
pub trait Scalar: Copy {
    /// Its size.
    const SIZE: usize;
    /// From its bytes.
    fn read(b: &[u8]) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
scalar!(u8, i8, u16, u32, i32, u64, i64, f32);

impl<'a> Buf<'a> {
    /// A buffer over `b`.
    pub fn new(b: &'a [u8]) -> Result<Self, FbError> {
        if b.len() > MAX_BUFFER {
            return Err(err(
                0,
                format!("{} bytes: a flatbuffer is at most {MAX_BUFFER}", b.len()),
            ));
        }
        Ok(Buf {
            b,
            tables: Cell::new(0),
        })
    }

    fn check(&self, at: usize, len: usize, align: usize, what: &str) -> Result<(), FbError> {
        if align > 1 && !at.is_multiple_of(align) {
            return Err(err(
                at,
                format!("{what} at byte {at} is not aligned to {align}"),
            ));
        }
        match at.checked_add(len) {
            Some(end) if end <= self.b.len() => Ok(()),
            _ => Err(err(
                at,
                format!(
                    "{what} of {len} bytes at byte {at} runs past the end of the {}-byte buffer",
                    self.b.len()
                ),
            )),
        }
    }

    fn scalar<T: Scalar>(&self, at: usize, what: &str) -> Result<T, FbError> {
        self.check(at, T::SIZE, T::SIZE, what)?;
        Ok(T::read(&self.b[at..]))
    }

    /// Follows the `uoffset_t` at `at`.
    fn offset(&self, at: usize, what: &str) -> Result<usize, FbError> {
        let o: u32 = self.scalar(at, what)?;
        if o == 0 || o > i32::MAX as u32 {
            return Err(err(
                at,
                format!("{what}: offset {o} is not a forward offset"),
            ));
        }
        let target = at + o as usize;
        self.check(target, 1, 1, what)?;
        Ok(target)
    }

    /// The root table (the `uoffset_t` at byte 0).
    pub fn root(&'a self) -> Result<Table<'a>, FbError> {
        let pos = self.offset(0, "the root offset")?;
        self.table_at(pos, 0)
    }

    fn table_at(&'a self, pos: usize, depth: usize) -> Result<Table<'a>, FbError> {
        if depth > MAX_DEPTH {
            return Err(err(
                pos,
                format!("tables nested more than {MAX_DEPTH} deep"),
            ));
        }
        let n = self.tables.get() + 1;
        if n > MAX_TABLES {
            return Err(err(pos, format!("more than {MAX_TABLES} tables")));
        }
        self.tables.set(n);
        let soffset: i32 = self.scalar(pos, "a table")?;
        let vtable = (pos as i64) - i64::from(soffset);
        let vtable = usize::try_from(vtable)
            .map_err(|_| err(pos, "a table's vtable lies before the buffer"))?;
        let vlen: u16 = self.scalar(vtable, "a vtable")?;
        let vlen = vlen as usize;
        if vlen < 4 || !vlen.is_multiple_of(2) {
            return Err(err(
                vtable,
                format!("a vtable of {vlen} bytes (it is even and at least 4)"),
            ));
        }
        self.check(vtable, vlen, 2, "a vtable")?;
        Ok(Table {
            buf: self,
            pos,
            vtable,
            vlen,
            depth,
        })
    }
}

impl<'a> Table<'a> {
    /// The position of field `id`, or none when absent.
    fn field(&self, id: usize) -> Result<Option<usize>, FbError> {
        let slot = 4 + 2 * id;
        if slot + 2 > self.vlen {
            return Ok(None);
        }
        let off: u16 = self.buf.scalar(self.vtable + slot, "a vtable slot")?;
        Ok((off != 0).then(|| self.pos + off as usize))
    }

    /// Scalar field `id`, or `default` when absent.
    pub fn scalar<T: Scalar>(&self, id: usize, default: T) -> Result<T, FbError> {
        match self.field(id)? {
            Some(at) => self.buf.scalar(at, "a field"),
            None => Ok(default),
        }
    }

    /// Table field `id`.
    pub fn table(&self, id: usize) -> Result<Option<Table<'a>>, FbError> {
        match self.field(id)? {
            Some(at) => {
                let pos = self.buf.offset(at, "a table field")?;
                Ok(Some(self.buf.table_at(pos, self.depth + 1)?))
            }
            None => Ok(None),
        }
    }

    /// Vector field `id` of elements of `elem` bytes (4 for offsets to tables or strings).
    pub fn vector(&self, id: usize, elem: usize) -> Result<Option<Vector<'a>>, FbError> {
        let Some(at) = self.field(id)? else {
            return Ok(None);
        };
        let v = self.buf.offset(at, "a vector field")?;
        let len: u32 = self.buf.scalar(v, "a vector's length")?;
        let len = len as usize;
        let bytes = len
            .checked_mul(elem)
            .ok_or_else(|| err(v, "a vector's size overflows"))?;
        self.buf.check(v + 4, bytes, 1, "a vector")?;
        Ok(Some(Vector {
            buf: self.buf,
            start: v + 4,
            len,
            elem,
            depth: self.depth,
        }))
    }

    /// String field `id` (its bytes, without the NUL).
    pub fn string(&self, id: usize) -> Result<Option<&'a [u8]>, FbError> {
        let Some(v) = self.vector(id, 1)? else {
            return Ok(None);
        };
        string_of(v)
    }
}

fn string_of(v: Vector<'_>) -> Result<Option<&[u8]>, FbError> {
    v.buf.check(v.start + v.len, 1, 1, "a string's NUL")?;
    if v.buf.b[v.start + v.len] != 0 {
        return Err(err(v.start + v.len, "a string without its NUL terminator"));
    }
    Ok(Some(&v.buf.b[v.start..v.start + v.len]))
}

impl<'a> Vector<'a> {
    /// Element `i` of a vector of tables.
    pub fn table(&self, i: usize) -> Result<Table<'a>, FbError> {
        if i >= self.len || self.elem != 4 {
            return Err(err(self.start, "no such table element"));
        }
        let pos = self.buf.offset(self.start + 4 * i, "a table element")?;
        self.buf.table_at(pos, self.depth + 1)
    }

    /// Element `i` of a vector of strings.
    pub fn string(&self, i: usize) -> Result<&'a [u8], FbError> {
        if i >= self.len || self.elem != 4 {
            return Err(err(self.start, "no such string element"));
        }
        let s = self.buf.offset(self.start + 4 * i, "a string element")?;
        let len: u32 = self.buf.scalar(s, "a string's length")?;
        self.buf.check(s + 4, len as usize, 1, "a string")?;
        let v = Vector {
            buf: self.buf,
            start: s + 4,
            len: len as usize,
            elem: 1,
            depth: self.depth,
        };
        Ok(string_of(v)?.unwrap_or_default())
    }

    /// Element `i` of a vector of scalars.
    pub fn get<T: Scalar>(&self, i: usize) -> Result<T, FbError> {
        if i >= self.len || T::SIZE != self.elem {
            return Err(err(self.start, "no such scalar element"));
        }
        Ok(T::read(&self.buf.b[self.start + i * self.elem..]))
    }

    /// The raw bytes of a vector of bytes.
    pub fn bytes(&self) -> &'a [u8] {
        &self.buf.b[self.start..self.start + self.len * self.elem]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// root -> table { 0: u32 7, 1: string "hi", 2: [i32] [1, -2] }
    fn sample() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(&16u32.to_le_bytes()); // root table at 16
                                                       // vtable at 4: len 10, table len 16, fields at +4, +8, +12
        b[4..6].copy_from_slice(&10u16.to_le_bytes());
        b[6..8].copy_from_slice(&16u16.to_le_bytes());
        b[8..10].copy_from_slice(&4u16.to_le_bytes());
        b[10..12].copy_from_slice(&8u16.to_le_bytes());
        b[12..14].copy_from_slice(&12u16.to_le_bytes());
        b[16..20].copy_from_slice(&12i32.to_le_bytes()); // soffset: 16 - 12 = 4
        b[20..24].copy_from_slice(&7u32.to_le_bytes());
        b[24..28].copy_from_slice(&(32u32 - 24).to_le_bytes()); // string at 32
        b[28..32].copy_from_slice(&(40u32 - 28).to_le_bytes()); // vector at 40
        b[32..36].copy_from_slice(&2u32.to_le_bytes());
        b[36..38].copy_from_slice(b"hi");
        b[38] = 0;
        b[40..44].copy_from_slice(&2u32.to_le_bytes());
        b[44..48].copy_from_slice(&1i32.to_le_bytes());
        b[48..52].copy_from_slice(&(-2i32).to_le_bytes());
        b
    }

    #[test]
    fn reads_checked_fields() {
        let b = sample();
        let buf = Buf::new(&b).unwrap();
        let t = buf.root().unwrap();
        assert_eq!(t.scalar::<u32>(0, 0).unwrap(), 7);
        assert_eq!(t.string(1).unwrap().unwrap(), b"hi");
        let v = t.vector(2, 4).unwrap().unwrap();
        assert_eq!(v.get::<i32>(1).unwrap(), -2);
        assert_eq!(t.scalar::<u32>(5, 9).unwrap(), 9);
    }

    #[test]
    fn refuses_what_the_verifier_refuses() {
        // A vector longer than the buffer.
        let mut b = sample();
        b[40..44].copy_from_slice(&1_000_000u32.to_le_bytes());
        let buf = Buf::new(&b).unwrap();
        assert!(buf.root().unwrap().vector(2, 4).is_err());
        // A string without its NUL.
        let mut b = sample();
        b[38] = b'!';
        let buf = Buf::new(&b).unwrap();
        assert!(buf.root().unwrap().string(1).is_err());
        // A vtable before the buffer.
        let mut b = sample();
        b[16..20].copy_from_slice(&100i32.to_le_bytes());
        assert!(Buf::new(&b).unwrap().root().is_err());
        // A misaligned root.
        let mut b = sample();
        b[0..4].copy_from_slice(&17u32.to_le_bytes());
        assert!(Buf::new(&b).unwrap().root().is_err());
        // A zero offset.
        let mut b = sample();
        b[24..28].copy_from_slice(&0u32.to_le_bytes());
        assert!(Buf::new(&b).unwrap().root().unwrap().string(1).is_err());
    }
}
