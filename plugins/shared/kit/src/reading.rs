//! One read of a file, gathered as a reader goes and turned into the `OpenedFile` the plugin
//! API returns: the tensors described (bounded by [`bounded::described_limit`]), the ones not
//! described, findings with their severity (bounded per kind, the worst of all kept),
//! file-level metadata, and one "Format and structure" row whose status is the worst severity
//! found. The readers built on the protobuf wire walk (TensorFlow, PaddlePaddle) gather into
//! it; its findings are the reading model's ([`crate::model::Finding`]).

use crate::bounded::{self, Listing};
use crate::model::{status, Finding, Severity};
use crate::protobuf::walk::Walked;
use crate::report::STRUCTURE_CHECK;
use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use socair_plugin_api::{OpenedFile, ReportRow, RowStatus, TensorDescriptor, Unread};

/// What a read found so far.
#[derive(Debug)]
pub struct Reading {
    /// The format read.
    pub format: &'static str,
    /// The tensors described.
    pub tensors: Vec<TensorDescriptor>,
    /// Tensors not described.
    pub unread: Listing<Unread>,
    /// Findings.
    pub findings: Listing<Finding>,
    /// File-level metadata.
    pub metadata: Vec<(String, String)>,
    /// What a conversion does not carry.
    pub not_carried: Vec<String>,
    /// Whether the row lists its FAILs before its LEADs.
    pub fails_first: bool,
    /// Decoded bytes that may still be passed inline (tensors whose bytes are not ranges of
    /// the file): the input's size to start with, which a reader may set otherwise.
    pub inline_left: u64,
    /// How many tensors may be described.
    limit: u64,
    /// Tensors past the limit.
    pub past_limit: u64,
    /// The worst severity noted, listed or not.
    worst: Option<Severity>,
}

impl Reading {
    /// A read of a file of `file_len` bytes in `format`.
    pub fn new(format: &'static str, file_len: u64) -> Self {
        Reading {
            format,
            tensors: Vec::new(),
            unread: Listing::new(bounded::UNREAD_PER_KIND),
            findings: Listing::new(bounded::FINDINGS_PER_KIND),
            metadata: Vec::new(),
            not_carried: Vec::new(),
            fails_first: false,
            inline_left: file_len,
            limit: bounded::described_limit(file_len),
            past_limit: 0,
            worst: None,
        }
    }

    /// Records a finding of `kind`; its place and reason are built only when it is listed.
    pub fn note(
        &mut self,
        kind: &'static str,
        severity: Severity,
        place: impl FnOnce() -> String,
        reason: impl FnOnce() -> String,
    ) {
        self.worst = self.worst.max(Some(severity));
        self.findings
            .push(kind, || Finding::new(severity, place(), reason()));
    }

    /// Records a tensor not described.
    pub fn unread(
        &mut self,
        kind: &'static str,
        name: Option<&str>,
        reason: String,
        outside: bool,
    ) {
        self.unread.push(kind, || Unread {
            tensor: name.map(RString::from).into(),
            reason: reason.into(),
            outside_model: outside,
        });
    }

    /// Whether another tensor may be described (the budget for a file of this size); counts
    /// the ones that may not.
    pub fn room(&mut self) -> bool {
        if (self.tensors.len() as u64) < self.limit {
            return true;
        }
        self.past_limit += 1;
        false
    }

    /// Adds a tensor, when the budget has room for it.
    pub fn describe(&mut self, t: TensorDescriptor) {
        if self.room() {
            self.tensors.push(t);
        }
    }

    /// Adds the wire pre-pass's findings.
    pub fn walked(&mut self, w: &Walked) {
        const KIND: &str = "the protobuf's wire findings";
        for f in &w.findings {
            self.note(KIND, f.severity, || f.place.clone(), || f.reason.clone());
        }
        for &(kind, n) in &w.suppressed {
            self.note(
                KIND,
                Severity::Lead,
                || "file".into(),
                || bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
            );
        }
    }

    /// The status of the row: the worst severity noted.
    pub fn status(&self) -> RowStatus {
        status(self.worst)
    }

    /// The `OpenedFile`, its one row summarized by `summary` (given the row's status).
    pub fn finish(mut self, summary: impl FnOnce(RowStatus) -> String) -> OpenedFile {
        if self.past_limit > 0 {
            let reason = format!(
                "{} tensors past the {} this reader describes for a file of this size",
                bounded::thousands(self.past_limit),
                bounded::thousands(self.limit)
            );
            self.unread("tensors past the budget", None, reason, false);
        }
        let status = self.status();
        let summary = summary(status);
        let (mut findings, suppressed) = self.findings.finish();
        if self.fails_first {
            findings.sort_by_key(|f| f.severity != Severity::Fail);
        }
        let mut out: Vec<socair_plugin_api::Finding> =
            findings.into_iter().map(Into::into).collect();
        for (kind, n) in suppressed {
            out.push(socair_plugin_api::Finding::new(
                socair_plugin_api::Severity::Note,
                "file",
                bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
            ));
        }
        let (mut unread, unread_over) = self.unread.finish();
        for (kind, n) in unread_over {
            unread.push(Unread {
                tensor: ROption::RNone,
                reason: bounded::and_more(n, kind, bounded::UNREAD_PER_KIND).into(),
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
            not_carried: self.not_carried.into_iter().map(RString::from).collect(),
            facts: Default::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_severity_is_kept_and_fails_can_come_first() {
        let mut r = Reading::new("fmt", 0);
        assert_eq!(r.status(), RowStatus::Pass);
        r.note("a", Severity::Lead, || "x".into(), || "odd".into());
        r.note("b", Severity::Fail, || "y".into(), || "code".into());
        r.note("a", Severity::Lead, || "z".into(), || "odd".into());
        assert_eq!(r.status(), RowStatus::Fail);
        r.fails_first = true;
        let f = r.finish(|s| format!("{s:?}"));
        assert_eq!(f.rows[0].status, RowStatus::Fail);
        assert_eq!(f.rows[0].findings[0].place.as_str(), "y");
        assert_eq!(f.rows[0].summary.as_str(), "Fail");
        assert_eq!(listed(["a", "b", "c"], 2), "a, b … and 1 more");
    }
}
