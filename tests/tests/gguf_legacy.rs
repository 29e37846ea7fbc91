//! llama.cpp's legacy GGML / GGMF / GGJT files end to end, against the files
//! fixtures/gguf/legacy/make_legacy_ggml.py wrote byte for byte as the converters of that era
//! did (fixtures/gguf/legacy/expected.json: verdict per file, and the sha256 of every
//! tensor's data bytes as the generator wrote them).

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected() -> Vec<(String, Value)> {
    let e = json(&std::fs::read_to_string(fixture("gguf/legacy/expected.json")).unwrap());
    e.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn every_fixture_gets_its_verdict_from_the_legacy_reader() {
    let cases = expected();
    assert!(cases.len() >= 15);
    let mut seen = BTreeMap::new();
    for (file, case) in cases {
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("gguf/legacy/{file}"))));
        let report = json(&r.stdout);
        assert_eq!(report["artifact"]["format"], "ggml-legacy", "{file}");
        assert_eq!(report["artifact"]["sha256"], case["file_sha256"], "{file}");
        let got = verdict(&report);
        assert_eq!(got, case["verdict"], "{file}: {}", r.stdout);
        let row = &report["rows"][0];
        assert_eq!(row["check"], "Format and structure");
        if got != "PASS" {
            // Every refusal or lead names a place and a reason.
            let f = &row["findings"][0];
            assert!(!f["place"].as_str().unwrap().is_empty(), "{file}");
            assert!(!f["reason"].as_str().unwrap().is_empty(), "{file}");
        }
        *seen.entry(got).or_insert(0) += 1;
    }
    assert!(
        seen["PASS"] >= 4 && seen["FAIL"] >= 5 && seen["LEAD"] >= 4,
        "{seen:?}"
    );
}

#[test]
fn tensors_are_the_bytes_the_generator_wrote() {
    let mut types = std::collections::BTreeSet::new();
    for (file, case) in expected() {
        let want = case["tensors"].as_array().unwrap();
        if want.is_empty() {
            continue;
        }
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("gguf/legacy/{file}"))));
        let m = json(&r.stdout);
        let got: BTreeMap<&str, &Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        assert_eq!(got.len(), want.len(), "{file}");
        for w in want {
            let name = w["name"].as_str().unwrap();
            let t = got.get(name).unwrap_or_else(|| panic!("{file}: {name}"));
            assert_eq!(t["dtype"], w["dtype"], "{file}: {name}");
            // ggml stores dims innermost first; both sides give the logical shape.
            assert_eq!(t["shape"], w["shape"], "{file}: {name}");
            assert_eq!(t["bytes"], w["bytes"], "{file}: {name}");
            assert_eq!(t["sha256"], w["sha256"], "{file}: {name}");
            types.insert(w["dtype"].as_str().unwrap().to_owned());
        }
        let unread: Vec<&str> = m["unread"]
            .as_array()
            .map(|u| u.iter().filter_map(|x| x["tensor"].as_str()).collect())
            .unwrap_or_default();
        let want_unread: Vec<&str> = case["unread"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(unread, want_unread, "{file}");
    }
    for t in ["F32", "F16", "Q4_0", "Q4_1", "Q8_0"] {
        assert!(types.contains(t), "{t} in no fixture: {types:?}");
    }
}

#[test]
fn a_ggml_model_bin_is_claimed_by_content_not_by_its_name() {
    // torch-zip claims `.bin` by its name; the legacy magic is a content claim and wins.
    let r = run(socair()
        .arg("scan")
        .arg(fixture("gguf/legacy/valid/ggml-model-q4_0.bin")));
    let report = json(&r.stdout);
    assert_eq!(report["artifact"]["format"], "ggml-legacy");
    assert_eq!(verdict(&report), "PASS");
    assert_eq!(r.code, 0, "{}", r.stderr);
}
