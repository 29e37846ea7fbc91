//! The typed model's state while a pickle stays inside the grammar: the stack and memo of
//! typed values, the objects, storages and tensors built, and what they cost. The opcodes that
//! build them are in [`crate::pickle::typed`]; this is only the state they work on.

use super::stack::Stack;
use crate::globals::Dtype;
use crate::pickle::values::{Object, StorageRef, TensorModel, Value};
use std::collections::HashMap;
use std::mem::size_of;
use std::rc::Rc;

pub(crate) const VALUE: usize = size_of::<Value>();
/// What a hash-map entry costs beyond its key and value.
pub(crate) const ENTRY: usize = 24;

/// The memo of typed values: indices in the order pickle writes them (0, 1, 2, …) densely,
/// any others in a map.
#[derive(Debug, Default)]
pub struct Memo {
    pub(super) dense: Vec<Value>,
    pub(super) sparse: HashMap<u64, Value>,
}

impl Memo {
    /// The C unpickler's `memo_len`: distinct indices stored.
    pub fn len(&self) -> u64 {
        (self.dense.len() + self.sparse.len()) as u64
    }
    pub fn get(&self, idx: u64) -> Option<&Value> {
        usize::try_from(idx)
            .ok()
            .and_then(|i| self.dense.get(i))
            .or_else(|| self.sparse.get(&idx))
    }
    /// Stores `v`; returns the bytes it newly takes.
    pub fn put(&mut self, idx: u64, v: Value) -> usize {
        if let Some(slot) = usize::try_from(idx)
            .ok()
            .and_then(|i| self.dense.get_mut(i))
        {
            *slot = v;
            return 0;
        }
        if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
            return 0;
        }
        if idx == self.dense.len() as u64 {
            self.dense.push(v);
            return VALUE;
        }
        self.sparse.insert(idx, v);
        VALUE + 2 * ENTRY
    }
    /// Every entry, by index.
    pub fn entries(&self) -> impl Iterator<Item = (u64, &Value)> {
        self.dense
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64, v))
            .chain(self.sparse.iter().map(|(&i, v)| (i, v)))
    }
}

/// The typed model's state.
#[derive(Debug, Default)]
pub struct Typed {
    pub stack: Stack<Value>,
    pub memo: Memo,
    pub objects: Vec<Object>,
    pub storages: Vec<Rc<StorageRef>>,
    pub tensors: Vec<Rc<TensorModel>>,
    pub(crate) storage_keys: HashMap<String, Rc<StorageRef>>,
    pub(crate) view_keys: HashMap<String, Rc<StorageRef>>,
    pub(crate) untyped_dtypes: HashMap<String, &'static Dtype>,
    /// NumPy's dtypes and arrays, and where bytes values lie (profiles only).
    pub(crate) numpy: crate::pickle::arrays::NumpyState,
    /// The models pickled Boosters hold, each said in a phrase (`socair-sklearn/1`).
    pub(crate) models: Vec<String>,
    /// Bytes the model's allocations have taken, monotonic (an over-estimate); the stack is
    /// counted apart, by its length ([`Typed::footprint`]).
    pub cost: usize,
}

impl Typed {
    /// What the model takes now, in bytes.
    pub fn footprint(&self) -> usize {
        self.cost
            .saturating_add(self.stack.items.len() * VALUE)
            .saturating_add(self.stack.marks.len() * 4)
    }
}
