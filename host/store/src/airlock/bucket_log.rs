//! The activity log of a store on object storage: each entry is an immutable object,
//! `<prefix>/log/<sequence number, 12 digits>.json`, holding one JSON line (the same entry
//! as a local store's line, with `prev`, the sha256 of the entry before it, and
//! `policy_sha256`, the policy in force).
//!
//! Several machines append at once with no coordinator: a writer reads the last entry `N`,
//! builds entry `N+1` on it, and claims `log/…N+1.json` with a conditional write
//! (`If-None-Match: *`). The store refuses the second claim of a key, so two writers never
//! both append entry `N+1`: the loser reads the new last entry and builds on it again.
//!
//! The policy is content-addressed (`<prefix>/policy/<sha256>.json`) and the log says which
//! one is in force: every entry records it, and only `init`, `trust` and `pin` entries change
//! it. A policy change is a claim like any other, built on the policy the last entry names, so
//! two concurrent changes never lose one another: the loser re-reads and re-applies its
//! change. (A local store serialises the same steps with a file lock.)
//!
//! Reading checks what a local log's checks check: entries numbered 1, 2, 3, … with no gap
//! (a removed entry leaves one), each entry's `prev` the sha256 of the one before, no policy
//! change without a policy action, and the policy in force present and hashing to its name.
//!
//! `log-head.json` is the head record (as a local store's `activity.head`): the number of an
//! entry and the sha256 of its line, written by its writer after the claim. Under concurrency
//! it may lag (a slower writer notes an earlier entry last), so it is only a lower bound: the
//! entry it names must exist and hash as it says, and a log that ends before it lost its
//! last entries. Deleting the last entries and rewriting the head together is what no object
//! shows: `airlock log --head` and `--since` anchor that, as for a local store, and S3 Object
//! Lock on `log/` prevents it.

use crate::airlock::error::StoreError;
use crate::airlock::log::{head_of, line_hash, Head, LogCheck, LogEntry, POLICY_ACTIONS};
use crate::airlock::policy::Policy;
use crate::base::cloud::{self, Location};
use crate::base::digest::hex;
use crate::base::output;
use object_store::path::Path as ObjectPath;
use sha2::{Digest, Sha256};

/// The log's folder in the store.
pub const LOG_DIR: &str = "log";
/// The policies' folder in the store.
pub const POLICY_DIR: &str = "policy";
/// The head record: an entry's number and its line's sha256, noted by its writer after the
/// claim. It finds the end of the log without listing all of it, and bounds it from below
/// (the log is read from `log/` itself).
pub const HEAD_HINT: &str = "log-head.json";
/// Digits in an entry's sequence number: keys sort in numeric order up to 10^12 entries.
const DIGITS: usize = 12;
/// Claims tried before an append gives up (each lost claim means another writer appended).
const CLAIMS: usize = 10_000;

/// The object log of the store whose prefix is `root`.
#[derive(Debug, Clone)]
pub struct BucketLog {
    root: Location,
}

/// The last entry: its number (0 for an empty log) and its line.
struct Last {
    n: u64,
    line: Option<String>,
    entry: Option<LogEntry>,
}

impl BucketLog {
    /// The log of the store at `root`.
    pub fn of_store(root: &Location) -> BucketLog {
        BucketLog { root: root.clone() }
    }

    fn entry_at(&self, n: u64) -> Location {
        self.root.child(&format!("{LOG_DIR}/{n:0DIGITS$}.json"))
    }

    /// The number an entry key holds, when it is one.
    fn number_of(&self, key: &ObjectPath) -> Option<u64> {
        let name = key.as_ref().rsplit('/').next()?;
        let digits = name.strip_suffix(".json")?;
        (digits.len() == DIGITS && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    }

    /// An entry's line, checked to be one line of JSON with its newline.
    fn read_line(&self, n: u64) -> Result<Option<Result<String, String>>, StoreError> {
        let Some(bytes) = cloud::get_if_any(&self.entry_at(n)).map_err(StoreError::from)? else {
            return Ok(None);
        };
        let Ok(text) = String::from_utf8(bytes.to_vec()) else {
            return Ok(Some(Err("not UTF-8".into())));
        };
        Ok(Some(match text.strip_suffix('\n') {
            Some(line) if !line.contains(['\n', '\r']) => Ok(line.to_owned()),
            _ => Err("not one line of JSON ending in a newline".into()),
        }))
    }

    /// The head record, when there is one: `Err` when it is not one.
    fn head_record(&self) -> Result<Option<Result<Head, String>>, StoreError> {
        let at = self.root.child(HEAD_HINT);
        let Some(bytes) = cloud::get_if_any(&at).map_err(StoreError::from)? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_slice::<Head>(&bytes).map_err(|e| {
            format!("{} is not a head record ({e}): it was edited", at.url())
        })))
    }

    /// Finds the last entry: from the head record when it names an entry that exists,
    /// listing only what follows it; otherwise listing the whole log, which must reach the
    /// entry the head record names (else its last entries were removed).
    fn last(&self) -> Result<Last, StoreError> {
        let hint = match self.head_record()? {
            Some(Ok(h)) if h.lines > 0 => Some(h.lines as u64),
            _ => None,
        };
        let dir = self.root.child(LOG_DIR);
        let listed = match hint {
            Some(n) if cloud::exists(&self.entry_at(n)).map_err(StoreError::from)? => {
                let from = self.entry_at(n).key;
                let mut after = cloud::list(&dir, Some(&from)).map_err(StoreError::from)?;
                after.push((from, 0));
                after
            }
            _ => cloud::list(&dir, None).map_err(StoreError::from)?,
        };
        let n = listed
            .iter()
            .filter_map(|(k, _)| self.number_of(k))
            .max()
            .unwrap_or(0);
        if let Some(h) = hint.filter(|&h| h > n) {
            return Err(StoreError::Unusable(format!(
                "{}: the head record names entry {h}, but the log ends at entry {n}: its last entries were removed; socair appends nothing to an edited log (see `socair airlock log`)",
                self.root.child(HEAD_HINT).url()
            )));
        }
        if n == 0 {
            return Ok(Last {
                n,
                line: None,
                entry: None,
            });
        }
        let line = match self.read_line(n)? {
            Some(Ok(line)) => line,
            Some(Err(why)) => {
                return Err(StoreError::Unusable(format!(
                    "{}: {why}; socair appends nothing to an edited log (see `socair airlock log`)",
                    self.entry_at(n).url()
                )))
            }
            None => {
                return Err(StoreError::Unusable(format!(
                    "{}: listed, then gone: the log is being edited",
                    self.entry_at(n).url()
                )))
            }
        };
        let entry = serde_json::from_str::<LogEntry>(&line).map_err(|e| {
            StoreError::Unusable(format!(
                "{}: not a log entry ({e}); socair appends nothing to an edited log",
                self.entry_at(n).url()
            ))
        })?;
        Ok(Last {
            n,
            line: Some(line),
            entry: Some(entry),
        })
    }

    /// Whether the log has any entry (the store exists).
    pub fn exists(&self) -> Result<bool, StoreError> {
        cloud::exists(&self.entry_at(1)).map_err(StoreError::from)
    }

    /// The policy in force: the one the last entry names, checked to hash to its name.
    pub fn policy(&self) -> Result<(Policy, String), StoreError> {
        let last = self.last()?;
        let sha = last.entry.and_then(|e| e.policy_sha256).ok_or_else(|| {
            StoreError::Unusable(format!(
                "{}: the log names no policy; is this a socair store (`socair airlock init`)?",
                self.root.url()
            ))
        })?;
        Ok((self.policy_named(&sha)?, sha))
    }

    fn policy_named(&self, sha: &str) -> Result<Policy, StoreError> {
        let at = self.root.child(&format!("{POLICY_DIR}/{sha}.json"));
        let bytes = cloud::get_if_any(&at)
            .map_err(StoreError::from)?
            .ok_or_else(|| StoreError::Unusable(format!("{}: missing", at.url())))?;
        if hex(&Sha256::digest(&bytes)) != sha {
            return Err(StoreError::Unusable(format!(
                "{}: does not hash to its name: the policy was edited by hand",
                at.url()
            )));
        }
        crate::airlock::policy::parse(&bytes, &at.url())
    }

    /// Appends `entry` on the log's last entry, recording the policy in force.
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        self.append_with(|_| Ok((entry.clone(), None)))
    }

    /// Appends the entry `make` builds on the policy in force (`None` for a log with no
    /// entry); when `make` returns a new policy too, that policy is stored and the entry
    /// records it. `make` runs again each time another writer claimed the next number first.
    pub fn append_with(
        &self,
        mut make: impl FnMut(Option<&Policy>) -> Result<(LogEntry, Option<Policy>), StoreError>,
    ) -> Result<(), StoreError> {
        for _ in 0..CLAIMS {
            let last = self.last()?;
            let in_force = match last.entry.as_ref().and_then(|e| e.policy_sha256.clone()) {
                Some(sha) => Some((self.policy_named(&sha)?, sha)),
                None => None,
            };
            let (mut entry, new_policy) = make(in_force.as_ref().map(|(p, _)| p))?;
            entry.policy_sha256 = match new_policy {
                Some(p) => {
                    let bytes = output::to_json_bytes(&p);
                    let sha = hex(&Sha256::digest(&bytes));
                    let at = self.root.child(&format!("{POLICY_DIR}/{sha}.json"));
                    // Content-addressed: a policy already there is these bytes.
                    match cloud::put(&at, bytes.into(), true) {
                        Ok(()) => {}
                        Err(e) if e.is_already_taken() => {}
                        Err(e) => return Err(StoreError::from(e)),
                    }
                    Some(sha)
                }
                None => in_force.map(|(_, sha)| sha),
            };
            entry.prev = last
                .line
                .as_deref()
                .map_or_else(|| "0".repeat(64), line_hash);
            let mut line = serde_json::to_string(&entry).expect("plain data");
            line.push('\n');
            let n = last.n + 1;
            match cloud::put(&self.entry_at(n), line.clone().into_bytes().into(), true) {
                Ok(()) => {
                    // Best effort: a stale hint costs a longer listing, never a wrong append.
                    let head = Head {
                        lines: n as usize,
                        sha256: line_hash(line.trim_end_matches('\n')),
                    };
                    let _ = cloud::put(
                        &self.root.child(HEAD_HINT),
                        output::to_json_bytes(&head).into(),
                        false,
                    );
                    return Ok(());
                }
                Err(e) if e.is_already_taken() => continue,
                Err(e) => return Err(StoreError::from(e)),
            }
        }
        Err(StoreError::Unusable(format!(
            "{}: lost the claim of the next log entry {CLAIMS} times in a row",
            self.root.url()
        )))
    }

    /// Reads the whole log and checks it.
    pub fn read(&self) -> Result<LogCheck, StoreError> {
        let mut check = LogCheck::default();
        let listed = cloud::list(&self.root.child(LOG_DIR), None).map_err(StoreError::from)?;
        let mut numbers = Vec::new();
        for (key, _) in &listed {
            match self.number_of(key) {
                Some(n) => numbers.push(n),
                None => check.problems.push(format!(
                    "{key} is not a log entry's name: the log was added to by hand"
                )),
            }
        }
        numbers.sort_unstable();
        let mut prev = "0".repeat(64);
        let mut policy: Option<(usize, String)> = None;
        for (i, n) in numbers.iter().enumerate() {
            let at = i + 1;
            if *n != at as u64 {
                check.broken = Some((
                    at,
                    format!("entry {at} is missing (the next is {n}): it was removed"),
                ));
                break;
            }
            let line = match self.read_line(*n)? {
                Some(Ok(line)) => line,
                Some(Err(why)) => {
                    check.broken = Some((at, why));
                    break;
                }
                None => {
                    check.broken = Some((at, "removed while the log was read".into()));
                    break;
                }
            };
            let entry: LogEntry = match serde_json::from_str(&line) {
                Ok(e) => e,
                Err(e) => {
                    check.broken = Some((at, format!("not a log entry: {e}")));
                    break;
                }
            };
            if entry.prev != prev {
                check.broken = Some((
                    at,
                    "its prev is not the sha256 of the entry before it: an entry was removed, inserted or edited".into(),
                ));
                break;
            }
            match (&policy, &entry.policy_sha256) {
                (_, None) => check
                    .problems
                    .push(format!("entry {at} names no policy: it was not written by socair")),
                (Some((before_at, before)), Some(p))
                    if before != p && !POLICY_ACTIONS.contains(&entry.action.as_str()) =>
                {
                    check.problems.push(format!(
                        "the policy changed between entry {before_at} and entry {at} with no trust or pin logged: it was edited by hand"
                    ))
                }
                (_, Some(p)) => policy = Some((at, p.clone())),
            }
            prev = line_hash(&line);
            check.lines.push(line);
        }
        if check.broken.is_none() {
            if let Some((at, sha)) = &policy {
                if let Err(e) = self.policy_named(sha) {
                    check
                        .problems
                        .push(format!("the policy entry {at} names: {e}"));
                }
            }
            // The head record bounds the log from below (it may lag under concurrency).
            match self.head_record()? {
                None if !check.lines.is_empty() => check
                    .notes
                    .push(format!("no head record ({HEAD_HINT}): the next append writes one")),
                None => {}
                Some(Err(why)) => check.problems.push(why),
                Some(Ok(h)) if h.lines > check.lines.len() => check.problems.push(format!(
                    "the head record ({HEAD_HINT}) names entry {}, but the log ends at entry {}: its last entries were removed",
                    h.lines,
                    check.lines.len()
                )),
                Some(Ok(h)) => {
                    let named = h.lines.checked_sub(1).and_then(|i| check.lines.get(i));
                    if named.map_or_else(|| "0".repeat(64), |l| line_hash(l)) != h.sha256 {
                        check.problems.push(format!(
                            "entry {} does not hash to what the head record ({HEAD_HINT}) says: it was edited",
                            h.lines
                        ));
                    }
                }
            }
            let lines: Vec<&str> = check.lines.iter().map(String::as_str).collect();
            check.notes.push(format!(
                "{} objects under {}/; head {}",
                numbers.len(),
                self.root.child(LOG_DIR).url(),
                head_of(&lines).text()
            ));
        }
        Ok(check)
    }
}
