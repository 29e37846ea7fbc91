//! The machine's data model: typed values (dicts, lists, tuples, storages, tensors), the
//! outcome of a run and its findings, and the options a run takes. Everything else in
//! [`super`] works over these.

use crate::globals::{Class, Dtype};
pub use crate::grammar::Grammar;
use std::collections::HashMap;
use std::rc::Rc;

pub use socair_plugin_kit::Severity;

/// What a finding is about; each kind is bounded on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A reference to a global that runs code or does I/O.
    DangerousGlobal,
    /// A reference to a global outside the grammar.
    UnknownGlobal,
    /// A global whose name cannot be determined.
    UnnamedGlobal,
    /// A call of a global outside the grammar, or of something that is not a global.
    Call,
    /// An opcode outside the grammar, or out of its place.
    Opcode,
    /// Frames that readers read differently.
    Framing,
    /// Where Python raises.
    Malformed,
    /// Structure outside what torch.save writes (containers, persistent ids, tensors).
    Structure,
    /// The machine's own bounds.
    Bounds,
    /// Pickles after the first.
    Appended,
}

impl Kind {
    pub(crate) const ALL: [Kind; 10] = [
        Kind::DangerousGlobal,
        Kind::UnknownGlobal,
        Kind::UnnamedGlobal,
        Kind::Call,
        Kind::Opcode,
        Kind::Framing,
        Kind::Malformed,
        Kind::Structure,
        Kind::Bounds,
        Kind::Appended,
    ];

    /// The kind, plural, for an overflow summary; `grammar` names the version run.
    pub(crate) fn plural(self, grammar: &str) -> String {
        let text = match self {
            Kind::DangerousGlobal => "references to globals that run code or do I/O",
            Kind::UnknownGlobal => "references to globals outside socair-wo/1",
            Kind::UnnamedGlobal => "globals whose names cannot be determined",
            Kind::Call => "calls outside socair-wo/1",
            Kind::Opcode => "opcodes outside socair-wo/1 or out of place",
            Kind::Framing => "framing findings",
            Kind::Malformed => "places where Python raises",
            Kind::Structure => "structures outside socair-wo/1",
            Kind::Bounds => "bound findings",
            Kind::Appended => "appended pickles",
        };
        text.replace("socair-wo/1", grammar)
    }
}

/// One finding of the machine, at an opcode: its byte offset in the pickle, the opcode there
/// and its kind (each kind is bounded on its own). A reader places it in its file and makes a
/// `socair_plugin_kit::model::Finding` of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpcodeFinding {
    /// How bad.
    pub severity: Severity,
    /// Byte offset of the opcode in the pickle.
    pub offset: u64,
    /// The opcode's name.
    pub opcode: &'static str,
    /// What was found.
    pub reason: String,
    /// What kind of finding it is (each kind is bounded on its own).
    pub kind: Kind,
}

/// A container object: lists and dicts are mutable and shared by reference, as in Python.
#[derive(Debug, Clone)]
pub enum Object {
    /// A list.
    List(Vec<Value>),
    /// A dict or an OrderedDict, with attributes set by BUILD (a state dict's `_metadata`).
    Dict(DictObject),
    /// `socair-wo/3`: an instance of a plain data class the grammar lists (a
    /// `torch.distributed.checkpoint` metadata dataclass), made by NEWOBJ and given its state
    /// by BUILD, as pickle rebuilds a dataclass: data, never code.
    Record(RecordObject),
}

/// An instance of a data class the grammar lists, with the state BUILD gave it.
#[derive(Debug, Clone)]
pub struct RecordObject {
    /// `module.name` of its class.
    pub class: Rc<str>,
    /// The state BUILD set (`__dict__` items, or what its `__setstate__` takes), once set.
    pub state: Option<Value>,
}

/// A dict: items in insertion order; a key set twice keeps its first position and the last
/// value, as in Python.
#[derive(Debug, Clone, Default)]
pub struct DictObject {
    /// Whether it is an `OrderedDict`.
    pub ordered: bool,
    /// Whether it is a `collections.Counter` (`socair-wo/3`).
    pub counter: bool,
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
    /// Python attributes loading sets on it (`socair-wo/3`: `_rebuild_from_type_v2` and
    /// `_rebuild_parameter_with_state` state), by name: data, not carried by a conversion.
    pub attributes: Vec<Rc<str>>,
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
    /// `socair-wo/3`: a tensor layout, as `torch.serialization._get_layout` returns it.
    Layout(Layout),
    /// `socair-wo/3`: a value the grammar models as data that holds no tensor (a
    /// `torch.device`, a set of scalars, a complex number, a `pathlib` path, an enum member);
    /// the text shows it as Python would.
    Data(Rc<str>),
    /// `socair-wo/3`: a tensor torch builds from other tensors or from no bytes at all (a
    /// sparse tensor, a quantized tensor, a meta tensor), with the tensors it holds by part
    /// name.
    Composite(Rc<Composite>),
}

/// A tensor layout (`torch.layout`), by the name `str(layout)` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `torch.strided`.
    Strided,
    /// `torch.sparse_coo`.
    SparseCoo,
    /// `torch.sparse_csr`.
    SparseCsr,
    /// `torch.sparse_csc`.
    SparseCsc,
    /// `torch.sparse_bsr`.
    SparseBsr,
    /// `torch.sparse_bsc`.
    SparseBsc,
    /// `torch._mkldnn`.
    Mkldnn,
    /// `torch.jagged`.
    Jagged,
}

impl Layout {
    /// Every layout with the name `str(layout)` gives (the keys of `_get_layout`'s cache,
    /// torch/serialization.py at v2.15.0: every `torch.layout` in `torch.__dict__`).
    pub const ALL: [(Layout, &'static str); 8] = [
        (Layout::Strided, "torch.strided"),
        (Layout::SparseCoo, "torch.sparse_coo"),
        (Layout::SparseCsr, "torch.sparse_csr"),
        (Layout::SparseCsc, "torch.sparse_csc"),
        (Layout::SparseBsr, "torch.sparse_bsr"),
        (Layout::SparseBsc, "torch.sparse_bsc"),
        (Layout::Mkldnn, "torch._mkldnn"),
        (Layout::Jagged, "torch.jagged"),
    ];

    /// `str(layout)`.
    pub fn name(self) -> &'static str {
        Layout::ALL
            .iter()
            .find(|(l, _)| *l == self)
            .map_or("torch.strided", |(_, n)| n)
    }

    /// The layout `str(layout)` names.
    pub fn from_name(name: &str) -> Option<Layout> {
        Layout::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(l, _)| *l)
    }
}

/// A tensor torch builds from other values: what it is, the tensors it holds under their part
/// names (fingerprinted under `<name>.<part>`, outside the state-dict model), and why it lies
/// outside the model.
#[derive(Debug, Clone)]
pub struct Composite {
    /// What it is (`a sparse COO tensor`).
    pub kind: String,
    /// Its tensors by part name (`indices`, `values`, `int_repr`, …); none for a meta tensor.
    pub parts: Vec<(&'static str, Value)>,
    /// Why it is not part of the state-dict model (said where its tensors are listed).
    pub why: &'static str,
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
pub struct Unpickled {
    /// The value at STOP, when the machine stayed inside the grammar to the end.
    pub result: Option<Value>,
    /// The object arena `Value::Obj` indexes.
    pub objects: Vec<Object>,
    /// Every finding, in pickle order.
    pub findings: Vec<OpcodeFinding>,
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
    /// The NumPy arrays whose raw bytes lie in the pickle (or, in joblib mode, after their
    /// wrappers), by their path in the pickled object; only while the typed model ran to the
    /// end (a pickle that left it builds values no path names).
    pub arrays: Vec<super::profile::PickledArray>,
    /// The numeric arrays whose bytes are not located in the data (a protocol 0 to 2 pickle
    /// holds them as latin-1 text), by path, each with why.
    pub unread_arrays: Vec<(String, String)>,
    /// The numeric arrays whose bytes the model decoded (below protocol 3), with those bytes
    /// (not in `unread_arrays`).
    pub decoded_arrays: Vec<super::profile::DecodedArray>,
    /// The models pickled XGBoost and LightGBM Boosters hold, each said in a phrase
    /// (`xgboost.core.Booster: an XGBoost memory snapshot of …`), read as their libraries
    /// load them (`socair-sklearn/1`).
    pub models: Vec<String>,
}

impl Unpickled {
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
    /// Size of the input the pickle comes from (a checkpoint holding it), which the memory
    /// the typed model may take grows with; 0 for the pickle's own size.
    pub input_len: u64,
    /// The grammar version to model.
    pub grammar: Grammar,
    /// How the loader decodes a Python 2 `str` (SHORT_BINSTRING, BINSTRING, STRING) whose
    /// bytes are not ASCII; read under `socair-wo/3` only (`/2` decodes every pickle as
    /// torch.load does).
    pub python2_str: Python2Str,
    /// The library profile that judges a pickle outside a torch checkpoint
    /// ([`super::profile::Profile::Torch`]: none, `socair-wo` alone).
    pub profile: super::profile::Profile,
    /// Read as `joblib.load` reads a `joblib.dump` file (joblib's `NumpyUnpickler`): the
    /// array wrappers' raw bytes follow them in the stream.
    pub joblib: bool,
}

impl Options {
    /// The rule set findings name: the profile's (`socair-data/1`) when one judges the
    /// pickle, else the grammar's (`socair-wo/3`).
    pub fn rules_name(&self) -> &'static str {
        self.profile.name().unwrap_or(self.grammar.name())
    }
}

/// How a Python 2 `str`'s bytes become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Python2Str {
    /// As `torch.load` decodes them: `encoding="utf-8"`, strictly (torch/serialization.py
    /// `load`: `pickle_load_args["encoding"] = "utf-8"` unless the caller passes another);
    /// bytes that are not UTF-8 make it raise.
    #[default]
    TorchUtf8,
    /// As the caller of `pickle.load` chooses: a plain pickle has no one loader. Bytes that
    /// are not ASCII make the default `encoding="ASCII"` raise, and are read as Latin-1 by the
    /// loaders that read Python 2 pickles (numpy's `np.load(..., encoding="latin1")`,
    /// gensim's `pickle.load(..., encoding="latin1")`): modeled as Latin-1 text, with a LEAD.
    CallerChooses,
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
        Value::Layout(l) => format!("the layout {}", l.name()),
        Value::Data(what) => format!("the value {what}"),
        Value::Composite(c) => c.kind.clone(),
    }
}
