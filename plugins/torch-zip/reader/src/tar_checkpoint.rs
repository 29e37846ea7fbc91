//! torch's oldest format, a tar archive, as `torch.load` reads it: torch 2.15
//! `torch/serialization.py` `_legacy_load`, whose `legacy_load` runs when the file is a real
//! file at offset 0 and `tarfile.open(fileobj=f, mode="r:", format=PAX_FORMAT)` opens it.
//! torch 0.1 wrote it (`_save`: `tarfile.open(..., mode='w:', format=tarfile.PAX_FORMAT)`,
//! members `sys_info`, `pickle`, `tensors`, `storages`, each added from a temporary file,
//! so each behind a pax header holding its float `mtime`).
//!
//! `legacy_load` refuses it with `weights_only=True` (the default since torch 2.6:
//! "Cannot use weights_only=True with files saved in the legacy .tar format"); with
//! `weights_only=False` it unpickles, with the plain unpickler:
//!
//! * `tar.extract("storages")`, then from the extracted file: a pickle of the count, per
//!   storage a pickle of `(key, location, storage_type)` followed by its element count (8
//!   bytes, little-endian) and its elements, then a pickle of the storage views;
//! * `tar.extract("tensors")`: a pickle of the count, per tensor a pickle of `(key,
//!   storage_id, tensor_type)` followed by its metadata (a 4-byte `ndim`, 4 bytes skipped,
//!   `ndim` sizes and `ndim` strides of 8 bytes, an 8-byte storage offset);
//! * `tar.extractfile("pickle")`: the main pickle, its persistent ids the keys above (or
//!   `(class, source file, source)` for a module class).
//!
//! Each member is the last one of its name (`TarFile.getmember`), and must be a regular file:
//! `extract` of a symbolic or hard link makes a link in the temporary directory that `open`
//! then follows (a local file read as pickles, before CPython 3.14's default `data` filter),
//! and `extractfile` follows a link to another member. Every pickle goes through the machine;
//! the members are walked under every CPython profile, which must agree.

use crate::checkpoint::{Analysis, AnalyzeOptions};
use crate::pickle::{self, Severity, Value};
use crate::zip::ReadAt;
use socair_tar::{TarMember, WalkEnd};

/// The most members walked (a tar of tiny members: one header block each).
const MAX_MEMBERS: usize = 1 << 16;

/// The members `legacy_load` reads.
const READ: &[&str] = &["storages", "tensors", "pickle"];

pub use socair_tar::looks_like_torch_tar;

/// The members of the tar in `src`, walked under every profile; `Err` when CPython releases
/// walk it differently.
fn members(src: &(impl ReadAt + ?Sized)) -> Result<(Vec<TarMember>, WalkEnd), String> {
    socair_tar::members_agreed(src, MAX_MEMBERS).map_err(|d| {
        format!(
            "CPython {} and CPython {} list its members differently: which bytes torch unpickles depends on the Python it runs on",
            d.first, d.other
        )
    })
}

/// Reads a tar that CPython's tarfile opens as torch's oldest format would be read.
pub fn analyze(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let mut a = Analysis {
        pickle_name: "tar member pickle".into(),
        legacy: true,
        grammar: options.grammar,
        sys_info: Some("torch's tar format".into()),
        ..Analysis::default()
    };
    let give_up = |mut a: Analysis, severity: Severity, place: &str, why: String| {
        a.add(severity, place, why.clone());
        a.unread.push((None, why));
        a
    };
    let (list, end) = match members(src) {
        Ok(m) => m,
        Err(why) => return give_up(a, Severity::Fail, "tar archive", why),
    };
    match &end {
        WalkEnd::End => {}
        WalkEnd::ReadError(why) => {
            // tar.extract raises ReadError loading the members: a TarError, so torch.load
            // goes on to read the file as pickles from byte 0, which a tar header is not.
            return give_up(a, Severity::Fail, "tar archive", format!("CPython's tarfile raises ReadError ({why}) listing its members: torch.load then reads the file as pickles, which it is not"));
        }
        WalkEnd::Raises(exception, why) => {
            return give_up(a, Severity::Fail, "tar archive", format!("CPython's tarfile raises {exception} ({why}) listing its members: torch.load fails"));
        }
    }
    let last = |name: &str| list.iter().rev().find(|m| m.name == name.as_bytes());
    let size = src.size();
    let mut data: Vec<(&str, Vec<u8>, u64)> = Vec::new();
    for &name in READ {
        let place = format!("tar member {name}");
        let Some(m) = last(name) else {
            return give_up(a, Severity::Lead, &place, format!("a tar archive without a member named {name}: torch.load's tar reader raises KeyError, so it is not a torch checkpoint whatever its name"));
        };
        if !m.is_regular() {
            let what = match m.kind {
                b'1' => "a hard link",
                b'2' => "a symbolic link",
                b'3' | b'4' => "a device",
                b'5' => "a directory",
                b'6' => "a FIFO",
                b'S' => "a GNU sparse file",
                _ => "not a regular file",
            };
            return give_up(a, Severity::Fail, &place, format!("{what} (type {:?}): tar.extract makes it in torch's temporary directory and open() follows a link to whatever it names (a local file read as the checkpoint), extractfile follows it to another member", char::from(m.kind)));
        }
        let start = u64::try_from(m.offset_data).ok();
        let len = u64::try_from(m.size).ok();
        let (Some(start), Some(len)) = (start, len) else {
            return give_up(
                a,
                Severity::Fail,
                &place,
                "its data offset or size is negative".into(),
            );
        };
        if start.checked_add(len).is_none_or(|e| e > size) {
            return give_up(a, Severity::Fail, &place, format!("its {len} bytes at byte {start} run past the end of the {size}-byte file (tar.extract raises ReadError: torch.load then fails)"));
        }
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        if let Err(e) = src.read_exact_at(start, &mut buf) {
            return give_up(a, Severity::Fail, &place, e);
        }
        data.push((name, buf, start));
    }
    let plain = pickle::Options {
        reviewed: options.reviewed.clone(),
        legacy: true,
        input_len: size,
        grammar: options.grammar,
        // torch.load reads the tar's pickles: strict UTF-8.
        python2_str: pickle::Python2Str::TorchUtf8,
        ..Default::default()
    };
    for (name, bytes, start) in &data {
        match *name {
            "pickle" => {
                let mut outcome = pickle::run(bytes, &plain);
                // torch 0.1 names a tensor or storage by a string key (str(_cdata)), a module
                // class by (class, source file, source), where the grammar models the later
                // formats' ('storage', …) tuples: what persistent_load makes of either is a
                // LEAD here, never evidence by itself (a global it reaches has its own
                // finding).
                for f in &mut outcome.findings {
                    if matches!(f.opcode, "PERSID" | "BINPERSID") && f.severity == Severity::Fail {
                        f.severity = Severity::Lead;
                        f.reason = format!("a persistent id as torch 0.1's tar format writes them (a tensor's or storage's string key, or a module class with its source, which persistent_load compares with the class's and, when the class sets dump_patches, writes a .patch file for): the grammar does not model it ({})", f.reason);
                    }
                }
                add_findings(&mut a, name, *start, 0, &outcome);
                a.protocol = outcome.protocol;
                a.main_pickle_offset = Some(*start);
                a.reviewed_used
                    .extend(outcome.reviewed_used.iter().cloned());
            }
            _ => records(&mut a, name, bytes, *start, &plain),
        }
    }
    let why = "torch's tar format (torch 0.1): torch.load refuses it with weights_only=True (the default since torch 2.6) and with weights_only=False unpickles its members with the unrestricted unpickler; socair does not locate its tensors";
    a.add(Severity::Lead, "tar archive", why);
    a.unread.push((None, why.into()));
    a
}

fn add_findings(
    a: &mut Analysis,
    member: &str,
    start: u64,
    at: usize,
    outcome: &pickle::Unpickled,
) {
    for f in &outcome.findings {
        let offset = at as u64 + f.offset;
        a.add(
            f.severity,
            format!(
                "tar member {member} byte {offset} (file byte {}, {})",
                start + offset,
                f.opcode
            ),
            f.reason.clone(),
        );
    }
}

/// The `storages` or `tensors` member: pickles with raw bytes between them.
fn records(a: &mut Analysis, name: &str, bytes: &[u8], start: u64, options: &pickle::Options) {
    let place = |at: usize| {
        format!(
            "tar member {name} byte {at} (file byte {})",
            start + at as u64
        )
    };
    let mut at = 0usize;
    // Runs the pickle at `at`; its result, or `None` (and a finding) when it does not end.
    let next = |a: &mut Analysis, at: &mut usize, what: &str| -> Option<Option<Value>> {
        let (outcome, end) = pickle::run_one(bytes.get(*at..).unwrap_or_default(), options);
        add_findings(a, name, start, *at, &outcome);
        match end {
            Some(end) => {
                *at += end;
                Some(outcome.result)
            }
            None => {
                a.add(
                    Severity::Fail,
                    place(*at),
                    format!("the {what} pickle does not end: torch.load's reader stops there"),
                );
                None
            }
        }
    };
    let Some(count) = next(a, &mut at, "count") else {
        return;
    };
    let Some(Value::Int(count)) = count.filter(|c| matches!(c, Value::Int(n) if *n >= 0)) else {
        a.add(
            Severity::Fail,
            place(0),
            "the first pickle is not a count: torch.load's reader raises",
        );
        return;
    };
    for _ in 0..count {
        let entry_at = at;
        let Some(entry) = next(a, &mut at, "entry") else {
            return;
        };
        let fields = match entry {
            Some(Value::Tuple(items, _)) if items.len() == 3 => items,
            _ => {
                a.add(
                    Severity::Fail,
                    place(entry_at),
                    "an entry that is not a 3-tuple: torch.load's reader raises unpacking it",
                );
                return;
            }
        };
        let raw = if name == "storages" {
            // `storage_type._dtype` sizes the elements `_new_with_file` reads after a count.
            let Value::Global(g) = &fields[2] else {
                a.add(
                    Severity::Fail,
                    place(entry_at),
                    "a storage entry whose type is not a storage class",
                );
                return;
            };
            let Some(d) = (match &g.class {
                crate::globals::Class::Known(crate::globals::Known::TypedStorage(d)) => Some(*d),
                _ => None,
            }) else {
                a.add(Severity::Lead, place(entry_at), format!("a storage of type {}.{}, which the grammar does not size: the rest of the member is not read", g.module, g.name));
                return;
            };
            let Some(n) = bytes
                .get(at..at + 8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            else {
                a.add(
                    Severity::Fail,
                    place(at),
                    "the storage's 8-byte element count runs past the member",
                );
                return;
            };
            n.checked_mul(d.size)
                .and_then(|b| b.checked_add(8))
                .unwrap_or(u64::MAX)
        } else {
            let Some(ndim) = bytes
                .get(at..at + 4)
                .map(|b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
            else {
                a.add(
                    Severity::Fail,
                    place(at),
                    "the tensor's metadata runs past the member",
                );
                return;
            };
            match u64::try_from(ndim) {
                Ok(n) => 8 + 16 * n + 8,
                Err(_) => {
                    a.add(
                        Severity::Fail,
                        place(at),
                        format!("ndim {ndim}: torch.load's struct.unpack raises"),
                    );
                    return;
                }
            }
        };
        let end = (at as u64)
            .checked_add(raw)
            .filter(|&e| e <= bytes.len() as u64);
        let Some(end) = end else {
            a.add(Severity::Fail, place(at), format!("its {raw} bytes after the entry's pickle run past the end of the {}-byte member", bytes.len()));
            return;
        };
        at = end as usize;
    }
    if name == "storages" && next(a, &mut at, "storage-views").is_none() {
        return;
    }
    if at < bytes.len() {
        a.add(
            Severity::Lead,
            place(at),
            format!(
                "{} bytes follow what torch.load reads of this member",
                bytes.len() - at
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE_DICT: &[u8] = include_bytes!("../../../../fixtures/torch/tar/state-dict.pt");
    const OS_SYSTEM: &[u8] = include_bytes!("../../../../fixtures/torch/tar/os-system.pt");
    const SYMLINK: &[u8] = include_bytes!("../../../../fixtures/torch/tar/storages-symlink.pt");

    #[test]
    fn torch_0_1_tars_are_claimed_and_their_members_walked() {
        for bytes in [STATE_DICT, OS_SYSTEM, SYMLINK] {
            assert!(looks_like_torch_tar(&bytes[..4096.min(bytes.len())]));
        }
        let (members, end) = members(STATE_DICT).unwrap();
        assert_eq!(end, WalkEnd::End);
        let names: Vec<&[u8]> = members.iter().map(|m| m.name.as_slice()).collect();
        assert_eq!(
            names,
            socair_tar::TORCH_MEMBERS.to_vec(),
            "each behind its pax header"
        );
        // A magic-number legacy checkpoint is not a tar.
        let legacy = include_bytes!("../../../../fixtures/torch/legacy/state-dict.pt");
        assert!(!looks_like_torch_tar(&legacy[..4096.min(legacy.len())]));
    }

    fn options() -> AnalyzeOptions {
        AnalyzeOptions {
            grammar: pickle::Grammar::NEWEST,
            ..AnalyzeOptions::default()
        }
    }

    #[test]
    fn every_pickle_goes_through_the_machine() {
        let a = analyze(STATE_DICT, &options());
        assert_eq!(a.worst(), Some(Severity::Lead), "{:#?}", a.findings);
        assert!(a.findings.iter().all(|f| f.severity == Severity::Lead));
        let a = analyze(OS_SYSTEM, &options());
        let fail = a
            .findings
            .iter()
            .find(|f| f.severity == Severity::Fail)
            .expect("a FAIL");
        assert!(
            fail.place.starts_with("tar member pickle byte "),
            "{fail:?}"
        );
        assert!(fail.reason.contains("posix.system"));
        let a = analyze(SYMLINK, &options());
        assert_eq!(a.worst(), Some(Severity::Fail));
        assert_eq!(a.findings[0].place, "tar member storages");
        assert!(a.findings[0].reason.contains("symbolic link"));
    }

    #[test]
    fn cut_members_are_refused_with_their_place() {
        // The archive cut inside the storages member's data: listing the members reaches past
        // the end (TarFile.next raises ReadError "unexpected end of data").
        let (members, _) = members(STATE_DICT).unwrap();
        let storages = members.iter().find(|m| m.name == b"storages").unwrap();
        let cut = &STATE_DICT[..storages.offset_data as usize + 10];
        let a = analyze(cut, &options());
        assert_eq!(a.worst(), Some(Severity::Fail), "{:#?}", a.findings);
        assert!(a.findings[0]
            .reason
            .contains("ReadError (unexpected end of data)"));
        // Cut inside the pax header before it: its follow-up header is empty, a
        // SubsequentHeaderError, which TarFile.next raises as ReadError.
        let cut = &STATE_DICT[..storages.offset_data as usize - 700];
        let a = analyze(cut, &options());
        assert!(
            a.findings[0].reason.contains("ReadError (empty header)"),
            "{:#?}",
            a.findings
        );
        // Cut right after the tensors member: an archive without storages, which
        // getmember("storages") does not find (KeyError): not a checkpoint torch reads.
        let tensors = members.iter().find(|m| m.name == b"tensors").unwrap();
        let end = (tensors.offset_data + tensors.size + 511) / 512 * 512;
        let mut short = STATE_DICT[..end as usize].to_vec();
        short.extend_from_slice(&[0u8; 1024]);
        let a = analyze(&short[..], &options());
        assert!(
            a.findings[0].reason.contains("KeyError"),
            "{:#?}",
            a.findings
        );
        assert_eq!(a.worst(), Some(Severity::Lead));
    }
}
