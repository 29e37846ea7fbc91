//! Tensor fingerprints and comparisons: the `float32-le-bits/v1` values encoding and each
//! tensor's hashes ([`hashing`]), the `socair.tensors/v1` manifest ([`manifest`]), llama.cpp's
//! Q/K permutation undone ([`unpermute`]), and the comparison of two models ([`diff`]). May
//! use `base` and `read`.

pub mod diff;
pub mod hashing;
pub mod manifest;
pub mod unpermute;
