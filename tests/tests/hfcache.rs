//! The Hugging Face cache: a snapshot directory as huggingface_hub 2.4.0 wrote it
//! (`fixtures/hfcache/make_cache.py`: links into `blobs/`, `refs/`, the shared blob store)
//! scanned, fingerprinted and attested, named `namespace/name@commit`, its digest that of the
//! same files in a plain directory; `hf://namespace/name[@revision]` resolved offline through
//! `$HF_HUB_CACHE`, `$HF_HOME/hub` or `~/.cache/huggingface/hub`; a tampered blob, a link
//! anywhere but the repository's blobs, FAIL naming the file.

use crate::common::{fixture, json, report_row, run, socair};
use std::path::{Path, PathBuf};

pub const TINY_BERT: &str = "models--socair-fixtures--tiny-bert";
pub const TINY_BERT_MAIN: &str = "1c7bfa26e76b1ee69ff854b401134d895fc7759f";
const REVS: &str = "models--socair-fixtures--tiny-bert-revs";
const REVS_V1: &str = "848e72bfc97361631d2bc633be1c16ca91c5bfc4";
const REVS_MAIN: &str = "b313dc12d5dd30dfcbf55e7208962887f403feff";

/// Copies the fixture cache (`fixtures/hfcache/hub`) to `to`, links as links (`cp -a`).
pub fn copy_cache(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture("hfcache/hub/."))
        .arg(to)
        .status()
        .unwrap();
    assert!(copied.success());
}

/// Copies a directory with every link followed: what a person gets copying a snapshot out.
fn copy_plain(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_plain(&src, &dst);
        } else {
            std::fs::write(&dst, std::fs::read(&src).unwrap()).unwrap();
        }
    }
}

fn snapshot(cache: &Path, repo: &str, commit: &str) -> PathBuf {
    cache.join(repo).join("snapshots").join(commit)
}

fn scan_json(args: &[&str], envs: &[(&str, &Path)]) -> (i32, serde_json::Value, String) {
    let mut cmd = socair();
    cmd.arg("scan").args(args).arg("--json");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let r = run(&mut cmd);
    assert!(!r.stdout.is_empty(), "no report: {}", r.stderr);
    (r.code, json(&r.stdout), r.stderr)
}

fn sha(report: &serde_json::Value) -> String {
    report["artifact"]["sha256"].as_str().unwrap().to_owned()
}

/// The snapshot huggingface_hub wrote scans clean, under its Hub name, with the digest of the
/// same files in a plain directory (the fixture they were served from, and a copy with every
/// link followed).
#[test]
fn a_snapshot_scans_as_its_files_under_the_hubs_name() {
    let dir = snapshot(&fixture("hfcache/hub"), TINY_BERT, TINY_BERT_MAIN);
    let (code, report, stderr) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(
        report["artifact"]["name"],
        format!("socair-fixtures/tiny-bert@{TINY_BERT_MAIN}")
    );
    let hub = report_row(&report, "Hugging Face cache");
    assert_eq!(hub["status"], "PASS");
    let summary = hub["summary"].as_str().unwrap();
    assert!(
        summary.contains("6 files read through the snapshot's links")
            && summary.contains("4 blobs named by a SHA-256 and 2 by a git blob id"),
        "{summary}"
    );
    let (_, plain, _) = scan_json(&[fixture("safetensors/tiny-bert").to_str().unwrap()], &[]);
    assert_eq!(sha(&report), sha(&plain), "the same files, the same digest");
    let copy = tempfile::tempdir().unwrap();
    copy_plain(&dir, copy.path());
    let (_, copied, _) = scan_json(&[copy.path().to_str().unwrap()], &[]);
    assert_eq!(sha(&report), sha(&copied));
    // The plain directory has no Hugging Face cache row: the check is the snapshot's alone.
    assert!(plain["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["check"] != "Hugging Face cache"));
}

/// A file one directory down (`../../../blobs/…`) and a blob in the cache's shared store
/// (`blobs/<etag>` → `../../blobs/<xx>/<xet hash>`) are read through their links too.
#[test]
fn nested_files_and_shared_blobs_are_read() {
    let cache = fixture("hfcache/hub");
    let dir = snapshot(&cache, REVS, REVS_MAIN);
    let (code, report, stderr) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let hub = report_row(&report, "Hugging Face cache")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        hub.contains("7 files") && hub.contains("1 of them in the cache's shared blob store"),
        "{hub}"
    );
    let structure = report_row(&report, "Format and structure")["summary"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(structure.contains("extra/notes.txt: PASS"), "{structure}");
    assert!(
        structure.contains("model-00002-of-00004.safetensors: PASS"),
        "{structure}"
    );
}

/// `hf://` resolves offline against $HF_HUB_CACHE, else $HF_HOME/hub, else
/// ~/.cache/huggingface/hub; a branch or tag through refs/, a commit id directly.
#[test]
fn hf_uris_resolve_in_the_cache_offline() {
    let home = tempfile::tempdir().unwrap();
    let default_cache = home.path().join(".cache/huggingface/hub");
    copy_cache(&default_cache);
    let hf_home = home.path().join("hf-home");
    copy_cache(&hf_home.join("hub"));
    let hub_cache = home.path().join("elsewhere");
    copy_cache(&hub_cache);
    let uri = "hf://socair-fixtures/tiny-bert-revs";
    let resolve = |envs: &[(&str, &Path)], uri: &str| {
        let mut cmd = socair();
        cmd.args(["scan", uri, "--json"])
            .env_remove("HF_HUB_CACHE")
            .env_remove("HUGGINGFACE_HUB_CACHE")
            .env_remove("HF_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", home.path());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        run(&mut cmd)
    };
    // Which cache each environment picks shows in the error for a repository none holds,
    // and the snapshot read is the same files wherever it lies.
    let where_ = |envs: &[(&str, &Path)]| resolve(envs, "hf://socair-fixtures/absent").stderr;
    assert!(where_(&[]).contains(&default_cache.display().to_string()));
    assert!(where_(&[("HF_HOME", &hf_home)]).contains(&hf_home.join("hub").display().to_string()));
    let both = [
        ("HF_HOME", hf_home.as_path()),
        ("HF_HUB_CACHE", hub_cache.as_path()),
    ];
    assert!(where_(&both).contains(&hub_cache.display().to_string()));
    let main = resolve(&both, uri);
    assert_eq!(main.code, 0, "{}", main.stderr);
    let main = json(&main.stdout);
    assert_eq!(
        main["artifact"]["name"],
        format!("socair-fixtures/tiny-bert-revs@{REVS_MAIN}")
    );
    let by_default = json(&resolve(&[], uri).stdout);
    assert_eq!(sha(&main), sha(&by_default));
    let v1 = json(&resolve(&[], &format!("{uri}@v1")).stdout);
    assert_eq!(
        v1["artifact"]["name"],
        format!("socair-fixtures/tiny-bert-revs@{REVS_V1}")
    );
    assert_ne!(sha(&v1), sha(&main), "v1 has another config.json");
    let by_commit = json(&resolve(&[], &format!("{uri}@{REVS_V1}")).stdout);
    assert_eq!(sha(&by_commit), sha(&v1));
    // Not in the cache: unreadable (exit 2), saying how to get it.
    let missing = resolve(&[], &format!("{uri}@v9"));
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("no revision \"v9\""),
        "{}",
        missing.stderr
    );
    let bad = resolve(&[], "hf://gpt2");
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("namespace/name"), "{}", bad.stderr);
}

/// `socair tensors` of a snapshot fingerprints the blobs under the snapshot's names, as of the
/// plain directory; a file of the snapshot given alone is read from its blob.
#[test]
fn tensors_and_single_files_read_through_the_links() {
    let cache = fixture("hfcache/hub");
    let dir = snapshot(&cache, TINY_BERT, TINY_BERT_MAIN);
    let tensors = |path: &Path| {
        let r = run(socair().arg("tensors").arg(path).arg("--json"));
        assert_eq!(r.code, 0, "{}", r.stderr);
        json(&r.stdout)
    };
    let of_snapshot = tensors(&dir);
    let of_plain = tensors(&fixture("safetensors/tiny-bert"));
    assert_eq!(of_snapshot["tensors"], of_plain["tensors"]);
    assert_eq!(
        of_snapshot["artifact"]["sha256"],
        of_plain["artifact"]["sha256"]
    );
    let shard = dir.join("model-00001-of-00004.safetensors");
    let (code, one, _) = scan_json(&[shard.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        one["artifact"]["name"],
        format!("socair-fixtures/tiny-bert@{TINY_BERT_MAIN}/model-00001-of-00004.safetensors")
    );
    assert_eq!(one["artifact"]["format"], "safetensors");
    assert_eq!(
        sha(&one),
        "df6f8152f9a2b61a3fd8f37e4edaafcd8a68d6179612340fb1874d005164f40c",
        "its blob's name is its SHA-256"
    );
}

/// A blob changed after download FAILs naming the file and its blob, whether huggingface_hub
/// named it by its SHA-256 (LFS) or its git blob id; what each reader says stays as it is;
/// `tensors` leaves an LFS file whose bytes are not its blob's name unread (exit 1).
#[test]
fn a_tampered_blob_fails() {
    let tmp = tempfile::tempdir().unwrap();
    copy_cache(tmp.path());
    let dir = snapshot(tmp.path(), TINY_BERT, TINY_BERT_MAIN);
    // One byte of a tensor's data, in a shard (LFS, named by its SHA-256): the safetensors
    // file stays sound, only its bytes differ from what the Hub served.
    let shard_blob = tmp
        .path()
        .join(TINY_BERT)
        .join("blobs/df6f8152f9a2b61a3fd8f37e4edaafcd8a68d6179612340fb1874d005164f40c");
    let mut bytes = std::fs::read(&shard_blob).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&shard_blob, &bytes).unwrap();
    let (code, report, _) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        report_row(&report, "Format and structure")["status"],
        "PASS"
    );
    let hub = report_row(&report, "Hugging Face cache");
    assert_eq!(hub["status"], "FAIL");
    let finding = &hub["findings"][0];
    assert_eq!(
        finding["place"],
        "model-00001-of-00004.safetensors: blobs/df6f8152f9a2b61a3fd8f37e4edaafcd8a68d6179612340fb1874d005164f40c"
    );
    assert!(
        finding["reason"]
            .as_str()
            .unwrap()
            .contains("its SHA-256 is"),
        "{finding}"
    );
    // `socair tensors` reads the same bytes: the shard is unread, named with its blob, exit 1.
    let r = run(socair().args(["tensors", "--json"]).arg(&dir));
    assert_eq!(r.code, 1, "{}", r.stderr);
    let manifest = json(&r.stdout);
    let unread = manifest["unread"].as_array().unwrap();
    assert!(
        unread
            .iter()
            .any(|u| u["file"] == "model-00001-of-00004.safetensors"
                && u["reason"]
                    .as_str()
                    .unwrap()
                    .contains("not df6f8152f9a2b61a")),
        "{unread:?}"
    );
    // config.json's blob is named by its git blob id (not LFS).
    let config_blob = tmp
        .path()
        .join(TINY_BERT)
        .join("blobs/97b5d4df2785c82a3377e492b3eb820818fd8e07");
    std::fs::write(&shard_blob, {
        bytes[last] ^= 0x40;
        &bytes
    })
    .unwrap();
    let text = std::fs::read_to_string(&config_blob).unwrap();
    std::fs::write(&config_blob, text.replace("\"bert\"", "\"BERT\"")).unwrap();
    let (code, report, _) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    let hub = report_row(&report, "Hugging Face cache");
    assert_eq!(hub["findings"].as_array().unwrap().len(), 1, "{hub}");
    assert_eq!(
        hub["findings"][0]["place"],
        "config.json: blobs/97b5d4df2785c82a3377e492b3eb820818fd8e07"
    );
    assert!(hub["findings"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("its git blob id is"));
}

/// git computes the same blob ids huggingface_hub's cache is named by (where git is here).
#[test]
fn git_blob_ids_are_gits() {
    let blobs = fixture("hfcache/hub").join(TINY_BERT).join("blobs");
    let name = "97b5d4df2785c82a3377e492b3eb820818fd8e07";
    match std::process::Command::new("git")
        .args(["hash-object", "--no-filters"])
        .arg(blobs.join(name))
        .output()
    {
        Ok(out) if out.status.success() => {
            assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), name)
        }
        _ => eprintln!("skipped: no git to compute a blob id"),
    }
}

/// Links that lead anywhere but the repository's blobs FAIL naming the link: outside the
/// cache, into another repository, a blob that leaves the shared store's layout. `tensors`,
/// which needs every file read, refuses the directory naming the link (exit 2).
#[test]
fn links_elsewhere_fail_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    copy_cache(tmp.path());
    let dir = snapshot(tmp.path(), REVS, REVS_MAIN);
    let relink = |rel: &str, to: &str| {
        let p = dir.join(rel);
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(to, &p).unwrap();
    };
    let outside = tmp.path().join("outside.json");
    std::fs::write(&outside, "{}").unwrap();
    relink("config.json", outside.to_str().unwrap());
    relink(
        "model.safetensors.index.json",
        &format!("../../../{TINY_BERT}/blobs/b17a6107936d8c962646a1ff7849d3bcef2df7a4"),
    );
    let (code, report, _) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    let hub = report_row(&report, "Hugging Face cache");
    assert_eq!(hub["status"], "FAIL");
    let places: Vec<&str> = hub["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["place"].as_str().unwrap())
        .collect();
    assert_eq!(
        places,
        ["config.json: file", "model.safetensors.index.json: file"],
        "{hub:#}"
    );
    assert!(hub["findings"][0]["reason"]
        .as_str()
        .unwrap()
        .contains(&outside.display().to_string()));
    let r = run(socair().arg("tensors").arg(&dir).arg("--json"));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("config.json") && r.stderr.contains("blobs/"),
        "{}",
        r.stderr
    );
    // A blob that links out of the shared store's layout.
    copy_cache(&tmp.path().join("again"));
    let dir = snapshot(&tmp.path().join("again"), REVS, REVS_MAIN);
    let blob = tmp
        .path()
        .join("again")
        .join(REVS)
        .join("blobs/5af2a5b50ee6e5db153036c514a2d2b18d3edd6963d03b182053d352e6b35ce4");
    std::fs::remove_file(&blob).unwrap();
    std::os::unix::fs::symlink(&outside, &blob).unwrap();
    let (code, report, _) = scan_json(&[dir.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    let hub = report_row(&report, "Hugging Face cache");
    assert!(
        hub["findings"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("shared blob store"),
        "{hub:#}"
    );
}

/// `socair attest hf://…` signs the snapshot's digest, writes the envelope in the current
/// directory (never into the cache), and the envelope verifies against a plain copy.
#[test]
fn attest_a_snapshot_and_verify_a_plain_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("k.key");
    assert_eq!(run(socair().args(["keygen", "--out"]).arg(&key)).code, 0);
    let r = run(socair()
        .current_dir(tmp.path())
        .args([
            "attest",
            "hf://socair-fixtures/tiny-bert",
            "--json",
            "--key",
        ])
        .arg(&key)
        .env("HF_HUB_CACHE", fixture("hfcache/hub")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let envelope = tmp.path().join(format!(
        "socair-fixtures--tiny-bert@{TINY_BERT_MAIN}.attestation.dsse.json"
    ));
    assert!(envelope.exists(), "{}", r.stderr);
    let verify = run(socair()
        .arg("verify")
        .arg(&envelope)
        .arg(fixture("safetensors/tiny-bert"))
        .arg("--pub")
        .arg(tmp.path().join("k.key.pub"))
        .arg("--json"));
    assert_eq!(verify.code, 0, "{}", verify.stderr);
}
