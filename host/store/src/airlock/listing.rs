//! What the store holds, as people use it: `airlock ls` (staged and promoted artifacts with
//! their verdicts) and `airlock export` (a promoted artifact copied out, its hash checked
//! again on the way).

use crate::airlock::error::{unusable, StoreError};
use crate::airlock::gate::verify_scan_attestation;
use crate::airlock::log::LogEntry;
use crate::airlock::store::{Area, Store, ACCEPTANCES, ATTESTATION, DERIVATION};
use crate::base::scratch;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One artifact of the store.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// Its sha256.
    pub sha256: String,
    /// Its name.
    pub name: String,
    /// `staged` (in `incoming/`) or `promoted`.
    pub state: &'static str,
    /// Its attestation's rows, `STATUS check` each, or why there is none to read.
    pub verdict: String,
    /// Acceptances stored beside it.
    pub acceptances: usize,
    /// Whether a conversion made it (it has a derivation record).
    pub derived: bool,
}

/// Every staged and promoted artifact, staged first, each by sha256.
pub fn list(store: &Store) -> Result<Vec<Listed>, StoreError> {
    let policy = store.policy()?;
    let mut out = Vec::new();
    for (area, state) in [(Area::Incoming, "staged"), (Area::Promoted, "promoted")] {
        for sha in store.shas(area)? {
            let verdict = match store.read_beside(area, &sha, ATTESTATION)? {
                None => "not scanned (`socair airlock scan`)".to_owned(),
                Some(bytes) => match verify_scan_attestation(&policy, &bytes) {
                    Ok((_, report)) => report
                        .rows
                        .iter()
                        .map(|r| format!("{} {}", r.status, r.check))
                        .collect::<Vec<_>>()
                        .join(", "),
                    Err(e) => format!("its attestation does not hold: {e}"),
                },
            };
            let acceptances = store.docs_beside(area, &sha, ACCEPTANCES)?.len();
            out.push(Listed {
                name: store
                    .name_in(area, &sha)
                    .unwrap_or_else(|_| "(incomplete)".into()),
                derived: store.read_beside(area, &sha, DERIVATION)?.is_some(),
                sha256: sha,
                state,
                verdict,
                acceptances,
            });
        }
    }
    Ok(out)
}

/// `socair airlock export`: copies promoted artifact `sha` to `dest` (a new path, or an
/// existing directory to copy it into), hashing while copying; the copy must hash to `sha`,
/// or nothing is left at `dest`. Logged. Returns where it went.
pub fn export(store: &Store, sha: &str, dest: &Path) -> Result<PathBuf, StoreError> {
    let result = export_checked(store, sha, dest);
    let mut e = LogEntry::new("export", if result.is_ok() { "ok" } else { "refused" });
    e.subject = Some(sha.to_owned());
    e.detail = Some(match &result {
        Ok(to) => format!("copied to {}", to.display()),
        Err(err) => err.to_string(),
    });
    store.append(e)?;
    result
}

fn export_checked(store: &Store, sha: &str, dest: &Path) -> Result<PathBuf, StoreError> {
    if !store.shas(Area::Promoted)?.iter().any(|s| s == sha) {
        return Err(StoreError::Refused(format!(
            "{sha} is not promoted: only what passed the gate is exported"
        )));
    }
    let name = store.name_in(Area::Promoted, sha).map_err(|_| {
        StoreError::Unusable(format!(
            "{}: no single artifact in it",
            store.artifact_path(Area::Promoted, sha, "").display()
        ))
    })?;
    let to = if dest.is_dir() {
        dest.join(&name)
    } else {
        dest.to_owned()
    };
    if std::fs::symlink_metadata(&to).is_ok() {
        return Err(StoreError::Unusable(format!(
            "{}: already exists; socair does not overwrite",
            to.display()
        )));
    }
    let parent = to
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Copied under a scratch name beside the destination, checked, then renamed into place.
    scratch::remove_stale(parent, ".socair-export-");
    let tmp = scratch::scratch_dir(parent, ".socair-export-").map_err(|e| unusable(parent, e))?;
    let copied = store.copy_promoted(sha, &name, tmp.path())?;
    if copied != sha {
        return Err(StoreError::Refused(format!(
            "promoted/{sha}/{name} now hashes to {copied}: the store was changed after promotion, and nothing was exported"
        )));
    }
    let staged = tmp.path().join(&name);
    std::fs::rename(&staged, &to).map_err(|e| unusable(&to, e))?;
    Ok(to)
}
