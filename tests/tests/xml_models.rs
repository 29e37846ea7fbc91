//! XML model formats end to end (the `xml` plugin, plugins/xml): OpenVINO IR directories
//! (`model.xml` and its weights `model.bin`, written by openvino 2026.4.1's `ov.save_model` in
//! `fixtures/openvino/make_openvino.py`, some edited as an attacker would) and PMML documents
//! (`fixtures/pmml/make_pmml.py`: by hand from the PMML 4.4 spec and by nyoka 5.5.0).
//!
//! * a model directory is judged whole: the IR's constants are fingerprinted from model.bin
//!   (their sha256s are those of the values OpenVINO holds), model.bin itself is data, not a
//!   torch checkpoint its extension suggests, and a constant past its end is a LEAD;
//! * model.xml scanned alone is a LEAD that says its tensors lie in model.bin, unread;
//! * DTDs and entities are FAILs (XXE: OpenVINO's pugixml ignores them, lxml reads the file),
//!   an rt_info key naming a weights file is a FAIL, a custom operation a LEAD; PMML's
//!   Extension elements and foreign functions LEADs.

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn expected(format: &str) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixture(&format!("{format}/expected.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn scan(path: &std::path::Path) -> (i32, Value) {
    let r = run(socair().args(["scan", "--json"]).arg(path));
    (r.code, json(&r.stdout))
}

#[test]
fn openvino_directories_get_their_verdicts() {
    let cases = expected("openvino");
    let mut dirs = 0;
    for (rel, want) in &cases {
        if rel.starts_with("malformed/") {
            continue;
        }
        dirs += 1;
        let (code, report) = scan(&fixture(&format!("openvino/{rel}")));
        let got = verdict(&report);
        assert_eq!(got, want["verdict"], "{rel}: {report:#}");
        assert_eq!(code, i32::from(got != "PASS"), "{rel}");
        assert_eq!(report["artifact"]["format"], "model directory", "{rel}");
        let text = report.to_string();
        if let Some(word) = want["keyword"].as_str() {
            assert!(text.contains(word), "{rel}: no {word:?} in {report:#}");
        }
        // The weights are the IR's data: no reader's verdict on model.bin by its extension.
        assert!(
            !text.contains("not a torch checkpoint"),
            "{rel}: {report:#}"
        );
        assert_eq!(report["tool"]["plugins"][0]["name"], "xml", "{rel}");
    }
    assert!(dirs >= 9, "{dirs}");
}

#[test]
fn openvino_constants_fingerprint_as_openvino_holds_them() {
    let cases = expected("openvino");
    let mut checked = 0;
    for (rel, want) in cases.iter().filter(|(r, _)| r.starts_with("valid/")) {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("openvino/{rel}"))));
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["unread"], Value::Array(vec![]), "{rel}");
        let got: BTreeMap<&str, &Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        let want = want["tensors"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{rel}: {m:#}");
        for w in want {
            let name = w["name"].as_str().unwrap();
            let t = got
                .get(name)
                .unwrap_or_else(|| panic!("{rel}: {name} missing"));
            for key in ["dtype", "shape", "bytes", "sha256"] {
                assert_eq!(t[key], w[key], "{rel}: {name} {key}");
            }
            assert_eq!(t.get("values"), w.get("values"), "{rel}: {name} values");
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn the_ir_alone_says_its_weights_were_not_read() {
    let (code, report) = scan(&fixture("openvino/valid/tiny/model.xml"));
    assert_eq!(code, 1);
    assert_eq!(report["artifact"]["format"], "openvino-ir");
    assert_eq!(verdict(&report), "LEAD", "{report:#}");
    let text = report.to_string();
    assert!(
        text.contains("model.bin") && text.contains("scan the model's directory"),
        "{report:#}"
    );
}

#[test]
fn a_constant_past_the_weights_is_a_lead_naming_it() {
    let (_, report) = scan(&fixture("openvino/past-end"));
    let text = report.to_string();
    assert!(
        text.contains("tensor \\\"b\\\"") && text.contains("past the end"),
        "{report:#}"
    );
    let r = run(socair().arg("tensors").arg(fixture("openvino/past-end")));
    let m = json(&r.stdout);
    assert_eq!(m["tensors"].as_array().unwrap().len(), 1, "{m:#}");
}

#[test]
fn malformed_irs_fail_with_the_reason() {
    let cases = expected("openvino");
    let mut n = 0;
    for (rel, want) in cases.iter().filter(|(r, _)| r.starts_with("malformed/")) {
        n += 1;
        let (code, report) = scan(&fixture(&format!("openvino/{rel}")));
        assert_eq!(code, 1, "{rel}");
        assert_eq!(report["artifact"]["format"], "openvino-ir", "{rel}");
        assert_eq!(verdict(&report), "FAIL", "{rel}: {report:#}");
        let word = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(&word.replace('"', "\\\"")),
            "{rel}: no {word:?} in {report:#}"
        );
    }
    assert!(n >= 7);
}

#[test]
fn pmml_documents_get_their_verdicts() {
    let cases = expected("pmml");
    for status in ["PASS", "LEAD", "FAIL"] {
        assert!(
            cases.values().filter(|w| w["verdict"] == status).count() >= 4,
            "{status}"
        );
    }
    for (rel, want) in &cases {
        let (code, report) = scan(&fixture(&format!("pmml/{rel}")));
        let got = verdict(&report);
        assert_eq!(got, want["verdict"], "{rel}: {report:#}");
        assert_eq!(code, i32::from(got != "PASS"), "{rel}");
        assert_eq!(report["artifact"]["format"], "pmml", "{rel}");
        if let Some(word) = want["keyword"].as_str() {
            assert!(
                report.to_string().contains(word),
                "{rel}: no {word:?} in {report:#}"
            );
        }
    }
}

#[test]
fn each_ir_directory_is_one_artifact_of_a_walk() {
    // The IR places its constants in `model.bin`: the directory is one model, as
    // `read_model` opens the pair.
    let r = run(socair()
        .args(["scan", "--each"])
        .arg(fixture("openvino/valid")));
    let listing = json(&r.stdout);
    let artifacts = listing["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 5, "{listing:#}");
    for a in artifacts {
        assert_eq!(a["verdict"], "clean", "{a:#}");
        assert!(!a["path"].as_str().unwrap().ends_with(".xml"), "{a:#}");
    }
}
