//! What one read found, gathered the same way by every reader of this plugin and turned
//! into the `OpenedFile` the plugin API returns: tensors (bounded by the kit's described
//! limit), unread tensors, findings with their severity (bounded per kind), metadata.

use crate::tensor::{Data, Located};
use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use socair_plugin_api::{
    ByteOrder, ByteRange, Finding, OpenedFile, ReportRow, RowStatus, TensorDescriptor, Unread,
};
use socair_plugin_kit::bounded::{self, Listing};
// A finding of a read, noted before the row is made: the reading model every first-party reader
// shares.
use socair_plugin_kit::model::Finding as Noted;
use socair_plugin_kit::protobuf::walk::{Severity, Walked};
use socair_plugin_kit::report::STRUCTURE_CHECK;

/// What a read found so far.
#[derive(Debug)]
pub struct Outcome {
    /// The format read.
    pub format: &'static str,
    /// The tensors described.
    pub tensors: Vec<TensorDescriptor>,
    /// Tensors not described.
    pub unread: Listing<Unread>,
    /// Findings.
    pub findings: Listing<Noted>,
    /// File-level metadata.
    pub metadata: Vec<(String, String)>,
    /// What a conversion does not carry.
    pub not_carried: Vec<String>,
    /// How many tensors may still be described.
    limit: u64,
    /// Tensors past the limit.
    pub past_limit: u64,
    /// Decoded bytes that may still be passed inline: 1x the input at most, so that with the
    /// input itself and its decoded structure (at most 7x the input and 64 MiB by the wire
    /// pre-pass's pessimistic estimate for TensorFlow's dialect, decode.rs) a read stays
    /// within the 64 MiB + 8x every reader is held to.
    pub inline_budget: u64,
    /// The worst severity noted, kept or not.
    worst: Option<Severity>,
}

impl Outcome {
    /// A read of a file of `file_len` bytes in `format`.
    pub fn new(format: &'static str, file_len: u64) -> Self {
        Outcome {
            format,
            tensors: Vec::new(),
            unread: Listing::new(bounded::UNREAD_PER_KIND),
            findings: Listing::new(bounded::FINDINGS_PER_KIND),
            metadata: Vec::new(),
            not_carried: Vec::new(),
            limit: bounded::described_limit(file_len),
            past_limit: 0,
            inline_budget: file_len,
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
        self.worse(severity);
        self.findings.push(kind, || Noted {
            severity,
            place: place(),
            reason: reason(),
        });
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

    /// Whether another tensor may be described (the kit's budget for a file of this size);
    /// counts the ones that may not.
    pub fn room(&mut self) -> bool {
        if (self.tensors.len() as u64) < self.limit {
            return true;
        }
        self.past_limit += 1;
        false
    }

    /// Adds a located tensor named `name`; `file` names the file holding its bytes when that
    /// is not the one opened.
    pub fn tensor(
        &mut self,
        name: &str,
        t: Located,
        byte_order: ByteOrder,
        file: Option<&str>,
        outside: bool,
    ) {
        let (ranges, inline) = match t.bytes {
            Data::Range(offset, len) => (vec![ByteRange { offset, len }], None),
            Data::Inline(b) => (Vec::new(), Some(RVec::from(b))),
        };
        self.tensors.push(TensorDescriptor {
            name: name.into(),
            dtype: t.dtype.name.into(),
            element_type: t.dtype.element.map(RString::from).into(),
            shape: t.shape.into(),
            ranges: ranges.into(),
            byte_order,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: file.map(RString::from).into(),
            inline: inline.into(),
            outside_model: outside,
        });
    }

    /// Adds the wire pre-pass's findings.
    pub fn walked(&mut self, w: &Walked) {
        for f in &w.findings {
            self.worse(f.severity);
            let f = f.clone();
            self.findings
                .push("the protobuf's wire findings", || Noted {
                    severity: f.severity,
                    place: f.place,
                    reason: f.reason,
                });
        }
        for &(kind, n) in &w.suppressed {
            self.worse(Severity::Lead);
            self.findings
                .push("the protobuf's wire findings", || Noted {
                    severity: Severity::Lead,
                    place: "file".into(),
                    reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND),
                });
        }
    }

    fn worse(&mut self, s: Severity) {
        if self.worst != Some(Severity::Fail) {
            self.worst = Some(s);
        }
    }

    /// The worst severity noted.
    pub fn status(&self) -> RowStatus {
        socair_plugin_kit::model::status(self.worst)
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
        let (findings, suppressed) = self.findings.finish();
        let mut out: Vec<Finding> = findings
            .into_iter()
            .map(|f| Finding::new(f.severity.into(), f.place, f.reason))
            .collect();
        for (kind, n) in suppressed {
            out.push(Finding {
                severity: socair_plugin_api::Severity::Note,
                place: "file".into(),
                reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND).into(),
            });
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
