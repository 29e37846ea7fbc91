//! The abstract machine: every opcode run over abstract values once a pickle has left the
//! grammar (or for replays, appended pickles and detection), with the string ids opcodes push,
//! the globals they name and the calls they make. Apart from the typed opcodes
//! ([`crate::pickle::typed`]) and from the run's loop that chooses between the two.

use super::abstract_state::{
    AbsGlobal, Id, GLOBAL, MAX_SPARSE_MEMO, MAX_STR_AT, NOT_STR, OWNED, STR_AT, UNKNOWN, UNNAMEABLE,
};
use super::stack::underflow;
use super::strings::{binstring_text, decode_string_line, string_at, truncated_name};
use super::Run;
use crate::globals::{Class, MAX_NAME_BYTES};
use crate::pickle::findings::{quote, Kind};
use crate::pickle::reader::Raise;
use crate::pickle::text::{self, Text};
use crate::pickle::values::Severity;
use std::rc::Rc;

impl<'a> Run<'a, '_> {
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

    pub(super) fn abstract_op(&mut self, op: u8) -> Result<Option<(usize, Option<usize>)>, Raise> {
        match op {
            b'.' => {
                let alt = self.reader.stop();
                self.abs().stack.pop()?;
                return Ok(Some((self.reader.pos(), alt)));
            }
            b'(' | b'0' | b'1' | b'2' => self.abstract_stack_op(op)?,
            b'F' | b'I' | b'L' | b'J' | b'K' | b'M' | b'G' | 0x8a | 0x8b | b'N' | 0x88 | 0x89 => {
                self.abstract_number_op(op)?
            }
            b'S' | b'V' | b'T' | b'U' | b'X' | 0x8c | 0x8d | b'B' | b'C' | 0x8e | 0x96 | 0x97
            | 0x98 => self.abstract_string_op(op)?,
            b')'
            | b']'
            | b'}'
            | 0x8f
            | 0x85..=0x87
            | b't'
            | b'l'
            | 0x91
            | b'd'
            | b'a'
            | b'e'
            | 0x90
            | b's'
            | b'u'
            | b'b' => self.abstract_container_op(op)?,
            b'R' | 0x81 | 0x92 | b'o' | b'i' | b'Q' | b'P' => self.abstract_call_op(op)?,
            b'c' | 0x93 | 0x82..=0x84 => self.abstract_global_op(op)?,
            b'q' | b'r' | b'p' | 0x94 | b'h' | b'j' | b'g' => self.abstract_memo_op(op)?,
            _ => return Err(not_an_opcode(op)),
        }
        Ok(None)
    }

    /// MARK, POP, POP_MARK, DUP.
    fn abstract_stack_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'(' => self.abs().stack.mark(),
            b'0' => self.abs().stack.pop_op()?,
            b'1' => {
                let at = self.abs().stack.marker()?;
                self.abs().stack.truncate(at);
            }
            b'2' => self.abs().stack.dup()?,
            _ => return Err(not_an_opcode(op)),
        }
        Ok(())
    }

    /// Numbers and the constants None, True and False: never a string.
    fn abstract_number_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            // Numbers: their text is not validated (Python may raise where this goes on).
            b'F' | b'I' | b'L' => {
                let line = self.line_arg(2)?;
                self.check_number_text(op, line);
            }
            b'J' => {
                self.reader.read(4)?;
            }
            b'K' => {
                self.reader.read(1)?;
            }
            b'M' => {
                self.reader.read(2)?;
            }
            b'G' => {
                self.reader.read(8)?;
            }
            0x8a => {
                let n = usize::from(self.reader.read(1)?[0]);
                self.reader.read(n)?;
            }
            0x8b => {
                let n = self.i32_arg()?;
                let n = usize::try_from(n)
                    .map_err(|_| Raise::Invalid("LONG pickle has negative byte count".into()))?;
                self.reader.read(n)?;
            }
            b'N' | 0x88 | 0x89 => {}
            _ => return Err(not_an_opcode(op)),
        }
        self.abs().stack.push(NOT_STR);
        Ok(())
    }

    /// Strings (whose ids may name a global later), bytes and buffers.
    fn abstract_string_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
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
            _ => return Err(not_an_opcode(op)),
        }
        Ok(())
    }

    /// Building and filling tuples, lists, dicts and sets, and BUILD.
    fn abstract_container_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b')' | b']' | b'}' | 0x8f => self.abs().stack.push(NOT_STR),
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
            _ => return Err(not_an_opcode(op)),
        }
        Ok(())
    }

    /// The calls (REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST) and persistent ids: each result is a
    /// value only running the pickle would reveal.
    fn abstract_call_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
            b'R' | 0x81 | 0x92 => {
                let n = if op == 0x92 { 3 } else { 2 };
                let stack = &self.abs().stack;
                let callable = stack.items.len().checked_sub(n).map(|i| stack.items[i]);
                self.abs().stack.drop_n(n)?;
                self.abstract_call(callable.unwrap_or(UNKNOWN), op != b'R');
            }
            b'o' => {
                let at = self.abs().stack.marker()?;
                if self.abs().stack.len() < at + 1 {
                    return Err(underflow());
                }
                let callable = self.abs().stack.items[at];
                self.abs().stack.truncate(at);
                self.abstract_call(callable, false);
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
                self.abstract_call(id, false);
            }
            b'Q' => {
                self.abs().stack.pop()?;
            }
            b'P' => {
                self.line_arg(1)?;
            }
            _ => return Err(not_an_opcode(op)),
        }
        self.abs().stack.push(UNKNOWN);
        Ok(())
    }

    /// GLOBAL, STACK_GLOBAL and the extension-registry opcodes: the globals a pickle names.
    fn abstract_global_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
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
                        return Ok(());
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
            _ => return Err(not_an_opcode(op)),
        }
        Ok(())
    }

    /// The memo: PUT, BINPUT, LONG_BINPUT, MEMOIZE, GET, BINGET, LONG_BINGET.
    fn abstract_memo_op(&mut self, op: u8) -> Result<(), Raise> {
        match op {
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
            _ => return Err(not_an_opcode(op)),
        }
        Ok(())
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
    /// reports calls outside the grammar; `newobj` for NEWOBJ and NEWOBJ_EX, which run only
    /// `cls.__new__`.
    fn abstract_call(&mut self, callable: Id, newobj: bool) {
        let gname = self.options.rules_name();
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
                Class::Constructs(why, via) if via.runs_on(newobj) => {
                    self.note(Kind::Call, Severity::Fail, None, || {
                        format!("calls {}: {why}", g.shown)
                    })
                }
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

/// What Python's unpickler raises on a byte that is no opcode.
fn not_an_opcode(op: u8) -> Raise {
    Raise::Invalid(format!("invalid load key {op:#04x}: not a pickle opcode"))
}
