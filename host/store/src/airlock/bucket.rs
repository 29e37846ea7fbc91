//! A store on object storage (`--store s3://bucket/prefix`): what a local store keeps in
//! directories, kept as objects under the prefix, for many machines at once with no
//! coordinator.
//!
//! ```text
//! <prefix>/log/000000000001.json            the activity log, one immutable entry per
//!                                           object, each claimed with If-None-Match: *
//!                                           (see bucket_log.rs)
//! <prefix>/log-head.json                    head record: an entry number and its line's sha256
//! <prefix>/policy/<sha256>.json             every policy the log has named (content-addressed)
//! <prefix>/reviews/<id>.dsse.json           reviews of pickle globals
//! <prefix>/incoming/<sha256>/<name>         a pulled file, or <name>/<path> for each file of
//!                                           a model directory
//! <prefix>/incoming/<sha256>/attestation.dsse.json, acceptances/…, derivation(s)…
//! <prefix>/incoming/<sha256>/.staged.json   the staging marker: written last, the artifact is
//!                                           staged only once it exists
//! <prefix>/promoted/<sha256>/…              the copy that passed the gate
//! <prefix>/promoted/<sha256>/.promoted.json the promotion marker, claimed with
//!                                           If-None-Match: *: promoted only once it exists
//! ```
//!
//! Object storage has no rename, so what a local store does by renaming a finished directory
//! is done by writing a marker last. A pull uploads the artifact (each object complete or
//! absent: a multipart upload is invisible until completed), then the staging marker.
//! Promotion copies the staged objects to `promoted/<sha256>/` through this machine, hashing
//! the bytes as they pass, runs the gate with that hash as the bytes' present digest, then
//! claims the promotion marker; only then is the staged copy deleted. A copy without its
//! marker is no promotion: nothing lists, exports or trusts it, and the next promote redoes it.

use crate::airlock::error::StoreError;
use crate::base::cloud::{self, Location, Uploader};
use crate::read::modeldir;
use crate::read::source::{hash_file, InputFile};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The staging marker's name inside `incoming/<sha256>/`.
pub const STAGED_MARKER: &str = ".staged.json";
/// The promotion marker's name inside `promoted/<sha256>/`.
pub const PROMOTED_MARKER: &str = ".promoted.json";

/// What a marker records: the artifact's name and its files as they were written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// The artifact's name (a file's name, or a model directory's).
    pub name: String,
    /// Each file: its key under `<area>/<sha256>/` (the name itself for a file,
    /// `<name>/<path>` for a directory's files), its size and sha256.
    pub files: Vec<MarkerFile>,
}

/// One file of a marked artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerFile {
    /// Key relative to `<area>/<sha256>/`.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Its sha256 when written.
    pub sha256: String,
}

impl Marker {
    /// Whether the artifact is a model directory.
    pub fn is_dir(&self) -> bool {
        !(self.files.len() == 1 && self.files[0].path == self.name)
    }
}

/// The store on object storage whose prefix is `root`.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// The prefix.
    pub root: Location,
}

impl Bucket {
    /// `<area>/<sha256>/<rel>`.
    pub fn at(&self, area: &str, sha: &str, rel: &str) -> Location {
        self.root.child(&format!("{area}/{sha}/{rel}"))
    }

    /// The marker of `sha` in `area` (`incoming` or `promoted`), when it has one.
    pub fn marker(&self, area: &str, sha: &str) -> Result<Option<Marker>, StoreError> {
        let name = if area == "promoted" {
            PROMOTED_MARKER
        } else {
            STAGED_MARKER
        };
        let at = self.at(area, sha, name);
        match cloud::get_if_any(&at).map_err(StoreError::from)? {
            None => Ok(None),
            Some(b) => serde_json::from_slice(&b)
                .map(Some)
                .map_err(|e| StoreError::Unusable(format!("{}: {e}", at.url()))),
        }
    }

    /// Every sha256 marked in `area`, sorted.
    pub fn marked(&self, area: &str) -> Result<Vec<String>, StoreError> {
        let marker = if area == "promoted" {
            PROMOTED_MARKER
        } else {
            STAGED_MARKER
        };
        let listed = cloud::list(&self.root.child(area), None).map_err(StoreError::from)?;
        let mut out: Vec<String> = listed
            .iter()
            .filter_map(|(k, _)| {
                let rest = k.as_ref().rsplit_once(&format!("{area}/"))?.1;
                let (sha, name) = rest.split_once('/')?;
                (name == marker && sha.len() == 64).then(|| sha.to_owned())
            })
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Writes a document beside an artifact (replacing one of that name).
    pub fn put_doc(
        &self,
        area: &str,
        sha: &str,
        rel: &str,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        cloud::put(&self.at(area, sha, rel), bytes.to_vec().into(), false).map_err(StoreError::from)
    }

    /// Reads a document beside an artifact, when there is one.
    pub fn get_doc(&self, area: &str, sha: &str, rel: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(cloud::get_if_any(&self.at(area, sha, rel))
            .map_err(StoreError::from)?
            .map(|b| b.to_vec()))
    }

    /// The documents in a folder beside an artifact (acceptances), each with its name.
    pub fn docs_in(
        &self,
        area: &str,
        sha: &str,
        dir: &str,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let folder = self.at(area, sha, dir);
        let mut out = Vec::new();
        for (key, _) in cloud::list(&folder, None).map_err(StoreError::from)? {
            let at = folder.with_key(key);
            if let Some(b) = cloud::get_if_any(&at).map_err(StoreError::from)? {
                out.push((at.name(), b.to_vec()));
            }
        }
        Ok(out)
    }

    /// The artifact's digest now: every byte of its objects hashed (a file's sha256, or a
    /// directory's `socair.modeldir/v1` digest).
    pub fn rehash(&self, area: &str, sha: &str, marker: &Marker) -> Result<String, StoreError> {
        let mut entries = Vec::new();
        for f in &marker.files {
            let url = self.at(area, sha, &f.path).url();
            let input = InputFile::open_remote(&url)
                .map_err(|e| StoreError::Unusable(format!("{url}: {e}")))?;
            let h = hash_file(&input).map_err(|e| StoreError::Unusable(format!("{url}: {e}")))?;
            entries.push((rel_in(marker, &f.path), input.len(), h));
        }
        Ok(digest_of(marker, &entries))
    }

    /// Uploads the files of a local or remote artifact to `incoming/<sha>/`, hashing them
    /// again as they pass (each must hash as `expected` says), then writes the staging marker
    /// unless one is there already. `files` are `(key under incoming/<sha>/, source)`.
    pub fn stage(
        &self,
        sha: &str,
        name: &str,
        files: &[(String, PathBuf, String)],
    ) -> Result<(), StoreError> {
        if self.marker("incoming", sha)?.is_some() {
            return Ok(());
        }
        let mut written = Vec::new();
        for (rel, source, expected) in files {
            let to = self.at("incoming", sha, rel);
            let (got, size) = upload_from(source, &to)?;
            if &got != expected {
                let _ = cloud::delete(&to);
                return Err(StoreError::Refused(format!(
                    "{} changed while it was copied: it hashed to {expected}, then to {got}",
                    source.display()
                )));
            }
            written.push(MarkerFile {
                path: rel.clone(),
                size,
                sha256: got,
            });
        }
        let marker = Marker {
            name: name.to_owned(),
            files: written,
        };
        let bytes = crate::base::output::to_json_bytes(&marker);
        match cloud::put(&self.at("incoming", sha, STAGED_MARKER), bytes.into(), true) {
            Ok(()) => Ok(()),
            // Staged meanwhile by another machine, with the same bytes (the same sha256).
            Err(e) if e.is_already_taken() => Ok(()),
            Err(e) => Err(StoreError::from(e)),
        }
    }

    /// Promotion: copies `incoming/<sha>/` to `promoted/<sha>/` through this machine, hashing
    /// the artifact's bytes as they pass, asks `gate` about them (it gets their digest), and
    /// claims the promotion marker. Returns whether this call promoted it (`false`: another
    /// did, before or meanwhile). The staged copy is deleted once the marker stands.
    pub fn promote(
        &self,
        sha: &str,
        gate: impl FnOnce(&str) -> Result<(), StoreError>,
    ) -> Result<bool, StoreError> {
        if self.marker("promoted", sha)?.is_some() {
            self.delete_staged(sha);
            return Ok(false);
        }
        let mut copied = Vec::new();
        match self.copy_and_claim(sha, gate, &mut copied) {
            Ok(promoted) => Ok(promoted),
            // Another machine promoting the same artifact at the same time claimed the marker
            // first, and its clean-up took the staged objects from under this copy: the
            // artifact is promoted. The copies here are its objects now (the same keys, the
            // same bytes): never deleted. (Its marker stands before it deletes anything staged,
            // so a copy that failed for that reason finds the marker.)
            Err(_) if matches!(self.marker("promoted", sha), Ok(Some(_))) => Ok(false),
            Err(e) => {
                for c in &copied {
                    let _ = cloud::delete(c);
                }
                Err(e)
            }
        }
    }

    /// [`Bucket::promote`]'s steps: the staged objects copied to `promoted/<sha256>/` (each
    /// copy's location pushed to `copied` as it is made), the gate run on their hash, and the
    /// promotion marker claimed; `Ok(false)` when another machine claimed it first.
    fn copy_and_claim(
        &self,
        sha: &str,
        gate: impl FnOnce(&str) -> Result<(), StoreError>,
        copied: &mut Vec<Location>,
    ) -> Result<bool, StoreError> {
        let staged = self.marker("incoming", sha)?.ok_or_else(|| {
            StoreError::Unusable(format!(
                "{sha}: nothing with this sha256 is staged in {}",
                self.root.url()
            ))
        })?;
        crate::base::fault::point("promote.staged-read");
        // Every object of incoming/<sha>/ but the marker: the artifact and its documents.
        let listed = cloud::list(&self.root.child(&format!("incoming/{sha}")), None)
            .map_err(StoreError::from)?;
        let artifact: std::collections::BTreeSet<&str> =
            staged.files.iter().map(|f| f.path.as_str()).collect();
        let mut entries = Vec::new();
        for (key, _) in &listed {
            let rel = key
                .as_ref()
                .split_once(&format!("incoming/{sha}/"))
                .map(|(_, r)| r.to_owned())
                .unwrap_or_default();
            if rel.is_empty() || rel == STAGED_MARKER {
                continue;
            }
            let from = self.root.with_key(key.clone());
            let to = self.at("promoted", sha, &rel);
            let (h, size) = copy_object(&from, &to)?;
            copied.push(to);
            if artifact.contains(rel.as_str()) {
                entries.push((rel_in(&staged, &rel), size, h));
            }
        }
        if entries.len() != staged.files.len() {
            return Err(StoreError::Refused(format!(
                "incoming/{sha}/ holds {} of the {} files its marker lists",
                entries.len(),
                staged.files.len()
            )));
        }
        gate(&digest_of(&staged, &entries))?;
        crate::base::fault::point("promote.assessed");
        let bytes = crate::base::output::to_json_bytes(&staged);
        match cloud::put(
            &self.at("promoted", sha, PROMOTED_MARKER),
            bytes.into(),
            true,
        ) {
            Ok(()) => {}
            Err(e) if e.is_already_taken() => return Ok(false),
            Err(e) => return Err(StoreError::from(e)),
        }
        crate::base::fault::point("promote.renamed");
        self.delete_staged(sha);
        Ok(true)
    }

    /// Deletes what is staged for `sha` (after promotion): the marker first, so that it is
    /// never listed as staged with part of its objects gone.
    fn delete_staged(&self, sha: &str) {
        let _ = cloud::delete(&self.at("incoming", sha, STAGED_MARKER));
        if let Ok(listed) = cloud::list(&self.root.child(&format!("incoming/{sha}")), None) {
            for (n, (key, _)) in listed.into_iter().enumerate() {
                let _ = cloud::delete(&self.root.with_key(key));
                if n == 0 {
                    crate::base::fault::point("unstage.first-deleted");
                }
            }
        }
    }

    /// Downloads the files of a marked artifact into the local directory `into` (the
    /// artifact lands at `into/<name>`), hashing them; returns its digest.
    pub fn download(
        &self,
        area: &str,
        sha: &str,
        marker: &Marker,
        into: &Path,
    ) -> Result<String, StoreError> {
        let mut entries = Vec::new();
        for f in &marker.files {
            let url = self.at(area, sha, &f.path).url();
            let dest = into.join(&f.path);
            if let Some(p) = dest.parent() {
                std::fs::create_dir_all(p)
                    .map_err(|e| StoreError::Unusable(format!("{}: {e}", p.display())))?;
            }
            let h = download_hashing(Path::new(&url), &dest, true)?;
            let size = std::fs::metadata(&dest).map_or(0, |m| m.len());
            entries.push((rel_in(marker, &f.path), size, h));
        }
        Ok(digest_of(marker, &entries))
    }

    /// Every review's name and bytes.
    pub fn reviews(&self, dir: &str) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let folder = self.root.child(dir);
        let mut out = Vec::new();
        for (key, _) in cloud::list(&folder, None).map_err(StoreError::from)? {
            let at = folder.with_key(key);
            if let Some(b) = cloud::get_if_any(&at).map_err(StoreError::from)? {
                out.push((at.name(), b.to_vec()));
            }
        }
        Ok(out)
    }
}

/// A file's path inside its artifact, from its key: the key itself for a file, the part after
/// `<name>/` for a directory's file.
fn rel_in(marker: &Marker, key: &str) -> String {
    if marker.is_dir() {
        key.strip_prefix(&format!("{}/", marker.name))
            .unwrap_or(key)
            .to_owned()
    } else {
        key.to_owned()
    }
}

/// A marked artifact's digest from its files' hashes.
fn digest_of(marker: &Marker, entries: &[(String, u64, String)]) -> String {
    if marker.is_dir() {
        modeldir::digest_of(entries)
    } else {
        entries.first().map(|e| e.2.clone()).unwrap_or_default()
    }
}

/// Copies the object at the URL `from` to a new local file `to`: streamed in ranges (each
/// range fetched while the one before is written), hashed as it is written, fsynced when
/// `durable`. Returns the hex sha256.
pub fn download_hashing(from: &Path, to: &Path, durable: bool) -> Result<String, StoreError> {
    use std::io::Write;
    let unusable =
        |p: &Path, e: std::io::Error| StoreError::Unusable(format!("{}: {e}", p.display()));
    let input =
        InputFile::open_remote(from.to_str().unwrap_or_default()).map_err(|e| unusable(from, e))?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| unusable(to, e))?;
    let progress = crate::base::progress::Progress::bytes(input.len(), "copying");
    let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
    let mut failed = None;
    input
        .for_each_chunk(0, input.len(), |chunk| {
            if failed.is_none() {
                sha2::Digest::update(&mut hasher, chunk);
                progress.add(chunk.len() as u64);
                if let Err(e) = dst.write_all(chunk) {
                    failed = Some(e);
                }
            }
        })
        .map_err(|e| unusable(from, e))?;
    if let Some(e) = failed {
        return Err(unusable(to, e));
    }
    if durable {
        dst.sync_all().map_err(|e| unusable(to, e))?;
    }
    Ok(crate::base::digest::hex(&sha2::Digest::finalize(hasher)))
}

/// Uploads a local file or an object to `to`, hashing it as it passes.
pub fn upload_from(source: &Path, to: &Location) -> Result<(String, u64), StoreError> {
    let input = InputFile::open_with(source, false)
        .map_err(|e| StoreError::Unusable(format!("{}: {e}", source.display())))?;
    let mut up = Uploader::new(to);
    let mut failed = None;
    input
        .for_each_chunk(0, input.len(), |chunk| {
            if failed.is_none() {
                if let Err(e) = up.write(chunk) {
                    failed = Some(e);
                }
            }
        })
        .map_err(|e| StoreError::Unusable(format!("{}: {e}", source.display())))?;
    if let Some(e) = failed {
        return Err(StoreError::from(e));
    }
    up.finish().map_err(StoreError::from)
}

/// Copies one object to another key through this machine, hashing the bytes as they pass.
pub fn copy_object(from: &Location, to: &Location) -> Result<(String, u64), StoreError> {
    upload_from(Path::new(&from.url()), to)
}
