//! A bounded FlatBuffers reader over the few tables of ExecuTorch's `schema/program.fbs`: the
//! verifier the runtime runs before it reads a program, and checked accessors over what it
//! accepted.
//!
//! [`verify`] follows `flatbuffers::Verifier` as ExecuTorch v1.4.1 builds it (the vendored
//! `flatbuffers/verifier.h`: `VerifyBufferFromStart`, `VerifyTableStart`, `VerifyOffset`,
//! `VerifyVectorOrString`, `VerifyString`, `VerifyVectorOfTables`, with the default options:
//! alignment checked, depth at most 64, at most 1,000,000 tables) driven by the generated
//! `Verify` of each table (`schema/program_generated.h`, described here by [`crate::schema`]).
//! `Program::load` (runtime/executor/program.cpp) refuses a program this verifier refuses. The
//! accessors ([`Table`], [`Vector`]) never index unchecked: on a verified buffer they find what
//! the generated accessors find, and on anything else they answer `None`.

use crate::schema::{Field, TableSchema};

/// `flatbuffers::Verifier::Options::max_depth`.
pub const MAX_DEPTH: u32 = 64;
/// `flatbuffers::Verifier::Options::max_tables`.
pub const MAX_TABLES: u32 = 1_000_000;
/// `FLATBUFFERS_MAX_BUFFER_SIZE`: a vector's elements must number less than this over their size.
pub const MAX_BUFFER_SIZE: u64 = (1 << 31) - 1;

/// The longest string [`Table::text`] returns whole.
pub const MAX_TEXT: usize = 1024;

/// Why the verifier refused the buffer: the byte offset and what was wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The byte offset in the flatbuffer (the file's offset: the flatbuffer starts the file).
    pub offset: usize,
    /// The schema path (`Program.execution_plan[0].values[3]`).
    pub path: String,
    /// What was wrong.
    pub reason: String,
}

struct Verifier<'a> {
    buf: &'a [u8],
    depth: u32,
    tables: u32,
}

type Checked<T> = Result<T, VerifyError>;

fn fail<T>(offset: usize, path: &str, reason: impl Into<String>) -> Checked<T> {
    Err(VerifyError {
        offset,
        path: path.to_owned(),
        reason: reason.into(),
    })
}

/// Little-endian reads that answer `None` past the end.
pub fn read_u16(buf: &[u8], at: usize) -> Option<u16> {
    let b = buf.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// See [`read_u16`].
pub fn read_u32(buf: &[u8], at: usize) -> Option<u32> {
    let b = buf.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// See [`read_u16`].
pub fn read_u64(buf: &[u8], at: usize) -> Option<u64> {
    let b = buf.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

impl Verifier<'_> {
    /// `Verifier::Verify(elem, len)`: the span lies in the buffer.
    fn in_buffer(&self, elem: usize, len: usize) -> bool {
        self.buf.len() >= len && elem <= self.buf.len() - len
    }

    /// `Verifier::Verify<T>(elem)`: aligned to `size` and in the buffer.
    fn scalar(&self, elem: usize, size: usize, path: &str, what: &str) -> Checked<()> {
        if !elem.is_multiple_of(size) {
            return fail(elem, path, format!("{what} is not aligned to {size} bytes"));
        }
        if !self.in_buffer(elem, size) {
            return fail(
                elem,
                path,
                format!("{what} runs past the end of the flatbuffer"),
            );
        }
        Ok(())
    }

    /// `Verifier::VerifyOffset`: the uoffset at `start`, non-zero, positive as an soffset, and
    /// pointing inside the buffer; returns the target.
    fn offset(&self, start: usize, path: &str) -> Checked<usize> {
        self.scalar(start, 4, path, "the offset")?;
        let o = read_u32(self.buf, start).unwrap_or(0);
        if o == 0 {
            return fail(start, path, "the offset is zero (points at itself)");
        }
        if o > i32::MAX as u32 {
            return fail(
                start,
                path,
                format!("the offset {o} is negative as a signed offset"),
            );
        }
        let target = start + o as usize;
        if !self.in_buffer(target, 1) {
            return fail(
                start,
                path,
                format!("the offset {o} points past the end of the flatbuffer"),
            );
        }
        Ok(target)
    }

    /// `Verifier::VerifyVectorOrString`: returns the element count and the end of the data.
    fn vector(&self, at: usize, elem_size: usize, path: &str) -> Checked<(usize, usize)> {
        self.scalar(at, 4, path, "the vector's length")?;
        let len = read_u32(self.buf, at).unwrap_or(0) as u64;
        if len >= MAX_BUFFER_SIZE / elem_size as u64 {
            return fail(
                at,
                path,
                format!("the vector's length {len} is over FlatBuffers' maximum"),
            );
        }
        let byte_size = 4 + elem_size as u64 * len;
        let end = at as u64 + byte_size;
        if end > self.buf.len() as u64 {
            return fail(
                at,
                path,
                format!("the vector of {len} elements runs past the end of the flatbuffer"),
            );
        }
        Ok((len as usize, end as usize))
    }

    /// `Verifier::VerifyString`: a vector of bytes followed by a NUL inside the buffer.
    fn string(&self, at: usize, path: &str) -> Checked<()> {
        let (_, end) = self.vector(at, 1, path)?;
        if self.buf.get(end) != Some(&0) {
            return fail(
                end,
                path,
                "the string is not terminated by a NUL inside the flatbuffer",
            );
        }
        Ok(())
    }

    /// `VerifyTableStart` .. `EndTable` with every field the schema names.
    fn table(&mut self, table: usize, schema: &TableSchema, path: &str) -> Checked<()> {
        self.scalar(table, 4, path, "the table's vtable offset")?;
        self.depth += 1;
        self.tables += 1;
        if self.depth > MAX_DEPTH {
            return fail(table, path, format!("tables nest deeper than {MAX_DEPTH}"));
        }
        if self.tables > MAX_TABLES {
            return fail(table, path, format!("more than {MAX_TABLES} tables"));
        }
        let soffset = read_u32(self.buf, table).unwrap_or(0) as i32;
        let vtable = (table as i64) - i64::from(soffset);
        let Ok(vtable) = usize::try_from(vtable) else {
            return fail(
                table,
                path,
                "the vtable lies before the start of the flatbuffer",
            );
        };
        self.scalar(vtable, 2, path, "the vtable")?;
        let vsize = read_u16(self.buf, vtable).unwrap_or(0) as usize;
        if !vsize.is_multiple_of(2) {
            return fail(vtable, path, format!("the vtable's size {vsize} is odd"));
        }
        if !self.in_buffer(vtable, vsize) {
            return fail(
                vtable,
                path,
                "the vtable runs past the end of the flatbuffer",
            );
        }
        let t = Table {
            buf: self.buf,
            pos: table,
            vtable,
            vsize,
        };
        for (slot, field) in schema.fields.iter().enumerate() {
            self.field(&t, slot, field, schema, path)?;
        }
        self.depth -= 1;
        Ok(())
    }

    fn field(
        &mut self,
        t: &Table<'_>,
        slot: usize,
        field: &Field,
        schema: &TableSchema,
        path: &str,
    ) -> Checked<()> {
        let Some(at) = t.field_pos(slot) else {
            return Ok(());
        };
        let name = schema.field_names.get(slot).copied().unwrap_or("?");
        let here = || format!("{path}.{name}");
        match *field {
            Field::Scalar(size) => self.scalar(at, size, &here(), "the field"),
            Field::String => {
                let s = self.offset(at, &here())?;
                self.string(s, &here())
            }
            Field::Table(inner) => {
                let s = self.offset(at, &here())?;
                self.table(s, inner, &here())
            }
            Field::ScalarVector(size) => {
                let s = self.offset(at, &here())?;
                self.vector(s, size, &here()).map(|_| ())
            }
            Field::TableVector(inner) => {
                let s = self.offset(at, &here())?;
                let (len, _) = self.vector(s, 4, &here())?;
                for i in 0..len {
                    let elem = s + 4 + 4 * i;
                    let o = read_u32(self.buf, elem).unwrap_or(0) as usize;
                    let Some(target) = elem.checked_add(o) else {
                        return fail(elem, &here(), "the element's offset overflows");
                    };
                    self.table(target, inner, &format!("{}[{i}]", here()))?;
                }
                Ok(())
            }
            Field::Union(members) => {
                // The type is the slot before (`VerifyField<uint8_t>(VT_X_TYPE)` ran there).
                let kind = t.u8(slot.wrapping_sub(1), 0);
                let s = self.offset(at, &here())?;
                match members.get(usize::from(kind)).copied().flatten() {
                    Some(inner) => self.table(s, inner, &here()),
                    // NONE and types this schema does not know verify (the generated
                    // `Verify<Union>`'s `default: return true`).
                    None => Ok(()),
                }
            }
        }
    }
}

/// `VerifyProgramBuffer`: the identifier, the root offset, and the root table as `root`.
pub fn verify(buf: &[u8], identifier: &[u8; 4], root: &TableSchema) -> Result<(), VerifyError> {
    let mut v = Verifier {
        buf,
        depth: 0,
        tables: 0,
    };
    if buf.len() < 8 || buf.get(4..8) != Some(&identifier[..]) {
        return fail(4, root.name, "the file identifier is not the schema's");
    }
    let table = v.offset(0, root.name)?;
    v.table(table, root, root.name)
}

/// One table of a verified buffer.
#[derive(Debug, Clone, Copy)]
pub struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
    vtable: usize,
    vsize: usize,
}

impl<'a> Table<'a> {
    /// The root table (`GetRoot`): `None` when the root offset does not lead to a table.
    pub fn root(buf: &'a [u8]) -> Option<Table<'a>> {
        let o = read_u32(buf, 0)? as usize;
        Table::at(buf, o)
    }

    fn at(buf: &'a [u8], pos: usize) -> Option<Table<'a>> {
        let soffset = read_u32(buf, pos)? as i32;
        let vtable = usize::try_from(pos as i64 - i64::from(soffset)).ok()?;
        let vsize = read_u16(buf, vtable)? as usize;
        Some(Table {
            buf,
            pos,
            vtable,
            vsize,
        })
    }

    /// The table's byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// `GetOptionalFieldOffset`: the field's absolute position, or `None` when absent.
    fn field_pos(&self, slot: usize) -> Option<usize> {
        let entry = 4usize.checked_add(slot.checked_mul(2)?)?;
        if entry >= self.vsize {
            return None;
        }
        let off = read_u16(self.buf, self.vtable.checked_add(entry)?)?;
        if off == 0 {
            return None;
        }
        self.pos.checked_add(usize::from(off))
    }

    /// A `ubyte`/`byte`/`bool` field, or `default` when absent.
    pub fn u8(&self, slot: usize, default: u8) -> u8 {
        self.field_pos(slot)
            .and_then(|at| self.buf.get(at).copied())
            .unwrap_or(default)
    }

    /// A 32-bit field (`uint`, or `int` through `as i32`).
    pub fn u32(&self, slot: usize, default: u32) -> u32 {
        self.field_pos(slot)
            .and_then(|at| read_u32(self.buf, at))
            .unwrap_or(default)
    }

    /// A 64-bit field (`uint64`, or `long` through `as i64`).
    pub fn u64(&self, slot: usize, default: u64) -> u64 {
        self.field_pos(slot)
            .and_then(|at| read_u64(self.buf, at))
            .unwrap_or(default)
    }

    fn target(&self, slot: usize) -> Option<usize> {
        let at = self.field_pos(slot)?;
        at.checked_add(read_u32(self.buf, at)? as usize)
    }

    /// A table field.
    pub fn table(&self, slot: usize) -> Option<Table<'a>> {
        Table::at(self.buf, self.target(slot)?)
    }

    /// A vector field.
    pub fn vector(&self, slot: usize) -> Option<Vector<'a>> {
        let at = self.target(slot)?;
        let len = read_u32(self.buf, at)? as usize;
        Some(Vector {
            buf: self.buf,
            start: at.checked_add(4)?,
            len,
        })
    }

    /// A string field's bytes (without the NUL).
    pub fn string(&self, slot: usize) -> Option<&'a [u8]> {
        let v = self.vector(slot)?;
        self.buf.get(v.start..v.start.checked_add(v.len)?)
    }

    /// A string field as text to show: lossy, and cut at [`MAX_TEXT`] bytes (with `…`), so
    /// that one long string referred to from many tables costs little each time.
    pub fn text(&self, slot: usize) -> Option<String> {
        self.string(slot).map(|b| {
            let cut = b.get(..MAX_TEXT).unwrap_or(b);
            let mut s = String::from_utf8_lossy(cut).into_owned();
            if cut.len() < b.len() {
                s.push('…');
            }
            s
        })
    }
}

/// One vector of a verified buffer.
#[derive(Debug, Clone, Copy)]
pub struct Vector<'a> {
    buf: &'a [u8],
    /// The byte offset of the first element.
    pub start: usize,
    /// The number of elements.
    pub len: usize,
}

impl<'a> Vector<'a> {
    /// Element `i` of a vector of tables (`IndirectHelper`: the element's uoffset from itself).
    pub fn table(&self, i: usize) -> Option<Table<'a>> {
        let elem = self.start.checked_add(i.checked_mul(4)?)?;
        Table::at(
            self.buf,
            elem.checked_add(read_u32(self.buf, elem)? as usize)?,
        )
    }

    /// Element `i` of a vector of 32-bit scalars.
    pub fn u32(&self, i: usize) -> Option<u32> {
        read_u32(self.buf, self.start.checked_add(i.checked_mul(4)?)?)
    }

    /// Element `i` of a vector of 64-bit scalars.
    pub fn u64(&self, i: usize) -> Option<u64> {
        read_u64(self.buf, self.start.checked_add(i.checked_mul(8)?)?)
    }
}

/// A Program table with no fields: root offset 16, vtable at 8 (size 4), table at 16.
#[cfg(test)]
pub(crate) fn empty_program() -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(16u32.to_le_bytes());
    b.extend(b"ET12");
    b.extend(4u16.to_le_bytes());
    b.extend(4u16.to_le_bytes());
    b.extend([0u8; 4]);
    b.extend(8i32.to_le_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PROGRAM;

    #[test]
    fn an_empty_table_verifies_and_reads_as_absent_fields() {
        let b = empty_program();
        verify(&b, b"ET12", &PROGRAM).unwrap();
        let t = Table::root(&b).unwrap();
        assert!(t.vector(1).is_none());
        assert_eq!(t.u32(0, 7), 7);
    }

    #[test]
    fn the_verifier_refuses_what_flatbuffers_refuses() {
        let mut b = empty_program();
        b[8] = 5; // odd vtable size
        assert!(verify(&b, b"ET12", &PROGRAM)
            .unwrap_err()
            .reason
            .contains("odd"));
        let mut b = empty_program();
        b[0..4].copy_from_slice(&0u32.to_le_bytes());
        assert!(verify(&b, b"ET12", &PROGRAM)
            .unwrap_err()
            .reason
            .contains("zero"));
        let mut b = empty_program();
        b[0..4].copy_from_slice(&2u32.to_le_bytes()); // misaligned table
        assert!(verify(&b, b"ET12", &PROGRAM)
            .unwrap_err()
            .reason
            .contains("aligned"));
        let mut b = empty_program();
        b[16..20].copy_from_slice(&100i32.to_le_bytes()); // vtable before the buffer
        assert!(verify(&b, b"ET12", &PROGRAM).is_err());
        let mut b = empty_program();
        b[8..10].copy_from_slice(&40u16.to_le_bytes()); // vtable past the end
        assert!(verify(&b, b"ET12", &PROGRAM).is_err());
        assert!(verify(&empty_program(), b"ET11", &PROGRAM).is_err());
    }
}
