//! The artifacts under a directory (`socair scan --each DIR`), found as socair's readers and
//! the loaders they mirror find models, never by a list of extensions:
//!
//! 1. a Hugging Face cache repository folder (`models--org--name/` with `snapshots/`): each of
//!    its snapshots is one artifact (a model directory), and its `blobs/` and `refs/` are not
//!    walked; the cache's shared blob store (`blobs/` marked by `.huggingface-shared-blobs`) is
//!    not walked either (its files are the snapshots' blobs);
//! 2. a model directory is one artifact, scanned whole and not walked further: a snapshot, or
//!    a directory that a loader opens as a whole by a file it looks for by name
//!    ([`MODEL_DIR_FILES`]), or one holding a file whose reader reads the files beside it
//!    ([`DIRECTORY_FORMATS`]; an ONNX model only when its reader, reading its headers, places
//!    tensor bytes in another file: external data);
//! 3. anywhere else, each regular file that a reader claims ([`reader_format`]: by its
//!    content, or by a name that says its format) is one artifact, and each directory is
//!    walked by these rules again.
//!
//! Symbolic links are not followed (they are counted, and a scan of a model directory judges
//! its own); version-control folders (`.git`, `.hg`, `.svn`) are not walked. The result is
//! sorted by path in byte order, so a run lists artifacts in the same order every time.

use crate::read::artifact::{reader_format, Artifact, ReaderChoice, DETECT_HEAD};
use crate::read::hfcache::Snapshot;
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use std::path::{Path, PathBuf};

/// Names a loader looks for to open a directory as one model, and the loader.
pub const MODEL_DIR_FILES: &[(&str, &str)] = &[
    ("config.json", "transformers' from_pretrained (CONFIG_NAME)"),
    (
        "model_index.json",
        "diffusers' DiffusionPipeline.from_pretrained",
    ),
    ("adapter_config.json", "peft's PeftModel.from_pretrained"),
    ("modules.json", "sentence-transformers' SentenceTransformer"),
    ("saved_model.pb", "tf.saved_model.load"),
    ("saved_model.pbtxt", "tf.saved_model.load"),
    ("checkpoint", "tf.train.latest_checkpoint"),
    (
        "Manifest.json",
        "coremltools' MLModel and Core ML's package loader (a .mlpackage)",
    ),
];

/// Name endings a loader follows to other files of the directory: weight indexes
/// (`model.safetensors.index.json`, `pytorch_model.bin.index.json`) and Keras 3's sharded
/// weights (`*.weights.json`).
pub const MODEL_DIR_SUFFIXES: &[&str] = &[".index.json", ".weights.json"];

/// Formats whose readers read the files beside the one they open (a checkpoint's data
/// shards, a program's parameters): a directory holding one is one model.
pub const DIRECTORY_FORMATS: &[&str] = &[
    "savedmodel",
    "tf-checkpoint",
    "paddle-program",
    "paddle-pir",
];

/// Formats whose readers may place tensor bytes in a file beside the one they open (ONNX's
/// external data, an OpenVINO IR's `.bin`): such a file is read (headers only) to see whether
/// this one does.
const EXTERNAL_DATA_FORMATS: &[&str] = &["onnx", "openvino-ir"];

/// Version-control folders, which hold no models of their own.
const NOT_WALKED: &[&str] = &[".git", ".hg", ".svn"];

/// Why a path cannot be walked.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct DiscoverError {
    /// Where.
    pub path: PathBuf,
    /// What.
    pub source: std::io::Error,
}

/// What [`artifacts_under`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// The artifacts, sorted by path in byte order.
    pub artifacts: Vec<PathBuf>,
    /// Regular files no reader claims (configs, text, images…), not scanned.
    pub unclaimed: usize,
    /// Symbolic links (and FIFOs, sockets, devices), not followed.
    pub links: usize,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DiscoverError + '_ {
    move |source| DiscoverError {
        path: path.to_owned(),
        source,
    }
}

/// The format of the reader that claims the file at `path` (see [`reader_format`]).
fn claim(
    path: &Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<Option<String>, DiscoverError> {
    let input = InputFile::open_with(path, false).map_err(io(path))?;
    let mut head = vec![0u8; (input.len() as usize).min(DETECT_HEAD)];
    input.read_exact_at(0, &mut head).map_err(io(path))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    Ok(reader_format(&head, &input, &name, plugins, choice))
}

/// A directory's entries, sorted by name in byte order: (path, name, is dir, is file).
fn entries(dir: &Path) -> Result<Vec<(PathBuf, String, bool, bool)>, DiscoverError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let e = e.map_err(io(dir))?;
        let kind = e.file_type().map_err(io(&e.path()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        out.push((e.path(), name, kind.is_dir(), kind.is_file()));
    }
    out.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
    Ok(out)
}

/// Whether `dir` is a Hugging Face cache repository folder: named as `repo_folder_name` names
/// one, holding `snapshots/`.
fn is_hub_repo(dir: &Path) -> bool {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    ["models--", "datasets--", "spaces--", "kernels--"]
        .iter()
        .any(|p| name.starts_with(p))
        && dir.join("snapshots").is_dir()
}

/// Whether `dir` is one model, by rule 2.
fn is_model_dir(
    dir: &Path,
    list: &[(PathBuf, String, bool, bool)],
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<bool, DiscoverError> {
    if Snapshot::of(dir).is_some() {
        return Ok(true);
    }
    let named = list.iter().any(|(_, name, _, is_file)| {
        *is_file
            && (MODEL_DIR_FILES.iter().any(|(n, _)| n == name)
                || MODEL_DIR_SUFFIXES.iter().any(|s| name.ends_with(s)))
    });
    if named {
        return Ok(true);
    }
    for (path, _, _, is_file) in list {
        if *is_file {
            if let Some(format) = claim(path, plugins, choice)? {
                if DIRECTORY_FORMATS.contains(&format.as_str())
                    || (EXTERNAL_DATA_FORMATS.contains(&format.as_str())
                        && places_bytes_elsewhere(path, plugins, choice))
                {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// Whether the reader of the file at `path`, reading its headers, places tensor bytes in
/// another file (which a scan of the file alone then cannot read).
fn places_bytes_elsewhere(path: &Path, plugins: &PluginSet, choice: &ReaderChoice) -> bool {
    let Ok(artifact) = Artifact::resolve_with(path, plugins, choice, false) else {
        return false;
    };
    let options = socair_plugin_api::ReadOptions {
        header_only: true,
        reviewed_globals: Default::default(),
        rules: Default::default(),
    };
    artifact.open_all(&options).is_ok() && !artifact.set_aside().is_empty()
}

/// The artifacts under `root` (a directory, or a file: itself when a reader claims it).
pub fn artifacts_under(
    root: &Path,
    plugins: &PluginSet,
    choice: &ReaderChoice,
) -> Result<Found, DiscoverError> {
    let mut found = Found::default();
    let meta = std::fs::symlink_metadata(root).map_err(io(root))?;
    if meta.file_type().is_symlink() {
        found.links += 1;
        return Ok(found);
    }
    if meta.is_file() {
        match claim(root, plugins, choice)? {
            Some(_) => found.artifacts.push(root.to_owned()),
            None => found.unclaimed += 1,
        }
        return Ok(found);
    }
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        if is_hub_repo(&dir) {
            for (path, _, is_dir, _) in entries(&dir.join("snapshots"))? {
                if is_dir {
                    found.artifacts.push(path);
                }
            }
            continue;
        }
        let list = entries(&dir)?;
        let is_shared_store = list
            .iter()
            .any(|(_, name, _, is_file)| *is_file && name == ".huggingface-shared-blobs");
        if is_shared_store {
            continue;
        }
        if is_model_dir(&dir, &list, plugins, choice)? {
            found.artifacts.push(dir);
            continue;
        }
        for (path, name, is_dir, is_file) in list {
            if is_dir {
                if !NOT_WALKED.contains(&name.as_str()) {
                    pending.push(path);
                }
            } else if is_file {
                match claim(&path, plugins, choice)? {
                    Some(_) => found.artifacts.push(path),
                    None => found.unclaimed += 1,
                }
            } else {
                found.links += 1;
            }
        }
    }
    // `./models/a.pt` as `models/a.pt`: the paths a report and a SARIF log name, relative
    // to where socair runs (the repository's root, for code scanning).
    for p in found.artifacts.iter_mut() {
        if let Ok(rest) = p.strip_prefix(".") {
            if !rest.as_os_str().is_empty() {
                *p = rest.to_owned();
            }
        }
    }
    found.artifacts.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    Ok(found)
}
