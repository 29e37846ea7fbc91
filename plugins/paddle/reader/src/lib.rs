//! socair plugin for PaddlePaddle's files, read and judged without Paddle:
//!
//! * `paddle-program`: a `.pdmodel`, the `ProgramDesc` protobuf ([`program`]), walked at wire
//!   level before it is decoded, every op of every block judged ([`ops`]);
//! * `paddle-pir`: a Paddle 3 PIR program (`model.json`, `inference.json`), streamed strictly
//!   and every op judged by the same table ([`pir`]);
//! * `paddle-params`: a `.pdiparams`, the combined parameters, every tensor located as a byte
//!   range ([`params`]).
//!
//! `.pdparams` / `.pdopt` (`paddle.save`'s pickles) are not read here: they are pickles, which
//! the torch-zip plugin's legacy reader reads as any other pickle. This file is the plugin's
//! declaration (`export_plugin!`, every entry point inside `guard`) and the readers that hand
//! a file's bytes to the pure functions of the modules.

#[doc(hidden)]
pub mod fuzzing;
pub mod ops;
pub mod outcome;
pub mod params;
pub mod pir;
pub mod program;
pub mod proto;
pub mod schema;
pub mod wire;

use abi_stable::std_types::RSliceMut;
use socair_plugin_api::{ByteSourceRef, OpenedFile, PluginError, ReadOptions};
use socair_plugin_kit::export::{read_prefix, Reader};

/// The whole file when it is at most `max` bytes, else a LEAD naming the bound.
fn whole(
    source: &ByteSourceRef<'_>,
    format: &str,
    max: u64,
) -> Result<Result<Vec<u8>, OpenedFile>, PluginError> {
    let len = source.file_len();
    if len > max {
        let reason = format!("the file is {len} bytes; this reader reads at most {max}");
        return Ok(Err(socair_plugin_kit::report::refused_as(
            socair_plugin_api::RowStatus::Lead,
            format,
            socair_plugin_kit::report::PAST_BOUNDS,
            reason.clone(),
            socair_plugin_api::Finding::new(socair_plugin_api::Severity::Lead, "file", reason),
        )));
    }
    Ok(Ok(read_prefix(source, len)?))
}

/// The `.pdmodel` reader.
#[derive(Debug, Clone, Copy)]
pub struct ProgramReader;

impl Reader for ProgramReader {
    fn format(&self) -> &'static str {
        program::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        program::looks_like_program(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(match whole(source, program::FORMAT, wire::MAX_PROTO_LEN)? {
            Ok(data) => program::read(&data),
            Err(refused) => refused,
        })
    }
}

/// The PIR program reader.
#[derive(Debug, Clone, Copy)]
pub struct PirReader;

/// The largest PIR program read: the document is streamed (no tree is built), so what it
/// holds costs only the input and the keys of the objects open at once.
const MAX_PIR: u64 = 2 << 30;

impl Reader for PirReader {
    fn format(&self) -> &'static str {
        pir::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        pir::looks_like_pir(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(match whole(source, pir::FORMAT, MAX_PIR)? {
            Ok(data) => pir::read(&data),
            Err(refused) => refused,
        })
    }
}

/// The `.pdiparams` reader: only the tensors' headers are read.
#[derive(Debug, Clone, Copy)]
pub struct ParamsReader;

impl Reader for ParamsReader {
    fn format(&self) -> &'static str {
        params::FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        params::looks_like_params(head, file_len)
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        let mut read = |at: u64, buf: &mut [u8]| -> Result<(), String> {
            source
                .read_at(at, RSliceMut::from_mut_slice(buf))
                .into_result()
                .map_err(|e| e.to_string())
        };
        Ok(params::read(source.file_len(), &mut read, None))
    }
}
