//! The grammar's typed model: what torch.save writes, run over typed values (dicts, lists,
//! tuples, storages from persistent ids, tensors from torch's rebuild functions). Everything
//! here mirrors what torch does with the same values when it loads them; anything else leaves
//! the grammar (a LEAD) or is evidence of a file built to be read differently (a FAIL).
//!
//! This file holds the opcode dispatch and the containers it fills (dicts, lists, tuples,
//! strings, numbers); the parts torch gives a meaning of its own are apart, each in one file:
//! storages from persistent ids ([`storages`]), calls of the grammar's globals ([`calls`]) and
//! tensors from torch's rebuild functions ([`tensors`]).

mod boosters;
mod calls;
mod data_ops;
mod differential;
mod joblib;
pub(crate) mod numpy;
mod rebuilds;
mod storages;
mod tensor_attrs;
mod tensors;
mod values_v3;

use super::findings::Kind;
use super::machine::{Run, Typed, ENTRY, VALUE};
use super::reader::Raise;
use super::text::{self, Text};
use super::values::{
    describe, tuple, DictObject, Grammar, Object, Python2Str, Severity, Value, MAX_TUPLE_DEPTH,
};
use std::mem::size_of;
use std::rc::Rc;

/// The value of LONG1's or LONG4's little-endian two's-complement bytes.
fn long_value(bytes: &[u8]) -> Value {
    let n = bytes.len();
    if n == 0 {
        Value::Int(0)
    } else if n <= 8 {
        let mut buf = [if bytes[n - 1] & 0x80 != 0 { 0xff } else { 0 }; 8];
        buf[..n].copy_from_slice(bytes);
        Value::Int(i64::from_le_bytes(buf))
    } else {
        Value::BigInt
    }
}

impl Run<'_, '_> {
    /// A Python 2 `str` (SHORT_BINSTRING, BINSTRING, STRING) as torch.load reads it: its
    /// unpickler passes `encoding="utf-8"` (torch/serialization.py `_load`, `_legacy_load`),
    /// so the C unpickler's `_Unpickler_DecodeString` turns the bytes into a `str` with
    /// `PyUnicode_FromEncodedObject(bytes, "utf-8", "strict")`, and bytes that are not UTF-8
    /// (lone surrogates included) raise UnicodeDecodeError: torch.load fails there. A loader
    /// with another encoding (`latin1`, `bytes`) reads on, so the machine goes on abstractly.
    fn python2_str(&mut self, bytes: &[u8]) {
        // `/2` decodes every pickle as torch.load does (a store pinned to it keeps that); under
        // `/1` Python 2's opcodes are outside the grammar, and a profile reads them as a plain
        // pickle's caller does.
        let caller_chooses = (self.options.grammar >= Grammar::V3
            || (self.options.profile.data() && self.options.grammar < Grammar::V2))
            && self.options.python2_str == Python2Str::CallerChooses;
        if caller_chooses && !bytes.is_ascii() {
            // A plain pickle: no one loader, so its encoding is the caller's. Latin-1 maps
            // each byte to the code point of its value (`_Unpickler_DecodeString` with
            // `encoding="latin1"`), which is how numpy and gensim read Python 2 pickles.
            let text: String = bytes.iter().map(|&b| char::from(b)).collect();
            self.note(Kind::Structure, Severity::Lead, None, || {
                format!(
                    "a Python 2 str of {} bytes that are not ASCII: pickle.load's default encoding='ASCII' raises here, encoding='latin1' (numpy's np.load(..., encoding='latin1'), gensim) reads it as the text modeled here, encoding='bytes' as bytes; no code runs either way",
                    bytes.len()
                )
            });
            self.charge(32 + text.len());
            self.push(Value::Str(Rc::from(text.as_str())));
            return;
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                self.charge(32 + s.len());
                self.push(Value::Str(Rc::from(s)));
            }
            Err(e) => {
                let at = e.valid_up_to();
                self.note(Kind::Malformed, Severity::Fail, None, || {
                    format!(
                        "a Python 2 str whose bytes are not UTF-8 (byte {at} of {}): torch.load decodes it with encoding='utf-8' and raises UnicodeDecodeError, while a loader with another encoding reads on",
                        bytes.len()
                    )
                });
                self.push(Value::Opaque(Rc::from("a Python 2 str that is not UTF-8")));
                self.leave_after = Some(
                    "a Python 2 str that torch.load cannot decode: modeled no further (globals are still named)".into(),
                );
            }
        }
    }

    fn t(&mut self) -> &mut Typed {
        // Only called while typed; `step` guarantees it.
        self.typed.get_or_insert_with(Box::default)
    }

    fn charge(&mut self, bytes: usize) {
        let t = self.t();
        t.cost = t.cost.saturating_add(bytes);
    }

    fn push(&mut self, v: Value) {
        self.t().stack.push(v);
    }

    fn new_object(&mut self, o: Object) -> Value {
        self.charge(size_of::<Object>());
        let t = self.t();
        t.objects.push(o);
        Value::Obj(t.objects.len() - 1)
    }

    fn push_tuple(&mut self, items: Vec<Value>) {
        self.charge(16 + items.len() * VALUE);
        match tuple(items) {
            Some(t) => self.push(t),
            None => {
                self.push(Value::Opaque(Rc::from("a tuple nested too deep")));
                self.leave_after = Some(format!(
                    "tuples nested deeper than {} levels: modeled no further (Python builds them; globals are still named)",
                    MAX_TUPLE_DEPTH
                ));
            }
        }
    }

    /// A bytes payload (BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8) after its `width`-byte
    /// length, with where it lies in the data (for a profile's arrays).
    fn typed_bytes(&mut self, width: usize) -> Result<(), Raise> {
        let n = self.size_arg(width)?;
        let bytes = self.reader.read_into(n)?;
        self.charge(32 + bytes.len());
        let end = self.reader.pos();
        let b: Rc<[u8]> = Rc::from(bytes);
        self.note_bytes(&b, end - n..end);
        self.push(Value::Bytes(b));
        Ok(())
    }

    fn typed_string(&mut self, width: usize) -> Result<(), Raise> {
        let n = self.size_arg(width)?;
        let bytes = self.reader.read(n)?;
        match text::utf8_surrogatepass(bytes)
            .ok_or_else(|| Raise::Invalid("a string argument is not UTF-8".into()))?
        {
            Text::Str(s) => {
                self.charge(32 + s.len());
                self.push(Value::Str(Rc::from(s)));
            }
            Text::WithSurrogates => {
                self.push(Value::Opaque(Rc::from("a str holding lone surrogates")));
                self.leave_after =
                    Some("a string holding lone surrogates, which torch.save never writes".into());
            }
        }
        Ok(())
    }

    /// One opcode of the grammar, over typed values.
    pub(super) fn typed_op(&mut self, op: u8) -> Result<Option<(usize, Option<usize>)>, Raise> {
        match op {
            b'(' => self.t().stack.mark(),
            b'.' => {
                let alt = self.reader.stop();
                let v = self.t().stack.pop()?;
                let t = self.t();
                if !t.stack.items.is_empty() || !t.stack.marks.is_empty() {
                    self.note(Kind::Structure, Severity::Lead, None, || {
                        "values left on the stack at STOP".into()
                    });
                }
                self.set_result(v);
                return Ok(Some((self.reader.pos(), alt)));
            }
            b'}' | b']' | b')' | b't' | 0x85..=0x87 | b's' | b'u' | b'a' | b'e' => {
                self.typed_container_op(op)?
            }
            b'q' | b'r' | 0x94 | b'h' | b'j' => self.typed_memo_op(op)?,
            b'J' | b'K' | b'M' | 0x8a | 0x8b | b'I' | b'L' | b'G' | b'N' | 0x88 | 0x89 => {
                self.typed_number_op(op)?
            }
            b'U' | b'T' | b'S' | b'X' | 0x8c | 0x8d | b'B' | b'C' | 0x8e => {
                self.typed_string_op(op)?
            }
            b'c' | 0x93 | b'Q' | b'R' | 0x81 | b'b' => self.typed_call_op(op)?,
            op if super::machine::is_data_op(op) => self.data_op(op)?,
            _ => return Err(not_typed(op)),
        }
        Ok(None)
    }

    /// Building tuples, lists and dicts, and filling them (SETITEM(S), APPEND(S)).
    fn typed_container_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'}' => {
                let v = self.new_object(Object::Dict(DictObject::default()));
                self.push(v);
            }
            b']' => {
                let v = self.new_object(Object::List(Vec::new()));
                self.push(v);
            }
            b')' => self.push_tuple(Vec::new()),
            b't' => {
                let at = self.t().stack.marker()?;
                let items = self.t().stack.split_off(at);
                self.push_tuple(items);
            }
            0x85..=0x87 => {
                let items = self.t().stack.pop_n(usize::from(op - 0x84))?;
                self.push_tuple(items);
            }
            b's' => {
                let value = self.t().stack.pop()?;
                let key = self.t().stack.pop()?;
                let target = self.t().stack.top()?.clone();
                self.set_items(target, vec![key, value]);
            }
            b'u' => {
                let at = self.t().stack.marker()?;
                self.t().stack.check_target(at as isize)?;
                let items = self.t().stack.split_off(at);
                if !items.len().is_multiple_of(2) {
                    return Err(Raise::Invalid("odd number of items for SETITEMS".into()));
                }
                let target = self.t().stack.top()?.clone();
                self.set_items(target, items);
            }
            b'a' => {
                let value = self.t().stack.pop()?;
                let target = self.t().stack.top()?.clone();
                self.append(target, vec![value]);
            }
            b'e' => {
                let at = self.t().stack.marker()?;
                self.t().stack.check_target(at as isize)?;
                let items = self.t().stack.split_off(at);
                let target = self.t().stack.top()?.clone();
                self.append(target, items);
            }
            _ => return Err(not_typed(op)),
        }
        Ok(())
    }

    /// The memo: BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET.
    fn typed_memo_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'q' | b'r' => {
                let i = if op == b'q' {
                    u64::from(self.reader.read(1)?[0])
                } else {
                    self.size_arg(4)? as u64
                };
                let v = self.t().stack.top()?.clone();
                let cost = self.t().memo.put(i, v);
                self.charge(cost);
            }
            0x94 => {
                let v = self.t().stack.top()?.clone();
                let t = self.t();
                let i = t.memo.len();
                let cost = t.memo.put(i, v);
                self.charge(cost);
            }
            b'h' | b'j' => {
                let i = if op == b'h' {
                    u64::from(self.reader.read(1)?[0])
                } else {
                    self.size_arg(4)? as u64
                };
                let v =
                    self.t().memo.get(i).cloned().ok_or_else(|| {
                        Raise::Invalid(format!("memo entry {i} was never stored"))
                    })?;
                self.push(v);
            }
            _ => return Err(not_typed(op)),
        }
        Ok(())
    }

    /// Numbers, and the constants None, True and False.
    fn typed_number_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'J' => {
                let v = self.i32_arg()?;
                self.push(Value::Int(v.into()));
            }
            b'K' => {
                let v = self.reader.read(1)?[0];
                self.push(Value::Int(v.into()));
            }
            b'M' => {
                let b = self.reader.read(2)?;
                self.push(Value::Int(u16::from_le_bytes([b[0], b[1]]).into()));
            }
            0x8a => {
                let n = usize::from(self.reader.read(1)?[0]);
                let bytes = self.reader.read(n)?;
                self.push(long_value(bytes));
            }
            // socair-wo/2 (`in_grammar` admits these only there): what Python 2 wrote.
            0x8b => {
                // `load_counted_long`: a signed count, negative raises.
                let n = usize::try_from(self.i32_arg()?)
                    .map_err(|_| Raise::Invalid("LONG pickle has negative byte count".into()))?;
                let bytes = self.reader.read(n)?;
                self.push(long_value(bytes));
            }
            b'I' | b'L' => self.typed_decimal(op)?,
            b'G' => {
                let b = self.reader.read(8)?;
                let v = f64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
                self.push(Value::Float(v));
            }
            b'N' => self.push(Value::None),
            0x88 => self.push(Value::Bool(true)),
            0x89 => self.push(Value::Bool(false)),
            _ => return Err(not_typed(op)),
        }
        Ok(())
    }

    /// INT and LONG, whose argument is a line of text.
    fn typed_decimal(&mut self, op: u8) -> Result<(), Raise> {
        // `load_int` and `load_long` (Modules/_pickle.c) read a line of at least one
        // character before its newline; LONG's trailing `L` is dropped.
        let line = self.line_arg(2)?;
        self.check_number_text(op, line);
        let text = match line {
            [digits @ .., b'L'] if op == b'L' => digits,
            _ => line,
        };
        let v = match (op, text) {
            // `load_int`: a two-character 0 or 1 is a bool (Python 2's protocol 0
            // True and False).
            (b'I', b"00") => Some(Value::Bool(false)),
            (b'I', b"01") => Some(Value::Bool(true)),
            _ => text::python2_decimal(text).map(|n| match n {
                text::Number::Small(i) => Value::Int(i),
                text::Number::Big => Value::BigInt,
            }),
        };
        match v {
            Some(v) => self.push(v),
            None => {
                self.push(Value::BigInt);
                let name = super::values::opcode_name(op);
                let shown = String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
                self.leave_after = Some(format!(
                    "{name} argument {shown:?} is not a decimal as Python 2's repr writes it: modeled no further"
                ));
            }
        }
        Ok(())
    }

    /// Strings (Python 2's `str` too) and bytes.
    fn typed_string_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'U' | b'T' => {
                // `load_counted_binstring`: SHORT_BINSTRING's count is one unsigned byte,
                // BINSTRING's four signed ones (negative raises).
                let n = if op == b'U' {
                    usize::from(self.reader.read(1)?[0])
                } else {
                    usize::try_from(self.i32_arg()?).map_err(|_| {
                        Raise::Invalid("BINSTRING pickle has negative byte count".into())
                    })?
                };
                let bytes = self.reader.read(n)?;
                self.python2_str(bytes);
            }
            b'S' => {
                let line = self.line_arg(1)?;
                let bytes = super::machine::string_line_bytes(line)?;
                self.python2_str(&bytes);
            }
            b'X' => self.typed_string(4)?,
            0x8c => self.typed_string(1)?,
            0x8d => self.typed_string(8)?,
            b'B' | b'C' | 0x8e => {
                let width = match op {
                    b'B' => 4,
                    b'C' => 1,
                    _ => 8,
                };
                self.typed_bytes(width)?;
            }
            _ => return Err(not_typed(op)),
        }
        Ok(())
    }

    /// Globals (GLOBAL, STACK_GLOBAL), persistent ids, calls (REDUCE, NEWOBJ) and BUILD.
    fn typed_call_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'c' => {
                let (module, name, ended) = self.global_lines(false)?;
                self.charge(128 + module.len() + name.len());
                let g = self.global_value(module, name);
                if ended {
                    return Err(super::machine::truncated_global());
                }
                self.push(g);
            }
            0x93 => self.typed_stack_global()?,
            b'Q' => {
                if self.options.profile.data() {
                    self.note(Kind::Structure, Severity::Lead, None, || {
                        "a persistent id outside a torch checkpoint: pickle.load raises here unless its caller passes a persistent_load, which then decides what it loads".into()
                    });
                }
                let pid = self.t().stack.pop()?;
                let storage = self.persistent_id(pid);
                self.push(storage);
            }
            b'R' | 0x81 => {
                let args = self.t().stack.pop()?;
                let callable = self.t().stack.pop()?;
                let v = self.call(callable, args, op == 0x81);
                self.push(v);
            }
            b'b' => {
                let state = self.t().stack.pop()?;
                let target = self.t().stack.top()?.clone();
                self.check_build(&target, &state);
                self.build(target.clone(), state);
                if self.options.joblib {
                    self.joblib_after_build(&target)?;
                }
            }
            _ => return Err(not_typed(op)),
        }
        Ok(())
    }

    /// STACK_GLOBAL: the global its two strings name.
    fn typed_stack_global(&mut self) -> Result<(), Raise> {
        let name = self.t().stack.pop()?;
        let module = self.t().stack.pop()?;
        match (&module, &name) {
            (Value::Str(m), Value::Str(n)) => {
                let (m, n) = (m.clone(), n.clone());
                self.charge(128 + m.len() + n.len());
                let g = self.global_value(&m, &n);
                self.push(g);
            }
            _ if [&module, &name]
                .iter()
                .any(|v| !matches!(v, Value::Str(_) | Value::Global(_) | Value::Opaque(_))) =>
            {
                return Err(Raise::Invalid(format!(
                    "STACK_GLOBAL requires str, not {} and {} (type confusion hides the global from scanners)",
                    describe(&module),
                    describe(&name)
                )));
            }
            _ => {
                self.unnamed_global(&format!(
                    "its operands are {} and {}, which only running the pickle would reveal",
                    describe(&module),
                    describe(&name)
                ));
                self.push(Value::Opaque(Rc::from("an unnamed global")));
            }
        }
        Ok(())
    }

    fn set_result(&mut self, v: Value) {
        self.set_typed_result(v);
    }

    fn structure(&mut self, severity: Severity, reason: String) {
        self.note(Kind::Structure, severity, None, move || reason);
    }

    fn set_items(&mut self, target: Value, items: Vec<Value>) {
        if items.is_empty() {
            self.structure(
                Severity::Lead,
                "SETITEMS with no items, which torch.save never writes".into(),
            );
            return;
        }
        let Value::Obj(id) = target else {
            self.structure(
                Severity::Fail,
                format!(
                    "sets items on {} instead of a dict (the CVE-2026-24747 pattern)",
                    describe(&target)
                ),
            );
            return;
        };
        self.charge(items.len() * (VALUE + ENTRY));
        match &mut self.t().objects[id] {
            Object::Dict(d) => {
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    d.insert(k, v);
                }
            }
            Object::List(_) => self.structure(
                Severity::Fail,
                "sets items on a list instead of a dict".into(),
            ),
            Object::Record(_) => self.structure(
                Severity::Fail,
                "sets items on a dataclass instance instead of a dict".into(),
            ),
        }
    }

    fn append(&mut self, target: Value, items: Vec<Value>) {
        if items.is_empty() {
            let list = matches!(&target, Value::Obj(id) if matches!(self.t().objects[*id], Object::List(_)));
            self.check_empty_extend("APPENDS", &target, list);
            self.structure(
                Severity::Lead,
                "APPENDS with no items, which torch.save never writes".into(),
            );
            return;
        }
        self.charge(items.len() * VALUE);
        match target {
            Value::Obj(id) if matches!(self.t().objects[id], Object::List(_)) => {
                if let Object::List(l) = &mut self.t().objects[id] {
                    l.extend(items);
                }
            }
            other => self.structure(
                Severity::Fail,
                format!("appends to {} instead of a list", describe(&other)),
            ),
        }
    }

    fn build(&mut self, target: Value, state: Value) {
        let gname = self.options.rules_name();
        match target {
            Value::Obj(id) if matches!(self.t().objects[id], Object::Record(_)) => {
                if !self.build_profile(id, &state) {
                    self.build_record(id, state)
                }
            }
            Value::Obj(id) => {
                let t = self.t();
                let state_ok = match &state {
                    Value::Obj(s) => match &t.objects[*s] {
                        Object::Dict(d) => d.items.iter().all(|(k, _)| matches!(k, Value::Str(_))),
                        Object::List(_) | Object::Record(_) => false,
                    },
                    Value::None => true,
                    _ => false,
                };
                match &mut t.objects[id] {
                    Object::Dict(d) if d.ordered && state_ok => d.attrs = Some(state),
                    _ => self.structure(
                        Severity::Lead,
                        "BUILD sets state on something other than an OrderedDict's attributes"
                            .into(),
                    ),
                }
            }
            Value::Opaque(_) => {}
            // CPython's `load_build` on a class, module or function: a state dict goes into
            // its `__dict__` (a module's globals), slot state through `setattr`, and a
            // `__setstate__` the class defines is called unbound with the state as `self`.
            // Either way the load patches what every later caller of that object runs (a
            // torch `Module`'s `dump_patches`, which makes a legacy load write `.patch`
            // files). `pickle.dump` never writes it: an object saved by reference has no state.
            global @ Value::Global(_) => self.structure(
                Severity::Fail,
                format!(
                    "BUILD sets state on {} itself: loading patches a class, module or function that later code runs (pickle.dump never writes this)",
                    describe(&global)
                ),
            ),
            other => self.structure(
                Severity::Lead,
                format!("BUILD sets state on {}: outside {gname}", describe(&other)),
            ),
        }
    }
}

/// An opcode the typed model does not run (the run's loop leaves the grammar before it).
fn not_typed(op: u8) -> Raise {
    Raise::Invalid(format!("opcode {op:#04x} reached the typed model"))
}
