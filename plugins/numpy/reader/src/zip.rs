//! A strict reader for zip archives: those `np.savez` and `np.savez_compressed` write (Python's
//! `zipfile`, zip64 forced on every member) and the generic ones that carry pickles and arrays
//! (`zipfile`, Info-ZIP `zip`, 7-Zip, Java's and macOS's archivers).
//!
//! NumPy reads an archive with Python's `zipfile`, others with their own readers; an archive
//! two readers read differently is how scanners have been evaded. So this reader accepts the
//! shapes those writers produce and refuses, naming the place, anything that readers could
//! disagree on:
//!
//! * the end record must be found where every reader finds it: the last signature in the
//!   file's tail (as `zipfile._EndRecData` searches), with its comment reaching exactly the end
//!   of the file; a zip64 end record exactly where its locator points, just before it, whose
//!   counts the classic record repeats or saturates; one disk;
//! * the central directory ends where the end records start and its entries fill it exactly;
//!   names are given once, decode the same way for every reader (UTF-8 with flag bit 11, or
//!   ASCII), hold no control characters, and no Unicode Path extra field (0x7075, which newer
//!   readers honour over the name) renames them; extra fields tile their space; a zip64 extra
//!   field holds exactly the values whose fields are saturated;
//! * flag bits are those writers set: 0 (encrypted: the member is listed, not read), 1 and 2
//!   (deflate options; bit 1 alone on an LZMA member: its end marker), 3 (sizes in a data descriptor after the data, which must then be there
//!   and agree), 11 (UTF-8 names); any other is refused;
//! * each local header agrees with its central entry (name, flags, method, and CRC-32 and
//!   sizes unless a data descriptor holds them); a directory entry holds no data; a stored
//!   member's two sizes are equal;
//! * members tile the bytes before the central directory in order: nothing before the first,
//!   between two, or after the last (a polyglot's prefix, a hidden member, an overlap that makes
//!   one stretch of bytes two members, as zip bombs do).
//!
//! Members compressed with a method other than stored (0), deflate (8), bzip2 (12) or LZMA (14)
//! (the methods Python's `zipfile` reads, and so `np.load`; [`crate::decompress`]) are listed
//! with their method and not read: the caller says nothing checked them. CRC-32 and declared sizes are
//! checked by [`Member`] readers ([`read_each`]) over every byte of a member, deflated or not.
//!
//! The records' layouts, extra blocks, zip64 values, name decoding and CRC-32 are the plugin
//! kit's (`socair_plugin_kit::zip`, whose module comment tables where these rules differ from
//! torch-zip's and the archive plugin's); the rules and the words of each refusal are here.

use crate::inflate::{self, InflateError};
use socair_plugin_api::ReadAt;
use socair_plugin_kit::zip::crc::{each_piece, Crc32};
use socair_plugin_kit::zip::extra::{self, ExtraError, Zip64Error};
use socair_plugin_kit::zip::headers::{
    CentralHeader, EndRecord, LocalHeader, Zip64End, Zip64Locator,
};
use socair_plugin_kit::zip::names::{self, NameError};
use socair_plugin_kit::zip::{
    Fields, CENTRAL_LEN, DESCRIPTOR_SIG, EOCD_LEN, EOCD_MAGIC, EXTRA_UNICODE_PATH, EXTRA_ZIP64,
    FLAG_DEFLATE_OPTIONS, FLAG_DESCRIPTOR, FLAG_ENCRYPTED, FLAG_UTF8, LOCAL_LEN, ZIP64_EOCD_LEN,
    ZIP64_LOCATOR_LEN as LOCATOR_LEN,
};

/// Why an archive is refused: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {reason}")]
pub struct ZipError {
    /// The place: a record and its byte offset.
    pub place: String,
    /// What is wrong there.
    pub reason: String,
}

fn err<T>(place: impl Into<String>, reason: impl Into<String>) -> Result<T, ZipError> {
    Err(ZipError {
        place: place.into(),
        reason: reason.into(),
    })
}

/// Compression method: stored.
pub const STORED: u16 = 0;
/// Compression method: deflate.
pub const DEFLATE: u16 = 8;
/// Compression method: bzip2 (Python's `zipfile` reads it).
pub use crate::decompress::BZIP2;
/// Compression method: LZMA (Python's `zipfile` reads it).
pub use crate::decompress::LZMA;
/// Flag bit 1 of an LZMA member: its stream ends with an end marker.
const FLAG_LZMA_END_MARKER: u16 = 1 << 1;

/// The names of compression methods Python's `zipfile` and others read.
pub fn method_name(method: u16) -> &'static str {
    match method {
        0 => "stored",
        8 => "deflate",
        9 => "deflate64",
        12 => "bzip2",
        14 => "LZMA",
        93 => "zstandard",
        95 => "xz",
        98 => "PPMd",
        99 => "AES encryption",
        _ => "an unknown method",
    }
}

/// One member, as the central directory and its local header agree it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its name.
    pub name: String,
    /// Where its local header starts.
    pub header_offset: u64,
    /// Where its data starts.
    pub data_offset: u64,
    /// The length of its data as stored.
    pub compressed_len: u64,
    /// Its length once decompressed (equal for stored members).
    pub len: u64,
    /// The compression method.
    pub method: u16,
    /// The CRC-32 of its uncompressed data.
    pub crc32: u32,
    /// Whether it is encrypted (flag bit 0).
    pub encrypted: bool,
    /// Whether it is a directory entry (its name ends with `/`).
    pub is_dir: bool,
    /// Its general-purpose flags (the central directory's, which its local header repeats).
    pub flags: u16,
}

impl Member {
    /// The member's place, for messages.
    pub fn place(&self) -> String {
        format!(
            "member {:?} (local header at byte {})",
            self.name, self.header_offset
        )
    }
}

/// A read archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// Members in central directory order.
    pub members: Vec<Member>,
    /// Whether zip64 end records were read.
    pub zip64: bool,
    /// The archive comment's length.
    pub comment_len: u16,
}

/// The largest central directory read: at 46 bytes an entry, a million and a half members.
pub const MAX_CENTRAL_DIRECTORY: u64 = 64 << 20;

fn read_vec(
    src: &(impl ReadAt + ?Sized),
    offset: u64,
    len: u64,
    place: &str,
) -> Result<Vec<u8>, ZipError> {
    let fits = offset.checked_add(len).is_some_and(|end| end <= src.size());
    if !fits {
        return err(
            place,
            format!(
                "{len} bytes at byte {offset} run past the end of the {}-byte archive",
                src.size()
            ),
        );
    }
    let Ok(n) = usize::try_from(len) else {
        return err(place, "length over the address space");
    };
    let mut buf = vec![0u8; n];
    src.read_exact_at(offset, &mut buf).map_err(|e| ZipError {
        place: place.to_owned(),
        reason: format!("reading failed: {e}"),
    })?;
    Ok(buf)
}

/// The central directory's place, as the end records give it.
struct Directory {
    entries: u64,
    offset: u64,
    size: u64,
    zip64: bool,
    comment_len: u16,
}

/// The offset of the end record: the last signature in the tail whose comment ends exactly
/// at the end of the file.
fn find_end_record(src: &(impl ReadAt + ?Sized)) -> Result<u64, ZipError> {
    let size = src.size();
    if size < EOCD_LEN {
        return err(
            "end of archive",
            format!("{size} bytes: too short for a zip end of central directory record"),
        );
    }
    let tail_len = size.min(EOCD_LEN + 0xffff);
    let tail_at = size - tail_len;
    let tail = read_vec(src, tail_at, tail_len, "end of archive")?;
    let Some(i) = tail.windows(4).rposition(|w| w == EOCD_MAGIC) else {
        return err(
            "end of archive",
            "no end of central directory record in the last 64 KiB",
        );
    };
    let at = tail_at + i as u64;
    let comment_len = tail
        .get(i + 20..i + 22)
        .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]])));
    if comment_len.and_then(|c| at.checked_add(EOCD_LEN + c)) != Some(size) {
        return err(
            format!("end of central directory record (byte {at})"),
            "the last end record's comment does not reach exactly the end of the archive (bytes after the archive, or a record inside a comment): readers find different end records",
        );
    }
    Ok(at)
}

fn read_end_records(src: &(impl ReadAt + ?Sized)) -> Result<Directory, ZipError> {
    let at = find_end_record(src)?;
    let place = format!("end of central directory record (byte {at})");
    // find_end_record found the signature at `at`.
    let Some(end) = EndRecord::parse(&read_vec(src, at, EOCD_LEN, &place)?) else {
        return err(place, "no end of central directory signature");
    };
    let (total, size, offset) = (end.entries, end.directory_size, end.directory_offset);
    let comment_len = end.comment_len;
    if end.disk != 0 || end.directory_disk != 0 || end.entries_here != total {
        return err(place, "an archive split over several disks");
    }
    let locator_at = at.checked_sub(LOCATOR_LEN);
    let locator = match locator_at {
        Some(l) => Zip64Locator::parse(&read_vec(src, l, LOCATOR_LEN, &place)?),
        None => None,
    };
    let Some(locator) = locator else {
        if total == u16::MAX || size == u32::MAX || offset == u32::MAX {
            return err(
                place,
                "saturated counts or offsets announce zip64 end records, but there is no zip64 locator",
            );
        }
        return Ok(Directory {
            entries: u64::from(total),
            offset: u64::from(offset),
            size: u64::from(size),
            zip64: false,
            comment_len,
        });
    };
    let locator_at = locator_at.unwrap_or(0);
    let lplace = format!("zip64 end of central directory locator (byte {locator_at})");
    let (z_disk, z_at, disks) = (locator.disk, locator.end_offset, locator.disks);
    if z_disk != 0 || disks != 1 {
        return err(lplace, "an archive split over several disks");
    }
    if z_at.checked_add(ZIP64_EOCD_LEN) != Some(locator_at) {
        return err(
            lplace,
            format!(
                "it points to byte {z_at}, not to a zip64 end record just before it (byte {})",
                locator_at.saturating_sub(ZIP64_EOCD_LEN)
            ),
        );
    }
    let zplace = format!("zip64 end of central directory record (byte {z_at})");
    let rec = read_vec(src, z_at, ZIP64_EOCD_LEN, &zplace)?;
    let Some(z) = Zip64End::parse(&rec) else {
        return err(zplace, "no zip64 end of central directory signature");
    };
    let (rec_size, d, cdd) = (z.record_size, z.disk, z.directory_disk);
    let (z_here, z_total) = (z.entries_here, z.entries);
    let (z_size, z_offset) = (z.directory_size, z.directory_offset);
    if rec_size != ZIP64_EOCD_LEN - 12 {
        return err(
            zplace,
            format!(
                "record size {rec_size}: extensible data is not read (Python's zipfile ignores it)"
            ),
        );
    }
    if d != 0 || cdd != 0 || z_here != z_total {
        return err(zplace, "an archive split over several disks");
    }
    let agree16 = |classic: u16, v: u64| classic == u16::MAX || u64::from(classic) == v;
    let agree32 = |classic: u32, v: u64| classic == u32::MAX || u64::from(classic) == v;
    if !(agree16(total, z_total) && agree32(size, z_size) && agree32(offset, z_offset)) {
        return err(
            place,
            format!(
                "the classic record ({total} entries, {size} bytes at {offset}) disagrees with the zip64 record ({z_total} entries, {z_size} bytes at {z_offset})"
            ),
        );
    }
    Ok(Directory {
        entries: z_total,
        offset: z_offset,
        size: z_size,
        zip64: true,
        comment_len,
    })
}

/// Whether a name decodes the same for every reader and is a usable member name.
fn decode_name(raw: &[u8], flags: u16, place: &str) -> Result<String, ZipError> {
    let name =
        match names::decode(raw, flags) {
            Ok(name) => name,
            Err(NameError::NotAsciiWithoutUtf8Flag) => return err(
                place,
                "a non-ASCII name without the UTF-8 flag (readers decode it as CP437 or as UTF-8)",
            ),
            Err(NameError::NotUtf8) => return err(place, "the name is not UTF-8"),
        };
    if name.is_empty() {
        return err(place, "an empty name");
    }
    if name.chars().any(char::is_control) {
        return err(place, format!("the name {name:?} holds control characters"));
    }
    Ok(name.to_owned())
}

/// Splits an extra field into `(id, body)` blocks that must tile it exactly, each judged as it
/// comes: given once, and no Unicode Path block.
fn extra_blocks<'a>(extra: &'a [u8], place: &str) -> Result<Vec<(u16, &'a [u8])>, ZipError> {
    let mut blocks: Vec<(u16, &[u8])> = Vec::new();
    for block in extra::blocks(extra) {
        let (id, body) = match block {
            Ok(b) => b,
            Err(ExtraError::EndsInBlockHeader) => {
                return err(place, "the extra field ends inside a block header")
            }
            Err(ExtraError::RunsPast { id, len }) => {
                return err(
                    place,
                    format!("extra block 0x{id:04x} of {len} bytes runs past the extra field"),
                )
            }
        };
        if blocks.iter().any(|(seen, _)| *seen == id) {
            return err(place, format!("extra block 0x{id:04x} given twice"));
        }
        if id == EXTRA_UNICODE_PATH {
            return err(
                place,
                "a Unicode Path extra block (0x7075): newer readers take the name from it, older ones from the header",
            );
        }
        blocks.push((id, body));
    }
    Ok(blocks)
}

/// The values a zip64 extra block holds for the fields that are saturated, in the order the
/// format gives them (uncompressed size, compressed size, header offset).
fn zip64_values(
    blocks: &[(u16, &[u8])],
    saturated: [bool; 3],
    place: &str,
) -> Result<[Option<u64>; 3], ZipError> {
    let body = blocks
        .iter()
        .find(|(id, _)| *id == EXTRA_ZIP64)
        .map(|(_, b)| *b);
    extra::zip64_values(body, saturated).or_else(|e| match e {
        Zip64Error::Missing => err(
            place,
            "saturated sizes or offset without a zip64 extra block",
        ),
        Zip64Error::Length { have, want } => err(
            place,
            format!(
                "a zip64 extra block of {have} bytes for {} saturated fields",
                want / 8
            ),
        ),
    })
}

struct Central {
    raw_name: Vec<u8>,
    flags: u16,
    member: Member,
}

fn read_central(src: &(impl ReadAt + ?Sized), dir: &Directory) -> Result<Vec<Central>, ZipError> {
    const CENTRAL: usize = CENTRAL_LEN as usize;
    if dir.size > MAX_CENTRAL_DIRECTORY {
        return err(
            "central directory",
            format!(
                "{} bytes, over the {MAX_CENTRAL_DIRECTORY} bytes read",
                dir.size
            ),
        );
    }
    if dir.entries > dir.size / CENTRAL_LEN {
        return err(
            "central directory",
            format!(
                "{} entries cannot fit in its {} bytes",
                dir.entries, dir.size
            ),
        );
    }
    let cd = read_vec(src, dir.offset, dir.size, "central directory")?;
    let mut entries: Vec<Central> = Vec::with_capacity(dir.entries as usize);
    let mut names: std::collections::HashMap<Vec<u8>, u64> =
        std::collections::HashMap::with_capacity(dir.entries as usize);
    let mut at = 0usize;
    for index in 0..dir.entries {
        let file_at = dir.offset.saturating_add(at as u64);
        let place = format!("central directory entry {index} (byte {file_at})");
        let Some(fixed) = at.checked_add(CENTRAL).and_then(|end| cd.get(at..end)) else {
            return err(place, "the central directory ends inside this entry");
        };
        let Some(h) = CentralHeader::parse(fixed) else {
            return err(place, "not a central directory entry signature");
        };
        let (flags, method, crc32) = (h.flags, h.method, h.crc32);
        let (compressed, len) = (h.compressed, h.uncompressed);
        let (name_len, extra_len, comment_len) = (h.name_len, h.extra_len, h.comment_len);
        let (disk, header_offset) = (h.disk, h.header_offset);
        let var_start = at + CENTRAL;
        let name_end = var_start + usize::from(name_len);
        let extra_end = name_end + usize::from(extra_len);
        let end = extra_end + usize::from(comment_len);
        let (Some(raw_name), Some(extra)) =
            (cd.get(var_start..name_end), cd.get(name_end..extra_end))
        else {
            return err(
                place,
                "its name or extra field runs past the central directory",
            );
        };
        if end > cd.len() {
            return err(place, "its comment runs past the central directory");
        }
        let known = FLAG_ENCRYPTED | FLAG_DEFLATE_OPTIONS | FLAG_DESCRIPTOR | FLAG_UTF8;
        if flags & !known != 0 {
            return err(
                place,
                format!("flag bits 0x{:04x}, which zip writers do not set and readers treat differently", flags & !known),
            );
        }
        // Bits 1 and 2 are the compressor's options: deflate's level, and for LZMA bit 1
        // says the stream ends with an end marker (Python's zipfile sets it).
        let options = flags & FLAG_DEFLATE_OPTIONS;
        let lzma_marker = method == LZMA && options == FLAG_LZMA_END_MARKER;
        if options != 0 && method != DEFLATE && !lzma_marker {
            return err(
                place,
                "compression option bits on a member that is neither deflated nor LZMA with an end marker",
            );
        }
        if disk != 0 && disk != u16::MAX {
            return err(place, "a member on another disk");
        }
        let blocks = extra_blocks(extra, &place)?;
        let [z_len, z_compressed, z_offset] = zip64_values(
            &blocks,
            [
                len == u32::MAX,
                compressed == u32::MAX,
                header_offset == u32::MAX,
            ],
            &place,
        )?;
        let name = decode_name(raw_name, flags, &place)?;
        let len = z_len.unwrap_or(u64::from(len));
        let compressed = z_compressed.unwrap_or(u64::from(compressed));
        let header_offset = z_offset.unwrap_or(u64::from(header_offset));
        let is_dir = name.ends_with('/');
        if is_dir && (len != 0 || compressed > 2) {
            return err(place, format!("directory entry {name:?} holds data"));
        }
        if method == STORED && compressed != len && flags & FLAG_ENCRYPTED == 0 {
            return err(
                place,
                format!(
                    "a stored member whose sizes differ ({compressed} stored, {len} uncompressed)"
                ),
            );
        }
        if let Some(first) = names.insert(raw_name.to_vec(), header_offset) {
            return err(
                place,
                format!("the name {name:?} is already given to the member at byte {first} (zipfile reads the last, other readers the first)"),
            );
        }
        entries.push(Central {
            raw_name: raw_name.to_vec(),
            flags,
            member: Member {
                name,
                header_offset,
                data_offset: 0,
                compressed_len: compressed,
                len,
                method,
                crc32,
                encrypted: flags & FLAG_ENCRYPTED != 0,
                is_dir,
                flags,
            },
        });
        at = end;
    }
    if at != cd.len() {
        return err(
            format!(
                "central directory (byte {})",
                dir.offset.saturating_add(at as u64)
            ),
            format!(
                "{} bytes after the {} entries the end record counts",
                cd.len() - at,
                dir.entries
            ),
        );
    }
    Ok(entries)
}

/// Checks the local header against its central entry; returns where the data starts and
/// whether the local header carries a zip64 block (a data descriptor then has 8-byte sizes,
/// as Python's zipfile writes it for `force_zip64`, which NumPy sets).
fn read_local(src: &(impl ReadAt + ?Sized), c: &Central) -> Result<(u64, bool), ZipError> {
    let m = &c.member;
    let place = m.place();
    let Some(h) = LocalHeader::parse(&read_vec(src, m.header_offset, LOCAL_LEN, &place)?) else {
        return err(place, "no local header signature");
    };
    let (flags, method, crc32) = (h.flags, h.method, h.crc32);
    let (compressed, len) = (h.compressed, h.uncompressed);
    let name_len = h.name_len;
    let var = read_vec(src, m.header_offset + LOCAL_LEN, h.variable_len(), &place)?;
    let (raw_name, extra) = var.split_at(usize::from(name_len).min(var.len()));
    let mut disagree = Vec::new();
    if flags != c.flags {
        disagree.push(format!("flags 0x{flags:04x} (central 0x{:04x})", c.flags));
    }
    if method != m.method {
        disagree.push(format!("method {method} (central {})", m.method));
    }
    if raw_name != c.raw_name.as_slice() {
        disagree.push(format!("name {:?}", String::from_utf8_lossy(raw_name)));
    }
    let blocks = extra_blocks(extra, &place)?;
    if flags & FLAG_DESCRIPTOR == 0 {
        if crc32 != m.crc32 {
            disagree.push(format!("CRC-32 {crc32:08x} (central {:08x})", m.crc32));
        }
        // A local zip64 block holds both sizes when either is saturated (Python's zipfile
        // writes both; the format says both).
        let (local_len, local_compressed) =
            if len == u32::MAX || compressed == u32::MAX {
                match blocks.iter().find(|(id, _)| *id == EXTRA_ZIP64) {
                    Some((_, body)) if body.len() >= 16 => {
                        let mut z = Fields::new(body);
                        (z.u64(), z.u64())
                    }
                    _ => return err(
                        place,
                        "saturated sizes in the local header without a zip64 block holding both",
                    ),
                }
            } else {
                (u64::from(len), u64::from(compressed))
            };
        if local_len != m.len || local_compressed != m.compressed_len {
            disagree.push(format!(
                "sizes {local_compressed} stored / {local_len} uncompressed (central {} / {})",
                m.compressed_len, m.len
            ));
        }
    }
    if !disagree.is_empty() {
        return err(
            place,
            format!(
                "the local header disagrees with the central directory: {}",
                disagree.join(", ")
            ),
        );
    }
    let zip64 = blocks.iter().any(|(id, _)| *id == EXTRA_ZIP64);
    Ok((m.header_offset + LOCAL_LEN + var.len() as u64, zip64))
}

/// The data descriptor after a member's data: its length, after checking that it repeats
/// the central directory's CRC-32 and sizes (with or without its optional signature, with
/// 4-byte or, for zip64, 8-byte sizes).
fn read_descriptor(
    src: &(impl ReadAt + ?Sized),
    at: u64,
    m: &Member,
    zip64: bool,
) -> Result<u64, ZipError> {
    let place = format!("data descriptor of {} (byte {at})", m.place());
    let width: u64 = if zip64 { 8 } else { 4 };
    let avail = src.size().saturating_sub(at).min(4 + 4 + 2 * width);
    let buf = read_vec(src, at, avail, &place)?;
    let mut f = Fields::new(&buf);
    let first = f.u32();
    let (sig_len, crc) = if first == DESCRIPTOR_SIG {
        (4u64, f.u32())
    } else {
        (0u64, first)
    };
    let (c, u) = if zip64 {
        (f.u64(), f.u64())
    } else {
        (u64::from(f.u32()), u64::from(f.u32()))
    };
    let len = sig_len + 4 + 2 * width;
    if len > avail || crc != m.crc32 || c != m.compressed_len || u != m.len {
        return err(
            place,
            "missing, or it disagrees with the central directory's CRC-32 and sizes",
        );
    }
    Ok(len)
}

/// Reads and checks the archive's structure; members in central directory order.
pub fn read_archive(src: &(impl ReadAt + ?Sized)) -> Result<Archive, ZipError> {
    let dir = read_end_records(src)?;
    let mut entries = read_central(src, &dir)?;
    // Members must tile the bytes before the central directory, in order of their offsets.
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries.get(i).map_or(0, |e| e.member.header_offset));
    let mut expected: u64 = 0;
    let mut previous: Option<String> = None;
    for i in order {
        let Some(c) = entries.get_mut(i) else {
            continue;
        };
        let at = c.member.header_offset;
        if at < expected {
            return err(
                c.member.place(),
                format!(
                    "overlaps {} (which ends at byte {expected})",
                    previous.as_deref().unwrap_or("the previous member")
                ),
            );
        }
        if at > expected {
            return err(
                c.member.place(),
                format!("bytes {expected}..{at} before it belong to no member"),
            );
        }
        let (data_offset, local_zip64) = read_local(src, c)?;
        let data_end = data_offset
            .checked_add(c.member.compressed_len)
            .filter(|&e| e <= dir.offset)
            .ok_or_else(|| ZipError {
                place: c.member.place(),
                reason: format!(
                    "its {} bytes of data from byte {data_offset} run into the central directory at byte {}",
                    c.member.compressed_len, dir.offset
                ),
            })?;
        c.member.data_offset = data_offset;
        expected = data_end;
        if c.flags & FLAG_DESCRIPTOR != 0 {
            let zip64 = local_zip64
                || c.member.len >= u64::from(u32::MAX)
                || c.member.compressed_len >= u64::from(u32::MAX);
            expected += read_descriptor(src, data_end, &c.member, zip64)?;
        }
        previous = Some(format!("member {:?}", c.member.name));
    }
    if expected != dir.offset {
        return err(
            format!("central directory (byte {})", dir.offset),
            format!(
                "bytes {expected}..{} before it belong to no member",
                dir.offset
            ),
        );
    }
    Ok(Archive {
        members: entries.into_iter().map(|c| c.member).collect(),
        zip64: dir.zip64,
        comment_len: dir.comment_len,
    })
}

/// Why a member's bytes are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberError {
    /// Reading or inflating failed.
    #[error(transparent)]
    Inflate(#[from] InflateError),
    /// The CRC-32 does not hold.
    #[error("the CRC-32 of its data is {got:08x}, the archive records {recorded:08x}")]
    Crc {
        /// Computed.
        got: u32,
        /// Recorded.
        recorded: u32,
    },
}

/// Calls `each` with every piece of a stored, deflated, bzip2 or LZMA member's uncompressed
/// bytes, in order, then checks its size and CRC-32. `each` returning `false` stops reading (nothing is
/// checked then). The caller has checked the method.
pub fn read_each(
    src: &(impl ReadAt + ?Sized),
    m: &Member,
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<(), MemberError> {
    let mut crc = Crc32::new();
    let mut stopped = false;
    let mut take = |piece: &[u8]| {
        crc.update(piece);
        if each(piece) {
            true
        } else {
            stopped = true;
            false
        }
    };
    if m.method == DEFLATE {
        inflate::inflate_each(src, m.data_offset, m.compressed_len, m.len, &mut take)?;
    } else if m.method == BZIP2 || m.method == LZMA {
        crate::decompress::decode_each(
            src,
            m.method,
            m.flags & FLAG_LZMA_END_MARKER != 0,
            (m.data_offset, m.compressed_len),
            m.len,
            &mut take,
        )?;
    } else {
        each_piece(src, m.data_offset, m.len, inflate::PIECE, &mut take)
            .map_err(|e| InflateError::Io(e.message))?;
    }
    if stopped {
        return Ok(());
    }
    let crc = crc.finalize();
    if crc != m.crc32 {
        return Err(MemberError::Crc {
            got: crc,
            recorded: m.crc32,
        });
    }
    Ok(())
}

/// The names in the central directory of a whole archive in `bytes`, if it reads (for
/// detection, over the first bytes of a file that fits in them).
pub fn central_names(bytes: &[u8]) -> Option<Vec<String>> {
    let dir = read_end_records(bytes).ok()?;
    Some(
        read_central(bytes, &dir)
            .ok()?
            .into_iter()
            .map(|c| c.member.name)
            .collect(),
    )
}

#[cfg(test)]
pub(crate) mod tests;
