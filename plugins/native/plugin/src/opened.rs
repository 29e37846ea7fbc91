//! What one read of [`socair_native`] found, turned into what the plugin API reports.

use abi_stable::std_types::{ROption, RString, RVec};
use socair_native::model_read::ModelRead;
use socair_plugin_api::{OpenedFile, ReportRow, TensorDescriptor, Unread};
use socair_plugin_kit::report::STRUCTURE_CHECK;
use socair_plugin_kit::Severity;

/// Turns what was read into what the plugin API reports.
pub fn opened_file(o: ModelRead) -> OpenedFile {
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
    let status = o.findings.status();
    let unread = if o.refused {
        let reason = o
            .findings
            .shown
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
    let findings = o.findings.to_api("findings");
    let tensors: RVec<TensorDescriptor> = o
        .tensors
        .into_iter()
        .map(|t| {
            let (ranges, inline) = t.bytes.into_api();
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
            status,
            summary: summary.into(),
            findings,
            names_severities: false,
        }]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}
