//! The opcodes `socair-data/1` adds to the typed model: what CPython's picklers write for
//! plain data at protocols 0, 1, 4 and 5 and torch.save never does (PUT and GET by decimal
//! line, UNICODE, FLOAT, LIST, DICT, POP, POP_MARK, DUP, EMPTY_SET, ADDITEMS, FROZENSET,
//! BYTEARRAY8), each as `Modules/_pickle.c` (CPython 3.11) loads it. Only under a profile
//! (`machine::is_data_op`); under `socair-wo` they still leave the grammar.

use super::super::findings::Kind;
use super::super::machine::Run;
use super::super::reader::Raise;
use super::super::text::{self, Text};
use super::super::values::{describe, Object, RecordObject, Severity, Value};
use std::rc::Rc;

/// The class a set built by EMPTY_SET is recorded under.
pub const SET: &str = "builtins.set";

impl Run<'_, '_> {
    /// One opcode of [`is_data_op`], over typed values.
    pub(super) fn data_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'p' => {
                // `load_put`: a decimal line, at least one character before its newline.
                let line = self.line_arg(2)?;
                let i = text::memo_index(line)
                    .and_then(|i| u64::try_from(i).ok())
                    .ok_or_else(|| {
                        Raise::Invalid("a PUT index that is not a non-negative integer".into())
                    })?;
                let v = self.t().stack.top()?.clone();
                let cost = self.t().memo.put(i, v);
                self.charge(cost);
            }
            b'g' => {
                let line = self.line_arg(2)?;
                let i = text::memo_index(line)
                    .ok_or_else(|| Raise::Invalid("a GET index that is not an integer".into()))?;
                let v = u64::try_from(i)
                    .ok()
                    .and_then(|i| self.t().memo.get(i).cloned())
                    .ok_or_else(|| Raise::Invalid(format!("memo entry {i} was never stored")))?;
                self.push(v);
            }
            b'V' => {
                // `load_unicode`: raw-unicode-escape over the line less its newline.
                let line = self.line_arg(1)?;
                match text::raw_unicode_escape_decode(line) {
                    Some(Text::Str(s)) => {
                        self.charge(32 + s.len());
                        self.push(Value::Str(Rc::from(s)));
                    }
                    Some(Text::WithSurrogates) => {
                        self.push(Value::Opaque(Rc::from("a str holding lone surrogates")));
                        self.leave_after =
                            Some("a UNICODE argument holding lone surrogates".into());
                    }
                    None => {
                        return Err(Raise::Invalid(
                            "a UNICODE argument is not raw-unicode-escape".into(),
                        ))
                    }
                }
            }
            b'F' => {
                // `load_float`: `PyOS_string_to_double` over the line; text it may read
                // otherwise than Rust leaves the model (globals are still named).
                let line = self.line_arg(2)?;
                self.check_number_text(op, line);
                let v = std::str::from_utf8(line)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok());
                match v {
                    Some(f) => self.push(Value::Float(f)),
                    None => {
                        self.push(Value::Opaque(Rc::from("a float")));
                        self.leave_after =
                            Some("a FLOAT argument that is not a decimal float: modeled no further (globals are still named)".into());
                    }
                }
            }
            b'l' => {
                let at = self.t().stack.marker()?;
                let items = self.t().stack.split_off(at);
                self.charge(items.len() * super::VALUE);
                let v = self.new_object(Object::List(items));
                self.push(v);
            }
            b'd' => {
                let at = self.t().stack.marker()?;
                let items = self.t().stack.split_off(at);
                if !items.len().is_multiple_of(2) {
                    return Err(Raise::Invalid("odd number of items for DICT".into()));
                }
                let d = self.new_object(Object::Dict(Default::default()));
                if !items.is_empty() {
                    self.set_items(d.clone(), items);
                }
                self.push(d);
            }
            b'0' => self.t().stack.pop_op()?,
            b'1' => {
                let at = self.t().stack.marker()?;
                self.t().stack.truncate(at);
            }
            b'2' => self.t().stack.dup()?,
            0x8f => {
                let v = self.new_object(Object::Record(RecordObject {
                    class: Rc::from(SET),
                    state: None,
                }));
                self.push(v);
            }
            0x90 => {
                let at = self.t().stack.marker()?;
                self.t().stack.check_target(at as isize)?;
                let items = self.t().stack.split_off(at);
                let target = self.t().stack.top()?.clone();
                let is_set = matches!(&target, Value::Obj(id) if matches!(
                    self.t().objects.get(*id),
                    Some(Object::Record(r)) if &*r.class == SET
                ));
                if items.is_empty() {
                    self.check_empty_extend("ADDITEMS", &target, is_set);
                }
                if !is_set {
                    let text = format!("ADDITEMS to {} instead of a set", describe(&target));
                    self.note(Kind::Structure, Severity::Lead, None, || text);
                } else if !items.iter().all(super::values_v3::hashable_scalar) {
                    self.unhashable("ADDITEMS");
                } else if let (false, Value::Obj(id)) = (items.is_empty(), &target) {
                    // A set with items (its truth, for `differential`'s BUILD check).
                    if let Some(Object::Record(r)) = self.t().objects.get_mut(*id) {
                        r.state = Some(Value::Data(Rc::from("a set of items")));
                    }
                }
            }
            0x91 => {
                let at = self.t().stack.marker()?;
                let items = self.t().stack.split_off(at);
                if !items.iter().all(super::values_v3::hashable_scalar) {
                    self.unhashable("FROZENSET");
                }
                self.push(Value::Data(Rc::from(format!(
                    "a frozenset of {} items",
                    items.len()
                ))));
            }
            0x96 => self.typed_bytes(8)?,
            _ => {
                return Err(Raise::Invalid(format!(
                    "opcode {op:#04x} reached the typed model"
                )))
            }
        }
        Ok(())
    }

    /// Items a set cannot hold as the model knows them (containers: Python raises on
    /// unhashable ones; tuples of them too).
    fn unhashable(&mut self, op: &str) {
        let text = format!("{op} with items that are not hashable scalars: Python raises TypeError for a list or dict, and the model goes no further");
        self.note(Kind::Structure, Severity::Lead, None, || text);
    }
}
