//! Plain-words reports for a person at a terminal: the verdict first, in words, then each row
//! with what it means, then the next step. (Scripts get the JSON documents: standard output
//! that is not a terminal, `--json`, or `--out`.) Pure functions over the documents, so their
//! text is snapshot-tested.

use crate::airlock::log::LogCheck;
use crate::airlock::verify::Verification;
use crate::fingerprint::manifest::TensorManifest;
use crate::report::document::{Report, Row};
use socair_plugin_api::Severity;
use std::fmt::Write;

/// Findings listed per row before the rest are counted.
const FINDINGS_SHOWN: usize = 5;

/// What LEAD means, said wherever a LEAD appears.
const LEAD_MEANS: &str = "LEAD means: outside what socair can prove safe, not proof of harm; a person should look before it is loaded.";

fn short(sha: &str) -> &str {
    &sha[..16.min(sha.len())]
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// What a row's status means, in words.
fn meaning(status: &str) -> &'static str {
    match status {
        "PASS" => "checked, nothing wrong",
        "FAIL" => "evidence of code execution, or of a file readers would read differently",
        "LEAD" => "outside what socair can prove safe: a person should look",
        "NOT_TESTED" => "a gap: this check does not apply, or did not run",
        _ => "",
    }
}

fn rows_of<'r>(rows: &'r [Row], status: &str) -> Vec<&'r Row> {
    rows.iter().filter(|r| r.status == status).collect()
}

/// The one line that says what to make of a report.
pub fn verdict(report: &Report) -> String {
    let fails = rows_of(&report.rows, "FAIL");
    let leads = rows_of(&report.rows, "LEAD");
    let gaps = rows_of(&report.rows, "NOT_TESTED");
    // The first finding, without the severity the report may name with it: of a FAIL row,
    // the first named a FAIL when one is (a row's first finding may be a LEAD).
    let first = |rows: &[&Row]| {
        let failing = rows
            .iter()
            .filter(|r| r.status == "FAIL")
            .flat_map(|r| &r.findings)
            .find(|f| f.severity == Some(Severity::Fail));
        failing
            .or_else(|| rows.iter().find_map(|r| r.findings.first()))
            .map(|f| format!("{}: {}", f.place, f.reason))
            .unwrap_or_else(|| rows[0].summary.clone())
    };
    if !fails.is_empty() {
        format!("BLOCKED — do not load: {}", first(&fails))
    } else if !leads.is_empty() {
        let n: usize = leads.iter().map(|r| r.findings.len().max(1)).sum();
        format!(
            "NEEDS A PERSON — socair cannot call it safe ({n} lead{}): {}",
            if n == 1 { "" } else { "s" },
            first(&leads)
        )
    } else if !gaps.is_empty() {
        format!(
            "no code found; {} gap{} need{} a reviewer: {}",
            gaps.len(),
            if gaps.len() == 1 { "" } else { "s" },
            if gaps.len() == 1 { "s" } else { "" },
            gaps.iter()
                .map(|r| format!("{} ({})", r.check, r.summary))
                .collect::<Vec<_>>()
                .join("; ")
        )
    } else {
        "CLEAN — no code found, and every check passed".into()
    }
}

/// The next step after a report.
fn next_step(report: &Report) -> String {
    let has = |s: &str| report.rows.iter().any(|r| r.status == s);
    let pickle_lead = report
        .rows
        .iter()
        .any(|r| r.status == "LEAD" && r.check == "Pickle opcode scan");
    if has("FAIL") {
        "Next: do not load it. Ask the publisher for a safetensors copy of the weights, and scan that.".into()
    } else if has("LEAD") && pickle_lead {
        "Next: a person reads each lead. A pickle global they clear is reviewed once for the airlock: `socair airlock review add MODULE.NAME --reason \"…\" --key reviewer.key`; otherwise ask the publisher for safetensors.".into()
    } else if has("LEAD") {
        "Next: a person reads each lead before anyone loads it; ask the publisher for a format socair reads (safetensors) if nothing here can be checked.".into()
    } else if report.artifact.sha256.is_empty() {
        // A header-only scan of a remote object computes no digest: it names no subject that a
        // review or a promotion could refer to.
        "Next: this header-only scan names no subject (its digest was not computed), so nothing can be accepted or promoted on it: scan the object in full, without --header-only, for that.".into()
    } else if has("NOT_TESTED") {
        format!(
            "Next: to promote it through the airlock, a reviewer accepts each gap: `socair airlock accept {} --row \"{}\" --reason \"…\" --key reviewer.key`.",
            short(&report.artifact.sha256),
            report
                .rows
                .iter()
                .find(|r| r.status == "NOT_TESTED")
                .map_or("", |r| r.check.as_str())
        )
    } else {
        "Next: it can go through the airlock: `socair airlock pull` it, `airlock scan` it with a scan key, then `airlock promote`.".into()
    }
}

fn write_rows(out: &mut String, rows: &[Row]) {
    let width = rows.iter().map(|r| r.check.len()).max().unwrap_or(0);
    for r in rows {
        let _ = writeln!(
            out,
            "  {:<10} {:<width$}  {}",
            r.status,
            r.check,
            meaning(&r.status)
        );
        let _ = writeln!(out, "  {:<10} {:<width$}  {}", "", "", r.summary);
        for f in r.findings.iter().take(FINDINGS_SHOWN) {
            let _ = writeln!(
                out,
                "  {:<10} {:<width$}  - {}: {}",
                "",
                "",
                f.place,
                f.reason_text()
            );
        }
        if r.findings.len() > FINDINGS_SHOWN {
            let _ = writeln!(
                out,
                "  {:<10} {:<width$}  - and {} more (--json lists them all)",
                "",
                "",
                r.findings.len() - FINDINGS_SHOWN
            );
        }
    }
}

/// `socair scan` (and the scan inside `attest` and `airlock scan`) for a person.
pub fn scan_report(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", verdict(report));
    let _ = writeln!(out);
    let a = &report.artifact;
    let _ = writeln!(
        out,
        "{} ({}, {}, {}), scanned {}",
        a.name,
        a.format,
        size(a.size_bytes),
        if a.sha256.is_empty() {
            "no digest".to_owned()
        } else {
            format!("sha256 {}…", short(&a.sha256))
        },
        if report.scope.mode == "header-only" {
            "headers only (no tensor data read)"
        } else {
            "in full"
        }
    );
    if let Some(reviewed) = &report.scope.reviewed_classes {
        let _ = writeln!(out, "globals treated as reviewed: {}", reviewed.join(", "));
    }
    let _ = writeln!(out);
    write_rows(&mut out, &report.rows);
    let _ = writeln!(out);
    if report.rows.iter().any(|r| r.status == "LEAD") {
        let _ = writeln!(out, "{LEAD_MEANS}");
    }
    let _ = writeln!(out, "{}", next_step(report));
    out
}

/// `socair attest` for a person: what was signed, and its verdict.
pub fn attest_report(report: &Report, envelope: &str, keyid: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Signed with key {}… into {envelope}: the verdict below is what the signature vouches for.",
        short(keyid)
    );
    let _ = writeln!(out);
    out.push_str(&scan_report(report));
    out
}

/// `socair tensors` for a person.
pub fn tensors_report(m: &TensorManifest) -> String {
    let mut out = String::new();
    let files: std::collections::BTreeSet<&str> =
        m.tensors.iter().map(|t| t.file.as_str()).collect();
    let bytes: u64 = m.tensors.iter().map(|t| t.bytes).sum();
    if m.unread.is_empty() {
        let _ = writeln!(
            out,
            "ALL READ — {} tensors ({}) fingerprinted in {} file{}",
            m.tensors.len(),
            size(bytes),
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        );
    } else {
        let _ = writeln!(
            out,
            "NOT ALL READ — {} tensors fingerprinted, {} thing{} could not be read: the fingerprint does not cover {}",
            m.tensors.len(),
            m.unread.len(),
            if m.unread.len() == 1 { "" } else { "s" },
            if m.unread.len() == 1 { "it" } else { "them" }
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{} ({}, sha256 {}…), values encoded as {}",
        m.artifact.name,
        m.artifact.format,
        short(&m.artifact.sha256),
        m.value_encoding
    );
    let mut by_dtype: std::collections::BTreeMap<&str, (usize, u64)> = Default::default();
    for t in &m.tensors {
        let e = by_dtype.entry(t.dtype.as_str()).or_default();
        e.0 += 1;
        e.1 += t.bytes;
    }
    for (dtype, (n, b)) in &by_dtype {
        let _ = writeln!(out, "  {dtype:<8} {n:>7} tensors  {}", size(*b));
    }
    for u in m.unread.iter().take(FINDINGS_SHOWN) {
        match &u.tensor {
            Some(t) => {
                let _ = writeln!(out, "  unread: {} tensor {t:?}: {}", u.file, u.reason);
            }
            None => {
                let _ = writeln!(out, "  unread: {}: {}", u.file, u.reason);
            }
        }
    }
    if m.unread.len() > FINDINGS_SHOWN {
        let _ = writeln!(
            out,
            "  and {} more unread (--json lists them all)",
            m.unread.len() - FINDINGS_SHOWN
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Next: keep the manifest (`socair tensors {} --out model.tensors.json`) and compare a copy or a conversion with it: `socair tensors diff COPY model.tensors.json`.",
        m.artifact.name
    );
    out
}

/// `socair verify` for a person.
pub fn verify_report(v: &Verification, envelope: &str) -> String {
    let mut out = String::new();
    let what = v.statement.as_ref().map_or_else(
        || "a payload that is not an in-toto statement".to_owned(),
        |s| {
            let kind = match s.predicate_type.as_str() {
                crate::airlock::signing::SCAN_PREDICATE => "a scan attestation",
                crate::airlock::signing::ACCEPTANCE_PREDICATE => "an acceptance",
                crate::airlock::signing::DERIVATION_PREDICATE => "a derivation record",
                crate::airlock::signing::REVIEW_PREDICATE => "a review",
                crate::airlock::oms::PREDICATE_TYPE => "an OpenSSF model signature",
                _ => "a statement",
            };
            format!(
                "{kind} about {} (sha256 {}…)",
                s.subject.first().map_or("nothing", |x| x.name.as_str()),
                short(s.subject_sha256().unwrap_or("?"))
            )
        },
    );
    match v.problems.first() {
        None => {
            let _ = writeln!(
                out,
                "TRUSTED — {envelope} is {what}, and every condition holds"
            );
        }
        Some(first) => {
            let _ = writeln!(out, "NOT TRUSTED — {first}");
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{envelope}: {what}, signed by key {}…",
        short(&v.keyid)
    );
    for h in &v.held {
        let _ = writeln!(out, "  holds:  {h}");
    }
    for p in &v.problems {
        let _ = writeln!(out, "  fails:  {p}");
    }
    if !v.rows.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "The signed report's rows:");
        write_rows(&mut out, &v.rows);
        if v.rows.iter().any(|r| r.status == "LEAD") {
            let _ = writeln!(out, "{LEAD_MEANS}");
        }
    }
    let _ = writeln!(out);
    let model_signature = v
        .statement
        .as_ref()
        .is_some_and(|s| s.predicate_type == crate::airlock::oms::PREDICATE_TYPE);
    let next = if model_signature && !v.problems.is_empty() {
        "Next: do not use this model: it is not the model the key's holder signed. Get it again from its publisher, and verify it before loading it."
    } else if v.problems.is_empty() {
        "Next: nothing; --json prints the payload exactly as signed."
    } else {
        "Next: do not rely on it. Give the artifact it is about (`socair verify ENVELOPE ARTIFACT`) and the store whose keys should have signed it (--store) to see every condition; --json prints the payload as signed."
    };
    let _ = writeln!(out, "{next}");
    out
}

/// `socair airlock log` for a person: the verdict on the log, then the entries.
pub fn log_report(check: &LogCheck) -> String {
    let mut out = String::new();
    if check.holds() {
        let _ = writeln!(
            out,
            "THE LOG HOLDS — {} entries, none edited as far as the log can tell; head {}",
            check.lines.len(),
            check.head().text()
        );
    } else {
        let first = check
            .broken
            .as_ref()
            .map(|(line, why)| format!("the chain breaks at line {line}: {why}"))
            .or_else(|| check.problems.first().cloned())
            .unwrap_or_default();
        let _ = writeln!(out, "THE LOG WAS EDITED — {first}");
        for p in check
            .problems
            .iter()
            .skip(usize::from(check.broken.is_none()))
        {
            let _ = writeln!(out, "  also: {p}");
        }
    }
    for n in &check.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(out);
    for (i, line) in check.lines.iter().enumerate() {
        let Ok(e) = serde_json::from_str::<crate::airlock::log::LogEntry>(line) else {
            continue;
        };
        let subject = e.subject.as_deref().map(short).unwrap_or("");
        let detail = e.detail.as_deref().or(e.name.as_deref()).unwrap_or("");
        let _ = writeln!(
            out,
            "{:>4}  {}  {:<8} {:<8} {:<16}  {}",
            i + 1,
            e.time,
            e.action,
            e.outcome,
            subject,
            detail
        );
    }
    let _ = writeln!(out);
    let next = if check.holds() {
        format!(
            "Next: keep the head somewhere the store's writers cannot reach (`socair airlock log --head`), and later prove the log still extends it: `socair airlock log --since {}`.",
            check.head().text()
        )
    } else {
        "Next: treat the store as tampered with: find who edited it, and rebuild trust from anchored heads and signed envelopes.".into()
    };
    let _ = writeln!(out, "{next}");
    out
}
