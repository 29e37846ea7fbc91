//! socair plugin for what a model directory holds besides its models that a loader still
//! acts on: native executables and libraries, recognized by their magic whatever they are named
//! ([`native`], a FAIL: native code), and YAML configs read strictly as data, as PyYAML,
//! OmegaConf and Hydra would load them ([`yaml`]).
//!
//! The executable reader claims a file by its first bytes, so it reads `model.bin` that is an
//! ELF before the torch-zip reader could claim it by its name. YAML has no magic: the YAML
//! reader claims nothing by content, and reads the files the host gives it by their extension
//! (`.yaml`, `.yml`; `host/reading/src/read/artifact/choose.rs`, `FORMAT_BY_EXTENSION`).

#[doc(hidden)]
pub mod fuzzing;
pub mod native;
pub mod yaml;

use socair_plugin_api::{
    ByteSourceRef, Finding, OpenedFile, PluginError, ReadAt, ReadOptions, RowStatus, Severity,
};
use socair_plugin_kit::export::{read_prefix, Reader};
use socair_plugin_kit::report::refused_as;

/// The executable reader's format name.
pub const EXECUTABLE_FORMAT: &str = "executable";

/// The row summary of a native executable or library.
pub const NATIVE_CODE: &str = "native code: an executable/shared library, whatever its name";

/// Native executables and libraries by their magic.
#[derive(Debug, Clone, Copy)]
pub struct ExecutableReader;

impl Reader for ExecutableReader {
    fn format(&self) -> &'static str {
        EXECUTABLE_FORMAT
    }

    fn detect(&self, head: &[u8], file_len: u64) -> bool {
        native::identify_head(head, file_len).is_some()
    }

    fn detect_past_head(&self, source: &ByteSourceRef<'_>) -> bool {
        // A PE whose `e_lfanew` points past the head: its DOS header first (64 bytes, asked of
        // every file no reader claims by its head), and the signature there only for an `MZ`.
        let mut dos = [0u8; 64];
        source.size() >= 64
            && source.read_exact_at(0, &mut dos).is_ok()
            && native::pe_signature_past(&dos, source.size()).is_some()
            && native::identify(source).is_some()
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        Ok(executable_opened(native::identify(source)))
    }
}

/// The `OpenedFile` of a file the executable reader read: a FAIL naming what it is, a LEAD
/// when its header is cut short (no loader starts it), a LEAD when it is not native code after
/// all (it changed since it was claimed).
pub fn executable_opened(found: Option<native::Native>) -> OpenedFile {
    let Some(n) = found else {
        let why = "claimed as native code, but its header no longer reads as one: nothing in it was checked";
        return refused_as(
            RowStatus::Lead,
            EXECUTABLE_FORMAT,
            why,
            why.to_owned(),
            Finding::new(Severity::Lead, "byte 0", why),
        );
    };
    match &n.cut_short {
        Some(cut) => {
            let reason = format!(
                "{}, but {cut}: no loader starts it as it is, and no model format starts so; nothing else was checked",
                n.what
            );
            refused_as(
                RowStatus::Lead,
                EXECUTABLE_FORMAT,
                &format!("the start of native code ({}), cut short", n.kind),
                reason.clone(),
                Finding::new(Severity::Lead, "byte 0", reason),
            )
        }
        None => {
            let reason = format!(
                "{}: native code, which runs when the file is executed or loaded as a library (dlopen, ctypes.CDLL, torch.ops.load_library), whatever its name says; no model format starts so",
                n.what
            );
            refused_as(
                RowStatus::Fail,
                EXECUTABLE_FORMAT,
                NATIVE_CODE,
                format!("native code ({}): no tensors", n.kind),
                Finding::new(Severity::Fail, "byte 0", reason),
            )
        }
    }
}

/// YAML configs, read strictly as data.
#[derive(Debug, Clone, Copy)]
pub struct YamlReader;

impl Reader for YamlReader {
    fn format(&self) -> &'static str {
        yaml::FORMAT
    }

    /// YAML has no magic: nothing is claimed by its content (the host reads `.yaml` and
    /// `.yml` files with this reader by their name).
    fn detect(&self, _head: &[u8], _file_len: u64) -> bool {
        false
    }

    fn open(
        &self,
        source: &ByteSourceRef<'_>,
        _options: &ReadOptions,
    ) -> Result<OpenedFile, PluginError> {
        if source.size() > yaml::MAX_YAML {
            let judged = yaml::Judged {
                unread: Some(format!(
                    "a YAML file of {} bytes, larger than the {} socair reads",
                    socair_plugin_kit::bounded::thousands(source.size()),
                    socair_plugin_kit::bounded::thousands(yaml::MAX_YAML)
                )),
                ..Default::default()
            };
            return Ok(yaml::opened_file(&judged));
        }
        let bytes = read_prefix(source, yaml::MAX_YAML)?;
        Ok(yaml::opened_file(&yaml::judge(&bytes)))
    }
}
