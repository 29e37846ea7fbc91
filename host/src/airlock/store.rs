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

use crate::airlock::error::{unusable, StoreError};
use crate::airlock::log::{ActivityLog, LogEntry};
use crate::airlock::pins::{Pins, PluginPin};
use crate::airlock::policy::{Policy, TrustedKey, POLICY_SCHEMA, ROLES};
use crate::airlock::signing;
use crate::base::digest::hex;
use crate::base::fault;
use crate::base::hashpipe::HashPipe;
use crate::base::output;
use crate::base::progress::Progress;
use crate::base::scratch;
use crate::read::modeldir;
use crate::read::source::sha256_of_path;
use std::io::{Read, Write};
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
    /// Its root directory.
    pub root: PathBuf,
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
    /// Creates a store at `root` (an empty or missing directory).
    pub fn init(root: &Path) -> Result<Store, StoreError> {
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
            root: root.to_owned(),
        };
        store.save_policy(&Policy {
            schema: POLICY_SCHEMA.into(),
            keys: Vec::new(),
            pins: Pins::default(),
        })?;
        store.append(LogEntry::new("init", "ok"))?;
        Ok(store)
    }

    /// Opens an existing store.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        if !root.join("policy.json").is_file() {
            return Err(StoreError::Unusable(format!(
                "{}: not a socair store (no policy.json); create one with `socair airlock init`",
                root.display()
            )));
        }
        let store = Store {
            root: root.to_owned(),
        };
        store.clean_stale();
        Ok(store)
    }

    /// Reads the trust policy.
    pub fn policy(&self) -> Result<Policy, StoreError> {
        let path = self.root.join("policy.json");
        let bytes = std::fs::read(&path).map_err(|e| unusable(&path, e))?;
        let p: Policy = serde_json::from_slice(&bytes).map_err(|e| unusable(&path, e))?;
        if p.schema != POLICY_SCHEMA {
            return Err(unusable(
                &path,
                format!("schema {:?}, expected {POLICY_SCHEMA}", p.schema),
            ));
        }
        Ok(p)
    }

    fn save_policy(&self, p: &Policy) -> Result<(), StoreError> {
        let path = self.root.join("policy.json");
        output::write_atomically(&path, &output::to_json_bytes(p)).map_err(|e| unusable(&path, e))
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
        let mut lock = self.log().lock()?;
        let mut policy = self.policy()?;
        let mut roles: Vec<String> = roles.to_vec();
        roles.sort();
        roles.dedup();
        match policy.keys.iter_mut().find(|k| k.keyid == id) {
            Some(k) => k.roles = roles.clone(),
            None => policy.keys.push(TrustedKey {
                keyid: id.clone(),
                roles: roles.clone(),
                public_key: pem.trim().to_owned() + "\n",
            }),
        }
        self.save_policy(&policy)?;
        let mut e = LogEntry::new("trust", "ok");
        e.key = Some(id.clone());
        e.detail = Some(format!("roles {}", roles.join(",")));
        self.log().append_locked(&mut lock, e)?;
        Ok(id)
    }

    /// Pins a plugin (`Some`) or removes its pin (`None`); logged.
    pub fn pin_plugin(&self, name: &str, pin: Option<PluginPin>) -> Result<(), StoreError> {
        if let Some(p) = &pin {
            semver::VersionReq::parse(&p.version)
                .map_err(|e| StoreError::Unusable(format!("--version {:?}: {e}", p.version)))?;
        }
        let mut lock = self.log().lock()?;
        let mut policy = self.policy()?;
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
        match pin {
            Some(p) => {
                policy.pins.plugins.insert(name.to_owned(), p);
            }
            None => {
                policy.pins.plugins.remove(name);
            }
        }
        self.save_policy(&policy)?;
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(detail);
        self.log().append_locked(&mut lock, e)
    }

    /// Pins a rule set to a semver requirement (`Some`) or removes its pin; logged.
    pub fn pin_rules(&self, name: &str, requirement: Option<&str>) -> Result<(), StoreError> {
        if let Some(r) = requirement {
            semver::VersionReq::parse(r)
                .map_err(|e| StoreError::Unusable(format!("{r:?}: {e}")))?;
        }
        let mut lock = self.log().lock()?;
        let mut policy = self.policy()?;
        match requirement {
            Some(r) => {
                policy.pins.rules.insert(name.to_owned(), r.to_owned());
            }
            None => {
                policy.pins.rules.remove(name);
            }
        }
        self.save_policy(&policy)?;
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(match requirement {
            Some(r) => format!("rules {name} {r}"),
            None => format!("rules {name} unpinned"),
        });
        self.log().append_locked(&mut lock, e)
    }

    /// The activity log.
    pub fn log(&self) -> ActivityLog {
        ActivityLog::of_store(&self.root)
    }

    /// Appends an entry to the activity log (see [`ActivityLog::append`]).
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        self.log().append(entry)
    }

    fn tmp_dir(&self, prefix: &str) -> Result<tempfile::TempDir, StoreError> {
        self.scratch(".tmp", prefix)
    }

    /// A scratch directory under `.tmp/` or `work/`, named `<kind><pid>-…` so that a later
    /// run can tell the leftovers of a process that died from those of one still running.
    pub fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        let base = self.root.join(area);
        std::fs::create_dir_all(&base).map_err(|e| unusable(&base, e))?;
        scratch::scratch_dir(&base, kind).map_err(|e| unusable(&base, e))
    }

    /// Removes scratch directories whose process is gone (it was killed, or the machine
    /// stopped): they were never trusted, and nothing refers to them.
    fn clean_stale(&self) {
        for area in [".tmp", "work"] {
            scratch::remove_stale(&self.root.join(area), "");
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
                if std::fs::symlink_metadata(source).is_ok_and(|m| m.is_file()) {
                    e.subject = sha256_of_path(source).ok();
                }
            }
        }
        self.append(e)?;
        result
    }

    fn pull_inner(&self, source: &Path) -> Result<(String, String), StoreError> {
        let meta = std::fs::symlink_metadata(source).map_err(|e| unusable(source, e))?;
        let name = source
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
            .ok_or_else(|| {
                StoreError::Unusable(format!("{}: the name is not UTF-8", source.display()))
            })?;
        if name.starts_with('.')
            || [ATTESTATION, ACCEPTANCES, DERIVATION, DERIVATIONS].contains(&name.as_str())
        {
            return Err(StoreError::Refused(format!(
                "{name:?} is not a name an artifact may have in the store"
            )));
        }
        let tmp = self.tmp_dir("pull-")?;

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
        let dest = self.root.join("incoming").join(&sha);
        if dest.exists() {
            return Ok((sha, name)); // already staged; the temporary copy is dropped
        }
        std::fs::create_dir_all(self.root.join("incoming")).map_err(|e| unusable(&self.root, e))?;
        fault::point("pull.copied");
        let tmp_path = tmp.keep();
        std::fs::rename(&tmp_path, &dest).map_err(|e| {
            let _ = std::fs::remove_dir_all(&tmp_path);
            unusable(&dest, e)
        })?;
        sync_dir(&self.root.join("incoming"));
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
        for area in ["incoming", "promoted"] {
            if let Ok(entries) = std::fs::read_dir(self.root.join(area)) {
                found.extend(
                    entries
                        .filter_map(Result::ok)
                        .filter_map(|e| e.file_name().into_string().ok())
                        .filter(|n| n.len() == 64 && n.starts_with(&prefix)),
                );
            }
        }
        let found: Vec<String> = found.into_iter().collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(StoreError::Unusable(format!(
                "nothing staged or promoted in {} has a sha256 starting {prefix}",
                self.root.display()
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

    /// A staged artifact: its directory and its name.
    pub fn staged(&self, sha: &str) -> Result<(PathBuf, String), StoreError> {
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(StoreError::Unusable(format!("{sha:?} is not a sha256")));
        }
        let dir = self.root.join("incoming").join(sha);
        // incoming/<sha256> must be a directory of the store's own, not a link elsewhere.
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
            return Err(StoreError::Refused(format!(
                "{}: not a directory (a symbolic link?); the store holds only what it copied",
                dir.display()
            )));
        }
        let entries = std::fs::read_dir(&dir).map_err(|_| {
            StoreError::Unusable(format!(
                "{sha}: nothing with this sha256 is staged in {}",
                self.root.display()
            ))
        })?;
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
            [one] => Ok((dir, one.clone())),
            _ => Err(StoreError::Unusable(format!(
                "{}: expected one staged artifact, found {names:?}",
                dir.display()
            ))),
        }
    }

    /// The sha256 of a staged artifact's bytes, recomputed now.
    pub fn rehash(&self, sha: &str) -> Result<String, StoreError> {
        let (dir, name) = self.staged(sha)?;
        digest_of_path(&dir.join(name))
    }

    /// Stores a signed document beside a staged artifact, atomically.
    pub fn put_beside(&self, sha: &str, rel: &str, bytes: &[u8]) -> Result<PathBuf, StoreError> {
        let (dir, _) = self.staged(sha)?;
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| unusable(parent, e))?;
        }
        output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))?;
        Ok(path)
    }
}

/// Copies `from` to a new file `to`, hashing while copying, and fsyncs it. Returns the hex
/// sha256.
pub fn copy_hashing(from: &Path, to: &Path) -> Result<String, StoreError> {
    copy_hashing_with(from, to, true)
}

/// [`copy_hashing`], with the fsync only when `durable`: a scratch copy that a crash would
/// discard anyway (the conversion's work copy) need not wait for the disk.
pub fn copy_hashing_with(from: &Path, to: &Path, durable: bool) -> Result<String, StoreError> {
    let mut src = std::fs::File::open(from).map_err(|e| unusable(from, e))?;
    if !src.metadata().map_err(|e| unusable(from, e))?.is_file() {
        return Err(StoreError::Refused(format!(
            "{}: not a regular file",
            from.display()
        )));
    }
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| unusable(to, e))?;
    // The copy and its hash run side by side: each buffer, once written, is hashed on a
    // second core while the next one is read.
    const CHUNK: usize = 1 << 20;
    let pipe = HashPipe::new(CHUNK);
    let size = src.metadata().map_or(0, |m| m.len());
    let progress = Progress::bytes(size, "copying");
    loop {
        let mut buf = pipe.buffer();
        let n = (&mut src)
            .take(CHUNK as u64)
            .read_to_end(&mut buf)
            .map_err(|e| unusable(from, e))?;
        if n == 0 {
            break;
        }
        progress.add(n as u64);
        dst.write_all(&buf).map_err(|e| unusable(to, e))?;
        pipe.send(buf);
    }
    let digest = pipe.finish().map_err(|e| unusable(from, e))?;
    if durable {
        dst.sync_all().map_err(|e| unusable(to, e))?;
    }
    Ok(hex(&digest))
}

/// A file's sha256, or a directory's `socair.modeldir/v1` digest.
pub fn digest_of_path(path: &Path) -> Result<String, StoreError> {
    if path.is_dir() {
        let files = modeldir::list_files(path).map_err(|e| StoreError::Refused(e.to_string()))?;
        modeldir::digest(&files).map_err(|e| StoreError::Unusable(e.to_string()))
    } else {
        sha256_of_path(path).map_err(|e| unusable(path, e))
    }
}

pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
