//! Pull-through from an upstream hub (`socair serve --upstream URL --key K`): a revision the
//! store lacks is fetched from the upstream as `huggingface_hub` 2.5.0 would fetch it (the
//! revision's `sha` and `siblings` from `/api/models/{repo}/revision/{rev}`, each file from
//! `/{repo}/resolve/{commit}/{path}`), streamed into a scratch folder of the store and hashed
//! as it arrives (a file whose `X-Linked-Etag`/`ETag` is a SHA-256 must hash to it), then
//! moved into the store as a model directory (a store on this machine takes the folder in,
//! made durable, rather than copy and hash it again; one on object storage uploads it),
//! recorded as that revision from those hashes, scanned (which hashes every byte again) and
//! signed with the gateway's key, and promoted when the gate lets it through. Every step goes
//! to the store's activity log (the store's own functions log them). A FAIL blocks it and a
//! LEAD holds it: the request that caused the pull is then answered as any refused revision
//! is.
//!
//! Requests for one revision wait for one pull: a lock per (repository, revision). A dropped
//! upstream connection, a file that does not hash to its ETag, or a response past the bounds
//! leaves nothing staged: the scratch folder is removed, and nothing reaches `incoming/` until
//! every file has arrived.

use crate::metrics::Metrics;
use ed25519_dalek::SigningKey;
use sha2::{Digest, Sha256};
use socair_store::airlock::attest::{is_negative, scan_staged};
use socair_store::airlock::store::Store;
use socair_store::airlock::{gate, repos};
use socair_store::read::plugins::PluginSet;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Files of one revision fetched at most.
const MAX_FILES: usize = 10_000;
/// Largest revision description read from the upstream (its JSON).
const MAX_INFO: usize = 16 << 20;

/// The upstream hub and what a pull-through needs.
pub struct Upstream {
    /// The upstream's base URL, without a trailing `/`.
    base: String,
    /// The gateway's scan key (the store must trust it with the role `scan`).
    key: SigningKey,
    /// The readers scans use.
    plugins: PluginSet,
    client: reqwest::Client,
    /// One lock per (repository, revision) being pulled.
    inflight: tokio::sync::Mutex<HashMap<(String, String), RevisionLock>>,
}

/// The lock one (repository, revision) is pulled under.
type RevisionLock = Arc<tokio::sync::Mutex<()>>;

impl Upstream {
    /// An upstream at `base` (`http://` or `https://`), scanning with `plugins` and signing
    /// with `key`.
    pub fn new(base: &str, key: SigningKey, plugins: PluginSet) -> Result<Upstream, String> {
        let base = base.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "--upstream {base:?}: an http:// or https:// address of a hub"
            ));
        }
        // reqwest is built without a bundled TLS provider (the workspace's rustls with ring).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .user_agent(concat!("socair-serve/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|e| format!("cannot build the upstream client: {e}"))?;
        Ok(Upstream {
            base: base.to_owned(),
            key,
            plugins,
            client,
            inflight: tokio::sync::Mutex::new(HashMap::new()),
        })
    }

    /// The upstream's address, as told.
    pub fn base(&self) -> &str {
        &self.base
    }
}

impl Upstream {
    /// The lock a pull of `repo` at `revision` is made under: requests for one revision wait
    /// for one pull.
    pub async fn lock_for(&self, repo: &str, revision: &str) -> RevisionLock {
        let mut map = self.inflight.lock().await;
        map.entry((repo.to_owned(), revision.to_owned()))
            .or_default()
            .clone()
    }
}

/// A revision's files fetched into a scratch folder of the store (removed when dropped unless
/// the store took it in), each hashed as it was written.
pub struct Staged {
    /// The scratch folder; the files lie under `<scratch>/<name>/`.
    pub scratch: tempfile::TempDir,
    /// The repository's name: the artifact's name in the store.
    pub name: String,
    /// Each file: its path in the repository, size and sha256.
    pub files: Vec<(String, u64, String)>,
}

/// A file path a revision lists, checked as a request's path is: `/`-separated parts, none
/// empty, `.` or `..`, none holding `\` or NUL.
fn check_sibling(path: &str) -> Result<(), String> {
    let bad = |p: &str| p.is_empty() || p == "." || p == ".." || p.contains(['\\', '\0']);
    if path.len() > 4096 || path.split('/').any(bad) {
        return Err(format!(
            "the upstream lists a file {path:?} no repository can hold"
        ));
    }
    Ok(())
}

/// Percent-encodes one path segment for a URL (RFC 3986 unreserved characters kept).
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn encode_path(path: &str) -> String {
    path.split('/').map(encode).collect::<Vec<_>>().join("/")
}

/// Fetches `repo` at `revision` from the upstream into a scratch folder of the store: the
/// revision's commit and files, then every file of that commit, streamed and hashed as it
/// arrives. Nothing reaches `incoming/` here.
pub async fn fetch(
    store: &Store,
    up: &Upstream,
    metrics: &Metrics,
    repo: &str,
    revision: &str,
) -> Result<Staged, String> {
    let name = repo.rsplit('/').next().unwrap_or(repo).to_owned();
    let scratch = store
        .scratch(".tmp", "upstream-")
        .map_err(|e| e.to_string())?;
    let dir = scratch.path().join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut staged = Staged {
        scratch,
        name,
        files: Vec::new(),
    };
    let url = format!(
        "{}/api/models/{}/revision/{}",
        up.base,
        encode_path(repo),
        encode(revision)
    );
    let response = get(up, &url, &format!("{repo}@{revision}")).await?;
    let info = read_limited(response, MAX_INFO).await?;
    let info: serde_json::Value = serde_json::from_slice(&info)
        .map_err(|e| format!("the upstream's description of {repo}@{revision}: {e}"))?;
    let commit = info["sha"]
        .as_str()
        .filter(|c| repos::check_revision(c).is_ok())
        .ok_or_else(|| format!("the upstream names no commit for {repo}@{revision}"))?
        .to_owned();
    let siblings: Vec<String> = info["siblings"]
        .as_array()
        .ok_or_else(|| format!("the upstream lists no files for {repo}@{revision}"))?
        .iter()
        .filter_map(|s| s["rfilename"].as_str().map(str::to_owned))
        .collect();
    if siblings.is_empty() || siblings.len() > MAX_FILES {
        return Err(format!(
            "the upstream lists {} files for {repo}@{revision} (1 to {MAX_FILES} are pulled)",
            siblings.len()
        ));
    }
    for path in &siblings {
        check_sibling(path)?;
        let (size, sha256) = fetch_file(up, metrics, repo, &commit, path, &dir).await?;
        staged.files.push((path.clone(), size, sha256));
    }
    Ok(staged)
}

/// Admits a fetched revision (blocking): pulled into the store as a model directory, recorded
/// under the revision asked (a branch pinned to its commit), scanned and signed with the
/// gateway's key, and promoted when the gate lets it through (a refusal leaves it staged; the
/// request is answered with it).
pub fn admit(
    store: &Store,
    up: &Upstream,
    metrics: &Metrics,
    staged: Staged,
    repo: &str,
    revision: &str,
) -> Result<(), String> {
    // Moved into the store, not copied: the hashes made as the files arrived stand for
    // them, and the scan below hashes the staged bytes again (a difference is refused).
    let (sha, name) = store
        .pull_fetched(staged.scratch, &staged.name, &staged.files)
        .map_err(|e| e.to_string())?;
    repos::record_hashed(store, &sha, &name, &staged.files, repo, revision)
        .map_err(|e| e.to_string())?;
    let report = scan_staged(store, &sha, &up.key, &up.plugins).map_err(|e| e.to_string())?;
    metrics.pulled(if is_negative(&report) {
        "held"
    } else {
        "passed"
    });
    let _ = gate::promote(store, &sha);
    Ok(())
}

/// Fetches one file of `commit` into `staging`, hashing it as it arrives.
async fn fetch_file(
    up: &Upstream,
    metrics: &Metrics,
    repo: &str,
    commit: &str,
    path: &str,
    staging: &Path,
) -> Result<(u64, String), String> {
    let url = format!(
        "{}/{}/resolve/{}/{}",
        up.base,
        encode_path(repo),
        encode(commit),
        encode_path(path)
    );
    let mut response = get(up, &url, &format!("{repo}/{path}")).await?;
    // An LFS file's ETag (`X-Linked-Etag` when redirected) is its SHA-256.
    let expected = ["x-linked-etag", "etag"].iter().find_map(|h| {
        let v = response.headers().get(*h)?.to_str().ok()?;
        let v = v
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_ascii_lowercase();
        (v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit())).then_some(v)
    });
    let target = staging.join(path);
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut file =
        std::fs::File::create(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let mut hash = Sha256::new();
    let mut size = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the upstream dropped {repo}/{path}: {e}"))?
    {
        hash.update(&chunk);
        size += chunk.len() as u64;
        file.write_all(&chunk)
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    // Not made durable here: the store does that when it takes the folder in.
    let got = socair_store::base::digest::hex(&hash.finalize());
    if let Some(want) = expected {
        if got != want {
            return Err(format!(
                "{repo}/{path} from the upstream hashes to {got}, not the {want} it announced"
            ));
        }
    }
    metrics.upstream_fetches.fetch_add(1, Ordering::Relaxed);
    Ok((size, got))
}

/// A GET of `url` from the upstream that answered with success; an error names `what`.
async fn get(up: &Upstream, url: &str, what: &str) -> Result<reqwest::Response, String> {
    let response = up
        .client
        .get(url)
        .send()
        .await
        .map_err(|e| format!("the upstream {}: {what}: {e}", up.base))?;
    if !response.status().is_success() {
        return Err(format!(
            "the upstream answered {} for {what}",
            response.status()
        ));
    }
    Ok(response)
}

/// The body of `response`, refused past `limit` bytes.
async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("the upstream dropped the connection: {e}"))?
    {
        if out.len() + chunk.len() > limit {
            return Err(format!("the upstream's answer is over {limit} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_paths_that_would_leave_the_staging_folder_are_refused() {
        for bad in ["", "../x", "a/../b", "/abs", "a//b", "a\\b", "a/./b", "x\0"] {
            assert!(check_sibling(bad).is_err(), "{bad:?}");
        }
        assert!(check_sibling("onnx/model.onnx").is_ok());
        assert_eq!(encode_path("a b/c%d"), "a%20b/c%25d");
    }
}
