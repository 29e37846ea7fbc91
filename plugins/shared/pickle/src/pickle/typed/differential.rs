//! Where CPython's two unpicklers read the same bytes differently (PickleFuzzer:
//! Applegate and Kellas, arXiv 2605.15084): socair reads a pickle as the C unpickler
//! (Modules/_pickle.c of CPython 3.11 to 3.13) does, and FAILs one that the pure-Python
//! unpickler (Lib/pickle.py `_Unpickler`, which joblib's `NumpyUnpickler` and PyPy run) would
//! read otherwise: one of the two then runs opcodes, or builds values, that the other does not.
//! `fixtures/pickle-data/unpickler-differential.json` records each case under both unpicklers
//! of 3.11.7, 3.12.1 and 3.13.0; `tests/unpickler_differential.rs` holds the machine to it.
//!
//! * Number text (INT, LONG, FLOAT): [`crate::pickle::text::unpicklers_disagree_on_number`].
//! * BUILD (`load_build`): `pickle.py` skips a falsy state (`if state:`) and a falsy slot state
//!   (`if slotstate:`); `_pickle.c` raises on any state that is neither None nor a dict ("state
//!   is not a dictionary"), on a slot state that is neither None nor a dict, and takes
//!   `inst.__dict__` for any dict state, an empty one too (cpython gh-144411). On a target that
//!   has no `__setstate__` (every value but an instance of a class: None, numbers, str, bytes,
//!   tuples, lists, plain dicts, sets; an OrderedDict and a Counter have a `__dict__`) they
//!   part: an empty non-dict state, an empty dict state (builtins
//!   have no `__dict__`), an empty non-dict slot state.
//! * APPENDS / ADDITEMS with no items (`do_append`, `load_additems`): `_pickle.c` returns at once;
//!   `pickle.py` first looks up `extend`/`append` (`add` for ADDITEMS, unless a set) on the
//!   target and raises when it has none.
//!
//! Only the typed model checks BUILD and the empty APPENDS/ADDITEMS (it knows the values); a
//! pickle the typed model left is already a LEAD or a FAIL for what made it leave.

use super::data_ops::SET;
use crate::pickle::findings::Kind;
use crate::pickle::machine::Run;
use crate::pickle::values::{describe, Object, Severity, Value};

impl Run<'_, '_> {
    /// A FAIL naming the disagreement, at the current opcode.
    pub(crate) fn unpicklers_disagree(&mut self, why: String) {
        self.note(Kind::Structure, Severity::Fail, None, || {
            format!("CPython's C and pure-Python unpicklers read this differently: {why}; socair reads it as the C unpickler does, and a loader running the other would not")
        });
    }

    /// The INT, LONG or FLOAT text `line` (its newline off), checked.
    pub(crate) fn check_number_text(&mut self, op: u8, line: &[u8]) {
        let text = match line {
            [t @ .., b'L'] if op == b'L' => t,
            _ => line,
        };
        if let Some(why) = crate::pickle::text::unpicklers_disagree_on_number(op, text) {
            let shown = String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
            self.unpicklers_disagree(format!("the text {shown:?} holds {why}"));
        }
    }

    /// Python's truth of a typed value, where the model knows it.
    fn falsy(&self, v: &Value) -> Option<bool> {
        Some(match v {
            Value::None => true,
            Value::Bool(b) => !b,
            Value::Int(i) => *i == 0,
            Value::BigInt => false,
            Value::Float(f) => *f == 0.0,
            Value::Str(s) => s.is_empty(),
            Value::Bytes(b) => b.is_empty(),
            Value::Tuple(t, _) => t.is_empty(),
            Value::Obj(id) => match self.typed.as_ref()?.objects.get(*id)? {
                Object::List(l) => l.is_empty(),
                Object::Dict(d) => d.items.is_empty(),
                // EMPTY_SET's set: a state once ADDITEMS gave it items.
                Object::Record(r) if &*r.class == SET => r.state.is_none(),
                Object::Record(_) => return None,
            },
            _ => return None,
        })
    }

    fn is_dict(&self, v: &Value) -> bool {
        matches!(v, Value::Obj(id) if matches!(
            self.typed.as_ref().and_then(|t| t.objects.get(*id)),
            Some(Object::Dict(_))
        ))
    }

    /// Whether `v` is a value no BUILD reaches a `__setstate__` or a `__dict__` of: a builtin
    /// value, not an instance of a class (records) or anything the model does not know.
    fn builtin_value(&self, v: &Value) -> bool {
        match v {
            // An OrderedDict (a C type with a `__dict__`) and a Counter (a Python subclass)
            // have a `__dict__`: not builtin here. A plain dict, a defaultdict, a list, a
            // deque and a set have none.
            Value::Obj(id) => match self.typed.as_ref().and_then(|t| t.objects.get(*id)) {
                Some(Object::List(_)) => true,
                Some(Object::Dict(d)) => !d.ordered && !d.counter,
                Some(Object::Record(r)) => &*r.class == SET,
                None => false,
            },
            Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::BigInt
            | Value::Float(_)
            | Value::Str(_)
            | Value::Bytes(_)
            | Value::Tuple(..) => true,
            _ => false,
        }
    }

    /// BUILD of `state` on `target`, checked before it is modeled.
    pub(crate) fn check_build(&mut self, target: &Value, state: &Value) {
        if !self.builtin_value(target) {
            return;
        }
        let (state, slots) = match state {
            Value::Tuple(t, _) if t.len() == 2 => (&t[0], Some(&t[1])),
            s => (s, None),
        };
        let why = if !matches!(state, Value::None) && self.is_dict(state) {
            (self.falsy(state) == Some(true)).then(|| format!("BUILD of an empty dict on {}: _pickle.c takes its __dict__, which it has not, and raises; pickle.py skips an empty state", describe(target)))
        } else if !matches!(state, Value::None) && self.falsy(state) == Some(true) {
            Some(format!("BUILD of {} (empty, not a dict) as state: _pickle.c raises, pickle.py skips a falsy state", describe(state)))
        } else {
            None
        };
        let why = why.or_else(|| {
            let s = slots?;
            (!matches!(s, Value::None) && !self.is_dict(s) && self.falsy(s) == Some(true)).then(|| {
                format!("BUILD of {} (empty, not a dict) as slot state: _pickle.c raises, pickle.py skips a falsy slot state", describe(s))
            })
        });
        if let Some(why) = why {
            self.unpicklers_disagree(why);
        }
    }

    /// APPENDS (`what`) or ADDITEMS with no items on `target`: `pickle.py` looks the method up.
    pub(crate) fn check_empty_extend(&mut self, what: &str, target: &Value, has_method: bool) {
        if !has_method && self.builtin_value(target) {
            let text = format!("{what} with no items on {}: _pickle.c does nothing, pickle.py looks up its method, which it has not, and raises", describe(target));
            self.unpicklers_disagree(text);
        }
    }
}
