//! Tar archives (every variant CPython's `tarfile` reads: v7, ustar, GNU, pax) as
//! `tarfile.open(...)` and `TarFile.getmembers()` list them (`socair-tar`, under every CPython
//! release's behaviour, which must agree), their members handed back to the host to be read
//! by whichever reader claims each (`FormatReader::open_container`): a tar of a model
//! directory is judged as that directory is.
//!
//! What extraction would do is judged here, before any member is read: a member whose name
//! is absolute or climbs out with `..` is written outside the target directory by `extractall`
//! before CPython 3.14 (whose default `data` filter refuses it: `tarfile.py`
//! `_get_filtered_attrs`, the `AbsolutePathError` and `OutsideDestinationError` it raises), a
//! FAIL; links, devices and FIFOs are made as such by `extract` (a link a loader then follows
//! out of the directory; socair does not model what a link points at), LEADs; GNU sparse
//! members have holes socair does not fill, LEADs. A name listed twice is extracted twice, the
//! last copy kept: both are read, and the repeat is a LEAD. JSON and text members are read as
//! data by the companion rules, as a directory's files are; every other regular member is
//! handed back, in place (a span of the file: nothing is copied or decoded).

use socair_plugin_api::{
    ByteRange, Member, MemberBytes, OpenedContainer, ReadAt, ReportRow, RowStatus,
};
use socair_plugin_kit::companion::{self, Companion, Contents};
use socair_plugin_kit::model::{status, Findings};
use socair_plugin_kit::Severity;
use socair_tar::{walk, TarMember, WalkEnd, PROFILES};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The tar format this plugin reads.
pub const TAR_FORMAT: &str = "archive-tar";
/// The most members walked (a tar of tiny members: one header block each).
pub const MAX_MEMBERS: usize = 1 << 16;
/// Who did not read a member the companion rules do not model either.
const MEMBER_UNREAD: &str = "no loaded plugin reads this member's format";

/// Whether the file whose first bytes are `head` is a tar this plugin claims: some CPython
/// release's `tarfile.open` opens it and lists a member, and it is neither a zip (the zip
/// readers'), a pickle (torch's legacy reader's: `torch.load` tries a tar first, and that
/// reader judges what it finds) nor torch 0.1's tar checkpoint (torch-zip's).
pub fn claims(head: &[u8]) -> bool {
    if head.starts_with(&socair_plugin_kit::zip::LOCAL_MAGIC)
        || socair_pickle::pickle::looks_like_pickle(head, u64::MAX)
        || socair_tar::looks_like_torch_tar(head)
    {
        return false;
    }
    PROFILES.iter().any(|&p| !walk(head, p, 1).0.is_empty())
}

/// A member's bytes, for the companion rules.
struct Span<'a, S: ReadAt + ?Sized> {
    src: &'a S,
    offset: u64,
    len: u64,
}

impl<S: ReadAt + ?Sized> Contents for Span<'_, S> {
    fn len(&self) -> u64 {
        self.len
    }
    fn head(&self, buf: &mut [u8]) -> Result<(), String> {
        if buf.len() as u64 > self.len {
            return Err("read past the member's end".into());
        }
        self.src.read_exact_at(self.offset, buf)
    }
    fn all(&self) -> Result<Cow<'_, [u8]>, String> {
        let len = usize::try_from(self.len).map_err(|_| "too large".to_owned())?;
        let mut out = vec![0u8; len];
        self.src.read_exact_at(self.offset, &mut out)?;
        Ok(Cow::Owned(out))
    }
}

/// The members every CPython release lists, or why they disagree.
fn members(src: &(impl ReadAt + ?Sized)) -> Result<(Vec<TarMember>, WalkEnd), String> {
    socair_tar::members_agreed(src, MAX_MEMBERS).map_err(|d| {
        format!(
            "CPython {} and CPython {} list its members differently: what is extracted depends on the Python that extracts it",
            d.first, d.other
        )
    })
}

/// Why extracting a member named `name` writes outside the target directory, if it does.
fn escapes(name: &str) -> Option<&'static str> {
    if name.starts_with('/') || name.starts_with('\\') || name.get(1..2) == Some(":") {
        return Some("an absolute name");
    }
    let mut depth = 0i64;
    for part in name.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Some("a name that climbs out of the directory with `..`");
                }
            }
            _ => depth += 1,
        }
    }
    None
}

/// Reads the tar in `src`: its structure's row, and its regular members handed back.
pub fn open(src: &(impl ReadAt + ?Sized)) -> OpenedContainer {
    let mut structure = Findings::default();
    let mut handed = Vec::new();
    let mut data = 0u64;
    let mut listed = 0usize;
    match members(src) {
        Err(why) => structure.add(Severity::Fail, "archive", why),
        Ok((list, end)) => {
            listed = list.len();
            let mut seen = BTreeSet::new();
            for m in &list {
                let name = String::from_utf8_lossy(&m.name).into_owned();
                let place = format!("member {name}");
                if !seen.insert(name.clone()) {
                    structure.add(
                        Severity::Lead,
                        place.clone(),
                        "listed twice: extraction writes each copy and keeps the last (every copy is read here)",
                    );
                }
                if let Some(why) = escapes(&name) {
                    structure.add(
                        Severity::Fail,
                        place.clone(),
                        format!("{why}: `extractall` writes it outside the target directory (CPython before 3.14, or any filter but `data`)"),
                    );
                }
                match m.kind {
                    b'5' => continue,
                    b'1' | b'2' => {
                        structure.add(
                            Severity::Lead,
                            place,
                            "a link: extracting it makes a link a loader follows, to what socair does not model",
                        );
                        continue;
                    }
                    b'3' | b'4' | b'6' => {
                        structure.add(
                            Severity::Lead,
                            place,
                            "a device or FIFO: extracting it makes one",
                        );
                        continue;
                    }
                    b'S' => {
                        structure.add(
                            Severity::Lead,
                            place,
                            "a GNU sparse file: its holes are not read here, so nothing in it was checked",
                        );
                        continue;
                    }
                    _ if !m.is_regular() => {
                        structure.add(
                            Severity::Lead,
                            place,
                            format!(
                                "of type {:?}, which socair does not read",
                                char::from(m.kind)
                            ),
                        );
                        continue;
                    }
                    _ => {}
                }
                let (Ok(offset), Ok(len)) = (u64::try_from(m.offset_data), u64::try_from(m.size))
                else {
                    structure.add(
                        Severity::Fail,
                        place,
                        "its data's offset or size is negative",
                    );
                    continue;
                };
                if offset.checked_add(len).is_none_or(|e| e > src.size()) {
                    structure.add(
                        Severity::Lead,
                        place,
                        format!("its {len} bytes at byte {offset} run past the end of the file: extracting it fails"),
                    );
                    continue;
                }
                let span = Span { src, offset, len };
                match companion::classify(&name, &span, MEMBER_UNREAD) {
                    Companion::Data(_) => data += 1,
                    Companion::Fail { findings, .. } => {
                        for (at, reason) in findings {
                            structure.add(Severity::Fail, format!("{place} {at}"), reason);
                        }
                    }
                    Companion::Lead(why) => handed.push(Member {
                        name: name.into(),
                        bytes: MemberBytes::Range(ByteRange { offset, len }),
                        unclaimed: why.into(),
                    }),
                }
            }
            match end {
                WalkEnd::End => {}
                WalkEnd::ReadError(why) | WalkEnd::Raises(_, why) => structure.add(
                    Severity::Lead,
                    "archive",
                    format!("after {listed} members CPython's tarfile stops reading it: {why}"),
                ),
            }
            if list.is_empty() {
                structure.add(
                    Severity::Lead,
                    "archive",
                    "a tar archive with no members: not a model",
                );
            }
        }
    }
    let st = status(structure.worst);
    let summary = format!(
        "tar archive as CPython's tarfile lists it: {listed} members, {data} JSON or text read as data, {} handed to the readers that claim them{}",
        handed.len(),
        match st {
            RowStatus::Fail => "; extracting it writes outside its directory, or it is built to be read differently",
            RowStatus::Lead => "; members socair did not read must be looked at by a person",
            _ => "",
        }
    );
    let opened = socair_plugin_kit::report::one_row(
        TAR_FORMAT,
        ReportRow {
            check: socair_plugin_kit::report::STRUCTURE_CHECK.into(),
            status: st,
            summary: summary.into(),
            findings: structure.to_api("structure findings"),
            names_severities: true,
        },
    );
    OpenedContainer {
        opened,
        members: handed.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_escape() {
        assert!(escapes("/etc/passwd").is_some());
        assert!(escapes("a/../../x").is_some());
        assert!(escapes("C:evil").is_some());
        assert!(escapes("a/../b").is_none());
        assert!(escapes("model/./config.json").is_none());
    }
}
