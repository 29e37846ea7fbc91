//! A torch zip checkpoint as a whole: the zip layer, the records torch.save writes, the
//! pickle run through `socair-wo/1`, and every storage matched to its record; then the
//! state-dict model (`ReadStateDict`) that `socair tensors` and conversion read.
//!
//! This file holds what decides that a file is a torch zip and the reading of one from its
//! zip layer to its storages; the parts apart are the analysis they fill (`analysis`), the
//! records torch's reader looks up beside `data.pkl` (`records`), the storages and tensors
//! as torch loads them (`tensors`) and the state-dict model (`state_dict`), which the
//! legacy format reads too.

pub mod analysis;
mod records;
mod state_dict;
mod tensors;
#[cfg(test)]
mod tests;

pub use analysis::{Analysis, AnalyzeOptions, Endian, Finding, LocatedTensor, FINDINGS_PER_KIND};
use records::{check_version, lookup, lookup_index, read_record, storage_alignment};
pub use records::{stoull, SUPPORTED_VERSIONS};
pub use state_dict::{
    read_state_dict, read_state_dict_in, NamedTensor, StateDict, BARE_TENSOR, MAX_NAME_DEPTH,
};
use tensors::{calculated_offsets, unswapped_big_endian};
pub use tensors::{judge_locations, model_tensors, model_tensors_with};

use crate::pickle::{self, Severity};
use crate::zip::{self, ReadAt};
use std::collections::HashMap;

/// The largest `data.pkl` read into memory. State dicts take about 100 bytes of pickle per
/// tensor, so this leaves room for millions of tensors and large training checkpoints.
pub const MAX_PICKLE_LEN: u64 = 1 << 30;

/// Records torch.save writes besides `data.pkl` and the storages.
const KNOWN_RECORDS: &[&str] = &[
    "byteorder",
    "version",
    ".data/version",
    ".format_version",
    ".storage_alignment",
    ".data/serialization_id",
];

const TORCHSCRIPT_FINDING: &str = "a TorchScript archive (torch.jit.save): torch.load hands it to the TorchScript loader, which compiles and runs its code; it is never a weights-only checkpoint";

/// Records only TorchScript archives hold: `<prefix>/code/…` and `<prefix>/constants.pkl`.
fn is_torchscript_record(name: &str) -> bool {
    match name.split_once('/') {
        Some((_, rel)) => rel.starts_with("code/") || rel == "constants.pkl",
        None => false,
    }
}

/// Whether a zip record name is one torch's reader looks for or writes (the kit's rule, which
/// the archive plugin's complement reads too).
pub use socair_plugin_kit::zip::claims::torch_record_name;
use socair_plugin_kit::zip::claims::{local_header_names, torch_claims};

/// Whether the first bytes of a file (and its length) show a zip that torch reads as a
/// checkpoint or a TorchScript archive: `PYTORCH1` (torch's preview format, which it refuses
/// with its own message), or a file that starts with a zip local header (`_is_zipfile`) in
/// which some local header visible in `head` names a record torch's reader looks for
/// ([`torch_record_name`]), or whose first name runs past `head`. When the whole file is in
/// `head`, the central directory's names count too. Any other zip is not claimed: it falls to
/// other readers, or to the host's report of a file no reader checked.
pub fn looks_like_torch_zip(head: &[u8], file_len: u64) -> bool {
    // The whole-file case goes by this plugin's own reading of the central directory.
    torch_claims(head, file_len, |head| {
        zip::central_names(head)
            .is_some_and(|names| names.iter().any(|n| torch_record_name(n.as_bytes())))
    })
}

/// [`looks_like_torch_zip`] over the whole file: the central directory's names when it can be
/// read, and every local header in the file.
fn zip_is_torch_like(src: &(impl ReadAt + ?Sized)) -> bool {
    if zip::central_names(src)
        .is_some_and(|names| names.iter().any(|n| torch_record_name(n.as_bytes())))
    {
        return true;
    }
    // Chunks overlap by a local header's fixed part and the longest name.
    const CHUNK: u64 = 1 << 20;
    const OVERLAP: u64 = 30 + 0xffff;
    let size = src.size();
    let mut at = 0u64;
    let mut buf = Vec::new();
    while at < size {
        let len = (size - at).min(CHUNK + OVERLAP);
        buf.resize(len as usize, 0);
        if src.read_exact_at(at, &mut buf).is_err() {
            return true;
        }
        match local_header_names(&buf, at) {
            None => return true,
            Some(names) if names.iter().any(|n| torch_record_name(n)) => return true,
            Some(_) => {}
        }
        at += CHUNK;
    }
    false
}

/// A file that does not start like a zip: if a zip end record lies near its end, it is a zip
/// with bytes in front (a polyglot: torch reads the front, zip readers the back) and the zip
/// layer refuses it with the details; a raw pickle stream (torch's legacy format, or a plain
/// pickle) is outside what this reader models; anything else is not a checkpoint at all.
pub fn not_a_zip(src: &(impl ReadAt + ?Sized)) -> Option<(Severity, String)> {
    let size = src.size();
    let mut head = [0u8; 8];
    let n = size.min(8) as usize;
    src.read_exact_at(0, &mut head[..n]).ok()?;
    let head = &head[..n];
    if head.starts_with(&zip::LOCAL_MAGIC) || head.starts_with(b"PYTORCH1") {
        return None;
    }
    // The end record is 22 bytes plus a comment of at most 65535.
    let tail_len = size.min(22 + 65_535);
    let mut tail = vec![0u8; tail_len as usize];
    src.read_exact_at(size - tail_len, &mut tail).ok()?;
    if tail.windows(4).any(|w| w == b"PK\x05\x06") {
        return None;
    }
    Some(if head.first() == Some(&0x80) {
        (
            Severity::Lead,
            "a raw pickle stream (torch's legacy format or a plain pickle), not a torch zip checkpoint: socair-wo/1 does not model it, so nothing has checked what loading it would run".into(),
        )
    } else {
        (
            Severity::Lead,
            "neither a zip archive nor a pickle: not a torch checkpoint, whatever its name".into(),
        )
    })
}

/// The first bytes of a file, as the host's detection sees them.
pub fn head_of(src: &(impl ReadAt + ?Sized)) -> Vec<u8> {
    let mut head = vec![0u8; src.size().min(4096) as usize];
    match src.read_exact_at(0, &mut head) {
        Ok(()) => head,
        Err(_) => Vec::new(),
    }
}

/// Reads a checkpoint completely (or its headers only), without running its pickle.
pub fn analyze(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let mut a = analyze_zip(src, options);
    a.finish();
    a
}

fn analyze_zip(src: &(impl ReadAt + ?Sized), options: &AnalyzeOptions) -> Analysis {
    let mut a = Analysis {
        pickle_name: "data.pkl".into(),
        grammar: options.grammar,
        ..Analysis::default()
    };
    if let Some((severity, reason)) = not_a_zip(src) {
        a.add(severity, "byte 0", reason.clone());
        a.unread.push((None, reason));
        return a;
    }
    // `socair-wo/3` reads what torch's writer options and re-zipping produce as torch reads it.
    let rules = zip::Rules {
        torch_writer_options: options.grammar >= pickle::Grammar::V3,
    };
    let Some(archive) = open_torch_archive(&mut a, src, options, rules) else {
        return a;
    };
    a.prefix = Some(archive.prefix.clone());
    let torchscript_globals = judge_torchscript(&mut a, src, &archive, options);
    check_zip_integrity(&mut a, src, &archive, options, rules);
    check_version(&mut a, src, &archive);
    read_byteorder(&mut a, src, &archive);
    let alignment = storage_alignment(&mut a, src, &archive);
    let Some(bytes) = read_data_pkl(&mut a, src, &archive) else {
        return a;
    };
    let outcome = run_data_pkl(&mut a, &bytes, src.size(), options, &torchscript_globals);
    let storages = match_storages(&mut a, &archive, &outcome);
    judge_unread_records(&mut a, &archive, &storages.referenced);
    locate_tensors(&mut a, src, &archive, &outcome, &storages, alignment);
    a
}

/// The zip layer of a file that starts like one: the archive when it is read and holds some
/// record torch's reader looks for; otherwise `None`, with the findings that say why.
fn open_torch_archive(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    options: &AnalyzeOptions,
    rules: zip::Rules,
) -> Option<zip::Archive> {
    let mut first = [0u8; 4];
    let is_zip =
        src.size() >= 4 && src.read_exact_at(0, &mut first).is_ok() && first == zip::LOCAL_MAGIC;
    let not_torch = |a: &mut Analysis| {
        let reason = "a zip archive without any record torch's reader looks for (<prefix>/version, data.pkl, constants.pkl, data/<key>, …): torch.load refuses it, so it is not a torch checkpoint whatever its name, and nothing in it was checked";
        a.add(Severity::Lead, "zip archive", reason);
        a.unread.push((None, reason.into()));
    };
    match zip::read_archive_with(src, rules) {
        Ok(archive) => {
            if !archive
                .records
                .iter()
                .any(|r| torch_record_name(r.name.as_bytes()))
            {
                not_torch(a);
                return None;
            }
            Some(archive)
        }
        Err(_) if is_zip && !zip_is_torch_like(src) => {
            not_torch(a);
            None
        }
        Err(e) => {
            // torch.jit.save compresses its code records, so the zip layer refuses a
            // TorchScript archive before its records are looked at: say what it is anyway.
            let names = zip::central_names(src).unwrap_or_default();
            if options.grammar < pickle::Grammar::V3
                && names.iter().any(|n| is_torchscript_record(n))
            {
                a.torchscript = true;
                a.add(Severity::Fail, "zip central directory", TORCHSCRIPT_FINDING);
            }
            a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string());
            a.unread
                .push((None, format!("the zip structure is refused: {e}")));
            None
        }
    }
}

/// Whether the archive is a TorchScript one, and its judgement: the globals TorchScript's own
/// unpickler resolves (empty unless `socair-wo/3` judged its code).
fn judge_torchscript(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
    options: &AnalyzeOptions,
) -> Vec<String> {
    a.torchscript = archive
        .records
        .iter()
        .any(|r| is_torchscript_record(&r.name));
    // `socair-wo/3` judges a TorchScript archive by its code and its TorchScript pickles
    // (`crate::torchscript`); `/1` and `/2` refuse it whole, as they were pinned.
    let mut torchscript_globals = Vec::new();
    if a.torchscript && options.grammar >= pickle::Grammar::V3 {
        torchscript_globals = crate::torchscript::archive::judge_archive(a, src, archive, options);
    } else if a.torchscript {
        a.add(
            Severity::Fail,
            format!("zip records {}/code/, constants.pkl", archive.prefix),
            TORCHSCRIPT_FINDING,
        );
    }
    torchscript_globals
}

/// What the zip layer says beyond its structure: a trailing comment, every record's CRC-32, and
/// deflated storages.
fn check_zip_integrity(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
    options: &AnalyzeOptions,
    rules: zip::Rules,
) {
    if archive.comment_len > 0 {
        a.add(
            Severity::Lead,
            "zip end record",
            format!(
                "the archive ends with a {}-byte comment, which torch's writer never writes and torch.load never reads (miniz finds the end record before it, as every zip reader does): something may be hidden there",
                archive.comment_len
            ),
        );
    }
    check_record_crcs(a, src, archive, options, rules);
    let deflated_storages = archive
        .records
        .iter()
        .filter(|r| !r.stored() && archive.relative(r).starts_with("data/"))
        .count();
    if deflated_storages > 0 {
        a.add(
            Severity::Lead,
            "zip records data/…",
            format!(
                "{deflated_storages} storage record(s) are deflated (the archive was re-zipped: torch's writer stores them): torch.load inflates them, as socair does, but torch.load(mmap=True) maps their compressed bytes as the storage, and socair fingerprints tensors only where their bytes lie in the file, so their tensors are not read"
            ),
        );
    }
}

/// Integrity: every record's CRC-32 (storages only when their bytes are read).
fn check_record_crcs(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
    options: &AnalyzeOptions,
    rules: zip::Rules,
) {
    let mut crc_absent_names: Vec<String> = Vec::new();
    // Deflated records are inflated (in pieces, never held) to check their CRC-32: at most
    // 64 MiB + 8x the file in all, so a zip bomb costs no more time than a file that size.
    let mut inflate_left = socair_plugin_kit::model::memory_bound(src.size());
    let mut not_inflated = 0u64;
    for r in &archive.records {
        let rel = archive.relative(r);
        if options.header_only && rel.starts_with("data/") {
            a.crc_skipped += 1;
            continue;
        }
        if !r.stored() {
            if r.len > inflate_left {
                not_inflated += 1;
                a.crc_skipped += 1;
                continue;
            }
            inflate_left -= r.len;
        }
        if !rules.torch_writer_options {
            match zip::bytes::verify_crc(src, r) {
                Ok(()) => a.crc_verified += 1,
                Err(e) => a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string()),
            }
            continue;
        }
        match zip::bytes::crc_state(src, r) {
            Ok(zip::bytes::CrcState::Holds) => a.crc_verified += 1,
            // What `torch.serialization.set_crc32_options(False)` writes: torch reads the
            // bytes as they are, as socair does; readers that check CRCs refuse them.
            Ok(zip::bytes::CrcState::Absent { .. }) => {
                a.crc_absent += 1;
                if crc_absent_names.is_empty() {
                    crc_absent_names.push(format!("{:?}", r.name));
                }
            }
            Ok(zip::bytes::CrcState::Wrong { recorded, actual }) => a.add(
                Severity::Fail,
                format!("zip record {:?}", r.name),
                format!("CRC-32 does not hold: recorded {recorded:#010x}, data has {actual:#010x} (torch reads it unchecked, other readers refuse it: the bytes changed after they were written)"),
            ),
            Err(e) => a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string()),
        }
    }
    if a.crc_absent > 0 {
        let more = a.crc_absent - crc_absent_names.len();
        a.add(
            Severity::Lead,
            format!(
                "zip records {}{}",
                crc_absent_names.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
            format!(
                "{} record(s) without a CRC-32 (recorded as 0: torch.save under torch.serialization.set_crc32_options(False)): torch.load reads them unchecked, as socair does; Python's zipfile and other checking readers refuse them, and nothing ties their bytes to what was written",
                a.crc_absent
            ),
        );
    }
    if not_inflated > 0 {
        a.add(
            Severity::Lead,
            "zip records",
            format!("{not_inflated} deflated record(s) declare more bytes than socair inflates for a file of this size (64 MiB + 8x the file, in all): not inflated, so their CRC-32 is not checked"),
        );
    }
}

/// The `byteorder` record, as torch accepts it: absent, `little` or `big`.
fn read_byteorder(a: &mut Analysis, src: &(impl ReadAt + ?Sized), archive: &zip::Archive) {
    match lookup(a, archive, "byteorder") {
        None => a.byteorder_record = None,
        Some(r) if r.len <= 16 => match read_record(src, r, 16).as_deref() {
            Ok(b"little") => a.byteorder_record = Some(Endian::Little),
            Ok(b"big") => a.byteorder_record = Some(Endian::Big),
            Ok(other) => a.add(
                Severity::Fail,
                format!("zip record {:?}", r.name),
                format!(
                    "byteorder is {:?}; torch accepts only \"little\" or \"big\"",
                    String::from_utf8_lossy(other)
                ),
            ),
            Err(e) => a.add(Severity::Fail, format!("zip record {:?}", r.name), e),
        },
        Some(r) => a.add(
            Severity::Fail,
            format!("zip record {:?}", r.name),
            format!("byteorder record of {} bytes", r.len),
        ),
    }
}

/// The bytes of `data.pkl` (inflated when deflated), or `None` with the findings that say why
/// it is not modeled.
fn read_data_pkl(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
) -> Option<Vec<u8>> {
    let Some(pkl) = lookup(a, archive, "data.pkl") else {
        a.add(
            Severity::Fail,
            format!("zip archive {:?}", archive.prefix),
            format!(
                "no {}/data.pkl: not a torch.save checkpoint",
                archive.prefix
            ),
        );
        a.unread
            .push((None, "no data.pkl: not a torch.save checkpoint".into()));
        return None;
    };
    if pkl.len > MAX_PICKLE_LEN {
        a.add(
            Severity::Lead,
            format!("zip record {:?}", pkl.name),
            format!(
                "data.pkl is {} bytes, over the {MAX_PICKLE_LEN}-byte limit",
                pkl.len
            ),
        );
        a.unread
            .push((None, "data.pkl is too large to model".into()));
        return None;
    }
    // A deflated data.pkl is inflated into memory: at most 8 MiB more than the file, so the
    // typed model's budget still holds (64 MiB + 8x the input).
    let limit = if pkl.stored() {
        MAX_PICKLE_LEN
    } else {
        src.size().saturating_add(8 << 20).min(MAX_PICKLE_LEN)
    };
    if pkl.len > limit {
        a.add(
            Severity::Lead,
            format!("zip record {:?}", pkl.name),
            format!(
                "data.pkl is deflated to {} bytes in a {}-byte file, more than the {limit} bytes socair inflates: not modeled",
                pkl.compressed,
                src.size()
            ),
        );
        a.unread
            .push((None, "data.pkl inflates past what socair models".into()));
        return None;
    }
    match read_record(src, pkl, limit) {
        Ok(b) => Some(b),
        Err(e) => {
            a.add(
                Severity::Fail,
                format!("zip record {:?}", pkl.name),
                e.clone(),
            );
            a.unread.push((None, e));
            None
        }
    }
}

/// Runs `data.pkl` through the grammar and records what it found.
fn run_data_pkl(
    a: &mut Analysis,
    bytes: &[u8],
    input_len: u64,
    options: &AnalyzeOptions,
    torchscript_globals: &[String],
) -> pickle::Unpickled {
    let outcome = pickle::run(
        bytes,
        &pickle::Options {
            reviewed: options
                .reviewed
                .iter()
                .chain(torchscript_globals)
                .cloned()
                .collect(),
            legacy: false,
            input_len,
            grammar: options.grammar,
            ..Default::default()
        },
    );
    a.protocol = outcome.protocol;
    a.storage_count = outcome.storages.len();
    // The globals TorchScript's unpickler resolves itself are not the operator's review.
    for used in &outcome.reviewed_used {
        if !torchscript_globals.contains(used) && !a.reviewed_used.contains(used) {
            a.reviewed_used.push(used.clone());
        }
    }
    let torchscript = a.torchscript_code.is_some();
    for f in outcome
        .findings
        .iter()
        .filter(|f| !(torchscript && crate::torchscript::archive::unpickler_resolves(f)))
    {
        a.add(
            f.severity,
            format!("data.pkl byte {} ({})", f.offset, f.opcode),
            f.reason.clone(),
        );
    }
    outcome
}

/// How the pickle's storages matched the archive's records.
struct StorageRecords<'o> {
    /// Per record: whether some storage names it.
    referenced: Vec<bool>,
    /// Storage key → index of its record, for storages whose record has exactly their size.
    record_of: HashMap<&'o str, usize>,
    /// The record of each storage found, in the pickle's order.
    storage_records: Vec<usize>,
}

/// Every storage must match a record of exactly its size.
fn match_storages<'o>(
    a: &mut Analysis,
    archive: &zip::Archive,
    outcome: &'o pickle::Unpickled,
) -> StorageRecords<'o> {
    let mut referenced = vec![false; archive.records.len()];
    // Storage key → index of its record.
    let mut record_of: HashMap<&str, usize> = HashMap::with_capacity(outcome.storages.len());
    let mut storage_records = Vec::with_capacity(outcome.storages.len());
    for s in &outcome.storages {
        let rel = format!("data/{}", s.key);
        let found = lookup_index(a, archive, &rel);
        if let Some(i) = found {
            referenced[i] = true;
            storage_records.push(i);
        }
        match found.map(|i| (i, &archive.records[i])) {
            None => a.add_kind("a storage without its record", Severity::Fail, || {
                (
                    format!("storage {:?}", s.key),
                    format!(
                        "the pickle names storage {:?} but there is no record {}/{rel}",
                        s.key, archive.prefix
                    ),
                )
            }),
            Some((i, r)) => {
                let expected = s.byte_len();
                if expected != Some(r.len) {
                    a.add_kind("a storage whose record has another size", Severity::Fail, || (
                        format!("zip record {:?}", r.name),
                        format!(
                            "the pickle declares storage {:?} as {} bytes ({} × {}) but its record holds {} (CVE-2026-24747: torch < 2.10 trusted the declared size)",
                            s.key,
                            expected.map_or("more than 2^64".into(), |e| e.to_string()),
                            s.numel,
                            match s.class {
                                pickle::StorageClass::Typed(d) => d.torch,
                                pickle::StorageClass::Untyped => "byte",
                            },
                            r.len
                        ),
                    ));
                } else {
                    record_of.insert(&s.key, i);
                }
            }
        }
    }
    StorageRecords {
        referenced,
        record_of,
        storage_records,
    }
}

/// Every record must be expected: a record no storage names and torch.save does not write is
/// a LEAD.
fn judge_unread_records(a: &mut Analysis, archive: &zip::Archive, referenced: &[bool]) {
    for (r, &referenced) in archive.records.iter().zip(referenced) {
        if referenced {
            continue;
        }
        let rel = zip::fold(archive.relative(r));
        let rel = rel.as_str();
        if rel == "data.pkl" || KNOWN_RECORDS.contains(&rel) {
            continue;
        }
        let torchscript_record = if a.torchscript_code.is_some() {
            crate::torchscript::archive::judged_record(rel)
        } else {
            rel.starts_with("code/") || rel.ends_with(".pkl") || rel.starts_with("constants")
        };
        if a.torchscript && torchscript_record {
            continue;
        }
        let what = if rel.starts_with("data/") {
            "a storage record no tensor references"
        } else if rel.ends_with(".pkl") || rel.ends_with("_pkl") {
            "an extra pickle torch.load never reads"
        } else {
            "a record torch.save does not write"
        };
        a.add_kind("a record torch.load does not read", Severity::Lead, || {
            (
                format!("zip record {:?}", r.name),
                format!("{what}; something may be hidden there"),
            )
        });
    }
}

/// Where the storages lie and the tensors over them: their locations, torch's calculated
/// offsets (format version 1 and later), each tensor's bytes in its stored record, and a
/// big-endian checkpoint's unswapped bytes.
fn locate_tensors(
    a: &mut Analysis,
    src: &(impl ReadAt + ?Sized),
    archive: &zip::Archive,
    outcome: &pickle::Unpickled,
    storages: &StorageRecords<'_>,
    alignment: i128,
) {
    judge_locations(a, &outcome.storages);
    let format_version = lookup(a, archive, ".format_version")
        .filter(|r| r.len <= 64)
        .and_then(|r| read_record(src, r, 64).ok());
    // `_load`: `can_calculate_storage_offsets = version >= b"1"` (a bytes comparison).
    if format_version.is_some_and(|v| v.as_slice() >= b"1".as_slice()) {
        calculated_offsets(
            a,
            archive,
            &outcome.storages,
            &storages.storage_records,
            alignment,
        );
    }
    model_tensors_with(a, outcome, |storage| {
        let i = storages
            .record_of
            .get(storage.key.as_str())
            .ok_or_else(|| format!("its storage {:?} does not match a record", storage.key))?;
        let r = &archive.records[*i];
        if !r.stored() {
            return Err(format!(
                "its storage record {:?} is deflated: torch.load inflates it (torch.load(mmap=True) maps the compressed bytes), and socair fingerprints tensors only where their bytes lie in the file",
                r.name
            ));
        }
        Ok((r.data_offset, r.name.clone(), 0))
    });
    if a.byteorder_record == Some(Endian::Big) {
        unswapped_big_endian(a);
    }
}
