//! The superblock: where it is (offset 0, or 512, 1024, 2048, … after a user block, as the
//! HDF5 library searches: `H5FD_locate_signature`, `H5FDint.c`, HDF5 1.14), its version, the
//! sizes of offsets and lengths, the end-of-file address and the root group.
//!
//! h5py 3.x writes version 0 unless a file is made with `libver='latest'` (versions 2 and 3,
//! with a checksum); version 1 differs from 0 only by the indexed-storage K. All four are read.

use crate::io::{check_sum, Cursor, Source};
use crate::model::{Finding, Hdf5Error, Severity, UNDEFINED};
use socair_plugin_api::ReadAt;

/// The format signature.
pub const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// The superblock's offset in a file whose first bytes are `head`, among those a reader of
/// `head` alone can see (0, 512, 1024, 2048): what a format's `detect` asks.
pub fn signature_in(head: &[u8]) -> Option<u64> {
    std::iter::once(0u64)
        .chain((9..12).map(|p| 1u64 << p))
        .find(|&at| {
            usize::try_from(at)
                .ok()
                .and_then(|at| head.get(at..at + 8))
                .is_some_and(|s| s == SIGNATURE)
        })
}

/// The superblock's offset where a file's head cannot show it: after a user block of 4096
/// bytes or more, at the next powers of two the HDF5 library probes (8 bytes read at each, no
/// more than 52 reads however long the file). The places are hinted first, so that a file in
/// object storage is asked for them in one batch, not one round trip after another.
pub fn signature_past_head<S: ReadAt + ?Sized>(src: &S) -> Option<u64> {
    let len = src.size();
    let places: Vec<u64> = std::iter::successors(Some(4096u64), |at| at.checked_mul(2))
        .take_while(|at| at.checked_add(8).is_some_and(|end| end <= len))
        .collect();
    let ranges: Vec<(u64, u64)> = places.iter().map(|&at| (at, 8)).collect();
    src.prefetch(&ranges);
    places.into_iter().find(|&at| {
        let mut signature = [0u8; 8];
        src.read_exact_at(at, &mut signature).is_ok() && &signature == SIGNATURE
    })
}

/// What the superblock says.
#[derive(Debug, Clone)]
pub struct Superblock {
    /// Its offset in the file (the user block's size).
    pub at: u64,
    /// Its version.
    pub version: u8,
    /// The root group's object header address.
    pub root: u64,
    /// The base address the writer recorded.
    pub base: u64,
    /// The end-of-file address the writer recorded (the end lies `eof - base` bytes after
    /// the superblock).
    pub eof: u64,
    /// The superblock extension's object header (versions 2 and 3), when there is one.
    pub extension: u64,
}

/// Finds and reads the superblock; findings for what lies outside the subset.
pub fn read<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    findings: &mut Vec<Finding>,
) -> Result<Superblock, Hdf5Error> {
    let mut at = 0u64;
    loop {
        if at.checked_add(8).is_none_or(|end| end > src.len) {
            return Err(Hdf5Error::new(
                "file",
                "no HDF5 signature at offset 0 or any power of two from 512 within the file",
            ));
        }
        if src.absolute(at, 8, "signature")? == SIGNATURE {
            break;
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
    let take = (src.len - at).min(128);
    let bytes = src.absolute(at, take, "superblock")?;
    let mut c = Cursor::with(&bytes, 8, 8, "superblock");
    c.skip(8)?;
    let version = c.u8()?;
    let (offsets, lengths, base, eof, root, note, extension) = match version {
        0 | 1 => {
            let free_space = c.u8()?;
            let root_stab = c.u8()?;
            c.skip(1)?;
            let shared = c.u8()?;
            let (offsets, lengths) = sizes(c.u8()?, c.u8()?)?;
            if free_space != 0 || root_stab != 0 || shared != 0 {
                return Err(Hdf5Error::new(
                    format!("superblock at byte {at}"),
                    format!("versions of its parts ({free_space}, {root_stab}, {shared}) are not the 0 every HDF5 writer stores"),
                ));
            }
            c.skip(1)?;
            let _leaf_k = c.u16()?;
            let _internal_k = c.u16()?;
            let _flags = c.u32()?;
            if version == 1 {
                c.skip(4)?;
            }
            let mut c = Cursor::with(c.rest(), offsets, lengths, "superblock");
            let base = c.addr()?;
            let _free = c.addr()?;
            let eof = c.addr()?;
            let driver = c.addr()?;
            // The root group's symbol table entry: link name offset, header address, cache.
            let _name = c.addr()?;
            let root = c.addr()?;
            let note = (driver != UNDEFINED).then_some("it names a driver information block (the family, multi or split drivers, which keep the file's data in other files): outside what h5py writes by default, not read");
            (offsets, lengths, base, eof, root, note, UNDEFINED)
        }
        2 | 3 => {
            let (offsets, lengths) = sizes(c.u8()?, c.u8()?)?;
            let _flags = c.u8()?;
            let fixed = 12 + 4 * usize::from(offsets);
            let mut c = Cursor::with(c.rest(), offsets, lengths, "superblock");
            let base = c.addr()?;
            let extension = c.addr()?;
            let eof = c.addr()?;
            let root = c.addr()?;
            c.skip(4)?;
            check_sum(
                bytes.get(..fixed + 4).unwrap_or_default(),
                &format!("superblock at byte {at}"),
            )?;
            (offsets, lengths, base, eof, root, None, extension)
        }
        v => {
            return Err(Hdf5Error::new(
                format!("superblock at byte {at}"),
                format!("version {v}, which no HDF5 library writes (0 to 3 exist)"),
            ))
        }
    };
    if let Some(reason) = note {
        findings.push(Finding {
            severity: Severity::Lead,
            place: format!("superblock at byte {at}"),
            reason: reason.into(),
            file: None,
        });
    }
    src.offsets = offsets;
    src.lengths = lengths;
    let sb = Superblock {
        at,
        version,
        root,
        base,
        eof,
        extension,
    };
    // The library takes the superblock's own offset as the base address whatever the field
    // says, moving the end-of-file address with it (`H5F__super_read`, `H5Fsuper.c`: "Check if
    // superblock address is different from base address and adjust base address and end of
    // file address if so"): the end lies `eof - base` bytes after the superblock. It refuses a
    // file shorter than that ("truncated file").
    src.base = at;
    let end = sb
        .eof
        .checked_sub(sb.base)
        .and_then(|rel| rel.checked_add(at))
        .unwrap_or(u64::MAX);
    if sb.eof == UNDEFINED || end > src.len {
        return Err(Hdf5Error::new(
            format!("superblock at byte {at}"),
            format!(
                "its end-of-file address is byte {end}, the file has {} bytes: truncated, and the HDF5 library refuses it",
                src.len
            ),
        ));
    }
    if end < src.len {
        trailing(src, end, findings)?;
    }
    Ok(sb)
}

/// Bytes after the end-of-file address: the HDF5 library never reads them (it refuses only a
/// file shorter than its end, `H5F__super_read`), so a few bytes of padding, as some writers
/// leave, are said by nothing. A zip archive among them (its end-of-central-directory record,
/// which zip readers look for from the end of the file) makes the file one `torch.load` and
/// other zip readers read as that archive: a FAIL. Anything else longer than padding is a
/// LEAD: bytes no HDF5 reader looks at, which another reader might.
fn trailing<S: ReadAt + ?Sized>(
    src: &mut Source<'_, S>,
    end: u64,
    findings: &mut Vec<Finding>,
) -> Result<(), Hdf5Error> {
    let len = src.len - end;
    // The end-of-central-directory record lies in the last 22 + 65,535 bytes of a zip.
    let look = len.min(22 + 65_535);
    let tail = src.absolute(src.len - look, look, "bytes after the end-of-file address")?;
    let place = format!("byte {end}");
    if tail.windows(4).any(|w| w == b"PK\x05\x06") {
        findings.push(Finding::new(Severity::Fail, place, format!("{len} bytes after the end-of-file address the superblock records hold a zip archive's end record: the HDF5 library never reads them, but zip readers (torch.load, zipfile) read this file as that archive")));
    } else if len > PADDING && tail.iter().any(|&b| b != 0) {
        findings.push(Finding::new(Severity::Lead, place, format!("{len} bytes after the end-of-file address the superblock records: no HDF5 reader reads them, but another reader might")));
    }
    Ok(())
}

/// Trailing bytes no longer than this, or all zero, are padding (a writer rounding the file
/// up, as the few bytes PyTables leaves), not content.
const PADDING: u64 = 8;

fn sizes(offsets: u8, lengths: u8) -> Result<(u8, u8), Hdf5Error> {
    let ok = |n: u8| matches!(n, 2 | 4 | 8);
    if ok(offsets) && ok(lengths) {
        Ok((offsets, lengths))
    } else {
        Err(Hdf5Error::new(
            "superblock",
            format!("sizes of offsets {offsets} and lengths {lengths}: the HDF5 library reads 2, 4 or 8"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_found_after_a_user_block() {
        let mut head = vec![0u8; 4096];
        assert_eq!(signature_in(&head), None);
        head[512..520].copy_from_slice(SIGNATURE);
        assert_eq!(signature_in(&head), Some(512));
        head[..8].copy_from_slice(SIGNATURE);
        assert_eq!(signature_in(&head), Some(0));
        assert_eq!(signature_in(&head[..4]), None);
        let mut file = vec![0u8; 16384 + 8];
        file[16384..].copy_from_slice(SIGNATURE);
        assert_eq!(signature_in(&file), None);
        assert_eq!(signature_past_head(&file[..]), Some(16384));
        assert_eq!(signature_past_head(&file[..16384 + 7]), None);
        file[8192..8200].copy_from_slice(SIGNATURE);
        assert_eq!(signature_past_head(&file[..]), Some(8192));
        file[10000..10008].copy_from_slice(SIGNATURE);
        file[8192..8200].fill(0);
        assert_eq!(
            signature_past_head(&file[..16384]),
            None,
            "only powers of two are probed"
        );
    }
}
