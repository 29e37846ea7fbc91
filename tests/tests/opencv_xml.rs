//! OpenCV FileStorage XML end to end (the `xml` plugin's `opencv-storage` reader,
//! plugins/xml/reader/src/opencv.rs): two Haar cascades shipped in opencv-python-headless
//! 4.12.0.88's `cv2/data/`, a file written by `cv2.FileStorage` with a matrix and a `cv2.ml.SVM`
//! saved by `save` are PASSes (data only); a DOCTYPE with an external entity, nested entities
//! and an undeclared entity are FAILs (fixtures/opencv/make_opencv.py writes them all).

use crate::common::{fixture, json, run, socair, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

#[test]
fn opencv_storage_files_get_their_verdicts() {
    let text = std::fs::read_to_string(fixture("opencv/expected.json")).unwrap();
    let cases: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 7);
    for (rel, want) in &cases {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("opencv/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["verdict"], "{rel}: {report:#}");
        assert_eq!(r.code, i32::from(got != "PASS"), "{rel}");
        assert_eq!(report["artifact"]["format"], "opencv-storage", "{rel}");
        let word = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(word),
            "{rel}: no {word:?} in {report:#}"
        );
    }
}

#[test]
fn a_doctype_finding_names_its_place_and_opencv() {
    let r = run(socair()
        .args(["scan", "--json"])
        .arg(fixture("opencv/fail/xxe.xml")));
    let report = json(&r.stdout);
    let findings = report["rows"][0]["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["place"] == "byte 22"
        && f["reason"]
            .as_str()
            .unwrap()
            .contains("persistence_xml.cpp")));
}
