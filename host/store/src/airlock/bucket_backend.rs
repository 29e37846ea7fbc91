//! A store on object storage (`--store s3://bucket/prefix`, shared by many machines), laid
//! out and written as [`crate::airlock::bucket`] and [`crate::airlock::bucket_log`]
//! describe: no rename, so what a directory does by renaming is done by writing a marker
//! last, and the log is a run of entries each claimed with a conditional write.

use crate::airlock::backend::{Gate, PolicyChange, StoreBackend};
use crate::airlock::bucket::Bucket;
use crate::airlock::bucket_log::BucketLog;
use crate::airlock::error::{unusable, StoreError};
use crate::airlock::log::{LogCheck, LogEntry};
use crate::airlock::policy::Policy;
use crate::airlock::store_layout::{empty_policy, Area, DERIVATION, DERIVATIONS};
use crate::base::cloud::{self, Location};
use crate::base::fault;
use crate::base::scratch;
use crate::read::modeldir;
use crate::read::source::{hash_file, is_remote, sha256_of_path, InputFile};
use std::path::{Path, PathBuf};

/// A store under a prefix in object storage.
#[derive(Debug, Clone)]
pub struct BucketBackend {
    bucket: Bucket,
    /// The prefix as it was given (`--store`): the words of the init and open errors.
    given: String,
}

impl BucketBackend {
    /// The store (existing or to be created) under the prefix `url` names.
    pub fn parse(url: &str) -> Result<BucketBackend, StoreError> {
        let mut backend = BucketBackend::new(cloud::parse(url).map_err(StoreError::from)?);
        backend.given = url.to_owned();
        Ok(backend)
    }

    /// The store under the prefix `root`.
    pub fn new(root: Location) -> BucketBackend {
        let given = root.url();
        BucketBackend {
            bucket: Bucket { root },
            given,
        }
    }

    fn log(&self) -> BucketLog {
        BucketLog::of_store(&self.bucket.root)
    }

    fn url(&self) -> String {
        self.bucket.root.url()
    }
}

impl StoreBackend for BucketBackend {
    fn display(&self) -> String {
        self.url()
    }

    fn create(&self) -> Result<(), StoreError> {
        let url = &self.given;
        let log = self.log();
        if log.exists()? {
            return Err(StoreError::Unusable(format!("{url}: already a store")));
        }
        if !cloud::list(&self.bucket.root, None)
            .map_err(StoreError::from)?
            .is_empty()
        {
            return Err(StoreError::Unusable(format!(
                "{url}: not empty; a store is created under an empty prefix"
            )));
        }
        log.append_with(|in_force| {
            if in_force.is_some() {
                return Err(StoreError::Unusable(format!("{url}: already a store")));
            }
            Ok((LogEntry::new("init", "ok"), Some(empty_policy())))
        })
    }

    fn open(&self) -> Result<(), StoreError> {
        if !self.log().exists()? {
            return Err(StoreError::Unusable(format!(
                "{}: not a socair store (no log); create one with `socair airlock init`",
                self.given
            )));
        }
        Ok(())
    }

    fn policy(&self) -> Result<Policy, StoreError> {
        Ok(self.log().policy()?.0)
    }

    /// One claim of the next log entry, redone on the policy then in force when another
    /// machine appended first.
    fn change_policy(
        &self,
        entry: LogEntry,
        change: &mut PolicyChange<'_>,
    ) -> Result<(), StoreError> {
        self.log().append_with(|in_force| {
            let mut policy = in_force.cloned().ok_or_else(|| {
                StoreError::Unusable(format!("{}: the log names no policy", self.url()))
            })?;
            change(&mut policy)?;
            Ok((entry.clone(), Some(policy)))
        })
    }

    fn read_log(&self) -> Result<LogCheck, StoreError> {
        self.log().read()
    }

    fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        self.log().append(entry)
    }

    /// In the machine's temporary directory: nothing of the store is on this machine.
    fn scratch(&self, _area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        let base = std::env::temp_dir().join("socair-work");
        std::fs::create_dir_all(&base).map_err(|e| unusable(&base, e))?;
        scratch::remove_stale(&base, "");
        scratch::scratch_dir(&base, kind).map_err(|e| unusable(&base, e))
    }

    /// Every file is hashed first (the key is its sha256), then uploaded to
    /// `incoming/<sha256>/` and hashed again as it streams (a file that changed in between is
    /// refused), then the staging marker is written. An artifact staged already is not
    /// uploaded again.
    fn stage_pulled(&self, source: &Path, name: String) -> Result<(String, String), StoreError> {
        let mut files: Vec<(String, PathBuf, String)> = Vec::new();
        let sha = if is_remote(source) {
            let input = InputFile::open_remote(source.to_str().unwrap_or_default())
                .map_err(|e| unusable(source, e))?;
            let h = hash_file(&input).map_err(|e| unusable(source, e))?;
            files.push((name.clone(), source.to_owned(), h.clone()));
            h
        } else {
            let meta = std::fs::symlink_metadata(source).map_err(|e| unusable(source, e))?;
            if meta.is_file() {
                let h = sha256_of_path(source).map_err(|e| unusable(source, e))?;
                files.push((name.clone(), source.to_owned(), h.clone()));
                h
            } else if meta.is_dir() {
                let listed =
                    modeldir::list_files(source).map_err(|e| StoreError::Refused(e.to_string()))?;
                let mut entries = Vec::new();
                for f in &listed {
                    let h = sha256_of_path(&f.path).map_err(|e| unusable(&f.path, e))?;
                    entries.push((f.rel.clone(), f.size, h.clone()));
                    files.push((format!("{name}/{}", f.rel), f.path.clone(), h));
                }
                modeldir::digest_of(&entries)
            } else {
                return Err(StoreError::Refused(format!(
                    "{}: not a regular file or a directory (symbolic links are not followed)",
                    source.display()
                )));
            }
        };
        fault::point("pull.copied");
        self.bucket.stage(&sha, &name, &files)?;
        fault::point("pull.renamed");
        Ok((sha, name))
    }

    /// Those whose marker stands.
    fn shas(&self, area: Area) -> Result<Vec<String>, StoreError> {
        self.bucket.marked(area.dir())
    }

    fn name_in(&self, area: Area, sha: &str) -> Result<Option<String>, StoreError> {
        Ok(self.bucket.marker(area.dir(), sha)?.map(|m| m.name))
    }

    fn is_staged(&self, sha: &str) -> Result<bool, StoreError> {
        Ok(self.bucket.marker("incoming", sha)?.is_some())
    }

    fn is_promoted(&self, sha: &str) -> Result<bool, StoreError> {
        Ok(self.bucket.marker("promoted", sha)?.is_some())
    }

    /// Its URL, which every reader takes as a path.
    fn artifact_path(&self, area: Area, sha: &str, name: &str) -> PathBuf {
        PathBuf::from(self.bucket.at(area.dir(), sha, name).url())
    }

    fn rehash(&self, sha: &str, _name: &str) -> Result<String, StoreError> {
        let marker = self
            .bucket
            .marker("incoming", sha)?
            .ok_or_else(|| StoreError::Unusable(format!("{sha}: not staged")))?;
        self.bucket.rehash("incoming", sha, &marker)
    }

    fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.bucket.put_doc("incoming", sha, rel, bytes)
    }

    fn read_beside(&self, area: Area, sha: &str, rel: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.bucket.get_doc(area.dir(), sha, rel)
    }

    fn docs_beside(&self, area: Area, sha: &str, dir: &str) -> Result<Vec<Vec<u8>>, StoreError> {
        Ok(self
            .bucket
            .docs_in(area.dir(), sha, dir)?
            .into_iter()
            .map(|(_, bytes)| bytes)
            .collect())
    }

    /// A copy hashed as it passes, the gate on that hash, then the promotion marker claimed
    /// with a conditional write (see [`Bucket::promote`]).
    fn promote(&self, sha: &str, gate: Gate<'_>) -> Result<bool, StoreError> {
        self.bucket.promote(sha, |now| gate(Some(now)))
    }

    /// The documents first, the artifact and its marker last: until the marker stands,
    /// nothing is staged.
    fn stage_converted(
        &self,
        sha: &str,
        dir: tempfile::TempDir,
        name: &str,
    ) -> Result<bool, StoreError> {
        for doc in [DERIVATION.to_owned(), format!("{DERIVATIONS}/")] {
            let path = dir.path().join(&doc);
            let files: Vec<PathBuf> = if path.is_dir() {
                std::fs::read_dir(&path)
                    .map_err(|e| unusable(&path, e))?
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .collect()
            } else {
                vec![path]
            };
            for f in files {
                let rel = f
                    .strip_prefix(dir.path())
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let bytes = std::fs::read(&f).map_err(|e| unusable(&f, e))?;
                self.bucket.put_doc("incoming", sha, &rel, &bytes)?;
            }
        }
        let file = dir.path().join(name);
        self.bucket
            .stage(sha, name, &[(name.to_owned(), file, sha.to_owned())])
            .map(|()| true)
    }

    fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.bucket.reviews(dir)
    }

    fn put_review(&self, dir: &str, file: &str, bytes: &[u8]) -> Result<(), StoreError> {
        cloud::put(
            &self.bucket.root.child(&format!("{dir}/{file}")),
            bytes.to_vec().into(),
            false,
        )
        .map_err(StoreError::from)
    }

    fn remove_review(&self, dir: &str, file: &str) -> Result<(), StoreError> {
        cloud::delete(&self.bucket.root.child(&format!("{dir}/{file}"))).map_err(StoreError::from)
    }

    fn copy_promoted(&self, sha: &str, _name: &str, into: &Path) -> Result<String, StoreError> {
        let marker = self
            .bucket
            .marker("promoted", sha)?
            .ok_or_else(|| StoreError::Refused(format!("{sha} is not promoted")))?;
        self.bucket.download("promoted", sha, &marker, into)
    }
}
