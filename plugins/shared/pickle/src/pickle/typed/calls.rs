//! Calls (REDUCE, NEWOBJ) of globals: what the grammar's own globals build (OrderedDict,
//! `_codecs.encode`, torch's rebuild functions, which [`super::tensors`] models, and what
//! `socair-wo/3` adds, in [`super::values_v3`] and [`super::rebuilds`]), and the finding for a
//! call of anything else. Apart from the opcodes, which only hand over the callable and its
//! arguments.

use super::tensors::Rebuild;
use crate::globals::{Class, Known};
use crate::pickle::findings::Kind;
use crate::pickle::machine::Run;
use crate::pickle::values::{describe, DictObject, Grammar, Object, Severity, Value};
use std::rc::Rc;

impl Run<'_, '_> {
    pub(super) fn call(&mut self, callable: Value, args: Value, newobj: bool) -> Value {
        let gname = self.options.rules_name();
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
        let quote = crate::pickle::findings::quote;
        let known = match &g.class {
            Class::Known(k) => *k,
            Class::Dangerous(why) => {
                self.note(Kind::Call, Severity::Fail, None, || {
                    format!("calls {}.{}: {why}", quote(&g.module), quote(&g.name))
                });
                return Value::Opaque(Rc::from(format!("{}.{}", g.module, g.name).as_str()));
            }
            Class::Constructs(why, via) => {
                if via.runs_on(newobj) {
                    self.note(Kind::Call, Severity::Fail, None, || {
                        format!("calls {}.{}: {why}", quote(&g.module), quote(&g.name))
                    });
                } else {
                    self.note(Kind::Call, Severity::Lead, None, || {
                        format!(
                            "makes a {}.{} by NEWOBJ (cls.__new__ alone: its __init__, which the analysis flags, does not run): outside {gname}",
                            quote(&g.module),
                            quote(&g.name)
                        )
                    });
                }
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
                if newobj && args.is_empty() && self.options.profile.data() {
                    // Under a profile, an instance of a class outside it (`cls.__new__(cls)`,
                    // the LEAD above) is still followed as a record, so that the arrays its
                    // BUILD state holds are named by their attributes.
                    return self.new_object(Object::Record(crate::pickle::values::RecordObject {
                        class: Rc::from(format!("{}.{}", g.module, g.name).as_str()),
                        state: None,
                    }));
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
                let which = if known == Known::RebuildTensorV3 {
                    Rebuild::V3
                } else {
                    Rebuild::V2
                };
                self.rebuild_tensor(&args, which)
            }
            Known::RebuildParameter | Known::RebuildParameterWithState if !newobj => {
                self.rebuild_parameter(&args, known == Known::RebuildParameterWithState)
            }
            Known::Profile(p) => match self.call_profile(p, &args, newobj) {
                Some(v) => v,
                None => self.call_outside(&dotted, args.len()),
            },
            k if self.options.grammar >= Grammar::V3 => {
                match self.call_v3(k, &dotted, &args, newobj) {
                    Some(v) => v,
                    None => self.call_outside(&dotted, args.len()),
                }
            }
            _ => self.call_outside(&dotted, args.len()),
        }
    }

    /// A call of a grammar global with arguments the grammar does not model: a LEAD, and an
    /// opaque result.
    fn call_outside(&mut self, dotted: &str, n: usize) -> Value {
        let gname = self.options.rules_name();
        let text = format!("calls {dotted} with {n} arguments: outside {gname}");
        self.note(Kind::Call, Severity::Lead, None, || text);
        Value::Opaque(Rc::from(dotted))
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
                    Object::Dict(_) | Object::Record(_) => return None,
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
}
