//! The records torch's reader looks up beside `data.pkl` and the storages, read as
//! `PyTorchStreamReader` and `_load` read them: lookups that ignore ASCII case, the version
//! record through `std::stoull`, and `.storage_alignment` through Python's `int()`.

use super::analysis::Analysis;
use crate::pickle::Severity;
use crate::zip::{self, ReadAt};

/// A record's bytes as torch reads them (inflated when deflated), at most `limit` of them.
pub(super) fn read_record(
    src: &(impl ReadAt + ?Sized),
    r: &zip::Record,
    limit: u64,
) -> Result<Vec<u8>, String> {
    zip::bytes::read_bytes(src, r, limit)
}

/// `archive.get(rel)`, and a FAIL when the record torch finds differs from `rel` in case: torch
/// looks records up ignoring ASCII case (miniz's sorted lookup), other readers do not, and
/// torch.save writes these names in lower case.
pub(super) fn lookup<'r>(
    a: &mut Analysis,
    archive: &'r zip::Archive,
    rel: &str,
) -> Option<&'r zip::Record> {
    lookup_index(a, archive, rel).map(|i| &archive.records[i])
}

/// [`lookup`], as an index into the archive's records.
pub(super) fn lookup_index(a: &mut Analysis, archive: &zip::Archive, rel: &str) -> Option<usize> {
    let i = archive.find(rel)?;
    let r = &archive.records[i];
    if archive.relative(r) != rel {
        a.add_kind("a record found only by ignoring case", Severity::Fail, || {
            (
                format!("zip record {:?}", r.name),
                format!(
                    "torch's reader finds this record when it asks for {}/{rel} (miniz compares names ignoring ASCII case), other readers do not, and torch.save writes the name in lower case",
                    archive.prefix
                ),
            )
        });
    }
    Some(i)
}

/// The oldest and newest archive format versions torch 2.x reads
/// (`kMinSupportedFileFormatVersion`, `kMaxSupportedFileFormatVersion` in
/// caffe2/serialize/versions.h).
pub const SUPPORTED_VERSIONS: std::ops::RangeInclusive<u64> = 1..=0xA;

/// `std::stoull` on the record as `PyTorchStreamReader::init` builds its string: up to the first
/// NUL (`c_str`), leading C whitespace, a sign (a minus negates modulo 2^64), decimal digits,
/// then anything. `None` where it throws (`invalid_argument`: no digits; `out_of_range`:
/// past 2^64 - 1).
pub fn stoull(bytes: &[u8]) -> Option<u64> {
    let text = match bytes.iter().position(|&b| b == 0) {
        Some(p) => &bytes[..p],
        None => bytes,
    };
    let mut i = text
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .unwrap_or(text.len());
    let negative = match text.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = text[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let mut value: u64 = 0;
    for &d in &text[i..i + digits] {
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// The version record as `PyTorchStreamReader::init` reads it: `.data/version` when the archive
/// has it, else `version`, which it must have; `std::stoull` of its bytes within
/// [`SUPPORTED_VERSIONS`]. Anything torch refuses is a FAIL (torch.load cannot read the file,
/// other readers can); what it accepts but torch never writes (`"3\n"` is what it writes), or
/// both records at once, is a LEAD.
pub(super) fn check_version(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
) {
    let data_version = lookup(a, archive, ".data/version");
    let plain = lookup(a, archive, "version");
    let record = match (data_version, plain) {
        (Some(d), Some(v)) => {
            a.add(
                Severity::Lead,
                format!("zip records {:?}, {:?}", d.name, v.name),
                "both version records: torch reads .data/version and ignores version, and torch.save writes only one of them",
            );
            d
        }
        (Some(r), None) | (None, Some(r)) => r,
        (None, None) => {
            a.add(
                Severity::Fail,
                format!("zip archive {:?}", archive.prefix),
                format!(
                    "no {0}/version or {0}/.data/version record: torch.load refuses the archive (PyTorchStreamReader::init checks hasRecord(\"version\"))",
                    archive.prefix
                ),
            );
            return;
        }
    };
    // stoull stops at the first byte that is not a digit: the first 64 bytes say everything a
    // version torch accepts can say.
    let head = match zip::bytes::read_head(src, record, 64) {
        Ok(head) => head,
        Err(e) => {
            a.add(Severity::Fail, format!("zip record {:?}", record.name), e);
            return;
        }
    };
    let place = format!("zip record {:?}", record.name);
    match stoull(&head) {
        Some(v) if SUPPORTED_VERSIONS.contains(&v) => {
            if record.len > 64 || head != format!("{v}\n").as_bytes() {
                a.add(
                    Severity::Lead,
                    place,
                    format!(
                        "torch reads version {v} from {:?}, but torch's writer writes the number and a newline only",
                        String::from_utf8_lossy(&head)
                    ),
                );
            }
        }
        parsed => a.add(
            Severity::Fail,
            place,
            format!(
                "torch.load refuses the archive: the version record {:?} is {}, and torch reads versions {} to {}",
                String::from_utf8_lossy(&head),
                match parsed {
                    Some(v) => format!("version {v}"),
                    None => "no number std::stoull accepts".into(),
                },
                SUPPORTED_VERSIONS.start(),
                SUPPORTED_VERSIONS.end()
            ),
        ),
    }
}

/// `.storage_alignment` as `_load` reads it: `int(zip_file.get_record(".storage_alignment"))`,
/// which raises `ValueError` (torch.load fails: FAIL) on anything Python's `int()` refuses. The
/// value only matters to torch's calculated storage offsets ([`calculated_offsets`]). Returns
/// it (64 when the record is absent, as `_load` assumes).
pub(super) fn storage_alignment(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
) -> i128 {
    let Some(r) = lookup(a, archive, ".storage_alignment") else {
        return 64;
    };
    let place = format!("zip record {:?}", r.name);
    // Python's int() accepts at most 4300 digits, with whitespace and underscores around them.
    if r.len > 16 << 10 {
        a.add(
            Severity::Fail,
            place,
            format!(
                "a {}-byte .storage_alignment: Python's int() refuses it, so torch.load fails",
                r.len
            ),
        );
        return 64;
    }
    let bytes = match read_record(src, r, 16 << 10) {
        Ok(b) => b,
        Err(e) => {
            a.add(Severity::Fail, place, e);
            return 64;
        }
    };
    match socair_tar::python_int_of_bytes(&bytes) {
        None => {
            a.add(
                Severity::Fail,
                place,
                format!(
                    "torch.load raises ValueError: int({:?}) of .storage_alignment",
                    String::from_utf8_lossy(&bytes)
                ),
            );
            64
        }
        Some(n) if n <= 0 => {
            a.add(
                Severity::Lead,
                place,
                format!("storage alignment {n}: torch's calculated storage offsets divide by it (caffe2 detail::getOffset)"),
            );
            64
        }
        Some(n) => n,
    }
}
