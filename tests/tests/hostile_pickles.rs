//! Issue 16's hostile pickles end to end (fixtures/torch/make_hostile.py, no torch needed):
//! pickles of every protocol, Python 2 and dotted names, names moved through the memo, frames
//! that disagree with their opcodes, pickles appended after STOP, a flood, and torch's tensor
//! metadata judged as torch applies it; each scanned with the status and a finding
//! hostile-expected.json gives, and the tensors of the metadata and float4 cases read as
//! torch and safetensors would have them.

use crate::common::{fixture, json, run, socair};
use serde_json::Value;

fn expected_in(path: &str) -> Vec<(String, Value)> {
    let all = json(&std::fs::read_to_string(fixture(path)).unwrap());
    all.as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn expected() -> Vec<(String, Value)> {
    expected_in("torch/hostile-expected.json")
}

#[test]
fn every_hostile_pickle_gets_its_status_and_finding() {
    let cases = expected();
    assert!(cases.len() >= 20);
    check_cases("torch/hostile", &cases);
}

/// Issue 28 item 3 (fixtures/torch/callables/make_callables.py): a global of each class the
/// analysis of scripts/dangerous-callables finds (file writers and readers, torch.from_file,
/// ML libraries' save functions, an evaluator, string-to-object resolvers, a nested
/// unpickler, a network client, a native loader through an alias) is FAIL naming it, and a
/// legacy checkpoint whose `'module'` persistent id makes torch.load write a file is FAIL,
/// while torch.save's own legacy whole-module file stays a LEAD.
#[test]
fn every_callable_the_analysis_finds_is_fail_naming_the_global() {
    let cases = expected_in("torch/callables/expected.json");
    assert!(cases.len() >= 12);
    check_cases("torch/callables", &cases);
    // A reviewer can never clear one.
    let dir = tempfile::tempdir().unwrap();
    let reviewed = dir.path().join("reviewed.txt");
    let globals: Vec<&str> = cases
        .iter()
        .filter_map(|(_, c)| c.get("global").and_then(Value::as_str))
        .collect();
    assert!(globals.len() >= 10);
    std::fs::write(&reviewed, globals.join("\n")).unwrap();
    for (file, case) in &cases {
        if case.get("global").is_none() {
            continue;
        }
        let r = run(socair()
            .arg("scan")
            .arg("--reviewed-classes")
            .arg(&reviewed)
            .arg(fixture(&format!("torch/callables/{file}"))));
        let report = json(&r.stdout);
        let row = pickle_row(&report, file);
        assert_eq!(
            row["status"], "FAIL",
            "{file}: reviewed, still FAIL: {row:#}"
        );
        assert_eq!(r.code, 1, "{file}");
    }
}

/// The report's "Pickle opcode scan" row.
fn pickle_row<'a>(report: &'a Value, file: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "Pickle opcode scan")
        .unwrap_or_else(|| panic!("{file}: no pickle row in {report:#}"))
}

fn check_cases(dir: &str, cases: &[(String, Value)]) {
    for (file, case) in cases {
        let r = run(socair().arg("scan").arg(fixture(&format!("{dir}/{file}"))));
        let report = json(&r.stdout);
        let row = pickle_row(&report, file);
        assert_eq!(row["status"], case["status"], "{file}: {row:#}");
        let keyword = case["keyword"].as_str().unwrap();
        if !keyword.is_empty() {
            let found = row["findings"].as_array().unwrap().iter().any(|f| {
                f["reason"]
                    .as_str()
                    .unwrap()
                    .to_lowercase()
                    .contains(keyword)
            });
            assert!(found, "{file}: no finding with {keyword:?}: {row:#}");
        }
        let code = if case["status"] == "PASS" { 0 } else { 1 };
        assert_eq!(r.code, code, "{file}: {}", r.stderr);
    }
}

#[test]
fn tensors_are_read_as_torch_loads_them() {
    for (file, case) in expected() {
        let wants_unread = case.get("unread").and_then(Value::as_str);
        let wants_tensor = case.get("tensor");
        if wants_unread.is_none() && wants_tensor.is_none() {
            continue;
        }
        let r = run(socair()
            .arg("tensors")
            .arg(fixture(&format!("torch/hostile/{file}"))));
        let m = json(&r.stdout);
        if let Some(name) = wants_unread {
            // torch loads it negated: its bytes are not its values, so it is neither
            // fingerprinted nor converted.
            let unread = m["unread"].as_array().unwrap();
            assert!(
                unread
                    .iter()
                    .any(|u| u["tensor"] == name && u["reason"].as_str().unwrap().contains("neg")),
                "{file}: {m:#}"
            );
            assert!(
                m["tensors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|t| t["name"] != name),
                "{file}: {m:#}"
            );
        }
        if let Some(want) = wants_tensor {
            let t = m["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == want["name"])
                .unwrap_or_else(|| panic!("{file}: {m:#}"));
            assert_eq!(t["dtype"], want["dtype"], "{file}");
            assert_eq!(t["shape"], want["shape"], "{file}");
        }
    }
}
