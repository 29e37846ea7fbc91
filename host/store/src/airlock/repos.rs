//! Hub repositories in the store: `socair airlock pull DIR --as org/name [--revision R]` records
//! which staged artifact a Hugging Face repository revision is, so that `socair serve` can
//! answer `huggingface_hub` with its files (and only once the artifact is promoted).
//!
//! A record is a document in the store itself (`repos/<org>--<name>/<revision>.json`, on a
//! disk or on object storage alike), and every record is logged (action `map`), so every
//! replica serving one store answers the same. A revision given as a branch or tag name is
//! pinned to a commit id: the revision itself when it is already one (40 lowercase hex digits,
//! as an upstream hub names a commit), otherwise the first 40 hex digits of the artifact's
//! sha256 (a directory's `socair.modeldir/v1` digest, itself the sha256 of the manifest of its
//! files): the same bytes always get the same commit, on every machine, with no upstream.
//! The branch's record and the commit's record are both written, so a client that resolved
//! `main` once keeps getting those bytes under the commit.
//!
//! Repository ids follow the Hub's rule (`huggingface_hub.utils._validators.validate_repo_id`
//! 2.5.0: one or two segments of `[A-Za-z0-9_.-]`, at most 96 characters each, no `--` or
//! `..`, not starting or ending with `-` or `.`); revisions stored here are one path segment
//! of `[A-Za-z0-9_.-]` (no `refs/pr/N`: its `/` would need an encoding in the document name).

use crate::airlock::error::{unusable, StoreError};
use crate::airlock::log::LogEntry;
use crate::airlock::store::{Area, Store};
use crate::read::modeldir;
use crate::read::source::{is_remote, sha256_of_path};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The schema of a repository record.
pub const REPO_SCHEMA: &str = "socair.repo/v1";
/// The store's folder of repository records.
pub const REPOS_DIR: &str = "repos";
/// The revision a pull names when `--revision` is not given (the Hub's default branch).
pub const DEFAULT_REVISION: &str = "main";

/// One file of a repository revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoFile {
    /// Its path in the repository, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its sha256.
    pub sha256: String,
}

/// What a repository revision is in the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoRecord {
    /// [`REPO_SCHEMA`].
    pub schema: String,
    /// The repository id (`org/name` or `name`).
    pub repo: String,
    /// The revision as the pull named it (a branch, a tag or a commit).
    pub revision: String,
    /// The commit id it is pinned to (40 hex digits).
    pub commit: String,
    /// The artifact's sha256 (a directory's `socair.modeldir/v1` digest).
    pub sha256: String,
    /// The artifact's name in the store (`<area>/<sha256>/<name>`).
    pub name: String,
    /// Whether the artifact is a model directory (its files lie under `<name>/`) or one file
    /// (`<name>` is the repository's only file).
    pub directory: bool,
    /// Its files, sorted by path.
    pub files: Vec<RepoFile>,
}

impl RepoRecord {
    /// Where the file `file` of this revision lies in `area` of `store`: a local path, or
    /// an object's URL.
    pub fn file_path(&self, store: &Store, area: Area, file: &RepoFile) -> PathBuf {
        let base = store.artifact_path(area, &self.sha256, &self.name);
        if self.directory {
            file.path.split('/').fold(base, |p, part| p.join(part))
        } else {
            base
        }
    }
}

/// Whether `id` is a repository id the Hub accepts (see the module's documentation).
pub fn check_repo_id(id: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("{id:?} is not a Hugging Face repository id: {why}"));
    let parts: Vec<&str> = id.split('/').collect();
    if parts.is_empty() || parts.len() > 2 {
        return bad("it is `name` or `org/name`");
    }
    for p in parts {
        if p.is_empty() || p.len() > 96 {
            return bad("each part has 1 to 96 characters");
        }
        if !p
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        {
            return bad("only letters, digits, `_`, `.` and `-`");
        }
        if p.contains("--") || p.contains("..") {
            return bad("no `--` or `..`");
        }
        if p.starts_with(['-', '.']) || p.ends_with(['-', '.']) {
            return bad("no part starts or ends with `-` or `.`");
        }
    }
    Ok(())
}

/// Whether `rev` is a revision a record can be kept under (see the module's documentation).
pub fn check_revision(rev: &str) -> Result<(), String> {
    let ok = !rev.is_empty()
        && rev.len() <= 128
        && !rev.starts_with('.')
        && rev
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{rev:?} is not a revision socair records: 1 to 128 letters, digits, `_`, `.` or `-`, not starting with `.`"
        ))
    }
}

/// Whether `rev` names a commit (40 lowercase hex digits, as the Hub and git write one).
pub fn is_commit(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The folder of `repo`'s records (`repos/<org>--<name>`; the Hub allows no `--` in an id,
/// so the name is unambiguous).
fn repo_dir(repo: &str) -> String {
    format!("{REPOS_DIR}/{}", repo.replace('/', "--"))
}

/// The files of the artifact `sha` named `name`, hashed, read from its copy in the store when
/// that is on this machine, else from `source`; they must be the artifact's bytes (their
/// digest is its sha256).
fn files_of(
    store: &Store,
    sha: &str,
    name: &str,
    source: &Path,
) -> Result<(bool, Vec<RepoFile>), StoreError> {
    let copies = [
        store.artifact_path(Area::Incoming, sha, name),
        store.artifact_path(Area::Promoted, sha, name),
        source.to_owned(),
    ];
    let at = copies
        .iter()
        .find(|p| !is_remote(p) && std::fs::symlink_metadata(p).is_ok())
        .ok_or_else(|| {
            StoreError::Unusable(format!(
                "--as lists the artifact's files from a local copy, and neither the store nor {} is one",
                source.display()
            ))
        })?;
    let meta = std::fs::symlink_metadata(at).map_err(|e| unusable(at, e))?;
    let (directory, files, digest) = if meta.is_dir() {
        let listed = modeldir::list_files(at).map_err(|e| StoreError::Refused(e.to_string()))?;
        let hashed = modeldir::hash_each(&listed).map_err(|e| unusable(at, e))?;
        let digest = modeldir::digest_of(&hashed);
        let files = hashed
            .into_iter()
            .map(|(path, size, sha256)| RepoFile { path, size, sha256 })
            .collect();
        (true, files, digest)
    } else {
        let sha256 = sha256_of_path(at).map_err(|e| unusable(at, e))?;
        let file = RepoFile {
            path: name.to_owned(),
            size: meta.len(),
            sha256: sha256.clone(),
        };
        (false, vec![file], sha256)
    };
    if digest != sha {
        return Err(StoreError::Refused(format!(
            "{} hashes to {digest} now, not the {sha} just staged: it changed during the pull, and no repository was recorded",
            at.display()
        )));
    }
    let mut files: Vec<RepoFile> = files;
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok((directory, files))
}

/// Records that revision `revision` of the Hub repository `repo` is the staged artifact
/// `sha` named `name` (pulled from `source`), pinning a branch to a commit; logged (action
/// `map`, refused or ok). Returns the record.
pub fn record(
    store: &Store,
    sha: &str,
    name: &str,
    source: &Path,
    repo: &str,
    revision: &str,
) -> Result<RepoRecord, StoreError> {
    record_with(store, sha, name, repo, revision, || {
        files_of(store, sha, name, source)
    })
}

/// [`record`] of a model directory whose files were hashed as they were staged (`files`:
/// relative path, size, sha256; `Store::pull_fetched`): nothing is read again, and their
/// digest must be `sha`.
pub fn record_hashed(
    store: &Store,
    sha: &str,
    name: &str,
    files: &[(String, u64, String)],
    repo: &str,
    revision: &str,
) -> Result<RepoRecord, StoreError> {
    record_with(store, sha, name, repo, revision, || {
        let digest = modeldir::digest_of(files);
        if digest != sha {
            return Err(StoreError::Refused(format!(
                "the files listed for {name} digest to {digest}, not the {sha} staged; no repository was recorded"
            )));
        }
        let mut listed: Vec<RepoFile> = files
            .iter()
            .map(|(path, size, sha256)| RepoFile {
                path: path.clone(),
                size: *size,
                sha256: sha256.clone(),
            })
            .collect();
        listed.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        Ok((true, listed))
    })
}

/// Records `repo` at `revision` as the artifact `sha` named `name` whose files `files` lists
/// (whether it is a directory, and each file), logged as `map`.
fn record_with(
    store: &Store,
    sha: &str,
    name: &str,
    repo: &str,
    revision: &str,
    files: impl FnOnce() -> Result<(bool, Vec<RepoFile>), StoreError>,
) -> Result<RepoRecord, StoreError> {
    let result = (|| {
        check_repo_id(repo).map_err(StoreError::Unusable)?;
        check_revision(revision).map_err(StoreError::Unusable)?;
        let (directory, files) = files()?;
        let commit = if is_commit(revision) {
            revision.to_owned()
        } else {
            sha[..40].to_owned()
        };
        let rec = RepoRecord {
            schema: REPO_SCHEMA.into(),
            repo: repo.to_owned(),
            revision: revision.to_owned(),
            commit: commit.clone(),
            sha256: sha.to_owned(),
            name: name.to_owned(),
            directory,
            files,
        };
        let bytes = crate::base::output::to_json_bytes(&rec);
        let dir = repo_dir(repo);
        // The commit's record first: a branch never points at a commit that has none.
        store.put_review(&dir, &format!("{commit}.json"), &bytes)?;
        if revision != commit {
            store.put_review(&dir, &format!("{revision}.json"), &bytes)?;
        }
        Ok(rec)
    })();
    let mut e = LogEntry::new("map", if result.is_ok() { "ok" } else { "refused" });
    e.subject = Some(sha.to_owned());
    e.name = Some(repo.to_owned());
    e.detail = Some(match &result {
        Ok(r) => format!(
            "{repo}@{revision} is commit {} ({} files)",
            r.commit,
            r.files.len()
        ),
        Err(err) => format!("{repo}@{revision}: {err}"),
    });
    store.append(e)?;
    result
}

/// The record of revision `revision` (a branch, tag or commit) of `repo`; `None` when the
/// store has none. Both are checked first, so nothing a client sends names another folder.
pub fn lookup(store: &Store, repo: &str, revision: &str) -> Result<Option<RepoRecord>, StoreError> {
    check_repo_id(repo).map_err(StoreError::Unusable)?;
    check_revision(revision).map_err(StoreError::Unusable)?;
    let want = format!("{revision}.json");
    let Some((_, bytes)) = store
        .reviews(&repo_dir(repo))?
        .into_iter()
        .find(|(file, _)| *file == want)
    else {
        return Ok(None);
    };
    let rec: RepoRecord = serde_json::from_slice(&bytes).map_err(|e| {
        StoreError::Unusable(format!(
            "{}/{want}: not a repository record: {e}",
            repo_dir(repo)
        ))
    })?;
    if rec.schema != REPO_SCHEMA || rec.repo != repo {
        return Err(StoreError::Unusable(format!(
            "{}/{want}: a record of {:?} ({}), not of {repo}",
            repo_dir(repo),
            rec.repo,
            rec.schema
        )));
    }
    Ok(Some(rec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_ids_follow_the_hubs_rule() {
        for ok in ["org/tiny", "tiny", "Org_1/m.v-2", "a/b"] {
            assert!(check_repo_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "/", "a/b/c", "a//b", "../x", "a/..", "a--b/c", "a/b..c", "-a/b", "a/b.", "a/b c",
            "a/%2e", "a\\b",
        ] {
            assert!(check_repo_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn revisions_are_one_safe_segment() {
        for ok in ["main", "v1.0", "0123456789abcdef0123456789abcdef01234567"] {
            assert!(check_revision(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "refs/pr/1",
            "a b",
            "a%2fb",
            "x/../y",
        ] {
            assert!(check_revision(bad).is_err(), "{bad}");
        }
        assert!(is_commit("0123456789abcdef0123456789abcdef01234567"));
        assert!(!is_commit("0123456789ABCDEF0123456789abcdef01234567"));
        assert!(!is_commit("main"));
    }
}
