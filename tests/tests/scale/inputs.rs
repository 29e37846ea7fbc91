//! What the tests read and how they measure it: the committed fixtures compared remotely, a
//! large checkpoint made on the spot, a file's digest, and the bytes socair says it fetched.

use super::s3::hex;
use crate::common::{fixture, repo};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `fetched N bytes` socair prints after reading object storage.
pub(super) fn fetched(stderr: &str) -> u64 {
    stderr
        .split("fetched ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `fetched N bytes` line in:\n{stderr}"))
}

/// The range requests and the round trips waited for, one after another, that socair says it
/// made: `… in N range requests (M round trips waited for, one after another)`.
pub(super) fn requests(stderr: &str) -> (u64, u64) {
    let number_before = |what: &str| -> u64 {
        stderr
            .split(what)
            .next()
            .and_then(|s| s.rsplit([' ', '(']).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `N {what}` in:\n{stderr}"))
    };
    (
        number_before(" range requests"),
        number_before(" round trips waited for"),
    )
}

pub(super) fn sha256_file(p: &Path) -> String {
    hex(&Sha256::digest(std::fs::read(p).unwrap()))
}

/// A torch checkpoint of `mib` MiB in `dir`, made by scripts/make_big_checkpoint.py; `None`
/// when python3 is absent.
pub(super) fn big_checkpoint(dir: &Path, mib: u32) -> Option<PathBuf> {
    checkpoint_of(&dir.join(format!("big{mib}.pt")), &mib.to_string(), 4)
}

/// A torch checkpoint at `out` of `size` (scripts/make_big_checkpoint.py's SIZE: MiB, or KiB
/// with a `k`) holding `tensors` storage records; `None` when python3 is absent.
pub(super) fn checkpoint_of(out: &Path, size: &str, tensors: u32) -> Option<PathBuf> {
    let out = out.to_owned();
    let status = Command::new("python3")
        .arg(repo().join("scripts/make_big_checkpoint.py"))
        .arg(&out)
        .arg(size)
        .arg(tensors.to_string())
        .status();
    match status {
        Ok(s) if s.success() => Some(out),
        _ => {
            eprintln!("skipped: python3 cannot run scripts/make_big_checkpoint.py");
            None
        }
    }
}

/// The committed fixtures a remote scan is compared on: every legit and malicious torch
/// checkpoint, every safetensors, GGUF, Keras, HDF5, TFLite and frozen-graph file at the top of
/// its fixture folder.
pub(super) fn fixture_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "torch/legit",
        "torch/malicious",
        "safetensors",
        "gguf/valid",
        "keras/legit",
        "keras/hostile",
        "hdf5/valid",
        "tflite",
        "tensorflow/graphdef",
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixture(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.is_file()
                    && p.extension().is_some_and(|e| {
                        ["pt", "safetensors", "gguf", "keras", "h5", "tflite", "pb"]
                            .contains(&e.to_str().unwrap_or(""))
                    })
            })
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}
