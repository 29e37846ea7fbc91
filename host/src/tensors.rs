//! `socair tensors`: the `socair.tensors/v1` manifest of a model file or directory.

use crate::fingerprint::{hash_file, hash_tensor, value_width, TensorHashes, VALUE_ENCODING};
use crate::modeldir::{self, DirFile, ModelDirError};
use crate::plugins::{LoadedPlugin, PluginSet};
use crate::source::InputFile;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use socair_plugin_api::{
    abi_stable::{sabi_trait::TD_Opaque, sabi_types::RRef},
    ByteSource_TO, FormatReaderBox, OpenedFile, ReadOptions, TensorDescriptor,
};
use std::path::{Path, PathBuf};

/// The manifest's schema name.
pub const SCHEMA: &str = "socair.tensors/v1";

inventory::submit! {
    crate::rules::RuleSet {
        name: "socair.tensors",
        version: "1",
        id: SCHEMA,
        summary: "per-tensor fingerprint manifest: raw sha256 and values hash, sorted by file then name",
    }
}

/// How far into a file readers look to detect its format.
const DETECT_HEAD: usize = 4096;

/// File extensions that name a format: a file so named in a model directory must be read by
/// that format's reader, and is `unread` if it cannot be.
const FORMAT_BY_EXTENSION: &[(&str, &str)] = &[("safetensors", "safetensors")];

/// The manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorManifest {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The model described.
    pub artifact: Artifact,
    /// The values encoding, [`VALUE_ENCODING`].
    pub value_encoding: String,
    /// Every tensor fingerprinted, sorted by file then name.
    pub tensors: Vec<TensorEntry>,
    /// What could not be fingerprinted, sorted by file then tensor.
    pub unread: Vec<UnreadEntry>,
}

/// The model a manifest describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifact {
    /// File or directory name.
    pub name: String,
    /// `model directory`, or the file's format.
    pub format: String,
    /// The subject digest: a file's SHA-256, or a directory's `socair.modeldir/v1` digest.
    pub sha256: String,
}

/// One tensor's fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorEntry {
    /// Its file, relative to the directory (or the file's own name).
    pub file: String,
    /// Its name as the format stores it.
    pub name: String,
    /// Its dtype as the format names it.
    pub dtype: String,
    /// Logical shape, outermost first.
    pub shape: Vec<u64>,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256 of its raw bytes.
    pub sha256: String,
    /// SHA-256 of its values in `float32-le-bits/v1` (F32, F16, BF16 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<String>,
}

/// Something not fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnreadEntry {
    /// The file.
    pub file: String,
    /// The tensor, when only one tensor is unread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor: Option<String>,
    /// Why.
    pub reason: String,
}

/// Why the path cannot be fingerprinted at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum TensorsError {
    /// The path cannot be read.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// What.
        source: std::io::Error,
    },
    /// The directory cannot be taken as a model directory.
    #[error(transparent)]
    ModelDir(#[from] ModelDirError),
    /// No plugin reads the file.
    #[error("{path}: no loaded plugin recognises its format ({readers})")]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// The readers tried.
        readers: String,
    },
    /// A plugin failed (not a finding about the file: an error or a panic in the plugin).
    #[error("{path}: plugin `{plugin}` failed: {message}")]
    Plugin {
        /// The file.
        path: PathBuf,
        /// The plugin.
        plugin: String,
        /// Its error.
        message: String,
    },
}

/// One file to read, with the reader chosen for it.
struct FileJob<'p> {
    rel: String,
    input: InputFile,
    reader: (&'p LoadedPlugin, &'p FormatReaderBox),
}

/// Fingerprints the model at `path`.
pub fn fingerprint(path: &Path, plugins: &PluginSet) -> Result<TensorManifest, TensorsError> {
    let io = |source| TensorsError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let name = path
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| path.display().to_string());
    if meta.is_dir() {
        let files = modeldir::list_files(path)?;
        let mut jobs = Vec::new();
        let mut unread = Vec::new();
        for file in &files {
            match choose_reader(file, plugins) {
                Ok(Some(job)) => jobs.push(job),
                Ok(None) => {}
                Err(reason) => unread.push(UnreadEntry {
                    file: file.rel.clone(),
                    tensor: None,
                    reason,
                }),
            }
        }
        let (digest, read) = rayon::join(|| modeldir::digest(&files), || read_all(&jobs));
        let (tensors, more_unread) = read?;
        unread.extend(more_unread);
        Ok(assemble(
            name,
            "model directory".into(),
            digest?,
            tensors,
            unread,
        ))
    } else {
        let input = InputFile::open(path).map_err(io)?;
        let unrecognised = |why: Option<String>| TensorsError::Unrecognised {
            path: path.to_owned(),
            readers: why.unwrap_or_else(|| reader_names(plugins)),
        };
        let reader = pick_reader(&input, &name, plugins)
            .map_err(|why| unrecognised(Some(why)))?
            .ok_or_else(|| unrecognised(None))?;
        let format = reader.1.format().to_string();
        let job = FileJob {
            rel: name.clone(),
            input,
            reader,
        };
        let jobs = [job];
        let (sha, read) = rayon::join(|| hash_file(&jobs[0].input), || read_all(&jobs));
        let (tensors, unread) = read?;
        Ok(assemble(name, format, sha.map_err(io)?, tensors, unread))
    }
}

fn reader_names(plugins: &PluginSet) -> String {
    let names: Vec<String> = plugins
        .readers()
        .map(|(p, r)| format!("{} from plugin {}", r.format(), p.manifest.name))
        .collect();
    if names.is_empty() {
        "no readers are loaded; see `socair plugins`".into()
    } else {
        format!("readers tried: {}", names.join(", "))
    }
}

fn detect<'p>(
    input: &InputFile,
    plugins: &'p PluginSet,
) -> std::io::Result<Option<(&'p LoadedPlugin, &'p FormatReaderBox)>> {
    let mut head = vec![0u8; (input.len() as usize).min(DETECT_HEAD)];
    input.read_exact_at(0, &mut head)?;
    Ok(plugins
        .readers()
        .find(|(_, r)| r.detect(head.as_slice().into(), input.len())))
}

/// Picks the reader for a file: the first whose detection claims its content; failing that,
/// the reader of the format its extension names (so that a damaged `x.safetensors` is opened by
/// the safetensors reader and refused with its reason, rather than passed over). `Ok(None)`
/// for files no reader claims (configs, tokenizers): a directory's digest covers them, but they
/// hold no tensors.
fn pick_reader<'p>(
    input: &InputFile,
    file_name: &str,
    plugins: &'p PluginSet,
) -> Result<Option<(&'p LoadedPlugin, &'p FormatReaderBox)>, String> {
    if let Some(found) = detect(input, plugins).map_err(|e| format!("cannot read it: {e}"))? {
        return Ok(Some(found));
    }
    let extension = file_name.rsplit_once('.').map(|(_, ext)| ext);
    match FORMAT_BY_EXTENSION
        .iter()
        .find(|(ext, _)| Some(*ext) == extension)
    {
        Some((_, format)) => plugins
            .reader(format)
            .map(Some)
            .ok_or_else(|| format!("no loaded plugin reads {format}")),
        None => Ok(None),
    }
}

fn choose_reader<'p>(
    file: &DirFile,
    plugins: &'p PluginSet,
) -> Result<Option<FileJob<'p>>, String> {
    let input = InputFile::open(&file.path).map_err(|e| format!("cannot read it: {e}"))?;
    let reader = pick_reader(&input, &file.rel, plugins)?;
    Ok(reader.map(|reader| FileJob {
        rel: file.rel.clone(),
        input,
        reader,
    }))
}

/// Opens every file with its reader, then hashes every tensor of every file in parallel.
fn read_all(jobs: &[FileJob<'_>]) -> Result<(Vec<TensorEntry>, Vec<UnreadEntry>), TensorsError> {
    let mut unread = Vec::new();
    let mut work: Vec<(&FileJob<'_>, TensorDescriptor)> = Vec::new();
    for job in jobs {
        let (plugin, reader) = job.reader;
        let source = ByteSource_TO::from_ptr(RRef::new(&job.input), TD_Opaque);
        let opened: OpenedFile = reader
            .open(source, ReadOptions { header_only: false })
            .into_result()
            .map_err(|e| TensorsError::Plugin {
                path: job.input.path().to_owned(),
                plugin: plugin.manifest.name.clone(),
                message: e.to_string(),
            })?;
        for u in opened.unread {
            unread.push(UnreadEntry {
                file: job.rel.clone(),
                tensor: u.tensor.into_option().map(Into::into),
                reason: u.reason.into(),
            });
        }
        for t in opened.tensors {
            match check_descriptor(&t, job.input.len()) {
                Ok(()) => work.push((job, t)),
                Err(reason) => unread.push(UnreadEntry {
                    file: job.rel.clone(),
                    tensor: Some(t.name.to_string()),
                    reason: format!(
                        "plugin `{}` described it inconsistently: {reason}",
                        plugin.manifest.name
                    ),
                }),
            }
        }
    }
    let hashed: Vec<Result<TensorEntry, UnreadEntry>> = work
        .par_iter()
        .map(|(job, t)| {
            let bytes = t.ranges.iter().map(|r| r.len).sum::<u64>();
            match hash_tensor(&job.input, t) {
                Ok(TensorHashes { sha256, values }) => Ok(TensorEntry {
                    file: job.rel.clone(),
                    name: t.name.to_string(),
                    dtype: t.dtype.to_string(),
                    shape: t.shape.to_vec(),
                    bytes,
                    sha256,
                    values,
                }),
                Err(e) => Err(UnreadEntry {
                    file: job.rel.clone(),
                    tensor: Some(t.name.to_string()),
                    reason: format!("reading its bytes failed: {e}"),
                }),
            }
        })
        .collect();
    let mut tensors = Vec::with_capacity(hashed.len());
    for h in hashed {
        match h {
            Ok(t) => tensors.push(t),
            Err(u) => unread.push(u),
        }
    }
    Ok((tensors, unread))
}

/// The host does not take a plugin's word for where bytes lie: every range must lie inside the
/// file, and for the element types it encodes, the bytes must hold exactly the shape.
fn check_descriptor(t: &TensorDescriptor, file_len: u64) -> Result<(), String> {
    let mut total = 0u64;
    for r in t.ranges.iter() {
        let end = r.offset.checked_add(r.len).ok_or("a range overflows")?;
        if end > file_len {
            return Err(format!(
                "bytes {}..{end} lie past the end of the {file_len}-byte file",
                r.offset
            ));
        }
        total = total.checked_add(r.len).ok_or("its size overflows")?;
    }
    if let Some(width) = t
        .element_type
        .as_ref()
        .into_option()
        .and_then(|e| value_width(e.as_str()))
    {
        let expected = t
            .shape
            .iter()
            .try_fold(width as u64, |a, &d| a.checked_mul(d))
            .ok_or("its shape overflows")?;
        if expected != total {
            return Err(format!(
                "shape {:?} of {} needs {expected} bytes but its ranges hold {total}",
                t.shape.as_slice(),
                t.dtype
            ));
        }
    }
    Ok(())
}

fn assemble(
    name: String,
    format: String,
    sha256: String,
    mut tensors: Vec<TensorEntry>,
    mut unread: Vec<UnreadEntry>,
) -> TensorManifest {
    tensors.sort_by(|a, b| {
        (a.file.as_bytes(), a.name.as_bytes()).cmp(&(b.file.as_bytes(), b.name.as_bytes()))
    });
    unread.sort_by(|a, b| {
        (
            a.file.as_bytes(),
            a.tensor.as_deref().map(str::as_bytes),
            a.reason.as_bytes(),
        )
            .cmp(&(
                b.file.as_bytes(),
                b.tensor.as_deref().map(str::as_bytes),
                b.reason.as_bytes(),
            ))
    });
    TensorManifest {
        schema: SCHEMA.into(),
        artifact: Artifact {
            name,
            format,
            sha256,
        },
        value_encoding: VALUE_ENCODING.into(),
        tensors,
        unread,
    }
}
