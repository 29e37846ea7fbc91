//! A reference feed: a directory of signed tensor manifests, indexed by model name and digest
//! (`socair tensors publish`), from which a scan picks the manifest for the model it scans
//! (`scan --reference-feed`), so that a published model's fingerprints can be compared without
//! the model.
//!
//! A feed is written as a directory and read from one, or from the same layout at an
//! `https://` or `s3://` prefix.
//!
//! The layout (`docs/diff.md`, "A feed of signed manifests"):
//!
//! ```text
//! FEED/socair.feed.json                        {"schema": "socair.tensors.feed/v1",
//!                                               "models": {NAME: [SHA256, ...]}}
//! FEED/NAME/SHA256.tensors.dsse.json           a signed manifest (`socair tensors --sign`)
//! ```
//!
//! Each model's digests are listed in the order they were published; the last is the one a
//! scan compares with. The index is only a directory of what is there: every manifest is
//! verified when it is read, and one whose statement does not name the model and digest it is
//! filed under is refused.

use crate::read::source::{is_remote, InputFile};
use crate::reference::{open_signed_manifest, SignedManifest};
use crate::signing::{decode_base64, Statement, TENSORS_PREDICATE};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The index's schema name.
pub const FEED_SCHEMA: &str = "socair.tensors.feed/v1";
/// The index's file name in the feed.
pub const INDEX: &str = "socair.feed.json";
/// Largest index or manifest envelope read from a feed (a manifest of 100k tensors is about
/// 50 MB).
const MAX_DOCUMENT: u64 = 256 << 20;

/// The feed's index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedIndex {
    /// Always [`FEED_SCHEMA`].
    pub schema: String,
    /// Each model name's published digests, oldest first.
    pub models: BTreeMap<String, Vec<String>>,
}

/// A model name usable as a directory of a feed: `/`-separated parts (a Hub name is
/// `namespace/name`), each not empty, not `.` or `..`, with no backslash or control
/// character.
fn check_name(name: &str) -> Result<(), String> {
    let bad_part = |p: &str| {
        p.is_empty()
            || p == "."
            || p == ".."
            || p.len() > 255
            || p.chars().any(|c| c == '\\' || c.is_control())
    };
    if name.len() > 1024 || name.split('/').any(bad_part) {
        return Err(format!(
            "the model name {name:?} cannot name a directory of a feed"
        ));
    }
    Ok(())
}

fn check_digest(sha256: &str) -> Result<(), String> {
    if sha256.len() == 64
        && sha256
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        Ok(())
    } else {
        Err(format!("{sha256:?} is not a SHA-256 digest"))
    }
}

/// Where a model's manifest lies in the feed.
pub fn manifest_path(feed: &Path, name: &str, sha256: &str) -> Result<PathBuf, String> {
    check_name(name)?;
    check_digest(sha256)?;
    Ok(feed.join(name).join(format!("{sha256}.tensors.dsse.json")))
}

/// A feed document's bytes, refused past [`MAX_DOCUMENT`]: a file, or an object at an
/// `https://` or `s3://` address (a feed published to a web server or a bucket).
fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let at = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = InputFile::open(path).map_err(at)?;
    if file.len() > MAX_DOCUMENT {
        return Err(format!(
            "{}: {} bytes, more than a feed document may hold ({MAX_DOCUMENT})",
            path.display(),
            file.len()
        ));
    }
    let mut bytes = vec![0u8; file.len() as usize];
    file.read_exact_at(0, &mut bytes).map_err(at)?;
    Ok(bytes)
}

/// Reads the feed's index; a feed without one is empty.
pub fn read_index(feed: &Path) -> Result<FeedIndex, String> {
    let path = feed.join(INDEX);
    if !is_remote(feed) && !path.exists() {
        return Ok(FeedIndex {
            schema: FEED_SCHEMA.into(),
            models: BTreeMap::new(),
        });
    }
    let bytes = read_bounded(&path)?;
    crate::signing::no_duplicate_keys(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let index: FeedIndex =
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    if index.schema != FEED_SCHEMA {
        return Err(format!(
            "{}: schema {:?}, expected {FEED_SCHEMA}",
            path.display(),
            index.schema
        ));
    }
    Ok(index)
}

/// The model name and digest a signed manifest's statement is about, read without verifying
/// (publishing files it; every reader verifies it).
pub fn subject_of(envelope: &[u8]) -> Result<(String, String), String> {
    let env: crate::signing::Envelope =
        serde_json::from_slice(envelope).map_err(|e| format!("not a DSSE envelope: {e}"))?;
    let payload = decode_base64(&env.payload).map_err(|e| format!("its payload is {e}"))?;
    let statement = Statement::parse(&payload)?;
    if statement.predicate_type != TENSORS_PREDICATE {
        return Err(format!(
            "a {} statement, not a signed tensor manifest",
            statement.predicate_type
        ));
    }
    let subject = match statement.subject.as_slice() {
        [one] => one,
        _ => return Err("a signed tensor manifest names exactly one subject".into()),
    };
    let sha256 = subject
        .digest
        .get("sha256")
        .ok_or("its subject has no sha256")?;
    Ok((subject.name.clone(), sha256.clone()))
}

/// Files `envelope` in the feed under its subject's name and digest and lists it last in the
/// index (published again, it moves to the end). Returns where it was written. A feed is
/// published as a directory; served over `https://` or copied to `s3://`, it is read there.
pub fn publish(feed: &Path, envelope: &[u8]) -> Result<PathBuf, String> {
    if is_remote(feed) {
        return Err(format!(
            "{}: publish writes a feed directory; serve it over https:// or copy it to s3:// to read it there",
            feed.display()
        ));
    }
    let (name, sha256) = subject_of(envelope)?;
    let path = manifest_path(feed, &name, &sha256)?;
    let mut index = read_index(feed)?;
    let dir = path.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::base::output::write_atomically(&path, envelope)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let list = index.models.entry(name).or_default();
    list.retain(|d| *d != sha256);
    list.push(sha256);
    let index_path = feed.join(INDEX);
    crate::base::output::write_atomically(&index_path, &crate::base::output::to_json_bytes(&index))
        .map_err(|e| format!("{}: {e}", index_path.display()))?;
    Ok(path)
}

/// The verified manifest a scan of the model named `name` compares with: the last one
/// published under that name, verified against `keys`; its statement must be about that
/// name and digest.
pub fn pick(feed: &Path, name: &str, keys: &[VerifyingKey]) -> Result<Picked, String> {
    let index = read_index(feed)?;
    let sha256 = index
        .models
        .get(name)
        .and_then(|l| l.last())
        .ok_or_else(|| {
            format!(
                "{}: the feed holds no signed manifest for the model {name:?}",
                feed.display()
            )
        })?;
    let path = manifest_path(feed, name, sha256)?;
    let bytes = read_bounded(&path)?;
    let signed = open_signed_manifest(&bytes, keys, &path)?;
    if signed.manifest.artifact.name != name || signed.manifest.artifact.sha256 != *sha256 {
        return Err(format!(
            "{}: the signed manifest is about {:?} (sha256 {}), not the model it is filed under",
            path.display(),
            signed.manifest.artifact.name,
            signed.manifest.artifact.sha256
        ));
    }
    Ok(Picked {
        sha256: crate::base::digest::hex(&sha2::Sha256::digest(&bytes)),
        location: path,
        signed,
    })
}

/// The manifest a feed gave: where it was, the SHA-256 of its envelope's bytes, and what it
/// holds, verified.
#[derive(Debug, Clone)]
pub struct Picked {
    /// The envelope's file or address.
    pub location: PathBuf,
    /// The SHA-256 of the envelope's bytes.
    pub sha256: String,
    /// The verified manifest.
    pub signed: SignedManifest,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_leave_the_feed_are_refused() {
        let feed = Path::new("/feed");
        let sha = "ab".repeat(32);
        for bad in ["", ".", "..", "a/../b", "/a", "a/", "a\\b", "a\nb"] {
            assert!(manifest_path(feed, bad, &sha).is_err(), "{bad:?}");
        }
        assert!(manifest_path(feed, "model", "../x").is_err());
        assert_eq!(
            manifest_path(feed, "tiny-bert", &sha).unwrap(),
            Path::new("/feed/tiny-bert").join(format!("{sha}.tensors.dsse.json"))
        );
        assert_eq!(
            manifest_path(feed, "org/tiny-bert", &sha).unwrap(),
            Path::new("/feed/org/tiny-bert").join(format!("{sha}.tensors.dsse.json"))
        );
    }
}
