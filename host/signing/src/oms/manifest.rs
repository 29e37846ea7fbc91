//! A model as model_signing 1.1.1 serializes it into a manifest: which files it hashes, how it
//! names them, how it orders them, and the root digest over them.
//!
//! * The walk (`_serialization/file.py` `Serializer.serialize`): the model path itself, then
//!   `model_path.glob("**/*")`, every entry at any depth, hidden ones included. Each is checked
//!   before the ignore list applies (`serialization.check_file_or_directory`): a symbolic link
//!   is refused (socair never follows one, as model_signing's default `allow_symlinks=False`),
//!   and so is anything that is neither a file nor a directory. Regular files not under an
//!   ignored path are hashed.
//! * Ignored paths (`serialization.should_ignore`, `hashing.Config.hash`): each is relative to
//!   the model directory and covers itself and everything under it (`PurePath.is_relative_to`,
//!   by whole components, from the top of the model only). The defaults are the git paths
//!   `.git`, `.gitattributes`, `.github`, `.gitignore`, and the signature file when it lies in
//!   the model.
//! * Names: the POSIX path relative to the model (`manifest.FileManifestItem`); a model that is
//!   one file is named `.`. Shards are `path:start:end`, end exclusive (`manifest._Shard`), of
//!   `shard_size` bytes but the last (`file_shard._endpoints`); an empty file has no shard.
//! * Digests: SHA-256 of the file (algorithm `sha256`) or of the shard's bytes (algorithm
//!   `sha256-sharded-<shard_size>`, `_hashing/io.py` `ShardedFileHasher.digest_name`).
//! * Order: `Manifest.resource_descriptors` sorts by key, a `PurePosixPath` compared as its
//!   list of components (CPython 3.11's `_cparts`, 3.12 to 3.14's `_parts_normcase`: the path
//!   split on `/`, each part compared by code point, which is UTF-8 byte order), then a shard's
//!   start and end as numbers: `a/c` before `a.b`, although `.` sorts before `/` as bytes.
//! * The root digest (`_signing/signing.py` `Payload.__init__`): SHA-256 over the raw bytes of
//!   every resource's digest, in that order. Names do not enter it: the whole manifest is
//!   what a verifier compares.

use crate::base::digest::hex;
use crate::base::progress::Progress;
use crate::oms::OmsError;
use crate::read::hfcache::Snapshot;
use crate::read::source::{hash_file_counted, InputFile};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// The paths model_signing ignores unless told otherwise (`hashing.Config.hash`,
/// `ignore_git_paths=True` in its API and CLI).
pub const GIT_PATHS: [&str; 4] = [".git", ".gitattributes", ".github", ".gitignore"];

/// How a model is cut into resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// One resource a file (`"method": "files"`).
    Files,
    /// Fixed-size shards of each file (`"method": "shards"`, `shard_size` bytes).
    Shards(u64),
}

impl Method {
    /// The algorithm name each resource carries (`sha256`, `sha256-sharded-N`).
    pub fn algorithm(&self) -> String {
        match self {
            Method::Files => "sha256".into(),
            Method::Shards(size) => format!("sha256-sharded-{size}"),
        }
    }
}

/// One resource of a manifest: its name, its digest's algorithm and the digest's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// `path` or `path:start:end`.
    pub name: String,
    /// `sha256`, `sha256-sharded-N`, or what a signature says.
    pub algorithm: String,
    /// The digest.
    pub digest: Vec<u8>,
}

/// A regular file of the model that is hashed.
#[derive(Debug, Clone)]
pub struct ModelFile {
    /// Its path relative to the model, `/`-separated (`.` for a model that is one file).
    pub rel: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its size.
    pub size: u64,
}

/// The files of a model as model_signing sees them.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The files hashed, in the walk's order.
    pub files: Vec<ModelFile>,
    /// The regular files left out because an ignored path covers them, sorted.
    pub ignored: Vec<String>,
    /// How many of the files are a Hugging Face cache snapshot's links, followed into the
    /// repository's blobs (model_signing hashes a link's target under the link's name when
    /// told `--allow_symlinks`).
    pub links_followed: usize,
}

/// An ignore path as components, or `None` when it can never match a file of the walk
/// (absolute, or holding `..`: model_signing compares paths as text, without resolving).
/// An ignore path with no component (`.`, empty) covers the whole model.
pub fn ignore_components(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.contains(&"..") {
        return None;
    }
    Some(parts)
}

fn is_ignored(rel: &[&str], ignores: &[Vec<&str>]) -> bool {
    ignores.iter().any(|i| rel.starts_with(i))
}

/// Lists the files model_signing hashes in `model` (a directory or one file), leaving out
/// those under `ignore_paths`; refuses what it refuses. In a snapshot of the Hugging Face
/// cache, a link is followed when `read::hfcache` finds it leads into the repository's blobs
/// (as model_signing with `--allow_symlinks` follows it, but only there); any other link is
/// refused.
pub fn list(model: &Path, ignore_paths: &[String]) -> Result<Listing, OmsError> {
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| OmsError::Io { path, source }
    };
    let unhashable = |path: &Path, why: &str| OmsError::Unhashable {
        path: path.display().to_string(),
        why: why.to_owned(),
    };
    const LINK: &str = "a symbolic link: model_signing refuses to hash one (unless told --allow_symlinks), and socair follows links only in a Hugging Face cache snapshot, into its repository's blobs";
    const SPECIAL: &str =
        "neither a regular file nor a directory (a FIFO, socket or device): model_signing refuses to hash it";
    let ignores: Vec<Vec<&str>> = ignore_paths
        .iter()
        .filter_map(|p| ignore_components(p))
        .collect();
    let follow = |snapshot: &Option<Snapshot>, link: &Path| match snapshot {
        Some(s) => s.follow(link).map_err(|why| unhashable(link, &why)),
        None => Err(unhashable(link, LINK)),
    };
    let meta = std::fs::symlink_metadata(model).map_err(io(model))?;
    if meta.is_file() || meta.file_type().is_symlink() {
        // `path.relative_to(model_path)` of the model itself: `.`. model_signing's ignore
        // paths are joined to the file's path, so none can cover it.
        let (path, size, links_followed) = if meta.is_file() {
            (model.to_owned(), meta.len(), 0)
        } else {
            // The cache's rules judge a link by its canonical place.
            let parent = model.parent().filter(|p| !p.as_os_str().is_empty());
            let snapshot = Snapshot::of(parent.unwrap_or(Path::new(".")));
            let link = match (&snapshot, model.file_name()) {
                (Some(s), Some(name)) => s.dir.join(name),
                _ => model.to_owned(),
            };
            let blob = follow(&snapshot, &link)?;
            (blob.path, blob.size, 1)
        };
        return Ok(Listing {
            files: vec![ModelFile {
                rel: ".".into(),
                path,
                size,
            }],
            ignored: Vec::new(),
            links_followed,
        });
    }
    let snapshot = Snapshot::of(model);
    if !meta.is_dir() {
        return Err(unhashable(model, SPECIAL));
    }
    let mut listing = Listing::default();
    // In a snapshot the walk starts from its canonical place, where the cache's rules judge
    // each link.
    let root = snapshot
        .as_ref()
        .map_or(model.to_owned(), |s| s.dir.clone());
    let mut pending = vec![(root, Vec::<String>::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            let path = entry.path();
            let name = entry.file_name().into_string().map_err(|_| {
                unhashable(&path, "the name is not UTF-8: a signature cannot name it")
            })?;
            let mut rel = prefix.clone();
            rel.push(name);
            let kind = entry.file_type().map_err(io(&path))?;
            if kind.is_dir() {
                pending.push((path, rel));
            } else if kind.is_file() || kind.is_symlink() {
                // model_signing checks every entry, ignored or not, before it ignores any.
                let (path, size) = if kind.is_symlink() {
                    let blob = follow(&snapshot, &path)?;
                    listing.links_followed += 1;
                    (blob.path, blob.size)
                } else {
                    let size = entry.metadata().map_err(io(&path))?.len();
                    (path, size)
                };
                let parts: Vec<&str> = rel.iter().map(String::as_str).collect();
                let joined = rel.join("/");
                if is_ignored(&parts, &ignores) {
                    listing.ignored.push(joined);
                } else {
                    listing.files.push(ModelFile {
                        rel: joined,
                        path,
                        size,
                    });
                }
            } else {
                return Err(unhashable(&path, SPECIAL));
            }
        }
    }
    listing.ignored.sort();
    Ok(listing)
}

/// The shards of a file of `size` bytes: `[start, end)` ranges of `shard_size` bytes, the last
/// one shorter; none for an empty file (`file_shard.Serializer._get_shards`).
pub fn shards(size: u64, shard_size: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut start = 0u64;
    while start < size {
        let end = start.saturating_add(shard_size).min(size);
        out.push((start, end));
        start = end;
    }
    out
}

/// Hashes the listed files into resources, in parallel, sorted as model_signing sorts them.
pub fn hash(listing: &Listing, method: Method) -> Result<Vec<Resource>, OmsError> {
    let total = listing.files.iter().map(|f| f.size).sum();
    let progress = Progress::bytes(total, "hashing");
    let io = |f: &ModelFile| {
        let path = f.path.display().to_string();
        move |source| OmsError::Io { path, source }
    };
    let algorithm = method.algorithm();
    let mut resources = match method {
        Method::Files => listing
            .files
            .par_iter()
            .map(|f| {
                let file = InputFile::open(&f.path).map_err(io(f))?;
                let sha = hash_file_counted(&file, &progress).map_err(io(f))?;
                Ok(Resource {
                    name: f.rel.clone(),
                    algorithm: algorithm.clone(),
                    digest: from_hex(&sha).expect("our own hex"),
                })
            })
            .collect::<Result<Vec<_>, OmsError>>()?,
        Method::Shards(shard_size) => {
            let work: Vec<(&ModelFile, u64, u64)> = listing
                .files
                .iter()
                .flat_map(|f| {
                    shards(f.size, shard_size)
                        .into_iter()
                        .map(move |(s, e)| (f, s, e))
                })
                .collect();
            work.par_iter()
                .map(|&(f, start, end)| {
                    let file = InputFile::open(&f.path).map_err(io(f))?;
                    let mut h = Sha256::new();
                    file.for_each_chunk(start, end - start, |chunk| {
                        h.update(chunk);
                        progress.add(chunk.len() as u64);
                    })
                    .map_err(io(f))?;
                    Ok(Resource {
                        name: format!("{}:{start}:{end}", f.rel),
                        algorithm: algorithm.clone(),
                        digest: h.finalize().to_vec(),
                    })
                })
                .collect::<Result<Vec<_>, OmsError>>()?
        }
    };
    resources.sort_by(|a, b| compare_names(&a.name, &b.name, method));
    Ok(resources)
}

/// Orders two resource names as model_signing orders their keys: a path by its components,
/// then (shards) start and end as numbers.
pub fn compare_names(a: &str, b: &str, method: Method) -> Ordering {
    fn split(name: &str, method: Method) -> (Vec<&str>, u64, u64) {
        let (path, start, end) = match method {
            Method::Files => (name, 0, 0),
            Method::Shards(_) => {
                let mut parts = name.rsplitn(3, ':');
                let end = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                let start = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                (parts.next().unwrap_or(""), start, end)
            }
        };
        (path.split('/').collect(), start, end)
    }
    split(a, method).cmp(&split(b, method))
}

/// The root digest: SHA-256 over the concatenated digests, in the order given.
pub fn root_digest(resources: &[Resource]) -> String {
    let mut h = Sha256::new();
    for r in resources {
        h.update(&r.digest);
    }
    hex(&h.finalize())
}

/// Decodes lowercase or uppercase hex with an even number of digits.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// How the model on disk differs from the signed manifest, each list sorted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Difference {
    /// On disk, not in the signature.
    pub added: Vec<String>,
    /// In the signature, not on disk.
    pub removed: Vec<String>,
    /// In both, with another digest (or algorithm): `(name, signed, actual)`, hex.
    pub changed: Vec<(String, String, String)>,
}

impl Difference {
    /// Whether the two manifests are equal.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Compares a signed manifest with the model's (`Manifest.__eq__`: every name with its
/// algorithm and digest; `verifying.Config._get_manifest_diff` for the words).
pub fn compare(signed: &[Resource], actual: &[Resource]) -> Difference {
    use std::collections::BTreeMap;
    let signed: BTreeMap<&str, &Resource> = signed.iter().map(|r| (r.name.as_str(), r)).collect();
    let actual: BTreeMap<&str, &Resource> = actual.iter().map(|r| (r.name.as_str(), r)).collect();
    let mut d = Difference::default();
    for (name, a) in &actual {
        match signed.get(name) {
            None => d.added.push((*name).to_owned()),
            Some(s) if s.digest != a.digest || s.algorithm != a.algorithm => d.changed.push((
                (*name).to_owned(),
                format!("{}:{}", s.algorithm, hex(&s.digest)),
                format!("{}:{}", a.algorithm, hex(&a.digest)),
            )),
            Some(_) => {}
        }
    }
    d.removed = signed
        .keys()
        .filter(|n| !actual.contains_key(*n))
        .map(|n| (*n).to_owned())
        .collect();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_components_then_shard_offsets() {
        let mut names = vec!["a.b", "a/c", "a.txt", "B", "sub/b.bin", "a"];
        names.sort_by(|a, b| compare_names(a, b, Method::Files));
        // Python: sorted(PurePosixPath(n) for n in names).
        assert_eq!(names, ["B", "a", "a/c", "a.b", "a.txt", "sub/b.bin"]);
        let mut shards = vec!["a:10:20", "a:2:4", "a/b:0:1", "a.b:0:1", "a:0:2"];
        shards.sort_by(|a, b| compare_names(a, b, Method::Shards(2)));
        assert_eq!(shards, ["a:0:2", "a:2:4", "a:10:20", "a/b:0:1", "a.b:0:1"]);
    }

    #[test]
    fn shards_end_on_the_file_and_skip_empty_files() {
        assert_eq!(shards(0, 4), vec![]);
        assert_eq!(shards(8, 2), vec![(0, 2), (2, 4), (4, 6), (6, 8)]);
        assert_eq!(shards(9, 4), vec![(0, 4), (4, 8), (8, 9)]);
        assert_eq!(shards(3, 10), vec![(0, 3)]);
    }

    #[test]
    fn ignore_paths_cover_whole_components_from_the_top() {
        let ignores: Vec<Vec<&str>> = [".git", "model.sig", "sub/x"]
            .iter()
            .filter_map(|p| ignore_components(p))
            .collect();
        assert!(is_ignored(&[".git", "HEAD"], &ignores));
        assert!(is_ignored(&["model.sig"], &ignores));
        assert!(is_ignored(&["sub", "x", "y"], &ignores));
        assert!(!is_ignored(&[".gitkeep"], &ignores));
        assert!(!is_ignored(&["sub", ".git", "HEAD"], &ignores));
        assert!(!is_ignored(&["model.sig2"], &ignores));
        assert_eq!(ignore_components("./a//b/"), Some(vec!["a", "b"]));
        assert_eq!(ignore_components("."), Some(vec![]));
        assert_eq!(ignore_components("../x"), None);
        assert_eq!(ignore_components("/abs"), None);
    }

    #[test]
    fn differences_name_every_file() {
        let r = |n: &str, d: u8| Resource {
            name: n.into(),
            algorithm: "sha256".into(),
            digest: vec![d; 32],
        };
        let signed = [r("a", 1), r("b", 2), r("c", 3)];
        let actual = [r("a", 1), r("b", 9), r("d", 4)];
        let d = compare(&signed, &actual);
        assert_eq!(d.added, ["d"]);
        assert_eq!(d.removed, ["c"]);
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].0, "b");
        assert!(compare(&signed, &signed).is_empty());
        // The root is over the digests in order: sha256 of 32 bytes of 1, then 2, then 3.
        let mut bytes = vec![1u8; 32];
        bytes.extend([2u8; 32]);
        bytes.extend([3u8; 32]);
        assert_eq!(root_digest(&signed), hex(&Sha256::digest(&bytes)));
    }
}
