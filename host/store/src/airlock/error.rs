//! How an airlock operation ends badly: a refusal (a negative verdict) or a store or input
//! that cannot be used.

use std::path::Path;

/// How a store operation ended badly.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A negative verdict: the gate or a check refused (exit 1). The text says which
    /// condition failed.
    #[error("refused: {0}")]
    Refused(String),
    /// The store or an input cannot be used (exit 2).
    #[error("{0}")]
    Unusable(String),
}

pub fn unusable(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unusable(format!("{}: {e}", path.display()))
}

/// An object-storage call that failed: the store cannot be used as it is (its message names
/// the object and the service's answer).
impl From<crate::base::cloud::CloudError> for StoreError {
    fn from(e: crate::base::cloud::CloudError) -> Self {
        StoreError::Unusable(e.to_string())
    }
}
