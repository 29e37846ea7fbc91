//! This crate's integration tests in one binary (a module per file), so that `cargo test`
//! links it once instead of once per file.

mod bounds;
mod compat_pickle;
mod container_bounds;
mod containers;
mod differential;
mod fuzz_regressions;
