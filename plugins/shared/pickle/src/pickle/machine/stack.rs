//! The stack and its marks as CPython's C unpickler keeps them (`Pdata`, `marker`, the
//! fence): one discipline that the typed model and the abstract values share, so it stands
//! apart from both.

use crate::pickle::reader::Raise;

/// The stack and its marks, with the C unpickler's discipline (`Pdata`, `marker`, the fence).
#[derive(Debug, Clone)]
pub struct Stack<T> {
    pub items: Vec<T>,
    pub marks: Vec<u32>,
}

impl<T> Default for Stack<T> {
    fn default() -> Self {
        Stack {
            items: Vec::new(),
            marks: Vec::new(),
        }
    }
}

pub fn underflow() -> Raise {
    Raise::Invalid("unpickling stack underflow".into())
}

impl<T: Clone> Stack<T> {
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// The position of the top mark, below which nothing may be popped.
    pub fn fence(&self) -> usize {
        self.marks.last().map_or(0, |&m| m as usize)
    }
    pub fn push(&mut self, v: T) {
        self.items.push(v);
    }
    /// `PDATA_POP`.
    pub fn pop(&mut self) -> Result<T, Raise> {
        if self.items.len() <= self.fence() {
            return Err(underflow());
        }
        self.items.pop().ok_or_else(underflow)
    }
    /// The top value, which must lie above the fence.
    pub fn top(&self) -> Result<&T, Raise> {
        if self.items.len() <= self.fence() {
            return Err(underflow());
        }
        self.items.last().ok_or_else(underflow)
    }
    pub fn mark(&mut self) {
        // The stack never holds more values than the pickle has bytes (< 2^31).
        self.marks.push(self.items.len() as u32);
    }
    /// `marker()`: pops the top mark and returns its position.
    pub fn marker(&mut self) -> Result<usize, Raise> {
        self.marks
            .pop()
            .map(|m| m as usize)
            .ok_or_else(|| Raise::Invalid("could not find MARK".into()))
    }
    /// `load_counted_tuple`: the top `n` values.
    pub fn pop_n(&mut self, n: usize) -> Result<Vec<T>, Raise> {
        if self.items.len() < n || self.items.len() - n < self.fence() {
            return Err(underflow());
        }
        Ok(self.items.split_off(self.items.len() - n))
    }
    /// Drops the top `n` values, as [`Stack::pop_n`] checks them.
    pub fn drop_n(&mut self, n: usize) -> Result<(), Raise> {
        if self.items.len() < n || self.items.len() - n < self.fence() {
            return Err(underflow());
        }
        self.items.truncate(self.items.len() - n);
        Ok(())
    }

    /// Everything from `at` up (after [`Stack::marker`] returned `at`).
    pub fn split_off(&mut self, at: usize) -> Vec<T> {
        self.items.split_off(at.min(self.items.len()))
    }
    pub fn truncate(&mut self, at: usize) {
        self.items.truncate(at);
    }
    /// The C unpickler's target check (`do_append`, `do_setitems`, `load_additems`): the
    /// container at `x - 1` must lie above the fence.
    pub fn check_target(&self, x: isize) -> Result<(), Raise> {
        if x > self.items.len() as isize || x <= self.fence() as isize {
            return Err(underflow());
        }
        Ok(())
    }
    /// `load_pop`: a mark at the top of the stack is popped instead of a value.
    pub fn pop_op(&mut self) -> Result<(), Raise> {
        if self
            .marks
            .last()
            .is_some_and(|&m| m as usize == self.items.len())
        {
            self.marks.pop();
            return Ok(());
        }
        self.pop().map(|_| ())
    }
    /// `load_dup`.
    pub fn dup(&mut self) -> Result<(), Raise> {
        let top = self.top()?.clone();
        self.items.push(top);
        Ok(())
    }
}
