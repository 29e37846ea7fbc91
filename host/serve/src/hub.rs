//! The Hub's JSON, as `huggingface_hub` 2.5.0 reads it (`hf_api.py`): `ModelInfo` (`id`,
//! `sha`, `siblings[]` of `rfilename`, `size`, `blobId`, `lfs {size, sha256, pointerSize}`),
//! and the tree listing `_iter_repo_tree_pages` turns into `RepoFile` (`type: "file"`, `path`,
//! `size`, `oid`, `lfs {oid, size, pointerSize}`) or `RepoFolder` (`type: "directory"`, `path`,
//! `oid`).
//!
//! Every file is described as the Hub describes a Git LFS file, which is what the store is
//! (content addressed by sha256): its `oid` is the git blob id of its LFS pointer (the
//! pointer's text is `version https://git-lfs.github.com/spec/v1\noid sha256:<sha256>\nsize
//! <size>\n`, git-lfs's spec), computed from the record without reading the file, and its
//! ETag is its sha256, as the Hub's is for an LFS file (`hf_hub_url`'s documentation in
//! `file_download.py`: "its sha256 if stored in git-lfs").

use serde_json::{json, Value};
use sha1::{Digest, Sha1};
use sha2::Sha256;
use socair_store::airlock::repos::{RepoFile, RepoRecord};
use std::collections::BTreeSet;

/// The Git LFS pointer of a file.
fn lfs_pointer(file: &RepoFile) -> String {
    format!(
        "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize {}\n",
        file.sha256, file.size
    )
}

/// The git blob id of `bytes` (sha1 of `blob <len>\0<bytes>`).
pub fn git_blob_id(bytes: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `lfs` object of a file, with the key names of `siblings` (`sha256`) or of the tree
/// (`oid`).
fn lfs(file: &RepoFile, key: &str) -> Value {
    let mut v = json!({
        "size": file.size,
        "pointerSize": lfs_pointer(file).len(),
    });
    v[key] = json!(file.sha256);
    v
}

/// `GET /api/models/{repo}[/revision/{rev}]`.
pub fn model_info(rec: &RepoRecord) -> Value {
    let siblings: Vec<Value> = rec
        .files
        .iter()
        .map(|f| {
            json!({
                "rfilename": f.path,
                "size": f.size,
                "blobId": git_blob_id(lfs_pointer(f).as_bytes()),
                "lfs": lfs(f, "sha256"),
            })
        })
        .collect();
    json!({
        "_id": rec.commit,
        "id": rec.repo,
        "modelId": rec.repo,
        "sha": rec.commit,
        "private": false,
        "gated": false,
        "disabled": false,
        "tags": [],
        "siblings": siblings,
    })
}

/// A folder's `oid`: git's would be its tree's id; socair names it by the commit and path
/// (stable, and never the id of anything else).
fn folder_oid(rec: &RepoRecord, path: &str) -> String {
    let mut h = Sha256::new();
    h.update(format!("socair.tree/v1\n{}\n{path}", rec.commit).as_bytes());
    hex(&h.finalize())[..40].to_owned()
}

/// `GET /api/models/{repo}/tree/{rev}[/{path}]`: the files and folders under `path` (`""`:
/// the root), every level below it when `recursive`; `None` when no file lies under `path`.
pub fn tree(rec: &RepoRecord, path: &str, recursive: bool) -> Option<Value> {
    let prefix = if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    };
    let mut folders = BTreeSet::new();
    let mut files = Vec::new();
    for f in rec.files.iter().filter(|f| f.path.starts_with(&prefix)) {
        let rest = &f.path[prefix.len()..];
        let parts: Vec<&str> = rest.split('/').collect();
        // Every folder between `path` and the file (only the first level unless recursive).
        let depth = if recursive { parts.len() - 1 } else { 1 };
        for i in 1..=depth.min(parts.len() - 1) {
            folders.insert(format!("{prefix}{}", parts[..i].join("/")));
        }
        if recursive || parts.len() == 1 {
            files.push(json!({
                "type": "file",
                "path": f.path,
                "size": f.size,
                "oid": git_blob_id(lfs_pointer(f).as_bytes()),
                "lfs": lfs(f, "oid"),
            }));
        }
    }
    if files.is_empty() && folders.is_empty() {
        return None;
    }
    let mut out: Vec<Value> = folders
        .into_iter()
        .map(|p| json!({"type": "directory", "path": p, "oid": folder_oid(rec, &p)}))
        .collect();
    out.extend(files);
    Some(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> RepoRecord {
        let file = |path: &str, size| RepoFile {
            path: path.into(),
            size,
            sha256: "ab".repeat(32),
        };
        RepoRecord {
            schema: "socair.repo/v1".into(),
            repo: "org/tiny".into(),
            revision: "main".into(),
            commit: "c".repeat(40),
            sha256: "d".repeat(64),
            name: "tiny".into(),
            directory: true,
            files: vec![
                file("config.json", 10),
                file("sub/a/w.bin", 20),
                file("sub/b.bin", 30),
            ],
        }
    }

    #[test]
    fn git_blob_ids_are_gits() {
        // `git hash-object /dev/null`, and of a file holding "hello\n" (git 2.x).
        assert_eq!(git_blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            git_blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }

    #[test]
    fn model_info_names_the_commit_and_every_file() {
        let v = model_info(&record());
        assert_eq!(v["sha"], "c".repeat(40));
        assert_eq!(v["id"], "org/tiny");
        let names: Vec<&str> = v["siblings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["rfilename"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["config.json", "sub/a/w.bin", "sub/b.bin"]);
        assert_eq!(v["siblings"][0]["lfs"]["sha256"], "ab".repeat(32));
    }

    #[test]
    fn trees_list_one_level_or_all() {
        let rec = record();
        let paths = |v: Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    format!(
                        "{}:{}",
                        e["type"].as_str().unwrap(),
                        e["path"].as_str().unwrap()
                    )
                })
                .collect()
        };
        assert_eq!(
            paths(tree(&rec, "", false).unwrap()),
            ["directory:sub", "file:config.json"]
        );
        assert_eq!(
            paths(tree(&rec, "", true).unwrap()),
            [
                "directory:sub",
                "directory:sub/a",
                "file:config.json",
                "file:sub/a/w.bin",
                "file:sub/b.bin"
            ]
        );
        assert_eq!(
            paths(tree(&rec, "sub", false).unwrap()),
            ["directory:sub/a", "file:sub/b.bin"]
        );
        assert!(tree(&rec, "nothing", true).is_none());
        assert!(tree(&rec, "su", true).is_none());
    }
}
