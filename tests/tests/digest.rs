//! The subject digest is the file's SHA-256 however its readers read it. A scan computes it
//! from the readers' own reads (`host/reading/src/read/tap.rs`: a zip's CRC-32 pass, read in order,
//! with gaps filled and jumps only served) and hashes the rest after them; every committed
//! file of the formats whose readers read much of their file is scanned in one run and each
//! digest compared with the SHA-256 computed here. Hostile zips (overlapping records, data
//! descriptors, prepended bytes, zip64, directories that lie) make the reads jump about.

use crate::common::{json, repo, run, socair};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let (path, kind) = (e.path(), e.file_type().unwrap());
        if kind.is_dir() {
            files_below(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

#[test]
fn each_scanned_files_digest_is_its_sha256_however_its_readers_read_it() {
    let mut files = Vec::new();
    for dir in [
        "torch", "archives", "npy", "keras", "joblib", "native", "paddle", "hdf5", "gguf", "onnx",
    ] {
        files_below(&repo().join("fixtures").join(dir), &mut files);
    }
    files.sort();
    let want: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            let sha = Sha256::digest(std::fs::read(f).unwrap());
            (f.display().to_string(), format!("{sha:x}"))
        })
        .collect();
    let r = run(socair().arg("scan").arg("--json").args(&files));
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    let doc = json(&r.stdout);
    let mut compared = 0;
    for a in doc["artifacts"].as_array().unwrap() {
        let Some(got) = a["report"]["artifact"]["sha256"].as_str() else {
            continue;
        };
        let path = a["path"].as_str().unwrap();
        assert_eq!(Some(&got.to_owned()), want.get(path), "{path}");
        compared += 1;
    }
    assert!(
        compared >= 600 && compared >= files.len() * 9 / 10,
        "only {compared} of {} files had a digest",
        files.len()
    );
}
