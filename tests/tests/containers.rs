//! Tar archives, zip archives and single compressed streams (fixtures/containers, written by
//! CPython's tarfile, zipfile and compression modules, GNU tar and the gzip/bzip2/xz/zstd/lz4
//! commands): each member read by the reader that claims it, through any wrapper, to any depth
//! socair opens; the verdicts `expected.json` records, and the inner model's tensors
//! fingerprinted as the model alone gives them.

use crate::common::{fixture, json, report_row, run, socair, tensor_hashes, verdict};

fn expected() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture("containers/expected.json")).expect("expected");
    let map: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&text).expect("expected.json");
    map.into_iter().collect()
}

fn scan(name: &str) -> serde_json::Value {
    let r = run(socair()
        .arg("scan")
        .arg(fixture(&format!("containers/{name}"))));
    json(&r.stdout)
}

#[test]
fn every_container_gets_its_recorded_verdict() {
    let cases = expected();
    assert!(cases.len() >= 43, "the fixtures were written");
    let mut wrong = Vec::new();
    for (name, want) in &cases {
        let report = scan(name);
        let got = verdict(&report);
        let got = if got == "PASS"
            && report["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["status"] == "NOT_TESTED")
        {
            "PASS-WITH-GAP"
        } else {
            got
        };
        if got != want {
            wrong.push(format!("{name}: {got}, expected {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_wrapped_models_tensors_are_the_models() {
    let alone = json(
        &run(socair()
            .args(["tensors", "--json"])
            .arg(fixture("containers/model.safetensors")))
        .stdout,
    );
    let want = tensor_hashes(&alone);
    assert_eq!(want.len(), 2);
    // The passing containers that hold no model.
    let no_model = ["yaml-in.zip"];
    for (name, verdict) in expected() {
        if verdict != "PASS" || name == "model.safetensors" || no_model.contains(&name.as_str()) {
            continue;
        }
        let r = run(socair()
            .args(["tensors", "--json"])
            .arg(fixture(&format!("containers/{name}"))));
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert_eq!(tensor_hashes(&json(&r.stdout)), want, "{name}");
    }
}

#[test]
fn findings_name_the_member_through_every_wrapper() {
    let report = scan("nested.tar.xz");
    let pickle = report_row(&report, "Pickle opcode scan");
    assert_eq!(pickle["status"], "FAIL");
    let places: Vec<&str> = pickle["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["place"].as_str().unwrap())
        .collect();
    assert!(
        places
            .iter()
            .any(|p| p.starts_with("nested.tar: inner.tar: inner/evil.pkl: pickle byte")),
        "{places:?}"
    );
    assert_eq!(report["artifact"]["format"], "compressed");

    let dotdot = scan("dotdot.tar");
    let row = report_row(&dotdot, "Format and structure");
    assert!(crate::common::has_finding(
        row,
        "member ../../outside.safetensors",
        "outside the target directory"
    ));
}

#[test]
fn what_socair_does_not_decode_says_why() {
    let bomb = scan("bomb.bin.gz");
    let row = report_row(&bomb, "Format and structure");
    assert!(crate::common::has_finding(
        row,
        "stream",
        "decompress it and scan"
    ));
    let deep = scan("deep.tar");
    let row = report_row(&deep, "Format and structure");
    assert!(
        row["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["reason"]
                .as_str()
                .unwrap()
                .contains("nested deeper than 4")),
        "{row:#}"
    );
    let code = scan("code.tar");
    let row = report_row(&code, "Format and structure");
    assert!(
        crate::common::has_finding(row, "modeling_tiny.py", "Python code"),
        "the companion rules' words for code: {row:#}"
    );
}
