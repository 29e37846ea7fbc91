//! One FlatBuffers buffer read strictly, by hand: every offset, vtable, field and vector length
//! is checked before it is used, the way `flatbuffers::Verifier` (the FlatBuffers 23 verifier
//! CatBoost 1.2.10 vendors, `contrib/libs/flatbuffers/include/flatbuffers/verifier.h`) checks
//! them, and then some.
//!
//! The verifier's rules kept here: the buffer is at least 12 bytes and under 2 GiB; an offset is
//! 4-aligned, non-zero, below 2^31 and lands inside the buffer (`VerifyOffset`); a table starts
//! 4-aligned, its vtable is 2-aligned, of even size, inside the buffer (`VerifyTableStart`); a
//! scalar field is aligned to its size and inside the buffer (`VerifyField`); a vector's length
//! is 4-aligned and its elements inside the buffer (`VerifyVectorOrString`); a string ends in a
//! NUL (`VerifyString`).
//!
//! Stricter than the verifier, because no FlatBuffers builder writes otherwise and readers
//! differ on such buffers (the C++ verifier follows the offsets inside a vector of tables
//! without `VerifyOffset`, and reads a field lying outside its table's object): every offset
//! inside a vector is checked like any other; a vtable holds at least its own two sizes; a
//! field lies inside its table's object (the vtable's object size). Every object is noted with
//! its bytes, and [`Buffer::finish`] refuses two that overlap (except the vtables a builder
//! shares, and the tables CatBoost's caching serializer shares) and reports the bytes that no
//! object holds but that are not zero padding (data no reader reads). Work is bounded: each
//! object is read once (a second reference to one CatBoost writes once is refused), and the
//! elements read are counted against a budget of a few per byte of the buffer.

use std::collections::HashMap;

/// A fault that stops the read of a buffer: where (a byte offset in the file) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The byte of the file it is about.
    pub at: u64,
    /// What is wrong, in words.
    pub reason: String,
    /// The buffer is past what socair holds in memory for a file of its size: not evidence
    /// against it.
    pub past_bounds: bool,
}

/// A read that may meet a [`Fault`].
pub type Res<T> = Result<T, Fault>;

/// `FLATBUFFERS_MIN_BUFFER_SIZE`: a root offset, a table's vtable offset and a vtable's two sizes.
pub const MIN_BUFFER: usize = 12;

/// `FLATBUFFERS_MAX_BUFFER_SIZE`: the largest signed 32-bit offset.
pub const MAX_BUFFER: usize = i32::MAX as usize;

/// Elements read per byte of the buffer before the read is refused: a sound buffer reads each
/// of its elements once (the shared tables are read once and remembered).
const STEPS_PER_BYTE: u64 = 4;

/// What socair holds per FlatBuffers object it reads, at most (its span, its entry in the map of
/// objects seen, and the reader's own value for it), for the memory bound.
pub const BYTES_PER_OBJECT: u64 = 160;

/// A table: where its object starts, its vtable, the vtable's size and the object's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// The object's first byte (its signed offset to the vtable).
    pub pos: usize,
    vtable: usize,
    vtable_len: usize,
    object_len: usize,
    /// The schema's name of the table, for messages.
    pub kind: &'static str,
}

/// A vector: where its length prefix lies, how many elements, and their size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vector {
    /// The length prefix's first byte.
    pub pos: usize,
    /// Elements.
    pub len: usize,
    /// Bytes per element.
    pub elem: usize,
}

impl Vector {
    /// The first element's byte.
    pub fn data(&self) -> usize {
        self.pos + 4
    }

    /// The elements' bytes (at most the buffer's length: checked when the vector was read).
    pub fn byte_len(&self) -> usize {
        self.len * self.elem
    }
}

/// An object's bytes and what it is (an index into [`Buffer::kinds`]): 12 bytes, so that the
/// objects of a buffer of tiny objects stay within the memory bound.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
    kind: u16,
    shared: bool,
}

/// What [`Buffer::finish`] found in the bytes no object holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unheld {
    /// Non-zero bytes that no object holds.
    pub nonzero: u64,
    /// The first of them, as a file offset.
    pub first: u64,
}

/// A field of a table that the schema does not define: the table, the field's id, its byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndefinedField {
    /// The table's schema name.
    pub table: &'static str,
    /// The field's id (its slot in the vtable).
    pub id: usize,
    /// The field's first byte in the file.
    pub at: u64,
}

/// Undefined fields listed; the rest are counted.
const UNDEFINED_LISTED: usize = 16;

/// One buffer being read.
#[derive(Debug)]
pub struct Buffer<'a> {
    data: &'a [u8],
    /// The file offset of the buffer's first byte.
    base: u64,
    /// What the buffer is, for messages (`the model core`, `CTR table 2`).
    pub what: String,
    spans: Vec<Span>,
    seen: HashMap<u32, u16>,
    /// The names of the kinds of objects met, which spans and `seen` refer to by index.
    kinds: Vec<&'static str>,
    steps: u64,
    budget: u64,
    max_objects: usize,
    /// Fields the schema does not define, the first few.
    pub undefined: Vec<UndefinedField>,
    /// Fields the schema does not define, all of them.
    pub undefined_total: u64,
}

fn le<const N: usize>(data: &[u8], pos: usize) -> Option<[u8; N]> {
    data.get(pos..pos.checked_add(N)?)?.try_into().ok()
}

impl<'a> Buffer<'a> {
    /// A buffer of `data`, whose first byte is byte `base` of a file of `file_len` bytes (whose
    /// memory bound caps the objects read).
    pub fn new(data: &'a [u8], base: u64, file_len: u64, what: impl Into<String>) -> Res<Self> {
        let what = what.into();
        if data.len() < MIN_BUFFER {
            return Err(Fault {
                at: base,
                reason: format!(
                    "{what} is {} bytes, under the 12 a FlatBuffers buffer needs at least",
                    data.len()
                ),
                past_bounds: false,
            });
        }
        if data.len() >= MAX_BUFFER {
            return Err(Fault {
                at: base,
                reason: format!("{what} is 2 GiB or more, past what FlatBuffers addresses"),
                past_bounds: false,
            });
        }
        let room = socair_plugin_kit::model::memory_bound(file_len).saturating_sub(file_len);
        Ok(Buffer {
            data,
            base,
            what,
            spans: Vec::new(),
            seen: HashMap::new(),
            kinds: Vec::new(),
            steps: 0,
            budget: (data.len() as u64).saturating_mul(STEPS_PER_BYTE) + 4096,
            max_objects: usize::try_from(room / BYTES_PER_OBJECT).unwrap_or(usize::MAX),
            undefined: Vec::new(),
            undefined_total: 0,
        })
    }

    /// The file offset of byte `pos` of the buffer.
    pub fn at(&self, pos: usize) -> u64 {
        self.base + pos as u64
    }

    /// The buffer's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }

    /// A fault at byte `pos` of the buffer.
    pub fn fault(&self, pos: usize, reason: impl Into<String>) -> Fault {
        Fault {
            at: self.at(pos),
            reason: format!("{}: {}", self.what, reason.into()),
            past_bounds: false,
        }
    }

    /// The index of the kind `what` (the schema has a few dozen).
    fn kind(&mut self, what: &'static str) -> u16 {
        match self.kinds.iter().position(|k| *k == what) {
            Some(i) => i as u16,
            None => {
                self.kinds.push(what);
                (self.kinds.len() - 1) as u16
            }
        }
    }

    fn kind_name(&self, kind: u16) -> &'static str {
        self.kinds
            .get(usize::from(kind))
            .copied()
            .unwrap_or("an object")
    }

    /// Notes one more object held (`start..end`, of kind `what`), refusing past the memory
    /// bound. Both ends lie inside the buffer, itself under 2^31 bytes (`Buffer::new`).
    fn hold(&mut self, start: usize, end: usize, what: &'static str, shared: bool) -> Res<()> {
        let span = Span {
            start: start as u32,
            end: end as u32,
            kind: self.kind(what),
            shared,
        };
        if self.spans.len() >= self.max_objects {
            return Err(Fault {
                past_bounds: true,
                ..self.fault(
                    span.start as usize,
                    format!(
                        "it holds more than {} objects, past the memory socair reads a file of this size in",
                        self.max_objects
                    ),
                )
            });
        }
        self.spans.push(span);
        Ok(())
    }

    /// Counts `n` elements read against the budget.
    pub fn step(&mut self, n: u64, pos: usize) -> Res<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.budget {
            return Err(self.fault(
                pos,
                format!(
                    "reading its objects takes more than {} steps for {} bytes: objects overlap or are read many times over",
                    self.budget,
                    self.data.len()
                ),
            ));
        }
        Ok(())
    }

    /// The little-endian scalar of `N` bytes at `pos`, which the caller checked lies inside.
    fn raw<const N: usize>(&self, pos: usize) -> Res<[u8; N]> {
        le::<N>(self.data, pos).ok_or_else(|| self.fault(pos, "a read past the end of the buffer"))
    }

    /// The `u8` at `pos`.
    pub fn u8_at(&self, pos: usize) -> Res<u8> {
        Ok(self.raw::<1>(pos)?[0])
    }

    /// The `u16` at `pos`.
    pub fn u16_at(&self, pos: usize) -> Res<u16> {
        Ok(u16::from_le_bytes(self.raw(pos)?))
    }

    /// The `u32` at `pos`.
    pub fn u32_at(&self, pos: usize) -> Res<u32> {
        Ok(u32::from_le_bytes(self.raw(pos)?))
    }

    /// The `i32` at `pos`.
    pub fn i32_at(&self, pos: usize) -> Res<i32> {
        Ok(i32::from_le_bytes(self.raw(pos)?))
    }

    /// The `u64` at `pos`.
    pub fn u64_at(&self, pos: usize) -> Res<u64> {
        Ok(u64::from_le_bytes(self.raw(pos)?))
    }

    /// The `f64` at `pos`.
    pub fn f64_at(&self, pos: usize) -> Res<f64> {
        Ok(f64::from_le_bytes(self.raw(pos)?))
    }

    /// Notes that the object at `pos` is read as `what`: a second reference to it is refused,
    /// unless both read it as the same `shared` kind (then `false`: the caller remembers it).
    fn enter(&mut self, pos: usize, what: &'static str, shared: bool) -> Res<bool> {
        let kind = self.kind(what);
        match self.seen.get(&(pos as u32)) {
            None => {
                self.seen.insert(pos as u32, kind);
                Ok(true)
            }
            Some(&before) if shared && before == kind => Ok(false),
            Some(&before) => Err(self.fault(
                pos,
                format!(
                    "the object at byte {} is referenced twice (as {} and as {what}); CatBoost writes it once, and readers that follow each reference read it differently",
                    self.at(pos),
                    self.kind_name(before)
                ),
            )),
        }
    }

    /// The offset stored at `pos`, checked as `VerifyOffset` checks it: the target's position.
    pub fn offset_at(&self, pos: usize, what: &str) -> Res<usize> {
        if !pos.is_multiple_of(4) {
            return Err(self.fault(pos, format!("the offset to {what} is not 4-aligned")));
        }
        let o = self.u32_at(pos)?;
        if o == 0 {
            return Err(self.fault(pos, format!("the offset to {what} is 0 (points to itself)")));
        }
        if o > i32::MAX as u32 {
            return Err(self.fault(pos, format!("the offset to {what} ({o}) is past 2^31")));
        }
        let target = pos + o as usize;
        if target >= self.data.len() {
            return Err(self.fault(
                pos,
                format!(
                    "the offset to {what} ({o}) points past the end of the {}-byte buffer",
                    self.data.len()
                ),
            ));
        }
        Ok(target)
    }

    /// The root table, of schema type `kind` with `fields` fields.
    pub fn root(&mut self, kind: &'static str, fields: usize) -> Res<Table> {
        self.hold(0, 4, "the root offset", false)?;
        let pos = self.offset_at(0, kind)?;
        Ok(self.table(pos, kind, fields, false)?.0)
    }

    /// The table at `pos`, of schema type `kind` with `fields` fields (`shared`: CatBoost's
    /// caching serializer may reference it more than once). Also whether this is the first
    /// reference to it.
    pub fn table(
        &mut self,
        pos: usize,
        kind: &'static str,
        fields: usize,
        shared: bool,
    ) -> Res<(Table, bool)> {
        self.step(1, pos)?;
        if !pos.is_multiple_of(4) || pos + 4 > self.data.len() {
            return Err(self.fault(
                pos,
                format!("the {kind} table is not 4-aligned inside the buffer"),
            ));
        }
        let soffset = i64::from(self.i32_at(pos)?);
        let vtable = pos as i64 - soffset;
        if vtable < 0 || vtable as usize + 4 > self.data.len() || vtable % 2 != 0 {
            return Err(self.fault(
                pos,
                format!("the {kind} table's vtable offset ({soffset}) points outside the buffer or is odd"),
            ));
        }
        let vtable = vtable as usize;
        let vtable_len = usize::from(self.u16_at(vtable)?);
        let object_len = usize::from(self.u16_at(vtable + 2)?);
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) || vtable + vtable_len > self.data.len()
        {
            return Err(self.fault(
                vtable,
                format!("the {kind} table's vtable size ({vtable_len}) is odd, under 4 or past the buffer"),
            ));
        }
        if object_len < 4 || pos + object_len > self.data.len() {
            return Err(self.fault(
                vtable,
                format!(
                    "the {kind} table's object size ({object_len}) is under 4 or past the buffer"
                ),
            ));
        }
        let t = Table {
            pos,
            vtable,
            vtable_len,
            object_len,
            kind,
        };
        let first = self.enter(pos, kind, shared)?;
        if !first {
            return Ok((t, false));
        }
        let slots = (vtable_len - 4) / 2;
        self.step(slots as u64, vtable)?;
        for id in 0..slots {
            let voffset = usize::from(self.u16_at(vtable + 4 + 2 * id)?);
            if voffset == 0 {
                continue;
            }
            if voffset < 4 || voffset >= object_len {
                return Err(self.fault(
                    vtable + 4 + 2 * id,
                    format!("field {id} of the {kind} table lies outside the table's {object_len}-byte object"),
                ));
            }
            if id >= fields {
                self.undefined_total += 1;
                if self.undefined.len() < UNDEFINED_LISTED {
                    self.undefined.push(UndefinedField {
                        table: kind,
                        id,
                        at: self.at(pos + voffset),
                    });
                }
            }
        }
        self.hold(pos, pos + object_len, kind, shared)?;
        self.hold(vtable, vtable + vtable_len, "a vtable", true)?;
        Ok((t, true))
    }

    /// Where field `id` of `t` lies, when present: `size` bytes aligned to `align`, inside the
    /// table's object.
    pub fn field(&self, t: &Table, id: usize, size: usize, align: usize) -> Res<Option<usize>> {
        let slot = 4 + 2 * id;
        if slot + 2 > t.vtable_len {
            return Ok(None);
        }
        let voffset = usize::from(self.u16_at(t.vtable + slot)?);
        if voffset == 0 {
            return Ok(None);
        }
        if voffset + size > t.object_len {
            return Err(self.fault(
                t.pos + voffset,
                format!(
                    "field {id} of the {} table runs past the table's {}-byte object",
                    t.kind, t.object_len
                ),
            ));
        }
        let pos = t.pos + voffset;
        if !pos.is_multiple_of(align) {
            return Err(self.fault(
                pos,
                format!("field {id} of the {} table is not {align}-aligned", t.kind),
            ));
        }
        Ok(Some(pos))
    }

    /// A `u8` (or `bool`, or byte enum) field, or `default`.
    pub fn u8_field(&self, t: &Table, id: usize, default: u8) -> Res<u8> {
        match self.field(t, id, 1, 1)? {
            Some(p) => self.u8_at(p),
            None => Ok(default),
        }
    }

    /// A `bool` field, or `default`: a byte other than 0 and 1 is refused (C++ reads any
    /// non-zero byte as true, other readers do not).
    pub fn bool_field(&self, t: &Table, id: usize, default: bool) -> Res<bool> {
        match self.field(t, id, 1, 1)? {
            Some(p) => match self.u8_at(p)? {
                0 => Ok(false),
                1 => Ok(true),
                b => Err(self.fault(
                    p,
                    format!(
                        "bool field {id} of the {} table holds {b}, not 0 or 1",
                        t.kind
                    ),
                )),
            },
            None => Ok(default),
        }
    }

    /// An `int` field, or `default`.
    pub fn i32_field(&self, t: &Table, id: usize, default: i32) -> Res<i32> {
        match self.field(t, id, 4, 4)? {
            Some(p) => self.i32_at(p),
            None => Ok(default),
        }
    }

    /// A `float` field, or `default`.
    pub fn f32_field(&self, t: &Table, id: usize, default: f32) -> Res<f32> {
        match self.field(t, id, 4, 4)? {
            Some(p) => Ok(f32::from_le_bytes(self.raw(p)?)),
            None => Ok(default),
        }
    }

    /// A `double` field, or `default`.
    pub fn f64_field(&self, t: &Table, id: usize, default: f64) -> Res<f64> {
        match self.field(t, id, 8, 8)? {
            Some(p) => self.f64_at(p),
            None => Ok(default),
        }
    }

    /// The target of an offset field, when present.
    pub fn offset_field(&self, t: &Table, id: usize, what: &str) -> Res<Option<usize>> {
        match self.field(t, id, 4, 4)? {
            Some(p) => Ok(Some(self.offset_at(p, what)?)),
            None => Ok(None),
        }
    }

    /// The vector at `pos` of `elem`-byte elements, named `what`.
    pub fn vector(&mut self, pos: usize, elem: usize, what: &'static str) -> Res<Vector> {
        self.step(1, pos)?;
        if !pos.is_multiple_of(4) || pos + 4 > self.data.len() {
            return Err(self.fault(
                pos,
                format!("the length of {what} is not 4-aligned inside the buffer"),
            ));
        }
        let len = self.u32_at(pos)? as usize;
        if len >= MAX_BUFFER / elem.max(1) {
            return Err(self.fault(pos, format!("{what} claims {len} elements, past 2 GiB")));
        }
        let bytes = 4 + len * elem;
        if bytes >= self.data.len() || pos > self.data.len() - bytes {
            return Err(self.fault(
                pos,
                format!(
                    "{what} claims {len} elements of {elem} bytes, past the end of the {}-byte buffer",
                    self.data.len()
                ),
            ));
        }
        self.enter(pos, what, false)?;
        self.hold(pos, pos + bytes, what, false)?;
        Ok(Vector { pos, len, elem })
    }

    /// A vector field, when present.
    pub fn vector_field(
        &mut self,
        t: &Table,
        id: usize,
        elem: usize,
        what: &'static str,
    ) -> Res<Option<Vector>> {
        match self.offset_field(t, id, what)? {
            Some(p) => Ok(Some(self.vector(p, elem, what)?)),
            None => Ok(None),
        }
    }

    /// The string at `pos`: its bytes, without the NUL that must follow them.
    pub fn string(&mut self, pos: usize, what: &'static str) -> Res<&'a [u8]> {
        let v = self.vector(pos, 1, what)?;
        let end = v.data() + v.len;
        if self.data.get(end) != Some(&0) {
            return Err(self.fault(end, format!("{what} does not end in a NUL byte")));
        }
        if let Some(last) = self.spans.last_mut() {
            last.end = (end + 1) as u32;
        }
        self.step(v.len as u64 / 64, pos)?;
        Ok(self.data.get(v.data()..end).unwrap_or_default())
    }

    /// A string field, when present.
    pub fn string_field(
        &mut self,
        t: &Table,
        id: usize,
        what: &'static str,
    ) -> Res<Option<&'a [u8]>> {
        match self.offset_field(t, id, what)? {
            Some(p) => Ok(Some(self.string(p, what)?)),
            None => Ok(None),
        }
    }

    /// The target of element `i` of a vector of offsets.
    pub fn element(&mut self, v: &Vector, i: usize, what: &str) -> Res<usize> {
        self.step(1, v.pos)?;
        self.offset_at(v.data() + 4 * i, what)
    }

    /// Ends the read: refuses objects that overlap, and reports the bytes no object holds that
    /// are not zero.
    pub fn finish(mut self) -> Res<Unheld> {
        self.spans.sort_by_key(|s| (s.start, s.end));
        let mut unheld = Unheld::default();
        let mut covered = 0usize;
        let mut last: Option<Span> = None;
        for s in &self.spans {
            let (start, end) = (s.start as usize, s.end as usize);
            if let Some(prev) = last {
                if start < prev.end as usize {
                    let identical_shared =
                        s.shared && prev.shared && s.start == prev.start && s.end == prev.end;
                    if !identical_shared {
                        return Err(self.fault(
                            start,
                            format!(
                                "{} (bytes {}..{}) overlaps {} (bytes {}..{}): readers that take either one read the other differently",
                                self.kind_name(s.kind),
                                self.at(start),
                                self.at(end),
                                self.kind_name(prev.kind),
                                self.at(prev.start as usize),
                                self.at(prev.end as usize)
                            ),
                        ));
                    }
                }
            }
            self.note_gap(covered, start, &mut unheld);
            covered = covered.max(end);
            if last.is_none_or(|p| s.end > p.end) {
                last = Some(*s);
            }
        }
        self.note_gap(covered, self.data.len(), &mut unheld);
        Ok(unheld)
    }

    fn note_gap(&self, from: usize, to: usize, unheld: &mut Unheld) {
        if from >= to {
            return;
        }
        let gap = self.data.get(from..to).unwrap_or_default();
        for (i, &b) in gap.iter().enumerate() {
            if b != 0 {
                if unheld.nonzero == 0 {
                    unheld.first = self.at(from + i);
                }
                unheld.nonzero += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-built buffer: root offset 12, vtable at 4 (size 8, object 12, field 0 at 4,
    /// field 1 at 8), table at 12 (soffset 8, an int 7, an offset to the vector at 24),
    /// vector of two ints at 24.
    fn sample() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&12u32.to_le_bytes());
        b.extend_from_slice(&8u16.to_le_bytes());
        b.extend_from_slice(&12u16.to_le_bytes());
        b.extend_from_slice(&4u16.to_le_bytes());
        b.extend_from_slice(&8u16.to_le_bytes());
        b.extend_from_slice(&8i32.to_le_bytes());
        b.extend_from_slice(&7i32.to_le_bytes());
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&5i32.to_le_bytes());
        b.extend_from_slice(&6i32.to_le_bytes());
        b
    }

    #[test]
    fn a_sound_buffer_reads_and_is_wholly_held() {
        let data = sample();
        let mut fb = Buffer::new(&data, 100, 1000, "test").unwrap();
        let t = fb.root("T", 2).unwrap();
        assert_eq!(fb.i32_field(&t, 0, -1).unwrap(), 7);
        assert_eq!(fb.i32_field(&t, 5, -1).unwrap(), -1);
        let v = fb.vector_field(&t, 1, 4, "v").unwrap().unwrap();
        assert_eq!((v.len, v.data()), (2, 28));
        assert_eq!(fb.i32_at(v.data() + 4).unwrap(), 6);
        assert_eq!(fb.finish().unwrap(), Unheld::default());
    }

    #[test]
    fn bad_offsets_vtables_and_lengths_are_refused() {
        let mut data = sample();
        data[0] = 200;
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        assert!(fb.root("T", 2).unwrap_err().reason.contains("past the end"));

        let mut data = sample();
        data[12] = 0x80; // soffset 128: the vtable would lie before the buffer
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        assert!(fb
            .root("T", 2)
            .unwrap_err()
            .reason
            .contains("vtable offset"));

        let mut data = sample();
        data[24] = 200; // the vector claims 200 ints
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        let t = fb.root("T", 2).unwrap();
        assert!(fb
            .vector_field(&t, 1, 4, "v")
            .unwrap_err()
            .reason
            .contains("past the end"));

        let mut data = sample();
        data[6] = 6; // object size 6: field 1 (at 8) lies outside the object
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        assert!(fb
            .root("T", 2)
            .unwrap_err()
            .reason
            .contains("outside the table"));

        assert!(Buffer::new(&[0; 8], 0, 8, "test").is_err());
    }

    #[test]
    fn past_the_memory_bound_is_not_evidence() {
        let data = sample();
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        fb.max_objects = 2;
        let fault = fb.root("T", 2).unwrap_err();
        assert!(fault.past_bounds, "{fault:?}");
        assert!(fault.reason.contains("more than 2 objects"));
    }

    #[test]
    fn undefined_fields_overlaps_and_hidden_bytes_are_seen() {
        let data = sample();
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        fb.root("T", 1).unwrap();
        assert_eq!(fb.undefined_total, 1);
        assert_eq!(fb.undefined[0].id, 1);

        // A second reference to the same vector is refused.
        let mut fb = Buffer::new(&data, 0, 1000, "test").unwrap();
        let t = fb.root("T", 2).unwrap();
        fb.vector_field(&t, 1, 4, "v").unwrap();
        assert!(fb
            .vector(24, 4, "v")
            .unwrap_err()
            .reason
            .contains("referenced twice"));

        // Bytes nothing holds.
        let mut data = sample();
        data.extend_from_slice(&[0, 9, 0, 0]);
        let mut fb = Buffer::new(&data, 10, 1000, "test").unwrap();
        let t = fb.root("T", 2).unwrap();
        fb.vector_field(&t, 1, 4, "v").unwrap();
        let unheld = fb.finish().unwrap();
        assert_eq!((unheld.nonzero, unheld.first), (1, 10 + 37));
    }
}
