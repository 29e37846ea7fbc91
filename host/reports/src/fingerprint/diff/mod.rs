//! `socair tensors diff`: compares two models tensor by tensor (seed `tensor-fingerprints.txt`,
//! `docs/diff.md`).
//!
//! Each tensor is used once; names a safetensors file records as aliases of one of its
//! tensors (`__metadata__`, what `socair convert` writes for tied weights) take part as
//! tensors of their own, holding the named tensor's values.
//!
//! 1. By name (in the same file when there is one): identical (same dtype, shape and bytes),
//!    same values (same shape, equal values in another float dtype), lower precision (one
//!    side is the other rounded to its narrower float type), differs (another shape or other
//!    contents, with numbers when both sides are models), or not comparable (no encoding in
//!    common, such as a quantized type against a float).
//! 2. By content, for what is left: identical bytes, equal values in another float dtype, or
//!    equal values once llama.cpp's Q/K row permutation is undone (either side may be the
//!    GGUF) pair two tensors under different names, marked renamed.
//! 3. When both sides are models, by values for what is still left: candidates with the same
//!    order-free statistics (within rounding) are compared in full, as they are, transposed
//!    (2-D), or unpermuted; equal values or a rounded copy pair them. Then a quantized tensor
//!    and a float one of the same role (same shape, and the nearest dequantized statistics or
//!    the only candidate in the same layer) pair as not comparable.
//!
//! What is left is only in the artifact or only in the reference.
//!
//! The parts, each in its own file: the comparison document (`document`), the two sides as
//! the passes see them (`sides`), the passes by name and by content (`compare`), by values
//! (`values`) and by role (`roles`), the document assembled from the pairs (`assemble`),
//! and the sides read from paths (`load`). This file only names them.

mod assemble;
mod compare;
mod document;
mod load;
mod quantized;
mod roles;
mod sides;
#[cfg(test)]
mod tests;
mod values;

pub use compare::{compare, diff};
pub use document::{
    Accounting, Comparison, MatchedBy, Named, Outcome, Pair, Side, Summary, Transform, SCHEMA,
};
pub use load::{compare_paths, read_manifest, tensor_formats, Loaded, ManifestReader};
pub use roles::layer_of;
pub use sides::{ModelBytes, SideInput};
