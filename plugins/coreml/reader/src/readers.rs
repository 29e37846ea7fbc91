//! The three readers the plugin exports: the model file, the weights file and the package's
//! manifest, each a claim on the file's first bytes and a read of it.

use crate::{blob, claim, manifest, model};
use socair_plugin_api::{
    ByteSourceRef, Finding, OpenedFile, PluginError, ReadOptions, RowStatus, Severity,
};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::protobuf::error::{ProtoError, MAX_PROTO_LEN};
use socair_plugin_kit::report::{refused_as, PAST_BOUNDS};

/// Core ML model files (`.mlmodel`).
#[derive(Debug, Clone, Copy)]
pub struct CoremlModelReader;

impl Reader for CoremlModelReader {
    fn format(&self) -> &'static str {
        model::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        claim::looks_like_mlmodel(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        // Protobuf has no index: the file is read whole (never a weights file's data).
        let len = source.file_len();
        if len > MAX_PROTO_LEN {
            return Ok(ProtoError::TooLarge { len }.refused(model::FORMAT, model::UNSOUND));
        }
        Ok(model::read(&read_prefix(source, len)?))
    }
}

/// A model package's weights file (MIL blob storage).
#[derive(Debug, Clone, Copy)]
pub struct CoremlWeightsReader;

impl Reader for CoremlWeightsReader {
    fn format(&self) -> &'static str {
        blob::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        blob::looks_like_weights(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(blob::read(source, !options.header_only))
    }
}

/// A model package's `Manifest.json`.
#[derive(Debug, Clone, Copy)]
pub struct CoremlManifestReader;

impl Reader for CoremlManifestReader {
    fn format(&self) -> &'static str {
        manifest::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        manifest::looks_like_manifest(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let len = source.file_len();
        if len > manifest::MAX_MANIFEST {
            let why = format!(
                "the manifest is {len} bytes; socair reads manifests of at most {} bytes",
                manifest::MAX_MANIFEST
            );
            return Ok(refused_as(
                RowStatus::Lead,
                manifest::FORMAT,
                PAST_BOUNDS,
                why.clone(),
                Finding::new(Severity::Lead, "file", why),
            ));
        }
        Ok(manifest::read(&read_prefix(source, len)?))
    }
}
