//! OpenSSF Model Signing: `socair keygen --algorithm ecdsa-p256`, `socair sign`,
//! `socair verify` of a Sigstore bundle, and `socair attest --subject oms`, checked against
//! the real `model_signing` 1.1.1 through the fixtures it wrote and verified
//! (`fixtures/oms/make_fixtures.py`; what it said is in `fixtures/oms/expected.json`).

use crate::common::{fixture, json, run, socair, Run};
use base64::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn oms(rel: &str) -> PathBuf {
    fixture(&format!("oms/{rel}"))
}

fn expected() -> Value {
    json(&std::fs::read_to_string(oms("expected.json")).unwrap())
}

fn verify(sig: &Path, model: &Path, public: &Path) -> Run {
    run(socair()
        .arg("verify")
        .arg(sig)
        .arg(model)
        .arg("--pub")
        .arg(public))
}

fn sign(model: &Path, key: &Path, out: &Path) -> Run {
    run(socair()
        .arg("sign")
        .arg(model)
        .arg("--key")
        .arg(key)
        .arg("--out")
        .arg(out))
}

/// The statement inside a bundle.
fn statement(bundle: &Path) -> Value {
    let b = json(&std::fs::read_to_string(bundle).unwrap());
    let payload = base64::engine::general_purpose::STANDARD
        .decode(b["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&payload).unwrap()
}

/// The tampered copies of `edge/`, and the words socair and model_signing use for each.
const TAMPERED: [(&str, &str, &str); 3] = [
    (
        "edge-changed",
        "weights.bin changed since it was signed",
        "Hash mismatch for 'weights.bin'",
    ),
    (
        "edge-added",
        "extra.py was added after the model was signed",
        "Extra files found in model 'edge-added': extra.py",
    ),
    (
        "edge-removed",
        "tokenizer/vocab.txt is missing",
        "Missing files in model 'edge-removed': tokenizer/vocab.txt",
    ),
];

#[test]
fn bundles_model_signing_wrote_verify_and_tampered_models_are_refused() {
    let e = expected();
    let publisher = oms("TEST-ONLY-publisher.key.pub");
    for (sig, model) in [
        ("model_signing-edge.sig", "edge"),
        ("inside-ms/model.sig", "inside-ms"),
        ("model_signing-weights.sig", "edge/weights.bin"),
        ("model_signing-edge-shards.sig", "edge"),
    ] {
        let r = verify(&oms(sig), &oms(model), &publisher);
        assert_eq!(r.code, 0, "{sig} {model}: {}", r.stderr);
        assert!(r.stderr.contains("every condition holds"), "{}", r.stderr);
        // The payload exactly as model_signing signed it.
        assert_eq!(
            json(&r.stdout)["predicateType"],
            "https://model_signing/signature/v1.0"
        );
    }
    let r = verify(
        &oms("model_signing-tiny-bert.sig"),
        &fixture("safetensors/tiny-bert"),
        &publisher,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // model_signing signed with the private key `socair keygen --algorithm ecdsa-p256` wrote.
    let r = verify(
        &oms("model_signing-edge-socair-key.sig"),
        &oms("edge"),
        &oms("TEST-ONLY-socair.key.pub"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        e["signed_by_model_signing"]["model_signing-edge-socair-key.sig"]["edge"]["exit"],
        0
    );
    // The files ignored by default are there, and said to be left out.
    let r = verify(&oms("model_signing-edge.sig"), &oms("edge"), &publisher);
    assert!(
        r.stderr.contains(".gitattributes, .github/workflow.yml"),
        "{}",
        r.stderr
    );

    for (bad, ours, theirs) in TAMPERED {
        let r = verify(&oms("model_signing-edge.sig"), &oms(bad), &publisher);
        assert_eq!(r.code, 1, "{bad}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("socair: refused: {ours}")),
            "{bad}: {}",
            r.stderr
        );
        // model_signing refused the same model, naming the same file.
        let said = &e["signed_by_model_signing"]["model_signing-edge.sig"][bad];
        assert_eq!(said["exit"], 1);
        assert!(said["output"].as_str().unwrap().contains(theirs), "{said}");
    }
    // Sharded: a changed shard is named with its range.
    let r = verify(
        &oms("model_signing-edge-shards.sig"),
        &oms("edge-changed"),
        &publisher,
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("socair: refused: weights.bin:48:64 changed since it was signed"),
        "{}",
        r.stderr
    );
    let said = &e["signed_by_model_signing"]["model_signing-edge-shards.sig"];
    assert!(said["edge-changed"]["output"]
        .as_str()
        .unwrap()
        .contains("'weights.bin:48:64'"));
    assert_eq!(said["edge"]["exit"], 0);
}

#[test]
fn bundles_socair_wrote_were_accepted_by_model_signing() {
    let e = expected();
    assert_eq!(e["versions"]["model_signing"], "1.1.1");
    let socair_pub = oms("TEST-ONLY-socair.key.pub");
    let publisher = oms("TEST-ONLY-publisher.key.pub");
    for (sig, model, public) in [
        ("socair-edge.sig", "edge", &socair_pub),
        ("socair-edge-sec1.sig", "edge", &publisher),
        ("socair-weights.sig", "edge/weights.bin", &socair_pub),
        ("inside-socair/model.sig", "inside-socair", &socair_pub),
    ] {
        let said = &e["signed_by_socair"][sig][model];
        assert_eq!(said["exit"], 0, "{sig}: {said}");
        assert_eq!(said["output"], "Verification succeeded");
        let r = verify(&oms(sig), &oms(model), public);
        assert_eq!(r.code, 0, "{sig}: {}", r.stderr);
    }
    for sig in ["socair-edge.sig", "socair-edge-sec1.sig"] {
        let public = if sig == "socair-edge.sig" {
            &socair_pub
        } else {
            &publisher
        };
        for (bad, ours, theirs) in TAMPERED {
            let said = &e["signed_by_socair"][sig][bad];
            assert_eq!(said["exit"], 1, "{sig} {bad}");
            assert!(said["output"].as_str().unwrap().contains(theirs), "{said}");
            let r = verify(&oms(sig), &oms(bad), public);
            assert_eq!(r.code, 1);
            assert!(r.stderr.contains(ours), "{}", r.stderr);
        }
        let said = &e["signed_by_socair"][sig]["edge, with the publisher's key"];
        assert!(said["output"].as_str().unwrap().contains("Key mismatch"));
    }
}

#[test]
fn socair_sign_lists_what_model_signing_lists() {
    let e = expected();
    let dir = tempfile::tempdir().unwrap();
    for (model, ms_sig, root) in [
        (oms("edge"), "model_signing-edge.sig", "edge"),
        (
            oms("edge/weights.bin"),
            "model_signing-weights.sig",
            "weights.bin",
        ),
        (
            fixture("safetensors/tiny-bert"),
            "model_signing-tiny-bert.sig",
            "tiny-bert",
        ),
    ] {
        let out = dir.path().join(format!("{root}.sig"));
        let r = sign(&model, &oms("TEST-ONLY-publisher.key"), &out);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let summary = json(&r.stdout);
        let expected_root = e["roots"][root].as_str().unwrap();
        assert_eq!(summary["root_digest"], format!("sha256:{expected_root}"));
        // The same resources, in the same order, and the same subject as model_signing's.
        let ours = statement(&out);
        let theirs = statement(&oms(ms_sig));
        assert_eq!(ours["subject"], theirs["subject"], "{root}");
        assert_eq!(
            ours["predicate"]["resources"],
            theirs["predicate"]["resources"]
        );
        let sorted = |v: &Value| {
            let mut p: Vec<String> = v["predicate"]["serialization"]["ignore_paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect();
            p.sort();
            p
        };
        assert_eq!(sorted(&ours), sorted(&theirs));
        // What model_signing's key signer writes around it.
        let b = json(&std::fs::read_to_string(&out).unwrap());
        assert_eq!(
            b["mediaType"],
            "application/vnd.dev.sigstore.bundle.v0.3+json"
        );
        assert_eq!(
            b["verificationMaterial"]["tlogEntries"],
            serde_json::json!([])
        );
        let ms = json(&std::fs::read_to_string(oms(ms_sig)).unwrap());
        assert_eq!(
            b["verificationMaterial"]["publicKey"]["hint"],
            ms["verificationMaterial"]["publicKey"]["hint"]
        );
        assert_eq!(b["dsseEnvelope"]["signatures"][0]["keyid"], "");
        // And socair verifies it.
        let r = verify(&out, &model, &oms("TEST-ONLY-publisher.key.pub"));
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // A model whose edge/ names sort one way by bytes and another by components: a/c first.
    let names: Vec<String> = statement(&oms("socair-edge.sig"))["predicate"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    let at = |n: &str| names.iter().position(|x| x == n).unwrap();
    assert!(at("a/c") < at("a.b") && at("tokenizer/vocab.txt") < at("tokenizer.json"));
    assert!(names.contains(&".hidden".to_owned()) && names.contains(&"empty.txt".to_owned()));
    assert!(!names.iter().any(|n| n.starts_with(".git")));
}

#[test]
fn ignore_paths_given_to_either_tool_are_recorded_and_applied() {
    let e = expected();
    let ms = statement(&oms("model_signing-edge-ignore.sig"));
    let ours = statement(&oms("socair-edge-ignore.sig"));
    assert_eq!(ms["predicate"]["resources"], ours["predicate"]["resources"]);
    assert_eq!(ms["subject"], ours["subject"]);
    let names = ours["predicate"]["resources"].to_string();
    assert!(
        !names.contains("deep/") && !names.contains("\"a.b\""),
        "{names}"
    );
    for (sig, public, said) in [
        (
            "model_signing-edge-ignore.sig",
            "TEST-ONLY-publisher.key.pub",
            &e["signed_by_model_signing"]["model_signing-edge-ignore.sig"]["edge"],
        ),
        (
            "socair-edge-ignore.sig",
            "TEST-ONLY-socair.key.pub",
            &e["signed_by_socair"]["socair-edge-ignore.sig"]["edge"],
        ),
    ] {
        assert_eq!(said["exit"], 0, "{said}");
        let r = verify(&oms(sig), &oms("edge"), &oms(public));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stderr.contains("a.b, deep/er/est.txt"), "{}", r.stderr);
        // The ignored paths stay ignored on a model where they changed.
        let r = verify(&oms(sig), &oms("edge-changed"), &oms(public));
        assert_eq!(r.code, 1);
    }
    // A path outside the model is refused, naming it (model_signing drops it silently).
    let dir = tempfile::tempdir().unwrap();
    let r = run(socair()
        .arg("sign")
        .arg(oms("edge"))
        .arg("--key")
        .arg(oms("TEST-ONLY-socair.key"))
        .arg("--out")
        .arg(dir.path().join("x.sig"))
        .arg("--ignore-path")
        .arg(dir.path()));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a path inside"), "{}", r.stderr);
}

const SNAPSHOT: &str =
    "hfcache/hub/models--socair-fixtures--tiny-bert/snapshots/1c7bfa26e76b1ee69ff854b401134d895fc7759f";

#[test]
fn a_hugging_face_snapshot_is_signed_through_its_links_into_blobs() {
    let e = expected();
    let snapshot = fixture(SNAPSHOT);
    let socair_pub = oms("TEST-ONLY-socair.key.pub");
    // model_signing --allow_symlinks signed the snapshot and verified socair's signature of it.
    let said = &e["signed_by_socair"]["socair-hf-snapshot.sig"];
    assert_eq!(said["snapshot, --allow_symlinks"]["exit"], 0, "{said}");
    assert!(said["snapshot"]["output"]
        .as_str()
        .unwrap()
        .contains("because it is a symlink"));
    assert_eq!(
        e["signed_by_model_signing"]["model_signing-hf-snapshot.sig"]["snapshot, --allow_symlinks"]
            ["exit"],
        0
    );
    // socair follows the links the cache's rules accept: the same files as the plain
    // directory, so every signature of either verifies against both.
    for (sig, public) in [
        (
            "model_signing-hf-snapshot.sig",
            oms("TEST-ONLY-publisher.key.pub"),
        ),
        ("socair-hf-snapshot.sig", socair_pub.clone()),
        (
            "model_signing-tiny-bert.sig",
            oms("TEST-ONLY-publisher.key.pub"),
        ),
    ] {
        for model in [snapshot.clone(), fixture("safetensors/tiny-bert")] {
            let r = verify(&oms(sig), &model, &public);
            assert_eq!(r.code, 0, "{sig} {}: {}", model.display(), r.stderr);
        }
    }
    // hf://org/name resolved offline in the cache.
    let r = run(socair()
        .arg("verify")
        .arg(oms("socair-hf-snapshot.sig"))
        .arg("hf://socair-fixtures/tiny-bert")
        .arg("--pub")
        .arg(&socair_pub)
        .env("HF_HUB_CACHE", fixture("hfcache/hub")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = statement(&oms("socair-hf-snapshot.sig"));
    let theirs = statement(&oms("model_signing-hf-snapshot.sig"));
    assert_eq!(ours["subject"], theirs["subject"]);
    assert_eq!(
        ours["predicate"]["resources"],
        theirs["predicate"]["resources"]
    );
    assert_eq!(ours["predicate"]["serialization"]["allow_symlinks"], true);
    assert_eq!(
        ours["subject"][0]["digest"]["sha256"],
        e["roots"]["tiny-bert"]
    );
    // A link the cache's rules refuse (out of blobs/) is named, never followed.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("hub");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture("hfcache/hub"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let rev = copy.join(SNAPSHOT.trim_start_matches("hfcache/hub/"));
    std::fs::write(dir.path().join("outside.json"), "{}").unwrap();
    std::fs::remove_file(rev.join("config.json")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.json"), rev.join("config.json")).unwrap();
    let r = verify(&oms("socair-hf-snapshot.sig"), &rev, &socair_pub);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("config.json: a symbolic link to")
            && r.stderr.contains("not a file of this repository's blobs/"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_signature_inside_the_model_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m");
    std::fs::create_dir(&model).unwrap();
    std::fs::write(model.join("w.bin"), b"weights").unwrap();
    let sig = model.join("model.sig");
    let r = sign(&model, &oms("TEST-ONLY-socair.key"), &sig);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(json(&r.stdout)["ignore_paths"]
        .as_array()
        .unwrap()
        .contains(&Value::from("model.sig")));
    let public = oms("TEST-ONLY-socair.key.pub");
    assert_eq!(verify(&sig, &model, &public).code, 0);
    // Signing again into the same place: the old signature is not part of the new one.
    let r = sign(&model, &oms("TEST-ONLY-socair.key"), &sig);
    assert_eq!(json(&r.stdout)["files"], 1);
    // A symbolic link is refused on both sides, named.
    std::os::unix::fs::symlink("w.bin", model.join("link.bin")).unwrap();
    let r = verify(&sig, &model, &public);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("link.bin: a symbolic link"),
        "{}",
        r.stderr
    );
    let r = sign(
        &model,
        &oms("TEST-ONLY-socair.key"),
        &dir.path().join("x.sig"),
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("link.bin: a symbolic link"),
        "{}",
        r.stderr
    );
}

#[test]
fn wrong_keys_and_changed_bundles_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let edge = oms("edge");
    let sig = oms("model_signing-edge.sig");
    // Another P-256 key: the hint names the signer.
    let r = verify(&sig, &edge, &oms("TEST-ONLY-socair.key.pub"));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("signed by another key"), "{}", r.stderr);
    // Keys socair does not sign model signatures with.
    for (public, words) in [
        (oms("TEST-ONLY-p384.pub"), "a P-384 (secp384r1) key"),
        (fixture("dsse/socair.pub"), "an Ed25519 key"),
        (oms("TEST-ONLY-publisher.key"), "private key"),
    ] {
        let r = verify(&sig, &edge, &public);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains(words), "{}", r.stderr);
    }
    // Signing needs a P-256 private key.
    let ed = dir.path().join("ed.key");
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&ed)).code, 0);
    for (key, words) in [
        (ed.clone(), "an Ed25519 key"),
        (oms("TEST-ONLY-publisher.key.pub"), "public key"),
    ] {
        let r = sign(&edge, &key, &dir.path().join("x.sig"));
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains(words), "{}", r.stderr);
    }
    // A payload changed after signing: a resource's digest swapped for another's.
    let mut b = json(&std::fs::read_to_string(&sig).unwrap());
    let mut st = statement(&sig);
    st["predicate"]["resources"][0]["digest"] = Value::from("00".repeat(32));
    let text = serde_json::to_vec_pretty(&st).unwrap();
    b["dsseEnvelope"]["payload"] =
        Value::from(base64::engine::general_purpose::STANDARD.encode(&text));
    let changed = dir.path().join("changed.sig");
    std::fs::write(&changed, serde_json::to_vec(&b).unwrap()).unwrap();
    let r = verify(&changed, &edge, &oms("TEST-ONLY-publisher.key.pub"));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("does not verify"), "{}", r.stderr);
    // A certificate-signed bundle, a missing model, a store: not what socair verifies here.
    let mut cert = json(&std::fs::read_to_string(&sig).unwrap());
    cert["verificationMaterial"] =
        serde_json::json!({"certificate": {"rawBytes": "AA=="}, "tlogEntries": []});
    let cert_path = dir.path().join("cert.sig");
    std::fs::write(&cert_path, serde_json::to_vec(&cert).unwrap()).unwrap();
    let r = verify(&cert_path, &edge, &oms("TEST-ONLY-publisher.key.pub"));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("certificate"), "{}", r.stderr);
    let r = run(socair()
        .arg("verify")
        .arg(&sig)
        .arg("--pub")
        .arg(oms("TEST-ONLY-publisher.key.pub")));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("give the model"), "{}", r.stderr);
    let r = run(socair()
        .arg("verify")
        .arg(&sig)
        .arg("--pub")
        .arg(oms("TEST-ONLY-publisher.key.pub"))
        .arg("--signature-only"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(socair()
        .arg("verify")
        .arg(&sig)
        .arg(&edge)
        .arg("--store")
        .arg(dir.path()));
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--pub"), "{}", r.stderr);
}

#[test]
fn keygen_writes_p256_keys_model_signing_reads() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("p.key");
    let r = run(socair()
        .args(["keygen", "--algorithm", "ecdsa-p256", "--out"])
        .arg(&key));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let hint = r.stdout.trim().to_owned();
    assert_eq!(hint.len(), 64);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let private = std::fs::read_to_string(&key).unwrap();
    assert!(private.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    let public = std::fs::read_to_string(dir.path().join("p.key.pub")).unwrap();
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    // The keyid printed is model_signing's hint: sha256 of the public key's PEM text.
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(public.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hint, sha);
    // Never overwritten; the default is still Ed25519.
    let again = run(socair()
        .args(["keygen", "--algorithm", "ecdsa-p256", "--out"])
        .arg(&key));
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"));
    assert_eq!(std::fs::read_to_string(&key).unwrap(), private);
    let ed = dir.path().join("e.key");
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&ed)).code, 0);
    let ed_text = std::fs::read_to_string(&ed).unwrap();
    assert!(
        ed_text.len() < private.len(),
        "an Ed25519 PKCS#8 key is shorter"
    );
    // The same key pair as OpenSSL reads it, where openssl is installed.
    if let Ok(out) = std::process::Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .output()
    {
        if out.status.success() {
            assert_eq!(String::from_utf8(out.stdout).unwrap(), public);
        }
    }
}

#[test]
fn a_scan_attestation_can_name_the_oms_root() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("scanner.key");
    assert_eq!(run(socair().arg("keygen").arg("--out").arg(&key)).code, 0);
    let public = dir.path().join("scanner.key.pub");
    let model = fixture("safetensors/tiny-bert");
    let att = dir.path().join("att.dsse.json");
    let r = run(socair()
        .arg("attest")
        .arg(&model)
        .arg("--key")
        .arg(&key)
        .args(["--subject", "oms", "--out"])
        .arg(&att));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let env = json(&std::fs::read_to_string(&att).unwrap());
    let payload = base64::engine::general_purpose::STANDARD
        .decode(env["payload"].as_str().unwrap())
        .unwrap();
    let st: Value = serde_json::from_slice(&payload).unwrap();
    // The subject is the root model_signing computed for the same directory.
    assert_eq!(
        st["subject"][0]["digest"]["sha256"],
        expected()["roots"]["tiny-bert"]
    );
    assert_eq!(
        st["subject"][0]["digest"]["sha256"],
        statement(&oms("model_signing-tiny-bert.sig"))["subject"][0]["digest"]["sha256"]
    );
    assert_eq!(
        st["subject"][0]["annotations"]["digestOf"],
        "https://model_signing/signature/v1.0"
    );
    // The report keeps socair's own digest, which binds every name.
    assert_ne!(
        st["predicate"]["artifact"]["sha256"],
        st["subject"][0]["digest"]["sha256"]
    );
    let r = verify(&att, &model, &public);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("has the subject's OMS root digest"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("hashes to the report's digest"),
        "{}",
        r.stderr
    );
    // Another model: both digests differ, both are named.
    let copy = dir.path().join("tiny-bert");
    std::fs::create_dir(&copy).unwrap();
    for f in std::fs::read_dir(&model).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), copy.join(f.file_name())).unwrap();
    }
    std::fs::write(copy.join("extra.txt"), "added\n").unwrap();
    let r = verify(&att, &copy, &public);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("OMS root digest is"), "{}", r.stderr);
    assert!(r.stderr.contains("not the report's"), "{}", r.stderr);
    // A renamed file keeps the root (the root binds contents, not names); the report's
    // digest catches it.
    std::fs::remove_file(copy.join("extra.txt")).unwrap();
    std::fs::rename(copy.join("config.json"), copy.join("config.jsom")).unwrap();
    let r = verify(&att, &copy, &public);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("has the subject's OMS root digest"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("not the report's"), "{}", r.stderr);
    // --oms-ignore only with --subject oms.
    let r = run(socair()
        .arg("attest")
        .arg(&model)
        .arg("--key")
        .arg(&key)
        .args(["--oms-ignore", "x", "--out"])
        .arg(dir.path().join("y.json")));
    assert_eq!(r.code, 2);
}

#[test]
fn a_person_reads_the_verdict_first() {
    let sig = oms("model_signing-edge.sig").display().to_string();
    let public = oms("TEST-ONLY-publisher.key.pub").display().to_string();
    let bad = oms("edge-changed").display().to_string();
    let Some((code, text)) =
        crate::human::on_a_terminal(&["verify", &sig, &bad, "--pub", &public], &[])
    else {
        return;
    };
    assert_eq!(code, 1);
    assert!(
        text.starts_with("NOT TRUSTED — weights.bin changed since it was signed"),
        "{text}"
    );
    assert!(text.contains("Next: do not use this model"), "{text}");
    let good = oms("edge").display().to_string();
    let (code, text) =
        crate::human::on_a_terminal(&["verify", &sig, &good, "--pub", &public], &[]).unwrap();
    assert_eq!(code, 0);
    assert!(text.starts_with("TRUSTED — "), "{text}");
}
