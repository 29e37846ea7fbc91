//! Resolving a name a file holds to what the directory has under it, and the bounded
//! findings of a row: shared by the three kinds of pointer ([`super`]).

use crate::read::artifact::{Artifact, FileJob};
use crate::read::modeldir::DirLink;
use crate::report::document::STRUCTURE_CHECK;
use socair_plugin_api::{Finding, OpenedFile, ReportRow, RowStatus, Severity};
use std::collections::{HashMap, HashSet};

/// The most findings one row lists; the rest are counted in a last finding (the reading
/// model's cap for a row whose findings are not sorted by kind).
pub const MAX_FINDINGS: usize = socair_plugin_kit::bounded::FINDINGS_PER_ROW;

/// What a name in a file resolves to.
pub(super) enum Target<'a, 'p> {
    /// A regular file a reader read.
    Read(&'a FileJob<'p>),
    /// A regular file of the directory that no reader read, and what it was taken as.
    NotRead(&'static str),
    /// Nothing of that name is in the directory.
    Missing,
    /// The name, or a directory on its way, is a symbolic link (never followed).
    Link(&'a DirLink),
}

/// `name`, written in the file at `from` (relative to the artifact), as a path relative to
/// the artifact, resolved as POSIX `open` would resolve `os.path.join(dir, name)` but for
/// symbolic links (which [`target`] reports): empty and `.` components skipped, `..` going up
/// one. `Err` says why it leaves the directory or names no file.
pub(super) fn resolve(from: &str, name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("is empty: it names the directory itself, not a file".into());
    }
    if name.contains('\0') {
        return Err("holds a NUL byte".into());
    }
    if name.starts_with('/') {
        return Err(format!(
            "{name:?} is an absolute path: it leaves the directory (os.path.join keeps an absolute path as it is)"
        ));
    }
    if name.contains('\\') || name.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "{name:?} holds a backslash or a drive letter: on Windows it is another path (a backslash separates components there, `C:` is absolute), which may leave the directory"
        ));
    }
    let mut parts: Vec<&str> = match from.rsplit_once('/') {
        Some((dir, _)) => dir.split('/').collect(),
        None => Vec::new(),
    };
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("{name:?} leaves the directory"));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() || name.ends_with('/') {
        return Err(format!("{name:?} names a directory, not a file"));
    }
    Ok(parts.join("/"))
}

/// The artifact's files by relative path, built once per scan so that each name a file holds
/// is looked up in constant time (an index may name a million shards).
pub(super) struct Names<'a, 'p> {
    links: HashMap<&'a str, &'a DirLink>,
    jobs: HashMap<&'a str, &'a FileJob<'p>>,
    opened: HashMap<&'a str, &'a OpenedFile>,
    unclaimed: HashSet<&'a str>,
    unreadable: HashSet<&'a str>,
}

impl<'a, 'p> Names<'a, 'p> {
    pub(super) fn new(
        artifact: &'a Artifact<'p>,
        opened: &'a [(&'a FileJob<'p>, OpenedFile)],
    ) -> Self {
        Names {
            links: artifact.links.iter().map(|l| (l.rel.as_str(), l)).collect(),
            jobs: artifact.jobs.iter().map(|j| (j.rel.as_str(), j)).collect(),
            opened: opened.iter().map(|(j, o)| (j.rel.as_str(), o)).collect(),
            unclaimed: artifact.unclaimed.iter().map(|u| u.rel.as_str()).collect(),
            unreadable: artifact
                .unreadable
                .iter()
                .map(|(r, _)| r.as_str())
                .collect(),
        }
    }

    /// What the file at `rel` (a resolved name) is in the artifact.
    pub(super) fn target(&self, rel: &str) -> Target<'a, 'p> {
        // A link at the name or at any directory on its way: the loader would follow it.
        for (i, _) in rel
            .match_indices('/')
            .chain(std::iter::once((rel.len(), "")))
        {
            if let Some(link) = self.links.get(&rel[..i]) {
                return Target::Link(link);
            }
        }
        if let Some(job) = self.jobs.get(rel) {
            return Target::Read(job);
        }
        if self.unclaimed.contains(rel) {
            return Target::NotRead("no reader claims it (it was judged as a companion file only)");
        }
        if self.unreadable.contains(rel) {
            return Target::NotRead("no loaded reader could read it");
        }
        Target::Missing
    }

    /// What a reader made of the file at `rel`, when one read it (and it was not set aside as
    /// another file's data).
    pub(super) fn opened(&self, rel: &str) -> Option<&'a OpenedFile> {
        self.opened.get(rel).copied()
    }
}

/// The status and reason for a name that resolves to something other than a file a reader
/// read (`None`: it does).
pub(super) fn judge_target(
    target: &Target<'_, '_>,
    rel: &str,
    loader: &str,
) -> Option<(RowStatus, String)> {
    match target {
        Target::Read(_) => None,
        Target::NotRead(how) => Some((
            RowStatus::Lead,
            format!("names {rel:?}, which no reader read as the file {loader} expects: {how}"),
        )),
        Target::Missing => Some((
            RowStatus::Fail,
            format!(
                "names {rel:?}, which is not in the directory: {loader} would read a file the scan never saw (or fail)"
            ),
        )),
        Target::Link(link) if link.inside => Some((
            RowStatus::Lead,
            format!(
                "names {rel:?}, which is (or lies under) the symbolic link {:?} to {:?}: socair does not follow links, so it read nothing there, and {loader} would follow it",
                link.rel,
                link.target.display().to_string()
            ),
        )),
        Target::Link(link) => Some((
            RowStatus::Fail,
            format!(
                "names {rel:?}, which is (or lies under) the symbolic link {:?} to {:?}, outside the directory: {loader} would follow it to bytes the scan never saw",
                link.rel,
                link.target.display().to_string()
            ),
        )),
    }
}

/// Findings gathered for one row, bounded.
#[derive(Default)]
pub(super) struct Findings {
    status: Option<RowStatus>,
    list: Vec<Finding>,
    more: usize,
}

impl Findings {
    pub(super) fn is_empty(&self) -> bool {
        self.status.is_none()
    }

    pub(super) fn add(
        &mut self,
        status: RowStatus,
        place: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.status = Some(match self.status {
            Some(s) if s.badness() >= status.badness() => s,
            _ => status,
        });
        if self.list.len() < MAX_FINDINGS {
            self.list
                .push(Finding::new(status.finding_severity(), place, reason));
        } else {
            self.more += 1;
        }
    }

    /// The row: PASS with `clean` when nothing was found, else the worst status with the first
    /// finding in the summary after `what`.
    pub(super) fn row(mut self, what: &str, clean: String) -> ReportRow {
        let Some(status) = self.status else {
            return ReportRow {
                check: STRUCTURE_CHECK.into(),
                status: RowStatus::Pass,
                summary: clean.into(),
                findings: Default::default(),
                names_severities: false,
            };
        };
        let first = self
            .list
            .first()
            .map(|f| format!("{}: {}", f.place, f.reason))
            .unwrap_or_default();
        let others = self.list.len() + self.more - 1;
        let summary = if others == 0 {
            format!("{what}: {first}")
        } else {
            format!("{what}: {first} (and {others} more findings)")
        };
        if self.more > 0 {
            self.list.push(Finding::new(
                Severity::Note,
                "…",
                format!("{} more findings not listed", self.more),
            ));
        }
        ReportRow {
            check: STRUCTURE_CHECK.into(),
            status,
            summary: summary.into(),
            findings: self.list.into(),
            names_severities: false,
        }
    }
}

/// The names of the tensors a reader found in a file (located or not).
pub(super) fn tensor_names(opened: &OpenedFile) -> impl Iterator<Item = &str> {
    opened.tensors.iter().map(|t| t.name.as_str()).chain(
        opened
            .unread
            .iter()
            .filter_map(|u| u.tensor.as_ref().into_option().map(|n| n.as_str())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_as_posix_would_or_say_why_not() {
        assert_eq!(
            resolve("model.safetensors.index.json", "a.safetensors").as_deref(),
            Ok("a.safetensors")
        );
        assert_eq!(
            resolve("unet/x.index.json", "a.safetensors").as_deref(),
            Ok("unet/a.safetensors")
        );
        assert_eq!(
            resolve("unet/x.index.json", "./b//a.bin").as_deref(),
            Ok("unet/b/a.bin")
        );
        assert_eq!(
            resolve("unet/x.index.json", "../text/a.bin").as_deref(),
            Ok("text/a.bin")
        );
        for (name, why) in [
            ("../../etc/passwd", "leaves the directory"),
            ("/etc/passwd", "absolute"),
            ("..\\x.bin", "backslash"),
            ("C:/x.bin", "drive letter"),
            ("", "empty"),
            ("sub/", "directory"),
            ("a/..", "directory"),
        ] {
            let e = resolve("m.index.json", name).unwrap_err();
            assert!(e.contains(why), "{name:?}: {e}");
        }
    }
}
