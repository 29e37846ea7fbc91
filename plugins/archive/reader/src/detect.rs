//! Which files this plugin claims: zips that neither the torch-zip, numpy nor keras plugin
//! claims, and 7z archives.
//!
//! The host refuses to choose when readers of two different plugins claim one file, so this
//! rule is the complement of theirs, mirrored from their `detect` code (a plugin's tests cannot
//! link torch-zip beside it, as both export the same root-module symbol: the end-to-end test
//! `tests/tests/archive.rs` runs the built `socair` over every committed zip and checks that no
//! file is claimed twice and torch files are still read by torch-zip):
//!
//! * torch-zip (`checkpoint::looks_like_torch_zip`) claims a file that starts with `PYTORCH1`,
//!   or with a zip local header where some local header visible in the first bytes names a
//!   record torch's reader looks for, or whose first name runs past those bytes; when the whole
//!   file is in the first bytes, a torch record in its central directory counts too;
//! * torch-zip's `.pt2` reader (`pt2::looks_like_pt2`) claims a zip where some local header
//!   visible in the first bytes names a record only a `torch.export` PT2 archive holds
//!   (`data/weights/…`, `archive_format`, …), or whose central directory does when the whole
//!   file is in them;
//! * numpy (`looks_like_npz`) claims a zip whose first local header's name ends in `.npy`, as
//!   `np.savez` writes;
//! * keras (`socair_plugin_kit::zip::claims::keras_claims`) claims a zip whose first local
//!   headers name two of `metadata.json`, `config.json` and `model.weights.h5` (a `.keras`
//!   archive), unless torch-zip's rule as widened here claims it (then neither does);
//! * torch-zip's legacy reader (`legacy::looks_like_pickle`) claims files whose first bytes
//!   run as a pickle, but never one that starts with a zip local header's signature, as
//!   `torch.load` (`_is_zipfile`) sends those to its zip reader: so no zip here is its.
//!
//! Where torch-zip reads the central directory with its own parser, this rule looks for a torch
//! record name after **every** central-header signature in the bytes, which finds every name
//! torch-zip's parser can find and perhaps more: a doubtful file is left unclaimed (the host
//! then reports that no plugin read it) rather than claimed by two plugins.
//!
//! Both rules are written once, in the plugin kit (`socair_plugin_kit::zip::claims`), which
//! torch-zip and numpy read too: this file only says which parts make this plugin's claim.

use socair_plugin_kit::zip::claims::{
    central_header_names, keras_claims, npz_claims, pt2_record_name, torch_record_name,
};

/// A zip local file header's signature.
pub const LOCAL_SIG: &[u8; 4] = &socair_plugin_kit::zip::LOCAL_MAGIC;
/// The 7z signature.
pub const SEVEN_Z_MAGIC: &[u8; 6] = b"7z\xBC\xAF\x27\x1C";

/// What a file is, judged from its first bytes (`head`) and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// A zip this plugin reads.
    Zip,
    /// A 7z archive.
    SevenZ,
    /// Not this plugin's: not an archive, or another plugin's zip.
    No,
}

/// Whether this plugin claims the file whose first bytes are `head` (up to 4096) of `file_len`.
pub fn claim(head: &[u8], file_len: u64) -> Claim {
    if head.starts_with(SEVEN_Z_MAGIC) {
        return Claim::SevenZ;
    }
    if !head.starts_with(LOCAL_SIG)
        || torch_claims(head, file_len)
        || pt2_claims(head, file_len)
        || numpy_claims(head)
        || keras_claims(head)
    {
        return Claim::No;
    }
    Claim::Zip
}

/// Whether a member's bytes (all of them) are a zip this plugin opens when nested: the same
/// rule as for a file.
pub fn claims_member(bytes: &[u8]) -> Claim {
    claim(bytes, bytes.len() as u64)
}

/// torch-zip's rule (`checkpoint::looks_like_torch_zip`), with the whole-file case widened to
/// every central-header signature.
pub fn torch_claims(head: &[u8], file_len: u64) -> bool {
    socair_plugin_kit::zip::claims::torch_claims(head, file_len, |head| {
        central_header_names(head).any(torch_record_name)
    })
}

/// torch-zip's `.pt2` rule (`pt2::looks_like_pt2`), with the whole-file case widened to every
/// central-header signature.
pub fn pt2_claims(head: &[u8], file_len: u64) -> bool {
    socair_plugin_kit::zip::claims::pt2_claims(head, file_len, |head| {
        central_header_names(head).any(pt2_record_name)
    })
}

/// numpy's rule (`looks_like_npz`): the first local header's name ends in `.npy`.
pub fn numpy_claims(head: &[u8]) -> bool {
    npz_claims(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(name: &[u8]) -> Vec<u8> {
        let mut h = LOCAL_SIG.to_vec();
        h.extend_from_slice(&[0; 22]);
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(name);
        h
    }

    #[test]
    fn claims_only_other_zips_and_7z() {
        let plain = local(b"model/payload.pkl");
        assert_eq!(claim(&plain, 1 << 20), Claim::Zip);
        assert_eq!(claim(&local(b"archive/data.pkl"), 1 << 20), Claim::No);
        assert_eq!(claim(&local(b"ARCHIVE/Data/0"), 1 << 20), Claim::No);
        assert_eq!(claim(&local(b"w.npy"), 1 << 20), Claim::No);
        assert_eq!(claim(b"PYTORCH1", 8), Claim::No);
        let mut keras = local(b"metadata.json");
        keras.extend(local(b"config.json"));
        assert_eq!(claim(&keras, 1 << 20), Claim::No);
        assert_eq!(claim(&local(b"config.json"), 1 << 20), Claim::Zip);
        assert_eq!(claim(b"7z\xBC\xAF\x27\x1C\x00\x04", 32), Claim::SevenZ);
        assert_eq!(claim(b"\x80\x02}q\x00.", 6), Claim::No);
        // The first name runs past the head: torch-zip claims it.
        assert_eq!(claim(&plain[..35], 1 << 20), Claim::No);
        // A torch record in a later local header.
        let mut two = plain.clone();
        two.extend(local(b"x/version"));
        assert_eq!(claim(&two, 1 << 20), Claim::No);
        // A zip whose first bytes would also run as a protocol-0 pickle (`P`, PERSID, then a
        // line that runs on) is still a zip: torch.load reads it as one, so it is this
        // plugin's when torch's records are absent, whatever fills it.
        for fill in 0..=255u8 {
            let mut head = local(b"zeros.bin");
            head.resize(4096, fill);
            assert_eq!(claim(&head, 1 << 30), Claim::Zip, "{fill}");
        }
    }
}
