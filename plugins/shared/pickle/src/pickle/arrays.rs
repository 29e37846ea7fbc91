//! The NumPy arrays a run models (their dtypes, shapes and where their bytes lie, by object
//! id) and their names: each array's path from the pickle's value, by dict
//! keys, list and tuple indices, and attribute names (a record's BUILD state dict), joined by
//! dots (`steps.1.1.coef_`: a `Pipeline`'s `steps` is a list of `(name, estimator)` tuples).
//! Each object is visited once (the memo shares objects), so an array reached twice is named
//! by its first path; the walk is bounded by the objects the run built.

use super::profile::PickledArray;
use super::values::{Object, Value};
use std::collections::HashMap;
use std::ops::Range;

/// A dtype as its REDUCE and BUILD made it.
#[derive(Debug, Clone)]
pub struct DtypeInfo {
    /// The REDUCE's code (`f8`, `U3`, `M8`).
    pub code: String,
    /// `dtype.str`, once BUILD gave the endian.
    pub descr: Option<String>,
    /// Bytes an item takes.
    pub itemsize: u64,
    /// Whether items are Python objects.
    pub object: bool,
}

/// An array the model built, before its path is known.
#[derive(Debug, Clone)]
pub struct ArrayInfo {
    pub descr: String,
    pub shape: Vec<u64>,
    pub fortran: bool,
    /// Where its bytes lie in the data, or why they are not located.
    pub bytes: Result<Range<usize>, String>,
    /// Its bytes as NumPy holds them, when they do not lie in the data as they are: below
    /// protocol 3, `array_reduce`'s data is `bytes` pickled as `_codecs.encode(text,
    /// 'latin1')` (or, from Python 2, a latin-1 `str`), which the model decodes.
    pub decoded: Option<std::rc::Rc<[u8]>>,
}

/// What the model keeps of NumPy values, by object id, and where bytes values lie.
#[derive(Debug, Default)]
pub struct NumpyState {
    pub dtypes: HashMap<usize, DtypeInfo>,
    pub arrays: Vec<(usize, ArrayInfo)>,
    /// Where each bytes value read from the pickle lies, by its allocation.
    pub byte_spans: HashMap<usize, Range<usize>>,
    /// The arrays of the nested pickles of joblib's object arrays, by the array's object id.
    pub nested: Vec<(usize, Vec<crate::pickle::PickledArray>)>,
}

/// Deepest path followed (deeper arrays are named by the prefix, with `…`).
const MAX_DEPTH: usize = 64;

/// The arrays reachable from `result`, with located bytes, and those whose bytes are not
/// located, each with why.
pub fn name_arrays(
    result: &Value,
    objects: &[Object],
    numpy: &NumpyState,
) -> (
    Vec<PickledArray>,
    Vec<(String, String)>,
    Vec<crate::pickle::DecodedArray>,
) {
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    if numpy.arrays.is_empty() && numpy.nested.is_empty() {
        return out;
    }
    let arrays: HashMap<usize, &ArrayInfo> = numpy.arrays.iter().map(|(i, a)| (*i, a)).collect();
    let mut seen = vec![false; objects.len()];
    // Depth-first, with an explicit stack: (value, path).
    let mut stack: Vec<(Value, String, usize)> = vec![(result.clone(), String::new(), 0)];
    let join = |p: &str, k: &str| {
        if p.is_empty() {
            k.to_string()
        } else {
            format!("{p}.{k}")
        }
    };
    while let Some((v, path, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        let mut children: Vec<(Value, String)> = Vec::new();
        match &v {
            Value::Tuple(items, _) => {
                for (i, item) in items.iter().enumerate() {
                    children.push((item.clone(), join(&path, &i.to_string())));
                }
            }
            Value::Obj(id) => {
                let Some(slot) = seen.get_mut(*id) else {
                    continue;
                };
                if *slot {
                    continue;
                }
                *slot = true;
                for (_, inner) in numpy.nested.iter().filter(|(n, _)| n == id) {
                    for a in inner {
                        let mut a = a.clone();
                        a.path = join(&path, &a.path);
                        out.0.push(a);
                    }
                }
                if let Some(a) = arrays.get(id) {
                    match &a.bytes {
                        Ok(r) => out.0.push(PickledArray {
                            path: path.clone(),
                            descr: a.descr.clone(),
                            shape: a.shape.clone(),
                            fortran_order: a.fortran,
                            bytes: r.clone(),
                        }),
                        Err(why) => match &a.decoded {
                            Some(bytes) => out.2.push(crate::pickle::DecodedArray {
                                path: path.clone(),
                                descr: a.descr.clone(),
                                shape: a.shape.clone(),
                                fortran_order: a.fortran,
                                bytes: bytes.clone(),
                                why: why.clone(),
                            }),
                            None => out.1.push((path.clone(), why.clone())),
                        },
                    }
                    continue;
                }
                match objects.get(*id) {
                    Some(Object::List(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            children.push((item.clone(), join(&path, &i.to_string())));
                        }
                    }
                    Some(Object::Dict(d)) => {
                        for (k, item) in &d.items {
                            let key = match k {
                                Value::Str(s) => s.to_string(),
                                Value::Int(i) => i.to_string(),
                                Value::Bool(b) => b.to_string(),
                                _ => "?".to_string(),
                            };
                            children.push((item.clone(), join(&path, &key)));
                        }
                    }
                    Some(Object::Record(r)) => {
                        if let Some(state) = &r.state {
                            children.push((state.clone(), path.clone()));
                        }
                    }
                    None => {}
                }
            }
            _ => {}
        }
        // Pushed in reverse so that the walk meets them in order.
        for (c, p) in children.into_iter().rev() {
            stack.push((c, p, depth + 1));
        }
    }
    out
}
