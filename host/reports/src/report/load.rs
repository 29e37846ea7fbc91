//! What a loader needs of a scanned artifact: where each tensor's bytes lie, taken from the
//! very reading the scan judged ([`scan_then`]), and nothing at all when the scan found a FAIL
//! or a LEAD. The Python package's `socair.load` maps the files and builds its arrays from
//! these places; no tensor byte is read here.

use crate::fingerprint::manifest::check_descriptor;
use crate::read::artifact::{Artifact, ArtifactError, FileJob};
use crate::read::plugins::PluginSet;
use crate::read::source::InputFile;
use crate::report::document::Report;
use crate::report::scan::{scan_then, ScanOptions};
use socair_plugin_api::{ByteOrder, OpenedFile};
use std::fs::File;
use std::path::{Path, PathBuf};

use socair_plugin_api::facts::Fact;

/// The outcome of [`load`]: the report, and the places of the tensors when it is clean.
#[derive(Debug)]
pub struct Loadable {
    /// The scan's report.
    pub report: Report,
    /// The places, when no row FAILs or is a LEAD; `None` otherwise.
    pub layout: Option<Layout>,
}

/// Where every tensor of a clean artifact lies.
#[derive(Debug, Default)]
pub struct Layout {
    /// The files holding tensor bytes, each an open handle on the file that was scanned.
    pub files: Vec<LoadFile>,
    /// Every tensor a reader located and the host checked, in reading order.
    pub tensors: Vec<LoadTensor>,
    /// What could not be located or was described inconsistently: `(file, tensor, reason)`.
    pub unread: Vec<(String, Option<String>, String)>,
}

/// A file holding tensor bytes.
#[derive(Debug)]
pub struct LoadFile {
    /// Its path as it was opened.
    pub path: PathBuf,
    /// Its length when it was scanned.
    pub len: u64,
    /// A handle on the open file the scan read.
    pub file: File,
}

/// One tensor's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadTensor {
    /// Its file, relative to the artifact (as `socair tensors` names it).
    pub file: String,
    /// Its name, as `socair tensors` names it.
    pub name: String,
    /// Its dtype as the format names it (`F32`, `Q4_K`, `<f4`...).
    pub dtype: String,
    /// Its element type in socair's vocabulary (`F32`, `BF16`...), none for block-quantized
    /// and other types without a fixed element width.
    pub element_type: Option<String>,
    /// Logical shape, outermost first.
    pub shape: Vec<u64>,
    /// Whether its elements are big-endian.
    pub big_endian: bool,
    /// What torch.load returns it as, when more than a plain tensor: `parameter`,
    /// `parameter-frozen` or `requires-grad` (from the torch readers only).
    pub torch_kind: Option<String>,
    /// Where its bytes are.
    pub bytes: TensorBytes,
}

/// Where a tensor's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorBytes {
    /// Byte ranges `(offset, len)` of `files[file]`, in row-major order.
    Ranges {
        /// Index into [`Layout::files`].
        file: usize,
        /// The ranges.
        ranges: Vec<(u64, u64)>,
    },
    /// A strided view: element `(i0, i1, …)` starts `elem × Σ iₖ·strides[k]` bytes after
    /// `base` in `files[file]`; the host checked every element lies inside the file.
    Strided {
        /// Index into [`Layout::files`].
        file: usize,
        /// Offset of element `(0, …, 0)`.
        base: u64,
        /// Element strides, outermost first.
        strides: Vec<u64>,
        /// Bytes per element.
        elem: u64,
    },
    /// Bytes the reader decoded (varint-coded ONNX values, an inflated `.npz` member).
    Inline(Vec<u8>),
}

/// Scans the artifact at `path` and, when no row FAILs or is a LEAD, returns where each
/// tensor's bytes lie in the files the scan read.
pub fn load(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
) -> Result<Loadable, ArtifactError> {
    let (scanned, layout) = scan_then(path, plugins, options, |report, artifact, opened| {
        let refused = report
            .rows
            .iter()
            .any(|r| r.status == "FAIL" || r.status == "LEAD");
        (!refused).then(|| layout_of(artifact, opened))
    })?;
    Ok(Loadable {
        report: scanned.report,
        layout: layout.transpose().map_err(|e| ArtifactError::Io {
            path: path.to_owned(),
            source: e,
        })?,
    })
}

fn layout_of(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
) -> std::io::Result<Layout> {
    let mut layout = Layout::default();
    for (file, reason) in &artifact.unreadable {
        layout.unread.push((file.clone(), None, reason.clone()));
    }
    for (job, opened) in opened {
        let kinds: std::collections::BTreeMap<&str, &str> = opened
            .facts
            .iter()
            .filter_map(|f| match f {
                Fact::TorchTensorKind { tensor, kind } => Some((tensor.as_str(), kind.as_str())),
                _ => None,
            })
            .collect();
        for u in opened.unread.iter() {
            layout.unread.push((
                job.rel.clone(),
                u.tensor.as_ref().map(|t| t.to_string()).into_option(),
                u.reason.to_string(),
            ));
        }
        for t in opened.tensors.iter() {
            let checked = artifact.input_of(job, t).and_then(|input| {
                check_descriptor(t, input.len())?;
                let strided = crate::read::layout::strided(t, input.len())?;
                Ok((input, strided))
            });
            let (input, strided) = match checked {
                Ok(found) => found,
                Err(reason) => {
                    layout.unread.push((
                        job.rel.clone(),
                        Some(t.name.to_string()),
                        format!(
                            "plugin `{}` described it inconsistently: {reason}",
                            job.reader.0.manifest.name
                        ),
                    ));
                    continue;
                }
            };
            let bytes = if let Some(inline) = t.inline.as_ref().into_option() {
                TensorBytes::Inline(inline.to_vec())
            } else {
                let file = file_index(&mut layout.files, input)?;
                match strided {
                    Some(s) => TensorBytes::Strided {
                        file,
                        base: s.base,
                        strides: s.strides,
                        elem: s.elem,
                    },
                    None => TensorBytes::Ranges {
                        file,
                        ranges: t.ranges.iter().map(|r| (r.offset, r.len)).collect(),
                    },
                }
            };
            layout.tensors.push(LoadTensor {
                file: job.rel.clone(),
                name: t.name.to_string(),
                dtype: t.dtype.to_string(),
                element_type: t.element_type.as_ref().map(|e| e.to_string()).into_option(),
                shape: t.shape.to_vec(),
                big_endian: t.byte_order == ByteOrder::Big,
                torch_kind: kinds.get(t.name.as_str()).map(|k| (*k).to_owned()),
                bytes,
            });
        }
    }
    Ok(layout)
}

/// The index of `input` in `files`, adding a handle on it the first time.
fn file_index(files: &mut Vec<LoadFile>, input: &InputFile) -> std::io::Result<usize> {
    if let Some(i) = files.iter().position(|f| f.path == input.path()) {
        return Ok(i);
    }
    let file = input.try_clone_file().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "an object in object storage cannot be mapped: download it and load the local copy",
        )
    })??;
    files.push(LoadFile {
        path: input.path().to_owned(),
        len: input.len(),
        file,
    });
    Ok(files.len() - 1)
}
