//! The data values `socair-wo/3` adds, each called as torch's weights-only unpickler (or, for
//! the classes it does not list, `pickle.load`) calls it, at torch v2.15.0: `Counter`,
//! `torch.Size`, `torch.device`, `_get_layout`, `set`, `complex`, `bytearray`, `pathlib`
//! paths, 0.4-era `Parameter(tensor, requires_grad)`, and the dataclasses and enum of
//! `torch.distributed.checkpoint`'s metadata (NEWOBJ, then BUILD). Each builds data that holds
//! no code; arguments torch's writers never give leave the call a LEAD (`None` here). The
//! dispatch of every `/3` call is here too; the tensors `/3` adds are in [`super::rebuilds`].

use crate::globals::{Builtin, Known, PathClass};
use crate::pickle::findings::Kind;
use crate::pickle::machine::Run;
use crate::pickle::values::{
    describe, tuple, DictObject, Layout, Object, RecordObject, Severity, Value,
};
use std::rc::Rc;

/// Device types `torch.device` accepts (c10/core/DeviceType.cpp `parse_type`, torch v2.15.0),
/// besides the private backend's registered name.
const DEVICE_TYPES: &[&str] = &[
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
];

/// A scalar or string that a set may hold (hashable, no tensor), shown as Python shows it.
pub(super) fn hashable_scalar(v: &Value) -> bool {
    match v {
        Value::None
        | Value::Bool(_)
        | Value::Int(_)
        | Value::BigInt
        | Value::Float(_)
        | Value::Str(_)
        | Value::Bytes(_)
        | Value::Data(_)
        | Value::Layout(_)
        | Value::Global(_) => true,
        Value::Tuple(items, _) => items.iter().all(hashable_scalar),
        _ => false,
    }
}

impl Run<'_, '_> {
    /// A call of a global `socair-wo/3` adds; `None` when the arguments are not what torch
    /// writes (the caller reports the call as a LEAD).
    pub(super) fn call_v3(
        &mut self,
        k: Known,
        dotted: &str,
        args: &[Value],
        newobj: bool,
    ) -> Option<Value> {
        match k {
            Known::Counter if !newobj => self.counter(args),
            Known::TorchSize if !newobj => self.torch_size(args),
            Known::TorchDevice if !newobj => self.torch_device(args),
            Known::GetLayout if !newobj => self.get_layout(args),
            Known::Builtin(b) if !newobj => self.builtin(b, args),
            Known::Path(p) if !newobj => self.path(p, dotted, args),
            Known::DataClass(c) if newobj => self.record(c, args),
            Known::DataEnum(e, members) if !newobj => match args {
                [Value::Int(i)] if (0..members).contains(i) => {
                    Some(Value::Data(Rc::from(format!("{e}({i})"))))
                }
                _ => None,
            },
            Known::Parameter => self.parameter_class(args),
            Known::RebuildTensor if !newobj => Some(self.rebuild_tensor_v1(args)),
            Known::RebuildQTensor if !newobj => Some(self.rebuild_qtensor(args)),
            Known::RebuildSparse if !newobj => Some(self.rebuild_sparse(args)),
            Known::RebuildMeta if !newobj => Some(self.rebuild_meta(args)),
            Known::RebuildFromCpu if !newobj => Some(self.rebuild_from_cpu(args)),
            Known::RebuildFromTypeV2 if !newobj => Some(self.rebuild_from_type_v2(args)),
            Known::RebuildWrapperSubclass if !newobj => {
                self.structure(
                    Severity::Lead,
                    "_rebuild_wrapper_subclass builds a tensor subclass that holds no bytes of its own (a wrapper, a FakeTensor): its class, a global judged on its own, decides what it is, and there is nothing to fingerprint".into(),
                );
                Some(Value::Opaque(Rc::from("a wrapper tensor subclass")))
            }
            Known::RebuildFromNumpy if !newobj => {
                self.structure(
                    Severity::Lead,
                    "_rebuild_device_tensor_from_numpy builds a tensor from a numpy array (numpy's own globals are judged on their own): outside what socair-wo/3 fingerprints".into(),
                );
                Some(Value::Opaque(Rc::from("a tensor from a numpy array")))
            }
            _ => None,
        }
    }

    /// `collections.Counter()` or `Counter(mapping)`: `Counter.__reduce__` is
    /// `(self.__class__, (dict(self),))` (Lib/collections/__init__.py), and `Counter.update`
    /// of a mapping into an empty Counter is `dict.update`.
    pub(super) fn counter(&mut self, args: &[Value]) -> Option<Value> {
        let items = match args {
            [] => Vec::new(),
            [Value::Obj(id)] => match self.typed.as_ref()?.objects.get(*id)? {
                Object::Dict(d) => d.items.clone(),
                _ => return None,
            },
            _ => return None,
        };
        let d = self.new_object(Object::Dict(DictObject {
            counter: true,
            ..DictObject::default()
        }));
        if !items.is_empty() {
            let flat = items.into_iter().flat_map(|(k, v)| [k, v]).collect();
            self.set_items(d.clone(), flat);
        }
        Some(d)
    }

    /// `torch.Size(tuple_of_ints)`: `Size.__reduce__` is `(torch.Size, (tuple(self),))`; a
    /// tuple subclass, modeled as the tuple.
    fn torch_size(&mut self, args: &[Value]) -> Option<Value> {
        match args {
            [] => tuple(Vec::new()),
            [Value::Tuple(items, _)] if items.iter().all(|v| matches!(v, Value::Int(_))) => {
                tuple(items.to_vec())
            }
            _ => None,
        }
    }

    /// `torch.device(type)` or `torch.device(type, index)`, as `THPDevice_reduce` writes it
    /// (torch/csrc/Device.cpp).
    fn torch_device(&mut self, args: &[Value]) -> Option<Value> {
        let (kind, index) = match args {
            [Value::Str(s)] => (s.clone(), None),
            [Value::Str(s), Value::Int(i)] => (s.clone(), Some(*i)),
            _ => return None,
        };
        let base = kind.split(':').next().unwrap_or("");
        if !DEVICE_TYPES.contains(&base) || index.is_some_and(|i| i < 0) {
            self.structure(
                Severity::Lead,
                format!(
                    "torch.device({kind:?}{}): not a device type and index torch parses (c10 DeviceType), so torch.load raises here unless the private backend registered that name",
                    index.map(|i| format!(", {i}")).unwrap_or_default()
                ),
            );
        }
        Some(Value::Data(Rc::from(match index {
            Some(i) => format!("torch.device({kind:?}, {i})"),
            None => format!("torch.device({kind:?})"),
        })))
    }

    /// `torch.serialization._get_layout(name)`: a lookup of every `torch.layout` by its
    /// string (torch/serialization.py); another name makes it raise `KeyError`.
    fn get_layout(&mut self, args: &[Value]) -> Option<Value> {
        let [Value::Str(name)] = args else {
            return None;
        };
        match Layout::from_name(name) {
            Some(l) => Some(Value::Layout(l)),
            None => {
                self.structure(
                    Severity::Lead,
                    format!("_get_layout({name:?}): no torch.layout has that name, so torch.load raises KeyError"),
                );
                Some(Value::Opaque(Rc::from("an unknown layout")))
            }
        }
    }

    /// `set(list)`, `complex(re, im)`, `bytearray(bytes)`: what protocol 2 writes for them.
    pub(super) fn builtin(&mut self, b: Builtin, args: &[Value]) -> Option<Value> {
        match (b, args) {
            (Builtin::Set, []) => Some(Value::Data(Rc::from("set()"))),
            (Builtin::Set, [Value::Obj(id)]) => {
                let Object::List(items) = self.typed.as_ref()?.objects.get(*id)? else {
                    return None;
                };
                items
                    .iter()
                    .all(hashable_scalar)
                    .then(|| Value::Data(Rc::from(format!("a set of {} items", items.len()))))
            }
            (Builtin::Complex, parts) if parts.len() <= 2 => {
                let mut shown = Vec::new();
                for p in parts {
                    match p {
                        Value::Float(f) => shown.push(format!("{f:?}")),
                        Value::Int(i) => shown.push(i.to_string()),
                        _ => return None,
                    }
                }
                Some(Value::Data(Rc::from(format!(
                    "complex({})",
                    shown.join(", ")
                ))))
            }
            (Builtin::Bytearray, []) => Some(Value::Bytes(Rc::from(Vec::new()))),
            (Builtin::Bytearray, [Value::Bytes(b)]) => Some(Value::Bytes(b.clone())),
            _ => None,
        }
    }

    /// A `pathlib` path: `PurePath.__reduce__` is `(self.__class__, self.parts)` (3.11) or
    /// `(self.__class__, tuple(self._raw_paths))` (3.12 on), strings each; constructing a
    /// path parses the text and touches no file.
    fn path(&mut self, class: PathClass, dotted: &str, args: &[Value]) -> Option<Value> {
        let mut parts = Vec::new();
        for a in args {
            let Value::Str(s) = a else {
                return None;
            };
            parts.push(format!("{s:?}"));
        }
        if class == PathClass::Windows {
            self.structure(
                Severity::Lead,
                format!("{dotted}: constructing a WindowsPath on POSIX raises (\"cannot instantiate 'WindowsPath' on your system\"), so pickle.load of this file fails there and works on Windows"),
            );
        }
        Some(Value::Data(Rc::from(format!(
            "{dotted}({})",
            parts.join(", ")
        ))))
    }

    /// NEWOBJ of a listed dataclass with no arguments (`copyreg.__newobj__`, which pickle
    /// writes for protocol 2 and later): an instance whose state BUILD sets.
    fn record(&mut self, class: &'static str, args: &[Value]) -> Option<Value> {
        if !args.is_empty() {
            return None;
        }
        Some(self.new_object(Object::Record(RecordObject {
            class: Rc::from(class),
            state: None,
        })))
    }

    /// `torch.nn.parameter.Parameter(tensor[, requires_grad])`: what torch 0.4's
    /// `Parameter.__reduce_ex__` wrote, `(Parameter, (super(Parameter, self), requires_grad))`,
    /// and what the weights-only unpickler's NEWOBJ of `torch.nn.Parameter` builds.
    fn parameter_class(&mut self, args: &[Value]) -> Option<Value> {
        let (data, requires_grad) = match args {
            [Value::Tensor(t)] => (t, true),
            [Value::Tensor(t), Value::Bool(rg)] => (t, *rg),
            _ => return None,
        };
        let mut t = (**data).clone();
        t.parameter = true;
        t.requires_grad = requires_grad;
        self.charge(std::mem::size_of_val(&t) + 96 + 16 * t.shape.len());
        let t = Rc::new(t);
        self.t().tensors.push(t.clone());
        Some(Value::Tensor(t))
    }

    /// BUILD on a listed dataclass instance: pickle's `load_build` calls its `__setstate__`
    /// (dcp's `TensorProperties` takes a 5- or 6-tuple) or updates its `__dict__` with a dict
    /// of `str` keys; anything else, or a second BUILD, leaves the grammar's model (a LEAD).
    pub(super) fn build_record(&mut self, id: usize, state: Value) {
        let gname = self.options.rules_name();
        let objects = &self.t().objects;
        let ok = match (&objects[id], &state) {
            (Object::Record(r), Value::Tuple(items, _))
                if r.class.ends_with(".TensorProperties") =>
            {
                matches!(items.len(), 5 | 6)
            }
            (Object::Record(_), Value::None) => true,
            (Object::Record(_), Value::Obj(s)) => match objects.get(*s) {
                Some(Object::Dict(d)) => d.items.iter().all(|(k, _)| matches!(k, Value::Str(_))),
                _ => false,
            },
            _ => false,
        };
        match &mut self.t().objects[id] {
            Object::Record(r) if ok && r.state.is_none() => r.state = Some(state),
            Object::Record(r) => {
                let text = format!(
                    "BUILD sets {} as the state of a {}: outside {gname}",
                    describe(&state),
                    r.class
                );
                self.note(Kind::Structure, Severity::Lead, None, || text);
            }
            _ => {}
        }
    }
}
