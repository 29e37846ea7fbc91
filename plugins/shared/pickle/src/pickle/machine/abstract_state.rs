//! The abstract values the machine goes on with once a pickle leaves the grammar: the ids
//! standing for what the C unpickler's stack and memo hold (as far as naming globals needs),
//! the memo of ids, and the state that holds the strings and global objects ids point to.
//! Apart from the run, which only builds and reads them.

use super::stack::Stack;
use crate::globals::{Class, MAX_NAME_BYTES};
use std::collections::HashMap;
use std::rc::Rc;

/// An abstract value: what the C unpickler's stack or memo holds, as far as naming globals
/// needs: whether it is a `str`, and which.
pub type Id = u32;
/// Could be anything, a `str` included (the result of a call, a global object).
pub const UNKNOWN: Id = 0;
/// Certainly not a `str`.
pub const NOT_STR: Id = 1;
/// A `str` that cannot name anything importable: longer than [`MAX_NAME_BYTES`], or holding
/// lone surrogates.
pub const UNNAMEABLE: Id = 2;
/// `STR_AT + offset`: the `str` the string opcode at that offset pushed (read contiguously,
/// re-decoded from there when it is needed).
pub const STR_AT: Id = 3;
/// Offsets below this are kept in [`STR_AT`] ids.
pub(super) const MAX_STR_AT: usize = (GLOBAL - STR_AT) as usize;
/// `GLOBAL | index`: a global object, judged, in [`Abstract::globals`].
pub const GLOBAL: Id = 1 << 30;
/// `OWNED | index`: a `str` kept in [`Abstract::owned`] (from the typed model, or read
/// across a frame's end).
pub const OWNED: Id = 1 << 31;
/// Most distinct globals kept as abstract values; past it a global is [`UNKNOWN`] and calls
/// of it are calls of something only running the pickle would reveal.
pub const MAX_ABSTRACT_GLOBALS: usize = 4096;

/// A global object as an abstract value: how it shows in a finding, what it is.
#[derive(Debug, Clone)]
pub struct AbsGlobal {
    /// `module.name` as pickled (quoted for findings).
    pub shown: Rc<str>,
    pub class: Class,
    pub reviewed: bool,
}

/// Most sparse memo indices kept abstractly; past it the memo is no longer exact and every
/// fetch is [`UNKNOWN`].
pub const MAX_SPARSE_MEMO: usize = 1 << 20;

/// The memo as abstract values: indices set by MEMOIZE (and PUT in order) densely, others
/// sparsely; `memo_len` counts distinct indices, as the C unpickler's does.
#[derive(Debug, Default)]
pub struct AbsMemo {
    dense: Vec<Id>,
    sparse: HashMap<u64, Id>,
    /// Past [`MAX_SPARSE_MEMO`]: entries were dropped, so fetches say [`UNKNOWN`].
    inexact: bool,
}

impl AbsMemo {
    pub fn memo_len(&self) -> u64 {
        (self.dense.len() + self.sparse.len()) as u64
    }
    /// `None` where the C unpickler raises (never stored).
    pub fn get(&self, idx: u64) -> Option<Id> {
        if self.inexact {
            return Some(UNKNOWN);
        }
        if let Ok(i) = usize::try_from(idx) {
            if let Some(&v) = self.dense.get(i) {
                return Some(v);
            }
        }
        self.sparse.get(&idx).copied()
    }
    /// Stores `v` at `idx`; `false` when the entry had to be dropped.
    pub fn put(&mut self, idx: u64, v: Id) -> bool {
        if let Ok(i) = usize::try_from(idx) {
            if i < self.dense.len() {
                self.dense[i] = v;
                return true;
            }
        }
        if let Some(slot) = self.sparse.get_mut(&idx) {
            *slot = v;
            return true;
        }
        if idx == self.dense.len() as u64 {
            self.dense.push(v);
            return true;
        }
        if self.sparse.len() >= MAX_SPARSE_MEMO {
            self.inexact = true;
            return false;
        }
        self.sparse.insert(idx, v);
        true
    }
}

/// The machine's state once the pickle has left the grammar.
#[derive(Debug, Default)]
pub struct Abstract {
    pub stack: Stack<Id>,
    pub memo: AbsMemo,
    /// Strings kept whole: those of the typed model, and those read across a frame's end.
    pub owned: Vec<Rc<str>>,
    owned_index: HashMap<Rc<str>, Id>,
    /// Global objects on the stack or in the memo.
    pub globals: Vec<AbsGlobal>,
    global_index: HashMap<(Rc<str>, bool), Id>,
}

impl Abstract {
    /// The id of a global object.
    pub fn global(&mut self, g: AbsGlobal) -> Id {
        let key = (g.shown.clone(), matches!(g.class, Class::Dangerous(_)));
        if let Some(&id) = self.global_index.get(&key) {
            return id;
        }
        if self.globals.len() >= MAX_ABSTRACT_GLOBALS {
            return UNKNOWN;
        }
        let id = GLOBAL | self.globals.len() as Id;
        self.globals.push(g);
        self.global_index.insert(key, id);
        id
    }

    /// The id of `s` kept whole.
    pub fn own(&mut self, s: Rc<str>) -> Id {
        if s.len() > MAX_NAME_BYTES {
            return UNNAMEABLE;
        }
        if let Some(&id) = self.owned_index.get(&s) {
            return id;
        }
        let id = OWNED | self.owned.len() as Id;
        if id == Id::MAX {
            return UNNAMEABLE;
        }
        self.owned.push(s.clone());
        self.owned_index.insert(s, id);
        id
    }
}
