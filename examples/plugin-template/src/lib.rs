//! A socair plugin built outside socair's workspace, against `socair-plugin-api` alone: a
//! reader for llama2.c checkpoints (Karpathy's llama2.c `.bin` files).
//!
//! This file is the glue a third party copies: the root module the host looks up, the
//! manifest, the reader, and the conversion of what the format module found into the plugin
//! API's types. The format itself is in [`llama2c`], pure and unit-tested. Every exported
//! function and trait method runs its body in [`guard`], so that a panic becomes an error
//! instead of unwinding into the host (which would abort it).

pub mod llama2c;

use abi_stable::{
    export_root_module,
    prefix_type::PrefixTypeTrait,
    sabi_extern_fn,
    sabi_trait::TD_Opaque,
    std_types::{ROption, RResult, RSlice, RString, RVec},
};
use llama2c::Outcome;
use socair_plugin_api::{
    guard, ByteOrder, ByteRange, ByteSourceRef, FingerprintEncoderBox, FormatReader,
    FormatReaderBox, FormatReader_TO, FormatWriterBox, OpenedFile, PluginError, PluginManifest,
    PluginRoot, PluginRoot_Ref, ReadOptions, ReportRow, TensorDescriptor, Unread,
    PLUGIN_API_VERSION,
};

/// The plugin's name, as `socair plugins` lists it and a store's pins name it.
pub const PLUGIN_NAME: &str = "llama2c";
/// The format's name, as reports and `--reader` name it.
pub const FORMAT: &str = "llama2c";
/// The check every reader reports.
pub const STRUCTURE_CHECK: &str = "Format and structure";

/// The root module: the one symbol the host looks up in the library. `PluginRoot` is a prefix
/// type, so a host built against a later plugin-api minor version still reads it.
#[export_root_module]
fn root_module() -> PluginRoot_Ref {
    PluginRoot { manifest, readers, writers, encoders }.leak_into_prefix()
}

/// Who the plugin is. `plugin_api` is checked by the host against its own version.
#[sabi_extern_fn]
fn manifest() -> RResult<PluginManifest, PluginError> {
    guard(|| {
        Ok(PluginManifest {
            name: PLUGIN_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            plugin_api: PLUGIN_API_VERSION.into(),
            formats_read: RVec::from(vec![RString::from(FORMAT)]),
            formats_written: RVec::new(),
            rule_sets: RVec::new(),
            encoders: RVec::new(),
        })
    })
}

#[sabi_extern_fn]
fn readers() -> RResult<RVec<FormatReaderBox>, PluginError> {
    // TD_Opaque: the host uses the reader only through the trait, never as its type.
    guard(|| Ok(RVec::from(vec![FormatReader_TO::from_value(Llama2cReader, TD_Opaque)])))
}

#[sabi_extern_fn]
fn writers() -> RResult<RVec<FormatWriterBox>, PluginError> {
    guard(|| Ok(RVec::new()))
}

#[sabi_extern_fn]
fn encoders() -> RResult<RVec<FingerprintEncoderBox>, PluginError> {
    guard(|| Ok(RVec::new()))
}

/// The llama2.c checkpoint reader.
#[derive(Debug, Clone, Copy)]
pub struct Llama2cReader;

impl FormatReader for Llama2cReader {
    fn format(&self) -> RString {
        guard(|| Ok(FORMAT.into())).into_result().unwrap_or_default()
    }

    // The host gives a file to the first reader that claims it: claim only what is surely a
    // llama2.c checkpoint. A panic here is "not mine", never a crash.
    fn detect(&self, head: RSlice<'_, u8>, file_len: u64) -> bool {
        guard(|| Ok(llama2c::detect(head.as_slice(), file_len))).into_result().unwrap_or(false)
    }

    // Only the header is read (through the host's byte source, which implements `ReadAt`),
    // with or without `header_only`: the host hashes the tensors' byte ranges itself.
    fn open(&self, source: ByteSourceRef<'_>, _: ReadOptions) -> RResult<OpenedFile, PluginError> {
        guard(|| Ok(opened_file(llama2c::read(&source))))
    }
}

/// Turns what was read into what the plugin API reports: the tensors as descriptors, and one
/// `Format and structure` row. A malformed file is not an error: its row says what is wrong.
pub fn opened_file(o: Outcome) -> OpenedFile {
    // Nothing read: the whole file is unread, for the first reason.
    let unread = o.findings.first().map(|f| Unread {
        tensor: ROption::RNone,
        reason: format!("{}: {}", f.place, f.reason).into(),
        outside_model: false,
    });
    let descriptor = |t: llama2c::Tensor| TensorDescriptor {
        name: t.name.into(),
        dtype: "F32".into(),
        element_type: ROption::RSome("F32".into()),
        shape: t.shape.into(),
        ranges: RVec::from(vec![ByteRange { offset: t.offset, len: t.len }]),
        byte_order: ByteOrder::Little,
        origin: ROption::RNone,
        strides: ROption::RNone,
        file: ROption::RNone,
        inline: ROption::RNone,
        outside_model: false,
    };
    OpenedFile {
        format: FORMAT.into(),
        tensors: o.tensors.into_iter().map(descriptor).collect(),
        unread: unread.into_iter().collect(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: o.status,
            summary: o.summary.into(),
            findings: o.findings.into(),
            // Each finding's severity is its row's: the report need not name it.
            names_severities: false,
        }]),
        metadata: RVec::new(),
        not_carried: RVec::new(),
        // Facts for the host's own steps (a torch checkpoint's byte order record…): none here.
        facts: RVec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use llama2c::tests::{file, FLOATS, P};
    use socair_plugin_api::RowStatus;

    #[test]
    fn descriptors_and_rows() {
        let opened = opened_file(llama2c::read(file(0, &P, 0, FLOATS).as_slice()));
        let t = &opened.tensors[0];
        assert_eq!((t.name.as_str(), t.dtype.as_str()), ("tok_embeddings.weight", "F32"));
        assert_eq!(t.ranges.as_slice(), [ByteRange { offset: 28, len: 1024 }]);
        assert_eq!(opened.rows[0].status, RowStatus::Pass);
        let opened = opened_file(llama2c::read(&file(1, &P, 0, 0)[..100]));
        assert_eq!((opened.rows[0].status, opened.tensors.len()), (RowStatus::Fail, 0));
        assert!(opened.unread[0].reason.starts_with("byte 100: "));
    }
}
