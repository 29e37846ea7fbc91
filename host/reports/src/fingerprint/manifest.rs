//! `socair tensors`: the `socair.tensors/v1` manifest of a model file or directory. Every
//! tensor a reader located is fingerprinted; everything else that may hold tensors is
//! listed in `unread` with the reason (a tensor a reader named but did not locate, a file no
//! reader read, a file a reader located nothing in without proving it: [`unread_files`]),
//! so `tensors` exits 0 only when nothing was left unread.

use crate::fingerprint::hashing::{hash_tensor, value_width, TensorHashes, VALUE_ENCODING};
use crate::fingerprint::unpermute::Unpermuted;
use crate::read::artifact::{
    data_files, reader_names, Artifact, ArtifactError, FileJob, ReaderChoice,
};
use crate::read::hfcache::BlobName;
use crate::read::modeldir::FileHash;
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use socair_plugin_api::{OpenedFile, ReadOptions, RowStatus, TensorDescriptor};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The manifest's schema name.
pub const SCHEMA: &str = "socair.tensors/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.tensors",
        version: "1",
        id: SCHEMA,
        summary: "per-tensor fingerprint manifest: raw sha256 and values hash, sorted by file then name",
    }
}

/// The manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorManifest {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The model described.
    pub artifact: ArtifactRef,
    /// The values encoding, [`VALUE_ENCODING`].
    pub value_encoding: String,
    /// Every tensor fingerprinted, sorted by file then name.
    pub tensors: Vec<TensorEntry>,
    /// What could not be fingerprinted, sorted by file then tensor.
    pub unread: Vec<UnreadEntry>,
    /// Names a safetensors file's `__metadata__` records as another name for one of its
    /// tensors (`socair convert` writes tied weights once and names the others so), sorted
    /// by file then name. Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<crate::fingerprint::alias::AliasEntry>,
}

/// The model a manifest describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
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
    /// The artifact cannot be read.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// No plugin reads the file.
    #[error("{path}: no loaded plugin recognises its format ({readers})")]
    Unrecognised {
        /// The file.
        path: PathBuf,
        /// The readers tried, or why none was.
        readers: String,
    },
}

/// Fingerprints the model at `path`.
pub fn fingerprint(
    path: &Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<TensorManifest, TensorsError> {
    Ok(fingerprint_detailed(path, plugins, choice)?.0)
}

/// Fingerprints the model at `path`, and also hashes GGUF Q/K projections with llama.cpp's
/// row permutation undone (for `tensors diff`).
pub fn fingerprint_detailed(
    path: &Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<(TensorManifest, Unpermuted), TensorsError> {
    let artifact = Artifact::resolve(path, plugins, choice)?;
    if !artifact.is_dir && artifact.jobs.is_empty() {
        return Err(TensorsError::Unrecognised {
            path: path.to_owned(),
            readers: artifact
                .unreadable
                .first()
                .map_or_else(|| reader_names(plugins), |(_, why)| why.clone()),
        });
    }
    // A file's digest begins with its reader's own reads (a zip's CRC-32 pass) and is
    // finished beside the tensors' hashes.
    artifact.digest_as_read();
    let opened = artifact.open_all(&ReadOptions::default())?;
    let unpermuted = crate::fingerprint::unpermute::hash_unpermuted(&opened);
    let aliases = crate::fingerprint::alias::aliases_of(&opened);
    let ((tensors, mut unread), each, digest) = hash_all_and_digest(&artifact, &opened)?;
    unread.extend(tampered_blobs(&artifact, &each));
    let mut m = manifest_of(&artifact, (tensors, unread), digest);
    m.aliases = aliases;
    Ok((m, unpermuted))
}

/// Every tensor fingerprinted, and what was not.
type Hashed = (Vec<TensorEntry>, Vec<UnreadEntry>);

/// Every tensor's hashes, each file's hash and the subject digest, side by side: each file's
/// digest continued from what its reader's reads hashed (a zip's CRC-32 pass) in one thread,
/// the tensors hashed across the other cores, each from its own reads. (A single read of each
/// window handed to every hash was slower here: SHA-256 reads bytes another core fetched at
/// 1.0 GB/s against 1.7 from its own cache; 1 GiB of F32, 2 cores: 1.00-1.15 s against
/// 0.80-0.86, BF16 2.2 s against 1.4, the manifests the same bytes.)
fn hash_all_and_digest(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
) -> Result<(Hashed, Vec<FileHash>, String), ArtifactError> {
    let partials: HashMap<&str, _> = artifact
        .jobs
        .iter()
        .map(|job| (job.rel.as_str(), (&job.input, job.input.take_digest())))
        .collect();
    let finish = |rel: &str| -> Option<std::io::Result<String>> {
        partials
            .get(rel)
            .map(|(input, partial)| input.finish_digest(partial))
    };
    let (hashed, files) = rayon::join(
        || hash_all(artifact, opened),
        || artifact.file_hashes_by(finish),
    );
    let (each, digest) = files?;
    Ok((hashed, each, digest))
}

/// In a Hugging Face snapshot, each file whose blob is named by a SHA-256 (an LFS file:
/// huggingface_hub names it by the ETag the Hub sent, the file's SHA-256) that its bytes do
/// not have: the cache was changed after the download. Such a file is
/// unread, so `tensors` exits 1 where `scan`'s `Hugging Face cache` row FAILs (which also
/// checks the git blob ids of the other files). `each` is every file's hash, in the artifact's
/// files' order.
fn tampered_blobs(artifact: &Artifact<'_>, each: &[FileHash]) -> Vec<UnreadEntry> {
    artifact
        .files
        .iter()
        .zip(each)
        .filter_map(|(f, (_, _, sha))| {
            let blob = f.blob.as_ref()?;
            (blob.name_kind() == BlobName::Sha256 && !sha.eq_ignore_ascii_case(&blob.etag)).then(
                || UnreadEntry {
                    file: f.rel.clone(),
                    tensor: None,
                    reason: format!(
                        "its SHA-256 is {sha}, not {}, the name of its blob in the Hugging Face cache: the cache was changed after huggingface_hub downloaded it (`socair scan` FAILs it)",
                        blob.etag
                    ),
                },
            )
        })
        .collect()
}

/// The manifest of an artifact whose files are already open (as `scan` has them for the
/// Tensor reference row) and whose subject digest is known: only the tensors are hashed.
pub fn manifest_of_opened(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
    digest: String,
) -> TensorManifest {
    let mut m = manifest_of(artifact, hash_all(artifact, opened), digest);
    m.aliases = crate::fingerprint::alias::aliases_of(opened);
    m
}

fn manifest_of(
    artifact: &Artifact<'_>,
    (tensors, more_unread): (Vec<TensorEntry>, Vec<UnreadEntry>),
    digest: String,
) -> TensorManifest {
    let mut unread: Vec<UnreadEntry> = artifact
        .unreadable
        .iter()
        .map(|(file, reason)| UnreadEntry {
            file: file.clone(),
            tensor: None,
            reason: reason.clone(),
        })
        .collect();
    unread.extend(more_unread);
    assemble(
        artifact.name.clone(),
        artifact.format(),
        digest,
        tensors,
        unread,
    )
}

/// Hashes every tensor of every opened file in parallel, each from the file holding its bytes.
fn hash_all<'j, 'p>(
    artifact: &'j Artifact<'p>,
    opened: &'j [(&'j FileJob<'p>, OpenedFile)],
) -> (Vec<TensorEntry>, Vec<UnreadEntry>) {
    let mut unread = unread_files(artifact, opened);
    let mut work: Vec<(&FileJob<'_>, &InputFile, &TensorDescriptor)> = Vec::new();
    for (job, opened) in opened {
        let plugin = job.reader.0;
        for u in opened.unread.iter() {
            unread.push(UnreadEntry {
                file: job.rel.clone(),
                tensor: u.tensor.as_ref().map(|t| t.to_string()).into_option(),
                reason: u.reason.to_string(),
            });
        }
        for t in opened.tensors.iter() {
            let checked = artifact
                .input_of(job, t)
                .and_then(|input| check_descriptor(t, input.len()).map(|()| input));
            match checked {
                Ok(input) => work.push((job, input, t)),
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
    let total = work
        .iter()
        .flat_map(|(_, _, t)| t.ranges.iter().map(|r| r.len))
        .fold(0u64, u64::saturating_add);
    let progress = crate::base::progress::Progress::bytes(total, "hashing tensors");
    let hashed: Vec<Result<TensorEntry, UnreadEntry>> = work
        .par_iter()
        .map(|(job, input, t)| {
            let bytes = crate::read::layout::row_major_len(t, input.len()).unwrap_or(0);
            match hash_tensor(input, t, &progress) {
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
    (tensors, unread)
}

/// Who did not read a directory's file that is none of the companion rules' kinds.
const NO_READER: &str = "no loaded plugin reads this file";

/// The files nothing fingerprinted and that are not known to be free of tensors, each as one
/// entry naming why: a directory's file no plugin claimed that the companion rules do not
/// read as data (JSON, text, a chat template: `socair_plugin_kit::companion`, the rules
/// `scan` applies), such as a TensorFlow `saved_model.pb` or checkpoint's
/// `variables.index`, a Keras `keras_metadata.pb`, a Flax `.msgpack`; and a file a
/// reader opened but located no tensor in, listed nothing unread in, and did not prove (a
/// row that is not PASS), such as a whole pickled `nn.Module` or a `.keras` zip. A file that
/// holds another file's tensor bytes (ONNX external data) is read as that data.
fn unread_files(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
) -> Vec<UnreadEntry> {
    let mut unread = Vec::new();
    let data = data_files(opened);
    for u in artifact.unclaimed.iter().filter(|u| !data.contains(&u.rel)) {
        use socair_plugin_kit::companion::{classify, Companion};
        let why = match classify(&u.rel, &u.input, NO_READER) {
            Companion::Data(_) => continue,
            Companion::Lead(why) => why,
            Companion::Fail { summary, .. } => summary,
        };
        let reason = if why.starts_with(NO_READER) {
            format!("{why}; any tensors it holds were not fingerprinted")
        } else {
            format!("{NO_READER} ({why}); any tensors it holds were not fingerprinted")
        };
        unread.push(UnreadEntry {
            file: u.rel.clone(),
            tensor: None,
            reason,
        });
    }
    for (job, o) in opened {
        if !o.tensors.is_empty() || !o.unread.is_empty() {
            continue;
        }
        let Some(row) = o
            .rows
            .iter()
            .find(|r| matches!(r.status, RowStatus::Lead | RowStatus::Fail))
        else {
            continue;
        };
        unread.push(UnreadEntry {
            file: job.rel.clone(),
            tensor: None,
            reason: format!(
                "plugin `{}` located no tensor in it and did not prove the rest of it ({}: {}); any tensors it holds were not fingerprinted",
                job.reader.0.manifest.name, row.check, row.summary
            ),
        });
    }
    unread
}

/// The host does not take a plugin's word for where bytes lie: every range must lie inside the
/// file, and for the element types it encodes, the bytes must hold exactly the shape.
pub fn check_descriptor(t: &TensorDescriptor, file_len: u64) -> Result<(), String> {
    if crate::read::layout::strided(t, file_len)?.is_some() {
        // Checked there: strides match the shape and every element lies in the range.
        return Ok(());
    }
    if t.inline.is_some() && (!t.ranges.is_empty() || t.file.is_some()) {
        return Err("it has both decoded bytes and byte ranges in a file".into());
    }
    let mut total = t
        .inline
        .as_ref()
        .into_option()
        .map_or(0u64, |b| b.len() as u64);
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
        artifact: ArtifactRef {
            name,
            format,
            sha256,
        },
        value_encoding: VALUE_ENCODING.into(),
        tensors,
        unread,
        aliases: Vec::new(),
    }
}
