//! External raw storage (the External Data Files message, `H5Oefl.c`; read by
//! `H5D__efl_read`, `H5Defl.c`, libhdf5 1.14 and 2.0): a contiguous dataset whose bytes, in
//! row-major order, are the concatenation of slots, each `size` bytes at `offset` of a named
//! file. The library opens each name as it is (an absolute path, or one relative to the
//! process's working directory) unless a prefix is set (`H5Pset_efile_prefix`, the
//! `HDF5_EXTFILE_PREFIX` environment variable; `${ORIGIN}` is the HDF5 file's directory:
//! `H5D__build_file_prefix`, `H5Dint.c`). socair names the bytes as ranges of that file, so a
//! host that scans the file's directory fingerprints them there when the file is one of its
//! own; the reader itself opens nothing.

/// One slot as the message and its local heap give it: the file's name, and the slot's
/// offset in it and size (`None`: `H5O_EFL_UNLIMITED`, to the end of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The file's name.
    pub name: String,
    /// Where the slot starts in that file.
    pub offset: u64,
    /// Its size, or none for a slot that runs to the end of the file.
    pub size: Option<u64>,
}

/// The file and its `(offset, len)` ranges holding the `bytes` bytes of a dataset stored in
/// `slots`, in order; or why they cannot be named so (several files, too little room).
pub fn ranges(slots: &[Slot], bytes: u64) -> Result<(String, Vec<(u64, u64)>), String> {
    let Some(first) = slots.first() else {
        return Err("an External Data Files message of no slot".into());
    };
    if slots.iter().any(|s| s.name != first.name) {
        return Err("its bytes are spread over several external files: not read".into());
    }
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut left = bytes;
    for s in slots {
        if left == 0 {
            break;
        }
        let take = s.size.map_or(left, |n| n.min(left));
        if take == 0 {
            continue;
        }
        // Adjacent slots of one file make one range.
        match out.last_mut() {
            Some((at, len)) if at.checked_add(*len) == Some(s.offset) => *len += take,
            _ => out.push((s.offset, take)),
        }
        s.offset
            .checked_add(take)
            .ok_or("a slot past the largest offset")?;
        left -= take;
    }
    if left > 0 {
        return Err(format!(
            "its external slots hold {} bytes for {bytes} bytes of elements: the HDF5 library refuses to read it",
            bytes - left
        ));
    }
    Ok((first.name.clone(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(name: &str, offset: u64, size: Option<u64>) -> Slot {
        Slot {
            name: name.into(),
            offset,
            size,
        }
    }

    #[test]
    fn slots_of_one_file_become_its_ranges() {
        let s = [slot("raw.bin", 0, Some(16)), slot("raw.bin", 32, Some(16))];
        assert_eq!(
            ranges(&s, 32).unwrap(),
            ("raw.bin".into(), vec![(0, 16), (32, 16)])
        );
        let s = [slot("a", 0, Some(16)), slot("a", 16, None)];
        assert_eq!(ranges(&s, 40).unwrap(), ("a".into(), vec![(0, 40)]));
        assert_eq!(ranges(&s, 8).unwrap(), ("a".into(), vec![(0, 8)]));
    }

    #[test]
    fn several_files_or_too_little_room_are_refused() {
        assert!(ranges(&[slot("a", 0, Some(4)), slot("b", 0, Some(4))], 8).is_err());
        assert!(ranges(&[slot("a", 0, Some(4))], 8).is_err());
        assert!(ranges(&[slot("a", u64::MAX, Some(4))], 4).is_err());
        assert!(ranges(&[], 0).is_err());
    }
}
