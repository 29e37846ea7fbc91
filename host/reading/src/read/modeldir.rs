//! Model directories and their identity, `socair.modeldir/v1`.
//!
//! A directory's digest is the SHA-256 of the compact JSON array
//! `[{"path":…,"size":…,"sha256":…},…]` with one entry per regular file under it (at any
//! depth), `path` relative with `/` separators, entries sorted by path in byte order, and no
//! whitespace (serde_json's compact form). Two directories with the same files and contents
//! have the same digest wherever they are.
//!
//! The walk does not follow symbolic links and refuses a directory that holds one (or a FIFO,
//! a device, a socket, or a name that is not UTF-8): what the digest covers must be exactly what
//! is in the directory. A scan walks with [`list_entries`], which lists the links apart (still
//! unfollowed) so that its report can judge them and whatever names them.
//!
//! One kind of link is followed: in a Hugging Face cache snapshot
//! (`…/models--org--name/snapshots/<commit>/`), each file is a link to its blob, and a link that
//! leads where huggingface_hub puts blobs ([`hfcache::Snapshot::follow`]) is read as the file
//! of that name, so that the snapshot's digest is that of the same files copied into a plain
//! directory. Any other link there is refused with the reason (a scan: a FAIL).

use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::read::hfcache;
use crate::read::source::{hash_file_counted, InputFile};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The rule set's id.
pub const MODELDIR_RULES: &str = "socair.modeldir/v1";

inventory::submit! {
    crate::base::rules::RuleSet {
        name: "socair.modeldir",
        version: "1",
        id: MODELDIR_RULES,
        summary: "a model directory's identity: sha256 of the sorted JSON list of {path, size, sha256}",
    }
}

/// Why a directory cannot be taken as a model directory.
#[derive(Debug, thiserror::Error)]
pub enum ModelDirError {
    /// Listing or reading failed.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// What.
        source: std::io::Error,
    },
    /// Something other than a regular file or a directory.
    #[error("{path}: {what}; a model directory may hold only regular files and directories")]
    NotRegular {
        /// Where.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// A link in a Hugging Face snapshot that does not lead to one of the repository's blobs.
    #[error("{path}: {why}")]
    HubLink {
        /// The link.
        path: PathBuf,
        /// Where it leads, and why that is not followed.
        why: String,
    },
    /// A name that is not UTF-8.
    #[error("{path}: the name is not UTF-8")]
    NotUtf8 {
        /// Where.
        path: PathBuf,
    },
    /// Two names that are one name on a case-insensitive or normalizing file system.
    #[error("{first:?} and {second:?} are the same name on file systems that ignore case or normalize Unicode (macOS, Windows): copies of this directory would lose one")]
    Colliding {
        /// One name.
        first: String,
        /// The other.
        second: String,
    },
}

/// A regular file in a model directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirFile {
    /// Path relative to the directory, `/`-separated.
    pub rel: String,
    /// Full path.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// The blob it was read from, for a Hugging Face snapshot's file (its link followed).
    pub blob: Option<hfcache::Blob>,
    /// How many names the file has (`st_nlink`), as the listing found it: more than one for
    /// a hard link, whose other names may lie outside the directory ([`hard_links`]); 1 where
    /// the platform does not say, and for a file given alone.
    pub links: u64,
}

/// A symbolic link in a model directory (not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirLink {
    /// Path relative to the directory, `/`-separated.
    pub rel: String,
    /// What it points at, as stored in the link.
    pub target: PathBuf,
    /// Whether what it points at (followed all the way) lies inside the directory.
    pub inside: bool,
    /// In a Hugging Face snapshot, why the link is not followed to a blob (huggingface_hub
    /// makes no other link there).
    pub hub: Option<String>,
}

/// Lists every regular file under `root`, sorted by relative path in byte order; a symbolic
/// link anywhere under it is refused.
pub fn list_files(root: &Path) -> Result<Vec<DirFile>, ModelDirError> {
    let (files, links) = list_entries(root)?;
    match links.into_iter().next() {
        Some(DirLink {
            rel,
            hub: Some(why),
            ..
        }) => Err(ModelDirError::HubLink {
            path: root.join(rel),
            why,
        }),
        Some(link) => Err(ModelDirError::NotRegular {
            path: root.join(&link.rel),
            what: "a symbolic link (not followed)",
        }),
        None => Ok(files),
    }
}

/// Lists every regular file under `root`, sorted by relative path in byte order, and every
/// symbolic link (not followed: a link to a directory is not walked), sorted the same way.
pub fn list_entries(root: &Path) -> Result<(Vec<DirFile>, Vec<DirLink>), ModelDirError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ModelDirError::Io { path, source }
    };
    let mut files = Vec::new();
    let mut links = Vec::new();
    let canonical_root = root.canonicalize().ok();
    let snapshot = hfcache::Snapshot::of(root);
    let mut pending = vec![(root.to_owned(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            let path = entry.path();
            let name = entry
                .file_name()
                .into_string()
                .map_err(|_| ModelDirError::NotUtf8 { path: path.clone() })?;
            let rel = format!("{prefix}{name}");
            let kind = entry.file_type().map_err(io(&path))?;
            if kind.is_dir() {
                pending.push((path, format!("{rel}/")));
            } else if kind.is_file() {
                let meta = entry.metadata().map_err(io(&path))?;
                files.push(DirFile {
                    rel,
                    path,
                    size: meta.len(),
                    blob: None,
                    links: hard_links(&meta),
                });
            } else if kind.is_symlink() {
                // A snapshot's file: read from its blob, under its own name.
                let hub = match &snapshot {
                    Some(s) => match s.follow(&s.dir.join(&rel)) {
                        Ok(blob) => {
                            files.push(DirFile {
                                rel,
                                path: blob.path.clone(),
                                size: blob.size,
                                blob: Some(blob),
                                links: 1,
                            });
                            continue;
                        }
                        Err(why) => Some(why),
                    },
                    None => None,
                };
                let target = std::fs::read_link(&path).map_err(io(&path))?;
                // Where the link leads once every link on the way is followed (nothing there:
                // not inside).
                let inside = match (&canonical_root, path.canonicalize()) {
                    (Some(root), Ok(to)) => to.starts_with(root),
                    _ => false,
                };
                links.push(DirLink {
                    rel,
                    target,
                    inside,
                    hub,
                });
            } else {
                return Err(ModelDirError::NotRegular {
                    path,
                    what: "not a regular file (a FIFO, socket or device)",
                });
            }
        }
    }
    files.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    links.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    check_collisions(
        files
            .iter()
            .map(|f| f.rel.as_str())
            .chain(links.iter().map(|l| l.rel.as_str())),
    )?;
    Ok((files, links))
}

/// The number of names a regular file has (`st_nlink`; 1 where the platform does not say).
///
/// A second name is a hard link, and nothing in a directory says where the other names are: a
/// file of the directory may be the very inode of a file outside it (`/etc/shadow`, another
/// user's key), placed there by an archive's hard-link member or a copy with `cp -l`. Its bytes
/// are what the scan reads, but they are also that other file's, and a loader that writes
/// through the name (onnx's `save_external_data`) writes there: onnx refuses external data
/// with more than one link since 1.21.0 (CVE-2026-34446, `onnx/checker.cc`
/// `resolve_external_data_location`, `hard_link_count > 1`). A scan makes it a LEAD
/// (`crate::report::pointers`).
#[cfg(unix)]
pub fn hard_links(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

/// See the Unix version: other platforms' metadata does not say (stable Rust).
#[cfg(not(unix))]
pub fn hard_links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// Refuses paths that differ only in case or Unicode normalization (NFC vs NFD): the same
/// directory would hold other files once copied to macOS or Windows.
fn check_collisions<'a>(paths: impl Iterator<Item = &'a str>) -> Result<(), ModelDirError> {
    use unicode_normalization::UnicodeNormalization;
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for p in paths {
        let key: String = p.nfc().collect::<String>().to_lowercase();
        if let Some(first) = seen.insert(key, p) {
            return Err(ModelDirError::Colliding {
                first: first.to_owned(),
                second: p.to_owned(),
            });
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct DigestEntry<'a> {
    path: &'a str,
    size: u64,
    sha256: &'a str,
}

/// The `socair.modeldir/v1` digest of files already hashed: `(relative path, size, sha256)`,
/// in any order.
pub fn digest_of(entries: &[(String, u64, String)]) -> String {
    let mut sorted: Vec<&(String, u64, String)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let list: Vec<DigestEntry<'_>> = sorted
        .iter()
        .map(|(path, size, sha256)| DigestEntry {
            path,
            size: *size,
            sha256,
        })
        .collect();
    let json = serde_json::to_vec(&list).expect("serializing plain data cannot fail");
    hex(&Sha256::digest(&json))
}

/// Hashes every file (in parallel) and returns the directory's digest.
pub fn digest(files: &[DirFile]) -> Result<String, ModelDirError> {
    Ok(digest_of(&hash_each(files)?))
}

/// A file's `(relative path, size, sha256)`, as the digest lists it.
pub type FileHash = (String, u64, String);

/// Hashes every file (in parallel): `(relative path, size, sha256)` in the files' order.
pub fn hash_each(files: &[DirFile]) -> Result<Vec<FileHash>, ModelDirError> {
    hash_each_by(files, |_| None)
}

/// As [`hash_each`], each file's SHA-256 given by `known` (a hash its reader's reads began,
/// finished) or else computed here, in parallel.
pub fn hash_each_by(
    files: &[DirFile],
    known: impl Fn(&DirFile) -> Option<std::io::Result<String>> + Sync,
) -> Result<Vec<FileHash>, ModelDirError> {
    let progress = Progress::bytes(files.iter().map(|f| f.size).sum(), "hashing");
    files
        .par_iter()
        .map(|f| {
            let io = |source| ModelDirError::Io {
                path: f.path.clone(),
                source,
            };
            let sha = match known(f) {
                // Hashed by its reader's reads (which show their own progress): counted done.
                Some(sha) => {
                    let sha = sha.map_err(io)?;
                    progress.add(f.size);
                    sha
                }
                None => {
                    let file = InputFile::open(&f.path).map_err(io)?;
                    hash_file_counted(&file, &progress).map_err(io)?
                }
            };
            Ok((f.rel.clone(), f.size, sha))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_of_the_sorted_compact_list() {
        let a = ("b/x".to_owned(), 3, "00".repeat(32));
        let b = ("a".to_owned(), 0, "11".repeat(32));
        let expected_json = format!(
            "[{{\"path\":\"a\",\"size\":0,\"sha256\":\"{}\"}},{{\"path\":\"b/x\",\"size\":3,\"sha256\":\"{}\"}}]",
            "11".repeat(32),
            "00".repeat(32)
        );
        let expected = hex(&Sha256::digest(expected_json.as_bytes()));
        assert_eq!(digest_of(&[a.clone(), b.clone()]), expected);
        assert_eq!(digest_of(&[b, a]), expected);
    }

    #[test]
    #[cfg(unix)]
    fn walk_sorts_and_refuses_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/z"), b"zz").unwrap();
        std::fs::write(dir.path().join("b"), b"b").unwrap();
        std::fs::write(dir.path().join("sub.txt"), b"").unwrap();
        let files = list_files(dir.path()).unwrap();
        let rels: Vec<&str> = files.iter().map(|f| f.rel.as_str()).collect();
        // Byte order: "sub.txt" ('.' = 0x2e) sorts before "sub/z" ('/' = 0x2f).
        assert_eq!(rels, ["b", "sub.txt", "sub/z"]);
        assert_eq!(files[2].size, 2);
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let err = list_files(dir.path()).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        // Listed apart, not followed: where each leads is known, not walked.
        std::os::unix::fs::symlink("b", dir.path().join("sub/in")).unwrap();
        let (files, links) = list_entries(dir.path()).unwrap();
        assert_eq!(files.len(), 3);
        let links: Vec<(&str, bool)> = links.iter().map(|l| (l.rel.as_str(), l.inside)).collect();
        // sub/in points at sub/b, which does not exist: not inside.
        assert_eq!(links, [("link", false), ("sub/in", false)]);
        std::os::unix::fs::symlink("../b", dir.path().join("sub/up")).unwrap();
        let (_, links) = list_entries(dir.path()).unwrap();
        assert!(links.iter().any(|l| l.rel == "sub/up" && l.inside));
    }

    #[test]
    #[cfg(unix)]
    fn hard_links_are_counted() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"key").unwrap();
        std::fs::write(dir.path().join("model.onnx"), b"m").unwrap();
        std::fs::hard_link(
            outside.path().join("secret"),
            dir.path().join("weights.bin"),
        )
        .unwrap();
        let files = list_files(dir.path()).unwrap();
        let links: Vec<(&str, u64)> = files.iter().map(|f| (f.rel.as_str(), f.links)).collect();
        assert_eq!(links, [("model.onnx", 1), ("weights.bin", 2)]);
    }
}

/// Why [`digest_of_path`] has no digest; the words are those the store's errors print.
#[derive(Debug, thiserror::Error)]
pub enum PathDigestError {
    /// A directory that is no model directory socair reads (a link that leaves it, ...).
    #[error("refused: {0}")]
    Refused(String),
    /// A file or object that cannot be read.
    #[error("{0}")]
    Unusable(String),
}

/// A file's sha256, or a directory's `socair.modeldir/v1` digest: what a signed statement
/// names as its subject, whether a store or a bundle checks it.
pub fn digest_of_path(path: &std::path::Path) -> Result<String, PathDigestError> {
    use crate::read::source::{hash_file, is_remote, sha256_of_path, InputFile};
    let unusable =
        |e: &dyn std::fmt::Display| PathDigestError::Unusable(format!("{}: {e}", path.display()));
    if is_remote(path) {
        let input =
            InputFile::open_remote(path.to_str().unwrap_or_default()).map_err(|e| unusable(&e))?;
        return hash_file(&input).map_err(|e| unusable(&e));
    }
    if path.is_dir() {
        let files = list_files(path).map_err(|e| PathDigestError::Refused(e.to_string()))?;
        digest(&files).map_err(|e| PathDigestError::Unusable(e.to_string()))
    } else {
        sha256_of_path(path).map_err(|e| unusable(&e))
    }
}
