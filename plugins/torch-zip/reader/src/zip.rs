//! A strict reader for the zip archives `torch.save` writes.
//!
//! torch writes with miniz: stored (uncompressed) records, each local header followed by its
//! data and a data descriptor, records padded with a `FB` extra field so data starts on a
//! 64-byte boundary, a central directory, a zip64 end record with its locator, and the classic
//! end record, with nothing before, between or after. torch itself reads with CRC checks
//! disabled and other zip readers are lenient in other ways; a file that two readers could read
//! differently is how scanners have been evaded. So anything outside that shape is refused
//! with the place and the reason: a CRC-32 that does not hold (or was never computed), a
//! compressed or encrypted record, unknown flag bits or extra fields, duplicate names, a local
//! header that disagrees with the central directory, bytes before the first record or between
//! records, names that escape the archive or are not under one prefix, zip64 records that
//! disagree with the classic ones, and truncation. Under `socair-wo/3` ([`Rules`]) the archives
//! torch's own writer options and re-zipping produce are read as torch's reader reads them
//! instead: deflated records (inflated, as `getRecord` inflates them), a comment after the end
//! record (found as miniz finds it), and CRC-32s recorded as 0 ([`bytes::crc_state`]); the checkpoint
//! judges each (`plugins/shared/pickle/GRAMMAR.md`, "Checkpoint rules").
//!
//! Parsing is over [`ReadAt`], implemented for `[u8]` (tests, fuzzing) and by the plugin for
//! the host's byte source. Every length is checked against the file before it is read. The
//! records' layouts, extra blocks, zip64 values, name decoding and CRC-32 are the plugin kit's
//! (`socair_plugin_kit::zip`, whose module comment tables where this reader's rules differ
//! from the numpy and archive readers'); the rules and the words of each refusal are here.

use socair_plugin_kit::zip::extra::{self, ExtraError, Zip64Error};
use socair_plugin_kit::zip::headers::{
    CentralHeader, EndRecord, LocalHeader, Zip64End, Zip64Locator,
};
use socair_plugin_kit::zip::names::{self, NameError};
use socair_plugin_kit::zip::{
    Fields, CENTRAL_LEN, DESCRIPTOR_SIG, EOCD_LEN, EOCD_MAGIC, EXTRA_ZIP64, FLAG_DEFLATE_OPTIONS,
    FLAG_DESCRIPTOR, FLAG_UTF8, LOCAL_LEN, ZIP64_EOCD_LEN, ZIP64_LOCATOR_LEN,
};
use std::collections::HashMap;

pub use socair_plugin_api::ReadAt;
/// A name as miniz compares it: `MZ_TOLOWER` lowers ASCII `A`-`Z` and leaves every other byte.
pub use socair_plugin_kit::zip::names::fold;
/// The first four bytes of a zip that starts with a local header: what torch's `_is_zipfile`
/// compares a file's first bytes with to choose its zip reader over the legacy one.
pub use socair_plugin_kit::zip::LOCAL_MAGIC;

/// Why an archive is refused. Every variant names the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipError {
    /// Reading the source failed.
    #[error("reading bytes {offset}..+{len} failed: {message}")]
    Io {
        /// Where.
        offset: u64,
        /// How many.
        len: u64,
        /// Why.
        message: String,
    },
    /// The structure is not what it must be; `place` says where.
    #[error("{place}: {reason}")]
    Invalid {
        /// Where in the archive.
        place: String,
        /// What is wrong.
        reason: String,
    },
}

impl ZipError {
    /// The place, for a report finding.
    pub fn place(&self) -> String {
        match self {
            ZipError::Io { offset, .. } => format!("byte {offset}"),
            ZipError::Invalid { place, .. } => place.clone(),
        }
    }
}

/// Where in the archive a refusal is, formatted only when one is made (an archive of a million
/// records checks a million places).
#[derive(Debug, Clone, Copy)]
enum Place<'a> {
    /// A central directory entry before its name is known.
    CentralAt { index: u64, offset: u64 },
    /// A central directory entry by name.
    Central(&'a str),
    /// A record by name.
    Record(&'a str),
}

impl From<&Place<'_>> for String {
    fn from(place: &Place<'_>) -> String {
        match place {
            Place::CentralAt { index, offset } => {
                format!("central directory entry {index} at byte {offset}")
            }
            Place::Central(name) => format!("central directory entry {name:?}"),
            Place::Record(name) => format!("record {name:?}"),
        }
    }
}

fn invalid(place: impl Into<String>, reason: impl Into<String>) -> ZipError {
    ZipError::Invalid {
        place: place.into(),
        reason: reason.into(),
    }
}

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its full name, prefix included.
    pub name: String,
    /// Where its local header starts.
    pub header_offset: u64,
    /// Where its data starts.
    pub data_offset: u64,
    /// Its length as torch reads it (uncompressed).
    pub len: u64,
    /// The CRC-32 the central directory records.
    pub crc32: u32,
    /// Its method: 0 (stored), or 8 (deflated) where [`Rules::torch_writer_options`] admits it.
    pub method: u16,
    /// Its bytes in the file (`len` for a stored record).
    pub compressed: u64,
}

impl Record {
    /// Whether its bytes lie in the file as torch reads them (a stored record).
    pub fn stored(&self) -> bool {
        self.method == 0
    }
}

/// What the zip layer admits beyond the archives torch's writer writes by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// `socair-wo/3`: what torch's writer options and re-zipping produce, read as torch's
    /// reader (miniz 3.0.2, `PyTorchStreamReader`) reads it: a comment after the end record
    /// (`mz_zip_reader_locate_header_sig` scans back from the end for the last end-record
    /// signature with 22 bytes after it), and deflated records (`getRecord` extracts with
    /// `mz_zip_reader_extract_to_mem`, which inflates method 8). Records without a CRC-32
    /// (`set_crc32_options(False)`) are judged by the checkpoint ([`bytes::crc_state`]).
    pub torch_writer_options: bool,
}

/// A validated archive: its records in file order, all under `prefix/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// The archive's one top-level directory (torch names it after the file).
    pub prefix: String,
    /// Records in file order.
    pub records: Vec<Record>,
    /// Index into `records` by name relative to the prefix, ASCII-lowercased (names are unique
    /// that way): a checkpoint of 100,000 storages looks each one up.
    by_rel: HashMap<String, usize>,
    /// The length of the comment after the end record (0 unless
    /// [`Rules::torch_writer_options`] admitted one).
    pub comment_len: u64,
}

impl Archive {
    /// The record torch's reader finds for `prefix/rel`: `PyTorchStreamReader::getRecordID`
    /// calls `mz_zip_reader_locate_file(archive, prefix/rel, NULL, 0)`, and with those flags
    /// miniz binary-searches its central directory sorted by `MZ_TOLOWER` (ASCII `A`-`Z` only),
    /// so the name matches ignoring ASCII case. The caller compares the record's own name.
    pub fn get(&self, rel: &str) -> Option<&Record> {
        self.find(rel).map(|i| &self.records[i])
    }

    /// [`Archive::get`], as an index into `records`.
    pub fn find(&self, rel: &str) -> Option<usize> {
        let i = if rel.bytes().any(|b| b.is_ascii_uppercase()) {
            self.by_rel.get(&fold(rel))
        } else {
            self.by_rel.get(rel)
        };
        i.copied()
    }

    /// A record's name without the prefix.
    pub fn relative<'a>(&self, record: &'a Record) -> &'a str {
        &record.name[self.prefix.len() + 1..]
    }
}

/// Flag bits torch's writer sets: 3 (sizes in a data descriptor) and 11 (UTF-8 names).
const ALLOWED_FLAGS: u16 = FLAG_DESCRIPTOR | FLAG_UTF8;
/// Method 8, deflate.
const METHOD_DEFLATE: u16 = 8;
/// torch's alignment padding: `FB`, then `Z` bytes.
const EXTRA_TORCH_PADDING: u16 = 0x4246;

fn read_vec(src: &(impl ReadAt + ?Sized), offset: u64, len: u64) -> Result<Vec<u8>, ZipError> {
    let end = offset.checked_add(len).filter(|&e| e <= src.size());
    if end.is_none() {
        return Err(invalid(
            format!("byte {offset}"),
            format!(
                "{len} bytes needed but the file ends at {} (truncated?)",
                src.size()
            ),
        ));
    }
    let mut buf = vec![0u8; usize::try_from(len).map_err(|_| invalid("", "length over usize"))?];
    src.read_exact_at(offset, &mut buf)
        .map_err(|message| ZipError::Io {
            offset,
            len,
            message,
        })?;
    Ok(buf)
}

/// The end records' view of the central directory.
struct DirectoryBounds {
    entries: u64,
    offset: u64,
    size: u64,
    /// The archive comment's length (0 unless [`Rules::torch_writer_options`]).
    comment_len: u64,
}

/// Where the end record is, with `rules`: the last 22 bytes when they hold one without a
/// comment (what every reader takes first: `zipfile._EndRecData`'s fast path, and miniz's
/// backward scan finds it first), else, with [`Rules::torch_writer_options`], the last
/// end-record signature in the final 64 KiB + 22 bytes, which must have 22 bytes after it and
/// a comment length that reaches the end of the file: miniz takes the last signature with 22
/// bytes after it, `zipfile` the last signature (`rfind`) and refuses one with fewer, so
/// anything else is read differently.
fn find_end_record(
    src: &(impl ReadAt + ?Sized),
    rules: Rules,
) -> Result<(u64, EndRecord), ZipError> {
    let size = src.size();
    if size < EOCD_LEN {
        return Err(invalid(
            "end of file",
            format!("{size} bytes is too short for a zip archive"),
        ));
    }
    let last = size - EOCD_LEN;
    let at_end = EndRecord::parse(&read_vec(src, last, EOCD_LEN)?);
    match at_end {
        Some(end) if end.comment_len == 0 || !rules.torch_writer_options => return Ok((last, end)),
        None if !rules.torch_writer_options => {
            return Err(invalid(
                "end of file",
                "no end-of-central-directory record in the last 22 bytes: the file is truncated, or trailing bytes (a comment, another file) follow the archive",
            ))
        }
        _ => {}
    }
    let window = size.min(EOCD_LEN + u64::from(u16::MAX));
    let tail = read_vec(src, size - window, window)?;
    let Some(pos) = tail.windows(4).rposition(|w| w == EOCD_MAGIC) else {
        return Err(invalid(
            "end of file",
            "no end-of-central-directory record in the last 64 KiB: the file is truncated, or not a zip archive",
        ));
    };
    let eocd_at = size - window + pos as u64;
    let after = size - eocd_at;
    if after < EOCD_LEN {
        return Err(invalid(
            format!("byte {eocd_at}"),
            format!("an end-record signature lies in the last {after} bytes: Python's zipfile takes it and refuses the archive, torch's miniz skips it for an earlier one (readers find different end records)"),
        ));
    }
    let place = format!("end-of-central-directory record at byte {eocd_at}");
    let end = EndRecord::parse(&read_vec(src, eocd_at, EOCD_LEN)?)
        .ok_or_else(|| invalid(&place, "bad signature"))?;
    if u64::from(end.comment_len) != after - EOCD_LEN {
        return Err(invalid(
            &place,
            format!(
                "declares a {}-byte comment but {} trailing bytes follow it: readers that trust the length and readers that scan for the record disagree on where the archive ends",
                end.comment_len,
                after - EOCD_LEN
            ),
        ));
    }
    Ok((eocd_at, end))
}

fn read_end_records(
    src: &(impl ReadAt + ?Sized),
    rules: Rules,
) -> Result<DirectoryBounds, ZipError> {
    let (eocd_at, end) = find_end_record(src, rules)?;
    let place = format!("end-of-central-directory record at byte {eocd_at}");
    let (entries, cd_size, cd_offset) = (end.entries, end.directory_size, end.directory_offset);
    let comment_len = end.comment_len;
    if end.disk != 0 || end.directory_disk != 0 || end.entries_here != entries {
        return Err(invalid(
            &place,
            "multi-disk archives are not torch checkpoints",
        ));
    }
    if comment_len != 0 && !rules.torch_writer_options {
        return Err(invalid(
            &place,
            format!("declares a {comment_len}-byte comment; torch writes none"),
        ));
    }
    let locator_at = eocd_at.checked_sub(ZIP64_LOCATOR_LEN);
    let locator = match locator_at {
        Some(at) => Zip64Locator::parse(&read_vec(src, at, ZIP64_LOCATOR_LEN)?).map(|l| (at, l)),
        None => None,
    };
    let Some((locator_at, locator)) = locator else {
        // A classic archive: no placeholders allowed, and the directory ends at the end record.
        if entries == 0xffff || cd_size == 0xffff_ffff || cd_offset == 0xffff_ffff {
            return Err(invalid(
                &place,
                "holds zip64 placeholders but there is no zip64 end record",
            ));
        }
        let bounds = DirectoryBounds {
            entries: entries.into(),
            offset: cd_offset.into(),
            size: cd_size.into(),
            comment_len: comment_len.into(),
        };
        if bounds.offset + bounds.size != eocd_at {
            return Err(invalid(&place, format!(
                "the central directory ({} bytes at {}) does not end where the end record starts: bytes between them",
                bounds.size, bounds.offset
            )));
        }
        return Ok(bounds);
    };
    let (z_disk, z_offset, disks) = (locator.disk, locator.end_offset, locator.disks);
    let lplace = format!("zip64 end locator at byte {locator_at}");
    if z_disk != 0 || disks != 1 {
        return Err(invalid(
            &lplace,
            "multi-disk archives are not torch checkpoints",
        ));
    }
    if z_offset.checked_add(ZIP64_EOCD_LEN) != Some(locator_at) {
        return Err(invalid(&lplace, format!(
            "points to a zip64 end record at byte {z_offset}, which does not end where the locator starts"
        )));
    }
    let z = read_vec(src, z_offset, ZIP64_EOCD_LEN)?;
    let zplace = format!("zip64 end record at byte {z_offset}");
    let Some(z) = Zip64End::parse(&z) else {
        return Err(invalid(&zplace, "bad signature"));
    };
    let record_size = z.record_size;
    let (zd, zcd) = (z.disk, z.directory_disk);
    let (z_entries_disk, z_entries) = (z.entries_here, z.entries);
    let (z_cd_size, z_cd_offset) = (z.directory_size, z.directory_offset);
    if record_size != ZIP64_EOCD_LEN - 12 {
        return Err(invalid(
            &zplace,
            format!("declares {record_size} bytes; torch writes 44 (no extensible data)"),
        ));
    }
    if zd != 0 || zcd != 0 || z_entries_disk != z_entries {
        return Err(invalid(
            &zplace,
            "multi-disk archives are not torch checkpoints",
        ));
    }
    // The classic record must agree, or hold the zip64 placeholder.
    if entries != 0xffff && u64::from(entries) != z_entries {
        return Err(invalid(
            &place,
            format!("counts {entries} entries but the zip64 end record counts {z_entries}"),
        ));
    }
    if cd_size != 0xffff_ffff && u64::from(cd_size) != z_cd_size {
        return Err(invalid(&place, format!("gives a central directory of {cd_size} bytes but the zip64 end record says {z_cd_size}")));
    }
    if cd_offset != 0xffff_ffff && u64::from(cd_offset) != z_cd_offset {
        return Err(invalid(&place, format!("puts the central directory at {cd_offset} but the zip64 end record says {z_cd_offset}")));
    }
    if z_cd_offset.checked_add(z_cd_size) != Some(z_offset) {
        return Err(invalid(&zplace, format!(
            "the central directory ({z_cd_size} bytes at {z_cd_offset}) does not end where this record starts: bytes between them"
        )));
    }
    Ok(DirectoryBounds {
        entries: z_entries,
        offset: z_cd_offset,
        size: z_cd_size,
        comment_len: comment_len.into(),
    })
}

/// One central directory entry, zip64 values resolved.
struct CentralEntry {
    name: String,
    flags: u16,
    method: u16,
    crc32: u32,
    compressed: u64,
    uncompressed: u64,
    header_offset: u64,
}

/// Splits extra-field blocks, which must tile `extra` exactly (all of them, before any id is
/// judged).
fn extra_blocks<'a>(extra: &'a [u8], place: &Place<'_>) -> Result<Vec<(u16, &'a [u8])>, ZipError> {
    extra::blocks(extra)
        .collect::<Result<_, _>>()
        .map_err(|e| match e {
            ExtraError::EndsInBlockHeader => {
                invalid(place, "extra field ends inside a block header")
            }
            ExtraError::RunsPast { id, .. } => invalid(
                place,
                format!("extra block {id:#06x} runs past the extra field"),
            ),
        })
}

/// Applies a zip64 extra block to the 32-bit fields that hold the placeholder, in the order
/// APPNOTE 4.5.3 gives (uncompressed, compressed, offset); the block must hold exactly those.
fn apply_zip64(body: &[u8], fields: [&mut u64; 3], place: &Place<'_>) -> Result<(), ZipError> {
    let saturated = fields.each_ref().map(|f| **f == 0xffff_ffff);
    match extra::zip64_values(Some(body), saturated) {
        Ok(values) => {
            for (field, value) in fields.into_iter().zip(values) {
                if let Some(v) = value {
                    *field = v;
                }
            }
            Ok(())
        }
        Err(Zip64Error::Length { have, want }) => Err(invalid(
            place,
            format!(
                "zip64 extra block holds {have} bytes but {} fields are placeholders",
                want / 8
            ),
        )),
        Err(Zip64Error::Missing) => Err(invalid(
            place,
            "holds a zip64 placeholder without a zip64 extra field",
        )),
    }
}

fn decode_name(raw: &[u8], flags: u16, place: &Place<'_>) -> Result<String, ZipError> {
    match names::decode(raw, flags) {
        Ok(name) => Ok(name.to_owned()),
        Err(NameError::NotAsciiWithoutUtf8Flag) => Err(invalid(
            place,
            "name is not ASCII and the UTF-8 flag is not set (readers decode it differently)",
        )),
        Err(NameError::NotUtf8) => Err(invalid(place, "name is not UTF-8")),
    }
}

/// The longest name torch's `getAllRecords` reads whole: it copies names into a
/// `MZ_ZIP_MAX_ARCHIVE_FILENAME_SIZE` (512) buffer, NUL included, and cuts longer ones, so it
/// would check a cut name against the prefix and report it (as `constants.pkl`, say).
pub const MAX_NAME_LEN: usize = 511;

/// A record name must be a plain relative path: no absolute path, backslash, `.`/`..`
/// segment, empty segment, or control character.
fn check_name(name: &str, place: &Place<'_>) -> Result<(), ZipError> {
    let bad = |why: &str| Err(invalid(place, format!("name {name:?} {why}")));
    if name.is_empty() {
        return bad("is empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid(place, format!(
            "name of {} bytes: torch's getAllRecords reads only the first {MAX_NAME_LEN} (a 512-byte buffer), so it sees another name than other readers",
            name.len()
        )));
    }
    if name.starts_with('/') {
        return bad("is absolute");
    }
    if name.contains('\\') {
        return bad("contains a backslash");
    }
    if name.chars().any(char::is_control) {
        return bad("contains a control character");
    }
    for seg in name.split('/') {
        match seg {
            "" => return bad("has an empty path segment"),
            "." | ".." => return bad("escapes or aliases a directory with a '.' or '..' segment"),
            _ => {}
        }
    }
    Ok(())
}

fn read_central(
    src: &(impl ReadAt + ?Sized),
    bounds: &DirectoryBounds,
) -> Result<Vec<CentralEntry>, ZipError> {
    // Each entry takes at least 46 bytes: the count is bounded by the directory's real size.
    if bounds.entries > bounds.size / CENTRAL_LEN {
        return Err(invalid(
            "central directory",
            format!(
                "{} entries cannot fit in {} bytes",
                bounds.entries, bounds.size
            ),
        ));
    }
    let dir = read_vec(src, bounds.offset, bounds.size)?;
    let mut entries = Vec::with_capacity(bounds.entries as usize);
    let mut at = 0usize;
    for i in 0..bounds.entries {
        let place = Place::CentralAt {
            index: i,
            offset: bounds.offset + at as u64,
        };
        let fixed = dir
            .get(at..at + CENTRAL_LEN as usize)
            .ok_or_else(|| invalid(&place, "runs past the central directory"))?;
        let Some(h) = CentralHeader::parse(fixed) else {
            return Err(invalid(&place, "bad signature"));
        };
        let (flags, method, crc32, disk) = (h.flags, h.method, h.crc32, h.disk);
        let (mut compressed, mut uncompressed) =
            (u64::from(h.compressed), u64::from(h.uncompressed));
        let (name_len, extra_len, comment_len) = (
            usize::from(h.name_len),
            usize::from(h.extra_len),
            usize::from(h.comment_len),
        );
        let mut header_offset = u64::from(h.header_offset);
        let var_start = at + CENTRAL_LEN as usize;
        let var_end = var_start + h.variable_len();
        let var = dir.get(var_start..var_end).ok_or_else(|| {
            invalid(
                &place,
                "name, extra field or comment runs past the central directory",
            )
        })?;
        let name = decode_name(&var[..name_len], flags, &place)?;
        let place = Place::Central(&name);
        if disk != 0 {
            return Err(invalid(&place, "on another disk"));
        }
        if comment_len != 0 {
            return Err(invalid(&place, "has a comment; torch writes none"));
        }
        let mut seen_zip64 = false;
        for (id, body) in extra_blocks(&var[name_len..name_len + extra_len], &place)? {
            match id {
                EXTRA_ZIP64 if !seen_zip64 => {
                    seen_zip64 = true;
                    apply_zip64(
                        body,
                        [&mut uncompressed, &mut compressed, &mut header_offset],
                        &place,
                    )?;
                }
                _ => {
                    return Err(invalid(
                        &place,
                        format!("unknown or repeated extra field {id:#06x}"),
                    ))
                }
            }
        }
        if !seen_zip64
            && (uncompressed == 0xffff_ffff
                || compressed == 0xffff_ffff
                || header_offset == 0xffff_ffff)
        {
            return Err(invalid(
                &place,
                "holds a zip64 placeholder without a zip64 extra field",
            ));
        }
        entries.push(CentralEntry {
            name,
            flags,
            method,
            crc32,
            compressed,
            uncompressed,
            header_offset,
        });
        at = var_end;
    }
    if at as u64 != bounds.size {
        return Err(invalid(
            "central directory",
            format!(
                "{} bytes after the last entry belong to no entry",
                bounds.size - at as u64
            ),
        ));
    }
    Ok(entries)
}

/// Reads and validates the archive structure. Record contents are not read here: call
/// [`bytes::verify_crc`] for each record whose integrity matters.
/// The record names the central directory lists, when it can be read (whatever else is wrong
/// with the archive): enough to say what kind of archive a refused one is.
pub fn central_names(src: &(impl ReadAt + ?Sized)) -> Option<Vec<String>> {
    let bounds = read_end_records(src, Rules::default()).ok()?;
    let central = read_central(src, &bounds).ok()?;
    Some(central.into_iter().map(|e| e.name).collect())
}

pub fn read_archive(src: &(impl ReadAt + ?Sized)) -> Result<Archive, ZipError> {
    read_archive_with(src, Rules::default())
}

/// [`read_archive`] under `rules`.
pub fn read_archive_with(src: &(impl ReadAt + ?Sized), rules: Rules) -> Result<Archive, ZipError> {
    let size = src.size();
    let head = read_vec(src, 0, size.min(8))?;
    if head.starts_with(b"PYTORCH1") {
        return Err(invalid(
            "byte 0",
            "starts with PYTORCH1: the preview-release format torch no longer reads",
        ));
    }
    if !head.starts_with(&LOCAL_MAGIC) {
        return Err(invalid("byte 0", "does not start with a zip local file header (PK\\x03\\x04): leading bytes before the archive (a polyglot), or not a torch zip checkpoint"));
    }
    let bounds = read_end_records(src, rules)?;
    let central = read_central(src, &bounds)?;
    if central.is_empty() {
        return Err(invalid("central directory", "lists no records"));
    }

    let mut records: Vec<Record> = Vec::with_capacity(central.len());
    // torch looks records up through miniz, which compares names ignoring ASCII case: names are
    // indexed as it compares them, relative to the one prefix.
    let mut by_rel: HashMap<String, usize> = HashMap::with_capacity(central.len());
    let mut expected_at = 0u64;
    let mut prefix: Option<String> = None;
    for entry in central {
        let place = Place::Record(&entry.name);
        check_name(&entry.name, &place)?;
        let this_prefix = match entry.name.split_once('/') {
            Some((p, rest)) if !rest.is_empty() => p,
            _ => {
                return Err(invalid(
                    &place,
                    "is not inside a top-level directory (torch requires one)",
                ))
            }
        };
        match &prefix {
            None => prefix = Some(this_prefix.to_owned()),
            Some(p) if p != this_prefix => {
                return Err(invalid(&place, format!("is under the prefix {this_prefix:?}/ but the archive's records are under {p:?}/")))
            }
            Some(_) => {}
        }
        let deflated = rules.torch_writer_options && entry.method == METHOD_DEFLATE;
        let allowed = if deflated {
            // Bits 1 and 2 give the compression level a deflating writer used.
            ALLOWED_FLAGS | FLAG_DEFLATE_OPTIONS
        } else {
            ALLOWED_FLAGS
        };
        if entry.flags & !allowed != 0 {
            return Err(invalid(&place, format!(
                "general-purpose flags {:#06x} set bits torch never writes (encryption, patched data, …)",
                entry.flags
            )));
        }
        if entry.method != 0 && !deflated {
            return Err(invalid(
                &place,
                format!(
                    "is compressed (method {}); torch writes stored records",
                    entry.method
                ),
            ));
        }
        if !deflated && entry.compressed != entry.uncompressed {
            return Err(invalid(
                &place,
                "a stored record's compressed and uncompressed sizes differ",
            ));
        }
        if entry.header_offset != expected_at {
            return Err(invalid(&place, format!(
                "its local header is at byte {} but the previous record ends at byte {expected_at}: bytes between records, or records out of order",
                entry.header_offset
            )));
        }
        let rel = fold(&entry.name[this_prefix.len() + 1..]);
        if let Some(&other) = by_rel.get(&rel) {
            let other: &str = &records[other].name;
            return Err(invalid(
                &place,
                if other == entry.name {
                    "name appears twice (readers pick different copies)".to_owned()
                } else {
                    format!(
                        "{other:?} and {:?} are one name to torch's reader (miniz's mz_zip_reader_locate_file compares names ignoring ASCII case, and which of the two its sorted lookup returns depends on its heap sort)",
                        entry.name
                    )
                },
            ));
        }
        let (data_offset, next) = read_local(src, &entry, &place)?;
        expected_at = next;
        by_rel.insert(rel, records.len());
        records.push(Record {
            header_offset: entry.header_offset,
            data_offset,
            len: entry.uncompressed,
            crc32: entry.crc32,
            method: entry.method,
            compressed: entry.compressed,
            name: entry.name,
        });
    }
    if expected_at != bounds.offset {
        return Err(invalid(
            "central directory",
            format!(
            "starts at byte {} but the last record ends at byte {expected_at}: bytes between them",
            bounds.offset
        ),
        ));
    }
    let prefix = prefix.expect("at least one record");
    Ok(Archive {
        prefix,
        records,
        by_rel,
        comment_len: bounds.comment_len,
    })
}

/// Reads one local header and its data descriptor; returns where the record's data starts and
/// where the next record must start.
fn read_local(
    src: &(impl ReadAt + ?Sized),
    entry: &CentralEntry,
    place: &Place<'_>,
) -> Result<(u64, u64), ZipError> {
    let at = entry.header_offset;
    let Some(h) = LocalHeader::parse(&read_vec(src, at, LOCAL_LEN)?) else {
        return Err(invalid(place, format!("no local file header at byte {at}")));
    };
    let (flags, method, crc32) = (h.flags, h.method, h.crc32);
    let (mut compressed, mut uncompressed) = (u64::from(h.compressed), u64::from(h.uncompressed));
    let (name_len, extra_len) = (u64::from(h.name_len), u64::from(h.extra_len));
    let var = read_vec(src, at + LOCAL_LEN, name_len + extra_len)?;
    let name = decode_name(&var[..name_len as usize], flags, place)?;
    if name != entry.name {
        return Err(invalid(place, format!(
            "local header at byte {at} names it {name:?}: the local header and the central directory disagree"
        )));
    }
    if flags != entry.flags || method != entry.method {
        return Err(invalid(place, format!(
            "local header flags/method ({flags:#06x}/{method}) differ from the central directory's ({:#06x}/{})",
            entry.flags, entry.method
        )));
    }
    let mut zip64 = false;
    for (id, body) in extra_blocks(&var[name_len as usize..], place)? {
        match id {
            EXTRA_ZIP64 if !zip64 => {
                zip64 = true;
                // APPNOTE 4.5.3 puts both sizes here; torch's writer (miniz) writes what it
                // knows when it writes the header: the uncompressed size and a zero, or the
                // header's own offset once the archive is past 4 GiB. Every value must be zero
                // or the truth the central directory records: nothing here can disagree.
                if body.is_empty() || body.len() % 8 != 0 || body.len() > 24 {
                    return Err(invalid(
                        place,
                        format!("local zip64 extra block of {} bytes", body.len()),
                    ));
                }
                let values: Vec<u64> = body
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect();
                for &v in &values {
                    if v != 0 && v != entry.uncompressed && v != entry.compressed && v != at {
                        return Err(invalid(place, format!(
                            "local zip64 extra holds {v}, which is neither the record's size nor its header's offset (the central directory says {} bytes at {at})",
                            entry.uncompressed
                        )));
                    }
                }
                // Where the 32-bit fields defer to this block, it gives the sizes in order.
                let mut it = values.iter().copied();
                if uncompressed == 0xffff_ffff {
                    uncompressed = it.next().unwrap_or(0);
                }
                if compressed == 0xffff_ffff {
                    compressed = it.next().unwrap_or(0);
                }
            }
            EXTRA_TORCH_PADDING if body.iter().all(|&b| b == b'Z') => {}
            EXTRA_TORCH_PADDING => {
                return Err(invalid(
                    place,
                    "alignment padding holds something other than 'Z' bytes",
                ))
            }
            _ => {
                return Err(invalid(
                    place,
                    format!("unknown or repeated extra field {id:#06x} in the local header"),
                ))
            }
        }
    }
    let data_offset = at + LOCAL_LEN + name_len + extra_len;
    let data_end = data_offset
        .checked_add(entry.compressed)
        .filter(|&e| e <= src.size())
        .ok_or_else(|| {
            invalid(
                place,
                format!(
            "{} bytes of data at byte {data_offset} run past the end of the file (truncated?)",
            entry.compressed
        ),
            )
        })?;
    let mut next = data_end;
    if flags & FLAG_DESCRIPTOR != 0 {
        // Sizes and CRC deferred to a data descriptor: the local fields hold zeros (a zip64
        // block's values were checked above).
        if crc32 != 0
            || !matches!(compressed, 0 | 0xffff_ffff)
            || !matches!(uncompressed, 0 | 0xffff_ffff)
        {
            return Err(invalid(
                place,
                "data descriptor flag set but the local header also gives a CRC or sizes",
            ));
        }
        let size_len = if zip64 { 8 } else { 4 };
        let desc_len = 4 + 4 + 2 * size_len;
        let desc = read_vec(src, data_end, desc_len)?;
        let mut f = Fields::new(&desc);
        if f.u32() != DESCRIPTOR_SIG {
            return Err(invalid(
                place,
                format!("no data descriptor signature at byte {data_end}"),
            ));
        }
        let d_crc = f.u32();
        let (d_comp, d_uncomp) = if zip64 {
            (f.u64(), f.u64())
        } else {
            (u64::from(f.u32()), u64::from(f.u32()))
        };
        if d_crc != entry.crc32 || d_comp != entry.compressed || d_uncomp != entry.uncompressed {
            return Err(invalid(
                place,
                "data descriptor disagrees with the central directory (CRC or sizes)",
            ));
        }
        next = data_end + desc_len;
    } else if crc32 != entry.crc32
        || compressed != entry.compressed
        || uncompressed != entry.uncompressed
    {
        return Err(invalid(
            place,
            "local header CRC or sizes disagree with the central directory",
        ));
    }
    Ok((data_offset, next))
}

pub mod bytes;

#[cfg(test)]
mod tests;
