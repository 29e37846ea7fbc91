//! socair's conversion to safetensors ([`convert`]): versioned rules, planning, writing,
//! verification and the second path. Over [`socair_reading`] and [`socair_reports`], whose
//! rooms are re-exported here under their usual names.

pub use socair_reading::{base, read, VERSION};
pub use socair_reports::{fingerprint, report};

pub mod convert;
