//! socair plugin for GGUF: a strict reader for versions 2 and 3 ([`reader`]), the ggml type
//! table ([`types`]) and a v3 writer ([`writer`]). This file is only the glue that exports
//! them through `socair-plugin-api`; every entry point runs inside [`guard`].

#[doc(hidden)]
pub mod fuzzing;
pub mod reader;
pub mod types;
pub mod writer;

use abi_stable::{
    export_root_module,
    prefix_type::PrefixTypeTrait,
    sabi_extern_fn,
    sabi_trait::TD_Opaque,
    std_types::{ROption, RResult, RSlice, RString, RVec, Tuple2},
};
use socair_plugin_api::{
    guard, ByteOrder, ByteRange, ByteSourceRef, Finding, FingerprintEncoderBox, FormatReader,
    FormatReaderBox, FormatReader_TO, FormatWriter, FormatWriterBox, FormatWriter_TO, OpenedFile,
    OutputLayout, Placement, PlanTensor, PluginError, PluginErrorKind, PluginManifest, PluginRoot,
    PluginRoot_Ref, ReadOptions, ReportRow, RowStatus, TensorDescriptor, Unread,
    PLUGIN_API_VERSION,
};

/// The format name.
pub const FORMAT: &str = "gguf";
/// The structure check.
pub const STRUCTURE_CHECK: &str = "Format and structure";

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
            name: "gguf".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            plugin_api: PLUGIN_API_VERSION.into(),
            formats_read: RVec::from(vec![RString::from(FORMAT)]),
            formats_written: RVec::from(vec![RString::from(FORMAT)]),
            rule_sets: RVec::new(),
            encoders: RVec::new(),
        })
    })
}

#[sabi_extern_fn]
fn readers() -> RResult<RVec<FormatReaderBox>, PluginError> {
    guard(|| {
        Ok(RVec::from(vec![FormatReader_TO::from_value(
            GgufReader, TD_Opaque,
        )]))
    })
}

#[sabi_extern_fn]
fn writers() -> RResult<RVec<FormatWriterBox>, PluginError> {
    guard(|| {
        Ok(RVec::from(vec![FormatWriter_TO::from_value(
            GgufWriter, TD_Opaque,
        )]))
    })
}

#[sabi_extern_fn]
fn encoders() -> RResult<RVec<FingerprintEncoderBox>, PluginError> {
    guard(|| Ok(RVec::new()))
}

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct GgufReader;

impl FormatReader for GgufReader {
    fn format(&self) -> RString {
        RString::from(FORMAT)
    }

    fn detect(&self, head: RSlice<'_, u8>, _file_len: u64) -> bool {
        // Big-endian files are claimed too, so `open` can say why they are refused.
        guard(|| Ok(head.starts_with(b"GGUF") || head.starts_with(b"FUGG")))
            .into_result()
            .unwrap_or(false)
    }

    fn open(
        &self,
        source: ByteSourceRef<'_>,
        options: ReadOptions,
    ) -> RResult<OpenedFile, PluginError> {
        guard(|| Ok(opened_file(reader::parse(&source, !options.header_only))))
    }
}

/// Turns the reader's verdict into what the plugin API reports.
pub fn opened_file(parsed: Result<reader::Gguf, reader::GgufError>) -> OpenedFile {
    let g = match parsed {
        Ok(g) => g,
        Err(e) => {
            return OpenedFile {
                format: FORMAT.into(),
                tensors: RVec::new(),
                unread: RVec::from(vec![Unread {
                    tensor: ROption::RNone,
                    reason: e.to_string().into(),
                    outside_model: false,
                }]),
                rows: RVec::from(vec![ReportRow {
                    check: STRUCTURE_CHECK.into(),
                    status: RowStatus::Fail,
                    summary: "not a sound GGUF file: loaders may disagree on its tensors".into(),
                    findings: RVec::from(vec![Finding {
                        place: e.place.as_str().into(),
                        reason: e.reason.as_str().into(),
                    }]),
                }]),
                metadata: RVec::new(),
                not_carried: RVec::new(),
            }
        }
    };
    let mut tensors = Vec::new();
    let mut unread = Vec::new();
    let mut findings = Vec::new();
    for t in &g.tensors {
        match (t.ggml_type, t.byte_len) {
            (Some(ty), Some(_)) if ty.disputed.is_some() => {
                let reason = ty.disputed.unwrap_or_default();
                findings.push(Finding {
                    place: format!("tensor {:?}", t.name).into(),
                    reason: reason.into(),
                });
                unread.push(Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: reason.into(),
                    outside_model: false,
                });
            }
            (Some(ty), Some(len)) => tensors.push(TensorDescriptor {
                name: t.name.as_str().into(),
                dtype: ty.name.into(),
                element_type: ty.element.map(RString::from).into(),
                shape: t.shape().into(),
                ranges: RVec::from(vec![ByteRange {
                    offset: g.data_start + t.offset,
                    len,
                }]),
                byte_order: ByteOrder::Little,
                origin: ROption::RNone,
                strides: ROption::RNone,
                file: ROption::RNone,
            }),
            _ => {
                let reason = types::unknown_reason(t.type_id);
                findings.push(Finding {
                    place: format!("tensor {:?}", t.name).into(),
                    reason: format!("{reason}; the layout after it is only partly checked").into(),
                });
                unread.push(Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: reason.into(),
                    outside_model: false,
                });
            }
        }
    }
    let status = if findings.is_empty() {
        RowStatus::Pass
    } else {
        RowStatus::Lead
    };
    let summary =
        format!(
        "GGUF v{} with {} metadata keys and {} tensors (alignment {}) laid out as ggml requires{}",
        g.version,
        g.metadata.len(),
        g.tensors.len(),
        g.alignment,
        if findings.is_empty() {
            String::new()
        } else {
            format!("; {} tensor(s) of a type whose size is not known or disputed", findings.len())
        }
    );
    OpenedFile {
        format: FORMAT.into(),
        tensors: tensors.into(),
        unread: unread.into(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: findings.into(),
        }]),
        metadata: g
            .metadata
            .iter()
            .map(|(k, v)| {
                Tuple2(
                    RString::from(k.as_str()),
                    RString::from(v.to_json().to_string()),
                )
            })
            .collect(),
        not_carried: RVec::new(),
    }
}

/// The writer exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct GgufWriter;

impl FormatWriter for GgufWriter {
    fn format(&self) -> RString {
        RString::from(FORMAT)
    }

    fn plan(
        &self,
        tensors: RSlice<'_, PlanTensor>,
        metadata: RSlice<'_, Tuple2<RString, RString>>,
    ) -> RResult<OutputLayout, PluginError> {
        guard(|| {
            let tensors: Vec<writer::WriteTensor> = tensors
                .iter()
                .map(|t| writer::WriteTensor {
                    name: t.name.to_string(),
                    type_name: t.dtype.to_string(),
                    shape: t.shape.to_vec(),
                    byte_len: t.byte_len,
                })
                .collect();
            let metadata: Vec<(String, String)> = metadata
                .iter()
                .map(|Tuple2(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let plan = writer::plan(&tensors, &metadata)
                .map_err(|e| PluginError::new(PluginErrorKind::InvalidInput, e))?;
            Ok(OutputLayout {
                header: plan.header.into(),
                placements: plan
                    .placements
                    .into_iter()
                    .map(|(i, offset)| Placement {
                        tensor_index: i as u64,
                        offset,
                    })
                    .collect(),
                total_len: plan.total_len,
            })
        })
    }
}
