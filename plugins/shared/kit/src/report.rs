//! The pieces of an `OpenedFile` that every reader builds the same way.

use abi_stable::std_types::{ROption, RString, RVec};
#[cfg(test)]
use socair_plugin_api::Severity;
use socair_plugin_api::{
    ByteOrder, ByteRange, Finding, OpenedFile, ReadOptions, ReportRow, RowStatus, TensorDescriptor,
    Unread,
};

/// The check every reader reports.
pub const STRUCTURE_CHECK: &str = "Format and structure";

/// The check of pickles, wherever a reader meets them.
pub const PICKLE_CHECK: &str = "Pickle opcode scan";

/// A file of `format` its reader refuses as a whole: nothing located, `unread` as the reason
/// for the file, and one FAIL row (`summary`) with the finding that says where and why.
pub fn refused(format: &str, summary: &str, unread: String, finding: Finding) -> OpenedFile {
    refused_as(RowStatus::Fail, format, summary, unread, finding)
}

/// The summary of a file refused only because it is past the bounds a reader decodes in: a
/// LEAD ([`refused_as`]), not evidence against it.
pub const PAST_BOUNDS: &str =
    "past the memory socair decodes this file in: nothing in it was checked (not evidence against it)";

/// [`refused`] with the row's status given: a LEAD for a file past the bounds a reader reads
/// (not evidence against it, but nothing in it was checked).
pub fn refused_as(
    status: RowStatus,
    format: &str,
    summary: &str,
    unread: String,
    finding: Finding,
) -> OpenedFile {
    let mut opened = one_row(
        format,
        ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: RVec::from(vec![finding]),
            names_severities: false,
        },
    );
    opened.unread = RVec::from(vec![Unread {
        tensor: ROption::RNone,
        reason: unread.into(),
        outside_model: false,
    }]);
    opened
}

/// A file of `format` whose reading is one row and nothing else: no tensors, nothing unread,
/// no metadata (a refusal, a container's structure).
pub fn one_row(format: &str, row: ReportRow) -> OpenedFile {
    OpenedFile {
        format: format.into(),
        tensors: RVec::new(),
        unread: RVec::new(),
        rows: RVec::from(vec![row]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

/// A tensor whose bytes are `ranges` of the opened file, in row-major order: no strides, no
/// origin beyond the offset, no inline bytes, part of the model.
pub fn tensor_in_file(
    name: &str,
    dtype: &str,
    element_type: Option<&str>,
    shape: Vec<u64>,
    ranges: Vec<ByteRange>,
    byte_order: ByteOrder,
) -> TensorDescriptor {
    TensorDescriptor {
        name: name.into(),
        dtype: dtype.into(),
        element_type: element_type.map(RString::from).into(),
        shape: shape.into(),
        ranges: ranges.into(),
        byte_order,
        origin: ROption::RNone,
        strides: ROption::RNone,
        file: ROption::RNone,
        inline: ROption::RNone,
        outside_model: false,
    }
}

/// The globals an operator reviewed (`--reviewed-classes`), as the pickle machine takes them.
pub fn reviewed_globals(options: &ReadOptions) -> Vec<String> {
    options
        .reviewed_globals
        .iter()
        .map(|g| g.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_file_has_one_fail_row_and_nothing_located() {
        let f = refused(
            "gguf",
            "not a sound GGUF file",
            "header: bad magic".into(),
            Finding::new(Severity::Fail, "header", "bad magic"),
        );
        assert!(f.tensors.is_empty());
        assert_eq!(f.unread.len(), 1);
        assert_eq!(f.unread[0].reason.as_str(), "header: bad magic");
        assert_eq!(f.rows.len(), 1);
        assert_eq!(f.rows[0].status, RowStatus::Fail);
        assert_eq!(f.rows[0].check.as_str(), STRUCTURE_CHECK);
        assert_eq!(f.rows[0].findings[0].place.as_str(), "header");
        let t = tensor_in_file(
            "w",
            "Q8_0",
            None,
            vec![2, 32],
            vec![ByteRange { offset: 8, len: 68 }],
            ByteOrder::Little,
        );
        assert_eq!(t.element_type, ROption::RNone);
        assert_eq!(t.ranges.len(), 1);
        let options = ReadOptions {
            reviewed_globals: RVec::from(vec![RString::from("a.B")]),
            ..ReadOptions::default()
        };
        assert_eq!(reviewed_globals(&options), vec!["a.B".to_owned()]);
    }
}
