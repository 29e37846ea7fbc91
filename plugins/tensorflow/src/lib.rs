//! socair plugin for TensorFlow's files, read and judged without TensorFlow: SavedModels
//! (`savedmodel`: `saved_model.pb`, `fingerprint.pb`, `keras_metadata.pb`), checkpoint indexes
//! (`tf-checkpoint`), frozen GraphDefs (`tf-graphdef`) and TFLite models (`tflite`). The
//! formats are the library `socair-tensorflow` (`plugins/tensorflow/formats`, which the
//! archive plugin also uses); this file is the plugin's declaration (`export_plugin!`, every
//! entry point inside `guard`) and the readers that read a file's bytes through the host's
//! source and hand them to it. The host also opens `saved_model.pb` and `*.tflite` by name.

use bytes::Bytes;
use socair_plugin_api::{
    abi_stable::std_types::RSliceMut, ByteSourceRef, OpenedFile, PluginError, PluginErrorKind,
    ReadOptions,
};
use socair_plugin_kit::export::Reader;
use socair_tensorflow::{bundle, decode, graphdef, parts, savedmodel, tflite};
use socair_tensorflow::{
    looks_like_fingerprint, looks_like_graph_def, looks_like_keras_metadata, looks_like_saved_model,
};

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
