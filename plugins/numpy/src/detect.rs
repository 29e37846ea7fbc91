//! Which files this plugin's `.npy` and `.npz` readers claim, from their first bytes. The
//! archive plugin (`plugins/archive`) leaves exactly these zips to this plugin.

/// Whether `head` starts with the `.npy` magic. Any version is claimed, so that `open` can say
/// what is wrong with one it does not read.
pub fn looks_like_npy(head: &[u8]) -> bool {
    crate::npy::has_magic(head)
}

/// Whether `head` starts with a zip local header whose member name ends in `.npy`, as
/// `np.savez` writes. A torch checkpoint (its first member is `<name>/data.pkl`, or `.data/…`)
/// or any other zip is not claimed: the host refuses to choose when two plugins claim a file.
pub fn looks_like_npz(head: &[u8]) -> bool {
    let (Some(b"PK\x03\x04"), Some(&[n0, n1])) = (head.get(..4), head.get(26..28)) else {
        return false;
    };
    let name_len = usize::from(u16::from_le_bytes([n0, n1]));
    30usize
        .checked_add(name_len)
        .and_then(|end| head.get(30..end))
        .is_some_and(|name| name.ends_with(b".npy"))
}
