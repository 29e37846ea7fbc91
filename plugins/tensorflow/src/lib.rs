//! socair plugin for TensorFlow's files, read and judged without TensorFlow:
//!
//! * `savedmodel`: a SavedModel's `saved_model.pb` ([`savedmodel`]): every op of every meta
//!   graph and of every library function judged against TensorFlow 2.21.0's op registry
//!   ([`ops`], [`graph`]), with what runs at load time; also the directory's `fingerprint.pb`
//!   and `keras_metadata.pb` ([`parts`]);
//! * `tf-checkpoint`: a checkpoint's `.index` (a SavedModel's `variables/variables.index`): the
//!   table read strictly ([`sstable`]), every variable located in its data shard ([`bundle`]);
//! * `tf-graphdef`: a frozen `GraphDef` (`.pb`), its ops judged and its `Const` nodes its
//!   weights ([`graphdef`]);
//! * `tflite`: a TFLite FlatBuffer ([`tflite`]).
//!
//! The protobuf files are walked by the kit's wire pre-pass before prost decodes them
//! ([`decode`]); the schemas are TensorFlow 2.21.0's own ([`proto`]). protobuf has no magic:
//! each reader claims a file only when its first bytes parse as its root message with the
//! layout TensorFlow writes (see each `looks_like_*`), and the host also opens
//! `saved_model.pb` and `*.tflite` by name.

pub mod bundle;
pub mod crc32c;
pub mod decode;
pub mod dtype;
#[doc(hidden)]
pub mod fuzzing;
pub mod graph;
pub mod graphdef;
pub mod ops;
pub mod outcome;
pub mod parts;
pub mod proto;
pub mod savedmodel;
pub mod sstable;
pub mod tensor;
pub mod tflite;

use bytes::Bytes;
use proto::schema::{FINGERPRINT_DEF, GRAPH_DEF, MESSAGES, SAVED_METADATA, SAVED_MODEL};
use socair_plugin_api::{
    abi_stable::std_types::RSliceMut, ByteSourceRef, OpenedFile, PluginError, PluginErrorKind,
    ReadOptions,
};
use socair_plugin_kit::export::Reader;
use socair_plugin_kit::protobuf::head::fields;

socair_plugin_kit::export_plugin! {
    name: "tensorflow",
    rule_sets: [],
    readers: [TfliteReader, CheckpointReader, SavedModelReader, GraphDefReader],
    writers: [],
    encoders: [],
}

/// Reads the first `max` bytes of the source (all of it when shorter).
fn read_prefix(source: &ByteSourceRef<'_>, max: u64) -> Result<Bytes, PluginError> {
    let len = source.file_len().min(max);
    let mut buf = vec![
        0u8;
        usize::try_from(len).map_err(|_| {
            PluginError::new(PluginErrorKind::InvalidInput, "file length over usize")
        })?
    ];
    source
        .read_at(0, RSliceMut::from_mut_slice(&mut buf))
        .into_result()?;
    Ok(Bytes::from(buf))
}

/// A file too large to be what it claims.
fn too_large(format: &str, what: &str, len: u64, max: u64) -> OpenedFile {
    let reason = format!("the file is {len} bytes; {what} is at most {max} bytes");
    socair_plugin_kit::report::refused(
        format,
        "not a sound file of its format: it is larger than its format allows",
        reason.clone(),
        socair_plugin_api::Finding {
            place: "file".into(),
            reason: reason.into(),
        },
    )
}

/// The SavedModel reader: `saved_model.pb`, `fingerprint.pb`, `keras_metadata.pb`.
#[derive(Debug, Clone, Copy)]
pub struct SavedModelReader;

impl Reader for SavedModelReader {
    fn format(&self) -> &'static str {
        savedmodel::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_saved_model(head, file_len)
            || looks_like_fingerprint(head, file_len)
            || looks_like_keras_metadata(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        if len > decode::MAX_PROTO_LEN {
            return Ok(too_large(
                savedmodel::FORMAT,
                "a protobuf message",
                len,
                decode::MAX_PROTO_LEN,
            ));
        }
        let data = read_prefix(source, len)?;
        let head = &data[..data.len().min(4096)];
        Ok(if looks_like_fingerprint(head, len) {
            parts::fingerprint(data)
        } else if looks_like_keras_metadata(head, len) {
            parts::keras_metadata(data)
        } else {
            savedmodel::read(data)
        })
    }
}

/// The checkpoint reader: a tensor bundle's `.index`.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointReader;

impl Reader for CheckpointReader {
    fn format(&self) -> &'static str {
        bundle::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        bundle::looks_like_index(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        if len > bundle::MAX_INDEX_LEN {
            return Ok(too_large(
                bundle::FORMAT,
                "an index this reader reads",
                len,
                bundle::MAX_INDEX_LEN,
            ));
        }
        Ok(bundle::read(read_prefix(source, len)?))
    }
}

/// The frozen GraphDef reader.
#[derive(Debug, Clone, Copy)]
pub struct GraphDefReader;

impl Reader for GraphDefReader {
    fn format(&self) -> &'static str {
        graphdef::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_graph_def(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        if len > decode::MAX_PROTO_LEN {
            return Ok(too_large(
                graphdef::FORMAT,
                "a protobuf message",
                len,
                decode::MAX_PROTO_LEN,
            ));
        }
        Ok(graphdef::read(read_prefix(source, len)?))
    }
}

/// The TFLite reader.
#[derive(Debug, Clone, Copy)]
pub struct TfliteReader;

impl Reader for TfliteReader {
    fn format(&self) -> &'static str {
        tflite::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        tflite::looks_like_tflite(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        // The flatbuffer is at most 2 GiB; buffers placed after it are located, not read.
        let data = read_prefix(source, tflite::flatbuf::MAX_BUFFER as u64)?;
        Ok(tflite::read(data, len))
    }
}

/// Whether `head` starts like a `saved_model.pb`: `saved_model_schema_version` (field 1, a
/// varint TensorFlow sets to 1) first, then a `meta_graphs` message (field 2), and everything
/// the head holds a well-formed prefix of a `SavedModel`, the meta graph's fields included.
/// An ONNX ModelProto also starts with field 1 (`ir_version`), but its field 2 is the
/// `producer_name` string.
pub fn looks_like_saved_model(head: &[u8], file_len: u64) -> bool {
    let Some(f) = fields(head, file_len, MESSAGES, SAVED_MODEL) else {
        return false;
    };
    matches!(
        f.as_slice(),
        [first, second, ..] if first.number == 1
            && first.varint.is_some_and(|v| (1..16).contains(&v))
            && second.number == 2
            && second.len.is_some_and(|l| l >= 2)
    )
}

/// Whether `head` is a whole `fingerprint.pb` (a `FingerprintDef` of a few dozen bytes): its
/// hashes (fields 1 to 5, varints) in order, at least three of them, and nothing undefined.
pub fn looks_like_fingerprint(head: &[u8], file_len: u64) -> bool {
    if file_len > 1024 || head.len() as u64 != file_len {
        return false;
    }
    let Some(f) = fields(head, file_len, MESSAGES, FINGERPRINT_DEF) else {
        return false;
    };
    let hashes = f
        .iter()
        .filter(|x| (1..=5).contains(&x.number) && x.varint.is_some())
        .count();
    hashes >= 3
        && f.first().is_some_and(|x| x.number == 1)
        && f.windows(2)
            .all(|w| w[0].number < w[1].number || w[1].number == 7)
        && f.iter().all(|x| x.whole)
}

/// Whether `head` starts like a `keras_metadata.pb`: nothing but `nodes` (field 1, each a
/// `SavedObject`, whose fields the head check walks), at least one.
pub fn looks_like_keras_metadata(head: &[u8], file_len: u64) -> bool {
    let Some(f) = fields(head, file_len, MESSAGES, SAVED_METADATA) else {
        return false;
    };
    !f.is_empty()
        && f.iter().all(|x| x.number == 1 && x.len.is_some())
        && head.get(2..).is_some_and(|rest| {
            // The first node's first field: node_id (varint) or node_path (a string).
            let mut at = 0;
            socair_plugin_kit::protobuf::read_varint(rest, &mut at, rest.len()).is_some()
                && matches!(rest.get(at), Some(0x10 | 0x1a))
        })
}

/// Whether `head` starts like a binary `GraphDef`: its first field a `node` (field 1) whose
/// first fields are its name and its op (fields 1 and 2), both short printable text, and
/// everything the head holds a well-formed prefix of a `GraphDef`.
pub fn looks_like_graph_def(head: &[u8], file_len: u64) -> bool {
    use socair_plugin_kit::protobuf::read_varint;
    if head.first() != Some(&0x0a) || fields(head, file_len, MESSAGES, GRAPH_DEF).is_none() {
        return false;
    }
    let mut at = 1;
    if read_varint(head, &mut at, head.len()).is_none() {
        return false;
    }
    let mut text = |tag: u8| -> bool {
        if head.get(at) != Some(&tag) {
            return false;
        }
        at += 1;
        let Some(len) = read_varint(head, &mut at, head.len()) else {
            return false;
        };
        let Some(end) = usize::try_from(len).ok().and_then(|l| at.checked_add(l)) else {
            return false;
        };
        let ok = len > 0
            && len <= 1024
            && head
                .get(at..end)
                .is_some_and(|t| t.iter().all(|&c| (0x20..0x7f).contains(&c)));
        at = end;
        ok
    };
    text(0x0a) && text(0x12)
}
