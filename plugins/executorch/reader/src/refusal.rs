//! Why the runtime refuses a file, as the header and program readers say it.

/// Why the runtime refuses a file: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Where (a byte offset, a schema path).
    pub place: String,
    /// Why.
    pub reason: String,
}

impl Refusal {
    /// A refusal at `place`.
    pub fn new(place: impl Into<String>, reason: impl Into<String>) -> Self {
        Refusal {
            place: place.into(),
            reason: reason.into(),
        }
    }
}
