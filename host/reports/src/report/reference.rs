//! The Tensor reference row: a scan's tensors compared with a reviewed model's manifest
//! (`SOCAIR_TENSOR_REFERENCE`). It never FAILs: weights that differ from a reference are not
//! evidence of malice.

use crate::fingerprint::diff::{self, Outcome};
use crate::fingerprint::manifest::{self, TensorManifest};
use crate::read::artifact::{Artifact, FileJob};
use crate::report::document::NamedDigest;
use socair_plugin_api::{Finding, OpenedFile, ReportRow, RowStatus, Severity};
use std::path::Path;

/// A reference manifest for the Tensor reference row.
#[derive(Debug, Clone)]
pub struct Reference {
    /// File name and SHA-256 of its bytes (never its path).
    pub named: NamedDigest,
    /// The manifest.
    pub manifest: TensorManifest,
}

/// The environment variable naming the reference manifest.
pub const REFERENCE_ENV: &str = "SOCAIR_TENSOR_REFERENCE";

/// The check the reference adds.
pub const REFERENCE_CHECK: &str = "Tensor reference";

/// Most findings the reference row lists before summarising the rest.
const MAX_REFERENCE_FINDINGS: usize = socair_plugin_kit::bounded::FINDINGS_PER_KIND;

/// Reads the reference manifest with `manifests` (which may verify a signed one); an error
/// (which stops the scan) names the file.
pub fn read_reference(
    path: &Path,
    manifests: diff::ManifestReader<'_>,
) -> Result<Reference, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read the tensor reference: {e}", path.display()))?;
    let manifest = manifests(path)?.ok_or_else(|| {
        format!(
            "{}: the tensor reference is not a {} manifest",
            path.display(),
            manifest::SCHEMA
        )
    })?;
    use sha2::Digest;
    Ok(Reference {
        named: NamedDigest {
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            sha256: crate::base::digest::hex(&sha2::Sha256::digest(&bytes)),
        },
        manifest,
    })
}

/// The Tensor reference row. It never FAILs: weights that differ from a reference are not
/// evidence of malice. Within one format any difference (a tensor that differs, is renamed,
/// missing, extra, not comparable or unread) is a LEAD, so a promotion stops until a person
/// looks: a re-upload presented as the reviewed model that holds other weights is what the
/// row exists to catch. Across file formats it does not judge (NOT_TESTED), and a header-only
/// scan reads no tensor data (NOT_TESTED).
pub fn reference_row(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
    digest: &str,
    reference: &Reference,
    header_only: bool,
) -> ReportRow {
    let row = |status, summary: String, findings: Vec<Finding>| ReportRow {
        check: REFERENCE_CHECK.into(),
        status,
        summary: summary.into(),
        findings: findings.into(),
        names_severities: false,
    };
    if header_only {
        return row(
            RowStatus::NotTested,
            "a header-only scan reads no tensor data, so it cannot compare tensors with the reference".into(),
            Vec::new(),
        );
    }
    // The scan has the files open and the subject digest: only the tensors are hashed.
    let manifest = manifest::manifest_of_opened(artifact, opened, digest.to_owned());
    let (mine, theirs) = (
        diff::tensor_formats(&manifest),
        diff::tensor_formats(&reference.manifest),
    );
    if mine != theirs {
        return row(
            RowStatus::NotTested,
            format!(
                "the reference holds {} tensors and this artifact {}: across file formats the row does not judge (converters rename, reorder, split, fuse and quantize tensors)",
                theirs.into_iter().collect::<Vec<_>>().join("+"),
                mine.into_iter().collect::<Vec<_>>().join("+")
            ),
            Vec::new(),
        );
    }
    let c = diff::diff(&manifest, &reference.manifest, &Default::default());
    let s = &c.summary;
    if c.matches {
        return row(
            RowStatus::Pass,
            format!(
                "every tensor matches the reference {:?} under its own name ({} identical, {} same values)",
                reference.named.name, s.identical, s.same_values
            ),
            Vec::new(),
        );
    }
    let mut findings = Vec::new();
    for p in &c.pairs {
        if !p.renamed && matches!(p.outcome, Outcome::Identical | Outcome::SameValues) {
            continue;
        }
        let reason = if p.renamed {
            format!(
                "matches the reference's {:?} ({}) under another name",
                p.reference.name, p.reference.file
            )
        } else {
            match p.outcome {
                Outcome::Differs => "differs from the reference's tensor of the same name".into(),
                _ => {
                    "has no encoding in common with the reference's tensor of the same name".into()
                }
            }
        };
        findings.push((format!("{}: {}", p.artifact.file, p.artifact.name), reason));
    }
    for t in &c.only_in_artifact {
        findings.push((
            format!("{}: {}", t.file, t.name),
            "not in the reference".into(),
        ));
    }
    for t in &c.only_in_reference {
        findings.push((
            format!("reference {}: {}", t.file, t.name),
            "in the reference, missing here".into(),
        ));
    }
    for u in manifest.unread.iter().chain(&reference.manifest.unread) {
        findings.push((u.file.clone(), format!("unread: {}", u.reason)));
    }
    let total = findings.len();
    let mut listed: Vec<Finding> = findings
        .into_iter()
        .take(MAX_REFERENCE_FINDINGS)
        .map(|(place, reason)| Finding::new(Severity::Lead, place, reason))
        .collect();
    if total > MAX_REFERENCE_FINDINGS {
        listed.push(Finding::new(
            Severity::Note,
            "…",
            format!(
                "and {} more; run `socair tensors diff` for all",
                total - MAX_REFERENCE_FINDINGS
            ),
        ));
    }
    row(
        RowStatus::Lead,
        format!(
            "the weights are not the reference {:?}'s: {} identical, {} same values, {} renamed, {} differ, {} not comparable, {} extra, {} missing, {} unread; a person should look before this is promoted",
            reference.named.name, s.identical, s.same_values, s.renamed, s.differs, s.not_comparable, s.only_in_artifact, s.only_in_reference, s.unread
        ),
        listed,
    )
}
