//! The integration tests, one binary (a module per file).

mod formats;
mod fuzz_regressions;
mod gguf_py;
