//! What one read found, turned into the `OpenedFile` the plugin API returns: tensors (bounded
//! by the kit's described limit), findings with their severity (bounded per kind), metadata,
//! and one "Format and structure" row whose status is the worst severity found.

use abi_stable::std_types::{RString, RVec, Tuple2};
use socair_plugin_api::{Finding, OpenedFile, ReportRow, RowStatus, TensorDescriptor, Unread};
use socair_plugin_kit::bounded::{self, Listing};
use socair_plugin_kit::protobuf::walk::Walked;
use socair_plugin_kit::report::STRUCTURE_CHECK;
use socair_plugin_kit::Severity;

/// What a read found so far.
#[derive(Debug)]
pub struct Outcome {
    format: &'static str,
    /// The tensors described.
    pub tensors: Vec<TensorDescriptor>,
    findings: Listing<(Severity, String, String)>,
    /// File-level metadata.
    pub metadata: Vec<(String, String)>,
    limit: u64,
    past_limit: u64,
    worst: Option<Severity>,
}

impl Outcome {
    /// A read of a file of `file_len` bytes in `format`.
    pub fn new(format: &'static str, file_len: u64) -> Self {
        Outcome {
            format,
            tensors: Vec::new(),
            findings: Listing::new(bounded::FINDINGS_PER_KIND),
            metadata: Vec::new(),
            limit: bounded::described_limit(file_len),
            past_limit: 0,
            worst: None,
        }
    }

    /// Records a finding of `kind`.
    pub fn note(
        &mut self,
        kind: &'static str,
        severity: Severity,
        place: impl FnOnce() -> String,
        reason: impl FnOnce() -> String,
    ) {
        if self.worst != Some(Severity::Fail) {
            self.worst = Some(severity);
        }
        self.findings.push(kind, || (severity, place(), reason()));
    }

    /// Adds the wire pre-pass's findings.
    pub fn walked(&mut self, w: &Walked) {
        for f in &w.findings {
            self.note(
                "the protobuf's wire findings",
                f.severity,
                || f.place.clone(),
                || f.reason.clone(),
            );
        }
        for &(kind, n) in &w.suppressed {
            self.note(
                "the protobuf's wire findings",
                Severity::Lead,
                || "file".into(),
                || bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
            );
        }
    }

    /// Adds a tensor, when the budget for a file of this size has room for it.
    pub fn tensor(&mut self, t: TensorDescriptor) {
        if (self.tensors.len() as u64) < self.limit {
            self.tensors.push(t);
        } else {
            self.past_limit += 1;
        }
    }

    /// The worst severity noted.
    pub fn status(&self) -> RowStatus {
        socair_plugin_kit::model::status(self.worst)
    }

    /// The `OpenedFile`, its one row summarized by `summary` (given the row's status).
    pub fn finish(self, summary: impl FnOnce(RowStatus) -> String) -> OpenedFile {
        let status = self.status();
        let summary = summary(status);
        let (findings, suppressed) = self.findings.finish();
        // FAILs first.
        let mut findings: Vec<_> = findings.into_iter().collect();
        findings.sort_by_key(|(s, _, _)| *s != Severity::Fail);
        let mut out: Vec<Finding> = findings
            .into_iter()
            .map(|(severity, place, reason)| Finding::new(severity.into(), place, reason))
            .collect();
        for (kind, n) in suppressed {
            out.push(Finding {
                severity: socair_plugin_api::Severity::Note,
                place: "file".into(),
                reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND).into(),
            });
        }
        let mut unread = Vec::new();
        if self.past_limit > 0 {
            unread.push(Unread {
                tensor: None.into(),
                reason: format!(
                    "{} tensors past the {} this reader describes for a file of this size",
                    bounded::thousands(self.past_limit),
                    bounded::thousands(self.limit)
                )
                .into(),
                outside_model: false,
            });
        }
        OpenedFile {
            format: self.format.into(),
            tensors: self.tensors.into(),
            unread: unread.into(),
            rows: RVec::from(vec![ReportRow {
                check: STRUCTURE_CHECK.into(),
                status,
                summary: summary.into(),
                findings: out.into(),
                names_severities: false,
            }]),
            metadata: self
                .metadata
                .into_iter()
                .map(|(k, v)| Tuple2(RString::from(k), RString::from(v)))
                .collect(),
            not_carried: RVec::new(),
        }
    }
}

/// `items` joined for a metadata value, at most `max` of them and how many more.
pub fn listed<'a>(items: impl IntoIterator<Item = &'a str>, max: usize) -> String {
    let mut out = Vec::new();
    let mut more = 0u64;
    for i in items {
        if out.len() < max {
            out.push(bounded::short(i));
        } else {
            more += 1;
        }
    }
    let mut s = out.join(", ");
    if more > 0 {
        s.push_str(&format!(" … and {} more", bounded::thousands(more)));
    }
    s
}
