//! The object walk: a binary torch7 file read object by object as torch7's `File:readObject`
//! reads it (torch/torch7 814ea4af, File.lua) and as torchfile 0.1.0's `T7Reader.read_obj`
//! reads it (torchfile.py), nothing built but what the checks need.
//!
//! Binary mode of a 64-bit build: int32 type tags, indices, counts and string lengths, 8-byte
//! longs (sizes, strides, offsets, storage counts), doubles, all little-endian. A table, a
//! torch object or a recursive function carries an index: an index already read is a
//! reference to that object (no bytes follow), a new one is the object itself, registered
//! before its contents are read, so cycles are references and no object is read twice.
//! Nesting is bounded ([`MAX_DEPTH`]), every count and length is checked against the bytes
//! left before use, and the walk stops at the first thing neither loader could read past.

use crate::classes::{classify, Class, Elem};
use socair_plugin_kit::model::Severity;
use std::collections::{HashMap, HashSet};

/// Objects nested deeper than this are not read (torchfile's reader recurses once per level
/// and stops at Python's recursion limit, 1,000 frames; torch7's at Lua's stack).
pub const MAX_DEPTH: usize = 200;

/// The longest name kept for a place or a tensor, in characters.
const NAME_CHARS: usize = 200;

/// Type tags (File.lua).
const TYPE_NIL: i32 = 0;
const TYPE_NUMBER: i32 = 1;
const TYPE_STRING: i32 = 2;
const TYPE_TABLE: i32 = 3;
const TYPE_TORCH: i32 = 4;
const TYPE_BOOLEAN: i32 = 5;
const TYPE_FUNCTION: i32 = 6;
const LEGACY_TYPE_RECUR_FUNCTION: i32 = 7;
const TYPE_RECUR_FUNCTION: i32 = 8;

/// Why the walk stopped before the end of the root object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopKind {
    /// The bytes ran out: the file is cut (or only its head was given).
    Cut,
    /// Bytes neither loader reads as a torch7 object.
    Malformed,
    /// A layout this reader does not know, or a bound it keeps: not evidence against the file.
    NotRead,
}

/// Where and why the walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// What kind of stop.
    pub kind: StopKind,
    /// The byte offset.
    pub at: usize,
    /// The byte offset and path.
    pub place: String,
    /// Why.
    pub reason: String,
}

/// A storage read: its element type, its count and where its elements start in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageData {
    /// Element type.
    pub elem: Elem,
    /// Elements.
    pub count: u64,
    /// File offset of the first element.
    pub data: u64,
}

/// A tensor read, with the storage it views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorView {
    /// Its path of keys from the root (`(root)` for the root).
    pub name: String,
    /// The byte offset of its type tag.
    pub at: u64,
    /// Sizes, outermost first (each checked non-negative).
    pub sizes: Vec<u64>,
    /// Strides in elements (each checked non-negative).
    pub strides: Vec<u64>,
    /// The first element's index in the storage, from 0.
    pub offset: u64,
    /// The storage; its every element the view reaches is checked inside it.
    pub storage: StorageData,
}

/// What an index names, once read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Table,
    Torch,
    Function,
    Storage(StorageData),
    Tensor,
}

/// A value read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Nil,
    Number(f64),
    Bool(bool),
    Str(usize, usize),
    Object(Known),
}

/// Everything the walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// Findings in the order found: severity, place, reason.
    pub findings: Vec<(Severity, String, String)>,
    /// Findings past the ones kept.
    pub findings_more: u64,
    /// The worst of those.
    pub more_worst: Option<Severity>,
    /// Tensors, each index once, in the order read (empty ones left out).
    pub tensors: Vec<TensorView>,
    /// Storages no tensor views, by their path.
    pub storages: Vec<(String, StorageData)>,
    /// Where the walk stopped, if before the end of the root object.
    pub stop: Option<Stop>,
    /// The first class read whose layout only its own package knows (reading past it is a
    /// guess, so a stop after it is not evidence against the file).
    pub guessed_after: Option<String>,
    /// Bytes after the root object.
    pub trailing: u64,
    /// Tables read.
    pub tables: u64,
    /// Class names read, each once, in order (at most 64).
    pub classes: Vec<String>,
    /// Torch objects read.
    pub objects: u64,
}

/// Findings kept in [`Walked::findings`]; the rest are counted.
const FINDINGS_KEPT: usize = 1_000;

struct Walker<'a> {
    bytes: &'a [u8],
    pos: usize,
    known: HashMap<i32, Known>,
    path: Vec<String>,
    storages: Vec<(String, StorageData)>,
    /// The data offsets of storages a tensor views (a storage's offset is its own).
    viewed: HashSet<u64>,
    out: Walked,
}

/// Walks the root object of `bytes`.
pub fn walk(bytes: &[u8]) -> Walked {
    let mut w = Walker {
        bytes,
        pos: 0,
        known: HashMap::new(),
        path: Vec::new(),
        storages: Vec::new(),
        viewed: HashSet::new(),
        out: Walked::default(),
    };
    match w.object(0) {
        Ok(_) => w.out.trailing = (bytes.len() - w.pos.min(bytes.len())) as u64,
        Err(stop) => w.out.stop = Some(stop),
    }
    let viewed = std::mem::take(&mut w.viewed);
    w.out.storages = w
        .storages
        .drain(..)
        .filter(|(_, s)| !viewed.contains(&s.data))
        .collect();
    w.out
}

/// Text of at most [`NAME_CHARS`] characters from bytes.
fn text(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.chars().count() > NAME_CHARS {
        let mut t: String = s.chars().take(NAME_CHARS).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

impl Walker<'_> {
    fn name(&self) -> String {
        if self.path.is_empty() {
            return "(root)".into();
        }
        // Joined until it is longer than a name is kept: a deep path costs no more than that.
        let mut joined = String::new();
        for (i, piece) in self.path.iter().enumerate() {
            if i > 0 {
                joined.push('.');
            }
            joined.push_str(piece);
            if joined.len() > NAME_CHARS * 4 {
                break;
            }
        }
        text(joined.as_bytes())
    }

    fn place(&self, at: usize) -> String {
        if self.path.is_empty() {
            format!("byte {at}")
        } else {
            format!("byte {at} ({})", self.name())
        }
    }

    fn note(&mut self, severity: Severity, at: usize, reason: String) {
        if self.out.findings.len() < FINDINGS_KEPT {
            let place = self.place(at);
            self.out.findings.push((severity, place, reason));
        } else {
            self.out.findings_more += 1;
            self.out.more_worst = self.out.more_worst.max(Some(severity));
        }
    }

    fn stop(&self, kind: StopKind, at: usize, reason: String) -> Stop {
        Stop {
            kind,
            at,
            place: self.place(at),
            reason,
        }
    }

    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], Stop> {
        let at = self.pos;
        match self.bytes.get(at..at.saturating_add(n)) {
            Some(b) if at.checked_add(n).is_some() => {
                self.pos = at + n;
                Ok(b)
            }
            _ => Err(self.stop(
                StopKind::Cut,
                at,
                format!(
                    "the file is cut: {what} needs {n} bytes and {} are left",
                    self.left()
                ),
            )),
        }
    }

    fn i32(&mut self, what: &str) -> Result<i32, Stop> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self, what: &str) -> Result<i64, Stop> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_le_bytes(a))
    }

    /// A length-prefixed string (`readChar(readInt())`): its start and length.
    fn string(&mut self, what: &str) -> Result<(usize, usize), Stop> {
        let at = self.pos;
        let n = self.i32(what)?;
        let Ok(n) = usize::try_from(n) else {
            return Err(self.stop(
                StopKind::Malformed,
                at,
                format!("{what} has a negative length {n}: torch7's readChar refuses it"),
            ));
        };
        let start = self.pos;
        self.take(n, what)?;
        Ok((start, n))
    }

    fn object(&mut self, depth: usize) -> Result<Value, Stop> {
        let at = self.pos;
        if depth > MAX_DEPTH {
            return Err(self.stop(
                StopKind::NotRead,
                at,
                format!("objects nested deeper than {MAX_DEPTH}: not read further"),
            ));
        }
        let tag = self.i32("a type tag")?;
        match tag {
            TYPE_NIL => Ok(Value::Nil),
            TYPE_NUMBER => {
                let b = self.take(8, "a number")?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(Value::Number(f64::from_le_bytes(a)))
            }
            TYPE_BOOLEAN => Ok(Value::Bool(self.i32("a boolean")? == 1)),
            TYPE_STRING => {
                let (s, n) = self.string("a string")?;
                Ok(Value::Str(s, n))
            }
            TYPE_FUNCTION => {
                // torch7 reads no index for it; torchfile reads one: the two read different
                // objects from here on. torch7's layout is followed (it is the one that runs it).
                self.note(
                    Severity::Fail,
                    at,
                    "a Lua function of the old TYPE_FUNCTION tag: torch7 reads it without an index and torchfile with one, so the two readers read the rest of the file differently".into(),
                );
                self.function(at, None, depth)
            }
            TYPE_TABLE | TYPE_TORCH | LEGACY_TYPE_RECUR_FUNCTION | TYPE_RECUR_FUNCTION => {
                let index = self.i32("an object index")?;
                if let Some(k) = self.known.get(&index) {
                    return Ok(Value::Object(*k));
                }
                match tag {
                    TYPE_TABLE => self.table(index, depth),
                    TYPE_TORCH => self.torch(at, index, depth),
                    _ => self.function(at, Some(index), depth),
                }
            }
            other => Err(self.stop(
                StopKind::Malformed,
                at,
                format!("type tag {other} is none of torch7's (0 to 8): its readObject raises 'unknown object'"),
            )),
        }
    }

    /// A serialized Lua function: its bytecode, then its upvalues.
    fn function(&mut self, at: usize, index: Option<i32>, depth: usize) -> Result<Value, Stop> {
        let (start, n) = self.string("a function's bytecode")?;
        let code = self.bytes.get(start..start + n).unwrap_or_default();
        let kind = if code.starts_with(b"\x1bLJ") {
            "LuaJIT bytecode"
        } else if code.starts_with(b"\x1bLua") {
            "Lua bytecode"
        } else {
            "bytes (not a bytecode header Lua or LuaJIT writes)"
        };
        self.note(
            Severity::Fail,
            at,
            format!("a serialized Lua function (code): {n} bytes of {kind} that torch7's File:readObject hands to loadstring, its upvalues set from the file: code that runs when the object is used"),
        );
        if let Some(i) = index {
            self.known.insert(i, Known::Function);
        }
        self.path.push("<upvalues>".into());
        let r = self.object(depth + 1);
        self.path.pop();
        r?;
        Ok(Value::Object(Known::Function))
    }

    fn table(&mut self, index: i32, depth: usize) -> Result<Value, Stop> {
        self.known.insert(index, Known::Table);
        self.out.tables += 1;
        let size = self.i32("a table's size")?;
        // A negative size reads no entries in either loader (`for i = 1,size`, `range`).
        let size = usize::try_from(size).unwrap_or(0);
        if size.saturating_mul(8) > self.left() {
            let at = self.pos;
            return Err(self.stop(
                StopKind::Cut,
                at,
                format!("the file is cut: a table of {size} entries needs at least {} bytes and {} are left", size.saturating_mul(8), self.left()),
            ));
        }
        for _ in 0..size {
            let key_at = self.pos;
            let key = self.object(depth + 1)?;
            let piece = match key {
                Value::Nil => {
                    self.note(Severity::Fail, key_at, "a table key that is nil: torch7 raises 'table index is nil' where torchfile keeps it, so the two readers disagree".into());
                    "nil".to_owned()
                }
                Value::Number(x) if x.is_nan() => {
                    self.note(Severity::Fail, key_at, "a table key that is NaN: torch7 raises 'table index is NaN' where torchfile keeps it, so the two readers disagree".into());
                    "nan".to_owned()
                }
                Value::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
                Value::Number(x) => format!("{x}"),
                Value::Bool(b) => b.to_string(),
                Value::Str(s, n) => text(self.bytes.get(s..s + n).unwrap_or_default()),
                Value::Object(_) => "<object>".to_owned(),
            };
            self.path.push(piece);
            let r = self.object(depth + 1);
            self.path.pop();
            r?;
        }
        Ok(Value::Object(Known::Table))
    }

    fn class_name(&mut self, at: usize) -> Result<Vec<u8>, Stop> {
        let (s, n) = self.string("a torch object's version")?;
        let version = self.bytes.get(s..s + n).unwrap_or_default().to_vec();
        let Some(number) = version.strip_prefix(b"V ") else {
            // Written before versions existed: the string is the class name (File.lua).
            return Ok(version);
        };
        // torch7: tonumber(version:match('^V (.*)$')); torchfile: int(float(...)). Both read
        // a plain decimal alike; anything else they read differently (or one refuses).
        let plain = !number.is_empty()
            && number.iter().all(|c| c.is_ascii_digit() || *c == b'.')
            && number.iter().filter(|c| **c == b'.').count() <= 1
            && number[0] != b'.';
        if !plain {
            return Err(self.stop(
                StopKind::Malformed,
                at,
                format!("version string {:?} is no plain number: torch7 and torchfile read it differently", text(&version)),
            ));
        }
        let (s, n) = self.string("a torch object's class name")?;
        Ok(self.bytes.get(s..s + n).unwrap_or_default().to_vec())
    }

    fn torch(&mut self, at: usize, index: i32, depth: usize) -> Result<Value, Stop> {
        let name = self.class_name(at)?;
        let shown = text(&name);
        self.out.objects += 1;
        if self.out.classes.len() < 64 && !self.out.classes.contains(&shown) {
            self.out.classes.push(shown.clone());
        }
        match classify(&name) {
            Class::Tensor { elem, cuda } => {
                self.device_note(at, &shown, cuda, elem);
                self.known.insert(index, Known::Tensor);
                self.tensor(at, elem, depth)?;
                Ok(Value::Object(Known::Tensor))
            }
            Class::Storage { elem, cuda } => {
                self.device_note(at, &shown, cuda, elem);
                let s = self.storage(elem)?;
                self.known.insert(index, Known::Storage(s));
                let name = self.name();
                self.storages.push((name, s));
                Ok(Value::Object(Known::Storage(s)))
            }
            Class::Opaque(why) => Err(self.stop(
                StopKind::NotRead,
                at,
                format!("class {shown}: {why}; the rest of the file is not read"),
            )),
            Class::Tds { hash } => {
                self.note(Severity::Lead, at, format!("class {shown}: its reader is the tds package's, not torch7's; read here as torchfile reads it"));
                self.guessed(&shown);
                self.known.insert(index, Known::Torch);
                self.tds(hash, depth)
            }
            class => {
                match class {
                    Class::FileClass => self.note(Severity::Fail, at, format!("class {shown}: one of torch7's file classes (a PipeFile runs a shell command); torch7 has no factory for it and refuses the file, torchfile reads it as a plain object, so the readers disagree")),
                    Class::Unknown => {
                        self.note(Severity::Lead, at, format!("class {shown} is none of torch7's or nn's: torch7 builds it only when the package defining it is loaded, and then runs that package's read method, which this reader cannot see; read here as torchfile reads it (one object)"));
                        self.guessed(&shown);
                    }
                    _ => {}
                }
                self.known.insert(index, Known::Torch);
                let body_at = self.pos;
                let body = self.object(depth + 1)?;
                if !matches!(body, Value::Object(Known::Table)) {
                    self.note(Severity::Lead, body_at, format!("the body of a {shown} is not a table: torch7 copies its fields with pairs(), which raises for anything else"));
                }
                Ok(Value::Object(Known::Torch))
            }
        }
    }

    fn guessed(&mut self, class: &str) {
        if self.out.guessed_after.is_none() {
            self.out.guessed_after = Some(class.to_owned());
        }
    }

    fn device_note(&mut self, at: usize, class: &str, cuda: bool, elem: Elem) {
        if cuda {
            self.note(Severity::Lead, at, format!("class {class} is cutorch's: torch7 reads it only with cutorch loaded, onto a GPU; read here as torchfile reads it, as {}", elem.dtype));
        } else if elem.torch == "Half" {
            self.note(Severity::Lead, at, format!("class {class}: torchfile 0.1.0 refuses it (NotImplementedError) where torch7 reads it"));
        }
    }

    /// tds.Vec and tds.Hash as torchfile reads them (`tds_Vec_reader`, `tds_Hash_reader`).
    fn tds(&mut self, hash: bool, depth: usize) -> Result<Value, Stop> {
        let size = usize::try_from(self.i32("a tds size")?).unwrap_or(0);
        self.path.push("<meta>".into());
        let r = self.object(depth + 1);
        self.path.pop();
        r?;
        let per = if hash { 8 } else { 4 };
        if size.saturating_mul(per) > self.left() {
            let at = self.pos;
            return Err(self.stop(
                StopKind::Cut,
                at,
                format!(
                    "the file is cut: {size} tds entries do not fit in the {} bytes left",
                    self.left()
                ),
            ));
        }
        for i in 0..size {
            self.path.push((i + 1).to_string());
            let r = self.object(depth + 1).and_then(|_| {
                if hash {
                    self.object(depth + 1)
                } else {
                    Ok(Value::Nil)
                }
            });
            self.path.pop();
            r?;
        }
        Ok(Value::Object(Known::Torch))
    }

    /// generic/Storage.c `torch_Storage_(read)`: a long count, then the raw elements.
    fn storage(&mut self, elem: Elem) -> Result<StorageData, Stop> {
        let at = self.pos;
        let count = self.i64("a storage's size")?;
        let Ok(count) = u64::try_from(count) else {
            return Err(self.stop(
                StopKind::Malformed,
                at,
                format!("a storage of {count} elements: a negative size"),
            ));
        };
        let data = self.pos;
        let len = count
            .checked_mul(elem.size)
            .and_then(|n| usize::try_from(n).ok());
        match len {
            Some(n) if n <= self.left() => {
                self.pos += n;
                Ok(StorageData { elem, count, data: data as u64 })
            }
            _ => Err(self.stop(
                StopKind::Cut,
                data,
                format!("the file is cut: a {}Storage of {count} elements needs {} bytes and {} are left (torch7's readRaw refuses a short read)", elem.torch, count.saturating_mul(elem.size), self.left()),
            )),
        }
    }

    /// generic/Tensor.c `torch_Tensor_(read)`: an int dimension count, the sizes and strides
    /// (longs), the 1-based storage offset (a long), then the storage object. torch7 checks
    /// none of them against the storage; torchfile's `as_strided` neither.
    fn tensor(&mut self, at: usize, elem: Elem, depth: usize) -> Result<(), Stop> {
        let dims_at = self.pos;
        let ndim = self.i32("a tensor's dimension count")?;
        let Ok(ndim) = usize::try_from(ndim) else {
            return Err(self.stop(StopKind::Malformed, dims_at, format!("a tensor of {ndim} dimensions: torch7 allocates sizeof(long) times it, torchfile refuses it")));
        };
        if ndim.saturating_mul(16).saturating_add(8) > self.left() {
            return Err(self.stop(
                StopKind::Cut,
                dims_at,
                format!(
                    "the file is cut: a tensor of {ndim} dimensions needs {} bytes and {} are left",
                    ndim.saturating_mul(16).saturating_add(8),
                    self.left()
                ),
            ));
        }
        let mut sizes = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            sizes.push(self.i64("a size")?);
        }
        let mut strides = Vec::with_capacity(ndim);
        for _ in 0..ndim {
            strides.push(self.i64("a stride")?);
        }
        let offset1 = self.i64("a storage offset")?;
        let storage_at = self.pos;
        let storage = self.object(depth + 1)?;
        if ndim == 0 {
            // An empty tensor (`torch.FloatTensor()`): torchfile reads an empty array and torch7
            // a tensor of no elements, whatever the storage.
            return Ok(());
        }
        let data = match storage {
            Value::Object(Known::Storage(s)) if s.elem == elem => s,
            other => {
                let what = match other {
                    Value::Nil => "no storage (nil)".to_owned(),
                    Value::Object(Known::Storage(s)) => format!("a {}Storage", s.elem.torch),
                    _ => "an object that is no storage".to_owned(),
                };
                self.note(Severity::Fail, storage_at, format!("a {}Tensor of {ndim} dimensions over {what}: torch7 keeps no storage (luaT_toudata gives NULL) and indexes it, torchfile reads something else, so the readers disagree", elem.torch));
                return Ok(());
            }
        };
        self.check_view(at, elem, &sizes, &strides, offset1, data);
        Ok(())
    }

    fn check_view(
        &mut self,
        at: usize,
        elem: Elem,
        sizes: &[i64],
        strides: &[i64],
        offset1: i64,
        data: StorageData,
    ) {
        let (Ok(sizes), Ok(strides)) = (
            sizes
                .iter()
                .map(|&s| u64::try_from(s))
                .collect::<Result<Vec<u64>, _>>(),
            strides
                .iter()
                .map(|&s| u64::try_from(s))
                .collect::<Result<Vec<u64>, _>>(),
        ) else {
            let severity = if sizes.iter().any(|&s| s < 0) {
                Severity::Fail
            } else {
                Severity::Lead
            };
            self.note(severity, at, format!("a {}Tensor with sizes {sizes:?} and strides {strides:?}: a negative size torch7 allocates and indexes with, or a negative stride no torch7 writer makes", elem.torch));
            return;
        };
        let Some(offset) = offset1.checked_sub(1).and_then(|o| u64::try_from(o).ok()) else {
            self.note(Severity::Fail, at, format!("a {}Tensor at storage offset {offset1} (1-based): torch7 reads before its storage and torchfile's slice wraps to its end, so the readers disagree", elem.torch));
            return;
        };
        if sizes.contains(&0) {
            return;
        }
        let last = sizes
            .iter()
            .zip(&strides)
            .try_fold(offset, |a, (&d, &s)| a.checked_add((d - 1).checked_mul(s)?));
        match last {
            Some(last) if last < data.count => {
                let name = self.name();
                self.out.tensors.push(TensorView { name, at: at as u64, sizes, strides, offset, storage: data });
                self.viewed.insert(data.data);
            }
            _ => self.note(Severity::Fail, at, format!("a {}Tensor of sizes {sizes:?}, strides {strides:?} at offset {offset} reaches past the end of its storage of {} elements: torch7 and torchfile both read outside it", elem.torch, data.count)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i32s(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn a_cycle_is_a_reference_and_depth_is_bounded() {
        // {[1] = <the table itself>}
        let mut b = i32s(&[TYPE_TABLE, 1, 1, TYPE_NUMBER]);
        b.extend(1.0f64.to_le_bytes());
        b.extend(i32s(&[TYPE_TABLE, 1]));
        let w = walk(&b);
        assert_eq!((w.stop, w.tables, w.trailing), (None, 1, 0));
        // Tables nested past the bound: a stop that is not evidence against the file.
        let mut deep = Vec::new();
        for i in 0..(MAX_DEPTH as i32 + 10) {
            deep.extend(i32s(&[TYPE_TABLE, i + 1, 1, TYPE_NUMBER]));
            deep.extend(1.0f64.to_le_bytes());
        }
        let w = walk(&deep);
        assert_eq!(w.stop.unwrap().kind, StopKind::NotRead);
    }

    #[test]
    fn counts_and_lengths_are_checked_before_use() {
        let w = walk(&i32s(&[TYPE_TABLE, 1, i32::MAX]));
        assert_eq!(w.stop.unwrap().kind, StopKind::Cut);
        let w = walk(&i32s(&[TYPE_STRING, -5]));
        assert_eq!(w.stop.unwrap().kind, StopKind::Malformed);
        let w = walk(&i32s(&[TYPE_STRING, 100, 0]));
        assert_eq!(w.stop.unwrap().kind, StopKind::Cut);
        let w = walk(&i32s(&[9]));
        assert!(w.stop.unwrap().reason.contains("unknown object"));
        // A negative table size reads as an empty table, in both loaders.
        let w = walk(&i32s(&[TYPE_TABLE, 1, -3]));
        assert_eq!((w.stop, w.findings.len()), (None, 0));
    }
}
