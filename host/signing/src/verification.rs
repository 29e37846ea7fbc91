//! What `socair verify` returns: a verified signature with what the other checks found, or
//! why verification could not start. The OpenSSF bundle check ([`crate::oms`]) and the store's
//! checks (the store crate's `airlock::verify`) return the same.

use crate::report::document::Row;
use crate::signing::Statement;

/// A verified signature and what the other checks found.
pub struct Verification {
    /// The id of the key whose signature verified.
    pub keyid: String,
    /// The payload exactly as signed.
    pub payload: Vec<u8>,
    /// The statement, when the payload is one.
    pub statement: Option<Statement>,
    /// A scan attestation's signed rows.
    pub rows: Vec<Row>,
    /// What was checked and held, in words, in order.
    pub held: Vec<String>,
    /// Every condition that does not hold, the first one checked first. Empty: trust holds.
    pub problems: Vec<String>,
}

/// Why verification could not even start.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The file is not a DSSE envelope, or a key cannot be read.
    #[error("{0}")]
    Unusable(String),
    /// No trusted key signed it.
    #[error("{0}")]
    Unsigned(String),
}
