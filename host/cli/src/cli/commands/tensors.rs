//! `socair tensors PATH` (a model's tensor manifest) and `socair tensors diff` (two models'
//! tensors compared).

use super::context::{say_fetched, Context, STDERR_FINDINGS};
use crate::base::output::to_json_bytes;
use crate::cli::exit::{Fatal, EXIT_NEGATIVE, EXIT_OK};
use crate::cli::human;
use crate::cli::output::{emit, for_a_person};
use crate::fingerprint::manifest::{self, TensorManifest};
use crate::fingerprint::{diff, diff_html, diff_text};
use std::path::{Path, PathBuf};

/// `socair tensors diff ARTIFACT REFERENCE [--out F] [--html PAGE] [--limit N] [--json]`: the
/// comparison as JSON, its summary on standard error; on a terminal (no --out, no --json) the
/// summary alone, its verdict first; exit 1 when they differ.
#[allow(clippy::too_many_arguments)]
pub fn diff(
    ctx: Context,
    artifact: &Path,
    reference: &Path,
    out: Option<PathBuf>,
    html: Option<PathBuf>,
    limit: usize,
    keys: &KeySource,
    json: bool,
) -> Result<u8, Fatal> {
    let keys = keys.keys()?;
    let manifests = |p: &Path| socair_signing::reference::read_any_manifest(p, &keys);
    let set = ctx.plugins_warned();
    let comparison =
        diff::compare_paths(artifact, reference, &set, &ctx.readers, &manifests).map_err(Fatal)?;
    let summary = diff_text::summary(&comparison, limit);
    if let Some(page) = html {
        let rendered = diff_html::render(&comparison, &summary);
        emit(Some(&page), rendered.as_bytes())?;
    }
    if for_a_person(json, out.as_deref()) {
        // The verdict (the summary's last line) first, then the accounting and the lists.
        let mut lines: Vec<&str> = summary.lines().collect();
        let verdict = lines.pop().unwrap_or_default().trim();
        let mut text = format!("Verdict: {verdict}\n");
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(
            "Next: --json (or --out FILE) for every pair and its numbers, --html PAGE for a map of the layers.\n",
        );
        emit(None, text.as_bytes())?;
    } else {
        emit(out.as_deref(), &to_json_bytes(&comparison))?;
        for line in summary.lines() {
            eprintln!("socair: {line}");
        }
    }
    Ok(if comparison.matches {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    })
}

/// `socair tensors PATH [--out F] [--json]`: the tensor manifest; exit 1 when a tensor or file
/// went unread.
pub fn fingerprint(
    ctx: Context,
    path: &Path,
    out: Option<PathBuf>,
    json: bool,
    sign_with: Option<&Path>,
) -> Result<u8, Fatal> {
    // The key is read first: a key that cannot be read stops before the model is.
    let key = sign_with
        .map(socair_signing::signing::load_signing_key)
        .transpose()
        .map_err(|e| Fatal(e.to_string()))?;
    let set = ctx.plugins_warned();
    let manifest =
        manifest::fingerprint(path, &set, &ctx.readers).map_err(|e| Fatal(e.to_string()))?;
    say_fetched(0);
    if let Some(key) = key {
        if manifest.artifact.sha256.len() != 64 {
            return Err(Fatal(format!(
                "{}: the model's digest was not computed, so there is no subject to sign",
                path.display()
            )));
        }
        emit(
            out.as_deref(),
            &socair_signing::reference::sign_manifest(&manifest, &key),
        )?;
        say_fingerprinted(&manifest);
        eprintln!(
            "socair: signed with key {} (verify with its .pub: scan --reference-pub, tensors diff --pub)",
            socair_signing::signing::keyid(&key.verifying_key())
        );
    } else if for_a_person(json, out.as_deref()) {
        emit(None, human::tensors_report(&manifest).as_bytes())?;
    } else {
        emit(out.as_deref(), &to_json_bytes(&manifest))?;
        say_fingerprinted(&manifest);
    }
    Ok(if manifest.unread.is_empty() {
        EXIT_OK
    } else {
        EXIT_NEGATIVE
    })
}

/// Beside a manifest written as JSON: one line counting what was fingerprinted, then the first
/// things left unread (the manifest holds them all).
fn say_fingerprinted(manifest: &TensorManifest) {
    let files: std::collections::BTreeSet<&str> =
        manifest.tensors.iter().map(|t| t.file.as_str()).collect();
    eprintln!(
        "socair: {} tensors fingerprinted in {} file{} of {} {:?} (sha256 {}); {} unread",
        manifest.tensors.len(),
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        manifest.artifact.format,
        manifest.artifact.name,
        &manifest.artifact.sha256[..16.min(manifest.artifact.sha256.len())],
        manifest.unread.len()
    );
    for u in manifest.unread.iter().take(STDERR_FINDINGS) {
        match &u.tensor {
            Some(t) => {
                eprintln!("socair: unread: {} tensor {t:?}: {}", u.file, u.reason)
            }
            None => eprintln!("socair: unread: {}: {}", u.file, u.reason),
        }
    }
    if manifest.unread.len() > STDERR_FINDINGS {
        eprintln!(
            "socair: and {} more unread (in the manifest)",
            manifest.unread.len() - STDERR_FINDINGS
        );
    }
}

/// The environment variable naming the public key a signed reference manifest must verify
/// under, when no flag names one.
pub const REFERENCE_PUB_ENV: &str = "SOCAIR_TENSOR_REFERENCE_PUB";

/// Where the keys a signed manifest must verify under come from.
#[derive(Debug, Default)]
pub struct KeySource {
    /// Public key files (`--pub`, `--reference-pub`).
    pub public: Vec<PathBuf>,
    /// A store whose trust policy's `reference` keys count.
    pub store: Option<PathBuf>,
}

impl KeySource {
    /// The keys: the store's `reference` keys, else the flags', else
    /// `SOCAIR_TENSOR_REFERENCE_PUB`'s; a key or store that cannot be read stops the command.
    pub fn keys(&self) -> Result<Vec<ed25519_dalek::VerifyingKey>, Fatal> {
        if let Some(store) = &self.store {
            let root = crate::airlock::store::default_path(Some(store.clone()));
            let opened =
                crate::airlock::store::Store::open(&root).map_err(|e| Fatal(e.to_string()))?;
            let policy = opened.policy().map_err(|e| Fatal(e.to_string()))?;
            let keys = policy
                .keys_with_role("reference")
                .map_err(|e| Fatal(e.to_string()))?;
            if keys.is_empty() {
                return Err(Fatal(format!(
                    "{}: the store trusts no key with the role `reference` (socair airlock trust K.pub --role reference)",
                    root.display()
                )));
            }
            return Ok(keys);
        }
        let from_env = std::env::var_os(REFERENCE_PUB_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        let paths: Vec<PathBuf> = if self.public.is_empty() {
            from_env.into_iter().collect()
        } else {
            self.public.clone()
        };
        paths
            .iter()
            .map(|p| socair_signing::signing::load_public_key(p).map_err(|e| Fatal(e.to_string())))
            .collect()
    }
}

/// `socair tensors publish ENVELOPE --feed DIR`: files a signed manifest in a feed.
pub fn publish(envelope: &Path, feed: &Path) -> Result<u8, Fatal> {
    let bytes =
        std::fs::read(envelope).map_err(|e| Fatal(format!("{}: {e}", envelope.display())))?;
    let written = socair_signing::feed::publish(feed, &bytes)
        .map_err(|e| Fatal(format!("{}: {e}", envelope.display())))?;
    eprintln!(
        "socair: published {} as {} (scans with --reference-feed {} compare a model of that name with it)",
        envelope.display(),
        written.display(),
        feed.display()
    );
    Ok(EXIT_OK)
}

/// The signed manifest in `feed` a scan of `paths` compares with: the one last published under
/// the scanned model's name (one local path: its file or directory name), checked against
/// `keys` here so that a feed that cannot vouch stops the scan before it starts.
pub fn reference_from_feed(
    feed: &Path,
    paths: &[PathBuf],
    each: &[PathBuf],
    keys: &KeySource,
) -> Result<crate::report::reference::Reference, Fatal> {
    let [path] = paths else {
        return Err(Fatal(
            "--reference-feed compares one model: give one path (not --each)".into(),
        ));
    };
    if !each.is_empty() {
        return Err(Fatal(
            "--reference-feed compares one model: give one path (not --each)".into(),
        ));
    }
    let name = path
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .ok_or_else(|| {
            Fatal(format!(
                "{}: --reference-feed takes the model's name from a local file or directory",
                path.display()
            ))
        })?;
    let keys = keys.keys()?;
    let picked = socair_signing::feed::pick(feed, &name, &keys).map_err(Fatal)?;
    eprintln!(
        "socair: the reference is {} (signed by key {}), from the feed {}",
        picked.location.display(),
        picked.signed.keyid,
        feed.display()
    );
    Ok(crate::report::reference::Reference {
        named: crate::report::document::NamedDigest {
            name: picked
                .location
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            sha256: picked.sha256,
        },
        manifest: picked.signed.manifest,
    })
}
