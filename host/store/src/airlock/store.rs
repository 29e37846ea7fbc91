//! The airlock store: staging, the trust policy, the gate (`Assess`), promotion, and the
//! chained activity log (the README's airlock section; docs/scale.md for the store on object
//! storage).
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
//! machines). The two are the two [`StoreBackend`]s: [`FileBackend`] in a directory,
//! [`BucketBackend`] on object storage, laid out and written as [`crate::airlock::bucket`] and
//! [`crate::airlock::bucket_log`] describe. Every operation here takes the same steps on both
//! backends and differs only in how a step is stored, so the gate, the log's checks and every
//! command hold the same on both.

use crate::airlock::backend::StoreBackend;
use crate::airlock::bucket_backend::BucketBackend;
use crate::airlock::error::{unusable, StoreError};
use crate::airlock::file_backend::FileBackend;
use crate::airlock::log::{LogCheck, LogEntry};
use crate::airlock::pins::PluginPin;
use crate::airlock::policy::{Policy, TrustedKey, ROLES};
use crate::airlock::signing;
use crate::base::cloud;
use crate::read::source::{is_remote, sha256_of_path};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::airlock::store_layout::{Area, ACCEPTANCES, ATTESTATION, DERIVATION, DERIVATIONS};

/// The environment variable naming the default store.
pub const STORE_ENV: &str = "SOCAIR_STORE";

/// A store.
#[derive(Debug, Clone)]
pub struct Store {
    /// Shared by the clones of a store: a backend is where the store is, not what it holds.
    backend: Arc<dyn StoreBackend>,
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
    /// The backend for `root`: a URL names a prefix in object storage, anything else a
    /// directory.
    fn backend_at(root: &Path) -> Result<Arc<dyn StoreBackend>, StoreError> {
        Ok(match root.to_str().filter(|_| is_remote(root)) {
            Some(url) => Arc::new(BucketBackend::parse(url)?),
            None => Arc::new(FileBackend::new(root)),
        })
    }

    /// Creates a store at `root` (an empty or missing directory, or an empty prefix in object
    /// storage).
    pub fn init(root: &Path) -> Result<Store, StoreError> {
        Store::init_on(Store::backend_at(root)?)
    }

    /// Creates a store on `backend`.
    pub(crate) fn init_on(backend: Arc<dyn StoreBackend>) -> Result<Store, StoreError> {
        backend.create()?;
        Ok(Store { backend })
    }

    /// Opens an existing store.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        let backend = Store::backend_at(root)?;
        backend.open()?;
        Ok(Store { backend })
    }

    /// Where the store is (a directory, or a URL), for messages.
    pub fn display(&self) -> String {
        self.backend.display()
    }

    /// Reads the trust policy.
    pub fn policy(&self) -> Result<Policy, StoreError> {
        self.backend.policy()
    }

    /// Changes the policy with `change` and logs `entry`, as one step: under the log's lock
    /// locally; on object storage, as one claim of the next log entry, redone on the policy
    /// then in force when another machine appended first.
    fn change_policy(
        &self,
        entry: LogEntry,
        mut change: impl FnMut(&mut Policy) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.backend.change_policy(entry, &mut change)
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
        self.backend.read_log()
    }

    /// Appends an entry to the activity log (see [`crate::airlock::log::ActivityLog::append`]
    /// and [`crate::airlock::bucket_log::BucketLog::append`]).
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        self.backend.append(entry)
    }

    /// A scratch directory for work on local files (a conversion's copy and output), named
    /// `<kind><pid>-…` so that a later run can tell the leftovers of a process that died from
    /// those of one still running: under the store's `work/` or `.tmp/` for a local store, in
    /// the machine's temporary directory for a store on object storage.
    pub fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        self.backend.scratch(area, kind)
    }

    /// Copies a file or a model directory into `incoming/<sha256>/<name>`, hashing while
    /// copying. Returns the sha256 and the name. Nothing is left behind on failure.
    pub fn pull(&self, source: &Path) -> Result<(String, String), StoreError> {
        let result = self.pull_inner(source);
        self.log_pull(source, result)
    }

    /// Stages the model directory `scratch/<name>`, whose files were hashed as they were
    /// written into this store's scratch area (`files`: relative path, size, sha256), as
    /// `incoming/<sha256>/<name>`: moved in where the store is on this machine, copied
    /// otherwise (`StoreBackend::stage_fetched`). Logged as a pull of `scratch/<name>`.
    pub fn pull_fetched(
        &self,
        scratch: tempfile::TempDir,
        name: &str,
        files: &[(String, u64, String)],
    ) -> Result<(String, String), StoreError> {
        let source = scratch.path().join(name);
        let result = self
            .check_name(name)
            .and_then(|()| self.backend.stage_fetched(scratch, name.to_owned(), files));
        self.log_pull(&source, result)
    }

    /// Logs a pull of `source` and returns its result.
    fn log_pull(
        &self,
        source: &Path,
        result: Result<(String, String), StoreError>,
    ) -> Result<(String, String), StoreError> {
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
                .map_err(StoreError::from)?
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
        self.check_name(&name)?;
        self.backend.stage_pulled(source, name)
    }

    /// Refuses a name no artifact may have in the store (one of the documents kept beside
    /// it, a hidden name, nothing).
    fn check_name(&self, name: &str) -> Result<(), StoreError> {
        if name.is_empty()
            || name.starts_with('.')
            || [ATTESTATION, ACCEPTANCES, DERIVATION, DERIVATIONS].contains(&name)
        {
            return Err(StoreError::Refused(format!(
                "{name:?} is not a name an artifact may have in the store"
            )));
        }
        Ok(())
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
        self.backend.shas(area)
    }

    /// The name of the artifact `sha` in `area`.
    pub fn name_in(&self, area: Area, sha: &str) -> Result<String, StoreError> {
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(StoreError::Unusable(format!("{sha:?} is not a sha256")));
        }
        self.backend.name_in(area, sha)?.ok_or_else(|| {
            StoreError::Unusable(format!(
                "{sha}: nothing with this sha256 is {} in {}",
                if area == Area::Incoming {
                    "staged"
                } else {
                    "promoted"
                },
                self.display()
            ))
        })
    }

    /// A staged artifact's name.
    pub fn staged(&self, sha: &str) -> Result<String, StoreError> {
        self.name_in(Area::Incoming, sha)
    }

    /// Whether an artifact is staged under `sha`.
    pub fn is_staged(&self, sha: &str) -> Result<bool, StoreError> {
        self.backend.is_staged(sha)
    }

    /// Where the artifact `sha` named `name` lies in `area`: a local path, or its URL (which
    /// every reader takes as a path).
    pub fn artifact_path(&self, area: Area, sha: &str, name: &str) -> PathBuf {
        self.backend.artifact_path(area, sha, name)
    }

    /// The sha256 of a staged artifact's bytes, recomputed now.
    pub fn rehash(&self, sha: &str) -> Result<String, StoreError> {
        let name = self.staged(sha)?;
        self.backend.rehash(sha, &name)
    }

    /// Stores a signed document beside a staged artifact, atomically.
    pub fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.staged(sha)?;
        self.backend.put_beside(sha, rel, bytes)
    }

    /// A document beside the artifact `sha` in `area`, when there is one.
    pub fn read_beside(
        &self,
        area: Area,
        sha: &str,
        rel: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.backend.read_beside(area, sha, rel)
    }

    /// The documents in the folder `dir` beside the artifact `sha` in `area`.
    pub fn docs_beside(
        &self,
        area: Area,
        sha: &str,
        dir: &str,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        self.backend.docs_beside(area, sha, dir)
    }

    /// Runs the gate and promotes the staged artifact `sha`. `gate` gets the digest of the
    /// staged bytes as they are now when it was computed on the way (object storage), `None`
    /// when it is to rehash them itself (a local store). Locally: the gate, then one rename of
    /// the directory. On object storage: a copy hashed as it passes, the gate on that hash,
    /// then the promotion marker claimed with a conditional write (see
    /// [`crate::airlock::bucket::Bucket::promote`]). Returns whether this call promoted it
    /// (`false`: promoted before).
    pub fn promote(
        &self,
        sha: &str,
        gate: impl FnOnce(Option<&str>) -> Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        self.backend.promote(sha, Box::new(gate))
    }

    /// Whether `sha` is promoted already (and nothing of it is left staged).
    pub fn is_promoted(&self, sha: &str) -> Result<bool, StoreError> {
        self.backend.is_promoted(sha)
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
        self.backend.stage_converted(sha, dir, name)
    }

    /// The store's reviews (`reviews/<id>.dsse.json`), each with its file name.
    pub fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        self.backend.reviews(dir)
    }

    /// Writes `reviews/<file>`.
    pub fn put_review(&self, dir: &str, file: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.backend.put_review(dir, file, bytes)
    }

    /// Removes `reviews/<file>`.
    pub fn remove_review(&self, dir: &str, file: &str) -> Result<(), StoreError> {
        self.backend.remove_review(dir, file)
    }

    /// Copies the promoted artifact `sha` into the local directory `into` (it lands at
    /// `into/<name>`), hashing while copying; returns its digest.
    pub fn copy_promoted(&self, sha: &str, name: &str, into: &Path) -> Result<String, StoreError> {
        self.backend.copy_promoted(sha, name, into)
    }
}
