//! Virtual datasets (layout class 3, libhdf5 1.10 to 2.0): the layout message names a global
//! heap object (`H5O__layout_decode`, `H5Olayout.c`) that lists the mappings
//! (`H5D__virtual_load_layout` / `H5O__layout_decode`, encoding version 0: a count as wide as
//! a length, then per mapping the source file's name and the source dataset's name, both
//! NUL-terminated, the source selection and the virtual selection, `H5S_SELECT_DESERIALIZE`,
//! `H5Sselect.c`; a checksum over them all; encoding version 1 adds a flags byte to each
//! mapping, below). The library opens each source file by its name
//! (`H5D__virtual_open_source_dset` through `H5F_prefix_open_file`, `H5Fint.c`: the name
//! as given, then the virtual dataset's own directory, then the working directory); `.` is
//! the virtual dataset's own file. Only the names are needed to judge what is opened; the
//! selections are walked over, bounded, not applied.

use crate::io::{lookup3, Cursor};
use crate::model::Hdf5Error;

/// Mappings one virtual dataset may list here: far more than a writer makes, each at least a
/// few dozen bytes of a heap object.
const MAX_MAPPINGS: u64 = 1 << 20;

/// A version 1 mapping's flag: its source is this file (named `.`), no name stored.
const SOURCE_IS_THIS_FILE: u8 = 0x04;

/// `H5S_MAX_RANK`.
const MAX_RANK: u32 = 32;

/// One mapping: the source file's name and the source dataset's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The source file, as named (`.`: this file).
    pub file: String,
    /// The source dataset's path there.
    pub dataset: String,
}

/// The mappings the global heap object `block` lists, its checksum checked.
pub fn mappings(block: &[u8], offsets: u8, lengths: u8) -> Result<Vec<Mapping>, Hdf5Error> {
    let what = "virtual dataset mappings";
    let Some(split) = block.len().checked_sub(4) else {
        return Err(Hdf5Error::new(what, "too short to hold its checksum"));
    };
    let (body, sum) = block.split_at(split);
    let stored = u32::from_le_bytes([sum[0], sum[1], sum[2], sum[3]]);
    if lookup3(body) != stored {
        return Err(Hdf5Error::new(
            what,
            "its checksum does not match its bytes: the HDF5 library refuses it",
        ));
    }
    let mut c = Cursor::with(body, offsets, lengths, what);
    let version = c.u8()?;
    if version > 1 {
        return Err(Hdf5Error::new(
            what,
            format!("encoding version {version}: HDF5 2.0 writes 0 and 1"),
        ));
    }
    let count = c.length()?;
    if count > MAX_MAPPINGS || count > body.len() as u64 {
        return Err(Hdf5Error::new(
            what,
            format!("{count} mappings in {} bytes", body.len()),
        ));
    }
    let mut out = Vec::new();
    for _ in 0..count {
        // Version 1 (what HDF5 2.0 writes when a mapping's source is this file, as h5py 3.16
        // wrote fixtures/hdf5/features/virtual-compound.h5): a flags byte before each mapping,
        // whose bit 2 says the source is this file, its name not stored. Other bits (names
        // shared between mappings) are not read here.
        let flags = if version == 1 { c.u8()? } else { 0 };
        if flags & !SOURCE_IS_THIS_FILE != 0 {
            return Err(Hdf5Error::new(
                what,
                format!(
                    "a mapping of flags {flags:#x}: socair reads flag {SOURCE_IS_THIS_FILE:#x}"
                ),
            ));
        }
        let file = if flags & SOURCE_IS_THIS_FILE != 0 {
            ".".to_owned()
        } else {
            name(&mut c)?
        };
        let dataset = name(&mut c)?;
        skip_selection(&mut c)?;
        skip_selection(&mut c)?;
        out.push(Mapping { file, dataset });
    }
    Ok(out)
}

/// A NUL-terminated name.
fn name(c: &mut Cursor<'_>) -> Result<String, Hdf5Error> {
    let rest = c.rest();
    let end = rest.iter().position(|&b| b == 0).ok_or_else(|| c.short())?;
    let s = String::from_utf8_lossy(rest.get(..end).unwrap_or_default()).into_owned();
    c.skip(end + 1)?;
    Ok(s)
}

/// `n` values of `size` bytes, skipped, their count checked against what is left.
fn skip_values(c: &mut Cursor<'_>, n: u64, size: usize) -> Result<(), Hdf5Error> {
    let bytes = n
        .checked_mul(size as u64)
        .filter(|&b| b <= c.left() as u64)
        .ok_or_else(|| c.short())?;
    c.skip(bytes as usize)
}

/// A rank, within `H5S_MAX_RANK`.
fn rank(c: &mut Cursor<'_>) -> Result<u64, Hdf5Error> {
    let r = c.u32()?;
    if r == 0 || r > MAX_RANK {
        return Err(Hdf5Error::new(
            "virtual dataset selection",
            format!("rank {r}: HDF5 allows 1 to {MAX_RANK}"),
        ));
    }
    Ok(u64::from(r))
}

/// An encoded selection (`H5S_select_deserialize`: its type, then as `H5S__none_deserialize`,
/// `H5S__point_deserialize`, `H5S__hyper_deserialize`, `H5S__all_deserialize` read it).
fn skip_selection(c: &mut Cursor<'_>) -> Result<(), Hdf5Error> {
    let kind = c.u32()?;
    let version = c.u32()?;
    let bad = |c: &Cursor<'_>| {
        let _ = c;
        Hdf5Error::new(
            "virtual dataset selection",
            format!("selection type {kind} of version {version}"),
        )
    };
    match (kind, version) {
        // None and all: a reserved word and a length of 0.
        (0 | 3, 1) => c.skip(8),
        // Points, version 1: reserved, length, rank, count, 4-byte coordinates.
        (1, 1) => {
            c.skip(8)?;
            let r = rank(c)?;
            let n = u64::from(c.u32()?);
            skip_values(c, n.saturating_mul(r), 4)
        }
        // Points, version 2: the width of each value, rank, count, coordinates.
        (1, 2) => {
            let size = usize::from(c.u8()?);
            if !matches!(size, 2 | 4 | 8) {
                return Err(bad(c));
            }
            let r = rank(c)?;
            let n = c.uint(size)?;
            skip_values(c, n.saturating_mul(r), size)
        }
        // Hyperslabs, version 1: reserved, length, rank, blocks of 4-byte start and end.
        (2, 1) => {
            c.skip(8)?;
            let r = rank(c)?;
            let n = u64::from(c.u32()?);
            skip_values(c, n.saturating_mul(2 * r), 4)
        }
        // Version 2: flags, length, rank; regular (start, stride, count, block: 8 bytes each)
        // or a count of 8 bytes and blocks of 8-byte starts and ends.
        (2, 2) => {
            let flags = c.u8()?;
            c.skip(4)?;
            let r = rank(c)?;
            if flags & 1 != 0 {
                skip_values(c, 4 * r, 8)
            } else {
                let n = c.u64()?;
                skip_values(c, n.saturating_mul(2 * r), 8)
            }
        }
        // Version 3: flags, the width of each value, rank; regular or irregular as above.
        (2, 3) => {
            let flags = c.u8()?;
            let size = usize::from(c.u8()?);
            if !matches!(size, 2 | 4 | 8) {
                return Err(bad(c));
            }
            let r = rank(c)?;
            if flags & 1 != 0 {
                skip_values(c, 4 * r, size)
            } else {
                let n = c.uint(size)?;
                skip_values(c, n.saturating_mul(2 * r), size)
            }
        }
        _ => Err(bad(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(mut body: Vec<u8>) -> Vec<u8> {
        let sum = lookup3(&body);
        body.extend_from_slice(&sum.to_le_bytes());
        body
    }

    #[test]
    fn the_mappings_h5py_writes_are_read() {
        // What h5py 3.16 (HDF5 2.0) wrote for `VirtualSource("src.h5", "data", shape=(10,))`
        // mapped onto all ten elements: the source selection "all", the virtual one a regular
        // hyperslab of version 3 with 2-byte values.
        let mut body = vec![0];
        body.extend_from_slice(&1u64.to_le_bytes());
        body.extend_from_slice(b"src.h5\0data\0");
        body.extend_from_slice(&[3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        body.extend_from_slice(&[2, 0, 0, 0, 3, 0, 0, 0, 1, 2, 1, 0, 0, 0]);
        body.extend_from_slice(&[0, 0, 1, 0, 1, 0, 10, 0]);
        let block = sealed(body);
        assert_eq!(
            mappings(&block, 8, 8).unwrap(),
            [Mapping {
                file: "src.h5".into(),
                dataset: "data".into()
            }]
        );
        let mut altered = block.clone();
        altered[10] = b'x';
        assert!(mappings(&altered, 8, 8).is_err());
        assert!(mappings(&block[..20], 8, 8).is_err());
    }

    #[test]
    fn version_1_marks_a_source_in_this_file() {
        // h5py 3.16 (HDF5 2.0) for sources `a.h5:d`, `.:x`: flags 0, then flags 4 and no name.
        let mut body = vec![1];
        body.extend_from_slice(&2u64.to_le_bytes());
        for (flags, name) in [(0u8, b"a.h5\0d\0".as_slice()), (4, b"x\0")] {
            body.push(flags);
            body.extend_from_slice(name);
            body.extend_from_slice(&[3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            body.extend_from_slice(&[3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        }
        let got = mappings(&sealed(body.clone()), 8, 8).unwrap();
        assert_eq!(got[0].file, "a.h5");
        assert_eq!(got[1].file, ".");
        assert_eq!(got[1].dataset, "x");
        body[9] = 1; // a shared-name flag: not read
        assert!(mappings(&sealed(body), 8, 8).is_err());
    }

    #[test]
    fn counts_past_the_bytes_are_refused() {
        let mut body = vec![0];
        body.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(mappings(&sealed(body), 8, 8).is_err());
        let mut body = vec![0];
        body.extend_from_slice(&1u64.to_le_bytes());
        body.extend_from_slice(b"a\0b\0");
        body.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        body.extend_from_slice(&[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(mappings(&sealed(body), 8, 8).is_err());
    }
}
