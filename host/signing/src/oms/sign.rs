//! `socair sign`: a model signed as `model_signing sign key MODEL --private_key K --signature
//! SIG` signs it (model_signing 1.1.1 `_cli.py` `_sign_private_key`): files serialization with
//! SHA-256, symbolic links refused, the git paths and the signature file itself left out.

use crate::oms::manifest::{self, Listing, Method, GIT_PATHS};
use crate::oms::payload::{self, Serialization};
use crate::oms::{bundle, key, OmsError};
use crate::signing::{pae, PAYLOAD_TYPE};
use p256::ecdsa::SigningKey;
use std::path::{Path, PathBuf};

/// A signed model.
#[derive(Debug, Clone)]
pub struct Signed {
    /// The bundle's bytes.
    pub bundle: Vec<u8>,
    /// The model's name, as the subject holds it.
    pub model_name: String,
    /// The root digest (hex).
    pub root: String,
    /// How many files were hashed.
    pub files: usize,
    /// The files left out (under an ignored path).
    pub ignored: Vec<String>,
    /// The ignore paths recorded in the signature.
    pub ignore_paths: Vec<String>,
    /// The key's hint.
    pub hint: String,
}

/// The directory or file a model path names: an `hf://org/name[@revision]` URI resolved in the
/// Hugging Face cache (offline, `read::hfcache`), any other path as it is.
pub fn local(model: &Path) -> Result<PathBuf, OmsError> {
    if !crate::read::hfcache::is_uri(model) {
        return Ok(model.to_owned());
    }
    crate::read::hfcache::resolve(&model.to_string_lossy()).map_err(|e| OmsError::Unhashable {
        path: model.display().to_string(),
        why: e.to_string(),
    })
}

/// The model's name as model_signing takes it: the last component of its path, or of the
/// resolved path when that is empty or `..` (`file.Serializer.serialize`).
pub fn model_name(model: &Path) -> String {
    match model.file_name() {
        Some(n) => n.to_string_lossy().into_owned(),
        None => model
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default(),
    }
}

/// Where `path` lies relative to the model, when it lies inside it: `_cli.py`
/// `_resolve_ignore_paths` resolves both and keeps the paths inside the model. `path` need not
/// exist yet; its directory must.
pub fn inside(model: &Path, path: &Path) -> Option<String> {
    let root = model.canonicalize().ok()?;
    let resolved = match path.canonicalize() {
        Ok(p) => p,
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
                _ => PathBuf::from("."),
            };
            parent.canonicalize().ok()?.join(path.file_name()?)
        }
    };
    let rel = resolved.strip_prefix(&root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

/// Paths to leave out as model_signing's CLI reads `--ignore-paths` (`_resolve_ignore_paths`):
/// each resolved from the current directory and kept relative to the model. One outside the
/// model is refused here, naming it (model_signing drops it without a word).
pub fn resolve_ignore(model: &Path, paths: &[PathBuf]) -> Result<Vec<String>, OmsError> {
    paths
        .iter()
        .map(|p| match inside(model, p) {
            Some(rel) if rel != "." => Ok(rel),
            _ => Err(OmsError::Unhashable {
                path: p.display().to_string(),
                why: format!(
                    "not a path inside {} (ignore paths are read from the current directory, as model_signing reads them)",
                    model.display()
                ),
            }),
        })
        .collect()
}

/// The ignore paths a signature of `model` written to `signature` records: the git paths,
/// the signature's own path when it lies in the model, and `extra`; sorted, once each.
pub fn ignore_paths(model: &Path, signature: Option<&Path>, extra: &[String]) -> Vec<String> {
    let mut paths: Vec<String> = GIT_PATHS.iter().map(|s| (*s).to_owned()).collect();
    paths.extend(signature.and_then(|s| inside(model, s)));
    paths.extend(extra.iter().cloned());
    paths.sort();
    paths.dedup();
    paths
}

/// The files of `model` and its resources under files serialization with SHA-256.
pub fn hash_model(
    model: &Path,
    ignore: &[String],
) -> Result<(Listing, Vec<manifest::Resource>), OmsError> {
    let listing = manifest::list(model, ignore)?;
    let resources = manifest::hash(&listing, Method::Files)?;
    Ok((listing, resources))
}

/// The serialization `socair sign` records (model_signing's CLI defaults).
pub fn files_serialization(ignore_paths: Vec<String>) -> Serialization {
    Serialization {
        method: Method::Files,
        hash_type: "sha256".into(),
        allow_symlinks: false,
        ignore_paths,
    }
}

/// Signs `model` with `signing_key` into a bundle meant for `signature` (the file is not
/// written here), leaving out `extra` too (paths relative to the model: [`resolve_ignore`]).
pub fn sign(
    model: &Path,
    signing_key: &SigningKey,
    signature: &Path,
    extra: &[String],
) -> Result<Signed, OmsError> {
    if inside(model, signature).as_deref() == Some(".") {
        return Err(OmsError::Unhashable {
            path: signature.display().to_string(),
            why: "the signature would replace the model it signs".into(),
        });
    }
    let ignore = ignore_paths(model, Some(signature), extra);
    let (listing, resources) = hash_model(model, &ignore)?;
    let name = model_name(model);
    let mut serialization = files_serialization(ignore.clone());
    // What `model_signing sign key --allow_symlinks` records: links were followed.
    serialization.allow_symlinks = listing.links_followed > 0;
    let (statement, root) = payload::build(&name, &serialization, &resources);
    let public = signing_key.verifying_key().into();
    let hint = key::hint(&public);
    let signature_bytes = key::sign(signing_key, &pae(PAYLOAD_TYPE, &statement));
    Ok(Signed {
        bundle: bundle::write(&hint, &statement, &signature_bytes),
        model_name: name,
        root,
        files: listing.files.len(),
        ignored: listing.ignored,
        ignore_paths: ignore,
        hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_ignored_only_inside_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("m");
        std::fs::create_dir_all(m.join("sub")).unwrap();
        assert_eq!(
            inside(&m, &m.join("model.sig")).as_deref(),
            Some("model.sig")
        );
        assert_eq!(
            inside(&m, &m.join("sub/../sub/x.sig")).as_deref(),
            Some("sub/x.sig")
        );
        assert_eq!(inside(&m, &dir.path().join("model.sig")), None);
        assert_eq!(inside(&m, &m).as_deref(), Some("."));
        assert_eq!(
            ignore_paths(&m, Some(&m.join("model.sig")), &[]),
            [
                ".git",
                ".gitattributes",
                ".github",
                ".gitignore",
                "model.sig"
            ]
        );
        assert_eq!(
            resolve_ignore(&m, &[m.join("sub"), m.join("README.md")]).unwrap(),
            ["sub", "README.md"]
        );
        assert!(resolve_ignore(&m, &[dir.path().join("x")]).is_err());
        assert!(resolve_ignore(&m, std::slice::from_ref(&m)).is_err());
        assert_eq!(model_name(&m), "m");
        assert_eq!(model_name(&m.join("sub/..")), "m");
    }
}
