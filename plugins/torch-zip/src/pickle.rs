//! The `socair-wo/1` pickle machine: runs a pickle over typed values, never over Python
//! objects. Nothing is imported or called; a global is a name that [`crate::globals`]
//! classifies, and only the grammar's own globals have a meaning here (they build tensors,
//! storages and ordered dicts).
//!
//! Every pickle goes through it, whatever its protocol. Every opcode torch.save writes
//! (protocols 2 to 5) is modeled over typed values; anything else is a finding, after which
//! the machine goes on over *abstract* values: it keeps the exact stack, marks and memo the C
//! unpickler keeps (what is a `str` and which one, what is certainly not, what could be
//! anything), so that every global the pickle makes Python look up is named, from `GLOBAL`,
//! `INST`, or `STACK_GLOBAL` over strings however they reached the stack (memo, `DUP`, `POP`,
//! marks), or reported as one whose name cannot be determined. The machine stops only where
//! CPython's unpickler raises.
//!
//! Bytes reach it as the C unpickler reads them ([`reader`]): a pickle whose frames disagree
//! with its opcodes is read both contiguously and with the disagreeing frames read whole, so
//! that no call hides in either reading. Pickles appended after STOP are run too, each as its
//! own pickle.
//!
//! Resources are bounded by the pickle's real size: every opcode consumes at least one byte;
//! typed values are charged against a budget proportional to the input, past which the machine
//! goes on abstractly in four bytes per stack slot or memo entry; every length is checked
//! against the bytes that remain; findings are bounded per kind with exact counts of the rest.

mod findings;
mod machine;
pub mod reader;
pub mod text;
mod typed;

use crate::globals::{Class, Dtype};
use findings::Findings;
pub use findings::{group, Kind, MAX_PER_KIND};
use machine::{Ended, Run};
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
    index: Option<Box<HashMap<KeyRepr, usize>>>,
    /// Attributes set by BUILD.
    pub attrs: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyRepr {
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
    fn insert(&mut self, key: Value, value: Value) {
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
}

/// Most framing replays (pickles re-read with some frames read whole) per pickle; past it, a
/// finding says the rest were not followed.
pub const MAX_FRAMING_REPLAYS: usize = 8;

/// The largest pickle the machine runs (torch's readers hand it at most 1 GiB): offsets are
/// kept in 30 bits.
pub const MAX_DATA: usize = (1 << 30) - 16;

/// Runs the pickle in `data`, then every pickle appended after its STOP (each as its own
/// pickle, with offsets in `data`). The outcome's typed model is the first pickle's.
pub fn run(data: &[u8], options: &Options) -> Outcome {
    let mut findings = Findings::new();
    let (mut out, ends) = first_pickle(data, options, &mut findings);
    appended(data, options, &ends, &mut findings);
    out.findings = findings.finish();
    out
}

/// Runs the first pickle of a stream in `data` and returns where it ends (just past its STOP),
/// or `None` when no STOP was reached or readers end it in different places: the bytes after
/// it belong to whatever follows.
pub fn run_one(data: &[u8], options: &Options) -> (Outcome, Option<usize>) {
    let mut findings = Findings::new();
    let (mut out, _) = first_pickle(data, options, &mut findings);
    out.findings = findings.finish();
    let end = out.end;
    (out, end)
}

/// Whether `head` (the first bytes of a file of `file_len` bytes) is a pickle: a PROTO opcode
/// of a protocol Python reads (0 to 5), or, for protocol 0 and 1 pickles, which have no
/// header, bytes that run as a pickle under the C unpickler's own discipline (valid opcodes
/// and arguments, no stack underflow, no missing mark or memo entry) to a STOP, or to the end
/// of the head when the file goes on.
pub fn looks_like_pickle(head: &[u8], file_len: u64) -> bool {
    match head {
        [] => false,
        [0x80, 0..=5, ..] => true,
        [0x80, ..] => false,
        _ if head.len() > MAX_DATA => false,
        _ => {
            let whole = head.len() as u64 >= file_len;
            let mut sink = Findings::new();
            let options = Options::default();
            let run = Run::new(head, 0, &options, &mut sink, &[], false).detecting();
            match run.go().ended {
                Ended::Stop(_) => true,
                Ended::Raised(reader::Raise::Truncated(_), ops) => !whole && ops >= 2,
                Ended::Raised(..) => false,
            }
        }
    }
}

/// Where a pickle's next reader may start after it: right after STOP, and after the frame a
/// STOP lies in, for a reader that reads frames whole.
type Ends = Vec<usize>;

/// The first pickle, typed, with its framing replays.
fn first_pickle(data: &[u8], options: &Options, findings: &mut Findings) -> (Outcome, Ends) {
    if data.len() > MAX_DATA {
        findings.add(Kind::Bounds, Severity::Lead, 0, "PROTO", None, || {
            format!(
                "a pickle of {} bytes, more than the {MAX_DATA} bytes the machine runs: not modeled",
                data.len()
            )
        });
        return (Outcome::default(), Vec::new());
    }
    let run = Run::new(data, 0, options, findings, &[], false).go();
    let mut ends: Ends = Vec::new();
    let mut end = None;
    if let Ended::Stop(stop_end) = run.ended {
        ends.push(stop_end);
        end = Some(stop_end).filter(|_| run.alt_end.is_none());
    }
    ends.extend(run.alt_end);
    let (ambiguous, more) = (run.ambiguous.clone(), run.ambiguous_more);
    let mut out = run.outcome;
    out.end = end;
    ends.extend(replays(
        data,
        0,
        options,
        findings,
        (&ambiguous, more),
        false,
    ));
    (out, ends)
}

/// Replays the pickle at `start` with the frames that the contiguous reading found ambiguous
/// read whole, one choice after another (depth first, at most [`MAX_FRAMING_REPLAYS`]), and
/// returns the ends those readings find.
fn replays(
    data: &[u8],
    start: usize,
    options: &Options,
    findings: &mut Findings,
    (ambiguous, more): (&[usize], usize),
    appended: bool,
) -> Ends {
    let mut ends = Vec::new();
    // Readings to follow, each the list of frames read whole; only as many as can be run.
    let mut pending: Vec<Vec<usize>> = Vec::new();
    let mut not_followed = more;
    let offer = |pending: &mut Vec<Vec<usize>>,
                 not_followed: &mut usize,
                 prefix: &[usize],
                 frames: &[usize],
                 done: usize| {
        let last = prefix.last().copied();
        for &f in frames.iter().filter(|&&f| last.is_none_or(|l| f > l)) {
            if done + pending.len() < MAX_FRAMING_REPLAYS {
                let mut next = prefix.to_vec();
                next.push(f);
                pending.push(next);
            } else {
                *not_followed += 1;
            }
        }
    };
    offer(&mut pending, &mut not_followed, &[], ambiguous, 0);
    pending.reverse();
    let mut done = 0;
    while let Some(exact) = pending.pop() {
        done += 1;
        let run = Run::new(data, start, options, findings, &exact, appended).go();
        if let Ended::Stop(end) = run.ended {
            ends.push(end);
        }
        ends.extend(run.alt_end);
        not_followed += run.ambiguous_more;
        let before = pending.len();
        offer(
            &mut pending,
            &mut not_followed,
            &exact,
            &run.ambiguous,
            done,
        );
        pending[before..].reverse();
    }
    if not_followed > 0 {
        findings.add(Kind::Bounds, Severity::Fail, start as u64, "FRAME", None, || {
            format!(
                "{} more ways to read this pickle's frames were not followed (at most {MAX_FRAMING_REPLAYS} are): globals only those readings reach are not named",
                group(not_followed as u64)
            )
        });
    }
    ends
}

/// Runs the pickles appended after the first one's possible ends, each as its own pickle,
/// abstractly: Python reads them only if a program calls `pickle.load` again, so where they
/// do not decode it is a LEAD, and what they would run is judged as in the first.
fn appended(data: &[u8], options: &Options, ends: &[usize], findings: &mut Findings) {
    // Every end lies past its pickle's start, so taking the nearest start first never meets
    // a start twice, and the set holds only the few starts readers disagree on.
    let mut starts: std::collections::BTreeSet<usize> =
        ends.iter().copied().filter(|&e| e < data.len()).collect();
    if let Some(&at) = starts.first() {
        findings.add(Kind::Appended, Severity::Lead, at as u64, "STOP", None, || {
            format!(
                "{} trailing bytes follow STOP; torch never reads them: they are run as the pickles a second pickle.load would read",
                data.len() - at
            )
        });
    }
    let mut next = starts.pop_first();
    while let Some(start) = next {
        let run = Run::new(data, start, options, findings, &[], true).go();
        let end = match run.ended {
            Ended::Stop(end) if end < data.len() => Some(end),
            _ => None,
        };
        if run.alt_end.is_none() && run.ambiguous.is_empty() && run.ambiguous_more == 0 {
            // The common case: one reading, one end.
            next = match (end, starts.first()) {
                (Some(e), Some(&s)) if s <= e => {
                    starts.insert(e);
                    starts.pop_first()
                }
                (Some(e), _) => Some(e),
                (None, _) => starts.pop_first(),
            };
            continue;
        }
        let (ambiguous, more) = (run.ambiguous.clone(), run.ambiguous_more);
        starts.extend(end);
        starts.extend(run.alt_end);
        starts.extend(replays(
            data,
            start,
            options,
            findings,
            (&ambiguous, more),
            true,
        ));
        starts.retain(|&e| e < data.len());
        next = starts.pop_first();
    }
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

/// Deepest tuple nesting accepted. Tuples are the only values that nest by ownership (lists
/// and dicts live in the arena), so this bounds the recursion of dropping or walking a value;
/// torch.save's pickler itself could not write anything near this deep.
pub const MAX_TUPLE_DEPTH: u16 = 256;

/// A tuple value, or `None` when it would nest deeper than [`MAX_TUPLE_DEPTH`].
fn tuple(items: Vec<Value>) -> Option<Value> {
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
mod tests;
