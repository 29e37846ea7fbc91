//! One function per command, in files by group: [`info`] (completions, the plugin listing),
//! [`scan`] (scan, bom), [`tensors`] (fingerprint, diff), [`convert`], [`signing`] (keygen,
//! sign, attest, verify) and [`store`] (the airlock commands that load plugins). Each takes the
//! command line's shared flags as a [`context::Context`] and its own arguments, and returns the
//! exit code; `cli::dispatch` maps the parsed command to its function.

pub mod context;
pub mod convert;
pub mod info;
pub mod scan;
pub mod signing;
pub mod store;
pub mod tensors;
