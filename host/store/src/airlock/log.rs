//! The activity log (`activity.log`): one JSON line per action, each holding the sha256 of the
//! line before it, appended under a file lock and fsynced, so a removed, inserted or edited line
//! is detected.
//!
//! What the chain alone cannot show, the log checks otherwise:
//!
//! * the final line has no successor to vouch for it, so `activity.head` records the number of
//!   lines and the sha256 of the last one, rewritten after every append: an edited or removed
//!   final line no longer matches it (unless the head is rewritten too; `airlock log --head`
//!   prints the head to anchor elsewhere, and `--since` proves the log extends an anchor);
//! * a carriage return anywhere, or a final line that parses as an entry but lost its newline,
//!   is an edit, not the tail of a crash (which never parses as an entry): it is reported, and
//!   appends stop until a person looks;
//! * every entry records the sha256 of `policy.json` as it stood: a change of policy between
//!   two entries that no `init`, `trust` or `pin` entry explains, or a policy that no longer
//!   matches the last entry, was made by hand.

use crate::airlock::clock;
use crate::airlock::error::{unusable, StoreError};
use crate::base::digest::hex;
use crate::base::{fault, output};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The log's file name in a store.
pub const LOG_FILE: &str = "activity.log";
/// The head record's file name in a store.
pub const HEAD_FILE: &str = "activity.head";
/// The policy's file name in a store.
pub const POLICY_FILE: &str = "policy.json";

/// Actions that change `policy.json`.
pub const POLICY_ACTIONS: &[&str] = &["init", "trust", "pin"];

/// One line of the activity log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    /// When (RFC 3339 UTC).
    pub time: String,
    /// `init`, `trust`, `pin`, `pull`, `scan`, `accept`, `promote`, `convert`, `repair`.
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
    /// hex SHA-256 of `policy.json` as it stood when the entry was written (after the action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_sha256: Option<String>,
    /// hex SHA-256 of the previous line (without its newline); zeros for the first line.
    pub prev: String,
}

impl LogEntry {
    /// An entry for `action` with `outcome`.
    pub fn new(action: &str, outcome: &str) -> LogEntry {
        LogEntry {
            time: clock::format(clock::now()),
            action: action.into(),
            outcome: outcome.into(),
            subject: None,
            output: None,
            name: None,
            key: None,
            detail: None,
            policy_sha256: None,
            prev: String::new(),
        }
    }
}

/// The head of the log: how many lines it has and the sha256 of the last one. Printed as
/// `<lines>:<sha256>` (`airlock log --head`) and kept in `activity.head`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Head {
    /// Lines in the log.
    pub lines: usize,
    /// hex SHA-256 of the last line (without its newline); zeros for an empty log.
    pub sha256: String,
}

impl Head {
    /// `<lines>:<sha256>`.
    pub fn text(&self) -> String {
        format!("{}:{}", self.lines, self.sha256)
    }

    /// Parses `<lines>:<sha256>`.
    pub fn parse(text: &str) -> Result<Head, String> {
        let bad = || {
            format!(
                "{text:?} is not a log head (<lines>:<sha256>, as `airlock log --head` prints it)"
            )
        };
        let (n, sha) = text.trim().split_once(':').ok_or_else(bad)?;
        let lines = n.parse::<usize>().map_err(|_| bad())?;
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        Ok(Head {
            lines,
            sha256: sha.to_ascii_lowercase(),
        })
    }
}

/// hex SHA-256 of a log line (without its newline): what the next entry's `prev` holds.
pub fn line_hash(line: &str) -> String {
    hex(&Sha256::digest(line.as_bytes()))
}

/// The head of a log whose lines are `lines`.
pub fn head_of(lines: &[&str]) -> Head {
    Head {
        lines: lines.len(),
        sha256: lines
            .last()
            .map_or_else(|| "0".repeat(64), |l| line_hash(l)),
    }
}

/// What reading the log found.
#[derive(Debug, Clone, Default)]
pub struct LogCheck {
    /// The complete lines, in order (up to where the chain breaks, when it does).
    pub lines: Vec<String>,
    /// Bytes of an incomplete last line (an interrupted append), not counted as an entry.
    pub torn: usize,
    /// The number (from 1) of the first line where the chain breaks, and why.
    pub broken: Option<(usize, String)>,
    /// Edits the chain does not show: the head record, the policy, line endings.
    pub problems: Vec<String>,
    /// What is worth knowing but is no edit (a head one append behind after a crash).
    pub notes: Vec<String>,
}

impl LogCheck {
    /// Whether the log shows no edit.
    pub fn holds(&self) -> bool {
        self.broken.is_none() && self.problems.is_empty()
    }

    /// The log's head.
    pub fn head(&self) -> Head {
        head_of(&self.lines.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

/// An exclusive lock on a store's log, held while it lives.
#[derive(Debug)]
pub struct LogLock(std::fs::File);

/// A store's activity log.
#[derive(Debug, Clone)]
pub struct ActivityLog {
    path: PathBuf,
    head: PathBuf,
    policy: PathBuf,
}

impl ActivityLog {
    /// The log of the store at `root`.
    pub fn of_store(root: &Path) -> ActivityLog {
        ActivityLog {
            path: root.join(LOG_FILE),
            head: root.join(HEAD_FILE),
            policy: root.join(POLICY_FILE),
        }
    }

    /// An exclusive lock on the store (the log file), held while it lives.
    pub fn lock(&self) -> Result<LogLock, StoreError> {
        let path = &self.path;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(|e| unusable(path, e))?;
        f.lock().map_err(|e| unusable(path, e))?;
        Ok(LogLock(f))
    }

    /// Appends an entry, chained to the line before it; two processes appending at once are
    /// serialised by a file lock.
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        let mut lock = self.lock()?;
        self.append_locked(&mut lock, entry)
    }

    fn policy_sha256(&self) -> Option<String> {
        std::fs::read(&self.policy)
            .ok()
            .map(|b| hex(&Sha256::digest(&b)))
    }

    fn read_head(&self) -> Result<Option<Head>, String> {
        match std::fs::read(&self.head) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.head.display())),
            Ok(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| format!("{} is not a head record: {e}", self.head.display())),
        }
    }

    /// Appends under a lock already held (a policy change and its entry under one lock). The
    /// entry records the policy's sha256 as it stands now. A log that shows an edit (a carriage
    /// return, a final line that lost its newline, a head record that does not match) is not
    /// appended to: it is reported, never repaired silently.
    pub fn append_locked(&self, lock: &mut LogLock, mut entry: LogEntry) -> Result<(), StoreError> {
        let path = &self.path;
        let f = &mut lock.0;
        let mut text = String::new();
        f.read_to_string(&mut text).map_err(|e| unusable(path, e))?;
        let edited = |why: String| {
            StoreError::Unusable(format!(
                "{}: {why}; socair appends nothing to an edited log (see `socair airlock log`)",
                path.display()
            ))
        };
        if let Some(at) = text.find('\r') {
            return Err(edited(format!(
                "line {} holds a carriage return",
                text[..at].matches('\n').count() + 1
            )));
        }
        let policy_sha256 = self.policy_sha256();
        let mut entries = Vec::new();
        if !text.is_empty() && !text.ends_with('\n') {
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            if serde_json::from_str::<LogEntry>(&text[keep..]).is_ok() {
                return Err(edited(
                    "its last line is a whole entry without its newline".into(),
                ));
            }
            // A line torn by a crash in the middle of an append was never a complete entry:
            // cut it off, and say so in the log itself.
            let torn = text.len() - keep;
            f.set_len(keep as u64).map_err(|e| unusable(path, e))?;
            text.truncate(keep);
            let mut repair = LogEntry::new("repair", "ok");
            repair.detail = Some(format!(
                "removed {torn} bytes of an incomplete line left by an interrupted append"
            ));
            repair.policy_sha256 = policy_sha256.clone();
            entries.push(repair);
        }
        let lines: Vec<&str> = text.lines().collect();
        // The head record: equal to the log, or one append behind it (a crash between an
        // append and the head's rewrite); anything else is an edit at the end of the log.
        let now = head_of(&lines);
        match self.read_head().map_err(edited)? {
            None => {}
            Some(h) if h == now => {}
            Some(h) if h.lines + 1 == lines.len() && h == head_of(&lines[..lines.len() - 1]) => {}
            Some(h) => {
                return Err(edited(format!(
                    "the head record says {} lines ending in a line that hashes to {}, but the log has {} lines ending in {}",
                    h.lines, h.sha256, now.lines, now.sha256
                )))
            }
        }
        entry.policy_sha256 = policy_sha256;
        entries.push(entry);
        let original_len = text.len() as u64;
        let mut last = lines.last().map_or_else(String::new, |l| (*l).to_owned());
        let mut count = lines.len();
        let mut out = String::new();
        for mut e in entries {
            e.prev = if last.is_empty() {
                "0".repeat(64)
            } else {
                line_hash(&last)
            };
            last = serde_json::to_string(&e).expect("plain data");
            out.push_str(&last);
            out.push('\n');
            count += 1;
        }
        if fault::armed("log.partial") {
            let _ = f.write_all(&out.as_bytes()[..out.len() / 2]);
            let _ = f.sync_all();
            fault::point("log.partial");
        }
        // A failed write (a full disk) must not leave half a line: cut back to where it was.
        let written = f.write_all(out.as_bytes()).and_then(|()| f.sync_all());
        if let Err(e) = written {
            let _ = f.set_len(original_len);
            return Err(unusable(path, e));
        }
        let head = Head {
            lines: count,
            sha256: line_hash(&last),
        };
        output::write_atomically(&self.head, &output::to_json_bytes(&head))
            .map_err(|e| unusable(&self.head, e))
    }

    /// Reads the log and checks it: the chain, the line endings, the head record, and that
    /// every change of the policy was logged.
    pub fn read(&self) -> Result<LogCheck, StoreError> {
        let path = &self.path;
        let mut text = std::fs::read_to_string(path).map_err(|e| unusable(path, e))?;
        let mut check = LogCheck::default();
        // An incomplete last line is an append a crash interrupted: not an entry. The next
        // append removes it and records that it did. A whole entry without its newline is an
        // edit.
        if !text.is_empty() && !text.ends_with('\n') {
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            if serde_json::from_str::<LogEntry>(text[keep..].trim_end_matches('\r')).is_ok() {
                check.problems.push(format!(
                    "line {} is a whole entry that lost its newline: the log was edited",
                    text[..keep].matches('\n').count() + 1
                ));
                text.push('\n');
            } else {
                check.torn = text.len() - keep;
                text.truncate(keep);
            }
        }
        if let Some(at) = text.find('\r') {
            check.problems.push(format!(
                "line {} holds a carriage return: the log was edited (or converted to CRLF line endings)",
                text[..at].matches('\n').count() + 1
            ));
        }
        let mut prev = "0".repeat(64);
        let mut last_policy: Option<(usize, String)> = None;
        for (i, line) in text.split_terminator('\n').enumerate() {
            let entry: LogEntry = match serde_json::from_str(line) {
                Ok(e) => e,
                Err(e) => {
                    check.broken = Some((i + 1, format!("not a log entry: {e}")));
                    break;
                }
            };
            if entry.prev != prev {
                check.broken = Some((
                    i + 1,
                    "its prev is not the sha256 of the line before it: a line was removed, inserted or edited".into(),
                ));
                break;
            }
            if let Some(p) = &entry.policy_sha256 {
                if let Some((at, before)) = &last_policy {
                    if before != p && !POLICY_ACTIONS.contains(&entry.action.as_str()) {
                        check.problems.push(format!(
                            "policy.json changed between line {at} and line {} with no trust or pin logged: it was edited by hand",
                            i + 1
                        ));
                    }
                }
                last_policy = Some((i + 1, p.clone()));
            }
            prev = line_hash(line);
            check.lines.push(line.to_owned());
        }
        if check.broken.is_none() {
            if let (Some((at, logged)), Some(now)) = (&last_policy, self.policy_sha256()) {
                if *logged != now {
                    check.problems.push(format!(
                        "policy.json is not what line {at} recorded: it was edited after the last logged change"
                    ));
                }
            }
            let lines: Vec<&str> = check.lines.iter().map(String::as_str).collect();
            let now = head_of(&lines);
            match self.read_head() {
                Err(e) => check.problems.push(e),
                Ok(None) => check
                    .notes
                    .push("no head record (activity.head): a store made before it existed".into()),
                Ok(Some(h)) if h == now => {}
                Ok(Some(h))
                    if h.lines + 1 == lines.len()
                        && h == head_of(&lines[..lines.len() - 1]) =>
                {
                    check.notes.push(
                        "the head record is one append behind (a crash after an append); the next append brings it up to date".into(),
                    )
                }
                Ok(Some(h)) => check.problems.push(format!(
                    "the head record says {} lines ending in a line that hashes to {}, but the log has {} lines ending in {}: its end was edited, cut or added to",
                    h.lines, h.sha256, now.lines, now.sha256
                )),
            }
        }
        Ok(check)
    }
}

/// Whether the log (checked) extends an anchored head: it has at least that many lines, and
/// the anchored line is unchanged (each line hashes the one before it, so every line up to it is
/// unchanged too).
pub fn extends(check: &LogCheck, anchor: &Head) -> Result<(), String> {
    if anchor.lines == 0 {
        return Ok(());
    }
    let Some(line) = check.lines.get(anchor.lines - 1) else {
        return Err(format!(
            "the log has {} lines, fewer than the anchored head's {}: lines were removed",
            check.lines.len(),
            anchor.lines
        ));
    };
    let now = line_hash(line);
    if now != anchor.sha256 {
        return Err(format!(
            "line {} now hashes to {now}, not the anchored {}: the log was rewritten at or before it",
            anchor.lines, anchor.sha256
        ));
    }
    Ok(())
}
