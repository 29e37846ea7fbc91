//! The airlock store: staging, the trust policy, the gate (`Assess`), promotion, and the
//! chained activity log (SPEC §2–§3).
//!
//! ```text
//! <store>/policy.json                 trusted keys with roles; pins
//! <store>/activity.log                one JSON line per action, each holding the sha256 of
//!                                     the line before it (and of policy.json as it stood)
//! <store>/activity.head               the log's line count and the sha256 of its last line
//! <store>/incoming/<sha256>/<name>    a pulled artifact (file or model directory)
//! <store>/incoming/<sha256>/attestation.dsse.json
//! <store>/incoming/<sha256>/acceptances/<sha256 of envelope>.dsse.json
//! <store>/promoted/<sha256>/…         what passed the gate, moved as a whole
//! <store>/work/, <store>/.tmp/        copies being made; nothing there is ever trusted
//! ```
//!
//! Every write goes to `.tmp/` first and is renamed into place, so a refusal or a crash
//! leaves nothing half-written in `incoming/` or `promoted/`.
//!
//! A store may also live on object storage (`--store s3://bucket/prefix`, shared by many
//! machines): [`Backend::Objects`], laid out and written as [`crate::airlock::bucket`] and
//! [`crate::airlock::bucket_log`] describe. Every operation here takes the same steps on both
//! backends and differs only in how a step is stored, so the gate, the log's checks and every
//! command hold the same on both.

use crate::airlock::bucket::Bucket;
use crate::airlock::bucket_log::BucketLog;
use crate::airlock::error::{unusable, StoreError};
use crate::airlock::files::{copy_hashing, digest_of_path};
use crate::airlock::files::{rename_unless_staged, sync_dir};
use crate::airlock::log::{ActivityLog, LogCheck, LogEntry};
use crate::airlock::pins::{Pins, PluginPin};
use crate::airlock::policy::{Policy, TrustedKey, POLICY_SCHEMA, ROLES};
use crate::airlock::signing;
use crate::base::cloud;
use crate::base::fault;
use crate::base::output;
use crate::base::scratch;
use crate::read::modeldir;
use crate::read::source::{hash_file, is_remote, sha256_of_path, InputFile};
use std::path::{Path, PathBuf};

/// The environment variable naming the default store.
pub const STORE_ENV: &str = "SOCAIR_STORE";
/// File name of a staged artifact's attestation.
pub const ATTESTATION: &str = "attestation.dsse.json";
/// File name of a converted artifact's derivation record.
pub const DERIVATION: &str = "derivation.dsse.json";
/// Directory of a staged artifact's acceptances.
pub const ACCEPTANCES: &str = "acceptances";
/// Directory of a converted artifact's derivation records, one per input
/// (`<input sha256>.dsse.json`): two inputs can convert to the same bytes.
pub const DERIVATIONS: &str = "derivations";

/// A store.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
}

/// Where a store keeps what it holds.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A local directory (the layout above).
    Files(PathBuf),
    /// A prefix in object storage, shared by many machines.
    Objects(Bucket),
}

/// The two areas an artifact can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `incoming/`: staged, not trusted.
    Incoming,
    /// `promoted/`: passed the gate.
    Promoted,
}

impl Area {
    /// The folder's name.
    pub fn dir(self) -> &'static str {
        match self {
            Area::Incoming => "incoming",
            Area::Promoted => "promoted",
        }
    }
}

fn cloud_error(e: cloud::CloudError) -> StoreError {
    StoreError::Unusable(e.to_string())
}

/// The store path from `--store`, else `$SOCAIR_STORE`, else `./socair-store`.
pub fn default_path(flag: Option<PathBuf>) -> PathBuf {
    flag.or_else(|| {
        std::env::var_os(STORE_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .unwrap_or_else(|| PathBuf::from("socair-store"))
}

impl Store {
    /// Creates a store at `root` (an empty or missing directory, or an empty prefix in object
    /// storage).
    pub fn init(root: &Path) -> Result<Store, StoreError> {
        if let Some(url) = root.to_str().filter(|_| is_remote(root)) {
            let store = Store {
                backend: Backend::Objects(Bucket {
                    root: cloud::parse(url).map_err(cloud_error)?,
                }),
            };
            let Backend::Objects(bucket) = &store.backend else {
                unreachable!()
            };
            let log = BucketLog::of_store(&bucket.root);
            if log.exists()? {
                return Err(StoreError::Unusable(format!("{url}: already a store")));
            }
            if !cloud::list(&bucket.root, None)
                .map_err(cloud_error)?
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
            })?;
            return Ok(store);
        }
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
        let store = Store {
            backend: Backend::Files(root.to_owned()),
        };
        store.save_policy(root, &empty_policy())?;
        store.append(LogEntry::new("init", "ok"))?;
        Ok(store)
    }

    /// Opens an existing store.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        if let Some(url) = root.to_str().filter(|_| is_remote(root)) {
            let bucket = Bucket {
                root: cloud::parse(url).map_err(cloud_error)?,
            };
            if !BucketLog::of_store(&bucket.root).exists()? {
                return Err(StoreError::Unusable(format!(
                    "{url}: not a socair store (no log); create one with `socair airlock init`"
                )));
            }
            return Ok(Store {
                backend: Backend::Objects(bucket),
            });
        }
        if !root.join("policy.json").is_file() {
            return Err(StoreError::Unusable(format!(
                "{}: not a socair store (no policy.json); create one with `socair airlock init`",
                root.display()
            )));
        }
        let store = Store {
            backend: Backend::Files(root.to_owned()),
        };
        store.clean_stale();
        Ok(store)
    }

    /// Where the store is (a directory, or a URL), for messages.
    pub fn display(&self) -> String {
        match &self.backend {
            Backend::Files(root) => root.display().to_string(),
            Backend::Objects(b) => b.root.url(),
        }
    }

    /// How it is kept.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Reads the trust policy.
    pub fn policy(&self) -> Result<Policy, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let path = root.join("policy.json");
                let bytes = std::fs::read(&path).map_err(|e| unusable(&path, e))?;
                crate::airlock::policy::parse(&bytes, &path.display().to_string())
            }
            Backend::Objects(b) => Ok(BucketLog::of_store(&b.root).policy()?.0),
        }
    }

    fn save_policy(&self, root: &Path, p: &Policy) -> Result<(), StoreError> {
        let path = root.join("policy.json");
        output::write_atomically(&path, &output::to_json_bytes(p)).map_err(|e| unusable(&path, e))
    }

    /// Changes the policy with `change` and logs `entry`, as one step: under the log's lock
    /// locally; on object storage, as one claim of the next log entry, redone on the policy
    /// then in force when another machine appended first.
    fn change_policy(
        &self,
        entry: LogEntry,
        mut change: impl FnMut(&mut Policy) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let log = ActivityLog::of_store(root);
                let mut lock = log.lock()?;
                let mut policy = self.policy()?;
                change(&mut policy)?;
                self.save_policy(root, &policy)?;
                log.append_locked(&mut lock, entry)
            }
            Backend::Objects(b) => BucketLog::of_store(&b.root).append_with(|in_force| {
                let mut policy = in_force.cloned().ok_or_else(|| {
                    StoreError::Unusable(format!("{}: the log names no policy", b.root.url()))
                })?;
                change(&mut policy)?;
                Ok((entry.clone(), Some(policy)))
            }),
        }
    }

    /// Adds (or updates the roles of) a trusted key; returns its id.
    pub fn trust(&self, public_key: &Path, roles: &[String]) -> Result<String, StoreError> {
        for r in roles {
            if !ROLES.contains(&r.as_str()) {
                return Err(StoreError::Unusable(format!(
                    "unknown role {r:?}; roles are {}",
                    ROLES.join(", ")
                )));
            }
        }
        let key = signing::load_public_key(public_key)
            .map_err(|e| StoreError::Unusable(e.to_string()))?;
        let pem = std::fs::read_to_string(public_key).map_err(|e| unusable(public_key, e))?;
        let id = signing::keyid(&key);
        let mut roles: Vec<String> = roles.to_vec();
        roles.sort();
        roles.dedup();
        let mut e = LogEntry::new("trust", "ok");
        e.key = Some(id.clone());
        e.detail = Some(format!("roles {}", roles.join(",")));
        self.change_policy(e, |policy| {
            match policy.keys.iter_mut().find(|k| k.keyid == id) {
                Some(k) => k.roles = roles.clone(),
                None => policy.keys.push(TrustedKey {
                    keyid: id.clone(),
                    roles: roles.clone(),
                    public_key: pem.trim().to_owned() + "\n",
                }),
            }
            Ok(())
        })?;
        Ok(id)
    }

    /// Pins a plugin (`Some`) or removes its pin (`None`); logged.
    pub fn pin_plugin(&self, name: &str, pin: Option<PluginPin>) -> Result<(), StoreError> {
        if let Some(p) = &pin {
            semver::VersionReq::parse(&p.version)
                .map_err(|e| StoreError::Unusable(format!("--version {:?}: {e}", p.version)))?;
        }
        let detail = match &pin {
            Some(p) => format!(
                "plugin {name} {}{}",
                p.version,
                p.sha256
                    .as_deref()
                    .map_or(String::new(), |h| format!(" sha256 {h}"))
            ),
            None => format!("plugin {name} unpinned"),
        };
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(detail);
        self.change_policy(e, |policy| {
            match &pin {
                Some(p) => {
                    policy.pins.plugins.insert(name.to_owned(), p.clone());
                }
                None => {
                    policy.pins.plugins.remove(name);
                }
            }
            Ok(())
        })
    }

    /// Pins a rule set to a semver requirement (`Some`) or removes its pin; logged.
    pub fn pin_rules(&self, name: &str, requirement: Option<&str>) -> Result<(), StoreError> {
        if let Some(r) = requirement {
            semver::VersionReq::parse(r)
                .map_err(|e| StoreError::Unusable(format!("{r:?}: {e}")))?;
        }
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(match requirement {
            Some(r) => format!("rules {name} {r}"),
            None => format!("rules {name} unpinned"),
        });
        self.change_policy(e, |policy| {
            match requirement {
                Some(r) => {
                    policy.pins.rules.insert(name.to_owned(), r.to_owned());
                }
                None => {
                    policy.pins.rules.remove(name);
                }
            }
            Ok(())
        })
    }

    /// Reads the activity log and checks it.
    pub fn read_log(&self) -> Result<LogCheck, StoreError> {
        match &self.backend {
            Backend::Files(root) => ActivityLog::of_store(root).read(),
            Backend::Objects(b) => BucketLog::of_store(&b.root).read(),
        }
    }

    /// Appends an entry to the activity log (see [`ActivityLog::append`] and
    /// [`BucketLog::append`]).
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Files(root) => ActivityLog::of_store(root).append(entry),
            Backend::Objects(b) => BucketLog::of_store(&b.root).append(entry),
        }
    }

    /// A scratch directory for work on local files (a conversion's copy and output), named
    /// `<kind><pid>-…` so that a later run can tell the leftovers of a process that died from
    /// those of one still running: under the store's `work/` or `.tmp/` for a local store, in
    /// the machine's temporary directory for a store on object storage.
    pub fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        let base = match &self.backend {
            Backend::Files(root) => root.join(area),
            Backend::Objects(_) => std::env::temp_dir().join("socair-work"),
        };
        std::fs::create_dir_all(&base).map_err(|e| unusable(&base, e))?;
        if matches!(self.backend, Backend::Objects(_)) {
            scratch::remove_stale(&base, "");
        }
        scratch::scratch_dir(&base, kind).map_err(|e| unusable(&base, e))
    }

    /// Removes scratch directories whose process is gone (it was killed, or the machine
    /// stopped): they were never trusted, and nothing refers to them.
    fn clean_stale(&self) {
        if let Backend::Files(root) = &self.backend {
            for area in [".tmp", "work"] {
                scratch::remove_stale(&root.join(area), "");
            }
        }
    }

    /// Copies a file or a model directory into `incoming/<sha256>/<name>`, hashing while
    /// copying. Returns the sha256 and the name. Nothing is left behind on failure.
    pub fn pull(&self, source: &Path) -> Result<(String, String), StoreError> {
        let result = self.pull_inner(source);
        let mut e = LogEntry::new("pull", if result.is_ok() { "ok" } else { "refused" });
        match &result {
            Ok((sha, name)) => {
                e.subject = Some(sha.clone());
                e.name = Some(name.clone());
            }
            Err(err) => {
                e.name = source.file_name().map(|n| n.to_string_lossy().into_owned());
                e.detail = Some(err.to_string());
                // The refused input's own sha256, when it is a regular file (a link is not
                // followed; a directory has no digest until it is listed whole).
                if !is_remote(source)
                    && std::fs::symlink_metadata(source).is_ok_and(|m| m.is_file())
                {
                    e.subject = sha256_of_path(source).ok();
                }
            }
        }
        self.append(e)?;
        result
    }

    fn pull_inner(&self, source: &Path) -> Result<(String, String), StoreError> {
        let name = if is_remote(source) {
            cloud::parse(source.to_str().unwrap_or_default())
                .map_err(cloud_error)?
                .name()
        } else {
            source
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
                .ok_or_else(|| {
                    StoreError::Unusable(format!("{}: the name is not UTF-8", source.display()))
                })?
        };
        if name.is_empty()
            || name.starts_with('.')
            || [ATTESTATION, ACCEPTANCES, DERIVATION, DERIVATIONS].contains(&name.as_str())
        {
            return Err(StoreError::Refused(format!(
                "{name:?} is not a name an artifact may have in the store"
            )));
        }
        let root = match &self.backend {
            Backend::Files(root) => root.clone(),
            Backend::Objects(bucket) => return pull_to_bucket(bucket, source, name),
        };
        if is_remote(source) {
            // An object is copied (hashed while it streams) like a local file.
            let tmp = self.scratch(".tmp", "pull-")?;
            let staged = tmp.path().join(&name);
            let sha = copy_hashing(source, &staged)?;
            return self.place_pulled(&root, tmp, sha, name);
        }
        let meta = std::fs::symlink_metadata(source).map_err(|e| unusable(source, e))?;
        let tmp = self.scratch(".tmp", "pull-")?;

        let staged = tmp.path().join(&name);
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
        self.place_pulled(&root, tmp, sha, name)
    }

    /// Renames a pulled copy into `incoming/<sha>/` (a local store).
    fn place_pulled(
        &self,
        root: &Path,
        tmp: tempfile::TempDir,
        sha: String,
        name: String,
    ) -> Result<(String, String), StoreError> {
        let dest = root.join("incoming").join(&sha);
        if dest.exists() {
            return Ok((sha, name)); // already staged; the temporary copy is dropped
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

    /// The full sha256 of the staged or promoted artifact that `text` names: the sha256
    /// itself, or a unique start of it (at least 4 hex digits).
    pub fn resolve(&self, text: &str) -> Result<String, StoreError> {
        let hex = !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit());
        if hex && text.len() == 64 {
            return Ok(text.to_ascii_lowercase());
        }
        if !hex || text.len() < 4 || text.len() > 64 {
            return Err(StoreError::Unusable(format!(
                "{text:?} is not a sha256, nor the start of one (4 to 64 hex digits)"
            )));
        }
        let prefix = text.to_ascii_lowercase();
        let mut found = std::collections::BTreeSet::new();
        for area in [Area::Incoming, Area::Promoted] {
            found.extend(
                self.shas(area)?
                    .into_iter()
                    .filter(|n| n.starts_with(&prefix)),
            );
        }
        let found: Vec<String> = found.into_iter().collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(StoreError::Unusable(format!(
                "nothing staged or promoted in {} has a sha256 starting {prefix}",
                self.display()
            ))),
            many => Err(StoreError::Unusable(format!(
                "{prefix} is the start of {} sha256s ({}): give more of it",
                many.len(),
                many.iter()
                    .map(|s| &s[..prefix.len() + 4])
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// The sha256s of the artifacts in `area`, sorted (on object storage, those whose
    /// marker stands).
    pub fn shas(&self, area: Area) -> Result<Vec<String>, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let mut out: Vec<String> = match std::fs::read_dir(root.join(area.dir())) {
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
            Backend::Objects(b) => b.marked(area.dir()),
        }
    }

    /// The name of the artifact `sha` in `area`.
    pub fn name_in(&self, area: Area, sha: &str) -> Result<String, StoreError> {
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(StoreError::Unusable(format!("{sha:?} is not a sha256")));
        }
        let missing = || {
            StoreError::Unusable(format!(
                "{sha}: nothing with this sha256 is {} in {}",
                if area == Area::Incoming {
                    "staged"
                } else {
                    "promoted"
                },
                self.display()
            ))
        };
        let root = match &self.backend {
            Backend::Files(root) => root,
            Backend::Objects(b) => {
                return b
                    .marker(area.dir(), sha)?
                    .map(|m| m.name)
                    .ok_or_else(missing)
            }
        };
        let dir = root.join(area.dir()).join(sha);
        // <area>/<sha256> must be a directory of the store's own, not a link elsewhere.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            return Err(StoreError::Refused(format!(
                "{}: not a directory (a symbolic link?); the store holds only what it copied",
                dir.display()
            )));
        }
        let entries = std::fs::read_dir(&dir).map_err(|_| missing())?;
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
            [one] => Ok(one.clone()),
            _ => Err(StoreError::Unusable(format!(
                "{}: expected one staged artifact, found {names:?}",
                dir.display()
            ))),
        }
    }

    /// A staged artifact's name.
    pub fn staged(&self, sha: &str) -> Result<String, StoreError> {
        self.name_in(Area::Incoming, sha)
    }

    /// Whether an artifact is staged under `sha`.
    pub fn is_staged(&self, sha: &str) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Files(root) => Ok(root.join("incoming").join(sha).exists()),
            Backend::Objects(b) => Ok(b.marker("incoming", sha)?.is_some()),
        }
    }

    /// Where the artifact `sha` named `name` lies in `area`: a local path, or its URL (which
    /// every reader takes as a path).
    pub fn artifact_path(&self, area: Area, sha: &str, name: &str) -> PathBuf {
        match &self.backend {
            Backend::Files(root) => root.join(area.dir()).join(sha).join(name),
            Backend::Objects(b) => PathBuf::from(b.at(area.dir(), sha, name).url()),
        }
    }

    /// The sha256 of a staged artifact's bytes, recomputed now.
    pub fn rehash(&self, sha: &str) -> Result<String, StoreError> {
        let name = self.staged(sha)?;
        match &self.backend {
            Backend::Files(_) => digest_of_path(&self.artifact_path(Area::Incoming, sha, &name)),
            Backend::Objects(b) => {
                let marker = b
                    .marker("incoming", sha)?
                    .ok_or_else(|| StoreError::Unusable(format!("{sha}: not staged")))?;
                b.rehash("incoming", sha, &marker)
            }
        }
    }

    /// Stores a signed document beside a staged artifact, atomically.
    pub fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.staged(sha)?;
        match &self.backend {
            Backend::Files(root) => {
                let path = root.join("incoming").join(sha).join(rel);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| unusable(parent, e))?;
                }
                output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))
            }
            Backend::Objects(b) => b.put_doc("incoming", sha, rel, bytes),
        }
    }

    /// A document beside the artifact `sha` in `area`, when there is one.
    pub fn read_beside(
        &self,
        area: Area,
        sha: &str,
        rel: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                Ok(std::fs::read(root.join(area.dir()).join(sha).join(rel)).ok())
            }
            Backend::Objects(b) => b.get_doc(area.dir(), sha, rel),
        }
    }

    /// The documents in the folder `dir` beside the artifact `sha` in `area`.
    pub fn docs_beside(
        &self,
        area: Area,
        sha: &str,
        dir: &str,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let Ok(entries) = std::fs::read_dir(root.join(area.dir()).join(sha).join(dir))
                else {
                    return Ok(Vec::new());
                };
                Ok(entries
                    .filter_map(Result::ok)
                    .filter_map(|e| std::fs::read(e.path()).ok())
                    .collect())
            }
            Backend::Objects(b) => Ok(b
                .docs_in(area.dir(), sha, dir)?
                .into_iter()
                .map(|(_, bytes)| bytes)
                .collect()),
        }
    }

    /// Runs the gate and promotes the staged artifact `sha`. `gate` gets the digest of the
    /// staged bytes as they are now when it was computed on the way (object storage), `None`
    /// when it is to rehash them itself (a local store). Locally: the gate, then one rename of the directory. On
    /// object storage: a copy hashed as it passes, the gate on that hash, then the promotion
    /// marker claimed with a conditional write (see [`Bucket::promote`]). Returns whether
    /// this call promoted it (`false`: promoted before).
    pub fn promote(
        &self,
        sha: &str,
        gate: impl FnOnce(Option<&str>) -> Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        let root = match &self.backend {
            Backend::Files(root) => root,
            Backend::Objects(b) => return b.promote(sha, |now| gate(Some(now))),
        };
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

    /// Whether `sha` is promoted already (and nothing of it is left staged).
    pub fn is_promoted(&self, sha: &str) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Files(root) => Ok(root.join("promoted").join(sha).is_dir()
                && !root.join("incoming").join(sha).exists()),
            Backend::Objects(b) => Ok(b.marker("promoted", sha)?.is_some()),
        }
    }

    /// Stages the output of a conversion: `dir` (a local scratch directory) holds the
    /// artifact `name`, its derivation record and records; it becomes `incoming/<sha>/`.
    /// `false` when another process staged the same bytes between the caller's check and
    /// this rename (the caller then records its derivation beside them).
    pub fn stage_converted(
        &self,
        sha: &str,
        dir: tempfile::TempDir,
        name: &str,
    ) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let dest = root.join("incoming").join(sha);
                let tmp_path = dir.keep();
                rename_unless_staged(&tmp_path, &dest)
            }
            Backend::Objects(b) => {
                // The documents first, the artifact and its marker last: until the marker
                // stands, nothing is staged.
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
                        b.put_doc("incoming", sha, &rel, &bytes)?;
                    }
                }
                let file = dir.path().join(name);
                b.stage(sha, name, &[(name.to_owned(), file, sha.to_owned())])
                    .map(|()| true)
            }
        }
    }

    /// The store's reviews (`reviews/<id>.dsse.json`), each with its file name.
    pub fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
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
            Backend::Objects(b) => b.reviews(dir),
        }
    }

    /// Writes `reviews/<file>`.
    pub fn put_review(&self, dir: &str, file: &str, bytes: &[u8]) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let d = root.join(dir);
                std::fs::create_dir_all(&d).map_err(|e| unusable(&d, e))?;
                let path = d.join(file);
                output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))
            }
            Backend::Objects(b) => cloud::put(
                &b.root.child(&format!("{dir}/{file}")),
                bytes.to_vec().into(),
                false,
            )
            .map_err(cloud_error),
        }
    }

    /// Removes `reviews/<file>`.
    pub fn remove_review(&self, dir: &str, file: &str) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Files(root) => {
                let path = root.join(dir).join(file);
                std::fs::remove_file(&path).map_err(|e| unusable(&path, e))
            }
            Backend::Objects(b) => {
                cloud::delete(&b.root.child(&format!("{dir}/{file}"))).map_err(cloud_error)
            }
        }
    }

    /// Copies the promoted artifact `sha` into the local directory `into` (it lands at
    /// `into/<name>`), hashing while copying; returns its digest.
    pub fn copy_promoted(&self, sha: &str, name: &str, into: &Path) -> Result<String, StoreError> {
        match &self.backend {
            Backend::Files(_) => {
                let source = self.artifact_path(Area::Promoted, sha, name);
                let staged = into.join(name);
                if source.is_dir() {
                    let files = modeldir::list_files(&source)
                        .map_err(|e| StoreError::Refused(e.to_string()))?;
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
            Backend::Objects(b) => {
                let marker = b
                    .marker("promoted", sha)?
                    .ok_or_else(|| StoreError::Refused(format!("{sha} is not promoted")))?;
                b.download("promoted", sha, &marker, into)
            }
        }
    }
}

/// Pulls a local file, a local model directory, or an object into a store on object storage:
/// every file is hashed first (the key is its sha256), then uploaded to `incoming/<sha256>/`
/// and hashed again as it streams (a file that changed in between is refused), then the
/// staging marker is written. An artifact staged already is not uploaded again.
fn pull_to_bucket(
    bucket: &Bucket,
    source: &Path,
    name: String,
) -> Result<(String, String), StoreError> {
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
    bucket.stage(&sha, &name, &files)?;
    fault::point("pull.renamed");
    Ok((sha, name))
}

fn empty_policy() -> Policy {
    Policy {
        schema: POLICY_SCHEMA.into(),
        keys: Vec::new(),
        pins: Pins::default(),
    }
}
