//! socair plugin for TensorFlow's files, read and judged without TensorFlow: SavedModels
//! (`savedmodel`: `saved_model.pb`, `fingerprint.pb`, `keras_metadata.pb`), checkpoint indexes
//! (`tf-checkpoint`), frozen GraphDefs (`tf-graphdef`), TF1 `.meta` files (`tf-metagraph`) and
//! TFLite models (`tflite`). The formats are the library `socair-tensorflow`
//! (`plugins/tensorflow/reader`, which the archive plugin also uses); this file is the plugin's
//! declaration (`export_plugin!`, every entry point inside `guard`) and the readers that read a
//! file's bytes through the host's source and hand them to it. The host also opens
//! `saved_model.pb` and `*.tflite` by name.

use bytes::Bytes;
use socair_plugin_api::{ByteSourceRef, OpenedFile, PluginError, ReadOptions};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_tensorflow::{bundle, decode, graphdef, metagraph, parts, savedmodel, tflite};
use socair_tensorflow::{
    looks_like_fingerprint, looks_like_graph_def, looks_like_keras_metadata, looks_like_meta_graph,
    looks_like_meta_graph_text, looks_like_saved_model,
};

socair_plugin_kit::export_plugin! {
    name: "tensorflow",
    rule_sets: [],
    readers: [TfliteReader, CheckpointReader, SavedModelReader, GraphDefReader, MetaGraphReader],
    writers: [],
    encoders: [],
}

/// The whole file, when it is at most `max` bytes (`what` saying what is at most that), else a
/// refusal naming the limit.
fn whole(
    source: &ByteSourceRef<'_>,
    format: &str,
    what: &str,
    max: u64,
) -> Result<Result<Bytes, OpenedFile>, PluginError> {
    let len = source.file_len();
    if len > max {
        let reason = format!("the file is {len} bytes; {what} is at most {max} bytes");
        return Ok(Err(socair_plugin_kit::report::refused(
            format,
            "not a sound file of its format: it is larger than its format allows",
            reason.clone(),
            socair_plugin_api::Finding::new(socair_plugin_api::Severity::Fail, "file", reason),
        )));
    }
    Ok(Ok(Bytes::from(read_prefix(source, len)?)))
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
        let data = match whole(
            source,
            savedmodel::FORMAT,
            "a protobuf message",
            decode::MAX_PROTO_LEN,
        )? {
            Ok(data) => data,
            Err(refused) => return Ok(refused),
        };
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
        Ok(whole(
            source,
            bundle::FORMAT,
            "an index this reader reads",
            bundle::MAX_INDEX_LEN,
        )?
        .map_or_else(|refused| refused, bundle::read))
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
        Ok(whole(
            source,
            graphdef::FORMAT,
            "a protobuf message",
            decode::MAX_PROTO_LEN,
        )?
        .map_or_else(|refused| refused, graphdef::read))
    }
}

/// The TF1 `.meta` reader: a bare `MetaGraphDef`, claimed by its content.
#[derive(Debug, Clone, Copy)]
pub struct MetaGraphReader;

impl Reader for MetaGraphReader {
    fn format(&self) -> &'static str {
        metagraph::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        looks_like_meta_graph(head, file_len) || looks_like_meta_graph_text(head)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(whole(
            source,
            metagraph::FORMAT,
            "a protobuf message",
            decode::MAX_PROTO_LEN,
        )?
        .map_or_else(|refused| refused, metagraph::read))
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
        Ok(tflite::read(Bytes::from(data), len))
    }
}
