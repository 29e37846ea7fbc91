//! The `Hugging Face cache` check: a snapshot's files against what huggingface_hub wrote.
//!
//! huggingface_hub names each blob by the ETag the Hub gave for its file (2.4.0,
//! `file_download.py`: `blob_path = os.path.join(storage_folder, "blobs", etag)`, the ETag from
//! `X-Linked-Etag` or `ETag`): an LFS file's SHA-256 (64 hex digits), any other file's git blob
//! id, the SHA-1 of `blob <size>\0` and its bytes (40 hex digits). So a blob that does not hash
//! to its name was changed after it was downloaded, or put there by hand: a FAIL naming the
//! file. A link of the snapshot that leads anywhere but a blob is a FAIL naming the link
//! (huggingface_hub makes no other; [`crate::read::hfcache`] says why each is refused).

use crate::base::digest::hex;
use crate::read::artifact::Artifact;
use crate::read::hfcache::BlobName;
use crate::read::modeldir::FileHash;
use crate::read::source::InputFile;
use sha1::{Digest, Sha1};
use socair_plugin_api::{Finding, ReportRow, RowStatus};

/// The check's name.
pub const HUB_CHECK: &str = "Hugging Face cache";

/// The git blob id of a file: `git hash-object`'s SHA-1 of `blob <size>\0` and the bytes.
fn git_blob_id(path: &std::path::Path) -> std::io::Result<String> {
    let file = InputFile::open(path)?;
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", file.len()).as_bytes());
    file.for_each_chunk(0, file.len(), |chunk| h.update(chunk))?;
    Ok(hex(&h.finalize()))
}

fn row(status: RowStatus, summary: String, findings: Vec<(String, String)>) -> ReportRow {
    ReportRow {
        check: HUB_CHECK.into(),
        status,
        summary: summary.into(),
        findings: findings
            .into_iter()
            .map(|(place, reason)| Finding::new(status.finding_severity(), place, reason))
            .collect(),
        // Each finding's reason is written after its status (`FAIL: …`), as this row's reports
        // have always shown them.
        names_severities: true,
    }
}

/// The check's rows, each with the file it is about: none when the artifact is no Hugging Face
/// snapshot (no file was read through a link, no link was refused). `hashes` are the files'
/// `(relative path, size, sha256)` the scan computed for the subject digest.
pub fn rows(artifact: &Artifact<'_>, hashes: &[FileHash]) -> Vec<(String, ReportRow)> {
    let mut out = Vec::new();
    let refused: Vec<_> = artifact.links.iter().filter(|l| l.hub.is_some()).collect();
    let blobs: Vec<_> = artifact
        .files
        .iter()
        .filter_map(|f| f.blob.as_ref().map(|b| (f, b)))
        .collect();
    if blobs.is_empty() && refused.is_empty() {
        return out;
    }
    for link in refused {
        let why = link.hub.clone().unwrap_or_default();
        out.push((
            link.rel.clone(),
            row(
                RowStatus::Fail,
                format!("a link of the snapshot that does not lead to a blob: {why}"),
                vec![("file".into(), why)],
            ),
        ));
    }
    let (mut by_sha256, mut by_sha1, mut shared) = (0, 0, 0);
    for (file, blob) in &blobs {
        shared += usize::from(blob.shared.is_some());
        let verdict = match blob.name_kind() {
            BlobName::Neither => Some((
                RowStatus::Lead,
                format!(
                    "its blob's name {:?} is neither a SHA-256 nor a git blob id, the two names huggingface_hub gives blobs (the ETag the Hub sent): nothing says what its bytes should be",
                    blob.etag
                ),
            )),
            kind => {
                let (what, actual) = if matches!(kind, BlobName::Sha256) {
                    by_sha256 += 1;
                    let sha = hashes.iter().find(|h| h.0 == file.rel).map(|h| h.2.clone());
                    ("SHA-256", sha.ok_or_else(|| "not hashed".to_owned()))
                } else {
                    by_sha1 += 1;
                    let id = git_blob_id(&blob.path).map_err(|e| e.to_string());
                    ("git blob id", id)
                };
                match actual {
                    Ok(h) if h.eq_ignore_ascii_case(&blob.etag) => None,
                    Ok(h) => Some((
                        RowStatus::Fail,
                        format!(
                            "its {what} is {h}, not the name of its blob: the cache was changed after huggingface_hub downloaded the file (or the blob was put there by hand)"
                        ),
                    )),
                    Err(e) => Some((
                        RowStatus::Lead,
                        format!("its {what} could not be computed: {e}"),
                    )),
                }
            }
        };
        let Some((status, why)) = verdict else {
            continue;
        };
        let finding = (format!("blobs/{}", blob.etag), why.clone());
        out.push((file.rel.clone(), row(status, why, vec![finding])));
    }
    if !blobs.is_empty() {
        let in_store = if shared > 0 {
            format!(" ({shared} of them in the cache's shared blob store)")
        } else {
            String::new()
        };
        out.push((
            artifact.name.clone(),
            row(
                RowStatus::Pass,
                format!(
                    "{} file{} read through the snapshot's links to the repository's blobs{in_store}; {by_sha256} blob{} named by a SHA-256 and {by_sha1} by a git blob id checked against their bytes",
                    blobs.len(),
                    if blobs.len() == 1 { "" } else { "s" },
                    if by_sha256 == 1 { "" } else { "s" },
                ),
                Vec::new(),
            ),
        ));
    }
    out
}
