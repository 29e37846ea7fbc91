//! Tensor fingerprints and comparisons: the `float32-le-bits/v1` values encoding and each
//! tensor's hashes ([`hashing`]), the `socair.tensors/v1` manifest ([`manifest`]), llama.cpp's
//! Q/K permutation undone ([`unpermute`]), and the comparison of two models ([`diff`]: with
//! aliases ([`alias`]), numbers ([`numeric`]), in words ([`diff_text`]) and as a page
//! ([`diff_html`])). May use `base` and `read`.

pub mod alias;
pub mod diff;
pub mod diff_html;
pub mod diff_text;
pub mod hashing;
pub mod manifest;
pub mod numeric;
pub mod quantized;
pub mod unpermute;
