//! Tensors whose bytes a reader placed in another file (`TensorDescriptor::file`: ONNX
//! external data, `location` in a TensorProto's `external_data`).
//!
//! onnx 1.23's `onnx/external_data_helper.py` `load_external_data_for_tensor` opens
//! `os.path.join(base_dir, location)` (its checker refuses only what leaves the directory
//! lexically: `..`, absolute paths), follows symbolic links, seeks to `offset` and reads
//! `length` bytes (fewer when the file is shorter); onnxruntime reads the same file. So: the
//! named file must be a regular file of the directory (missing, or a link leading outside:
//! FAIL; a link inside, never followed: LEAD), each range must lie inside it (a LEAD when it
//! does not: loaders read fewer bytes or refuse), and a model file scanned alone whose tensors
//! lie in other files has bytes the scan never read (a LEAD: scan the directory).

use super::targets::{judge_target, resolve, Findings, Names, Target};
use crate::read::artifact::{Artifact, FileJob};
use socair_plugin_api::{OpenedFile, ReportRow, RowStatus};
use std::collections::BTreeMap;

const LOADER: &str = "onnx's load_external_data_for_tensor (and onnxruntime)";

/// The tensors of one model file whose bytes one other file holds.
#[derive(Default)]
struct Named {
    tensors: Vec<String>,
    /// Why the host set them aside as unread, when it did.
    set_aside: Option<String>,
}

/// A row per model file whose tensors lie in files that are not there, not the
/// directory's, past their ends, or (a file scanned alone) not part of the scan.
pub(super) fn rows(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
    names: &Names<'_, '_>,
) -> Vec<(String, ReportRow)> {
    // Per model file: the other files its tensors name, with those tensors.
    let mut named: BTreeMap<String, BTreeMap<String, Named>> = BTreeMap::new();
    for s in artifact.set_aside() {
        let n = named.entry(s.rel).or_default().entry(s.file).or_default();
        n.tensors.push(s.tensor);
        n.set_aside.get_or_insert(s.reason);
    }
    // Tensors located in another file: their ranges are checked against its length here.
    let mut past_end: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for (job, o) in opened {
        for t in o.tensors.iter() {
            let Some(file) = t.file.as_ref().into_option() else {
                continue;
            };
            named
                .entry(job.rel.clone())
                .or_default()
                .entry(file.to_string())
                .or_default()
                .tensors
                .push(t.name.to_string());
            let Ok(input) = artifact.input_of(job, t) else {
                continue;
            };
            let len = input.len();
            let outside = t
                .ranges
                .iter()
                .find(|r| r.offset.checked_add(r.len).is_none_or(|end| end > len));
            if let Some(r) = outside {
                past_end.entry(job.rel.as_str()).or_default().push((
                    t.name.to_string(),
                    format!(
                        "its {} bytes at offset {} in {:?} lie past the end of that {len}-byte file: {LOADER} read fewer bytes or refuse the model",
                        r.len,
                        r.offset,
                        file.as_str()
                    ),
                ));
            }
        }
    }
    let mut out = Vec::new();
    for (rel, files) in &named {
        let mut found = Findings::default();
        for (file, n) in files {
            let place = match n.tensors.as_slice() {
                [one] => format!("tensor {one:?}"),
                [one, rest @ ..] => format!("tensor {one:?} (and {} more)", rest.len()),
                [] => continue,
            };
            if !artifact.is_dir {
                found.add(
                    RowStatus::Lead,
                    place,
                    format!(
                        "its bytes lie in {file:?}, beside the file scanned but not part of it: nothing read them; scan the model's directory so that the scan (and its digest) covers that file"
                    ),
                );
                continue;
            }
            let resolved = match resolve(rel, file) {
                Ok(r) => r,
                Err(why) => {
                    found.add(
                        RowStatus::Fail,
                        place,
                        format!("its external data location {why}"),
                    );
                    continue;
                }
            };
            match names.target(&resolved) {
                // Data files are read as bytes, whoever claims them (or none).
                Target::Read(_) | Target::NotRead(_) => {
                    if let Some(why) = &n.set_aside {
                        found.add(RowStatus::Lead, place, format!("not read: {why}"));
                    }
                }
                t => {
                    if let Some((status, why)) = judge_target(&t, &resolved, LOADER) {
                        found.add(status, place, format!("its external data location {why}"));
                    }
                }
            }
        }
        for (tensor, why) in past_end.get(rel.as_str()).into_iter().flatten() {
            found.add(RowStatus::Lead, format!("tensor {tensor:?}"), why.clone());
        }
        if found.is_empty() {
            continue;
        }
        out.push((
            rel.clone(),
            found.row("tensor bytes in other files", String::new()),
        ));
    }
    out
}
