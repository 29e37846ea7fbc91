//! `socair scan`: the `socair.report/v1` report of a model file or directory.
//!
//! Each plugin reports rows for the files it reads; for a directory the host merges the rows
//! of one check across files (the worst status wins: FAIL, then LEAD, then NOT_TESTED, then
//! PASS) with each finding's place prefixed by its file. Files no plugin reads are listed too:
//! one that looks like a pickle is a LEAD, since nothing has checked what it would run.
//!
//! A file that several plugins claim is read by each of them and every verdict counts: a FAIL
//! from any of them FAILs the file, its row saying which reader found it ("also read as
//! torch-legacy by plugin torch-zip: …"), and two readings of one file as different formats
//! are a LEAD even when both are clean (a polyglot is a file loaders read differently).
//! What the files point at (index files, GGUF splits, ONNX external data) is judged in
//! [`crate::report::pointers`].

use crate::read::artifact::{
    data_files, AlsoRead, Artifact, ArtifactError, FileJob, ReaderChoice, Unclaimed,
};
use crate::read::modeldir::FileHash;
use crate::read::plugins::{effective_rules, LoadedPlugin, PluginSet};
use crate::report::companion::{classify, Companion};
use crate::report::document::{
    status_name, PluginUse, Report, ReportArtifact, Row, RowFinding, Scope, Tool,
    DIGEST_NOT_COMPUTED, PICKLE_CHECK, SCHEMA, STRUCTURE_CHECK,
};
use crate::report::reference::{reference_row, Reference};
use crate::report::scanned::Scanned;
use socair_plugin_api::{
    abi_stable::std_types::RString, OpenedFile, ReadOptions, ReportRow, RowStatus,
};
use std::collections::BTreeMap;
use std::path::Path;

/// Options for a scan.
#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Read headers only.
    pub header_only: bool,
    /// Reviewed globals, when `--reviewed-classes` was given.
    pub reviewed: Option<Vec<String>>,
    /// The reference manifest (`SOCAIR_TENSOR_REFERENCE`), already read.
    pub reference: Option<Reference>,
    /// How readers are chosen when several plugins claim a file.
    pub readers: ReaderChoice,
    /// Why the subject digest is not computed, when the caller has no use for it (a loader
    /// that reads the structure only): the report says so instead of naming a subject.
    pub digest_not_computed: Option<String>,
}

/// Scans the artifact at `path`.
pub fn scan(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
) -> Result<Report, ArtifactError> {
    Ok(scan_detailed(path, plugins, options)?.report)
}

/// Scans the artifact at `path`: its report, and what the scan saw of each file (for an
/// inventory such as a CycloneDX BOM).
pub fn scan_detailed(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
) -> Result<Scanned, ArtifactError> {
    scan_then(path, plugins, options, |_, _, _| ()).map(|(scanned, ())| scanned)
}

/// Scans the artifact at `path`, then calls `then` with the report and the files as the scan
/// opened and read them, before they are closed: a loader ([`crate::report::load`]) takes
/// its tensors' places from the very reading its report judged, not from a second opening
/// of a path whose file may have been replaced in between.
pub fn scan_then<R>(
    path: &Path,
    plugins: &PluginSet,
    options: &ScanOptions,
    then: impl FnOnce(&Report, &Artifact<'_>, &[(&FileJob<'_>, OpenedFile)]) -> R,
) -> Result<(Scanned, R), ArtifactError> {
    let artifact = Artifact::resolve_to_judge(path, plugins, &options.readers)?;
    let read_options = ReadOptions {
        rules: Default::default(),
        header_only: options.header_only,
        reviewed_globals: options
            .reviewed
            .iter()
            .flatten()
            .map(|s| RString::from(s.as_str()))
            .collect(),
    };
    // A header-only scan of a remote object fetches what the readers ask for (a few
    // megabytes of a multi-gigabyte checkpoint), never every byte: its digest is not computed,
    // and the report says so instead of naming a subject.
    // A caller with no use for the digest (a loader) skips it, except in a Hugging Face
    // snapshot, whose blobs are checked against their names with these very hashes.
    let has_blobs = artifact.files.iter().any(|f| f.blob.is_some());
    let digest_skipped = options.header_only && artifact.is_remote()
        || (options.digest_not_computed.is_some() && !has_blobs);
    let Readings {
        hashes,
        digest,
        opened,
        also,
    } = read_and_hash(
        &artifact,
        &read_options,
        options.header_only,
        digest_skipped,
    )?;

    let (mut rules, used) = plugins_used(&artifact, &opened, &also);
    let mut per_check = PerCheck::default();
    per_check.read(&opened, &also);
    per_check.not_read(&artifact, &opened);
    // What the files point at: index entries, GGUF splits, external data, links.
    for (file, row) in crate::report::pointers::rows(&artifact, &opened) {
        per_check.push(&file, row);
    }
    // A Hugging Face snapshot: its links and its blobs against their names.
    for (file, row) in crate::report::hub::rows(&artifact, &hashes) {
        per_check.push(&file, row);
    }
    if artifact.is_dir {
        rules.insert("socair.modeldir".into(), "1".into());
    }
    rules.insert("socair.report".into(), "1".into());
    if let Some(reference) = &options.reference {
        let r = reference_row(&artifact, &opened, &digest, reference, options.header_only);
        per_check.push(&artifact.name, r);
    }
    let per_check = per_check.0;
    let findings = crate::report::scanned::findings(&per_check);
    let rows = per_check
        .into_iter()
        .map(|(check, rows)| merge(check, rows, artifact.is_dir))
        .collect();
    let files = crate::report::scanned::files(&artifact, &hashes, &opened, &also);
    let report = Report {
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
        scope: scope(options, digest_skipped),
        rows,
    };
    let after = then(&report, &artifact, &opened);
    Ok((
        Scanned {
            report,
            files,
            findings,
        },
        after,
    ))
}

/// What the readers and the digest made of an artifact's files.
struct Readings<'a, 'p> {
    /// Each file's SHA-256.
    hashes: Vec<FileHash>,
    /// The subject digest (empty when skipped).
    digest: String,
    /// Each file as its chosen reader opened it.
    opened: Vec<(&'a FileJob<'p>, OpenedFile)>,
    /// Each file as every other plugin that claims it read it.
    also: Vec<AlsoRead<'a, 'p>>,
}

/// Opens every file with its readers and hashes the files, reading each byte once where the
/// readers read every byte.
fn read_and_hash<'a, 'p>(
    artifact: &'a Artifact<'p>,
    read_options: &ReadOptions,
    header_only: bool,
    digest_skipped: bool,
) -> Result<Readings<'a, 'p>, ArtifactError> {
    let ((hashes, digest), (opened, also)) = if header_only || digest_skipped {
        // The readers read headers only (or no digest is wanted): the digest, if any, reads
        // the files beside them.
        let (hashed, opened) = rayon::join(
            || {
                if digest_skipped {
                    Ok((Vec::new(), String::new()))
                } else {
                    artifact.file_hashes()
                }
            },
            || {
                let opened = artifact.open_all(read_options)?;
                Ok::<_, ArtifactError>((opened, artifact.open_also(read_options)?))
            },
        );
        (hashed?, opened?)
    } else {
        // The readers read every byte they check (the CRC-32 of every zip record): the digest
        // is computed from those reads, each byte read once, and finished (the bytes no reader
        // read) beside the other readers of a file several claim.
        artifact.digest_as_read();
        let opened = artifact.open_all(read_options)?;
        let (hashed, also) = rayon::join(
            || artifact.file_hashes_after_reads(),
            || artifact.open_also(read_options),
        );
        (hashed?, (opened, also?))
    };
    Ok(Readings {
        hashes,
        digest,
        opened,
        also,
    })
}

/// The rule sets the plugins that read the files ran, and those plugins, each once, in the
/// order they first read a file.
fn plugins_used(
    artifact: &Artifact<'_>,
    opened: &[(&FileJob<'_>, OpenedFile)],
    also: &[AlsoRead<'_, '_>],
) -> (BTreeMap<String, String>, Vec<PluginUse>) {
    let mut rules = BTreeMap::new();
    let mut used: Vec<PluginUse> = Vec::new();
    let readers = opened.iter().map(|(job, _)| job.reader.0);
    for plugin in readers.chain(also.iter().map(|a| a.plugin)) {
        rules.extend(effective_rules(plugin, &artifact.rules));
        if !used.iter().any(|u| u.name == plugin.manifest.name) {
            used.push(PluginUse {
                name: plugin.manifest.name.clone(),
                version: plugin.manifest.version.clone(),
                sha256: plugin.sha256().to_owned(),
            });
        }
    }
    (rules, used)
}

/// `(file, row)` pairs in file order, by check in the order checks first appear; merged per
/// check into the report's rows.
#[derive(Default)]
struct PerCheck(Vec<(String, Vec<(String, ReportRow)>)>);

impl PerCheck {
    /// Adds `file`'s `row` under its check.
    fn push(&mut self, file: &str, row: ReportRow) {
        let check = row.check.to_string();
        match self.0.iter_mut().find(|(c, _)| *c == check) {
            Some((_, rows)) => rows.push((file.to_owned(), row)),
            None => self.0.push((check, vec![(file.to_owned(), row)])),
        }
    }

    /// The rows of the files read: each chosen reader's, then every other plugin that claims
    /// a file read it too: its rows count, and say whose they are; two formats read from one
    /// file are a polyglot.
    fn read(&mut self, opened: &[(&FileJob<'_>, OpenedFile)], also: &[AlsoRead<'_, '_>]) {
        for (job, opened) in opened {
            for row in opened.rows.iter() {
                self.push(&job.rel, row.clone());
            }
        }
        for a in also {
            let (first, reader) = a.job.reader;
            for row in a.opened.rows.iter() {
                let mut row = row.clone();
                // A FAIL says what it found in its summary: the first finding the report names
                // a FAIL (else the first), its reason as the report writes it.
                let first_fail = (row.status == RowStatus::Fail)
                    .then(|| {
                        let findings = row
                            .findings
                            .iter()
                            .map(|f| RowFinding::of(f, row.names_severities));
                        let mut first = None;
                        for f in findings {
                            if f.severity == Some(socair_plugin_api::Severity::Fail) {
                                return Some(f);
                            }
                            first = first.or(Some(f));
                        }
                        first
                    })
                    .flatten()
                    .map(|f| format!(" ({}: {})", f.place, f.reason_text()))
                    .unwrap_or_default();
                row.summary = format!(
                    "also read as {} by plugin {}: {}{first_fail}",
                    a.format, a.plugin.manifest.name, row.summary
                )
                .into();
                self.push(&a.job.rel, row);
            }
            self.push(&a.job.rel, polyglot_row(first, &reader.format(), a));
        }
    }

    /// The rows of what no reader read: files a reader could not read, readers passed over,
    /// and the files no plugin claims.
    fn not_read(&mut self, artifact: &Artifact<'_>, opened: &[(&FileJob<'_>, OpenedFile)]) {
        // A reader should have read these and could not: nothing in them was checked, and no
        // acceptance covers that (an acceptance accepts gaps in what was read, not the absence
        // of a reader), so they are LEADs.
        for (file, reason) in &artifact.unreadable {
            self.push(
                file,
                ReportRow {
                    check: STRUCTURE_CHECK.into(),
                    status: RowStatus::Lead,
                    summary: format!("not read: {reason}; nothing in it was checked").into(),
                    findings: vec![socair_plugin_api::Finding::new(
                        socair_plugin_api::Severity::Lead,
                        "file",
                        format!("not read: {reason}"),
                    )]
                    .into(),
                    names_severities: false,
                },
            );
        }
        // Readers that claimed a file but were passed over (pins, --reader) are named.
        for (job, _) in opened {
            if !job.passed_over.is_empty() {
                self.push(
                    &job.rel,
                    ReportRow {
                        check: STRUCTURE_CHECK.into(),
                        status: RowStatus::Pass,
                        summary: format!(
                            "read by plugin {}; {}",
                            job.reader.0.manifest.name,
                            job.passed_over.join("; ")
                        )
                        .into(),
                        findings: Default::default(),
                        names_severities: false,
                    },
                );
            }
        }
        // Files that hold another file's tensor bytes (ONNX external data) are read as that
        // data.
        let data_files = data_files(opened);
        for u in artifact
            .unclaimed
            .iter()
            .filter(|u| !data_files.contains(&u.rel))
        {
            if let Some(row) = pickle_lead(u) {
                self.push(&u.rel, row);
            }
            self.push(&u.rel, unclaimed_row(u, artifact.is_dir));
        }
    }
}

/// A file no plugin claims that starts like a pickle or is named like one: a LEAD, since
/// nothing has checked what loading it would run.
fn pickle_lead(u: &Unclaimed) -> Option<ReportRow> {
    let pickle_like = u.head.first() == Some(&0x80)
        || [
            ".pkl", ".pickle", ".joblib", ".pt", ".pth", ".bin", ".ckpt", ".dat",
        ]
        .iter()
        .any(|ext| u.rel.ends_with(ext));
    pickle_like.then(|| ReportRow {
        check: PICKLE_CHECK.into(),
        status: RowStatus::Lead,
        summary: "a file that looks like a pickle, which no loaded plugin reads".into(),
        findings: vec![socair_plugin_api::Finding::new(socair_plugin_api::Severity::Lead, "byte 0", "it starts like a pickle or is named like one, and nothing has checked what loading it would run")]
        .into(),
        names_severities: false,
    })
}

/// The structure row of a file no plugin claims. Nothing unknown is clean: a lone file no
/// plugin reads is a LEAD; in a directory, JSON and text companions are read as data here and
/// everything else is a LEAD.
fn unclaimed_row(u: &Unclaimed, in_dir: bool) -> ReportRow {
    let verdict = if in_dir {
        classify(&u.rel, &u.input)
    } else {
        Companion::Lead(
            "no loaded plugin reads this file's format: nothing in it was checked".into(),
        )
    };
    match verdict {
        Companion::Data(what) => ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: RowStatus::Pass,
            summary: what.into(),
            findings: Default::default(),
            names_severities: false,
        },
        Companion::Fail { summary, findings } => ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: RowStatus::Fail,
            summary: summary.into(),
            findings: findings
                .into_iter()
                .map(|(place, reason)| {
                    socair_plugin_api::Finding::new(
                        socair_plugin_api::Severity::Fail,
                        place,
                        reason,
                    )
                })
                .collect(),
            names_severities: false,
        },
        Companion::Lead(why) => ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: RowStatus::Lead,
            summary: format!("not read by any plugin: {why}").into(),
            findings: vec![socair_plugin_api::Finding::new(
                socair_plugin_api::Severity::Lead,
                format!("byte 0 ({})", describe_head(&u.head)),
                why,
            )]
            .into(),
            names_severities: false,
        },
    }
}

/// The report's scope: header-only or full, the reference and reviewed classes given, and
/// why the subject digest was not computed, when it was not.
fn scope(options: &ScanOptions, digest_skipped: bool) -> Scope {
    Scope {
        mode: if options.header_only {
            "header-only".into()
        } else {
            "full".into()
        },
        reference_data: options.reference.as_ref().map(|r| r.named.clone()),
        reviewed_classes: options.reviewed.clone(),
        digest: digest_skipped.then(|| {
            (options.digest_not_computed.as_deref())
                .unwrap_or(DIGEST_NOT_COMPUTED)
                .to_owned()
        }),
    }
}

/// The row saying that a second plugin read a file: a LEAD when it read another format (one
/// file, two formats: each loader reads what its format says), a PASS naming it otherwise.
fn polyglot_row(first: &LoadedPlugin, first_format: &str, a: &AlsoRead<'_, '_>) -> ReportRow {
    let other = &a.plugin.manifest.name;
    if a.format != first_format {
        let why = format!(
            "read as {first_format} by plugin {} and as {} by plugin {other}: a file that readers of two formats both claim is a polyglot, which each loader reads as its own format; every reading's verdict counts",
            first.manifest.name, a.format
        );
        ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: RowStatus::Lead,
            summary: why.clone().into(),
            findings: vec![socair_plugin_api::Finding::new(
                socair_plugin_api::Severity::Lead,
                "file",
                why,
            )]
            .into(),
            names_severities: false,
        }
    } else {
        ReportRow {
            check: STRUCTURE_CHECK.into(),
            status: RowStatus::Pass,
            summary: format!(
                "read by plugin {} and also by plugin {other} (both {first_format} readers); each one's verdict counts",
                first.manifest.name
            )
            .into(),
            findings: Default::default(),
            names_severities: false,
        }
    }
}

/// A file's first bytes for a finding.
fn describe_head(head: &[u8]) -> String {
    if head.is_empty() {
        return "an empty file".into();
    }
    format!(
        "it starts {:?}",
        String::from_utf8_lossy(&head[..head.len().min(16)])
    )
}

fn merge(check: String, rows: Vec<(String, ReportRow)>, in_dir: bool) -> Row {
    let status = rows
        .iter()
        .map(|(_, r)| r.status)
        .max_by_key(|s| s.badness())
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
            r.findings.iter().map(move |f| {
                let mut f = RowFinding::of(f, r.names_severities);
                if in_dir {
                    f.place = format!("{file}: {}", f.place);
                }
                f
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
