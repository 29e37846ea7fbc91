//! socair's first-party plugin for NumPy arrays: `.npy` files and `.npz` archives, read
//! strictly and within bounds.
//!
//! The format logic is pure and unit-tested: [`literal`] (the header's Python literal, parsed,
//! never evaluated), [`npy`] (the `.npy` header and dtypes), [`zip`] (a strict zip reader with
//! CRC-32 over every member), [`inflate`] (bounded deflate through `miniz_oxide`),
//! [`decompress`] (bzip2 and LZMA members, which Python's `zipfile` reads), [`span`]
//! (windows of the file and decoded bytes), [`read`] (what a file holds and the verdicts). This
//! file is the plugin's declaration (`export_plugin!`, which runs every entry point inside
//! `guard`, so a panic becomes an error instead of unwinding into the host) and the turn of
//! what was read into what the plugin API reports.
//!
//! It grew out of an earlier out-of-tree template that read stored `.npy`/`.npz` files (the
//! template in `examples/plugin-template/` reads llama2.c checkpoints now): deflated members,
//! object arrays' pickles (scanned by `socair-pickle`), zip64 end records and data
//! descriptors are what it adds.

pub mod decompress;
pub mod detect;
pub mod fuzzing;
/// Bounded deflate, shared with torch-zip through the plugin kit.
pub use socair_plugin_kit::zip::inflate;
pub mod literal;
pub mod npy;
pub mod read;
pub mod records;
pub mod span;
pub mod zip;

use abi_stable::std_types::{ROption, RString, RVec};
use read::NumpyRead;
use socair_plugin_api::{
    ByteSourceRef, Finding, OpenedFile, PluginError, ReadOptions, ReportRow, TensorDescriptor,
    TensorOrigin, Unread,
};
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::model::status;
use socair_plugin_kit::report::reviewed_globals;
use span::Span;

pub use detect::{looks_like_npy, looks_like_npz};

/// The plugin's name, as `socair plugins` lists it.
pub const PLUGIN_NAME: &str = "numpy";

/// The check every reader reports.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The check of object arrays' pickles.
pub use socair_plugin_kit::report::PICKLE_CHECK;

/// The `.npy` reader.
#[derive(Debug, Clone, Copy)]
pub struct NpyReader;

/// The `.npz` reader.
#[derive(Debug, Clone, Copy)]
pub struct NpzReader;

impl Reader for NpyReader {
    fn format(&self) -> &'static str {
        read::NPY
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_npy(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        // The header (and an object array's pickle) is all this reader reads, with or without
        // `header_only`.
        Ok(opened_file(read::read_npy(
            Span::file(source),
            &reviewed_globals(options),
        )))
    }
}

impl Reader for NpzReader {
    fn format(&self) -> &'static str {
        read::NPZ
    }

    fn detect(&self, head: &[u8], _file_len: u64) -> bool {
        looks_like_npz(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(opened_file(read::read_npz(
            Span::file(source),
            options.header_only,
            &reviewed_globals(options),
        )))
    }
}

fn findings(list: Vec<read::Finding>) -> RVec<Finding> {
    list.into_iter()
        .map(|f| Finding::new(f.severity.into(), f.place, f.reason))
        .collect()
}

/// Turns what was read into what the plugin API reports.
pub fn opened_file(outcome: NumpyRead) -> OpenedFile {
    let mut rows = vec![ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: status(outcome.worst()),
        summary: outcome.summary().into(),
        findings: RVec::new(),
        names_severities: false,
    }];
    if let Some(worst) = outcome.pickle_status() {
        rows.push(ReportRow {
            check: PICKLE_CHECK.into(),
            status: status(worst),
            summary: outcome.pickle_summary().into(),
            findings: findings(outcome.pickle_findings),
            names_severities: false,
        });
    }
    if let Some(row) = rows.first_mut() {
        row.findings = findings(outcome.findings);
    }
    let tensors: Vec<TensorDescriptor> = outcome
        .tensors
        .into_iter()
        .map(|t| {
            let (ranges, inline) = t.bytes.into_api();
            TensorDescriptor {
                name: t.name.into(),
                dtype: t.dtype.into(),
                element_type: t.element_type.map(RString::from).into(),
                shape: t.shape.into(),
                ranges,
                byte_order: t.byte_order,
                origin: t
                    .origin
                    .map(|(container, offset)| TensorOrigin {
                        container: container.into(),
                        offset,
                    })
                    .into(),
                strides: t.strides.map(RVec::from).into(),
                file: ROption::RNone,
                inline,
                outside_model: false,
            }
        })
        .collect();
    OpenedFile {
        format: outcome.format.into(),
        tensors: tensors.into(),
        unread: outcome
            .unread
            .into_iter()
            .map(|(tensor, reason)| Unread {
                tensor: tensor.map(RString::from).into(),
                reason: reason.into(),
                outside_model: false,
            })
            .collect(),
        rows: rows.into(),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socair_plugin_api::RowStatus;

    #[test]
    fn detection() {
        assert!(looks_like_npy(b"\x93NUMPY\x01\x00"));
        assert!(looks_like_npy(b"\x93NUMPY\x09\x09 any version"));
        assert!(!looks_like_npy(b"\x93NUMP"));
        assert!(!looks_like_npy(b"PK\x03\x04"));

        let z = zip::tests::zip(&[zip::tests::stored("w.npy", b"x")]);
        assert!(looks_like_npz(&z));
        assert!(looks_like_npz(&z[..35]), "the name is all it needs");
        assert!(!looks_like_npz(&z[..34]));
        let torch = zip::tests::zip(&[zip::tests::stored("archive/data.pkl", b"x")]);
        assert!(!looks_like_npz(&torch));
        assert!(!looks_like_npz(b"PK\x05\x06"));
        assert!(!looks_like_npz(b""));
    }

    #[test]
    fn descriptors_carry_strides_inline_bytes_and_origin() {
        let member = npy::tests::npy(
            1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        );
        let z = zip::tests::zip(&[
            zip::tests::stored("m.npy", &member),
            zip::tests::deflated("d.npy", &member),
        ]);
        let opened = opened_file(read::read_npz(Span::file_bytes(&z), false, &[]));
        assert_eq!(opened.format.as_str(), "npz");
        assert_eq!(opened.rows.len(), 1, "no object array, no pickle row");
        assert_eq!(opened.rows[0].status, RowStatus::Pass);
        let t = &opened.tensors[0];
        assert_eq!(t.name.as_str(), "m");
        assert_eq!(t.strides, ROption::RSome(RVec::from(vec![1, 2])));
        assert_eq!(t.inline, ROption::RNone);
        assert_eq!(
            t.origin,
            ROption::RSome(TensorOrigin {
                container: "m.npy".into(),
                offset: 128
            })
        );
        let d = &opened.tensors[1];
        assert_eq!(d.name.as_str(), "d");
        assert!(d.ranges.is_empty());
        assert_eq!(d.strides, ROption::RNone);
        assert_eq!(d.inline.as_ref().map(|b| b.len()), ROption::RSome(16));
    }

    #[test]
    fn object_arrays_get_a_pickle_row() {
        let member = npy::tests::npy(
            1,
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            b"cos\nsystem\n(S'id'\ntR.",
        );
        let opened = opened_file(read::read_npy(Span::file_bytes(&member), &[]));
        assert_eq!(opened.rows[0].status, RowStatus::Pass);
        assert_eq!(opened.rows[1].check.as_str(), PICKLE_CHECK);
        assert_eq!(opened.rows[1].status, RowStatus::Fail);
        assert!(opened.rows[1]
            .findings
            .iter()
            .any(|f| f.reason.contains("os.system") && f.place.as_str() == "byte 128"));
        assert_eq!(opened.unread.len(), 1);
    }
}
