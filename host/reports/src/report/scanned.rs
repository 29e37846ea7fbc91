//! What a scan saw of each file of an artifact, beside its report: size, SHA-256, the formats
//! its readers read it as, its tensors' count and element types. An inventory (the CycloneDX
//! BOM, [`crate::report::cyclonedx`]) is made of it without reading anything again.

use crate::read::artifact::{data_files, AlsoRead, Artifact, FileJob};
use crate::read::modeldir::FileHash;
use crate::report::document::{Report, RowFinding};
use socair_plugin_api::{OpenedFile, ReportRow, RowStatus, Severity};
use std::collections::BTreeMap;

/// A scan's report and what it saw of each file.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// The `socair.report/v1` report.
    pub report: Report,
    /// Every file of the artifact, in byte order of their paths (one for a file).
    pub files: Vec<ScannedFile>,
    /// Every finding of a FAIL or LEAD row with the file it is about, before the rows of a
    /// directory's files are merged into one per check (a SARIF log places each in its file).
    pub findings: Vec<FileFinding>,
}

/// A finding of a FAIL or LEAD row, as the reader (or the host) made it for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFinding {
    /// The check.
    pub check: String,
    /// The file it is about: a path in a model directory, or the artifact's name (for a file
    /// alone, and for rows about the directory as a whole).
    pub file: String,
    /// Its row's status for that file: `FAIL` or `LEAD`.
    pub status: &'static str,
    /// Where in the file (empty for a row without findings).
    pub place: String,
    /// Why, as the report writes it (the row's summary for a row without findings).
    pub reason: String,
    /// The finding's own severity where its report names it (rows whose findings differ in
    /// severity); none when the row's status says it.
    pub severity: Option<Severity>,
}

/// The findings of the FAIL and LEAD rows, per check, each with its file, in the order the
/// rows were made.
pub fn findings(per_check: &[(String, Vec<(String, ReportRow)>)]) -> Vec<FileFinding> {
    let mut out = Vec::new();
    for (check, rows) in per_check {
        for (file, row) in rows {
            let status = match row.status {
                RowStatus::Fail => "FAIL",
                RowStatus::Lead => "LEAD",
                _ => continue,
            };
            let mut push = |place: String, reason: String, severity: Option<Severity>| {
                out.push(FileFinding {
                    check: check.clone(),
                    file: file.clone(),
                    status,
                    place,
                    reason,
                    severity,
                })
            };
            if row.findings.is_empty() {
                push(String::new(), row.summary.to_string(), None);
            }
            for f in row.findings.iter() {
                let f = RowFinding::of(f, row.names_severities);
                push(f.place.clone(), f.reason_text(), f.severity);
            }
        }
    }
    out
}

/// One file of a scanned artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedFile {
    /// Its path in the artifact, `/`-separated (its name, for a file).
    pub rel: String,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes (empty when the scan did not hash them: a header-only scan of
    /// an object in object storage).
    pub sha256: String,
    /// The formats readers read it as, first the one whose reading gives its tensors; empty
    /// when no reader claimed it; `data` for a file another's tensors lie in.
    pub formats: Vec<String>,
    /// How many tensors its reader located.
    pub tensors: usize,
    /// How many of them have each dtype (as the format names it).
    pub dtypes: BTreeMap<String, usize>,
    /// The name of the Hugging Face cache blob it was read from, if any.
    pub blob: Option<String>,
}

/// Each file of `artifact` with what its readers made of it.
pub fn files(
    artifact: &Artifact<'_>,
    hashes: &[FileHash],
    opened: &[(&FileJob<'_>, OpenedFile)],
    also: &[AlsoRead<'_, '_>],
) -> Vec<ScannedFile> {
    let data = data_files(opened);
    artifact
        .files
        .iter()
        .map(|f| {
            let mut formats = Vec::new();
            let (mut tensors, mut dtypes) = (0, BTreeMap::new());
            if let Some((_, o)) = opened.iter().find(|(job, _)| job.rel == f.rel) {
                formats.push(o.format.to_string());
                tensors = o.tensors.len();
                for t in o.tensors.iter() {
                    *dtypes.entry(t.dtype.to_string()).or_insert(0) += 1;
                }
            }
            for a in also.iter().filter(|a| a.job.rel == f.rel) {
                if !formats.contains(&a.format) {
                    formats.push(a.format.clone());
                }
            }
            if formats.is_empty() && data.contains(&f.rel) {
                formats.push("data".into());
            }
            ScannedFile {
                rel: f.rel.clone(),
                size: f.size,
                sha256: hashes
                    .iter()
                    .find(|h| h.0 == f.rel)
                    .map(|h| h.2.clone())
                    .unwrap_or_default(),
                formats,
                tensors,
                dtypes,
                blob: f.blob.as_ref().map(|b| b.etag.clone()),
            }
        })
        .collect()
}
