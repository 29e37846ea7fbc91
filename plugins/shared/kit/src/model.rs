//! The reading model every first-party reader shares, declared once: a [`Finding`] with its
//! [`Severity`] and place, and the memory every reader is held to for an input of a given size
//! ([`memory_bound`]). A reader keeps its findings in these and turns them into the plugin API's
//! at the boundary (`socair_plugin_api::Finding::from`).

pub use crate::severity::Severity;

/// One thing a reader found, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where: a byte offset, a zip member, a header key, an object's path.
    pub place: String,
    /// What, in words (never led by its severity: the host writes that).
    pub reason: String,
}

impl Finding {
    /// A finding of `severity` at `place`.
    pub fn new(severity: Severity, place: impl Into<String>, reason: impl Into<String>) -> Self {
        Finding {
            severity,
            place: place.into(),
            reason: reason.into(),
        }
    }
}

impl From<Finding> for socair_plugin_api::Finding {
    fn from(f: Finding) -> Self {
        socair_plugin_api::Finding::new(f.severity.into(), f.place, f.reason)
    }
}

impl From<&Finding> for socair_plugin_api::Finding {
    fn from(f: &Finding) -> Self {
        socair_plugin_api::Finding::new(f.severity.into(), f.place.as_str(), f.reason.as_str())
    }
}

/// The memory every first-party reader is held to, beyond the host's: a fixed 64 MiB ...
pub const MEMORY_BASE: u64 = 64 << 20;

/// ... and 8 bytes for each byte of the input (a one-byte varint decodes to eight bytes).
pub const MEMORY_PER_INPUT_BYTE: u64 = 8;

/// What one read may hold for an input of `input_len` bytes: 64 MiB + 8x the input.
pub fn memory_bound(input_len: u64) -> u64 {
    MEMORY_BASE.saturating_add(input_len.saturating_mul(MEMORY_PER_INPUT_BYTE))
}

/// One `parts`-th of [`memory_bound`] (`parts` at least 1): the share a reader gives one of the
/// things it holds at once (the archive plugin's inflated members take half, so that what the
/// pickle machine builds over them fits in the rest).
pub fn memory_share(input_len: u64, parts: u64) -> u64 {
    let parts = parts.max(1);
    (MEMORY_BASE / parts).saturating_add(input_len.saturating_mul(MEMORY_PER_INPUT_BYTE / parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_and_its_shares() {
        assert_eq!(memory_bound(0), 64 << 20);
        assert_eq!(memory_bound(10), (64 << 20) + 80);
        assert_eq!(memory_share(10, 2), (32 << 20) + 40);
        assert_eq!(memory_share(10, 4), (16 << 20) + 20);
        assert_eq!(memory_bound(u64::MAX), u64::MAX);
        let f = Finding::new(Severity::Fail, "byte 3", "why");
        let api: socair_plugin_api::Finding = (&f).into();
        assert_eq!(api.severity, socair_plugin_api::Severity::Fail);
        assert_eq!(api.reason.as_str(), "why");
        assert_eq!(socair_plugin_api::Finding::from(f), api);
    }
}
