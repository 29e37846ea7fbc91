//! A store under an S3 prefix, as the store tests use it: initialised, commands run against
//! it, keys trusted, artifacts that pass the gate, and the log's last entry.

use super::s3::S3;
use crate::common::{json, run, socair, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A store under an S3 prefix, and the keys its tests use.
pub(super) struct Shared<'a> {
    s3: &'a S3,
    pub(super) url: String,
    pub(super) dir: tempfile::TempDir,
}

impl Shared<'_> {
    pub(super) fn new(s3: &S3) -> Shared<'_> {
        let shared = Shared {
            s3,
            url: s3.url("airlock"),
            dir: tempfile::tempdir().unwrap(),
        };
        let r = shared.run(&["airlock", "init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        shared
    }

    pub(super) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.s3.socair();
        c.args(args).arg("--store").arg(&self.url);
        c
    }

    pub(super) fn run(&self, args: &[&str]) -> Run {
        run(&mut self.cmd(args))
    }

    pub(super) fn key(&self, name: &str, roles: &str) -> String {
        let k = self.dir.path().join(name);
        assert_eq!(run(socair().arg("keygen").arg("--out").arg(&k)).code, 0);
        let r = self.run(&[
            "airlock",
            "trust",
            &format!("{}.pub", k.display()),
            "--role",
            roles,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        k.display().to_string()
    }
}

/// Distinct artifacts that pass the gate with no acceptance: safetensors files made here.
pub(super) fn passing_artifacts(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            // A one-tensor safetensors file whose single F32 value differs per artifact.
            let header =
                format!("{{\"t{i}\":{{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}}}");
            let mut h = header.into_bytes();
            while h.len() % 8 != 0 {
                h.push(b' ');
            }
            let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
            bytes.extend_from_slice(&h);
            bytes.extend_from_slice(&(i as f32).to_le_bytes());
            let p = dir.join(format!("model-{i}.safetensors"));
            std::fs::write(&p, bytes).unwrap();
            p
        })
        .collect()
}

/// The log's last entry.
pub(super) fn r_last_entry(store: &Shared<'_>) -> serde_json::Value {
    let r = store.run(&["airlock", "log", "--json"]);
    json(r.stdout.lines().last().expect("a log entry"))
}
