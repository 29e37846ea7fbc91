//! joblib's arrays, read as `joblib.load` reads a `joblib.dump` file (joblib 1.6.0,
//! `joblib/numpy_pickle.py`): `NumpyUnpickler` subclasses Python's `pickle._Unpickler`, and
//! its `load_build`, after each BUILD whose result is a `NumpyArrayWrapper`, pops the wrapper
//! and pushes `NumpyArrayWrapper.read_array`'s array, read from the file right after the
//! BUILD: when the wrapper's state has `numpy_array_alignment_bytes`, one padding-length byte
//! and that many padding bytes; then, for an object dtype, a nested `pickle.load` of the file
//! (`write_array` wrote `pickle.dump(array, file_handle, protocol=5)`; scanned here as a
//! pickle of its own, its arrays named under the wrapper's path), else `product(shape) ×
//! itemsize` raw bytes in the wrapper's `order`. The outer pickle goes on after them.
//!
//! The array is read through `unpickler.file_handle`, not through the unpickler's frame:
//! pure Python's `_Unframer` has read the current frame whole, so the array comes from after
//! the frame (joblib's pickler commits the frame before it writes the array, so the frame ends
//! where the array begins). A frame that runs on past the BUILD would make Python run the rest
//! of the frame after the array: the machine does not model that reading, so it stops there
//! with a LEAD naming the offset, and never PASSes it.
//!
//! `numpy_pickle_compat.NDArrayWrapper` / `ZNDArrayWrapper` (joblib < 0.10) read their array
//! from a separate file (`NDArrayWrapper.read`: `np.load(os.path.join(dirname, filename))`):
//! a LEAD naming that file.

use super::numpy::{NDARRAY, WRAPPER};
use crate::pickle::arrays::{ArrayInfo, DtypeInfo};
use crate::pickle::findings::Kind;
use crate::pickle::machine::{Ended, Run};
use crate::pickle::reader::Raise;
use crate::pickle::values::{Object, Severity, Value};
use std::rc::Rc;

/// A wrapper's state, as `NumpyArrayWrapper.__init__` sets it.
struct Wrapper {
    shape: Vec<u64>,
    fortran: bool,
    dtype: DtypeInfo,
    aligned: bool,
}

impl Run<'_, '_> {
    /// After BUILD on `target`: when it is joblib's wrapper, replaces it on the stack with the
    /// array read after it.
    pub(super) fn joblib_after_build(&mut self, target: &Value) -> Result<(), Raise> {
        let Value::Obj(id) = target else {
            return Ok(());
        };
        let (class, state) = match self.t().objects.get(*id) {
            Some(Object::Record(r)) => (r.class.clone(), r.state.clone()),
            _ => return Ok(()),
        };
        if let Some(which) = class.strip_prefix("joblib.numpy_pickle_compat.") {
            let file = state
                .as_ref()
                .and_then(|s| self.state_item(s, "filename"))
                .and_then(|v| match v {
                    Value::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .unwrap_or_else(|| "a file its state does not name".into());
            let text = format!("a joblib {which} (joblib < 0.10): joblib.load reads this array from the separate file {file:?} beside the pickle (np.load), which is not scanned here");
            self.note(Kind::Structure, Severity::Lead, None, || text);
            self.t().stack.pop()?;
            self.push(Value::Opaque(Rc::from("an array in a separate file")));
            return Ok(());
        }
        if &*class != WRAPPER {
            return Ok(());
        }
        let Some(w) = state.as_ref().and_then(|s| self.wrapper(s)) else {
            self.halt = Some("a joblib NumpyArrayWrapper whose state is not what NumpyArrayWrapper.__init__ sets (subclass numpy.ndarray, shape, order 'C' or 'F', dtype, allow_mmap): where its array lies is not known, so the rest of the file is not read".into());
            return Ok(());
        };
        self.t().stack.pop()?;
        if let Err(frame_end) = self.reader.raw(0)? {
            self.halt = Some(format!("the frame this joblib array's wrapper lies in runs on to byte {frame_end}, past the array's start at byte {}: Python's unpickler reads the array after the frame and then runs the rest of the frame, which is not modeled (joblib's own pickler ends the frame here)", self.reader.pos()));
            return Ok(());
        }
        // `read_array`: an object array's nested pickle follows at once; only raw bytes
        // are aligned.
        if w.dtype.object {
            return self.nested_object_array(w);
        }
        if w.aligned {
            let pad = self.raw_bytes(1)?;
            let n = usize::from(self.data.get(pad.start).copied().unwrap_or(0));
            self.raw_bytes(n)?;
        }
        let count = w.shape.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
        let n = count
            .and_then(|c| c.checked_mul(w.dtype.itemsize))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                Raise::Invalid(format!(
                    "a joblib array of shape {:?} has more bytes than memory holds",
                    w.shape
                ))
            })?;
        let at = self.raw_bytes(n)?;
        let (rid, v) = self.new_record_pub(NDARRAY);
        self.t().numpy.arrays.push((
            rid,
            ArrayInfo {
                descr: w.dtype.descr.clone().unwrap_or_default(),
                shape: w.shape,
                fortran: w.fortran,
                bytes: Ok(at),
                decoded: None,
            },
        ));
        if let Some(Object::Record(r)) = self.t().objects.get_mut(rid) {
            r.state = Some(Value::Data(Rc::from("a numpy array")));
        }
        self.push(v);
        Ok(())
    }

    /// `file_handle.read(n)` after the frame: `n` bytes, or Python's `_read_bytes` raises.
    fn raw_bytes(&mut self, n: usize) -> Result<std::ops::Range<usize>, Raise> {
        match self.reader.raw(n)? {
            Ok(r) => Ok(r),
            Err(_) => Err(Raise::Invalid("a joblib array inside a frame".into())),
        }
    }

    /// An object array: the nested pickle `write_array` wrote, run as its own pickle from
    /// here; the outer pickle goes on where it stops.
    fn nested_object_array(&mut self, w: Wrapper) -> Result<(), Raise> {
        let start = self.reader.pos();
        let options = crate::pickle::values::Options {
            joblib: false,
            ..self.options.clone()
        };
        let run = Run::new(self.data, start, &options, self.findings, &[], false).go();
        let Ended::Stop(end) = run.ended else {
            return Err(Raise::Invalid(
                "the nested pickle of a joblib object array does not reach its STOP".into(),
            ));
        };
        let arrays = run.outcome.arrays;
        self.reader.jump(end);
        let (rid, v) = self.new_record_pub(NDARRAY);
        if let Some(Object::Record(r)) = self.t().objects.get_mut(rid) {
            r.state = Some(Value::Data(Rc::from(format!(
                "a numpy object array of shape {:?}",
                w.shape
            ))));
        }
        self.t().numpy.nested.push((rid, arrays));
        self.push(v);
        Ok(())
    }

    fn state_item(&self, state: &Value, key: &str) -> Option<Value> {
        let Value::Obj(s) = state else { return None };
        match self.typed.as_ref()?.objects.get(*s)? {
            Object::Dict(d) => d
                .items
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if &**s == key))
                .map(|(_, v)| v.clone()),
            _ => None,
        }
    }

    fn wrapper(&self, state: &Value) -> Option<Wrapper> {
        let Value::Obj(s) = state else { return None };
        let Object::Dict(d) = self.typed.as_ref()?.objects.get(*s)? else {
            return None;
        };
        const KEYS: &[&str] = &[
            "subclass",
            "shape",
            "order",
            "dtype",
            "allow_mmap",
            "numpy_array_alignment_bytes",
        ];
        if !d
            .items
            .iter()
            .all(|(k, _)| matches!(k, Value::Str(s) if KEYS.contains(&&**s)))
        {
            return None;
        }
        let ndarray = matches!(self.state_item(state, "subclass")?, Value::Global(g)
            if g.class == crate::globals::Class::Known(crate::globals::Known::Profile(crate::globals::profiles::ProfileGlobal::NpNdarray)));
        let shape = Self::shape_pub(&self.state_item(state, "shape")?)?;
        let fortran = match self.state_item(state, "order")? {
            Value::Str(o) if &*o == "C" => false,
            Value::Str(o) if &*o == "F" => true,
            _ => return None,
        };
        let dtype = self.dtype_pub(&self.state_item(state, "dtype")?)?;
        let aligned = match self.state_item(state, "numpy_array_alignment_bytes") {
            None | Some(Value::None) => false,
            Some(Value::Int(_)) => true,
            Some(_) => return None,
        };
        if !ndarray
            || !matches!(
                self.state_item(state, "allow_mmap"),
                None | Some(Value::Bool(_))
            )
        {
            return None;
        }
        Some(Wrapper {
            shape,
            fortran,
            dtype,
            aligned,
        })
    }
}
