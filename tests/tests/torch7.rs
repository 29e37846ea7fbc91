//! Lua Torch7 `.t7` files end to end (the `torch7` plugin, plugins/torch7), written as torch7's
//! `File:writeObject` writes them and read back by torchfile 0.1.0
//! (fixtures/torch7/make_torch7.py): each file gets expected.json's verdict with its word in
//! the report, and the tensors of every file torchfile read fingerprint, by name, as the
//! generator hashed the arrays torchfile returned (a strided view by what it holds in C order).

use crate::common::{fixture, json, run, socair, tensor_hashes, verdict};
use serde_json::Value;
use std::collections::BTreeMap;

fn cases() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(fixture("torch7/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn torch7_files_get_their_verdicts() {
    let cases = cases();
    assert_eq!(cases.len(), 10);
    for (rel, want) in &cases {
        let r = run(socair()
            .args(["scan", "--json"])
            .arg(fixture(&format!("torch7/{rel}"))));
        let report = json(&r.stdout);
        let got = verdict(&report);
        assert_eq!(got, want["verdict"], "{rel}: {report:#}");
        assert_eq!(r.code, i32::from(got != "PASS"), "{rel}");
        assert_eq!(report["artifact"]["format"], "torch7", "{rel}");
        let word = want["keyword"].as_str().unwrap();
        assert!(
            report.to_string().contains(word),
            "{rel}: no {word:?} in {report:#}"
        );
    }
}

#[test]
fn torch7_tensors_fingerprint_as_torchfile_read_them() {
    let mut checked = 0;
    for (rel, want) in cases() {
        let Some(tensors) = want.get("tensors").and_then(Value::as_object) else {
            continue;
        };
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("torch7/{rel}"))));
        assert_eq!(r.code, 0, "{rel}: {}", r.stderr);
        let got = tensor_hashes(&json(&r.stdout));
        let want: BTreeMap<String, String> = tensors
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(got, want, "{rel}");
        checked += want.len();
    }
    assert_eq!(checked, 10);
}
