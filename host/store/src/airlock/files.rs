//! The store's files on a disk: copies hashed as they pass (and made durable), the digest of
//! a file or model directory, directory syncs after a rename, and the rename that stages a
//! scratch directory when another process may stage the same bytes at the same moment.

use crate::airlock::error::{unusable, StoreError};
use crate::base::digest::hex;
use crate::base::hashpipe::HashPipe;
use crate::base::progress::Progress;
use crate::read::modeldir::{self, PathDigestError};
use crate::read::source::is_remote;
use std::io::{Read, Write};
use std::path::Path;

/// Copies `from` to a new file `to`, hashing while copying, and fsyncs it. Returns the hex
/// sha256.
pub fn copy_hashing(from: &Path, to: &Path) -> Result<String, StoreError> {
    copy_hashing_with(from, to, true)
}

/// [`copy_hashing`], with the fsync only when `durable`: a scratch copy that a crash would
/// discard anyway (the conversion's work copy) need not wait for the disk.
pub fn copy_hashing_with(from: &Path, to: &Path, durable: bool) -> Result<String, StoreError> {
    if is_remote(from) {
        return crate::airlock::bucket::download_hashing(from, to, durable);
    }
    let mut src = std::fs::File::open(from).map_err(|e| unusable(from, e))?;
    if !src.metadata().map_err(|e| unusable(from, e))?.is_file() {
        return Err(StoreError::Refused(format!(
            "{}: not a regular file",
            from.display()
        )));
    }
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| unusable(to, e))?;
    // The copy and its hash run side by side: each buffer, once written, is hashed on a
    // second core while the next one is read.
    const CHUNK: usize = 1 << 20;
    let pipe = HashPipe::new(CHUNK);
    let size = src.metadata().map_or(0, |m| m.len());
    let progress = Progress::bytes(size, "copying");
    loop {
        let mut buf = pipe.buffer();
        let n = (&mut src)
            .take(CHUNK as u64)
            .read_to_end(&mut buf)
            .map_err(|e| unusable(from, e))?;
        if n == 0 {
            break;
        }
        progress.add(n as u64);
        dst.write_all(&buf).map_err(|e| unusable(to, e))?;
        pipe.send(buf);
    }
    let digest = pipe.finish().map_err(|e| unusable(from, e))?;
    if durable {
        dst.sync_all().map_err(|e| unusable(to, e))?;
    }
    Ok(hex(&digest))
}

/// A file's sha256, or a directory's `socair.modeldir/v1` digest, as a store error.
pub fn digest_of_path(path: &Path) -> Result<String, StoreError> {
    modeldir::digest_of_path(path).map_err(|e| match e {
        PathDigestError::Refused(why) => StoreError::Refused(why),
        PathDigestError::Unusable(why) => StoreError::Unusable(why),
    })
}

/// fsyncs the directory `dir` (its entries), so that a rename into it survives a power cut;
/// best effort, as where a file system cannot sync a directory.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Renames the scratch directory `from` to `incoming/<sha>/` (`to`). Two processes that
/// stage the same bytes at once both get past their "already staged?" check; the later
/// rename then fails on the earlier one's directory (ENOTEMPTY or EEXIST). That is not an
/// error: the bytes are staged, so the scratch copy is dropped and `false` says so.
pub(crate) fn rename_unless_staged(from: &Path, to: &Path) -> Result<bool, StoreError> {
    match std::fs::rename(from, to) {
        Ok(()) => Ok(true),
        Err(e) => {
            let _ = std::fs::remove_dir_all(from);
            if to.is_dir() {
                Ok(false)
            } else {
                Err(unusable(to, e))
            }
        }
    }
}
