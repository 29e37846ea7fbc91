//! socair's signatures, which need no store: keys and DSSE envelopes over in-toto Statements
//! ([`signing`]), signed scans ([`attest`]), signed tensor manifests ([`reference`]) and feeds of them ([`feed`]), OpenSSF model signing bundles ([`oms`]) and what a
//! verification found ([`verification`]). Over
//! [`socair_reading`] and [`socair_reports`], re-exported here under their usual names.

pub use socair_reading::{base, read, VERSION};
pub use socair_reports::{fingerprint, report};

pub mod attest;
pub mod feed;
pub mod oms;
pub mod reference;
pub mod signing;
pub mod verification;
