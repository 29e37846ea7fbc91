//! The activity log (`activity.log`): one JSON line per action, each holding the sha256 of the
//! line before it, appended under a file lock and fsynced, so a removed, inserted or edited line
//! is detected.

use crate::airlock::clock;
use crate::airlock::error::{unusable, StoreError};
use crate::base::digest::hex;
use crate::base::fault;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The log's file name in a store.
pub const LOG_FILE: &str = "activity.log";

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
            time: clock::format(clock::now()),
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

/// A store's activity log.
#[derive(Debug, Clone)]
pub struct ActivityLog {
    path: PathBuf,
}

impl ActivityLog {
    /// The log at `path`.
    pub fn at(path: &Path) -> ActivityLog {
        ActivityLog {
            path: path.to_owned(),
        }
    }

    /// An exclusive lock on the store (the log file), held while it lives.
    pub fn lock(&self) -> Result<std::fs::File, StoreError> {
        let path = &self.path;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(path)
            .map_err(|e| unusable(path, e))?;
        f.lock().map_err(|e| unusable(path, e))?;
        Ok(f)
    }

    /// Appends an entry to the activity log, chained to the line before it. Two processes
    /// appending at once are serialised by a file lock.
    pub fn append(&self, entry: LogEntry) -> Result<(), StoreError> {
        let path = &self.path;
        let mut f = self.lock()?;
        let mut text = String::new();
        f.read_to_string(&mut text).map_err(|e| unusable(path, e))?;
        let mut entries = Vec::new();
        if !text.is_empty() && !text.ends_with('\n') {
            // A line torn by a crash in the middle of an append was never a complete entry:
            // cut it off, and say so in the log itself.
            let keep = text.rfind('\n').map_or(0, |i| i + 1);
            let torn = text.len() - keep;
            f.set_len(keep as u64).map_err(|e| unusable(path, e))?;
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
        Ok(())
    }

    /// Reads the activity log and verifies its chain: the lines, or the number (from 1) of the
    /// first line where the chain breaks and why.
    pub fn read(&self) -> Result<Result<LogLines, (usize, String)>, StoreError> {
        let path = &self.path;
        let mut text = std::fs::read_to_string(path).map_err(|e| unusable(path, e))?;
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
}
