//! Which files this plugin's `.npy` and `.npz` readers claim, from their first bytes. The
//! archive plugin (`plugins/archive`) leaves exactly these zips to this plugin.

/// Whether `head` starts with the `.npy` magic. Any version is claimed, so that `open` can say
/// what is wrong with one it does not read.
pub fn looks_like_npy(head: &[u8]) -> bool {
    crate::npy::has_magic(head)
}

/// Whether `head` starts with a zip local header whose member name ends in `.npy`, as
/// `np.savez` writes. A torch checkpoint (its first member is `<name>/data.pkl`, or `.data/…`)
/// or any other zip is not claimed: the host refuses to choose when two plugins claim a file,
/// so this rule is written once, in the kit, where the archive plugin's complement reads it.
pub fn looks_like_npz(head: &[u8]) -> bool {
    socair_plugin_kit::zip::claims::npz_claims(head)
}
