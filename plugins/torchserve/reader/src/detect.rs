//! Which files this reader claims: zips whose central directory names `MAR-INF/MANIFEST.json`,
//! the one record every archive torch-model-archiver writes holds (model_archiver 0.12.0
//! `model_packaging_utils.archive`: the members, then `MAR-INF/MANIFEST.json` last) and the
//! one TorchServe reads first (`ModelArchive.load`).
//!
//! The host asks `detect` with the first 4096 bytes: there the manifest is seen only in a
//! small archive (the whole file in the head) or one whose manifest comes early. Every other
//! `.mar` is claimed past the head (`detect_past_head`, which reads the end record and the
//! central directory), which the host asks only when no reader claims the file by its head.
//! A zip torch-zip claims (a torch record name among its first local headers) is left to it.

use socair_plugin_api::ReadAt;
use socair_plugin_kit::zip::claims::{
    central_header_names, local_header_names, pt2_claims, pt2_record_name, torch_claims,
    torch_record_name,
};
use socair_plugin_kit::zip::{Fields, EOCD_MAGIC, LOCAL_MAGIC};

/// The manifest's record name.
pub const MANIFEST: &str = "MAR-INF/MANIFEST.json";

/// The most central-directory bytes `detect_past_head` reads.
pub const MAX_CENTRAL_READ: u64 = 16 << 20;

fn torch_zip_claims(head: &[u8], file_len: u64) -> bool {
    torch_claims(head, file_len, |h| {
        central_header_names(h).any(torch_record_name)
    }) || pt2_claims(head, file_len, |h| {
        central_header_names(h).any(pt2_record_name)
    })
}

/// Whether the head shows a TorchServe archive: a zip whose local headers in the head, or
/// (the whole file in the head) whose central directory, name the manifest.
pub fn looks_like_mar(head: &[u8], file_len: u64) -> bool {
    if !head.starts_with(&LOCAL_MAGIC) || torch_zip_claims(head, file_len) {
        return false;
    }
    let manifest = MANIFEST.as_bytes();
    local_header_names(head, 0).is_some_and(|names| names.contains(&manifest))
        || (file_len <= head.len() as u64 && central_header_names(head).any(|n| n == manifest))
}

/// Whether the file is a zip whose central directory names the manifest: the end record in
/// the last 64 KiB + 22 bytes, then at most [`MAX_CENTRAL_READ`] bytes of central directory.
pub fn manifest_in_central_directory(src: &(impl ReadAt + ?Sized)) -> bool {
    let size = src.size();
    let mut first = [0u8; 4];
    if size < 22 || src.read_exact_at(0, &mut first).is_err() || first != LOCAL_MAGIC {
        return false;
    }
    let tail_len = size.min(22 + 0xffff);
    let mut tail = vec![0u8; tail_len as usize];
    if src.read_exact_at(size - tail_len, &mut tail).is_err() {
        return false;
    }
    let Some(eocd) = tail
        .windows(4)
        .rposition(|w| w == EOCD_MAGIC)
        .filter(|&p| p + 22 <= tail.len())
    else {
        return false;
    };
    let mut f = Fields::at(&tail, eocd + 12);
    let cd_size = u64::from(f.u32());
    let cd_offset = u64::from(f.u32());
    // A zip64 archive saturates these; its central directory is then looked for just before
    // the end record's locators, which a .mar of that size has too.
    let (cd_offset, cd_size) = if cd_offset == u64::from(u32::MAX) || cd_size == u64::from(u32::MAX)
    {
        let end = size - tail_len + eocd as u64;
        let len = end.min(MAX_CENTRAL_READ);
        (end - len, len)
    } else {
        (cd_offset, cd_size)
    };
    if cd_size > MAX_CENTRAL_READ || cd_offset.saturating_add(cd_size) > size {
        return false;
    }
    let mut cd = vec![0u8; cd_size as usize];
    if src.read_exact_at(cd_offset, &mut cd).is_err() {
        return false;
    }
    let manifest = MANIFEST.as_bytes();
    central_header_names(&cd).any(|n| n == manifest) && !torch_zip_claims(&head_of(src), size)
}

fn head_of(src: &(impl ReadAt + ?Sized)) -> Vec<u8> {
    let mut head = vec![0u8; src.size().min(4096) as usize];
    match src.read_exact_at(0, &mut head) {
        Ok(()) => head,
        Err(_) => Vec::new(),
    }
}
