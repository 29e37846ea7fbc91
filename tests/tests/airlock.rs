//! Keys, attestations and the airlock store end to end, through the binary.

use crate::common::{fixture, json, run, socair};
use std::path::{Path, PathBuf};
use std::process::Command;

struct Airlock {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: PathBuf,
}

impl Airlock {
    fn new() -> Airlock {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let store = root.join("store");
        let a = Airlock {
            _dir: dir,
            root,
            store,
        };
        a.ok(&["airlock", "init"]);
        a
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = socair();
        c.args(args).arg("--store").arg(&self.store);
        c
    }

    fn ok(&self, args: &[&str]) -> String {
        let r = run(&mut self.cmd(args));
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout.trim().to_owned()
    }

    fn refused(&self, args: &[&str], why: &str) {
        let r = run(&mut self.cmd(args));
        assert_eq!(r.code, 1, "{args:?} should be refused: {}", r.stderr);
        assert!(
            r.stderr.contains(why),
            "{args:?}: {why:?} not in {}",
            r.stderr
        );
    }

    fn key(&self, name: &str, roles: &str) -> String {
        let path = self.root.join(name);
        let r = run(socair().arg("keygen").arg("--out").arg(&path));
        assert_eq!(r.code, 0, "{}", r.stderr);
        if !roles.is_empty() {
            self.ok(&[
                "airlock",
                "trust",
                &format!("{}.pub", path.display()),
                "--role",
                roles,
            ]);
        }
        path.display().to_string()
    }

    fn pull(&self, p: &Path) -> String {
        self.ok(&["airlock", "pull", p.to_str().unwrap()])
    }

    fn staged(&self, sha: &str) -> PathBuf {
        self.store.join("incoming").join(sha)
    }

    fn log_ok(&self) {
        self.ok(&["airlock", "log"]);
    }
}

#[test]
fn happy_path_for_a_file_and_a_directory() {
    let a = Airlock::new();
    let scanner = a.key("scanner.key", "scan");
    for model in [
        fixture("safetensors/all-dtypes.safetensors"),
        fixture("safetensors/tiny-bert"),
    ] {
        let sha = a.pull(&model);
        assert_eq!(sha.len(), 64);
        a.ok(&["airlock", "scan", &sha, "--key", &scanner]);
        a.ok(&["airlock", "promote", &sha]);
        let promoted = a.store.join("promoted").join(&sha);
        assert!(promoted.join("attestation.dsse.json").is_file());
        assert!(!a.staged(&sha).exists());
        // The promoted bytes are the pulled bytes.
        let name = model.file_name().unwrap();
        let r = run(socair().arg("tensors").arg(promoted.join(name)));
        assert_eq!(json(&r.stdout)["artifact"]["sha256"], sha.as_str());
    }
    let log = a.ok(&["airlock", "log"]);
    let actions: Vec<String> = log
        .lines()
        .map(|l| {
            format!(
                "{} {}",
                json(l)["action"].as_str().unwrap(),
                json(l)["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            "init ok",
            "trust ok",
            "pull ok",
            "scan ok",
            "promote ok",
            "pull ok",
            "scan ok",
            "promote ok"
        ]
    );
}

#[test]
fn a_pickle_checkpoint_needs_an_acceptance_and_it_can_expire() {
    let a = Airlock::new();
    let scanner = a.key("scanner.key", "scan");
    let reviewer = a.key("reviewer.key", "accept");
    let sha = a.pull(&fixture("torch/legit/state-dict.pt"));
    a.ok(&["airlock", "scan", &sha, "--key", &scanner]);
    a.refused(
        &["airlock", "promote", &sha],
        "NOT_TESTED rows with no valid, unexpired acceptance",
    );
    // The scanner key cannot accept; an acceptance needs a reason and a NOT_TESTED row.
    a.refused(
        &[
            "airlock",
            "accept",
            &sha,
            "--row",
            "Format and structure",
            "--reason",
            "r",
            "--key",
            &scanner,
        ],
        "role `accept`",
    );
    a.refused(
        &[
            "airlock",
            "accept",
            &sha,
            "--row",
            "Pickle opcode scan",
            "--reason",
            "r",
            "--key",
            &reviewer,
        ],
        "not NOT_TESTED",
    );
    // An acceptance that expires in two seconds, then lapses.
    let soon = {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 2;
        let days = t / 86_400;
        let (h, m, s) = (t % 86_400 / 3600, t % 3600 / 60, t % 60);
        // Civil date from days (Howard Hinnant), written out here independently of the host.
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let mo = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(mo <= 2);
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
    };
    a.ok(&[
        "airlock",
        "accept",
        &sha,
        "--row",
        "Format and structure",
        "--reason",
        "the pickle row PASSes; pickles have no structure check",
        "--key",
        &reviewer,
        "--expires",
        &soon,
    ]);
    std::thread::sleep(std::time::Duration::from_secs(4));
    a.refused(
        &["airlock", "promote", &sha],
        "no valid, unexpired acceptance",
    );
    a.ok(&[
        "airlock",
        "accept",
        &sha,
        "--row",
        "Format and structure",
        "--reason",
        "reviewed again",
        "--key",
        &reviewer,
    ]);
    a.ok(&["airlock", "promote", &sha]);
    a.log_ok();
}

#[test]
fn every_gate_condition_refuses_with_its_reason() {
    let a = Airlock::new();
    let scanner = a.key("scanner.key", "scan");
    let outsider = a.key("outsider.key", "");
    let acceptor = a.key("acceptor.key", "accept");

    // Untrusted key, and a trusted key without the role.
    let sha = a.pull(&fixture("safetensors/all-dtypes.safetensors"));
    a.refused(
        &["airlock", "scan", &sha, "--key", &outsider],
        "not in the store's trust policy with role `scan`",
    );
    a.refused(
        &["airlock", "scan", &sha, "--key", &acceptor],
        "role `scan`",
    );
    a.refused(&["airlock", "promote", &sha], "has no attestation");

    // An attestation signed outside the store by an untrusted key.
    let att = a.staged(&sha).join("attestation.dsse.json");
    let r = run(socair()
        .arg("attest")
        .arg(fixture("safetensors/all-dtypes.safetensors"))
        .arg("--key")
        .arg(&outsider)
        .arg("--out")
        .arg(&att));
    assert_eq!(r.code, 0, "{}", r.stderr);
    a.refused(
        &["airlock", "promote", &sha],
        "does not verify under a trusted key with role `scan`",
    );

    // A tampered payload.
    a.ok(&["airlock", "scan", &sha, "--key", &scanner]);
    let mut env = json(&std::fs::read_to_string(&att).unwrap());
    let payload = String::from_utf8(base64_decode(env["payload"].as_str().unwrap()))
        .unwrap()
        .replace("\"FAIL\"", "\"PASS\"")
        .replace("\"PASS\"", "\"PASS\" ");
    env["payload"] = base64_encode(payload.as_bytes()).into();
    std::fs::write(&att, env.to_string()).unwrap();
    a.refused(&["airlock", "promote", &sha], "does not verify");

    // A swapped subject: another artifact's valid attestation.
    let other = a.pull(&fixture(
        "safetensors/tiny-bert/model-00001-of-00004.safetensors",
    ));
    a.ok(&["airlock", "scan", &other, "--key", &scanner]);
    std::fs::copy(a.staged(&other).join("attestation.dsse.json"), &att).unwrap();
    a.refused(
        &["airlock", "promote", &sha],
        &format!("is about \"{other}\", not {sha}"),
    );

    // The staged file changed after scanning.
    a.ok(&["airlock", "scan", &sha, "--key", &scanner]);
    let staged_file = a.staged(&sha).join("all-dtypes.safetensors");
    let mut bytes = std::fs::read(&staged_file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&staged_file, &bytes).unwrap();
    a.refused(
        &["airlock", "promote", &sha],
        "the staged bytes changed after the scan",
    );

    // A FAIL row.
    let bad = a.pull(&fixture("torch/malicious/pickle-os-system.pt"));
    let r = run(&mut a.cmd(&["airlock", "scan", &bad, "--key", &scanner]));
    assert_eq!(
        r.code, 1,
        "a FAIL scan exits 1 but stores the attestation: {}",
        r.stderr
    );
    a.refused(
        &["airlock", "promote", &bad],
        "\"Pickle opcode scan\" row is FAIL",
    );
    assert!(!a.store.join("promoted").join(&bad).exists());

    // Refusals are logged, and the chain holds.
    let log = a.ok(&["airlock", "log"]);
    assert!(log.lines().filter(|l| l.contains("\"refused\"")).count() >= 6);
}

#[test]
fn the_log_detects_tampering_and_a_missing_line() {
    let a = Airlock::new();
    let scanner = a.key("scanner.key", "scan");
    let sha = a.pull(&fixture("safetensors/all-dtypes.safetensors"));
    a.ok(&["airlock", "scan", &sha, "--key", &scanner]);
    let log_path = a.store.join("activity.log");
    let original = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    assert_eq!(lines.len(), 4);

    let edited = original.replacen("\"pull\"", "\"pulled\"", 1);
    std::fs::write(&log_path, &edited).unwrap();
    let r = run(&mut a.cmd(&["airlock", "log"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("breaks at line 4"), "{}", r.stderr);

    let removed = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[3]);
    std::fs::write(&log_path, removed).unwrap();
    let r = run(&mut a.cmd(&["airlock", "log"]));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("breaks at line 3"), "{}", r.stderr);
}

#[test]
fn concurrent_pulls_keep_the_chain() {
    let a = Airlock::new();
    let models = [
        fixture("safetensors/all-dtypes.safetensors"),
        fixture("safetensors/tiny-bert"),
        fixture("torch/legit/state-dict.pt"),
        fixture("gguf/valid/llama-like.gguf"),
    ];
    let children: Vec<_> = models
        .iter()
        .map(|m| {
            a.cmd(&["airlock", "pull", m.to_str().unwrap()])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let log = a.ok(&["airlock", "log"]);
    assert_eq!(log.lines().filter(|l| l.contains("\"pull\"")).count(), 4);
    assert_eq!(
        std::fs::read_dir(a.store.join("incoming")).unwrap().count(),
        4
    );
    assert_eq!(std::fs::read_dir(a.store.join(".tmp")).unwrap().count(), 0);
}

#[test]
fn pull_refuses_links_and_leaves_nothing() {
    let a = Airlock::new();
    let model = a.root.join("model");
    std::fs::create_dir(&model).unwrap();
    std::fs::write(model.join("config.json"), "{}").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", model.join("weights.bin")).unwrap();
    a.refused(
        &["airlock", "pull", model.to_str().unwrap()],
        "symbolic link",
    );
    assert_eq!(
        std::fs::read_dir(a.store.join("incoming")).unwrap().count(),
        0
    );
    assert_eq!(std::fs::read_dir(a.store.join(".tmp")).unwrap().count(), 0);
}

#[test]
fn keys_and_envelopes() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("k");
    let r = run(socair().arg("keygen").arg("--out").arg(&key));
    assert_eq!(r.code, 0);
    let keyid = r.stdout.trim();
    assert_eq!(keyid.len(), 64);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Never overwritten.
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&key)).code, 2);

    // An envelope Socair signs verifies with its key and not with another.
    let env = dir.path().join("a.dsse.json");
    let r = run(socair()
        .arg("attest")
        .arg(fixture("safetensors/all-dtypes.safetensors"))
        .arg("--key")
        .arg(&key)
        .arg("--out")
        .arg(&env));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(socair()
        .arg("verify")
        .arg(&env)
        .arg("--pub")
        .arg(format!("{}.pub", key.display())));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let statement = json(&r.stdout);
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(statement["predicateType"], "https://socair.ai/scan/v1");
    assert_eq!(statement["predicate"]["schema"], "socair.report/v1");
    let r = run(socair()
        .arg("verify")
        .arg(&env)
        .arg("--pub")
        .arg(fixture("dsse/python.pub")));
    assert_eq!(r.code, 1);

    // An envelope written by Python's `cryptography` (URL-safe payload, no keyid) verifies.
    let r = run(socair()
        .arg("verify")
        .arg(fixture("dsse/python-signed.dsse.json"))
        .arg("--pub")
        .arg(fixture("dsse/python.pub")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        json(&r.stdout)["predicate"]["made_by"],
        "python cryptography"
    );
    let r = run(socair()
        .arg("verify")
        .arg(fixture("dsse/socair-signed.dsse.json"))
        .arg("--pub")
        .arg(fixture("dsse/socair.pub")));
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Wrong, truncated and other-algorithm keys give clear errors.
    let truncated = dir.path().join("t");
    let text = std::fs::read_to_string(&key).unwrap();
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let ec = dir.path().join("ec");
    std::fs::write(
        &ec,
        "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\nOF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r\n1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    for (bad, words) in [
        (&truncated, "not a valid"),
        (&ec, "not an Ed25519"),
        (
            &PathBuf::from(format!("{}.pub", key.display())),
            "public key",
        ),
    ] {
        let r = run(socair()
            .arg("attest")
            .arg(fixture("safetensors/all-dtypes.safetensors"))
            .arg("--key")
            .arg(bad)
            .arg("--out")
            .arg(dir.path().join("x.json")));
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains(words), "{words:?} not in {}", r.stderr);
        assert!(r.stderr.contains(bad.to_str().unwrap()), "{}", r.stderr);
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    // A small standard-alphabet decoder, so the test does not share the host's.
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = table.iter().position(|&t| t == c).expect("base64") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn base64_encode(b: &[u8]) -> String {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, &x| (a << 8) | u32::from(x)) << (8 * (3 - chunk.len()));
        for i in 0..=chunk.len() {
            out.push(table[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
        out.extend(std::iter::repeat_n('=', 3 - chunk.len()));
    }
    out
}

#[test]
fn the_airlock_as_people_use_it() {
    let s = crate::common::Store::new();
    let scanner = s.key("scanner.key", "scan");
    let file = fixture("safetensors/all-dtypes.safetensors");
    let sha = s.run(&["airlock", "pull", file.to_str().unwrap()]);
    let sha = sha.stdout.trim().to_owned();

    // A unique start of the sha256 is enough; a too-short or unknown one is refused.
    assert_eq!(
        s.run(&["airlock", "scan", &sha[..8], "--key", &scanner])
            .code,
        0
    );
    let r = s.run(&["airlock", "promote", &sha[..3]]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = s.run(&["airlock", "promote", "0000000000"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("nothing staged or promoted"),
        "{}",
        r.stderr
    );

    // ls: what is staged, with its verdict.
    let ls = json(&s.run(&["airlock", "ls"]).stdout);
    assert_eq!(ls[0]["sha256"], sha.as_str());
    assert_eq!(ls[0]["state"], "staged");
    assert_eq!(ls[0]["name"], "all-dtypes.safetensors");
    assert_eq!(ls[0]["verdict"], "PASS Format and structure");

    // promote, then promote again: said, not an error.
    let r = s.run(&["airlock", "promote", &sha[..10]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = s.run(&["airlock", "promote", &sha[..10]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("is already promoted"), "{}", r.stderr);
    assert_eq!(
        json(&s.run(&["airlock", "ls"]).stdout)[0]["state"],
        "promoted"
    );

    // export: into a directory, re-checked; never over an existing file.
    let out = s.dir.path().join("exported");
    std::fs::create_dir(&out).unwrap();
    let r = s.run(&["airlock", "export", &sha[..10], out.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let copy = out.join("all-dtypes.safetensors");
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&file).unwrap());
    let r = s.run(&["airlock", "export", &sha, out.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    // A promoted file changed behind the store's back is not exported.
    let promoted = s
        .path()
        .join("promoted")
        .join(&sha)
        .join("all-dtypes.safetensors");
    let mut bytes = std::fs::read(&promoted).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&promoted, bytes).unwrap();
    let elsewhere = s.dir.path().join("elsewhere.safetensors");
    let r = s.run(&["airlock", "export", &sha, elsewhere.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("nothing was exported"), "{}", r.stderr);
    assert!(!elsewhere.exists());
    let leftovers: Vec<_> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".socair-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
