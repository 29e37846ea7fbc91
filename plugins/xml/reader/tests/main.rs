//! This crate's integration tests in one binary (a module per file), so that `cargo test`
//! links it once instead of once per file.

mod fuzz_regressions;
mod reference_files;
