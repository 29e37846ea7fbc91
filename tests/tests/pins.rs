//! Deployment pins end to end: `socair airlock pin`, and what scan, convert and promote do
//! when a plugin is upgraded, rebuilt or missing, or a rule set is outside its pin
//! (docs/pins.md).

use crate::common::{fixture, json, Store};
use serde_json::Value;

fn policy(s: &Store) -> Value {
    json(&std::fs::read_to_string(s.path().join("policy.json")).unwrap())
}

fn set_policy(s: &Store, p: &Value) {
    std::fs::write(
        s.path().join("policy.json"),
        serde_json::to_vec_pretty(p).unwrap(),
    )
    .unwrap();
}

fn refused(r: &crate::common::Run, why: &str) {
    assert_eq!(r.code, 1, "{why}: {}", r.stderr);
    assert!(r.stderr.contains(why), "{why:?} not in {}", r.stderr);
}

#[test]
fn pinned_plugins_decide_what_scans_converts_and_promotes() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let src = s.dir.path().join("model.pt");
    std::fs::copy(fixture("torch/legit/state-dict.pt"), &src).unwrap();

    // Pin the loaded torch-zip: exactly its version and its library file.
    let r = s.run(&["airlock", "pin", "plugin", "torch-zip"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pinned = policy(&s)["pins"]["plugins"]["torch-zip"].clone();
    let plugins =
        json(&crate::common::run(crate::common::socair().args(["plugins", "--json"])).stdout);
    let loaded = plugins["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "torch-zip")
        .unwrap()
        .clone();
    assert_eq!(
        pinned["version"],
        format!("={}", loaded["version"].as_str().unwrap())
    );
    assert_eq!(pinned["sha256"], loaded["sha256"]);

    // Within the pin: pull, scan and promote go through; so does convert.
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    assert_eq!(sha.code, 0, "{}", sha.stderr);
    let sha = sha.stdout.trim().to_owned();
    let r = s.run(&["airlock", "scan", &sha, "--key", &scanner]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let att = s.attest(&src, &scanner);
    let convert = || {
        s.run(&[
            "airlock",
            "convert",
            src.to_str().unwrap(),
            "--attestation",
            &att,
            "--key",
            &deriver,
        ])
    };
    assert_eq!(convert().code, 0);

    // An upgraded plugin (its version outside the pin): scan and convert refuse, and the
    // attestation made before the pin moved is not promoted either.
    let mut p = policy(&s);
    p["pins"]["plugins"]["torch-zip"]["version"] = Value::from(">=0.2");
    set_policy(&s, &p);
    refused(
        &s.run(&["airlock", "scan", &sha, "--key", &scanner]),
        "outside the store's pin >=0.2",
    );
    refused(&convert(), "outside the store's pin >=0.2");
    refused(
        &s.run(&["airlock", "promote", &sha]),
        "the attestation's scan used plugin torch-zip",
    );

    // The same version rebuilt (another library file): refused by the sha256 pin.
    let mut p = policy(&s);
    p["pins"]["plugins"]["torch-zip"] = serde_json::json!({
        "version": pinned["version"],
        "sha256": "0".repeat(64),
    });
    set_policy(&s, &p);
    refused(
        &s.run(&["airlock", "scan", &sha, "--key", &scanner]),
        "a different build than the store pins",
    );
    // --any-build accepts any library of the pinned versions.
    let r = s.run(&[
        "airlock",
        "pin",
        "plugin",
        "torch-zip",
        "--version",
        ">=0.1, <0.2",
        "--any-build",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(policy(&s)["pins"]["plugins"]["torch-zip"]
        .get("sha256")
        .is_none());
    assert_eq!(s.run(&["airlock", "scan", &sha, "--key", &scanner]).code, 0);

    // A pinned plugin that is not loaded (the out-of-tree llama2c example is not installed here):
    // nothing scans until it is.
    let r = s.run(&[
        "airlock",
        "pin",
        "plugin",
        "llama2c",
        "--version",
        "=0.1.0",
        "--any-build",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    refused(
        &s.run(&["airlock", "scan", &sha, "--key", &scanner]),
        "pins plugin llama2c, which is not loaded",
    );
    let r = s.run(&["airlock", "pin", "plugin", "llama2c", "--remove"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(s.run(&["airlock", "scan", &sha, "--key", &scanner]).code, 0);
    // Pinning a plugin that is not loaded needs an explicit version.
    let r = s.run(&["airlock", "pin", "plugin", "nonesuch"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not loaded"), "{}", r.stderr);

    // Every pin change is in the chained log; the two policies this test wrote by hand (to
    // stand for an upgraded and a rebuilt plugin) are flagged as hand edits.
    let log = s.run(&["airlock", "log"]);
    assert_eq!(log.code, 1, "{}", log.stderr);
    assert_eq!(
        log.stderr.matches("with no trust or pin logged").count(),
        2,
        "{}",
        log.stderr
    );
    assert_eq!(
        log.stdout.matches("\"action\":\"pin\"").count(),
        4,
        "{}",
        log.stdout
    );
}

#[test]
fn pinned_rule_sets_must_be_implemented_at_an_accepted_version() {
    let s = Store::new();
    let scanner = s.key("scanner.key", "scan");
    let deriver = s.key("deriver.key", "derive");
    let src = s.dir.path().join("nc.pt");
    std::fs::copy(fixture("torch/legit/noncontiguous.pt"), &src).unwrap();
    let sha = s.run(&["airlock", "pull", src.to_str().unwrap()]);
    let sha = sha.stdout.trim().to_owned();

    // The pickle grammar has versions 1, 2 and 3; a pin on version 4 stops scanning.
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", "=4"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    refused(
        &s.run(&["airlock", "scan", &sha, "--key", &scanner]),
        "this socair and its plugins implement 1, 2, 3",
    );
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", "=1"]);
    assert_eq!(r.code, 0);
    assert_eq!(s.run(&["airlock", "scan", &sha, "--key", &scanner]).code, 0);
    // A requirement that is not one is refused when set.
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", "one"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // `socair attest` outside the store runs the newest grammar (socair-wo/3), which the pin
    // to =1 would refuse (tests/tests/py2.rs): unpinned, the attestation below is accepted.
    let r = s.run(&["airlock", "pin", "rules", "socair-wo", "--remove"]);
    assert_eq!(r.code, 0, "{}", r.stderr);

    // socair-convert pinned to =1 through the command: the newest accepted version runs, and
    // this non-contiguous checkpoint is refused as /1 refuses it.
    let att = s.attest(&src, &scanner);
    let convert = || {
        s.run(&[
            "airlock",
            "convert",
            src.to_str().unwrap(),
            "--attestation",
            &att,
            "--key",
            &deriver,
        ])
    };
    let r = s.run(&["airlock", "pin", "rules", "socair-convert", "=1"]);
    assert_eq!(r.code, 0);
    refused(
        &convert(),
        "socair-convert/1 carries contiguous tensors only",
    );
    let r = s.run(&["airlock", "pin", "rules", "socair-convert", "--remove"]);
    assert_eq!(r.code, 0);
    let r = convert();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("under socair-convert/3"), "{}", r.stderr);
}
