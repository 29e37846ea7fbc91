//! A LEAD can be reviewed inside the airlock: a signed, logged review of a
//! pickle global by an `accept` key, applied by `airlock scan` and named in the attestation;
//! code-running globals can never be reviewed; the gate refuses an attestation that treated a
//! global as reviewed without a review in the store.

use crate::common::{fixture, json, run, socair, Store};

fn payload_of(s: &Store, envelope: &std::path::Path) -> serde_json::Value {
    let r = s.run(&["verify", "--signature-only", envelope.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    json(&r.stdout)
}

#[test]
fn a_reviewed_global_is_accepted_by_airlock_scan_and_named_in_the_attestation() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let reviewer = s.key("reviewer.key", "accept");
    let src = fixture("torch/malicious/argparse-namespace.pt");
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    assert_eq!(sha.code, 0, "{}", sha.stderr);
    let sha = sha.stdout.trim().to_owned();
    let attestation = s
        .path()
        .join("incoming")
        .join(&sha)
        .join("attestation.dsse.json");

    // Unreviewed: a LEAD, and the gate stops it.
    assert_eq!(s.run(&["airlock", "scan", &sha, "--key", &scanner]).code, 1);
    assert_eq!(s.run(&["airlock", "promote", &sha]).code, 1);

    // Code-running globals can never be reviewed; a key without `accept` cannot review.
    for class in ["os.system", "builtins.eval", "subprocess.Popen"] {
        let r = s.run(&[
            "airlock", "review", "add", class, "--reason", "trust me", "--key", &reviewer,
        ]);
        assert_eq!(r.code, 1, "{class}: {}", r.stderr);
        assert!(r.stderr.contains("can never be reviewed"), "{}", r.stderr);
    }
    let r = s.run(&[
        "airlock",
        "review",
        "add",
        "argparse.Namespace",
        "--reason",
        "x",
        "--key",
        &scanner,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("role `accept`"), "{}", r.stderr);
    let r = s.run(&[
        "airlock", "review", "add", "os", "--reason", "x", "--key", &reviewer,
    ]);
    assert_eq!(r.code, 2, "not module.name: {}", r.stderr);

    // Reviewed: airlock scan accepts it and the attestation names it.
    let r = s.run(&[
        "airlock",
        "review",
        "add",
        "argparse.Namespace",
        "--reason",
        "the training script's arguments: a plain namespace",
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let review_id = r.stdout.trim().to_owned();
    let ls = s.run(&["airlock", "review", "ls"]);
    assert!(ls.stdout.contains("argparse.Namespace"), "{}", ls.stdout);
    assert!(ls.stdout.starts_with(&review_id[..16]), "{}", ls.stdout);
    let r = s.run(&["airlock", "scan", &sha, "--key", &scanner]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let report = &payload_of(&s, &attestation)["predicate"];
    assert_eq!(
        report["scope"]["reviewed_classes"],
        serde_json::json!(["argparse.Namespace"])
    );
    let pickle = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Pickle opcode scan")
        .unwrap();
    assert_eq!(pickle["status"], "PASS", "{pickle:#}");
    assert!(
        pickle["summary"]
            .as_str()
            .unwrap()
            .contains("argparse.Namespace"),
        "{pickle:#}"
    );
    // The pickle's structure is still a gap a person accepts; then it is promoted.
    let r = s.run(&[
        "airlock",
        "accept",
        &sha,
        "--row",
        "Format and structure",
        "--reason",
        "pickle grammar and the reviewed global",
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = s.run(&["airlock", "promote", &sha]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // Every review and refusal is in the log.
    let log = s.run(&["airlock", "log"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert_eq!(log.stdout.matches("\"action\":\"review\"").count(), 6);

    // Withdrawn: the next scan leads again.
    let other = s.dir.path().join("again.pt");
    std::fs::copy(&src, &other).unwrap();
    let r = s.run(&[
        "airlock",
        "review",
        "remove",
        &review_id[..12],
        "--key",
        &reviewer,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let again = s.run(&["airlock", "pull", other.to_str().unwrap()]);
    assert_eq!(again.stdout.trim(), sha, "the same bytes, staged again");
    let r = s.run(&["airlock", "scan", &sha, "--key", &scanner]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!s
        .run(&["airlock", "review", "ls"])
        .stdout
        .contains("argparse"));
}

#[test]
fn the_gate_refuses_a_global_treated_as_reviewed_without_a_review_in_the_store() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let src = fixture("torch/malicious/numpy-reconstruct.pt");
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    let sha = sha.stdout.trim().to_owned();
    // A scan key's holder lists the global as reviewed outside the store.
    let list = s.dir.path().join("reviewed.txt");
    std::fs::write(
        &list,
        "numpy.core.multiarray._reconstruct\nnumpy.ndarray\nnumpy.dtype\n",
    )
    .unwrap();
    let att = s.dir.path().join("att.json");
    let r = run(socair()
        .arg("attest")
        .arg(&src)
        .arg("--key")
        .arg(&scanner)
        .arg("--reviewed-classes")
        .arg(&list)
        .arg("--out")
        .arg(&att));
    assert_ne!(r.code, 2, "{}", r.stderr);
    let report = &payload_of(&s, &att)["predicate"];
    assert!(report["scope"]["reviewed_classes"]
        .as_array()
        .unwrap()
        .contains(&"numpy.core.multiarray._reconstruct".into()));
    std::fs::copy(
        &att,
        s.path()
            .join("incoming")
            .join(&sha)
            .join("attestation.dsse.json"),
    )
    .unwrap();
    let r = s.run(&["airlock", "promote", &sha]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("treated numpy.core.multiarray._reconstruct as reviewed, but no valid review in the store covers it"),
        "{}",
        r.stderr
    );
}
