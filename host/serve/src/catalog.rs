//! What the store says of a repository revision: its record (`socair_store::airlock::repos`),
//! and whether the artifact it names passed the gate. Only a promoted artifact is served;
//! anything else is refused with the words a person needs: the verdict its signed attestation
//! holds, the reason the gate refuses it, and the command that would let it through.
//!
//! The verdict is read from the attestation the store keeps beside the staged artifact,
//! verified under the store's `scan` keys (`gate::verify_scan_attestation`); the bytes are not
//! rehashed per request (the gate does that when it promotes).

use socair_store::airlock::gate::verify_scan_attestation;
use socair_store::airlock::repos::{self, RepoRecord};
use socair_store::airlock::store::{Area, Store, ATTESTATION};

/// The most characters of a row's summary a refusal quotes.
const SUMMARY_CHARS: usize = 400;

/// Why a revision is not served, as the metrics count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// Staged, never scanned.
    NotScanned,
    /// Its attestation does not verify under the store's policy.
    Unverified,
    /// A FAIL row.
    Blocked,
    /// A LEAD row, or a NOT_TESTED row no acceptance covers.
    NeedsReview,
    /// Passed the gate's reading, not promoted yet.
    NotPromoted,
    /// Neither staged nor promoted any more.
    Missing,
}

impl RefusalKind {
    /// The metrics label.
    pub fn label(self) -> &'static str {
        match self {
            RefusalKind::NotScanned => "not_scanned",
            RefusalKind::Unverified => "unverified",
            RefusalKind::Blocked => "blocked",
            RefusalKind::NeedsReview => "needs_review",
            RefusalKind::NotPromoted => "not_promoted",
            RefusalKind::Missing => "missing",
        }
    }
}

/// A refusal: its kind and the one-line message the client shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Why, for the metrics.
    pub kind: RefusalKind,
    /// The verdict line, the reason and the command that would let it through.
    pub message: String,
}

/// What a revision is.
#[derive(Debug, Clone)]
pub enum Found {
    /// The store has no record of the repository (`repo_known: false`) or of the revision.
    NotFound {
        /// Whether any revision of the repository is recorded.
        repo_known: bool,
    },
    /// Recorded and promoted: served.
    Served(Box<RepoRecord>),
    /// Recorded, not promoted: refused (the record names the commit for the headers).
    Refused(Box<RepoRecord>, Refusal),
}

/// Looks up `repo` at `revision` and decides whether it is served.
pub fn find(store: &Store, repo: &str, revision: &str) -> Result<Found, String> {
    let rec = match repos::lookup(store, repo, revision).map_err(|e| e.to_string())? {
        Some(r) => r,
        None => {
            let known = repos::lookup(store, repo, repos::DEFAULT_REVISION)
                .map_err(|e| e.to_string())?
                .is_some();
            return Ok(Found::NotFound { repo_known: known });
        }
    };
    if store.is_promoted(&rec.sha256).map_err(|e| e.to_string())? {
        return Ok(Found::Served(Box::new(rec)));
    }
    let refusal = refusal(store, &rec)?;
    Ok(Found::Refused(Box::new(rec), refusal))
}

/// The refusal of a recorded revision whose artifact is not promoted.
fn refusal(store: &Store, rec: &RepoRecord) -> Result<Refusal, String> {
    let sha = &rec.sha256;
    let what = format!(
        "socair airlock: {}@{} (sha256 {sha}) is not served: it has not passed the gate",
        rec.repo, rec.commit
    );
    let say = |kind, rest: String| Refusal {
        kind,
        message: format!("{what}. {rest}"),
    };
    if !store.is_staged(sha).map_err(|e| e.to_string())? {
        return Ok(say(
            RefusalKind::Missing,
            "The store holds it neither staged nor promoted; pull it again: `socair airlock pull DIR --as REPO`.".into(),
        ));
    }
    let policy = store.policy().map_err(|e| e.to_string())?;
    let Some(envelope) = store
        .read_beside(Area::Incoming, sha, ATTESTATION)
        .map_err(|e| e.to_string())?
    else {
        return Ok(say(
            RefusalKind::NotScanned,
            format!("Verdict: not scanned. Next: `socair airlock scan {sha} --key scanner.key`, then `socair airlock promote {sha}`."),
        ));
    };
    let report = match verify_scan_attestation(&policy, &envelope) {
        Ok((_, report)) => report,
        Err(e) => {
            return Ok(say(
                RefusalKind::Unverified,
                format!("Its attestation does not hold: {e}. Next: scan it again, `socair airlock scan {sha} --key scanner.key`."),
            ))
        }
    };
    let verdict = report
        .rows
        .iter()
        .map(|r| format!("{} {}", r.status, r.check))
        .collect::<Vec<_>>()
        .join(", ");
    let first = |status: &str| report.rows.iter().find(|r| r.status == status);
    // A row's summary can be long: cut so the command that follows it always fits.
    let summary = |text: &str| -> String {
        match text.char_indices().nth(SUMMARY_CHARS) {
            Some((at, _)) => format!("{}...", &text[..at]),
            None => text.to_owned(),
        }
    };
    if let Some(row) = first("FAIL") {
        return Ok(say(
            RefusalKind::Blocked,
            format!(
                "Verdict: {verdict}. Reason: the {:?} row is FAIL: {}. Blocked: a FAIL is evidence of danger and no acceptance lets it through (`socair airlock accept` takes only NOT_TESTED rows); ask the publisher for safetensors.",
                row.check, summary(&row.summary)
            ),
        ));
    }
    if let Some(row) = first("LEAD") {
        return Ok(say(
            RefusalKind::NeedsReview,
            format!(
                "Verdict: {verdict}. Reason: the {:?} row is LEAD (a person should look): {}. Next: a person reads each lead; a pickle global they clear is reviewed once with `socair airlock review add MODULE.NAME --reason \"...\" --key reviewer.key`, then `socair airlock scan {sha} --key scanner.key` and `socair airlock promote {sha}`.",
                row.check, summary(&row.summary)
            ),
        ));
    }
    if let Some(row) = first("NOT_TESTED") {
        return Ok(say(
            RefusalKind::NeedsReview,
            format!(
                "Verdict: {verdict}. Reason: the {:?} row is NOT_TESTED ({}) and no acceptance covers it. To let it through: `socair airlock accept {sha} --row \"{}\" --reason \"...\" --key reviewer.key`, then `socair airlock promote {sha}`.",
                row.check, summary(&row.summary), row.check
            ),
        ));
    }
    Ok(say(
        RefusalKind::NotPromoted,
        format!(
            "Verdict: {verdict}. It is staged, not promoted. Next: `socair airlock promote {sha}`."
        ),
    ))
}

/// A message fit for an HTTP header value: printable ASCII on one line (a typographic dash
/// or quote becomes its ASCII form, anything else a `?`), at most `max` bytes.
pub fn header_text(message: &str, max: usize) -> String {
    let mut out = String::with_capacity(message.len().min(max));
    for c in message.chars() {
        let c = match c {
            ' '..='~' => c,
            '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '\u{2026}' => '.',
            '\t' | '\n' | '\r' => ' ',
            _ => '?',
        };
        if out.len() + 1 > max {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_text_is_one_printable_line() {
        assert_eq!(
            header_text("FAIL \u{2014} \u{201c}x\u{201d}\nnext\u{1}é", 100),
            "FAIL - \"x\" next??"
        );
        assert_eq!(header_text("abcdef", 3), "abc");
    }
}
