//! A prefix in object storage read as a model directory (`socair scan s3://bucket/model/`, and
//! a model directory staged in a store on object storage): the objects under it are its
//! files, each named by its key below the prefix, sorted in byte order as a local directory's
//! listing is ([`crate::read::modeldir::list_files`]). Object storage has no links, devices
//! or empty folders: every key is a regular file.

use crate::base::cloud::{self, CloudError, Location};
use crate::read::modeldir::DirFile;
use std::path::PathBuf;

/// The most objects a prefix read as a model directory may hold: a listing is read whole
/// before anything else, so it is bounded (a Hugging Face repository holds far fewer).
pub const MAX_OBJECTS: usize = 100_000;

/// Why a prefix is not read as a model directory.
#[derive(Debug)]
pub enum RemoteDirError {
    /// Listing failed.
    Cloud(CloudError),
    /// More than [`MAX_OBJECTS`] objects under it.
    TooMany,
    /// A key below the prefix that is not a plain relative path (an empty segment, `.` or
    /// `..`): a directory on disk could not hold it.
    BadKey(String),
}

impl std::fmt::Display for RemoteDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteDirError::Cloud(e) => f.write_str(&e.reason()),
            RemoteDirError::TooMany => write!(
                f,
                "more than {MAX_OBJECTS} objects under the prefix: not read as a model directory"
            ),
            RemoteDirError::BadKey(key) => write!(
                f,
                "the key {key:?} below the prefix is not a plain relative path"
            ),
        }
    }
}

/// The objects under the prefix `at` as a model directory's files; empty when there are none.
pub fn list(at: &Location) -> Result<Vec<DirFile>, RemoteDirError> {
    let (keys, more) = cloud::list_at_most(at, MAX_OBJECTS).map_err(RemoteDirError::Cloud)?;
    if more {
        return Err(RemoteDirError::TooMany);
    }
    let base = at.key.as_ref();
    let mut files = Vec::with_capacity(keys.len());
    for (key, size) in keys {
        let full = key.as_ref();
        let rel = if base.is_empty() {
            full
        } else {
            match full.strip_prefix(base).and_then(|r| r.strip_prefix('/')) {
                Some(r) => r,
                // `a/bc` lists under the prefix `a/b` on some stores: not in the folder.
                None => continue,
            }
        };
        if rel
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
        {
            return Err(RemoteDirError::BadKey(full.to_owned()));
        }
        files.push(DirFile {
            rel: rel.to_owned(),
            path: PathBuf::from(at.with_key(key.clone()).url()),
            size,
            blob: None,
            links: 1,
        });
    }
    files.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    Ok(files)
}
