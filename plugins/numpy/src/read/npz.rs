//! An `.npz` archive member by member, as `np.load` reads it (numpy 2.4
//! `numpy/lib/_npyio_impl.py`, `NpzFile`):
//!
//! * every member is a key: `NpzFile.files` is each name with one `.npy` suffix removed
//!   (`removesuffix`), and `_files` maps both the key and the full name to the member;
//! * `npz[key]` opens the member with `zipfile` (stored, deflate, bzip2 and LZMA: see
//!   [`crate::decompress`]) and reads its first six bytes: the `.npy` magic makes it an array
//!   (`format.read_array`, with its pickle for an object array), anything else is returned as
//!   raw bytes, whatever the name.
//!
//! So a member without the `.npy` name that starts with the magic is an array like any other,
//! fingerprinted and its pickle scanned; a member that does not start with it (named `.npy` or
//! not) is raw bytes, a LEAD, and when those bytes are a pickle it goes through the machine
//! too (`np.load` never unpickles it, its caller may).

use super::{describe, place_in, run_pickle, Array, Outcome, Severity, Where, NPZ};
use crate::inflate;
use crate::npy;
use crate::span::Span;
use crate::zip::{self, Member, MemberError};
use socair_pickle::pickle;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What the members were compressed with, counted for the PASS sentence.
#[derive(Default)]
struct Counts {
    stored: usize,
    deflated: usize,
    bzip2: usize,
    lzma: usize,
}

/// Reads an `.npz` archive; CRC-32s are checked unless `header_only`.
pub fn read_npz(file: Span<'_>, header_only: bool, reviewed: &[String]) -> Outcome {
    let mut out = Outcome::new(NPZ);
    let archive = match zip::read_archive(&file) {
        Ok(a) => a,
        Err(e) => {
            out.refuse(None, Severity::Fail, e.place, e.reason);
            return out;
        }
    };
    let members = archive.members;
    // np.load(f)[key] looks `key` up as a member name first, then as `key + ".npy"`: a member
    // named `x` and another named `x.npy` make `x` mean two different arrays.
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let ambiguous: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.name.strip_suffix(".npy"))
        .filter(|stem| names.contains(stem))
        .collect();
    let mut budget = super::inflate_budget(file.len);
    let mut counts = Counts::default();
    for m in &members {
        // NpzFile.files: the name with one `.npy` removed.
        let key = m.name.strip_suffix(".npy").unwrap_or(&m.name);
        if m.name.ends_with(".npy") && ambiguous.contains(key) {
            out.refuse(
                Some(key),
                Severity::Fail,
                m.place(),
                format!("np.load()[{key:?}] returns the member named {key:?}, not this one; the name means two arrays"),
            );
            continue;
        }
        if m.encrypted {
            out.refuse(
                Some(key),
                Severity::Lead,
                m.place(),
                "encrypted; not read".into(),
            );
            continue;
        }
        match m.method {
            zip::STORED => {
                counts.stored += 1;
                read_stored(&file, m, key, header_only, reviewed, &mut out);
            }
            zip::DEFLATE | zip::BZIP2 | zip::LZMA => {
                match m.method {
                    zip::DEFLATE => counts.deflated += 1,
                    zip::BZIP2 => counts.bzip2 += 1,
                    _ => counts.lzma += 1,
                }
                if m.len > budget {
                    out.refuse(
                        Some(key),
                        Severity::Lead,
                        m.place(),
                        format!(
                            "compressed ({}) to {} bytes, which declare {} bytes decompressed: past the {} bytes socair decompresses from this archive; not read, CRC-32 not checked",
                            zip::method_name(m.method),
                            m.compressed_len,
                            m.len,
                            super::inflate_budget(file.len)
                        ),
                    );
                    continue;
                }
                budget = budget.saturating_sub(m.len);
                read_decoded(&file, m, key, reviewed, &mut out);
            }
            other => out.refuse(
                Some(key),
                Severity::Lead,
                m.place(),
                format!(
                    "compressed with method {other} ({}); np.savez writes stored and deflate, Python's zipfile reads bzip2 and LZMA too, and this reader those four; not read",
                    zip::method_name(other)
                ),
            ),
        }
    }
    let mut methods = vec![
        format!("{} stored", counts.stored),
        format!("{} deflated", counts.deflated),
    ];
    if counts.bzip2 > 0 {
        methods.push(format!("{} bzip2", counts.bzip2));
    }
    if counts.lzma > 0 {
        methods.push(format!("{} LZMA", counts.lzma));
    }
    out.pass_summary = format!(
        ".npz zip of {} member(s) ({}): local headers agree with the central directory, members tile the file with no gap, overlap or duplicate name, {}",
        members.len(),
        methods.join(", "),
        if header_only {
            "CRC-32 of stored members not checked (header only); compressed members decompressed within bounds and checked"
        } else {
            "CRC-32 and size of every member verified"
        },
    );
    out
}

/// The member a raw member's findings are placed in, and where its bytes start in those
/// places' offsets (the file's for a stored member, 0 for decompressed bytes).
struct RawAt<'w> {
    w: &'w Where,
    offset: u64,
}

/// A member that does not start with the `.npy` magic: `np.load` returns its raw bytes. A
/// LEAD (nothing models them), and their pickle scanned when they are one. `head` is the
/// member's first bytes; `all` reads the whole member when it is a pickle.
fn raw_member<'d>(
    m: &Member,
    key: &str,
    at: RawAt<'_>,
    head: &[u8],
    all: impl FnOnce() -> Option<Cow<'d, [u8]>>,
    file: (u64, &[String]),
    out: &mut Outcome,
) {
    let (file_len, reviewed) = file;
    let RawAt { w, offset } = at;
    out.refuse(
        Some(key),
        Severity::Lead,
        m.place(),
        format!("np.load()[{key:?}] returns its raw bytes, not an array: it does not start with the .npy magic (\\x93NUMPY); nothing socair models reads them"),
    );
    if !pickle::looks_like_pickle(head, m.len) {
        return;
    }
    let at = place_in(Some(w), offset);
    out.raw_pickles.push(at.clone());
    match all() {
        Some(data) => run_pickle(&data, Some(w), offset, at, file_len, reviewed, out),
        None => out.pickle_findings.push(super::Finding {
            severity: Severity::Lead,
            place: at,
            reason: "its pickle could not be read; not scanned".into(),
        }),
    }
}

fn read_stored(
    file: &Span<'_>,
    m: &Member,
    key: &str,
    header_only: bool,
    reviewed: &[String],
    out: &mut Outcome,
) {
    if !header_only {
        if let Err(e) = zip::read_each(file, m, |_| true) {
            return out.refuse(Some(key), Severity::Fail, m.place(), e.to_string());
        }
    }
    let w = Where {
        name: m.name.clone(),
        base: m.data_offset,
        inflated: false,
    };
    let member = file.sub(m.data_offset, m.len);
    let head = member.map(|s| s.head(4096)).unwrap_or_default();
    if !npy::has_magic(&head) {
        let all = || member.and_then(|s| s.to_vec().ok()).map(Cow::Owned);
        let at = RawAt {
            w: &w,
            offset: m.data_offset,
        };
        return raw_member(m, key, at, &head, all, (file.len, reviewed), out);
    }
    let a = Array {
        src: *file,
        name: key,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    array(&a, file, (m.data_offset, m.len), out);
}

/// The `.npy` bytes at `base..base + len` of `src`, the array `a`: its header read and what
/// it describes added, or the refusal with its place.
fn array(a: &Array<'_>, src: &Span<'_>, (base, len): (u64, u64), out: &mut Outcome) {
    match npy::read_header(src, base, len) {
        Ok(h) => describe(a, &h, out),
        Err(e) => out.refuse(
            Some(a.name),
            Severity::Fail,
            place_in(a.member, e.offset),
            e.reason,
        ),
    }
}

/// A deflated, bzip2 or LZMA member, decompressed within the budget (checked by the caller).
fn read_decoded(file: &Span<'_>, m: &Member, key: &str, reviewed: &[String], out: &mut Outcome) {
    // m.len fits in the budget, so this allocation is bounded.
    let mut bytes = Vec::with_capacity(usize::try_from(m.len).unwrap_or(0));
    let result = zip::read_each(file, m, |piece| {
        bytes.extend_from_slice(piece);
        true
    });
    if let Err(e) = result {
        let reason = match e {
            MemberError::Inflate(inflate::InflateError::TooLong(n)) => format!(
                "its {} stream {} past the {n} bytes the archive declares (a zip bomb, or a member readers read differently); stopped there",
                zip::method_name(m.method),
                if m.method == zip::DEFLATE {
                    "inflates"
                } else {
                    "decompresses"
                }
            ),
            e => e.to_string(),
        };
        return out.refuse(Some(key), Severity::Fail, m.place(), reason);
    }
    let w = Where {
        name: m.name.clone(),
        base: 0,
        inflated: true,
    };
    if !npy::has_magic(&bytes) {
        let head = bytes.get(..bytes.len().min(4096)).unwrap_or_default();
        let at = RawAt { w: &w, offset: 0 };
        let all = || Some(Cow::Borrowed(bytes.as_slice()));
        return raw_member(m, key, at, head, all, (file.len, reviewed), out);
    }
    let member = Span::memory(&bytes);
    let a = Array {
        src: member,
        name: key,
        member: Some(&w),
        file_len: file.len,
        reviewed,
    };
    array(&a, &member, (0, member.len), out);
}
