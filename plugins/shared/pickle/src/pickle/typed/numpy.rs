//! NumPy's arrays, dtypes and scalars as NumPy 2.4 pickles them, and the data constructors of
//! `socair-data/1` (`globals::profiles`), over typed values: each call is accepted only with
//! the arguments its library's reducer writes, and an array is a tensor only when its raw
//! bytes are exactly `product(shape) × itemsize` (NumPy's `array_setstate` raises
//! `ValueError: buffer size does not match array size` otherwise).
//!
//! * `_reconstruct(numpy.ndarray, (0,), b'b')` then BUILD `(1, shape, dtype, is_fortran,
//!   raw)` (`array_reduce`/`array_setstate`, numpy/_core/src/multiarray/methods.c, numpy
//!   2.4.6): `raw` is bytes (protocol 3 on, located in the pickle), bytes from
//!   `_codecs.encode(text, 'latin1')` or a latin-1 `str` (protocols 0 to 2: decoded, listed
//!   unread with the reason, since the pickle holds their UTF-8 or escaped text, not the
//!   bytes), or, for an object dtype, a list of the objects (data, no tensor).
//! * `numpy.dtype(code, False, True)` then BUILD `(3, endian, subarray, names, fields, elsize,
//!   alignment, flags)` or the 9-tuple of version 4 whose last item is a datetime's
//!   `(unit, num, 1, 1)` (`arraydescr_reduce`, descriptor.c): `dtype.str` is the endian and
//!   the code, with `[unit]` for datetimes.
//! * `numpy._core.numeric._frombuffer(buffer, dtype, shape, order)`: protocol 5's
//!   `array_reduce_ex_picklebuffer`, the buffer pickled in-band as BYTEARRAY8 or bytes.
//! * `numpy._core.multiarray.scalar(dtype, bytes)` (`gentype_reduce`): a scalar of exactly
//!   one item's bytes (data, no tensor).

use crate::globals::profiles::{BoosterKind, DateTimeClass, ProfileGlobal};
use crate::pickle::arrays::{ArrayInfo, DtypeInfo, NumpyState};
use crate::pickle::findings::Kind;
use crate::pickle::machine::Run;
use crate::pickle::values::{describe, Object, RecordObject, Severity, Value};
use std::ops::Range;
use std::rc::Rc;

/// The class an array is recorded under.
pub const NDARRAY: &str = "numpy.ndarray";
/// The class a dtype is recorded under.
pub const DTYPE: &str = "numpy.dtype";
/// sklearn's tree class.
pub const TREE: &str = "sklearn.tree._tree.Tree";
/// joblib's wrapper class.
pub const WRAPPER: &str = "joblib.numpy_pickle.NumpyArrayWrapper";

pub(super) fn bytes_key(b: &Rc<[u8]>) -> usize {
    Rc::as_ptr(b).cast::<u8>() as usize
}

/// `(kind, itemsize)` of a dtype code `"%c%d"` (`f8`, `U3`: items of 4 bytes a character).
fn parse_code(code: &str) -> Option<(char, u64)> {
    let mut chars = code.chars();
    let kind = chars.next()?;
    let digits = chars.as_str();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 12 {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let size = match kind {
        'b' | 'i' | 'u' | 'f' | 'c' | 'm' | 'M' | 'O' | 'S' | 'V' => n,
        'U' => n.checked_mul(4)?,
        _ => return None,
    };
    Some((kind, size))
}

impl Run<'_, '_> {
    fn numpy(&mut self) -> &mut NumpyState {
        &mut self.t().numpy
    }

    /// Records where the payload of a bytes value lies in the data.
    pub(crate) fn note_bytes(&mut self, b: &Rc<[u8]>, at: Range<usize>) {
        if self.options.profile.data() || self.options.joblib {
            self.numpy().byte_spans.insert(bytes_key(b), at);
        }
    }

    pub(super) fn shape_pub(v: &Value) -> Option<Vec<u64>> {
        Self::shape_of(v)
    }

    pub(super) fn dtype_pub(&self, v: &Value) -> Option<DtypeInfo> {
        self.dtype_of(v)
    }

    pub(super) fn new_record_pub(&mut self, class: &str) -> (usize, Value) {
        self.new_record(class)
    }

    fn shape_of(v: &Value) -> Option<Vec<u64>> {
        match v {
            Value::Tuple(items, _) => items
                .iter()
                .map(|d| match d {
                    Value::Int(i) => u64::try_from(*i).ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    fn dtype_of(&self, v: &Value) -> Option<DtypeInfo> {
        let Value::Obj(id) = v else { return None };
        let info = self.typed.as_ref()?.numpy.dtypes.get(id)?;
        info.descr.is_some().then(|| info.clone())
    }

    fn new_record(&mut self, class: &str) -> (usize, Value) {
        let v = self.new_object(Object::Record(RecordObject {
            class: Rc::from(class),
            state: None,
        }));
        let Value::Obj(id) = v else {
            unreachable!("new_object gives an object")
        };
        (id, v)
    }

    /// A call of a global a profile adds; `None` when the arguments are not what its reducer
    /// writes (the caller reports the call as a LEAD).
    pub(super) fn call_profile(
        &mut self,
        g: ProfileGlobal,
        args: &[Value],
        newobj: bool,
    ) -> Option<Value> {
        use ProfileGlobal as P;
        let is = |v: &Value, want: ProfileGlobal| matches!(v, Value::Global(g) if g.class == crate::globals::Class::Known(crate::globals::Known::Profile(want)));
        match (g, args) {
            (P::NpReconstruct, [cls, Value::Tuple(shape, _), Value::Bytes(code)])
                if !newobj
                    && is(cls, P::NpNdarray)
                    && matches!(&shape[..], [Value::Int(0)])
                    && &code[..] == b"b" =>
            {
                Some(self.new_record(NDARRAY).1)
            }
            (P::NpDtype, [Value::Str(code), align, copy]) if !newobj => {
                let flag = |v: &Value| match v {
                    Value::Bool(b) => Some(*b),
                    Value::Int(i @ (0 | 1)) => Some(*i == 1),
                    _ => None,
                };
                let (Some(false), Some(true)) = (flag(align), flag(copy)) else {
                    return None;
                };
                let (kind, itemsize) = parse_code(code)?;
                let (id, v) = self.new_record(DTYPE);
                let info = DtypeInfo {
                    code: code.to_string(),
                    descr: None,
                    itemsize,
                    object: kind == 'O',
                };
                self.numpy().dtypes.insert(id, info);
                Some(v)
            }
            (P::NpScalar, [dtype, value]) if !newobj => {
                let d = self.dtype_of(dtype)?;
                match value {
                    _ if d.object => Some(Value::Data(Rc::from("a numpy object scalar"))),
                    Value::Bytes(b) if b.len() as u64 == d.itemsize => Some(Value::Data(Rc::from(
                        format!("a numpy scalar of dtype {}", d.descr.unwrap_or_default()),
                    ))),
                    Value::Bytes(b) => {
                        let text = format!(
                            "numpy scalar of dtype {} from {} bytes, not its itemsize {}: numpy raises",
                            d.descr.unwrap_or_default(),
                            b.len(),
                            d.itemsize
                        );
                        self.note(Kind::Structure, Severity::Fail, None, || text);
                        Some(Value::Opaque(Rc::from("a numpy scalar numpy refuses")))
                    }
                    _ => None,
                }
            }
            (P::NpFromBuffer, [Value::Bytes(buf), dtype, shape, Value::Str(order)])
                if !newobj && matches!(&**order, "C" | "F") =>
            {
                let d = self.dtype_of(dtype)?;
                let shape = Self::shape_of(shape)?;
                if d.object {
                    return None;
                }
                let span = self
                    .typed
                    .as_ref()?
                    .numpy
                    .byte_spans
                    .get(&bytes_key(buf))
                    .cloned();
                let (id, v) = self.new_record(NDARRAY);
                self.array(
                    id,
                    d,
                    shape,
                    &**order == "F",
                    buf.len(),
                    span.ok_or_else(|| {
                        "the buffer's bytes were not read from the pickle as one payload"
                            .to_string()
                    }),
                );
                Some(v)
            }
            (P::Deque, []) if !newobj => Some(self.new_object(Object::List(Vec::new()))),
            (P::Deque, [Value::Tuple(empty, _), Value::Int(n)])
                if !newobj && empty.is_empty() && *n >= 0 =>
            {
                Some(self.new_object(Object::List(Vec::new())))
            }
            (P::Decimal, [Value::Str(s)]) if !newobj => {
                Some(Value::Data(Rc::from(format!("Decimal({s:?})"))))
            }
            // `save_bytes` below protocol 3 writes `b''` as `bytes()` (Lib/pickle.py).
            (P::EmptyBytes, []) if !newobj => Some(Value::Bytes(Rc::from(Vec::new()))),
            (P::FrozenSet, []) if !newobj => Some(Value::Data(Rc::from("frozenset()"))),
            (P::Builtin(b), args) if !newobj => self.builtin(b, args),
            (P::Counter, args) if !newobj => self.counter(args),
            (P::FrozenSet, [Value::Obj(id)]) if !newobj => {
                let Object::List(items) = self.typed.as_ref()?.objects.get(*id)? else {
                    return None;
                };
                let n = items.len();
                items
                    .iter()
                    .all(super::values_v3::hashable_scalar)
                    .then(|| Value::Data(Rc::from(format!("a frozenset of {n} items"))))
            }
            (P::DateTime(c), args) if !newobj => self.datetime(c, args),
            (P::JoblibWrapper, []) if newobj => Some(self.new_record(WRAPPER).1),
            (P::JoblibCompatWrapper(c), []) if newobj => Some(
                self.new_record(&format!("joblib.numpy_pickle_compat.{c}"))
                    .1,
            ),
            (P::Sklearn(c), []) if newobj => Some(self.new_record(c).1),
            // A Cython loss: `__reduce__` gave `(cls, (floats...))`; `__init__(self, double
            // ...)` stores them (sklearn/_loss/_loss.pyx.tp, linear_model/_sgd_fast.pyx.tp at
            // 1.9.1). Cython converts an int or bool to double too.
            (P::SklearnNumbers(c, n), args)
                if !newobj
                    && args.len() == n
                    && args
                        .iter()
                        .all(|a| matches!(a, Value::Int(_) | Value::Float(_) | Value::Bool(_))) =>
            {
                Some(Value::Data(Rc::from(format!("a {c}"))))
            }
            (P::Booster(k), []) if newobj => Some(self.new_record(k.class()).1),
            (P::DefaultDict, args) if !newobj => self.default_dict(args),
            (P::Reconstructor, [Value::Global(cls), base, Value::None])
                if !newobj && is(base, P::Object) =>
            {
                match cls.class {
                    crate::globals::Class::Known(crate::globals::Known::Profile(P::Sklearn(c))) => {
                        Some(self.new_record(c).1)
                    }
                    _ => None,
                }
            }
            // `Tree.__reduce__`: `(Tree, (n_features, n_classes array, n_outputs), state)`.
            (P::SklearnTree, [Value::Int(_), Value::Obj(classes), Value::Int(_)])
                if !newobj && self.t().numpy.arrays.iter().any(|(id, _)| id == classes) =>
            {
                Some(self.new_record(TREE).1)
            }
            _ => None,
        }
    }

    /// The `datetime` classes, with the state their reducers write (Modules/_datetimemodule.c).
    fn datetime(&mut self, c: DateTimeClass, args: &[Value]) -> Option<Value> {
        let tz_ok = |v: &Value| match v {
            Value::None => true,
            Value::Data(d) => d.starts_with("datetime.timezone("),
            _ => false,
        };
        let state = |v: &Value, n: usize| match v {
            Value::Bytes(b) => b.len() == n,
            // Python 2's str state, read as latin-1 (`date_new` accepts it).
            Value::Str(s) => s.chars().count() == n && s.chars().all(|c| u32::from(c) < 256),
            _ => false,
        };
        let shown = match (c, args) {
            (DateTimeClass::Date, [s]) if state(s, 4) => "datetime.date(…)".to_string(),
            (DateTimeClass::Time, [s]) if state(s, 6) => "datetime.time(…)".to_string(),
            (DateTimeClass::Time, [s, tz]) if state(s, 6) && tz_ok(tz) => {
                "datetime.time(…, tzinfo)".to_string()
            }
            (DateTimeClass::DateTime, [s]) if state(s, 10) => "datetime.datetime(…)".to_string(),
            (DateTimeClass::DateTime, [s, tz]) if state(s, 10) && tz_ok(tz) => {
                "datetime.datetime(…, tzinfo)".to_string()
            }
            (DateTimeClass::TimeDelta, [Value::Int(d), Value::Int(s), Value::Int(us)]) => {
                format!("datetime.timedelta({d}, {s}, {us})")
            }
            (DateTimeClass::TimeZone, [Value::Data(td)])
                if td.starts_with("datetime.timedelta(") =>
            {
                format!("datetime.timezone({td})")
            }
            (DateTimeClass::TimeZone, [Value::Data(td), Value::Str(n)])
                if td.starts_with("datetime.timedelta(") =>
            {
                format!("datetime.timezone({td}, {n:?})")
            }
            _ => return None,
        };
        Some(Value::Data(Rc::from(shown)))
    }

    /// Records an array whose `len` raw bytes lie at `span`, or a finding when their count is
    /// not the one its shape and dtype need.
    /// The decoded bytes of the array `id` [`Self::array`] just recorded (none when it
    /// refused it).
    fn set_decoded(&mut self, id: usize, decoded: Option<Rc<[u8]>>) {
        if let Some((i, a)) = self.numpy().arrays.last_mut() {
            if *i == id {
                a.decoded = decoded;
            }
        }
    }

    fn array(
        &mut self,
        id: usize,
        d: DtypeInfo,
        shape: Vec<u64>,
        fortran: bool,
        len: usize,
        span: Result<Range<usize>, String>,
    ) {
        let descr = d.descr.clone().unwrap_or_default();
        let need = shape
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .and_then(|n| n.checked_mul(d.itemsize));
        if need != Some(len as u64) {
            let text = format!(
                "a numpy array of dtype {descr} and shape {shape:?} needs {} bytes but its data holds {len}: numpy raises ValueError (buffer size does not match array size), so the file is not what it claims",
                need.map_or("more than 2^64".to_string(), |n| n.to_string())
            );
            self.note(Kind::Structure, Severity::Fail, None, || text);
            return;
        }
        let info = ArrayInfo {
            descr,
            shape,
            fortran,
            bytes: span,
            decoded: None,
        };
        self.numpy().arrays.push((id, info));
        if let Some(Object::Record(r)) = self.t().objects.get_mut(id) {
            r.state = Some(Value::Data(Rc::from("a numpy array")));
        }
    }

    /// BUILD on a record a profile made (an array, a dtype, joblib's wrapper); `false` when
    /// the record is not one of those.
    pub(super) fn build_profile(&mut self, id: usize, state: &Value) -> bool {
        let class = match self.t().objects.get(id) {
            Some(Object::Record(r)) => r.class.clone(),
            _ => return false,
        };
        let built =
            matches!(self.t().objects.get(id), Some(Object::Record(r)) if r.state.is_some());
        match &*class {
            NDARRAY if !built => self.build_array(id, state),
            DTYPE if !built => self.build_dtype(id, state),
            TREE if !built => {
                if !self.tree_state(state) {
                    let text = format!("a sklearn Tree's state is not the dict Tree.__getstate__ writes (max_depth, node_count, nodes and values arrays): outside {}", self.options.rules_name());
                    self.note(Kind::Structure, Severity::Lead, None, || text);
                } else if let Some(Object::Record(r)) = self.t().objects.get_mut(id) {
                    r.state = Some(state.clone());
                }
            }
            c if !built && BoosterKind::of(c).is_some() => {
                if let Some(kind) = BoosterKind::of(c) {
                    self.build_booster(id, kind, state);
                }
            }
            NDARRAY | DTYPE | TREE => {
                let text = format!(
                    "a second BUILD on a {class}: outside {}",
                    self.options.rules_name()
                );
                self.note(Kind::Structure, Severity::Lead, None, || text);
            }
            _ => return false,
        }
        true
    }

    /// `Tree.__setstate__`'s state: `{max_depth, node_count, nodes, values}`, ints and arrays.
    fn tree_state(&mut self, state: &Value) -> bool {
        let Value::Obj(s) = state else { return false };
        let t = self.t();
        let Some(Object::Dict(d)) = t.objects.get(*s) else {
            return false;
        };
        let is_array =
            |v: &Value| matches!(v, Value::Obj(a) if t.numpy.arrays.iter().any(|(id, _)| id == a));
        d.items.len() == 4
            && d.items.iter().all(|(k, v)| match k {
                Value::Str(k) => match &**k {
                    "max_depth" | "node_count" => matches!(v, Value::Int(_)),
                    "nodes" | "values" => is_array(v),
                    _ => false,
                },
                _ => false,
            })
    }

    fn build_array(&mut self, id: usize, state: &Value) {
        let gname = self.options.rules_name();
        let Value::Tuple(items, _) = state else {
            let text = format!(
                "BUILD sets {} as a numpy array's state: outside {gname}",
                describe(state)
            );
            self.note(Kind::Structure, Severity::Lead, None, || text);
            return;
        };
        let items: &[Value] = match &items[..] {
            [Value::Int(1), rest @ ..] if rest.len() == 4 => rest,
            rest if rest.len() == 4 => rest,
            _ => &[],
        };
        let parsed = match items {
            [shape, dtype, Value::Bool(fortran), raw] => Self::shape_of(shape)
                .zip(self.dtype_of(dtype))
                .map(|(s, d)| (s, d, *fortran, raw.clone())),
            _ => None,
        };
        let Some((shape, d, fortran, raw)) = parsed else {
            let text = format!("a numpy array's state is not the (1, shape, dtype, is_fortran, data) tuple array_reduce writes: outside {gname}");
            self.note(Kind::Structure, Severity::Lead, None, || text);
            return;
        };
        match (&raw, d.object) {
            (Value::Obj(list), true) => {
                let n = match self.t().objects.get(*list) {
                    Some(Object::List(l)) => Some(l.len() as u64),
                    _ => None,
                };
                let count = shape.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
                if n.is_none() || n != count {
                    let text = format!("a numpy object array of shape {shape:?} whose items are not a list of that many: numpy raises");
                    self.note(Kind::Structure, Severity::Fail, None, || text);
                } else if let Some(Object::Record(r)) = self.t().objects.get_mut(id) {
                    r.state = Some(Value::Data(Rc::from("a numpy object array")));
                }
            }
            (Value::Bytes(b), false) => {
                let span = self.t().numpy.byte_spans.get(&bytes_key(b)).cloned().ok_or_else(|| {
                    "its bytes come from _codecs.encode(text, 'latin1') (protocols 0 to 2): the pickle holds their text, decoded here as latin-1, not the bytes".to_string()
                });
                let decoded = span.is_err().then(|| b.clone());
                self.array(id, d, shape, fortran, b.len(), span);
                self.set_decoded(id, decoded);
            }
            (Value::Str(s), false) => {
                let len = s.chars().count();
                if s.chars().any(|c| u32::from(c) > 255) {
                    self.note(Kind::Structure, Severity::Fail, None, || {
                        "a numpy array's data is a str that is not latin-1: numpy raises".into()
                    });
                    return;
                }
                // Each char is one byte (checked above); at most one byte per char of text.
                let decoded: Rc<[u8]> = s.chars().map(|c| u32::from(c) as u8).collect();
                self.array(id, d, shape, fortran, len, Err("its bytes are a latin-1 str (a Python 2 pickle), decoded here: the pickle holds their text, not the bytes".into()));
                self.set_decoded(id, Some(decoded));
            }
            _ => {
                let text = format!("a numpy array's data is {}, not what array_reduce writes for dtype {}: outside {gname}", describe(&raw), d.descr.unwrap_or_default());
                self.note(Kind::Structure, Severity::Lead, None, || text);
            }
        }
    }

    fn build_dtype(&mut self, id: usize, state: &Value) {
        let gname = self.options.rules_name();
        let Some(mut info) = self.t().numpy.dtypes.get(&id).cloned() else {
            return;
        };
        let datetime = info.code.starts_with('M') || info.code.starts_with('m');
        let descr = match state {
            Value::Tuple(items, _) => self.dtype_state(&info, datetime, items),
            _ => None,
        };
        let Some(descr) = descr else {
            let text = format!("a numpy dtype {:?} whose state is not what arraydescr_reduce writes: outside {gname}", info.code);
            self.note(Kind::Structure, Severity::Lead, None, || text);
            return;
        };
        info.descr = Some(descr.clone());
        self.t().numpy.dtypes.insert(id, info);
        if let Some(Object::Record(r)) = self.t().objects.get_mut(id) {
            r.state = Some(Value::Data(Rc::from(descr)));
        }
    }

    /// `dtype.str` from a dtype's state, when the state is what numpy writes.
    fn dtype_state(&self, info: &DtypeInfo, datetime: bool, items: &[Value]) -> Option<String> {
        let (version, rest) = items.split_first()?;
        let (endian, subarray, names, fields, elsize, align, flags, meta) = match (version, rest) {
            (Value::Int(3), [e, s, n, f, el, al, fl]) => (e, s, n, f, el, al, fl, None),
            (Value::Int(4), [e, s, n, f, el, al, fl, m]) => (e, s, n, f, el, al, fl, Some(m)),
            _ => return None,
        };
        let Value::Str(endian) = endian else {
            return None;
        };
        if !matches!(&**endian, "<" | ">" | "|" | "=") {
            return None;
        }
        if !matches!(
            (elsize, align, flags),
            (Value::Int(_), Value::Int(_), Value::Int(_))
        ) {
            return None;
        }
        let dtype_obj = |v: &Value| self.dtype_of(v).is_some();
        match subarray {
            Value::None => {}
            Value::Tuple(sub, _) => match &sub[..] {
                [base, shape] if dtype_obj(base) && Self::shape_of(shape).is_some() => {}
                _ => return None,
            },
            _ => return None,
        }
        let objects = &self.typed.as_ref()?.objects;
        match (names, fields) {
            (Value::None, Value::None) => {}
            (Value::Tuple(n, _), Value::Obj(f)) => {
                if !n.iter().all(|v| matches!(v, Value::Str(_))) {
                    return None;
                }
                let Some(Object::Dict(d)) = objects.get(*f) else {
                    return None;
                };
                let ok = d.items.iter().all(|(k, v)| {
                    matches!(k, Value::Str(_))
                        && matches!(v, Value::Tuple(t, _) if matches!(&t[..],
                            [dt, Value::Int(_)] | [dt, Value::Int(_), _] if dtype_obj(dt)))
                });
                if !ok {
                    return None;
                }
            }
            _ => return None,
        }
        let unit = match meta {
            None if !datetime => String::new(),
            // Version 4: `(metadata, (unit, num, 1, 1))`, the metadata dict or None.
            Some(Value::Tuple(m, _)) if datetime => match &m[..] {
                [Value::None, Value::Tuple(dt, _)] => match &dt[..] {
                    [Value::Bytes(u), Value::Int(num), Value::Int(1), Value::Int(1)] => {
                        let u = std::str::from_utf8(u).ok()?;
                        if !u.bytes().all(|b| b.is_ascii_alphabetic()) || u.len() > 8 {
                            return None;
                        }
                        match (u, *num) {
                            ("generic", _) => String::new(),
                            (u, 1) => format!("[{u}]"),
                            (u, n) if n > 1 => format!("[{n}{u}]"),
                            _ => return None,
                        }
                    }
                    _ => return None,
                },
                _ => return None,
            },
            _ => return None,
        };
        let _ = info;
        Some(format!("{endian}{}{unit}", info.code))
    }
}
