//! This crate's integration tests in one binary (a module per file), so that `cargo test`
//! links it once instead of once per file.

mod fixtures;
mod fuzz_regressions;
