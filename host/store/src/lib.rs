//! socair's store and what guards it ([`airlock`]): the trust policy and its pins, the chained
//! activity log, staging and promotion on a disk or on object storage, the gate, conversions
//! with a signed derivation record, and verification. The crates below are re-exported under
//! their usual names, and the signing crate's modules inside [`airlock`].

pub use socair_convert::convert;
pub use socair_reading::{base, read, VERSION};
pub use socair_reports::{fingerprint, report};

pub mod airlock;
