//! Exit codes, the same for every command: 0 success or a clean result, 1 a negative verdict
//! (a FAIL or LEAD row, a refusal, a mismatch, something unread), 2 a usage error or an
//! input that cannot be read.

use crate::airlock::error::StoreError;

/// Exit status: success, or a clean result.
pub const EXIT_OK: u8 = 0;
/// Exit status: a negative verdict (a FAIL or LEAD row, a refusal, a mismatch, something unread).
pub const EXIT_NEGATIVE: u8 = 1;
/// Exit status: a usage error or an input that cannot be read.
pub const EXIT_ERROR: u8 = 2;

/// An error that ends a command with exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Fatal(pub String);

/// A [`Fatal`] from anything that displays.
pub fn fatal(e: impl std::fmt::Display) -> Fatal {
    Fatal(e.to_string())
}

/// A store operation that did not succeed: a refusal is printed and exits 1; a store or input
/// that cannot be used exits 2.
pub fn refused(e: StoreError) -> Result<u8, Fatal> {
    match e {
        StoreError::Refused(why) => {
            eprintln!("socair: refused: {why}");
            Ok(EXIT_NEGATIVE)
        }
        StoreError::Unusable(why) => Err(Fatal(why)),
    }
}
