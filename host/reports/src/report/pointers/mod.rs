//! What a model's files point at, judged: no clean verdict over bytes outside the artifact.
//!
//! Loaders follow names written in the files: a weight index's `weight_map`
//! ([`weight_index`]: `model.safetensors.index.json`, `pytorch_model.bin.index.json`, any JSON
//! whose `weight_map` transformers or accelerate would follow), a GGUF file's `split.count`
//! ([`gguf_split`]: llama.cpp opens the other splits beside it by name) and a tensor whose
//! bytes a reader placed in another file ([`external`]: ONNX external data). Each name must
//! resolve inside the directory to a regular file the scan read:
//!
//! - a name that leaves the directory (`..`, absolute, a backslash, a symbolic link whose
//!   target lies outside it) or names a file that is not there is a FAIL naming the file and
//!   the entry, since the loader reads bytes the scan never saw;
//! - a name of a file no reader read (an unknown format, a companion read as JSON or text),
//!   or of a link whose target is inside the directory (not followed), is a LEAD;
//! - what the loader would then load differently from what the files hold is judged by what
//!   that loader's code does (each module cites it).
//!
//! Symbolic links themselves are never followed; each one is a LEAD of its own (nothing read
//! what it points at). Everything here is bounded: at most [`MAX_FINDINGS`] findings per row.

mod external;
mod gguf_split;
mod targets;
mod weight_index;

pub use targets::MAX_FINDINGS;

use crate::read::artifact::{Artifact, FileJob};
use crate::read::modeldir::DirLink;
use crate::report::document::STRUCTURE_CHECK;
use socair_plugin_api::{Finding, OpenedFile, ReportRow, RowStatus, Severity};

/// The rows about what the artifact's files point at, each with the file it is about.
pub fn rows(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
) -> Vec<(String, ReportRow)> {
    let mut out = Vec::new();
    // (A Hugging Face snapshot's links that lead nowhere huggingface_hub puts blobs are judged
    // by the `Hugging Face cache` check: `crate::report::hub`.)
    for link in artifact.links.iter().filter(|l| l.hub.is_none()) {
        out.push((link.rel.clone(), link_row(link)));
    }
    // A directory's file with another name somewhere (a hard link: `modeldir::hard_links`).
    if artifact.is_dir {
        for f in artifact.files.iter().filter(|f| f.links > 1) {
            out.push((f.rel.clone(), hard_link_row(f.links)));
        }
    }
    // Indexes and splits name other files of a directory; a file scanned alone stays as it is
    // (one shard is judged as itself).
    let names = targets::Names::new(artifact, opened);
    if artifact.is_dir {
        out.extend(weight_index::rows(artifact, &names));
        out.extend(gguf_split::rows(opened, &names));
    }
    out.extend(external::rows(artifact, opened, &names));
    out
}

/// A LEAD for a file with `links` names (CVE-2026-34446: see `modeldir::hard_links`).
fn hard_link_row(links: u64) -> ReportRow {
    let why = format!(
        "a hard link: the file has {links} names, and nothing says where the others are; it may be a file outside the directory (onnx 1.21 refuses such a file as external data, CVE-2026-34446), whose bytes these are and which a loader writing through this name would change"
    );
    ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: RowStatus::Lead,
        summary: format!("read, but {why}").into(),
        findings: vec![Finding::new(Severity::Lead, "file", why)].into(),
        names_severities: false,
    }
}

fn link_row(link: &DirLink) -> ReportRow {
    let target = link.target.display().to_string();
    let why = if link.inside {
        format!(
            "a symbolic link to {target:?}, inside the directory, not followed: what it points at is judged under that name only, while a loader that opens this one reads it"
        )
    } else {
        format!(
            "a symbolic link to {target:?}, outside the directory (or to nothing), not followed: nothing in what it points at was checked, and a loader that opens it reads those bytes"
        )
    };
    ReportRow {
        check: STRUCTURE_CHECK.into(),
        status: RowStatus::Lead,
        summary: format!("not read: {why}").into(),
        findings: vec![Finding::new(Severity::Lead, "file", why)].into(),
        names_severities: false,
    }
}
