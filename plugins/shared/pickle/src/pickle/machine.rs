//! One run of one pickle: the opcode loop, the stack discipline of CPython's C unpickler, the
//! abstract values the machine goes on with once a pickle leaves the grammar, and the naming
//! and judging of every global Python would look up. The typed (grammar) side is in
//! [`super::typed`].
//!
//! This file holds the run itself (its state, the opcode loop, leaving the grammar); the
//! pieces apart are the stack discipline ([`stack`]), the abstract values ([`abstract_state`]),
//! the typed model's state ([`typed_state`]) and string arguments decoded as the C unpickler
//! decodes them ([`strings`]), which the run builds on, and the run's own methods by what they
//! do: reading opcode arguments ([`args`]), judging globals ([`judge`]) and the abstract
//! opcodes ([`abstract_ops`]).

mod abstract_ops;
mod abstract_state;
mod args;
mod judge;
mod stack;
mod strings;
mod typed_state;

use super::findings::{quote, Findings, Kind};
use super::reader::{FrameEvent, Raise, Reader};
use super::values::{opcode_name, Options, Severity, StorageRef, TensorModel, Unpickled, Value};
use abstract_state::{AbsGlobal, Abstract, Id, NOT_STR, UNKNOWN};
use std::collections::HashMap;
use std::rc::Rc;
pub(super) use strings::{string_line_bytes, truncated_global};
pub use typed_state::Typed;
pub(super) use typed_state::{ENTRY, VALUE};

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
    pub outcome: Unpickled,
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

/// Whether `op` is one of the opcodes a library profile adds to the typed model (what
/// CPython's picklers write for plain data: `typed/data_ops.rs` models them).
pub fn is_data_op(op: u8) -> bool {
    matches!(
        op,
        b'p' | b'g' | b'V' | b'F' | b'l' | b'd' | b'0' | b'1' | b'2' | 0x8f | 0x90 | 0x91 | 0x96
    )
}

/// One run of one pickle.
pub struct Run<'a, 'f> {
    pub(super) data: &'a [u8],
    pub(super) start: usize,
    pub(super) reader: Reader<'a>,
    pub(super) options: &'a Options,
    pub(super) findings: &'f mut Findings,
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
    /// Why to stop the run after the current opcode, with a LEAD: a reading that is not
    /// modeled (a joblib array inside a frame that runs on).
    pub(super) halt: Option<String>,
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
/// 64 MiB + 8× the input (`socair_plugin_kit::model::memory_bound`): half its fixed part, and
/// three bytes for each byte of the input.
pub fn typed_budget(n: usize) -> usize {
    let half = (socair_plugin_kit::model::MEMORY_BASE / 2) as usize;
    half + 3 * n
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
            halt: None,
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
            if let Some(why) = self.halt.take() {
                self.note(Kind::Structure, Severity::Lead, None, || why.clone());
                break Ended::Raised(Raise::Invalid(why), self.ops);
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
        let mut outcome = Unpickled {
            protocol: self.first_proto,
            reviewed_used: std::mem::take(&mut self.reviewed_used),
            ..Unpickled::default()
        };
        match self.typed.take() {
            Some(t) => {
                let t = *t;
                outcome.result = self.result.take();
                if let Some(result) = &outcome.result {
                    let (arrays, unread, decoded) =
                        super::arrays::name_arrays(result, &t.objects, &t.numpy);
                    outcome.arrays = arrays;
                    outcome.unread_arrays = unread;
                    outcome.decoded_arrays = decoded;
                }
                outcome.models = t.models;
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
        let gname = self.options.rules_name();
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
        let torch = self.options.profile == crate::pickle::Profile::Torch;
        if self.op_at == self.start && op != 0x80 && self.typed.is_some() && torch {
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
                    if v < 2 && self.typed.is_some() && torch {
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
            if in_grammar(op, self.options.grammar)
                || (self.options.profile.data()
                    && (is_data_op(op) || in_grammar(op, super::values::Grammar::V2)))
            {
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

    /// The value at STOP of a pickle the grammar modeled to the end.
    pub(super) fn set_typed_result(&mut self, v: Value) {
        self.result = Some(v);
    }
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
