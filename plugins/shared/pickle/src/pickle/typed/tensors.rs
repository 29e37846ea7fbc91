//! Tensors from torch's rebuild functions (`_rebuild_tensor_v2/v3`, `_rebuild_parameter`,
//! `_rebuild_parameter_with_state`): every argument judged as torch applies it (storage,
//! offset, size and stride, `requires_grad`, backward hooks, metadata). Apart from the calls
//! that reach them ([`super::calls`]).

use crate::globals::weights_only::{int_repr_dtype, is_quantized};
use crate::globals::{Class, Dtype, Known};
use crate::pickle::machine::{Run, Typed, ENTRY};
use crate::pickle::values::{
    check_bounds, describe, Grammar, Object, Severity, StorageClass, StorageRef, TensorModel, Value,
};
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
            Object::Record(_) => true,
        },
        Value::Global(_)
        | Value::Storage(_)
        | Value::Tensor(_)
        | Value::Opaque(_)
        | Value::Layout(_)
        | Value::Data(_)
        | Value::Composite(_) => return None,
    })
}

/// Which of torch's tensor rebuild functions: `_rebuild_tensor` (before torch 0.4, `/3`),
/// `_rebuild_tensor_v2` or `_rebuild_tensor_v3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rebuild {
    V1,
    V2,
    V3,
    /// The integer representation of `_rebuild_qtensor`'s tensor: `(storage, storage_offset,
    /// size, stride, requires_grad)` over a quantized storage, in the dtype `int_repr()`
    /// gives.
    Quantized,
}

impl Run<'_, '_> {
    /// A rebuild's `backward_hooks`, judged: an empty OrderedDict (what torch.save writes since
    /// torch 1.0, "Note [Don't serialize hooks]"), or, from `socair-wo/3`, `None` (what torch
    /// 0.4's `Tensor.__reduce_ex__` wrote: `self._backward_hooks`, which is `None` for a tensor
    /// without hooks; `_rebuild_tensor_v2` assigns it and `tensor._backward_hooks = None` means
    /// no hooks). A non-empty OrderedDict is a LEAD; anything else a FAIL (`false`).
    pub(super) fn hooks_ok(&mut self, name: &str, hooks: &Value) -> bool {
        if matches!(hooks, Value::None) && self.options.grammar >= Grammar::V3 {
            return true;
        }
        match self.empty_hooks(hooks) {
            Some(true) => true,
            Some(false) => {
                self.structure(
                    Severity::Lead,
                    format!("{name} carries backward hooks; torch.save never serializes hooks"),
                );
                true
            }
            None => {
                self.structure(
                    Severity::Fail,
                    format!("{name} backward_hooks is not an OrderedDict"),
                );
                false
            }
        }
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
                Object::Record(r) => {
                    return Err(format!(
                        "{name} metadata is a {}: torch's set_tensor_metadata asserts a dict and torch.load raises",
                        r.class
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

    pub(super) fn rebuild_tensor(&mut self, args: &[Value], which: Rebuild) -> Value {
        let name = match which {
            Rebuild::V1 => "_rebuild_tensor",
            Rebuild::V2 => "_rebuild_tensor_v2",
            Rebuild::V3 => "_rebuild_tensor_v3",
            Rebuild::Quantized => "_rebuild_qtensor",
        };
        let fixed = match which {
            Rebuild::V1 => 4,
            Rebuild::Quantized => 5,
            Rebuild::V2 => 6,
            Rebuild::V3 => 7,
        };
        let opaque = |what: &str| Value::Opaque(Rc::from(what));
        let with_metadata = matches!(which, Rebuild::V2 | Rebuild::V3) && args.len() == fixed + 1;
        if args.len() != fixed && !with_metadata {
            self.structure(
                Severity::Fail,
                format!("{name} with {} arguments", args.len()),
            );
            return opaque(name);
        }
        let requires_grad = match (which, args.get(4)) {
            (Rebuild::V1, _) => Some(&Value::Bool(false)),
            (_, rg) => rg,
        };
        let (
            Value::Storage(storage),
            Value::Int(offset),
            Value::Tuple(size, _),
            Value::Tuple(stride, _),
            Some(Value::Bool(requires_grad)),
        ) = (&args[0], &args[1], &args[2], &args[3], requires_grad)
        else {
            self.structure(
                Severity::Fail,
                if which == Rebuild::V1 {
                    format!("{name} arguments are not (storage, offset, size, stride)")
                } else {
                    format!(
                        "{name} arguments are not (storage, offset, size, stride, requires_grad, …)"
                    )
                },
            );
            return opaque(name);
        };
        if matches!(which, Rebuild::V2 | Rebuild::V3) && !self.hooks_ok(name, &args[5]) {
            return opaque(name);
        }
        let Some(dtype) = self.rebuild_dtype(name, which, storage, args.get(6)) else {
            return opaque(name);
        };
        let (conj, neg) = match args.get(fixed).filter(|_| with_metadata) {
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
        let Some((shape, stride, storage_offset)) =
            self.rebuild_layout(name, size, stride, *offset)
        else {
            return opaque(name);
        };
        if which == Rebuild::V3 {
            self.note_untyped_view(storage, dtype);
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
            attributes: Vec::new(),
        };
        if let Err(why) = check_bounds(&tensor) {
            self.structure(Severity::Fail, format!("{name}: {why}"));
            return opaque(name);
        }
        let t = Rc::new(tensor);
        self.t().tensors.push(t.clone());
        Value::Tensor(t)
    }

    /// The dtype a rebuild gives its tensor: a quantized storage only through
    /// `_rebuild_qtensor` (as its integer representation), the storage's own for v1 and v2,
    /// and for v3 (an untyped storage) its `dtype` argument. `None` after the finding that says
    /// why not.
    fn rebuild_dtype(
        &mut self,
        name: &str,
        which: Rebuild,
        storage: &StorageRef,
        dtype_arg: Option<&Value>,
    ) -> Option<&'static Dtype> {
        let gname = self.options.rules_name();
        if let StorageClass::Typed(d) = storage.class {
            if !is_quantized(d) && which == Rebuild::Quantized {
                self.structure(
                    Severity::Fail,
                    format!("{name} over a storage that is not quantized: torch makes an empty quantized tensor of the storage's dtype, which raises"),
                );
                return None;
            }
            if is_quantized(d) && which != Rebuild::Quantized {
                self.structure(
                    Severity::Lead,
                    format!("{name} over a {} storage: torch.save rebuilds a quantized tensor with _rebuild_qtensor, which carries its scale and zero point", d.torch),
                );
                return None;
            }
        }
        if which == Rebuild::V3 {
            let Some(Value::Global(g)) = dtype_arg else {
                self.structure(Severity::Fail, format!("{name} dtype is not a global"));
                return None;
            };
            match (&g.class, storage.class) {
                (Class::Known(Known::Dtype(d)), StorageClass::Untyped) => Some(*d),
                (Class::Known(Known::Dtype(_)), StorageClass::Typed(_)) => {
                    self.structure(
                        Severity::Fail,
                        format!("{name} over a typed storage; v3 rebuilds untyped ones"),
                    );
                    None
                }
                _ => {
                    self.structure(
                        Severity::Lead,
                        format!("{name} with dtype {}.{}: outside {gname}", g.module, g.name),
                    );
                    None
                }
            }
        } else {
            match storage.class {
                StorageClass::Typed(d) if which == Rebuild::Quantized => match int_repr_dtype(d) {
                    Some(int) => Some(int),
                    None => {
                        self.structure(
                            Severity::Lead,
                            format!("a quantized {} tensor packs several values in each byte: its integer representation is not fingerprinted", d.torch),
                        );
                        None
                    }
                },
                StorageClass::Typed(d) => Some(d),
                StorageClass::Untyped => {
                    self.structure(
                        Severity::Fail,
                        format!("{name} over an untyped storage; v2 rebuilds typed ones"),
                    );
                    None
                }
            }
        }
    }

    /// A rebuild's shape, stride and storage offset: non-negative integers, as many strides as
    /// sizes. `None` after the finding that says why not.
    fn rebuild_layout(
        &mut self,
        name: &str,
        size: &[Value],
        stride: &[Value],
        offset: i64,
    ) -> Option<(Vec<u64>, Vec<u64>, u64)> {
        let ints = |t: &[Value]| -> Option<Vec<u64>> {
            t.iter()
                .map(|v| match v {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    _ => None,
                })
                .collect()
        };
        let (Some(shape), Some(stride), Ok(storage_offset)) =
            (ints(size), ints(stride), u64::try_from(offset))
        else {
            self.structure(
                Severity::Fail,
                format!("{name} with a size, stride or offset that is negative or not an integer"),
            );
            return None;
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
            return None;
        }
        Some((shape, stride, storage_offset))
    }

    /// v3 views an untyped storage as a dtype: every view of one storage must take the same.
    fn note_untyped_view(&mut self, storage: &StorageRef, dtype: &'static Dtype) {
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

    pub(super) fn rebuild_parameter(&mut self, args: &[Value], with_state: bool) -> Value {
        let gname = self.options.rules_name();
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
        let v3 = self.options.grammar >= Grammar::V3;
        if self.empty_hooks(&args[2]) != Some(true) && !(v3 && matches!(args[2], Value::None)) {
            self.structure(
                Severity::Lead,
                format!("{name} carries backward hooks or no hooks dict"),
            );
        }
        let mut attributes = Vec::new();
        if with_state && v3 {
            // `_set_obj_state`, as `_rebuild_from_type_v2` applies it.
            match self.tensor_state(name, &args[3]) {
                Some(names) => attributes = names,
                None => return Value::Opaque(Rc::from(name)),
            }
        } else if with_state {
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
        t.attributes.extend(attributes);
        self.charge(size_of::<TensorModel>() + 96 + 16 * t.shape.len() + 24 * t.attributes.len());
        let t = Rc::new(t);
        self.t().tensors.push(t.clone());
        Value::Tensor(t)
    }
}
