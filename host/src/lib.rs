//! The `socair` host: the library behind the thin `socair` binary, in rooms by role. Each room
//! may use the rooms listed before it, never one after it (`tests/tests/structure.rs` checks
//! this and that no file imports another in a circle):
//!
//! * [`base`]: digests, documents, the rule-set registry, the hashing pipe, progress counters.
//! * [`read`]: input files, plugins, model directories, artifacts, tensor layouts.
//! * [`fingerprint`]: tensor hashes, manifests, the Q/K unpermute, comparisons.
//! * [`report`]: the scan and its `socair.report/v1` document.
//! * [`convert`]: conversion rules, planning, writing, verification, the second path.
//! * [`airlock`]: keys and envelopes, policy, pins, the log, the store, the gate, derivation.
//! * [`cli`]: arguments, dispatch, output, progress bars and exit codes; the only room that
//!   prints.

pub mod airlock;
pub mod base;
pub mod cli;
pub mod convert;
pub mod fingerprint;
pub mod read;
pub mod report;

#[doc(hidden)]
pub mod fuzzing;

/// The host's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
