//! CatBoost `.cbm` models end to end, against what catboost 1.2.10 wrote and what its Python API
//! read back (fixtures/catboost/expected.json, written by fixtures/catboost/make_catboost.py):
//! every fixture's verdict and reason, and every array's fingerprint.

use crate::common::{fixture, json, run, socair};
use serde_json::Value;
use std::collections::BTreeMap;

fn cases() -> Vec<(String, Value)> {
    let e = json(&std::fs::read_to_string(fixture("catboost/expected.json")).unwrap());
    assert_eq!(e["catboost_version"], "1.2.10");
    e["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn every_fixture_gets_its_verdict() {
    let cases = cases();
    assert!(cases.len() >= 30, "{}", cases.len());
    let mut seen = BTreeMap::new();
    for (file, case) in cases {
        let verdict = case["verdict"].as_str().unwrap();
        *seen.entry(verdict.to_owned()).or_insert(0) += 1;
        let r = run(socair()
            .arg("scan")
            .arg(fixture(&format!("catboost/{file}"))));
        let report = json(&r.stdout);
        if verdict == "UNCLAIMED" {
            assert_ne!(report["artifact"]["format"], "catboost", "{file}");
            continue;
        }
        assert_eq!(
            report["artifact"]["format"], "catboost",
            "{file}: {}",
            r.stderr
        );
        let row = &report["rows"][0];
        assert_eq!(row["check"], "Format and structure", "{file}");
        assert_eq!(row["status"], verdict, "{file}: {row:#}");
        assert_eq!(
            r.code,
            if verdict == "PASS" { 0 } else { 1 },
            "{file}: {}",
            r.stderr
        );
        let keyword = case["keyword"].as_str().unwrap().to_lowercase();
        assert!(
            row.to_string().to_lowercase().contains(&keyword),
            "{file}: {keyword:?} not in {row:#}"
        );
        if verdict == "PASS" {
            assert!(
                row["summary"]
                    .as_str()
                    .unwrap()
                    .starts_with("read as data: a CatBoost model of"),
                "{file}: {row:#}"
            );
        }
    }
    assert!(
        seen["PASS"] >= 10 && seen["LEAD"] >= 4 && seen["FAIL"] >= 15,
        "{seen:?}"
    );
}

#[test]
fn tensors_fingerprint_as_catboost_reads_them() {
    let mut checked = 0;
    for (file, case) in cases() {
        let Some(want) = case.get("tensors").and_then(Value::as_object) else {
            continue;
        };
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("catboost/{file}"))));
        assert_eq!(r.code, 0, "{file}: {}", r.stderr);
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "catboost");
        let got: BTreeMap<&str, &Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        for (name, sha) in want {
            let t = got
                .get(name.as_str())
                .unwrap_or_else(|| panic!("{file}: {name} missing from {:?}", got.keys()));
            assert_eq!(&t["sha256"], sha, "{file}: {name}");
            checked += 1;
        }
        // Leaf values are doubles, borders floats, splits ints, as the file stores them.
        assert_eq!(got["trees.leaf_values"]["dtype"], "double", "{file}");
        assert_eq!(got["trees.tree_sizes"]["dtype"], "int", "{file}");
    }
    assert!(checked >= 80, "{checked}");
}

#[test]
fn refused_files_locate_nothing_and_unmodeled_parts_are_unread() {
    let r = run(socair()
        .arg("tensors")
        .arg(fixture("catboost/hostile_bad_vtable.cbm")));
    let m = json(&r.stdout);
    assert_eq!(m["tensors"], Value::Array(vec![]), "{}", r.stdout);
    assert!(m["unread"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("vtable offset"));

    let r = run(socair()
        .arg("tensors")
        .arg(fixture("catboost/text_features.cbm")));
    let m = json(&r.stdout);
    assert!(!m["tensors"].as_array().unwrap().is_empty());
    let unread = m["unread"].as_array().unwrap();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(unread[0]["reason"]
        .as_str()
        .unwrap()
        .contains("text processing collection"));
}
