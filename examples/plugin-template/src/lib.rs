//! A socair plugin, built outside socair's workspace against `socair-plugin-api` alone: strict
//! readers for NumPy `.npy` files and `.npz` archives of stored members.
//!
//! The format logic is pure and unit-tested: [`literal`] (the header's Python literal, parsed,
//! never evaluated), [`npy`] (the `.npy` header and dtypes), [`zip`] (a strict reader for the
//! archives `np.savez` writes, with CRC-32), [`read`] (what a file holds and the verdict). This
//! file is only the glue that exports it through the plugin API: the root module, two
//! readers, and the conversion of an [`read::Outcome`] into an [`OpenedFile`]. Every exported
//! function and trait method runs inside [`guard`], so a panic becomes an error instead of
//! unwinding into the host.

pub mod literal;
pub mod npy;
pub mod read;
pub mod zip;

use abi_stable::{
    export_root_module,
    prefix_type::PrefixTypeTrait,
    sabi_extern_fn,
    sabi_trait::TD_Opaque,
    std_types::{ROption, RResult, RSlice, RString, RVec},
};
use read::{Outcome, Severity};
use socair_plugin_api::{
    guard, ByteRange, ByteSourceRef, Finding, FingerprintEncoderBox, FormatReader, FormatReaderBox,
    FormatReader_TO, FormatWriterBox, OpenedFile, PluginError, PluginManifest, PluginRoot,
    PluginRoot_Ref, ReadOptions, ReportRow, RowStatus, TensorDescriptor, TensorOrigin, Unread,
    PLUGIN_API_VERSION,
};

/// The plugin's name, as `socair plugins` lists it.
pub const PLUGIN_NAME: &str = "npy";

/// The check every reader reports.
pub const STRUCTURE_CHECK: &str = "Format and structure";

/// The root module: what the host finds in the library.
#[export_root_module]
fn root_module() -> PluginRoot_Ref {
    PluginRoot {
        manifest,
        readers,
        writers,
        encoders,
    }
    .leak_into_prefix()
}

#[sabi_extern_fn]
fn manifest() -> RResult<PluginManifest, PluginError> {
    guard(|| {
        Ok(PluginManifest {
            name: PLUGIN_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            plugin_api: PLUGIN_API_VERSION.into(),
            formats_read: RVec::from(vec![RString::from(read::NPY), RString::from(read::NPZ)]),
            formats_written: RVec::new(),
            rule_sets: RVec::new(),
            encoders: RVec::new(),
        })
    })
}

#[sabi_extern_fn]
fn readers() -> RResult<RVec<FormatReaderBox>, PluginError> {
    guard(|| {
        Ok(RVec::from(vec![
            FormatReader_TO::from_value(NpyReader, TD_Opaque),
            FormatReader_TO::from_value(NpzReader, TD_Opaque),
        ]))
    })
}

#[sabi_extern_fn]
fn writers() -> RResult<RVec<FormatWriterBox>, PluginError> {
    guard(|| Ok(RVec::new()))
}

#[sabi_extern_fn]
fn encoders() -> RResult<RVec<FingerprintEncoderBox>, PluginError> {
    guard(|| Ok(RVec::new()))
}

/// Whether `head` starts with the `.npy` magic. Any version is claimed, so that `open` can say
/// what is wrong with one it does not read.
pub fn looks_like_npy(head: &[u8]) -> bool {
    head.starts_with(npy::MAGIC)
}

/// Whether `head` starts with a zip local header whose member name ends in `.npy`, as
/// `np.savez` writes. A torch checkpoint (its first member is `<name>/data.pkl`) or any other
/// zip is not claimed: the host gives a file to the first reader that claims it.
pub fn looks_like_npz(head: &[u8]) -> bool {
    let (Some(b"PK\x03\x04"), Some(&[n0, n1])) = (head.get(..4), head.get(26..28)) else {
        return false;
    };
    let name_len = usize::from(u16::from_le_bytes([n0, n1]));
    30usize
        .checked_add(name_len)
        .and_then(|end| head.get(30..end))
        .is_some_and(|name| name.ends_with(b".npy"))
}

/// The `.npy` reader.
#[derive(Debug, Clone, Copy)]
pub struct NpyReader;

/// The `.npz` reader.
#[derive(Debug, Clone, Copy)]
pub struct NpzReader;

impl FormatReader for NpyReader {
    fn format(&self) -> RString {
        RString::from(read::NPY)
    }

    fn detect(&self, head: RSlice<'_, u8>, _file_len: u64) -> bool {
        guard(|| Ok(looks_like_npy(head.as_slice())))
            .into_result()
            .unwrap_or(false)
    }

    fn open(
        &self,
        source: ByteSourceRef<'_>,
        _options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError> {
        // The header is all this reader reads, with or without `header_only`.
        guard(|| Ok(opened_file(read::read_npy(&source))))
    }
}

impl FormatReader for NpzReader {
    fn format(&self) -> RString {
        RString::from(read::NPZ)
    }

    fn detect(&self, head: RSlice<'_, u8>, _file_len: u64) -> bool {
        guard(|| Ok(looks_like_npz(head.as_slice())))
            .into_result()
            .unwrap_or(false)
    }

    fn open(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError> {
        guard(|| Ok(opened_file(read::read_npz(&source, options.header_only))))
    }
}

/// Turns what was read into what the plugin API reports.
pub fn opened_file(outcome: Outcome) -> OpenedFile {
    let status = match outcome.worst() {
        None => RowStatus::Pass,
        Some(Severity::Lead) => RowStatus::Lead,
        Some(Severity::Fail) => RowStatus::Fail,
    };
    let summary = outcome.summary();
    let tensors: Vec<TensorDescriptor> = outcome
        .tensors
        .into_iter()
        .map(|t| TensorDescriptor {
            name: t.name.into(),
            dtype: t.dtype.into(),
            element_type: ROption::RSome(t.element_type.into()),
            shape: t.shape.into(),
            ranges: RVec::from(vec![ByteRange {
                offset: t.offset,
                len: t.len,
            }]),
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
            inline: ROption::RNone,
            outside_model: false,
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
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: outcome
                .findings
                .into_iter()
                .map(|f| Finding {
                    place: f.place.into(),
                    reason: f.reason.into(),
                })
                .collect(),
        }]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

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
    fn descriptors_carry_strides_and_origin() {
        let member = npy::tests::npy(
            1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
            &[0; 16],
        );
        let z = zip::tests::zip(&[zip::tests::stored("m.npy", &member)]);
        let opened = opened_file(read::read_npz(z.as_slice(), false));
        assert_eq!(opened.format.as_str(), "npz");
        let t = &opened.tensors[0];
        assert_eq!(t.name.as_str(), "m");
        assert_eq!(t.strides, ROption::RSome(RVec::from(vec![1, 2])));
        assert_eq!(t.file, ROption::RNone);
        assert_eq!(
            t.origin,
            ROption::RSome(TensorOrigin {
                container: "m.npy".into(),
                offset: 128
            })
        );
        assert_eq!(opened.rows[0].status, RowStatus::Pass);
    }
}
