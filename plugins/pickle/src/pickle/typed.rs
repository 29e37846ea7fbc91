//! The grammar's typed model: what torch.save writes, run over typed values (dicts, lists,
//! tuples, storages from persistent ids, tensors from torch's rebuild functions). Everything
//! here mirrors what torch does with the same values when it loads them; anything else leaves
//! the grammar (a LEAD) or is evidence of a file built to be read differently (a FAIL).

use super::findings::Kind;
use super::machine::{Run, Typed, ENTRY, VALUE};
use super::reader::Raise;
use super::text::{self, Text};
use super::values::{
    check_bounds, describe, tuple, DictObject, Grammar, Object, Severity, StorageClass, StorageRef,
    TensorModel, Value, MAX_TUPLE_DEPTH,
};
use crate::globals::{Class, Known};
use std::mem::size_of;
use std::rc::Rc;

/// A scalar as Python writes it, anything else described.
fn scalar(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        other => describe(other),
    }
}

/// Python's truth value of a typed value, as `if metadata:` takes it; `None` when only
/// running the pickle would tell.
fn truthy(t: &Typed, v: &Value) -> Option<bool> {
    Some(match v {
        Value::None => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::BigInt => true,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Bytes(b) => !b.is_empty(),
        Value::Tuple(items, _) => !items.is_empty(),
        Value::Obj(id) => match t.objects.get(*id)? {
            Object::List(items) => !items.is_empty(),
            Object::Dict(d) => !d.items.is_empty(),
        },
        Value::Global(_) | Value::Storage(_) | Value::Tensor(_) | Value::Opaque(_) => return None,
    })
}

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
            b'I' | b'L' => {
                // `load_int` and `load_long` (Modules/_pickle.c) read a line of at least one
                // character before its newline; LONG's trailing `L` is dropped.
                let line = self.line_arg(2)?;
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
                        let shown =
                            String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
                        self.leave_after = Some(format!(
                            "{name} argument {shown:?} is not a decimal as Python 2's repr writes it: modeled no further"
                        ));
                    }
                }
            }
            b'G' => {
                let b = self.reader.read(8)?;
                let v = f64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
                self.push(Value::Float(v));
            }
            b'N' => self.push(Value::None),
            0x88 => self.push(Value::Bool(true)),
            0x89 => self.push(Value::Bool(false)),
            b'X' => self.typed_string(4)?,
            0x8c => self.typed_string(1)?,
            0x8d => self.typed_string(8)?,
            b'B' | b'C' | 0x8e => {
                let width = match op {
                    b'B' => 4,
                    b'C' => 1,
                    _ => 8,
                };
                let n = self.size_arg(width)?;
                let bytes = self.reader.read_into(n)?;
                self.charge(32 + bytes.len());
                self.push(Value::Bytes(Rc::from(bytes)));
            }
            b'c' => {
                let (module, name, ended) = self.global_lines(false)?;
                self.charge(128 + module.len() + name.len());
                let g = self.global_value(module, name);
                if ended {
                    return Err(super::machine::truncated_global());
                }
                self.push(g);
            }
            0x93 => {
                let name = self.t().stack.pop()?;
                let module = self.t().stack.pop()?;
                match (&module, &name) {
                    (Value::Str(m), Value::Str(n)) => {
                        let (m, n) = (m.clone(), n.clone());
                        self.charge(128 + m.len() + n.len());
                        let g = self.global_value(&m, &n);
                        self.push(g);
                    }
                    _ if [&module, &name].iter().any(|v| {
                        !matches!(v, Value::Str(_) | Value::Global(_) | Value::Opaque(_))
                    }) =>
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
            }
            b'Q' => {
                let pid = self.t().stack.pop()?;
                let storage = self.persistent_id(pid);
                self.push(storage);
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
            b'R' | 0x81 => {
                let args = self.t().stack.pop()?;
                let callable = self.t().stack.pop()?;
                let v = self.call(callable, args, op == 0x81);
                self.push(v);
            }
            b'b' => {
                let state = self.t().stack.pop()?;
                let target = self.t().stack.top()?.clone();
                self.build(target, state);
            }
            _ => {
                return Err(Raise::Invalid(format!(
                    "opcode {op:#04x} reached the typed model"
                )))
            }
        }
        Ok(None)
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
        }
    }

    fn append(&mut self, target: Value, items: Vec<Value>) {
        if items.is_empty() {
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
        let gname = self.options.grammar.name();
        match target {
            Value::Obj(id) => {
                let t = self.t();
                let state_ok = match &state {
                    Value::Obj(s) => match &t.objects[*s] {
                        Object::Dict(d) => d.items.iter().all(|(k, _)| matches!(k, Value::Str(_))),
                        Object::List(_) => false,
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
            other => self.structure(
                Severity::Lead,
                format!("BUILD sets state on {}: outside {gname}", describe(&other)),
            ),
        }
    }

    fn persistent_id(&mut self, pid: Value) -> Value {
        let legacy = self.options.legacy;
        let bad = |m: &mut Self, why: &str| {
            m.structure(
                Severity::Fail,
                format!(
                    "persistent id {why}; torch.save writes ('storage', storage class, key, location, numel)"
                ),
            );
            Value::Opaque(Rc::from("invalid persistent id"))
        };
        let Value::Tuple(items, _) = pid else {
            return bad(self, "is not a tuple");
        };
        if legacy {
            if let [Value::Str(tag), ..] = &items[..] {
                if &**tag == "module" {
                    // torch.save(model) in the legacy format: the class and its source text.
                    self.structure(Severity::Lead, "persistent id ('module', class, source file, source): a whole nn.Module was saved, not a state dict; loading it imports the class".into());
                    return Value::Opaque(Rc::from("a saved nn.Module class"));
                }
            }
        }
        let (fields, view) = match (&items[..], legacy) {
            ([a, b, c, d, e], false) => ([a, b, c, d, e], None),
            ([a, b, c, d, e, view], true) => ([a, b, c, d, e], Some(view)),
            _ if legacy => {
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
                    &format!("names {}.{} as its storage class", class.module, class.name),
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
        self.charge(size_of::<StorageRef>() + 112 + 2 * key.len() + location.len() + 2 * ENTRY);
        let storage = Rc::new(StorageRef {
            class,
            key: key.to_string(),
            location: location.to_string(),
            numel,
            view_of: None,
        });
        if self.t().view_keys.contains_key(key.as_ref()) {
            self.structure(Severity::Fail, format!(
                "key {key:?} names both a storage view and a storage; torch's loader would resolve it by the order it meets them"
            ));
            return Value::Opaque(Rc::from("an ambiguous storage key"));
        }
        let first = self.t().storage_keys.get(key.as_ref()).cloned();
        let root = if let Some(first) = first {
            if first.class != storage.class || first.numel != storage.numel {
                self.structure(Severity::Fail, format!(
                    "storage {key:?} is named twice with different storage types or sizes; torch.save never writes that (it refuses to save one storage as two types)"
                ));
            }
            first
        } else {
            let t = self.t();
            t.storage_keys.insert(key.to_string(), storage.clone());
            t.storages.push(storage.clone());
            storage
        };
        let Some((view_key, offset, size)) = view else {
            return Value::Storage(root);
        };
        // A legacy view: elements offset..offset+size of the root storage, under its own key.
        if offset.checked_add(size).is_none_or(|end| end > root.numel) {
            self.structure(
                Severity::Fail,
                format!(
                    "storage view {view_key:?} covers elements {offset}..+{size} of storage {key:?}, which holds {}",
                    root.numel
                ),
            );
            return Value::Opaque(Rc::from("a storage view outside its storage"));
        }
        let view_ref = Rc::new(StorageRef {
            class,
            key: view_key.clone(),
            location: location.to_string(),
            numel: size,
            view_of: Some((key.to_string(), offset)),
        });
        if self.t().storage_keys.contains_key(&view_key) {
            self.structure(Severity::Fail, format!(
                "key {view_key:?} names both a storage and a view; torch's loader would resolve it by the order it meets them"
            ));
            return Value::Opaque(Rc::from("an ambiguous storage view"));
        }
        if let Some(first) = self.t().view_keys.get(&view_key).cloned() {
            if *first != *view_ref {
                self.structure(
                    Severity::Fail,
                    format!(
                        "storage view {view_key:?} is declared twice differently; torch's loader keeps the first"
                    ),
                );
            }
            return Value::Storage(first);
        }
        self.t().view_keys.insert(view_key, view_ref.clone());
        Value::Storage(view_ref)
    }

    fn call(&mut self, callable: Value, args: Value, newobj: bool) -> Value {
        let gname = self.options.grammar.name();
        let Value::Tuple(args, _) = args else {
            self.structure(
                Severity::Fail,
                format!(
                    "{} with arguments that are {} instead of a tuple",
                    if newobj { "NEWOBJ" } else { "REDUCE" },
                    describe(&args)
                ),
            );
            return Value::Opaque(Rc::from("call with invalid arguments"));
        };
        let g = match callable {
            Value::Global(g) => g,
            Value::Opaque(what) => {
                self.note(Kind::Call, Severity::Lead, None, || {
                    format!("calls the result of {what}: outside {gname}")
                });
                return Value::Opaque(what);
            }
            other => {
                self.note(Kind::Call, Severity::Lead, None, || {
                    format!("calls {} (not a global): outside {gname}", describe(&other))
                });
                return Value::Opaque(Rc::from("result of calling a non-global"));
            }
        };
        let quote = super::findings::quote;
        let known = match &g.class {
            Class::Known(k) => *k,
            Class::Dangerous(why) => {
                self.note(Kind::Call, Severity::Fail, None, || {
                    format!("calls {}.{}: {why}", quote(&g.module), quote(&g.name))
                });
                return Value::Opaque(Rc::from(format!("{}.{}", g.module, g.name).as_str()));
            }
            Class::Unknown => {
                if !g.reviewed {
                    self.note(Kind::Call, Severity::Lead, None, || {
                        format!(
                            "calls {}.{}, a global outside {gname}",
                            quote(&g.module),
                            quote(&g.name)
                        )
                    });
                }
                return Value::Opaque(Rc::from(format!("{}.{}", g.module, g.name).as_str()));
            }
        };
        let dotted = format!("{}.{}", g.module, g.name);
        match known {
            Known::OrderedDict if args.is_empty() && !newobj => {
                let d = DictObject {
                    ordered: true,
                    ..DictObject::default()
                };
                self.new_object(Object::Dict(d))
            }
            Known::OrderedDict
                if args.len() == 1 && !newobj && self.options.grammar >= Grammar::V2 =>
            {
                match self.python2_ordered_dict(&args[0]) {
                    Some(v) => v,
                    None => {
                        let text = format!(
                            "calls {dotted} with an argument other than the list of [key, value] lists Python 2.7's OrderedDict.__reduce__ writes: outside {gname}"
                        );
                        self.note(Kind::Call, Severity::Lead, None, || text);
                        Value::Opaque(Rc::from(dotted.as_str()))
                    }
                }
            }
            Known::CodecsEncode => match &args[..] {
                [Value::Str(s), Value::Str(enc)] if &**enc == "latin1" => {
                    // bytes pickled under protocol 2: each char is one byte.
                    let bytes: Option<Vec<u8>> =
                        s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
                    match bytes {
                        Some(b) => {
                            self.charge(16 + b.len());
                            Value::Bytes(Rc::from(b))
                        }
                        None => {
                            self.structure(
                                Severity::Fail,
                                "_codecs.encode of text that is not latin-1".into(),
                            );
                            Value::Opaque(Rc::from("bytes"))
                        }
                    }
                }
                _ => {
                    self.structure(
                        Severity::Lead,
                        "_codecs.encode with arguments other than (str, 'latin1')".into(),
                    );
                    Value::Opaque(Rc::from("_codecs.encode"))
                }
            },
            Known::RebuildTensorV2 | Known::RebuildTensorV3 if !newobj => {
                self.rebuild_tensor(&args, known == Known::RebuildTensorV3)
            }
            Known::RebuildParameter | Known::RebuildParameterWithState if !newobj => {
                self.rebuild_parameter(&args, known == Known::RebuildParameterWithState)
            }
            _ => {
                let text = format!(
                    "calls {dotted} with {} arguments: outside {gname}",
                    args.len()
                );
                self.note(Kind::Call, Severity::Lead, None, || text);
                Value::Opaque(Rc::from(dotted.as_str()))
            }
        }
    }

    /// `collections.OrderedDict(items)` as Python 2.7 pickled an OrderedDict: its
    /// `__reduce__` (Lib/collections.py) returns `(OrderedDict, ([[k, v], ...],))`, plus the
    /// instance's `__dict__` as BUILD state when it has attributes (a state dict's
    /// `_metadata`). Python 3's `OrderedDict(items)` sets each pair in order, so the dict is
    /// built here from a list whose items are two-item lists (or tuples) with str or int keys;
    /// `None` for anything else.
    fn python2_ordered_dict(&mut self, items: &Value) -> Option<Value> {
        let Value::Obj(list) = items else {
            return None;
        };
        let objects = &self.typed.as_ref()?.objects;
        let Object::List(pairs) = objects.get(*list)? else {
            return None;
        };
        let mut flat = Vec::with_capacity(pairs.len() * 2);
        for pair in pairs {
            let kv: &[Value] = match pair {
                Value::Obj(p) => match objects.get(*p)? {
                    Object::List(kv) => kv,
                    Object::Dict(_) => return None,
                },
                Value::Tuple(kv, _) => kv,
                _ => return None,
            };
            match kv {
                [k @ (Value::Str(_) | Value::Int(_)), v] => flat.extend([k.clone(), v.clone()]),
                _ => return None,
            }
        }
        let d = self.new_object(Object::Dict(DictObject {
            ordered: true,
            ..DictObject::default()
        }));
        if !flat.is_empty() {
            self.set_items(d.clone(), flat);
        }
        Some(d)
    }

    fn empty_hooks(&mut self, v: &Value) -> Option<bool> {
        match v {
            Value::Obj(id) => match &self.t().objects[*id] {
                Object::Dict(d) if d.ordered => Some(d.items.is_empty()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The conj and neg bits of a rebuild's `metadata` argument, judged as torch applies them
    /// (`_rebuild_tensor_v2/v3` in torch/_utils.py: `if metadata:` then `set_tensor_metadata`,
    /// which asserts a dict and calls `torch._C._set_tensor_metadata`, a pybind11 function of
    /// `std::unordered_map<std::string, bool>`; `setTensorMetadata` in
    /// torch/csrc/jit/serialization/pickler_helper.h sets the conj bit when the key "conj" is
    /// present and the neg bit when "neg" is, whatever the value, and leaves other keys to a
    /// custom backend's hook, which CPU tensors do not have). `Err` when torch raises.
    fn metadata_bits(&mut self, name: &str, meta: &Value) -> Result<(bool, bool), String> {
        let t = self.t();
        match truthy(t, meta) {
            Some(false) => {
                if !matches!(meta, Value::None) && !matches!(meta, Value::Obj(_)) {
                    self.structure(
                        Severity::Lead,
                        format!(
                            "{name} metadata is {}, which torch ignores (it is falsy); torch.save writes a dict",
                            describe(meta)
                        ),
                    );
                }
                return Ok((false, false));
            }
            None => {
                self.structure(
                    Severity::Lead,
                    format!(
                        "{name} metadata is {}: only running the pickle would tell what torch makes of it",
                        describe(meta)
                    ),
                );
                return Ok((false, false));
            }
            Some(true) => {}
        }
        let items = match meta {
            Value::Obj(id) => match &t.objects[*id] {
                Object::Dict(d) => d.items.clone(),
                Object::List(_) => {
                    return Err(format!(
                        "{name} metadata is a list: torch's set_tensor_metadata asserts a dict and torch.load raises"
                    ))
                }
            },
            other => {
                return Err(format!(
                    "{name} metadata is {}: torch's set_tensor_metadata asserts a dict and torch.load raises",
                    describe(other)
                ))
            }
        };
        let (mut conj, mut neg) = (false, false);
        let mut unsure = Vec::new();
        for (k, v) in &items {
            let key: &[u8] = match k {
                Value::Str(s) => s.as_bytes(),
                Value::Bytes(b) => b,
                other => {
                    return Err(format!(
                        "{name} metadata has the key {}: torch's _set_tensor_metadata takes str keys only and torch.load raises",
                        describe(other)
                    ))
                }
            };
            match v {
                Value::None | Value::Bool(_) | Value::Int(_) | Value::BigInt | Value::Float(_) => {}
                Value::Str(_) | Value::Bytes(_) | Value::Tuple(..) | Value::Obj(_) => {
                    return Err(format!(
                        "{name} metadata gives {:?} the value {}, which pybind11 does not convert to bool: torch.load raises",
                        String::from_utf8_lossy(key),
                        describe(v)
                    ))
                }
                other => unsure.push(format!(
                    "{:?} is {}",
                    String::from_utf8_lossy(key),
                    describe(other)
                )),
            }
            match key {
                b"conj" => conj = true,
                b"neg" => neg = true,
                other => self.structure(
                    Severity::Lead,
                    format!(
                        "{name} metadata has the key {:?}, which torch ignores for CPU tensors (torch.save writes it only for custom-backend tensors)",
                        String::from_utf8_lossy(other)
                    ),
                ),
            }
            if !matches!(v, Value::Bool(true)) && matches!(key, b"conj" | b"neg") {
                self.structure(
                    Severity::Lead,
                    format!(
                        "{name} metadata gives {:?} the value {}: torch sets the bit whatever the value (torch.save writes only True)",
                        String::from_utf8_lossy(key),
                        scalar(v)
                    ),
                );
            }
        }
        if !unsure.is_empty() {
            self.structure(
                Severity::Lead,
                format!(
                    "{name} metadata values only running the pickle would reveal: {}",
                    unsure.join(", ")
                ),
            );
        }
        Ok((conj, neg))
    }

    fn rebuild_tensor(&mut self, args: &[Value], v3: bool) -> Value {
        let gname = self.options.grammar.name();
        let name = if v3 {
            "_rebuild_tensor_v3"
        } else {
            "_rebuild_tensor_v2"
        };
        let fixed = if v3 { 7 } else { 6 };
        let opaque = |what: &str| Value::Opaque(Rc::from(what));
        if args.len() != fixed && args.len() != fixed + 1 {
            self.structure(
                Severity::Fail,
                format!("{name} with {} arguments", args.len()),
            );
            return opaque(name);
        }
        let (
            Value::Storage(storage),
            Value::Int(offset),
            Value::Tuple(size, _),
            Value::Tuple(stride, _),
            Value::Bool(requires_grad),
        ) = (&args[0], &args[1], &args[2], &args[3], &args[4])
        else {
            self.structure(
                Severity::Fail,
                format!(
                    "{name} arguments are not (storage, offset, size, stride, requires_grad, …)"
                ),
            );
            return opaque(name);
        };
        match self.empty_hooks(&args[5]) {
            Some(true) => {}
            Some(false) => self.structure(
                Severity::Lead,
                format!("{name} carries backward hooks; torch.save never serializes hooks"),
            ),
            None => {
                self.structure(
                    Severity::Fail,
                    format!("{name} backward_hooks is not an OrderedDict"),
                );
                return opaque(name);
            }
        }
        let dtype = if v3 {
            let Value::Global(g) = &args[6] else {
                self.structure(Severity::Fail, format!("{name} dtype is not a global"));
                return opaque(name);
            };
            match (&g.class, storage.class) {
                (Class::Known(Known::Dtype(d)), StorageClass::Untyped) => *d,
                (Class::Known(Known::Dtype(_)), StorageClass::Typed(_)) => {
                    self.structure(
                        Severity::Fail,
                        format!("{name} over a typed storage; v3 rebuilds untyped ones"),
                    );
                    return opaque(name);
                }
                _ => {
                    self.structure(
                        Severity::Lead,
                        format!("{name} with dtype {}.{}: outside {gname}", g.module, g.name),
                    );
                    return opaque(name);
                }
            }
        } else {
            match storage.class {
                StorageClass::Typed(d) => d,
                StorageClass::Untyped => {
                    self.structure(
                        Severity::Fail,
                        format!("{name} over an untyped storage; v2 rebuilds typed ones"),
                    );
                    return opaque(name);
                }
            }
        };
        let (conj, neg) = match args.get(fixed) {
            None => (false, false),
            Some(meta) => match self.metadata_bits(name, meta) {
                Ok(bits) => bits,
                Err(why) => {
                    self.structure(Severity::Fail, why);
                    return opaque(name);
                }
            },
        };
        if conj && !dtype.torch.starts_with("complex") {
            self.structure(
                Severity::Fail,
                format!(
                    "{name} sets the conj bit on a {} tensor: torch's _set_conj asserts a complex dtype (TORCH_INTERNAL_ASSERT) and torch.load raises",
                    dtype.torch
                ),
            );
            return opaque(name);
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
            self.structure(
                Severity::Fail,
                format!("{name} with a size, stride or offset that is negative or not an integer"),
            );
            return opaque(name);
        };
        if shape.len() != stride.len() {
            self.structure(
                Severity::Fail,
                format!(
                    "{name} with {} sizes but {} strides",
                    shape.len(),
                    stride.len()
                ),
            );
            return opaque(name);
        }
        if v3 {
            let first = self.t().untyped_dtypes.get(&storage.key).copied();
            if let Some(first) = first {
                if first != dtype {
                    self.structure(
                        Severity::Fail,
                        format!(
                            "storage {:?} is viewed as {} and as {}; torch.save never writes that",
                            storage.key, first.torch, dtype.torch
                        ),
                    );
                }
            } else {
                self.charge(storage.key.len() + ENTRY);
                self.t().untyped_dtypes.insert(storage.key.clone(), dtype);
            }
        }
        self.charge(size_of::<TensorModel>() + 96 + 16 * shape.len());
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
            self.structure(Severity::Fail, format!("{name}: {why}"));
            return opaque(name);
        }
        let t = Rc::new(tensor);
        self.t().tensors.push(t.clone());
        Value::Tensor(t)
    }

    fn rebuild_parameter(&mut self, args: &[Value], with_state: bool) -> Value {
        let gname = self.options.grammar.name();
        let name = if with_state {
            "_rebuild_parameter_with_state"
        } else {
            "_rebuild_parameter"
        };
        let expected = if with_state { 4 } else { 3 };
        if args.len() != expected {
            self.structure(
                Severity::Fail,
                format!("{name} with {} arguments", args.len()),
            );
            return Value::Opaque(Rc::from(name));
        }
        let (Value::Tensor(data), Value::Bool(requires_grad)) = (&args[0], &args[1]) else {
            if matches!(args[0], Value::Opaque(_)) {
                return Value::Opaque(Rc::from(name));
            }
            self.structure(
                Severity::Fail,
                format!("{name} arguments are not (tensor, requires_grad, …)"),
            );
            return Value::Opaque(Rc::from(name));
        };
        if self.empty_hooks(&args[2]) != Some(true) {
            self.structure(
                Severity::Lead,
                format!("{name} carries backward hooks or no hooks dict"),
            );
        }
        if with_state {
            let empty = match &args[3] {
                Value::None => true,
                Value::Obj(id) => {
                    matches!(&self.t().objects[*id], Object::Dict(d) if d.items.is_empty())
                }
                _ => false,
            };
            if !empty {
                self.structure(
                    Severity::Lead,
                    format!("{name} carries Python attributes on the parameter: outside {gname}"),
                );
            }
        }
        let mut t = (**data).clone();
        t.parameter = true;
        t.requires_grad = *requires_grad;
        self.charge(size_of::<TensorModel>() + 96 + 16 * t.shape.len());
        let t = Rc::new(t);
        self.t().tensors.push(t.clone());
        Value::Tensor(t)
    }
}
