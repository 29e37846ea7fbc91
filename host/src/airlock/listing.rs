//! What the store holds, as people use it: `airlock ls` (staged and promoted artifacts with
//! their verdicts) and `airlock export` (a promoted artifact copied out, its hash checked
//! again on the way).

use crate::airlock::error::{unusable, StoreError};
use crate::airlock::gate::verify_scan_attestation;
use crate::airlock::log::LogEntry;
use crate::airlock::store::{
    copy_hashing, Store, ACCEPTANCES, ATTESTATION, DERIVATION, DERIVATIONS,
};
use crate::base::scratch;
use crate::read::modeldir;
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

fn artifact_name(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            ![ATTESTATION, ACCEPTANCES, DERIVATION, DERIVATIONS].contains(&n.as_str())
                && !n.starts_with('.')
        })
        .collect();
    names.sort();
    match names.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Every staged and promoted artifact, staged first, each by sha256.
pub fn list(store: &Store) -> Result<Vec<Listed>, StoreError> {
    let policy = store.policy()?;
    let mut out = Vec::new();
    for (area, state) in [("incoming", "staged"), ("promoted", "promoted")] {
        let Ok(entries) = std::fs::read_dir(store.root.join(area)) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            let sha = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if sha.len() != 64 || !dir.is_dir() {
                continue;
            }
            let verdict = match std::fs::read(dir.join(ATTESTATION)) {
                Err(_) => "not scanned (`socair airlock scan`)".to_owned(),
                Ok(bytes) => match verify_scan_attestation(&policy, &bytes) {
                    Ok((_, report)) => report
                        .rows
                        .iter()
                        .map(|r| format!("{} {}", r.status, r.check))
                        .collect::<Vec<_>>()
                        .join(", "),
                    Err(e) => format!("its attestation does not hold: {e}"),
                },
            };
            let acceptances = std::fs::read_dir(dir.join(ACCEPTANCES))
                .map(|e| e.count())
                .unwrap_or(0);
            out.push(Listed {
                name: artifact_name(&dir).unwrap_or_else(|| "(incomplete)".into()),
                derived: dir.join(DERIVATION).is_file(),
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
    let dir = store.root.join("promoted").join(sha);
    if !dir.is_dir() {
        return Err(StoreError::Refused(format!(
            "{sha} is not promoted: only what passed the gate is exported"
        )));
    }
    let name = artifact_name(&dir).ok_or_else(|| {
        StoreError::Unusable(format!("{}: no single artifact in it", dir.display()))
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
    let staged = tmp.path().join(&name);
    let source = dir.join(&name);
    let copied = if source.is_dir() {
        let files =
            modeldir::list_files(&source).map_err(|e| StoreError::Refused(e.to_string()))?;
        let mut entries = Vec::with_capacity(files.len());
        for f in &files {
            let target = staged.join(&f.rel);
            if let Some(p) = target.parent() {
                std::fs::create_dir_all(p).map_err(|e| unusable(p, e))?;
            }
            entries.push((f.rel.clone(), f.size, copy_hashing(&f.path, &target)?));
        }
        modeldir::digest_of(&entries)
    } else {
        copy_hashing(&source, &staged)?
    };
    if copied != sha {
        return Err(StoreError::Refused(format!(
            "promoted/{sha}/{name} now hashes to {copied}: the store was changed after promotion, and nothing was exported"
        )));
    }
    std::fs::rename(&staged, &to).map_err(|e| unusable(&to, e))?;
    Ok(to)
}
