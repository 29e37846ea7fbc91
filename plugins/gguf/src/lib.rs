//! socair plugin for GGUF: a strict reader for versions 2 and 3 ([`reader`]), the ggml type
//! table ([`types`]) and a v3 writer ([`writer`]). This file is only the glue that exports
//! them through `socair-plugin-api`; every entry point runs inside [`guard`].

pub mod bounded;
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
    let file_len = g.file_len;
    let total_metadata = g.metadata.len();
    let limit = bounded::described_limit(file_len);
    let mut past_budget = 0u64;
    let mut tensors = Vec::new();
    let mut unread = bounded::Listing::new(bounded::UNREAD_PER_KIND);
    let mut findings = bounded::Listing::new(bounded::FINDINGS_PER_KIND);
    for t in &g.tensors {
        let place = || RString::from(format!("tensor {:?}", t.name));
        match (t.ggml_type, t.byte_len) {
            (Some(ty), Some(_)) if ty.disputed.is_some() => {
                let reason = ty.disputed.unwrap_or_default();
                findings.push("tensors of a disputed size", || Finding {
                    place: place(),
                    reason: reason.into(),
                });
                unread.push("tensors of a disputed size", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: reason.into(),
                    outside_model: false,
                });
            }
            (Some(_), Some(_)) if tensors.len() as u64 >= limit => {
                past_budget += 1;
                unread.push("tensors past the budget", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: budget_reason(g.tensors.len(), limit, file_len).into(),
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
                inline: ROption::RNone,
                outside_model: false,
            }),
            _ => {
                findings.push("tensors of an unknown type", || {
                    let reason = types::unknown_reason(t.type_id);
                    Finding {
                        place: place(),
                        reason: format!("{reason}; the layout after it is only partly checked")
                            .into(),
                    }
                });
                unread.push("tensors of an unknown type", || Unread {
                    tensor: ROption::RSome(t.name.as_str().into()),
                    reason: types::unknown_reason(t.type_id).into(),
                    outside_model: false,
                });
            }
        }
    }
    let unsized_tensors = findings.total();
    if past_budget > 0 {
        findings.push("tensors past the budget", || Finding {
            place: "tensor infos".into(),
            reason: budget_reason(g.tensors.len(), limit, file_len).into(),
        });
    }
    let (mut findings, over) = findings.finish();
    for (kind, n) in over {
        findings.push(Finding {
            place: "tensor infos".into(),
            reason: bounded::and_more(n, kind, bounded::FINDINGS_PER_KIND).into(),
        });
    }
    let (mut unread, over) = unread.finish();
    for (kind, n) in over {
        unread.push(Unread {
            tensor: ROption::RNone,
            reason: bounded::and_more(n, kind, bounded::UNREAD_PER_KIND).into(),
            outside_model: false,
        });
    }
    let status = if findings.is_empty() {
        RowStatus::Pass
    } else {
        RowStatus::Lead
    };
    let mut notes = Vec::new();
    if unsized_tensors > 0 {
        notes.push(format!(
            "{} tensor(s) of a type whose size is not known or disputed",
            bounded::thousands(unsized_tensors)
        ));
    }
    if past_budget > 0 {
        notes.push(format!(
            "{} tensor(s) past what socair describes for a file of this size",
            bounded::thousands(past_budget)
        ));
    }
    let exported = total_metadata.min(MAX_METADATA_LISTED);
    if exported < total_metadata {
        notes.push(format!(
            "only the first {} of its metadata keys are passed on",
            bounded::thousands(exported as u64)
        ));
    }
    let summary = format!(
        "GGUF v{} with {} metadata keys and {} tensors (alignment {}) laid out as ggml requires{}",
        g.version,
        total_metadata,
        g.tensors.len(),
        g.alignment,
        notes.iter().map(|n| format!("; {n}")).collect::<String>()
    );
    // Metadata goes across as typed JSON, each value written straight into its text (at most
    // 6 bytes per byte of the file) and its encoded form dropped as soon as it is written.
    let mut metadata = Vec::with_capacity(exported);
    for (k, v) in g.metadata.into_iter().take(exported) {
        metadata.push(Tuple2(RString::from(k), RString::from(v.json_text())));
    }
    let omitted = total_metadata - exported;
    if omitted > 0 {
        metadata.push(Tuple2(
            RString::from(OMITTED_METADATA_KEY),
            RString::from(format!(
                "{} more metadata keys are not listed (only the first {} are)",
                bounded::thousands(omitted as u64),
                bounded::thousands(exported as u64)
            )),
        ));
    }
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
        metadata: metadata.into(),
        not_carried: RVec::new(),
    }
}

/// Metadata keys passed on to the host, in file order; a GGUF has a few dozen.
pub const MAX_METADATA_LISTED: usize = 65_536;

/// The key standing for metadata keys past [`MAX_METADATA_LISTED`] (no GGUF key can have this
/// name's form: GGUF keys are lower_snake_case segments).
pub const OMITTED_METADATA_KEY: &str = "(socair: metadata not listed)";

fn budget_reason(total: usize, limit: u64, file_len: u64) -> String {
    format!(
        "the file describes {} tensors in {} bytes; socair describes at most {} for a file of this size (16,384 plus one per 256 bytes), so the rest are not fingerprinted",
        bounded::thousands(total as u64),
        bounded::thousands(file_len),
        bounded::thousands(limit)
    )
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
