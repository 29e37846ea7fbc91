//! CRFsuite models end to end (the `crfsuite` plugin, plugins/crfsuite): two models trained by
//! python-crfsuite 0.9.12 are PASSes whose feature weights fingerprint as the generator hashed
//! them; a truncated model, an offset past the end, overlapping chunks and a feature whose
//! label is past the label count are FAILs (fixtures/crfsuite/make_crfsuite.py).

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn cases() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixture("crfsuite/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn crfsuite_models_get_their_verdicts() {
    let cases = cases();
    assert_eq!(cases.len(), 6);
    for (rel, want) in &cases {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("crfsuite/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["verdict"], "{rel}: {report:#}");
        assert_eq!(r.code, i32::from(got != "PASS"), "{rel}");
        assert_eq!(report["artifact"]["format"], "crfsuite", "{rel}");
        let word = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(word),
            "{rel}: no {word:?} in {report:#}"
        );
    }
}

#[test]
fn crfsuite_weights_fingerprint_as_the_generator_hashed_them() {
    for (rel, want) in cases().iter().filter(|(r, _)| r.starts_with("valid/")) {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("crfsuite/{rel}"))));
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        let m = json(&r.stdout);
        let t = &m["tensors"][0];
        assert_eq!(t["name"], "weights", "{rel}: {m:#}");
        assert_eq!(t["dtype"], "F64", "{rel}");
        assert_eq!(t["shape"][0], want["features"], "{rel}");
        assert_eq!(t["sha256"], want["weights_sha256"], "{rel}");
    }
}
