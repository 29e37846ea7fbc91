//! A torch zip checkpoint as a whole: the zip layer, the records torch.save writes, the
//! pickle run through `socair-wo/1`, and every storage matched to its record; then the
//! state-dict model (`ReadStateDict`) that `socair tensors` and conversion read.

use crate::pickle::{self, Object, Severity, TensorModel, Value};
use crate::zip::{self, ReadAt};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The largest `data.pkl` read into memory. State dicts take about 100 bytes of pickle per
/// tensor, so this leaves room for millions of tensors and large training checkpoints.
pub const MAX_PICKLE_LEN: u64 = 1 << 30;

/// Deepest nesting of mappings walked for tensor names.
pub const MAX_NAME_DEPTH: usize = 64;

/// Records torch.save writes besides `data.pkl` and the storages.
const KNOWN_RECORDS: &[&str] = &[
    "byteorder",
    "version",
    ".data/version",
    ".format_version",
    ".storage_alignment",
    ".data/serialization_id",
];

/// A tensor with its state-dict name.
pub type NamedTensor = (String, Rc<TensorModel>);

/// A finding with its place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// Where (`zip record …`, `data.pkl byte 123 (GLOBAL)`).
    pub place: String,
    /// What.
    pub reason: String,
}

/// Byte order of the storages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (also what an absent `byteorder` record means).
    Little,
    /// Big-endian.
    Big,
}

/// A named tensor of the state-dict model, located in the file.
#[derive(Debug, Clone)]
pub struct LocatedTensor {
    /// Its name (nested keys joined with `.`).
    pub name: String,
    /// The grammar's model of it.
    pub model: Rc<TensorModel>,
    /// Where its storage's first element lies in the file.
    pub record_offset: u64,
    /// The storage record's name (for a legacy file, `storages[<key>]`).
    pub record: String,
    /// Where its storage starts within the record: 0, except for a legacy storage view.
    pub record_base: u64,
    /// It lies outside the state-dict model (fingerprinted, not converted).
    pub outside_model: bool,
}

/// Everything read from a checkpoint.
#[derive(Debug, Default)]
pub struct Analysis {
    /// The archive prefix, if the zip layer was sound.
    pub prefix: Option<String>,
    /// Every finding of the zip layer, the records and the pickle.
    pub findings: Vec<Finding>,
    /// The byte order (`None` when the `byteorder` record is absent: read as little-endian).
    pub byteorder_record: Option<Endian>,
    /// The pickle protocol.
    pub protocol: Option<u8>,
    /// Storages named by the pickle.
    pub storage_count: usize,
    /// Records whose CRC-32 was verified.
    pub crc_verified: usize,
    /// Records whose CRC-32 was not read (header-only).
    pub crc_skipped: usize,
    /// Tensors of the state-dict model that can be read in place.
    pub tensors: Vec<LocatedTensor>,
    /// Tensors (by name) or the whole file (`None`) that cannot be, with why.
    pub unread: Vec<(Option<String>, String)>,
    /// Tensors outside the state-dict model, with why.
    pub outside: Vec<(String, String)>,
    /// What the checkpoint holds besides its state dict's tensors.
    pub not_carried: Vec<String>,
    /// Reviewed globals the pickle used.
    pub reviewed_used: Vec<String>,
    /// Whether the archive looks like a TorchScript archive.
    pub torchscript: bool,
    /// Which pickle the findings' offsets count in (`data.pkl`, or the legacy main pickle).
    pub pickle_name: String,
    /// Whether the file is in torch's legacy (non-zip) format.
    pub legacy: bool,
    /// The legacy format's `sys_info`, as read.
    pub sys_info: Option<String>,
    /// Where the legacy main pickle starts in the file.
    pub main_pickle_offset: Option<u64>,
    /// The `socair-wo` version run.
    pub grammar: pickle::Grammar,
    /// Findings added by kind: how many of each, for [`Analysis::finish`].
    pub(crate) kinds: Vec<(&'static str, Severity, u64)>,
}

/// How many findings of one kind a report lists; the rest are counted in one more finding.
pub const FINDINGS_PER_KIND: u64 = 32;

impl Analysis {
    /// The worst finding.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The storages' byte order as read.
    pub fn endian(&self) -> Endian {
        self.byteorder_record.unwrap_or(Endian::Little)
    }

    pub(crate) fn add(
        &mut self,
        severity: Severity,
        place: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.findings.push(Finding {
            severity,
            place: place.into(),
            reason: reason.into(),
        });
    }

    /// A finding of a kind that a file can repeat without bound (one per record, storage or
    /// tensor): the first [`FINDINGS_PER_KIND`] are kept, the rest counted. The place and
    /// reason are built only for the kept ones.
    pub(crate) fn add_kind(
        &mut self,
        kind: &'static str,
        severity: Severity,
        finding: impl FnOnce() -> (String, String),
    ) {
        let n = match self
            .kinds
            .iter_mut()
            .find(|(k, s, _)| *k == kind && *s == severity)
        {
            Some(entry) => {
                entry.2 += 1;
                entry.2
            }
            None => {
                self.kinds.push((kind, severity, 1));
                1
            }
        };
        if n <= FINDINGS_PER_KIND {
            let (place, reason) = finding();
            self.add(severity, place, reason);
        }
    }

    /// Closes the counts of [`Analysis::add_kind`]: one finding per kind that had more than
    /// [`FINDINGS_PER_KIND`], with the exact number left out.
    pub(crate) fn finish(&mut self) {
        for (kind, severity, n) in std::mem::take(&mut self.kinds) {
            if n > FINDINGS_PER_KIND {
                self.add(
                    severity,
                    "(the rest of the file)",
                    format!(
                        "… and {} more of the same kind: {kind} (the first {FINDINGS_PER_KIND} are listed)",
                        n - FINDINGS_PER_KIND
                    ),
                );
            }
        }
    }
}

/// Options for [`analyze`].
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    /// Skip the CRC-32 of storage records (their bytes are not read).
    pub header_only: bool,
    /// Globals the operator reviewed.
    pub reviewed: Vec<String>,
    /// The `socair-wo` version to run.
    pub grammar: pickle::Grammar,
}

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

fn read_record(src: &(impl ReadAt + ?Sized), r: &zip::Record) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; usize::try_from(r.len).map_err(|_| "record too large")?];
    src.read_exact_at(r.data_offset, &mut buf)?;
    Ok(buf)
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
    let mut first = [0u8; 4];
    let is_zip =
        src.size() >= 4 && src.read_exact_at(0, &mut first).is_ok() && first == zip::LOCAL_MAGIC;
    let not_torch = |a: &mut Analysis| {
        let reason = "a zip archive without any record torch's reader looks for (<prefix>/version, data.pkl, constants.pkl, data/<key>, …): torch.load refuses it, so it is not a torch checkpoint whatever its name, and nothing in it was checked";
        a.add(Severity::Lead, "zip archive", reason);
        a.unread.push((None, reason.into()));
    };
    let archive = match zip::read_archive(src) {
        Ok(archive) => {
            if !archive
                .records
                .iter()
                .any(|r| torch_record_name(r.name.as_bytes()))
            {
                not_torch(&mut a);
                return a;
            }
            archive
        }
        Err(_) if is_zip && !zip_is_torch_like(src) => {
            not_torch(&mut a);
            return a;
        }
        Err(e) => {
            // torch.jit.save compresses its code records, so the zip layer refuses a
            // TorchScript archive before its records are looked at: say what it is anyway.
            let names = zip::central_names(src).unwrap_or_default();
            if names.iter().any(|n| is_torchscript_record(n)) {
                a.torchscript = true;
                a.add(Severity::Fail, "zip central directory", TORCHSCRIPT_FINDING);
            }
            a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string());
            a.unread
                .push((None, format!("the zip structure is refused: {e}")));
            return a;
        }
    };
    a.prefix = Some(archive.prefix.clone());
    a.torchscript = archive
        .records
        .iter()
        .any(|r| is_torchscript_record(&r.name));
    if a.torchscript {
        a.add(
            Severity::Fail,
            format!("zip records {}/code/, constants.pkl", archive.prefix),
            TORCHSCRIPT_FINDING,
        );
    }

    // Integrity: every record's CRC-32 (storages only when their bytes are read).
    for r in &archive.records {
        let rel = archive.relative(r);
        if options.header_only && rel.starts_with("data/") {
            a.crc_skipped += 1;
            continue;
        }
        match zip::verify_crc(src, r) {
            Ok(()) => a.crc_verified += 1,
            Err(e) => a.add(Severity::Fail, format!("zip {}", e.place()), e.to_string()),
        }
    }

    check_version(&mut a, src, &archive);
    match lookup(&mut a, &archive, "byteorder") {
        None => a.byteorder_record = None,
        Some(r) if r.len <= 16 => match read_record(src, r).as_deref() {
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

    let alignment = storage_alignment(&mut a, src, &archive);
    let Some(pkl) = lookup(&mut a, &archive, "data.pkl") else {
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
        return a;
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
        return a;
    }
    let bytes = match read_record(src, pkl) {
        Ok(b) => b,
        Err(e) => {
            a.add(
                Severity::Fail,
                format!("zip record {:?}", pkl.name),
                e.clone(),
            );
            a.unread.push((None, e));
            return a;
        }
    };
    let outcome = pickle::run(
        &bytes,
        &pickle::Options {
            reviewed: options.reviewed.clone(),
            legacy: false,
            input_len: src.size(),
            grammar: options.grammar,
        },
    );
    a.protocol = outcome.protocol;
    a.storage_count = outcome.storages.len();
    a.reviewed_used = outcome.reviewed_used.clone();
    for f in &outcome.findings {
        a.add(
            f.severity,
            format!("data.pkl byte {} ({})", f.offset, f.opcode),
            f.reason.clone(),
        );
    }

    // Every storage must match a record of exactly its size; every record must be expected.
    let mut referenced = vec![false; archive.records.len()];
    // Storage key → index of its record.
    let mut record_of: HashMap<&str, usize> = HashMap::with_capacity(outcome.storages.len());
    let mut storage_records = Vec::with_capacity(outcome.storages.len());
    for s in &outcome.storages {
        let rel = format!("data/{}", s.key);
        let found = lookup_index(&mut a, &archive, &rel);
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
    for (r, &referenced) in archive.records.iter().zip(&referenced) {
        if referenced {
            continue;
        }
        let rel = zip::fold(archive.relative(r));
        let rel = rel.as_str();
        if rel == "data.pkl" || KNOWN_RECORDS.contains(&rel) {
            continue;
        }
        if a.torchscript
            && (rel.starts_with("code/") || rel.ends_with(".pkl") || rel.starts_with("constants"))
        {
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

    judge_locations(&mut a, &outcome.storages);
    let format_version = lookup(&mut a, &archive, ".format_version")
        .filter(|r| r.len <= 64)
        .and_then(|r| read_record(src, r).ok());
    // `_load`: `can_calculate_storage_offsets = version >= b"1"` (a bytes comparison).
    if format_version.is_some_and(|v| v.as_slice() >= b"1".as_slice()) {
        calculated_offsets(
            &mut a,
            &archive,
            &outcome.storages,
            &storage_records,
            alignment,
        );
    }
    model_tensors(&mut a, &outcome, |storage| {
        record_of.get(storage.key.as_str()).map(|&i| {
            let r = &archive.records[i];
            (r.data_offset, r.name.clone(), 0)
        })
    });
    if a.byteorder_record == Some(Endian::Big) {
        unswapped_big_endian(&mut a);
    }
    a
}

/// `archive.get(rel)`, and a FAIL when the record torch finds differs from `rel` in case: torch
/// looks records up ignoring ASCII case (miniz's sorted lookup), other readers do not, and
/// torch.save writes these names in lower case.
fn lookup<'r>(a: &mut Analysis, archive: &'r zip::Archive, rel: &str) -> Option<&'r zip::Record> {
    lookup_index(a, archive, rel).map(|i| &archive.records[i])
}

/// [`lookup`], as an index into the archive's records.
fn lookup_index(a: &mut Analysis, archive: &zip::Archive, rel: &str) -> Option<usize> {
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
fn check_version(a: &mut Analysis, src: &(impl ReadAt + ?Sized), archive: &zip::Archive) {
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
    let mut head = vec![0u8; record.len.min(64) as usize];
    if let Err(e) = src.read_exact_at(record.data_offset, &mut head) {
        a.add(Severity::Fail, format!("zip record {:?}", record.name), e);
        return;
    }
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
fn storage_alignment(
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
    let bytes = match read_record(src, r) {
        Ok(b) => b,
        Err(e) => {
            a.add(Severity::Fail, place, e);
            return 64;
        }
    };
    match crate::tarfile::python_int_of_bytes(&bytes) {
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

/// torch.load(mmap=True) with `torch.utils.serialization.config.load.calculate_storage_offsets`
/// (and FakeTensorMode loads) does not read storage offsets from the archive when
/// `.format_version` is at least `b"1"` (the caller checks): `_load._get_offset` computes them from the first
/// storage's, in the order the pickle loads storages, assuming torch's writer laid them out
/// (`getRecordOffsetNoRead`: header, name, `FB` padding to `.storage_alignment`, data, data
/// descriptor). Where the records lie elsewhere, that load reads other bytes than the record:
/// a LEAD naming the storage.
fn calculated_offsets(
    a: &mut Analysis,
    archive: &zip::Archive,
    storages: &[std::rc::Rc<pickle::StorageRef>],
    records: &[usize],
    alignment: i128,
) {
    // Every storage has its record (a missing one already FAILs).
    if records.len() != storages.len() {
        return;
    }
    let alignment = alignment as u64;
    const U32MAX: u64 = 0xffff_ffff;
    let mut current: Option<u64> = None;
    for (s, &i) in storages.iter().zip(records) {
        let r = &archive.records[i];
        let numel = r.len;
        let (offset, local) = match current {
            None => {
                if s.key != "0" {
                    a.add(
                        Severity::Lead,
                        format!("storage {:?}", s.key),
                        "the first storage the pickle loads is not \"0\": torch's calculated storage offsets assert it is",
                    );
                    return;
                }
                (r.data_offset, r.header_offset)
            }
            Some(cursor) => {
                let full = r.name.len() as u64;
                let mut start = cursor + 30 + full + 4;
                if numel >= U32MAX || cursor >= U32MAX {
                    start += 4;
                    if numel >= U32MAX {
                        start += 16;
                    }
                    if cursor >= U32MAX {
                        start += 8;
                    }
                }
                let m = start % alignment;
                (if m == 0 { start } else { start + alignment - m }, cursor)
            }
        };
        if offset != r.data_offset {
            a.add_kind("a storage torch's offset calculation misplaces", Severity::Lead, || {
                (
                    format!("zip record {:?}", r.name),
                    format!(
                        "torch.load(mmap=True) with calculate_storage_offsets computes this storage's data at byte {offset}, but its record's data starts at byte {}: that load would read other bytes",
                        r.data_offset
                    ),
                )
            });
        }
        let mut next = offset + numel;
        if numel > 0 {
            next += if local >= U32MAX || numel >= U32MAX {
                24
            } else {
                16
            };
        }
        current = Some(next);
    }
}

/// Storage locations as `torch.load(map_location=None)` restores them
/// (`default_restore_location` over the registered deserializers, torch/serialization.py):
/// `cpu` as it is; `cuda`, `hpu`, `xpu`, `mtia` and the private backend (`privateuseone`),
/// alone or with `:<index>`, moved to that device with the same bytes (loadable where the
/// device exists); anything starting with `mps` moved to MPS; `meta` replaced by a storage
/// without values (see [`model_tensors`]); anything else makes torch.load raise
/// `RuntimeError` unless the caller passes a `map_location` (then the bytes load): a LEAD.
pub fn judge_locations(a: &mut Analysis, storages: &[std::rc::Rc<pickle::StorageRef>]) {
    for s in storages {
        let loc = s.location.as_str();
        let device = |backend: &str| {
            loc.strip_prefix(backend).is_some_and(|rest| {
                rest.is_empty()
                    || rest.strip_prefix(':').is_some_and(|i| {
                        i == "0"
                            || (!i.is_empty()
                                && !i.starts_with('0')
                                && i.bytes().all(|b| b.is_ascii_digit()))
                    })
            })
        };
        let known = loc == "cpu"
            || loc.starts_with("mps")
            || ["cuda", "hpu", "xpu", "mtia", "privateuseone"]
                .iter()
                .any(|b| device(b));
        if loc == "meta" {
            a.add_kind("a storage torch restores on the meta device", Severity::Lead, || {
                (
                    format!("storage {:?}", s.key),
                    "location 'meta': torch.load (map_location=None) gives its tensors no values (it reads the record and replaces the storage by an empty meta one), while with a map_location it loads the bytes; torch.save never writes a meta storage".into(),
                )
            });
        } else if !known {
            a.add_kind("a storage location torch cannot restore", Severity::Lead, || {
                (
                    format!("storage {:?}", s.key),
                    format!("location {loc:?}: no deserializer torch registers restores it, so torch.load raises RuntimeError unless the caller passes a map_location"),
                )
            });
        }
    }
}

/// A big-endian checkpoint's tensors over untyped storages (`_rebuild_tensor_v3`): `_load`
/// byte-swaps a storage by the dtype its persistent id gives, which for an `UntypedStorage` is
/// `torch.uint8` (a no-op), so torch on a little-endian machine loads the big-endian bytes as
/// little-endian values. Such a tensor of elements wider than a byte is neither fingerprinted nor
/// converted (socair would write the values the writer meant, not the ones torch loads).
fn unswapped_big_endian(a: &mut Analysis) {
    let tensors = std::mem::take(&mut a.tensors);
    let mut count = 0u64;
    for t in tensors {
        if matches!(t.model.storage.class, pickle::StorageClass::Untyped) && t.model.dtype.size > 1
        {
            count += 1;
            a.unread.push((
                Some(t.name.clone()),
                format!(
                    "a {} tensor over an untyped storage in a big-endian checkpoint: torch does not byte-swap untyped storages, so torch.load reads other values than the writer meant",
                    t.model.dtype.torch
                ),
            ));
        } else {
            a.tensors.push(t);
        }
    }
    if count > 0 {
        a.add(
            Severity::Lead,
            "byteorder big",
            format!(
                "{count} tensor(s) over untyped storages (_rebuild_tensor_v3) with elements wider than a byte: torch.load byte-swaps a storage by its persistent id's dtype, uint8 for an UntypedStorage, so it loads these big-endian bytes unswapped on a little-endian machine; they are neither fingerprinted nor converted"
            ),
        );
    }
}

/// After the pickle: unless something FAILs, walks the state-dict model and locates each of its
/// tensors with `locate` (storage → where its first element lies in the file, the record
/// holding it, and where it starts within that record).
pub fn model_tensors(
    a: &mut Analysis,
    outcome: &pickle::Outcome,
    locate: impl Fn(&pickle::StorageRef) -> Option<(u64, String, u64)>,
) {
    if a.worst() == Some(Severity::Fail) {
        a.unread.push((
            None,
            "the Pickle opcode scan FAILs: its tensors are not read".into(),
        ));
        return;
    }
    let Some(result) = outcome.result.clone() else {
        a.unread.push((
            None,
            format!(
                "the pickle leaves {} before STOP: its state dict is not modeled",
                a.grammar.name()
            ),
        ));
        return;
    };
    let sd = read_state_dict(outcome, &result);
    a.unread
        .extend(sd.unread.into_iter().map(|(n, r)| (Some(n), r)));
    a.outside = sd.outside;
    // Lines for the tensors outside the model come first in what a conversion lists as not
    // carried, as they did when those tensors were only listed.
    a.not_carried = sd
        .outside_named
        .iter()
        .filter_map(|(_, _, line)| line.clone())
        .chain(sd.not_carried)
        .collect();
    let all = sd
        .named
        .into_iter()
        .map(|(n, m)| (n, m, false))
        .chain(sd.outside_named.into_iter().map(|(n, m, _)| (n, m, true)));
    for (name, model, outside_model) in all {
        // A tensor outside the model that cannot be read is unread and not carried; one of
        // the model is unread and refuses a conversion.
        let mut unread = |name: String, why: String| {
            if outside_model {
                a.outside.push((name, why));
            } else {
                a.unread.push((Some(name), why));
            }
        };
        if model.storage.location == "meta" {
            unread(
                name,
                "its storage's location is 'meta': torch.load (map_location=None) loads it without values, so its record's bytes are not what torch loads".into(),
            );
            continue;
        }
        match locate(&model.storage) {
            Some((record_offset, record, record_base)) => a.tensors.push(LocatedTensor {
                name,
                model,
                record_offset,
                record,
                record_base,
                outside_model,
            }),
            None => unread(
                name,
                format!(
                    "its storage {:?} does not match a record",
                    model.storage.key
                ),
            ),
        }
    }
}

/// The state-dict model of a checkpoint.
#[derive(Debug, Default)]
pub struct StateDict {
    /// Its tensors, by flattened name.
    pub named: Vec<NamedTensor>,
    /// Tensors that cannot be named (colliding names, too deep): refused by conversion.
    pub unread: Vec<(String, String)>,
    /// Tensors outside the model that cannot be named (under a key that is neither a string
    /// nor an integer): unread, and named as not carried by conversion.
    pub outside: Vec<(String, String)>,
    /// Tensors outside the model, named by their whole path (integer keys and list or tuple
    /// positions as decimal numbers): fingerprinted, not converted. With each, the line a
    /// conversion lists it under in `not_carried`, when it is listed one by one.
    pub outside_named: Vec<(String, Rc<TensorModel>, Option<String>)>,
    /// Everything else the checkpoint holds, as `path (what)`.
    pub not_carried: Vec<String>,
}

/// `ReadStateDict`: the tensors a checkpoint holds as a state dict, and every other tensor it
/// holds. The model's root is the top-level mapping, or its `state_dict` entry when that is a
/// mapping (as safetensors' convert.py and PyTorch Lightning read training checkpoints);
/// nested string-keyed mappings are flattened with `.`. Tensors in lists or tuples, under
/// integer keys, or beside `state_dict` are outside the model: named by their whole path
/// (positions and integer keys as decimal numbers) and fingerprinted, never converted. A file
/// that holds one bare tensor names it [`BARE_TENSOR`]. Tensors whose names collide are
/// unread; every other value is named as not carried.
pub fn read_state_dict(outcome: &pickle::Outcome, result: &Value) -> StateDict {
    let dict_items = |v: &Value| match v {
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::Dict(d) => Some(&d.items),
            Object::List(_) => None,
        },
        _ => None,
    };
    let mut walker = Walker {
        outcome,
        beside: Vec::new(),
        on_path: HashSet::new(),
        // Every container once and every tensor and container item four times over: a large
        // state dict is walked whole, a pickle that shares containers to multiply the walk is
        // not.
        budget: 4
            * (outcome.objects.len()
                + outcome
                    .objects
                    .iter()
                    .map(|o| match o {
                        Object::Dict(d) => d.items.len(),
                        Object::List(items) => items.len(),
                    })
                    .sum::<usize>()
                + outcome.tensors.len())
            + 1024,
        exhausted: false,
        sd: StateDict::default(),
    };
    let mut root = result;
    if let Some(items) = dict_items(result) {
        if let Some((_, v)) = items.iter().find(|(k, v)| {
            matches!(k, Value::Str(s) if &**s == "state_dict") && dict_items(v).is_some()
        }) {
            root = v;
            for (k, v) in items {
                match k {
                    Value::Str(k) if &**k == "state_dict" => {}
                    Value::Str(k) => {
                        walker
                            .sd
                            .not_carried
                            .push(format!("{k} ({}, beside state_dict)", kind(outcome, v)));
                        walker.beside.push((k.to_string(), v.clone()));
                    }
                    _ => walker.sd.not_carried.push(format!(
                        "a value under a non-string key ({})",
                        kind(outcome, v)
                    )),
                }
            }
        }
    }
    if matches!(root, Value::Tensor(_)) {
        // torch.save of one tensor: a name, never "".
        walker.walk(root, BARE_TENSOR.to_owned(), 0, None);
    } else {
        walker.walk(root, String::new(), 0, None);
    }
    // What lies beside the state dict: its tensors are fingerprinted under their whole path,
    // and a conversion names the entry as a whole (above), not each tensor in it.
    for (k, v) in std::mem::take(&mut walker.beside) {
        walker.walk(&v, k, 1, Some(BESIDE));
    }
    let mut sd = walker.sd;

    // Names that collide ("a.b" as a key and as a path) are ambiguous: none of them is read.
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for n in sd
        .named
        .iter()
        .map(|(n, _)| n)
        .chain(sd.outside_named.iter().map(|(n, _, _)| n))
    {
        *counts.entry(n.as_str()).or_default() += 1;
    }
    let colliding: HashSet<String> = counts
        .into_iter()
        .filter(|(_, c)| *c > 1)
        .map(|(n, _)| n.to_owned())
        .collect();
    let mut unread = std::mem::take(&mut sd.unread);
    let collides = |n: &String, unread: &mut Vec<(String, String)>| {
        if colliding.contains(n) {
            unread.push((
                n.clone(),
                "two tensors get this name when nested keys are joined with '.'".into(),
            ));
            false
        } else {
            true
        }
    };
    sd.named.retain(|(n, _)| collides(n, &mut unread));
    sd.outside_named
        .retain(|(n, _, _)| collides(n, &mut unread));
    sd.unread = unread;
    if sd.named.iter().any(|(_, t)| t.requires_grad || t.parameter) {
        sd.not_carried
            .push("requires_grad and nn.Parameter types (safetensors holds plain tensors)".into());
    }
    sd
}

/// What a value is, for not_carried entries.
fn kind(outcome: &pickle::Outcome, v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(_) => "bool".into(),
        Value::Int(_) | Value::BigInt => "int".into(),
        Value::Float(_) => "float".into(),
        Value::Str(_) => "str".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::Tuple(..) => "tuple".into(),
        Value::Obj(id) => match &outcome.objects[*id] {
            Object::List(_) => "list".into(),
            Object::Dict(d) if d.ordered => "OrderedDict".into(),
            Object::Dict(_) => "dict".into(),
        },
        Value::Global(g) => format!("the global {}.{}", g.module, g.name),
        Value::Storage(_) => "a bare storage".into(),
        Value::Tensor(_) => "tensor".into(),
        Value::Opaque(what) => format!("an object built by {what}"),
    }
}

/// Walks the result for tensors. A container reached twice is walked twice (Python would
/// see its tensors under both paths), a cycle is not followed, and the total work is bounded
/// by a budget proportional to the pickle's objects.
struct Walker<'a> {
    outcome: &'a pickle::Outcome,
    /// Entries beside `state_dict`, walked after the model.
    beside: Vec<(String, Value)>,
    on_path: HashSet<usize>,
    budget: usize,
    /// Whether the budget ran out (said once).
    exhausted: bool,
    sd: StateDict,
}

impl Walker<'_> {
    /// `excluded` says why tensors found below are not part of the model.
    fn walk(&mut self, value: &Value, path: String, depth: usize, excluded: Option<&'static str>) {
        let join = |path: &str, key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        if self.budget == 0 {
            if !self.exhausted {
                self.exhausted = true;
                self.sd.unread.push((
                    path,
                    "the checkpoint's containers are too shared to walk: the walk stopped here, and what is below and after it is not read".into(),
                ));
            }
            return;
        }
        self.budget -= 1;
        let outcome = self.outcome;
        match value {
            Value::Tensor(t) => match excluded {
                // Beside the state dict: the entry is named as not carried as a whole.
                Some(BESIDE) => self.sd.outside_named.push((path, t.clone(), None)),
                Some(why) => {
                    let line = format!("{path} ({why})");
                    self.sd.outside_named.push((path, t.clone(), Some(line)));
                }
                None => self.sd.named.push((path, t.clone())),
            },
            Value::Tuple(..) | Value::Obj(_) if depth >= MAX_NAME_DEPTH => {
                self.sd.unread.push((
                    path,
                    format!("nested deeper than {MAX_NAME_DEPTH} levels; not walked"),
                ));
            }
            Value::Tuple(items, _) => {
                if excluded.is_none() {
                    self.sd.not_carried.push(format!("{path} (tuple)"));
                }
                for (i, v) in items.iter().enumerate() {
                    self.walk(v, join(&path, &i.to_string()), depth + 1, Some(IN_SEQUENCE));
                }
            }
            Value::Obj(id) => {
                if !self.on_path.insert(*id) {
                    return;
                }
                match &outcome.objects[*id] {
                    Object::List(items) => {
                        if excluded.is_none() {
                            self.sd.not_carried.push(format!("{path} (list)"));
                        }
                        for (i, v) in items.iter().enumerate() {
                            self.walk(v, join(&path, &i.to_string()), depth + 1, Some(IN_SEQUENCE));
                        }
                    }
                    Object::Dict(d) => {
                        if d.attrs.is_some() && excluded.is_none() {
                            self.sd.not_carried.push(format!(
                                "{} (the state dict's _metadata)",
                                join(&path, "_metadata")
                            ));
                        }
                        for (k, v) in &d.items {
                            match k {
                                Value::Str(k) => self.walk(v, join(&path, k), depth + 1, excluded),
                                // An optimizer's state is keyed by parameter index.
                                Value::Int(i) => {
                                    if excluded.is_none() {
                                        self.sd.not_carried.push(format!(
                                            "{} (under a non-string key)",
                                            join(&path, "<key>")
                                        ));
                                    }
                                    self.walk(
                                        v,
                                        join(&path, &i.to_string()),
                                        depth + 1,
                                        Some(excluded.unwrap_or(NON_STRING_KEY)),
                                    )
                                }
                                _ => {
                                    if excluded.is_none() {
                                        self.sd.not_carried.push(format!(
                                            "{} (under a non-string key)",
                                            join(&path, "<key>")
                                        ));
                                    }
                                    self.walk(
                                        v,
                                        join(&path, "<key>"),
                                        depth + 1,
                                        Some(NON_STRING_KEY),
                                    )
                                }
                            }
                        }
                    }
                }
                self.on_path.remove(id);
            }
            other if excluded.is_none() => {
                let name = if path.is_empty() {
                    "the checkpoint".to_owned()
                } else {
                    path
                };
                self.sd
                    .not_carried
                    .push(format!("{name} ({})", kind(outcome, other)));
            }
            _ => {}
        }
    }
}

const IN_SEQUENCE: &str = "inside a list or tuple: not part of the state-dict model";
const BESIDE: &str = "beside the state dict: not part of the state-dict model";

/// The name of the one tensor of a file that holds a bare tensor (`torch.save(t)`).
pub const BARE_TENSOR: &str = "tensor";
const NON_STRING_KEY: &str = "under a key that is not a string: not part of the state-dict model";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_std_stoull_does() {
        assert_eq!(stoull(b"3\n"), Some(3));
        assert_eq!(stoull(b" \t+10abc"), Some(10));
        assert_eq!(stoull(b"7\0junk"), Some(7));
        assert_eq!(stoull(b"-1"), Some(u64::MAX));
        assert_eq!(stoull(b"-0"), Some(0));
        assert_eq!(stoull(b"0x10"), Some(0));
        assert_eq!(stoull(b""), None);
        assert_eq!(stoull(b"\x0b\x0c"), None);
        assert_eq!(stoull(b"+"), None);
        assert_eq!(stoull(b"18446744073709551616"), None);
        assert_eq!(stoull(b"18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn torch_record_names_are_recognised_ignoring_case() {
        for name in [
            "a/data.pkl",
            "A/DATA.PKL",
            "x/version",
            "x/.data/version",
            "x/data/12",
            "x/constants/0",
            "x/code/__torch__/m.py",
            "x/.storage_alignment",
        ] {
            assert!(torch_record_name(name.as_bytes()), "{name}");
        }
        for name in [
            "data.pkl",
            "/data.pkl",
            "x/data/",
            "x/data/a1",
            "x/readme.txt",
            "x/code/main.py",
            "x/y/data.pkl",
        ] {
            assert!(!torch_record_name(name.as_bytes()), "{name}");
        }
    }
}
