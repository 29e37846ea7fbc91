//! A store in a directory on this machine (the layout in [`crate::airlock::store`]): every
//! write goes to `.tmp/` or `work/` first and is renamed into place, so a refusal or a crash
//! leaves nothing half-written in `incoming/` or `promoted/`; the log is appended under its
//! lock ([`ActivityLog`]).

use crate::airlock::backend::{Gate, PolicyChange, StoreBackend};
use crate::airlock::error::{unusable, StoreError};
use crate::airlock::files::{copy_hashing, digest_of_path, rename_unless_staged, sync_dir};
use crate::airlock::log::{ActivityLog, LogCheck, LogEntry};
use crate::airlock::policy::Policy;
use crate::airlock::store_layout::{empty_policy, Area, ACCEPTANCES, ATTESTATION};
use crate::airlock::store_layout::{DERIVATION, DERIVATIONS};
use crate::base::fault;
use crate::base::output;
use crate::base::scratch;
use crate::read::modeldir;
use std::path::{Path, PathBuf};

/// A store in the directory `root`.
#[derive(Debug, Clone)]
pub struct FileBackend {
    root: PathBuf,
}

impl FileBackend {
    /// The store (existing or to be created) in `root`.
    pub fn new(root: &Path) -> FileBackend {
        FileBackend {
            root: root.to_owned(),
        }
    }

    fn save_policy(&self, p: &Policy) -> Result<(), StoreError> {
        let path = self.root.join("policy.json");
        output::write_atomically(&path, &output::to_json_bytes(p)).map_err(|e| unusable(&path, e))
    }

    /// Copies a local file or model directory, or an object, into a scratch directory,
    /// hashing while copying; returns the scratch directory and the sha256.
    fn copy_in(
        &self,
        source: &Path,
        name: &str,
    ) -> Result<(tempfile::TempDir, String), StoreError> {
        if crate::read::source::is_remote(source) {
            // An object is copied (hashed while it streams) like a local file.
            let tmp = self.scratch(".tmp", "pull-")?;
            let sha = copy_hashing(source, &tmp.path().join(name))?;
            return Ok((tmp, sha));
        }
        let meta = std::fs::symlink_metadata(source).map_err(|e| unusable(source, e))?;
        let tmp = self.scratch(".tmp", "pull-")?;
        let staged = tmp.path().join(name);
        let sha = if meta.is_file() {
            copy_hashing(source, &staged)?
        } else if meta.is_dir() {
            let files =
                modeldir::list_files(source).map_err(|e| StoreError::Refused(e.to_string()))?;
            let mut entries = Vec::with_capacity(files.len());
            for f in &files {
                let dest = staged.join(&f.rel);
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| unusable(parent, e))?;
                }
                let sha = copy_hashing(&f.path, &dest)?;
                entries.push((f.rel.clone(), f.size, sha));
            }
            modeldir::digest_of(&entries)
        } else {
            return Err(StoreError::Refused(format!(
                "{}: not a regular file or a directory (symbolic links are not followed)",
                source.display()
            )));
        };
        Ok((tmp, sha))
    }

    /// Renames the scratch directory `tmp` (holding `<name>`, whose digest is `sha`) to
    /// `incoming/<sha>/`, unless that is staged already (then `tmp` is dropped).
    fn move_in(
        &self,
        tmp: tempfile::TempDir,
        sha: String,
        name: String,
    ) -> Result<(String, String), StoreError> {
        let root = &self.root;
        let dest = root.join("incoming").join(&sha);
        if dest.exists() {
            return Ok((sha, name)); // already staged; the scratch copy is dropped
        }
        std::fs::create_dir_all(root.join("incoming")).map_err(|e| unusable(root, e))?;
        fault::point("pull.copied");
        let tmp_path = tmp.keep();
        if !rename_unless_staged(&tmp_path, &dest)? {
            return Ok((sha, name)); // another process staged the same bytes first
        }
        sync_dir(&root.join("incoming"));
        fault::point("pull.renamed");
        Ok((sha, name))
    }
}

impl StoreBackend for FileBackend {
    fn display(&self) -> String {
        self.root.display().to_string()
    }

    fn create(&self) -> Result<(), StoreError> {
        let root = &self.root;
        if root.join("policy.json").exists() {
            return Err(StoreError::Unusable(format!(
                "{}: already a store",
                root.display()
            )));
        }
        if root.exists()
            && std::fs::read_dir(root)
                .map_err(|e| unusable(root, e))?
                .next()
                .is_some()
        {
            return Err(StoreError::Unusable(format!(
                "{}: not empty; a store is created in an empty or new directory",
                root.display()
            )));
        }
        for d in ["incoming", "promoted", "work", ".tmp"] {
            std::fs::create_dir_all(root.join(d)).map_err(|e| unusable(&root.join(d), e))?;
        }
        self.save_policy(&empty_policy())?;
        self.append(LogEntry::new("init", "ok"))
    }

    fn open(&self) -> Result<(), StoreError> {
        if !self.root.join("policy.json").is_file() {
            return Err(StoreError::Unusable(format!(
                "{}: not a socair store (no policy.json); create one with `socair airlock init`",
                self.root.display()
            )));
        }
        // Scratch directories whose process is gone (it was killed, or the machine stopped)
        // were never trusted, and nothing refers to them.
        for area in [".tmp", "work"] {
            scratch::remove_stale(&self.root.join(area), "");
        }
        Ok(())
    }

    fn policy(&self) -> Result<Policy, StoreError> {
        let path = self.root.join("policy.json");
        let bytes = std::fs::read(&path).map_err(|e| unusable(&path, e))?;
        crate::airlock::policy::parse(&bytes, &path.display().to_string())
    }

    /// Under the log's lock: the policy read, changed and saved, then the entry appended.
    fn change_policy(
        &self,
        entry: LogEntry,
        change: &mut PolicyChange<'_>,
    ) -> Result<(), StoreError> {
        let log = ActivityLog::of_store(&self.root);
        let mut lock = log.lock()?;
        let mut policy = self.policy()?;
        change(&mut policy)?;
        self.save_policy(&policy)?;
        log.append_locked(&mut lock, entry)
    }

    fn read_log(&self) -> Result<LogCheck, StoreError> {
        ActivityLog::of_store(&self.root).read()
    }

    fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        ActivityLog::of_store(&self.root).append(entry)
    }

    fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        let base = self.root.join(area);
        std::fs::create_dir_all(&base).map_err(|e| unusable(&base, e))?;
        scratch::scratch_dir(&base, kind).map_err(|e| unusable(&base, e))
    }

    /// Copied into `.tmp/`, then renamed to `incoming/<sha256>/`.
    fn stage_pulled(&self, source: &Path, name: String) -> Result<(String, String), StoreError> {
        let (tmp, sha) = self.copy_in(source, &name)?;
        self.move_in(tmp, sha, name)
    }

    /// Moved in: each file checked (a regular file of its listed size) and made durable, the
    /// digest taken from the hashes made while the files were written, then the scratch
    /// directory renamed to `incoming/<sha256>/` as a pull's copy is.
    fn stage_fetched(
        &self,
        scratch: tempfile::TempDir,
        name: String,
        files: &[(String, u64, String)],
    ) -> Result<(String, String), StoreError> {
        let tmp_root = self.root.join(".tmp");
        if !scratch.path().starts_with(&tmp_root) {
            return self.stage_pulled(&scratch.path().join(&name), name);
        }
        let dir = scratch.path().join(&name);
        let listed = modeldir::list_files(&dir).map_err(|e| StoreError::Refused(e.to_string()))?;
        let mut want: Vec<&(String, u64, String)> = files.iter().collect();
        want.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        if listed.len() != want.len()
            || listed
                .iter()
                .zip(&want)
                .any(|(l, w)| l.rel != w.0 || l.size != w.1)
        {
            return Err(StoreError::Refused(format!(
                "{}: the fetched files are not the {} listed",
                dir.display(),
                want.len()
            )));
        }
        for f in &listed {
            let file = std::fs::File::open(&f.path).map_err(|e| unusable(&f.path, e))?;
            file.sync_all().map_err(|e| unusable(&f.path, e))?;
        }
        let sha = modeldir::digest_of(files);
        self.move_in(scratch, sha, name)
    }

    fn shas(&self, area: Area) -> Result<Vec<String>, StoreError> {
        let mut out: Vec<String> = match std::fs::read_dir(self.root.join(area.dir())) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.len() == 64)
                .collect(),
            Err(_) => Vec::new(),
        };
        out.sort();
        Ok(out)
    }

    /// The one entry of `<area>/<sha>/` that is not a document beside the artifact.
    fn name_in(&self, area: Area, sha: &str) -> Result<Option<String>, StoreError> {
        let dir = self.root.join(area.dir()).join(sha);
        // <area>/<sha256> must be a directory of the store's own, not a link elsewhere.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            return Err(StoreError::Refused(format!(
                "{}: not a directory (a symbolic link?); the store holds only what it copied",
                dir.display()
            )));
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(None);
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| {
                n != ATTESTATION
                    && n != ACCEPTANCES
                    && n != DERIVATION
                    && n != DERIVATIONS
                    && !n.starts_with('.')
            })
            .collect();
        names.sort();
        match names.as_slice() {
            [one] => Ok(Some(one.clone())),
            _ => Err(StoreError::Unusable(format!(
                "{}: expected one staged artifact, found {names:?}",
                dir.display()
            ))),
        }
    }

    fn is_staged(&self, sha: &str) -> Result<bool, StoreError> {
        Ok(self.root.join("incoming").join(sha).exists())
    }

    fn is_promoted(&self, sha: &str) -> Result<bool, StoreError> {
        Ok(self.root.join("promoted").join(sha).is_dir()
            && !self.root.join("incoming").join(sha).exists())
    }

    fn artifact_path(&self, area: Area, sha: &str, name: &str) -> PathBuf {
        self.root.join(area.dir()).join(sha).join(name)
    }

    fn rehash(&self, sha: &str, name: &str) -> Result<String, StoreError> {
        digest_of_path(&self.artifact_path(Area::Incoming, sha, name))
    }

    fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.root.join("incoming").join(sha).join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| unusable(parent, e))?;
        }
        output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))
    }

    fn read_beside(&self, area: Area, sha: &str, rel: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(std::fs::read(self.root.join(area.dir()).join(sha).join(rel)).ok())
    }

    fn docs_beside(&self, area: Area, sha: &str, dir: &str) -> Result<Vec<Vec<u8>>, StoreError> {
        let Ok(entries) = std::fs::read_dir(self.root.join(area.dir()).join(sha).join(dir)) else {
            return Ok(Vec::new());
        };
        Ok(entries
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path()).ok())
            .collect())
    }

    /// The gate, then one rename of the directory.
    fn promote(&self, sha: &str, gate: Gate<'_>) -> Result<bool, StoreError> {
        let root = &self.root;
        let from = root.join("incoming").join(sha);
        let to = root.join("promoted").join(sha);
        if to.is_dir() && !from.exists() {
            return Ok(false);
        }
        // The gate rehashes the staged bytes itself, after its cheaper checks.
        gate(None)?;
        if to.exists() {
            return Err(StoreError::Refused(format!("{sha} is already promoted")));
        }
        std::fs::create_dir_all(root.join("promoted")).map_err(|e| unusable(root, e))?;
        fault::point("promote.assessed");
        if let Err(e) = std::fs::rename(&from, &to) {
            // Another process promoted it between the check above and this rename.
            if to.is_dir() && !from.exists() {
                return Ok(false);
            }
            return Err(unusable(&to, e));
        }
        sync_dir(&root.join("promoted"));
        sync_dir(&root.join("incoming"));
        fault::point("promote.renamed");
        Ok(true)
    }

    fn stage_converted(
        &self,
        sha: &str,
        dir: tempfile::TempDir,
        _name: &str,
    ) -> Result<bool, StoreError> {
        let dest = self.root.join("incoming").join(sha);
        let tmp_path = dir.keep();
        rename_unless_staged(&tmp_path, &dest)
    }

    fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return Ok(Vec::new());
        };
        Ok(entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                std::fs::read(e.path()).ok().map(|b| (name, b))
            })
            .collect())
    }

    fn put_review(&self, dir: &str, file: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let d = self.root.join(dir);
        std::fs::create_dir_all(&d).map_err(|e| unusable(&d, e))?;
        let path = d.join(file);
        output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))
    }

    fn remove_review(&self, dir: &str, file: &str) -> Result<(), StoreError> {
        let path = self.root.join(dir).join(file);
        std::fs::remove_file(&path).map_err(|e| unusable(&path, e))
    }

    fn copy_promoted(&self, sha: &str, name: &str, into: &Path) -> Result<String, StoreError> {
        let source = self.artifact_path(Area::Promoted, sha, name);
        let staged = into.join(name);
        if source.is_dir() {
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
            Ok(modeldir::digest_of(&entries))
        } else {
            copy_hashing(&source, &staged)
        }
    }
}
