//! Signed tensor manifests (`socair tensors M --sign --key K`): a DSSE envelope over an in-toto
//! Statement whose subject is the model and whose predicate is its `socair.tensors/v1`
//! manifest, accepted as a reference once verified (`scan --reference-pub`,
//! `SOCAIR_TENSOR_REFERENCE_PUB`, `tensors diff --pub`); one that does not verify stops the
//! command.

use crate::common::{fixture, json, python, run, socair, Store};
use std::path::{Path, PathBuf};

const MODEL: &str = "diff/quantized/model.safetensors";

fn keygen(dir: &Path, name: &str) -> PathBuf {
    let k = dir.join(name);
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&k)).code, 0);
    k
}

fn pub_of(k: &Path) -> PathBuf {
    PathBuf::from(format!("{}.pub", k.display()))
}

/// Signs the fixture model's manifest with `key` into `out`.
fn signed_manifest(key: &Path, out: &Path) {
    let r = run(socair()
        .arg("tensors")
        .arg(fixture(MODEL))
        .arg("--sign")
        .arg("--key")
        .arg(key)
        .arg("--out")
        .arg(out));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("signed with key"), "{}", r.stderr);
}

/// Files `env` in the feed at `feed` (`socair tensors publish`).
fn publish(env: &Path, feed: &Path) {
    let p = run(socair()
        .args(["tensors", "publish"])
        .arg(env)
        .arg("--feed")
        .arg(feed));
    assert_eq!(p.code, 0, "{}", p.stderr);
}

/// Changes the first character of the envelope's signature at `path` (its payload intact).
fn change_signature(path: &Path) {
    let mut e = json(&std::fs::read_to_string(path).unwrap());
    let sig = e["signatures"][0]["sig"].as_str().unwrap().to_owned();
    let flipped = if sig.starts_with('A') { "B" } else { "A" };
    e["signatures"][0]["sig"] = format!("{flipped}{}", &sig[1..]).into();
    std::fs::write(path, serde_json::to_vec(&e).unwrap()).unwrap();
}

fn reference_row(report: &serde_json::Value) -> serde_json::Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Tensor reference")
        .cloned()
        .expect("a Tensor reference row")
}

#[test]
fn a_signed_manifest_is_an_in_toto_statement_about_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let env = dir.path().join("ref.json");
    signed_manifest(&key, &env);
    let e = json(&std::fs::read_to_string(&env).unwrap());
    assert_eq!(e["payloadType"], "application/vnd.in-toto+json");
    use base64::Engine;
    let payload = base64::engine::general_purpose::STANDARD
        .decode(e["payload"].as_str().unwrap())
        .unwrap();
    let statement = json(std::str::from_utf8(&payload).unwrap());
    assert_eq!(statement["predicateType"], "https://socair.ai/tensors/v1");
    assert_eq!(statement["predicate"]["schema"], "socair.tensors/v1");
    // The subject is the model's digest, the one its unsigned manifest names.
    let unsigned = run(socair().arg("tensors").arg(fixture(MODEL)).arg("--json"));
    let m = json(&unsigned.stdout);
    assert_eq!(
        statement["subject"][0]["digest"]["sha256"],
        m["artifact"]["sha256"]
    );
    assert_eq!(statement["predicate"], m);
}

#[test]
fn a_verified_signed_manifest_is_a_reference_and_an_unverified_one_stops_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let other = keygen(dir.path(), "other");
    let env = dir.path().join("ref.json");
    signed_manifest(&key, &env);

    let ok = run(socair()
        .arg("scan")
        .arg(fixture(MODEL))
        .arg("--reference")
        .arg(&env)
        .arg("--reference-pub")
        .arg(pub_of(&key))
        .arg("--json"));
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(reference_row(&json(&ok.stdout))["status"], "PASS");

    // The same through the environment.
    let by_env = run(socair()
        .arg("scan")
        .arg(fixture(MODEL))
        .arg("--json")
        .env("SOCAIR_TENSOR_REFERENCE", &env)
        .env("SOCAIR_TENSOR_REFERENCE_PUB", pub_of(&key)));
    assert_eq!(by_env.code, 0, "{}", by_env.stderr);
    assert_eq!(reference_row(&json(&by_env.stdout))["status"], "PASS");

    // A tampered payload: one character of the manifest changed.
    let text = std::fs::read_to_string(&env).unwrap();
    let mut e = json(&text);
    let p = e["payload"].as_str().unwrap().to_owned();
    let at = p.len() / 2;
    let swapped = if &p[at..at + 1] == "A" { "B" } else { "A" };
    e["payload"] = format!("{}{}{}", &p[..at], swapped, &p[at + 1..]).into();
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, serde_json::to_vec(&e).unwrap()).unwrap();

    for (reference, keys, why) in [
        (&tampered, vec![pub_of(&key)], "no signature verifies"),
        (&env, vec![pub_of(&other)], "no signature verifies"),
        (&env, vec![], "no public key to verify it with"),
    ] {
        let mut cmd = socair();
        cmd.arg("scan")
            .arg(fixture(MODEL))
            .arg("--reference")
            .arg(reference)
            .arg("--json")
            .env_remove("SOCAIR_TENSOR_REFERENCE_PUB");
        for k in &keys {
            cmd.arg("--reference-pub").arg(k);
        }
        let stopped = run(&mut cmd);
        assert_eq!(stopped.code, 2, "{why}: {}", stopped.stderr);
        assert!(stopped.stdout.is_empty(), "no report: {}", stopped.stdout);
        assert!(stopped.stderr.contains(why), "{}", stopped.stderr);
        assert!(
            stopped
                .stderr
                .contains(reference.file_name().unwrap().to_str().unwrap()),
            "names the file: {}",
            stopped.stderr
        );
    }
}

#[test]
fn tensors_diff_reads_a_signed_manifest_as_it_reads_the_unsigned_one() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let env = dir.path().join("ref.json");
    signed_manifest(&key, &env);
    let plain = dir.path().join("plain.json");
    let r = run(socair()
        .arg("tensors")
        .arg(fixture(MODEL))
        .arg("--out")
        .arg(&plain));
    assert_eq!(r.code, 0);
    let artifact = fixture("diff/quantized/llama-q8_0.gguf");
    let signed = run(socair()
        .args(["tensors", "diff"])
        .arg(&artifact)
        .arg(&env)
        .arg("--pub")
        .arg(pub_of(&key)));
    let unsigned = run(socair()
        .args(["tensors", "diff"])
        .arg(&artifact)
        .arg(&plain));
    assert_eq!(signed.code, unsigned.code);
    let (s, u) = (json(&signed.stdout), json(&unsigned.stdout));
    assert_eq!(s["accounting"], u["accounting"]);
    assert_eq!(s["pairs"], u["pairs"]);
    // Without the key the envelope is not read as anything else.
    let refused = run(socair()
        .args(["tensors", "diff"])
        .arg(&artifact)
        .arg(&env)
        .env_remove("SOCAIR_TENSOR_REFERENCE_PUB"));
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("signed tensor manifest"),
        "{}",
        refused.stderr
    );
}

#[test]
fn with_a_store_a_signed_manifest_needs_a_key_holding_the_reference_role() {
    let store = Store::new();
    let reviewer = PathBuf::from(store.key("reviewer", "reference"));
    let scanner = PathBuf::from(store.key("scanner", "scan"));
    let dir = tempfile::tempdir().unwrap();
    let (by_reviewer, by_scanner) = (dir.path().join("r.json"), dir.path().join("s.json"));
    signed_manifest(&reviewer, &by_reviewer);
    signed_manifest(&scanner, &by_scanner);
    let scan = |reference: &Path| {
        run(socair()
            .arg("scan")
            .arg(fixture(MODEL))
            .arg("--reference")
            .arg(reference)
            .arg("--reference-store")
            .arg(store.path())
            .arg("--json"))
    };
    let ok = scan(&by_reviewer);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(reference_row(&json(&ok.stdout))["status"], "PASS");
    // A key the store trusts, but not to vouch for weights.
    let refused = scan(&by_scanner);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("no signature verifies"),
        "{}",
        refused.stderr
    );
    // socair verify names the role a tensor manifest needs.
    let v = run(socair()
        .arg("verify")
        .arg(&by_reviewer)
        .arg("--store")
        .arg(store.path()));
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(
        format!("{}{}", v.stdout, v.stderr).contains("role `reference`"),
        "{}{}",
        v.stdout,
        v.stderr
    );
    // The same store keys for tensors diff.
    let d = run(socair()
        .args(["tensors", "diff"])
        .arg(fixture(MODEL))
        .arg(&by_reviewer)
        .arg("--store")
        .arg(store.path()));
    assert_eq!(
        d.code, 0,
        "the model against its own signed manifest: {}",
        d.stderr
    );
}

#[test]
fn a_feed_gives_the_reference_for_the_scanned_models_name_verified() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    // The reviewed model, under the name the feed files it by.
    let reviewed = dir.path().join("reviewed").join("tiny-bert");
    std::fs::create_dir_all(&reviewed).unwrap();
    for f in std::fs::read_dir(fixture("safetensors/tiny-bert")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, reviewed.join(f.file_name().unwrap())).unwrap();
    }
    let env = dir.path().join("tiny-bert.tensors.dsse.json");
    let r = run(socair()
        .arg("tensors")
        .arg(&reviewed)
        .args(["--sign", "--key"])
        .arg(&key)
        .arg("--out")
        .arg(&env));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let feed = dir.path().join("feed");
    publish(&env, &feed);
    let index = json(&std::fs::read_to_string(feed.join("socair.feed.json")).unwrap());
    assert_eq!(index["schema"], "socair.tensors.feed/v1");
    let digest = index["models"]["tiny-bert"][0].as_str().unwrap().to_owned();
    let filed = feed
        .join("tiny-bert")
        .join(format!("{digest}.tensors.dsse.json"));
    assert!(filed.is_file());

    let scan = |model: &Path| {
        run(socair()
            .arg("scan")
            .arg(model)
            .arg("--reference-feed")
            .arg(&feed)
            .arg("--reference-pub")
            .arg(pub_of(&key))
            .arg("--json"))
    };
    let same = scan(&reviewed);
    assert_eq!(same.code, 0, "{}", same.stderr);
    assert_eq!(reference_row(&json(&same.stdout))["status"], "PASS");

    // Another model presented under the reviewed name: its weights are not the reference's.
    let impostor = dir.path().join("impostor").join("tiny-bert");
    std::fs::create_dir_all(&impostor).unwrap();
    std::fs::copy(fixture(MODEL), impostor.join("model.safetensors")).unwrap();
    let other = scan(&impostor);
    assert_eq!(other.code, 1, "{}", other.stderr);
    assert_eq!(reference_row(&json(&other.stdout))["status"], "LEAD");

    // A model the feed has no manifest for, and a tampered manifest: the scan stops.
    let unknown = scan(&fixture(MODEL));
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no signed manifest for the model"),
        "{}",
        unknown.stderr
    );
    change_signature(&filed);
    let tampered = scan(&reviewed);
    assert_eq!(tampered.code, 2, "{}", tampered.stderr);
    assert!(tampered.stdout.is_empty());
    assert!(
        tampered.stderr.contains("no signature verifies"),
        "{}",
        tampered.stderr
    );
}

#[test]
fn a_feed_is_read_the_same_from_a_web_server() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let env = dir.path().join("m.tensors.dsse.json");
    signed_manifest(&key, &env);
    let feed = dir.path().join("feed");
    publish(&env, &feed);
    // The feed directory served as it is by a static web server (with byte ranges).
    /// Stopped when dropped, a failed assertion included.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut server = Killed(
        std::process::Command::new(python())
            .arg(crate::common::repo().join("tests/python/range_server.py"))
            .arg(&feed)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 serves the feed"),
    );
    let mut port = String::new();
    std::io::BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let url = format!("http://127.0.0.1:{}", port.trim());
    let scan = || {
        run(socair()
            .arg("scan")
            .arg(fixture(MODEL))
            .arg("--reference-feed")
            .arg(&url)
            .arg("--reference-pub")
            .arg(pub_of(&key))
            .arg("--json")
            // Plain HTTP is for a local server only: socair asks for it to be said.
            .env("AWS_ALLOW_HTTP", "true"))
    };
    let ok = scan();
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(reference_row(&json(&ok.stdout))["status"], "PASS");
    assert!(ok.stderr.contains(&url), "{}", ok.stderr);
    // A manifest changed on the server stops the scan.
    let filed = std::fs::read_dir(feed.join("model.safetensors"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    change_signature(&filed);
    let stopped = scan();
    drop(server);
    assert_eq!(stopped.code, 2, "{}", stopped.stderr);
    assert!(
        stopped.stderr.contains("no signature verifies"),
        "{}",
        stopped.stderr
    );
}
