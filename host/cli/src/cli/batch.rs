//! Many artifacts at once (`socair scan PATH… --each DIR`, `socair bom`), and any scan
//! written as SARIF or CycloneDX: the artifacts gathered, scanned over the cores, one verdict
//! line each on a terminal (in the order given, as soon as the ones before are done) with a
//! bar counting them on standard error, then the summary; or one document.

use crate::base::output::to_json_bytes;
use crate::cli::args::Format;
use crate::cli::exit::{Fatal, EXIT_ERROR, EXIT_NEGATIVE, EXIT_OK};
use crate::cli::human;
use crate::cli::output::{emit, for_a_person};
use crate::cli::progress;
use crate::read::discover::artifacts_under;
use crate::read::hfcache;
use crate::read::plugins::PluginSet;
use crate::read::source::is_remote;
use crate::report::batch::{scan_all, shown, ArtifactScan, Reports, Summary, Verdict};
use crate::report::scan::ScanOptions;
use crate::report::{cyclonedx, sarif};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// Verdict lines written to standard error after a document.
const STDERR_LINES: usize = 50;

/// The most of a verdict's detail a line shows (the reports hold all of it).
const DETAIL_CHARS: usize = 160;

/// What to scan and how to write it.
#[derive(Debug)]
pub struct Batch {
    /// Paths given one by one.
    pub paths: Vec<PathBuf>,
    /// Directories to find artifacts under (`--each`).
    pub each: Vec<PathBuf>,
    /// The document to write.
    pub format: Format,
    /// `--out`.
    pub out: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// How each artifact is scanned.
    pub options: ScanOptions,
}

fn label(v: Verdict) -> &'static str {
    match v {
        Verdict::Clean => "CLEAN",
        Verdict::Blocked => "BLOCKED",
        Verdict::NeedsReview => "NEEDS A PERSON",
        Verdict::Unreadable => "UNREADABLE",
    }
}

/// One artifact's line: its verdict in words, its path, and what the verdict rests on.
pub fn line(o: &ArtifactScan) -> String {
    let detail = match &o.scan {
        Ok(s) => {
            let v = human::verdict(&s.report);
            match v.split_once(" — ") {
                Some((_, rest)) if Verdict::of(&s.report) != Verdict::Clean => rest.to_owned(),
                Some(_) => String::new(),
                None => v,
            }
        }
        Err(why) => why.clone(),
    };
    let detail = if detail.chars().count() > DETAIL_CHARS {
        let cut: String = detail.chars().take(DETAIL_CHARS).collect();
        format!("{cut}…")
    } else {
        detail
    };
    let sep = if detail.is_empty() { "" } else { "  " };
    format!(
        "{:<14}  {}{sep}{detail}",
        label(o.verdict()),
        shown(&o.path)
    )
}

/// The summary line.
pub fn summary_line(s: &Summary) -> String {
    format!(
        "{} artifact{}: {} clean, {} blocked, {} needing a person, {} unreadable",
        s.artifacts,
        if s.artifacts == 1 { "" } else { "s" },
        s.clean,
        s.blocked,
        s.needs_review,
        s.unreadable
    )
}

/// The artifacts to scan: the paths given, then those found under each `--each` directory;
/// each once, in that order.
fn gather(batch: &Batch, plugins: &PluginSet) -> Result<Vec<PathBuf>, Fatal> {
    let mut all = Vec::new();
    for p in &batch.paths {
        let local = !is_remote(p) && !hfcache::is_uri(p);
        if local {
            std::fs::symlink_metadata(p).map_err(|e| Fatal(format!("{}: {e}", p.display())))?;
        }
        all.push(p.clone());
    }
    let (mut found_any, mut unclaimed, mut links) = (0, 0, 0);
    for dir in &batch.each {
        let found = artifacts_under(dir, plugins, &batch.options.readers)
            .map_err(|e| Fatal(e.to_string()))?;
        (found_any, unclaimed, links) = (
            found_any + found.artifacts.len(),
            unclaimed + found.unclaimed,
            links + found.links,
        );
        all.extend(found.artifacts);
    }
    if !batch.each.is_empty() {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        eprintln!(
            "socair: --each: {found_any} artifact{} found; {unclaimed} file{} no reader claims not scanned, {links} symbolic link{} not followed",
            s(found_any),
            s(unclaimed),
            s(links)
        );
    }
    let mut seen = HashSet::new();
    all.retain(|p| seen.insert(p.clone()));
    Ok(all)
}

/// Prints the lines of finished artifacts in the order given, as soon as every one before is
/// done, above the bar.
struct Lines {
    next: usize,
    waiting: BTreeMap<usize, String>,
    bar: Option<indicatif::ProgressBar>,
    print: bool,
}

impl Lines {
    fn done(&mut self, i: usize, o: &ArtifactScan) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        if !self.print {
            return;
        }
        self.waiting.insert(i, line(o));
        while let Some(l) = self.waiting.remove(&self.next) {
            let write = || {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{l}");
                let _ = out.flush();
            };
            match &self.bar {
                Some(bar) => bar.suspend(write),
                None => write(),
            }
            self.next += 1;
        }
    }
}

/// Scans every artifact and writes what `batch.format` asks for; returns the exit code.
pub fn run(batch: Batch, plugins: &PluginSet) -> Result<u8, Fatal> {
    let paths = gather(&batch, plugins)?;
    let person = batch.format == Format::Text
        || (batch.format == Format::Report && for_a_person(batch.json, batch.out.as_deref()));
    let bar = if paths.len() > 1 {
        progress::artifacts_bar(paths.len() as u64)
    } else {
        None
    };
    let lines = Mutex::new(Lines {
        next: 0,
        waiting: BTreeMap::new(),
        bar,
        print: person,
    });
    let outcomes = scan_all(&paths, plugins, &batch.options, &|i, o| {
        lines.lock().unwrap_or_else(|e| e.into_inner()).done(i, o)
    });
    if let Some(bar) = lines.into_inner().unwrap_or_else(|e| e.into_inner()).bar {
        bar.finish_and_clear();
    }
    let summary = Summary::of(&outcomes);
    if person {
        let mut text = String::new();
        if outcomes.is_empty() {
            text.push_str(
                "Nothing to scan: no model directory or file a reader claims was found.\n",
            );
        }
        text.push('\n');
        text.push_str(&summary_line(&summary));
        text.push_str(".\n");
        text.push_str(next_step(&summary));
        text.push('\n');
        emit(None, text.as_bytes())?;
    } else {
        let bytes = match batch.format {
            Format::Report | Format::Text => to_json_bytes(&Reports::of(&outcomes)),
            Format::Sarif => to_json_bytes(&sarif::log(&outcomes)),
            Format::Cyclonedx => to_json_bytes(&cyclonedx::bom(&outcomes)),
        };
        emit(batch.out.as_deref(), &bytes)?;
        eprintln!("socair: {}", summary_line(&summary));
        let not_clean: Vec<&ArtifactScan> = outcomes
            .iter()
            .filter(|o| o.verdict() != Verdict::Clean)
            .collect();
        for o in not_clean.iter().take(STDERR_LINES) {
            eprintln!("socair: {}", line(o));
        }
        if not_clean.len() > STDERR_LINES {
            eprintln!(
                "socair: and {} more not clean (in the document)",
                not_clean.len() - STDERR_LINES
            );
        }
    }
    // One path given alone exits as a scan of it does (2 when it cannot be read); among many,
    // an artifact that cannot be read is one that is not clean.
    let alone = batch.paths.len() == 1 && batch.each.is_empty();
    Ok(if alone && summary.unreadable > 0 {
        EXIT_ERROR
    } else if summary.clean == summary.artifacts {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    })
}

fn next_step(s: &Summary) -> &'static str {
    if s.blocked + s.needs_review + s.unreadable == 0 {
        "Next: nothing here needs a person; `--format sarif` writes the same for code scanning, `socair bom` an ML-BOM."
    } else {
        "Next: scan each one that is not clean alone (`socair scan PATH`) for its rows and what to do; `--json` lists every report."
    }
}
