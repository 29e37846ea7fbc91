//! Many artifacts at once (`socair scan PATH… --each DIR`): each scanned on its own, spread
//! over the cores, the outcomes kept in the order the paths were given, and the
//! `socair.reports/v1` document that lists every report.

use crate::read::plugins::PluginSet;
use crate::report::document::Report;
use crate::report::scan::{scan_detailed, ScanOptions};
use crate::report::scanned::Scanned;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The document's schema name.
pub const REPORTS_SCHEMA: &str = "socair.reports/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.reports",
        version: "1",
        id: REPORTS_SCHEMA,
        summary: "many scans in one document: a summary and, per artifact, its verdict and its socair.report/v1 report (or why it could not be read)",
    }
}

/// What a scan says of an artifact, in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No FAIL or LEAD row (NOT_TESTED gaps may remain): the scan exits 0.
    Clean,
    /// A FAIL row: do not load it.
    Blocked,
    /// A LEAD row and no FAIL: a person must look.
    NeedsReview,
    /// The artifact could not be read at all (what a lone scan exits 2 for).
    Unreadable,
}

impl Verdict {
    /// The verdict of a report.
    pub fn of(report: &Report) -> Verdict {
        let has = |s: &str| report.rows.iter().any(|r| r.status == s);
        if has("FAIL") {
            Verdict::Blocked
        } else if has("LEAD") {
            Verdict::NeedsReview
        } else {
            Verdict::Clean
        }
    }
}

/// One artifact's outcome.
#[derive(Debug, Clone)]
pub struct ArtifactScan {
    /// The path as given or found.
    pub path: PathBuf,
    /// Its scan, or why it could not be read.
    pub scan: Result<Scanned, String>,
}

impl ArtifactScan {
    /// Its verdict.
    pub fn verdict(&self) -> Verdict {
        match &self.scan {
            Ok(s) => Verdict::of(&s.report),
            Err(_) => Verdict::Unreadable,
        }
    }
}

/// Header-only scans of objects in object storage run this many at a time: each waits on the
/// network for a few round trips and hashes nothing, so more of them than cores keep the
/// network busy (16 safetensors shards' headers at 20 ms a request: 0.41 s two at a time,
/// 0.13 s sixteen). Full scans stay on the cores: each hashes its object and holds a read
/// cache.
const HEADERS_AT_ONCE: usize = 16;

/// Scans every path, spread over the cores (header-only scans of objects in object storage,
/// [`HEADERS_AT_ONCE`] at a time); the outcomes come back in the paths' order.
/// `done(i, outcome)` is called as each one finishes (in any order, from any thread).
pub fn scan_all(
    paths: &[PathBuf],
    plugins: &PluginSet,
    options: &ScanOptions,
    done: &(dyn Fn(usize, &ArtifactScan) + Sync),
) -> Vec<ArtifactScan> {
    let scan = || {
        paths
            .par_iter()
            .enumerate()
            .map(|(i, path)| {
                let outcome = ArtifactScan {
                    path: path.clone(),
                    scan: scan_detailed(path, plugins, options).map_err(|e| e.to_string()),
                };
                done(i, &outcome);
                outcome
            })
            .collect()
    };
    let waiting_on_the_network = options.header_only
        && paths.len() > 1
        && paths.iter().all(|p| crate::read::source::is_remote(p));
    let pool = waiting_on_the_network
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(HEADERS_AT_ONCE.min(paths.len()))
                .build()
                .ok()
        })
        .flatten();
    match pool {
        Some(pool) => pool.install(scan),
        None => scan(),
    }
}

/// How many artifacts had each verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// All of them.
    pub artifacts: usize,
    /// Clean.
    pub clean: usize,
    /// Blocked (a FAIL).
    pub blocked: usize,
    /// Needing a person (a LEAD, no FAIL).
    pub needs_review: usize,
    /// Not read at all.
    pub unreadable: usize,
}

impl Summary {
    /// Counts the outcomes' verdicts.
    pub fn of(outcomes: &[ArtifactScan]) -> Summary {
        let mut s = Summary {
            artifacts: outcomes.len(),
            ..Summary::default()
        };
        for o in outcomes {
            *match o.verdict() {
                Verdict::Clean => &mut s.clean,
                Verdict::Blocked => &mut s.blocked,
                Verdict::NeedsReview => &mut s.needs_review,
                Verdict::Unreadable => &mut s.unreadable,
            } += 1;
        }
        s
    }
}

/// The `socair.reports/v1` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reports {
    /// Always [`REPORTS_SCHEMA`].
    pub schema: String,
    /// How many artifacts had each verdict.
    pub summary: Summary,
    /// Each artifact, in the order the paths were given (those found under a directory in
    /// byte order of their paths).
    pub artifacts: Vec<Entry>,
}

/// One artifact in the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The path as given or found.
    pub path: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its report, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// Why it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The path as documents write it.
pub fn shown(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl Reports {
    /// The document of these outcomes.
    pub fn of(outcomes: &[ArtifactScan]) -> Reports {
        Reports {
            schema: REPORTS_SCHEMA.into(),
            summary: Summary::of(outcomes),
            artifacts: outcomes
                .iter()
                .map(|o| Entry {
                    path: shown(&o.path),
                    verdict: o.verdict(),
                    report: o.scan.as_ref().ok().map(|s| s.report.clone()),
                    error: o.scan.as_ref().err().cloned(),
                })
                .collect(),
        }
    }
}
