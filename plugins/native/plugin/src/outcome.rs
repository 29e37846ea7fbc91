//! What one read of [`socair_native`] found, turned into what the plugin API reports.

use abi_stable::std_types::{ROption, RString, RVec};
use socair_native::outcome::{Bytes, Outcome};
use socair_plugin_api::{
    ByteRange, Finding as ApiFinding, OpenedFile, ReportRow, RowStatus, TensorDescriptor, Unread,
};
use socair_plugin_kit::report::STRUCTURE_CHECK;
use socair_plugin_kit::Severity;

fn status(worst: Option<Severity>) -> RowStatus {
    match worst {
        None => RowStatus::Pass,
        Some(Severity::Lead) => RowStatus::Lead,
        Some(Severity::Fail) => RowStatus::Fail,
    }
}

/// Turns what was read into what the plugin API reports.
pub fn opened_file(o: Outcome) -> OpenedFile {
    let worst = o.worst();
    let summary = match worst {
        None => format!("read as data: {}", o.what),
        Some(Severity::Lead) => format!(
            "{}; something in it needs a person (see the findings)",
            o.what
        ),
        Some(Severity::Fail) if o.refused => {
            "not a sound file of its format: nothing in it was located".to_owned()
        }
        Some(Severity::Fail) => format!("{}, with faults its loader would meet", o.what),
    };
    let mut findings: Vec<ApiFinding> = o
        .findings
        .iter()
        .map(|f| ApiFinding::new(f.severity.into(), f.place.as_str(), f.reason.as_str()))
        .collect();
    if o.dropped > 0 {
        findings.push(ApiFinding::new(
            socair_plugin_api::Severity::Note,
            "file",
            format!("{} more findings not listed", o.dropped),
        ));
    }
    let unread = if o.refused {
        let reason = o
            .findings
            .iter()
            .rev()
            .find(|f| f.severity == Severity::Fail)
            .map(|f| format!("{}: {}", f.place, f.reason))
            .unwrap_or_default();
        RVec::from(vec![Unread {
            tensor: ROption::RNone,
            reason: reason.into(),
            outside_model: false,
        }])
    } else {
        RVec::new()
    };
    let tensors: RVec<TensorDescriptor> = o
        .tensors
        .into_iter()
        .map(|t| {
            let (ranges, inline) = match t.bytes {
                Bytes::Range { offset, len } => {
                    (RVec::from(vec![ByteRange { offset, len }]), ROption::RNone)
                }
                Bytes::Inline(b) => (RVec::new(), ROption::RSome(RVec::from(b))),
            };
            TensorDescriptor {
                name: t.name.into(),
                dtype: t.dtype.into(),
                element_type: ROption::RSome(RString::from(t.element_type)),
                shape: t.shape.into(),
                ranges,
                byte_order: t.byte_order,
                origin: ROption::RNone,
                strides: ROption::RNone,
                file: ROption::RNone,
                inline,
                outside_model: false,
            }
        })
        .collect();
    OpenedFile {
        format: o.format.into(),
        tensors,
        unread,
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: status(worst),
            summary: summary.into(),
            findings: findings.into(),
            names_severities: false,
        }]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
    }
}
