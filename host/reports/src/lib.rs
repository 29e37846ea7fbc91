//! socair's reports: what the host makes of what the readers read. Over
//! [`socair_reading`]'s rooms (re-exported here as `base` and `read`, so the paths read as
//! they do everywhere in the host), in order:
//!
//! * [`fingerprint`]: tensor hashes, manifests, the Q/K unpermute, comparisons.
//! * [`report`]: the scan and its `socair.report/v1` document, SARIF, the ML-BOM, batches.
//!
//! The Python extension links this crate (and what it uses) and nothing above it.

pub use socair_reading::{base, read, VERSION};

pub mod fingerprint;
pub mod report;
