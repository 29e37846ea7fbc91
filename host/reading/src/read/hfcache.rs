//! The Hugging Face cache, read offline as huggingface_hub 2.4.0 writes it.
//!
//! `hf_hub_download` and `snapshot_download` (huggingface_hub 2.4.0, `file_download.py`,
//! `_snapshot_download.py`) keep a repository in `<cache>/<type>s--<namespace>--<name>/`
//! (`repo_folder_name`): `blobs/<etag>` holds each file once, named by its ETag (the SHA-256 of
//! an LFS file, the git blob SHA-1 of any other); `snapshots/<commit>/<path>` is a relative
//! symbolic link to `../../blobs/<etag>` (one `../` more per directory level: `_create_symlink`
//! links `os.path.relpath(blob, dirname(pointer))`); `refs/<revision>` holds the commit a branch
//! or tag named when it was downloaded. Since 2.4.0 a file downloaded through Xet may be kept
//! once for the whole cache (`utils/_shared_blobs.py`): `blobs/<etag>` is then itself a relative
//! link to `<cache>/blobs/<xx>/<xet hash>`, in a store marked by the file
//! `.huggingface-shared-blobs` holding `1\n`.
//!
//! A snapshot's links are followed here only when they lead where huggingface_hub puts them:
//! the link, resolved by its text alone, to a regular file `blobs/<etag>` of the same
//! repository, or through that entry (a link as `_shared_blob_target` accepts it) to a regular
//! file of the marked shared store; no other link on the way ([`Snapshot::follow`]). Anything
//! else is refused with the reason, and a scan makes it a FAIL naming the link.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The scheme of a Hugging Face URI (`constants.HF_PROTOCOL`).
pub const HF_PROTOCOL: &str = "hf://";

/// The repository types and their plural folder and URI prefixes (`constants.REPO_TYPES_MAPPING`).
const REPO_TYPES: &[&str] = &["models", "datasets", "spaces", "kernels"];

/// The file that marks the cache-wide shared blob store, and what it holds
/// (`_shared_blobs.SHARED_BLOBS_MARKER_NAME`, `SHARED_BLOBS_LAYOUT_VERSION`).
const SHARED_MARKER: &str = ".huggingface-shared-blobs";
const SHARED_MARKER_TEXT: &[u8] = b"1\n";

/// Why an `hf://` URI names no snapshot in the cache.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// Not a URI of the grammar huggingface_hub parses.
    #[error("{uri}: {why}")]
    BadUri {
        /// The URI.
        uri: String,
        /// Why.
        why: String,
    },
    /// Well formed, but the cache does not hold it.
    #[error("{uri}: {why} (socair reads the Hugging Face cache offline: download it first, for instance with `hf download {repo_id}`)")]
    NotCached {
        /// The URI.
        uri: String,
        /// The repository.
        repo_id: String,
        /// What is missing, and where it was looked for.
        why: String,
    },
}

/// A snapshot directory of a repository in the cache (or a directory inside one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The cache directory, canonical.
    pub cache: PathBuf,
    /// The repository's folder, canonical.
    pub repo: PathBuf,
    /// `models`, `datasets`, `spaces` or `kernels`.
    pub repo_type: String,
    /// `namespace/name`.
    pub repo_id: String,
    /// The snapshot folder's name: the commit.
    pub commit: String,
    /// The directory asked about, canonical, and its path inside the snapshot (`""` for the
    /// snapshot itself).
    pub dir: PathBuf,
    /// Its path inside the snapshot, `/`-separated (empty for the snapshot folder itself).
    pub sub: String,
}

/// A snapshot file's blob, reached through the snapshot's link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The regular file that holds the bytes (`blobs/<etag>`, or the shared store's entry).
    pub path: PathBuf,
    /// Its name in the repository's `blobs/`: the ETag the Hub gave.
    pub etag: String,
    /// The Xet hash, when the bytes lie in the cache-wide shared store.
    pub shared: Option<String>,
    /// Its size in bytes.
    pub size: u64,
}

/// What a blob's name says its bytes hash to: huggingface_hub names each blob by the ETag the
/// Hub gave for its file (2.4.0, `file_download.py`): an LFS file's SHA-256 (64 hex digits),
/// any other file's git blob id (40 hex digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobName {
    /// A SHA-256 of the bytes.
    Sha256,
    /// A git blob id: the SHA-1 of `blob <size>\0` and the bytes.
    GitSha1,
    /// Neither: nothing says what the bytes should be.
    Neither,
}

impl Blob {
    /// What this blob's name says its bytes hash to.
    pub fn name_kind(&self) -> BlobName {
        let etag = &self.etag;
        let hex = |n: usize| etag.len() == n && etag.bytes().all(|b| b.is_ascii_hexdigit());
        if hex(64) {
            BlobName::Sha256
        } else if hex(40) {
            BlobName::GitSha1
        } else {
            BlobName::Neither
        }
    }
}

fn file_name(p: &Path) -> Option<&str> {
    p.file_name().and_then(|n| n.to_str())
}

/// `<type>s--<namespace>--<name>` → (`<type>s`, `namespace/name`), as `repo_folder_name`
/// writes it (a repo id never holds `--`, `validate_repo_id`).
fn parse_repo_folder(name: &str) -> Option<(String, String)> {
    let mut parts = name.split("--");
    let kind = parts.next()?;
    let rest: Vec<&str> = parts.collect();
    if !REPO_TYPES.contains(&kind) || rest.is_empty() || rest.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some((kind.to_owned(), rest.join("/")))
}

/// The path `target` names from the directory `from`, by its text alone: `.` dropped, `..`
/// taking one component off (never above the root), as `os.path.abspath` normalizes it.
fn lexical(from: &Path, target: &Path) -> PathBuf {
    let mut out = if target.is_absolute() {
        PathBuf::from("/")
    } else {
        from.to_owned()
    };
    for c in target.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `name` is a commit id as huggingface_hub recognizes one (`REGEX_COMMIT_HASH`,
/// `[0-9a-f]{40}`, full match).
pub fn is_commit(name: &str) -> bool {
    is_hex(name, 40)
}

impl Snapshot {
    /// The snapshot `dir` is, or lies in: `<cache>/<repo folder>/snapshots/<commit>[/sub]`.
    pub fn of(dir: &Path) -> Option<Snapshot> {
        let dir = dir.canonicalize().ok()?;
        if !dir.is_dir() {
            return None;
        }
        let mut sub: Vec<&str> = Vec::new();
        for at in dir.ancestors() {
            let (Some(snapshots), Some(commit)) = (at.parent(), file_name(at)) else {
                break;
            };
            if file_name(snapshots) == Some("snapshots") {
                let repo = snapshots.parent()?;
                if let Some((repo_type, repo_id)) = file_name(repo).and_then(parse_repo_folder) {
                    sub.reverse();
                    return Some(Snapshot {
                        cache: repo.parent()?.to_owned(),
                        repo: repo.to_owned(),
                        repo_type,
                        repo_id,
                        commit: commit.to_owned(),
                        dir: dir.clone(),
                        sub: sub.join("/"),
                    });
                }
            }
            sub.push(commit);
        }
        None
    }

    /// How reports name it: `namespace/name@<commit>` (the form of an `hf://` URI), with the
    /// repository type first when it is not a model and the directory inside after a `/`.
    pub fn name(&self) -> String {
        let kind = if self.repo_type == "models" {
            String::new()
        } else {
            format!("{}/", self.repo_type)
        };
        let sub = if self.sub.is_empty() {
            String::new()
        } else {
            format!("/{}", self.sub)
        };
        format!("{kind}{}@{}{sub}", self.repo_id, self.commit)
    }

    /// Follows the symbolic link at `link` (a path under [`Snapshot::dir`], whose directories
    /// are real ones) to its blob, when it leads where huggingface_hub puts one; otherwise says
    /// where it leads and why that is not followed.
    pub fn follow(&self, link: &Path) -> Result<Blob, String> {
        let text = std::fs::read_link(link).map_err(|e| format!("cannot read the link: {e}"))?;
        let from = link.parent().unwrap_or(Path::new("/"));
        let entry = lexical(from, &text);
        let blobs = self.repo.join("blobs");
        let not_a_blob = || {
            format!(
                "a symbolic link to {:?}, which is not a file of this repository's blobs/ ({}): huggingface_hub links a snapshot's files only there, so this one was changed or made by hand, and a loader that opens it reads bytes outside the repository",
                text.display(),
                blobs.display()
            )
        };
        let etag = match (entry.parent(), file_name(&entry)) {
            (Some(parent), Some(etag)) if parent == blobs && !etag.is_empty() => etag.to_owned(),
            _ => return Err(not_a_blob()),
        };
        let meta = std::fs::symlink_metadata(&entry)
            .map_err(|e| format!("a link to blobs/{etag}, which cannot be read: {e}"))?;
        let (path, shared) = if meta.is_file() {
            (entry, None)
        } else if meta.file_type().is_symlink() {
            let (path, hash) = self.shared_target(&entry).map_err(|why| {
                format!("a link to blobs/{etag}, itself a symbolic link that {why}")
            })?;
            (path, Some(hash))
        } else {
            return Err(format!(
                "a link to blobs/{etag}, which is not a regular file"
            ));
        };
        // No link on the way: the path the text names is the file the kernel opens.
        match path.canonicalize() {
            Ok(real) if real == path => {}
            _ => {
                return Err(format!(
                    "a link to blobs/{etag}, whose bytes lie behind another symbolic link on the way to {}",
                    path.display()
                ))
            }
        }
        let size = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("a link to blobs/{etag}, which cannot be read: {e}"))?
            .len();
        Ok(Blob {
            path,
            etag,
            shared,
            size,
        })
    }

    /// The shared store's entry a repository blob links to, as huggingface_hub 2.4.0's
    /// `_shared_blob_target` and `shared_blob_target` accept it: the store (`<cache>/blobs`) is
    /// a real directory marked by `is_shared_blobs_dir`'s marker, and the link's text leads to
    /// `<xx>/<xet hash>` in it, a regular file, where the hash is 64 lower-case hex digits and
    /// `xx` its first two.
    fn shared_target(&self, blob: &Path) -> Result<(PathBuf, String), String> {
        let store = self.cache.join("blobs");
        // (The marker's size is checked before it is read: a cache is input like any other.)
        let marker = store.join(SHARED_MARKER);
        let marked = std::fs::symlink_metadata(&store).is_ok_and(|m| m.is_dir())
            && std::fs::symlink_metadata(&marker)
                .is_ok_and(|m| m.is_file() && m.len() == SHARED_MARKER_TEXT.len() as u64)
            && std::fs::read(&marker).is_ok_and(|t| t == SHARED_MARKER_TEXT);
        if !marked {
            return Err(format!(
                "does not lead into a shared blob store ({} holds no {SHARED_MARKER} marking it as huggingface_hub's)",
                store.display()
            ));
        }
        let text = std::fs::read_link(blob).map_err(|e| format!("cannot be read: {e}"))?;
        let target = lexical(blob.parent().unwrap_or(Path::new("/")), &text);
        let inside: Option<Vec<String>> = target
            .strip_prefix(&store)
            .ok()
            .map(|r| r.iter().map(|c| c.to_string_lossy().into_owned()).collect());
        match inside.as_deref() {
            Some([prefix, hash]) if is_hex(hash, 64) && hash[..2] == *prefix => {
                if std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file()) {
                    Ok((target, hash.clone()))
                } else {
                    Err(format!(
                        "leads to {:?} in the shared blob store, which is not a regular file",
                        text.display()
                    ))
                }
            }
            _ => Err(format!(
                "leads to {:?}, not to an entry <xx>/<xet hash> of the shared blob store {}",
                text.display(),
                store.display()
            )),
        }
    }
}

/// A parsed `hf://[<type>s/]<namespace>/<name>[@<revision>][/<path>]` (huggingface_hub 2.4.0,
/// `utils/_hf_uris.py`, `parse_hf_uri`, for repositories; buckets are not in the cache).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubUri {
    /// The URI as given.
    pub uri: String,
    /// `models`, `datasets`, `spaces` or `kernels`.
    pub repo_type: String,
    /// `namespace/name`.
    pub repo_id: String,
    /// The revision after `@`, percent-decoded (`None`: `main`, `constants.DEFAULT_REVISION`).
    pub revision: Option<String>,
    /// The path inside the repository (empty for its root).
    pub path: String,
}

/// Whether `path` is written as an `hf://` URI.
pub fn is_uri(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with(HF_PROTOCOL))
}

/// `validate_repo_id`: `namespace/name`, each part of ASCII letters, digits, `-`, `_` and `.`,
/// 1 to 96 of them, starting and ending with a letter, digit or `_` (the regex's `\b`), no `--`
/// or `..`, not ending in `.git`.
fn check_repo_id(id: &str) -> Result<(), String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let part_ok = |p: &str| {
        let b = p.as_bytes();
        (1..=96).contains(&b.len())
            && b.iter().all(|&c| word(c) || c == b'-' || c == b'.')
            && word(b[0])
            && word(b[b.len() - 1])
    };
    let parts: Vec<&str> = id.split('/').collect();
    if parts.len() != 2 {
        return Err(format!("Id must be 'namespace/name', got '{id}'."));
    }
    if !parts.iter().all(|p| part_ok(p)) {
        return Err(format!("Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the maximum length is 96: '{id}'."));
    }
    if id.contains("--") || id.contains("..") {
        return Err(format!("Cannot have -- or .. in repo_id: '{id}'."));
    }
    if id.ends_with(".git") {
        return Err(format!("Repo_id cannot end by '.git': '{id}'."));
    }
    Ok(())
}

/// `urllib.parse.unquote` for the revision: `%XX` decoded as UTF-8 (a sequence that is not
/// UTF-8 is refused here, where Python would put U+FFFD).
fn unquote(s: &str) -> Result<String, String> {
    crate::base::object_key::percent_decode(s)
        .ok_or_else(|| format!("the revision {s:?} decodes to bytes that are not UTF-8"))
}

/// Whether a revision is a prefix `refs/pr/N` or `refs/convert/<name>`
/// (`_SPECIAL_REFS_REVISION_REGEX`: `^refs/(?:convert/[\w.-]+|pr/\d+)`; ASCII here, where
/// Python's `\w` and `\d` also take other scripts' letters and digits).
fn special_ref(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("refs/")?;
    let run = |t: &str, ok: fn(u8) -> bool| t.bytes().take_while(|&b| ok(b)).count();
    if let Some(t) = rest.strip_prefix("convert/") {
        let n = run(t, |b| {
            b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
        });
        (n > 0).then_some("refs/convert/".len() + n)
    } else if let Some(t) = rest.strip_prefix("pr/") {
        let n = run(t, |b| b.is_ascii_digit());
        (n > 0).then_some("refs/pr/".len() + n)
    } else {
        None
    }
}

impl HubUri {
    /// Parses `uri` as `parse_hf_uri` parses an `hf://` repository URI.
    pub fn parse(uri: &str) -> Result<HubUri, HubError> {
        let bad = |why: String| HubError::BadUri {
            uri: uri.to_owned(),
            why,
        };
        let body = uri
            .strip_prefix(HF_PROTOCOL)
            .ok_or_else(|| bad(format!("must start with '{HF_PROTOCOL}'")))?;
        if body.is_empty() {
            return Err(bad(format!("Empty body after '{HF_PROTOCOL}'.")));
        }
        // `_split_type`: an optional plural type prefix, a model otherwise.
        let (repo_type, location) = match body.split_once('/') {
            Some((first, rest)) if REPO_TYPES.contains(&first) => (first, rest),
            Some(("buckets", _)) => {
                return Err(bad(
                    "a bucket: buckets are not kept in the Hugging Face cache".into(),
                ))
            }
            Some((first, _))
                if ["model", "dataset", "space", "kernel", "bucket"].contains(&first) =>
            {
                return Err(bad(format!(
                    "Type prefix must be plural, got '{first}/'. Did you mean '{first}s/'?"
                )))
            }
            _ => ("models", body),
        };
        // `_parse_repo_body`.
        let location = location.trim_matches('/');
        if location.is_empty() {
            return Err(bad("Missing repository id.".into()));
        }
        let at = location
            .find('@')
            .filter(|&i| location[..i].matches('/').count() <= 1);
        let (repo_id, revision, path) = match at {
            None => {
                let mut parts = location.splitn(3, '/');
                let (ns, name) = (parts.next().unwrap_or(""), parts.next());
                let Some(name) = name else {
                    return Err(bad(format!(
                        "Repository id must be 'namespace/name', got '{location}'."
                    )));
                };
                (
                    format!("{ns}/{name}"),
                    None,
                    parts.next().unwrap_or("").to_owned(),
                )
            }
            Some(i) => {
                let (repo_id, rest) = (&location[..i], &location[i + 1..]);
                if repo_id.matches('/').count() != 1 {
                    return Err(bad(format!(
                        "Repository id must be 'namespace/name', got '{repo_id}'."
                    )));
                }
                let (revision, path) = match special_ref(rest) {
                    Some(n) => (
                        &rest[..n],
                        rest[n..].strip_prefix('/').unwrap_or(&rest[n..]),
                    ),
                    None => rest.split_once('/').unwrap_or((rest, "")),
                };
                let revision = unquote(revision).map_err(bad)?;
                if revision.is_empty() {
                    return Err(bad("Empty revision after '@'.".into()));
                }
                (repo_id.to_owned(), Some(revision), path.to_owned())
            }
        };
        check_repo_id(&repo_id).map_err(bad)?;
        if path.starts_with('/') || path.contains("//") {
            return Err(bad(format!(
                "Path must not contain empty segments (got '{path}')."
            )));
        }
        Ok(HubUri {
            uri: uri.to_owned(),
            repo_type: repo_type.to_owned(),
            repo_id,
            revision,
            path,
        })
    }

    /// The directory or file it names in the cache at `cache`, resolved as `snapshot_download`
    /// resolves it offline: a revision that is a commit id names `snapshots/<it>`; any other
    /// (a branch, a tag, `refs/pr/N`) the commit written in `refs/<revision>`.
    pub fn resolve_in(&self, cache: &Path) -> Result<PathBuf, HubError> {
        let not_cached = |why: String| HubError::NotCached {
            uri: self.uri.clone(),
            repo_id: self.repo_id.clone(),
            why,
        };
        let bad = |why: String| HubError::BadUri {
            uri: self.uri.clone(),
            why,
        };
        let folder = format!("{}--{}", self.repo_type, self.repo_id.replace('/', "--"));
        let repo = cache.join(&folder);
        if !repo.is_dir() {
            return Err(not_cached(format!(
                "no {folder} in the cache {}",
                cache.display()
            )));
        }
        let revision = self.revision.as_deref().unwrap_or("main");
        let commit = if is_commit(revision) {
            revision.to_owned()
        } else {
            // `os.path.join(storage_folder, "refs", revision)`: a revision that would leave
            // refs/ is refused, never joined.
            let safe = revision
                .split('/')
                .all(|p| !p.is_empty() && p != "." && p != "..")
                && !revision.contains(['\\', '\0']);
            if !safe {
                return Err(bad(format!(
                    "the revision {revision:?} is not a branch, tag or commit name"
                )));
            }
            let ref_path = repo.join("refs").join(revision);
            let text = match std::fs::symlink_metadata(&ref_path) {
                Ok(m) if m.is_file() && m.len() <= 64 => std::fs::read(&ref_path)
                    .map_err(|e| not_cached(format!("{}: {e}", ref_path.display())))?,
                Ok(_) => {
                    return Err(not_cached(format!(
                    "{} is not a ref file huggingface_hub writes (a regular file holding a commit)",
                    ref_path.display()
                )))
                }
                Err(_) => {
                    return Err(not_cached(format!(
                        "no revision {revision:?} in the cache (no {})",
                        ref_path.display()
                    )))
                }
            };
            // The ref is read whole, as `f.read()` reads it: it must be the commit itself.
            match std::str::from_utf8(&text) {
                Ok(c) if is_commit(c) => c.to_owned(),
                _ => {
                    return Err(not_cached(format!(
                        "{} does not hold a commit id (40 lower-case hex digits)",
                        ref_path.display()
                    )))
                }
            }
        };
        let snapshot = repo.join("snapshots").join(&commit);
        if !snapshot.is_dir() {
            return Err(not_cached(format!(
                "no snapshot of commit {commit} ({} is not a directory)",
                snapshot.display()
            )));
        }
        if self.path.is_empty() {
            return Ok(snapshot);
        }
        if self.path.split('/').any(|p| p == "." || p == "..") {
            return Err(bad(format!(
                "the path {:?} has a `.` or `..` component",
                self.path
            )));
        }
        Ok(snapshot.join(&self.path))
    }
}

/// Python's `os.path.expanduser` for `~` and `~/…` (not `~user`), then `os.path.expandvars`:
/// `$name` and `${name}` replaced by the variable's value, unknown ones left as they are.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    let home = || env("HOME").map(|h| h.to_string_lossy().into_owned());
    let value = match (value.strip_prefix('~'), home()) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => format!("{h}{rest}"),
        _ => value.to_owned(),
    };
    let mut out = String::new();
    let mut rest = value.as_str();
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let n = after
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            (&after[..n], n)
        };
        match env(name).filter(|_| len > 0) {
            Some(v) => out.push_str(&v.to_string_lossy()),
            None => out.push_str(&rest[i..i + 1 + len]),
        }
        rest = &rest[i + 1 + len..];
    }
    out.push_str(rest);
    PathBuf::from(out)
}

/// The cache directory, as huggingface_hub 2.4.0's `constants.py` chooses it: `HF_HUB_CACHE`,
/// else the older `HUGGINGFACE_HUB_CACHE`, else `HF_HOME/hub`, where `HF_HOME` defaults to
/// `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`. (A variable set to the empty
/// string counts as unset here; Python would take the current directory.)
pub fn cache_dir(env: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    let var = |name: &str| {
        env(name)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string_lossy().into_owned())
    };
    if let Some(c) = var("HF_HUB_CACHE").or_else(|| var("HUGGINGFACE_HUB_CACHE")) {
        return expand(&c, env);
    }
    let home = var("HF_HOME").unwrap_or_else(|| {
        let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| "~/.cache".into());
        format!("{cache}/huggingface")
    });
    expand(&home, env).join("hub")
}

/// Resolves an `hf://` URI against the cache the process's environment names.
pub fn resolve(uri: &str) -> Result<PathBuf, HubError> {
    let cache = cache_dir(&|name| std::env::var_os(name));
    HubUri::parse(uri)?.resolve_in(&cache)
}

#[cfg(test)]
mod tests;
