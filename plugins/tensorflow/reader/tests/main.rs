//! This crate's integration tests in one binary (a module per file), so that `cargo test`
//! links it once instead of once per file.

mod bounds;
mod claims;
mod common;
mod fuzz_regressions;
mod indirect;
mod metagraph;
mod reference_files;
mod verdicts;
