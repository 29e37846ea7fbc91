//! socair plugin for NumPy arrays and the archives that carry them.
pub mod inflate;
pub mod literal;
pub mod npy;
pub mod span;
pub mod zip;
