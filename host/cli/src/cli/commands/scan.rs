//! `socair scan` and `socair bom`: one model's report (as JSON, or in words for a person), or a
//! batch of them (reports, SARIF, CycloneDX).

use super::context::{reviewed_list, say_fetched, Context, STDERR_FINDINGS};
use crate::airlock::attest::verdicts;
use crate::base::output::to_json_bytes;
use crate::cli::args::Format;
use crate::cli::batch;
use crate::cli::exit::{Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::cli::human;
use crate::cli::output::{emit, for_a_person};
use crate::report::document::Report;
use crate::report::reference::{read_reference, Reference, REFERENCE_ENV};
use crate::report::scan::{scan as scan_path, ScanOptions};
use std::path::PathBuf;

/// `socair bom PATH… [--each LIST] [--profile P] [--out F]`: a CycloneDX document of a batch.
pub fn bom(
    mut ctx: Context,
    paths: Vec<PathBuf>,
    each: Vec<PathBuf>,
    profile: Option<String>,
    out: Option<PathBuf>,
) -> Result<u8, Fatal> {
    ctx.ask_profile(profile.as_deref());
    let set = ctx.plugins_warned();
    let options = ScanOptions {
        readers: ctx.readers,
        ..ScanOptions::default()
    };
    let batch = batch::Batch {
        paths,
        each,
        format: Format::Cyclonedx,
        out,
        json: false,
        options,
    };
    batch::run(batch, &set)
}

/// The arguments of `socair scan`.
pub struct ScanArgs {
    /// The models (files, directories, object-storage addresses).
    pub paths: Vec<PathBuf>,
    /// Files listing more paths, one a line.
    pub each: Vec<PathBuf>,
    /// `--format`.
    pub format: Format,
    /// `--header-only`.
    pub header_only: bool,
    /// `--reviewed-classes`.
    pub reviewed_classes: Option<PathBuf>,
    /// `--profile`.
    pub profile: Option<String>,
    /// `--reference`: a tensor manifest to compare the model with.
    pub reference: Option<PathBuf>,
    /// `--reference-pub` / `--reference-store`: the keys a signed reference must verify under.
    pub reference_keys: super::tensors::KeySource,
    /// `--reference-feed`: a feed of signed manifests to take the reference from.
    pub reference_feed: Option<PathBuf>,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
}

/// `socair scan`: one path with `--format report` or `text` is one report; anything else is a
/// batch. Exit 1 when a row is FAIL or LEAD.
pub fn scan(mut ctx: Context, args: ScanArgs) -> Result<u8, Fatal> {
    let ScanArgs {
        mut paths,
        each,
        format,
        header_only,
        reviewed_classes,
        profile,
        reference,
        reference_keys,
        reference_feed,
        out,
        json,
    } = args;
    ctx.ask_profile(profile.as_deref());
    let reviewed = reviewed_list(reviewed_classes)?;
    let reference = match reference_feed {
        Some(feed) => Some(super::tensors::reference_from_feed(
            &feed,
            &paths,
            &each,
            &reference_keys,
        )?),
        None => reference_manifest(reference, &reference_keys)?,
    };
    let set = ctx.plugins_warned();
    if format == Format::Text && (json || out.is_some()) {
        return Err(Fatal(
            "--format text prints plain words to standard output: not with --json or --out".into(),
        ));
    }
    let options = ScanOptions {
        header_only,
        reviewed,
        reference,
        readers: ctx.readers,
        digest_not_computed: None,
    };
    let single = matches!(format, Format::Report | Format::Text);
    if !single || paths.len() != 1 || !each.is_empty() {
        if options.reference.is_some() && (paths.len() != 1 || !each.is_empty()) {
            return Err(Fatal(
                "--reference compares one model with its manifest: give one path".into(),
            ));
        }
        let batch = batch::Batch {
            paths,
            each,
            format,
            out,
            json,
            options,
        };
        return batch::run(batch, &set);
    }
    let path = paths.remove(0);
    let report = scan_path(&path, &set, &options).map_err(|e| Fatal(e.to_string()))?;
    say_fetched(report.artifact.size_bytes);
    if let Some(why) = &report.scope.digest {
        eprintln!("socair: the subject digest was {why}");
    }
    if format == Format::Text || for_a_person(json, out.as_deref()) {
        emit(None, human::scan_report(&report).as_bytes())?;
    } else {
        emit(out.as_deref(), &to_json_bytes(&report))?;
        say_scanned(&report);
    }
    let negative = report
        .rows
        .iter()
        .any(|r| r.status == "FAIL" || r.status == "LEAD");
    Ok(if negative { EXIT_NEGATIVE } else { EXIT_OK })
}

/// The tensor manifest to compare with: `--reference`, else the older
/// `SOCAIR_TENSOR_REFERENCE`, read now so that a missing file, or a signed one that does not
/// verify under `keys` (`--reference-pub`, `--reference-store`, else
/// `SOCAIR_TENSOR_REFERENCE_PUB`), stops the scan before it starts.
fn reference_manifest(
    flag: Option<PathBuf>,
    keys: &super::tensors::KeySource,
) -> Result<Option<Reference>, Fatal> {
    let reference = flag.or_else(|| {
        std::env::var_os(REFERENCE_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    let Some(path) = reference else {
        return Ok(None);
    };
    let keys = keys.keys()?;
    let manifests = |p: &std::path::Path| socair_signing::reference::read_any_manifest(p, &keys);
    Ok(Some(read_reference(&path, &manifests).map_err(Fatal)?))
}

/// Beside a report written as JSON: one line naming the artifact and its verdicts, then the
/// first findings (the report holds them all).
fn say_scanned(report: &Report) {
    eprintln!(
        "socair: scanned {} {:?} (sha256 {}): {}",
        report.artifact.format,
        report.artifact.name,
        &report.artifact.sha256[..16.min(report.artifact.sha256.len())],
        verdicts(report)
    );
    let findings: Vec<String> = report
        .rows
        .iter()
        .flat_map(|r| {
            r.findings.iter().map(move |f| {
                format!(
                    "socair: {} {}: {}: {}",
                    r.status,
                    r.check,
                    f.place,
                    f.reason_text()
                )
            })
        })
        .collect();
    for f in findings.iter().take(STDERR_FINDINGS) {
        eprintln!("{f}");
    }
    if findings.len() > STDERR_FINDINGS {
        eprintln!(
            "socair: and {} more findings (in the report)",
            findings.len() - STDERR_FINDINGS
        );
    }
}
