//! One run of one pickle: the opcode loop, the stack discipline of CPython's C unpickler, the
//! abstract values the machine goes on with once a pickle leaves the grammar, and the naming
//! and judging of every global Python would look up. The typed (grammar) side is in
//! [`super::typed`].

use super::findings::{quote, Findings, Kind};
use super::reader::{FrameEvent, Raise, Reader};
use super::text::{self, Text};
use super::values::{
    opcode_name, GlobalRef, Object, Options, Outcome, Severity, StorageRef, TensorModel, Value,
};
use crate::globals::Dtype;
use crate::globals::{classify_pickled, Class, MAX_NAME_BYTES};
use std::collections::HashMap;
use std::mem::size_of;
use std::rc::Rc;

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    /// At STOP; the offset just past it.
    Stop(usize),
    /// Where CPython raises, after this many opcodes.
    Raised(Raise, u64),
}

/// What a run leaves.
pub struct RunResult {
    /// How it ended.
    pub ended: Ended,
    /// Where a reader that reads frames whole ends this pickle, when STOP lies inside a frame.
    pub alt_end: Option<usize>,
    /// Frames whose being read whole changes what follows (replayed by the caller), and how
    /// many more there were than listed.
    pub ambiguous: Vec<usize>,
    pub ambiguous_more: usize,
    /// The typed outcome (findings excepted: they go to the shared [`Findings`]).
    pub outcome: Outcome,
}

/// An abstract value: what the C unpickler's stack or memo holds, as far as naming globals
/// needs: whether it is a `str`, and which.
pub type Id = u32;
/// Could be anything, a `str` included (the result of a call, a global object).
pub const UNKNOWN: Id = 0;
/// Certainly not a `str`.
pub const NOT_STR: Id = 1;
/// A `str` that cannot name anything importable: longer than [`MAX_NAME_BYTES`], or holding
/// lone surrogates.
pub const UNNAMEABLE: Id = 2;
/// `STR_AT + offset`: the `str` the string opcode at that offset pushed (read contiguously,
/// re-decoded from there when it is needed).
pub const STR_AT: Id = 3;
/// Offsets below this are kept in [`STR_AT`] ids.
const MAX_STR_AT: usize = (GLOBAL - STR_AT) as usize;
/// `GLOBAL | index`: a global object, judged, in [`Abstract::globals`].
pub const GLOBAL: Id = 1 << 30;
/// `OWNED | index`: a `str` kept in [`Abstract::owned`] (from the typed model, or read
/// across a frame's end).
pub const OWNED: Id = 1 << 31;
/// Most distinct globals kept as abstract values; past it a global is [`UNKNOWN`] and calls
/// of it are calls of something only running the pickle would reveal.
pub const MAX_ABSTRACT_GLOBALS: usize = 4096;

/// A global object as an abstract value: how it shows in a finding, what it is.
#[derive(Debug, Clone)]
pub struct AbsGlobal {
    /// `module.name` as pickled (quoted for findings).
    pub shown: Rc<str>,
    pub class: Class,
    pub reviewed: bool,
}

/// Most classified globals cached per run.
pub const MAX_JUDGED: usize = 4096;

/// A classified global.
#[derive(Debug)]
pub struct Judged {
    /// Whether this run has reported it (repeats are only counted).
    noted: std::cell::Cell<bool>,
    /// Its abstract value in this run, once made.
    abs_id: std::cell::Cell<Option<Id>>,
    renaming: bool,
    module: Box<str>,
    name: Box<str>,
    /// `module.name` as pickled.
    raw: Box<str>,
    /// `module.name` as Python imports it.
    effective: Box<str>,
    lookup: crate::globals::Lookup,
}

/// Most sparse memo indices kept abstractly; past it the memo is no longer exact and every
/// fetch is [`UNKNOWN`].
pub const MAX_SPARSE_MEMO: usize = 1 << 20;

/// The stack and its marks, with the C unpickler's discipline (`Pdata`, `marker`, the fence).
#[derive(Debug, Clone)]
pub struct Stack<T> {
    pub items: Vec<T>,
    pub marks: Vec<u32>,
}

impl<T> Default for Stack<T> {
    fn default() -> Self {
        Stack {
            items: Vec::new(),
            marks: Vec::new(),
        }
    }
}

pub(super) fn truncated_global() -> Raise {
    truncated_name()
}

pub fn underflow() -> Raise {
    Raise::Invalid("unpickling stack underflow".into())
}

impl<T: Clone> Stack<T> {
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// The position of the top mark, below which nothing may be popped.
    pub fn fence(&self) -> usize {
        self.marks.last().map_or(0, |&m| m as usize)
    }
    pub fn push(&mut self, v: T) {
        self.items.push(v);
    }
    /// `PDATA_POP`.
    pub fn pop(&mut self) -> Result<T, Raise> {
        if self.items.len() <= self.fence() {
            return Err(underflow());
        }
        self.items.pop().ok_or_else(underflow)
    }
    /// The top value, which must lie above the fence.
    pub fn top(&self) -> Result<&T, Raise> {
        if self.items.len() <= self.fence() {
            return Err(underflow());
        }
        self.items.last().ok_or_else(underflow)
    }
    pub fn mark(&mut self) {
        // The stack never holds more values than the pickle has bytes (< 2^31).
        self.marks.push(self.items.len() as u32);
    }
    /// `marker()`: pops the top mark and returns its position.
    pub fn marker(&mut self) -> Result<usize, Raise> {
        self.marks
            .pop()
            .map(|m| m as usize)
            .ok_or_else(|| Raise::Invalid("could not find MARK".into()))
    }
    /// `load_counted_tuple`: the top `n` values.
    pub fn pop_n(&mut self, n: usize) -> Result<Vec<T>, Raise> {
        if self.items.len() < n || self.items.len() - n < self.fence() {
            return Err(underflow());
        }
        Ok(self.items.split_off(self.items.len() - n))
    }
    /// Drops the top `n` values, as [`Stack::pop_n`] checks them.
    pub fn drop_n(&mut self, n: usize) -> Result<(), Raise> {
        if self.items.len() < n || self.items.len() - n < self.fence() {
            return Err(underflow());
        }
        self.items.truncate(self.items.len() - n);
        Ok(())
    }

    /// Everything from `at` up (after [`Stack::marker`] returned `at`).
    pub fn split_off(&mut self, at: usize) -> Vec<T> {
        self.items.split_off(at.min(self.items.len()))
    }
    pub fn truncate(&mut self, at: usize) {
        self.items.truncate(at);
    }
    /// The C unpickler's target check (`do_append`, `do_setitems`, `load_additems`): the
    /// container at `x - 1` must lie above the fence.
    pub fn check_target(&self, x: isize) -> Result<(), Raise> {
        if x > self.items.len() as isize || x <= self.fence() as isize {
            return Err(underflow());
        }
        Ok(())
    }
    /// `load_pop`: a mark at the top of the stack is popped instead of a value.
    pub fn pop_op(&mut self) -> Result<(), Raise> {
        if self
            .marks
            .last()
            .is_some_and(|&m| m as usize == self.items.len())
        {
            self.marks.pop();
            return Ok(());
        }
        self.pop().map(|_| ())
    }
    /// `load_dup`.
    pub fn dup(&mut self) -> Result<(), Raise> {
        let top = self.top()?.clone();
        self.items.push(top);
        Ok(())
    }
}

/// The memo as abstract values: indices set by MEMOIZE (and PUT in order) densely, others
/// sparsely; `memo_len` counts distinct indices, as the C unpickler's does.
#[derive(Debug, Default)]
pub struct AbsMemo {
    dense: Vec<Id>,
    sparse: HashMap<u64, Id>,
    /// Past [`MAX_SPARSE_MEMO`]: entries were dropped, so fetches say [`UNKNOWN`].
    inexact: bool,
}

impl AbsMemo {
    pub fn memo_len(&self) -> u64 {
        (self.dense.len() + self.sparse.len()) as u64
    }
    /// `None` where the C unpickler raises (never stored).
    pub fn get(&self, idx: u64) -> Option<Id> {
        if self.inexact {
            return Some(UNKNOWN);
        }
        if let Ok(i) = usize::try_from(idx) {
            if let Some(&v) = self.dense.get(i) {
                return Some(v);
            }
        }
        self.sparse.get(&idx).copied()
    }
    /// Stores `v` at `idx`; `false` when the entry had to be dropped.
    pub fn put(&mut self, idx: u64, v: Id) -> bool {
        if let Ok(i) = usize::try_from(idx) {
            if i < self.dense.len() {
                self.dense[i] = v;
                return true;
            }
        }
        if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
            return true;
        }
        if idx == self.dense.len() as u64 {
            self.dense.push(v);
            return true;
        }
        if self.sparse.len() >= MAX_SPARSE_MEMO {
            self.inexact = true;
            return false;
        }
        self.sparse.insert(idx, v);
        true
    }
}

/// The machine's state once the pickle has left the grammar.
#[derive(Debug, Default)]
pub struct Abstract {
    pub stack: Stack<Id>,
    pub memo: AbsMemo,
    /// Strings kept whole: those of the typed model, and those read across a frame's end.
    pub owned: Vec<Rc<str>>,
    owned_index: HashMap<Rc<str>, Id>,
    /// Global objects on the stack or in the memo.
    pub globals: Vec<AbsGlobal>,
    global_index: HashMap<(Rc<str>, bool), Id>,
}

impl Abstract {
    /// The id of a global object.
    pub fn global(&mut self, g: AbsGlobal) -> Id {
        let key = (g.shown.clone(), matches!(g.class, Class::Dangerous(_)));
        if let Some(&id) = self.global_index.get(&key) {
            return id;
        }
        if self.globals.len() >= MAX_ABSTRACT_GLOBALS {
            return UNKNOWN;
        }
        let id = GLOBAL | self.globals.len() as Id;
        self.globals.push(g);
        self.global_index.insert(key, id);
        id
    }

    /// The id of `s` kept whole.
    pub fn own(&mut self, s: Rc<str>) -> Id {
        if s.len() > MAX_NAME_BYTES {
            return UNNAMEABLE;
        }
        if let Some(&id) = self.owned_index.get(&s) {
            return id;
        }
        let id = OWNED | self.owned.len() as Id;
        if id == Id::MAX {
            return UNNAMEABLE;
        }
        self.owned.push(s.clone());
        self.owned_index.insert(s, id);
        id
    }
}

pub(super) const VALUE: usize = size_of::<Value>();
/// What a hash-map entry costs beyond its key and value.
pub(super) const ENTRY: usize = 24;

/// The memo of typed values: indices in the order pickle writes them (0, 1, 2, …) densely,
/// any others in a map.
#[derive(Debug, Default)]
pub struct Memo {
    pub(super) dense: Vec<Value>,
    pub(super) sparse: HashMap<u64, Value>,
}

impl Memo {
    /// The C unpickler's `memo_len`: distinct indices stored.
    pub fn len(&self) -> u64 {
        (self.dense.len() + self.sparse.len()) as u64
    }
    pub fn get(&self, idx: u64) -> Option<&Value> {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.dense.get(i))
            .or_else(|| self.sparse.get(&idx))
    }
    /// Stores `v`; returns the bytes it newly takes.
    pub fn put(&mut self, idx: u64, v: Value) -> usize {
        if let Some(slot) = usize::try_from(idx)
            .ok()
            .and_then(|i| self.dense.get_mut(i))
        {
            *slot = v;
            return 0;
        }
        if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
            return 0;
        }
        if idx == self.dense.len() as u64 {
            self.dense.push(v);
            return VALUE;
        }
        self.sparse.insert(idx, v);
        VALUE + 2 * ENTRY
    }
    /// Every entry, by index.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &Value)> {
        self.dense
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64, v))
            .chain(self.sparse.iter().map(|(&i, v)| (i, v)))
    }
}

/// The typed model's state.
#[derive(Debug, Default)]
pub struct Typed {
    pub stack: Stack<Value>,
    pub memo: Memo,
    pub objects: Vec<Object>,
    pub storages: Vec<Rc<StorageRef>>,
    pub tensors: Vec<Rc<TensorModel>>,
    pub(super) storage_keys: HashMap<String, Rc<StorageRef>>,
    pub(super) view_keys: HashMap<String, Rc<StorageRef>>,
    pub(super) untyped_dtypes: HashMap<String, &'static Dtype>,
    /// Bytes the model's allocations have taken, monotonic (an over-estimate); the stack is
    /// counted apart, by its length ([`Typed::footprint`]).
    pub cost: usize,
}

impl Typed {
    /// What the model takes now, in bytes.
    pub fn footprint(&self) -> usize {
        self.cost
            .saturating_add(self.stack.items.len() * VALUE)
            .saturating_add(self.stack.marks.len() * 4)
    }
}

/// Whether the typed model of `grammar` runs `op`; any other opcode leaves the grammar.
/// `socair-wo/2` adds the opcodes Python 2's pickler wrote for `str` (SHORT_BINSTRING,
/// BINSTRING, STRING) and for numbers beyond BININT (INT, LONG, LONG4).
pub fn in_grammar(op: u8, grammar: super::values::Grammar) -> bool {
    if grammar >= super::values::Grammar::V2
        && matches!(op, b'U' | b'T' | b'S' | b'I' | b'L' | 0x8b)
    {
        return true;
    }
    matches!(
        op,
        b'(' | b'.' | b'}' | b']' | b')' | b't' | 0x85
            ..=0x87
                | b'q'
                | b'r'
                | 0x94
                | b'h'
                | b'j'
                | b'J'
                | b'K'
                | b'M'
                | 0x8a
                | b'G'
                | b'N'
                | 0x88
                | 0x89
                | b'X'
                | 0x8c
                | 0x8d
                | b'B'
                | b'C'
                | 0x8e
                | b'c'
                | 0x93
                | b'Q'
                | b's'
                | b'u'
                | b'a'
                | b'e'
                | b'R'
                | 0x81
                | b'b'
    )
}

/// One run of one pickle.
pub struct Run<'a, 'f> {
    pub(super) data: &'a [u8],
    pub(super) start: usize,
    pub(super) reader: Reader<'a>,
    pub(super) options: &'a Options,
    findings: &'f mut Findings,
    /// A pickle after the first of a stream: where Python raises is a LEAD.
    appended: bool,
    /// Only deciding whether bytes are a pickle: nothing is reported.
    detecting: bool,
    /// The C unpickler's `self->proto`: the last PROTO of this load, 0 before any.
    pub(super) proto: u8,
    first_proto: Option<u8>,
    ops: u64,
    pub(super) op_at: usize,
    pub(super) op_name: &'static str,
    /// The grammar's typed model, while the pickle stays inside it.
    pub(super) typed: Option<Box<Typed>>,
    /// The abstract state, after it left.
    pub(super) abs: Option<Box<Abstract>>,
    /// Why to leave the grammar once the current opcode is done.
    pub(super) leave_after: Option<String>,
    /// Typed memory allowed, in bytes.
    pub(super) budget: usize,
    result: Option<Value>,
    /// Storages and tensors the typed model had built when the pickle left the grammar.
    kept: (Vec<Rc<StorageRef>>, Vec<Rc<TensorModel>>),
    pub(super) reviewed_used: Vec<String>,
    judged: HashMap<u64, Rc<Judged>>,
}

/// Typed memory allowed for a pickle read from an input of `n` bytes (the pickle itself, or
/// the checkpoint holding it): with the input, the storages kept when the model stops, and
/// the abstract state after it (at most four bytes an opcode), a run stays under
/// 64 MiB + 8× the input.
pub fn typed_budget(n: usize) -> usize {
    (32 << 20) + 3 * n
}

impl<'a, 'f> Run<'a, 'f> {
    /// A run of the pickle at `start`, reading the frames listed in `exact` whole. The first
    /// pickle's contiguous reading is typed; replays and appended pickles are abstract.
    pub fn new(
        data: &'a [u8],
        start: usize,
        options: &'a Options,
        findings: &'f mut Findings,
        exact: &'a [usize],
        appended: bool,
    ) -> Self {
        let typed = exact.is_empty() && !appended;
        Run {
            data,
            start,
            reader: Reader::new(data, start, exact),
            options,
            findings,
            appended,
            detecting: false,
            proto: 0,
            first_proto: None,
            ops: 0,
            op_at: start,
            op_name: "",
            typed: typed.then(|| Box::new(Typed::default())),
            abs: (!typed).then(|| Box::new(Abstract::default())),
            leave_after: None,
            budget: typed_budget(
                data.len()
                    .saturating_sub(start)
                    .max(usize::try_from(options.input_len).unwrap_or(usize::MAX)),
            ),
            result: None,
            kept: (Vec::new(), Vec::new()),
            reviewed_used: Vec::new(),
            judged: HashMap::new(),
        }
    }

    /// Only decides whether the bytes run as a pickle: abstract, reporting nothing.
    pub fn detecting(mut self) -> Self {
        self.detecting = true;
        self.typed = None;
        self.abs = Some(Box::new(Abstract::default()));
        self
    }

    /// Records a finding at the current opcode (not before a replay's divergence, where it
    /// repeats the contiguous reading).
    pub(super) fn note(
        &mut self,
        kind: Kind,
        severity: Severity,
        key: Option<&str>,
        reason: impl FnOnce() -> String,
    ) {
        // A replay reports what only its reading reaches: not before it diverges, and not the
        // framing, which the contiguous reading reports at every place it disagrees.
        if !self.reporting(kind) {
            return;
        }
        self.findings
            .add(kind, severity, self.op_at as u64, self.op_name, key, reason);
    }

    /// Runs to STOP or to where Python raises.
    pub fn go(mut self) -> RunResult {
        let mut alt_end = None;
        let ended = loop {
            let step = self.step();
            self.frame_events();
            match step {
                Ok(None) => {}
                Ok(Some((end, alt))) => {
                    alt_end = alt;
                    break Ended::Stop(end);
                }
                Err(raise) => {
                    self.raised(&raise);
                    break Ended::Raised(raise, self.ops);
                }
            }
            if let Some(why) = self.leave_after.take() {
                self.leave(move || why);
            } else if self
                .typed
                .as_ref()
                .is_some_and(|t| t.footprint() > self.budget)
            {
                let budget = self.budget;
                self.leave(move || {
                    format!(
                        "the pickle builds more than {budget} bytes of values, more than a weights-only pickle of its size: modeled no further (globals are still named)"
                    )
                });
            }
        };
        let (ambiguous, ambiguous_more) = self.reader.ambiguous();
        let (ambiguous, ambiguous_more) = (ambiguous.to_vec(), ambiguous_more);
        let mut outcome = Outcome {
            protocol: self.first_proto,
            reviewed_used: std::mem::take(&mut self.reviewed_used),
            ..Outcome::default()
        };
        match self.typed.take() {
            Some(t) => {
                let t = *t;
                outcome.result = self.result.take();
                outcome.objects = t.objects;
                outcome.storages = t.storages;
                outcome.tensors = t.tensors;
            }
            None => {
                outcome.storages = std::mem::take(&mut self.kept.0);
                outcome.tensors = std::mem::take(&mut self.kept.1);
            }
        }
        RunResult {
            ended,
            alt_end,
            ambiguous,
            ambiguous_more,
            outcome,
        }
    }

    fn raised(&mut self, raise: &Raise) {
        let why = match raise {
            Raise::Truncated(why) | Raise::Invalid(why) => why.clone(),
        };
        let severity = if self.appended {
            Severity::Lead
        } else {
            Severity::Fail
        };
        let prefix = if self.appended {
            "bytes after STOP that a further pickle.load would reject"
        } else {
            "malformed pickle"
        };
        self.note(Kind::Malformed, severity, None, || {
            format!("{prefix}: Python raises here: {why} (readers may disagree on what follows)")
        });
    }

    fn frame_events(&mut self) {
        if !self.reader.has_events() {
            return;
        }
        for event in self.reader.take_events() {
            self.note(Kind::Framing, Severity::Fail, None, move || {
                frame_finding(&event)
            });
        }
    }

    /// One opcode; `Some((end, alt_end))` at STOP.
    fn step(&mut self) -> Result<Option<(usize, Option<usize>)>, Raise> {
        let gname = self.options.grammar.name();
        self.reader.begin_op();
        self.op_at = self.reader.pos();
        if self.reader.at_end() {
            self.op_name = "end of data";
            return Err(Raise::Truncated(
                "the pickle ends without STOP (truncated)".into(),
            ));
        }
        let op = self.reader.read(1)?[0];
        self.op_at = self.reader.pos() - 1;
        self.op_name = opcode_name(op);
        self.ops += 1;
        if self.op_at == self.start && op != 0x80 && self.typed.is_some() {
            self.note(Kind::Opcode, Severity::Lead, None, || {
                "no PROTO opcode: a protocol 0 or 1 pickle, which torch.save never writes".into()
            });
        }
        match op {
            0x80 => {
                let v = self.reader.read(1)?[0];
                if v > 5 {
                    return Err(Raise::Invalid(format!("unsupported pickle protocol: {v}")));
                }
                if self.op_at == self.start {
                    self.first_proto = Some(v);
                    if v < 2 && self.typed.is_some() {
                        self.note(Kind::Opcode, Severity::Lead, None, || {
                            format!("protocol {v}, which torch.save never writes (2 to 5)")
                        });
                    }
                } else {
                    self.note(Kind::Opcode, Severity::Lead, None, || {
                        format!("PROTO {v} not at the start of the pickle (it changes how later globals resolve: fix_imports below protocol 3, dotted names from 4)")
                    });
                }
                self.proto = v;
                return Ok(None);
            }
            0x95 => {
                let n = u64::from_le_bytes(self.reader.read(8)?.try_into().unwrap_or([0; 8]));
                self.reader.frame(n)?;
                return Ok(None);
            }
            _ => {}
        }
        if opcode_name(op) == "unknown opcode" {
            return Err(Raise::Invalid(format!(
                "invalid load key {op:#04x}: not a pickle opcode"
            )));
        }
        if self.typed.is_some() {
            if in_grammar(op, self.options.grammar) {
                return self.typed_op(op);
            }
            self.leave(|| {
                format!(
                    "opcode {} (byte {op:#04x}) is outside {gname}; torch.save does not write it",
                    opcode_name(op)
                )
            });
        }
        self.abstract_op(op)
    }

    /// Leaves the grammar: the typed model becomes abstract values, exactly as far as naming
    /// needs (strings kept, everything else certainly-not-a-string or unknown).
    pub(super) fn leave(&mut self, why: impl FnOnce() -> String) {
        let Some(typed) = self.typed.take() else {
            return;
        };
        self.note(Kind::Opcode, Severity::Lead, None, why);
        let typed = *typed;
        let mut abs = Abstract::default();
        let id_of = |v: &Value, abs: &mut Abstract| match v {
            Value::Str(s) => abs.own(s.clone()),
            Value::Global(g) => abs.global(AbsGlobal {
                shown: Rc::from(format!("{}.{}", quote(&g.module), quote(&g.name))),
                class: g.class.clone(),
                reviewed: g.reviewed,
            }),
            Value::Opaque(_) => UNKNOWN,
            _ => NOT_STR,
        };
        let items: Vec<Id> = typed
            .stack
            .items
            .iter()
            .map(|v| id_of(v, &mut abs))
            .collect();
        abs.stack.items = items;
        abs.stack.marks = typed.stack.marks;
        let mut memo: Vec<(u64, Id)> = typed
            .memo
            .entries()
            .map(|(i, v)| (i, id_of(v, &mut abs)))
            .collect();
        drop(typed.memo);
        memo.sort_unstable_by_key(|&(i, _)| i);
        for (i, v) in memo {
            abs.memo.put(i, v);
        }
        // The storages stay for the checkpoint's record checks; tensors are of no use once the
        // state dict is not modeled.
        self.kept = (typed.storages, Vec::new());
        drop(typed.tensors);
        self.abs = Some(Box::new(abs));
    }

    fn abs(&mut self) -> &mut Abstract {
        // Only called in abstract mode; `step` guarantees it.
        self.abs.get_or_insert_with(Box::default)
    }

    // ---- arguments, as the C unpickler reads them ------------------------------------

    /// `calc_binsize` over `width` bytes: an unsigned size, at most `PY_SSIZE_T_MAX`.
    pub(super) fn size_arg(&mut self, width: usize) -> Result<usize, Raise> {
        let b = self.reader.read(width)?;
        let mut v = 0u64;
        for (i, &byte) in b.iter().enumerate() {
            v |= u64::from(byte) << (8 * i);
        }
        usize::try_from(v)
            .ok()
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| {
                Raise::Invalid(format!("a length of {v} exceeds the system's maximum size"))
            })
    }

    /// `calc_binint` over 4 bytes: signed.
    pub(super) fn i32_arg(&mut self) -> Result<i32, Raise> {
        let b = self.reader.read(4)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A text argument (`_Unpickler_Readline`), without its newline; CPython's callers refuse
    /// lines shorter than `min` bytes with their newline (`bad_readline`).
    pub(super) fn line_arg(&mut self, min: usize) -> Result<&'a [u8], Raise> {
        let line = self.reader.readline()?;
        if line.len() < min {
            return Err(Raise::Truncated("an empty text argument".into()));
        }
        Ok(&line[..line.len() - 1])
    }

    /// The module and name of GLOBAL (UTF-8) or INST (ASCII), and whether the data ended
    /// inside them. Where the C unpickler raises (an empty line, no newline before the end)
    /// pure Python's `self.readline()[:-1]` still gives names and looks them up (an empty
    /// name; the rest of the data less its last byte), so those names are judged too, and
    /// the caller raises after judging them when the data ended.
    pub(super) fn global_lines(&mut self, ascii: bool) -> Result<(&'a str, &'a str, bool), Raise> {
        let decode = |b: &'a [u8]| -> Result<&'a str, Raise> {
            if ascii && !b.is_ascii() {
                return Err(Raise::Invalid("a global's name is not ASCII".into()));
            }
            std::str::from_utf8(b)
                .map_err(|_| Raise::Invalid("a global's name is not UTF-8".into()))
        };
        let mut ended = false;
        let mut line = |r: &mut Reader<'a>| -> Result<&'a [u8], Raise> {
            if ended {
                return Ok(&[]);
            }
            match r.readline() {
                Ok(l) => Ok(&l[..l.len() - 1]),
                Err(Raise::Truncated(_)) => {
                    ended = true;
                    let rest = r.rest();
                    Ok(&rest[..rest.len().saturating_sub(1)])
                }
                Err(e) => Err(e),
            }
        };
        let module = decode(line(&mut self.reader)?)?;
        let name = decode(line(&mut self.reader)?)?;
        Ok((module, name, ended))
    }

    // ---- globals ------------------------------------------------------------------------

    /// Judges the global Python looks up as `module`.`name` under the current protocol, and
    /// reports it. Returns its class and whether the operator reviewed it.
    pub(super) fn global(&mut self, module: &str, name: &str) -> (Class, bool) {
        let entry = self.judged(module, name);
        self.report_global(&entry)
    }

    /// Reports a judged global (once; repeats are counted).
    fn report_global(&mut self, entry: &Rc<Judged>) -> (Class, bool) {
        let gname = self.options.grammar.name();
        let module = &*entry.module;
        let reviewed = matches!(entry.lookup.class, Class::Unknown)
            && self
                .options
                .reviewed
                .iter()
                .any(|r| **r == *entry.effective);
        let kind = match entry.lookup.class {
            Class::Dangerous(_) => Some(Kind::DangerousGlobal),
            Class::Unknown if !reviewed => Some(Kind::UnknownGlobal),
            _ => None,
        };
        if reviewed && !self.reviewed_used.iter().any(|r| **r == *entry.effective) {
            self.reviewed_used.push(entry.effective.to_string());
        }
        let Some(kind) = kind else {
            return (entry.lookup.class.clone(), reviewed);
        };
        if entry.noted.get() && self.reporting(kind) {
            // Listed (or counted) already: a repeat.
            self.findings.repeat(kind);
            return (entry.lookup.class.clone(), reviewed);
        }
        let shown = |e: &Judged| {
            let renamed = match &e.lookup.renamed {
                Some((m, n)) => format!(
                    " (which Python 3 imports as {}.{}: fix_imports renames it below protocol 3)",
                    quote(m),
                    quote(n),
                ),
                None => String::new(),
            };
            format!("{}{renamed}", quote(&e.raw))
        };
        let hint = if module.starts_with("numpy") {
            " (numpy objects are rebuilt by calling numpy)"
        } else {
            ""
        };
        match &entry.lookup.class {
            Class::Dangerous(why) => {
                self.note(kind, Severity::Fail, Some(&entry.raw), || {
                    format!("global {}: {why}", shown(entry))
                });
            }
            _ => {
                self.note(kind, Severity::Lead, Some(&entry.raw), || {
                    format!(
                        "global {} is outside {gname}{hint}; pass it in --reviewed-classes once reviewed",
                        shown(entry)
                    )
                });
            }
        }
        if self.reporting(kind) {
            entry.noted.set(true);
        }
        (entry.lookup.class.clone(), reviewed)
    }

    /// Whether findings of `kind` are recorded now (see [`Run::note`]).
    fn reporting(&self, kind: Kind) -> bool {
        !(self.detecting
            || (self.reader.is_replay() && (!self.reader.diverged() || kind == Kind::Framing)))
    }

    /// The classification of a global, from a small cache: floods name the same globals over
    /// and over.
    fn judged(&mut self, module: &str, name: &str) -> Rc<Judged> {
        let renaming = self.proto < 3;
        // FNV-1a over the pair: the cache is checked on every global a flood names.
        let mut key: u64 = if renaming {
            0xcbf2_9ce4_8422_2325
        } else {
            0x8422_2325_cbf2_9ce4
        };
        for b in module.bytes().chain([0]).chain(name.bytes()) {
            key = (key ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        if let Some(e) = self.judged.get(&key) {
            if e.renaming == renaming && *e.module == *module && *e.name == *name {
                return e.clone();
            }
        }
        let lookup = classify_pickled(module, name, self.proto);
        let effective = match &lookup.renamed {
            Some((m, n)) => format!("{m}.{n}"),
            None => format!("{module}.{name}"),
        };
        let e = Rc::new(Judged {
            noted: std::cell::Cell::new(false),
            abs_id: std::cell::Cell::new(None),
            renaming,
            module: module.into(),
            name: name.into(),
            raw: format!("{module}.{name}").into(),
            effective: effective.into(),
            lookup,
        });
        if self.judged.len() < MAX_JUDGED {
            self.judged.insert(key, e.clone());
        }
        e
    }

    /// A global whose name the machine cannot determine.
    pub(super) fn unnamed_global(&mut self, why: &str) {
        let text = format!("STACK_GLOBAL whose module and name cannot be determined: {why}");
        self.note(Kind::UnnamedGlobal, Severity::Fail, None, || text);
    }

    /// A `GlobalRef` value for the typed model.
    pub(super) fn global_value(&mut self, module: &str, name: &str) -> Value {
        let (class, reviewed) = self.global(module, name);
        Value::Global(Rc::new(GlobalRef {
            module: module.to_owned(),
            name: name.to_owned(),
            class,
            reviewed,
        }))
    }

    /// The value at STOP of a pickle the grammar modeled to the end.
    pub(super) fn set_typed_result(&mut self, v: Value) {
        self.result = Some(v);
    }

    // ---- strings, abstractly ----------------------------------------------------------

    /// The id of a string pushed by the current opcode, given what it decodes to.
    fn str_id(&mut self, text: Text) -> Id {
        match text {
            Text::WithSurrogates => UNNAMEABLE,
            Text::Str(s) if s.len() > MAX_NAME_BYTES => UNNAMEABLE,
            Text::Str(_) if !self.reader.skipped_in_op() && self.op_at < MAX_STR_AT => {
                STR_AT + self.op_at as Id
            }
            Text::Str(s) => self.abs().own(Rc::from(s)),
        }
    }

    /// The string an id names, if any.
    fn id_text(&self, id: Id) -> Option<std::borrow::Cow<'a, str>> {
        if id & OWNED == 0 && id & GLOBAL != 0 {
            return None;
        }
        if id & OWNED != 0 {
            let abs = self.abs.as_ref()?;
            return abs
                .owned
                .get((id & !OWNED) as usize)
                .map(|s| std::borrow::Cow::Owned(s.to_string()));
        }
        let at = usize::try_from(id.checked_sub(STR_AT)?).ok()?;
        string_at(self.data, at)
    }

    // ---- the abstract machine ---------------------------------------------------------

    fn abstract_op(&mut self, op: u8) -> Result<Option<(usize, Option<usize>)>, Raise> {
        match op {
            b'(' => self.abs().stack.mark(),
            b'.' => {
                let alt = self.reader.stop();
                self.abs().stack.pop()?;
                return Ok(Some((self.reader.pos(), alt)));
            }
            b'0' => self.abs().stack.pop_op()?,
            b'1' => {
                let at = self.abs().stack.marker()?;
                self.abs().stack.truncate(at);
            }
            b'2' => self.abs().stack.dup()?,
            // Numbers: their text is not validated (Python may raise where this goes on).
            b'F' | b'I' | b'L' => {
                self.line_arg(2)?;
                self.abs().stack.push(NOT_STR);
            }
            b'J' => {
                self.reader.read(4)?;
                self.abs().stack.push(NOT_STR);
            }
            b'K' => {
                self.reader.read(1)?;
                self.abs().stack.push(NOT_STR);
            }
            b'M' => {
                self.reader.read(2)?;
                self.abs().stack.push(NOT_STR);
            }
            b'G' => {
                self.reader.read(8)?;
                self.abs().stack.push(NOT_STR);
            }
            0x8a => {
                let n = usize::from(self.reader.read(1)?[0]);
                self.reader.read(n)?;
                self.abs().stack.push(NOT_STR);
            }
            0x8b => {
                let n = self.i32_arg()?;
                let n = usize::try_from(n)
                    .map_err(|_| Raise::Invalid("LONG pickle has negative byte count".into()))?;
                self.reader.read(n)?;
                self.abs().stack.push(NOT_STR);
            }
            b'N' | 0x88 | 0x89 | b')' | b']' | b'}' | 0x8f => self.abs().stack.push(NOT_STR),
            b'S' => {
                let line = self.line_arg(1)?;
                let text = decode_string_line(line)?;
                let id = self.str_id(text);
                self.abs().stack.push(id);
            }
            b'V' => {
                let line = self.line_arg(1)?;
                let text = text::raw_unicode_escape_decode(line).ok_or_else(|| {
                    Raise::Invalid("a UNICODE argument is not raw-unicode-escape".into())
                })?;
                let id = self.str_id(text);
                self.abs().stack.push(id);
            }
            b'T' | b'U' => {
                let n = self.size_arg(if op == b'T' { 4 } else { 1 })?;
                let bytes = self.reader.read(n)?;
                let id = self.str_id(binstring_text(bytes));
                self.abs().stack.push(id);
            }
            b'X' | 0x8c | 0x8d => {
                let width = match op {
                    b'X' => 4,
                    0x8c => 1,
                    _ => 8,
                };
                let n = self.size_arg(width)?;
                let bytes = self.reader.read(n)?;
                let text = text::utf8_surrogatepass(bytes)
                    .ok_or_else(|| Raise::Invalid("a string argument is not UTF-8".into()))?;
                let id = self.str_id(text);
                self.abs().stack.push(id);
            }
            b'B' | b'C' | 0x8e | 0x96 => {
                let width = match op {
                    b'B' => 4,
                    b'C' => 1,
                    _ => 8,
                };
                let n = self.size_arg(width)?;
                self.reader.read_into(n)?;
                self.abs().stack.push(NOT_STR);
            }
            0x97 => {
                // Out-of-band buffer: Python raises unless the loader passed buffers.
                self.abs().stack.push(UNKNOWN);
            }
            0x98 => {
                self.abs().stack.top()?;
            }
            0x85..=0x87 => {
                self.abs().stack.drop_n(usize::from(op - 0x84))?;
                self.abs().stack.push(NOT_STR);
            }
            b't' | b'l' | 0x91 => {
                let at = self.abs().stack.marker()?;
                self.abs().stack.truncate(at);
                self.abs().stack.push(NOT_STR);
            }
            b'd' => {
                let at = self.abs().stack.marker()?;
                if !(self.abs().stack.len() - at.min(self.abs().stack.len())).is_multiple_of(2) {
                    return Err(Raise::Invalid("odd number of items for DICT".into()));
                }
                self.abs().stack.truncate(at);
                self.abs().stack.push(NOT_STR);
            }
            b'a' => {
                let len = self.abs().stack.len() as isize;
                self.abs().stack.check_target(len - 1)?;
                self.abs().stack.truncate(len as usize - 1);
            }
            b'e' | 0x90 => {
                let at = self.abs().stack.marker()?;
                self.abs().stack.check_target(at as isize)?;
                self.abs().stack.truncate(at);
            }
            b's' => {
                let len = self.abs().stack.len() as isize;
                self.abs().stack.check_target(len - 2)?;
                self.abs().stack.truncate(len as usize - 2);
            }
            b'u' => {
                let at = self.abs().stack.marker()?;
                self.abs().stack.check_target(at as isize)?;
                if !(self.abs().stack.len() - at).is_multiple_of(2) {
                    return Err(Raise::Invalid("odd number of items for SETITEMS".into()));
                }
                self.abs().stack.truncate(at);
            }
            b'b' => {
                let stack = &mut self.abs().stack;
                if (stack.len() as isize) - 2 < stack.fence() as isize {
                    return Err(underflow());
                }
                stack.pop()?;
            }
            b'R' | 0x81 | 0x92 => {
                let n = if op == 0x92 { 3 } else { 2 };
                let stack = &self.abs().stack;
                let callable = stack.items.len().checked_sub(n).map(|i| stack.items[i]);
                self.abs().stack.drop_n(n)?;
                self.abstract_call(callable.unwrap_or(UNKNOWN));
                self.abs().stack.push(UNKNOWN);
            }
            b'o' => {
                let at = self.abs().stack.marker()?;
                if self.abs().stack.len() < at + 1 {
                    return Err(underflow());
                }
                let callable = self.abs().stack.items[at];
                self.abs().stack.truncate(at);
                self.abstract_call(callable);
                self.abs().stack.push(UNKNOWN);
            }
            b'i' => {
                // The C unpickler pops the mark first; pure Python looks the class up first.
                let (module, name, ended) = self.global_lines(true)?;
                let id = self.global_id(module, name);
                if ended {
                    return Err(truncated_name());
                }
                let at = self.abs().stack.marker()?;
                self.abs().stack.truncate(at);
                self.abstract_call(id);
                self.abs().stack.push(UNKNOWN);
            }
            b'c' => {
                let (module, name, ended) = self.global_lines(false)?;
                let id = self.global_id(module, name);
                if ended {
                    return Err(truncated_name());
                }
                self.abs().stack.push(id);
            }
            0x93 => {
                let name = self.abs().stack.pop()?;
                let module = self.abs().stack.pop()?;
                if name == NOT_STR || module == NOT_STR {
                    return Err(Raise::Invalid(
                        "STACK_GLOBAL requires str (type confusion hides the global from scanners)"
                            .into(),
                    ));
                }
                match (self.id_text(module), self.id_text(name)) {
                    (Some(m), Some(n)) => {
                        let id = self.global_id(&m, &n);
                        self.abs().stack.push(id);
                        return Ok(None);
                    }
                    _ => {
                        let opaque =
                            |id: Id| id == UNKNOWN || (id & OWNED == 0 && id & GLOBAL != 0);
                        let why = if opaque(module) || opaque(name) {
                            "an operand is the result of a call, a global object or some other value only running the pickle would reveal"
                        } else {
                            "an operand is a str longer than any importable name or holding lone surrogates"
                        };
                        self.unnamed_global(why);
                    }
                }
                self.abs().stack.push(UNKNOWN);
            }
            0x82..=0x84 => {
                let code = match op {
                    0x82 => i64::from(self.reader.read(1)?[0]),
                    0x83 => {
                        let b = self.reader.read(2)?;
                        i64::from(u16::from_le_bytes([b[0], b[1]]))
                    }
                    _ => i64::from(self.i32_arg()?),
                };
                if code <= 0 {
                    return Err(Raise::Invalid("EXT specifies code <= 0".into()));
                }
                self.note(Kind::UnnamedGlobal, Severity::Fail, None, || {
                    format!("extension-registry opcode names a global by code {code}; copyreg's registry is empty unless a program fills it, so it cannot be checked")
                });
                self.abs().stack.push(UNKNOWN);
            }
            b'Q' => {
                self.abs().stack.pop()?;
                self.abs().stack.push(UNKNOWN);
            }
            b'P' => {
                self.line_arg(1)?;
                self.abs().stack.push(UNKNOWN);
            }
            b'q' | b'r' | b'p' => {
                let idx = match op {
                    b'q' => Some(i64::from(self.reader.read(1)?[0])),
                    b'r' => Some(self.size_arg(4)? as i64),
                    _ => {
                        let line = self.reader.readline()?;
                        if line.len() < 2 {
                            return Err(Raise::Truncated("an empty PUT argument".into()));
                        }
                        text::memo_index(line)
                    }
                };
                let top = *self.abs().stack.top()?;
                let idx = idx.and_then(|i| u64::try_from(i).ok()).ok_or_else(|| {
                    Raise::Invalid("a PUT index that is not a non-negative integer".into())
                })?;
                self.memo_put(idx, top);
            }
            0x94 => {
                let top = *self.abs().stack.top()?;
                let idx = self.abs().memo.memo_len();
                self.memo_put(idx, top);
            }
            b'h' | b'j' | b'g' => {
                let idx = match op {
                    b'h' => Some(i64::from(self.reader.read(1)?[0])),
                    b'j' => Some(self.size_arg(4)? as i64),
                    _ => {
                        let line = self.reader.readline()?;
                        if line.len() < 2 {
                            return Err(Raise::Truncated("an empty GET argument".into()));
                        }
                        text::memo_index(line)
                    }
                };
                let idx =
                    idx.ok_or_else(|| Raise::Invalid("a GET index that is not an integer".into()))?;
                let v = u64::try_from(idx)
                    .ok()
                    .and_then(|i| self.abs().memo.get(i))
                    .ok_or_else(|| Raise::Invalid(format!("memo entry {idx} was never stored")))?;
                self.abs().stack.push(v);
            }
            _ => {
                return Err(Raise::Invalid(format!(
                    "invalid load key {op:#04x}: not a pickle opcode"
                )))
            }
        }
        Ok(None)
    }

    /// Judges a global and gives the abstract value of its object.
    fn global_id(&mut self, module: &str, name: &str) -> Id {
        let entry = self.judged(module, name);
        let (class, reviewed) = self.report_global(&entry);
        if let Some(id) = entry.abs_id.get() {
            return id;
        }
        let id = self.abs().global(AbsGlobal {
            shown: Rc::from(format!("{}.{}", quote(module), quote(name))),
            class,
            reviewed,
        });
        entry.abs_id.set(Some(id));
        id
    }

    /// Reports a call (REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST) of `callable`, as the typed model
    /// reports calls outside the grammar.
    fn abstract_call(&mut self, callable: Id) {
        let gname = self.options.grammar.name();
        if callable & OWNED == 0 && callable & GLOBAL != 0 {
            let Some(g) = self
                .abs
                .as_ref()
                .and_then(|a| a.globals.get((callable & !GLOBAL) as usize))
                .cloned()
            else {
                return;
            };
            match g.class {
                Class::Dangerous(why) => self.note(Kind::Call, Severity::Fail, None, || {
                    format!("calls {}: {why}", g.shown)
                }),
                Class::Unknown if !g.reviewed => {
                    self.note(Kind::Call, Severity::Lead, None, || {
                        format!("calls {}, a global outside {gname}", g.shown)
                    })
                }
                _ => {}
            }
        } else if callable == UNKNOWN {
            self.note(Kind::Call, Severity::Lead, None, || {
                "calls a value only running the pickle would reveal (the result of an earlier call, a persistent id or a global's attribute)".into()
            });
        }
    }

    fn memo_put(&mut self, idx: u64, v: Id) {
        if !self.abs().memo.put(idx, v) {
            self.note(Kind::Bounds, Severity::Lead, None, || {
                format!("more than {MAX_SPARSE_MEMO} scattered memo indices: the memo is no longer tracked exactly, and names fetched from it cannot be determined")
            });
        }
    }
}

fn truncated_name() -> Raise {
    Raise::Truncated("a global's name has no newline before the pickle ends".into())
}

/// What a framing event means, for its finding.
fn frame_finding(event: &FrameEvent) -> String {
    match *event {
        FrameEvent::Straddle { frame_end, c_skips: true } => format!(
            "an opcode straddles the end of the frame that ends at byte {frame_end}: pure Python raises, and the C unpickler reading the frame whole from a file (torch.load's io.BytesIO) skips to the frame's end and reads the opcode's arguments there (frame lengths that disagree with opcodes hide code from scanners, GHSA-6ggj-6f2q-f7mx)"
        ),
        FrameEvent::Straddle { frame_end, c_skips: false } => format!(
            "an opcode's payload runs past the end of the frame that ends at byte {frame_end}: pure Python raises, the C unpickler reads on"
        ),
        FrameEvent::Nested { outer_end, overflows } => format!(
            "FRAME inside a frame that ends at byte {outer_end}: pure Python raises; the C unpickler {}",
            if overflows {
                "reading the outer frame whole skips the rest of it and starts the new frame at its end"
            } else {
                "ignores it"
            }
        ),
        FrameEvent::PastData { len } => format!(
            "a FRAME of {len} bytes runs past the end of the pickle: the C unpickler raises here, pure Python first runs what it holds"
        ),
        FrameEvent::StopInFrame { frame_end } => format!(
            "STOP inside a frame that runs on to byte {frame_end}: a reader that reads the frame whole (pure Python, the C unpickler over a file) ends this pickle there, so what follows STOP is not where the next pickle of a stream starts"
        ),
        FrameEvent::TooManyFrames => format!(
            "more than {} frames open at once: the ones past that are not replayed read whole",
            super::reader::MAX_OPEN_FRAMES
        ),
    }
}

/// STRING's argument: quoted, escape-decoded, then (as torch.load and pickle.load with an
/// ASCII or UTF-8 encoding read it) text.
fn decode_string_line(line: &[u8]) -> Result<Text, Raise> {
    Ok(binstring_text(&string_line_bytes(line)?))
}

/// STRING's argument as bytes, as `load_string` makes them (Modules/_pickle.c): the line less
/// its newline must be quoted with the same quote at both ends, then `PyBytes_DecodeEscape`.
pub(super) fn string_line_bytes(line: &[u8]) -> Result<Vec<u8>, Raise> {
    let n = line.len();
    if n < 2 || line[0] != line[n - 1] || !matches!(line[0], b'\'' | b'"') {
        return Err(Raise::Invalid(
            "the STRING opcode argument must be quoted".into(),
        ));
    }
    text::escape_decode(&line[1..n - 1])
        .ok_or_else(|| Raise::Invalid("an invalid escape in a STRING argument".into()))
}

/// A Python 2 `str`'s bytes as the name Python 3 sees: ASCII is the same under every
/// encoding a loader passes; anything else depends on it and cannot name a module.
fn binstring_text(bytes: &[u8]) -> Text {
    if bytes.is_ascii() {
        Text::Str(String::from_utf8_lossy(bytes).into_owned())
    } else {
        Text::WithSurrogates
    }
}

/// Re-decodes the string the opcode at `at` pushed, read contiguously; `None` when it is not
/// a string that can name anything.
fn string_at(data: &[u8], at: usize) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let op = *data.get(at)?;
    let rest = data.get(at + 1..)?;
    let counted = |width: usize| -> Option<&[u8]> {
        let mut n = 0usize;
        for (i, &b) in rest.get(..width)?.iter().enumerate() {
            n |= usize::from(b).checked_shl(8 * i as u32)?;
        }
        rest.get(width..width.checked_add(n)?)
    };
    let line = || -> Option<&[u8]> {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        Some(&rest[..nl])
    };
    let owned = |t: Option<Text>| match t? {
        Text::Str(s) => Some(Cow::Owned(s)),
        Text::WithSurrogates => None,
    };
    match op {
        b'X' | 0x8c | 0x8d => {
            let width = match op {
                b'X' => 4,
                0x8c => 1,
                _ => 8,
            };
            std::str::from_utf8(counted(width)?).ok().map(Cow::Borrowed)
        }
        b'T' => owned(Some(binstring_text(counted(4)?))),
        b'U' => owned(Some(binstring_text(counted(1)?))),
        b'S' => owned(decode_string_line(line()?).ok()),
        b'V' => owned(text::raw_unicode_escape_decode(line()?)),
        _ => None,
    }
}
