//! The `socair-wo/1` pickle machine: runs a pickle over typed values, never over Python
//! objects. Nothing is imported or called; a global is a name that [`crate::globals`]
//! classifies, and only the grammar's own globals have a meaning here (they build tensors,
//! storages and ordered dicts).
//!
//! Every opcode torch.save writes (protocols 2 to 5) is modeled; anything else is a finding.
//! Once the machine meets something outside the grammar it can no longer say what the stack
//! holds, so it switches to a scan that decodes the rest opcode by opcode and still reports
//! every global it can name, so evidence past that point is not missed.
//!
//! Resources are bounded by the pickle's real size: every opcode consumes at least one byte
//! and creates at most one value, values are reference-counted (a memo fetch never copies a
//! container), every length is checked against the bytes that remain, and the structures the
//! model is walked through are visited once.

use crate::globals::{classify, Class, Dtype, Known};
use std::collections::HashMap;
use std::rc::Rc;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Outside what the grammar proves safe; worth a human look.
    Lead,
    /// Evidence of code execution, or a pickle built so that readers disagree.
    Fail,
}

/// One finding, with its byte offset in the pickle and the opcode there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Byte offset of the opcode in the pickle.
    pub offset: u64,
    /// The opcode's name.
    pub opcode: &'static str,
    /// What was found.
    pub reason: String,
}

/// A container object: lists and dicts are mutable and shared by reference, as in Python.
#[derive(Debug, Clone)]
pub enum Object {
    /// A list.
    List(Vec<Value>),
    /// A dict or an OrderedDict, with attributes set by BUILD (a state dict's `_metadata`).
    Dict(DictObject),
}

/// A dict: items in insertion order; a key set twice keeps its first position and the last
/// value, as in Python.
#[derive(Debug, Clone, Default)]
pub struct DictObject {
    /// Whether it is an `OrderedDict`.
    pub ordered: bool,
    /// Items in insertion order.
    pub items: Vec<(Value, Value)>,
    index: HashMap<KeyRepr, usize>,
    /// Attributes set by BUILD.
    pub attrs: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyRepr {
    Str(Rc<str>),
    Int(i64),
}

impl DictObject {
    fn insert(&mut self, key: Value, value: Value) {
        let repr = match &key {
            Value::Str(s) => Some(KeyRepr::Str(s.clone())),
            Value::Int(i) => Some(KeyRepr::Int(*i)),
            _ => None,
        };
        match repr.as_ref().and_then(|r| self.index.get(r)) {
            Some(&i) => self.items[i].1 = value,
            None => {
                if let Some(r) = repr {
                    self.index.insert(r, self.items.len());
                }
                self.items.push((key, value));
            }
        }
    }
}

/// Which storage class a persistent id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageClass {
    /// A typed storage (`torch.FloatStorage`, …): `numel` counts elements of this dtype.
    Typed(&'static Dtype),
    /// `torch.storage.UntypedStorage`: `numel` counts bytes.
    Untyped,
}

/// A storage named by a persistent id: `('storage', class, key, location, numel)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageRef {
    /// Its class.
    pub class: StorageClass,
    /// The record key: bytes are in `<prefix>/data/<key>`.
    pub key: String,
    /// Where it lived when saved (`cpu`, `cuda:0`): data, never acted on.
    pub location: String,
    /// Its size in elements (typed) or bytes (untyped).
    pub numel: u64,
    /// For a legacy storage view (`view_metadata` of a legacy persistent id): the root
    /// storage's key and the view's offset into it, in elements. The view's own `key` is the
    /// view key and `numel` the view's size.
    pub view_of: Option<(String, u64)>,
}

impl StorageRef {
    /// Its size in bytes, if that fits in 64 bits.
    pub fn byte_len(&self) -> Option<u64> {
        match self.class {
            StorageClass::Typed(d) => self.numel.checked_mul(d.size),
            StorageClass::Untyped => Some(self.numel),
        }
    }
}

/// A tensor as the grammar models it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorModel {
    /// Its storage.
    pub storage: Rc<StorageRef>,
    /// Its dtype.
    pub dtype: &'static Dtype,
    /// Offset into the storage, in elements of `dtype`.
    pub storage_offset: u64,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Strides in elements.
    pub stride: Vec<u64>,
    /// `requires_grad`.
    pub requires_grad: bool,
    /// Whether it was saved as an `nn.Parameter`.
    pub parameter: bool,
    /// torch's conjugate bit (its bytes are not its values).
    pub conj: bool,
    /// torch's negative bit (its bytes are not its values).
    pub neg: bool,
    /// Byte offset in the pickle of the REDUCE that built it.
    pub pickle_offset: u64,
}

impl TensorModel {
    /// Number of elements, if it fits.
    pub fn numel(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// Contiguity as c10 computes it (`_compute_contiguous`, c10/core/Contiguity.h): an empty
    /// tensor is contiguous, and a dimension of size 1 may have any stride.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == Some(0) {
            return true;
        }
        let mut expected = 1u64;
        for (&size, &stride) in self.shape.iter().zip(&self.stride).rev() {
            if size != 1 {
                if stride != expected {
                    return false;
                }
                expected = match expected.checked_mul(size) {
                    Some(e) => e,
                    None => return false,
                };
            }
        }
        true
    }
}

/// A value on the machine's stack or in its memo. Cloning is O(1).
#[derive(Debug, Clone)]
pub enum Value {
    /// `None`.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer that fits in 64 bits.
    Int(i64),
    /// An integer that does not.
    BigInt,
    /// A float.
    Float(f64),
    /// A string.
    Str(Rc<str>),
    /// Bytes.
    Bytes(Rc<[u8]>),
    /// A tuple, with its nesting depth (a tuple of scalars is 1).
    Tuple(Rc<[Value]>, u16),
    /// A list or dict, by index into the object arena.
    Obj(usize),
    /// A global, classified.
    Global(Rc<GlobalRef>),
    /// A storage from a persistent id.
    Storage(Rc<StorageRef>),
    /// A tensor.
    Tensor(Rc<TensorModel>),
    /// Something outside the grammar (the result of an unknown call); the text says what.
    Opaque(Rc<str>),
}

/// A global by name, with its class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalRef {
    /// Module.
    pub module: String,
    /// Qualified name within the module.
    pub name: String,
    /// What the grammar makes of it.
    pub class: Class,
    /// Whether the operator listed it as reviewed.
    pub reviewed: bool,
}

impl GlobalRef {
    fn dotted(&self) -> String {
        format!("{}.{}", self.module, self.name)
    }
}

/// What the machine made of a pickle.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The value at STOP, when the machine stayed inside the grammar to the end.
    pub result: Option<Value>,
    /// The object arena `Value::Obj` indexes.
    pub objects: Vec<Object>,
    /// Every finding, in pickle order.
    pub findings: Vec<Finding>,
    /// Every storage named by a persistent id, by key (the first one seen).
    pub storages: Vec<Rc<StorageRef>>,
    /// Every tensor built.
    pub tensors: Vec<Rc<TensorModel>>,
    /// The globals the operator reviewed that the pickle used.
    pub reviewed_used: Vec<String>,
    /// The pickle protocol.
    pub protocol: Option<u8>,
}

impl Outcome {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Options for a run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Globals (`module.name`) the operator has reviewed: accepted as opaque values instead of
    /// a LEAD. Never overrides a dangerous classification.
    pub reviewed: Vec<String>,
    /// Persistent ids in the legacy format's form, `('storage', class, root key, location,
    /// numel, view_metadata)`, instead of the zip format's five fields.
    pub legacy: bool,
}

/// Why the modeled run stopped.
enum Stop {
    /// STOP reached.
    Done(usize),
    /// Left the grammar at this offset; scanning continues from there.
    Left,
    /// The pickle is malformed; nothing after can be trusted.
    Broken,
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    op_at: usize,
    op_name: &'static str,
    frame_end: Option<usize>,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: HashMap<u64, Value>,
    out: Outcome,
    options: &'a Options,
    storage_keys: HashMap<String, Rc<StorageRef>>,
    view_keys: HashMap<String, Rc<StorageRef>>,
    untyped_dtypes: HashMap<String, &'static Dtype>,
    /// One pickle of a stream: the run ends at its STOP, and what follows is not this
    /// pickle's (the legacy format stacks pickles and raw storages in one file).
    one_pickle: bool,
}

/// Runs the pickle in `data`.
pub fn run(data: &[u8], options: &Options) -> Outcome {
    run_machine(data, options, false).0
}

/// Runs the first pickle of a stream in `data` and returns where it ends (just past its STOP),
/// or `None` when no STOP was reached: the bytes after it belong to whatever follows.
pub fn run_one(data: &[u8], options: &Options) -> (Outcome, Option<usize>) {
    run_machine(data, options, true)
}

fn run_machine(data: &[u8], options: &Options, one_pickle: bool) -> (Outcome, Option<usize>) {
    let mut m = Machine {
        data,
        pos: 0,
        op_at: 0,
        op_name: "",
        frame_end: None,
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        out: Outcome::default(),
        options,
        storage_keys: HashMap::new(),
        view_keys: HashMap::new(),
        untyped_dtypes: HashMap::new(),
        one_pickle,
    };
    let mut ended = None;
    match m.modeled() {
        Stop::Done(end) if one_pickle => ended = Some(end),
        Stop::Done(end) => {
            if end < data.len() {
                m.op_at = end;
                m.op_name = "STOP";
                m.lead(format!(
                    "{} trailing bytes follow STOP; torch never reads them",
                    data.len() - end
                ));
                // Trailing bytes may hold a second pickle: report any global it names.
                m.pos = end;
                m.scan_rest();
            }
        }
        Stop::Left => ended = m.scan_rest(),
        Stop::Broken => {}
    }
    (m.out, ended)
}

/// Opcode names, for findings.
fn opcode_name(op: u8) -> &'static str {
    match op {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "unknown opcode",
    }
}

/// A malformed pickle: the run cannot continue.
struct Malformed(String);

type Step<T> = Result<T, Malformed>;

impl Machine<'_> {
    fn finding(&mut self, severity: Severity, reason: String) {
        self.out.findings.push(Finding {
            severity,
            offset: self.op_at as u64,
            opcode: self.op_name,
            reason,
        });
    }
    fn fail(&mut self, reason: String) {
        self.finding(Severity::Fail, reason);
    }
    fn lead(&mut self, reason: String) {
        self.finding(Severity::Lead, reason);
    }

    /// Takes `n` argument bytes, which must lie inside the pickle and the current frame.
    fn take(&mut self, n: usize) -> Step<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                Malformed(format!(
                    "needs {n} argument bytes but the pickle ends at byte {}",
                    self.data.len()
                ))
            })?;
        if let Some(frame_end) = self.frame_end {
            if end > frame_end {
                return Err(Malformed(format!(
                    "its arguments run past the frame that ends at byte {frame_end} (frame lengths that disagree with opcodes hide code from scanners, GHSA-6ggj-6f2q-f7mx)"
                )));
            }
        }
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    fn u8(&mut self) -> Step<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Step<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Step<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Step<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn line(&mut self) -> Step<String> {
        let limit = self.frame_end.unwrap_or(self.data.len());
        let rest = &self.data[self.pos..limit];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| Malformed("a text argument has no terminating newline".into()))?;
        let text = std::str::from_utf8(&rest[..n])
            .map_err(|_| Malformed("a text argument is not UTF-8".into()))?
            .to_owned();
        self.pos += n + 1;
        Ok(text)
    }
    fn len_arg(&mut self, width: usize) -> Step<usize> {
        let n = match width {
            1 => u64::from(self.u8()?),
            4 => u64::from(self.u32()?),
            _ => self.u64()?,
        };
        usize::try_from(n).map_err(|_| Malformed(format!("length {n} is over the address space")))
    }
    fn string(&mut self, width: usize) -> Step<Rc<str>> {
        let n = self.len_arg(width)?;
        let bytes = self.take(n)?;
        let s = std::str::from_utf8(bytes)
            .map_err(|_| Malformed("a string argument is not UTF-8".into()))?;
        Ok(Rc::from(s))
    }
    fn bytes(&mut self, width: usize) -> Step<Rc<[u8]>> {
        let n = self.len_arg(width)?;
        Ok(Rc::from(self.take(n)?))
    }

    fn pop(&mut self) -> Step<Value> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(Malformed("pops past a MARK".into()));
        }
        self.stack
            .pop()
            .ok_or_else(|| Malformed("pops an empty stack".into()))
    }
    fn top(&self) -> Step<&Value> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(Malformed("reads past a MARK".into()));
        }
        self.stack
            .last()
            .ok_or_else(|| Malformed("reads an empty stack".into()))
    }
    fn pop_mark(&mut self) -> Step<Vec<Value>> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| Malformed("no MARK to pop to".into()))?;
        Ok(self.stack.split_off(mark))
    }
    fn new_object(&mut self, o: Object) -> Value {
        self.out.objects.push(o);
        Value::Obj(self.out.objects.len() - 1)
    }

    fn global(&mut self, module: &str, name: &str) -> Value {
        let class = classify(module, name);
        let dotted = format!("{module}.{name}");
        let reviewed = self.options.reviewed.contains(&dotted);
        match &class {
            Class::Dangerous(why) => {
                self.fail(format!("global {dotted}: {why}"));
            }
            Class::Unknown if reviewed => {
                if !self.out.reviewed_used.contains(&dotted) {
                    self.out.reviewed_used.push(dotted.clone());
                }
            }
            Class::Unknown => {
                let hint = if module.starts_with("numpy") {
                    " (numpy objects are rebuilt by calling numpy)"
                } else {
                    ""
                };
                self.lead(format!(
                    "global {dotted} is outside socair-wo/1{hint}; pass it in --reviewed-classes once reviewed"
                ));
            }
            Class::Known(_) => {}
        }
        Value::Global(Rc::new(GlobalRef {
            module: module.to_owned(),
            name: name.to_owned(),
            class,
            reviewed,
        }))
    }

    /// The modeled run: every opcode of the grammar with its typed meaning.
    fn modeled(&mut self) -> Stop {
        loop {
            if self.frame_end == Some(self.pos) {
                self.frame_end = None;
            }
            self.op_at = self.pos;
            let Some(&op) = self.data.get(self.pos) else {
                self.op_name = "end of data";
                self.fail("the pickle ends without STOP (truncated)".into());
                return Stop::Broken;
            };
            self.op_name = opcode_name(op);
            self.pos += 1;
            if let Some(frame_end) = self.frame_end {
                if self.pos > frame_end {
                    self.fail("an opcode straddles a frame boundary".into());
                    return Stop::Broken;
                }
            }
            match self.step(op) {
                Ok(None) => {}
                Ok(Some(stop)) => return stop,
                Err(Malformed(why)) => {
                    self.fail(format!(
                        "malformed pickle: {why} (readers may disagree on it)"
                    ));
                    return Stop::Broken;
                }
            }
        }
    }

    fn step(&mut self, op: u8) -> Step<Option<Stop>> {
        match op {
            0x80 => {
                let v = self.u8()?;
                if self.op_at != 0 || self.out.protocol.is_some() {
                    self.lead(format!("PROTO {v} not at the start of the pickle"));
                }
                if !(2..=5).contains(&v) {
                    self.fail(format!(
                        "protocol {v} is not one torch.save writes (2 to 5)"
                    ));
                }
                self.out.protocol = Some(v);
            }
            0x95 => {
                let n = self.u64()?;
                if self.frame_end.is_some() {
                    return Err(Malformed("FRAME inside an unfinished frame".into()));
                }
                let end = usize::try_from(n)
                    .ok()
                    .and_then(|n| self.pos.checked_add(n))
                    .filter(|&e| e <= self.data.len())
                    .ok_or_else(|| Malformed(format!("FRAME of {n} bytes runs past the pickle")))?;
                self.frame_end = Some(end);
            }
            b'(' => self.marks.push(self.stack.len()),
            b'.' => {
                if let Some(end) = self.frame_end.filter(|&end| end != self.pos) {
                    // CPython's unpickler reads a whole frame before running it: what follows
                    // STOP inside the frame is consumed, and the next pickle of a stream starts
                    // at the frame's end for torch but here for a reader that stops at STOP.
                    self.fail(format!(
                        "STOP inside a frame that runs on for {} bytes: Python reads the rest of the frame, so what follows is not where this pickle seems to end",
                        end - self.pos
                    ));
                    return Ok(Some(Stop::Broken));
                }
                let v = self.pop()?;
                if !self.stack.is_empty() || !self.marks.is_empty() {
                    self.lead("values left on the stack at STOP".into());
                }
                self.out.result = Some(v);
                return Ok(Some(Stop::Done(self.pos)));
            }
            b'}' => {
                let v = self.new_object(Object::Dict(DictObject::default()));
                self.stack.push(v);
            }
            b']' => {
                let v = self.new_object(Object::List(Vec::new()));
                self.stack.push(v);
            }
            b')' => self.stack.push(Value::Tuple(Rc::from(Vec::new()), 1)),
            b't' => {
                let items = self.pop_mark()?;
                let t = tuple(items)?;
                self.stack.push(t);
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop()?);
                }
                items.reverse();
                let t = tuple(items)?;
                self.stack.push(t);
            }
            b'q' | b'r' => {
                let i = if op == b'q' {
                    u64::from(self.u8()?)
                } else {
                    u64::from(self.u32()?)
                };
                let v = self.top()?.clone();
                self.memo.insert(i, v);
            }
            0x94 => {
                let v = self.top()?.clone();
                self.memo.insert(self.memo.len() as u64, v);
            }
            b'h' | b'j' => {
                let i = if op == b'h' {
                    u64::from(self.u8()?)
                } else {
                    u64::from(self.u32()?)
                };
                let v = self
                    .memo
                    .get(&i)
                    .cloned()
                    .ok_or_else(|| Malformed(format!("memo entry {i} was never stored")))?;
                self.stack.push(v);
            }
            b'J' => {
                let v = self.u32()? as i32;
                self.stack.push(Value::Int(v.into()));
            }
            b'K' => {
                let v = self.u8()?;
                self.stack.push(Value::Int(v.into()));
            }
            b'M' => {
                let v = self.u16()?;
                self.stack.push(Value::Int(v.into()));
            }
            0x8a => {
                let n = usize::from(self.u8()?);
                let bytes = self.take(n)?;
                let v = if n == 0 {
                    Value::Int(0)
                } else if n <= 8 {
                    let mut buf = [if bytes[n - 1] & 0x80 != 0 { 0xff } else { 0 }; 8];
                    buf[..n].copy_from_slice(bytes);
                    Value::Int(i64::from_le_bytes(buf))
                } else {
                    Value::BigInt
                };
                self.stack.push(v);
            }
            b'G' => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                self.stack.push(Value::Float(f64::from_be_bytes(a)));
            }
            b'N' => self.stack.push(Value::None),
            0x88 => self.stack.push(Value::Bool(true)),
            0x89 => self.stack.push(Value::Bool(false)),
            b'X' => {
                let s = self.string(4)?;
                self.stack.push(Value::Str(s));
            }
            0x8c => {
                let s = self.string(1)?;
                self.stack.push(Value::Str(s));
            }
            0x8d => {
                let s = self.string(8)?;
                self.stack.push(Value::Str(s));
            }
            b'B' => {
                let b = self.bytes(4)?;
                self.stack.push(Value::Bytes(b));
            }
            b'C' => {
                let b = self.bytes(1)?;
                self.stack.push(Value::Bytes(b));
            }
            0x8e => {
                let b = self.bytes(8)?;
                self.stack.push(Value::Bytes(b));
            }
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                let g = self.global(&module, &name);
                self.stack.push(g);
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                match (module, name) {
                    (Value::Str(module), Value::Str(name)) => {
                        let g = self.global(&module, &name);
                        self.stack.push(g);
                    }
                    _ => {
                        self.fail("STACK_GLOBAL on values that are not strings (type confusion hides the global from scanners)".into());
                        return Ok(Some(Stop::Broken));
                    }
                }
            }
            b'Q' => {
                let pid = self.pop()?;
                let storage = self.persistent_id(pid)?;
                self.stack.push(storage);
            }
            b's' => {
                let value = self.pop()?;
                let key = self.pop()?;
                let target = self.top()?.clone();
                self.set_items(target, vec![key, value])?;
            }
            b'u' => {
                let items = self.pop_mark()?;
                let target = self.top()?.clone();
                self.set_items(target, items)?;
            }
            b'a' => {
                let value = self.pop()?;
                let target = self.top()?.clone();
                self.append(target, vec![value])?;
            }
            b'e' => {
                let items = self.pop_mark()?;
                let target = self.top()?.clone();
                self.append(target, items)?;
            }
            b'R' | 0x81 => {
                let args = self.pop()?;
                let callable = self.pop()?;
                let v = self.call(callable, args, op == 0x81)?;
                self.stack.push(v);
            }
            b'b' => {
                let state = self.pop()?;
                let target = self.top()?.clone();
                self.build(target, state);
            }
            _ => {
                self.lead(format!(
                    "opcode {} (byte {op:#04x}) is outside socair-wo/1; torch.save does not write it",
                    opcode_name(op)
                ));
                self.pos = self.op_at;
                return Ok(Some(Stop::Left));
            }
        }
        Ok(None)
    }

    fn set_items(&mut self, target: Value, items: Vec<Value>) -> Step<()> {
        if !items.len().is_multiple_of(2) {
            return Err(Malformed("SETITEMS with an odd number of values".into()));
        }
        let Value::Obj(id) = target else {
            self.fail(format!(
                "sets items on {} instead of a dict (the CVE-2026-24747 pattern)",
                describe(&target)
            ));
            return Ok(());
        };
        match &mut self.out.objects[id] {
            Object::Dict(d) => {
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    d.insert(k, v);
                }
                Ok(())
            }
            Object::List(_) => {
                self.fail("sets items on a list instead of a dict".into());
                Ok(())
            }
        }
    }

    fn append(&mut self, target: Value, items: Vec<Value>) -> Step<()> {
        match target {
            Value::Obj(id) if matches!(self.out.objects[id], Object::List(_)) => {
                if let Object::List(l) = &mut self.out.objects[id] {
                    l.extend(items);
                }
            }
            other => self.fail(format!("appends to {} instead of a list", describe(&other))),
        }
        Ok(())
    }

    fn build(&mut self, target: Value, state: Value) {
        match target {
            Value::Obj(id) => {
                let state_ok = match &state {
                    Value::Obj(s) => match &self.out.objects[*s] {
                        Object::Dict(d) => d.items.iter().all(|(k, _)| matches!(k, Value::Str(_))),
                        Object::List(_) => false,
                    },
                    Value::None => true,
                    _ => false,
                };
                match &mut self.out.objects[id] {
                    Object::Dict(d) if d.ordered && state_ok => d.attrs = Some(state),
                    _ => self.lead(
                        "BUILD sets state on something other than an OrderedDict's attributes"
                            .into(),
                    ),
                }
            }
            Value::Opaque(_) => {}
            other => self.lead(format!(
                "BUILD sets state on {}: outside socair-wo/1",
                describe(&other)
            )),
        }
    }

    fn persistent_id(&mut self, pid: Value) -> Step<Value> {
        let bad = |m: &mut Self, why: &str| {
            m.fail(format!(
                "persistent id {why}; torch.save writes ('storage', storage class, key, location, numel)"
            ));
            Ok(Value::Opaque(Rc::from("invalid persistent id")))
        };
        let Value::Tuple(items, _) = pid else {
            return bad(self, "is not a tuple");
        };
        if self.options.legacy {
            if let [Value::Str(tag), ..] = &items[..] {
                if &**tag == "module" {
                    // torch.save(model) in the legacy format: the class and its source text.
                    self.lead("persistent id ('module', class, source file, source): a whole nn.Module was saved, not a state dict; loading it imports the class".into());
                    return Ok(Value::Opaque(Rc::from("a saved nn.Module class")));
                }
            }
        }
        let (fields, view) = match (&items[..], self.options.legacy) {
            ([a, b, c, d, e], false) => ([a, b, c, d, e], None),
            ([a, b, c, d, e, view], true) => ([a, b, c, d, e], Some(view)),
            _ if self.options.legacy => {
                return bad(self, "does not have the six fields of a legacy storage ('storage', storage class, root key, location, numel, view metadata)")
            }
            _ => return bad(self, "does not have the five fields of a storage"),
        };
        let [Value::Str(tag), Value::Global(class), Value::Str(key), Value::Str(location), Value::Int(numel)] =
            fields
        else {
            return bad(self, "does not have fields of the types torch writes");
        };
        if &**tag != "storage" {
            return bad(self, &format!("is tagged {tag:?}"));
        }
        // The legacy view metadata: None, or (view key, offset, size) in elements.
        let view = match view {
            None | Some(Value::None) => None,
            Some(Value::Tuple(v, _)) => match &v[..] {
                [Value::Str(vk), Value::Int(off), Value::Int(size)] => {
                    match (u64::try_from(*off), u64::try_from(*size)) {
                        (Ok(off), Ok(size)) if !vk.is_empty() && vk.bytes().all(|b| b.is_ascii_digit()) => {
                            Some((vk.to_string(), off, size))
                        }
                        _ => return bad(self, "has view metadata with a negative offset or size, or a key that is not a decimal number"),
                    }
                }
                _ => {
                    return bad(
                        self,
                        "has view metadata that is not (view key, offset, size)",
                    )
                }
            },
            Some(_) => return bad(self, "has view metadata that is neither None nor a tuple"),
        };
        let class = match class.class {
            Class::Known(Known::TypedStorage(d)) => StorageClass::Typed(d),
            Class::Known(Known::UntypedStorage) => StorageClass::Untyped,
            _ => {
                return bad(
                    self,
                    &format!("names {} as its storage class", class.dotted()),
                )
            }
        };
        let Ok(numel) = u64::try_from(*numel) else {
            return bad(self, "has a negative size");
        };
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
            return bad(
                self,
                &format!("has key {key:?}; torch.save keys are decimal numbers"),
            );
        }
        let storage = Rc::new(StorageRef {
            class,
            key: key.to_string(),
            location: location.to_string(),
            numel,
            view_of: None,
        });
        if self.view_keys.contains_key(key.as_ref()) {
            self.fail(format!(
                "key {key:?} names both a storage view and a storage; torch's loader would resolve it by the order it meets them"
            ));
            return Ok(Value::Opaque(Rc::from("an ambiguous storage key")));
        }
        let root = if let Some(first) = self.storage_keys.get(key.as_ref()).cloned() {
            if first.class != storage.class || first.numel != storage.numel {
                self.fail(format!(
                    "storage {key:?} is named twice with different storage types or sizes; torch.save never writes that (it refuses to save one storage as two types)"
                ));
            }
            first
        } else {
            self.storage_keys.insert(key.to_string(), storage.clone());
            self.out.storages.push(storage.clone());
            storage
        };
        let Some((view_key, offset, size)) = view else {
            return Ok(Value::Storage(root));
        };
        // A legacy view: elements offset..offset+size of the root storage, under its own key.
        if offset.checked_add(size).is_none_or(|end| end > root.numel) {
            self.fail(format!(
                "storage view {view_key:?} covers elements {offset}..+{size} of storage {key:?}, which holds {}",
                root.numel
            ));
            return Ok(Value::Opaque(Rc::from(
                "a storage view outside its storage",
            )));
        }
        let view_ref = Rc::new(StorageRef {
            class,
            key: view_key.clone(),
            location: location.to_string(),
            numel: size,
            view_of: Some((key.to_string(), offset)),
        });
        if self.storage_keys.contains_key(&view_key) {
            self.fail(format!(
                "key {view_key:?} names both a storage and a view; torch's loader would resolve it by the order it meets them"
            ));
            return Ok(Value::Opaque(Rc::from("an ambiguous storage view")));
        }
        if let Some(first) = self.view_keys.get(&view_key).cloned() {
            if *first != *view_ref {
                self.fail(format!(
                    "storage view {view_key:?} is declared twice differently; torch's loader keeps the first"
                ));
            }
            return Ok(Value::Storage(first));
        }
        self.view_keys.insert(view_key, view_ref.clone());
        Ok(Value::Storage(view_ref))
    }

    fn call(&mut self, callable: Value, args: Value, newobj: bool) -> Step<Value> {
        let Value::Tuple(args, _) = args else {
            self.fail(format!(
                "{} with arguments that are {} instead of a tuple",
                if newobj { "NEWOBJ" } else { "REDUCE" },
                describe(&args)
            ));
            return Ok(Value::Opaque(Rc::from("call with invalid arguments")));
        };
        let g = match callable {
            Value::Global(g) => g,
            Value::Opaque(what) => return Ok(Value::Opaque(what)),
            other => {
                self.lead(format!(
                    "calls {} (not a global): outside socair-wo/1",
                    describe(&other)
                ));
                return Ok(Value::Opaque(Rc::from("result of calling a non-global")));
            }
        };
        let known = match &g.class {
            Class::Known(k) => *k,
            // Already reported when the global was pushed.
            Class::Dangerous(_) | Class::Unknown => {
                return Ok(Value::Opaque(Rc::from(g.dotted().as_str())))
            }
        };
        match known {
            Known::OrderedDict if args.is_empty() && !newobj => {
                let d = DictObject {
                    ordered: true,
                    ..DictObject::default()
                };
                Ok(self.new_object(Object::Dict(d)))
            }
            Known::CodecsEncode => match &args[..] {
                [Value::Str(s), Value::Str(enc)] if &**enc == "latin1" => {
                    // bytes pickled under protocol 2: each char is one byte.
                    let bytes: Option<Vec<u8>> =
                        s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                    match bytes {
                        Some(b) => Ok(Value::Bytes(Rc::from(b))),
                        None => {
                            self.fail("_codecs.encode of text that is not latin-1".into());
                            Ok(Value::Opaque(Rc::from("bytes")))
                        }
                    }
                }
                _ => {
                    self.lead("_codecs.encode with arguments other than (str, 'latin1')".into());
                    Ok(Value::Opaque(Rc::from("_codecs.encode")))
                }
            },
            Known::RebuildTensorV2 | Known::RebuildTensorV3 if !newobj => {
                self.rebuild_tensor(&args, known == Known::RebuildTensorV3)
            }
            Known::RebuildParameter | Known::RebuildParameterWithState if !newobj => {
                self.rebuild_parameter(&args, known == Known::RebuildParameterWithState)
            }
            _ => {
                self.lead(format!(
                    "calls {} with {} arguments: outside socair-wo/1",
                    g.dotted(),
                    args.len()
                ));
                Ok(Value::Opaque(Rc::from(g.dotted().as_str())))
            }
        }
    }

    fn empty_hooks(&self, v: &Value) -> Option<bool> {
        match v {
            Value::Obj(id) => match &self.out.objects[*id] {
                Object::Dict(d) if d.ordered => Some(d.items.is_empty()),
                _ => None,
            },
            _ => None,
        }
    }

    fn rebuild_tensor(&mut self, args: &[Value], v3: bool) -> Step<Value> {
        let name = if v3 {
            "_rebuild_tensor_v3"
        } else {
            "_rebuild_tensor_v2"
        };
        let fixed = if v3 { 7 } else { 6 };
        let opaque = |what: &str| Value::Opaque(Rc::from(what));
        if args.len() != fixed && args.len() != fixed + 1 {
            self.fail(format!("{name} with {} arguments", args.len()));
            return Ok(opaque(name));
        }
        let (
            Value::Storage(storage),
            Value::Int(offset),
            Value::Tuple(size, _),
            Value::Tuple(stride, _),
            Value::Bool(requires_grad),
        ) = (&args[0], &args[1], &args[2], &args[3], &args[4])
        else {
            self.fail(format!(
                "{name} arguments are not (storage, offset, size, stride, requires_grad, …)"
            ));
            return Ok(opaque(name));
        };
        match self.empty_hooks(&args[5]) {
            Some(true) => {}
            Some(false) => self.lead(format!(
                "{name} carries backward hooks; torch.save never serializes hooks"
            )),
            None => {
                self.fail(format!("{name} backward_hooks is not an OrderedDict"));
                return Ok(opaque(name));
            }
        }
        let dtype = if v3 {
            let Value::Global(g) = &args[6] else {
                self.fail(format!("{name} dtype is not a global"));
                return Ok(opaque(name));
            };
            match (&g.class, storage.class) {
                (Class::Known(Known::Dtype(d)), StorageClass::Untyped) => *d,
                (Class::Known(Known::Dtype(_)), StorageClass::Typed(_)) => {
                    self.fail(format!(
                        "{name} over a typed storage; v3 rebuilds untyped ones"
                    ));
                    return Ok(opaque(name));
                }
                _ => {
                    self.lead(format!(
                        "{name} with dtype {}: outside socair-wo/1",
                        g.dotted()
                    ));
                    return Ok(opaque(name));
                }
            }
        } else {
            match storage.class {
                StorageClass::Typed(d) => d,
                StorageClass::Untyped => {
                    self.fail(format!(
                        "{name} over an untyped storage; v2 rebuilds typed ones"
                    ));
                    return Ok(opaque(name));
                }
            }
        };
        let (mut conj, mut neg) = (false, false);
        if let Some(meta) = args.get(fixed) {
            let mut ok = true;
            match meta {
                Value::Obj(id) => match &self.out.objects[*id] {
                    Object::Dict(d) => {
                        for (k, v) in &d.items {
                            match (k, v) {
                                (Value::Str(k), Value::Bool(b)) if &**k == "conj" => conj = *b,
                                (Value::Str(k), Value::Bool(b)) if &**k == "neg" => neg = *b,
                                _ => ok = false,
                            }
                        }
                    }
                    Object::List(_) => ok = false,
                },
                Value::None => {}
                _ => ok = false,
            }
            if !ok {
                self.lead(format!(
                    "{name} metadata holds something other than the conj/neg bits"
                ));
            }
        }
        let ints = |t: &[Value]| -> Option<Vec<u64>> {
            t.iter()
                .map(|v| match v {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    _ => None,
                })
                .collect()
        };
        let (Some(shape), Some(stride), Ok(storage_offset)) =
            (ints(size), ints(stride), u64::try_from(*offset))
        else {
            self.fail(format!(
                "{name} with a size, stride or offset that is negative or not an integer"
            ));
            return Ok(opaque(name));
        };
        if shape.len() != stride.len() {
            self.fail(format!(
                "{name} with {} sizes but {} strides",
                shape.len(),
                stride.len()
            ));
            return Ok(opaque(name));
        }
        if v3 {
            if let Some(first) = self.untyped_dtypes.get(&storage.key) {
                if *first != dtype {
                    self.fail(format!(
                        "storage {:?} is viewed as {} and as {}; torch.save never writes that",
                        storage.key, first.torch, dtype.torch
                    ));
                }
            } else {
                self.untyped_dtypes.insert(storage.key.clone(), dtype);
            }
        }
        let tensor = TensorModel {
            storage: storage.clone(),
            dtype,
            storage_offset,
            shape,
            stride,
            requires_grad: *requires_grad,
            parameter: false,
            conj,
            neg,
            pickle_offset: self.op_at as u64,
        };
        if let Err(why) = check_bounds(&tensor) {
            self.fail(format!("{name}: {why}"));
            return Ok(opaque(name));
        }
        let t = Rc::new(tensor);
        self.out.tensors.push(t.clone());
        Ok(Value::Tensor(t))
    }

    fn rebuild_parameter(&mut self, args: &[Value], with_state: bool) -> Step<Value> {
        let name = if with_state {
            "_rebuild_parameter_with_state"
        } else {
            "_rebuild_parameter"
        };
        let expected = if with_state { 4 } else { 3 };
        if args.len() != expected {
            self.fail(format!("{name} with {} arguments", args.len()));
            return Ok(Value::Opaque(Rc::from(name)));
        }
        let (Value::Tensor(data), Value::Bool(requires_grad)) = (&args[0], &args[1]) else {
            if matches!(args[0], Value::Opaque(_)) {
                return Ok(Value::Opaque(Rc::from(name)));
            }
            self.fail(format!(
                "{name} arguments are not (tensor, requires_grad, …)"
            ));
            return Ok(Value::Opaque(Rc::from(name)));
        };
        if self.empty_hooks(&args[2]) != Some(true) {
            self.lead(format!("{name} carries backward hooks or no hooks dict"));
        }
        if with_state {
            let empty = match &args[3] {
                Value::None => true,
                Value::Obj(id) => {
                    matches!(&self.out.objects[*id], Object::Dict(d) if d.items.is_empty())
                }
                _ => false,
            };
            if !empty {
                self.lead(format!(
                    "{name} carries Python attributes on the parameter: outside socair-wo/1"
                ));
            }
        }
        let mut t = (**data).clone();
        t.parameter = true;
        t.requires_grad = *requires_grad;
        let t = Rc::new(t);
        self.out.tensors.push(t.clone());
        Ok(Value::Tensor(t))
    }

    /// After leaving the grammar: decode the remaining opcodes without modeling the stack,
    /// and report every global that can be named; one that cannot is itself a finding.
    /// Scans to the end of the data (or, for one pickle of a stream, to its STOP, returning
    /// where it ends).
    fn scan_rest(&mut self) -> Option<usize> {
        // Recent string pushes and memoized strings, to name STACK_GLOBAL targets.
        let mut recent: Vec<Option<Rc<str>>> = Vec::new();
        let mut memo: HashMap<u64, Option<Rc<str>>> = HashMap::new();
        let mut frame_until: Option<usize> = None;
        self.frame_end = None;
        while self.pos < self.data.len() {
            self.op_at = self.pos;
            let op = self.data[self.pos];
            self.op_name = opcode_name(op);
            self.pos += 1;
            if op == b'.' && self.one_pickle {
                if let Some(end) = frame_until.filter(|&end| end > self.pos) {
                    self.fail(format!(
                        "STOP inside a frame that runs on for {} bytes: Python reads the rest of the frame, so what follows is not where this pickle seems to end",
                        end - self.pos
                    ));
                    return None;
                }
                return Some(self.pos);
            }
            if op == 0x95 && self.one_pickle {
                // Only remembered here (the scan reads opcodes regardless of frames): a STOP
                // before the frame's end is where Python and this reader part ways.
                let mut len = [0u8; 8];
                if let Some(b) = self.data.get(self.pos..).and_then(|r| r.get(..8)) {
                    len.copy_from_slice(b);
                    frame_until = usize::try_from(u64::from_le_bytes(len))
                        .ok()
                        .and_then(|n| (self.pos + 8).checked_add(n));
                }
            }
            let step: Step<Option<Rc<str>>> = (|| {
                Ok(match op {
                    b'X' => Some(self.string(4)?),
                    0x8c => Some(self.string(1)?),
                    0x8d => Some(self.string(8)?),
                    b'U' => Some(Rc::from(String::from_utf8_lossy(&self.bytes(1)?).as_ref())),
                    b'T' => Some(Rc::from(String::from_utf8_lossy(&self.bytes(4)?).as_ref())),
                    b'S' | b'V' => Some(Rc::from(
                        self.line()?.trim_matches(|c| c == '\'' || c == '"'),
                    )),
                    b'B' => {
                        self.bytes(4)?;
                        None
                    }
                    b'C' | 0x96 => {
                        let w = if op == b'C' { 1 } else { 8 };
                        self.bytes(w)?;
                        None
                    }
                    0x8e => {
                        self.bytes(8)?;
                        None
                    }
                    b'c' | b'i' => {
                        let module = self.line()?;
                        let name = self.line()?;
                        self.global(&module, &name);
                        None
                    }
                    0x93 => {
                        let n = recent.len();
                        match (n >= 2).then(|| (recent[n - 2].clone(), recent[n - 1].clone())) {
                            Some((Some(module), Some(name))) => {
                                self.global(&module, &name);
                            }
                            _ => self.fail(
                                "STACK_GLOBAL whose module and name cannot be determined".into(),
                            ),
                        }
                        None
                    }
                    0x82..=0x84 => {
                        let w = [1, 2, 4][usize::from(op - 0x82)];
                        self.take(w)?;
                        self.fail(
                            "extension-registry opcode names a global by number; it cannot be checked"
                                .into(),
                        );
                        None
                    }
                    b'p' | b'g' | b'I' | b'L' | b'F' | b'P' => {
                        let line = self.line()?;
                        if op == b'p' {
                            if let Ok(i) = line.parse::<u64>() {
                                memo.insert(i, recent.last().cloned().flatten());
                            }
                        } else if op == b'g' {
                            if let Ok(i) = line.parse::<u64>() {
                                return Ok(memo.get(&i).cloned().flatten());
                            }
                        }
                        None
                    }
                    b'q' | b'r' => {
                        let i = if op == b'q' {
                            u64::from(self.u8()?)
                        } else {
                            u64::from(self.u32()?)
                        };
                        memo.insert(i, recent.last().cloned().flatten());
                        return Ok(recent.last().cloned().flatten());
                    }
                    0x94 => {
                        let i = memo.len() as u64;
                        memo.insert(i, recent.last().cloned().flatten());
                        return Ok(recent.last().cloned().flatten());
                    }
                    b'h' | b'j' => {
                        let i = if op == b'h' {
                            u64::from(self.u8()?)
                        } else {
                            u64::from(self.u32()?)
                        };
                        memo.get(&i).cloned().flatten()
                    }
                    b'K' | 0x80 => {
                        self.take(1)?;
                        None
                    }
                    b'M' => {
                        self.take(2)?;
                        None
                    }
                    b'J' => {
                        self.take(4)?;
                        None
                    }
                    b'G' | 0x95 => {
                        self.take(8)?;
                        None
                    }
                    0x8a => {
                        let n = usize::from(self.u8()?);
                        self.take(n)?;
                        None
                    }
                    0x8b => {
                        let n = self.len_arg(4)?;
                        self.take(n)?;
                        None
                    }
                    b'('
                    | b'.'
                    | b'0'
                    | b'1'
                    | b'2'
                    | b'N'
                    | b'Q'
                    | b'R'
                    | b'a'
                    | b'b'
                    | b'd'
                    | b'}'
                    | b'e'
                    | b'l'
                    | b']'
                    | b'o'
                    | b's'
                    | b't'
                    | b')'
                    | b'u'
                    | 0x81
                    | 0x85..=0x89
                    | 0x8f..=0x92
                    | 0x97
                    | 0x98 => None,
                    _ => {
                        return Err(Malformed(format!("byte {op:#04x} is not a pickle opcode")));
                    }
                })
            })();
            match step {
                Ok(pushed) => {
                    // Memo ops above return what they re-push; everything else resets the view.
                    recent.push(pushed);
                    if recent.len() > 2 {
                        recent.remove(0);
                    }
                }
                Err(Malformed(why)) => {
                    self.fail(format!(
                        "malformed pickle: {why} (readers may disagree on it)"
                    ));
                    return None;
                }
            }
        }
        None
    }
}

/// Deepest tuple nesting accepted. Tuples are the only values that nest by ownership (lists
/// and dicts live in the arena), so this bounds the recursion of dropping or walking a value;
/// torch.save's pickler itself could not write anything near this deep.
pub const MAX_TUPLE_DEPTH: u16 = 256;

fn tuple(items: Vec<Value>) -> Step<Value> {
    let depth = 1 + items
        .iter()
        .map(|v| match v {
            Value::Tuple(_, d) => *d,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    if depth > MAX_TUPLE_DEPTH {
        return Err(Malformed(format!(
            "tuples nested deeper than {MAX_TUPLE_DEPTH} levels"
        )));
    }
    Ok(Value::Tuple(Rc::from(items), depth))
}

/// The view must lie inside its storage.
pub fn check_bounds(t: &TensorModel) -> Result<(), String> {
    let numel = t
        .numel()
        .ok_or_else(|| format!("shape {:?} has more than 2^64 elements", t.shape))?;
    let storage_elements = match t.storage.class {
        StorageClass::Typed(_) => t.storage.numel,
        StorageClass::Untyped => {
            if !t.storage.numel.is_multiple_of(t.dtype.size) {
                return Err(format!(
                    "untyped storage {:?} of {} bytes does not hold whole {} elements",
                    t.storage.key, t.storage.numel, t.dtype.torch
                ));
            }
            t.storage.numel / t.dtype.size
        }
    };
    if numel == 0 {
        return if t.storage_offset <= storage_elements {
            Ok(())
        } else {
            Err(format!(
                "storage offset {} is past the end of storage {:?} ({storage_elements} elements)",
                t.storage_offset, t.storage.key
            ))
        };
    }
    let mut last = t.storage_offset;
    for (&size, &stride) in t.shape.iter().zip(&t.stride) {
        last = (size - 1)
            .checked_mul(stride)
            .and_then(|x| last.checked_add(x))
            .ok_or("the view's extent overflows")?;
    }
    if last >= storage_elements {
        return Err(format!(
            "the view is out of bounds: it reaches element {last} of storage {:?}, which holds {storage_elements}",
            t.storage.key
        ));
    }
    Ok(())
}

fn describe(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "a bool".into(),
        Value::Int(_) | Value::BigInt => "an int".into(),
        Value::Float(_) => "a float".into(),
        Value::Str(_) => "a string".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::Tuple(..) => "a tuple".into(),
        Value::Obj(_) => "a container".into(),
        Value::Global(g) => format!("the global {}", g.dotted()),
        Value::Storage(_) => "a storage".into(),
        Value::Tensor(_) => "a tensor".into(),
        Value::Opaque(what) => format!("an opaque value ({what})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(data: &[u8]) -> Vec<(Severity, String)> {
        run(data, &Options::default())
            .findings
            .into_iter()
            .map(|f| {
                (
                    f.severity,
                    format!("{} @{}: {}", f.opcode, f.offset, f.reason),
                )
            })
            .collect()
    }

    fn worst(data: &[u8]) -> Option<Severity> {
        run(data, &Options::default()).worst()
    }

    #[test]
    fn a_plain_dict_is_clean() {
        // {'a': 1} under protocol 2.
        let p = b"\x80\x02}q\x00X\x01\x00\x00\x00aq\x01K\x01s.";
        let out = run(p, &Options::default());
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        assert!(matches!(out.result, Some(Value::Obj(_))));
    }

    #[test]
    fn deep_tuples_are_refused_before_they_can_overflow_the_stack() {
        let mut p = b"\x80\x02N".to_vec();
        p.extend(std::iter::repeat_n(0x85u8, 100_000));
        p.push(b'.');
        let f = findings(&p);
        assert!(f[0].1.contains("nested deeper than"), "{f:?}");
        assert_eq!(f[0].0, Severity::Fail);
    }

    #[test]
    fn structural_abuse_is_fail() {
        // BINGET of an index never stored.
        assert_eq!(worst(b"\x80\x02h\x07."), Some(Severity::Fail));
        // SETITEM on a tuple.
        let f = findings(b"\x80\x02)K\x01K\x02s.");
        assert!(f[0].1.contains("instead of a dict"), "{f:?}");
        // STACK_GLOBAL on ints.
        let f = findings(b"\x80\x04K\x01K\x02\x93.");
        assert!(f[0].1.contains("type confusion"), "{f:?}");
        // A frame that ends inside an opcode's argument.
        let f = findings(b"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00J\x01\x00\x00\x00.");
        assert!(f[0].1.contains("frame"), "{f:?}");
        // Truncated.
        assert_eq!(worst(b"\x80\x02}"), Some(Severity::Fail));
    }

    #[test]
    fn globals_are_judged_exactly_and_memo_sources_resolve() {
        // STACK_GLOBAL with both names from the memo, as protocol 4 legitimately writes.
        let p = b"\x80\x04\x8c\x02os\x94\x8c\x06system\x94h\x00h\x01\x93.";
        let f = findings(p);
        assert!(
            f.iter()
                .any(|(s, r)| *s == Severity::Fail && r.contains("global os.system")),
            "{f:?}"
        );
        let p = b"\x80\x02cargparse\nNamespace\n)R.";
        assert_eq!(worst(p), Some(Severity::Lead));
        let reviewed = Options {
            reviewed: vec!["argparse.Namespace".into()],
            legacy: false,
        };
        let out = run(p, &reviewed);
        assert!(out.findings.is_empty());
        assert_eq!(out.reviewed_used, ["argparse.Namespace"]);
    }

    #[test]
    fn globals_after_leaving_the_grammar_are_still_found() {
        // INST is outside the grammar; the GLOBAL after it is still named.
        let p = b"\x80\x02(iargparse\nNamespace\n0cbuiltins\neval\n.";
        let f = findings(p);
        assert!(f.iter().any(|(s, _)| *s == Severity::Lead));
        assert!(
            f.iter()
                .any(|(s, r)| *s == Severity::Fail && r.contains("builtins.eval")),
            "{f:?}"
        );
        // Trailing bytes after STOP hide a second pickle: it is scanned too.
        let p = b"\x80\x02N.\x80\x02cos\nsystem\n.";
        let f = findings(p);
        assert!(f.iter().any(|(_, r)| r.contains("trailing")), "{f:?}");
        assert!(
            f.iter()
                .any(|(s, r)| *s == Severity::Fail && r.contains("os.system")),
            "{f:?}"
        );
    }

    #[test]
    fn one_pickle_of_a_stream_ends_at_its_stop() {
        let stream = b"\x80\x02N.\x80\x02K\x05.";
        let (first, end) = run_one(stream, &Options::default());
        assert_eq!(end, Some(4));
        assert!(first.findings.is_empty(), "{:?}", first.findings);
        let (second, end) = run_one(&stream[4..], &Options::default());
        assert_eq!(end, Some(5));
        assert!(matches!(second.result, Some(Value::Int(5))));
        // Outside the grammar, the scan still stops at this pickle's STOP.
        let stream = b"\x80\x02(iargparse\nNamespace\n.cos\nsystem\n.";
        let (out, end) = run_one(stream, &Options::default());
        // PROTO 2, MARK, INST "argparse\nNamespace\n", then STOP at byte 23.
        assert_eq!(end, Some(24));
        assert!(out.findings.iter().all(|f| !f.reason.contains("os.system")));
        // A pickle without STOP has no end.
        assert_eq!(run_one(b"\x80\x02N", &Options::default()).1, None);
    }

    #[test]
    fn a_stop_inside_a_frame_that_runs_on_is_a_fail() {
        // PROTO 4, FRAME of 16 bytes, NONE, STOP, then 14 more bytes still inside the frame:
        // Python reads them with the frame, so the next pickle of a stream starts after them.
        let mut p = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00N.".to_vec();
        p.extend_from_slice(&[b'N'; 14]);
        let (out, end) = run_one(&p, &Options::default());
        assert_eq!(end, None);
        assert!(
            out.findings
                .iter()
                .any(|f| f.severity == Severity::Fail && f.reason.contains("inside a frame")),
            "{:?}",
            out.findings
        );
        // A frame that ends right after STOP, as Python writes it, is fine.
        let p = b"\x80\x04\x95\x02\x00\x00\x00\x00\x00\x00\x00N.";
        let (out, end) = run_one(p, &Options::default());
        assert_eq!(end, Some(p.len()));
        assert!(out.findings.is_empty(), "{:?}", out.findings);
    }

    #[test]
    fn legacy_persistent_ids_have_six_fields_and_zip_ones_five() {
        // ('storage', torch.FloatStorage, '1', 'cpu', 4[, None]) as the persistent id of a
        // bare storage.
        let zip = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04tQ.";
        let legacy = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04NtQ.";
        let as_legacy = Options {
            legacy: true,
            ..Options::default()
        };
        assert!(run(zip, &Options::default()).findings.is_empty());
        assert_eq!(run(zip, &as_legacy).worst(), Some(Severity::Fail));
        assert!(run(legacy, &as_legacy).findings.is_empty());
        assert_eq!(
            run(legacy, &Options::default()).worst(),
            Some(Severity::Fail)
        );
        // A view: elements 1..3 of the storage, under key '2'.
        let view = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04X\x01\x00\x00\x002K\x01K\x02\x87tQ.";
        let out = run(view, &as_legacy);
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        match out.result {
            Some(Value::Storage(s)) => {
                assert_eq!((s.key.as_str(), s.numel), ("2", 2));
                assert_eq!(s.view_of, Some(("1".to_owned(), 1)));
            }
            other => panic!("{other:?}"),
        }
        // A view past the end of its storage.
        let past = b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x001X\x03\x00\x00\x00cpuK\x04X\x01\x00\x00\x002K\x03K\x02\x87tQ.";
        let out = run(past, &as_legacy);
        assert!(
            out.findings
                .iter()
                .any(|f| f.reason.contains("covers elements")),
            "{:?}",
            out.findings
        );
    }

    #[test]
    fn contiguity_follows_c10() {
        let storage = Rc::new(StorageRef {
            class: StorageClass::Untyped,
            key: "0".into(),
            location: "cpu".into(),
            numel: 64,
            view_of: None,
        });
        let t = |shape: Vec<u64>, stride: Vec<u64>| TensorModel {
            storage: storage.clone(),
            dtype: crate::globals::dtype("uint8").unwrap(),
            storage_offset: 0,
            shape,
            stride,
            requires_grad: false,
            parameter: false,
            conj: false,
            neg: false,
            pickle_offset: 0,
        };
        assert!(t(vec![2, 3], vec![3, 1]).is_contiguous());
        assert!(!t(vec![2, 3], vec![1, 2]).is_contiguous());
        assert!(t(vec![2, 1, 3], vec![3, 99, 1]).is_contiguous());
        assert!(t(vec![0, 3], vec![7, 7]).is_contiguous());
        assert!(t(vec![], vec![]).is_contiguous());
        assert_eq!(check_bounds(&t(vec![8, 8], vec![8, 1])), Ok(()));
        assert!(check_bounds(&t(vec![8, 9], vec![8, 1])).is_err());
    }
}
