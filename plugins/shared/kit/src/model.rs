//! The reading model every first-party reader shares, declared once: a [`Finding`] with its
//! [`Severity`] and place, a row's [`Findings`] (bounded, the worst of all of them kept), the
//! row status they give ([`status`]), and the memory every reader is held to for an input of a
//! given size ([`memory_bound`]). A reader keeps its findings in these and turns them into the
//! plugin API's at the boundary (`socair_plugin_api::Finding::from`, [`Findings::to_api`]).

use crate::bounded::FINDINGS_PER_ROW;
pub use crate::severity::Severity;
use abi_stable::std_types::RVec;
use socair_plugin_api::RowStatus;

/// One thing a reader found, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where: a byte offset, a zip member, a header key, an object's path.
    pub place: String,
    /// What, in words (never led by its severity: the host writes that).
    pub reason: String,
    /// The other file it is about, when the format's loader opens one
    /// (`socair_plugin_api::Finding::file`, which the host judges).
    pub file: Option<String>,
}

impl Finding {
    /// A finding of `severity` at `place`.
    pub fn new(severity: Severity, place: impl Into<String>, reason: impl Into<String>) -> Self {
        Finding {
            severity,
            place: place.into(),
            reason: reason.into(),
            file: None,
        }
    }
}

impl From<Finding> for socair_plugin_api::Finding {
    fn from(f: Finding) -> Self {
        socair_plugin_api::Finding::new(f.severity.into(), f.place, f.reason)
            .about_file(f.file.as_deref())
    }
}

impl From<&Finding> for socair_plugin_api::Finding {
    fn from(f: &Finding) -> Self {
        socair_plugin_api::Finding::new(f.severity.into(), f.place.as_str(), f.reason.as_str())
            .about_file(f.file.as_deref())
    }
}

/// Where a tensor's bytes are, as a reader found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bytes {
    /// A range of the file, in the file's byte order.
    Range {
        /// First byte.
        offset: u64,
        /// Length.
        len: u64,
    },
    /// Bytes the reader decoded (from text, from a deflated member), its elements in
    /// row-major order, in the byte order the reader gives with them.
    Inline(Vec<u8>),
}

impl Bytes {
    /// A tensor descriptor's `ranges` and `inline` for these bytes.
    pub fn into_api(
        self,
    ) -> (
        RVec<socair_plugin_api::ByteRange>,
        abi_stable::std_types::ROption<RVec<u8>>,
    ) {
        use abi_stable::std_types::ROption;
        match self {
            Bytes::Range { offset, len } => (
                RVec::from(vec![socair_plugin_api::ByteRange { offset, len }]),
                ROption::RNone,
            ),
            Bytes::Inline(bytes) => (RVec::new(), ROption::RSome(RVec::from(bytes))),
        }
    }
}

/// The status of a row whose worst finding is `worst`: PASS for none.
pub fn status(worst: Option<Severity>) -> RowStatus {
    worst.map_or(RowStatus::Pass, RowStatus::from)
}

/// A row's findings: the first [`FINDINGS_PER_ROW`] listed, the rest counted, and the worst of
/// all of them kept, so that a FAIL past the listed ones still makes the row a FAIL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    /// Listed, in the order they were found.
    pub shown: Vec<Finding>,
    /// Counted past those.
    pub more: u64,
    /// The worst of all of them, listed or counted.
    pub worst: Option<Severity>,
}

impl Findings {
    /// Adds one; `place` and `reason` are kept only while fewer than [`FINDINGS_PER_ROW`] are.
    pub fn add(&mut self, severity: Severity, place: impl Into<String>, reason: impl Into<String>) {
        self.worst = self.worst.max(Some(severity));
        if self.shown.len() < FINDINGS_PER_ROW {
            self.shown.push(Finding::new(severity, place, reason));
        } else {
            self.more += 1;
        }
    }

    /// Adds `finding` (kept whole only while fewer than [`FINDINGS_PER_ROW`] are listed).
    pub fn push(&mut self, finding: Finding) {
        self.worst = self.worst.max(Some(finding.severity));
        if self.shown.len() < FINDINGS_PER_ROW {
            self.shown.push(finding);
        } else {
            self.more += 1;
        }
    }

    /// Adds one whose reason is built only when it is listed.
    pub fn add_with(
        &mut self,
        severity: Severity,
        place: impl Into<String>,
        reason: impl FnOnce() -> String,
    ) {
        if self.shown.len() < FINDINGS_PER_ROW {
            self.add(severity, place, reason());
        } else {
            self.worst = self.worst.max(Some(severity));
            self.more += 1;
        }
    }

    /// Adds every finding of `other`, listed or counted.
    pub fn extend(&mut self, other: Findings) {
        for f in other.shown {
            self.add(f.severity, f.place, f.reason);
        }
        self.more += other.more;
        self.worst = self.worst.max(other.worst);
    }

    /// How many were added, listed or not.
    pub fn total(&self) -> u64 {
        self.shown.len() as u64 + self.more
    }

    /// Whether none were added.
    pub fn is_empty(&self) -> bool {
        self.worst.is_none()
    }

    /// The row status they give.
    pub fn status(&self) -> RowStatus {
        status(self.worst)
    }

    /// The plugin API's findings: the listed ones, and for the counted ones one more finding
    /// (`… and 3 more findings not listed`, `what` naming them) under the worst severity of the
    /// row, so that a report says of the rest what the row says of all of them.
    pub fn to_api(&self, what: &str) -> RVec<socair_plugin_api::Finding> {
        self.listed(what).into_iter().map(Into::into).collect()
    }

    /// The listed findings and, when some were only counted, the one finding that counts them
    /// (see [`Findings::to_api`]).
    pub fn listed(&self, what: &str) -> Vec<Finding> {
        let mut out = self.shown.clone();
        if let (true, Some(worst)) = (self.more > 0, self.worst) {
            out.push(Finding::new(
                worst,
                "(the rest of the file)",
                more_not_listed(self.more, what),
            ));
        }
        out
    }
}

/// The sentence for `count` findings past the listed ones: `… and 3 more findings not listed
/// (the first 256 are)`.
pub fn more_not_listed(count: u64, what: &str) -> String {
    format!(
        "… and {} more {what} not listed (the first {} are)",
        crate::bounded::thousands(count),
        crate::bounded::thousands(FINDINGS_PER_ROW as u64)
    )
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

    #[test]
    fn a_fail_past_the_listed_findings_still_fails_the_row() {
        let mut row = Findings::default();
        assert_eq!(row.status(), RowStatus::Pass);
        for i in 0..FINDINGS_PER_ROW {
            row.add(Severity::Lead, format!("byte {i}"), "odd");
        }
        row.add(Severity::Fail, "byte 9999", "code");
        assert_eq!(row.shown.len(), FINDINGS_PER_ROW);
        assert_eq!((row.more, row.total()), (1, FINDINGS_PER_ROW as u64 + 1));
        assert_eq!(row.status(), RowStatus::Fail);
        let mut merged = Findings::default();
        merged.extend(row);
        assert_eq!(merged.status(), RowStatus::Fail);
        let api = merged.to_api("findings");
        assert_eq!(api.len(), FINDINGS_PER_ROW + 1);
        let last = api.last().unwrap();
        assert_eq!(last.severity, socair_plugin_api::Severity::Fail);
        assert!(last.reason.as_str().contains("1 more findings not listed"));
    }
}
