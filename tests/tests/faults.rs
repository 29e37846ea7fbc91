//! Reliability: crashes at every step that must survive one (fault points and SIGKILL at
//! random moments), a full disk, many processes at once, and path attacks. After each: the
//! activity log verifies, nothing half-written is in incoming/ or promoted/, scratch space is
//! cleaned on the next run, and the same command succeeds when run again.

use crate::common::{fixture, json, run, socair, spawn_paused, target_profile_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Store {
    _dir: tempfile::TempDir,
    root: PathBuf,
    path: PathBuf,
}

impl Store {
    fn at(root: PathBuf, dir: tempfile::TempDir) -> Store {
        let path = root.join("store");
        let s = Store {
            _dir: dir,
            root,
            path,
        };
        assert_eq!(s.run(&["airlock", "init"], None).0, Some(0));
        s
    }
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        Store::at(dir.path().to_owned(), dir)
    }
    /// Runs a command, with a fault point armed; returns the exit code (None: killed) and
    /// stdout.
    fn run(&self, args: &[&str], fault: Option<&str>) -> (Option<i32>, String) {
        let mut c = socair();
        c.args(args).arg("--store").arg(&self.path);
        if let Some(f) = fault {
            c.env("SOCAIR_FAULT", f);
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        )
    }
    fn ok(&self, args: &[&str]) -> String {
        let (code, out) = self.run(args, None);
        assert_eq!(code, Some(0), "{args:?}");
        out
    }
    fn key(&self, name: &str, roles: &str) -> String {
        let k = self.root.join(name);
        assert_eq!(run(socair().arg("keygen").arg("--out").arg(&k)).code, 0);
        self.ok(&[
            "airlock",
            "trust",
            &format!("{}.pub", k.display()),
            "--role",
            roles,
        ]);
        k.display().to_string()
    }
    /// Signs the scan of `src` with `key` into `out` (outside the store).
    fn attest(&self, src: &Path, key: &str, out: PathBuf) -> PathBuf {
        let r = run(socair()
            .arg("attest")
            .arg(src)
            .arg("--key")
            .arg(key)
            .arg("--out")
            .arg(&out));
        assert_ne!(r.code, 2, "{}", r.stderr);
        out
    }

    /// The invariants after any crash.
    fn check(&self) {
        // The log verifies (opening the store also cleans the dead process's scratch space).
        let (code, _) = self.run(&["airlock", "log"], None);
        assert_eq!(code, Some(0), "the log must verify");
        for area in [".tmp", "work"] {
            let left: Vec<_> = std::fs::read_dir(self.path.join(area)).unwrap().collect();
            assert!(left.is_empty(), "{area} holds leftovers: {left:?}");
        }
        // Everything staged or promoted is complete: it hashes to its name.
        for area in ["incoming", "promoted"] {
            for entry in std::fs::read_dir(self.path.join(area)).unwrap() {
                let dir = entry.unwrap().path();
                let sha = dir.file_name().unwrap().to_string_lossy().into_owned();
                let artifact = std::fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .find(|p| {
                        let n = p.file_name().unwrap().to_string_lossy();
                        !n.ends_with(".dsse.json") && n != "acceptances" && n != "derivations"
                    })
                    .unwrap_or_else(|| panic!("{} holds no artifact", dir.display()));
                let m = json(&run(socair().arg("tensors").arg(&artifact)).stdout);
                assert_eq!(
                    m["artifact"]["sha256"],
                    sha.as_str(),
                    "{} is not whole",
                    dir.display()
                );
            }
        }
    }
}

#[test]
fn a_crash_at_every_fault_point_loses_nothing() {
    let model = fixture("safetensors/all-dtypes.safetensors");
    for point in ["pull.copied", "pull.renamed", "log.partial"] {
        let s = Store::new();
        let (code, _) = s.run(&["airlock", "pull", model.to_str().unwrap()], Some(point));
        assert_eq!(code, None, "{point}: the process should have died");
        s.check();
        let sha = s.ok(&["airlock", "pull", model.to_str().unwrap()]);
        assert_eq!(sha.len(), 64, "{point}");
        s.check();
    }

    let checkpoint = fixture("torch/legit/state-dict.pt");
    for point in ["promote.assessed", "promote.renamed", "log.partial"] {
        let s = Store::new();
        let scanner = s.key("scanner.key", "scan,accept");
        let sha = s.ok(&["airlock", "pull", checkpoint.to_str().unwrap()]);
        s.ok(&["airlock", "scan", &sha, "--key", &scanner]);
        s.ok(&[
            "airlock",
            "accept",
            &sha,
            "--row",
            "Format and structure",
            "--reason",
            "test",
            "--key",
            &scanner,
        ]);
        let (code, _) = s.run(&["airlock", "promote", &sha], Some(point));
        assert_eq!(code, None, "{point}");
        s.check();
        s.ok(&["airlock", "promote", &sha]);
        assert!(s.path.join("promoted").join(&sha).is_dir(), "{point}");
        assert!(!s.path.join("incoming").join(&sha).exists(), "{point}");
        s.check();
    }

    for point in [
        "convert.copied",
        "convert.written",
        "convert.renamed",
        "log.partial",
    ] {
        let s = Store::new();
        let key = s.key("k", "scan,derive");
        let att = s.attest(&checkpoint, &key, s.root.join("att.json"));
        let args = [
            "airlock",
            "convert",
            checkpoint.to_str().unwrap(),
            "--attestation",
            att.to_str().unwrap(),
            "--key",
            &key,
        ];
        let (code, _) = s.run(&args, Some(point));
        assert_eq!(code, None, "{point}");
        s.check();
        let out = s.ok(&args);
        assert!(s
            .path
            .join("incoming")
            .join(&out)
            .join("derivation.dsse.json")
            .is_file());
        s.check();
    }
}

#[test]
fn sigkill_at_random_moments_during_pull() {
    let s = Store::new();
    let big = s.root.join("big.bin.safetensors");
    // A 48 MiB safetensors file: long enough to be killed in the middle of the copy.
    let n: u64 = 12 * 1024 * 1024;
    let header = format!(
        "{{\"w\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[0,{}]}}}}",
        n * 4
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    let mut x = 0x2545_f491_4f6c_dd1du64;
    bytes.extend((0..n * 4).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    }));
    std::fs::write(&big, &bytes).unwrap();
    let mut seed = 7u64;
    let rounds: usize = std::env::var("SOCAIR_SOAK_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(8);
    for _ in 0..rounds {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let delay = std::time::Duration::from_millis(seed >> 58); // 0..63 ms
        let mut child = Command::new(target_profile_dir().join("socair"))
            .args(["airlock", "pull"])
            .arg(&big)
            .arg("--store")
            .arg(&s.path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        s.check();
    }
    let sha = s.ok(&["airlock", "pull", big.to_str().unwrap()]);
    assert!(s.path.join("incoming").join(&sha).is_dir());
    s.check();
}

#[test]
fn a_full_disk_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: this machine cannot mount a small tmpfs (not root?)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let s = Store::at(mnt.clone(), tempfile::tempdir().unwrap());
    let big = dir.path().join("big.safetensors");
    let n: u64 = 1024 * 1024; // 4 MiB of F32: more than the disk holds
    let header = format!(
        "{{\"w\":{{\"dtype\":\"F32\",\"shape\":[{n}],\"data_offsets\":[0,{}]}}}}",
        n * 4
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(bytes.len() + (n * 4) as usize, 1);
    std::fs::write(&big, &bytes).unwrap();
    let (code, _) = s.run(&["airlock", "pull", big.to_str().unwrap()], None);
    assert_ne!(code, Some(0));
    s.check();
    assert_eq!(
        std::fs::read_dir(s.path.join("incoming")).unwrap().count(),
        0
    );
    // A small one still goes in, and the log still verifies.
    s.ok(&[
        "airlock",
        "pull",
        fixture("safetensors/tiny-bert/model-00004-of-00004.safetensors")
            .to_str()
            .unwrap(),
    ]);
    s.check();

    // A conversion whose output does not fit: fill the disk until the work copy fits but the
    // output does not.
    let key = s.key("k", "scan,derive");
    let checkpoint = fixture("torch/baseline/hf-bert-pytorch_model.bin");
    let att = s.attest(&checkpoint, &key, dir.path().join("att.json"));
    let size = std::fs::metadata(&checkpoint).unwrap().len();
    let avail = |p: &Path| -> u64 {
        let out = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(p)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let free = avail(&mnt);
    let filler = free.saturating_sub(size + size / 2);
    std::fs::write(mnt.join("filler"), vec![0u8; filler as usize]).unwrap();
    let args = [
        "airlock",
        "convert",
        checkpoint.to_str().unwrap(),
        "--attestation",
        att.to_str().unwrap(),
        "--key",
        &key,
    ];
    let (code, _) = s.run(&args, None);
    assert_ne!(code, Some(0), "the output cannot fit");
    let log = std::fs::read_to_string(s.path.join("activity.log")).unwrap();
    let last = log.lines().last().unwrap();
    assert!(
        last.contains("\"convert\",\"outcome\":\"refused\"")
            && (last.contains("are free") || last.contains("No space left")),
        "{last}"
    );
    s.check();
    assert_eq!(
        std::fs::read_dir(s.path.join("incoming")).unwrap().count(),
        1,
        "only the earlier pull"
    );
    // With room again, the same command succeeds.
    std::fs::remove_file(mnt.join("filler")).unwrap();
    s.ok(&args);
    s.check();
}

#[test]
fn many_processes_at_once_keep_one_chain() {
    let s = Store::new();
    let key = s.key("k", "scan,accept,derive");
    let checkpoint = fixture("torch/legit/state-dict.pt");
    let att = s.attest(&checkpoint, &key, s.root.join("att.json"));
    let staged = s.ok(&[
        "airlock",
        "pull",
        fixture("safetensors/all-dtypes.safetensors")
            .to_str()
            .unwrap(),
    ]);
    let models = [
        fixture("safetensors/tiny-bert"),
        fixture("torch/legit/tied.pt"),
        fixture("gguf/valid/llama-like.gguf"),
        fixture("diff/reference"),
    ];
    let mut children = Vec::new();
    let spawn = |args: Vec<String>| {
        let mut c = socair();
        c.args(&args).arg("--store").arg(&s.path);
        c.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        (args.join(" "), c.spawn().unwrap())
    };
    for m in &models {
        children.push(spawn(vec![
            "airlock".into(),
            "pull".into(),
            m.display().to_string(),
        ]));
    }
    for _ in 0..2 {
        children.push(spawn(vec![
            "airlock".into(),
            "scan".into(),
            staged.clone(),
            "--key".into(),
            key.clone(),
        ]));
        children.push(spawn(vec![
            "airlock".into(),
            "convert".into(),
            checkpoint.display().to_string(),
            "--attestation".into(),
            att.display().to_string(),
            "--key".into(),
            key.clone(),
        ]));
    }
    for (args, c) in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "socair {args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    s.ok(&["airlock", "promote", &staged]);
    let log = s.ok(&["airlock", "log"]);
    let count = |action: &str| log.lines().filter(|l| json(l)["action"] == action).count();
    assert_eq!(count("pull"), 5);
    assert_eq!(count("scan"), 2);
    assert_eq!(count("convert"), 2);
    assert_eq!(count("promote"), 1);
    s.check();
}

/// The races the test above can only hit by chance, made exact: a process paused between its
/// "already staged?" (or "already promoted?") check and its rename while another stages (or
/// promotes) the same bytes. The paused one must then find them staged (its copy dropped,
/// its record written beside them) or promoted, not fail on the other's directory.
#[test]
fn two_processes_staging_the_same_bytes_at_once_both_succeed() {
    let s = Store::new();
    let key = s.key("k", "scan,accept,derive");
    let checkpoint = fixture("torch/legit/state-dict.pt");
    let att = s.attest(&checkpoint, &key, s.root.join("att.json"));
    let model = fixture("safetensors/all-dtypes.safetensors");
    let pull = vec!["airlock", "pull", model.to_str().unwrap()];
    let convert = vec![
        "airlock",
        "convert",
        checkpoint.to_str().unwrap(),
        "--attestation",
        att.to_str().unwrap(),
        "--key",
        &key,
    ];
    let other = fixture("safetensors/tiny-bert");
    let staged = s.ok(&["airlock", "pull", other.to_str().unwrap()]);
    s.ok(&["airlock", "scan", &staged, "--key", &key]);
    let promote = vec!["airlock", "promote", staged.as_str()];
    for (point, args) in [
        ("pull.copied", &pull),
        ("convert.checked", &convert),
        ("promote.assessed", &promote),
    ] {
        let mut cmd = socair();
        cmd.args(args.iter()).arg("--store").arg(&s.path);
        let (paused, gate) = spawn_paused(cmd, point, &s.root);
        let first = s.ok(args);
        std::fs::write(&gate, b"").unwrap();
        let out = paused.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the paused {point} process: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            first,
            "both name the same staged artifact"
        );
    }
    let log = s.ok(&["airlock", "log"]);
    let count = |action: &str| log.lines().filter(|l| json(l)["action"] == action).count();
    assert_eq!(count("pull"), 3);
    assert_eq!(count("scan"), 1);
    assert_eq!(count("convert"), 2);
    let promoted: Vec<_> = log
        .lines()
        .map(json)
        .filter(|e| e["action"] == "promote")
        .map(|e| e["detail"].clone())
        .collect();
    assert_eq!(
        promoted,
        [serde_json::Value::Null, "already promoted".into()],
        "one promotion, and the later process says it found it done"
    );
    s.check();
}

#[test]
fn path_attacks_are_refused_with_a_reason() {
    let s = Store::new();
    let refused = |p: &Path, why: &str| {
        let out = socair()
            .args(["airlock", "pull"])
            .arg(p)
            .arg("--store")
            .arg(&s.path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", p.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{why:?} not in {err}");
    };
    let make = |name: &str| {
        let d = s.root.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.json"), "{}").unwrap();
        d
    };
    let d = make("case");
    std::fs::write(d.join("Model.bin"), "a").unwrap();
    std::fs::write(d.join("model.bin"), "b").unwrap();
    refused(&d, "ignore case or normalize Unicode");
    let d = make("unicode");
    std::fs::write(d.join("caf\u{e9}.txt"), "nfc").unwrap();
    std::fs::write(d.join("cafe\u{301}.txt"), "nfd").unwrap();
    refused(&d, "ignore case or normalize Unicode");
    let d = make("fifo");
    assert!(Command::new("mkfifo")
        .arg(d.join("pipe"))
        .status()
        .unwrap()
        .success());
    refused(&d, "FIFO, socket or device");
    let d = make("link");
    std::os::unix::fs::symlink("../case/config.json", d.join("weights.bin")).unwrap();
    refused(&d, "symbolic link");
    refused(&d.join("weights.bin"), "not a regular file or a directory");
    assert_eq!(
        std::fs::read_dir(s.path.join("incoming")).unwrap().count(),
        0
    );

    // A staged artifact replaced by a link out of the store is not promoted.
    let key = s.key("k", "scan");
    let sha = s.ok(&[
        "airlock",
        "pull",
        fixture("safetensors/all-dtypes.safetensors")
            .to_str()
            .unwrap(),
    ]);
    s.ok(&["airlock", "scan", &sha, "--key", &key]);
    let staged = s.path.join("incoming").join(&sha);
    let elsewhere = s.root.join("elsewhere");
    std::fs::rename(&staged, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &staged).unwrap();
    let (code, _) = s.run(&["airlock", "promote", &sha], None);
    assert_eq!(code, Some(1));
    assert!(!s.path.join("promoted").join(&sha).exists());
}
