//! What differs between a store in a directory ([`FileBackend`]) and one on object storage
//! ([`BucketBackend`]): how a step is stored. [`crate::airlock::store::Store`] takes the same
//! steps on both (the checks on names and sha256s, the log entries, the messages that name
//! the store), so the gate, the log's checks and every command hold the same on both; each
//! operation here is one step, stored as its backend stores it.
//!
//! [`FileBackend`]: crate::airlock::file_backend::FileBackend
//! [`BucketBackend`]: crate::airlock::bucket_backend::BucketBackend

use crate::airlock::error::StoreError;
use crate::airlock::log::{LogCheck, LogEntry};
use crate::airlock::policy::Policy;
use crate::airlock::store_layout::Area;
use std::path::{Path, PathBuf};

/// A change to the trust policy; it may run more than once (see
/// [`StoreBackend::change_policy`]).
pub type PolicyChange<'a> = dyn FnMut(&mut Policy) -> Result<(), StoreError> + 'a;

/// The gate a promotion runs: it gets the digest of the staged bytes as they are now when
/// the backend computed it on the way (object storage), `None` when it is to rehash them
/// itself (a directory).
pub type Gate<'a> = Box<dyn FnOnce(Option<&str>) -> Result<(), StoreError> + 'a>;

/// How a store keeps what it holds.
pub trait StoreBackend: std::fmt::Debug + Send + Sync {
    /// Where the store is (a directory, or a URL), for messages.
    fn display(&self) -> String;

    /// Creates the store (an empty or missing directory, an empty prefix), with its empty
    /// policy and its first log entry.
    fn create(&self) -> Result<(), StoreError>;

    /// Checks that a store is there, and clears what dead processes left in it.
    fn open(&self) -> Result<(), StoreError>;

    /// The trust policy in force.
    fn policy(&self) -> Result<Policy, StoreError>;

    /// Changes the policy with `change` and logs `entry`, as one step (`change` may run again
    /// on the policy then in force when another writer appended first).
    fn change_policy(
        &self,
        entry: LogEntry,
        change: &mut PolicyChange<'_>,
    ) -> Result<(), StoreError>;

    /// Reads the activity log and checks it.
    fn read_log(&self) -> Result<LogCheck, StoreError>;

    /// Appends an entry to the activity log.
    fn append(&self, entry: LogEntry) -> Result<(), StoreError>;

    /// A local scratch directory named `<kind><pid>-…`, in the store's `area` when the store
    /// is on this machine.
    fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError>;

    /// Stages the model directory `scratch/<name>` (a [`StoreBackend::scratch`] directory of
    /// this store's `.tmp` area) whose files were hashed as they were written (`files`:
    /// relative path, size, sha256), as `incoming/<sha256>/<name>`; returns the sha256. A
    /// store on this machine moves it in (made durable first) rather than copy it; the scan
    /// that follows hashes the bytes again and refuses any that differ. By default it is
    /// staged as [`StoreBackend::stage_pulled`] stages a directory (copied, hashed again).
    fn stage_fetched(
        &self,
        scratch: tempfile::TempDir,
        name: String,
        files: &[(String, u64, String)],
    ) -> Result<(String, String), StoreError> {
        let _ = files;
        self.stage_pulled(&scratch.path().join(&name), name)
    }

    /// Stages the file, model directory or object `source` as `incoming/<sha256>/<name>`
    /// (`name` checked already); returns the sha256 and the name. An artifact staged already
    /// is left as it is.
    fn stage_pulled(&self, source: &Path, name: String) -> Result<(String, String), StoreError>;

    /// The sha256s of the artifacts in `area`, sorted.
    fn shas(&self, area: Area) -> Result<Vec<String>, StoreError>;

    /// The name of the artifact `sha` (a sha256, checked already) in `area`; `None` when
    /// nothing is there.
    fn name_in(&self, area: Area, sha: &str) -> Result<Option<String>, StoreError>;

    /// Whether an artifact is staged under `sha`.
    fn is_staged(&self, sha: &str) -> Result<bool, StoreError>;

    /// Whether `sha` is promoted (and nothing of it is left staged).
    fn is_promoted(&self, sha: &str) -> Result<bool, StoreError>;

    /// Where the artifact `sha` named `name` lies in `area`: a local path, or its URL.
    fn artifact_path(&self, area: Area, sha: &str, name: &str) -> PathBuf;

    /// The digest of the staged artifact `sha` named `name`, its bytes read now.
    fn rehash(&self, sha: &str, name: &str) -> Result<String, StoreError>;

    /// Writes a document beside the staged artifact `sha`, atomically.
    fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// A document beside the artifact `sha` in `area`, when there is one.
    fn read_beside(&self, area: Area, sha: &str, rel: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// The documents in the folder `dir` beside the artifact `sha` in `area`.
    fn docs_beside(&self, area: Area, sha: &str, dir: &str) -> Result<Vec<Vec<u8>>, StoreError>;

    /// Runs `gate` and promotes the staged artifact `sha`; whether this call promoted it
    /// (`false`: promoted before, or by another process meanwhile).
    fn promote(&self, sha: &str, gate: Gate<'_>) -> Result<bool, StoreError>;

    /// Stages a conversion's scratch directory `dir` (the artifact `name` and its records)
    /// as `incoming/<sha>/`; `false` when another process staged the same bytes first.
    fn stage_converted(
        &self,
        sha: &str,
        dir: tempfile::TempDir,
        name: &str,
    ) -> Result<bool, StoreError>;

    /// The documents in the store's folder `dir`, each with its file name.
    fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError>;

    /// Writes `<dir>/<file>`.
    fn put_review(&self, dir: &str, file: &str, bytes: &[u8]) -> Result<(), StoreError>;

    /// Removes `<dir>/<file>`.
    fn remove_review(&self, dir: &str, file: &str) -> Result<(), StoreError>;

    /// Copies the promoted artifact `sha` named `name` into the local directory `into`
    /// (it lands at `into/<name>`), hashing while copying; returns its digest.
    fn copy_promoted(&self, sha: &str, name: &str, into: &Path) -> Result<String, StoreError>;
}
