//! This crate's integration tests in one binary (a module per file).

mod claims;
mod fuzz_regressions;
mod reference_files;
