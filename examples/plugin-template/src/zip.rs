//! A strict reader for the zip archives `np.savez` and `np.savez_compressed` write.
//!
//! Python's `zipfile` (which NumPy uses) writes: local header, member data, local header,
//! member data, …, the central directory, the end of central directory record; nothing before,
//! between or after; every local header carrying a zip64 extra block (NumPy forces zip64) whose
//! sizes repeat the central directory's. This reader accepts that shape and refuses, naming the
//! place, anything that two zip readers could read differently or that this template does not
//! model:
//!
//! * no end record in the last 22 bytes (an archive comment, trailing bytes), a zip64 end
//!   record or locator (archives over 4 GiB or 65,535 members), several disks;
//! * a central directory that does not end where the end record starts, entries that do not
//!   fill it exactly, entry comments, encryption, data descriptors, unknown flag bits, methods
//!   other than stored (0) and deflate (8), a stored member whose two sizes differ;
//! * names that are empty, not UTF-8 (or non-ASCII without the UTF-8 flag), hold control
//!   characters or end with `/`, and names given twice;
//! * a local header that disagrees with its central entry (flags, method, CRC-32, sizes, name),
//!   extra fields that do not tile their space, a zip64 block whose sizes disagree;
//! * members that overlap, bytes before the first member, between two members or between the
//!   last member and the central directory.
//!
//! The CRC-32 of a stored member is checked by [`check_crc`], which reads the member's data;
//! a deflate member's cannot be without inflating it, which this template does not do.

use socair_plugin_api::ReadAt;

/// Why an archive is refused: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipError {
    /// The place: a record and its byte offset.
    pub place: String,
    /// What is wrong there.
    pub reason: String,
}

impl std::fmt::Display for ZipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.place, self.reason)
    }
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
    /// [`STORED`] or [`DEFLATE`].
    pub method: u16,
    /// The CRC-32 of its uncompressed data.
    pub crc32: u32,
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

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
const EOCD_LEN: u64 = 22;
const LOCATOR_LEN: u64 = 20;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: usize = 30;
/// The largest central directory read (np.savez writes about 60 bytes a member).
pub const MAX_CENTRAL_DIRECTORY: u64 = 16 << 20;
/// Flag bit 11: the name is UTF-8. The only flag accepted.
const FLAG_UTF8: u16 = 1 << 11;
/// The extended-timestamp extra block (harmless: times only).
const EXTRA_TIMESTAMP: u16 = 0x5455;
const EXTRA_ZIP64: u16 = 0x0001;

/// Little-endian fields from a buffer; a read past its end yields zeros and is caught by the
/// callers' length checks before any field is read.
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(src) = self
            .at
            .checked_add(N)
            .and_then(|end| self.bytes.get(self.at..end))
        {
            out.copy_from_slice(src);
        }
        self.at = self.at.saturating_add(N);
        out
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

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
                "{len} bytes at byte {offset} run past the end of the {}-byte file",
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

/// The central directory's place, as the end record gives it.
struct Directory {
    entries: u16,
    offset: u64,
    size: u64,
}

fn read_end_record(src: &(impl ReadAt + ?Sized)) -> Result<Directory, ZipError> {
    let file_len = src.size();
    let Some(at) = file_len.checked_sub(EOCD_LEN) else {
        return err(
            "end of file",
            format!("{file_len} bytes: too short for a zip end of central directory record"),
        );
    };
    let place = format!("end of central directory record (byte {at})");
    let buf = read_vec(src, at, EOCD_LEN, &place)?;
    let mut f = Fields { bytes: &buf, at: 0 };
    if f.u32() != EOCD_SIG {
        return err(
            "end of file",
            "no end of central directory record in the last 22 bytes (an archive comment or trailing bytes; np.savez writes neither)",
        );
    }
    let (disk, cd_disk, here, total) = (f.u16(), f.u16(), f.u16(), f.u16());
    let (size, offset, comment) = (f.u32(), f.u32(), f.u16());
    if comment != 0 {
        return err(
            place,
            format!("comment length {comment}, but the record ends the file"),
        );
    }
    if here == u16::MAX || total == u16::MAX || size == u32::MAX || offset == u32::MAX {
        return err(
            place,
            "saturated counts or offsets announce zip64 records: this reader reads archives under 4 GiB and 65,535 members",
        );
    }
    if let Some(loc) = at.checked_sub(LOCATOR_LEN) {
        let sig = read_vec(src, loc, 4, &place)?;
        if sig == ZIP64_LOCATOR_SIG.to_le_bytes() {
            return err(
                format!("zip64 end of central directory locator (byte {loc})"),
                "zip64 end records are not read by this reader (Python's zipfile would use them)",
            );
        }
    }
    if disk != 0 || cd_disk != 0 || here != total {
        return err(place, "an archive split over several disks");
    }
    let (offset, size) = (u64::from(offset), u64::from(size));
    if offset.checked_add(size) != Some(at) {
        return err(
            place,
            format!(
                "the central directory (bytes {offset}..+{size}) does not end where this record starts"
            ),
        );
    }
    if size > MAX_CENTRAL_DIRECTORY {
        return err(
            place,
            format!("central directory of {size} bytes is over {MAX_CENTRAL_DIRECTORY}"),
        );
    }
    Ok(Directory {
        entries: total,
        offset,
        size,
    })
}

fn decode_name(raw: &[u8], flags: u16, place: &str) -> Result<String, ZipError> {
    if flags & FLAG_UTF8 == 0 && !raw.is_ascii() {
        return err(
            place,
            "non-ASCII name without the UTF-8 flag (readers decode it as CP437 or UTF-8)",
        );
    }
    let Ok(name) = std::str::from_utf8(raw) else {
        return err(place, "name is not UTF-8");
    };
    if name.is_empty() {
        return err(place, "empty name");
    }
    if name.chars().any(char::is_control) {
        return err(place, format!("name {name:?} holds control characters"));
    }
    if name.ends_with('/') {
        return err(place, format!("{name:?} is a directory entry"));
    }
    Ok(name.to_owned())
}

/// Splits an extra field into `(id, body)` blocks that must tile it exactly.
fn extra_blocks<'a>(extra: &'a [u8], place: &str) -> Result<Vec<(u16, &'a [u8])>, ZipError> {
    let mut blocks = Vec::new();
    let mut rest = extra;
    while !rest.is_empty() {
        let (Some(id), Some(len)) = (rest.get(0..2), rest.get(2..4)) else {
            return err(place, "extra field ends inside a block header");
        };
        let id = u16::from_le_bytes([
            id.first().copied().unwrap_or(0),
            id.get(1).copied().unwrap_or(0),
        ]);
        let len = usize::from(u16::from_le_bytes([
            len.first().copied().unwrap_or(0),
            len.get(1).copied().unwrap_or(0),
        ]));
        let Some(body) = 4usize.checked_add(len).and_then(|end| rest.get(4..end)) else {
            return err(
                place,
                format!("extra block 0x{id:04x} of {len} bytes runs past the extra field"),
            );
        };
        if blocks.iter().any(|(seen, _)| *seen == id) {
            return err(place, format!("extra block 0x{id:04x} given twice"));
        }
        blocks.push((id, body));
        rest = rest.get(4usize.saturating_add(len)..).unwrap_or_default();
    }
    Ok(blocks)
}

struct Central {
    raw_name: Vec<u8>,
    flags: u16,
    member: Member,
}

fn read_central(src: &(impl ReadAt + ?Sized), dir: &Directory) -> Result<Vec<Central>, ZipError> {
    let cd = read_vec(src, dir.offset, dir.size, "central directory")?;
    let mut entries: Vec<Central> = Vec::with_capacity(usize::from(dir.entries));
    let mut at = 0usize;
    for index in 0..dir.entries {
        let file_at = dir.offset.saturating_add(at as u64);
        let place = format!("central directory entry {index} (byte {file_at})");
        let Some(fixed) = at.checked_add(CENTRAL_LEN).and_then(|end| cd.get(at..end)) else {
            return err(place, "the central directory ends inside this entry");
        };
        let mut f = Fields {
            bytes: fixed,
            at: 0,
        };
        if f.u32() != CENTRAL_SIG {
            return err(place, "not a central directory entry signature");
        }
        let (_made_by, _needed, flags, method) = (f.u16(), f.u16(), f.u16(), f.u16());
        let (_time, _date, crc32) = (f.u16(), f.u16(), f.u32());
        let (compressed, len) = (f.u32(), f.u32());
        let (name_len, extra_len, comment_len) = (f.u16(), f.u16(), f.u16());
        let (disk, _internal, _external, header_offset) = (f.u16(), f.u16(), f.u32(), f.u32());
        let var_start = at.saturating_add(CENTRAL_LEN);
        let name_end = var_start.saturating_add(usize::from(name_len));
        let extra_end = name_end.saturating_add(usize::from(extra_len));
        let end = extra_end.saturating_add(usize::from(comment_len));
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
        if comment_len != 0 {
            return err(place, "an entry comment (np.savez writes none)");
        }
        if flags & 1 != 0 {
            return err(place, "an encrypted member");
        }
        if flags & (1 << 3) != 0 {
            return err(place, "sizes in a data descriptor after the data (np.savez to a file writes them in the header)");
        }
        if flags & !FLAG_UTF8 != 0 {
            return err(
                place,
                format!("flag bits 0x{flags:04x}; only 0x0800 (UTF-8 name) is accepted"),
            );
        }
        if disk != 0 {
            return err(place, "a member on another disk");
        }
        if compressed == u32::MAX || len == u32::MAX || header_offset == u32::MAX {
            return err(
                place,
                "saturated sizes or offset announce zip64: this reader reads members under 4 GiB",
            );
        }
        for (id, _) in extra_blocks(extra, &place)? {
            if id == EXTRA_ZIP64 {
                return err(place, "a zip64 extra block in the central directory");
            }
            // Only timestamps may ride along: a Unicode Path block (0x7075), which newer
            // Python zipfile honours, would give the member another name than the one read
            // here.
            if id != EXTRA_TIMESTAMP {
                return err(
                    place,
                    format!("an extra block of type 0x{id:04x} in the central directory; only timestamps (0x5455) are accepted"),
                );
            }
        }
        let name = decode_name(raw_name, flags, &place)?;
        match method {
            STORED if compressed != len => {
                return err(
                    place,
                    format!(
                    "stored member whose sizes differ ({compressed} stored, {len} uncompressed)"
                ),
                )
            }
            STORED | DEFLATE => {}
            other => {
                return err(
                    place,
                    format!(
                        "compression method {other}; np.savez writes 0 (stored) and 8 (deflate)"
                    ),
                )
            }
        }
        if let Some(first) = entries.iter().find(|e| e.member.name == name) {
            return err(
                place,
                format!(
                    "name {name:?} already given to the member at byte {}",
                    first.member.header_offset
                ),
            );
        }
        entries.push(Central {
            raw_name: raw_name.to_vec(),
            flags,
            member: Member {
                name,
                header_offset: u64::from(header_offset),
                data_offset: 0,
                compressed_len: u64::from(compressed),
                len: u64::from(len),
                method,
                crc32,
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
                cd.len().saturating_sub(at),
                dir.entries
            ),
        );
    }
    Ok(entries)
}

/// Reads the local header of `c`, checks it against the central entry, and returns where the
/// data starts.
fn read_local(src: &(impl ReadAt + ?Sized), c: &Central) -> Result<u64, ZipError> {
    let m = &c.member;
    let place = m.place();
    let fixed = read_vec(src, m.header_offset, LOCAL_LEN as u64, &place)?;
    let mut f = Fields {
        bytes: &fixed,
        at: 0,
    };
    if f.u32() != LOCAL_SIG {
        return err(
            place,
            "no local header signature where the central directory points",
        );
    }
    let (_needed, flags, method) = (f.u16(), f.u16(), f.u16());
    let (_time, _date, crc32) = (f.u16(), f.u16(), f.u32());
    let (compressed, len) = (f.u32(), f.u32());
    let (name_len, extra_len) = (f.u16(), f.u16());
    let var = read_vec(
        src,
        m.header_offset.saturating_add(LOCAL_LEN as u64),
        u64::from(name_len).saturating_add(u64::from(extra_len)),
        &place,
    )?;
    let (raw_name, extra) = var.split_at(usize::from(name_len).min(var.len()));
    let mut disagree = Vec::new();
    if flags != c.flags {
        disagree.push(format!("flags 0x{flags:04x} (central 0x{:04x})", c.flags));
    }
    if method != m.method {
        disagree.push(format!("method {method} (central {})", m.method));
    }
    if crc32 != m.crc32 {
        disagree.push(format!("CRC-32 {crc32:08x} (central {:08x})", m.crc32));
    }
    if raw_name != c.raw_name.as_slice() {
        disagree.push(format!("name {:?}", String::from_utf8_lossy(raw_name)));
    }
    let blocks = extra_blocks(extra, &place)?;
    let zip64 = blocks
        .iter()
        .find(|(id, _)| *id == EXTRA_ZIP64)
        .map(|(_, b)| *b);
    let (local_len, local_compressed) = match zip64 {
        // NumPy forces zip64: both sizes saturated, the block holding both (uncompressed first).
        Some(body) => {
            if compressed != u32::MAX || len != u32::MAX || body.len() != 16 {
                return err(
                    place,
                    "a zip64 extra block that is not the two sizes behind saturated header fields",
                );
            }
            let mut z = Fields { bytes: body, at: 0 };
            (z.u64(), z.u64())
        }
        None => (u64::from(len), u64::from(compressed)),
    };
    if local_len != m.len || local_compressed != m.compressed_len {
        disagree.push(format!(
            "sizes {local_compressed} stored / {local_len} uncompressed (central {} / {})",
            m.compressed_len, m.len
        ));
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
    m.header_offset
        .checked_add(LOCAL_LEN as u64)
        .and_then(|o| o.checked_add(var.len() as u64))
        .ok_or_else(|| ZipError {
            place: place.clone(),
            reason: "offset overflows".into(),
        })
}

/// Reads and checks the archive's structure; members in central directory order.
pub fn read_archive(src: &(impl ReadAt + ?Sized)) -> Result<Vec<Member>, ZipError> {
    let dir = read_end_record(src)?;
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
        let data_offset = read_local(src, c)?;
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
    Ok(entries.into_iter().map(|c| c.member).collect())
}

/// The CRC-32 table (IEEE 802.3, reflected polynomial 0xEDB88320), built at compile time (an
/// index out of bounds here would fail the build, not a read).
#[allow(clippy::indexing_slicing)]
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// Continues a CRC-32 over `bytes` (start with 0).
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        let index = usize::from((c as u8) ^ b);
        c = CRC_TABLE.get(index).copied().unwrap_or(0) ^ (c >> 8);
    }
    !c
}

/// Checks a stored member's CRC-32 over its data, reading it in 1 MiB pieces.
pub fn check_crc(src: &(impl ReadAt + ?Sized), m: &Member) -> Result<(), ZipError> {
    const PIECE: u64 = 1 << 20;
    let mut buf = vec![0u8; usize::try_from(m.len.min(PIECE)).unwrap_or(0)];
    let mut crc = 0u32;
    let mut done = 0u64;
    while done < m.len {
        let n = (m.len.saturating_sub(done)).min(PIECE);
        let piece = buf
            .get_mut(..usize::try_from(n).unwrap_or(0))
            .unwrap_or_default();
        let at = m.data_offset.saturating_add(done);
        src.read_exact_at(at, piece).map_err(|e| ZipError {
            place: m.place(),
            reason: format!("reading its data at byte {at} failed: {e}"),
        })?;
        crc = crc32_update(crc, piece);
        done = done.saturating_add(n);
    }
    if crc != m.crc32 {
        return err(
            m.place(),
            format!(
                "CRC-32 of its data is {crc:08x}, the archive records {:08x}",
                m.crc32
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::panic
)]
pub(crate) mod tests {
    use super::*;

    /// A member for [`zip`]: name, data, method, and whether its local header carries the
    /// zip64 block NumPy forces.
    pub struct Part<'a> {
        pub name: &'a str,
        pub data: &'a [u8],
        pub method: u16,
        pub zip64: bool,
    }

    pub fn stored<'a>(name: &'a str, data: &'a [u8]) -> Part<'a> {
        Part {
            name,
            data,
            method: STORED,
            zip64: true,
        }
    }

    /// Writes an archive the way Python's zipfile does for np.savez.
    pub fn zip(parts: &[Part<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        for p in parts {
            let offset = out.len() as u32;
            let crc = crc32_update(0, p.data);
            let len = p.data.len() as u32;
            out.extend(LOCAL_SIG.to_le_bytes());
            out.extend([45, 0, 0, 0]);
            out.extend(p.method.to_le_bytes());
            out.extend([0, 0, 0x21, 0]);
            out.extend(crc.to_le_bytes());
            if p.zip64 {
                out.extend([0xff; 8]);
            } else {
                out.extend(len.to_le_bytes());
                out.extend(len.to_le_bytes());
            }
            out.extend((p.name.len() as u16).to_le_bytes());
            out.extend((if p.zip64 { 20u16 } else { 0 }).to_le_bytes());
            out.extend(p.name.as_bytes());
            if p.zip64 {
                out.extend([1, 0, 16, 0]);
                out.extend(u64::from(len).to_le_bytes());
                out.extend(u64::from(len).to_le_bytes());
            }
            out.extend(p.data);
            central.extend(CENTRAL_SIG.to_le_bytes());
            central.extend([45, 3, 45, 0, 0, 0]);
            central.extend(p.method.to_le_bytes());
            central.extend([0, 0, 0x21, 0]);
            central.extend(crc.to_le_bytes());
            central.extend(len.to_le_bytes());
            central.extend(len.to_le_bytes());
            central.extend((p.name.len() as u16).to_le_bytes());
            central.extend([0; 8]);
            central.extend(0x0180_0000u32.to_le_bytes());
            central.extend(offset.to_le_bytes());
            central.extend(p.name.as_bytes());
        }
        let cd_offset = out.len() as u32;
        out.extend(&central);
        out.extend(EOCD_SIG.to_le_bytes());
        out.extend([0; 4]);
        out.extend((parts.len() as u16).to_le_bytes());
        out.extend((parts.len() as u16).to_le_bytes());
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend([0; 2]);
        out
    }

    fn refused(bytes: &[u8]) -> ZipError {
        read_archive(bytes).unwrap_err()
    }

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32_update(0, b"123456789"), 0xCBF4_3926);
        assert_eq!(
            crc32_update(crc32_update(0, b"1234"), b"56789"),
            0xCBF4_3926
        );
        assert_eq!(crc32_update(0, b""), 0);
    }

    #[test]
    fn what_np_savez_writes() {
        let z = zip(&[stored("a.npy", b"first"), stored("b.npy", b"second!")]);
        let members = read_archive(z.as_slice()).unwrap();
        assert_eq!(members.len(), 2);
        assert_eq!(members[0].name, "a.npy");
        assert_eq!(
            (
                members[0].header_offset,
                members[0].data_offset,
                members[0].len
            ),
            (0, 55, 5)
        );
        assert_eq!(
            (
                members[1].header_offset,
                members[1].data_offset,
                members[1].len
            ),
            (60, 115, 7)
        );
        assert_eq!(&z[115..122], b"second!");
        for m in &members {
            check_crc(z.as_slice(), m).unwrap();
        }
        let plain = zip(&[Part {
            zip64: false,
            ..stored("a.npy", b"x")
        }]);
        assert_eq!(read_archive(plain.as_slice()).unwrap()[0].data_offset, 35);
    }

    #[test]
    fn crc_mismatch() {
        let mut z = zip(&[stored("a.npy", b"first")]);
        z[56] ^= 1;
        let m = &read_archive(z.as_slice()).unwrap()[0];
        let e = check_crc(z.as_slice(), m).unwrap_err();
        assert_eq!(e.place, "member \"a.npy\" (local header at byte 0)");
        assert!(e.reason.starts_with("CRC-32 of its data is"), "{e}");
    }

    #[test]
    fn duplicate_names() {
        let e = refused(&zip(&[stored("a.npy", b"1"), stored("a.npy", b"2")]));
        assert!(e.place.starts_with("central directory entry 1"), "{e}");
        assert!(
            e.reason.contains("already given to the member at byte 0"),
            "{e}"
        );
    }

    #[test]
    fn overlaps_and_gaps() {
        // Point the second central entry at the first local header.
        let mut z = zip(&[stored("a.npy", b"12345"), stored("b.npy", b"12345")]);
        let cd = 120usize;
        assert_eq!(&z[cd..cd + 4], &CENTRAL_SIG.to_le_bytes());
        let second = cd + 46 + 5;
        z[second + 42..second + 46].copy_from_slice(&0u32.to_le_bytes());
        let e = refused(&z);
        assert!(e.reason.starts_with("overlaps member \"a.npy\""), "{e}");

        // A byte before the first member.
        let mut z = vec![0u8];
        let inner = zip(&[stored("a.npy", b"x")]);
        z.extend(&inner);
        let e = refused(&z);
        assert_eq!(e.place, "end of central directory record (byte 108)");

        // A gap between members, shifting the second member and fixing its offset.
        let a = zip(&[stored("a.npy", b"x")]);
        let mut g = a[..56].to_vec();
        g.extend(b"GAP");
        let b = zip(&[stored("b.npy", b"y")]);
        g.extend(&b[..56]);
        let cd_at = g.len() as u32;
        g.extend(&a[56..56 + 51]);
        let mut second = b[56..56 + 51].to_vec();
        second[42..46].copy_from_slice(&59u32.to_le_bytes());
        g.extend(&second);
        g.extend(EOCD_SIG.to_le_bytes());
        g.extend([0, 0, 0, 0, 2, 0, 2, 0]);
        g.extend(102u32.to_le_bytes());
        g.extend(cd_at.to_le_bytes());
        g.extend([0, 0]);
        let e = refused(&g);
        assert_eq!(e.place, "member \"b.npy\" (local header at byte 59)");
        assert_eq!(e.reason, "bytes 56..59 before it belong to no member");
    }

    #[test]
    fn local_and_central_must_agree() {
        let good = zip(&[stored("a.npy", b"hello")]);
        let mut z = good.clone();
        z[14] ^= 0xff; // local CRC
        assert!(refused(&z).reason.contains("CRC-32"), "{:?}", refused(&z));
        let mut z = good.clone();
        z[30] = b'b'; // local name
        assert!(refused(&z).reason.contains("name \"b.npy\""));
        let mut z = good.clone();
        z[39] = 6; // zip64 uncompressed size
        assert!(
            refused(&z)
                .reason
                .contains("sizes 5 stored / 6 uncompressed"),
            "{:?}",
            refused(&z)
        );
        let mut z = good.clone();
        z[6] = 8; // local flags: data descriptor
        assert!(refused(&z).reason.contains("flags 0x0008"));
        let mut z = good.clone();
        z[0] = b'X';
        assert!(refused(&z).reason.contains("no local header signature"));
    }

    #[test]
    fn other_refusals() {
        let good = zip(&[stored("a.npy", b"hello")]);
        let cd = 60usize;
        let mut z = good.clone();
        z.push(0);
        assert_eq!(refused(&z).place, "end of file");
        let mut z = good.clone();
        z[cd + 8] = 1; // encrypted
        assert_eq!(refused(&z).reason, "an encrypted member");
        let mut z = good.clone();
        z[cd + 10] = 12; // bzip2
        assert!(refused(&z).reason.starts_with("compression method 12"));
        let mut z = good.clone();
        z[cd + 46] = 0xC3; // non-ASCII name, no UTF-8 flag
        assert!(refused(&z).reason.contains("without the UTF-8 flag"));
        let mut z = good.clone();
        let n = z.len();
        z[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(refused(&z).reason.contains("zip64"));
        assert_eq!(refused(b"PK\x05\x06").place, "end of file");
        let deflated = zip(&[Part {
            method: DEFLATE,
            ..stored("a.npy", b"not really deflate")
        }]);
        assert_eq!(
            read_archive(deflated.as_slice()).unwrap()[0].method,
            DEFLATE
        );
    }
}
