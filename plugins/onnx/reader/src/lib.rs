//! socair plugin for ONNX: a strict reader that locates every initializer of the main graph
//! as byte ranges of the model file (or of an external data file beside it), without running
//! anything.
//!
//! The format logic is pure ([`wire::walk`], [`model::parse`]) and tested and fuzzed
//! in-process; this file is only the glue that exports it through `socair-plugin-api`. Every
//! exported function and trait method runs inside [`guard`], so a panic becomes an error.
//!
//! What the reader decides (see also `fixtures/onnx/README.md`):
//!
//! * protobuf has no magic: [`looks_like_onnx`] claims a file only when its first bytes parse
//!   as `ir_version` followed by ModelProto fields; the host also opens `*.onnx` by extension;
//! * the tensors are the main graph's initializers, the values of its `Constant` nodes,
//!   each Constant named by its output, and the tensors its other nodes' attributes hold
//!   (`ConstantOfShape`'s value, named by its output; any other as `<output>.<attribute>`;
//!   see [`model`]);
//! * `raw_data`, packed `float_data` / `double_data` (fixed-width little-endian), a Constant's
//!   `value_float` and packed `value_floats` are byte ranges; values held as numbers
//!   (varint-coded `int32_data` / `int64_data` / `uint64_data`, unpacked floats, a Constant's
//!   `value_int(s)`) are decoded to the bytes `onnx.numpy_helper.to_array` returns
//!   ([`decode`]) and passed as `inline` bytes, which the host fingerprints but never converts;
//! * external data (`data_location = EXTERNAL`) becomes a descriptor whose `file` is the
//!   location, after refusing absolute paths, `..`, backslashes and empty names; its
//!   `checksum` key (SHA-1) is not checked: the host hashes the bytes itself;
//! * tensors outside the main graph's dense initializers, Constants and node attribute
//!   tensors (subgraphs of If/Loop/Scan and everything in them, repeated `tensors`
//!   attributes, a Constant's `sparse_value`, sparse initializers, training graphs) are
//!   listed as unread and outside the model: a conversion names them as not carried;
//! * graph nodes are data to socair, not code it runs: operators of custom domains and
//!   model-local functions are not a LEAD (a runtime resolves them to kernels it already has),
//!   but their domains are listed in the metadata (`onnx.op_domains`) for reviewers; except
//!   nodes whose runtime runs Python (`model::python_op`): onnxruntime's `PyOp`, which imports
//!   and calls the module and class the node names (a FAIL), and the operators that call a
//!   Python function the loading process registered by name (`PythonOp`, onnxruntime-
//!   extensions' `ai.onnx.contrib` ops it has no C++ kernel for: a LEAD).

pub use socair_plugin_kit::bounded;
pub mod decode;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod model;
pub mod proto;
pub mod wire;

use abi_stable::std_types::{ROption, RString, RVec, Tuple2};
use proto::schema::{MESSAGES, MODEL_PROTO};
use proto::schema_types::Kind;
use socair_plugin_api::{
    ByteOrder, ByteRange, ByteSourceRef, Finding, OpenedFile, PluginError, ReadOptions, ReportRow,
    RowStatus, TensorDescriptor, Unread,
};
use socair_plugin_kit::export::Reader;

/// The format name this plugin reads.
pub const FORMAT: &str = "onnx";

/// The check every reader reports.
pub use socair_plugin_kit::report::STRUCTURE_CHECK;

/// The reader exported through the plugin API.
#[derive(Debug, Clone, Copy)]
pub struct OnnxReader;

impl Reader for OnnxReader {
    fn format(&self) -> &'static str {
        FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_onnx(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        // The reader reads the model file whole (protobuf has no index) but never a tensor's
        // bytes in external files, with or without `header_only`.
        open_source(source)
    }
}

/// Whether `head` (the file's first bytes) starts like an ONNX model: field 1 (`ir_version`,
/// a varint from 1 to 63) first, as every ONNX serializer writes it, then at least one more
/// ModelProto field with the wire type onnx.proto gives it, every field that fits in `head`
/// well-formed, strings UTF-8, and the name fields ([`NAME_FIELDS`]) printable text within
/// `head`. Conservative: a safetensors length prefix, a zip, a pickle, GGUF or a TensorFlow
/// SavedModel (`saved_model.pb`) never parses so.
pub fn looks_like_onnx(head: &[u8], file_len: u64) -> bool {
    if head.first() != Some(&0x08) || file_len < 4 {
        return false;
    }
    let schema = &MESSAGES[MODEL_PROTO];
    let end = head.len();
    let mut at = 1;
    match wire::read_varint(head, &mut at, end) {
        Some(v) if (1..64).contains(&v) => {}
        _ => return false,
    }
    let mut fields = 1;
    while at < end {
        let Some(key) = wire::read_varint(head, &mut at, end) else {
            // A tag cut by the end of `head`.
            return fields > 1;
        };
        let Some(field) = u32::try_from(key >> 3).ok().and_then(|n| schema.field(n)) else {
            return false;
        };
        let wire_type = key & 7;
        let expected = match field.kind {
            Kind::Varint => 0,
            Kind::Fixed64 => 1,
            Kind::Fixed32 => 5,
            _ => 2,
        };
        if wire_type != expected && !(field.repeated && wire_type == 2) {
            return false;
        }
        fields += 1;
        match wire_type {
            0 => {
                if wire::read_varint(head, &mut at, end).is_none() {
                    return at >= end;
                }
            }
            2 => {
                let Some(len) = wire::read_varint(head, &mut at, end) else {
                    return at >= end;
                };
                if len > file_len.saturating_sub(at as u64) {
                    return false;
                }
                let Some(stop) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
                    return false;
                };
                let name = NAME_FIELDS.contains(&(key >> 3));
                if stop > end {
                    // Runs past what we were shown (the graph, usually): plausible, unless
                    // it is a name (a producer name of kilobytes is some other message).
                    return !name && (field.kind != Kind::String || utf8_prefix(&head[at..]));
                }
                if field.kind == Kind::String {
                    let Ok(text) = std::str::from_utf8(&head[at..stop]) else {
                        return false;
                    };
                    if name && text.chars().any(char::is_control) {
                        return false;
                    }
                }
                at = stop;
            }
            _ => return false,
        }
    }
    fields > 1
}

/// ModelProto's name fields (onnx.proto: `producer_name` 2, `producer_version` 3, `domain`
/// 4): short text every ONNX writer fills with a name (`pytorch`, `tf2onnx`, `skl2onnx`,
/// `ai.onnx`). A TensorFlow SavedModel starts as ONNX does, with field 1 a varint
/// (`saved_model_schema_version`, tensorflow/core/protobuf/saved_model.proto), and then
/// field 2 is `meta_graphs`, a MetaGraphDef message whose bytes start with a field tag
/// (`0x0a` meta_info_def, `0x12` graph_def ...) and lengths: control characters, never a
/// name. Requiring the name fields to be printable and within the head tells them apart.
const NAME_FIELDS: &[u64] = &[2, 3, 4];

/// Whether `bytes` are UTF-8 up to a character the end of the head cuts.
fn utf8_prefix(bytes: &[u8]) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    }
}

fn open_source(source: &ByteSourceRef<'_>) -> Result<OpenedFile, PluginError> {
    let len = source.file_len();
    if len > model::MAX_MODEL_LEN {
        return Ok(opened_file(Err(model::OnnxError::TooLarge { len })));
    }
    let buf = socair_plugin_kit::export::read_prefix(source, len)?;
    Ok(opened_file(model::parse(bytes::Bytes::from(buf))))
}

/// Turns the parser's verdict into what the plugin API reports.
pub fn opened_file(parsed: Result<model::Model, model::OnnxError>) -> OpenedFile {
    let m = match parsed {
        Ok(m) => m,
        Err(e) => {
            // Past what socair decodes: nothing in it was checked, but nothing against it.
            let costly = matches!(e, model::OnnxError::Wire(wire::WireError::TooCostly { .. }));
            let (status, summary) = if costly {
                (RowStatus::Lead, socair_plugin_kit::report::PAST_BOUNDS)
            } else {
                (
                    RowStatus::Fail,
                    "not a sound ONNX model: readers may disagree on its tensors",
                )
            };
            return socair_plugin_kit::report::refused_as(
                status,
                FORMAT,
                summary,
                e.to_string(),
                Finding::new(status.finding_severity(), e.place(), e.to_string()),
            );
        }
    };
    let status = m
        .findings
        .iter()
        .map(|f| RowStatus::from(f.severity))
        .max_by_key(|s| match s {
            RowStatus::Fail => 2,
            RowStatus::Lead => 1,
            _ => 0,
        })
        .unwrap_or(RowStatus::Pass);
    let external = m.tensors.iter().filter(|t| t.file.is_some()).count();
    let decoded = m.tensors.iter().filter(|t| t.inline.is_some()).count();
    let not_located = m.unread.iter().filter(|u| !u.outside_model).count();
    let outside = m.unread.len() - not_located;
    let attributes = match m.attribute_tensors {
        0 => String::new(),
        n => format!(" and {n} node attribute tensors (ConstantOfShape values...)"),
    };
    let ir = m
        .ir_version
        .map_or_else(|| "?".to_owned(), |v| v.to_string());
    let summary = match status {
        RowStatus::Pass => format!(
            "ONNX model (IR {ir}): {} tensors of {} initializers and {} Constant nodes{attributes} fingerprinted ({external} in external data files, {decoded} decoded from numbers), {not_located} not read, {outside} tensors outside the main graph not carried",
            m.tensors.len(),
            m.initializers,
            m.constants
        ),
        RowStatus::Fail => "not a sound ONNX model: readers may disagree on its tensors".to_owned(),
        _ => format!(
            "ONNX model (IR {ir}) with parts this reader does not prove: {} tensors of {} initializers and {} Constant nodes{attributes} fingerprinted",
            m.tensors.len(),
            m.initializers,
            m.constants
        ),
    };
    let tensors: RVec<TensorDescriptor> = m
        .tensors
        .iter()
        .map(|t| TensorDescriptor {
            name: t.name.as_str().into(),
            dtype: t.dtype.into(),
            element_type: ROption::RSome(t.dtype.into()),
            shape: t.shape.clone().into(),
            ranges: t
                .ranges
                .iter()
                .map(|&(offset, len)| ByteRange { offset, len })
                .collect(),
            byte_order: ByteOrder::Little,
            origin: ROption::RNone,
            strides: ROption::RNone,
            file: t.file.as_deref().map(RString::from).into(),
            inline: t.inline.clone().map(RVec::from).into(),
            outside_model: false,
        })
        .collect();
    OpenedFile {
        format: FORMAT.into(),
        tensors,
        unread: m
            .unread
            .iter()
            .map(|u| Unread {
                tensor: u.name.as_deref().map(RString::from).into(),
                reason: u.reason.as_str().into(),
                outside_model: u.outside_model,
            })
            .collect(),
        rows: RVec::from(vec![ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: m
                .findings
                .iter()
                .map(|f| Finding::new(f.severity.into(), f.place.as_str(), f.reason.as_str()))
                .collect(),
            names_severities: false,
        }]),
        metadata: m
            .metadata
            .into_iter()
            .map(|(k, v)| Tuple2(RString::from(k), RString::from(v)))
            .collect(),
        not_carried: RVec::new(),
        facts: Default::default(),
    }
}
