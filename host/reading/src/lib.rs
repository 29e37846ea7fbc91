//! socair's reading layer, the lowest of the host's crates: what every other crate reads
//! through. Each room may use the rooms listed before it, never one after it
//! (`tests/tests/structure.rs` checks this and that no module imports another in a circle):
//!
//! * [`base`]: digests, documents, the rule-set registry, the hashing pipe, progress counters,
//!   object storage locations and clients.
//! * [`read`]: input files, plugins, model directories, artifacts, tensor layouts.
//!
//! Nothing here prints, parses arguments, signs or keeps a store.

pub mod base;
pub mod read;

/// The host's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
