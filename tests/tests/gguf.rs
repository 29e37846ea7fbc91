//! GGUF end to end, against files gguf-py 0.19 wrote and what its GGUFReader read back
//! (fixtures/gguf/expected.json, written by fixtures/gguf/make_fixtures.py).

use crate::common::{fixture, json, run, socair};
use serde_json::Value;
use std::collections::BTreeMap;

fn cases(prefix: &str) -> Vec<(String, Value)> {
    let e = json(&std::fs::read_to_string(fixture("gguf/expected.json")).unwrap());
    e.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn manifests_match_gguf_py() {
    let valid = cases("valid/");
    assert!(valid.len() >= 7);
    let mut types_seen = std::collections::BTreeSet::new();
    for (file, case) in valid {
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("gguf/{file}"))));
        let m = json(&r.stdout);
        assert_eq!(m["artifact"]["format"], "gguf");
        assert_eq!(m["artifact"]["sha256"], case["file_sha256"], "{file}");
        let got: BTreeMap<&str, &Value> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t))
            .collect();
        let mut disputed = 0;
        for want in case["tensors"].as_array().unwrap() {
            let name = want["name"].as_str().unwrap();
            types_seen.insert(want["type"].as_str().unwrap().to_owned());
            if want["type"] == "Q8_1" {
                // gguf-py and ggml disagree on its size: listed as unread, with the reason.
                disputed += 1;
                let u = &m["unread"][0];
                assert_eq!(u["tensor"], name);
                assert!(u["reason"].as_str().unwrap().contains("Q8_1"));
                continue;
            }
            let t = got
                .get(name)
                .unwrap_or_else(|| panic!("{file}: {name} missing"));
            assert_eq!(t["dtype"], want["type"], "{file}: {name}");
            // GGUF stores dims innermost first; both sides give the logical shape.
            assert_eq!(t["shape"], want["shape"], "{file}: {name}");
            assert_eq!(t["bytes"], want["n_bytes"], "{file}: {name}");
            assert_eq!(t["sha256"], want["sha256"], "{file}: {name}");
            assert_eq!(t.get("values"), want.get("values"), "{file}: {name}");
        }
        assert_eq!(
            r.code,
            if disputed > 0 { 1 } else { 0 },
            "{file}: {}",
            r.stderr
        );
        let scan = run(socair().arg("scan").arg(fixture(&format!("gguf/{file}"))));
        let row = &json(&scan.stdout)["rows"][0];
        assert_eq!(row["check"], "Format and structure");
        assert_eq!(
            row["status"],
            if disputed > 0 { "LEAD" } else { "PASS" },
            "{file}"
        );
    }
    // Every type gguf-py knows appeared in a fixture.
    assert!(types_seen.len() >= 34, "{types_seen:?}");
}

#[test]
fn malformed_files_are_refused_with_reasons() {
    let malformed = cases("malformed/");
    assert!(malformed.len() >= 20);
    for (file, case) in malformed {
        let r = run(socair().arg("scan").arg(fixture(&format!("gguf/{file}"))));
        if case["gguf_py_message"]
            .as_str()
            .is_some_and(|m| m.contains("which we cannot handle"))
        {
            // A GGUF version gguf-py cannot handle (1, 4): a file socair cannot read (exit 2),
            // not evidence against it (chat_templates.rs has the v1 layout itself).
            assert_eq!(r.code, 2, "{file}: {}", r.stdout);
            assert!(
                r.stderr.contains("socair cannot read this file"),
                "{file}: {}",
                r.stderr
            );
            continue;
        }
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let report = json(&r.stdout);
        let row = &report["rows"][0];
        let keyword = case["keyword"].as_str().unwrap();
        assert!(
            row.to_string().to_lowercase().contains(keyword),
            "{file}: {keyword:?} not in {row:#}"
        );
        let t = json(
            &run(socair()
                .arg("tensors")
                .arg(fixture(&format!("gguf/{file}"))))
            .stdout,
        );
        if case["partial"] == true {
            // One tensor of an unknown or removed type: only it is unread.
            assert_eq!(row["status"], "LEAD", "{file}");
            let names: Vec<&str> = t["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            let readable: Vec<&str> = case["readable"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(names, readable, "{file}");
            assert_eq!(t["unread"].as_array().unwrap().len(), 1, "{file}");
        } else {
            assert_eq!(row["status"], "FAIL", "{file}");
            assert_eq!(t["tensors"], Value::Array(vec![]), "{file}");
        }
    }
}
