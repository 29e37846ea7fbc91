//! `socair scan`: the `socair.report/v1` report of a model file or directory.
//!
//! Each plugin reports rows for the files it reads; for a directory the host merges the rows
//! of one check across files (the worst status wins: FAIL, then LEAD, then NOT_TESTED, then
//! PASS) with each finding's place prefixed by its file. Files no plugin reads are listed too:
//! one that looks like a pickle is a LEAD, since nothing has checked what it would run.

use crate::artifact::{Artifact, ArtifactError};
use crate::plugins::PluginSet;
use serde::{Deserialize, Serialize};
use socair_plugin_api::{abi_stable::std_types::RString, ReadOptions, ReportRow, RowStatus};
use std::collections::BTreeMap;
use std::path::Path;

/// The report's schema name.
pub const SCHEMA: &str = "socair.report/v1";

inventory::submit! {
    crate::rules::RuleSet {
        name: "socair.report",
        version: "1",
        id: SCHEMA,
        summary: "scan report: artifact, tool, rules, scope, rows of PASS/FAIL/LEAD/NOT_TESTED",
    }
}

/// The check plugins report for the format's structure.
pub const STRUCTURE_CHECK: &str = "Format and structure";
/// The check pickle readers report.
pub const PICKLE_CHECK: &str = "Pickle opcode scan";

/// A report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What was scanned.
    pub artifact: ReportArtifact,
    /// What scanned it.
    pub tool: Tool,
    /// The rule sets applied, name → version.
    pub rules: BTreeMap<String, String>,
    /// How much was scanned.
    pub scope: Scope,
    /// One row per check.
    pub rows: Vec<Row>,
}

/// The artifact a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportArtifact {
    /// File or directory name (never a path).
    pub name: String,
    /// `model directory`, or the file's format.
    pub format: String,
    /// The subject digest.
    pub sha256: String,
    /// Total size.
    pub size_bytes: u64,
}

/// The tool and the plugins that read the artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// `socair`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The plugins that read files of the artifact.
    pub plugins: Vec<PluginUse>,
}

/// A plugin used for a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginUse {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// SHA-256 of its library file.
    pub sha256: String,
}

/// The scan's scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// `full` or `header-only`.
    pub mode: String,
    /// The reference manifest, when `SOCAIR_TENSOR_REFERENCE` was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_data: Option<NamedDigest>,
    /// Globals the operator reviewed (`--reviewed-classes`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed_classes: Option<Vec<String>>,
}

/// A file named by its name and digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedDigest {
    /// File name.
    pub name: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
}

/// One row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The check.
    pub check: String,
    /// `PASS`, `FAIL`, `LEAD` or `NOT_TESTED`.
    pub status: String,
    /// One sentence.
    pub summary: String,
    /// What was found, and where.
    pub findings: Vec<RowFinding>,
}

/// One finding of a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowFinding {
    /// Where.
    pub place: String,
    /// Why.
    pub reason: String,
}

/// A status's name in reports.
pub fn status_name(s: RowStatus) -> &'static str {
    match s {
        RowStatus::Pass => "PASS",
        RowStatus::Fail => "FAIL",
        RowStatus::Lead => "LEAD",
        RowStatus::NotTested => "NOT_TESTED",
    }
}

fn rank(s: RowStatus) -> u8 {
    match s {
        RowStatus::Pass => 0,
        RowStatus::NotTested => 1,
        RowStatus::Lead => 2,
        RowStatus::Fail => 3,
    }
}

/// Options for a scan.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Read headers only.
    pub header_only: bool,
    /// Reviewed globals, when `--reviewed-classes` was given.
    pub reviewed: Option<Vec<String>>,
    /// The reference manifest (`SOCAIR_TENSOR_REFERENCE`), already read.
    pub reference: Option<Reference>,
}

/// A reference manifest for the Tensor reference row.
#[derive(Debug, Clone)]
pub struct Reference {
    /// File name and SHA-256 of its bytes (never its path).
    pub named: NamedDigest,
    /// The manifest.
    pub manifest: crate::tensors::TensorManifest,
}

/// The environment variable naming the reference manifest.
pub const REFERENCE_ENV: &str = "SOCAIR_TENSOR_REFERENCE";

/// The check the reference adds.
pub const REFERENCE_CHECK: &str = "Tensor reference";

/// Most findings the reference row lists before summarising the rest.
const MAX_REFERENCE_FINDINGS: usize = 100;

/// Reads the reference manifest; an error (which stops the scan) names the file.
pub fn read_reference(path: &Path) -> Result<Reference, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read the tensor reference: {e}", path.display()))?;
    let manifest = crate::diff::read_manifest(path)?.ok_or_else(|| {
        format!(
            "{}: the tensor reference is not a {} manifest",
            path.display(),
            crate::tensors::SCHEMA
        )
    })?;
    use sha2::Digest;
    Ok(Reference {
        named: NamedDigest {
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            sha256: crate::fingerprint::hex(&sha2::Sha256::digest(&bytes)),
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
fn reference_row(
    artifact: &Artifact<'_>,
    opened: &[(&crate::artifact::FileJob<'_>, socair_plugin_api::OpenedFile)],
    digest: &str,
    reference: &Reference,
    header_only: bool,
) -> ReportRow {
    let row = |status, summary: String, findings: Vec<socair_plugin_api::Finding>| ReportRow {
        check: REFERENCE_CHECK.into(),
        status,
        summary: summary.into(),
        findings: findings.into(),
    };
    if header_only {
        return row(
            RowStatus::NotTested,
            "a header-only scan reads no tensor data, so it cannot compare tensors with the reference".into(),
            Vec::new(),
        );
    }
    // The scan has the files open and the subject digest: only the tensors are hashed.
    let manifest = crate::tensors::manifest_of_opened(artifact, opened, digest.to_owned());
    let (mine, theirs) = (
        crate::diff::tensor_formats(&manifest),
        crate::diff::tensor_formats(&reference.manifest),
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
    let c = crate::diff::diff(&manifest, &reference.manifest, &Default::default());
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
        if !p.renamed
            && matches!(
                p.outcome,
                crate::diff::Outcome::Identical | crate::diff::Outcome::SameValues
            )
        {
            continue;
        }
        let reason = if p.renamed {
            format!(
                "matches the reference's {:?} ({}) under another name",
                p.reference.name, p.reference.file
            )
        } else {
            match p.outcome {
                crate::diff::Outcome::Differs => {
                    "differs from the reference's tensor of the same name".into()
                }
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
    let mut listed: Vec<socair_plugin_api::Finding> = findings
        .into_iter()
        .take(MAX_REFERENCE_FINDINGS)
        .map(|(place, reason)| socair_plugin_api::Finding {
            place: place.into(),
            reason: reason.into(),
        })
        .collect();
    if total > MAX_REFERENCE_FINDINGS {
        listed.push(socair_plugin_api::Finding {
            place: "…".into(),
            reason: format!(
                "and {} more; run `socair tensors diff` for all",
                total - MAX_REFERENCE_FINDINGS
            )
            .into(),
        });
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

/// Scans the artifact at `path`.
pub fn scan(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
) -> Result<Report, ArtifactError> {
    let artifact = Artifact::resolve(path, plugins)?;
    let read_options = ReadOptions {
        header_only: options.header_only,
        reviewed_globals: options
            .reviewed
            .iter()
            .flatten()
            .map(|s| RString::from(s.as_str()))
            .collect(),
    };
    let (digest, opened) = rayon::join(
        || artifact.subject_digest(),
        || artifact.open_all(&read_options),
    );
    let (digest, opened) = (digest?, opened?);

    // (file, row) pairs in file order, merged per check below.
    let mut per_check: Vec<(String, Vec<(String, ReportRow)>)> = Vec::new();
    let mut push = |file: &str, row: ReportRow| {
        let check = row.check.to_string();
        match per_check.iter_mut().find(|(c, _)| *c == check) {
            Some((_, rows)) => rows.push((file.to_owned(), row)),
            None => per_check.push((check, vec![(file.to_owned(), row)])),
        }
    };
    let mut rules = BTreeMap::new();
    let mut used: Vec<PluginUse> = Vec::new();
    for (job, opened) in &opened {
        let plugin = job.reader.0;
        for r in &plugin.manifest.rule_sets {
            if let Some((name, version)) = r.split_once('/') {
                rules.insert(name.to_owned(), version.to_owned());
            }
        }
        if !used.iter().any(|u| u.name == plugin.manifest.name) {
            used.push(PluginUse {
                name: plugin.manifest.name.clone(),
                version: plugin.manifest.version.clone(),
                sha256: plugin.sha256.clone(),
            });
        }
        for row in opened.rows.iter() {
            push(&job.rel, row.clone());
        }
    }
    for (file, reason) in &artifact.unreadable {
        push(
            file,
            ReportRow {
                check: STRUCTURE_CHECK.into(),
                status: RowStatus::NotTested,
                summary: format!("not read: {reason}").into(),
                findings: Default::default(),
            },
        );
    }
    // Files that hold another file's tensor bytes (ONNX external data) are read as that data.
    let data_files = crate::artifact::data_files(&opened);
    for u in artifact
        .unclaimed
        .iter()
        .filter(|u| !data_files.contains(&u.rel))
    {
        let pickle_like = u.head.first() == Some(&0x80)
            || [
                ".pkl", ".pickle", ".joblib", ".pt", ".pth", ".bin", ".ckpt", ".dat",
            ]
            .iter()
            .any(|ext| u.rel.ends_with(ext));
        if pickle_like {
            push(
                &u.rel,
                ReportRow {
                    check: PICKLE_CHECK.into(),
                    status: RowStatus::Lead,
                    summary: "a file that looks like a pickle, which no loaded plugin reads".into(),
                    findings: vec![socair_plugin_api::Finding {
                        place: "byte 0".into(),
                        reason: "it starts like a pickle or is named like one, and nothing has checked what loading it would run".into(),
                    }]
                    .into(),
                },
            );
        } else if !artifact.is_dir {
            push(
                &u.rel,
                ReportRow {
                    check: STRUCTURE_CHECK.into(),
                    status: RowStatus::NotTested,
                    summary: "no loaded plugin reads this format".into(),
                    findings: Default::default(),
                },
            );
        }
    }
    if artifact.is_dir {
        rules.insert("socair.modeldir".into(), "1".into());
    }
    rules.insert("socair.report".into(), "1".into());
    if let Some(reference) = &options.reference {
        let r = reference_row(&artifact, &opened, &digest, reference, options.header_only);
        push(&artifact.name, r);
    }
    let rows = per_check
        .into_iter()
        .map(|(check, rows)| merge(check, rows, artifact.is_dir))
        .collect();
    Ok(Report {
        schema: SCHEMA.into(),
        artifact: ReportArtifact {
            name: artifact.name.clone(),
            format: artifact.format(),
            sha256: digest,
            size_bytes: artifact.size_bytes(),
        },
        tool: Tool {
            name: "socair".into(),
            version: crate::VERSION.into(),
            plugins: used,
        },
        rules,
        scope: Scope {
            mode: if options.header_only {
                "header-only".into()
            } else {
                "full".into()
            },
            reference_data: options.reference.as_ref().map(|r| r.named.clone()),
            reviewed_classes: options.reviewed.clone(),
        },
        rows,
    })
}

fn merge(check: String, rows: Vec<(String, ReportRow)>, in_dir: bool) -> Row {
    let status = rows
        .iter()
        .map(|(_, r)| r.status)
        .max_by_key(|s| rank(*s))
        .unwrap_or(RowStatus::NotTested);
    let summary = if in_dir {
        rows.iter()
            .map(|(file, r)| format!("{file}: {} {}", status_name(r.status), r.summary))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        rows.iter()
            .map(|(_, r)| r.summary.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let findings = rows
        .iter()
        .flat_map(|(file, r)| {
            r.findings.iter().map(move |f| RowFinding {
                place: if in_dir {
                    format!("{file}: {}", f.place)
                } else {
                    f.place.to_string()
                },
                reason: f.reason.to_string(),
            })
        })
        .collect();
    Row {
        check,
        status: status_name(status).into(),
        summary,
        findings,
    }
}

/// Reads a `--reviewed-classes` file: one `module.name` per line; blank lines and `#`
/// comments ignored.
pub fn read_reviewed(path: &Path) -> std::io::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if !line.contains('.') || line.contains(char::is_whitespace) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("line {}: {line:?} is not module.name", i + 1),
            ));
        }
        out.push(line.to_owned());
    }
    out.sort();
    out.dedup();
    Ok(out)
}
