//! The airlock store: staging, the trust policy, the gate (`Assess`), promotion, and the
//! chained activity log (SPEC §2–§3).
//!
//! ```text
//! <store>/policy.json                 trusted keys with roles; pins
//! <store>/activity.log                one JSON line per action, each holding the sha256 of
//!                                     the line before it
//! <store>/incoming/<sha256>/<name>    a pulled artifact (file or model directory)
//! <store>/incoming/<sha256>/attestation.dsse.json
//! <store>/incoming/<sha256>/acceptances/<sha256 of envelope>.dsse.json
//! <store>/promoted/<sha256>/…         what passed the gate, moved as a whole
//! <store>/work/, <store>/.tmp/        copies being made; nothing there is ever trusted
//! ```
//!
//! Every write goes to `.tmp/` first and is renamed into place, so a refusal or a crash
//! leaves nothing half-written in `incoming/` or `promoted/`.

use crate::fingerprint::hex;
use crate::modeldir;
use crate::signing::{self, Statement};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The environment variable naming the default store.
pub const STORE_ENV: &str = "SOCAIR_STORE";
/// The policy's schema name.
pub const POLICY_SCHEMA: &str = "socair.policy/v1";
/// File name of a staged artifact's attestation.
pub const ATTESTATION: &str = "attestation.dsse.json";
/// File name of a converted artifact's derivation record.
pub const DERIVATION: &str = "derivation.dsse.json";
/// Directory of a staged artifact's acceptances.
pub const ACCEPTANCES: &str = "acceptances";
/// Roles a key may hold.
pub const ROLES: &[&str] = &["scan", "accept", "derive"];

/// How a store operation ended badly.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A negative verdict: the gate or a check refused (exit 1). The text says which
    /// condition failed.
    #[error("refused: {0}")]
    Refused(String),
    /// The store or an input cannot be used (exit 2).
    #[error("{0}")]
    Unusable(String),
}

fn unusable(path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unusable(format!("{}: {e}", path.display()))
}

/// A trusted key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustedKey {
    /// hex SHA-256 of the raw public key.
    pub keyid: String,
    /// Its roles.
    pub roles: Vec<String>,
    /// SPKI PEM.
    pub public_key: String,
}

/// Deployment pins: the rule-set and plugin versions this store accepts (docs/pins.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// Rule set name → semver requirement (`"=1"`; a version `N` reads as `N.0.0`).
    #[serde(default)]
    pub rules: std::collections::BTreeMap<String, String>,
    /// Plugin name → the versions accepted and, optionally, the library's exact sha256.
    #[serde(default)]
    pub plugins: std::collections::BTreeMap<String, PluginPin>,
}

/// A pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginPin {
    /// A semver requirement on the plugin's version (`">=0.1, <0.2"`, `"=0.1.0"`).
    pub version: String,
    /// The sha256 of the library file, when only that exact build is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// `N` reads as `N.0.0`, `N.M` as `N.M.0`.
fn lenient_version(v: &str) -> Result<semver::Version, semver::Error> {
    let dots = v.matches('.').count();
    let full = match dots {
        0 => format!("{v}.0.0"),
        1 => format!("{v}.0"),
        _ => v.to_owned(),
    };
    semver::Version::parse(&full)
}

impl Pins {
    /// Whether plugin `name` at `version`, with library hash `sha256`, is accepted (a plugin
    /// the pins do not name is).
    pub fn check_plugin(&self, name: &str, version: &str, sha256: &str) -> Result<(), String> {
        let Some(pin) = self.plugins.get(name) else {
            return Ok(());
        };
        let req = semver::VersionReq::parse(&pin.version).map_err(|e| {
            format!(
                "the store pins plugin {name} to {:?}, which is not a version requirement: {e}",
                pin.version
            )
        })?;
        let v = lenient_version(version)
            .map_err(|e| format!("plugin {name} says its version is {version:?}: {e}"))?;
        if !req.matches(&v) {
            return Err(format!(
                "plugin {name} {version} is outside the store's pin {}: a plugin upgrade (or downgrade) is reviewed, then the pin updated (`socair airlock pin plugin {name}`)",
                pin.version
            ));
        }
        if let Some(want) = &pin.sha256 {
            if !want.eq_ignore_ascii_case(sha256) {
                return Err(format!(
                    "plugin {name} {version} is a different build than the store pins: its library hashes to {sha256}, the pin says {want}"
                ));
            }
        }
        Ok(())
    }

    /// Whether rule set `name` at `version` is accepted (a rule set the pins do not name is).
    pub fn check_rule(&self, name: &str, version: &str) -> Result<(), String> {
        let Some(req) = self.rules.get(name) else {
            return Ok(());
        };
        let parsed = semver::VersionReq::parse(req).map_err(|e| {
            format!("the store pins {name} to {req:?}, which is not a version requirement: {e}")
        })?;
        let v = lenient_version(version)
            .map_err(|e| format!("rule set {name} has version {version:?}: {e}"))?;
        if parsed.matches(&v) {
            Ok(())
        } else {
            Err(format!("{name}/{version} is outside the store's pin {req}"))
        }
    }

    /// Checks what this socair has loaded against the pins: every pinned plugin is loaded and
    /// accepted, and every pinned rule set (but `socair-convert`, chosen per conversion) is
    /// implemented at an accepted version.
    pub fn check_loaded(&self, plugins: &crate::plugins::PluginSet) -> Result<(), String> {
        for name in self.plugins.keys() {
            let Some(p) = plugins.loaded.iter().find(|p| &p.manifest.name == name) else {
                return Err(format!(
                    "the store pins plugin {name}, which is not loaded (searched: {})",
                    plugins
                        .searched
                        .iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            self.check_plugin(name, &p.manifest.version, &p.sha256)?;
        }
        for (name, req) in &self.rules {
            if name == "socair-convert" {
                continue;
            }
            let mut versions: Vec<String> = crate::rules::built_in()
                .into_iter()
                .filter(|r| r.name == name.as_str())
                .map(|r| r.version.to_owned())
                .collect();
            for p in &plugins.loaded {
                versions.extend(p.manifest.rule_sets.iter().filter_map(|id| {
                    let (n, v) = id.split_once('/')?;
                    (n == name).then(|| v.to_owned())
                }));
            }
            if versions.is_empty() {
                return Err(format!(
                    "the store pins rule set {name} to {req}, which neither socair nor a loaded plugin implements"
                ));
            }
            if !versions.iter().any(|v| self.check_rule(name, v).is_ok()) {
                return Err(format!(
                    "the store pins rule set {name} to {req}; this socair and its plugins implement {}",
                    versions.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// The trust policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Always [`POLICY_SCHEMA`].
    pub schema: String,
    /// Trusted keys.
    pub keys: Vec<TrustedKey>,
    /// Pins.
    #[serde(default)]
    pub pins: Pins,
}

impl Policy {
    /// The keys holding `role`.
    pub fn keys_with_role(
        &self,
        role: &str,
    ) -> Result<Vec<ed25519_dalek::VerifyingKey>, StoreError> {
        self.keys
            .iter()
            .filter(|k| k.roles.iter().any(|r| r == role))
            .map(|k| {
                signing::parse_public_key(&k.public_key, Path::new("policy.json"))
                    .map_err(|e| StoreError::Unusable(e.to_string()))
            })
            .collect()
    }

    /// The roles of the key with `keyid`.
    pub fn roles_of(&self, keyid: &str) -> Option<&[String]> {
        self.keys
            .iter()
            .find(|k| k.keyid == keyid)
            .map(|k| k.roles.as_slice())
    }
}

/// One line of the activity log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    /// When (RFC 3339 UTC).
    pub time: String,
    /// `init`, `trust`, `pull`, `scan`, `accept`, `promote`, `convert`.
    pub action: String,
    /// `ok` or `refused`.
    pub outcome: String,
    /// The artifact's sha256, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// A produced artifact's sha256 (conversion output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The artifact's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The key that signed, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Details or the reason for a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// hex SHA-256 of the previous line (without its newline); zeros for the first line.
    pub prev: String,
}

impl LogEntry {
    /// An entry for `action` with `outcome`.
    pub fn new(action: &str, outcome: &str) -> LogEntry {
        LogEntry {
            time: crate::clock::format(crate::clock::now()),
            action: action.into(),
            outcome: outcome.into(),
            subject: None,
            output: None,
            name: None,
            key: None,
            detail: None,
            prev: String::new(),
        }
    }
}

/// The activity log's verified lines.
#[derive(Debug, Clone)]
pub struct LogLines {
    /// Every complete line, in order; the chain holds over them.
    pub lines: Vec<String>,
    /// Bytes of an incomplete last line (an interrupted append), not counted as an entry.
    pub torn: usize,
}

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
        crate::output::write_atomically(&path, &crate::output::to_json_bytes(p))
            .map_err(|e| unusable(&path, e))
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
        let _lock = self.lock()?;
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
        drop(_lock);
        let mut e = LogEntry::new("trust", "ok");
        e.key = Some(id.clone());
        e.detail = Some(format!("roles {}", roles.join(",")));
        self.append(e)?;
        Ok(id)
    }

    /// Pins a plugin (`Some`) or removes its pin (`None`); logged.
    pub fn pin_plugin(&self, name: &str, pin: Option<PluginPin>) -> Result<(), StoreError> {
        if let Some(p) = &pin {
            semver::VersionReq::parse(&p.version)
                .map_err(|e| StoreError::Unusable(format!("--version {:?}: {e}", p.version)))?;
        }
        let _lock = self.lock()?;
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
        drop(_lock);
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(detail);
        self.append(e)
    }

    /// Pins a rule set to a semver requirement (`Some`) or removes its pin; logged.
    pub fn pin_rules(&self, name: &str, requirement: Option<&str>) -> Result<(), StoreError> {
        if let Some(r) = requirement {
            semver::VersionReq::parse(r)
                .map_err(|e| StoreError::Unusable(format!("{r:?}: {e}")))?;
        }
        let _lock = self.lock()?;
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
        drop(_lock);
        let mut e = LogEntry::new("pin", "ok");
        e.detail = Some(match requirement {
            Some(r) => format!("rules {name} {r}"),
            None => format!("rules {name} unpinned"),
        });
        self.append(e)
    }

    /// An exclusive lock on the store (the log file), held while it lives.
    fn lock(&self) -> Result<std::fs::File, StoreError> {
        let path = self.root.join("activity.log");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(|e| unusable(&path, e))?;
        f.lock().map_err(|e| unusable(&path, e))?;
        Ok(f)
    }

    /// Appends an entry to the activity log, chained to the line before it. Two processes
    /// appending at once are serialised by a file lock.
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        let path = self.root.join("activity.log");
        let mut f = self.lock()?;
        let mut text = String::new();
        f.read_to_string(&mut text)
            .map_err(|e| unusable(&path, e))?;
        let mut entries = Vec::new();
        if !text.is_empty() && !text.ends_with('\n') {
            // A line torn by a crash in the middle of an append was never a complete entry:
            // cut it off, and say so in the log itself.
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            let torn = text.len() - keep;
            f.set_len(keep as u64).map_err(|e| unusable(&path, e))?;
            text.truncate(keep);
            let mut repair = LogEntry::new("repair", "ok");
            repair.detail = Some(format!(
                "removed {torn} bytes of an incomplete line left by an interrupted append"
            ));
            entries.push(repair);
        }
        entries.push(entry);
        let original_len = text.len() as u64;
        let mut last = text
            .strip_suffix('\n')
            .unwrap_or(&text)
            .rsplit('\n')
            .next()
            .unwrap_or("")
            .to_owned();
        let mut out = String::new();
        for mut e in entries {
            e.prev = if last.is_empty() {
                "0".repeat(64)
            } else {
                hex(&Sha256::digest(last.as_bytes()))
            };
            last = serde_json::to_string(&e).expect("plain data");
            out.push_str(&last);
            out.push('\n');
        }
        if crate::fault::armed("log.partial") {
            let _ = f.write_all(&out.as_bytes()[..out.len() / 2]);
            let _ = f.sync_all();
            crate::fault::point("log.partial");
        }
        // A failed write (a full disk) must not leave half a line: cut back to where it was.
        let written = f.write_all(out.as_bytes()).and_then(|()| f.sync_all());
        if let Err(e) = written {
            let _ = f.set_len(original_len);
            return Err(unusable(&path, e));
        }
        Ok(())
    }

    /// Reads the activity log and verifies its chain: the lines, or the number (from 1) of the
    /// first line where the chain breaks and why.
    pub fn read_log(&self) -> Result<Result<LogLines, (usize, String)>, StoreError> {
        let path = self.root.join("activity.log");
        let mut text = std::fs::read_to_string(&path).map_err(|e| unusable(&path, e))?;
        // An incomplete last line is an append a crash interrupted: not an entry. The next
        // append removes it and records that it did.
        let mut torn = 0;
        if !text.is_empty() && !text.ends_with('\n') {
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            torn = text.len() - keep;
            text.truncate(keep);
        }
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut prev = "0".repeat(64);
        for (i, line) in lines.iter().enumerate() {
            let entry: LogEntry = match serde_json::from_str(line) {
                Ok(e) => e,
                Err(e) => return Ok(Err((i + 1, format!("not a log entry: {e}")))),
            };
            if entry.prev != prev {
                return Ok(Err((
                    i + 1,
                    "its prev is not the sha256 of the line before it: a line was removed, inserted or edited".into(),
                )));
            }
            prev = hex(&Sha256::digest(line.as_bytes()));
        }
        Ok(Ok(LogLines { lines, torn }))
    }

    fn tmp_dir(&self, prefix: &str) -> Result<tempfile::TempDir, StoreError> {
        self.scratch(".tmp", prefix)
    }

    /// A scratch directory under `.tmp/` or `work/`, named `<kind>-<pid>-…` so that a later
    /// run can tell the leftovers of a process that died from those of one still running.
    pub fn scratch(&self, area: &str, kind: &str) -> Result<tempfile::TempDir, StoreError> {
        let base = self.root.join(area);
        std::fs::create_dir_all(&base).map_err(|e| unusable(&base, e))?;
        tempfile::Builder::new()
            .prefix(&format!("{kind}{}-", std::process::id()))
            .tempdir_in(&base)
            .map_err(|e| unusable(&base, e))
    }

    /// Removes scratch directories whose process is gone (it was killed, or the machine
    /// stopped): they were never trusted, and nothing refers to them.
    fn clean_stale(&self) {
        for area in [".tmp", "work"] {
            let Ok(entries) = std::fs::read_dir(self.root.join(area)) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let pid = name.split('-').nth(1).and_then(|p| p.parse::<u32>().ok());
                if let Some(pid) = pid {
                    if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                        let _ = std::fs::remove_dir_all(entry.path());
                    }
                }
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
        if name.starts_with('.') || name == ATTESTATION || name == ACCEPTANCES || name == DERIVATION
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
        crate::fault::point("pull.copied");
        let tmp_path = tmp.keep();
        std::fs::rename(&tmp_path, &dest).map_err(|e| {
            let _ = std::fs::remove_dir_all(&tmp_path);
            unusable(&dest, e)
        })?;
        sync_dir(&self.root.join("incoming"));
        crate::fault::point("pull.renamed");
        Ok((sha, name))
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
                n != ATTESTATION && n != ACCEPTANCES && n != DERIVATION && !n.starts_with('.')
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
        crate::output::write_atomically(&path, bytes).map_err(|e| unusable(&path, e))?;
        Ok(path)
    }

    /// The gate (`Assess`) for promotion: `Ok(())` or the condition that failed.
    pub fn assess(&self, sha: &str) -> Result<(), StoreError> {
        let verdict = assess_attestation(self, sha)?;
        let refused = |why: String| Err(StoreError::Refused(why));
        for row in &verdict.rows {
            match row.status.as_str() {
                "FAIL" | "LEAD" => {
                    return refused(format!(
                        "the attestation's {:?} row is {}: {}",
                        row.check, row.status, row.summary
                    ))
                }
                _ => {}
            }
        }
        let uncovered: Vec<&str> = verdict
            .rows
            .iter()
            .filter(|r| r.status == "NOT_TESTED")
            .map(|r| r.check.as_str())
            .filter(|check| !verdict.accepted.iter().any(|a| a == check))
            .collect();
        if !uncovered.is_empty() {
            return refused(format!(
                "NOT_TESTED rows with no valid, unexpired acceptance from an `accept` key: {}",
                uncovered.join(", ")
            ));
        }
        Ok(())
    }

    /// Runs the gate and moves the artifact to `promoted/<sha256>/`.
    pub fn promote(&self, sha: &str) -> Result<(), StoreError> {
        // Promoted by an earlier run that stopped before logging it: say so, and log it now.
        let already = self.root.join("promoted").join(sha).is_dir()
            && !self.root.join("incoming").join(sha).exists();
        if already {
            let mut e = LogEntry::new("promote", "ok");
            e.subject = Some(sha.to_owned());
            e.detail = Some("already promoted".into());
            return self.append(e);
        }
        let result = self.assess(sha).and_then(|()| {
            let from = self.root.join("incoming").join(sha);
            let to = self.root.join("promoted").join(sha);
            if to.exists() {
                return Err(StoreError::Refused(format!("{sha} is already promoted")));
            }
            std::fs::create_dir_all(self.root.join("promoted"))
                .map_err(|e| unusable(&self.root, e))?;
            crate::fault::point("promote.assessed");
            std::fs::rename(&from, &to).map_err(|e| unusable(&to, e))?;
            sync_dir(&self.root.join("promoted"));
            sync_dir(&self.root.join("incoming"));
            crate::fault::point("promote.renamed");
            Ok(())
        });
        let mut e = LogEntry::new("promote", if result.is_ok() { "ok" } else { "refused" });
        e.subject = Some(sha.to_owned());
        if let Err(err) = &result {
            e.detail = Some(err.to_string());
        }
        self.append(e)?;
        result
    }
}

/// What the gate read from an attestation.
pub struct Assessed {
    /// The report's rows.
    pub rows: Vec<crate::scan::Row>,
    /// Checks covered by valid acceptances.
    pub accepted: Vec<String>,
    /// sha256 of the attestation envelope's bytes.
    pub attestation_sha256: String,
}

/// Verifies the attestation of a staged artifact (role `scan`, subject = the staged bytes
/// now) and gathers the acceptances that cover it.
pub fn assess_attestation(store: &Store, sha: &str) -> Result<Assessed, StoreError> {
    let refused = |why: String| StoreError::Refused(why);
    let (dir, _) = store.staged(sha)?;
    let policy = store.policy()?;
    let att_path = dir.join(ATTESTATION);
    let att = std::fs::read(&att_path).map_err(|_| {
        refused(format!(
            "{sha} has no attestation; run `socair airlock scan`"
        ))
    })?;
    let (statement, report) = verify_scan_attestation(&policy, &att)?;
    // The report must have been made by plugins and rules this deployment accepts.
    for p in &report.tool.plugins {
        policy
            .pins
            .check_plugin(&p.name, &p.version, &p.sha256)
            .map_err(|e| refused(format!("the attestation's scan used {e}")))?;
    }
    for (name, version) in &report.rules {
        policy
            .pins
            .check_rule(name, version)
            .map_err(|e| refused(format!("the attestation's scan ran under {e}")))?;
    }
    if statement.subject_sha256() != Some(sha) {
        return Err(refused(format!(
            "the attestation is about {:?}, not {sha}",
            statement.subject_sha256().unwrap_or("nothing")
        )));
    }
    let now_sha = store.rehash(sha)?;
    if now_sha != sha {
        return Err(refused(format!(
            "the staged bytes changed after the scan: they hash to {now_sha}, the attestation's subject is {sha}"
        )));
    }
    let attestation_sha256 = hex(&Sha256::digest(&att));
    let accept_keys = policy.keys_with_role("accept")?;
    let mut accepted = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join(ACCEPTANCES)) {
        for entry in entries.filter_map(Result::ok) {
            let Ok(bytes) = std::fs::read(entry.path()) else {
                continue;
            };
            let Ok(v) = signing::verify(&bytes, &accept_keys) else {
                continue;
            };
            let Ok(s) = Statement::parse(&v.payload) else {
                continue;
            };
            let Ok(a) = serde_json::from_value::<AcceptancePredicate>(s.predicate.clone()) else {
                continue;
            };
            let fresh = a
                .expires
                .as_deref()
                .is_none_or(|t| crate::clock::parse(t).is_ok_and(|t| t > crate::clock::now()));
            if s.predicate_type == signing::ACCEPTANCE_PREDICATE
                && s.subject_sha256() == Some(sha)
                && a.attestation_sha256 == attestation_sha256
                && fresh
            {
                accepted.extend(a.accepted_checks);
            }
        }
    }
    Ok(Assessed {
        rows: report.rows,
        accepted,
        attestation_sha256,
    })
}

/// The gate's check of a scan attestation: it verifies under a trusted key with role `scan`,
/// is an in-toto Statement with the scan predicate, and holds a socair report. Promotion and
/// conversion both go through it.
pub fn verify_scan_attestation(
    policy: &Policy,
    envelope: &[u8],
) -> Result<(Statement, crate::scan::Report), StoreError> {
    let refused = StoreError::Refused;
    let verified = signing::verify(envelope, &policy.keys_with_role("scan")?).map_err(|e| {
        refused(format!(
            "the attestation does not verify under a trusted key with role `scan`: {e}"
        ))
    })?;
    let statement = Statement::parse(&verified.payload).map_err(refused)?;
    if statement.predicate_type != signing::SCAN_PREDICATE {
        return Err(refused(format!(
            "the attestation's predicate is {:?}, not a scan",
            statement.predicate_type
        )));
    }
    let report: crate::scan::Report =
        serde_json::from_value(statement.predicate.clone()).map_err(|e| {
            refused(format!(
                "the attestation's predicate is not a socair report: {e}"
            ))
        })?;
    Ok((statement, report))
}

/// The predicate of an acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptancePredicate {
    /// The accepted artifact.
    pub subject_sha256: String,
    /// The NOT_TESTED checks whose gaps are accepted.
    pub accepted_checks: Vec<String>,
    /// Why.
    pub reason: String,
    /// sha256 of the attestation envelope accepted.
    pub attestation_sha256: String,
    /// The signer's key id.
    pub signer: String,
    /// When.
    pub time: String,
    /// Until when, if it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
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
    let pipe = crate::hashpipe::HashPipe::new(CHUNK);
    let size = src.metadata().map_or(0, |m| m.len());
    let progress = crate::progress::Progress::bytes(size, "copying");
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
        crate::fingerprint::sha256_of_path(path).map_err(|e| unusable(path, e))
    }
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
