//! The machine's data model: typed values (dicts, lists, tuples, storages, tensors), the
//! outcome of a run and its findings, and the options a run takes. Everything else in
//! [`super`] works over these.

use crate::globals::{Class, Dtype};
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
    /// Positions by key, built once a dict outgrows a linear search (most dicts in a
    /// checkpoint are tensors' empty hooks). Boxed so that the many small dicts stay small.
    #[allow(clippy::box_collection)]
    pub(super) index: Option<Box<HashMap<KeyRepr, usize>>>,
    /// Attributes set by BUILD.
    pub attrs: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum KeyRepr {
    Str(Rc<str>),
    Int(i64),
}

fn key_repr(key: &Value) -> Option<KeyRepr> {
    match key {
        Value::Str(s) => Some(KeyRepr::Str(s.clone())),
        Value::Int(i) => Some(KeyRepr::Int(*i)),
        _ => None,
    }
}

/// Dicts up to this many items are searched linearly.
const LINEAR_DICT: usize = 8;

impl DictObject {
    pub(super) fn insert(&mut self, key: Value, value: Value) {
        let repr = key_repr(&key);
        let found = repr.as_ref().and_then(|r| match &self.index {
            Some(index) => index.get(r).copied(),
            None => self
                .items
                .iter()
                .position(|(k, _)| key_repr(k).as_ref() == Some(r)),
        });
        if let Some(i) = found {
            self.items[i].1 = value;
            return;
        }
        self.items.push((key, value));
        let at = self.items.len() - 1;
        match (&mut self.index, repr) {
            (Some(index), Some(r)) => {
                index.insert(r, at);
            }
            (None, _) if self.items.len() > LINEAR_DICT => {
                let index = self
                    .items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, (k, _))| key_repr(k).map(|r| (r, i)))
                    .collect();
                self.index = Some(Box::new(index));
            }
            _ => {}
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
    /// The pickle protocol (of its first PROTO opcode).
    pub protocol: Option<u8>,
    /// Where the first pickle ends, just past its STOP, when that is where every reader ends
    /// it (not when its STOP lies inside a frame that runs on).
    pub end: Option<usize>,
}

impl Outcome {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// The version of the `socair-wo` grammar a run models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum Grammar {
    /// `socair-wo/1`: what torch.save writes under Python 3. The default, so that a caller
    /// that does not choose keeps the verdicts it had before `/2` existed.
    #[default]
    V1,
    /// `socair-wo/2`: `/1` plus what Python 2's pickler wrote for torch 0.1 to 1.4 (`str` as
    /// SHORT_BINSTRING, BINSTRING or STRING, numbers as INT, LONG or LONG4, OrderedDicts as
    /// Python 2.7's `__reduce__` writes them), decoded as torch.load decodes them
    /// (`encoding="utf-8"`, `errors="strict"`).
    V2,
}

impl Grammar {
    /// Every version, oldest first.
    pub const ALL: [Grammar; 2] = [Grammar::V1, Grammar::V2];
    /// The newest version.
    pub const NEWEST: Grammar = Grammar::V2;
    /// The rule set's name.
    pub const RULE_SET: &'static str = "socair-wo";

    /// The version as a rule-set version string (`"1"`).
    pub fn version(self) -> &'static str {
        match self {
            Grammar::V1 => "1",
            Grammar::V2 => "2",
        }
    }

    /// `socair-wo/N`, as findings name it.
    pub fn name(self) -> &'static str {
        match self {
            Grammar::V1 => "socair-wo/1",
            Grammar::V2 => "socair-wo/2",
        }
    }

    /// The version a rule-set version string names.
    pub fn from_version(v: &str) -> Option<Grammar> {
        Grammar::ALL.into_iter().find(|g| g.version() == v)
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
    /// Size of the input the pickle comes from (a checkpoint holding it), which the memory
    /// the typed model may take grows with; 0 for the pickle's own size.
    pub input_len: u64,
    /// The grammar version to model.
    pub grammar: Grammar,
}

/// Opcode names, for findings.
pub(super) fn opcode_name(op: u8) -> &'static str {
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

/// Deepest tuple nesting accepted. Tuples are the only values that nest by ownership (lists
/// and dicts live in the arena), so this bounds the recursion of dropping or walking a value;
/// torch.save's pickler itself could not write anything near this deep.
pub const MAX_TUPLE_DEPTH: u16 = 256;

/// A tuple value, or `None` when it would nest deeper than [`MAX_TUPLE_DEPTH`].
pub(super) fn tuple(items: Vec<Value>) -> Option<Value> {
    let depth = 1 + items
        .iter()
        .map(|v| match v {
            Value::Tuple(_, d) => *d,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    (depth <= MAX_TUPLE_DEPTH).then(|| Value::Tuple(Rc::from(items), depth))
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

pub(super) fn describe(v: &Value) -> String {
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
