//! One function per command, in files by group: [`info`] (completions, the plugin listing),
//! [`scan`] (scan, bom), [`tensors`] (fingerprint, diff), [`convert`], [`signing`] (keygen,
//! attest, verify; sign is `cli::oms::sign`), [`serve`] and [`store`] (the airlock commands'
//! own table, and those of them that load plugins; the rest are in `cli::airlock`). Each takes the
//! command line's shared flags as a [`context::Context`] where it needs them and its own
//! arguments, and returns the exit code; `cli::dispatch` maps the parsed command to its
//! function.

pub mod context;
pub mod convert;
pub mod info;
pub mod scan;
pub mod serve;
pub mod signing;
pub mod store;
pub mod tensors;
